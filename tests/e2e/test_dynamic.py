#!/usr/bin/env python3
"""Programs exported with dynamic dims generate code of the size of their static twins, and run at any size.

tests/e2e/dynamic/ holds pairs of programs Paddle 3.3.1 saved with paddle.jit.save from the same network, once with
dynamic input dims as the users' export scripts write them and once with fixed dims: a PP-OCR-style DB text
detector (PPLCNet-like backbone, FPN, DB head; input [-1, 3, -1, -1]) and ResNet-18 ([-1, 3, -1, -1]).

- size-<pair>-<target>: `kforge compile` of both (fusion on); the dynamic program's generated code must be at most
  twice the bytes of the static one's, its longest line at most 1.5x as long as the static one's (a dim there is a literal, here `static_cast<int>(sizes[17])`), and no
  line that computes a size (floor / ceiling division, max, min) longer than 300 columns. Before the size table
  (codegen/size_table.h) every use spelled its size out: 3.4 MB for a dynamic mobilenet and lines of 80 KB.
- run-<program>-<shape>: tools/check-program builds the dynamic program with g++ (the kernel library's ops, no
  fusion overlay: the fused convolutions' oneDNN rounding differs from the interpreter's loops; `--layout nchw`, the
  interpreter's, for the same reason on CPUs whose NHWC primitives sum in another order) and runs it at that
  input shape (random weights and inputs), its results identical to the reference interpreter's; two shapes per
  program, so the sizes the class computes for one shape and then another are both right.

- repeat-<program>: a program whose sizes depend on data (tests/paddle/nonzero_gather_nd, masked_select_dynamic),
  built with dynamic/data_dependent_driver.cc, which runs one object of it at many input shapes and numbers of
  selected elements (none, some, all; growing and shrinking) and checks each result against its own computation.

One meson test per case (`meson test -C build e2e-dynamic-<case>`), registered from --list.
Usage: test_dynamic.py --build-dir BUILD [CASE...]
"""

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from cpu_check import CHECK_OPT_LEVEL

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
PROGRAMS = HERE / "dynamic"
KERNELS = ROOT / "kernels"
OPS = ["--ops", KERNELS / "ops.yaml", "--ops", KERNELS / "fusion.yaml", "--op-compat", KERNELS / "op_compat.yaml"]
MAX_RATIO = 2.0
MAX_WIDTH_RATIO = 1.5  # of the static twin's longest line
MAX_SIZE_LINE = 300    # columns of a line that computes a size
SIZE_OPERATIONS = ("kforge_floor_div(", "kforge_ceil_div(", "std::max<int64_t>(", "std::min<int64_t>(",
                   "kforge::checked_")

PAIRS = ["det", "resnet18"]
TARGETS = ["cpu", "cuda"]
RUNS = {  # program -> input shapes
    "det": ["1,3,64,96", "2,3,96,32"],  # the FPN needs multiples of 32
    "resnet18": ["1,3,64,64", "2,3,48,80"],
}


class TestFailure(Exception):
    pass


REPEATS = {"gather": "nonzero_gather_nd", "select": "masked_select_dynamic"}  # driver mode -> tests/paddle case


def cases():
    out = [f"size-{p}-{t}" for p in PAIRS for t in TARGETS]
    out += [f"repeat-{mode}" for mode in REPEATS]
    out += [f"run-{p}-{s.replace(',', 'x')}" for p, shapes in RUNS.items() for s in shapes]
    return out


def generate(kforge, program, target, out_dir):
    # --layout nhwc: the static twin of a CNN would get the NCHW8c plan too under auto (docs/compile.md, "`--layout
    # auto` on the CPU"), its dynamic H and W not; the sizes compared are one plan's.
    cmd = [kforge, "compile", program, *OPS, "-o", out_dir, "--name", "net", "--target", target,
           "--no-version-stamp", "--color", "never", "--layout", "nhwc"]
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    if r.returncode != 0:
        raise TestFailure(f"kforge compile {program.name} --target {target} failed:\n{r.stderr}")
    # The program's own files; the runtime headers copied beside them are the same for both.
    files = sorted(p for p in Path(out_dir).iterdir() if p.name.startswith("net"))
    total = sum(p.stat().st_size for p in files)
    lines = [(len(line), p.name, i + 1, line) for p in files for i, line in enumerate(p.read_text().splitlines())]
    longest = max(lines)[:3]
    sizes = [entry[:3] for entry in lines if any(op in entry[3] for op in SIZE_OPERATIONS)]
    return total, longest, max(sizes, default=(0, "", 0))


