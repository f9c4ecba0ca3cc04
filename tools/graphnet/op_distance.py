#!/usr/bin/env python3
"""Which op puts kforge's float32 farther from float64 than Paddle's, on a GraphNet sample (tools/paddle_zoo/
op_distance.py does it for the real zoo's cases). Run under a Python that has Paddle, on a sample `tools/check-graphnet
--keep` kept (WORK/SOURCE/MODEL: export/, inputs/):

    PY tools/graphnet/op_distance.py --sample GRAPHNET/paddle_samples/SOURCE/MODEL --work WORK/SOURCE/MODEL \\
        --build BUILD [--images 9] [--seed S] [--tag main]

For the chosen images of the batch (axis 0 of every result), every op result of
  - Paddle's float32 program (tools/paddle-bisect's run_paddle: the static executor fetching every op),
  - the sample's GraphModule in float64 (Paddle dygraph, the weights as check-graphnet draws them cast; each
    paddle._C_ops call recorded in order and paired with the program's ops by name),
  - kforge's generated code (`kforge compile --trace-hooks`, built with tools/check_program's harness; the values
    inside a fused group are not traced),
and the max and mean |x - float64| of Paddle's and kforge's, and kforge's over Paddle's. Then the local error of
each convolution group (conv2d / depthwise_conv2d, batch_norm, then relu6, hardswish, sigmoid, swish or a residual
add when there is one): the group run in float64 on each implementation's *own* float32 input (and residual),
against that implementation's output: an op less precise than Paddle's shows there, an error carried in does not. docs/model-zoo.md
"MobileNetV2_x0_25's 3.5x from float64" (issue 34 item 5) used it. Paddle's and kforge's runs are cached under
WORK/opcache.
"""
import argparse
import importlib.machinery
import importlib.util
import difflib
import json
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "tools" / "run_model"))
sys.path.insert(0, str(ROOT / "tests" / "gpu"))
import export_sample  # noqa: E402
import fixture_bundle  # noqa: E402  (tensor bundles: tools/interp/tensor_bundle.h)
import float64_sample  # noqa: E402


def bisect_module():
    loader = importlib.machinery.SourceFileLoader("paddle_bisect", str(ROOT / "tools" / "paddle-bisect"))
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader("paddle_bisect", loader))
    loader.exec_module(module)
    return module


def cached(path, compute):
    if not path.exists():
        with open(path, "wb") as f:
            pickle.dump(compute(), f, protocol=4)
    with open(path, "rb") as f:
        return pickle.load(f)


def float64_log(sample, seed, feeds, pick):
    """[(op name, first result)] of the GraphModule's paddle._C_ops calls in float64, in order."""
    import paddle
    paddle.set_device("cpu")
    paddle.seed(seed)
    rng = np.random.default_rng(seed)  # export_sample.export's draws: weights, then inputs
    weights = {w["name"]: export_sample.draw(w, rng) for w in export_sample.meta_tensors(sample / "weight_meta.py")}
    source, _ = float64_sample.float64_source((sample / "model.py").read_text())
    scope = {}
    exec(compile(source, str(sample / "model.py"), "exec"), scope)
    net = scope["GraphModule"]()
    net.eval()
    kwargs = {n: paddle.to_tensor(v.astype(np.float64) if v.dtype.kind == "f" else v)
              for n, v in {**weights, **feeds}.items()}
    log, real = [], paddle._C_ops

    class Recorder:
        def __getattr__(self, name):
            fn = getattr(real, name)

            def call(*a):
                out = fn(*a)
                first = out[0] if isinstance(out, (tuple, list)) else out
                log.append((name, pick(first.numpy()) if hasattr(first, "numpy") else None))
                return out
            return call

    paddle._C_ops = Recorder()
    try:
        with paddle.no_grad():
            net(**kwargs)
    finally:
        paddle._C_ops = real
    return log


