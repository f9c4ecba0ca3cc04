#!/usr/bin/env python3
"""Times kforge's fused CUDA kernels (the bench_driver binaries that run.sh builds) side by side with torch eager
and torch.compile on the same GPU, in the same run: CUDA events around --batch back-to-back calls (per call),
warm-up, median of RUNS samples. Also measures a
device-to-device copy (bytes read + written) and reports each case's fraction of that bandwidth (minimum bytes:
every input read once, every output written once). The 20-tiny-ops case is timed end to end with a sync on the
host clock (kforge with --cuda-graph; torch.compile with mode="reduce-overhead", i.e. CUDA graphs).

Usage: bench.py --bin BUILD/fusion-bench [--runs N] [--batch B] [--json OUT.json] [CASE...]
"""
import argparse
import json
import subprocess
import sys
import time

import torch
import torch.nn.functional as F

GELU_SQRT_HALF = 0.7071067811865476


def chain8(x, y):
    h0 = x * 1.5 + 0.25
    h1 = torch.relu(h0)
    h2 = h1 + y
    h3 = h2 * y
    h4 = torch.tanh(h3)
    h5 = torch.sigmoid(h2)
    return torch.maximum(h4 - h5, y)


def bias_gelu(x, b):
    return F.gelu(x + b)


def softmax(x):
    return torch.softmax(x, dim=-1)


def layer_norm(x, g, b):
    return F.layer_norm(x, (x.shape[-1],), g, b, 1e-5)


def tiny20(x, y):
    h = x
    for _ in range(4):
        h = h * 1.01 + 0.01
        h = torch.relu(h)
        h = h + x
        h = h * y
        h = torch.tanh(h)
    return h


# name: (function, input shapes, minimum bytes moved, timing mode)
CASES = {
    "chain8": (chain8, [(8192, 8192), (8192, 8192)], 3 * 8192 * 8192 * 4, "events"),
    "bias_gelu": (bias_gelu, [(8192, 8192), (8192,)], (2 * 8192 * 8192 + 8192) * 4, "events"),
    "softmax": (softmax, [(8192, 4096)], 2 * 8192 * 4096 * 4, "events"),
    "layer_norm": (layer_norm, [(8192, 4096), (4096,), (4096,)], (2 * 8192 * 4096 + 2 * 4096) * 4, "events"),
    "tiny20": (tiny20, [(32, 32), (32, 32)], 3 * 32 * 32 * 4, "sync"),
}


def median(values):
    values = sorted(values)
    return values[len(values) // 2]


def time_events(fn, runs, batch=1, warmup=10):
    """Median over `runs` samples of `batch` back-to-back calls between two CUDA events, per call. With batch
    > 1 the host's launch overhead overlaps the device work (as in a real pipeline); with batch 1 a call whose
    host side is slower than its kernels shows that overhead too."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        for _ in range(batch):
            fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) / batch)
    return median(times)


def time_sync(fn, runs, warmup=50):
    for _ in range(warmup):
        fn()
        torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - start) * 1e3)
    return median(times)


def copy_bandwidth(runs):
    n = 1 << 28  # 1 GiB of float32
    src = torch.rand(n, device="cuda")
    dst = torch.empty_like(src)
    ms = time_events(lambda: dst.copy_(src), runs, batch=10)
    return 2 * n * 4 / (ms * 1e-3)


def kforge_time(binary, name, shapes, mode, runs, batch):
    cmd = [binary, name, "--mode", mode, "--runs", str(runs), "--batch", str(batch)]
    for s in shapes:
        cmd += ["--input", ",".join(str(d) for d in s)]
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{out.stdout}")
    fields = out.stdout.split()
    return float(fields[fields.index("median_ms") + 1])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--batch", type=int, default=10, help="calls per timed sample (events mode)")
    parser.add_argument("--json")
    parser.add_argument("cases", nargs="*")
    args = parser.parse_args()
    torch.manual_seed(0)
    props = torch.cuda.get_device_properties(0)
    print(f"device: {props.name}, {props.multi_processor_count} SMs, torch {torch.__version__}")
    bw = copy_bandwidth(args.runs)
    print(f"device-to-device copy: {bw / 1e12:.2f} TB/s (read + write)")
    rows = []
    for name in args.cases or CASES:
        fn, shapes, nbytes, mode = CASES[name]
        inputs = [torch.rand(s, device="cuda") * 4 - 2 for s in shapes]
        batch = args.batch if mode == "events" else 1
        timer = (lambda f, r: time_events(f, r, batch)) if mode == "events" else time_sync
        eager = timer(lambda: fn(*inputs), args.runs)
        compiled_fn = torch.compile(fn, mode="reduce-overhead" if mode == "sync" else None)
        compiled = timer(lambda: compiled_fn(*inputs), args.runs)
        kforge = kforge_time(f"{args.bin}/{name}", name, shapes, mode, args.runs, batch)
        frac = nbytes / (kforge * 1e-3) / bw
        rows.append({"case": name, "mode": mode, "kforge_ms": kforge, "eager_ms": eager, "compile_ms": compiled,
                     "ratio_to_compile": kforge / compiled, "copy_fraction": frac})
        print(f"{name}: kforge {kforge:.4f} ms, eager {eager:.4f} ms, torch.compile {compiled:.4f} ms", flush=True)
    print()
    print("| case | timing | kforge | torch eager | torch.compile | kforge / torch.compile | of copy bandwidth |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        unit = 1e3 if r["mode"] == "sync" else 1.0
        u = "µs" if r["mode"] == "sync" else "ms"
        timing = "host, run + sync" if r["mode"] == "sync" else "CUDA events"
        print(f"| {r['case']} | {timing} | {r['kforge_ms'] * unit:.3f} {u} | {r['eager_ms'] * unit:.3f} {u} | "
              f"{r['compile_ms'] * unit:.3f} {u} | {r['ratio_to_compile']:.2f}x | "
              f"{'-' if r['mode'] == 'sync' else format(r['copy_fraction'] * 100, '.0f') + ' %'} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": props.name, "copy_bytes_per_s": bw, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
