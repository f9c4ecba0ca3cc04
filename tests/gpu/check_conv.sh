#!/bin/bash
# GPU correctness check of convolutions and pooling under `kforge compile --target cuda` (issue 14, first step):
# Paddle programs with conv2d (strides, padding, dilation, groups, NHWC, a dynamic batch), depthwise_conv2d, pool2d
# (max, average with and without exclusive, padded, adaptive) and the small CNN of tests/paddle (conv + batch norm +
# relu as one convolution group, pool, flatten, GEMM, softmax), plus Paddle's resnet18 at 64x64, batch 2
# (tests/gpu/export_resnet18.py, when the Paddle venv is there at prepare time), each compiled with and
# without --cuda-graph (the pool-only fixtures with it only), run on the GPU by tests/gpu/harness.cu (outputs poisoned before the run that counts,
# and a second run into fresh tensors must be bit-identical) on the fixture's inputs and .pdiparams weights, and
# compared with Paddle's own outputs (expected_<i>.npy, Paddle's CPU predictor) by fixture_bundle.py compare.
#
# Tolerance, for every case: |gpu - paddle| <= 1e-4 * max|paddle| + 1e-5, as tests/paddle (check_fixture.py) and
# tools/check-paddle-models hold the CPU kernels to. TF32 is off for the check (the harness is built with
# -DKFORGE_STRICT_FP32, which calls set_conv_tf32(false)): cuDNN then runs float32 FMA kernels, and the only
# difference from Paddle is the order of the float32 sums (a few float32 epsilons times the number of terms, per
# layer: for resnet18's deepest reductions, 4608 terms, about 1e-5 relative to the largest value, far below the
# bound, while a wrong padding, stride, channel index, batch-norm term or missing residual gives errors of the
# size of the values). cuBLASLt GEMMs compute in float32 without TF32 as always.
#
#   tests/gpu/check_conv.sh prepare BUILD   build machine: kforge -> BUILD/conv-gpucheck/ (generated sources,
#                                           inputs and weights; carry it)
#   tests/gpu/check_conv.sh run BUILD       GPU machine: builds the harnesses with nvcc (all cores) and runs
#                                           them; finds cuDNN 9 (headers and library) under PyTorch's
#                                           site-packages (nvidia/cudnn) or in the toolkit
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
# shellcheck source=bench/cudnn_env.sh
source "$ROOT/bench/cudnn_env.sh"
NVCC="${NVCC:-/usr/local/cuda/bin/nvcc}"
# Paddle 3.3.1: PADDLE_PYTHON, else the virtual environment tools/check-paddle-models creates in BUILD/paddle-venv.
PADDLE_PYTHON="${PADDLE_PYTHON:-}"
RTOL=1e-4
ATOL=1e-5

# The fixtures (tests/paddle/<case>); resnet18 is exported into BUILD/conv-gpucheck/resnet18 by prepare.
CASES="conv2d conv2d_bias_stride_pad conv2d_dilation_groups conv2d_dynamic_batch conv2d_nhwc depthwise_conv2d
max_pool2d avg_pool2d_exclusive_false avg_pool2d_pad adaptive_avg_pool2d cnn"
# Pools alone run with --cuda-graph only (a pool without a graph runs in the cnn case); the limit that made this
# choice, binaries carried to the GPU machine, is gone since the harnesses are built there.
GRAPH_ONLY=" max_pool2d avg_pool2d_exclusive_false avg_pool2d_pad adaptive_avg_pool2d "

build_one() {  # TAG GEN NAME: the harness, linked with cuDNN / cuBLASLt only when the program needs them
  local tag="$1" gen="$2" name="$3" libs=() defs=()
  # Programs with convolutions: cuDNN, and TF32 off (the harness calls set_conv_tf32(false)). CUDNN_DIR: the
  # headers and library of PyTorch's cuDNN wheel where there is one (it ships libcudnn.so.9 without the
  # unversioned name), else the toolkit's own.
  if [[ -f "$gen/kforge_cudnn.cuh" ]]; then
    defs+=(-DKFORGE_STRICT_FP32)
    if [[ -n "${CUDNN_DIR:-}" ]]; then
      libs+=(-I "$CUDNN_DIR/include" -L "$CUDNN_DIR/lib" -l:libcudnn.so.9)
    else
      libs+=(-lcudnn)
    fi
  fi
  [[ -f "$gen/kforge_cublaslt.cuh" ]] && libs+=(-lcublasLt -lcublas)
  [[ -f "$gen/kforge_cufft.cuh" ]] && libs+=(-lcufft)
  "$NVCC" -arch=sm_90 -std=c++17 -O2 -Werror all-warnings -I "$gen" -I "$ROOT/tools/interp" "${defs[@]}" \
    -DKFORGE_PROGRAM_HEADER="\"$name.h\"" -DKFORGE_PROGRAM_CLASS="$name" "$ROOT/tests/gpu/harness.cu" \
    "$gen/$name.cu" "$gen/${name}_kernels.cu" -o "$OUT_DIR/$tag" "${libs[@]}"
}

