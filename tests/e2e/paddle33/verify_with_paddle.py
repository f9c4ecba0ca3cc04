#!/usr/bin/env python3
"""Checks the reference interpreter against Paddle's own predictor on the programs of this folder:

    BUILD/paddle-venv/bin/python tests/e2e/paddle33/verify_with_paddle.py --build-dir build [NAME...]

For each program kforge-interp makes seeded random inputs (or the inputs set below), runs the program, and Paddle's
predictor (CPU, IR optimisation off) runs it on the same inputs; outputs must have Paddle's dtype and shape and
agree within rtol/atol (integer and bool outputs exactly). Outputs that depend on a random generator are compared
by shape and dtype only. Needs Paddle; not run by the test suite (test_paddle33.py checks the generated code
against the interpreter, without Paddle).
"""

import argparse
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

# name -> options: "shape" (--shape arguments), "set" (input name -> numpy array), "tol" (rtol, atol),
# "random" (fetch names whose values come from a random generator).
CASES = {name: {} for name in (
    "sum_axis", "sum_int", "mean_axis", "hardsigmoid", "relu6", "compare", "compare_int", "logical", "cumsum",
    "cumsum_int", "prod", "pow", "floor_divide", "floor_divide_float", "unary", "abs_int", "clip", "where",
    "masked_fill", "arange", "argmax", "log_softmax", "one_hot", "swiglu")}
CASES.update({
    "uniform": {"shape": ["x=2,3"], "random": ("fetch_name_0", "fetch_name_1")},
    "full_with_tensor": {"shape": ["x=5,3"]},
    "arange_dyn": {"shape": ["x=8"]},
    "topk": {"shape": ["x=3,5"]},
})

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


def paddle_outputs(program, feeds):
    import paddle.inference as pi
    cfg = pi.Config(program, "")
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


def verify(interp, name, case):
    program = os.path.join(HERE, f"{name}.json")
    shape = [a for s in case.get("shape", []) for a in ("--shape", s)]
    rtol, atol = case.get("tol", (1e-6, 1e-6))
    with tempfile.TemporaryDirectory() as tmp:
        inputs, outputs = os.path.join(tmp, "in.bin"), os.path.join(tmp, "out.bin")
        subprocess.run([interp, program, "--seed", "3", "--write-inputs", inputs] + shape, check=True)
        bundle = read_bundle(inputs)
        for key, value in case.get("set", {}).items():
            bundle["feed/" + key] = np.asarray(value).astype(bundle["feed/" + key].dtype)
        write_bundle(inputs, bundle)
        subprocess.run([interp, program, "--inputs", inputs, "--write-outputs", outputs], check=True)
        got = read_bundle(outputs)
    want = paddle_outputs(program, {k[len("feed/"):]: v for k, v in bundle.items() if k.startswith("feed/")})
    ok = True
    for out in sorted(want):
        w, g = want[out], got.get(out)
        if g is None:
            print(f"  {out}: missing from kforge's outputs {sorted(got)}")
            ok = False
            continue
        if w.dtype != g.dtype or w.shape != g.shape:
            print(f"  {out}: Paddle {w.dtype}{list(w.shape)}, kforge {g.dtype}{list(g.shape)}")
            ok = False
            continue
        if out in case.get("random", ()):
            print(f"  {out}: {w.dtype}{list(w.shape)} (random values: shape and dtype only)")
            continue
        if w.dtype.kind in "fc":
            same = np.allclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
            diff = float(np.nanmax(np.abs(g.astype(np.float64) - w))) if w.size else 0.0
            print(f"  {out}: {w.dtype}{list(w.shape)} max abs diff {diff:.3g}")
        else:
            same = np.array_equal(g, w)
            print(f"  {out}: {w.dtype}{list(w.shape)} {'identical' if same else 'different'}")
        if not same:
            print(f"    Paddle {w.ravel()[:16]}\n    kforge {g.ravel()[:16]}")
            ok = False
    return ok


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build-dir", default="build")
    parser.add_argument("names", nargs="*")
    args = parser.parse_args()
    interp = os.path.join(os.path.abspath(args.build_dir), "tools", "interp", "kforge-interp")
    failed = []
    for name in args.names or list(CASES):
        print(name)
        if not verify(interp, name, CASES[name]):
            failed.append(name)
    print(f"{len(args.names or CASES) - len(failed)} agree with Paddle, {len(failed)} differ: {' '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
