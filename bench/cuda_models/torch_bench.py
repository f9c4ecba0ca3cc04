#!/usr/bin/env python3
"""Torch half of bench/cuda_models/run.sh: times torchvision's resnet18, resnet50 and mobilenet_v2 (eval, float32,
NCHW, random weights, 224x224) on the GPU -- eager, a CUDA graph captured by hand (torch.cuda.CUDAGraph), and
torch.compile(mode="reduce-overhead") unless --no-torch-compile or the time budget is spent -- then prints one table
with kforge's timings (--kforge: lines `MODEL VARIANT BATCH MEDIAN_MS MIN_MS` from timing_harness, VARIANT plain,
graph, graph_nchw, graph_fp16, graph_bf16, plain_fp16).

16-bit (when kforge's timings have graph_fp16 lines): the same models as model.half() in channels_last memory
format (the layout torch's docs recommend for float16 convolutions on tensor cores), eager, a CUDA graph, and
torch.compile(mode="reduce-overhead") while the budget lasts, in a second table against kforge --precision.

Settings as torch's defaults for inference: cudnn.benchmark on, TF32 allowed for convolutions
(cudnn.allow_tf32, the default), float32 matmuls (cuda.matmul.allow_tf32 False, the default), torch.no_grad().
Each timed run: a host clock around model(x) (or graph.replay()) and torch.cuda.synchronize(); median of 50 after
10 warm-ups, as timing_harness.cu does for kforge."""
import argparse
import statistics
import sys
import time

import torch
import torchvision

WARMUP, TIMED = 10, 50


def timed(fn):
    for _ in range(WARMUP):
        fn()
    torch.cuda.synchronize()
    ms = []
    for _ in range(TIMED):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        ms.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(ms)


def graphed(model, *xs):
    """model(*xs) captured as a CUDA graph on static inputs (warmed up on a side stream first, as torch's docs do)."""
    static = [x.clone() for x in xs]
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            model(*static)
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        model(*static)
    return graph.replay


def compiled_ms(model, xs, label):
    """torch.compile(mode="reduce-overhead", dynamic=False) of `model` on inputs xs: its median ms, or None when it
    fails; one line printed either way (`label: ...`)."""
    torch._dynamo.reset()
    compiled = torch.compile(model, mode="reduce-overhead", dynamic=False)
    t0 = time.time()
    try:
        for _ in range(3):  # compiles, then records the CUDA graph
            compiled(*xs)
        torch.cuda.synchronize()
        took = time.time() - t0
        ms = timed(lambda: compiled(*xs))
    except Exception as e:  # noqa: BLE001 -- the table is still printed without this cell
        print(f"{label}: failed: {type(e).__name__}: {e}")
        return None
    print(f"{label}: {ms:.3f} ms (compiled in {took:.0f} s)", flush=True)
    return ms


def ms_cell(v):
    """A table cell: milliseconds to 3 places, or '-' for none."""
    return f"{v:.3f}" if v is not None else "-"


def ratio_cell(ours, row):
    """kforge's time over the best of the row's torch times (eager, graph, compile), or '-'."""
    best = min(v for v in (row["eager"], row["graph"], row["compile"]) if v is not None)
    return f"{ours / best:.2f}" if ours is not None else "-"


def print_table(title, header, lines):
    """A markdown table after a title line: the header and one row of cells (strings) per line."""
    print(f"\n{title}\n")
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    for cells in lines:
        print("| " + " | ".join(cells) + " |")


def read_kforge(path):
    out = {}
    with open(path) as f:
        for line in f:
            model, variant, batch, median, _ = line.split()
            out[(model, variant, int(batch))] = float(median)
    return out


def time_torch(name, batches, dtype):
    """Rows of torch timings for one model: eager and a CUDA graph per batch (compile: compile_time)."""
    rows = []
    fmt = torch.channels_last if dtype == torch.float16 else torch.contiguous_format
    model = getattr(torchvision.models, name)().cuda().eval().to(dtype=dtype, memory_format=fmt)
    for batch in batches:
        x = torch.empty(batch, 3, 224, 224, device="cuda").uniform_(-1, 1).to(dtype=dtype, memory_format=fmt)
        eager = timed(lambda: model(x))
        graph = timed(graphed(model, x))
        rows.append({"model": name, "batch": batch, "eager": eager, "graph": graph, "compile": None})
        print(f"torch {name} {dtype} batch {batch}: eager {eager:.3f} ms, CUDA graph {graph:.3f} ms", flush=True)
    return rows


