"""The work of tools/check-paddle-models, under a Python that has Paddle: export each zoo model, run Paddle's
predictor and kforge (through tools/run_model/model.py) on the same inputs, compare, and tabulate."""

import json
import os
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import paddle

import models as zoo_models

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "tools" / "run_model"))
sys.path.insert(0, str(ROOT / "tools" / "graphnet"))
import model as rm  # noqa: E402
import float64 as f64_rule  # noqa: E402  (the float64 rule, check-graphnet's: one implementation)

BATCHES = (1, 2)  # the first size runs batch 1, the second batch 2: both through the program's dynamic batch
# An output beyond the fixed bound still agrees when kforge's distance from the model run in float64 (same weights,
# same inputs) is at most this many times Paddle's own float32 output's (issue 34's precision criterion, and
# tests/gpu/fixture_bundle.py's): float32 noise of an ill-conditioned model, a deep detector's scores, is larger
# than the fixed bound in Paddle too. Checked only where the fixed bound fails, as tools/graphnet/float64.py
# measures it: per image, over --float64-draws one-ulp redraws of the inputs, the median over the draws of the mean
# over the images.
FLOAT64_FACTOR = f64_rule.FACTOR


class Row:
    def __init__(self, model, size, batch):
        self.model, self.size, self.batch = model, size, batch
        self.agree = False
        self.max_abs = self.rel = None  # largest |kforge - paddle|, and it over max |paddle|, across the outputs
        self.exact = True  # every integer / bool output equal
        self.over = []  # the float outputs beyond the fixed bound
        self.from_float64 = None  # the deciding output's row of the float64 rule (tools/graphnet/float64.py)
        self.reason = ""
        self.seconds = 0.0

    def cells(self):
        if self.reason:
            return [self.model, self.size, str(self.batch), "no", "", self.reason]
        text = f"rel {self.rel:.2e}"
        if self.over:
            text += " (over 1e-4"
            if self.from_float64 is not None:
                text += "; " + f64_rule.describe({"status": "ok", "rows": [self.from_float64]}) + \
                    f", at most {FLOAT64_FACTOR}x"
            text += ")"
        return [self.model, self.size, str(self.batch), "yes" if self.agree else "no", f"{self.max_abs:.3g}", text]


HEADER = ["model", "input", "batch", "agree", "max abs error", "relative error / failure"]


def dir_name(label):
    return re.sub(r"[^A-Za-z0-9]+", "_", label).strip("_")


def export(builder, specs, seed, path):
    """paddle.jit.save of the zoo model with realistic weights; returns the net (its parameters name the program's)."""
    paddle.seed(seed)
    net = builder()
    zoo_models.realistic_weights(net, seed)
    net.eval()
    after_weights = getattr(net, "kforge_after_weights", None)
    if after_weights is None:
        paddle.jit.save(net, str(path / "inference"), input_spec=specs)
        return net
    # As PaddleOCR's export_model.py: to_static with the specs, the PPLCNetV3 re-parameterisation, save (to_static
    # traces nothing before the save: the re-parameterisation, and any calibration run, may come first).
    after_weights()
    net = paddle.jit.to_static(net, input_spec=specs)
    paddle.jit.save(net, str(path / "inference"))
    return net


def without_inplace_pass():
    """Turns off Paddle's PIR inplace pass for the predictors made after it. Paddle 3.3.1's pass lets an op write
    into a buffer that a share_data_ result (what Tensor.detach() saves) still aliases, so the predictor's answer
    is then not the program's: `raw = y.detach(); z = y - mean(y); w = z / std(z)` gives raw the normalised
    values (GraphNet's Nonstationary_ad/subgraph_2; the Paddle fixture share_data_then_overwrite). Without the
    pass the predictor gives dygraph's answer; the pass only reuses memory, so nothing else changes."""
    paddle.set_flags({"FLAGS_pir_apply_inplace_pass": False})


def paddle_outputs(path, feeds):
    import paddle.inference as pi
    without_inplace_pass()
    params = path / "inference.pdiparams"  # a program without parameters has none
    cfg = pi.Config(str(path / "inference.json"), str(params) if params.exists() else "")
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
    return [predictor.get_output_handle(n).copy_to_cpu() for n in predictor.get_output_names()]


