#!/bin/bash
# A/B of how kforge chooses each cuDNN convolution's method (kforge_cudnn.cuh), on the GPU machine, with the
# --cuda-graph harnesses of bench/cuda_models/run.sh (BUILD/cuda-models, made by `run.sh prepare BUILD`):
#   heuristics  KFORGE_MULTI_KERNEL_BENCHMARK=0, no disk cache: cuDNN's heuristics' first algorithm, the epilogue as
#               its own kernel (what kforge did before the multi-kernel choice)
#   benchmarked the multi-kernel dispatcher: every algorithm the heuristics allow, alone and fused with its epilogue
#               (cudnnConvolutionBiasActivationForward), timed once per shape; the pick kept in a fresh cache
#               directory
#   cached      the same, a second process: every pick read from that cache (nothing benchmarked)
# ROUNDS rounds (default 3), the three in turn per model and batch; each cell is one process's median of 50 runs
# (timing_harness.cu). The picks of the benchmarked runs are logged to OUTDIR/picks-MODEL-BATCH.txt.
#
#   bench/cuda_models/conv_choice_ab.sh BUILD [OUTDIR]
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
# shellcheck source=bench/cudnn_env.sh
source "$ROOT/bench/cudnn_env.sh"
DIR="$1/cuda-models"
OUTDIR="${2:-$DIR/conv-choice}"
ROUNDS="${ROUNDS:-3}"
MODELS="${MODELS:-resnet18 resnet50 mobilenet_v2}"
mkdir -p "$OUTDIR"
use_wheel_cudnn
"$HERE/run.sh" build "$1" >/dev/null || echo "some harnesses did not build: timing the others" >&2

cell() {  # NAME MODEL BATCH [ENV...]: one harness process, prints its median
  local name="$1" m="$2" batch="$3"
  shift 3
  env "$@" "$DIR/bin/${m}_graph" "$DIR/$m/params.txt" "$batch" | awk -v n="$name" '{print n, $2}'
}

printf '%-13s %5s %5s %11s %11s %11s\n' model batch round heuristics benchmarked cached
for m in $MODELS; do
  [[ -x "$DIR/bin/${m}_graph" ]] || continue
  for batch in 1 10; do
    for round in $(seq 1 "$ROUNDS"); do
      cache="$(mktemp -d)"
      h=$(cell heuristics "$m" "$batch" KFORGE_MULTI_KERNEL_BENCHMARK=0 KFORGE_MULTI_KERNEL_CACHE=0 | cut -d' ' -f2)
      b=$(cell benchmarked "$m" "$batch" KFORGE_CACHE_DIR="$cache" KFORGE_MULTI_KERNEL_LOG=1 \
            2> "$OUTDIR/picks-$m-$batch.txt" | cut -d' ' -f2)
      c=$(cell cached "$m" "$batch" KFORGE_CACHE_DIR="$cache" | cut -d' ' -f2)
      rm -rf "$cache"
      printf '%-13s %5s %5s %11s %11s %11s\n' "$m" "$batch" "$round" "$h" "$b" "$c"
    done
  done
done