def kforge_trace(args, cache, feeds, params):
    """Every op result of the generated code with trace hooks: value id -> array."""
    import model as rm
    gen, harness, trace = args.work / f"gen-{args.tag}", args.work / f"harness-{args.tag}", cache / f"trace-{args.tag}.kftb"
    if not trace.exists():
        rm.generate(args.build / "src" / "kforge", args.work / "export" / "inference.json", gen, "cpu", False,
                    extra=["--trace-hooks", "--layout", args.layout], name="traced")
        kernels = args.build / "kernels" / "libkforge_kernels.a"
        subprocess.run(["g++", "-std=c++17", "-O2", "-I", gen, "-I", ROOT / "tools" / "interp",
                        '-DKFORGE_PROGRAM_HEADER="traced.h"', "-DKFORGE_PROGRAM_CLASS=traced",
                        "-DKFORGE_TRACE_HOOK=kforge_harness_trace", ROOT / "tools" / "check_program" / "harness.cc",
                        gen / "traced.cc", kernels, *rm.kernels_link_args(kernels), "-o", harness], check=True)
        tensors = []
        for prefix, items in (("feed", feeds), ("param", params)):
            for name, array in items.items():
                array = np.ascontiguousarray(array)
                tensors.append((f"{prefix}/{name}", fixture_bundle.NPY[array.dtype.str], list(array.shape),
                                array.tobytes()))
        fixture_bundle.write_bundle(cache / "inputs.kftb", tensors)
        subprocess.run([harness, cache / "inputs.kftb", cache / f"outputs-{args.tag}.kftb", "--trace", trace],
                       check=True)
    return {name: np.frombuffer(raw, dtype=np.dtype(fixture_bundle.FORMAT[dtype])).reshape(dims)
            for name, dtype, dims, raw in fixture_bundle.read_bundle(trace) if dtype != "bool"}


def as_nchw(got, want):
    """kforge's NHWC or nChw8c ([N, C/8, H, W, 8]) value of the layout plan back in Paddle's NCHW."""
    if got is not None and got.shape != want.shape and got.ndim == 4:
        return got.transpose(0, 3, 1, 2)
    if got is not None and got.shape != want.shape and got.ndim == 5 and want.ndim == 4:
        return got.transpose(0, 1, 4, 2, 3).reshape(want.shape)
    return got


def distance(ours, paddle32, ref):
    pe = np.abs(paddle32.astype(np.float64) - ref)
    text = f"{np.abs(ref).max():9.3g} | {pe.max():9.3g} {pe.mean():9.3g} |"
    if ours is not None:
        ke = np.abs(ours.astype(np.float64) - ref)
        text += f" {ke.max():9.3g} {ke.mean():9.3g} |"
        if pe.max() > 0 and pe.mean() > 0:
            text += f" {ke.max() / pe.max():6.2f}x {ke.mean() / pe.mean():6.2f}x"
    return text


TAILS = ("relu6", "hardswish", "sigmoid", "swish", "add")  # what conv_group computes after the batch norm


