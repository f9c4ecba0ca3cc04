#!/usr/bin/env python3
"""Checks kforge against Paddle on one fixture of tests/paddle/ (written by tools/paddle-fixtures).

    check_fixture.py --build-dir BUILD CASE     compile, build, run with the case's inputs, compare
    check_fixture.py --build-dir BUILD --batch K/N
                                                the cases of batch K of N (every N-th of cases.txt), as meson runs
                                                them: built together, one result line per case
    check_fixture.py --list                     the cases (tests/paddle/cases.txt)

The case goes through tools/run-model's machinery (kforge compile with fusion on over kernels/, the runner
built with -Wall -Wextra -Werror, load_parameters on the case's .pdiparams). Every output must have Paddle's
dtype and dims; values must be equal for integers and bools, and for floating outputs
    max|kforge - paddle| <= RTOL * max|paddle| + ATOL
over the finite values, with float32: RTOL 1e-4, ATOL 1e-5; float64: RTOL 1e-9, ATOL 1e-12; NaN and the infinities
must be where Paddle has them (the same infinity), and max|paddle| is taken over the finite values, so that an
infinite output cannot make the bound infinite (the *_nonfinite cases). The inputs are O(1) (generate.py draws
them in [-1, 1) or a small range), so a result that cancels to near zero still carries the absolute rounding of
O(1) operands: a few units of float32's epsilon (1.2e-7) per term, over at most ~64 accumulated terms here,
about 8e-6; ATOL covers that and nothing bigger. Exit 0 when every output passes; 1 otherwise; 77 (skipped)
never: the fixtures are checked in and need neither Paddle nor numpy.

A batch generates each of its cases in a namespace of its own (kforge compile --namespace fixture_<case>) and
compiles them all as ONE translation unit, with the same flags as a single case, linked into one runner that picks a
case with --model: the runtime headers and the .pdiparams loader are compiled once per batch rather than once per
case (a case alone costs ~1.2 s of g++ -O2, ~0.9 s of it those headers; both build at -O1, OPT_LEVEL). A case whose
code does not generate fails alone; if the batch does not compile, each of its cases is built alone, so that the
failure is pinned to its case (and if every case builds alone, the batch fails all the same: the unit itself is
broken).
"""

import argparse
import ast
import json
import math
import struct
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent / "tools" / "run_model"))
import model as rm  # noqa: E402

# The fixtures' generated code builds at -O1: the warnings that need the optimiser's flow analysis
# (-Wmaybe-uninitialized and the like) still run over it, with -Werror, at two thirds of -O2's compile time (a batch:
# 11.3 s at -O2, 8.2 s at -O1, 5.2 s at -O0). tools/run-model's users, and e2e-run-model-*, build at -O2.
OPT_LEVEL = "1"
TOLERANCE = {"float32": (1e-4, 1e-5), "float64": (1e-9, 1e-12)}
NPY_TYPES = {"<f4": ("float32", "f"), "<f8": ("float64", "d"), "<f2": ("float16", "e"), "<i4": ("int32", "i"),
             "<i8": ("int64", "q"), "<i2": ("int16", "h"), "|i1": ("int8", "b"), "|u1": ("uint8", "B"),
             "|b1": ("bool", "?")}


def read_npy(path):
    """(dtype name, shape, flat list of values) of a .npy file, with the standard library only."""
    data = Path(path).read_bytes()
    if data[:6] != b"\x93NUMPY":
        raise ValueError(f"{path} is not a .npy file")
    major = data[6]
    header_len, start = (struct.unpack_from("<H", data, 8)[0], 10) if major == 1 else (struct.unpack_from("<I", data, 8)[0], 12)
    header = ast.literal_eval(data[start:start + header_len].decode("latin1"))
    if header["descr"] not in NPY_TYPES or header["fortran_order"]:
        raise ValueError(f"{path}: unsupported .npy ({header})")
    dtype, code = NPY_TYPES[header["descr"]]
    shape = tuple(header["shape"])
    count = 1
    for d in shape:
        count *= d
    values = struct.unpack_from(f"<{count}{code}", data, start + header_len)
    return dtype, shape, list(values)


