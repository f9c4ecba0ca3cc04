"""Exports a paddle.vision model for bench/models/compare.py (run by run.sh in a venv with Paddle):

    export.py MODEL SIZE OUT_DIR

writes OUT_DIR/inference.json + inference.pdiparams (paddle.jit.save, batch 1, input "x" [1, 3, SIZE, SIZE], random
weights of realistic scale, seed 0), OUT_DIR/model.onnx (paddle2onnx), and
OUT_DIR/bundle.kftb: every parameter as param/<name> and a seeded random input as feed/x, in the tensor bundle
format of tools/interp/tensor_bundle.h that the kforge worker reads.
"""
import math
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import paddle
from paddle.static import InputSpec

FLOAT32 = 9  # kforge::DataType::kFloat32


def write_bundle(path, tensors):
    with open(path, "wb") as f:
        f.write(b"KFTB" + struct.pack("<II", 1, len(tensors)))
        for name, array in tensors:
            array = np.ascontiguousarray(array, dtype=np.float32)
            encoded = name.encode()
            f.write(struct.pack("<I", len(encoded)) + encoded)
            f.write(struct.pack("<ii", FLOAT32, array.ndim))
            f.write(struct.pack(f"<{array.ndim}q", *array.shape))
            f.write(struct.pack("<Q", array.nbytes))
            f.write(array.tobytes())


def realistic_weights(model, seed):
    """He-uniform conv / linear weights, batch-norm scale, shift and running statistics away from identity. Paddle's
    default initialisation makes the activations of a deep random network vanish into subnormal floats, which
    every engine computes at a fraction of its normal speed: that would time the subnormal path, not the model."""
    rng = np.random.default_rng(seed)
    nn = paddle.nn

    def put(param, values):
        param.set_value(values.astype(np.float32))

    for layer in model.sublayers(include_self=True):
        if isinstance(layer, (nn.Conv2D, nn.Linear)):
            w = layer.weight
            fan_in = w.shape[0] if isinstance(layer, nn.Linear) else int(np.prod(w.shape[1:]))
            bound = math.sqrt(6.0 / fan_in)
            put(w, rng.uniform(-bound, bound, w.shape))
            if layer.bias is not None:
                put(layer.bias, rng.uniform(-1, 1, layer.bias.shape) / math.sqrt(fan_in))
        elif isinstance(layer, nn.layer.norm._BatchNormBase):
            c = layer.weight.shape[0]
            put(layer.weight, rng.uniform(0.5, 1.5, c))
            put(layer.bias, rng.uniform(-0.25, 0.25, c))
            put(layer._mean, rng.uniform(-0.25, 0.25, c))
            put(layer._variance, rng.uniform(0.5, 1.5, c))


def main():
    name, size, out = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3])
    out.mkdir(parents=True, exist_ok=True)
    paddle.seed(0)
    model = getattr(paddle.vision.models, name)(pretrained=False)
    realistic_weights(model, 0)
    model.eval()
    paddle.jit.save(model, str(out / "inference"), input_spec=[InputSpec([1, 3, size, size], "float32", name="x")])
    # The program names parameters and buffers (batch norm statistics) by their .name.
    tensors = [("param/" + t.name, t.numpy()) for t in list(model.parameters()) + list(model.buffers())]
    x = np.random.default_rng(1).standard_normal((1, 3, size, size)).astype(np.float32)
    write_bundle(out / "bundle.kftb", tensors + [("feed/x", x)])
    np.save(out / "input.npy", x)
    convert = "import sys; from paddle2onnx.command import main; sys.argv[0] = 'paddle2onnx'; sys.exit(main())"
    subprocess.run([sys.executable, "-c", convert, "--model_dir", str(out), "--model_filename",
                    "inference.json", "--params_filename", "inference.pdiparams", "--save_file",
                    str(out / "model.onnx")], check=True, stdout=subprocess.DEVNULL)


if __name__ == "__main__":
    main()
