#!/usr/bin/env python3
"""Regenerates the programs of this folder with Paddle (3.3.1 made the checked-in ones):

    BUILD/paddle-venv/bin/python tests/e2e/paddle33/export.py [NAME...]

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
    "hardsigmoid": (lambda x: (F.hardsigmoid(x * 3.0), paddle.nn.Hardsigmoid()(x) + 1.0), [f32([2, 8])]),
    "relu6": (lambda x: F.relu6(x * 8.0) - 1.0, [f32([2, 8])]),
    "compare": (lambda x, y: (paddle.equal(paddle.floor(x * 2.0), paddle.floor(y * 2.0)),
                              paddle.not_equal(paddle.floor(x * 2.0), paddle.floor(y * 2.0)),
                              x > y, x >= 0.25, x < y, x <= y), [f32([2, 3]), f32([3], "y")]),
    "compare_int": (lambda x, y: (x == y, x != y, x > y, x <= 2), [i64([4, 3]), i64([4, 3], "y")]),
    "logical": (lambda x, y: (paddle.logical_and(x > 0, y > 0), paddle.logical_or(x > 0, y > 0),
                              paddle.logical_not(x > y)), [f32([2, 3]), f32([2, 3], "y")]),
    "uniform": (lambda x: (x + paddle.uniform([2, 3], min=-1.0, max=1.0, seed=7),
                           paddle.uniform(paddle.shape(x), min=2.0, max=3.0)), [f32([-1, 3])]),
    "cumsum": (lambda x: (paddle.cumsum(x, axis=1), paddle.cumsum(x), paddle.cumsum(x, axis=0, dtype="float64")),
               [f32([2, 3])]),
    "cumsum_int": (lambda x: paddle.cumsum(x, axis=-1), [i32([3, 4])]),
    "prod": (lambda x: (paddle.prod(x, axis=1), paddle.prod(x), paddle.prod(x, axis=0, keepdim=True)),
             [f32([2, 3])]),
    "full_with_tensor": (lambda x: (paddle.full(paddle.shape(x), 3.0), paddle.full([2, 3], x[0, 0])),
                         [f32([-1, 3])]),
    "pow": (lambda x, y: (paddle.pow(x, 2.0), paddle.pow(paddle.abs(x), 0.5), x ** 3, paddle.pow(y, 3)),
            [f32([2, 3]), i64([2, 3], "y")]),
    "floor_divide": (lambda x, y: (paddle.floor_divide(x - 2, y + 1), paddle.floor_divide(x * 3 - 5, y + 2)),
                     [i64([3, 4]), i64([4], "y")]),
    "floor_divide_float": (lambda x, y: x // (y + 1.5), [f32([2, 3]), f32([2, 3], "y")]),
    "unary": (lambda x: (paddle.sqrt(paddle.abs(x)), paddle.erf(x), paddle.abs(x), paddle.exp(x),
                         paddle.log(paddle.abs(x) + 1.0), paddle.sin(x), paddle.cos(x)), [f32([2, 3])]),
    "abs_int": (lambda x: paddle.abs(x - 2), [i32([2, 3])]),
    "clip": (lambda x, y: (paddle.clip(x, -0.5, 0.5), paddle.clip(y, 1, 2)), [f32([2, 3]), i32([2, 3], "y")]),
    "where": (lambda x, y: paddle.where(x > 0, x, y), [f32([2, 3]), f32([2, 3], "y")]),
    "masked_fill": (lambda x, y: (paddle.masked_fill(x, x > 0, 2.0), paddle.masked_fill(x, y > 0, -1.0)),
                    [f32([2, 3]), f32([3], "y")]),
    "arange": (lambda x: (paddle.arange(0, 6, 1, dtype="float32") + x, paddle.arange(0.0, 1.0, 0.1)),
               [f32([6])]),
    "arange_dyn": (lambda x: paddle.arange(1, paddle.shape(x)[0], 2), [f32([-1])]),
    "argmax": (lambda x: (paddle.argmax(x, axis=1), paddle.argmax(x), paddle.argmax(x, axis=0, keepdim=True),
                          paddle.argmax(x, axis=-1, dtype="int32")), [f32([3, 4])]),
    "topk": (lambda x: (paddle.topk(x, 2), paddle.topk(x, 1, axis=0, largest=False)), [f32([-1, 5])]),
    "log_softmax": (lambda x: (F.log_softmax(x, axis=-1), F.log_softmax(x, axis=0)), [f32([3, 4])]),
    "one_hot": (lambda x: F.one_hot(x, 5), [i64([2, 3])]),
    "swiglu": (lambda x, y: (F.swiglu(x, y), F.swiglu(x)), [f32([2, 4]), f32([2, 4], "y")]),
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
