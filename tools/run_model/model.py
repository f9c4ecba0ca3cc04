"""The machinery of tools/run-model, importable (tests/paddle/check_fixture.py uses it): find a model's files,
generate its C++ with kforge, build the runner (runner.cc) against the kernel library, run it.

Python 3 standard library only. Every failure is a RunModelError whose message is one line."""

import os
import re
import shlex
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
HERE = Path(__file__).resolve().parent
CLASS_NAME = "model"
# The kernel library, its fusion overlay (the compute/reduce/row_pattern formulas of ops/paddle_overlay*.yaml for
# the library's ops: fusion on) and its op_compat (Paddle's mutable attributes).
OPS = [ROOT / "kernels" / "ops.yaml", ROOT / "kernels" / "fusion.yaml"]
OP_COMPAT = ROOT / "kernels" / "op_compat.yaml"
NVCC = os.environ.get("NVCC") or ("/usr/local/cuda/bin/nvcc" if Path("/usr/local/cuda/bin/nvcc").exists() else "nvcc")
# nvcc's optimisation flags (one string, split as a shell would), -O2 unless $NVCC_OPT_FLAGS says otherwise: the CI
# tests that only check a build set tests/e2e/nvcc_check.py's flags, which build without optimising.
NVCC_OPT_FLAGS = shlex.split(os.environ.get("NVCC_OPT_FLAGS", "-O2"))


class RunModelError(Exception):
    """A failure to report as one line."""


def run(cmd, verbose, **kwargs):
    if verbose:
        print("run-model: $ " + " ".join(shlex.quote(str(c)) for c in cmd), flush=True)
    return subprocess.run([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)


def resolve_model(model, params=None):
    """(program, params or None) of MODEL: a directory holding inference.json (or a single *.json), a Paddle
    prefix (PREFIX.json + PREFIX.pdiparams), or a program file (PIR JSON, PIR text, kforge program YAML). The
    weights are PREFIX.pdiparams beside the program unless `params` names them."""
    path = Path(model)
    if path.is_dir():
        program = path / "inference.json"
        if not program.is_file():
            candidates = sorted(path.glob("*.json"))
            if len(candidates) != 1:
                found = ", ".join(c.name for c in candidates) or "none"
                raise RunModelError(f"'{model}' has no inference.json and not exactly one *.json (found: {found})")
            program = candidates[0]
    elif path.is_file():
        program = path
    elif Path(str(model) + ".json").is_file():
        program = Path(str(model) + ".json")
    else:
        raise RunModelError(f"'{model}' is neither a model directory, a Paddle prefix (PREFIX.json) nor a program")
    if params is not None:
        if not Path(params).is_file():
            raise RunModelError(f"--params '{params}' does not exist")
        return program, Path(params)
    weights = program.with_suffix(".pdiparams")
    return program, (weights if weights.is_file() else None)


def find_tools(build_dir, verbose, kernel_library=True):
    """The kforge binary and the kernel library of `build_dir`, building them when missing (the kernel library
    only when `kernel_library`: the CUDA classes do not link it)."""
    kforge = build_dir / "src" / "kforge"
    kernels = build_dir / "kernels" / "libkforge_kernels.a"
    wanted = [kforge, kernels] if kernel_library else [kforge]
    if not all(p.exists() for p in wanted):
        if not (build_dir / "build.ninja").exists():
            r = run(["meson", "setup", build_dir, ROOT], verbose, cwd=ROOT)
            if r.returncode != 0:
                raise RunModelError(f"meson setup {build_dir} failed:\n{r.stdout}{r.stderr}")
        r = run(["ninja", "-C", build_dir] + [str(p.relative_to(build_dir)) for p in wanted], verbose)
        if r.returncode != 0:
            raise RunModelError(f"building kforge and the kernel library failed:\n{r.stdout}{r.stderr}")
    return kforge, kernels


def summarize_diagnostics(stderr):
    """kforge's diagnostics as one line: the unsupported ops all named, else the first error with its place.
    (A PIR JSON program is one long line, so the source excerpts kforge prints are left out.)"""
    errors = []
    for line in stderr.splitlines():
        m = re.match(r"^(.*?): error: (.*)$", line)
        if m:
            errors.append((m.group(1), m.group(2)))
    if not errors:
        return stderr.strip().splitlines()[-1] if stderr.strip() else "kforge compile failed"
    # An op the op set lacks ("unknown op", from the verifier) or has without a kernel ("has no kernel").
    missing, unsupported = [], 0
    for _, message in errors:
        m = re.fullmatch(r"unknown op '(.+)'|'(.+)' has no kernel in the op set", message)
        if m:
            unsupported += 1
            name = m.group(1) or m.group(2)
            missing += [name] if name not in missing else []
    if missing and unsupported == len(errors):
        return "unsupported ops (not in the kernel library kernels/ops.yaml): " + ", ".join(missing)
    where, message = errors[0]
    where = "" if where == "kforge" else where + ": "
    more = f" ({len(errors) - 1} more error{'s' if len(errors) > 2 else ''}; -v shows all)" if len(errors) > 1 else ""
    return where + message + more


def generate(kforge, program, gen_dir, target, verbose, extra=(), name=CLASS_NAME):
    """kforge compile PROGRAM into gen_dir as class `name` (fusion on)."""
    cmd = [kforge, "compile", program, "-o", gen_dir, "--name", name, "--target", target, "--color", "never"]
    for f in OPS:
        cmd += ["--ops", f]
    cmd += ["--op-compat", OP_COMPAT, *extra]
    r = run(cmd, verbose)
    if verbose and r.stderr:
        print(r.stderr, end="")
    if r.returncode != 0:
        raise RunModelError(summarize_diagnostics(r.stderr))


def _newer_than(target, sources):
    """Whether `target` exists and is newer than every file of `sources` (a make-style up-to-date test)."""
    if not target.exists():
        return False
    t = target.stat().st_mtime_ns
    return all(Path(src).stat().st_mtime_ns <= t for src in sources)


def _compile(cmd, what, verbose):
    r = run(cmd, verbose)
    if r.returncode != 0:
        first = next((l.strip() for l in (r.stderr or r.stdout).splitlines() if "error" in l), "(no error line)")
        raise RunModelError(f"{what} does not build: {first}" + ("" if verbose else " (-v shows all)"))


def runner_object(build_dir, cxx, verbose):
    """runner.cc compiled once per build directory (BUILD/run-model/runner.o), rebuilt when a source changed.
    Written atomically: several tests may ask for it at the same time."""
    target = build_dir / "run-model" / "runner.o"
    sources = [HERE / "runner.cc", HERE / "npy.h", HERE / "runner_model.h",
               ROOT / "templates" / "runtime" / "kforge_runtime.h"]
    if _newer_than(target, sources):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f"runner.{os.getpid()}.o")
    _compile([cxx, "-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror", "-I", ROOT / "templates" / "runtime",
              "-I", HERE, "-c", HERE / "runner.cc", "-o", tmp], "tools/run_model/runner.cc", verbose)
    os.replace(tmp, target)
    return target


