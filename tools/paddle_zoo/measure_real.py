#!/usr/bin/env python3
"""Measure the real architectures of tools/paddle_zoo/models.py (real_zoo: PP-OCRv5 det / rec from a PaddleOCR
extract, a BERT-style encoder; each dynamic and fixed) with two kforge binaries ("before" and "after"): generated
bytes and longest line (CPU and CUDA), g++ -O2 time of the generated .cc, run time at each size, and the largest
error against Paddle's predictor on the same inputs. Run under a Python that has Paddle 3.3:

    PY tools/paddle_zoo/measure_real.py --work build/real --paddleocr build/paddleocr \\
        --kforge before=/work/main/build-dev --kforge after=/work/main/build-t [--models a,b] [--steps ...]

Each KFORGE build directory gives src/kforge and kernels/libkforge_kernels.a. Steps (default all, in order):
export (paddle.jit.save as check-paddle-models does: to_static, rep, save), paddle (seeded inputs and Paddle's
outputs, saved as .npy), gen (kforge compile --target cpu and --target cuda with the fusion overlay, exactly the
flags of tools/run-model), build (g++ of the generated NAME.cc with run-model's flags, `timeout --build-timeout`,
then the runner linked), run (the runner at each size: --bench runs, outputs compared to Paddle's), and, not by
default, float64 (the model rebuilt with the same weights in float64: each float32 result's distance from it)
and runmodel (the same through tools/run-model --work-dir TDIR, which regenerates there and rebuilds the runner
when the generated files changed). Results go to
WORK/results.json (a step already recorded there is skipped: resumable; --redo forces); --markdown renders them.
Builds run one at a time."""

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "tools" / "run_model"))
import model as rm  # noqa: E402

TOLERANCE = 1e-4
BATCHES = (1, 2)


def load(path):
    return json.loads(path.read_text()) if path.exists() else {}


def save(path, results):
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(results, indent=1, sort_keys=True))
    os.replace(tmp, path)


def merged(paths):
    """The results files merged (a later file's entries win, key by key)."""
    out = {}
    for path in paths:
        for name, r in load(path).items():
            dst = out.setdefault(name, {})
            for key, value in r.items():
                if key.startswith("kforge:"):
                    dst.setdefault(key, {}).update(value)
                else:
                    dst[key] = value
    return out


def gen_stats(gen, suffixes):
    files = [p for p in sorted(gen.iterdir()) if p.suffix in suffixes and p.name.startswith(rm.CLASS_NAME)]
    total, longest = 0, 0
    for p in files:
        data = p.read_bytes()
        total += len(data)
        longest = max([longest] + [len(line) for line in data.split(b"\n")])
    return {"bytes": total, "longest_line": longest, "files": [p.name for p in files]}


def step_export(name, builder, sizes, mdir, seed):
    import check
    specs = sizes[0][1]
    mdir.mkdir(parents=True, exist_ok=True)
    t = time.time()
    check.export(builder, specs, seed, mdir)
    return {"seconds": round(time.time() - t, 1)}


def step_paddle(name, sizes, mdir, seed):
    import check
    import models
    out = []
    for i, ((label, specs), batch) in enumerate(zip(sizes, BATCHES)):
        feeds = models.inputs(specs, batch, seed, label)
        for k, v in feeds.items():
            np.save(mdir / f"in{i}_{k}.npy", v)
        t = time.time()
        want = check.paddle_outputs(mdir, feeds)
        secs = time.time() - t
        for j, w in enumerate(want):
            np.save(mdir / f"paddle{i}_{j}.npy", w)
        out.append({"label": label, "batch": batch, "shapes": {k: list(v.shape) for k, v in feeds.items()},
                    "outputs": len(want), "paddle_seconds": round(secs, 2)})
    return out


def step_gen(kforge, src, mdir, tdir, target):
    """kforge compile as tools/run-model runs it (rm.generate), with the kernel library's YAML and the templates
    of `src` (the source tree the binary was built from)."""
    gen = tdir / ("gen" if target == "cpu" else "gen-cuda")
    cmd = [kforge, "compile", mdir / "inference.json", "-o", gen, "--name", rm.CLASS_NAME, "--target", target,
           "--color", "never", "--ops", src / "kernels" / "ops.yaml", "--ops", src / "kernels" / "fusion.yaml",
           "--op-compat", src / "kernels" / "op_compat.yaml", "--template-dir", src / "templates"]
    t = time.time()
    r = rm.run(cmd, False)
    if r.returncode != 0:
        return {"error": rm.summarize_diagnostics(r.stderr)[:600], "seconds": round(time.time() - t, 1),
                "command": " ".join(map(str, cmd))}
    res = gen_stats(gen, {".cc", ".h"} if target == "cpu" else {".cu", ".h", ".cuh"})
    res["seconds"] = round(time.time() - t, 1)
    res["command"] = " ".join(map(str, cmd))
    return res


