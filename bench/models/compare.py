"""Whole-model CPU comparison, one run: kforge's generated code against Paddle's predictor (oneDNN) and ONNX
Runtime on the same model and inputs, each engine in its own process (bench/models/worker.cc, engine.py), at one or
more thread counts, timed in interleaved rounds (each round runs every engine K times, in a rotating order) so that
the shared machine's load falls on all of them alike. A round's figure for an engine is its mean process CPU time per
inference over K runs (at two threads the sum of both threads'; K sized so that the K runs take --batch-ms). Reports
per engine the minimum and the median of its rounds' figures, and kforge's ratios to the peers: minimum over minimum,
and as spread the range over the rounds of the ratio of the two engines' figures in that round.

    compare.py MODEL_DIR --kforge WORKER [--kforge-nchw WORKER] [--kforge-no-fuse WORKER]
               [--kforge-reference WORKER] [--kforge-before WORKER] [--undeclared] [--rounds R] [--per-round K]
               [--batch-ms MS] [--threads N[,N...]]
               [--json FILE] [--no-paddle]

--undeclared: also kforge with its filters not declared constant to the kernel library.
--kforge-before: another build's worker of the model, timed in the same rounds (a change's before / after; kforge's
ratio to it, and whether their outputs are bitwise equal).
--no-paddle: Paddle's predictor not run (kforge against ONNX Runtime only; the oracle is then ONNX Runtime).
--json: appends one JSON line per thread count (model, engines' times, ratios, spreads) for table.py.
An engine that does not start or answer (an export ONNX Runtime or Paddle cannot run) is reported and left out.
"""
import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

PEERS = {"onnxruntime": "ort", "paddle (oneDNN)": "paddle", "kforge before": "before"}


class Engine:
    def __init__(self, name, threads, cmd):
        self.name, self.threads = name, threads
        self.rounds = []  # the samples of each round
        self.per_round = 1
        self.proc = subprocess.Popen([str(c) for c in cmd], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, bufsize=1)
        self.ok = self.proc.stdout.readline().strip() == "ready"
        if not self.ok:
            print(f"  {name}, {threads} thread(s): did not start ({' '.join(map(str, cmd))})", flush=True)
            self.proc.kill()

    def ask(self, line):
        try:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
            answer = self.proc.stdout.readline()
        except BrokenPipeError:
            answer = ""
        if not answer:
            print(f"  {self.name}, {self.threads} thread(s): exited", flush=True)
            self.ok = False
        return answer.strip()

    def close(self):
        if self.ok:
            self.proc.stdin.write("quit\n")
            self.proc.stdin.close()
        self.proc.wait()

    def samples(self):
        return [t for r in self.rounds for t in r]

    def means(self):
        return [statistics.fmean(r) for r in self.rounds]


