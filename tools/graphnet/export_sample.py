"""One GraphNet sample as a real inference model, under a Python that has Paddle (tools/check-graphnet runs it as
a subprocess per sample, so that Paddle's crash or hang stops only that sample):

    python export_sample.py SAMPLE_DIR OUT_DIR --seed S

SAMPLE_DIR holds model.py (class GraphModule, whose forward takes every parameter_i and data_i), weight_meta.py
and input_meta.py. Writes, under OUT_DIR:
    export/inference.json, export/inference.pdiparams   paddle.jit.save of a Layer that owns the parameters (drawn
                                                         per weight_meta.py, seeded) and whose forward(data_0, ...)
                                                         calls GraphModule.forward; InputSpecs fixed as input_meta.py
    inputs/<name>.npy                                    the inputs (input_meta's `data` when given, else drawn)
    paddle/<i>.npy                                       Paddle's predictor outputs (CPU, IR optimisation off)
    export.json                                          {"status": "ok" | "export-fail", "error": first line,
                                                          "stage": ..., "inputs": [names], "constants": [the
                                                          inputs baked into the program], "export_s", "paddle_s"}
"""

import argparse
import ast
import importlib.util
import json
import sys
import time
import traceback
from pathlib import Path

import numpy as np


def meta_tensors(path):
    """The tensor descriptions of a weight_meta.py / input_meta.py, in file order: dicts of name, shape, dtype,
    min_val, max_val, mean, std, data."""
    tree = ast.parse(path.read_text(), filename=str(path))
    names = [node.name for node in tree.body if isinstance(node, ast.ClassDef)]
    spec = importlib.util.spec_from_file_location(f"meta_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = []
    for name in names:
        cls = getattr(module, name)
        out.append({k: getattr(cls, k, None) for k in ("name", "shape", "dtype", "min_val", "max_val", "mean", "std",
                                                       "data")})
    return out


def draw(meta, rng):
    """A numpy array for one described tensor: its `data` when given; integers uniform within [min, max]; bools
    0/1; floats normal(mean, std) clipped to [min, max] (uniform in [min, max] without mean/std; an infinite min or
    max: with_infinite_bounds)."""
    shape = [1 if d is None or d < 0 else int(d) for d in (meta["shape"] or [])]
    dtype = np.dtype(meta["dtype"] or "float32")
    if meta.get("data") is not None:
        data = np.asarray(meta["data"])
        if data.dtype.kind in "iu" or dtype.kind != "f":
            data = data.astype(np.float64).round() if data.dtype.kind == "f" else data
        return data.astype(dtype).reshape(shape)
    lo = meta.get("min_val")
    hi = meta.get("max_val")
    lo = 0.0 if lo is None else float(lo)
    hi = (lo + 1.0) if hi is None else float(hi)
    if dtype.kind == "b":
        return rng.integers(0, 2, size=shape).astype(bool)
    if dtype.kind in "iu":
        return rng.integers(int(np.floor(lo)), int(np.floor(hi)) + 1, size=shape).astype(dtype)
    mean, std = meta.get("mean"), meta.get("std")
    if mean is not None and std is not None and np.isfinite(mean) and np.isfinite(std):
        values = rng.normal(float(mean), float(std), size=shape)
        values = np.clip(values, lo, hi)
    elif np.isfinite(lo) and np.isfinite(hi):
        values = rng.uniform(lo, hi, size=shape)
    else:
        values = with_infinite_bounds(lo, hi, shape, rng)
    return values.astype(dtype)


def with_infinite_bounds(lo, hi, shape, rng):
    """A float tensor whose recorded min or max is infinite (an attention or CTC mask holding -inf, e.g.
    PP-OCRv3_mobile_rec/subgraph_3: min -inf, max 6.3, mean -inf): uniform within a finite unit range at the finite
    bound, and about one element in eight at each infinite bound, so that the program sees infinities as it did."""
    finite_lo = lo if np.isfinite(lo) else (hi - 1.0 if np.isfinite(hi) else -1.0)
    finite_hi = hi if np.isfinite(hi) else finite_lo + (1.0 if np.isfinite(lo) else 2.0)
    values = rng.uniform(finite_lo, finite_hi, size=shape)
    for bound in (lo, hi):
        if not np.isfinite(bound):
            values[rng.random(size=shape) < 0.125] = bound
    return values


# The ops whose argument is a list of boxes (x1, y1, x2, y2), by argument position. Paddle's CPU roi_align cannot
# take a box whose x2 < x1 (aligned=True: a negative bin grid, `std::length_error: vector::reserve`, or, for a pair of
# them, 18 GB and the OOM killer: Cascade-FasterRCNN-ResNet50-FPN/subgraph_6 of seed 8), which independent draws
# of the four coordinates give about one box in two; a real model's boxes never are.
BOX_ARGUMENTS = {"roi_align": 1, "roi_pool": 1, "psroi_pool": 1, "distribute_fpn_proposals": 0}


def box_inputs(model_source):
    """The parameters of GraphModule.forward (model.py's source) that a box argument of BOX_ARGUMENTS' ops reads,
    directly or through the assignments before it (a backward pass as unused_inputs', from those arguments)."""
    tree = ast.parse(model_source)
    forward = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "forward")

    def names(node):
        return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}

    needed = set()
    for call in ast.walk(forward):
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr in BOX_ARGUMENTS:
            position = BOX_ARGUMENTS[call.func.attr]
            if position < len(call.args):
                needed |= names(call.args[position])
    for statement in reversed(forward.body):
        if isinstance(statement, (ast.Assign, ast.AnnAssign)) and statement.value is not None:
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            if set().union(*(names(t) for t in targets)) & needed:
                needed |= names(statement.value)
    return [a.arg for a in forward.args.args[1:] if a.arg in needed]


