#!/usr/bin/env python3
"""`kforge ops` on Paddle's 9 op files + op_compat.yaml, and every generated .cc compiled warning-free.

The 9 files are those Paddle's PIR generator reads (ops.yaml, and backward, fused_ops, fused_backward,
static_ops, static_backward, update_ops, sparse_ops, sparse_backward from yaml/; the two sparse ones with
--sparse-ops). Generates the library in 8 shards, then compiles each .cc with `g++ -std=c++17 -Wall
-Wextra -Werror -c` against the generated <P>_decls.h and kforge_runtime.h (nothing else on the include
path), several at a time. Also checks that every op of every file either has its function in <P>_api.h
or is listed there as not generated with a reason (sparse ops by their name plus `_sp`): no op
disappears silently.

Reads ../shared/refdata/paddle (or --refdata); exits 77 (meson's SKIP) saying so when it is absent. When
only yaml/ is missing it says so and generates from ops.yaml alone.
With --dirs, generates nothing and compiles the .cc files of already generated directories instead (the
golden expectations of tests/golden/ops-*), which needs no refdata; kforge_runtime.h then comes from
templates/runtime/ (the goldens do not store the headers kforge copies from templates/).
Usage: ops_refdata_compile.py --kforge BUILD/src/kforge [--refdata DIR] [--jobs N] [--cxx g++] [--keep DIR]
       ops_refdata_compile.py --dirs DIR... [--cxx g++]
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SKIP = 77
# Paddle's op files beside ops.yaml, in the order its PIR generator reads them (yaml/ of the refdata).
DENSE_FILES = ["backward", "fused_ops", "fused_backward", "static_ops", "static_backward", "update_ops"]
SPARSE_FILES = ["sparse_ops", "sparse_backward"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kforge")
    parser.add_argument("--dirs", nargs="+", help="compile the .cc files of these directories, generate nothing")
    parser.add_argument("--refdata", default=os.environ.get("KFORGE_PADDLE_REFDATA",
                                                            str(ROOT.parent / "shared" / "refdata" / "paddle")))
    parser.add_argument("--jobs", type=int, default=max(2, os.cpu_count() or 2))
    parser.add_argument("--shards", type=int, default=8)
    parser.add_argument("--cxx", default="g++")
    parser.add_argument("--keep", help="generate into this directory and keep it")
    args = parser.parse_args()

    if args.dirs:
        return compile_dirs([Path(d) for d in args.dirs], args)
    if not args.kforge:
        parser.error("--kforge is required unless --dirs is given")
    refdata = Path(args.refdata)
    ops_yaml, compat_yaml = refdata / "ops.yaml", refdata / "op_compat.yaml"
    if not ops_yaml.is_file() or not compat_yaml.is_file():
        print(f"SKIPPED: Paddle's refdata is absent ({ops_yaml} and {compat_yaml} are needed)")
        return SKIP
    op_files = [("--ops", ops_yaml)]
    others = [("--ops", refdata / "yaml" / f"{name}.yaml") for name in DENSE_FILES] + \
             [("--sparse-ops", refdata / "yaml" / f"{name}.yaml") for name in SPARSE_FILES]
    missing = [str(path) for _, path in others if not path.is_file()]
    if missing:
        print(f"NOTE: generating from ops.yaml alone; Paddle's other op files are absent ({', '.join(missing)})")
    else:
        op_files += others
    cxx = shutil.which(args.cxx)
    if cxx is None:
        print(f"SKIPPED: no C++ compiler '{args.cxx}'")
        return SKIP

    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="kforge-ops-refdata-"))
    try:
        out = work / "gen"
        start = time.monotonic()
        file_args = [arg for flag, path in op_files for arg in (flag, str(path))]
        proc = subprocess.run([args.kforge, "ops", *file_args, "--op-compat", str(compat_yaml),
                               "-o", str(out), "--prefix", "paddle", "--namespace", "paddle::ops",
                               "--shards", str(args.shards), "--color", "never"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        print(f"kforge ops on {len(op_files)} op files: exit {proc.returncode} in {time.monotonic() - start:.2f} s")
        # The loader's warnings about Paddle's data (duplicate op_compat entries, a duplicate key, a
        # data_type naming no argument) are the data's; errors are not.
        if proc.returncode != 0 or " error: " in proc.stderr:
            print(proc.stdout + proc.stderr)
            print("FAIL: kforge ops must succeed without errors on Paddle's op files")
            return 1

        failures = check_every_op_accounted_for(op_files, out / "paddle_api.h")

        sources = sorted(out.glob("*.cc"))
        expected = 2 * args.shards
        if len(sources) != expected:
            failures.append(f"expected {expected} .cc files, found {len(sources)}")

        failures += compile_all(cxx, [(out, source) for source in sources], work / "obj", args.jobs)
        if failures:
            for f in failures:
                print("FAIL:", f)
            return 1
        print("PASS")
        return 0
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


def compile_all(cxx, jobs, obj_dir, workers, extra_includes=()):
    """Compiles each (include dir, source) with -Wall -Wextra -Werror, the include dir searched before
    `extra_includes`; returns the failures."""
    obj_dir.mkdir(parents=True, exist_ok=True)
    failures = []

    def compile_one(job):
        index, (include, source) = job
        cmd = [cxx, "-std=c++17", "-Wall", "-Wextra", "-Werror", "-c", "-I", str(include)]
        for extra in extra_includes:
            cmd += ["-I", str(extra)]
        cmd += [str(source), "-o", str(obj_dir / f"{index}_{source.stem}.o")]
        t0 = time.monotonic()
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        return source, r.returncode, r.stdout, time.monotonic() - t0

    start = time.monotonic()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for source, code, output, seconds in pool.map(compile_one, enumerate(jobs)):
            status = "ok" if code == 0 and not output.strip() else "FAILED"
            print(f"  {status:6} {source} ({seconds:.1f} s)")
            if status != "ok":
                failures.append(f"{source} does not compile cleanly with {cxx}:\n{output[:6000]}")
    print(f"compiled {len(jobs)} files with {Path(cxx).name}, {workers} jobs, in {time.monotonic() - start:.1f} s")
    return failures


def compile_dirs(dirs, args):
    cxx = shutil.which(args.cxx)
    if cxx is None:
        print(f"SKIPPED: no C++ compiler '{args.cxx}'")
        return SKIP
    jobs = [(d, source) for d in dirs for source in sorted(d.glob("*.cc"))]
    if not jobs:
        print("FAIL: no .cc files in", " ".join(map(str, dirs)))
        return 1
    with tempfile.TemporaryDirectory(prefix="kforge-ops-compile-") as tmp:
        failures = compile_all(cxx, jobs, Path(tmp), args.jobs, [ROOT / "templates" / "runtime"])
    for f in failures:
        print("FAIL:", f)
    print("PASS" if not failures else "")
    return 1 if failures else 0


def check_every_op_accounted_for(op_files, api_h):
    """Every op is either declared in the API header or listed there as not generated, with a reason."""
    names = []
    for flag, path in op_files:
        suffix = "_sp" if flag == "--sparse-ops" else ""
        names += [name + suffix for name in
                  re.findall(r"^- (?:op|backward_op)\s*:\s*([A-Za-z0-9_]+)", path.read_text(), re.M)]
    if len(names) != len(set(names)):
        return ["an op name occurs twice in the op files: " + ", ".join(sorted({n for n in names if names.count(n) > 1}))]
    header = api_h.read_text()
    declared = set(re.findall(r"^kforge::Status ([A-Za-z0-9_]+)\(", header, re.M))
    skipped = dict(re.findall(r"^//   ([A-Za-z0-9_]+) \([^)]*\): (.+)$", header, re.M))
    failures = []
    for name in names:
        if (name in declared) == (name in skipped):
            failures.append(f"op '{name}' is {'both declared and' if name in declared else 'neither declared nor'} "
                            "listed as not generated")
    print(f"{len(names)} ops: {len([n for n in names if n in declared])} with a function "
          f"({len(declared)} functions with the in-place twins), {len(skipped)} not generated:")
    for name, reason in skipped.items():
        print(f"  {name}: {reason}")
    return failures


if __name__ == "__main__":
    sys.exit(main())
