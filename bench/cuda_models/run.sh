#!/bin/bash
# GPU timing of whole vision models (issue 14): Paddle's resnet18, resnet50 and mobilenet_v2 (paddle.vision.models,
# 224x224, a dynamic batch) compiled by `kforge compile --target cuda` with and without --cuda-graph (default layout
# plan: NHWC), and with --cuda-graph --layout nchw, against
# torchvision's same models in torch on the same GPU: eager, a CUDA graph captured by hand, and
# torch.compile(mode="reduce-overhead") while time is left. Batch 1 and 10, float32, TF32 allowed for the
# convolutions on both sides (torch's default cudnn.allow_tf32; kforge's default set_conv_tf32(true)), float32
# GEMMs on both sides. Median of 50 runs after 10 warm-ups, each run a host clock around run() + synchronize
# (torch: model(x) or graph.replay(), then torch.cuda.synchronize()).
#
#   bench/cuda_models/run.sh prepare BUILD   build machine: exports the models with Paddle (PADDLE_PYTHON), compiles
#                                            them with BUILD/src/kforge (or KFORGE) -> BUILD/cuda-models: generated
#                                            sources, the programs and their parameter lists only, no weights
#   bench/cuda_models/run.sh run BUILD [--no-torch-compile]
#                                            GPU machine: builds the timing harnesses with nvcc (all cores), times
#                                            them, then torch, and prints one table
# Correctness is checked by tests/gpu/check_conv.sh; the harness binds seeded random parameters of realistic
# scale (export_models.py's ranges) so that no weights travel (resnet50's alone exceed the 64 MiB limit).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
# shellcheck source=bench/cudnn_env.sh
source "$ROOT/bench/cudnn_env.sh"
NVCC="${NVCC:-/usr/local/cuda/bin/nvcc}"
# Paddle 3.3.1: PADDLE_PYTHON, else the virtual environment tools/check-paddle-models creates in BUILD/paddle-venv.
PADDLE_PYTHON="${PADDLE_PYTHON:-}"
MODELS="${MODELS:-resnet18 resnet50 mobilenet_v2}"
BATCHES="1 10"

prepare() {
  local out="$1/cuda-models" ex="$ROOT/kernels" kforge="${KFORGE:-$1/src/kforge}" m graph
  PADDLE_PYTHON="${PADDLE_PYTHON:-$1/paddle-venv/bin/python}"
  local export_dir
  rm -rf "$out" && mkdir -p "$out"
  export_dir="$(mktemp -d)"
  # shellcheck disable=SC2086
  "$PADDLE_PYTHON" "$HERE/export_models.py" "$export_dir" $MODELS 2>&1 | grep -v '^W[0-9]' || true
  for m in $MODELS; do
    mkdir -p "$out/$m"
    cp "$export_dir/$m/inference.json" "$export_dir/$m/params.txt" "$out/$m/"
    # Variants: plain, graph (--cuda-graph) in the default layout plan (NHWC), graph_nchw (--layout nchw), and
    # graph_fp16 / graph_bf16 and plain_fp16 (--precision float16 / bfloat16).
    for variant in plain graph graph_nchw graph_fp16 graph_bf16 plain_fp16; do
      local gen="$out/$m/gen$([[ $variant == plain ]] || echo "_$variant")" flags=()
      [[ $variant == graph* ]] && flags+=(--cuda-graph)
      [[ $variant == *nchw ]] && flags+=(--layout nchw)
      [[ $variant == *fp16 ]] && flags+=(--precision float16)
      [[ $variant == *bf16 ]] && flags+=(--precision bfloat16)
      if "$kforge" compile "$out/$m/inference.json" --ops "$ex/ops.yaml" --ops "$ex/fusion.yaml" \
           --op-compat "$ex/op_compat.yaml" -o "$gen" --name "$m" --target cuda "${flags[@]}" 2> "$out/$m/error.txt"; then
        echo "$m $variant" >> "$out/compiled"
        rm -f "$out/$m/error.txt"
      else
        echo "kforge refused $m ${flags[*]}:" >&2
        head -3 "$out/$m/error.txt" >&2
        rm -rf "$gen"
      fi
    done
  done
  rm -rf "$export_dir"
  [[ -f "$out/compiled" ]] || { echo "no model compiled" >&2; exit 1; }
  echo "prepared $out ($(du -sh "$out" | cut -f1)): $(wc -l < "$out/compiled") programs"
}

build_one() {  # MODEL VARIANT(plain|graph|graph_nchw): DIR/bin/MODEL_VARIANT
  local m="$1" variant="$2" gen libs=()
  gen="$DIR/$m/gen$([[ "$variant" == plain ]] || echo "_$variant")"
  if [[ -f "$gen/kforge_cudnn.cuh" ]]; then
    if [[ -n "${CUDNN_DIR:-}" ]]; then
      libs+=(-I "$CUDNN_DIR/include" -L "$CUDNN_DIR/lib" -l:libcudnn.so.9)
    else
      libs+=(-lcudnn)
    fi
  fi
  [[ -f "$gen/kforge_cublaslt.cuh" ]] && libs+=(-lcublasLt -lcublas)
  [[ -f "$gen/kforge_cufft.cuh" ]] && libs+=(-lcufft)
  "$NVCC" -arch=sm_90 -std=c++17 -O2 -Werror all-warnings -I "$gen" -DKFORGE_PROGRAM_HEADER="\"$m.h\"" \
    -DKFORGE_PROGRAM_CLASS="$m" "$ROOT/bench/cuda_models/timing_harness.cu" "$gen/$m.cu" "$gen/${m}_kernels.cu" \
    -o "$DIR/bin/${m}_$variant" "${libs[@]}"
}

build() {  # DIR: every harness of DIR/compiled, in parallel
  export DIR="$1" NVCC ROOT
  export -f build_one
  mkdir -p "$DIR/bin"
  awk '{print $1; print $2}' "$DIR/compiled" |
    xargs -d '\n' -n 2 -P "$(nproc)" bash -c 'build_one "$@"' _
}

run() {
  local dir="$1/cuda-models" m variant batch start
  shift
  start=$SECONDS
  use_wheel_cudnn
  build "$dir" || echo "some harnesses did not build (above): timing the others" >&2
  echo "harnesses built in $((SECONDS - start)) s"
  : > "$dir/kforge.txt"
  while read -r m variant; do
    for batch in $BATCHES; do  # one process per batch: a failure loses one cell
      if ! "$dir/bin/${m}_$variant" "$dir/$m/params.txt" "$batch" > "$dir/$m.$variant.txt"; then
        echo "kforge $m $variant batch $batch FAILED (its cell shows -)" >&2
        continue
      fi
      sed "s/^/$m $variant /" "$dir/$m.$variant.txt" | tee -a "$dir/kforge.txt"
    done
  done < "$dir/compiled"
  echo "kforge timed at $((SECONDS - start)) s"
  # shellcheck disable=SC2086
  python3 "$HERE/torch_bench.py" --kforge "$dir/kforge.txt" --models $MODELS --batches $BATCHES \
    --elapsed $((SECONDS - start)) "$@"
  echo "total $((SECONDS - start)) s"
}

case "${1:-}" in
  prepare) prepare "$2" ;;
  build) build "$2/cuda-models" ;;
  run) run "${@:2}" ;;
  *) echo "usage: run.sh prepare BUILD | run.sh run BUILD [--no-torch-compile] | run.sh build BUILD" >&2; exit 2 ;;
esac
