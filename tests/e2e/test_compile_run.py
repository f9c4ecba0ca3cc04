#!/usr/bin/env python3
"""End-to-end tests of `kforge compile`: generate C++ for a program, build it with g++ -O2 against the
reference kernels (kernels/), run it on seeded random inputs and parameters, and require results
identical to the reference interpreter (tools/interp/). tools/check-program does each round trip.

One meson test per case (`meson test -C build e2e-compile-<case>`), registered from --list.
Usage: test_compile_run.py --build-dir BUILD [CASE...]      (all cases when none is given)
Exit 77 (meson's "skipped") when a case's inputs are absent, e.g. the Paddle refdata.
"""

import argparse
import os
import re
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

from cpu_check import CHECK_OPT_LEVEL

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
REFDATA = ROOT.parent / "shared" / "refdata" / "paddle"
CHECK = ROOT / "tools" / "check-program"
PYTHON = sys.executable
BUILD = None  # set by main()
SKIP = 77


class TestFailure(Exception):
    pass


class Skipped(Exception):
    pass


def run(cmd, **kwargs):
    return subprocess.run([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=600, **kwargs)


def check_program(*args):
    return run([PYTHON, CHECK, "--build-dir", BUILD, "--opt-level", CHECK_OPT_LEVEL] + list(args))


def expect_agree(result, what):
    if result.returncode != 0 or "identical to the reference interpreter" not in result.stdout:
        raise TestFailure(f"{what}: generated code and interpreter disagree (exit {result.returncode})\n"
                          f"--- stdout\n{result.stdout}--- stderr\n{result.stderr}")


def interp():
    return Path(BUILD) / "tools" / "interp" / "kforge-interp"


# ---- the hand-written programs of tests/e2e/programs/ -----------------------------------------------------

# Dynamic dims for programs that have them.
PROGRAM_SHAPES = {"dynamic_batch": ["--shape", "features=3,4,8"], "runtime_attrs": ["--shape", "x=3,6"]}


def program_case(stem):
    def case():
        r = check_program(HERE / "programs" / f"{stem}.yaml", *PROGRAM_SHAPES.get(stem, []))
        expect_agree(r, stem)
        print(r.stdout, end="")
    return case


def test_dynamic_batch_two_sizes():
    """One generated object runs batch 2, then batch 5 (the workspace grows), then batch 2 again."""
    program = HERE / "programs" / "dynamic_batch.yaml"
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        r = check_program(program, "--shape", "features=2,4,8", "--work-dir", work / "check")
        expect_agree(r, "batch 2")
        runs = []
        for i, batch in enumerate([2, 5, 2]):
            inputs, outputs = work / f"in{i}.bin", work / f"out{i}.bin"
            r = run([interp(), program, "--seed", 10 + i, "--params-seed", 2, "--shape", f"features={batch},4,8", "--write-inputs", inputs])
            if r.returncode != 0:
                raise TestFailure(f"interpreter failed:\n{r.stderr}")
            runs.append((inputs, outputs))
        cmd = [work / "check" / "harness", runs[0][0], runs[0][1]]
        for inputs, outputs in runs[1:]:
            cmd += ["--also", inputs, outputs]
        r = run(cmd)
        if r.returncode != 0:
            raise TestFailure(f"generated code failed:\n{r.stdout}{r.stderr}")
        for i, (inputs, outputs) in enumerate(runs):
            r = run([interp(), program, "--inputs", inputs, "--compare", outputs])
            expect_agree(r, f"run {i}")
            if i == 1 and "shape [5, 10]" not in r.stdout:
                raise TestFailure(f"batch 5 should give probs of shape [5, 10]:\n{r.stdout}")


# ---- Paddle's programs (refdata) ----------------------------------------------------------------------------

def refdata_files():
    files = []
    for sub in ("pir_json", "pir_text"):
        folder = REFDATA / sub
        if folder.is_dir():
            files += sorted(folder.iterdir())
    return files


# Every refdata program the reference kernels cannot run, with the ops check-program must name, so a change in
# what is supported shows up here. Files that are not one program (TestParserText holds parser test snippets)
# map to None.
REFDATA_UNSUPPORTED = {
    "fuse_allreduce_split_to_reducescatter_1.txt": ["pd_op.all_reduce_"],
    "TestParserText.txt": None,
}


# Refdata programs whose declared types contradict themselves (the auto-layout pass's test snippets: a conv2d
# declared to take 64x56x56 is fed the 64x112x112 result of the op before it). kforge must refuse them at that
# op, with the inferred and the declared type side by side.
REFDATA_INCONSISTENT = {
    name: r":13:5: error: result 'out' of 'pd_op\.conv2d' is declared as tensor<-1x64x56x56xf32>, but its inputs "
          r"give float32\[s\d+, 64, 112, 112\]: dim 2 differs"
    for name in ("SYNTH_2025fmt_auto_layout_program.txt", "auto_layout_program.txt")
}


# Sizes for the dynamic dims of the runnable refdata programs (check-program's default is 1).
REFDATA_SHAPES = {
    "docs_pir_save_load_example_v1.json": ["--shape", "A=3,30"],
    "docs_fc_relu_program_typed2024.txt": ["--shape", "A=3,30"],
    "docs_paddle_ir_cn_add_relu_op_and_kernel.txt": ["--shape", "x=2,5", "--shape", "y=2,5"],
}


def refdata_case(name):
    def case():
        path = next((f for f in refdata_files() if f.name == name), None)
        if path is None:
            raise Skipped(f"{REFDATA} is absent: Paddle's programs were not checked")
        r = check_program(path, *REFDATA_SHAPES.get(name, []))
        if name in REFDATA_INCONSISTENT:
            if r.returncode == 0 or not re.search(REFDATA_INCONSISTENT[name], r.stderr):
                raise TestFailure(f"{name}: expected kforge to reject the inconsistent conv2d at line 13, got exit "
                                  f"{r.returncode}\n--- stderr\n{r.stderr}")
            print(f"{name}: inconsistent types reported at line 13, as expected")
            return
        expected = REFDATA_UNSUPPORTED.get(name, [])
        if expected is None:
            if r.returncode == 0:
                raise TestFailure(f"{name} is not expected to be one runnable program, but it ran:\n{r.stdout}")
            print(f"{name}: not a single program, as expected")
            return
        if not expected:
            expect_agree(r, name)
            print(r.stdout, end="")
            return
        match = re.search(r"unsupported ops \(no kernel in kernels/\): (.*)", r.stderr)
        if r.returncode != 1 or not match or match.group(1).split(", ") != expected:
            raise TestFailure(f"{name}: expected exit 1 naming the unsupported ops {expected}, got exit "
                              f"{r.returncode}\n--- stderr\n{r.stderr}")
        print(f"{name}: unsupported ops reported: {match.group(1)}")
    return case


# ---- failures that must be caught ---------------------------------------------------------------------------

def test_detects_wrong_kernel():
    """An op set that maps relu to the sigmoid kernel: check-program exits 1 naming pd_op.relu (the third op, line 10)."""
    r = check_program(HERE / "bad_programs" / "small_mlp.yaml", "--ops", HERE / "ops" / "wrong_relu_kernel.yaml")
    if r.returncode != 1:
        raise TestFailure(f"expected exit 1, got {r.returncode}\n{r.stdout}{r.stderr}")
    if not re.search(r"small_mlp\.yaml:10:\d+: first differing op: pd_op\.relu", r.stdout):
        raise TestFailure(f"expected the first differing op to be pd_op.relu at line 10:\n{r.stdout}")
    if "output y: shape [2, 4], max abs diff" not in r.stdout:
        raise TestFailure(f"expected the per-output report:\n{r.stdout}")


def test_names_unsupported_ops():
    r = check_program(HERE / "bad_programs" / "unsupported_ops.yaml")
    if r.returncode != 1 or "unsupported ops (no kernel in kernels/): pd_op.lgamma, pd_op.logsigmoid" not in r.stderr:
        raise TestFailure(f"expected exit 1 naming pd_op.lgamma and pd_op.logsigmoid, got {r.returncode}:\n{r.stderr}")
    if "unsupported_ops.yaml:6:" not in r.stderr:
        raise TestFailure(f"expected a located diagnostic for lgamma (line 6):\n{r.stderr}")


def write_bundle(path, tensors):
    """Writes a tensor bundle (tools/interp/tensor_bundle.h): tensors are (name, dtype code, dims, floats)."""
    with open(path, "wb") as f:
        f.write(b"KFTB" + struct.pack("<II", 1, len(tensors)))
        for name, dtype, dims, values in tensors:
            raw = name.encode()
            f.write(struct.pack("<I", len(raw)) + raw + struct.pack("<ii", dtype, len(dims)))
            f.write(struct.pack(f"<{len(dims)}q", *dims))
            data = struct.pack(f"<{len(values)}f", *values)
            f.write(struct.pack("<Q", len(data)) + data)


def test_input_mismatch_is_an_error_status():
    """The generated run() refuses an input of the wrong shape with a status naming it, expected and actual."""
    float32 = 9  # kforge::DataType::kFloat32
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        r = check_program(HERE / "programs" / "mlp.yaml", "--work-dir", work / "check")
        expect_agree(r, "mlp")
        good = work / "check" / "inputs.bin"
        bad = work / "bad.bin"
        if not good.exists():
            raise TestFailure("check-program --work-dir left no inputs.bin")
        # Parameters of the right shapes, and x with 3 rows instead of 4.
        params = [("param/fc0.w", [64, 128]), ("param/fc0.b", [128]), ("param/fc1.w", [128, 64]),
                  ("param/fc1.b", [64]), ("param/fc2.w", [64, 10]), ("param/fc2.b", [10])]
        tensors = [("feed/x", float32, [3, 64], [0.5] * 192)]
        for name, dims in params:
            n = 1
            for d in dims:
                n *= d
            tensors.append((name, float32, dims, [0.25] * n))
        write_bundle(bad, tensors)
        r = run([work / "check" / "harness", bad, work / "out.bin"])
        expected = "input 'x' must be float32 [4, 64], got float32 [3, 64]"
        if r.returncode == 0 or expected not in r.stderr:
            raise TestFailure(f"expected the error status '{expected}', got exit {r.returncode}:\n{r.stderr}")


# ---- registry -----------------------------------------------------------------------------------------------

def cases():
    found = {}
    for program in sorted((HERE / "programs").glob("*.yaml")):
        found[f"compile-{program.stem.replace('_', '-')}"] = program_case(program.stem)
    found["compile-dynamic-batch-two-sizes"] = test_dynamic_batch_two_sizes
    names = sorted(set(REFDATA_UNSUPPORTED) | set(REFDATA_INCONSISTENT) | {f.name for f in refdata_files()} |
                   {"docs_pir_save_load_example_v1.json", "docs_fc_relu_program_typed2024.txt",
                    "docs_paddle_ir_cn_add_relu_op_and_kernel.txt"})
    for name in names:
        stem = name.rsplit(".", 1)[0].lower().replace("_", "-")
        found[f"compile-refdata-{stem}"] = refdata_case(name)
    found["compile-detects-wrong-kernel"] = test_detects_wrong_kernel
    found["compile-names-unsupported-ops"] = test_names_unsupported_ops
    found["compile-input-mismatch-status"] = test_input_mismatch_is_an_error_status
    return found


def main():
    global BUILD
    parser = argparse.ArgumentParser()
    parser.add_argument("--build-dir")
    parser.add_argument("--list", action="store_true")
    parser.add_argument("names", nargs="*")
    args = parser.parse_args()
    all_cases = cases()
    if args.list:
        print("\n".join(all_cases))
        return 0
    if not args.build_dir:
        parser.error("--build-dir is required")
    BUILD = os.path.abspath(args.build_dir)
    failed = skipped = 0
    for name in args.names or list(all_cases):
        if name not in all_cases:
            print(f"unknown case {name}", file=sys.stderr)
            return 2
        try:
            all_cases[name]()
            print(f"PASS {name}")
        except Skipped as why:
            print(f"SKIP {name}: {why}")
            skipped += 1
        except TestFailure as failure:
            print(f"FAIL {name}: {failure}")
            failed += 1
    if failed:
        return 1
    return SKIP if skipped and skipped == len(args.names or all_cases) else 0


if __name__ == "__main__":
    sys.exit(main())