def step_build(bdir, src, tdir, timeout, cxx):
    gen = tdir / "gen"
    if not (gen / f"{rm.CLASS_NAME}.cc").exists():
        return {"error": "not generated"}
    kernels = bdir / "kernels" / "libkforge_kernels.a"
    base = [cxx, "-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror", "-I", str(gen),
            "-I", str(src / "tools" / "run_model")]
    obj = tdir / "model.o"
    cmd = ["timeout", str(timeout), *base, "-c", str(gen / f"{rm.CLASS_NAME}.cc"), "-o", str(obj)]
    t = time.time()
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    secs = round(time.time() - t, 1)
    res = {"seconds": secs, "command": " ".join(cmd)}
    if r.returncode == 124:
        res["error"] = f"g++ still compiling after {timeout} s (stopped)"
        return res
    if r.returncode != 0:
        lines = (r.stderr or r.stdout).splitlines()
        first = next((l.strip() for l in lines if "error" in l), lines[-1] if lines else "?")
        res["error"] = f"g++ exit {r.returncode}: {first[:300]}"
        return res
    # The runner: runner.cc against this generation's runtime header, the adapter, the kernel library.
    runner_o = tdir / "runner.o"
    link = [*base, "-c", str(src / "tools" / "run_model" / "runner.cc"), "-o", str(runner_o)]
    r = subprocess.run(link, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        res["error"] = "runner.cc: " + r.stderr.strip()[:300]
        return res
    link = [*base, f'-DKFORGE_PROGRAM_HEADER="{rm.CLASS_NAME}.h"', f"-DKFORGE_PROGRAM_CLASS={rm.CLASS_NAME}",
            str(src / "tools" / "run_model" / "model_adapter.cc"), str(obj), str(runner_o), str(kernels),
            *rm.kernels_link_args(kernels), "-o", str(tdir / "runner")]
    r = subprocess.run(link, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        res["error"] = "link: " + r.stderr.strip()[:300]
    return res


def step_run(mdir, tdir, sizes_info, bench, run_model_build=None):
    """The runner at each size. With run_model_build, through tools/run-model itself (--work-dir TDIR: it
    regenerates there, leaving unchanged files alone, and rebuilds the runner when they changed)."""
    runner = tdir / "runner"
    if not runner.exists():
        return {"error": "not built"}
    out = []
    for i, info in enumerate(sizes_info):
        odir = tdir / (f"out{i}" if run_model_build is None else f"run-model-out{i}")
        odir.mkdir(exist_ok=True)
        inputs = [f"{k}={mdir / f'in{i}_{k}.npy'}" for k in info["shapes"]]
        if run_model_build is None:
            cmd = [str(runner), "--output-dir", str(odir), "--seed", "1", "--threads", "1",
                   "--params", str(mdir / "inference.pdiparams")]
        else:
            cmd = [sys.executable, str(ROOT / "tools" / "run-model"), str(mdir), "--work-dir", str(tdir),
                   "--build-dir", str(run_model_build), "--output-dir", str(odir)]
        cmd += ["--bench", str(bench), "--bench-json", str(odir / "bench.json")]
        for s in inputs:
            cmd += ["--input", s]
        t = time.time()
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        row = {"label": info["label"], "seconds": round(time.time() - t, 1)}
        if run_model_build is not None:
            row["command"] = " ".join(cmd)
        if r.returncode != 0:
            row["error"] = (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1][:300]
            out.append(row)
            continue
        row["median_ms"] = json.loads((odir / "bench.json").read_text())["median_ms"]
        max_abs = rel = 0.0
        agree = True
        for j in range(info["outputs"]):
            w = np.load(mdir / f"paddle{i}_{j}.npy")
            g = np.load(odir / f"{j}.npy")
            if w.shape != g.shape:
                row["error"] = f"output {j}: Paddle {list(w.shape)}, kforge {list(g.shape)}"
                break
            err = float(np.max(np.abs(g.astype(np.float64) - w))) if w.size else 0.0
            scale = float(np.max(np.abs(w))) if w.size else 0.0
            max_abs, rel = max(max_abs, err), max(rel, err / scale if scale else err)
            agree = agree and err <= TOLERANCE * scale
        row.update(max_abs=max_abs, rel=rel, agree=agree)
        out.append(row)
    return out


def step_float64(builder, mdir, work_tags, sizes_info, seed):
    """The model rebuilt with the same weights (same seed, realistic_weights, the after-weights step), cast to
    float64 and run in dygraph on the same inputs: how far Paddle's float32 outputs and each kforge's are from it
    (largest |difference| over max |float64|, per size), to tell float32 noise from a wrong result."""
    import paddle
    import models
    net, _ = models.with_weights(builder, seed)
    net.to(dtype="float64")
    out = []
    for i, info in enumerate(sizes_info):
        feeds = {k: np.load(mdir / f"in{i}_{k}.npy") for k in info["shapes"]}
        args = [paddle.to_tensor(v.astype(np.float64) if v.dtype == np.float32 else v) for v in feeds.values()]
        with paddle.no_grad():
            ys = net(*args)
        ys = list(ys.values()) if isinstance(ys, dict) else list(ys) if isinstance(ys, (list, tuple)) else [ys]
        row = {"label": info["label"], "paddle": 0.0}
        for j, y in enumerate(ys):
            y = y.numpy()
            scale = float(np.max(np.abs(y))) or 1.0
            w = np.load(mdir / f"paddle{i}_{j}.npy")
            row["paddle"] = max(row["paddle"], float(np.max(np.abs(w - y))) / scale)
            for tag, tdir in work_tags:
                f = tdir / f"out{i}" / f"{j}.npy"
                if f.exists():
                    row[tag] = max(row.get(tag, 0.0), float(np.max(np.abs(np.load(f) - y))) / scale)
        out.append(row)
    return out


def fmt_bytes(n):
    return f"{n / 1e6:.2f} MB" if n >= 1e6 else f"{n / 1e3:.0f} KB"


def short_error(message):
    """A generation error without its location: what failed, in a table cell."""
    message = re.sub(r"^\S+:\d+:\d+: ", "", message).replace("--target cuda: ", "")
    message = re.sub(r" \(\d+ more error.*$", "", message)
    cut = message.find(";")
    return (message[:cut] if cut > 0 else message)[:140].replace("|", "\\|")


def markdown(results, models):
    head = ["model", "export", "kforge", "CPU .cc+.h", "longest line", "g++ -O2 .cc", "CUDA .cu+.h",
            "run size 1", "run size 2", "max rel. error vs Paddle", "vs float64: kforge / Paddle"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name in models:
        r = results.get(name)
        if not r:
            continue
        export = "fixed" if name.endswith("_fixed") else "dynamic"
        for tag in sorted(k for k in r if k.startswith("kforge:")):
            t = r[tag]
            if "gen_cpu" not in t:
                continue
            g, c, b = t.get("gen_cpu", {}), t.get("gen_cuda", {}), t.get("build", {})
            cells = [name.replace("_fixed", ""), export, tag.split(":", 1)[1]]
            if "error" in g:
                cells += ["fails: " + short_error(g["error"]), "", ""]
            else:
                build = "not run"
                if "error" in b:
                    build = "fails: " + b["error"].replace("|", "\\|")
                    build += f" after {b['seconds']:.0f} s" if "seconds" in b and "after" not in b["error"] else ""
                elif b:
                    build = f"{b['seconds']:.0f} s"
                cells += [fmt_bytes(g["bytes"]) if g else "", f"{g['longest_line']:,}" if g else "", build]
            cells.append(("fails: " + short_error(c["error"])) if "error" in c else
                         (fmt_bytes(c["bytes"]) if c else ""))
            runs = t.get("run", [])
            if isinstance(runs, dict):  # not built, or failed as a whole
                runs = [{"label": "", "error": runs.get("error", "?")}]
            errs = []
            for i in range(2):
                if i < len(runs):
                    x = runs[i]
                    cells.append((f"{x['label']}: " if x["label"] else "") +
                                 (x["error"] if "error" in x else f"{x['median_ms']:.0f} ms"))
                    if "rel" in x:
                        errs.append(f"{x['rel']:.1e}" + ("" if x["agree"] else " (over 1e-4)"))
                else:
                    cells.append("")
            cells.append(", ".join(errs))
            f64 = [x for x in r.get("float64", []) if isinstance(x, dict) and tag.split(":", 1)[1] in x]
            cells.append(", ".join(f"{x[tag.split(':', 1)[1]]:.1e} / {x['paddle']:.1e}" for x in f64))
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--work", required=True)
    p.add_argument("--paddleocr", help="PaddleOCR extract (tools/paddle_zoo/ppocr_extract.py)")
    p.add_argument("--kforge", action="append", default=[], metavar="TAG=BUILD_DIR[:SRC_DIR]",
                   help="a kforge build directory (src/kforge, kernels/libkforge_kernels.a) and the source tree it "
                        "was built from (its templates, kernels/*.yaml, tools/run_model; default this tree)")
    p.add_argument("--models", help="comma-separated subset of real_zoo's names")
    p.add_argument("--steps", default="export,paddle,gen,build,run")
    p.add_argument("--redo", action="store_true")
    p.add_argument("--build-timeout", type=int, default=900)
    p.add_argument("--bench", type=int, default=3)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--cxx", default=os.environ.get("CXX", "g++"))
    p.add_argument("--results", metavar="FILE", help="results file (default WORK/results.json)")
    p.add_argument("--markdown", metavar="FILE", help="render these results files merged (default: --results)",
                   nargs="?", const="-")
    p.add_argument("--merge", action="append", default=[], metavar="FILE",
                   help="with --markdown: further results files to merge in")
    args = p.parse_args()
    import paddle
    import models as zoo_models
    paddle.set_device("cpu")
    work = Path(args.work).resolve()
    work.mkdir(parents=True, exist_ok=True)
    zoo = zoo_models.real_zoo(Path(args.paddleocr).resolve() if args.paddleocr else None)
    names = args.models.split(",") if args.models else list(zoo)
    kforges = []
    for spec in args.kforge:
        tag, dirs = spec.split("=", 1)
        bdir, _, src = dirs.partition(":")
        kforges.append((tag, Path(bdir).resolve(), Path(src).resolve() if src else ROOT))
    steps = args.steps.split(",")
    results_file = Path(args.results).resolve() if args.results else work / "results.json"
    results = load(results_file)
    if results_file != work / "results.json":  # the exports and Paddle's outputs recorded by the main file
        for name, r in load(work / "results.json").items():
            for key in ("export", "paddle"):
                if key in r:
                    results.setdefault(name, {}).setdefault(key, r[key])
    for name in names:
        builder, sizes = zoo[name]
        mdir = work / name / "model"
        r = results.setdefault(name, {})

        def do(key, holder, fn):
            if key in holder and not args.redo:
                return
            print(f"measure_real: {name}: {key} ...", flush=True)
            try:
                holder[key] = fn()
            except Exception as e:  # recorded, the next step goes on
                last = str(e).strip().splitlines()[-1][:300] if str(e).strip() else ""
                holder[key] = {"error": f"{type(e).__name__}: {last}"}
            print(f"measure_real: {name}: {key}: {json.dumps(holder[key])[:400]}", flush=True)
            save(results_file, results)

        if "export" in steps:
            do("export", r, lambda: step_export(name, builder, sizes, mdir, args.seed))
        if "paddle" in steps:
            do("paddle", r, lambda: step_paddle(name, sizes, mdir, args.seed))
        if "float64" in steps and isinstance(r.get("paddle"), list):
            do("float64", r, lambda: step_float64(builder, mdir, [(t, work / name / t) for t, _, _ in kforges],
                                                  r["paddle"], args.seed))
        for tag, bdir, src in kforges:
            t = r.setdefault(f"kforge:{tag}", {})
            kf = bdir / "src" / "kforge"
            tdir = work / name / tag
            tdir.mkdir(parents=True, exist_ok=True)
            if "gen" in steps:
                do("gen_cpu", t, lambda: step_gen(kf, src, mdir, tdir, "cpu"))
                do("gen_cuda", t, lambda: step_gen(kf, src, mdir, tdir, "cuda"))
            if "build" in steps:
                do("build", t, lambda: step_build(bdir, src, tdir, args.build_timeout, args.cxx))
            if "run" in steps and isinstance(r.get("paddle"), list):
                do("run", t, lambda: step_run(mdir, tdir, r["paddle"], args.bench))
            if "runmodel" in steps and isinstance(r.get("paddle"), list):
                do("run_model", t, lambda: step_run(mdir, tdir, r["paddle"], args.bench, bdir))
    if args.markdown:
        text = markdown(merged([results_file, *map(Path, args.merge)]), names)
        if args.markdown == "-":
            sys.stdout.write(text)
        else:
            Path(args.markdown).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
