#!/usr/bin/env python3
"""Generated code under hostile calls (issue 15; docs/fuzzing.md, "Generated code under hostile calls").

  cpu          `kforge compile` tests/e2e/hostile/hostile_net.yaml, build tests/e2e/hostile/driver.cc against the
               class (g++ -fsanitize=address,undefined when that links, so a memory error fails the test) and run
               it: null, mis-typed, mis-shaped, overflowing, aliasing and unbound tensors, missing / truncated /
               corrupt parameter files; every case an error status with the expected message, valid runs in
               between correct.
  cache        the multi-kernel disk cache of a program compiled with --multi-kernel-hints
               (tests/e2e/multikernel/mk_mlp.yaml, run through tools/check_program/harness.cc and compared with
               the reference interpreter): truncated, empty, foreign (set hash, device, arch, runtime, variant),
               garbage binary and directory entries, an unwritable cache, and concurrent processes on one cache.
               Every case: a correct result, one warning per bad entry, and a cache of complete entries after.
  cuda-compile the same driver built with nvcc for `kforge compile --target cuda` of hostile_net_cuda.yaml (-Werror;
               exit 77 when nvcc is absent). tests/e2e/hostile/gpu_run.sh runs it on a GPU.

Usage: test_hostile.py --build-dir BUILD cpu|cache|cuda-compile      (temporary directories, never the user's cache)
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from nvcc_check import CHECK_OPT_FLAGS, find_nvcc

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
HOSTILE = HERE / "hostile"
PROGRAM = HOSTILE / "hostile_net.yaml"
CUDA_PROGRAM = HOSTILE / "hostile_net_cuda.yaml"
MK_PROGRAM = HERE / "multikernel" / "mk_mlp.yaml"
CASES = ["cpu", "cache", "cuda-compile"]


def run(cmd, env=None, timeout=600):
    return subprocess.run([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=timeout, env=env)


def must(r, what):
    if r.returncode != 0:
        sys.exit(f"FAIL: {what} (exit {r.returncode})\n--- stdout\n{r.stdout}--- stderr\n{r.stderr}")
    return r


def ops_flags(cuda=False):
    flags = ["--ops", ROOT / "kernels/ops.yaml"]
    if cuda:
        flags += ["--ops", ROOT / "kernels/fusion.yaml"]
    return flags + ["--op-compat", ROOT / "kernels/op_compat.yaml"]


def sanitizer_flags(work):
    """-fsanitize=address,undefined when g++ here compiles and links with it (libasan/libubsan installed)."""
    probe = work / "probe.cc"
    probe.write_text("int main() { return 0; }\n")
    flags = ["-fsanitize=address,undefined", "-fno-sanitize-recover=undefined", "-fno-omit-frame-pointer"]
    r = run(["g++", *flags, probe, "-o", work / "probe"])
    return flags if r.returncode == 0 else []


def case_cpu(build):
    kforge = build / "src" / "kforge"
    kernels = build / "kernels" / "libkforge_kernels.a"
    link_args = (build / "kernels" / "kforge_kernels.link").read_text().split()
    with tempfile.TemporaryDirectory(prefix="kforge-hostile-") as tmp:
        work = Path(tmp)
        gen = work / "gen"
        must(run([kforge, "compile", PROGRAM, "-o", gen, "--name", "hostile_net", "--target", "cpu", *ops_flags(),
                  "--color", "never"]), "kforge compile")
        sanitize = sanitizer_flags(work)
        must(run(["g++", "-std=c++17", "-O1", "-g", "-Wall", "-Wextra", "-Werror", *sanitize, "-I", gen,
                  '-DKFORGE_PROGRAM_HEADER="hostile_net.h"', "-DKFORGE_PROGRAM_CLASS=hostile_net",
                  HOSTILE / "driver.cc", gen / "hostile_net.cc", kernels, *link_args, "-o", work / "driver",
                  "-pthread"]), "building the driver")
        scratch = work / "scratch"
        scratch.mkdir()
        env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:abort_on_error=0",
                   UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1")
        r = run([work / "driver", scratch], env=env)
        sys.stdout.write(r.stdout)
        if r.returncode != 0 or "Sanitizer" in r.stderr or "runtime error" in r.stderr:
            sys.exit(f"FAIL: the driver exited {r.returncode}\n--- stderr\n{r.stderr}")
        passed = re.search(r"^(\d+) passed, 0 failed$", r.stdout, re.M)
        if not passed or int(passed.group(1)) < 60:
            sys.exit("FAIL: fewer cases than expected ran")
        print(f"PASS: {passed.group(1)} hostile cases on the CPU class"
              f" ({'under ASan + UBSan' if sanitize else 'without sanitizers: g++ cannot link them here'})")


class Cache:
    """The multi-kernel program built once; runs at a batch size against the interpreter."""

    def __init__(self, build, work):
        self.work = work
        self.interp = build / "tools" / "interp" / "kforge-interp"
        gen = work / "gen"
        must(run([build / "src" / "kforge", "compile", MK_PROGRAM, "-o", gen, "--name", "mk_net", "--target", "cpu",
                  *ops_flags(), "--multi-kernel-hints", "16,64,256", "--color", "never"]), "kforge compile")
        link_args = (build / "kernels" / "kforge_kernels.link").read_text().split()
        self.harness = work / "harness"
        must(run(["g++", "-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror", "-I", gen, "-I", ROOT / "tools" / "interp",
                  '-DKFORGE_PROGRAM_HEADER="mk_net.h"', "-DKFORGE_PROGRAM_CLASS=mk_net",
                  ROOT / "tools/check_program/harness.cc", gen / "mk_net.cc", build / "kernels" / "libkforge_kernels.a",
                  *link_args, "-o", self.harness, "-pthread"]), "building the harness")
        # oneDNN's matmul (the `library` variant) sums in another order than the generated variants.
        self.tolerance = ["--rtol", "1e-4", "--atol", "1e-3"] if link_args else []
        self.runs = 0

    def env(self, root):
        env = dict(os.environ, KFORGE_CACHE_DIR=str(root), KFORGE_MULTI_KERNEL_LOG="1")
        for name in ("KFORGE_MULTI_KERNEL_FORCE", "KFORGE_MULTI_KERNEL_BENCHMARK", "KFORGE_MULTI_KERNEL_CACHE"):
            env.pop(name, None)
        return env

    def inputs(self, batch):
        path = self.work / f"in{batch}.bin"
        if not path.exists():
            must(run([self.interp, MK_PROGRAM, "--seed", batch, "--write-inputs", path, "--shape", f"x={batch},48"]),
                 f"interpreter inputs at batch {batch}")
        return path

    def start(self, batch, root, tag):
        """Starts the generated code at `batch` with cache root `root`; returns (process, outputs path)."""
        out = self.work / f"out-{tag}.bin"
        p = subprocess.Popen([str(self.harness), str(self.inputs(batch)), str(out)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=self.env(root))
        return p, out

    def finish(self, p, out, batch, what):
        stdout, stderr = p.communicate(timeout=300)
        if p.returncode != 0:
            sys.exit(f"FAIL: {what}: the generated code exited {p.returncode}\n{stdout}{stderr}")
        c = run([self.interp, MK_PROGRAM, "--inputs", self.inputs(batch), "--compare", out] + self.tolerance)
        if c.returncode != 0 or (not self.tolerance and "identical to the reference interpreter" not in c.stdout):
            sys.exit(f"FAIL: {what}: results differ from the interpreter\n{c.stdout}{c.stderr}")
        self.runs += 1
        return stderr

    def check(self, batch, root, what):
        p, out = self.start(batch, root, what.replace(" ", "_"))
        return self.finish(p, out, batch, what)


def picks(log):
    return re.findall(r"kforge: multi-kernel \S+ \S+ -> \S+ \((.*?)\)", log)


def entries(root):
    d = root / "multi-kernel"
    return sorted(d.iterdir()) if d.is_dir() else []


def check_complete(root, what, count):
    """Every file of the cache is a complete entry; no temp file is left behind."""
    files = entries(root)
    if len(files) != count:
        sys.exit(f"FAIL: {what}: {len(files)} cache files, expected {count}: {[f.name for f in files]}")
    for f in files:
        text = f.read_bytes().decode("utf-8", "replace") if f.is_file() else ""
        if not f.name.endswith(".pick") or not text.startswith("kforge-multi-kernel-pick 1\n") or \
                not text.endswith("\nend\n"):
            sys.exit(f"FAIL: {what}: {f.name} is not a complete entry:\n{text[:400]}")


def case_cache(build):
    with tempfile.TemporaryDirectory(prefix="kforge-hostile-cache-") as tmp:
        work = Path(tmp)
        mk = Cache(build, work)
        passed = []

        # A clean cache: three sites benchmark batch 24 and write three entries.
        root = work / "cache"
        log = mk.check(24, root, "fresh cache")
        if picks(log) != ["benchmarked"] * 3:
            sys.exit(f"FAIL: fresh cache: expected 3 benchmarked picks:\n{log}")
        check_complete(root, "fresh cache", 3)
        good = {f.name: f.read_bytes() for f in entries(root)}

        def damage(name, mutate, want_reason):
            """Each entry damaged by `mutate(text) -> bytes`: one warning each, benchmarked again, rewritten."""
            for f in entries(root):
                if f.is_dir():
                    shutil.rmtree(f)
                f.write_bytes(mutate(good[f.name]))
            log = mk.check(24, root, name)
            warnings = re.findall(r"kforge: warning: ignoring multi-kernel cache entry '[^']*': (.*); benchmarking again",
                                  log)
            if len(warnings) != 3 or any(want_reason not in w for w in warnings) or picks(log) != ["benchmarked"] * 3:
                sys.exit(f"FAIL: {name}: expected 3 warnings naming '{want_reason}' and 3 new benchmarks:\n{log}")
            check_complete(root, name, 3)
            log = mk.check(24, root, name + " then cached")
            if picks(log) != ["from cache"] * 3 or "warning" in log:
                sys.exit(f"FAIL: {name}: the rewritten entries were not used:\n{log}")
            passed.append(name)

        def replace_line(field, value):
            return lambda text: re.sub(rb"^" + field + rb" .*$", field + b" " + value, text, count=1, flags=re.M)

        damage("truncated entry", lambda t: t[:len(t) // 2], "")
        damage("truncated before end", lambda t: t[:-len(b"end\n")], "incomplete (truncated?)")
        damage("empty entry", lambda t: b"", "incomplete (truncated?)")
        damage("foreign variant set", replace_line(b"set", b"0123456789abcdef"), "written for another variant set")
        damage("foreign device", replace_line(b"device", b"NVIDIA H100 80GB HBM3"), "written for another device")
        damage("foreign arch", replace_line(b"arch", b"sm_90"), "written for another architecture")
        damage("foreign toolkit", replace_line(b"runtime", b"cuda-12.4"), "written for another runtime")
        damage("foreign shape", replace_line(b"shape", b"1x2x3"), "written for another shape")
        damage("unknown variant", replace_line(b"pick", b"gemm_from_another_build"),
               "unknown variant 'gemm_from_another_build'")
        damage("other version", lambda t: t.replace(b"kforge-multi-kernel-pick 1", b"kforge-multi-kernel-pick 99"),
               "not a version 1 entry")
        garbage = bytes((i * 131 + 7) % 256 for i in range(4096))
        damage("garbage binary", lambda t: garbage, "not a version 1 entry")
        damage("nul bytes", lambda t: t.replace(b"\n", b"\0"), "")
        damage("huge line", lambda t: t.replace(b"end\n", b"x" * 100000 + b"\nend\n"), "unexpected line")

        # Entries that are FIFOs (opening one without a writer would block the process): one warning each, a new
        # benchmark, and complete entries in their place.
        for f in entries(root):
            f.unlink()
            os.mkfifo(f)
        log = mk.check(24, root, "entry is a FIFO")
        if picks(log) != ["benchmarked"] * 3 or log.count("it is not a regular file; benchmarking again") != 3:
            sys.exit(f"FAIL: entries that are FIFOs:\n{log}")
        check_complete(root, "entry is a FIFO", 3)
        passed.append("entry is a FIFO")

        # Files that are not entries of these sites (another program's, a stale temp file) change nothing.
        (root / "multi-kernel" / "0000000000000000-0000000000000000-1x1x1.pick").write_bytes(garbage)
        (root / "multi-kernel" / (next(iter(good)) + ".tmp-999999-0")).write_bytes(b"kforge-multi-kernel-pick 1\n")
        log = mk.check(24, root, "unrelated files")
        if picks(log) != ["from cache"] * 3 or "warning" in log:
            sys.exit(f"FAIL: unrelated files in the cache changed the picks:\n{log}")
        passed.append("unrelated files")

        # An entry path that is a directory: cannot be read or replaced; warned, the pick kept in memory.
        for f in entries(root):
            if f.name in good:
                f.unlink()
                f.mkdir()
        log = mk.check(24, root, "entry is a directory")
        if picks(log) != ["benchmarked"] * 3 or log.count("cannot write multi-kernel cache entry") != 3:
            sys.exit(f"FAIL: entries that are directories:\n{log}")
        passed.append("entry is a directory")

        # A cache root that cannot be created (below a regular file; root ignores file modes, not this).
        blocker = work / "not-a-directory"
        blocker.write_text("a file\n")
        log = mk.check(24, blocker / "cache", "unwritable cache")
        if picks(log) != ["benchmarked"] * 3 or log.count("cannot write multi-kernel cache entry") != 3:
            sys.exit(f"FAIL: an unwritable cache root:\n{log}")
        passed.append("unwritable cache")

        # Concurrent processes on one fresh cache, several new shapes: every process correct, no torn read (no
        # entry ever ignored), complete entries after, and the next process takes every pick from the cache.
        shared = work / "shared-cache"
        for round_, batch in enumerate([5, 33, 100]):
            procs = [mk.start(batch, shared, f"concurrent-{round_}-{k}") for k in range(6)]
            logs = [mk.finish(p, out, batch, f"concurrent process {k} at batch {batch}")
                    for k, (p, out) in enumerate(procs)]
            for log in logs:
                if "ignoring multi-kernel cache entry" in log or "cannot write" in log:
                    sys.exit(f"FAIL: concurrent writers at batch {batch}: a torn or failed entry:\n{log}")
            check_complete(shared, f"concurrent writers at batch {batch}", 3 * (round_ + 1))
            log = mk.check(batch, shared, f"after concurrent writers at batch {batch}")
            if picks(log) != ["from cache"] * 3:
                sys.exit(f"FAIL: after concurrent writers at batch {batch}:\n{log}")
        passed.append("concurrent writers (3 shapes x 6 processes)")
        for name in passed:
            print(f"PASS {name}")
        print(f"PASS: {len(passed)} cache cases, {mk.runs} runs identical to (or within tolerance of) the interpreter")


def case_cuda_compile(build):
    nvcc = find_nvcc()
    if nvcc is None:
        print("nvcc not found: skipping")
        return 77
    with tempfile.TemporaryDirectory(prefix="kforge-hostile-cuda-") as tmp:
        gen = Path(tmp) / "gen"
        must(run([build / "src" / "kforge", "compile", CUDA_PROGRAM, "-o", gen, "--name", "hostile_net", "--target", "cuda",
                  *ops_flags(cuda=True), "--color", "never"]), "kforge compile --target cuda")
        strict = ["-arch=sm_90", "-std=c++17", "-Werror", "all-warnings", "-Xcompiler", "-Wall,-Wextra",
                  *CHECK_OPT_FLAGS]
        must(run([nvcc, *strict, "-DHOSTILE_CUDA", "-I", gen, '-DKFORGE_PROGRAM_HEADER="hostile_net.h"',
                  "-DKFORGE_PROGRAM_CLASS=hostile_net", "-x", "cu", HOSTILE / "driver.cc", gen / "hostile_net.cu",
                  gen / "hostile_net_kernels.cu", "-o", Path(tmp) / "driver", "-lcublasLt", "-lcublas"], timeout=900),
             "nvcc: the CUDA driver")
    print("PASS: the hostile-call driver builds with nvcc -Werror against the --target cuda class")
    return 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build-dir")
    parser.add_argument("--list", action="store_true")
    parser.add_argument("case", nargs="?", choices=CASES)
    args = parser.parse_args()
    if args.list:
        print("\n".join(CASES))
        return 0
    build = Path(args.build_dir).resolve()
    if args.case == "cpu":
        case_cpu(build)
    elif args.case == "cache":
        case_cache(build)
    else:
        return case_cuda_compile(build)
    return 0


if __name__ == "__main__":
    sys.exit(main())