def ratio_spread(a, b):
    """kforge's minimum round mean over the peer's, and the range of the per-round ratios of the means."""
    per_round = [x / y for x, y in zip(a.means(), b.means())]
    return min(a.means()) / min(b.means()), min(per_round), max(per_round)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("model_dir", type=Path)
    parser.add_argument("--kforge", required=True, help="worker built against the oneDNN kernel library")
    parser.add_argument("--kforge-reference", help="worker built against the reference-only kernel library")
    parser.add_argument("--kforge-no-fuse", help="worker of the code compiled with --no-fuse")
    parser.add_argument("--kforge-nchw", help="worker of the code compiled with --layout nchw")
    parser.add_argument("--kforge-before", help="another build's worker of the same model (a before / after run)")
    parser.add_argument("--undeclared", action="store_true", help="also kforge with filters not declared constant")
    parser.add_argument("--no-paddle", action="store_true",
                        help="leave Paddle's predictor out (its start-up and rounds are a third of a zoo run)")
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--per-round", type=int, default=5, help="runs per engine per round, at least")
    parser.add_argument("--batch-ms", type=float, default=100.0,
                        help="more runs per round where K runs take less CPU time than this")
    parser.add_argument("--reference-per-round", type=int, default=1)
    parser.add_argument("--threads", default="1", help="thread counts, comma-separated")
    parser.add_argument("--json", type=Path, help="append the results here, one JSON line per thread count")
    args = parser.parse_args()
    here = Path(__file__).resolve().parent
    bundle = args.model_dir / "bundle.kftb"
    thread_counts = [int(t) for t in args.threads.split(",")]
    engines = []
    for threads in thread_counts:
        t = str(threads)
        specs = [("kforge", [args.kforge, bundle, "--threads", t])]
        if args.kforge_before:
            specs.append(("kforge before", [args.kforge_before, bundle, "--threads", t]))
        if args.kforge_nchw:
            specs.append(("kforge --layout nchw", [args.kforge_nchw, bundle, "--threads", t]))
        if args.undeclared:
            specs.append(("kforge, filters not declared", [args.kforge, bundle, "--threads", t, "--no-declare"]))
        if args.kforge_no_fuse:
            specs.append(("kforge --no-fuse", [args.kforge_no_fuse, bundle, "--threads", t]))
        if not args.no_paddle:
            specs.append(("paddle (oneDNN)", [sys.executable, here / "engine.py", "paddle", args.model_dir, t]))
        if (args.model_dir / "model.onnx").exists():  # paddle2onnx converts not every export
            specs.append(("onnxruntime", [sys.executable, here / "engine.py", "ort", args.model_dir, t]))
        if args.kforge_reference and threads == 1:
            specs.append(("kforge, reference kernels", [args.kforge_reference, bundle]))
        engines += [Engine(name, threads, cmd) for name, cmd in specs]

    # Same answer? Paddle's predictor is the oracle (ONNX Runtime where Paddle did not run).
    print(f"model {args.model_dir.name}, threads {args.threads}, {args.rounds} rounds of {args.per_round}")
    with tempfile.TemporaryDirectory() as tmp:
        outputs = {}
        for e in [e for e in engines if e.ok]:
            path = Path(tmp) / "out.bin"
            if e.ask(f"out {path}"):
                outputs[(e.name, e.threads)] = np.fromfile(path, dtype=np.float32)
    oracles = [y for (name, _), y in outputs.items() if name in PEERS and name != "kforge before"]
    if oracles:
        oracle = oracles[0]
        before = outputs.get(("kforge before", thread_counts[0]))
        if before is not None and not np.array_equal(before, outputs.get(("kforge", thread_counts[0]))):
            print("  kforge differs from kforge before")
        for (name, threads), y in outputs.items():
            diff = float(np.max(np.abs(y - oracle))) if y.shape == oracle.shape else float("inf")
            print(f"  {name:32s} {threads} thread(s): max |out - peer| = {diff:.3g} "
                  f"(max |peer| = {float(np.max(np.abs(oracle))):.3g})")
        for threads in thread_counts[1:]:  # kforge's results are the same for every thread count
            a, b = outputs.get(("kforge", thread_counts[0])), outputs.get(("kforge", threads))
            if a is not None and b is not None and not np.array_equal(a, b):
                print(f"  kforge at {threads} threads differs from {thread_counts[0]} thread(s)")

    # Each round's figure is an engine's mean over its K runs: process CPU time counts another thread's time only
    # up to that thread's last scheduler update (a tick), so at 2 threads one short run can be under-counted by up
    # to a tick, and only the sum over K runs of at least --batch-ms is accurate. K: at least --per-round.
    for e in [e for e in engines if e.ok]:
        t = min(float(v) for v in e.ask("time 3").split() or ["inf"]) if e.ok else 0
        n = args.reference_per_round if e.name.endswith("reference kernels") else args.per_round
        e.per_round = max(n, min(1000, int(args.batch_ms / max(t, 1e-3)) + 1)) if n > 1 else n
    for r in range(args.rounds):
        order = engines[r % len(engines):] + engines[:r % len(engines)]
        for e in order:
            if not e.ok:
                continue
            answer = e.ask(f"time {e.per_round}")
            if e.ok:
                e.rounds.append([float(t) for t in answer.split()])
    for e in engines:
        e.close()

    print("\n| engine | threads | CPU ms / inference, min of rounds | median of rounds | runs | vs onnxruntime "
          "(rounds) | vs paddle (rounds) | vs kforge before (rounds) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for threads in thread_counts:
        group = {e.name: e for e in engines if e.threads == threads and e.ok and len(e.rounds) == args.rounds}
        record = {"model": args.model_dir.name, "threads": threads, "rounds": args.rounds,
                  "per_round": args.per_round}
        for name, e in group.items():
            cells = []
            for peer in PEERS:
                if peer in group and peer != name:
                    ratio, lo, hi = ratio_spread(e, group[peer])
                    cells.append(f"{ratio:.2f}x ({lo:.2f}-{hi:.2f})")
                    if name == "kforge":
                        record[f"vs_{PEERS[peer]}"] = [ratio, lo, hi]
                else:
                    cells.append("")
            m = e.means()
            print(f"| {name} | {threads} | {min(m):.3f} | {statistics.median(m):.3f} | {len(e.samples())} | "
                  f"{' | '.join(cells)} |")
            record[name] = {"min": min(m), "median": statistics.median(m), "runs": len(e.samples()),
                            "per_round": e.per_round}
        if args.json:
            with open(args.json, "a") as f:
                f.write(json.dumps(record) + "\n")


if __name__ == "__main__":
    main()
