"""Writes the Paddle oracle's fixtures (run by tools/paddle-fixtures inside a venv with Paddle and numpy).

    generate.py OUT_DIR [NAME ...] [--all] [--list]

For each case of cases.py (all that are not pending, or the NAMEs given): seeded input and parameter values,
the program saved with paddle.jit.save (OUT_DIR/NAME/inference.json and .pdiparams), Paddle's predictor run on
the inputs, and OUT_DIR/NAME/ input_<name>.npy, expected_<i>.npy and case.json written. An existing case
directory is replaced whole.
"""

import argparse
import inspect
import warnings
import json
import shutil
import sys
import zlib
from pathlib import Path

import numpy as np
import paddle

from cases import CASES


def values(spec, dims, rng):
    """Seeded values of a tensor spec (spec.py): floats uniform in [low, high), integers in [low, high), bools."""
    if spec.dtype == "bool":
        return rng.uniform(size=dims) < 0.5
    if spec.dtype.startswith("float"):
        return rng.uniform(spec.low, spec.high, size=dims).astype(spec.dtype)
    return rng.randint(int(spec.low), int(spec.high), size=dims).astype(spec.dtype)


class CaseLayer(paddle.nn.Layer):
    """forward(*inputs) = case.forward(*inputs, *parameters), the parameters holding the given values."""

    def __init__(self, case, param_values):
        super().__init__()
        self.case_forward = case.forward
        self.case_control_flow = case.control_flow
        self.case_param_count = len(case.params)
        for i, (spec, value) in enumerate(zip(case.params, param_values)):
            # Named per case, so that a case's files do not depend on which cases were generated before it.
            attr = paddle.ParamAttr(name=spec.name or f"{case.name}.w_{i}")
            # (set_value below gives the values; a constant initializer only because Paddle has no default
            # one for integer parameters)
            p = self.create_parameter(list(spec.dims), dtype=spec.dtype, attr=attr,
                                      default_initializer=paddle.nn.initializer.Constant(0))
            p.set_value(value)
            self.add_parameter(f"p{i}", p)

    def call(self, *inputs):
        # Parameters through the layer's attributes, so that dy2static hands the traced program's values; the
        # lambdas are traced as written (no Python control flow for dy2static to convert) unless the case is
        # about control flow.
        params = [getattr(self, f"p{i}") for i in range(self.case_param_count)]
        if self.case_control_flow:
            return self.case_forward(*inputs, *params)
        return paddle.jit.not_to_static(self.case_forward)(*inputs, *params)


# dy2static needs a forward with as many named arguments as there are InputSpecs.
class Layer1(CaseLayer):
    def forward(self, a):
        return self.call(a)


class Layer2(CaseLayer):
    def forward(self, a, b):
        return self.call(a, b)


class Layer3(CaseLayer):
    def forward(self, a, b, c):
        return self.call(a, b, c)


class Layer4(CaseLayer):
    def forward(self, a, b, c, d):
        return self.call(a, b, c, d)


LAYERS = {1: Layer1, 2: Layer2, 3: Layer3, 4: Layer4}


def program_ops(json_path):
    """The op names of a saved PIR JSON program, as pd_op.NAME / builtin.NAME."""
    dialects = {"0": "builtin", "1": "pd_op", "2": "cf"}
    names = []
    for op in json.loads(Path(json_path).read_text())["program"]["regions"][0]["blocks"][0]["ops"]:
        dialect, _, name = op["#"].partition(".")
        names.append("builtin.parameter" if op["#"] == "p" else f"{dialects.get(dialect, dialect)}.{name}")
    return names


def predict(prefix, feeds):
    """Paddle's predictor (paddle.inference, CPU) on `feeds` {name: array}: the outputs in its order."""
    params = Path(str(prefix) + ".pdiparams")
    config = paddle.inference.Config(str(prefix) + ".json", str(params) if params.exists() else "")
    config.disable_gpu()
    config.disable_glog_info()
    config.disable_mkldnn()  # the plain CPU kernels: oneDNN fails on some of these programs in 3.3.1
    # Paddle 3.3.1's PIR inplace pass lets an op overwrite a buffer a share_data_ result still aliases (the case
    # share_data_then_overwrite): without it the predictor gives the program's answer (tools/paddle_zoo/check.py,
    # without_inplace_pass).
    paddle.set_flags({"FLAGS_pir_apply_inplace_pass": False})
    predictor = paddle.inference.create_predictor(config)
    for name in predictor.get_input_names():
        predictor.get_input_handle(name).copy_from_cpu(feeds[name])
    predictor.run()
    return [predictor.get_output_handle(n).copy_to_cpu() for n in predictor.get_output_names()]


