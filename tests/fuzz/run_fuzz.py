#!/usr/bin/env python3
"""Runs one libFuzzer target for a fixed time and summarises the run on one line.

The fuzzer starts from the checked-in seeds (--seeds, never written to) and writes what it finds to a work corpus
(--corpus, a temporary directory by default), so a run can continue where an earlier one stopped. Crash, hang
(-timeout), leak and out-of-memory inputs go to --artifacts. Exit status: the fuzzer's (non-zero on any finding).

Usage: run_fuzz.py --fuzzer BUILD/tests/fuzz/fuzz_op_yaml --seeds tests/fuzz/corpus/op_yaml --seconds 30
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

# A single input that takes longer than this is a hang; a process above this RSS is an out-of-memory finding.
HANG_SECONDS = 10
RSS_LIMIT_MB = 2048
# Large enough for the biggest checked-in seed (a PIR JSON program of a few kilobytes) and its mutations; larger
# refdata seeds are cut to it. op_yaml ran 194 executions per second with inputs of up to 64 KiB, 304 with 8 KiB
# (30 s each from the same seeds, one loaded machine): the front ends' bugs are in structure more than in size.
MAX_LEN = 16384


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fuzzer", required=True)
    parser.add_argument("--seeds", required=True)
    parser.add_argument("--seconds", type=int, required=True)
    parser.add_argument("--extra-seeds", action="append", default=[],
                        help="more seed directories, read only, used when they exist (Paddle's refdata)")
    parser.add_argument("--corpus", help="work corpus (kept); a temporary directory when absent")
    parser.add_argument("--artifacts", help="directory for crash/timeout/leak inputs")
    args = parser.parse_args()

    name = Path(args.fuzzer).name.removeprefix("fuzz_")
    seeds = Path(args.seeds)
    if not seeds.is_dir() or not any(seeds.iterdir()):
        print(f"fuzz-{name}: no seeds in {seeds}", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory(prefix=f"kforge-fuzz-{name}-") as scratch:
        corpus = Path(args.corpus) if args.corpus else Path(scratch) / "corpus"
        corpus.mkdir(parents=True, exist_ok=True)
        artifacts = Path(args.artifacts) if args.artifacts else Path(scratch) / "artifacts"
        artifacts.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ)
        # UBSan reports are findings: stop at the first one so that libFuzzer saves the input.
        env.setdefault("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1")
        env.setdefault("ASAN_OPTIONS", "detect_leaks=1")
        # 0 seconds: replay the seeds and the corpus once, without mutating.
        duration = f"-max_total_time={args.seconds}" if args.seconds > 0 else "-runs=0"
        command = [args.fuzzer, duration, f"-timeout={HANG_SECONDS}",
                   f"-rss_limit_mb={RSS_LIMIT_MB}", f"-max_len={MAX_LEN}", "-print_final_stats=1",
                   f"-artifact_prefix={artifacts}/", str(corpus), str(seeds)]
        command += [d for d in args.extra_seeds if Path(d).is_dir()]
        run = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             errors="replace")
        log = run.stdout
        executions = re.findall(r"stat::number_of_executed_units:\s*(\d+)", log)
        corp = re.findall(r"corp: (\d+)/", log)
        seed_count = sum(1 for p in seeds.iterdir() if p.is_file())
        if run.returncode != 0:
            print(log[-20000:])
            found = sorted(str(p) for p in artifacts.iterdir())
            print(f"fuzz-{name}: FINDING (exit {run.returncode}); inputs: {' '.join(found) or 'none saved'}")
            return 1
        what = f"in {args.seconds} s" if args.seconds > 0 else "replaying the seeds and the corpus"
        print(f"fuzz-{name}: {executions[-1] if executions else '?'} executions {what}, "
              f"{seed_count} seeds, corpus {corp[-1] if corp else '?'}, no findings")
    return 0


if __name__ == "__main__":
    sys.exit(main())
