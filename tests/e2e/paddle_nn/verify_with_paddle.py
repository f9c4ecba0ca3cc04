#!/usr/bin/env python3
"""Checks the reference interpreter against Paddle's own predictor on the programs of this folder:

    BUILD/paddle-venv/bin/python tests/e2e/paddle_nn/verify_with_paddle.py --build-dir build [NAME...]

Each program is exported again with its parameters (export.py), kforge-interp makes seeded random inputs with the
dims of test_paddle_nn.py's case and runs the program on them with Paddle's parameter values, and Paddle's
predictor (CPU, IR optimisation and oneDNN off) runs the same; every output must have Paddle's dtype and shape and
agree within rtol 1e-5 / atol 1e-5. Needs Paddle; not run by the test suite.
"""

import argparse
import os
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
import export  # noqa: E402
import test_paddle_nn  # noqa: E402

# kforge::DataType codes of the bundle format (tools/interp/tensor_bundle.h).
CODES = {1: np.bool_, 2: np.int8, 3: np.uint8, 4: np.int16, 5: np.int32, 6: np.int64, 9: np.float32, 10: np.float64}


def read_bundle(path):
    out = {}
    with open(path, "rb") as f:
        if f.read(4) != b"KFTB":
            raise ValueError(f"{path} is not a tensor bundle")
        _, count = struct.unpack("<II", f.read(8))
        for _ in range(count):
            (length,) = struct.unpack("<I", f.read(4))
            name = f.read(length).decode()
            dtype, ndim = struct.unpack("<ii", f.read(8))
            dims = struct.unpack(f"<{ndim}q", f.read(8 * ndim))
            (nbytes,) = struct.unpack("<Q", f.read(8))
            out[name] = np.frombuffer(f.read(nbytes), CODES[dtype]).reshape(dims).copy()
    return out


def write_bundle(path, tensors):
    codes = {v: k for k, v in CODES.items()}
    with open(path, "wb") as f:
        f.write(b"KFTB" + struct.pack("<II", 1, len(tensors)))
        for name, a in tensors.items():
            a = np.ascontiguousarray(a)
            raw = name.encode()
            f.write(struct.pack("<I", len(raw)) + raw + struct.pack("<ii", codes[a.dtype.type], a.ndim))
            f.write(struct.pack(f"<{a.ndim}q", *a.shape))
            data = a.tobytes()
            f.write(struct.pack("<Q", len(data)) + data)


def paddle_outputs(prefix, feeds):
    import paddle.inference as pi
    params = prefix + ".pdiparams"
    cfg = pi.Config(prefix + ".json", params if os.path.exists(params) else "")
    cfg.disable_gpu()
    cfg.switch_ir_optim(False)
    cfg.disable_glog_info()
    for name in ("disable_onednn", "disable_mkldnn"):
        if hasattr(cfg, name):
            getattr(cfg, name)()
            break
    predictor = pi.create_predictor(cfg)
    for name in predictor.get_input_names():
        predictor.get_input_handle(name).copy_from_cpu(feeds[name])
    predictor.run()
    return {n: predictor.get_output_handle(n).copy_to_cpu() for n in predictor.get_output_names()}


def verify(interp, case, stem, shape_args, tmp):
    net = export.save(stem, tmp)
    prefix = os.path.join(tmp, stem)
    inputs, outputs = os.path.join(tmp, "in.bin"), os.path.join(tmp, "out.bin")
    subprocess.run([interp, prefix + ".json", "--seed", "3", "--write-inputs", inputs] + shape_args, check=True)
    bundle = read_bundle(inputs)
    for p in net.parameters():  # Paddle's values, not the interpreter's random ones
        bundle["param/" + p.name] = p.numpy()
    write_bundle(inputs, bundle)
    subprocess.run([interp, prefix + ".json", "--inputs", inputs, "--write-outputs", outputs], check=True)
    got = read_bundle(outputs)
    want = paddle_outputs(prefix, {k[len("feed/"):]: v for k, v in bundle.items() if k.startswith("feed/")})
    ok = True
    for out in sorted(want):
        w, g = want[out], got.get(out)
        if g is None or w.dtype != g.dtype or w.shape != g.shape:
            print(f"  {out}: Paddle {w.dtype}{list(w.shape)}, kforge "
                  f"{'missing' if g is None else f'{g.dtype}{list(g.shape)}'}")
            ok = False
            continue
        same = np.allclose(g, w, rtol=1e-5, atol=1e-5)
        diff = float(np.max(np.abs(g.astype(np.float64) - w))) if w.size else 0.0
        print(f"  {out}: {w.dtype}{list(w.shape)} max abs diff {diff:.3g}")
        if not same:
            print(f"    Paddle {w.ravel()[:12]}\n    kforge {g.ravel()[:12]}")
            ok = False
    print(f"{'agree' if ok else 'DIFFER'} {case}")
    return ok


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build-dir", default="build")
    parser.add_argument("names", nargs="*", help="cases of test_paddle_nn.py (default: all)")
    args = parser.parse_args()
    import paddle
    paddle.set_device("cpu")
    paddle.seed(11)
    interp = os.path.join(os.path.abspath(args.build_dir), "tools", "interp", "kforge-interp")
    failed = []
    for case in args.names or list(test_paddle_nn.CASES):
        stem, shape_args, _ = test_paddle_nn.CASES[case]
        with tempfile.TemporaryDirectory() as tmp:
            if not verify(interp, case, stem, shape_args, tmp):
                failed.append(case)
    total = len(args.names or test_paddle_nn.CASES)
    print(f"{total - len(failed)} agree with Paddle, {len(failed)} differ: {' '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
