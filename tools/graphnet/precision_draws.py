#!/usr/bin/env python3
"""Is a sample's float64 verdict (tools/graphnet/float64.py) a property of kforge's arithmetic or of one draw? Run
under a Python that has Paddle, on a sample `tools/check-graphnet --keep` kept (WORK/SOURCE/MODEL[/subgraph_N]: export/,
inputs/, paddle/, float64/, kforge/):

    PY tools/graphnet/precision_draws.py --sample GRAPHNET/paddle_samples/SOURCE/MODEL --work WORK/SOURCE/MODEL \\
        --build BUILD [--image I] [--seed S]

Prints, for output 0 (batch along axis 0), each image's largest distance from float64 for kforge and for Paddle's
predictor (the rule's reference), and the same for Paddle's own oneDNN path (the predictor with oneDNN on: another
float32 implementation of the same ops by Paddle) as a control: the largest of all images (the rule's figure) and
the geometric mean and count over 1.5x of the per-image ratios. With --image, the image is also redrawn (every input
element moved by one ulp in a random direction, as many copies as the batch holds; copy 0 the image itself) and the
three run again on the copies: the float64 run sees the same copies, so a ratio that swings across copies is the
draw's, not an op's. docs/model-zoo.md "MobileNetV2_x0_25's float64 distance" (issue 34 item 5) used it.
"""
import argparse
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "tools" / "paddle_zoo"))
import export_sample  # noqa: E402  (meta_tensors, draw: the sample's weights as check-graphnet draws them)
import float64  # noqa: E402  (perturb: the float64 rule's redraw)
import float64_sample  # noqa: E402  (float64_source)


def predictor(export, feeds, onednn):
    import paddle.inference as pi
    import check  # tools/paddle_zoo/check.py: the plain predictor, as check-graphnet runs it
    if not onednn:
        return check.paddle_outputs(export, feeds)[0]
    check.without_inplace_pass()
    cfg = pi.Config(str(export / "inference.json"), str(export / "inference.pdiparams"))
    cfg.disable_gpu()
    cfg.switch_ir_optim(False)
    cfg.disable_glog_info()
    if hasattr(cfg, "enable_onednn"):
        cfg.enable_onednn()
    else:
        cfg.enable_mkldnn()
    p = pi.create_predictor(cfg)
    for name in p.get_input_names():
        p.get_input_handle(name).copy_from_cpu(feeds[name])
    p.run()
    return p.get_output_handle(p.get_output_names()[0]).copy_to_cpu()


def float64_run(sample, feeds, seed):
    import paddle
    paddle.set_device("cpu")
    paddle.seed(seed)
    rng = np.random.default_rng(seed)  # the draws of export_sample.export: weights first
    weights = {w["name"]: export_sample.draw(w, rng) for w in export_sample.meta_tensors(sample / "weight_meta.py")}
    source, _ = float64_sample.float64_source((sample / "model.py").read_text())
    scope = {}
    exec(compile(source, str(sample / "model.py"), "exec"), scope)
    net = scope["GraphModule"]()
    net.eval()
    kwargs = {n: paddle.to_tensor(v.astype(np.float64) if v.dtype.kind == "f" else v)
              for n, v in {**weights, **feeds}.items()}
    with paddle.no_grad():
        ys = net(**kwargs)
    ys = list(ys) if isinstance(ys, (list, tuple)) else [ys]
    return ys[0].numpy()


def kforge_run(work, build, feeds, out):
    args = [sys.executable, ROOT / "tools" / "run-model", work / "export", "--build-dir", build, "--work-dir",
            out / "run-model", "--output-dir", out / "kforge", "--seed", "1"]
    for name in feeds:
        args += ["--input", f"{name}={out / (name + '.npy')}"]
    subprocess.run(args, check=True, capture_output=True)
    return np.load(out / "kforge" / "0.npy")


def per_image(x):
    """The largest |element| of each image (axis 0) of an array."""
    return np.abs(x).reshape(x.shape[0], -1).max(axis=1)


def summary(f64, reference, other):
    """other's per-image distance from float64 over the reference's: the largest of each and their ratio (the rule's
    figure), and over the images the geometric mean, median, range and counts beyond 1.5x either way."""
    pe = per_image(reference.astype(np.float64) - f64)
    e = per_image(other.astype(np.float64) - f64)
    r = e / np.maximum(pe, 1e-300)
    return {"largest": float(e.max()), "at": int(e.argmax()), "reference": float(pe.max()),
            "ratio": float(e.max() / pe.max()), "geomean": float(np.exp(np.log(r).mean())),
            "median": float(np.median(r)), "low": float(r.min()), "high": float(r.max()),
            "over": int((r > 1.5).sum()), "under": int((r < 1 / 1.5).sum()), "images": len(r)}


def report(label, f64, paddle, others):
    pe = per_image(paddle.astype(np.float64) - f64)
    print(f"{label}: Paddle's predictor from float64: largest {pe.max():.3g} (image {pe.argmax()})")
    for name, y in others:
        s = summary(f64, paddle, y)
        print(f"  {name:14s} largest {s['largest']:.3g} (image {s['at']}): {s['ratio']:.2f}x Paddle's; per image "
              f"geometric mean {s['geomean']:.2f}x, median {s['median']:.2f}x, range {s['low']:.2f}x-{s['high']:.2f}x, "
              f"{s['over']} of {s['images']} over 1.5x, {s['under']} under 1/1.5")


def redraw(base, copies, rng):
    """copies arrays: base itself, then base with every float element moved one ulp up or down at random."""
    return np.stack([base] + [float64.perturb(base, rng) for _ in range(1, copies)])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sample", required=True, type=Path, help="the GraphNet sample directory (model.py, *_meta.py)")
    p.add_argument("--work", required=True, type=Path, help="the sample's directory in check-graphnet's --work-dir")
    p.add_argument("--build", required=True, type=Path, help="the kforge build (src/kforge, kernels/) for run-model")
    p.add_argument("--seed", type=int, default=1, help="check-graphnet's --seed (the weights' draw; default 1)")
    p.add_argument("--image", type=int, help="also redraw this image of the batch by one ulp per element")
    p.add_argument("--redraw-seed", type=int, default=0, help="seed of the redraws' directions (default 0)")
    args = p.parse_args()
    work = args.work.resolve()
    feeds = {f.stem: np.load(f) for f in sorted((work / "inputs").glob("*.npy"))}
    f64 = np.load(work / "float64" / "0.npy")
    paddle = np.load(work / "paddle" / "0.npy")
    others = [("kforge", np.load(work / "kforge" / "0.npy")),
              ("Paddle oneDNN", predictor(work / "export", feeds, True))]
    report("the kept batch", f64, paddle, others)
    if args.image is None:
        return 0
    out = work / f"redraws-{args.image}-{args.redraw_seed}"
    out.mkdir(exist_ok=True)
    rng = np.random.default_rng(1000 + args.redraw_seed)
    copies = {}
    for name, x in feeds.items():
        copies[name] = redraw(x[args.image], x.shape[0], rng)
        np.save(out / f"{name}.npy", copies[name])
    f64 = float64_run(args.sample.resolve(), copies, args.seed)
    paddle = predictor(work / "export", copies, False)
    others = [("kforge", kforge_run(work, args.build.resolve(), copies, out)),
              ("Paddle oneDNN", predictor(work / "export", copies, True))]
    report(f"image {args.image} redrawn ({len(f64)} copies, copy 0 the image)", f64, paddle, others)
    return 0


if __name__ == "__main__":
    sys.exit(main())
