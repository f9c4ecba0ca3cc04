"""One GraphNet sample run in float64, under a Python that has Paddle (tools/check-graphnet runs it as a subprocess
for a sample that differs, so that Paddle's failure, a hang or running out of memory stops only that check):

    python float64_sample.py SAMPLE_DIR OUT_DIR --seed S [--memory-gb G] [--inputs DIR] [--per-image]

The reference of the float64 rule (tools/graphnet/float64.py): the sample's GraphModule (model.py) in Paddle
dygraph on the CPU, with the weights and inputs export_sample.py draws (same seed, same order), the float ones cast
to float64 and the float32 constants the model makes itself (`paddle.float32`, `dtype="float32"`) made float64 too;
batch_norm and dropout that model.py spells in training mode run in eval mode, as the exported program runs them;
one_hot's float32 result is cast to float64; each local of forward is deleted after its last use
(freed_after_last_use: model.py's own dels come late, and the float64 run of FCOS-ResNet50/subgraph_4 did not fit).
Writes OUT_DIR/float64/<i>.npy and OUT_DIR/float64.json ({"status": "ok" | "failed", "error": first line,
"seconds", "outputs", "note"}). --memory-gb caps the process's address space (RLIMIT_AS), so that a model too big
for float64 here fails with an error instead of waking the kernel's OOM killer. --inputs DIR takes the inputs
from DIR/<name>.npy (a redraw of check-graphnet's float64 rule; the weights are drawn as always), --per-image runs
the batch one image at a time (slices along dim 0 of the inputs that have the batch there, the outputs joined
again, and a convolution whose unfolded input is large computed in bands of rows: `lean_conv2d`): the float64
run of a batch that does not fit at once (PP-OCRv3_server_det/subgraph_1, 4 x 3 x 960 x 960).
"""

import argparse
import json
import re
import sys
import time
import traceback
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import export_sample  # noqa: E402  (draw_all, first_line)
import float64  # noqa: E402  (batch_of)

# The float32 dtypes model.py spells (constants, aranges, casts): float64 in the reference run.
FLOAT32_SPELLINGS = [(re.compile(r"\bpaddle\.float32\b"), "paddle.float64"),
                     (re.compile(r"([\"'])float32\1"), r"\1float64\1"),
                     # one_hot's result is float32 whatever its input (0 and 1: the cast is exact); FCOS-ResNet50/
                     # subgraph_4 feeds it as the label of sigmoid_cross_entropy_with_logits, which refuses float32
                     # beside float64 logits.
                     (re.compile(r"\bpaddle\._C_ops\.one_hot\("),
                      "(lambda *a: paddle._C_ops.one_hot(*a).astype(paddle.float64))(")]


# The ops whose `is_test` argument (by position) model.py may spell False: a subgraph recorded in training mode
# (PP-HGNetV2-B4_ML/subgraph_1 of seed 8: batch_norm on the batch's statistics, dropout dropping). paddle.jit.save
# of the Layer in eval mode saves them with is_test = true (running statistics, no dropping), and so Paddle's
# predictor and kforge run them; the reference run must too.
IS_TEST_ARGUMENT = {"batch_norm": 5, "dropout": 3}


def in_eval_mode(text):
    """model.py with every is_test argument of IS_TEST_ARGUMENT's ops that is spelled False made True (and how
    many were): the text is changed only at those constants, so that the rest keeps its spelling."""
    import ast
    lines = text.splitlines(keepends=True)
    spots = []
    for call in ast.walk(ast.parse(text)):
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr in IS_TEST_ARGUMENT:
            position = IS_TEST_ARGUMENT[call.func.attr]
            if position < len(call.args):
                arg = call.args[position]
                if isinstance(arg, ast.Constant) and arg.value is False:
                    spots.append((arg.lineno - 1, arg.col_offset))
    for line, col in sorted(spots, reverse=True):
        # col_offset counts UTF-8 bytes; model.py's lines with calls are ASCII.
        assert lines[line][col:col + 5] == "False"
        lines[line] = lines[line][:col] + "True" + lines[line][col + 5:]
    return "".join(lines), len(spots)


