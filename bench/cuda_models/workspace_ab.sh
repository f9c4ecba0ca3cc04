#!/bin/bash
# A/B of the cuDNN workspace limit (KFORGE_CUDNN_WORKSPACE_BYTES, kforge_cudnn.cuh: the algorithms the heuristics
# list that need more are not considered): the resnet50 and mobilenet_v2 --cuda-graph harnesses of
# `bench/cuda_models/run.sh prepare BUILD` built with 64 (the default), 256 and 1024 MiB, each with its own fresh
# multi-kernel cache, timed at batch 1 and 10 in two interleaved rounds. Prints the harness's line (batch, median ms,
# best ms) per build.
#
#   bench/cuda_models/workspace_ab.sh BUILD    GPU machine, carrying BUILD/cuda-models
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
# shellcheck source=bench/cudnn_env.sh
source "$ROOT/bench/cudnn_env.sh"
use_wheel_cudnn > /dev/null
NVCC="${NVCC:-/usr/local/cuda/bin/nvcc}"
dir="${1:?usage: workspace_ab.sh BUILD}/cuda-models"
out="$(mktemp -d)"
libs=(-lcudnn -lcublasLt -lcublas)
[[ -n "${CUDNN_DIR:-}" ]] && libs=(-I "$CUDNN_DIR/include" -L "$CUDNN_DIR/lib" -l:libcudnn.so.9 -lcublasLt -lcublas)
for m in resnet50 mobilenet_v2; do
  for ws in 64 256 1024; do
    gen="$dir/$m/gen_graph"
    "$NVCC" -arch=sm_90 -std=c++17 -O2 -I "$gen" -DKFORGE_PROGRAM_HEADER="\"$m.h\"" -DKFORGE_PROGRAM_CLASS="$m" \
      "-DKFORGE_CUDNN_WORKSPACE_BYTES=(size_t{$ws}<<20)" "$ROOT/bench/cuda_models/timing_harness.cu" "$gen/$m.cu" \
      "$gen/${m}_kernels.cu" -o "$out/${m}_$ws" "${libs[@]}" &
  done
done
wait
for round in 1 2; do
  for m in resnet50 mobilenet_v2; do
    for b in 1 10; do
      for ws in 64 256 1024; do
        echo "round $round $m b$b ws$ws: $(KFORGE_CACHE_DIR="$out/cache_$ws" "$out/${m}_$ws" "$dir/$m/params.txt" "$b" | tail -1)"
      done
    done
  done
done
rm -rf "$out"