def compare(i, got_path, want_path):
    """One output: a line describing it and whether it passes."""
    dtype, shape, got = read_npy(got_path)
    want_dtype, want_shape, want = read_npy(want_path)
    if (dtype, shape) != (want_dtype, want_shape):
        return f"output {i}: kforge {dtype} {list(shape)}, Paddle {want_dtype} {list(want_shape)}", False
    if dtype in TOLERANCE:
        rtol, atol = TOLERANCE[dtype]
        nan_mismatch = sum(1 for a, b in zip(got, want) if (a != a) != (b != b))
        # An infinity must be matched exactly (same sign), and the bound comes from the finite values: with an
        # infinity in the scale the bound would be infinite and nothing could fail.
        inf_mismatch = sum(1 for a, b in zip(got, want)
                           if a == a and b == b and (math.isinf(a) or math.isinf(b)) and a != b)
        finite = [(a, b) for a, b in zip(got, want) if math.isfinite(a) and math.isfinite(b)]
        scale = max((abs(b) for _, b in finite), default=0.0)
        worst = max((abs(a - b) for a, b in finite), default=0.0)
        bound = rtol * scale + atol
        ok = nan_mismatch == 0 and inf_mismatch == 0 and worst <= bound
        return (f"output {i}: {dtype} {list(shape)}: max abs diff {worst:.3g} (bound {bound:.3g})"
                + (f", NaN in one only at {nan_mismatch} places" if nan_mismatch else "")
                + (f", infinities differ at {inf_mismatch} places" if inf_mismatch else "")), ok
    wrong = sum(1 for a, b in zip(got, want) if a != b)
    return f"output {i}: {dtype} {list(shape)}: {wrong} of {len(want)} elements differ", wrong == 0


def check(case_dir, build_dir, verbose):
    meta = json.loads((case_dir / "case.json").read_text())
    program, params = rm.resolve_model(case_dir)
    kforge, kernels = rm.find_tools(build_dir, verbose)
    # A work directory per case under the build directory: kforge rewrites only changed files and the runner is
    # rebuilt only when they change, so a second run of the suite costs little.
    work = build_dir / "paddle-fixtures" / case_dir.name
    rm.generate(kforge, program, work / "gen", "cpu", verbose)
    rm.build_cpu(work / "gen", kernels, build_dir, work / "runner", "g++", verbose, OPT_LEVEL)
    inputs = [f"{i['name']}={case_dir / ('input_' + i['name'] + '.npy')}" for i in meta["inputs"]]
    out = work / "out"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    rm.run_runner(work / "runner", out, params, inputs, [], 1, 0, None, verbose)
    return 1 if check_outputs(case_dir, out) else 0


def batch_work_dir(build_dir, k, n):
    return build_dir / "paddle-fixtures" / f"batch-{k}-of-{n}"


def write_batch_source(path, cases):
    """The unity file: every case's generated class (class <case> in namespace fixture_<case>, so that no two
    headers share an include guard) and make_model() by case name."""
    lines = ["// Generated by tests/paddle/check_fixture.py: the classes of one batch of fixtures, one unit.",
             '#include <cstring>', '#include "model_adapter.h"']
    lines += [f'#include "{case}/{case}.cc"' for case in cases]
    lines += ["", "std::unique_ptr<kforge::runner::Model> kforge::runner::make_model(const char* name) {"]
    for case in cases:
        lines.append(f'  if (std::strcmp(name, "{case}") == 0) return std::make_unique<Adapter<fixture_{case}::{case}>>();')
    lines += ["  return nullptr;", "}", ""]
    text = "\n".join(lines)
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def build_batch(work, cases, kernels, build_dir, verbose):
    """The runner of `cases` (generated under work/<case>/), built as one unit; skipped when up to date."""
    out = work / "runner"
    source = work / "batch.cc"
    write_batch_source(source, cases)
    generated = [f for case in cases for f in sorted((work / case).iterdir())]
    # The first case's directory holds the runtime headers every case includes (all cases write the same ones).
    rm.link_runner([source], generated, [work / cases[0], work], [], kernels, build_dir, out, "g++", "the batch",
                   verbose, OPT_LEVEL)
    return out


