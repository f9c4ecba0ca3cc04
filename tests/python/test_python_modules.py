#!/usr/bin/python3
"""The Python modules of `kforge ops --python` and `kforge compile --python`, imported with Debian's python3.

refops (tests/python/ops) is the op library of the reference op set kernels/ops.yaml; wsn (tests/python/model) is
tests/paddle/weights_sorted_names compiled with its .pdiparams. Each test_* function is one meson test
(`meson test -C build python-<name>`).

Usage: test_python_modules.py --module-dir DIR --model-dir DIR --build-dir BUILD [NAME...]   (--list: the names)
"""

import argparse
import ctypes
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WSN = ROOT / "tests" / "paddle" / "weights_sorted_names"
ARGS = None


class TestFailure(Exception):
    pass


def expect(condition, message):
    if not condition:
        raise TestFailure(message)


def np():
    import numpy
    return numpy


def refops():
    sys.path.insert(0, ARGS.module_dir)
    import refops as module
    return module


def expect_error(kind, words, fn):
    try:
        fn()
    except kind as e:
        for w in words:
            expect(w in str(e), f"{kind.__name__} '{e}' does not mention '{w}'")
        return
    except Exception as e:  # noqa: BLE001
        raise TestFailure(f"expected {kind.__name__} mentioning {words}, got {type(e).__name__}: {e}")
    raise TestFailure(f"expected {kind.__name__} mentioning {words}, got no error")


class DlpackOnly:
    """An object that offers its array only through __dlpack__ (as torch and paddle tensors do)."""

    def __init__(self, array):
        self.array = array

    def __dlpack__(self, stream=None):
        return self.array.__dlpack__()

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()


# ---- synthesised calls of every op -------------------------------------------------------------------------

def value_for(attr, rng):
    """A value for a required attribute without a YAML default, from its type."""
    t = attr["type"]
    if t in ("int", "int64_t", "long", "size_t"):
        return 1
    if t in ("float", "double"):
        return 0.5
    if t == "bool":
        return False
    if t == "str":
        return "NCHW"
    if t in ("int[]", "int64_t[]", "IntArray"):
        return [1]
    if t in ("float[]", "double[]"):
        return [0.5]
    if t == "Scalar[]":
        return [1.0]
    if t.startswith("Scalar"):
        return 1.0 if t in ("Scalar", "Scalar(float)", "Scalar(double)") else 1
    if t == "DataType":
        return "float32"
    if t == "Place":
        return "cpu"
    return None


def f32(rng, *shape):
    return rng.standard_normal(shape).astype("float32")


