#!/usr/bin/env python3
"""Exports Paddle vision models (paddle.vision.models) at 224x224 with a dynamic batch for bench/cuda_models/run.sh:
  OUT/<name>/inference.json, inference.pdiparams   paddle.jit.save (prepare deletes the weights: they do not travel)
  OUT/<name>/params.txt                            one line per parameter: NAME LOW HIGH DIM... -- the harness
                                                   fills it with seeded uniform values in [LOW, HIGH) on the GPU
The ranges are those of tools/paddle_zoo's realistic_weights: He-uniform filters and linear weights (biases within
1/sqrt(fan_in)), batch-norm scale in [0.5, 1.5], shift and mean in [-0.25, 0.25], variance in [0.5, 1.5].

mobilenet_v2's classifier Dropout (p=0.2) is an identity at inference but exports as pd_op.dropout, which the CUDA
backend refused when BENCHMARKS.md's table was measured (it runs now, as a copy kernel); it is still replaced by
nn.Identity (the same function in eval mode, as torchvision's model in eval mode skips it) so that the benchmark
measures the same program.
Run with Paddle's interpreter: BUILD/paddle-venv/bin/python bench/cuda_models/export_models.py OUT NAME..."""
import math
import sys
from pathlib import Path

import paddle
import paddle.nn as nn
from paddle.static import InputSpec

SIZE = 224


def drop_dropouts(layer):
    for key, child in list(layer._sub_layers.items()):
        if isinstance(child, nn.Dropout):
            layer._sub_layers[key] = nn.Identity()
        else:
            drop_dropouts(child)


def ranges(net):
    """(parameter name, shape, low, high) for every parameter and batch-norm statistic of `net`."""
    out = []
    for layer in net.sublayers(include_self=True):
        if isinstance(layer, (nn.Conv2D, nn.Linear)):
            w = layer.weight
            # Paddle's Linear weight is [in, out]; conv filters are [out, in / groups, kh, kw].
            fan_in = w.shape[0] if isinstance(layer, nn.Linear) else math.prod(w.shape[1:])
            bound = math.sqrt(6.0 / fan_in)
            out.append((w.name, w.shape, -bound, bound))
            if layer.bias is not None:
                out.append((layer.bias.name, layer.bias.shape, -1 / math.sqrt(fan_in), 1 / math.sqrt(fan_in)))
        elif isinstance(layer, nn.layer.norm._BatchNormBase):
            out += [(layer.weight.name, layer.weight.shape, 0.5, 1.5), (layer.bias.name, layer.bias.shape, -0.25, 0.25),
                    (layer._mean.name, layer._mean.shape, -0.25, 0.25),
                    (layer._variance.name, layer._variance.shape, 0.5, 1.5)]
        elif layer.parameters(include_sublayers=False):
            raise SystemExit(f"export_models.py: no value range for the parameters of {type(layer).__name__}")
    return out


def main():
    out = Path(sys.argv[1])
    for name in sys.argv[2:]:
        path = out / name
        path.mkdir(parents=True, exist_ok=True)
        paddle.seed(1)
        net = getattr(paddle.vision.models, name)()
        drop_dropouts(net)
        net.eval()
        specs = ranges(net)
        paddle.jit.save(net, str(path / "inference"), input_spec=[InputSpec([None, 3, SIZE, SIZE], "float32", "x")])
        with open(path / "params.txt", "w") as f:
            for pname, shape, low, high in specs:
                f.write(f"{pname} {low!r} {high!r} {' '.join(str(d) for d in shape)}\n")
        print(f"exported {name} {SIZE}x{SIZE} (dynamic batch, {len(specs)} parameters) to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