def check_outputs(case_dir, out):
    """Compares out/<i>.npy with the case's expected_<i>.npy; prints a line per output; returns the failures."""
    expected = sorted(case_dir.glob("expected_*.npy"), key=lambda p: int(p.stem.split("_")[1]))
    produced = sorted(out.glob("*.npy"))
    if len(produced) != len(expected):
        print(f"{case_dir.name}: kforge wrote {len(produced)} outputs, Paddle has {len(expected)}")
        return 1
    failures = 0
    for i, want in enumerate(expected):
        line, ok = compare(i, out / f"{i}.npy", want)
        print(f"{case_dir.name}: {line}: {'ok' if ok else 'MISMATCH'}")
        failures += not ok
    return failures


def run_case(case_dir, runner, model, out, verbose):
    meta = json.loads((case_dir / "case.json").read_text())
    _, params = rm.resolve_model(case_dir)
    inputs = [f"{i['name']}={case_dir / ('input_' + i['name'] + '.npy')}" for i in meta["inputs"]]
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    extra = ["--model", model] if model else []
    rm.run_runner(runner, out, params, inputs, [], 1, 0, None, verbose, extra=extra)
    return check_outputs(case_dir, out)


def check_batch(cases_dir, cases, build_dir, k, n, verbose):
    """Batch k of n: generate every case, build them as one unit, run and compare each. Exit status 0 or 1."""
    kforge, kernels = rm.find_tools(build_dir, verbose)
    work = batch_work_dir(build_dir, k, n)
    failed, generated = [], []
    for case in cases:
        program, _ = rm.resolve_model(cases_dir / case)
        try:
            rm.generate(kforge, program, work / case, "cpu", verbose, extra=["--namespace", f"fixture_{case}"],
                        name=case)
            generated.append(case)
        except rm.RunModelError as e:
            print(f"{case}: error: {e}")
            failed.append(case)
    runner = None
    unity_error = None
    if generated:
        try:
            runner = build_batch(work, generated, kernels, build_dir, verbose)
        except rm.RunModelError as e:
            unity_error = str(e)
            print(f"batch {k} of {n} does not build as one unit ({e}); building each case alone")
    for case in generated:
        try:
            if runner is not None:
                bad = run_case(cases_dir / case, runner, case, work / "out" / case, verbose)
            else:
                bad = check(cases_dir / case, build_dir, verbose)
        except rm.RunModelError as e:
            print(f"{case}: error: {e}")
            bad = 1
        if bad:
            failed.append(case)
    print(f"batch {k} of {n}: {len(cases) - len(failed)} of {len(cases)} cases agree with Paddle"
          + (f"; failed: {' '.join(failed)}" if failed else ""))
    if unity_error is not None and not failed:
        # Every case builds alone, so the unit itself is at fault (two programs' code colliding): a failure, since
        # building case by case costs seven times the time (170-212 s a batch instead of about 25 on a 2-core
        # machine).
        print(f"batch {k} of {n}: every case builds alone, but not the batch as one unit: {unity_error}")
        return 1
    return 1 if failed else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("case", nargs="?", help="a directory name under tests/paddle/")
    parser.add_argument("--list", action="store_true", help="print the case names of cases.txt")
    parser.add_argument("--batch", help="K/N: check batch K of N, the cases at K, K + N, K + 2N, ... of cases.txt")
    parser.add_argument("--build-dir", type=Path, default=HERE.parent.parent / "build")
    parser.add_argument("--cases-dir", type=Path, default=HERE)
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    if args.list:
        print((args.cases_dir / "cases.txt").read_text(), end="")
        return 0
    if args.batch:
        k, n = (int(x) for x in args.batch.split("/"))
        names = (args.cases_dir / "cases.txt").read_text().split()
        return check_batch(args.cases_dir, names[k::n], args.build_dir.resolve(), k, n, args.verbose)
    if not args.case or not (args.cases_dir / args.case / "case.json").is_file():
        parser.error(f"no fixture '{args.case}' in {args.cases_dir}")
    try:
        return check(args.cases_dir / args.case, args.build_dir.resolve(), args.verbose)
    except rm.RunModelError as e:
        print(f"{args.case}: error: {e}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
