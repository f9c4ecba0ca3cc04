#!/bin/bash
# A/B of the cuDNN workspace limit (`kforge compile --cudnn-workspace-mib`: each convolution's workspace is a buffer
# of the memory plan of that size; the algorithms cuDNN's heuristics list that need more are not considered): the
# resnet50 and mobilenet_v2 --cuda-graph programs of `bench/cuda_models/run.sh prepare BUILD` generated with 0, 64 (the
# default), 256 and 1024 MiB, each built with the timing harness and its own fresh multi-kernel cache, timed at batch
# 1 and 10 in two interleaved rounds. Prints the harness's line (batch, median ms, best ms) per build, and at prepare
# the planned workspace of each program at batch 1 and 10 (the convolutions' scratch included).
#
#   bench/cuda_models/workspace_ab.sh prepare BUILD    here, after run.sh prepare BUILD (writes BUILD/cuda-models/M/gen_ws*)
#   bench/cuda_models/workspace_ab.sh run BUILD        GPU machine, carrying BUILD/cuda-models
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
MODELS="resnet50 mobilenet_v2"
SIZES="0 64 256 1024"
dir="${2:?usage: workspace_ab.sh prepare|run BUILD}/cuda-models"

# MiB of the C++ size expression $1 at s0 = $2.
mib() {
  python3 -c "
import sys
def kforge_ceil_div(a, b): return -(-a // b)
def kforge_floor_div(a, b): return a // b
s0 = int(sys.argv[2])
print(round(eval(sys.argv[1].replace('std::max<int64_t>', 'max').replace('std::min<int64_t>', 'min')) / 2**20, 1))
" "$1" "$2"
}

prepare() {
  local kforge="${KFORGE:-$1/src/kforge}" ex="$ROOT/kernels" m ws
  for m in $MODELS; do
    for ws in $SIZES; do
      "$kforge" compile "$dir/$m/inference.json" --ops "$ex/ops.yaml" --ops "$ex/fusion.yaml" \
        --op-compat "$ex/op_compat.yaml" -o "$dir/$m/gen_ws$ws" --name "$m" --target cuda --cuda-graph \
        --cudnn-workspace-mib "$ws"
      # run()'s reserve of the workspace is an expression of the batch s0: print it at 1 and 10.
      local expr
      expr="$(sed -n 's/.*workspace_\.reserve(static_cast<size_t>(\(.*\)) + 64));/\1/p' "$dir/$m/gen_ws$ws/$m.cu")"
      echo "$m ws$ws: planned workspace $(mib "$expr" 1) MiB at batch 1, $(mib "$expr" 10) MiB at batch 10"
    done
  done
}

run() {
  # shellcheck source=bench/cudnn_env.sh
  source "$ROOT/bench/cudnn_env.sh"
  use_wheel_cudnn > /dev/null
  local nvcc="${NVCC:-/usr/local/cuda/bin/nvcc}" out m ws b round
  out="$(mktemp -d)"
  local libs=(-lcudnn -lcublasLt -lcublas)
  [[ -n "${CUDNN_DIR:-}" ]] && libs=(-I "$CUDNN_DIR/include" -L "$CUDNN_DIR/lib" -l:libcudnn.so.9 -lcublasLt -lcublas)
  for m in $MODELS; do
    for ws in $SIZES; do
      local gen="$dir/$m/gen_ws$ws"
      "$nvcc" -arch=sm_90 -std=c++17 -O2 -I "$gen" -DKFORGE_PROGRAM_HEADER="\"$m.h\"" -DKFORGE_PROGRAM_CLASS="$m" \
        "$ROOT/bench/cuda_models/timing_harness.cu" "$gen/$m.cu" "$gen/${m}_kernels.cu" -o "$out/${m}_$ws" "${libs[@]}" &
    done
  done
  wait
  for round in 1 2; do
    for m in $MODELS; do
      for b in 1 10; do
        for ws in $SIZES; do
          echo "round $round $m b$b ws$ws: $(KFORGE_CACHE_DIR="$out/cache_$ws" "$out/${m}_$ws" "$dir/$m/params.txt" "$b" | tail -1)"
        done
      done
    done
  done
  rm -rf "$out"
}

case "${1:-}" in
  prepare) prepare "$2" ;;
  run) run ;;
  *) echo "usage: workspace_ab.sh prepare BUILD | workspace_ab.sh run BUILD" >&2; exit 2 ;;
esac
