#!/usr/bin/env python3
"""Exports the transformer benchmark's models with Paddle 3.3.1 (paddle.jit.save) for bench/transformers/run.sh:
  bert_sS   a BERT-base-sized encoder, Paddle's nn.TransformerEncoder: 12 post-norm layers of d_model 768, 12 heads,
            FFN 3072, erf gelu, dropout 0; input x [-1, S, 768] float32 (dynamic batch), no mask -- one export per
            sequence length S of --seqs.
Each export: OUT/<name>/inference.json (+ .pdiparams, which prepare deletes: weights do not travel) and params.txt,
one line per parameter, NAME LOW HIGH DIM..., that the timing harness (bench/cuda_models/timing_harness.cu) fills
with seeded uniform values on the GPU: linear weights Xavier-uniform (+-sqrt(6 / (fan_in + fan_out)), as
nn.Linear's default), biases within 1/sqrt(fan_in), layer-norm scales in [0.8, 1.2] and shifts in [-0.1, 0.1].
Run with Paddle's interpreter: PADDLE_PYTHON bench/transformers/export.py OUT [--seqs 128,512]"""
import argparse
import math
import sys
from pathlib import Path

import paddle
import paddle.nn as nn
from paddle.static import InputSpec

D_MODEL, HEADS, FFN, LAYERS = 768, 12, 3072, 12


def ranges(net):
    out = []
    for layer in net.sublayers(include_self=True):
        if isinstance(layer, nn.Linear):
            fan_in, fan_out = layer.weight.shape  # Paddle's Linear weight is [in, out]
            bound = math.sqrt(6.0 / (fan_in + fan_out))
            out.append((layer.weight.name, layer.weight.shape, -bound, bound))
            if layer.bias is not None:
                out.append((layer.bias.name, layer.bias.shape, -1 / math.sqrt(fan_in), 1 / math.sqrt(fan_in)))
        elif isinstance(layer, nn.LayerNorm):
            out += [(layer.weight.name, layer.weight.shape, 0.8, 1.2), (layer.bias.name, layer.bias.shape, -0.1, 0.1)]
        elif layer.parameters(include_sublayers=False):
            raise SystemExit(f"export.py: no value range for the parameters of {type(layer).__name__}")
    return out


def bert_encoder():
    layer = nn.TransformerEncoderLayer(D_MODEL, HEADS, FFN, dropout=0.0, activation="gelu", normalize_before=False)
    return nn.TransformerEncoder(layer, LAYERS)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--seqs", default="128,512")
    args = parser.parse_args()
    for seq in (int(s) for s in args.seqs.split(",")):
        path = Path(args.out) / f"bert_s{seq}"
        path.mkdir(parents=True, exist_ok=True)
        paddle.seed(1)
        net = bert_encoder()
        net.eval()
        specs = ranges(net)
        paddle.jit.save(net, str(path / "inference"), input_spec=[InputSpec([None, seq, D_MODEL], "float32", "x")])
        with open(path / "params.txt", "w") as f:
            for name, shape, low, high in specs:
                f.write(f"{name} {low!r} {high!r} {' '.join(str(d) for d in shape)}\n")
        with open(path / "input_dims", "w") as f:
            f.write(f"B,{seq},{D_MODEL}\n")
        print(f"exported bert_s{seq} (x [-1, {seq}, {D_MODEL}], {len(specs)} parameters) to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