def kernels_link_args(kernels):
    """What linking libkforge_kernels.a needs after it (oneDNN, libgomp), as its build wrote it."""
    link = kernels.parent / "kforge_kernels.link"
    return link.read_text().split() if link.is_file() else []


def build_cpu(gen_dir, kernels, build_dir, out, cxx, verbose, opt_level="2"):
    """The runner for the generated class: its generated code and model_adapter.cc, with the same warnings as
    any user build (-Werror), linked with the shared runner object. Skipped when `out` is up to date."""
    link_runner([HERE / "model_adapter.cc", gen_dir / f"{CLASS_NAME}.cc"], sorted(gen_dir.iterdir()), [gen_dir],
                [f'-DKFORGE_PROGRAM_HEADER="{CLASS_NAME}.h"', f"-DKFORGE_PROGRAM_CLASS={CLASS_NAME}"], kernels,
                build_dir, out, cxx, "the generated code", verbose, opt_level)


def link_runner(sources, generated, include_dirs, defines, kernels, build_dir, out, cxx, what, verbose,
                opt_level="2"):
    """`sources` (model adapters and generated code; `generated`: every file they include) compiled at
    -O`opt_level` with the warnings of any user build (-Werror) and linked with the shared runner object and the
    kernel library into `out`. Skipped when `out` is up to date. tests/paddle/check_fixture.py links its batches
    through it too (at -O1: see there)."""
    runner_o = runner_object(build_dir, cxx, verbose)
    if _newer_than(out, list(generated) + list(sources) + [runner_o, kernels, HERE / "model_adapter.h",
                                                            HERE / "runner_model.h"]):
        return
    includes = [a for d in include_dirs for a in ("-I", d)]
    _compile([cxx, "-std=c++17", f"-O{opt_level}", *shlex.split(os.environ.get("CXXFLAGS", "")), "-Wall", "-Wextra",
              "-Werror", *includes, "-I", HERE, *defines, *sources, runner_o, kernels, *kernels_link_args(kernels), "-o", out],
             what, verbose)


