#!/usr/bin/env python3
"""Torch half of bench/transformers/run.sh's GPT cells: the GPT-2-small-sized decoder of export.py (12 pre-norm layers,
d_model 768, 12 heads, FFN 3072, erf gelu, vocabulary 50257, tied output projection) written as torch users write it
(torch.nn.functional.scaled_dot_product_attention, is_causal for the prefill; the decode step concatenates the new
keys and values onto the cache it is given and returns the grown caches, as Paddle's program does), random weights,
timed eager, as a CUDA graph captured by hand and through torch.compile(mode="reduce-overhead", dynamic=False) while
the compile budget lasts, in float32 (TF32 off) and float16 (the model, its inputs and caches .half()):
  prefill S   ids [batch, S]                              -> logits and 24 caches [batch, 12, S, 64]
  step L      ids [batch, 1] and 24 caches [batch, 12, L, 64] -> logits [batch, 1, 50257] and the caches grown to L + 1
Each timed run as bench/cuda_models/torch_bench.py's timed(): median of 50 after 10 warm-ups. Prints one table with
kforge's timings (--kforge: lines `MODEL SETTING BATCH MEDIAN_MS MIN_MS`, MODEL gpt_prefill_sS or gpt_step_lL, SETTING
float32, float16 (float32 inputs and outputs) or float16io (--io-precision compute: float16 ones, as torch's)) and
the ratio kforge / best torch (float16: kforge's float16io)."""
import argparse
import sys
import time
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "cuda_models"))
from torch_bench import compiled_ms, graphed, ms_cell, print_table, ratio_cell, timed  # noqa: E402

D_MODEL, HEADS, FFN, LAYERS, VOCAB, CONTEXT = 768, 12, 3072, 12, 50257, 1024
HEAD_DIM = D_MODEL // HEADS
SETTINGS = {"float32": torch.float32, "float16": torch.float16}


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(D_MODEL), nn.LayerNorm(D_MODEL)
        self.q, self.k, self.v, self.o = (nn.Linear(D_MODEL, D_MODEL) for _ in range(4))
        self.fc1, self.fc2 = nn.Linear(D_MODEL, FFN), nn.Linear(FFN, D_MODEL)

    def forward(self, h, past_k=None, past_v=None):
        batch, length, _ = h.shape
        x = self.ln1(h)
        q, k, v = (proj(x).view(batch, length, HEADS, HEAD_DIM).transpose(1, 2) for proj in (self.q, self.k, self.v))
        if past_k is not None:
            k, v = torch.cat([past_k, k], 2), torch.cat([past_v, v], 2)
        o = F.scaled_dot_product_attention(q, k, v, is_causal=past_k is None)
        h = h + self.o(o.transpose(1, 2).reshape(batch, length, D_MODEL))
        return h + self.fc2(F.gelu(self.fc1(self.ln2(h)))), k, v


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok, self.pos = nn.Embedding(VOCAB, D_MODEL), nn.Embedding(CONTEXT, D_MODEL)
        self.blocks = nn.ModuleList(Block() for _ in range(LAYERS))
        self.ln = nn.LayerNorm(D_MODEL)

    def forward(self, ids, *cache):
        start = cache[0].shape[2] if cache else 0
        h = self.tok(ids) + self.pos(torch.arange(start, start + ids.shape[1], device=ids.device))
        present = []
        for i, block in enumerate(self.blocks):
            h, k, v = block(h, *(cache[2 * i:2 * i + 2] if cache else ()))
            present += [k, v]
        return (self.ln(h) @ self.tok.weight.t(), *present)


def inputs(kind, length, batch, dtype):
    ids = torch.randint(0, VOCAB, (batch, 1 if kind == "step" else length), device="cuda")
    if kind == "prefill":
        return [ids]
    return [ids] + [torch.empty(batch, HEADS, length, HEAD_DIM, device="cuda").uniform_(-1, 1).to(dtype)
                    for _ in range(2 * LAYERS)]


def read_kforge(path):
    out = {}
    with open(path) as f:
        for line in f:
            model, setting, batch, median, _ = line.split()
            if model.startswith("gpt_"):
                kind, length = model.removeprefix("gpt_").rsplit("_", 1)
                out[(kind, int(length[1:]), setting, int(batch))] = float(median)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kforge", required=True)
    ap.add_argument("--cells", nargs="+", required=True, help="KIND:LENGTH, e.g. prefill:128 step:512")
    ap.add_argument("--batches", nargs="+", type=int, required=True)
    ap.add_argument("--no-torch-compile", action="store_true")
    ap.add_argument("--elapsed", type=float, default=0.0, help="seconds the run had taken before this script")
    ap.add_argument("--compile-budget", type=float, default=420.0,
                    help="no torch.compile starts after this many seconds of the whole run")
    args = ap.parse_args()
    start = time.time() - args.elapsed
    torch.backends.cuda.matmul.allow_tf32 = False
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}")
    kforge = read_kforge(args.kforge)
    cells = [(kind, int(length)) for kind, length in (c.split(":") for c in args.cells)]
    rows = []
    with torch.no_grad():
        for setting, dtype in SETTINGS.items():
            torch.manual_seed(1)
            model = GPT().cuda().eval().to(dtype)
            for kind, length in cells:
                for batch in args.batches:
                    xs = inputs(kind, length, batch, dtype)
                    row = {"kind": kind, "length": length, "batch": batch, "setting": setting,
                           "eager": timed(lambda: model(*xs)), "graph": timed(graphed(model, *xs)), "compile": None}
                    print(f"torch {setting} {kind} {length} batch {batch}: eager {row['eager']:.3f} ms, "
                          f"CUDA graph {row['graph']:.3f} ms", flush=True)
                    rows.append(row)
            del model
        order = sorted(rows, key=lambda r: (r["setting"] != "float16", r["kind"] != "step", r["length"], r["batch"]))
        for row in order if not args.no_torch_compile else []:
            label = f"torch.compile {row['setting']} {row['kind']} {row['length']} batch {row['batch']}"
            if time.time() - start > args.compile_budget:
                print(f"{label}: skipped (the run is past {args.compile_budget:.0f} s)")
                continue
            torch.manual_seed(1)
            model = GPT().cuda().eval().to(SETTINGS[row["setting"]])
            row["compile"] = compiled_ms(model, inputs(row["kind"], row["length"], row["batch"], SETTINGS[row["setting"]]),
                                         label)

    lines = []
    for row in rows:
        key = (row["kind"], row["length"], row["setting"], row["batch"])
        ours = kforge.get((*key[:2], "float16io", key[3])) if row["setting"] == "float16" else kforge.get(key)
        f32_io = kforge.get(key) if row["setting"] == "float16" else None
        lines.append([row["kind"], str(row["length"]), str(row["batch"]), row["setting"], ms_cell(ours), ms_cell(f32_io),
                      ms_cell(row["eager"]), ms_cell(row["graph"]), ms_cell(row["compile"]), ratio_cell(ours, row)])
    print_table("median ms per run, GPT-2-small-sized decoder (12 layers, d 768, 12 heads, FFN 3072, vocabulary 50257), "
                "kforge --cuda-graph",
                ["program", "length", "batch", "setting", "kforge", "kforge, float32 I/O", "torch eager",
                 "torch CUDA graph", "torch.compile r-o", "kforge / best torch"], lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
