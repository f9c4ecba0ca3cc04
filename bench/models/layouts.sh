#!/usr/bin/env bash
# The two CPU layout plans of one model side by side: kforge's code compiled with --layout nhwc and with --layout
# nchw8c (oneDNN's blocked layout kept between layers, docs/compile.md), and with --layout auto (the default: where
# the model gets both plans, the class picks one by the CPU's ISA when it is constructed; run it with
# ONEDNN_MAX_CPU_ISA=AVX2 in the environment to see the AVX2 pick on an AVX-512 machine), with ONNX Runtime
# (paddle2onnx) beside them, timed by ab.py in interleaved rounds (median process CPU ms per inference, ratios to nhwc).
#
#   bench/models/layouts.sh [BUILD_DIR] [--models "resnet18 mobilenet_v2"] [--sizes "224 64"] [--rounds R]
#
# The models are the exports of run.sh in BUILD_DIR/bench-models (run.sh makes them: run it first); Python as in
# run.sh ($KFORGE_BENCH_PYTHON, else BUILD_DIR/bench-venv). One thread.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
BUILD="$(cd "${1:-$ROOT/build}" && pwd)"
[ "$#" -gt 0 ] && shift
MODELS="resnet18 mobilenet_v2 resnet50 mobilenet_v3_small shufflenet_v2_x1_0" SIZES="224 64" ROUNDS=12
while [ "$#" -gt 0 ]; do
  case "$1" in
    --models) MODELS="$2"; shift 2 ;;
    --sizes) SIZES="$2"; shift 2 ;;
    --rounds) ROUNDS="$2"; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
PYTHON="${KFORGE_BENCH_PYTHON:-$BUILD/bench-venv/bin/python}"
ninja -C "$BUILD" src/kforge kernels/libkforge_kernels.a >/dev/null
read -ra LINK < "$BUILD/kernels/kforge_kernels.link"
echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; kforge $(git -C "$ROOT" rev-parse --short HEAD)"
for model in $MODELS; do
  for size in $SIZES; do
    dir="$BUILD/bench-models/${model}_${size}"
    [ -f "$dir/bundle.kftb" ] || { echo "$dir: no export; run bench/models/run.sh first" >&2; exit 1; }
    for layout in nhwc nchw8c auto; do
      "$BUILD/src/kforge" compile "$dir/inference.json" --ops "$ROOT/kernels/ops.yaml" --ops "$ROOT/kernels/fusion.yaml" \
        --op-compat "$ROOT/kernels/op_compat.yaml" -o "$dir/gen-$layout" --name net --target cpu --layout "$layout"
      g++ -std=c++17 -O2 -Wall -Wextra -Werror -I "$dir/gen-$layout" -I "$ROOT/tools/interp" -I "$ROOT/kernels" \
        -DKFORGE_MODEL_HEADER='"net.h"' -DKFORGE_MODEL_CLASS=net "$ROOT/bench/models/worker.cc" \
        "$dir/gen-$layout/net.cc" "$BUILD/kernels/libkforge_kernels.a" "${LINK[@]}" -o "$dir/worker-$layout"
    done
    echo "== ${model} ${size}x${size}"
    python3 "$ROOT/bench/models/ab.py" "$ROUNDS" 3 \
      "nhwc::::$dir/worker-nhwc $dir/bundle.kftb" "nchw8c::::$dir/worker-nchw8c $dir/bundle.kftb" \
      "auto::::$dir/worker-auto $dir/bundle.kftb" \
      "ort::::$PYTHON $ROOT/bench/models/engine.py ort $dir 1"
  done
done
