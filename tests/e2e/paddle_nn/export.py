#!/usr/bin/env python3
"""Regenerates the programs of this folder with Paddle (3.3.1 made the checked-in ones):

    BUILD/paddle-venv/bin/python tests/e2e/paddle_nn/export.py [NAME...]

One small network per group of ops (issue 11: interpolation, set_value, gather/scatter and the other index and
data-movement ops, bmm/einsum, the norms), saved with paddle.jit.save and InputSpec (dynamic batch) as a user
exports a model; the file is Paddle's inference.json, renamed NAME.json. Parameters get their random initial
values; the tests draw their own. Not run by the test suite (it needs Paddle).
"""

import os
import shutil
import sys
import tempfile

import paddle  # noqa: E402
from paddle.static import InputSpec  # noqa: E402

F = paddle.nn.functional
HERE = os.path.dirname(os.path.abspath(__file__))


def f32(shape, name="x"):
    return InputSpec(shape, "float32", name)


def i64(shape, name):
    return InputSpec(shape, "int64", name)


def interp(x):
    # Half-pixel bilinear x2, align_corners to a fixed size, align_mode 1, NHWC, nearest.
    return (F.interpolate(x, scale_factor=2, mode="bilinear"),
            F.interpolate(x, size=[9, 4], mode="bilinear", align_corners=True),
            F.interpolate(x, size=[3, 11], mode="bilinear", align_mode=1),
            F.interpolate(x.transpose([0, 2, 3, 1]), size=[7, 3], mode="bilinear", data_format="NHWC"),
            F.interpolate(x, scale_factor=0.5, mode="nearest"))


def interp_dynamic(x):
    # Spatial dims unknown until run time: the output sizes are expressions of them.
    return (F.interpolate(x, scale_factor=2, mode="nearest"),
            F.interpolate(x, scale_factor=1.5, mode="bilinear"),
            F.interpolate(x, scale_factor=0.5, mode="bilinear", align_corners=True))


def interp_size_of(x, y):
    # An FPN's "upsample to the size of the other level": the size tensor comes from shape(y) at run time.
    return (F.interpolate(x, size=y.shape[2:], mode="nearest") + y,
            F.interpolate(x, size=y.shape[2:], mode="bilinear", align_corners=True))


def set_value(x, v):
    y = x * 1.0
    y[:, 1:3] = 0.5              # set_value_ with a Scalar
    y[:, ::-1, 3] = v            # set_value_with_tensor_ with a negative step, axis 2 decreased
    y[:, 0, 1:5:2] = y[:, 2, :2]  # a value read from the tensor itself
    return y


def gather_scatter(x, i, u):
    return (paddle.gather(x, i, axis=1), paddle.index_select(x, i, axis=2),
            paddle.scatter(x[0], i, u, overwrite=True), paddle.scatter(x[0], i, u, overwrite=False))


def movement(x):
    return (paddle.tile(x, [2, 1, 3]), paddle.roll(x, [1, -2], axis=[1, 2]), paddle.roll(x, 3),
            paddle.flip(x, [0, 2]))


def pad(x):
    # 4-D inputs reach pad3d through unsqueeze / squeeze; a 5-D input directly.
    x5 = x.unsqueeze(2).tile([1, 1, 3, 1, 1])
    return (F.pad(x, [1, 2, 0, 1], mode="reflect"), F.pad(x, [1, 2, 0, 1], mode="constant", value=0.5),
            F.pad(x5, [1, 2, 0, 1, 1, 0], mode="replicate"), F.pad(x5, [2, 1, 1, 0, 0, 1], mode="circular"))


def batched(x, y):
    return (paddle.bmm(x, y), paddle.einsum("bij,bjk->bik", x, y), paddle.einsum("bij,bkj->bik", x, x),
            paddle.einsum("bij->bji", y), paddle.einsum("bii->bi", x[:, :, :3]))


class Norms(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.group = paddle.nn.GroupNorm(3, 6)
        self.group_nhwc = paddle.nn.GroupNorm(2, 6, data_format="NHWC")
        self.instance = paddle.nn.InstanceNorm2D(6)
        self.weight = self.create_parameter([8])
        self.norm_bias = self.create_parameter([8], is_bias=True)

    def forward(self, x, r):
        incubate = paddle.incubate.nn.functional
        h = x.reshape([-1, 6, 8])
        return (self.group(x), self.group_nhwc(x.transpose([0, 2, 3, 1])), self.instance(x),
                incubate.fused_rms_norm(h, self.weight, None, 1e-6, 2)[0],
                incubate.fused_rms_norm(h, self.weight, self.norm_bias, 1e-6, 2, residual=r)[0])


# name -> (function or Layer class, input specs). The outputs are the program's fetches.
PROGRAMS = {
    "interp": (interp, [f32([None, 2, 5, 7])]),
    "interp_dynamic": (interp_dynamic, [f32([None, 2, None, None])]),
    "interp_size_of": (interp_size_of, [f32([None, 2, None, None]), f32([None, 2, None, None], "y")]),
    "set_value": (set_value, [f32([None, 4, 6]), f32([4], "v")]),
    "gather_scatter": (gather_scatter, [f32([None, 5, 6]), i64([4], "i"), f32([4, 6], "u")]),
    "movement": (movement, [f32([None, 3, 5])]),
    "pad": (pad, [f32([None, 2, 4, 5])]),
    "batched": (batched, [f32([None, 3, 5]), f32([None, 5, 4], "y")]),
    "norms": (Norms, [f32([None, 6, 2, 4]), f32([None, 6, 8], "r")]),
}


def wrap(fn, arity):
    """A Layer whose forward calls fn (dy2static needs the arguments spelled out, not *args)."""
    if arity == 1:
        class Net(paddle.nn.Layer):
            def forward(self, x):
                return fn(x)
    elif arity == 2:
        class Net(paddle.nn.Layer):
            def forward(self, x, y):
                return fn(x, y)
    else:
        class Net(paddle.nn.Layer):
            def forward(self, x, y, z):
                return fn(x, y, z)
    return Net()


def build(name):
    """The network of program `name` (in eval mode) and its input specs."""
    fn, specs = PROGRAMS[name]
    net = fn() if isinstance(fn, type) else wrap(fn, len(specs))
    net.eval()
    return net, specs


def save(name, directory=HERE):
    """Exports program `name` to DIRECTORY/NAME.json (+ NAME.pdiparams when it has parameters); returns the net."""
    net, specs = build(name)
    static = paddle.jit.to_static(net, input_spec=specs, full_graph=True)
    with tempfile.TemporaryDirectory() as tmp:
        paddle.jit.save(static, os.path.join(tmp, "inference"))
        for ext in (".json", ".pdiparams"):
            if os.path.exists(os.path.join(tmp, "inference" + ext)) and (ext == ".json" or directory != HERE):
                shutil.copy(os.path.join(tmp, "inference" + ext), os.path.join(directory, name + ext))
    return net


def main():
    paddle.seed(11)
    for name in sys.argv[1:] or list(PROGRAMS):
        save(name)
        print(f"wrote {name}.json")


if __name__ == "__main__":
    main()
