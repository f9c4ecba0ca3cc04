#!/bin/bash
# GPU benchmark of kforge's fused CUDA kernels against torch eager and torch.compile (BENCHMARKS.md, "Fused
# CUDA kernels"). Two halves, because the GPU machine only runs:
#   bench/fusion/run.sh prepare BUILD   on the build machine: `kforge compile --target cuda` of the five
#                                       programs in bench/fusion/programs/ and nvcc -arch=sm_90 of each with
#                                       bench_driver.cu into BUILD/fusion-bench/ (carry that folder)
#   bench/fusion/run.sh run BUILD       on the GPU machine: bench.py times each case with kforge, torch eager
#                                       and torch.compile in the same process run (CUDA events, warm-up,
#                                       median) plus a device-to-device copy, and prints the table
#   bench/fusion/run.sh BUILD           both, on a GPU machine that has the build.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
NVCC="${NVCC:-/usr/local/cuda/bin/nvcc}"

prepare() {
  local build="$1" kforge="$1/src/kforge" ex="$ROOT/kernels" out="$1/fusion-bench"
  rm -rf "$out" && mkdir -p "$out"
  # case:program:flags
  local cases="chain8:chain8: bias_gelu:bias_gelu: softmax:softmax: layer_norm:layer_norm: tiny20:tiny20:--cuda-graph"
  local pids=()
  for c in $cases; do
    IFS=: read -r name prog flags <<<"$c"
    local gen="$out/gen_$name"
    "$kforge" compile "$HERE/programs/$prog.yaml" --ops "$ex/ops.yaml" --ops "$ex/fusion.yaml" \
      --op-compat "$ex/op_compat.yaml" -o "$gen" --name "$name" --target cuda $flags
    "$NVCC" -arch=sm_90 -std=c++17 -O3 -Werror all-warnings -I "$gen" -DKFORGE_PROGRAM_HEADER="\"$name.h\"" \
      -DKFORGE_PROGRAM_CLASS="$name" "$HERE/bench_driver.cu" "$gen/$name.cu" "$gen/${name}_kernels.cu" \
      -o "$out/$name" &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
  echo "prepared $out"
}

run() {
  local bin="$1/fusion-bench"
  shift
  PYTHONUNBUFFERED=1 python3 "$HERE/bench.py" --bin "$bin" "$@"
}

case "${1:-}" in
  prepare) prepare "$2" ;;
  run) shift; run "$@" ;;
  "") echo "usage: run.sh prepare BUILD | run.sh run BUILD | run.sh BUILD" >&2; exit 2 ;;
  *) prepare "$1"; run "$@" ;;
esac
