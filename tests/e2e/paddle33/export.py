#!/usr/bin/env python3
"""Regenerates the programs of this folder with Paddle (3.3.1 made the checked-in ones):

    /work/venv-paddle/bin/python tests/e2e/paddle33/export.py [NAME...]

Each program is one small function saved with paddle.jit.save and InputSpec, as a user exports a model; the file
is Paddle's inference.json, renamed NAME.json. Not run by the test suite (it needs Paddle).
"""

import os
import shutil
import sys
import tempfile

os.environ.setdefault("FLAGS_enable_pir_api", "1")

import paddle  # noqa: E402
from paddle.static import InputSpec  # noqa: E402

F = paddle.nn.functional
HERE = os.path.dirname(os.path.abspath(__file__))


def f32(shape, name="x"):
    return InputSpec(shape, "float32", name)


def i32(shape, name="x"):
    return InputSpec(shape, "int32", name)


def i64(shape, name="x"):
    return InputSpec(shape, "int64", name)


# name -> (function of the inputs, input specs). The function's outputs are the program's fetches.
PROGRAMS = {
    "sum_axis": (lambda x: paddle.sum(x, axis=1), [f32([2, 3])]),
    "sum_int": (lambda x: (paddle.sum(x, axis=1), paddle.sum(x, axis=1, dtype="float64")), [i32([2, 3])]),
    "mean_axis": (lambda x: paddle.mean(x, axis=1), [f32([2, 3])]),
}


def save(name, fn, specs):
    if len(specs) == 1:
        class Net(paddle.nn.Layer):
            def forward(self, x):
                return fn(x)
    else:
        class Net(paddle.nn.Layer):
            def forward(self, x, y):
                return fn(x, y)
    net = paddle.jit.to_static(Net(), input_spec=specs, full_graph=True)
    with tempfile.TemporaryDirectory() as tmp:
        paddle.jit.save(net, os.path.join(tmp, "inference"))
        shutil.copy(os.path.join(tmp, "inference.json"), os.path.join(HERE, f"{name}.json"))


def main():
    names = sys.argv[1:] or list(PROGRAMS)
    for name in names:
        fn, specs = PROGRAMS[name]
        save(name, fn, specs)
        print(f"wrote {name}.json")


if __name__ == "__main__":
    main()
