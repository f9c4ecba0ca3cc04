#!/usr/bin/env python3
"""End-to-end tests on programs that Paddle 3.3 itself saved (paddle.jit.save, tests/e2e/paddle33/, made by
tests/e2e/paddle33/export.py): each is compiled, built against kernels/ and run by tools/check-program, whose
results must be identical to the reference interpreter's. So every op, attribute and dtype as Paddle 3.3 writes
them must load, verify, infer the declared types, lower and run. (That the interpreter agrees with Paddle's own
predictor is checked during development with tests/e2e/paddle33/verify_with_paddle.py, which needs Paddle; this
test does not.)

Cases marked `fuse` run a second time with the fusion overlay (kernels/fusion.yaml): the fused loops must give
exactly what the kernels give.

One meson test per case (`meson test -C build e2e-paddle33-<case>`), registered from --list.
Usage: test_paddle33.py --build-dir BUILD [CASE...]
"""

import argparse
import os
import subprocess
import sys
from pathlib import Path

from cpu_check import CHECK_OPT_LEVEL

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
PROGRAMS = HERE / "paddle33"
CHECK = ROOT / "tools" / "check-program"
KERNELS = ROOT / "kernels"
FUSED_OPS = ["--ops", KERNELS / "ops.yaml", "--ops", KERNELS / "fusion.yaml", "--op-compat", KERNELS / "op_compat.yaml"]


class TestFailure(Exception):
    pass


# name -> (program stem in paddle33/, check-program arguments, also with the fusion overlay). Programs with
# dynamic dims run at a size other than 1.
CASES = {
    # pd_op.sum's dtype is written as 'Undefined(ALL_DTYPE)': the natural dtype (int32 sums to int64).
    "sum-undefined-dtype": ("sum_axis", [], True),
    "sum-int-undefined-dtype": ("sum_int", [], False),
    "mean-axis": ("mean_axis", [], True),
    "hardsigmoid": ("hardsigmoid", [], True),
    "relu6": ("relu6", [], True),
    "compare": ("compare", [], True),
    "compare-int": ("compare_int", [], True),
    "logical": ("logical", [], True),
    "uniform": ("uniform", ["--shape", "x=2,3"], True),
    "cumsum": ("cumsum", [], False),
    "cumsum-int": ("cumsum_int", [], False),
    "prod": ("prod", [], False),
    "full-with-tensor": ("full_with_tensor", ["--shape", "x=5,3"], False),
    "pow": ("pow", [], True),
    "floor-divide": ("floor_divide", [], True),
    "floor-divide-float": ("floor_divide_float", [], True),
    "unary": ("unary", [], True),
    "abs-int": ("abs_int", [], True),
    "clip": ("clip", [], True),
    "where": ("where", [], True),
    "masked-fill": ("masked_fill", [], True),
    "arange": ("arange", [], False),
    "arange-dynamic": ("arange_dyn", ["--shape", "x=8"], False),
    "argmax": ("argmax", [], False),
    "topk": ("topk", ["--shape", "x=3,5"], False),
    "log-softmax": ("log_softmax", [], False),
    "one-hot": ("one_hot", [], False),
    "swiglu": ("swiglu", [], False),
}


def run(cmd):
    return subprocess.run([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=600)


def check(build, program, args, ops=()):
    r = run([sys.executable, CHECK, "--build-dir", build, "--opt-level", CHECK_OPT_LEVEL, program, *args, *ops])
    if r.returncode != 0 or "identical to the reference interpreter" not in r.stdout:
        raise TestFailure(f"{program.name}{' (fused)' if ops else ''}: generated code and interpreter disagree "
                          f"(exit {r.returncode})\n--- stdout\n{r.stdout}--- stderr\n{r.stderr}")
    return r.stdout


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build-dir")
    parser.add_argument("--list", action="store_true")
    parser.add_argument("names", nargs="*")
    args = parser.parse_args()
    if args.list:
        print("\n".join(f"paddle33-{name}" for name in CASES))
        return 0
    if not args.build_dir:
        parser.error("--build-dir is required")
    build = os.path.abspath(args.build_dir)
    failed = 0
    for full in args.names or [f"paddle33-{name}" for name in CASES]:
        name = full.removeprefix("paddle33-")
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