def kforge_outputs(tools, path, feeds, seed, args):
    kforge, kernels, build_dir = tools
    program, params = rm.resolve_model(path)
    gen, runner, out = path / "gen", path / "runner", path / "outputs"
    rm.generate(kforge, program, gen, "cpu", args.verbose)
    rm.build_cpu(gen, kernels, build_dir, runner, args.cxx, args.verbose)
    specs = []
    for name, value in feeds.items():
        np.save(path / f"input_{name}.npy", value)
        specs.append(f"{name}={path / f'input_{name}.npy'}")
    out.mkdir(exist_ok=True)
    rm.run_runner(runner, out, params, specs, [], seed, 0, None, args.verbose)
    results = []
    while (out / f"{len(results)}.npy").exists():
        results.append(np.load(out / f"{len(results)}.npy"))
    return results


def compare(row, want, got, tolerance):
    if len(want) != len(got):
        row.reason = f"Paddle gives {len(want)} outputs, kforge {len(got)}"
        return
    row.max_abs, row.rel, row.agree = 0.0, 0.0, True
    for i, (w, g) in enumerate(zip(want, got)):
        if w.shape != g.shape or w.dtype != g.dtype:
            row.reason = f"output {i}: Paddle {w.dtype}{list(w.shape)}, kforge {g.dtype}{list(g.shape)}"
            return
        if w.dtype.kind != "f":
            row.exact = row.exact and np.array_equal(w, g)
            continue
        err = float(np.max(np.abs(g.astype(np.float64) - w))) if w.size else 0.0
        scale = float(np.max(np.abs(w))) if w.size else 0.0
        if not np.isfinite(err):
            row.reason = f"output {i}: non-finite values (Paddle max {scale:.3g})"
            return
        rel = err / scale if scale > 0 else (0.0 if err == 0 else float("inf"))
        row.max_abs, row.rel = max(row.max_abs, err), max(row.rel, rel)
        if err > tolerance * scale:
            row.over.append(i)
    row.agree = row.exact and not row.over


def to_float64(net):
    """net.to(dtype="float64"), keeping the dtype of its non-float buffers (Layer.to casts them too: RT-DETR's
    bool valid_mask, a paddle.where condition, would become float64)."""
    kept = [(layer, name, buf.numpy()) for layer in net.sublayers(include_self=True)
            for name, buf in layer._buffers.items() if buf is not None and not paddle.is_floating_point(buf)]
    net.to(dtype="float64")
    for layer, name, value in kept:
        layer._buffers[name] = paddle.to_tensor(value)


def float64_outputs(builder, feeds, seed):
    """The model rebuilt with the export's weights, cast to float64 and run in dygraph on `feeds`."""
    net, _ = zoo_models.with_weights(builder, seed)
    to_float64(net)
    args = [paddle.to_tensor(v.astype(np.float64) if v.dtype == np.float32 else v) for v in feeds.values()]
    with paddle.no_grad():
        ys = net(*args)
    ys = list(ys.values()) if isinstance(ys, dict) else list(ys) if isinstance(ys, (list, tuple)) else [ys]
    return [y.numpy() for y in ys]


def compare_float64(row, draws, batch):
    """Where the fixed bound fails: the float64 rule (tools/graphnet/float64.py) on every output beyond it. `draws`:
    (Paddle's, kforge's, float64's outputs) per draw, draw 0 the case's own inputs; `batch` splits the outputs per
    image. Agree when every such output's figure over draws and images is at most FACTOR x Paddle's + 1e-5."""
    want, got, reference = draws[0]
    if len(reference) != len(want):
        return []
    rows = []
    for i in row.over:
        if reference[i].shape != want[i].shape:
            return []
        rows.append({"output": i, "kforge": f64_rule.distance(got[i], reference[i]),
                     "paddle": f64_rule.distance(want[i], reference[i])})
    f64_rule.with_draws(rows, draws, batch)
    decides = f64_rule.worst(rows)
    row.from_float64 = dict(decides)
    if "draws" in decides:  # the per-image tables stay out of the table's row
        row.from_float64["draws"] = {k: v for k, v in decides["draws"].items() if not k.endswith("_images")}
    row.agree = row.exact and f64_rule.verdict(rows) == "agree-f64"
    return rows


def float64_draws(builder, path, feeds, want, got, args):
    """The float64 rule's draws of a case: draw 0 (its inputs: Paddle's and kforge's outputs as checked), then
    --float64-draws - 1 redraws (f64_rule.draw_inputs), each run by Paddle's predictor, the case's kforge runner
    and the model in float64."""
    draws = [(want, got, float64_outputs(builder, feeds, args.seed))]
    program, params = rm.resolve_model(path)
    for d in range(1, args.float64_draws):
        redrawn = f64_rule.draw_inputs(feeds, d, args.seed)
        where = path / "float64-draws" / str(d)
        where.mkdir(parents=True, exist_ok=True)
        specs = []
        for name, value in redrawn.items():
            np.save(where / f"input_{name}.npy", value)
            specs.append(f"{name}={where / f'input_{name}.npy'}")
        rm.run_runner(path / "runner", where, params, specs, [], args.seed, 0, None, args.verbose)
        ours = []
        while (where / f"{len(ours)}.npy").exists():
            ours.append(np.load(where / f"{len(ours)}.npy"))
        draws.append((paddle_outputs(path, redrawn), ours, float64_outputs(builder, redrawn, args.seed)))
    return draws


