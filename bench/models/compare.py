"""Whole-model CPU comparison, one run: kforge's generated code against Paddle's predictor (oneDNN) and ONNX
Runtime on the same model and input, each engine in its own process (bench/models/worker.cc, engine.py), timed in
interleaved rounds (each round runs every engine K times, in a rotating order) so that the shared machine's load
falls on all of them alike. Reports the median process CPU time per inference and the ratios.

    compare.py MODEL_DIR --kforge WORKER [--kforge-no-fuse WORKER] [--kforge-reference WORKER] [--rounds R]
               [--per-round K] [--threads N]
"""
import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np


class Engine:
    def __init__(self, name, cmd):
        self.name = name
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.times = []
        if self.proc.stdout.readline().strip() != "ready":
            sys.exit(f"{name}: did not start ({' '.join(map(str, cmd))})")

    def ask(self, line):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        answer = self.proc.stdout.readline()
        if not answer:
            sys.exit(f"{self.name}: exited")
        return answer.strip()

    def close(self):
        self.proc.stdin.write("quit\n")
        self.proc.stdin.close()
        self.proc.wait()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("model_dir", type=Path)
    parser.add_argument("--kforge", required=True, help="worker built against the oneDNN kernel library")
    parser.add_argument("--kforge-reference", help="worker built against the reference-only kernel library")
    parser.add_argument("--kforge-no-fuse", help="worker of the code compiled with --no-fuse")
    parser.add_argument("--kforge-nchw", help="worker of the code compiled with --layout nchw")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--per-round", type=int, default=5)
    parser.add_argument("--reference-per-round", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    here = Path(__file__).resolve().parent
    bundle = args.model_dir / "bundle.kftb"
    threads = str(args.threads)
    specs = [
        ("kforge", [args.kforge, bundle, "--threads", threads]),
        ("kforge, filters not declared", [args.kforge, bundle, "--threads", threads, "--no-declare"]),
        ("paddle (oneDNN)", [sys.executable, here / "engine.py", "paddle", args.model_dir, threads]),
        ("onnxruntime", [sys.executable, here / "engine.py", "ort", args.model_dir, threads]),
    ]
    if args.kforge_no_fuse:
        specs.insert(2, ("kforge --no-fuse", [args.kforge_no_fuse, bundle, "--threads", threads]))
    if args.kforge_nchw:
        specs.insert(1, ("kforge --layout nchw", [args.kforge_nchw, bundle, "--threads", threads]))
    if args.kforge_reference:
        specs.append(("kforge, reference kernels", [args.kforge_reference, bundle]))
    engines = [Engine(name, cmd) for name, cmd in specs]

    # Same answer? Paddle's predictor is the oracle.
    with tempfile.TemporaryDirectory() as tmp:
        outputs = {}
        for e in engines:
            path = Path(tmp) / "out.bin"
            e.ask(f"out {path}")
            outputs[e.name] = np.fromfile(path, dtype=np.float32)
    oracle = outputs["paddle (oneDNN)"]
    print(f"model {args.model_dir.name}, {args.threads} thread(s), {args.rounds} rounds")
    for name, y in outputs.items():
        diff = float(np.max(np.abs(y - oracle))) if y.shape == oracle.shape else float("inf")
        print(f"  {name:32s} max |out - paddle| = {diff:.3g} (max |paddle| = {float(np.max(np.abs(oracle))):.3g})")

    for r in range(args.rounds):
        order = engines[r % len(engines):] + engines[:r % len(engines)]
        for e in order:
            n = args.reference_per_round if e.name.endswith("reference kernels") else args.per_round
            e.times += [float(t) for t in e.ask(f"time {n}").split()]
    for e in engines:
        e.close()

    med = {e.name: statistics.median(e.times) for e in engines}
    print(f"\n| engine | median CPU ms / inference | runs | vs onnxruntime | vs paddle |")
    print("|---|---:|---:|---:|---:|")
    for e in engines:
        m = med[e.name]
        print(f"| {e.name} | {m:.3f} | {len(e.times)} | {m / med['onnxruntime']:.2f}x | "
              f"{m / med['paddle (oneDNN)']:.2f}x |")


if __name__ == "__main__":
    main()
