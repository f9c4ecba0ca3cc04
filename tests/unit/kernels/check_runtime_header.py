"""Compiles runtime_probe.cc against templates/runtime/kforge_runtime.h (and kforge_shape_meta.h,
kforge_shape_meta_interp.h, kforge_math.h, kforge_sampling.h) with g++ and clang++ (-std=c++17, strict
warnings, -Werror) and nvcc when it is installed, then runs the g++ build. Usage: check_runtime_header.py SRC BUILD."""
import os
import shutil
import subprocess
import sys

source_dir, build_dir = sys.argv[1], sys.argv[2]
header_dir = os.path.join(source_dir, "templates", "runtime")
probe = os.path.join(source_dir, "tests", "unit", "kernels", "runtime_probe.cc")
strict = ["-std=c++17", "-Wall", "-Wextra", "-Wpedantic", "-Wshadow", "-Wconversion", "-Wsign-conversion",
          "-Wold-style-cast", "-Werror"]
failures = 0


def compile_with(name, command):
    global failures
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0 or result.stderr.strip():
        failures += 1
        print(f"FAIL {name}: {' '.join(command)}\n{result.stdout}{result.stderr}")
    else:
        print(f"ok   {name}")
    return result.returncode == 0


os.makedirs(build_dir, exist_ok=True)
binary = os.path.join(build_dir, "runtime_probe_gcc")
for compiler in ["g++", "clang++"]:
    if shutil.which(compiler) is None:
        print(f"skipped: {compiler} not found")
        continue
    out = binary if compiler == "g++" else os.path.join(build_dir, "runtime_probe_clang")
    if compile_with(compiler, [compiler, *strict, "-I", header_dir, probe, "-o", out]):
        run = subprocess.run([out], capture_output=True, text=True)
        if run.returncode != 0:
            failures += 1
            print(f"FAIL running the {compiler} probe: {run.stdout}{run.stderr}")
nvcc = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc") else None)
if nvcc is None:
    print("skipped: nvcc not found")
else:
    cu = os.path.join(build_dir, "runtime_probe.cu")
    shutil.copyfile(probe, cu)
    compile_with("nvcc", [nvcc, "-std=c++17", "-Werror", "all-warnings", "-Xcompiler", "-Wall,-Wextra,-Werror",
                          "-I", header_dir, "-c", cu, "-o", os.path.join(build_dir, "runtime_probe_cu.o")])
sys.exit(1 if failures else 0)