def with_ordered_corners(meta, value):
    """A drawn box input (box_inputs) as boxes: each row's x1 <= x2 and y1 <= y2 (the two drawn values of each pair
    swapped where needed). Only a drawn (no `data`) float [..., 4] tensor whose recorded minimum is not negative
    (pixel coordinates, not deltas; no minimum recorded is 0, as draw takes it) is taken as boxes; any other value
    comes back unchanged."""
    lo = 0.0 if meta.get("min_val") is None else float(meta["min_val"])
    if (meta.get("data") is not None or value.dtype.kind != "f" or value.ndim < 1 or value.shape[-1] != 4
            or not lo >= 0):
        return value
    x = np.sort(value[..., 0::2], axis=-1)
    y = np.sort(value[..., 1::2], axis=-1)
    return np.stack([x[..., 0], y[..., 0], x[..., 1], y[..., 1]], axis=-1).astype(value.dtype)


def draw_all(sample, rng):
    """The weights and the inputs of a sample, drawn in file order (weights, then inputs), the box inputs with their
    corners ordered: (weights, inputs), dicts of name to array. export and float64_sample.py draw through this."""
    weights = {w["name"]: draw(w, rng) for w in meta_tensors(sample / "weight_meta.py")}
    inputs = meta_tensors(sample / "input_meta.py")
    feeds = {i["name"]: draw(i, rng) for i in inputs}
    boxes = set(box_inputs((sample / "model.py").read_text()))
    for i in inputs:
        if i["name"] in boxes:
            feeds[i["name"]] = with_ordered_corners(i, feeds[i["name"]])
    return weights, feeds


def first_line(e):
    lines = [l.strip() for l in str(e).strip().splitlines() if l.strip()]
    # Paddle's C++ errors end with the useful line ("... (at ...)"); Python's have it first.
    for line in lines:
        if "Error" in line or "error" in line:
            return (type(e).__name__ + ": " + line)[:300]
    return (type(e).__name__ + ": " + (lines[-1] if lines else "?"))[:300]


# An integer (or bool) input that input_meta.py gives `data` for and that has at most this many elements is baked
# into the program as a constant: in the real model it is one (a size, a count, repeat times) that the subgraph
# extraction turned into an input, and a shape computed from it is then known when the program is compiled.
BAKE_MAX_ELEMENTS = 64


def bakeable(meta):
    """Whether input_meta.py's tensor `meta` is a small integer constant to bake into the program."""
    if meta.get("data") is None:
        return False
    dtype = np.dtype(meta["dtype"] or "float32")
    numel = int(np.prod([1 if d is None or d < 0 else int(d) for d in (meta["shape"] or [])]))
    return dtype.kind in "iub" and numel <= BAKE_MAX_ELEMENTS


def unused_inputs(model_source):
    """The parameters of GraphModule.forward (model.py's source) that no returned value depends on, in order: a
    backward pass over forward's statements (an assignment keeps what its value reads when one of its targets is
    needed, `del` reads nothing, any other statement keeps every name it mentions). paddle.jit.save refuses such
    an input as a feed (`... is not involved in the target_vars calculation`); the retry makes it a buffer."""
    tree = ast.parse(model_source)
    forward = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "forward")

    def names(node):
        return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}

    needed = set()
    for statement in reversed(forward.body):
        if isinstance(statement, ast.Delete):
            continue
        if isinstance(statement, (ast.Assign, ast.AnnAssign)):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            if set().union(*(names(t) for t in targets)) & needed and statement.value is not None:
                needed |= names(statement.value)
        else:
            needed |= names(statement)
    return [a.arg for a in forward.args.args[1:] if a.arg not in needed]


WRAPPER = '''import numpy as np
import paddle
import graph_module


class Exported(paddle.nn.Layer):
    def __init__(self, values):
        super().__init__()
        self.graph = graph_module.GraphModule()
        for name, value in values.items():
            tensor = paddle.to_tensor(value)
            if value.dtype.kind == "f":
                # Created as zeros and then set: the Assign initializer spells the values out as a Python list
                # (a 250002 x 768 embedding, ernie-m-base's, took the export past 20 GB and the OOM killer).
                p = self.create_parameter(list(value.shape), dtype=str(value.dtype),
                                          default_initializer=paddle.nn.initializer.Constant(0.0))
                p.set_value(tensor)
                p.stop_gradient = True
                setattr(self, name, p)
            else:
                self.register_buffer(name, tensor, persistable=True)

    def forward(self, {inputs}):
{constants}        return self.graph({call})
'''


