#!/usr/bin/env python3
"""CI check (no GPU needed): `kforge compile --target cuda` output compiles with nvcc -arch=sm_90 -std=c++17,
warnings as errors (-Werror all-warnings, host -Wall -Wextra), for programs that exercise every kernel shape:
an elementwise chain with fan-in/fan-out (--cuda-graph), broadcasts of every access kind (inner, outer, scalar,
strided), and row groups (softmax as a pattern and spelled out, layer_norm with prologue and epilogue, row
values). Also checks that an op outside every fused group is an error at its place with --target cuda.
Each program's two translation units are compiled in parallel; about 30 s of CPU in all.

Exit 77 (meson: skipped) only when nvcc is missing. The GPU run itself is bench/fusion/gpu_check.sh.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

# (program relative to the source root, class name, extra flags)
PROGRAMS = [
    ("tests/e2e/fused/chain.yaml", "chain", ["--cuda-graph"]),
    ("tests/e2e/fused/broadcast.yaml", "broadcast", []),
    ("tests/e2e/fused/softmax.yaml", "softmax", []),
    ("tests/e2e/fused/layer_norm.yaml", "layer_norm", ["--cuda-graph"]),
    ("tests/e2e/fused/lone_op.yaml", "lone_op", []),
]


def find_nvcc():
    for candidate in (os.environ.get("NVCC"), shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kforge", required=True)
    parser.add_argument("--source-root", required=True)
    args = parser.parse_args()
    nvcc = find_nvcc()
    if nvcc is None:
        print("nvcc not found: skipping")
        return 77
    root = args.source_root
    ex = os.path.join(root, "examples", "kernels")
    ops = ["--ops", os.path.join(ex, "ops.yaml"), "--ops", os.path.join(ex, "fusion.yaml"),
           "--op-compat", os.path.join(ex, "op_compat.yaml")]
    failed = False
    with tempfile.TemporaryDirectory(prefix="kforge-cuda-") as tmp:
        jobs = []
        for program, name, flags in PROGRAMS:
            gen = os.path.join(tmp, name)
            r = subprocess.run([args.kforge, "compile", os.path.join(root, program)] + ops +
                               ["-o", gen, "--name", name, "--target", "cuda"] + flags,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            if r.returncode != 0:
                print(f"FAIL kforge compile --target cuda {program}:\n{r.stdout}")
                failed = True
                continue
            for required in [f"{name}.h", f"{name}.cu", f"{name}_kernels.cu", "kforge_runtime.h",
                             "kforge_cuda_runtime.h", "kforge_fused.cuh"]:
                if not os.path.isfile(os.path.join(gen, required)):
                    print(f"FAIL {program}: {required} not written")
                    failed = True
            kernels = open(os.path.join(gen, f"{name}_kernels.cu")).read()
            host = open(os.path.join(gen, f"{name}.cu")).read()
            if "return cudaGetLastError();" not in kernels or "launch_failed(" not in host:
                print(f"FAIL {program}: no error check after the launches")
                failed = True
            if ("--cuda-graph" in flags) != ("graphs_.launch(" in host):
                print(f"FAIL {program}: graph replay present/absent against the flag")
                failed = True
            for unit in [f"{name}_kernels.cu", f"{name}.cu"]:
                cmd = [nvcc, "-arch=sm_90", "-std=c++17", "-Werror", "all-warnings", "-Xcompiler", "-Wall,-Wextra",
                       "-I", gen, "-c", os.path.join(gen, unit), "-o", os.path.join(gen, unit + ".o")]
                jobs.append((cmd, subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)))
                if len(jobs) >= 2:  # 2 cores in CI
                    cmd0, p0 = jobs.pop(0)
                    out = p0.communicate()[0]
                    if p0.returncode != 0:
                        print("FAIL:", " ".join(cmd0), "\n", out)
                        failed = True
        for cmd, p in jobs:
            out = p.communicate()[0]
            if p.returncode != 0:
                print("FAIL:", " ".join(cmd), "\n", out)
                failed = True

        # An op in no fused group (matmul) is an error at its place with --target cuda.
        r = subprocess.run([args.kforge, "compile", os.path.join(root, "tests/e2e/fused/mixed.yaml")] + ops +
                           ["-o", os.path.join(tmp, "mixed"), "--target", "cuda"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode != 1 or "mixed.yaml:11:5: error: --target cuda: op 'matmul'" not in r.stdout:
            print(f"FAIL: expected a located error for the matmul, got exit {r.returncode}:\n{r.stdout}")
            failed = True
    if not failed:
        print(f"{len(PROGRAMS)} programs: kforge --target cuda output compiles with nvcc -arch=sm_90 -Werror")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
