#!/usr/bin/env bash
# Whole-model CPU benchmark: paddle.vision models exported with paddle.jit.save, compiled by kforge (with
# kernels/fusion.yaml; the default layout plan, NHWC convolution regions, and again with --layout nchw) against
# BUILD's kernel library (oneDNN), timed against Paddle's predictor (enable_mkldnn) and ONNX Runtime (paddle2onnx)
# in one run of compare.py per model (interleaved rounds, process CPU time, each engine in its own process).
#
#   bench/models/run.sh [BUILD_DIR] [--reference-build DIR] [--models "resnet18 mobilenet_v2"] [--sizes "64 224"]
#                       [--rounds R] [--threads N] [--no-fuse]
#
# --no-fuse: also the code compiled with --no-fuse.
# --reference-build: a build configured with -Donednn=disabled; adds kforge on the reference loops to the table.
# Python: $KFORGE_BENCH_PYTHON if set (a venv with paddlepaddle, paddle2onnx, onnxruntime, numpy), else a venv made
# on demand in BUILD_DIR/bench-venv (pip install paddlepaddle==3.3.1 paddle2onnx onnxruntime numpy).
# Exports are kept in BUILD_DIR/bench-models (delete it to re-export).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
BUILD="$(cd "${1:-$ROOT/build}" && pwd)"
[ "$#" -gt 0 ] && shift
REF_BUILD="" MODELS="resnet18 mobilenet_v2" SIZES="64 224" ROUNDS=10 THREADS=1 NO_FUSE=0
while [ "$#" -gt 0 ]; do
  case "$1" in
    --reference-build) REF_BUILD="$(cd "$2" && pwd)"; shift 2 ;;
    --models) MODELS="$2"; shift 2 ;;
    --sizes) SIZES="$2"; shift 2 ;;
    --rounds) ROUNDS="$2"; shift 2 ;;
    --threads) THREADS="$2"; shift 2 ;;
    --no-fuse) NO_FUSE=1; shift ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done

PYTHON="${KFORGE_BENCH_PYTHON:-}"
if [ -z "$PYTHON" ]; then
  PYTHON="$BUILD/bench-venv/bin/python"
  if ! "$PYTHON" -c "import paddle, paddle2onnx, onnxruntime, numpy" 2>/dev/null; then
    python3 -m venv "$BUILD/bench-venv"
    "$PYTHON" -m pip install --quiet paddlepaddle==3.3.1 paddle2onnx onnxruntime numpy
  fi
fi

kernels_link() {  # what BUILD_DIR's kernel library needs after it
  local link=()
  read -ra link < "$1/kernels/kforge_kernels.link"
  echo "${link[@]}"
}
ninja -C "$BUILD" src/kforge kernels/libkforge_kernels.a >/dev/null
[ -n "$REF_BUILD" ] && ninja -C "$REF_BUILD" kernels/libkforge_kernels.a >/dev/null
OPS=(--ops "$ROOT/kernels/ops.yaml" --ops "$ROOT/kernels/fusion.yaml")
EXTRA=()
if ! grep -q '^- op : relu6$' "$ROOT/kernels/ops.yaml"; then
  OPS+=(--ops "$ROOT/bench/models/extra_ops.yaml")
  EXTRA=("$ROOT/bench/models/extra_kernels.cc")
fi

echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "kforge $(git -C "$ROOT" rev-parse --short HEAD), $("$PYTHON" -c 'import paddle, onnxruntime; print("paddle", paddle.__version__, "onnxruntime", onnxruntime.__version__)')"
for model in $MODELS; do
  for size in $SIZES; do
    dir="$BUILD/bench-models/${model}_${size}"
    [ -f "$dir/bundle.kftb" ] || "$PYTHON" "$ROOT/bench/models/export.py" "$model" "$size" "$dir"
    variants=(fuse nchw)
    [ "$NO_FUSE" = 1 ] && variants+=(no-fuse)
    for variant in "${variants[@]}"; do
      flags=()
      [ "$variant" = no-fuse ] && flags=(--no-fuse)
      [ "$variant" = nchw ] && flags=(--layout nchw)
      "$BUILD/src/kforge" compile "$dir/inference.json" "${OPS[@]}" --op-compat "$ROOT/kernels/op_compat.yaml" \
        -o "$dir/gen-$variant" --name net --target cpu "${flags[@]}"
    done
    build_worker() {  # BUILD_DIR GEN_DIR OUTPUT
      # shellcheck disable=SC2046
      g++ -std=c++17 -O2 -Wall -Wextra -Werror -I "$2" -I "$ROOT/tools/interp" -I "$ROOT/kernels" \
        -DKFORGE_MODEL_HEADER='"net.h"' -DKFORGE_MODEL_CLASS=net "$ROOT/bench/models/worker.cc" "$2/net.cc" \
        "${EXTRA[@]}" "$1/kernels/libkforge_kernels.a" $(kernels_link "$1") -o "$3"
    }
    build_worker "$BUILD" "$dir/gen-fuse" "$dir/worker"
    build_worker "$BUILD" "$dir/gen-nchw" "$dir/worker-nchw"
    variant_args=(--kforge-nchw "$dir/worker-nchw")
    if [ "$NO_FUSE" = 1 ]; then
      build_worker "$BUILD" "$dir/gen-no-fuse" "$dir/worker-no-fuse"
      variant_args+=(--kforge-no-fuse "$dir/worker-no-fuse")
    fi
    ref_args=()
    if [ -n "$REF_BUILD" ]; then
      build_worker "$REF_BUILD" "$dir/gen-fuse" "$dir/worker-reference"
      ref_args=(--kforge-reference "$dir/worker-reference")
    fi
    "$PYTHON" "$ROOT/bench/models/compare.py" "$dir" --kforge "$dir/worker" "${variant_args[@]}" \
      "${ref_args[@]}" --rounds "$ROUNDS" --threads "$THREADS"
    echo
  done
done