def constant_line(name, value):
    """The statement of the wrapper's forward that makes the input `name` the constant `value` (paddle.to_tensor
    of a literal: an assign_value op in the saved program)."""
    literal = repr(value.tolist())
    return (f"        {name} = paddle.to_tensor(np.array({literal}, dtype=\"{value.dtype}\")"
            f".reshape({list(value.shape)!r}))\n")


def wrapper_source(names, weights, constants):
    """exported.py: the Layer whose forward(names...) makes the constants and calls GraphModule.forward with the
    weights (its parameters and buffers), the inputs and the constants, by keyword."""
    call = ", ".join([f"{w}=self.{w}" for w in weights] + [f"{n}={n}" for n in list(names) + list(constants)])
    lines = "".join(constant_line(n, v) for n, v in constants.items())
    return WRAPPER.format(inputs=", ".join(names), constants=lines, call=call)


def export(sample, out, seed, baked=False):
    """paddle.jit.save of the sample. The small integer inputs whose values input_meta.py gives (`bakeable`) are
    constants of the program (unless that would leave it no input). `baked`: the other inputs with `data`, and those no
    output depends on (`unused_inputs`), become buffers of the Layer instead of inputs (the retry when Paddle prunes
    such an input as not involved in the outputs: `The feed_var ... is not involved in the target_vars
    calculation`). Returns the input names, their
    values and the names of the inputs made constants."""
    import paddle
    paddle.set_device("cpu")
    paddle.seed(seed)
    rng = np.random.default_rng(seed)
    inputs = meta_tensors(sample / "input_meta.py")
    values, feeds = draw_all(sample, rng)
    constants = {}
    if any(not bakeable(i) for i in inputs):
        constants = {i["name"]: feeds.pop(i["name"]) for i in inputs if bakeable(i)}
        inputs = [i for i in inputs if i["name"] in feeds]
    if baked:
        unused = set(unused_inputs((sample / "model.py").read_text()))
        for i in inputs:
            if i.get("data") is not None or i["name"] in unused:
                values[i["name"]] = feeds.pop(i["name"])
        inputs = [i for i in inputs if i["name"] in feeds]
    src = out / "src"
    src.mkdir(parents=True, exist_ok=True)
    (src / "graph_module.py").write_text((sample / "model.py").read_text())
    # A sample may have no inputs at all (Co-DINO-R50/subgraph_38 computes its mask from constants), or none left
    # once the retry made them buffers: paddle.jit.save and Paddle's predictor take a program without feeds.
    names = [i["name"] for i in inputs]
    (src / "exported.py").write_text(wrapper_source(names, list(values), constants))
    sys.path.insert(0, str(src))
    import exported
    net = exported.Exported(values)
    net.eval()
    specs = [paddle.static.InputSpec(shape=list(feeds[n].shape), dtype=str(feeds[n].dtype), name=n) for n in names]
    paddle.jit.save(net, str(out / "export" / "inference"), input_spec=specs)
    (out / "inputs").mkdir(exist_ok=True)
    for n in names:
        np.save(out / "inputs" / f"{n}.npy", feeds[n])
    return names, feeds, sorted(constants)


def predict(out, feeds):
    # Paddle's predictor as tools/check-paddle-models runs it (CPU, IR optimisation and oneDNN off).
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "paddle_zoo"))
    import check  # noqa: E402  (tools/paddle_zoo/check.py)
    results = check.paddle_outputs(out / "export", feeds)
    (out / "paddle").mkdir(exist_ok=True)
    for i, r in enumerate(results):
        np.save(out / "paddle" / f"{i}.npy", r)
    return len(results)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("sample")
    p.add_argument("out")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()
    sample, out = Path(args.sample).resolve(), Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    result = {"status": "ok", "error": "", "stage": "", "inputs": [], "export_s": 0.0, "paddle_s": 0.0}
    started = time.time()
    try:
        try:
            names, feeds, constants = export(sample, out, args.seed)
        except ValueError as e:
            if "is not involved in the target_vars" not in str(e):
                raise
            traceback.print_exc()
            print("export_sample: retrying with the inputs input_meta.py fixes as buffers", file=sys.stderr)
            for module in ("exported", "graph_module"):
                sys.modules.pop(module, None)
            names, feeds, constants = export(sample, out, args.seed, baked=True)
            result["note"] = "inputs with fixed data or unused made buffers (Paddle pruned one as unused)"
        result["inputs"] = names
        result["constants"] = constants
    except Exception as e:  # Paddle's own failure to export: reported, not raised
        traceback.print_exc()
        result.update(status="export-fail", stage="paddle.jit.save", error=first_line(e))
    result["export_s"] = round(time.time() - started, 2)
    if result["status"] == "ok":
        started = time.time()
        try:
            result["outputs"] = predict(out, feeds)
        except Exception as e:
            traceback.print_exc()
            result.update(status="export-fail", stage="Paddle predictor", error=first_line(e))
        result["paddle_s"] = round(time.time() - started, 2)
    (out / "export.json").write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