# Arguments (None: the YAML default) for the ops that float32 [2, 3] tensors and typed values do not suit.
OVERRIDES = {
    "bmm": lambda r: [f32(r, 2, 2, 3), f32(r, 2, 3, 4)],
    "matmul": lambda r: [f32(r, 2, 3), f32(r, 3, 4), None, None],
    "conv2d": lambda r: [f32(r, 1, 2, 5, 5), f32(r, 3, 2, 3, 3), [1, 1], [1, 1], None, None, None, None],
    "depthwise_conv2d": lambda r: [f32(r, 1, 2, 5, 5), f32(r, 2, 1, 3, 3), None, None, None, 2, None, None],
    "conv2d_transpose": lambda r: [f32(r, 1, 2, 4, 4), f32(r, 2, 3, 3, 3)] + [None] * 8,
    "pool2d": lambda r: [f32(r, 1, 2, 4, 4), [2, 2], [2, 2], [0, 0], False, True, "NCHW", "max", False, False,
                         "EXPLICIT"],
    "batch_norm": lambda r: [f32(r, 2, 3, 2, 2), f32(r, 3), np().abs(f32(r, 3)) + 1, f32(r, 3), f32(r, 3), True, 0.9,
                             1e-5, "NCHW", False, False],
    "group_norm": lambda r: [f32(r, 2, 4, 3), f32(r, 4), f32(r, 4), None, 2, None],
    "instance_norm": lambda r: [f32(r, 2, 3, 4), f32(r, 3), f32(r, 3), None],
    "layer_norm": lambda r: [f32(r, 2, 3), f32(r, 3), f32(r, 3), None, None],
    "embedding": lambda r: [np().array([[0, 2], [1, 0]], "int64"), f32(r, 3, 4), None, None],
    "expand": lambda r: [f32(r, 1, 3), [2, 3]],
    "full_with_tensor": lambda r: [np().array([1.5], "float32"), [2, 3], None],
    "gather": lambda r: [f32(r, 4, 3), np().array([3, 0], "int64"), None],
    "index_select": lambda r: [f32(r, 4, 3), np().array([2, 0], "int64"), 1],
    "masked_fill": lambda r: [f32(r, 2, 3), r.standard_normal((2, 3)) > 0, np().array(9.0, "float32")],
    "where": lambda r: [r.standard_normal((2, 3)) > 0, f32(r, 2, 3), f32(r, 2, 3)],
    "one_hot": lambda r: [np().array([0, 3, 1], "int64"), 4],
    "pad3d": lambda r: [f32(r, 1, 1, 2, 2, 2), [1, 1, 0, 1, 1, 0], None, 0.5, None],
    "reshape": lambda r: [f32(r, 2, 3), [3, 2]],
    "roll": lambda r: [f32(r, 2, 3), [1], [1]],
    "scatter": lambda r: [f32(r, 4, 3), np().array([1, 3], "int64"), f32(r, 2, 3), None],
    "slice": lambda r: [f32(r, 4, 3), [0], [1], [3], [1], []],
    "split": lambda r: [f32(r, 2, 6), [2, 4], 1],
    "transpose": lambda r: [f32(r, 2, 3), [1, 0]],
    "einsum": lambda r: [[f32(r, 2, 3), f32(r, 3, 4)], "ij,jk->ik"],
    "bilinear_interp": lambda r: [f32(r, 1, 1, 2, 2), None, None, None, "NCHW", 0, 4, 4, [], "bilinear", False, 0],
    "bicubic_interp": lambda r: [f32(r, 1, 1, 2, 2), None, None, None, "NCHW", 0, 4, 4, [], "bicubic", False, 0],
    "nearest_interp": lambda r: [f32(r, 1, 1, 2, 2), None, None, None, "NCHW", 0, 4, 4, [], "nearest", False, 0],
    "dropout": lambda r: [f32(r, 2, 3), None, 0.5, True, "upscale_in_train", 0, True],
    "rms_norm": lambda r: [f32(r, 2, 3), None, None, f32(r, 3), None, 1e-5, 1, -1.0, 0, 0.0, 0.0],
    "fused_rms_norm_quant": lambda r: [f32(r, 2, 3), None, None, f32(r, 3), None, 1e-5, 1, -1.0, 0, 0.0, 0.0],
    "set_value": lambda r: [f32(r, 2, 3), [0], [1], [1], [0], [], [], [1], [5.0]],
    "set_value_with_tensor": lambda r: [f32(r, 2, 3), f32(r, 1, 3), [0], [1], [1], [0], [], []],
    # Bitwise ops take integers and bools only.
    "bitwise_and": lambda r: [r.integers(-8, 8, (2, 3)).astype("int32"), r.integers(-8, 8, (2, 3)).astype("int32")],
    "bitwise_or": lambda r: [r.integers(-8, 8, (2, 3)).astype("int64"), r.integers(-8, 8, (2, 3)).astype("int64")],
    "bitwise_xor": lambda r: [r.standard_normal((2, 3)) > 0, r.standard_normal((2, 3)) > 0],
    "bitwise_not": lambda r: [r.integers(-8, 8, (2, 3)).astype("int32")],
    # Issue 34's ops: index tensors, 1-D lists, a probability, images and grids.
    "gather_nd": lambda r: [f32(r, 2, 3), np().array([[1, 2], [0, -1]], "int64")],
    "index_put": lambda r: [f32(r, 4, 3), [np().array([1, -1], "int64")], f32(r, 3), None],
    "prelu": lambda r: [f32(r, 2, 3, 4), f32(r, 3), "NCHW", "channel"],
    "repeat_interleave": lambda r: [f32(r, 2, 3), 2, 1, -1],
    "randint": lambda r: [0, 5, [2, 3], None, None],
    "prior_box": lambda r: [f32(r, 1, 2, 4, 4), f32(r, 1, 3, 32, 32), [8.0], [16.0], [2.0], [0.1, 0.1, 0.2, 0.2], None,
                            None, None, None, None, None],
    "take_along_axis": lambda r: [f32(r, 2, 3), np().array([[2, 0], [1, 1]], "int64"), 1],
    "meshgrid": lambda r: [[f32(r, 3), f32(r, 2)]],
    # rnn: RNN_TANH (one state) over x [time 3, batch 2, 4], hidden 5, Paddle's weight list, a uint8 dropout state.
    "rnn": lambda r: [f32(r, 3, 2, 4), [f32(r, 1, 2, 5)], [f32(r, 5, 4), f32(r, 5, 5), f32(r, 5), f32(r, 5)], None,
                      np().zeros(1, "uint8"), None, None, 4, 5, None, None, None, True],
    # yolo_box: 2 anchors and 2 classes over a 2 x 2 grid of one 64 x 64 image; generate_proposals: one anchor per
    # cell of a 2 x 2 map, 4 proposals before NMS, 2 after; distribute_fpn_proposals: three boxes of one image over
    # FPN levels 2 to 5.
    "yolo_box": lambda r: [f32(r, 1, 14, 2, 2), np().array([[64, 64]], "int32"), [10, 13, 16, 30], 2, 0.01, 32,
                           None, None, None, None],
    "generate_proposals": lambda r: [f32(r, 1, 1, 2, 2), f32(r, 1, 4, 2, 2) / 4, np().array([[32, 32]], "float32"),
                                     np().array([[0, 0, 8, 8], [8, 0, 16, 8], [0, 8, 8, 16], [8, 8, 16, 16]],
                                                "float32"),
                                     np().ones((4, 4), "float32"), 4, 2, 0.5, 0.1, 1.0, None],
    "distribute_fpn_proposals": lambda r: [np().array([[0, 0, 10, 10], [0, 0, 300, 300], [10, 10, 100, 120]],
                                                      "float32"), np().array([3], "int32"), 2, 5, 4, 224, False],
    "pad": lambda r: [f32(r, 2, 3), [1, 0, 0, 2], 0.5],
    "bce_loss": lambda r: [np().abs(f32(r, 2, 3)) / 4, np().abs(f32(r, 2, 3)) / 4],
    "grid_sample": lambda r: [f32(r, 1, 2, 3, 3), f32(r, 1, 2, 2, 2), None, None, None],
    "linear_interp": lambda r: [f32(r, 1, 1, 4), None, None, None, "NCHW", 0, 0, 6, [], "linear", False, 0],
    "cross_entropy_with_softmax": lambda r: [f32(r, 2, 3), np().array([[2], [0]], "int64"), None, None, None, None,
                                             None],
    # The last of issue 34: deformable_conv (v1, no mask), roi_align over two boxes of one image, linspace,
    # index_sample.
    "deformable_conv": lambda r: [f32(r, 1, 2, 4, 4), f32(r, 1, 18, 4, 4), f32(r, 3, 2, 3, 3), None, [1, 1], [1, 1],
                                  [1, 1], 1, 1, 1],
    "roi_align": lambda r: [f32(r, 1, 2, 6, 6), np().array([[0, 0, 3, 3], [1, 1, 5, 4]], "float32"),
                            np().array([2], "int32"), 2, 2, 1.0, 2, False],
    "linspace": lambda r: [np().array([0.0], "float32"), np().array([1.0], "float32"), np().array([5], "int64"),
                           "float32", None],
    "index_sample": lambda r: [f32(r, 2, 3), np().array([[2, 0], [1, 1]], "int64")],
    # fft_r2c over the last two axes of [2, 3, 4] (a one-sided last axis); real of a complex64 tensor.
    "fft_r2c": lambda r: [f32(r, 2, 3, 4), [1, 2], "backward", True, True],
    "real": lambda r: [(f32(r, 2, 3) + 1j * f32(r, 2, 3)).astype("complex64")],
    # Issue 33's sizes that depend on data: a bool mask; unique over repeated values, sorted, every output asked for.
    "masked_select": lambda r: [f32(r, 2, 3), r.standard_normal((2, 3)) > 0],
    "unique": lambda r: [np().array([[3, 1, 3], [2, 1, 3]], "int64"), True, True, True, [], None, True],
}