# Builds every harness listed in OUT_DIR/builds (TAG GEN NAME per line), in parallel.
build_all() {
  export -f build_one
  export NVCC ROOT
  tr ' ' '\n' < "$OUT_DIR/builds" | xargs -d '\n' -n 3 -P "$(nproc)" bash -c 'build_one "$@"' _
}

prepare() {
  local build="$1" ex="$ROOT/kernels" cases="$CASES"
  export OUT_DIR="$1/conv-gpucheck" NVCC ROOT
  PADDLE_PYTHON="${PADDLE_PYTHON:-$1/paddle-venv/bin/python}"
  rm -rf "$OUT_DIR" && mkdir -p "$OUT_DIR/fixtures"
  for c in $CASES; do cp -r "$ROOT/tests/paddle/$c" "$OUT_DIR/fixtures/$c"; done
  if [[ -x "$PADDLE_PYTHON" ]]; then
    "$PADDLE_PYTHON" "$HERE/export_resnet18.py" "$OUT_DIR/fixtures/resnet18"
    cases="$cases resnet18"
  else
    echo "no Paddle at $PADDLE_PYTHON (PADDLE_PYTHON): resnet18 is left out" >&2
  fi
  for c in $cases; do
    local fixture="$OUT_DIR/fixtures/$c"
    for graph in "" "--cuda-graph"; do
      [[ -z "$graph" && "$GRAPH_ONLY" == *" $c "* ]] && continue
      local tag="$c${graph:+_graph}" gen="$OUT_DIR/gen_$c${graph:+_graph}"
      "$build/src/kforge" compile "$fixture/inference.json" --ops "$ex/ops.yaml" --ops "$ex/fusion.yaml" \
        --op-compat "$ex/op_compat.yaml" -o "$gen" --name "$c" --target cuda $graph
      echo "$tag $gen $c" >> "$OUT_DIR/builds"
      echo "$c $tag" >> "$OUT_DIR/tags"
    done
    /usr/bin/python3 "$HERE/fixture_bundle.py" bundle "$fixture" "$OUT_DIR/gen_${c}_graph/$c.h" "$OUT_DIR/$c.in.bin"
    rm -f "$fixture/inference.pdiparams" "$fixture/inference.json"  # in the bundle / compiled: not carried
  done
  # The harnesses are built where they run (`run`, or `build` here): carried binaries would take most of the
  # 64 MiB that may travel to the GPU machine, next to resnet18's 47 MB of weights.
  sed -i "s#$OUT_DIR#@OUT_DIR@#g" "$OUT_DIR/builds"
  echo "prepared $OUT_DIR ($(du -sh "$OUT_DIR" | cut -f1))"
}

run() {
  local dir="$1/conv-gpucheck" failed=0 tmp c tag
  use_wheel_cudnn
  export OUT_DIR="$dir"
  sed -i "s#@OUT_DIR@#$dir#g" "$dir/builds"
  build_all
  tmp="$(mktemp -d)"
  local passed=0 total=0
  while read -r c tag; do
    total=$((total + 1))
    if "$dir/$tag" "$dir/$c.in.bin" "$tmp/out.bin" > "$tmp/log" 2>&1 &&
       /usr/bin/env python3 "$HERE/fixture_bundle.py" compare "$tmp/out.bin" "$dir/fixtures/$c" "$RTOL" "$ATOL" > "$tmp/cmp"; then
      echo "PASS $tag: $(cat "$tmp/log")"
      cat "$tmp/cmp"
      passed=$((passed + 1))
    else
      echo "FAIL $tag"
      cat "$tmp/log" "$tmp/cmp" 2>/dev/null || true
      failed=1
    fi
    rm -f "$tmp/cmp"
  done < "$dir/tags"
  rm -rf "$tmp"
  echo "$passed of $total passed (|gpu - paddle| <= $RTOL * max|paddle| + $ATOL, TF32 off)"
  return $failed
}

case "${1:-}" in
  prepare) prepare "$2" ;;
  run) run "$2" ;;
  *) echo "usage: check_conv.sh prepare BUILD | check_conv.sh run BUILD" >&2; exit 2 ;;
esac
