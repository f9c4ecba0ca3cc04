#!/usr/bin/env python3
"""Is a real_zoo model's "kforge / Paddle distance from float64" a property of the generated code or of the draw?
(issue 34 item 5, docs/model-zoo.md "RT-DETR, op by op and over perturbed draws"). Works on a case directory that
`tools/check-paddle-models --real --work-dir WORK` kept (WORK/NAME-LABEL: inference.json / .pdiparams, input_*.npy,
runner). Draw 0 is the case's own inputs; draws 1..N perturb every float input element by about one float32 ulp
(x * (1 +- 2^-23), the sign at random, seeds 1001...): the same image / selection, float32's noise drawn again.
Per draw: the model rebuilt with the export's weights and run in float64 (dygraph) on the perturbed inputs, Paddle's
predictor (check.py's paddle_outputs: IR optimisation and oneDNN off) and each kforge runner on the same float32
inputs; prints kforge's distance from float64 over Paddle's per output (max, mean), then per runner the geometric
mean and the largest of the max ratios over the draws. Run under a Python that has Paddle (and ppdet for the
detectors, as check-paddle-models finds it: $KFORGE_PADDLEDETECTION):

    PY tools/paddle_zoo/perturbed_draws.py --model rtdetr_r18_q20 --case WORK/rtdetr_r18_q20-320x320 --draws 8 \\
        [--runner main=WORK/rtdetr_r18_q20-320x320/runner[,VAR=VALUE...]] [--seed 7]
"""
import argparse
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def perturbed(feeds, draw):
    """Draw 0: the feeds; else each float element moved by about one ulp, the direction drawn per element."""
    if draw == 0:
        return dict(feeds)
    rng = np.random.default_rng(1000 + draw)
    return {k: (v * (1 + rng.choice([-1.0, 1.0], v.shape) * 2.0 ** -23)).astype(np.float32)
            if v.dtype == np.float32 else v for k, v in feeds.items()}


def distances(outputs, reference):
    """[(max, mean) of |output - float64|] per output."""
    return [(float(np.max(np.abs(y.astype(np.float64) - r))), float(np.mean(np.abs(y.astype(np.float64) - r))))
            for y, r in zip(outputs, reference)]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", required=True, help="the real_zoo model the case was exported from")
    p.add_argument("--case", required=True, type=Path, help="the case directory check-paddle-models kept")
    p.add_argument("--draws", type=int, default=8, help="perturbed draws besides the case's own inputs (default 8)")
    p.add_argument("--runner", action="append", default=[], metavar="TAG=PATH[,VAR=VALUE...]",
                   help="a kforge runner (tools/run_model's) and its environment; default: main=CASE/runner")
    p.add_argument("--seed", type=int, default=7, help="the weights' seed of the export (check-paddle-models')")
    args = p.parse_args()

    import paddle
    import check
    import models
    paddle.set_device("cpu")
    runners = []
    for spec in args.runner or [f"main={args.case / 'runner'}"]:
        tag, _, rest = spec.partition("=")
        path, *env = rest.split(",")
        runners.append((tag, Path(path), dict(e.split("=", 1) for e in env)))
    feeds0 = {f.name[len("input_"):-4]: np.load(f) for f in sorted(args.case.glob("input_*.npy"))}
    net, _ = models.with_weights(models.real_zoo(None)[args.model][0], args.seed)
    check.to_float64(net)
    scratch = args.case / "draws"
    scratch.mkdir(exist_ok=True)
    ratios = {tag: [] for tag, _, _ in runners}
    for draw in range(args.draws + 1):
        feeds = perturbed(feeds0, draw)
        with paddle.no_grad():
            ys = net(*[paddle.to_tensor(v.astype(np.float64) if v.dtype == np.float32 else v) for v in feeds.values()])
        reference = [y.numpy() for y in (ys if isinstance(ys, (list, tuple)) else [ys])]
        theirs = distances(check.paddle_outputs(args.case, feeds), reference)
        specs = []
        for name, value in feeds.items():
            np.save(scratch / f"input_{name}.npy", value)
            specs += ["--input", f"{name}={scratch / f'input_{name}.npy'}"]
        line = []
        for tag, runner, env in runners:
            out = scratch / f"out-{tag}"
            out.mkdir(exist_ok=True)
            subprocess.run([runner, "--output-dir", out, "--seed", str(args.seed), "--threads", "1",
                            "--params", args.case / "inference.pdiparams", *specs],
                           env={**os.environ, **env}, check=True, stdout=subprocess.DEVNULL)
            ours = distances([np.load(out / f"{i}.npy") for i in range(len(reference))], reference)
            ratios[tag].append([(a[0] / b[0], a[1] / b[1]) for a, b in zip(ours, theirs)])
            line.append(tag + " " + " ".join(f"{m:.2f}x/{a:.2f}x" for m, a in ratios[tag][-1]))
        print(f"draw {draw}: max/mean over Paddle's per output: " + " | ".join(line), flush=True)
    for tag, rows in ratios.items():
        r = np.array(rows)  # draws x outputs x (max, mean)
        geo = np.exp(np.log(r).mean(0))
        print(f"{tag}: max ratio per output geomean {geo[:, 0].round(2).tolist()}, largest "
              f"{r[:, :, 0].max(0).round(2).tolist()}, over 1.5x in {(r[:, :, 0] > 1.5).sum(0).tolist()} of {len(r)} "
              f"draws; mean ratio geomean {geo[:, 1].round(2).tolist()}")


if __name__ == "__main__":
    main()