def synthesise(info, rng):
    """Positional arguments for one op from its args info: float32 [2, 3] tensors, defaults, typed values."""
    args = []
    for inp in info["inputs"]:
        if inp["type"] == "Tensor[]":
            args.append([rng.standard_normal((2, 3)).astype("float32") for _ in range(2)])
        else:
            args.append(rng.standard_normal((2, 3)).astype("float32"))
    for attr in info["attributes"]:
        args.append(None if attr["default"] is not None else value_for(attr, rng))
    return args


def call(fn, info, args, mode):
    """Calls fn with args (None: the attribute's default) positionally, by keyword, or with other tensor kinds."""
    names = [i["name"] for i in info["inputs"]] + [a["name"] for a in info["attributes"]]
    n_in = len(info["inputs"])
    tensor = {
        "numpy": lambda a: a,
        "kforge": lambda a: refops().assign(a),
        "dlpack": lambda a: a if a.dtype == bool else DlpackOnly(a),  # numpy 1.24 exports no bool DLPack
        "strided": lambda a: np().repeat(a, 2, axis=-1)[..., ::2],  # same values, not contiguous
    }[mode if mode != "keywords" else "numpy"]
    conv = [([tensor(t) for t in a] if isinstance(a, list) else tensor(a)) if i < n_in and a is not None else a
            for i, a in enumerate(args)]
    if mode == "keywords":
        return fn(**{k: v for k, v in zip(names, conv) if v is not None})
    positional = []
    for i, v in enumerate(conv):
        if v is None:  # an attribute left to its default: pass the rest by keyword
            return fn(*positional, **{k: w for k, w in zip(names[i:], conv[i:]) if w is not None})
        positional.append(v)
    return fn(*positional)


