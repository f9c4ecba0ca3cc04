#!/usr/bin/env python3
"""Dispatch benchmark: CPU time per dispatched op of the code `kforge compile` generates against the reference
interpreter (tools/interp/, an executor: lookup by op name, attribute maps, infer_meta and allocation per op),
in the same run, on the same machine, on the same inputs.

    bench/dispatch/run.py [--build-dir BUILD] [--runs N] [--repeat R]

For each program, tools/check-program first proves that the generated code and the interpreter agree, then
both run the program N times in a loop (after a warm-up), alternating, R times; the median of the R
repetitions is reported. Times are CPU time of the running thread (time spent descheduled on a busy machine
does not count). ns/op is the time of one run divided by the number of kernel calls.
"""

import argparse
import os
import platform
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent

PROGRAMS = [
    ("single add, 1-element tensors", HERE / "add1.yaml", 2_000_000, 50_000),
    ("20-op elementwise chain, 1-element tensors", HERE / "chain20.yaml", 200_000, 5_000),
    ("MLP (9 ops), batch 1, width 4", HERE / "mlp_tiny.yaml", 200_000, 5_000),
    ("MLP (9 ops), tests/e2e/programs/mlp.yaml: 4x64 -> 128 -> 64 -> 10", ROOT / "tests" / "e2e" / "programs" / "mlp.yaml",
     5_000, 1_000),
]


def run(cmd):
    r = subprocess.run([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit(f"failed: {' '.join(map(str, cmd))}\n{r.stdout}{r.stderr}")
    return r.stdout


def per_op(text, who):
    """(ops, ns per run, ns per op) from a harness or kforge-interp --bench line."""
    m = re.search(who + r": (\d+) ops, ([\d.]+) ns per run, ([\d.]+) ns per op", text)
    if not m:
        sys.exit(f"cannot parse benchmark output:\n{text}")
    return int(m.group(1)), float(m.group(2)), float(m.group(3))


def cpu_name():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build-dir", default=os.environ.get("KFORGE_BUILD_DIR", str(ROOT / "build")))
    parser.add_argument("--scale", type=float, default=1.0, help="multiply the run counts (e.g. 0.1 for a quick look)")
    parser.add_argument("--repeat", type=int, default=5, help="repetitions; the median is reported")
    args = parser.parse_args()
    build = Path(args.build_dir).resolve()
    interp = build / "tools" / "interp" / "kforge-interp"

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, program, gen_runs, interp_runs in PROGRAMS:
            work = Path(tmp) / program.stem
            out = run([sys.executable, ROOT / "tools" / "check-program", program, "--build-dir", build,
                       "--work-dir", work])
            if "identical to the reference interpreter" not in out:
                sys.exit(f"{program}: generated code and interpreter disagree:\n{out}")
            gen_n = max(1, int(gen_runs * args.scale))
            int_n = max(1, int(interp_runs * args.scale))
            gen, inter = [], []
            for _ in range(args.repeat):
                gen.append(per_op(run([work / "harness", work / "inputs.bin", work / "bench_out.bin", "--bench", gen_n]),
                                  "generated"))
                inter.append(per_op(run([interp, program, "--inputs", work / "inputs.bin", "--bench", int_n]),
                                    "interpreter"))
            g = sorted(gen, key=lambda r: r[2])[len(gen) // 2]
            i = sorted(inter, key=lambda r: r[2])[len(inter) // 2]
            rows.append((label, g[0], g[2], i[2], i[2] / g[2], g[1], i[1]))

    print(f"machine: {cpu_name()}, {os.cpu_count()} cores, {platform.system()} {platform.release()}; "
          f"g++ -O2 (generated code), meson debugoptimized (interpreter, kernels)")
    print()
    print("| program | ops | generated ns/op | interpreter ns/op | ratio | generated ns/run | interpreter ns/run |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for label, ops, g, i, ratio, g_run, i_run in rows:
        print(f"| {label} | {ops} | {g:.1f} | {i:.1f} | {ratio:.1f}× | {g_run:.0f} | {i_run:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