def check_size(kforge, pair, target):
    with tempfile.TemporaryDirectory() as tmp:
        static_bytes, static_longest, _ = generate(kforge, PROGRAMS / f"{pair}_static.json", target,
                                                   Path(tmp) / "static")
        dynamic_bytes, longest, size_line = generate(kforge, PROGRAMS / f"{pair}_dynamic.json", target,
                                                     Path(tmp) / "dynamic")
    ratio = dynamic_bytes / static_bytes
    print(f"{pair} --target {target}: static {static_bytes} bytes (longest line {static_longest[0]}), dynamic "
          f"{dynamic_bytes} bytes ({ratio:.2f}x; longest line {longest[0]} at {longest[1]}:{longest[2]}, longest "
          f"that computes a size {size_line[0]} at {size_line[1]}:{size_line[2]})")
    if ratio > MAX_RATIO:
        raise TestFailure(f"the dynamic program generates {ratio:.2f}x the code of its static twin (at most {MAX_RATIO})")
    if longest[0] > static_longest[0] * MAX_WIDTH_RATIO:
        raise TestFailure(f"{longest[1]}:{longest[2]} is {longest[0]} columns long, the static twin's longest "
                          f"{static_longest[0]}")
    if size_line[0] > MAX_SIZE_LINE:
        raise TestFailure(f"{size_line[1]}:{size_line[2]} computes a size in {size_line[0]} columns (at most "
                          f"{MAX_SIZE_LINE})")


def check_run(build_dir, program, shape):
    # --layout nchw: the interpreter's layout. Another layout gives the interpreter's bits only where oneDNN's NHWC
    # and NCHW primitives sum in the same order (AVX-512); on an AVX2 CPU resnet18's NHWC plan differs from it in
    # the last bits, which this test, about sizes, is not the place to tolerate.
    cmd = [sys.executable, ROOT / "tools" / "check-program", PROGRAMS / f"{program}_dynamic.json",
           "--shape", f"x={shape}", "--build-dir", build_dir, "--layout", "nchw", "--opt-level", CHECK_OPT_LEVEL]
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    print(r.stdout, end="")
    if r.returncode != 0:
        raise TestFailure(f"check-program {program} at x={shape} failed:\n{r.stdout}{r.stderr}")


def check_repeat(build_dir, mode):
    build_dir = Path(build_dir).resolve()
    program = ROOT / "tests" / "paddle" / REPEATS[mode] / "inference.json"
    with tempfile.TemporaryDirectory() as tmp:
        gen = Path(tmp) / "gen"
        cmd = [build_dir / "src" / "kforge", "compile", program, *OPS, "-o", gen, "--name", "net", "--target", "cpu",
               "--color", "never"]
        r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
        if r.returncode != 0:
            raise TestFailure(f"kforge compile {program} failed:\n{r.stderr}")
        link = (build_dir / "kernels" / "kforge_kernels.link").read_text().split()
        exe = Path(tmp) / "driver"
        cmd = ["g++", "-std=c++17", "-O1", "-Wall", "-Wextra", "-Werror", "-I", gen, "-I", KERNELS,
               PROGRAMS / "data_dependent_driver.cc", gen / "net.cc", build_dir / "kernels" / "libkforge_kernels.a",
               *link, "-o", exe]
        r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
        if r.returncode != 0:
            raise TestFailure(f"the generated code does not build:\n{r.stderr[-4000:]}")
        r = subprocess.run([str(exe), mode], capture_output=True, text=True, timeout=120)
        print(r.stdout, end="")
        if r.returncode != 0:
            raise TestFailure(f"data_dependent_driver {mode} failed:\n{r.stdout}{r.stderr}")


def run_case(args, name):
    kind, rest = name.split("-", 1)
    if kind == "repeat":
        check_repeat(args.build_dir, rest)
    elif kind == "size":
        pair, target = rest.rsplit("-", 1)
        check_size(Path(args.build_dir) / "src" / "kforge", pair, target)
    else:
        program, shape = rest.rsplit("-", 1)
        check_run(args.build_dir, program, shape.replace("x", ","))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build-dir")
    p.add_argument("--list", action="store_true")
    p.add_argument("cases", nargs="*")
    args = p.parse_args()
    if args.list:
        print("\n".join(cases()))
        return 0
    failed = 0
    for name in args.cases or cases():
        try:
            run_case(args, name)
            print(f"ok   {name}")
        except TestFailure as e:
            print(f"FAIL {name}: {e}")
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
