#!/usr/bin/env python3
"""Torch half of bench/transformers/run.sh: torch's nn.TransformerEncoder in the configuration of export.py's BERT-base
encoder (12 post-norm layers, d_model 768, 12 heads, FFN 3072, gelu, dropout 0, batch_first, eval, no_grad: torch's
fused inference fast path), random weights, x uniform in [-1, 1), timed eager, as a CUDA graph captured by hand
(torch.cuda.CUDAGraph) and through torch.compile(mode="reduce-overhead", dynamic=False) while the compile budget lasts,
in four settings: float32 with TF32 off (torch.backends.cuda.matmul.allow_tf32 False, the default), float32 with TF32
on, and the model in float16 and bfloat16 (model.half() / .bfloat16()). Each timed run: a host clock around model(x)
(or graph.replay()) and torch.cuda.synchronize(); median of 50 after 10 warm-ups, as timing_harness.cu does for
kforge. Prints one table with kforge's timings (--kforge: lines `MODEL SETTING BATCH MEDIAN_MS MIN_MS`, SETTING
float32, tf32, float16 or bfloat16) and the ratio kforge / best torch."""
import argparse
import sys
import time

from pathlib import Path

import torch
import torch.nn as nn

# timed() and graphed(): the vision benchmark's, so that both measure the same way.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "cuda_models"))
from torch_bench import compiled_ms, graphed, ms_cell, print_table, ratio_cell, timed  # noqa: E402

D_MODEL, HEADS, FFN, LAYERS = 768, 12, 3072, 12
SETTINGS = {"float32": torch.float32, "tf32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


def encoder(dtype):
    layer = nn.TransformerEncoderLayer(D_MODEL, HEADS, FFN, dropout=0.0, activation="gelu", batch_first=True,
                                       norm_first=False)
    return nn.TransformerEncoder(layer, LAYERS, enable_nested_tensor=False).cuda().eval().to(dtype)


def set_tf32(setting):
    torch.backends.cuda.matmul.allow_tf32 = setting == "tf32"


def read_kforge(path):
    out = {}
    with open(path) as f:
        for line in f:
            model, setting, batch, median, _ = line.split()
            if model.startswith("bert_s"):  # (the GPT cells are torch_gpt.py's)
                out[(int(model.removeprefix("bert_s")), setting, int(batch))] = float(median)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kforge", required=True)
    ap.add_argument("--seqs", nargs="+", type=int, required=True)
    ap.add_argument("--batches", nargs="+", type=int, required=True)
    ap.add_argument("--no-torch-compile", action="store_true")
    ap.add_argument("--elapsed", type=float, default=0.0, help="seconds the run had taken before this script")
    ap.add_argument("--compile-budget", type=float, default=420.0,
                    help="no torch.compile starts after this many seconds of the whole run")
    args = ap.parse_args()
    start = time.time() - args.elapsed
    torch.backends.cudnn.benchmark = True
    print(f"torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, {torch.cuda.get_device_name()}")
    kforge = read_kforge(args.kforge)
    rows = []
    with torch.no_grad():
        for setting, dtype in SETTINGS.items():
            set_tf32(setting)
            model = encoder(dtype)
            for seq in args.seqs:
                for batch in args.batches:
                    x = torch.empty(batch, seq, D_MODEL, device="cuda").uniform_(-1, 1).to(dtype)
                    row = {"seq": seq, "batch": batch, "setting": setting, "eager": timed(lambda: model(x)),
                           "graph": timed(graphed(model, x)), "compile": None}
                    print(f"torch {setting} S={seq} batch {batch}: eager {row['eager']:.3f} ms, "
                          f"CUDA graph {row['graph']:.3f} ms", flush=True)
                    rows.append(row)
            del model
        # The compiles last, 16-bit first (the headline targets), while the budget lasts.
        order = sorted(rows, key=lambda r: (r["setting"] not in ("float16", "bfloat16"), r["seq"], r["batch"]))
        for row in order if not args.no_torch_compile else []:
            label = f"torch.compile {row['setting']} S={row['seq']} batch {row['batch']}"
            if time.time() - start > args.compile_budget:
                print(f"{label}: skipped (the run is past {args.compile_budget:.0f} s)")
                continue
            set_tf32(row["setting"])
            x = torch.empty(row["batch"], row["seq"], D_MODEL, device="cuda").uniform_(-1, 1).to(SETTINGS[row["setting"]])
            row["compile"] = compiled_ms(encoder(SETTINGS[row["setting"]]), [x], label)

    lines = []
    for row in rows:
        ours = kforge.get((row["seq"], row["setting"], row["batch"]))
        lines.append([str(row["seq"]), str(row["batch"]), row["setting"], ms_cell(ours), ms_cell(row["eager"]),
                      ms_cell(row["graph"]), ms_cell(row["compile"]), ratio_cell(ours, row)])
    print_table("median ms per run, BERT-base encoder (12 layers, d 768, 12 heads, FFN 3072), kforge --cuda-graph",
                ["S", "batch", "setting", "kforge", "torch eager", "torch CUDA graph", "torch.compile r-o",
                 "kforge / best torch"], lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
