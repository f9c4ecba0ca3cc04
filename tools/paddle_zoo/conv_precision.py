#!/usr/bin/env python3
"""One convolution alone, against its float64 result: how far Paddle's predictor (float32, its CPU kernel: im2col +
GEMM) and kforge's generated code (tools/run-model) are from it. Run under a Python that has Paddle:

    PY tools/paddle_zoo/conv_precision.py IC,OC,K,HW [IC,OC,K,HW ...] --build-dir BUILD [--work DIR] [-- RUN_MODEL_ARGS]

Each spec is a stride-1 K x K convolution (padding K // 2, no bias) of IC to OC channels over one HW x HW image,
He-uniform weights and an N(0, 1) input (seed 1), exported with paddle.jit.save. Prints the rms of each float32
result's difference from float64 over the rms of float64, and kforge's over Paddle's (issue 34 item 5,
docs/dynamic-shapes-measured.md "Precision")."""
import argparse
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "tools" / "run_model"))


def measure(spec, build_dir, work, extra):
    import paddle
    import check
    ic, oc, k, hw = spec
    d = work / f"conv_{ic}_{oc}_{k}_{hw}"
    (d / "model").mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(1)
    conv = paddle.nn.Conv2D(ic, oc, k, padding=k // 2, bias_attr=False)
    w = rng.uniform(-1, 1, conv.weight.shape).astype(np.float32) * np.float32(np.sqrt(6 / (ic * k * k)))
    conv.weight.set_value(w)
    x = rng.standard_normal([1, ic, hw, hw]).astype(np.float32)
    net = paddle.jit.to_static(conv, input_spec=[paddle.static.InputSpec([None, ic, None, None], "float32", "x")])
    paddle.jit.save(net, str(d / "model" / "inference"))
    np.save(d / "x.npy", x)
    paddle_out = check.paddle_outputs(d / "model", {"x": x})[0]
    exact = paddle.nn.functional.conv2d(paddle.to_tensor(x.astype(np.float64)), paddle.to_tensor(w.astype(np.float64)),
                                        padding=k // 2).numpy()
    cmd = [sys.executable, str(ROOT / "tools" / "run-model"), str(d / "model"), "--build-dir", str(build_dir),
           "--input", f"x={d / 'x.npy'}", "--output-dir", str(d / "out"), "--work-dir", str(d / "work"), *extra]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        return f"run-model failed: {(r.stderr.strip().splitlines() or ['?'])[-1]}"
    got = np.load(d / "out" / "0.npy")
    scale = np.sqrt(np.mean(exact ** 2))
    err = [np.sqrt(np.mean((a.astype(np.float64) - exact) ** 2)) / scale for a in (got, paddle_out)]
    return f"kforge {err[0]:.3g}  Paddle {err[1]:.3g}  kforge / Paddle {err[0] / err[1]:.2f}"


def main():
    argv = sys.argv[1:]
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    argv = argv[:argv.index("--")] if "--" in argv else argv
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("specs", nargs="+", help="IC,OC,K,HW")
    p.add_argument("--build-dir", required=True, help="kforge build directory (src/kforge, the kernel library)")
    p.add_argument("--work", default="build/conv_precision")
    args = p.parse_args(argv)
    import paddle
    paddle.set_device("cpu")
    for s in args.specs:
        spec = [int(v) for v in s.split(",")]
        if len(spec) != 4:
            p.error(f"{s}: want IC,OC,K,HW")
        print(f"{s}: {measure(spec, Path(args.build_dir).resolve(), Path(args.work).resolve(), extra)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
