#!/usr/bin/env python3
"""Which op puts kforge's float32 farther from float64 than Paddle's? (issue 34 item 5, docs/model-zoo.md "RT-DETR,
op by op and over perturbed draws"). Works on a case directory that `tools/check-paddle-models --real --work-dir
WORK` kept (WORK/NAME-LABEL: inference.json / .pdiparams, input_*.npy). Every op result of
  - Paddle's float32 program (tools/paddle-bisect's run_paddle: the static executor fetching every op),
  - the same model exported in float64 (the export's weights cast, paddle.jit.save; its op list is aligned with the
    float32 one, the casts float64 adds left out) and run the same way,
  - kforge's generated code (`kforge compile --trace-hooks`, built with tools/check_program's harness, fed the
    inputs and the parameters Paddle loaded; NHWC values turned back to NCHW),
and per float result the max and mean |x - float64| of Paddle's and kforge's, and kforge's over Paddle's. An op whose
arithmetic is less precise than Paddle's shows as a step up of the ratios at it. Paddle's runs are cached under
CASE/opcache; kforge's trace per --tag. Run under a Python that has Paddle (and ppdet for the detectors):

    PY tools/paddle_zoo/op_distance.py --model rtdetr_r18_q20 --case WORK/rtdetr_r18_q20-320x320 --build BUILD \\
        [--tag main] > table.txt
"""
import argparse
import difflib
import importlib.machinery
import importlib.util
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
import fixture_bundle  # noqa: E402  (tensor bundles: tools/interp/tensor_bundle.h)


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


def float64_values(args, pb, feeds):
    """The model exported in float64 (CASE/f64) and run by the static executor, every op fetched."""
    import paddle
    import check
    import models
    from paddle.static import InputSpec
    specs = models.real_zoo(None)[args.model][1][0][1]
    specs = [InputSpec(s.shape, "float64" if s.dtype == paddle.float32 else s.dtype, s.name) for s in specs]
    net, _ = models.with_weights(models.real_zoo(None)[args.model][0], args.seed)
    check.to_float64(net)
    paddle.jit.save(paddle.jit.to_static(net, input_spec=specs), str(args.case / "f64" / "inference"))
    names, values, _ = pb.run_paddle(args.case / "f64", {k: v.astype(np.float64) if v.dtype == np.float32 else v
                                                         for k, v in feeds.items()})
    paddle.disable_static()
    return names, values


def kforge_trace(args, params, feeds):
    """Every op result of the generated code with trace hooks: value id -> array."""
    import model as rm
    gen, harness, cache = args.case / f"gen-{args.tag}", args.case / f"harness-{args.tag}", args.case / "opcache"
    trace = cache / f"trace-{args.tag}.kftb"
    if not trace.exists():
        rm.generate(args.build / "src" / "kforge", args.case / "inference.json", gen, "cpu", False,
                    extra=["--trace-hooks"], name="traced")
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


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", required=True, help="the real_zoo model the case was exported from")
    p.add_argument("--case", required=True, type=Path, help="the case directory check-paddle-models kept")
    p.add_argument("--build", required=True, type=Path, help="the kforge build whose kforge and kernels to trace")
    p.add_argument("--tag", default="main", help="names kforge's trace in CASE/opcache (default main)")
    p.add_argument("--seed", type=int, default=7, help="the weights' seed of the export (check-paddle-models')")
    args = p.parse_args()
    args.case, args.build = args.case.resolve(), args.build.resolve()
    (args.case / "opcache").mkdir(exist_ok=True)
    (args.case / "f64").mkdir(exist_ok=True)
    pb = bisect_module()
    feeds = {f.name[len("input_"):-4]: np.load(f) for f in sorted(args.case.glob("input_*.npy"))}

    def float32_values():
        import paddle
        result = pb.run_paddle(args.case, feeds)
        paddle.disable_static()
        return result

    _, values32, params = cached(args.case / "opcache" / "paddle32.pkl", float32_values)
    _, values64 = cached(args.case / "opcache" / "paddle64.pkl", lambda: float64_values(args, pb, feeds))
    ours = kforge_trace(args, params, feeds)
    ops = pb.json_ops(args.case / "inference.json")
    ops64 = pb.json_ops(args.case / "f64" / "inference.json")
    to64 = {}
    matcher = difflib.SequenceMatcher(None, [o[0] for o in ops], [o[0] for o in ops64], autojunk=False)
    for tag, i1, i2, j1, _ in matcher.get_opcodes():
        if tag == "equal":
            to64.update({i1 + k: j1 + k for k in range(i2 - i1)})
    print("op name result shape max|float64| | Paddle max/mean | kforge max/mean | kforge / Paddle: max mean")
    for i, (name, _, results) in enumerate(ops):
        for r, key in enumerate(results):
            want, ref, got = values32.get((i, r)), values64.get((to64.get(i, -1), r)), ours.get(key)
            if want is None or ref is None or want.dtype.kind != "f" or ref.shape != want.shape or not want.size:
                continue
            if got is not None and got.shape != want.shape:  # an NHWC value of the layout plan
                nhwc = got.ndim == 4 and got.shape == (want.shape[0], *want.shape[2:], want.shape[1])
                got = got.transpose(0, 3, 1, 2) if nhwc else None
            ref = ref.astype(np.float64)
            pe = np.abs(want.astype(np.float64) - ref)
            text = f"{i:5d} {name:16s} %{key:6s} {str(list(want.shape)):22s} {np.abs(ref).max():9.3g} | " \
                   f"{pe.max():9.3g} {pe.mean():9.3g} |"
            if got is not None:
                ke = np.abs(got.astype(np.float64) - ref)
                text += f" {ke.max():9.3g} {ke.mean():9.3g} |"
                if pe.max() > 0 and pe.mean() > 0:
                    text += f" {ke.max() / pe.max():6.2f}x {ke.mean() / pe.mean():6.2f}x"
            print(text)


if __name__ == "__main__":
    main()
