#!/usr/bin/env python3
"""Checks kforge against Paddle on one fixture of tests/paddle/ (written by tools/paddle-fixtures).

    check_fixture.py --build-dir BUILD CASE     compile, build, run with the case's inputs, compare
    check_fixture.py --list                     the cases (tests/paddle/cases.txt)

The case goes through tools/run-model's machinery (kforge compile with fusion on over kernels/, the runner
built with -Wall -Wextra -Werror, load_parameters on the case's .pdiparams). Every output must have Paddle's
dtype and dims; values must be equal for integers and bools, and for floating outputs
    max|kforge - paddle| <= RTOL * max|paddle| + ATOL
with float32: RTOL 1e-4, ATOL 1e-5; float64: RTOL 1e-9, ATOL 1e-12. The inputs are O(1) (generate.py draws
them in [-1, 1) or a small range), so a result that cancels to near zero still carries the absolute rounding of
O(1) operands: a few units of float32's epsilon (1.2e-7) per term, over at most ~64 accumulated terms here,
about 8e-6; ATOL covers that and nothing bigger. Exit 0 when every output passes; 1 otherwise; 77 (skipped)
never: the fixtures are checked in and need neither Paddle nor numpy.
"""

import argparse
import ast
import json
import struct
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent / "tools" / "run_model"))
import model as rm  # noqa: E402

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
        finite = [(a, b) for a, b in zip(got, want) if a == a and b == b]
        scale = max((abs(b) for _, b in finite), default=0.0)
        worst = max((abs(a - b) for a, b in finite), default=0.0)
        bound = rtol * scale + atol
        ok = nan_mismatch == 0 and worst <= bound
        return (f"output {i}: {dtype} {list(shape)}: max abs diff {worst:.3g} (bound {bound:.3g})"
                + (f", NaN in one only at {nan_mismatch} places" if nan_mismatch else "")), ok
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
    rm.build_cpu(work / "gen", kernels, build_dir, work / "runner", "g++", verbose)
    inputs = [f"{i['name']}={case_dir / ('input_' + i['name'] + '.npy')}" for i in meta["inputs"]]
    out = work / "out"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir()
    rm.run_runner(work / "runner", out, params, inputs, [], 1, 0, None, verbose)
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
    return 1 if failures else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("case", nargs="?", help="a directory name under tests/paddle/")
    parser.add_argument("--list", action="store_true", help="print the case names of cases.txt")
    parser.add_argument("--build-dir", type=Path, default=HERE.parent.parent / "build")
    parser.add_argument("--cases-dir", type=Path, default=HERE)
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    if args.list:
        print((args.cases_dir / "cases.txt").read_text(), end="")
        return 0
    if not args.case or not (args.cases_dir / args.case / "case.json").is_file():
        parser.error(f"no fixture '{args.case}' in {args.cases_dir}")
    try:
        return check(args.cases_dir / args.case, args.build_dir.resolve(), args.verbose)
    except rm.RunModelError as e:
        print(f"{args.case}: error: {e}")
        return 1


if __name__ == "__main__":
    sys.exit(main())
