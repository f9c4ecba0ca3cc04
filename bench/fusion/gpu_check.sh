#!/bin/bash
# GPU correctness check of `kforge compile --target cuda` (run on the GPU machine): the cases of the CPU fused
# tests (tests/e2e/test_fused_cpu.py: chain, broadcast, softmax, layer_norm, and mixed without its matmul,
# bench/fusion/programs/mixed_gpu.yaml) each with and without --cuda-graph. Per case: fresh random inputs
# (kforge-interp --seed, a new seed every run, printed), the generated CUDA code run by gpu_harness.cu with its
# outputs poisoned (0xFF bytes: NaN) before the run that counts and again with fresh output tensors, then
# kforge-interp (the unfused CPU reference interpreter) compares: relative error <= 1e-5 with an absolute floor
# of 1e-6 for values near 0 (exp, tanh, erf differ between the CUDA and C++ math libraries by a few ulp).
#   bench/fusion/gpu_check.sh prepare BUILD   build machine: kforge + nvcc -> BUILD/fusion-gpucheck/ (carry it)
#   bench/fusion/gpu_check.sh run BUILD       GPU machine
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
NVCC="${NVCC:-/usr/local/cuda/bin/nvcc}"
CASES="chain:tests/e2e/fused/chain.yaml broadcast:tests/e2e/fused/broadcast.yaml softmax:tests/e2e/fused/softmax.yaml
layer_norm:tests/e2e/fused/layer_norm.yaml mixed:bench/fusion/programs/mixed_gpu.yaml lone_op:tests/e2e/fused/lone_op.yaml"

prepare() {
  local build="$1" ex="$ROOT/examples/kernels" out="$1/fusion-gpucheck"
  rm -rf "$out" && mkdir -p "$out/lib"
  local pids=()
  for c in $CASES; do
    IFS=: read -r name prog <<<"$c"
    for graph in "" "--cuda-graph"; do
      local tag="$name${graph:+_graph}" gen="$out/gen_$name${graph:+_graph}"
      "$build/src/kforge" compile "$ROOT/$prog" --ops "$ex/ops.yaml" --ops "$ex/fusion.yaml" \
        --op-compat "$ex/op_compat.yaml" -o "$gen" --name "$name" --target cuda $graph
      "$NVCC" -arch=sm_90 -std=c++17 -O2 -Werror all-warnings -I "$gen" -I "$ROOT/tools/interp" \
        -DKFORGE_PROGRAM_HEADER="\"$name.h\"" -DKFORGE_PROGRAM_CLASS="$name" "$HERE/gpu_harness.cu" \
        "$gen/$name.cu" "$gen/${name}_kernels.cu" -o "$out/$tag" &
      pids+=($!)
    done
  done
  for p in "${pids[@]}"; do wait "$p"; done
  strip -o "$out/kforge-interp" "$build/tools/interp/kforge-interp"
  for lib in $(ldd "$build/tools/interp/kforge-interp" | awk '/libfmt|libyaml-cpp/ {print $3}'); do cp "$lib" "$out/lib/"; done
  echo "prepared $out"
}

run() {
  local dir="$1/fusion-gpucheck" failed=0 seed tmp
  export LD_LIBRARY_PATH="$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  tmp="$(mktemp -d)"
  for c in $CASES; do
    IFS=: read -r name prog <<<"$c"
    for tag in "$name" "${name}_graph"; do
      seed=$(( $(od -An -N3 -tu4 /dev/urandom) ))
      if "$dir/kforge-interp" "$ROOT/$prog" --seed "$seed" --write-inputs "$tmp/in.bin" &&
         "$dir/$tag" "$tmp/in.bin" "$tmp/out.bin" &&
         "$dir/kforge-interp" "$ROOT/$prog" --inputs "$tmp/in.bin" --compare "$tmp/out.bin" --rtol 1e-5 --atol 1e-6; then
        echo "PASS $tag (seed $seed)"
      else
        echo "FAIL $tag (seed $seed)"
        failed=1
      fi
    done
  done
  rm -rf "$tmp"
  return $failed
}

case "${1:-}" in
  prepare) prepare "$2" ;;
  run) run "$2" ;;
  *) echo "usage: gpu_check.sh prepare BUILD | gpu_check.sh run BUILD" >&2; exit 2 ;;
esac