def generate(case, out_dir):
    rng = np.random.RandomState(zlib.crc32(case.name.encode()))
    names = list(inspect.signature(case.forward).parameters)[: len(case.inputs)]
    feeds = {n: values(s, s.run_dims(), rng) for n, s in zip(names, case.inputs)}
    param_values = [values(s, s.dims, rng) for s in case.params]

    directory = out_dir / case.name
    if directory.exists():
        shutil.rmtree(directory)
    directory.mkdir(parents=True)
    if len(case.inputs) not in LAYERS:
        raise RuntimeError(f"cases take 1 to {len(LAYERS)} inputs, this one has {len(case.inputs)}")
    layer = LAYERS[len(case.inputs)](case, param_values)
    layer.eval()
    specs = [paddle.static.InputSpec(list(s.dims), s.dtype, name=n) for n, s in zip(names, case.inputs)]
    paddle.jit.save(layer, str(directory / "inference"), input_spec=specs)
    ops = program_ops(directory / "inference.json")
    missing = [op for op in case.ops if f"pd_op.{op}" not in ops]
    if missing:
        raise RuntimeError(f"the saved program has no {', '.join(missing)} (ops: {', '.join(ops)})")

    outputs = predict(directory / "inference", feeds)
    if case.expect is not None:
        outputs = [np.asarray(v) for v in case.expect(outputs, feeds)]
    for n, v in feeds.items():
        np.save(directory / f"input_{n}.npy", v)
    for i, v in enumerate(outputs):
        np.save(directory / f"expected_{i}.npy", v.copy(order="C"))  # (ascontiguousarray makes rank 0 rank 1)
    meta = {
        "name": case.name,
        "paddle": paddle.__version__,
        "ops": sorted({op for op in ops if op.startswith("pd_op.") and op not in ("pd_op.data", "pd_op.fetch")}),
        "inputs": [{"name": n, "dtype": s.dtype, "dims": [-1 if d is None else d for d in s.dims],
                    "run": list(s.run_dims())} for n, s in zip(names, case.inputs)],
        "parameters": len(case.params),
        "outputs": [{"dtype": str(v.dtype), "dims": list(v.shape)} for v in outputs],
    }
    # One key per line, values compact: small diffs when a case is regenerated.
    text = "{\n" + ",\n".join(f" {json.dumps(k)}: {json.dumps(v)}" for k, v in meta.items()) + "\n}\n"
    (directory / "case.json").write_text(text)
    return meta


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[1])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("names", nargs="*", help="cases to write (default: every case that is not pending)")
    parser.add_argument("--all", action="store_true", help="pending cases too")
    parser.add_argument("--list", action="store_true", help="list the cases (pending ones with their reason)")
    args = parser.parse_args()
    by_name = {c.name: c for c in CASES}
    if len(by_name) != len(CASES):
        sys.exit("cases.py: two cases have the same name")
    if args.list:
        for c in CASES:
            print(c.name + (f"  (pending: {c.pending})" if c.pending else ""))
        return 0
    unknown = [n for n in args.names if n not in by_name]
    if unknown:
        sys.exit(f"unknown case(s): {', '.join(unknown)}")
    chosen = [by_name[n] for n in args.names] if args.names else [c for c in CASES if args.all or not c.pending]
    paddle.disable_static()
    warnings.filterwarnings("ignore", message="no variable in your model")  # cases without parameters
    failed = 0
    for case in chosen:
        try:
            meta = generate(case, args.out_dir)
            print(f"{case.name}: {', '.join(meta['ops'])}")
        except Exception as e:  # one bad case must not hide the others
            failed += 1
            shutil.rmtree(args.out_dir / case.name, ignore_errors=True)
            print(f"{case.name}: FAILED: {type(e).__name__}: {str(e).strip().splitlines()[-1] if str(e).strip() else ''}")
    # The index meson reads (tests/paddle/meson.build): one test per case directory.
    present = sorted(p.parent.name for p in args.out_dir.glob("*/case.json"))
    (args.out_dir / "cases.txt").write_text("".join(n + "\n" for n in present))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