def as_arrays(result):
    if result is None:
        return None
    if isinstance(result, tuple):
        return tuple(as_arrays(r) for r in result)
    if isinstance(result, list):
        return [as_arrays(r) for r in result]
    return np().array(result, copy=True)


def same(a, b):
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if a is None or b is None:
        return a is b
    return a.dtype == b.dtype and a.shape == b.shape and np().array_equal(a, b, equal_nan=True)


def test_every_op_every_convention():
    """Every out-of-place op of kernels/ops.yaml runs (arguments synthesised from its args info, or OVERRIDES) and
    gives the same result from numpy arrays, the module's Tensors, __dlpack__-only objects, non-contiguous arrays
    and keyword arguments."""
    m = refops()
    rng = np().random.default_rng(7)
    # Ops that exist only in place (assign_value_) take the module's Tensors: test_tensor_type_and_inplace.
    functions = [name for name, info in m.args_info.items()
                 if info["has_api"] and hasattr(m, name) and not name.endswith("_")]
    expect(len(functions) >= 90, f"only {len(functions)} ops have a Python function")
    ran, rejected = [], []
    for name in functions:
        info = m.args_info[name]
        fn = getattr(m, name)
        args = OVERRIDES[name](rng) if name in OVERRIDES else synthesise(info, rng)
        try:
            reference = as_arrays(call(fn, info, args, "numpy"))
        except ValueError as e:
            expect(name in str(e), f"{name}: ValueError does not name the op: {e}")
            rejected.append(name)
            continue
        except TypeError as e:
            raise TestFailure(f"{name}: synthesised arguments raised TypeError: {e}")
        for mode in ("kforge", "dlpack", "strided", "keywords"):
            got = as_arrays(call(fn, info, args, mode))
            expect(same(reference, got), f"{name}: {mode} arguments give another result than numpy arrays")
        ran.append(name)
    print(f"{len(ran)} ops ran in every convention; {len(rejected)} rejected the synthesised arguments: "
          f"{' '.join(rejected)}")
    expect(not rejected, f"{len(rejected)} of {len(functions)} ops rejected their arguments")


# ---- the reference interpreter as the oracle: the same op, called through tools/interp's registry ------------

DTYPE_CODES = {"bool": 1, "int8": 2, "uint8": 3, "int16": 4, "int32": 5, "int64": 6, "float16": 7, "float32": 9,
               "float64": 10, "complex64": 11, "complex128": 12}


def write_bundle(path, tensors):
    """tools/interp/tensor_bundle.h's format: "KFTB", version 1, count, then name, dtype, dims and bytes each."""
    import struct
    with open(path, "wb") as f:
        f.write(b"KFTB" + struct.pack("<II", 1, len(tensors)))
        for name, a in tensors:
            a = np().ascontiguousarray(a)
            f.write(struct.pack("<I", len(name)) + name.encode())
            f.write(struct.pack("<ii", DTYPE_CODES[str(a.dtype)], a.ndim) + struct.pack(f"<{a.ndim}q", *a.shape))
            f.write(struct.pack("<Q", a.nbytes) + a.tobytes())


def read_bundle(path):
    import struct
    data = Path(path).read_bytes()
    expect(data[:4] == b"KFTB", f"{path} is no tensor bundle")
    _, count = struct.unpack_from("<II", data, 4)
    at, out = 12, []
    names = {v: k for k, v in DTYPE_CODES.items()}
    for _ in range(count):
        (n,) = struct.unpack_from("<I", data, at)
        name = data[at + 4:at + 4 + n].decode()
        at += 4 + n
        code, ndim = struct.unpack_from("<ii", data, at)
        dims = struct.unpack_from(f"<{ndim}q", data, at + 8)
        at += 8 + 8 * ndim
        (nbytes,) = struct.unpack_from("<Q", data, at)
        at += 8
        out.append((name, np().frombuffer(data[at:at + nbytes], names[code]).reshape(dims)))
        at += nbytes
    return out