def conv_group(x, residual, conv, bn, tail, weight):
    """A convolution group in float64: conv2d / depthwise_conv2d, batch_norm, then an activation or + residual."""
    import paddle
    import paddle.nn.functional as F

    def attr(op, name):
        return next(a["AT"] for a in op["A"] if a["N"] == name)["D"]

    ints = lambda name: [v["D"] for v in attr(conv, name)]  # noqa: E731
    y = F.conv2d(paddle.to_tensor(x.astype(np.float64)), paddle.to_tensor(weight(conv, 1)), stride=ints("strides"),
                 padding=ints("paddings"), dilation=ints("dilations"), groups=attr(conv, "groups")).numpy()
    mean, var, scale, shift = (weight(bn, k)[None, :, None, None] for k in (1, 2, 3, 4))
    z = (y - mean) / np.sqrt(var + attr(bn, "epsilon")) * scale + shift
    if tail == "relu6":
        return np.clip(z, 0.0, 6.0)
    if tail == "hardswish":
        return z * np.clip(z + 3.0, 0.0, 6.0) / 6.0
    if tail == "sigmoid":
        return 1.0 / (1.0 + np.exp(-z))
    if tail == "swish":
        return z / (1.0 + np.exp(-z))
    return z + residual.astype(np.float64) if tail == "add" else z


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sample", required=True, type=Path, help="the GraphNet sample directory (model.py, *_meta.py)")
    p.add_argument("--work", required=True, type=Path, help="the sample's directory in check-graphnet's --work-dir")
    p.add_argument("--build", required=True, type=Path, help="the kforge build whose kforge and kernels to trace")
    p.add_argument("--images", default="0", help="comma-separated images of the batch to compare (default 0)")
    p.add_argument("--seed", type=int, default=1, help="check-graphnet's --seed (default 1)")
    p.add_argument("--tag", default="main", help="names kforge's trace in WORK/opcache (default main)")
    p.add_argument("--layout", default="auto", choices=("auto", "nchw", "nhwc", "nchw8c"),
                   help="kforge compile --layout of the traced code (default auto, which with --trace-hooks is one "
                        "plan, nhwc; run-model's class picks nchw8c on an AVX2 machine: trace that one with nchw8c)")
    args = p.parse_args()
    args.sample, args.work, args.build = args.sample.resolve(), args.work.resolve(), args.build.resolve()
    images = [int(i) for i in args.images.split(",")]
    cache = args.work / "opcache"
    cache.mkdir(exist_ok=True)
    pb = bisect_module()
    feeds = {f.stem: np.load(f) for f in sorted((args.work / "inputs").glob("*.npy"))}
    batch = next(iter(feeds.values())).shape[0]

    def pick(a):
        return a[images] if a.ndim >= 1 and a.shape[0] == batch else a

    def float32_values():
        import paddle
        _, values, params = pb.run_paddle(args.work / "export", feeds)
        paddle.disable_static()
        return {k: pick(v) for k, v in values.items()}, params

    tag = args.images.replace(",", "-")
    values32, params = cached(cache / f"paddle32-{tag}.pkl", float32_values)
    log64 = cached(cache / f"float64-{tag}.pkl", lambda: float64_log(args.sample, args.seed, feeds, pick))
    ours = {k: pick(v) for k, v in kforge_trace(args, cache, feeds, params).items()}
    program = json.loads((args.work / "export" / "inference.json").read_text())
    raw_ops = program["program"]["regions"][0]["blocks"][0]["ops"]
    ops = pb.json_ops(args.work / "export" / "inference.json")
    compute = [i for i, o in enumerate(ops) if o[0] not in ("parameter", "data", "fetch")]
    # Paired by op name and result shape: by name alone, a run of same-named ops of other shapes (the heads' sigmoids
    # and transposes of PP-DocLayout-M/subgraph_3) paired values of two shapes.
    def shape_of(value):
        return tuple(value.shape) if value is not None and hasattr(value, "shape") else None

    matcher = difflib.SequenceMatcher(None, [(ops[i][0].rstrip("_"), shape_of(values32.get((i, 0)))) for i in compute],
                                      [(name.rstrip("_"), shape_of(value)) for name, value in log64], autojunk=False)
    to64 = {}
    for kind, i1, i2, j1, _ in matcher.get_opcodes():
        if kind == "equal":
            to64.update({compute[i1 + k]: j1 + k for k in range(i2 - i1)})
    print(f"images {args.images}: op name shape max|float64| | Paddle max/mean | kforge max/mean | kforge / Paddle")
    for i, (name, _, results) in enumerate(ops):
        want = values32.get((i, 0))
        if i not in to64 or want is None or want.dtype.kind != "f" or log64[to64[i]][1] is None:
            continue
        if want.shape != log64[to64[i]][1].shape:
            continue  # not the same value after all
        got = as_nchw(ours.get(results[0]), want)
        print(f"{i:5d} {name:17s} {str(list(want.shape)):22s} "
              f"{distance(got, want, log64[to64[i]][1].astype(np.float64))}")

    # Local errors of the convolution groups.
    names = {op["O"]["%"]: op["A"][3] for op in raw_ops if op["#"] == "p"}
    producer = {r: (i, k) for i, (_, _, results) in enumerate(ops) for k, r in enumerate(results) if r}
    weight = lambda op, k: params[names[op["I"][k]["%"]]].astype(np.float64)  # noqa: E731
    print("\nlocal error of each convolution group (float64 on its own float32 input): Paddle max/mean | "
          "kforge max/mean | kforge / Paddle")
    for i, (name, operands, _) in enumerate(ops):
        if name not in ("conv2d", "depthwise_conv2d") or i + 1 >= len(ops) or ops[i + 1][0] != "batch_norm":
            continue
        tail = ops[i + 2][0] if i + 2 < len(ops) and ops[i + 2][0] in TAILS else ""
        last = i + 2 if tail else i + 1
        if tail and ops[i + 1][2][0] not in ops[i + 2][1]:
            tail, last = "", i + 1
        residual_id = next((v for v in ops[i + 2][1] if v != ops[i + 1][2][0]), None) if tail == "add" else None
        source = producer.get(operands[0])
        if source is None or (source[0], 0) not in values32 or operands[0] not in ours:
            continue
        paddle_in, paddle_out = values32[source], values32[(last, 0)]
        kforge_in, kforge_out = ours[operands[0]], ours.get(ops[last][2][0])
        if kforge_out is None or (tail == "add" and residual_id not in ours):
            continue
        paddle_res = values32.get(producer[residual_id]) if tail == "add" else None
        kforge_res = as_nchw(ours[residual_id], paddle_out) if tail == "add" else None
        pe = np.abs(paddle_out - conv_group(paddle_in, paddle_res, raw_ops[i], raw_ops[i + 1], tail, weight))
        ke = np.abs(as_nchw(kforge_out, paddle_out) - conv_group(as_nchw(kforge_in, paddle_in), kforge_res, raw_ops[i],
                                                                 raw_ops[i + 1], tail, weight))
        print(f"{i:5d} {name:17s} {'+ ' + tail if tail else '':7s} | {pe.max():9.3g} {pe.mean():9.3g} | "
              f"{ke.max():9.3g} {ke.mean():9.3g} | {ke.max() / max(pe.max(), 1e-300):6.2f}x "
              f"{ke.mean() / max(pe.mean(), 1e-300):6.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