def build_cuda(gen_dir, arch, verbose):
    """--compile-only --target cuda: every generated .cu compiled with nvcc, warnings as errors."""
    sources = sorted(gen_dir.glob("*.cu"))
    for src in sources:
        cmd = [NVCC, f"-arch={arch}", "-std=c++17", *NVCC_OPT_FLAGS, "-Werror", "all-warnings", "-I", gen_dir,
               "-c", src, "-o", src.with_suffix(".o")]
        try:
            r = run(cmd, verbose)
        except FileNotFoundError:
            raise RunModelError(f"nvcc not found ({NVCC}); set $NVCC") from None
        if r.returncode != 0:
            first = next((l for l in r.stderr.splitlines() if "error" in l), r.stderr.strip()[:200])
            raise RunModelError(f"{src.name} does not build with nvcc: {first.strip()}")
    return sources


def cuda_library_dirs():
    """Where cuDNN and its sibling NVIDIA libraries are: $CUDNN_DIR (include/ and lib/), else PyTorch's wheel
    (site-packages/nvidia/cudnn, as the GPU machine has it), else nothing (the toolkit's own, found by the linker)."""
    given = os.environ.get("CUDNN_DIR")
    if given:
        return Path(given), [Path(given) / "lib"]
    r = subprocess.run(["python3", "-c", "import nvidia.cudnn as c; print(next(iter(c.__path__)))"],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    if r.returncode != 0 or not r.stdout.strip():
        return None, []
    cudnn = Path(r.stdout.strip())
    return cudnn, [cudnn / "lib"] + sorted(p for p in cudnn.parent.glob("*/lib") if p != cudnn / "lib")


def build_cuda_runner(gen_dir, build_dir, out, arch, cxx, verbose):
    """The runner for a --target cuda class: model_adapter_cuda.cu, the generated NAME.cu and NAME_kernels.cu
    (nvcc, warnings as errors) and the shared runner object, linked with cuDNN / cuBLASLt when the class uses
    them (found by cuda_library_dirs(), with an rpath so that the runner needs no LD_LIBRARY_PATH). Skipped when
    `out` is up to date."""
    runner_o = runner_object(build_dir, cxx, verbose)
    generated = sorted(gen_dir.iterdir())
    adapter = HERE / "model_adapter_cuda.cu"
    if _newer_than(out, generated + [runner_o, adapter, HERE / "model_adapter.h", HERE / "runner_model.h"]):
        return
    cudnn, lib_dirs = cuda_library_dirs()
    libs, flags = [], []
    if (gen_dir / "kforge_cudnn.cuh").exists() or (gen_dir / "kforge_cudnn_attention.cuh").exists():
        if cudnn is not None:
            flags += ["-I", cudnn / "include"]
            libs += ["-L", cudnn / "lib", "-l:libcudnn.so.9"]
        else:
            libs.append("-lcudnn")
    if (gen_dir / "kforge_cublaslt.cuh").exists():
        libs += ["-lcublasLt", "-lcublas"]
    if (gen_dir / "kforge_cufft.cuh").exists():
        libs.append("-lcufft")
    for d in lib_dirs:
        libs += ["-Xlinker", f"-rpath,{d}"]
    cmd = [NVCC, f"-arch={arch}", "-std=c++17", *NVCC_OPT_FLAGS, "-Werror", "all-warnings", "-I", gen_dir, "-I", HERE,
           *flags, f'-DKFORGE_PROGRAM_HEADER="{CLASS_NAME}.h"', f"-DKFORGE_PROGRAM_CLASS={CLASS_NAME}", adapter,
           gen_dir / f"{CLASS_NAME}.cu", gen_dir / f"{CLASS_NAME}_kernels.cu", runner_o, "-o", out, *libs]
    try:
        _compile(cmd, "the generated CUDA code", verbose)
    except FileNotFoundError:
        raise RunModelError(f"nvcc not found ({NVCC}); set $NVCC") from None


def run_runner(runner, output_dir, params, inputs, shapes, seed, bench, bench_json, verbose, threads=1, extra=()):
    """Runs the built runner; returns its stdout (one line per output, and the bench line)."""
    cmd = [runner, "--output-dir", output_dir, "--seed", seed, "--threads", threads, *extra]
    if params is not None:
        cmd += ["--params", params]
    for spec in inputs:
        cmd += ["--input", spec]
    for spec in shapes:
        cmd += ["--shape", spec]
    if bench:
        cmd += ["--bench", bench]
    if bench_json:
        cmd += ["--bench-json", bench_json]
    r = run(cmd, verbose)
    if r.returncode != 0:
        lines = r.stderr.strip().splitlines()
        raise RunModelError(lines[-1] if lines else f"the runner failed with exit code {r.returncode}")
    return r.stdout