def test_ops_against_interpreter():
    """Every op whose arguments the interpreter's program YAML can state (tensor inputs, absent optional ones only
    at the end), called from Python and through kforge-interp (tools/interp: its own registry calls the kernels
    with the attributes of a one-op program): the same outputs, bit for bit. Catches arguments the module passes
    to the wrong parameter, wrong defaults and outputs returned in the wrong order."""
    import json
    m = refops()
    interp = Path(ARGS.build_dir) / "tools" / "interp" / "kforge-interp"
    if not interp.exists():
        raise TestFailure(f"{interp} was not built")
    supported = set(subprocess.run([str(interp), "--list-ops"], stdout=subprocess.PIPE, text=True).stdout.split())
    rng = np().random.default_rng(11)
    compared, left = [], []
    for name, info in m.args_info.items():
        if not info["has_api"] or name.endswith("_") or not hasattr(m, name):
            continue
        args = OVERRIDES[name](rng) if name in OVERRIDES else synthesise(info, rng)
        n_in = len(info["inputs"])
        tensors = args[:n_in]
        while tensors and tensors[-1] is None:
            tensors = tensors[:-1]
        if name not in supported or any(t is None or isinstance(t, list) for t in tensors) or \
                any(o["type"] != "Tensor" for o in info["outputs"]):
            left.append(name)
            continue
        result = call(getattr(m, name), info, args, "numpy")
        result = list(result) if isinstance(result, tuple) else [result]
        returned = [o["name"] for o in info["outputs"] if not o["intermediate"]]
        attrs = {a["name"]: v for a, v in zip(info["attributes"], args[n_in:]) if v is not None}
        ins = [f"in{i}" for i in range(len(tensors))]
        outs = [f"out_{o['name']}" for o in info["outputs"]]
        program = {"program": name,
                   "inputs": [{"name": i, "dtype": str(t.dtype), "shape": list(t.shape)} for i, t in zip(ins, tensors)],
                   "ops": [{"op": name, "in": ins, "out": outs, "attrs": attrs}],
                   "outputs": [f"out_{r}" for r in returned if result[returned.index(r)] is not None]}
        with tempfile.TemporaryDirectory() as tmp:
            (Path(tmp) / "p.yaml").write_text(json.dumps(program))  # JSON is YAML
            write_bundle(Path(tmp) / "in.kftb", [(f"feed/{i}", t) for i, t in zip(ins, tensors)])
            proc = subprocess.run([str(interp), str(Path(tmp) / "p.yaml"), "--inputs", str(Path(tmp) / "in.kftb"),
                                   "--write-outputs", str(Path(tmp) / "out.kftb")],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            expect(proc.returncode == 0, f"{name}: kforge-interp failed: {proc.stdout}")
            want = [a for _, a in read_bundle(Path(tmp) / "out.kftb")]
        got = [np().asarray(r) for r in result if r is not None]
        expect(len(got) == len(want), f"{name}: {len(got)} outputs from Python, {len(want)} from the interpreter")
        for i, (g, w) in enumerate(zip(got, want)):
            expect(g.dtype == w.dtype and g.shape == w.shape and np().array_equal(g, w, equal_nan=True),
                   f"{name}: output {i} differs: Python {g.dtype}{g.shape} {g.reshape(-1)[:6]} != interpreter "
                   f"{w.dtype}{w.shape} {w.reshape(-1)[:6]}")
        compared.append(name)
    print(f"{len(compared)} ops equal the interpreter's results; not stated as a one-op program: {' '.join(left)}")
    expect(len(compared) >= 60, f"only {len(compared)} ops compared")


def test_ops_against_numpy():
    """Ops whose result numpy computes too, with YAML defaults, keywords, Scalars and IntArrays."""
    m = refops()
    n = np()
    rng = n.random.default_rng(3)
    a = rng.standard_normal((2, 3)).astype("float32")
    b = rng.standard_normal((2, 3)).astype("float32")
    row = rng.standard_normal((3,)).astype("float32")
    close = lambda got, want: expect(  # noqa: E731
        n.asarray(got).shape == n.shape(want) and n.allclose(n.asarray(got), want, rtol=1e-5, atol=1e-6),
        f"{n.asarray(got)} != {want}")
    close(m.add(a, row), a + row)
    close(m.subtract(a, b), a - b)
    close(m.multiply(x=a, y=b), a * b)
    close(m.divide(a, b), a / b)
    close(m.relu(a), n.maximum(a, 0))
    close(m.exp(a), n.exp(a))
    close(m.abs(a), n.abs(a))
    close(m.matmul(a, b, False, True), a @ b.T)
    close(m.matmul(a, b, transpose_y=True), a @ b.T)
    close(m.scale(a, 2.0, 1.0), a * 2 + 1)
    close(m.scale(a, scale=2, bias=1, bias_after_scale=False), (a + 1) * 2)
    close(m.scale(a, n.array([3.0], "float32")), a * 3)  # a Scalar from a one-element tensor
    close(m.sum(a), a.sum())
    close(m.sum(a, [1]), a.sum(axis=1))
    close(m.sum(a, 1, keepdim=True), a.sum(axis=1, keepdims=True))
    close(m.mean(a, [0]), a.mean(axis=0))
    close(m.transpose(a, [1, 0]), a.T)
    close(m.reshape(a, [3, 2]), a.reshape(3, 2))
    close(m.reshape(a, n.array([3, 2], "int64")), a.reshape(3, 2))  # an IntArray from a tensor
    close(m.concat([a, b], 0), n.concatenate([a, b]))
    close(m.concat((a, b), axis=1), n.concatenate([a, b], axis=1))
    e = n.exp(a - a.max(axis=-1, keepdims=True))
    close(m.softmax(a, -1), e / e.sum(axis=-1, keepdims=True))
    close(m.full([2, 2], 7.0), n.full((2, 2), 7.0, "float32"))
    expect(n.asarray(m.full([3], 1, "int64")).dtype == n.int64, "full(dtype='int64')")
    expect(n.asarray(m.full([3], 1, n.int32)).dtype == n.int32, "full(dtype=numpy.int32)")
    expect(n.asarray(m.cast(a, "float64")).dtype == n.float64, "cast to float64")
    parts = m.split_with_num(a, 3, 1)
    expect(isinstance(parts, list) and len(parts) == 3, "split_with_num returns a list of 3")
    for i, p in enumerate(parts):
        close(p, a[:, i:i + 1])


def test_tensor_type_and_inplace():
    """The module's Tensor: buffer protocol, DLPack, shape/dtype; in-place twins update it and return it; view
    outputs keep a numpy input alive."""
    m = refops()
    n = np()
    a = n.array([[1, -2, 3], [-4, 5, -6]], "float32")
    t = m.assign(a)
    expect(t.shape == (2, 3) and t.dtype == "float32" and t.ndim == 2, f"{t!r}: shape/dtype")
    expect(n.asarray(t).ctypes.data == n.asarray(t).ctypes.data, "buffer is stable")
    expect(n.array_equal(n.from_dlpack(t), a), "numpy.from_dlpack(Tensor)")
    expect(t.__dlpack_device__() == (1, 0), "CPU DLPack device")
    before = n.asarray(t).ctypes.data
    r = m.relu_(t)
    expect(r is t, "relu_ returns its input")
    expect(n.array_equal(n.asarray(t), n.maximum(a, 0)) and n.asarray(t).ctypes.data == before, "relu_ in place")
    c = m.Tensor(a)  # a copy that the module owns
    expect(n.array_equal(n.asarray(c), a) and n.asarray(c).ctypes.data != a.ctypes.data, "Tensor(array) copies")
    expect(m.Tensor(DlpackOnly(a)).shape == (2, 3), "Tensor(__dlpack__ object)")
    expect_error(TypeError, ["Tensor()", "'data'"], lambda: m.Tensor("a"))
    # A view output shares the numpy input's memory and keeps it alive.
    src = n.arange(6, dtype="float32")
    view = m.reshape(src, [2, 3])
    expect(n.asarray(view).ctypes.data == src.ctypes.data, "reshape of a numpy array is a view (zero-copy in)")
    del src
    expect(n.array_equal(n.asarray(view), n.arange(6, dtype="float32").reshape(2, 3)), "view outlives its input")
    # The args-info registry.
    info = m.get_kernel_ops_args_info()
    expect(info == m.args_info and info is not m.args_info, "get_kernel_ops_args_info() is a fresh copy")
    expect(info["scale"]["attributes"][0] == {"name": "scale", "type": "Scalar", "default": "1.0", "mutable": True},
           f"args_info['scale']: {info['scale']}")
    expect(info["scale"]["inplace"] == {"x": "out"}, "inplace pairs")


def test_argument_errors():
    """A wrong argument is a TypeError or ValueError naming the op, the argument and what was expected."""
    m = refops()
    n = np()
    a = n.ones((2, 3), "float32")
    expect_error(TypeError, ["add()", "'y'", "tensor", "str"], lambda: m.add(a, "x"))
    expect_error(TypeError, ["add()", "missing", "'y'"], lambda: m.add(a))
    expect_error(TypeError, ["add()", "unexpected keyword", "'z'"], lambda: m.add(a, a, z=1))
    expect_error(TypeError, ["add()", "multiple values", "'x'"], lambda: m.add(a, x=a))
    expect_error(TypeError, ["add()", "at most 2"], lambda: m.add(a, a, a))
    expect_error(TypeError, ["scale()", "'scale'", "number"], lambda: m.scale(a, "2"))
    expect_error(TypeError, ["reshape()", "'shape'", "list of ints"], lambda: m.reshape(a, 1.5))
    expect_error(TypeError, ["sum()", "'keepdim'", "bool"], lambda: m.sum(a, [0], None, "yes"))
    expect_error(TypeError, ["full()", "'dtype'", "dtype"], lambda: m.full([2], 1.0, "float31"))
    expect_error(TypeError, ["relu_()", "'x'", "updated in place"], lambda: m.relu_(a))
    expect_error(TypeError, ["concat()", "'x'", "item 1"], lambda: m.concat([a, 3]))
    expect_error(ValueError, ["add()", "broadcast"], lambda: m.add(a, n.ones((5, 7), "float32")))
    expect_error(ValueError, ["matmul()"], lambda: m.matmul(a, a))
    expect_error(ValueError, ["add()", "'x'", "format"], lambda: m.add(n.array(["s"]), a))


def wsn():
    sys.path.insert(0, ARGS.model_dir)
    import wsn as module
    return module


def test_model_against_run_model():
    """The compiled model from Python equals tools/run-model's outputs (the same C++ class) bit for bit, and
    Paddle's expected outputs within 1e-5."""
    n = np()
    w = wsn()
    model = w.wsn_model(str(WSN / "inference.pdiparams"))
    expect(w.wsn_model.input_names == ("x",), f"input_names {w.wsn_model.input_names}")
    x = n.load(WSN / "input_x.npy")
    outs = model.run(x)
    expect(isinstance(outs, tuple) and len(outs) == 2, "two outputs, a tuple")
    expect(all(isinstance(o, n.ndarray) for o in outs), "outputs are numpy arrays")
    by_name = model.run(x=x)
    expect(all(n.array_equal(a, b) for a, b in zip(outs, by_name)), "run(x=...) equals run(...)")
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.run([sys.executable, str(ROOT / "tools" / "run-model"), str(WSN), "--input",
                               f"x={WSN / 'input_x.npy'}", "--output-dir", tmp, "--build-dir", ARGS.build_dir],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
        expect(proc.returncode == 0, f"tools/run-model failed:\n{proc.stdout}")
        for i, out in enumerate(outs):
            ref = n.load(Path(tmp) / f"{i}.npy")
            expect(ref.dtype == out.dtype and ref.shape == out.shape and n.array_equal(ref, out),
                   f"output {i}: Python {out} != run-model {ref}")
    for i, out in enumerate(outs):
        want = n.load(WSN / f"expected_{i}.npy")
        expect(n.allclose(out, want, rtol=1e-5, atol=1e-6), f"output {i}: {out} != Paddle's {want}")


def test_model_inputs_and_errors():
    """Inputs by buffer, DLPack or non-contiguous; errors name the input; run() releases the GIL."""
    n = np()
    w = wsn()
    model = w.wsn_model()
    x = n.load(WSN / "input_x.npy")
    expect_error(ValueError, ["run()"], lambda: model.run(x))  # parameters not loaded yet
    expect_error(ValueError, ["load_parameters()"], lambda: model.load_parameters(str(WSN / "case.json")))
    model.load_parameters(str(WSN / "inference.pdiparams"))
    want = model.run(x)
    for other in (DlpackOnly(x), n.asfortranarray(n.repeat(x, 2, axis=1)[:, ::2])):
        got = model.run(other)
        expect(all(n.array_equal(a, b) for a, b in zip(want, got)), f"input {type(other).__name__}")
    # The arrays of an earlier run keep their values: run() reuses only output memory nobody refers to.
    kept = model.run(x)
    copies = [k.copy() for k in kept]
    model.run(x * 3)
    expect(all(n.array_equal(k, c) for k, c in zip(kept, copies)), "a later run overwrote an earlier run's outputs")
    del kept
    again = model.run(x)
    expect(all(n.array_equal(a, b) for a, b in zip(want, again)), "run after the outputs were dropped")
    expect_error(ValueError, ["run()", "x"], lambda: model.run(x.astype("float64")))
    expect_error(TypeError, ["run()", "'x'", "tensor"], lambda: model.run("x"))
    expect_error(TypeError, ["run()", "missing", "'x'"], lambda: model.run())
    model.set_num_threads(2)
    expect(all(n.array_equal(a, b) for a, b in zip(want, model.run(x))), "2 threads give the same outputs")
    model.set_num_threads(1)  # process-wide: back to the default
    expect_error(ValueError, ["set_num_threads()"], lambda: model.set_num_threads(0))
    expect_error(TypeError, ["set_num_threads()", "'threads'", "int"], lambda: model.set_num_threads("2"))
    # Threads each with their own model run at once (the GIL is released around run()) and agree.
    results = [None] * 4
    models = [w.wsn_model(str(WSN / "inference.pdiparams")) for _ in results]

    def work(i):
        for _ in range(200):
            results[i] = models[i].run(x)
    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(results))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results:
        expect(all(n.array_equal(a, b) for a, b in zip(want, r)), "threaded runs agree")


# DLPack 1.2's C exchange API as ctypes types, for ExchangeProducer.
class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32), ("dtype", DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


DLTensorFromObject = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(DLTensor))
DLWorkStream = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int32, ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p))


