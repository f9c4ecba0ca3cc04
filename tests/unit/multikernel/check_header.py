"""Compiles header_probe.cc against templates/runtime/kforge_multikernel.h with g++ and clang++ (-std=c++17,
strict warnings, -Werror) and with nvcc (host side, as CUDA code includes it) when it is installed, and runs
the g++ build. Usage: check_header.py SRC BUILD [PROBE] (PROBE: another probe of a templates/runtime/ header,
e.g. tests/unit/params/header_probe.cc for kforge_params.h)."""
import os
import shutil
import subprocess
import sys

source_dir, build_dir = sys.argv[1], sys.argv[2]
header_dir = os.path.join(source_dir, "templates", "runtime")
probe = sys.argv[3] if len(sys.argv) > 3 else os.path.join(source_dir, "tests", "unit", "multikernel", "header_probe.cc")
prefix = os.path.basename(os.path.dirname(os.path.abspath(probe))) + "_probe_"
strict = ["-std=c++17", "-Wall", "-Wextra", "-Wpedantic", "-Wshadow", "-Wconversion", "-Wsign-conversion",
          "-Wold-style-cast", "-Werror"]
failures = 0
os.makedirs(build_dir, exist_ok=True)


def compile_with(name, command):
    global failures
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0 or result.stderr.strip():
        failures += 1
        print(f"FAIL {name}: {' '.join(command)}\n{result.stdout}{result.stderr}")
        return False
    print(f"ok   {name}")
    return True


for compiler in ["g++", "clang++"]:
    if shutil.which(compiler) is None:
        print(f"skipped: {compiler} not found")
        continue
    out = os.path.join(build_dir, prefix + compiler.replace("+", "x"))
    if compile_with(compiler, [compiler, *strict, "-I", header_dir, probe, "-o", out, "-pthread"]):
        run = subprocess.run([out], capture_output=True, text=True)
        if run.returncode != 0:
            failures += 1
            print(f"FAIL running the {compiler} probe: {run.stdout}{run.stderr}")
nvcc = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc") else None)
if nvcc is None:
    print("skipped: nvcc not found")
else:
    compile_with("nvcc", [nvcc, "-std=c++17", "-x", "cu", "-Xcompiler", "-Wall,-Wextra,-Werror", "-I", header_dir,
                          "-c", probe, "-o", os.path.join(build_dir, prefix + "nvcc.o")])
sys.exit(1 if failures else 0)
