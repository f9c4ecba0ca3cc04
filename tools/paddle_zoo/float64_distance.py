#!/usr/bin/env python3
"""How far float32 results of a real_zoo model are from its float64 run, max and rms, kforge's against Paddle's
(issue 34 item 5; docs/dynamic-shapes-measured.md). Works on a measure_real.py work directory after its export,
paddle and run steps: the float64 outputs are computed once (the model rebuilt with the export's weights, cast to
float64, run in dygraph on the saved inputs) and kept as WORK/NAME/float64_I_J.npy; then every given output
directory set is compared. Run under a Python that has Paddle 3.3:

    PY tools/paddle_zoo/float64_distance.py --work build/real --paddleocr build/paddleocr \\
        --model ppocrv5_mobile_rec_bncal --outputs main=build/real/ppocrv5_mobile_rec_bncal/main [--outputs ...]

An --outputs directory holds out0/, out1/ (one per size) with 0.npy, 1.npy ... as measure_real.py's run step
writes them. Prints, per size and output set: max |x - float64| / max |float64| and rms(x - float64) / rms(float64),
Paddle's, and the ratios.

--inputs N: the same ratios over N more seeded N(0, 1) inputs per size (seeds 100 ...; inputs, Paddle's outputs and
the float64 ones kept under WORK/NAME/inputs/), for kforge runners built by measure_real.py (--runner
TAG=WORK/NAME/TAG/runner, optionally ,VAR=VALUE,... to set its environment) and, with --paddle-onednn, for Paddle's
own oneDNN path (IR optimisation and oneDNN on): an equally valid float32 order, to tell how far the ratio moves
with the summation order alone. Summarised per size as the geometric mean and the largest ratio.

    PY tools/paddle_zoo/float64_distance.py --work build/real --paddleocr build/paddleocr \
        --model ppocrv5_mobile_rec_bncal --inputs 16 --paddle-onednn \
        --runner main=build/real/ppocrv5_mobile_rec_bncal/main/runner"""
import argparse
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))


def float64_outputs(args, mdir, sizes):
    """The float64 outputs per size, computed on first use and kept next to the model."""
    files = [[mdir.parent / f"float64_{i}_{j}.npy" for j in range(info["outputs"])] for i, info in enumerate(sizes)]
    if not all(f.exists() for row in files for f in row):
        import paddle
        import models
        zoo = models.real_zoo(args.paddleocr)
        net, _ = models.with_weights(zoo[args.model][0], args.seed)
        net.to(dtype="float64")
        for i, info in enumerate(sizes):
            feeds = {k: np.load(mdir / f"in{i}_{k}.npy") for k in info["shapes"]}
            xs = [paddle.to_tensor(v.astype(np.float64) if v.dtype == np.float32 else v) for v in feeds.values()]
            with paddle.no_grad():
                ys = net(*xs)
            ys = list(ys.values()) if isinstance(ys, dict) else list(ys) if isinstance(ys, (list, tuple)) else [ys]
            for j, y in enumerate(ys):
                np.save(files[i][j], y.numpy())
    return [[np.load(f) for f in row] for row in files]


def paddle_run(mdir, feeds, onednn):
    """Paddle's predictor: check.paddle_outputs (IR optimisation and oneDNN off), or with both on."""
    import check
    if not onednn:
        return check.paddle_outputs(mdir, feeds)
    import paddle.inference as pi
    cfg = pi.Config(str(mdir / "inference.json"), str(mdir / "inference.pdiparams"))
    cfg.disable_gpu()
    cfg.disable_glog_info()
    cfg.switch_ir_optim(True)
    check.without_inplace_pass()
    (cfg.enable_onednn if hasattr(cfg, "enable_onednn") else cfg.enable_mkldnn)()
    predictor = pi.create_predictor(cfg)
    for name in predictor.get_input_names():
        predictor.get_input_handle(name).copy_from_cpu(feeds[name])
    predictor.run()
    return [predictor.get_output_handle(n).copy_to_cpu() for n in predictor.get_output_names()]