class DLExchangeHeader(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32), ("prev_api", ctypes.c_void_p)]


class DLExchangeAPI(ctypes.Structure):
    _fields_ = [("header", DLExchangeHeader), ("allocator", ctypes.c_void_p), ("managed_from", ctypes.c_void_p),
                ("managed_to", ctypes.c_void_p), ("dltensor_from", DLTensorFromObject),
                ("current_work_stream", DLWorkStream)]


class ExchangeProducer:
    """A tensor producer that publishes DLPack 1.2's C exchange API the way torch.Tensor does (the functions in
    C through ctypes: CI has no torch). `calls` counts the reads through the API; __dlpack__ is a failure."""

    calls = 0

    def __init__(self, array):
        self.array = array  # float32, C-contiguous
        self.shape = (ctypes.c_int64 * array.ndim)(*array.shape)

    def __dlpack__(self, *args, **kwargs):
        raise AssertionError("__dlpack__ was called: the exchange API was not used")

    @staticmethod
    def _dltensor_from(obj, out):
        self = ctypes.cast(obj, ctypes.py_object).value
        ExchangeProducer.calls += 1
        t = out.contents
        t.data = self.array.ctypes.data
        t.device = DLDevice(1, 0)  # kDLCPU
        t.ndim = self.array.ndim
        t.dtype = DLDataType(2, 32, 1)  # float32
        t.shape = self.shape
        t.strides = None
        t.byte_offset = 0
        return 0

    @staticmethod
    def _work_stream(device_type, device_id, out):
        out[0] = None
        return 0

    @classmethod
    def publish(cls, major=1, as_capsule=True):
        """A new subclass with the API set on it (a capsule under DLPack's current name, or an int address under
        the earlier one)."""
        api = DLExchangeAPI(DLExchangeHeader(major, 2, None), None, None, None, DLTensorFromObject(cls._dltensor_from),
                            DLWorkStream(cls._work_stream))
        sub = type("Exchanged", (cls,), {"_api": api})  # keeps the table and its callbacks alive
        if as_capsule:
            new_capsule = ctypes.pythonapi.PyCapsule_New
            new_capsule.restype = ctypes.py_object
            new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
            sub.__dlpack_c_exchange_api__ = new_capsule(ctypes.addressof(api), b"dlpack_exchange_api", None)
        else:
            sub.__c_dlpack_exchange_api__ = ctypes.addressof(api)
        return sub


