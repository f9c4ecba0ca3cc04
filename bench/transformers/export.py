#!/usr/bin/env python3
"""Exports the transformer benchmark's models with Paddle 3.3.1 (paddle.jit.save) for bench/transformers/run.sh:
  bert_sS   a BERT-base-sized encoder, Paddle's nn.TransformerEncoder: 12 post-norm layers of d_model 768, 12 heads,
            FFN 3072, erf gelu, dropout 0; input x [-1, S, 768] float32 (dynamic batch), no mask -- one export per
            sequence length S of --seqs.
Each export: OUT/<name>/inference.json (+ .pdiparams, which prepare deletes: weights do not travel) and params.txt,
one line per parameter, NAME LOW HIGH DIM..., that the timing harness (bench/cuda_models/timing_harness.cu) fills
with seeded uniform values on the GPU: linear weights Xavier-uniform (+-sqrt(6 / (fan_in + fan_out)), as
nn.Linear's default), biases within 1/sqrt(fan_in), layer-norm scales in [0.8, 1.2] and shifts in [-0.1, 0.1].
  gpt_prefill, gpt_step
            a GPT-2-small-sized decoder (tools/paddle_zoo/models.py GPTDecoder: 12 pre-norm layers of d_model 768, 12
            heads, FFN 3072, erf gelu, vocabulary 50257, 1024 positions, output projection tied to the token
            embedding): the prefill (ids [-1, -1], causal mask built from the run-time length; logits and each
            layer's keys and values) and the decode step (ids [-1, 1] and 24 caches [-1, 12, -1, 64]: one new token
            over a cache of run-time length L; logits and the grown caches).
Run with Paddle's interpreter: PADDLE_PYTHON bench/transformers/export.py OUT [--seqs 128,512] [--models bert,gpt]"""
import argparse
import math
import sys
from pathlib import Path

import paddle
import paddle.nn as nn
from paddle.static import InputSpec

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent / "tools" / "paddle_zoo"))
from models import GPTDecoder  # noqa: E402

D_MODEL, HEADS, FFN, LAYERS = 768, 12, 3072, 12
GPT_VOCAB, GPT_CONTEXT = 50257, 1024


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
        elif isinstance(layer, nn.Embedding):  # GPT-2's initialisation: N(0, 0.02); uniform of that deviation
            out.append((layer.weight.name, layer.weight.shape, -0.0346, 0.0346))
        elif layer.parameters(include_sublayers=False):
            raise SystemExit(f"export.py: no value range for the parameters of {type(layer).__name__}")
    return out


def bert_encoder():
    layer = nn.TransformerEncoderLayer(D_MODEL, HEADS, FFN, dropout=0.0, activation="gelu", normalize_before=False)
    return nn.TransformerEncoder(layer, LAYERS)


def save(net, path, input_spec, input_dims, what):
    """paddle.jit.save, params.txt and input_dims (the harness's KFORGE_INPUT_DIMS; S and L stand for the sequence
    and cache lengths that run.sh fills in)."""
    path.mkdir(parents=True, exist_ok=True)
    net.eval()
    specs = ranges(net)
    paddle.jit.save(net, str(path / "inference"), input_spec=input_spec)
    with open(path / "params.txt", "w") as f:
        for name, shape, low, high in specs:
            f.write(f"{name} {low!r} {high!r} {' '.join(str(d) for d in shape)}\n")
    with open(path / "input_dims", "w") as f:
        f.write(input_dims + "\n")
    print(f"exported {path.name} ({what}, {len(specs)} parameters) to {path}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--seqs", default="128,512")
    parser.add_argument("--models", default="bert,gpt")
    args = parser.parse_args()
    models = args.models.split(",")
    for seq in (int(s) for s in args.seqs.split(",")) if "bert" in models else ():
        paddle.seed(1)
        save(bert_encoder(), Path(args.out) / f"bert_s{seq}", [InputSpec([None, seq, D_MODEL], "float32", "x")],
             f"B,{seq},{D_MODEL}", f"x [-1, {seq}, {D_MODEL}]")
    if "gpt" in models:
        head_dim = D_MODEL // HEADS
        for decode in (False, True):
            paddle.seed(1)
            net = GPTDecoder(vocab=GPT_VOCAB, context=GPT_CONTEXT, d_model=D_MODEL, heads=HEADS, ffn=FFN,
                             layers=LAYERS, decode=decode)
            cache = ";".join([f"B,{HEADS},L,{head_dim}"] * (2 * LAYERS))
            save(net, Path(args.out) / ("gpt_step" if decode else "gpt_prefill"),
                 GPTDecoder.specs(decode, HEADS, head_dim, LAYERS), f"B,1;{cache}" if decode else "B,S",
                 "ids [-1, 1], caches [-1, 12, -1, 64]" if decode else "ids [-1, -1]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