def freed_after_last_use(text):
    """model.py with each local of GraphModule.forward deleted right after the last top-level statement that
    names it (and how many `del` lines were written), the model's own `del` statements of forward dropped. GraphNet's
    model.py deletes many values only at the end of forward: FCOS-ResNet50/subgraph_4 of seed 8 keeps backbone
    activations alive to the last line, about 16 GB at once in float64 where 1.5 GB are live, and its float64 run
    (a loss of the whole batch: not one image at a time) did not fit in 8 GiB. The computation is the same: only
    when Python drops each tensor changes. Deleted are the arguments and the names a top-level statement assigns
    before any other statement names them (so they are bound); names only a nested block binds are left alone."""
    import ast
    tree = ast.parse(text)
    forward = next((f for c in tree.body if isinstance(c, ast.ClassDef) and c.name == "GraphModule"
                    for f in c.body if isinstance(f, ast.FunctionDef) and f.name == "forward"), None)
    if forward is None:
        return text, 0
    bound = {a.arg for a in forward.args.args + forward.args.kwonlyargs if a.arg != "self"}
    unsure, last = set(), {}
    for i, statement in enumerate(forward.body):
        if isinstance(statement, ast.Delete):
            continue
        names = {n.id for n in ast.walk(statement) if isinstance(n, ast.Name)}
        if isinstance(statement, (ast.Assign, ast.AnnAssign)):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            stored = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
            loaded = {n.id for n in ast.walk(statement.value) if isinstance(n, ast.Name)} if statement.value else set()
            bound |= {n for n in stored if n not in last and n not in loaded and n not in unsure}
        unsure |= {n for n in names if n not in last and n not in bound}
        for n in names:
            last[n] = i
    lines = text.splitlines(keepends=True)
    dropped, after = set(), {}
    for i, statement in enumerate(forward.body):
        if isinstance(statement, ast.Delete):
            dropped.update(range(statement.lineno - 1, statement.end_lineno))
        elif not isinstance(statement, ast.Return):
            dead = sorted(n for n in bound if last.get(n) == i)
            if dead:
                after[statement.end_lineno - 1] = " " * statement.col_offset + "del " + ", ".join(dead) + "\n"
    out = []
    for number, line in enumerate(lines):
        if number not in dropped:
            out.append(line)
        if number in after:
            out.append(after[number])
    return "".join(out), len(after)


def float64_source(text):
    """model.py with its float32 dtypes made float64 (and how many were), its batch_norm and dropout in eval mode
    (in_eval_mode; not counted)."""
    text, _ = in_eval_mode(text)
    count = 0
    for pattern, repl in FLOAT32_SPELLINGS:
        text, n = pattern.subn(repl, text)
        count += n
    return text, count


# Paddle's CPU conv2d unfolds a whole image at once (im2col): a 9x9 convolution of 256 channels at 240x240 wants
# 9.6 GB in float64, more than an image of PP-OCRv3_server_det/subgraph_1 may take. Over this many bytes of that
# buffer, lean_conv2d computes the output in bands of rows (the same sums, the input padded once and sliced).
IM2COL_BYTES = 256 << 20


