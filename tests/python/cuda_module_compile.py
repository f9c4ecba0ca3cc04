#!/usr/bin/env python3
"""CI check (no GPU needed) of `kforge compile --target cuda --python MODULE`: the module's sources (NAME_python.cc
with the kforge_python*.h headers) and the CUDA class they wrap compile with nvcc for sm_90 against
this python's headers, warnings as errors, into an extension module that this python imports; NAME_python.cc
also with g++ and the CUDA headers alone. Without a GPU the
module must still import and describe itself, and making a model must raise RuntimeError (no device), not crash.
On a GPU machine tests/python/gpu_run.sh runs the same module on torch and cupy tensors.

Exit 77 (meson: skipped, saying why) when nvcc or Python.h is missing.

    cuda_module_compile.py --kforge BUILD/src/kforge --source-root ROOT
"""
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile

import build_checks

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
from nvcc_check import CHECK_OPT_FLAGS, find_nvcc  # noqa: E402

# The programs compiled: a Paddle model (GEMM with a bias epilogue, cast, scale: two outputs) and a program
# without parameters (fused elementwise chain: the module's parameter table is empty).
PROGRAMS = [
    ("wsn_cuda", "tests/paddle/weights_sorted_names/inference.json"),
    ("chain_cuda", "tests/e2e/fused/chain.yaml"),
]


def run(cmd, **kwargs):
    result = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kwargs)
    if result.returncode != 0:
        print("FAILED:", " ".join(cmd))
        print(result.stdout[-6000:])
    return result


IMPORT_CHECK = r'''
import sys
sys.path.insert(0, sys.argv[1])
import importlib
mod = importlib.import_module(sys.argv[2])
cls = getattr(mod, sys.argv[3])
inputs, outputs = sys.argv[4].split(","), sys.argv[5].split(",")
assert list(cls.input_names) == inputs, (cls.input_names, inputs)
assert list(cls.output_names) == outputs, (cls.output_names, outputs)
assert hasattr(mod, "DeviceTensor") and hasattr(mod, "Tensor")
for name in ("load_parameters", "run", "synchronize", "stream", "device"):
    assert hasattr(cls, name), name
try:
    model = cls()
except RuntimeError as e:
    assert "cudaGetDevice" in str(e), e   # no GPU here: a Python exception naming the call
    print("no GPU:", e)
else:
    print("a GPU is present: model on device", model.device)
    try:
        model.run(*[None] * len(inputs))
    except TypeError as e:
        assert "argument '%s'" % inputs[0] in str(e), e
    else:
        raise AssertionError("run(None) did not raise TypeError")
print("ok", sys.argv[2])
'''


def main():
    found = build_checks.setup(__doc__.splitlines()[0], "nvcc", find_nvcc(), "set NVCC or put nvcc on PATH")
    if found is None:
        return build_checks.SKIP
    args, nvcc, include = found
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    root = args.source_root
    kernels = os.path.join(root, "kernels")
    cuda_lib = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(nvcc))), "lib64")
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        for module, program in PROGRAMS:
            gen = os.path.join(tmp, module)
            name = module + "_model"
            r = run([args.kforge, "compile", os.path.join(root, program), "--ops", os.path.join(kernels, "ops.yaml"),
                     "--ops", os.path.join(kernels, "fusion.yaml"), "--op-compat",
                     os.path.join(kernels, "op_compat.yaml"), "-o", gen, "--name", name, "--target", "cuda",
                     "--python", module])
            if r.returncode != 0:
                ok = False
                continue
            libs = ["-lcublasLt"] if os.path.exists(os.path.join(gen, "kforge_cublaslt.cuh")) else []
            target = os.path.join(tmp, module + suffix)
            r = run([nvcc, "-std=c++17", "-arch=sm_90", *CHECK_OPT_FLAGS, "-shared",
                     "-Xcompiler", "-fPIC,-Wall,-Wextra,-Werror", "--Werror", "all-warnings", "-I", gen, "-I", include,
                     os.path.join(gen, name + ".cu"), os.path.join(gen, name + "_kernels.cu"),
                     os.path.join(gen, name + "_python.cc"), *libs, "-Xlinker", "-rpath=" + cuda_lib, "-o", target])
            if r.returncode != 0:
                ok = False
                continue
            # The module's own source needs only the CUDA runtime's headers: a host compiler builds it too.
            cxx = shutil.which("g++")
            if cxx is not None:
                r = run([cxx, "-std=c++17", "-O2", "-fPIC", "-Wall", "-Wextra", "-Werror", "-I", gen, "-I", include,
                         "-I", os.path.join(os.path.dirname(cuda_lib), "include"), "-c",
                         os.path.join(gen, name + "_python.cc"), "-o", os.path.join(tmp, module + "_gxx.o")])
                if r.returncode != 0:
                    ok = False
                    continue
            header = open(os.path.join(gen, name + ".h")).read()
            def names(kind):
                return ",".join(line.split()[2].rstrip(":") for line in header.splitlines()
                                if line.startswith("//   " + kind + " "))
            r = run([sys.executable, "-c", IMPORT_CHECK, tmp, module, name, names("input"), names("output")])
            if r.returncode != 0:
                ok = False
                continue
            print(r.stdout.strip())
    print("ok" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