def check_one(name, builder, label, specs, batch, tools, work, args, tolerance):
    row = Row(name, label, batch)
    started = time.time()
    path = work / f"{name}-{dir_name(label)}"
    path.mkdir(parents=True, exist_ok=True)
    try:
        net = export(builder, specs, args.seed, path)
    except Exception as e:  # Paddle's own failure: reported, not raised
        row.reason = "paddle.jit.save: " + (str(e).strip().splitlines() or ["?"])[-1][:160]
        return row
    feeds = zoo_models.model_inputs(net, specs, batch, args.seed, label)
    try:
        want = paddle_outputs(path, feeds)
    except Exception as e:
        row.reason = "Paddle predictor: " + (str(e).strip().splitlines() or ["?"])[-1][:160]
        return row
    try:
        got = kforge_outputs(tools, path, feeds, args.seed, args)
    except rm.RunModelError as e:
        row.reason = str(e).replace(str(path) + os.sep, "")  # the work dir is gone after the run
        return row
    compare(row, want, got, tolerance)
    if row.over and not row.reason and args.real:
        try:
            draws = float64_draws(builder, path, feeds, want, got, args)
            rows = compare_float64(row, draws, f64_rule.batch_of(feeds))
            # Every output's figures and per-draw, per-image distances (tools/graphnet/float64_draws_table.py)
            (path / "float64-rule.json").write_text(json.dumps({"sample": f"{name} {label} batch {batch}",
                                                                "float64": {"status": "ok", "rows": rows}}) + "\n")
            for i, (p, r) in enumerate(zip(want, draws[0][2])):  # kept with --work-dir, beside outputs/I.npy
                np.save(path / f"paddle_{i}.npy", p)
                np.save(path / f"float64_{i}.npy", r)
        except Exception as e:  # a model that does not run in float64: the fixed bound decides
            why = (str(e).strip().splitlines() or [type(e).__name__])[-1][:120]
            print(f"check-paddle-models: {name}: no float64 run ({why})", file=sys.stderr)
    row.seconds = time.time() - started
    return row


def markdown(rows):
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    for r in rows:
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in r.cells()) + " |")
    agree = sum(r.agree for r in rows)
    rule = (f"float32: max|kforge - paddle| <= 1e-4 * max|paddle|, or with --real at most {FLOAT64_FACTOR}x Paddle's "
            "distance from float64")
    return "\n".join(lines) + f"\n\n{agree} of {len(rows)} agree ({rule})\n"


def run_zoo(args, build_dir, tolerance):
    paddle.set_device("cpu")
    zoo = zoo_models.zoo()
    if args.real:
        zoo.update(zoo_models.real_zoo(args.paddleocr))
    if args.list:
        for name, (_, sizes) in zoo.items():
            print(name, " ".join(label for label, _ in sizes))
        return 0
    names = args.models.split(",") if args.models else list(zoo)
    unknown = [n for n in names if n not in zoo]
    if unknown:
        print(f"check-paddle-models: unknown models {', '.join(unknown)} (--list shows the zoo)", file=sys.stderr)
        return 2
    tools = (*rm.find_tools(build_dir, args.verbose), build_dir)
    work = Path(args.work_dir) if args.work_dir else Path(tempfile.mkdtemp(prefix="kforge-zoo-"))
    rows = []
    try:
        for name in names:
            builder, sizes = zoo[name]
            for (label, specs), batch in zip(sizes, BATCHES):
                row = check_one(name, builder, label, specs, batch, tools, work, args, tolerance)
                rows.append(row)
                print(" | ".join(row.cells()) + (f"  ({row.seconds:.0f} s)" if row.seconds else ""), flush=True)
                if not args.work_dir:
                    shutil.rmtree(work / f"{name}-{dir_name(label)}", ignore_errors=True)
    finally:
        if not args.work_dir:
            shutil.rmtree(work, ignore_errors=True)
    table = markdown(rows)
    print("\n" + table, end="")
    if args.markdown:
        Path(args.markdown).write_text(table)
    return 0 if all(r.agree for r in rows) else 1