def test_dlpack_exchange_api():
    """Objects whose type publishes DLPack's C exchange API (torch.Tensor since 2.10) are read through it, not
    through __dlpack__, by the op module and the compiled model; an API of an unknown major version is not used."""
    n = np()
    ops = refops()
    rng = n.random.default_rng(3)
    a, b = f32(rng, 3, 5), f32(rng, 3, 5)
    for as_capsule in (True, False):
        kind = ExchangeProducer.publish(as_capsule=as_capsule)
        before = ExchangeProducer.calls
        got = n.asarray(ops.add(kind(a), kind(b)))
        expect(n.array_equal(got, a + b), f"add through the exchange API ({'capsule' if as_capsule else 'int'})")
        expect(ExchangeProducer.calls == before + 2, f"{ExchangeProducer.calls - before} reads through the API, not 2")
    w = wsn()
    model = w.wsn_model(str(WSN / "inference.pdiparams"))
    x = n.ascontiguousarray(n.load(WSN / "input_x.npy"), dtype=n.float32)
    want = model.run(x)
    got = model.run(ExchangeProducer.publish()(x))
    expect(all(n.array_equal(p, q) for p, q in zip(want, got)), "the model's run() through the exchange API")
    future = ExchangeProducer.publish(major=2)
    future.__dlpack__ = lambda self, *args, **kwargs: self.array.__dlpack__()
    before = ExchangeProducer.calls
    expect(n.array_equal(n.asarray(ops.add(future(a), future(b))), a + b), "add of a major-2 producer (__dlpack__)")
    expect(ExchangeProducer.calls == before, "an exchange API of major version 2 (no earlier version) was used")


TESTS = {name[len("test_"):].replace("_", "-"): fn for name, fn in globals().items() if name.startswith("test_")}


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--module-dir")
    parser.add_argument("--model-dir")
    parser.add_argument("--build-dir")
    parser.add_argument("names", nargs="*")
    ARGS = parser.parse_args()
    if ARGS.list:
        print("\n".join(TESTS))
        return 0
    failed = 0
    for name in ARGS.names or list(TESTS):
        try:
            TESTS[name]()
            print(f"PASS {name}")
        except TestFailure as e:
            print(f"FAIL {name}: {e}")
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
