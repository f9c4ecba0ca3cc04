#!/usr/bin/env python3
"""End-to-end tests of the index, data-movement and normalisation ops (issue 11) on programs that Paddle 3.3
saved (tests/e2e/paddle_nn/, made by its export.py): each is compiled, built against kernels/ and run by
tools/check-program, whose results must be identical to the reference interpreter's, so every op, attribute,
mutable operand and declared type as Paddle 3.3 writes them must load, verify, infer, lower and run. That the
interpreter agrees with Paddle's predictor is checked with tests/e2e/paddle_nn/verify_with_paddle.py (needs Paddle;
this test does not).

Cases marked `fuse` run a second time with the fusion overlay (kernels/fusion.yaml).

One meson test per case (`meson test -C build e2e-paddle-nn-<case>`), registered from --list.
Usage: test_paddle_nn.py --build-dir BUILD [CASE...]
"""

import argparse
import os
import subprocess
import sys
from pathlib import Path

from cpu_check import CHECK_OPT_LEVEL

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
PROGRAMS = HERE / "paddle_nn"
CHECK = ROOT / "tools" / "check-program"
KERNELS = ROOT / "kernels"
FUSED_OPS = ["--ops", KERNELS / "ops.yaml", "--ops", KERNELS / "fusion.yaml", "--op-compat", KERNELS / "op_compat.yaml"]


class TestFailure(Exception):
    pass


def shapes(*specs):
    return [a for s in specs for a in ("--shape", s)]


# name -> (program stem in paddle_nn/, check-program arguments, also with the fusion overlay).
CASES = {
    "interp": ("interp", shapes("x=2,2,5,7"), False),
    # Spatial dims known only at run time: output sizes are expressions of them (x2, x1.5, x0.5).
    "interp-dynamic": ("interp_dynamic", shapes("x=2,2,6,10"), False),
    "interp-dynamic-odd": ("interp_dynamic", shapes("x=1,2,7,9"), False),
    "interp-size-of": ("interp_size_of", shapes("x=2,2,3,5", "y=2,2,6,7"), False),
    "set-value": ("set_value", shapes("x=2,4,6"), True),
    "gather-scatter": ("gather_scatter", shapes("x=3,5,6"), False),
    "movement": ("movement", shapes("x=2,3,5"), False),
    "pad": ("pad", shapes("x=2,2,4,5"), False),
    "batched": ("batched", shapes("x=2,3,5", "y=2,5,4"), False),
    "norms": ("norms", shapes("x=3,6,2,4", "r=3,6,8"), True),
}


def run(cmd):
    return subprocess.run([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=600)


def check(build, program, args, ops=()):
    r = run([sys.executable, CHECK, "--build-dir", build, "--opt-level", CHECK_OPT_LEVEL, program, *args, *ops])
    if r.returncode != 0 or "identical to the reference interpreter" not in r.stdout:
        # A PIR JSON program is one long line: keep the diagnostics readable.
        stderr = "\n".join(line[:400] for line in r.stderr.splitlines())
        raise TestFailure(f"{program.name}{' (fused)' if ops else ''}: generated code and interpreter disagree "
                          f"(exit {r.returncode})\n--- stdout\n{r.stdout}--- stderr\n{stderr}")
    return r.stdout


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build-dir")
    parser.add_argument("--list", action="store_true")
    parser.add_argument("names", nargs="*")
    args = parser.parse_args()
    if args.list:
        print("\n".join(f"paddle-nn-{name}" for name in CASES))
        return 0
    if not args.build_dir:
        parser.error("--build-dir is required")
    build = os.path.abspath(args.build_dir)
    failed = 0
    for full in args.names or [f"paddle-nn-{name}" for name in CASES]:
        name = full.removeprefix("paddle-nn-")
        if name not in CASES:
            print(f"unknown case {full}", file=sys.stderr)
            return 2
        stem, check_args, fuse = CASES[name]
        program = PROGRAMS / f"{stem}.json"
        try:
            print(check(build, program, check_args), end="")
            if fuse:
                print(check(build, program, check_args, FUSED_OPS), end="")
            print(f"PASS {full}")
        except TestFailure as failure:
            print(f"FAIL {full}: {failure}")
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
