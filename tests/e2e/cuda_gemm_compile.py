#!/usr/bin/env python3
"""CI check (no GPU needed): kforge's CUDA GEMM headers (templates/cuda/*.cuh, with the multi-kernel runtime
header), the GPU benchmark that uses every one of them, the logits and PDL benchmarks, the GPU checks of cuBLASLt's
padded products (tests/gpu/gemm_padded_check.cu, compact_rows_check.cu), of its gelu epilogues
(tests/gpu/gemm_gelu_check.cu), that of the data-dependent ops (tests/gpu/select_check.cu) and that of cuDNN's fused
convolution + bias + ReLU (tests/gpu/conv_fused_check.cu) compile with nvcc for sm_90, warnings as errors.

Exit 77 (meson: skipped) only when nvcc is missing. One translation unit (about 20 s of CPU): the benchmark
includes kforge_gemm_variants.cuh, which includes the other GEMM headers, and instantiates every kernel.
"""
import argparse
import os
import subprocess
import sys
import tempfile

from nvcc_check import CHECK_OPT_FLAGS, find_nvcc


def run(cmd):
    result = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if result.returncode != 0:
        print("FAILED:", " ".join(cmd))
        print(result.stdout)
    return result.returncode == 0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--source-root", required=True)
    args = parser.parse_args()
    nvcc = find_nvcc()
    if nvcc is None:
        print("nvcc not found: skipping")
        return 77
    root = args.source_root
    includes = ["-I", os.path.join(root, "templates", "runtime"), "-I", os.path.join(root, "templates", "cuda")]
    strict = ["-std=c++17", "-arch=sm_90", "--Werror", "all-warnings", "-Xcompiler", "-Wall,-Wextra,-Werror",
              *CHECK_OPT_FLAGS]
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        # The benchmark: every kernel instantiation through ptxas for sm_90 (at -O0: nvcc_check.py).
        bench = os.path.join(root, "bench", "multikernel", "gemm_gpu_bench.cu")
        ok &= run([nvcc, *strict, *includes, "-c", bench, "-o", os.path.join(tmp, "gemm_gpu_bench.o")])
        # The GPU check of cuBLASLt's padded-N products (run on the GPU machine: tests/gpu/README.md).
        padded = os.path.join(root, "tests", "gpu", "gemm_padded_check.cu")
        ok &= run([nvcc, *strict, *includes, "-c", padded, "-o", os.path.join(tmp, "gemm_padded_check.o")])
        # The GPU check of the gelu epilogues on every path (in cuBLASLt's GELU_BIAS, an unaligned bias, padded N).
        gelu = os.path.join(root, "tests", "gpu", "gemm_gelu_check.cu")
        ok &= run([nvcc, *strict, *includes, "-c", gelu, "-o", os.path.join(tmp, "gemm_gelu_check.o")])
        # And of the copy out of those products' rows.
        compact = os.path.join(root, "tests", "gpu", "compact_rows_check.cu")
        ok &= run([nvcc, *strict, *includes, "-c", compact, "-o", os.path.join(tmp, "compact_rows_check.o")])
        # The logits benchmark (the three ways to an unaligned N; bench/transformers/logits_bench.cu).
        logits = os.path.join(root, "bench", "transformers", "logits_bench.cu")
        ok &= run([nvcc, *strict, *includes, "-c", logits, "-o", os.path.join(tmp, "logits_bench.o")])
        # The programmatic-dependent-launch benchmark (bench/transformers/pdl_bench.cu: cudaLaunchKernelEx with a
        # launch attribute, cudaGridDependencySynchronize).
        pdl = os.path.join(root, "bench", "transformers", "pdl_bench.cu")
        ok &= run([nvcc, *strict, *includes, "-c", pdl, "-o", os.path.join(tmp, "pdl_bench.o")])
        # The GPU check of the compactions and unique (kforge_select.cuh, kforge_unique.cuh: CUB from the toolkit).
        select = os.path.join(root, "tests", "gpu", "select_check.cu")
        ok &= run([nvcc, *strict, *includes, "-c", select, "-o", os.path.join(tmp, "select_check.o")])
        # The GPU check of cuDNN's fused convolution + bias + ReLU methods (sums, and NaN through the ReLU).
        fused = os.path.join(root, "tests", "gpu", "conv_fused_check.cu")
        ok &= run([nvcc, *strict, "-c", fused, "-o", os.path.join(tmp, "conv_fused_check.o")])
    print("ok" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
