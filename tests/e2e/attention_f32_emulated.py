#!/usr/bin/env python3
"""CI check (no GPU needed) of the float32 attention kernel, templates/cuda/kforge_attention_f32.cuh: its launcher
and kernel, taken from the template as they are (includes dropped, the dynamic shared memory and the launch spelled
for the host), run by tests/e2e/cuda_emulation/attention_f32_emulated.cpp with one std::thread per CUDA thread and
checked against float64 (see that file). AttentionArgs and key_limit come from kforge_attention_tile.cuh. Exit 77
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
    body = replace_once(body, "kernel<<<grid, kThreads, bytes, stream>>>(a);", "emu_launch(kernel, grid, bytes, a);")
    tile = open(os.path.join(cuda, "kforge_attention_tile.cuh")).read()
    struct = re.search(r"struct AttentionArgs \{.*?\n\};\n", tile, re.S)
    limit = re.search(r"__device__ __forceinline__ int64_t key_limit\(.*?\n\}\n", tile, re.S)
    if struct is None or limit is None:
        sys.exit("attention_f32_emulated.py: AttentionArgs or key_limit not found in kforge_attention_tile.cuh")
    threads = re.search(r"constexpr int kThreads = [^;]*;", tile)
    warps = re.search(r"constexpr int kWarps = [^;]*;", tile)
    with tempfile.TemporaryDirectory(prefix="kforge-attention-f32-") as tmp:
        with open(os.path.join(tmp, "attention_f32_body.h"), "w") as f:
            f.write(body)
        with open(os.path.join(tmp, "attention_f32_args.h"), "w") as f:
            f.write("namespace kforge {\nnamespace cuda_attention {\n" + struct.group(0) +
                    "namespace detail {\n" + warps.group(0) + "\n" + threads.group(0) + "\n" +
                    limit.group(0) + "}  // namespace detail\n}  // namespace cuda_attention\n}  // namespace kforge\n")
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