def compile_time(name, batch, dtype):
    """torch.compile(mode="reduce-overhead") of the model in `dtype`: its median ms, or None when it fails."""
    fmt = torch.channels_last if dtype == torch.float16 else torch.contiguous_format
    model = getattr(torchvision.models, name)().cuda().eval().to(dtype=dtype, memory_format=fmt)
    x = torch.empty(batch, 3, 224, 224, device="cuda").uniform_(-1, 1).to(dtype=dtype, memory_format=fmt)
    return compiled_ms(model, [x], f"torch.compile {name} {dtype} batch {batch}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kforge", required=True)
    ap.add_argument("--models", nargs="+", required=True)
    ap.add_argument("--batches", nargs="+", type=int, required=True)
    ap.add_argument("--no-torch-compile", action="store_true")
    ap.add_argument("--elapsed", type=float, default=0.0, help="seconds the run had taken before this script")
    ap.add_argument("--compile-budget", type=float, default=270.0,
                    help="no torch.compile starts after this many seconds of the whole run")
    args = ap.parse_args()
    start = time.time() - args.elapsed
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = True  # the default, said here
    torch.backends.cuda.matmul.allow_tf32 = False  # the default, said here
    print(f"torch {torch.__version__}, torchvision {torchvision.__version__}, cuDNN {torch.backends.cudnn.version()}, "
          f"{torch.cuda.get_device_name()}")
    kforge = read_kforge(args.kforge)
    rows, half_rows = [], []
    half = any(variant == "graph_fp16" for (_, variant, _) in kforge)
    with torch.no_grad():
        # float32 first for every model (eager and graphs), then the compiles in the order of the rows.
        for name in args.models:
            rows += time_torch(name, args.batches, torch.float32)
        for name in args.models if half else []:
            half_rows += time_torch(name, args.batches, torch.float16)
        for row in rows + half_rows if not args.no_torch_compile else []:
            dtype = torch.float16 if any(row is h for h in half_rows) else torch.float32
            if time.time() - start > args.compile_budget:
                print(f"torch.compile {row['model']} {dtype} batch {row['batch']}: skipped (the run is past "
                      f"{args.compile_budget:.0f} s)")
                continue
            row["compile"] = compile_time(row["model"], row["batch"], dtype)

    def table(title, header, rows, variants):
        """One markdown table: kforge's three `variants` (the ratio uses the second), then torch's columns."""
        def cell(v):
            return f"{v:.3f}" if v is not None else "-"
        print(f"\n{title}\n")
        print("| " + " | ".join(header) + " |")
        print("|" + "|".join("---" for _ in header) + "|")
        for row in rows:
            name, batch = row["model"], row["batch"]
            ours = [kforge.get((name, v, batch)) for v in variants]
            best = min(v for v in (row["eager"], row["graph"], row["compile"]) if v is not None)
            ratio = f"{ours[1] / best:.2f}" if ours[1] is not None else "-"
            print(f"| {name} | {batch} | " + " | ".join(cell(v) for v in ours) +
                  f" | {cell(row['eager'])} | {cell(row['graph'])} | {cell(row['compile'])} | {ratio} |")

    table("median ms per run (batch of 224x224 images, float32, TF32 convolutions)",
          ["model", "batch", "kforge", "kforge --cuda-graph", "kforge --cuda-graph --layout nchw", "torch eager",
           "torch CUDA graph", "torch.compile r-o", "kforge-graph / best torch"], rows, ["plain", "graph", "graph_nchw"])
    if half_rows:
        table("median ms per run, 16-bit (kforge --precision float16 / bfloat16; torch model.half(), channels_last)",
              ["model", "batch", "kforge fp16", "kforge --cuda-graph fp16", "kforge --cuda-graph bf16",
               "torch fp16 eager", "torch fp16 CUDA graph", "torch.compile r-o fp16",
               "kforge-graph fp16 / best torch fp16"], half_rows, ["plain_fp16", "graph_fp16", "graph_bf16"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
