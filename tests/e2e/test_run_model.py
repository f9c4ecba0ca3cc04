#!/usr/bin/env python3
"""End-to-end tests of load_parameters() and tools/run-model on a checked-in Paddle model
(tests/paddle/weights_sorted_names: five weights of four dtypes, ranks 0 to 2, whose .pdiparams order is
neither their program nor their creation order; two outputs) and a few other fixtures.

Each test_* function is one meson test (`meson test -C build e2e-<name>`, registered from --list).
Usage: test_run_model.py --build-dir BUILD [NAME...]   (all tests when no name is given). Exit 77: skipped.
"""

import argparse
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "tests" / "paddle"))
from check_fixture import compare, read_npy  # noqa: E402
from nvcc_check import CHECK_OPT_FLAGS, find_nvcc  # noqa: E402

RUN_MODEL = ROOT / "tools" / "run-model"
FIXTURES = ROOT / "tests" / "paddle"
MODEL = FIXTURES / "weights_sorted_names"
BUILD = None  # set by main()


class TestFailure(Exception):
    pass


class Skip(Exception):
    pass


def expect(condition, message):
    if not condition:
        raise TestFailure(message)


def run(cmd, **kwargs):
    return subprocess.run([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=600, **kwargs)


def run_model(*args, work=None):
    cmd = [RUN_MODEL, *args, "--build-dir", BUILD]
    if work is not None:
        cmd += ["--work-dir", work]
    # A build check: run-model's nvcc builds without optimising (tests/e2e/nvcc_check.py says why).
    return run(cmd, env={**os.environ, "NVCC_OPT_FLAGS": " ".join(CHECK_OPT_FLAGS)})


def expect_one_line_error(r, *fragments):
    """run-model failed with exit 1 and one stderr line holding every fragment."""
    lines = r.stderr.strip().splitlines()
    expect(r.returncode == 1 and len(lines) == 1,
           f"expected exit 1 and one error line, got exit {r.returncode}:\n{r.stdout}{r.stderr}")
    for f in fragments:
        expect(f in lines[0], f"error line lacks {f!r}: {lines[0]}")


def expect_outputs_match(out_dir, case_dir):
    expected = sorted(case_dir.glob("expected_*.npy"))
    expect(len(expected) > 0 and len(list(Path(out_dir).glob("*.npy"))) == len(expected),
           f"{out_dir} does not hold {len(expected)} outputs")
    for i in range(len(expected)):
        line, ok = compare(i, Path(out_dir) / f"{i}.npy", case_dir / f"expected_{i}.npy")
        expect(ok, line)


def write_npy(path, descr, shape, values, fortran=False):
    """A .npy file (format 1.0) written with the standard library."""
    code = {"<f4": "f", "<f8": "d", "<i8": "q", "<i4": "i"}[descr]
    header = f"{{'descr': '{descr}', 'fortran_order': {fortran}, 'shape': {tuple(shape)!r}, }}"
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    Path(path).write_bytes(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() +
                           struct.pack(f"<{len(values)}{code}", *values))
    return path


# ---- load_parameters ------------------------------------------------------------------------------------------

def build_load_check(tmp):
    """weights_sorted_names compiled with kforge and built with tests/e2e/params/load_check.cc (-Werror)."""
    gen = tmp / "gen"
    r = run([BUILD / "src" / "kforge", "compile", MODEL / "inference.json", "-o", gen, "--name", "weights",
             "--target", "cpu", "--ops", ROOT / "kernels" / "ops.yaml", "--ops", ROOT / "kernels" / "fusion.yaml",
             "--op-compat", ROOT / "kernels" / "op_compat.yaml"])
    expect(r.returncode == 0, f"kforge compile failed:\n{r.stderr}")
    binary = tmp / "load_check"
    r = run(["g++", "-std=c++17", "-O1", "-Wall", "-Wextra", "-Werror", "-I", gen, "-I", ROOT / "tools" / "run_model",
             '-DKFORGE_PROGRAM_HEADER="weights.h"', "-DKFORGE_PROGRAM_CLASS=weights",
             ROOT / "tests" / "e2e" / "params" / "load_check.cc", gen / "weights.cc",
             BUILD / "kernels" / "libkforge_kernels.a",
             *(BUILD / "kernels" / "kforge_kernels.link").read_text().split(), "-o", binary])
    expect(r.returncode == 0, f"load_check does not build:\n{r.stderr}")
    return binary


def test_params_load_real_file(tmp):
    """The file paddle.jit.save wrote loads into the generated class, which then computes Paddle's outputs."""
    binary = build_load_check(tmp)
    (tmp / "out").mkdir()
    r = run([binary, MODEL / "inference.pdiparams", MODEL / "input_x.npy", tmp / "out"])
    expect(r.returncode == 0, f"load_check failed:\n{r.stdout}{r.stderr}")
    expect_outputs_match(tmp / "out", MODEL)


def test_params_bad_files(tmp):
    """Each way a .pdiparams can be wrong is an error naming the parameter and the byte, after which run()
    reports unbound parameters; a good load afterwards works again."""
    good = (MODEL / "inference.pdiparams").read_bytes()
    # The file (tools/paddle_fixtures: W_big int64 [3] @0, a.b float64 [] @48, a_b float32 [2, 1] @78,
    # w_10 float32 [3] @112, w_2 float32 [4, 3] @148, 222 bytes).
    expect(len(good) == 222, f"the fixture changed: {len(good)} bytes; update the offsets of this test")
    mistyped = bytearray(good)
    expect(mistyped[20:24] == bytes([0x08, 0x03, 0x10, 0x03]), "first entry is not int64 [3]")
    mistyped[21] = 2  # INT32
    cases = {
        "truncated": (good[:200], "parameter 'w_2' (entry 5 of 5, at byte 148): the data of float32 [4, 3] from "
                                  "byte 174 runs past the end of the file (byte 200)"),
        "missing": (good[:148], "parameter 'w_2' (entry 5 of 5, at byte 148): missing: the file ends after 4 "
                                "tensors (parameters are stored sorted by name)"),
        "extra": (good + good[:48], "48 bytes follow the last parameter at byte 222: the file holds more tensors "
                                    "than the program's 5 parameters"),
        "mistyped": (bytes(mistyped), "parameter 'W_big' (entry 1 of 5, at byte 0): the program declares int64 [3], "
                                      "the file holds int32 [3]"),
        "other_model": ((FIXTURES / "linear" / "inference.pdiparams").read_bytes(),
                        "parameter 'W_big' (entry 1 of 5, at byte 0): the program declares int64 [3], the file "
                        "holds float32 [4, 3]"),
        "header": (good[:30], "parameter 'W_big' (entry 1 of 5, at byte 0): the data of int64 [3] from byte 24 runs "
                              "past the end of the file (byte 30)"),
    }
    paths = []
    for name, (data, _) in cases.items():
        paths.append(tmp / f"{name}.pdiparams")
        paths[-1].write_bytes(data)
    binary = build_load_check(tmp)
    (tmp / "out").mkdir()
    r = run([binary, MODEL / "inference.pdiparams", MODEL / "input_x.npy", tmp / "out", *paths])
    expect(r.returncode == 0, f"load_check failed:\n{r.stdout}{r.stderr}")
    lines = r.stdout.splitlines()
    expect(len(lines) == 2 * len(cases), f"expected {2 * len(cases)} lines:\n{r.stdout}")
    for k, (name, (_, message)) in enumerate(cases.items()):
        load, after = lines[2 * k], lines[2 * k + 1]
        expect(load == f"load {paths[k]}: weights: '{paths[k]}': {message}", f"{name}: {load}")
        expect(after.startswith("run: weights: parameter '") and after.endswith("' is not bound"), f"{name}: {after}")
    expect_outputs_match(tmp / "out", MODEL)


# ---- tools/run-model ------------------------------------------------------------------------------------------

def test_run_model_outputs(tmp):
    """A model directory, a Paddle prefix and a program file with --params all give Paddle's outputs."""
    work = tmp / "work"
    for i, spec in enumerate([[MODEL], [MODEL / "inference"],
                              [MODEL / "inference.json", "--params", MODEL / "inference.pdiparams"]]):
        out = tmp / f"out{i}"
        r = run_model(*spec, "--input", f"x={MODEL / 'input_x.npy'}", "--output-dir", out, work=work)
        expect(r.returncode == 0, f"run-model {spec} failed:\n{r.stdout}{r.stderr}")
        expect(f"output 1 " in r.stdout and str(out / "1.npy") in r.stdout, r.stdout)
        expect_outputs_match(out, MODEL)


def test_run_model_bench_json(tmp):
    out = tmp / "bench.json"
    r = run_model(MODEL, "--bench", "7", "--bench-json", out, "--threads", "2")
    expect(r.returncode == 0, f"run-model failed:\n{r.stdout}{r.stderr}")
    expect("bench: 7 runs, median " in r.stdout, r.stdout)
    data = json.loads(out.read_text())
    expect(sorted(data) == ["cpu_ms", "median_ms", "runs"] and data["runs"] == 7, str(data))
    expect(data["median_ms"] > 0 and data["cpu_ms"] >= 0, str(data))


def test_run_model_random_inputs(tmp):
    """Inputs not given are seeded random values with the dims of --shape: same seed, same bytes."""
    work, case = tmp / "work", FIXTURES / "cnn"
    outs = []
    for seed in ("1", "1", "2"):
        out = tmp / f"out{len(outs)}"
        r = run_model(case, "--shape", "x=3,3,4,4", "--seed", seed, "--output-dir", out, work=work)
        expect(r.returncode == 0, f"run-model failed:\n{r.stdout}{r.stderr}")
        dtype, shape, _ = read_npy(out / "0.npy")
        expect((dtype, shape) == ("float32", (3, 5)), f"output is {dtype} {shape}")
        outs.append((out / "0.npy").read_bytes())
    expect(outs[0] == outs[1], "the same seed gave different outputs")
    expect(outs[0] != outs[2], "another seed gave the same outputs")


def test_run_model_compile_only(tmp):
    r = run_model(MODEL, "--compile-only", "--output-dir", tmp / "out")
    expect(r.returncode == 0 and "nothing run" in r.stdout, f"{r.stdout}{r.stderr}")
    expect(not (tmp / "out").exists(), "--compile-only wrote outputs")


def test_run_model_errors(tmp):
    """Unsupported ops, bad .npy files, shape and dtype mismatches, bad weights: one line each, exit 1."""
    work = tmp / "work"
    x = f"x={MODEL / 'input_x.npy'}"
    unsupported = tmp / "unsupported.json"
    unsupported.write_text((FIXTURES / "relu_float32" / "inference.json").read_text().replace('"1.relu"', '"1.lgamma"'))
    expect_one_line_error(run_model(unsupported), "unsupported ops (not in the kernel library", "pd_op.lgamma")

    (tmp / "garbage.npy").write_bytes(b"not numpy at all")
    expect_one_line_error(run_model(MODEL, "--input", f"x={tmp / 'garbage.npy'}", work=work),
                          "input 'x': '", "garbage.npy' is not a .npy file")
    short = write_npy(tmp / "short.npy", "<f4", (2, 4), [0.5] * 8)
    short.write_bytes(short.read_bytes()[:-4])
    expect_one_line_error(run_model(MODEL, "--input", f"x={short}", work=work), "short.npy' is truncated")
    fortran = write_npy(tmp / "fortran.npy", "<f4", (2, 4), [0.5] * 8, fortran=True)
    expect_one_line_error(run_model(MODEL, "--input", f"x={fortran}", work=work), "is in Fortran order")
    wrong_shape = write_npy(tmp / "wrong_shape.npy", "<f4", (2, 5), [0.5] * 10)
    expect_one_line_error(run_model(MODEL, "--input", f"x={wrong_shape}", work=work),
                          "input 'x' must be float32 [?, 4], got float32 [2, 5]")
    wrong_dtype = write_npy(tmp / "wrong_dtype.npy", "<i8", (2, 4), [1] * 8)
    expect_one_line_error(run_model(MODEL, "--input", f"x={wrong_dtype}", work=work),
                          "input 'x' must be float32 [?, 4], got int64 [2, 4]")
    expect_one_line_error(run_model(MODEL, "--input", f"y={wrong_dtype}", work=work),
                          "the program has no input 'y' (inputs: x)")
    expect_one_line_error(run_model(MODEL, "--shape", "x=2,5", work=work), "--shape x: dim 1 is 4 in the program, got 5")
    expect_one_line_error(run_model(MODEL, "--input", "x=/nonexistent.npy"), "--input x=/nonexistent.npy: no such file")

    bare = tmp / "bare"
    bare.mkdir()
    shutil.copy(MODEL / "inference.json", bare)
    expect_one_line_error(run_model(bare, "--input", x, work=work),
                          "the program has 5 parameters and no .pdiparams file was given (--params)")
    truncated = tmp / "truncated.pdiparams"
    truncated.write_bytes((MODEL / "inference.pdiparams").read_bytes()[:148])
    expect_one_line_error(run_model(bare, "--params", truncated, "--input", x, work=work),
                          "parameter 'w_2' (entry 5 of 5, at byte 148): missing")
    expect_one_line_error(run_model(tmp / "nope"), "'", "nope' is neither a model directory")


def test_run_model_cuda_compile_only(tmp):
    """--target cuda --compile-only generates the CUDA class and builds its runner with nvcc (linked with cuDNN
    for convolutions); a program the CUDA backend cannot lower is kforge's error, on one line; without
    --compile-only the runner runs on the GPU (outputs as Paddle's), or says on one line that there is none."""
    if find_nvcc() is None:
        raise Skip("nvcc not found")
    r = run_model(FIXTURES / "softmax_float32", "--target", "cuda", "--compile-only")
    expect(r.returncode == 0 and "generated and built" in r.stdout, f"{r.stdout}{r.stderr}")
    # Convolutions (a transposed one too, over dynamic spatial dims as well) run on the GPU through cuDNN; an op
    # with no CUDA kernel (diag) is an error on one line.
    # (plain-work: the run at the end reuses this build; run-model rebuilds only what changed)
    plain = tmp / "plain-work"
    r = run_model(FIXTURES / "conv2d_transpose", "--target", "cuda", "--compile-only", work=plain)
    expect(r.returncode == 0 and "generated and built" in r.stdout, f"{r.stdout}{r.stderr}")
    r = run_model(FIXTURES / "conv2d_transpose_dynamic_spatial", "--target", "cuda", "--compile-only")
    expect(r.returncode == 0 and "generated and built" in r.stdout, f"{r.stdout}{r.stderr}")
    # --cuda-graph: the class that captures and replays a graph, through the same runner.
    work = tmp / "graph-work"
    r = run_model(FIXTURES / "conv2d_transpose", "--target", "cuda", "--cuda-graph", "--compile-only", work=work)
    expect(r.returncode == 0 and "generated and built" in r.stdout, f"{r.stdout}{r.stderr}")
    expect("graphs_.launch(" in (work / "gen" / "model.cu").read_text(), "--cuda-graph reaches kforge compile")
    r = run_model(FIXTURES / "conv2d_transpose", "--cuda-graph", "--compile-only")
    expect(r.returncode == 2 and "--cuda-graph needs --target cuda" in r.stderr, f"{r.stdout}{r.stderr}")
    # --precision: the 16-bit class (parameters rounded when loaded), through the same runner.
    r = run_model(FIXTURES / "conv2d_transpose", "--target", "cuda", "--precision", "float16", "--compile-only",
                  work=work)
    expect(r.returncode == 0, f"{r.stdout}{r.stderr}")
    expect("kParameterDeviceTypes" in (work / "gen" / "model.cu").read_text(), "--precision reaches kforge compile")
    r = run_model(FIXTURES / "conv2d_transpose", "--precision", "float16", "--compile-only")
    expect(r.returncode == 2 and "--precision needs --target cuda" in r.stderr, f"{r.stdout}{r.stderr}")
    # fft_r2c through cuFFT: linked with -lcufft; with --cuda-graph a refusal at the op (its plan is made by the first
    # run with new dims, which a capture cannot do)
    r = run_model(FIXTURES / "fft_rfft_abs", "--target", "cuda", "--compile-only")
    expect(r.returncode == 0 and "generated and built" in r.stdout, f"{r.stdout}{r.stderr}")
    expect_one_line_error(run_model(FIXTURES / "fft_rfft_abs", "--target", "cuda", "--cuda-graph", "--compile-only"),
                          "--target cuda: ", "fft_r2c")
    out = tmp / "cuda-out"
    x = FIXTURES / "conv2d_transpose" / "input_x.npy"
    r = run_model(FIXTURES / "conv2d_transpose", "--target", "cuda", "--input", f"x={x}", "--output-dir", out,
                  work=plain)
    if r.returncode == 0:
        expect_outputs_match(out, FIXTURES / "conv2d_transpose")
    else:
        expect_one_line_error(r, "no CUDA device")


def all_tests():
    return {name[len("test_"):].replace("_", "-"): fn for name, fn in globals().items() if name.startswith("test_")}


def main():
    global BUILD
    parser = argparse.ArgumentParser()
    parser.add_argument("--build-dir")
    parser.add_argument("--list", action="store_true")
    parser.add_argument("names", nargs="*")
    options = parser.parse_args()
    tests = all_tests()
    if options.list:
        print("\n".join(tests))
        return 0
    BUILD = Path(options.build_dir).resolve()
    failed = skipped = 0
    names = options.names or list(tests)
    for name in names:
        with tempfile.TemporaryDirectory(prefix=f"kforge-e2e-{name}-") as tmp:
            try:
                tests[name](Path(tmp))
                print(f"PASS {name}")
            except Skip as why:
                skipped += 1
                print(f"SKIP {name}: {why}")
            except TestFailure as failure:
                failed += 1
                print(f"FAIL {name}: {failure}")
    if failed:
        return 1
    return 77 if skipped == len(names) else 0


if __name__ == "__main__":
    sys.exit(main())
