#!/usr/bin/env python3
"""End-to-end test of multi-kernel dispatch (docs/multi-kernel.md): `kforge compile --multi-kernel-hints`,
build the generated code with the reference kernels, run it at several batch sizes (a dynamic dim, so every
size is a new shape for the dispatchers) and require results identical to the reference interpreter (within
float32's summation bound when the kernel library runs matmul on oneDNN); every variant forced by name agrees; a second process takes its picks from the disk cache and
benchmarks nothing (KFORGE_MULTI_KERNEL_LOG); a corrupt entry is re-benchmarked with a warning.

Usage: test_multikernel.py --build-dir BUILD        (uses a temporary cache directory, never the user's)
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
PROGRAM = HERE / "multikernel" / "mk_mlp.yaml"
CLASS_NAME = "checked_program"
BATCHES = [1, 17, 64, 200]


def run(cmd, env=None):
    r = subprocess.run([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=300, env=env)
    return r


def must(r, what):
    if r.returncode != 0:
        sys.exit(f"FAIL: {what} (exit {r.returncode})\n--- stdout\n{r.stdout}--- stderr\n{r.stderr}")
    return r


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build-dir", required=True)
    args = parser.parse_args()
    build = Path(args.build_dir).resolve()
    kforge = build / "src" / "kforge"
    interp = build / "tools" / "interp" / "kforge-interp"
    kernels = build / "kernels" / "libkforge_kernels.a"
    link_args = (build / "kernels" / "kforge_kernels.link").read_text().split()  # oneDNN, when built with it
    with tempfile.TemporaryDirectory(prefix="kforge-mk-e2e-") as tmp:
        work = Path(tmp)
        cache = work / "cache"
        gen = work / "gen"
        must(run([kforge, "compile", PROGRAM, "-o", gen, "--name", CLASS_NAME, "--target", "cpu", "--trace-hooks",
                  "--ops", ROOT / "kernels/ops.yaml", "--op-compat", ROOT / "kernels/op_compat.yaml",
                  "--multi-kernel-hints", "16,64,256", "--color", "never"]), "kforge compile")
        source = (gen / f"{CLASS_NAME}.cc").read_text()
        for site in ["mk_call_0_matmul", "mk_call_1_softmax", "mk_call_2_matmul"]:
            if f"KFORGE_CALL({site[8]}, {site}(" not in source:
                sys.exit(f"FAIL: the dispatch function does not call {site}")
        if not (gen / "kforge_multikernel.h").is_file():
            sys.exit("FAIL: kforge_multikernel.h is not emitted beside the outputs")
        harness = work / "harness"
        must(run(["g++", "-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror", "-I", gen, "-I", ROOT / "tools" / "interp",
                  f'-DKFORGE_PROGRAM_HEADER="{CLASS_NAME}.h"', f"-DKFORGE_PROGRAM_CLASS={CLASS_NAME}",
                  "-DKFORGE_TRACE_HOOK=kforge_harness_trace", ROOT / "tools/check_program/harness.cc",
                  gen / f"{CLASS_NAME}.cc", kernels, *link_args, "-o", harness, "-pthread"]), "building the generated code")

        env = dict(os.environ, KFORGE_CACHE_DIR=str(cache), KFORGE_MULTI_KERNEL_LOG="1")
        env.pop("KFORGE_MULTI_KERNEL_FORCE", None)
        env.pop("KFORGE_MULTI_KERNEL_BENCHMARK", None)
        env.pop("KFORGE_MULTI_KERNEL_CACHE", None)
        variant_names = set()
        checks = 0
        # The generated variants sum in the reference loops' order, bit for bit. A kernel library built with oneDNN
        # (docs/kernels.md) sums its matmul (the `library` variant, and the interpreter's) in another order: then
        # results agree within float32's bound for K-term sums, 2 * gamma(48) * 48 = 2.7e-4 for h = x w0 (inputs
        # and weights in [-1, 1)), which the softmax (slope <= 1) and y = p w1t (p sums to 1) do not enlarge.
        tolerance = ["--rtol", "1e-4", "--atol", "1e-3"] if link_args else []

        def check(batch, run_env, what):
            nonlocal checks
            inputs, outputs = work / f"in{batch}.bin", work / f"out{batch}.bin"
            if not inputs.exists():
                must(run([interp, PROGRAM, "--seed", batch, "--write-inputs", inputs, "--shape", f"x={batch},48"]),
                     f"interpreter inputs at batch {batch}")
            r = must(run([harness, inputs, outputs], run_env), f"generated code at batch {batch} ({what})")
            c = run([interp, PROGRAM, "--inputs", inputs, "--compare", outputs] + tolerance)
            if c.returncode != 0 or (not tolerance and "identical to the reference interpreter" not in c.stdout):
                sys.exit(f"FAIL: batch {batch} ({what}) differs from the interpreter\n{c.stdout}{c.stderr}")
            checks += 1
            return r.stderr

        # 1. First process per batch: every site benchmarks its new shape and writes the pick.
        for batch in BATCHES:
            log = check(batch, env, "first run")
            picks = re.findall(r"kforge: multi-kernel (\S+) (\S+) -> (\S+) \((.*?)\)", log)
            if len(picks) != 3 or any(p[3] != "benchmarked" for p in picks):
                sys.exit(f"FAIL: batch {batch}: expected 3 benchmarked picks, got:\n{log}")
            for line in log.splitlines():
                variant_names.update(re.findall(r" (\S+)=[0-9.]+us", line))
        # 2. A second process: every pick from the cache, nothing benchmarked.
        for batch in BATCHES:
            log = check(batch, env, "second process")
            picks = re.findall(r"-> \S+ \((.*?)\)", log)
            if len(picks) != 3 or any(p != "from cache" for p in picks):
                sys.exit(f"FAIL: batch {batch}: the second process benchmarked again:\n{log}")
        # 3. Every variant, forced, gives the same bits (cache off so nothing is written).
        for name in sorted(variant_names):
            forced = dict(env, KFORGE_MULTI_KERNEL_FORCE=name, KFORGE_MULTI_KERNEL_CACHE="0")
            log = check(BATCHES[2], forced, f"forced {name}")
            if f"-> {name} (forced)" not in log:
                sys.exit(f"FAIL: forcing {name} did not force it:\n{log}")
        # 4. Benchmarking off on a new shape: nearest hint, nothing written.
        before = sorted(os.listdir(cache / "multi-kernel"))
        log = check(33, dict(env, KFORGE_MULTI_KERNEL_BENCHMARK="0"), "no benchmark")
        if log.count("(nearest hint)") != 3 or sorted(os.listdir(cache / "multi-kernel")) != before:
            sys.exit(f"FAIL: KFORGE_MULTI_KERNEL_BENCHMARK=0:\n{log}")
        # 5. A corrupt entry: one warning, benchmarked again, still identical.
        entry = cache / "multi-kernel" / before[0]
        entry.write_text("kforge-multi-kernel-pick 1\nset 0\n")
        batch = int(re.search(r"-(\d+)x[0-9x]+\.pick$", before[0]).group(1))  # the shape's M is the batch
        log = check(batch, env, "corrupt entry")
        if log.count("kforge: warning: ignoring multi-kernel cache entry") != 1 or "(benchmarked)" not in log:
            sys.exit(f"FAIL: the corrupt entry was not ignored with one warning:\n{log}")
        agree = f"within rtol {tolerance[1]}, atol {tolerance[3]} of" if tolerance else "identical to"
        print(f"PASS: {checks} runs {agree} the reference interpreter; variants {sorted(variant_names)}")


if __name__ == "__main__":
    main()