def more_inputs(args, mdir, sizes):
    """--inputs: the ratios over more seeded inputs per size, for each runner and Paddle's oneDNN path."""
    import os
    import subprocess
    import paddle
    import models
    net, _ = models.with_weights(models.real_zoo(args.paddleocr)[args.model][0], args.seed)
    net.to(dtype="float64")
    cache = mdir.parent / "inputs"
    cache.mkdir(exist_ok=True)
    runners = []
    for spec in args.runner:
        tag, rest = spec.split("=", 1)
        path, *env = rest.split(",")
        runners.append((tag, path, dict(kv.split("=", 1) for kv in env)))
    tags = [t for t, _, _ in runners] + (["paddle-onednn"] if args.paddle_onednn else [])
    for i, info in enumerate(sizes):
        ratios = {t: [] for t in tags}
        for s in range(args.inputs):
            base = cache / f"size{i}_seed{100 + s}"
            rng = np.random.default_rng(100 + s)
            feeds = {k: rng.standard_normal(shape).astype(np.float32) for k, shape in info["shapes"].items()}
            if not (base.parent / (base.name + "_float64_0.npy")).exists():
                for k, v in feeds.items():
                    np.save(base.parent / f"{base.name}_in_{k}.npy", v)
                for j, y in enumerate(paddle_run(mdir, feeds, False)):
                    np.save(base.parent / f"{base.name}_paddle_{j}.npy", y)
                with paddle.no_grad():
                    ys = net(*[paddle.to_tensor(v.astype(np.float64)) for v in feeds.values()])
                ys = list(ys.values()) if isinstance(ys, dict) else list(ys) if isinstance(ys, (list, tuple)) else [ys]
                for j, y in enumerate(ys):
                    np.save(base.parent / f"{base.name}_float64_{j}.npy", y.numpy())
            refs = [np.load(base.parent / f"{base.name}_float64_{j}.npy") for j in range(info["outputs"])]
            theirs = [distance(np.load(base.parent / f"{base.name}_paddle_{j}.npy"), r) for j, r in enumerate(refs)]
            got = {}
            for tag, path, env in runners:
                odir = base.parent / f"{base.name}_{tag}"
                odir.mkdir(exist_ok=True)
                cmd = [path, "--output-dir", str(odir), "--seed", "1", "--threads", "1",
                       "--params", str(mdir / "inference.pdiparams"), "--bench", "1"]
                for k in info["shapes"]:
                    cmd += ["--input", f"{k}={base.parent / f'{base.name}_in_{k}.npy'}"]
                subprocess.run(cmd, env={**os.environ, **env}, check=True, stdout=subprocess.DEVNULL)
                got[tag] = [np.load(odir / f"{j}.npy") for j in range(info["outputs"])]
            if args.paddle_onednn:
                got["paddle-onednn"] = paddle_run(mdir, feeds, True)
            line = f"{info['label']} seed {100 + s}: Paddle max {max(m for m, _ in theirs):.3g}"
            for tag in tags:
                ours = [distance(g, r) for g, r in zip(got[tag], refs)]
                ratio = (max(m for m, _ in ours) / max(m for m, _ in theirs),
                         max(r for _, r in ours) / max(r for _, r in theirs))
                ratios[tag].append(ratio)
                line += f"  {tag} {ratio[0]:.2f}x / {ratio[1]:.2f}x"
            print(line, flush=True)
        for tag in tags:
            r = np.array(ratios[tag])
            geo = np.exp(np.mean(np.log(r), axis=0))
            print(f"{info['label']} over {args.inputs} inputs, {tag} / Paddle: geometric mean max {geo[0]:.2f}x "
                  f"rms {geo[1]:.2f}x; largest max {r[:, 0].max():.2f}x rms {r[:, 1].max():.2f}x; "
                  f"{int(np.sum(r[:, 0] > 1.5))} of {len(r)} over 1.5x (max)")


def distance(got, ref):
    d = got.astype(np.float64) - ref
    return (float(np.max(np.abs(d)) / np.max(np.abs(ref))), float(np.sqrt(np.mean(d * d) / np.mean(ref * ref))))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--work", required=True, help="measure_real.py's work directory")
    p.add_argument("--paddleocr", help="PaddleOCR extract (tools/paddle_zoo/ppocr_extract.py)")
    p.add_argument("--model", required=True, help="a real_zoo name, e.g. ppocrv5_mobile_rec_bncal")
    p.add_argument("--outputs", action="append", default=[], metavar="TAG=DIR", help="kforge output sets")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--inputs", type=int, default=0, help="N more seeded inputs per size (above)")
    p.add_argument("--runner", action="append", default=[], metavar="TAG=RUNNER[,VAR=VALUE...]",
                   help="with --inputs: a measure_real.py runner to run on them")
    p.add_argument("--paddle-onednn", action="store_true", help="with --inputs: Paddle's oneDNN path too")
    args = p.parse_args()
    import json
    work = Path(args.work)
    mdir = work / args.model / "model"
    results = json.loads((work / "results.json").read_text())
    sizes = results[args.model]["paddle"]
    refs = float64_outputs(args, mdir, sizes)
    for i, info in enumerate(sizes):
        paddle_max = paddle_rms = 0.0
        for j, ref in enumerate(refs[i]):
            m, r = distance(np.load(mdir / f"paddle{i}_{j}.npy"), ref)
            paddle_max, paddle_rms = max(paddle_max, m), max(paddle_rms, r)
        print(f"{args.model} {info['label']} batch {info.get('batch', '?')}: "
              f"Paddle max {paddle_max:.3g} rms {paddle_rms:.3g}")
        for spec in args.outputs:
            tag, d = spec.split("=", 1)
            k_max = k_rms = 0.0
            for j, ref in enumerate(refs[i]):
                m, r = distance(np.load(Path(d) / f"out{i}" / f"{j}.npy"), ref)
                k_max, k_rms = max(k_max, m), max(k_rms, r)
            print(f"  {tag}: max {k_max:.3g} ({k_max / paddle_max:.2f}x)  rms {k_rms:.3g} ({k_rms / paddle_rms:.2f}x)")
    if args.inputs:
        more_inputs(args, mdir, sizes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