def lean_conv2d(conv2d):
    """paddle._C_ops.conv2d, an NCHW convolution with explicit padding whose unfolded input would exceed
    IM2COL_BYTES computed band of output rows by band."""
    def conv(x, w, strides, paddings, algorithm, dilations, groups, data_format):
        import paddle
        if data_format != "NCHW" or algorithm != "EXPLICIT" or len(x.shape) != 4:
            return conv2d(x, w, strides, paddings, algorithm, dilations, groups, data_format)
        _, _, h, width = x.shape
        _, per_group, kh, kw = w.shape
        top, bottom, left, right = (paddings[0], paddings[0], paddings[1], paddings[1]) if len(paddings) == 2 \
            else paddings
        rows = (h + top + bottom - dilations[0] * (kh - 1) - 1) // strides[0] + 1
        cols = (width + left + right - dilations[1] * (kw - 1) - 1) // strides[1] + 1
        unfolded = per_group * kh * kw * rows * cols * x.element_size()
        if unfolded <= IM2COL_BYTES or rows < 2:
            return conv2d(x, w, strides, paddings, algorithm, dilations, groups, data_format)
        band = max(1, rows * IM2COL_BYTES // unfolded)
        padded = paddle.nn.functional.pad(x, [left, right, top, bottom])
        parts = []
        for r0 in range(0, rows, band):
            r1 = min(rows, r0 + band)
            i0, i1 = r0 * strides[0], (r1 - 1) * strides[0] + dilations[0] * (kh - 1) + 1
            parts.append(conv2d(padded[:, :, i0:i1, :], w, strides, [0, 0], "EXPLICIT", dilations, groups, "NCHW"))
        return paddle.concat(parts, axis=2)
    return conv


def run(sample, out, seed, inputs=None, per_image=False):
    import paddle
    if per_image:
        paddle._C_ops.conv2d = lean_conv2d(paddle._C_ops.conv2d)
    paddle.set_device("cpu")
    paddle.seed(seed)
    rng = np.random.default_rng(seed)
    # The draws of export_sample.export, in its order (weights, then inputs): the same values.
    weights, feeds = export_sample.draw_all(sample, rng)
    given = {f.stem: np.load(f) for f in sorted(Path(inputs).glob("*.npy"))} if inputs else {}
    feeds.update({n: v for n, v in given.items() if n in feeds})
    source, changed = float64_source((sample / "model.py").read_text())
    source, _ = freed_after_last_use(source)
    src = out / "src-float64"
    src.mkdir(parents=True, exist_ok=True)
    (src / "graph_module_float64.py").write_text(source)
    sys.path.insert(0, str(src))
    import graph_module_float64
    net = graph_module_float64.GraphModule()
    net.eval()

    def forward(values):
        kwargs = {n: paddle.to_tensor(v.astype(np.float64) if v.dtype.kind == "f" else v)
                  for n, v in {**weights, **values}.items()}
        with paddle.no_grad():
            ys = net(**kwargs)
        ys = list(ys.values()) if isinstance(ys, dict) else list(ys) if isinstance(ys, (list, tuple)) else [ys]
        return [y.numpy() for y in ys]

    batch = float64.batch_of({n: feeds[n] for n in (given or feeds)})
    if not per_image or batch is None:
        ys = forward(feeds)
    else:  # one image at a time: the inputs (those check-graphnet feeds) with the batch as dim 0 sliced
        sliced = [n for n in (given or feeds) if feeds[n].ndim >= 1 and feeds[n].shape[0] == batch]
        parts = [forward({**feeds, **{n: feeds[n][b:b + 1] for n in sliced}}) for b in range(batch)]
        if any(y.ndim == 0 or y.shape[0] != 1 for y in parts[0]):
            raise ValueError("--per-image: an output has no batch dim (the batch is not separable)")
        ys = [np.concatenate([p[i] for p in parts]) for i in range(len(parts[0]))]
    (out / "float64").mkdir(exist_ok=True)
    not_f64 = []
    for i, value in enumerate(ys):
        if value.dtype.kind == "f" and value.dtype != np.float64:
            not_f64.append(f"output {i} is {value.dtype}")
        np.save(out / "float64" / f"{i}.npy", value)
    note = f"{changed} float32 dtypes of model.py made float64" + (", one image at a time" if per_image else "")
    if not_f64:
        note += "; " + ", ".join(not_f64) + " (the model casts back)"
    return len(ys), note


def main():
    p = argparse.ArgumentParser()
    p.add_argument("sample")
    p.add_argument("out")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--memory-gb", type=float, default=0, help="address-space cap in GiB (0: none)")
    p.add_argument("--inputs", metavar="DIR", help="the inputs from DIR/<name>.npy (default: drawn as the export's)")
    p.add_argument("--per-image", action="store_true", help="run the batch one image at a time")
    args = p.parse_args()
    sample, out = Path(args.sample).resolve(), Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    if args.memory_gb > 0:
        import resource
        cap = int(args.memory_gb * (1 << 30))
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    result = {"status": "ok", "error": "", "note": "", "outputs": 0}
    started = time.time()
    try:
        result["outputs"], result["note"] = run(sample, out, args.seed, args.inputs, args.per_image)
    except MemoryError:
        traceback.print_exc()
        result.update(status="failed", error=f"out of memory (over {args.memory_gb:g} GiB)")
    except Exception as e:  # an op that refuses float64, or Paddle's own failure: reported
        traceback.print_exc()
        line = export_sample.first_line(e)
        if "alloc" in line.lower() and "memory" in line.lower():
            line = f"out of memory (over {args.memory_gb:g} GiB): " + line
        result.update(status="failed", error=line)
    result["seconds"] = round(time.time() - started, 1)
    (out / "float64.json").write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
