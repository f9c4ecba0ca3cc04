#!/usr/bin/env python3
"""CI check (no GPU needed) of the float32 attention kernel, templates/cuda/kforge_attention_f32.cuh: its launcher
and kernels (float32 and TF32), taken from the template as they are (includes dropped, the dynamic shared memory, the
launch and the TF32 instructions spelled for the host), run by tests/e2e/cuda_emulation/attention_f32_emulated.cpp with one std::thread per CUDA thread and
checked against float64 (see that file). AttentionArgs, key_limit and the launch helpers come from
kforge_attention_tile.cuh. Exit 77
(meson: skipped) when g++ is missing."""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile


def replace_once(text, old, new):
    if text.count(old) != 1:
        sys.exit(f"attention_f32_emulated.py: expected one '{old}' in the template; update the emulation")
    return text.replace(old, new)


def replace_function(text, signature, body):
    """The function that starts with `signature` (through its closing brace at the start of a line) given `body`."""
    start = text.find(signature)
    end = text.find("\n}\n", start)
    if start < 0 or text.count(signature) != 1 or end < 0:
        sys.exit(f"attention_f32_emulated.py: expected one '{signature}' in the template; update the emulation")
    return text[:start] + signature[:-1] + body + text[end + 2:]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--source-root", required=True)
    args = parser.parse_args()
    gxx = shutil.which("g++")
    if gxx is None:
        print("g++ not found: skipping")
        return 77
    cuda = os.path.join(args.source_root, "templates", "cuda")
    body = open(os.path.join(cuda, "kforge_attention_f32.cuh")).read()
    body = "\n".join(line for line in body.split("\n") if not line.startswith("#include"))
    body = replace_once(body, "extern __shared__ __align__(16) unsigned char smem_f32[];",
                        "unsigned char* smem_f32 = emu_smem;")
    body = replace_once(body, "extern __shared__ __align__(16) unsigned char smem_tf32[];",
                        "unsigned char* smem_tf32 = emu_smem;")
    # The TF32 kernel's two instructions (cvt.rna.tf32 and the warp's mma.sync m16n8k8), emulated on the host.
    body = replace_function(body, "__device__ __forceinline__ uint32_t to_tf32(float x) {",
                            "{ return emu_to_tf32(x); }")
    body = replace_function(body, "__device__ __forceinline__ void mma_tf32(float (&c)[4], const uint32_t (&a)[4], "
                            "uint32_t b0, uint32_t b1) {", "{ emu_mma_tf32(c, a, b0, b1); }")
    tile = open(os.path.join(cuda, "kforge_attention_tile.cuh")).read()
    struct = re.search(r"struct AttentionArgs \{.*?\n\};\n", tile, re.S)
    limit = re.search(r"__device__ __forceinline__ int64_t key_limit\(.*?\n\}\n", tile, re.S)
    # The launch helpers the kernels share (the launch itself spelled for the host).
    host = re.search(r"template <typename Kernel>\ninline cudaError_t launch_kernel\(.*?"
                     r"inline bool rows_aligned16\(.*?\n\}\n", tile, re.S)
    if struct is None or limit is None or host is None:
        sys.exit("attention_f32_emulated.py: AttentionArgs, key_limit or the launch helpers not found in "
                 "kforge_attention_tile.cuh")
    launch = replace_once(host.group(0), "kernel<<<grid, kThreads, bytes, stream>>>(a);",
                          "emu_launch(kernel, grid, bytes, a);")
    threads = re.search(r"constexpr int kThreads = [^;]*;", tile)
    warps = re.search(r"constexpr int kWarps = [^;]*;", tile)
    with tempfile.TemporaryDirectory(prefix="kforge-attention-f32-") as tmp:
        with open(os.path.join(tmp, "attention_f32_body.h"), "w") as f:
            f.write(body)
        with open(os.path.join(tmp, "attention_f32_args.h"), "w") as f:
            f.write("namespace kforge {\nnamespace cuda_attention {\n" + struct.group(0) +
                    "namespace detail {\n" + warps.group(0) + "\n" + threads.group(0) + "\n" +
                    limit.group(0) + launch + "}  // namespace detail\n}  // namespace cuda_attention\n"
                    "}  // namespace kforge\n")
        exe = os.path.join(tmp, "emulated")
        source = os.path.join(args.source_root, "tests", "e2e", "cuda_emulation", "attention_f32_emulated.cpp")
        r = subprocess.run([gxx, "-std=c++20", "-O1", "-ffp-contract=off", "-pthread", "-Wall", "-Wextra",
                            "-Wno-unused-parameter", "-I", tmp, source, "-o", exe],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0:
            print(f"FAIL: the emulation does not build:\n{r.stdout}")
            return 1
        r = subprocess.run([exe], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        print(r.stdout)
        return r.returncode


if __name__ == "__main__":
    sys.exit(main())
