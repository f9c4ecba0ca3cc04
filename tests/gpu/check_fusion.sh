#!/bin/bash
# GPU correctness check of `kforge compile --target cuda` (run on the GPU machine): the cases of the CPU fused
# tests (tests/e2e/test_fused_cpu.py: chain, broadcast, softmax, layer_norm, and mixed without its matmul,
# bench/fusion/programs/mixed_gpu.yaml), a lone op, and the GEMM groups (tests/e2e/fused/gemm_*.yaml and mixed.yaml:
# matmul with bias / bias + erf gelu epilogues, transposes, a batch folded into M, a dynamic batch), each with and
# without --cuda-graph; the GEMM and row programs also with --multi-kernel-hints (GEMM groups and row groups are
# dispatchers; bench/fusion/programs/rows_gpu.yaml runs rows of every register variant's capacity and beyond),
# run once choosing by benchmark and once per variant forced (KFORGE_MULTI_KERNEL_FORCE), so every variant is
# checked, not only the pick; and once with --no-fuse (bare GEMMs, then the bias add and the gelu as kernels of
# their own).
# 16-bit programs (tests/e2e/fused/half_bf16.yaml, half_fp16.yaml) run against their float32 twin: kforge-interp
# computes in float32 only, so it makes float32 inputs from the twin, the harness rounds the 16-bit program's
# inputs and parameters to its type (--narrow, read from the generated header) and writes the rounded values back
# as float32 (--rounded-inputs), and kforge-interp runs the twin on those, so both sides start from the same values.
# Per run: fresh random inputs (kforge-interp --seed, a new seed every run, printed), the generated CUDA code run
# by tests/gpu/harness.cu with its outputs poisoned (0xFF bytes: NaN) before the run that counts and again with fresh
# output tensors, then kforge-interp (the unfused CPU reference interpreter) compares with the case's tolerance.
#   tests/gpu/check_fusion.sh prepare BUILD   build machine: kforge -> BUILD/fusion-gpucheck/ (generated sources,
#                                             the interpreter; carry it)
#   tests/gpu/check_fusion.sh run BUILD       GPU machine: builds the harnesses with nvcc (all cores), runs them
#                                             (needs cuBLASLt / cuBLAS of CUDA 12 or later)
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
NVCC="${NVCC:-/usr/local/cuda/bin/nvcc}"
HINTS="--multi-kernel-hints 64,256,4096"

# One case per line: NAME PROGRAM RTOL ATOL SHAPES [KFORGE FLAGS...]
#   PROGRAM: one program for both sides, or GPU_PROGRAM:REFERENCE (a 16-bit program and its float32 twin).
#   SHAPES: "-", or the kforge-interp --shape values of the dynamic inputs, one run per ';'-separated item.
# Tolerances (|gpu - cpu| <= ATOL + RTOL * |cpu|):
#   - elementwise and row cases: 1e-5 / 1e-6 (exp, tanh, erf differ between the CUDA and C++ math libraries by
#     a few ulp);
#   - GEMM cases: both sides sum K float32 products, the CPU reference in increasing k with separate multiply
#     and add, the GPU with FMAs in another order (tiles, cuBLASLt's split-K), so each differs from the exact sum
#     by up to about K * 2^-24 * sum_k |x_k y_k| (in practice sqrt(K) times less: rounding errors of random
#     sign). With inputs uniform in [-1, 1), sum_k |x_k y_k| ~ K / 4 while a typical |result| is ~ sqrt(K / 9),
#     so relative to the result the difference is ~ 2^-24 * sqrt(K) * 0.75 * sqrt(K) ~ 5e-8 * K: RTOL = 4e-6 * K
#     (80x that), and ATOL the same times the typical |result| for the elements that cancel to near 0. Errors of
#     one layer pass through the next, so a chain of GEMMs takes the sum over its layers of K. The bounds are
#     far below what a wrong index, a missing or doubled bias, a missing gelu or a transposed operand gives
#     (errors of the size of the values themselves).
#     gemm_mlp: K = 64 + 96 + 40 = 200, values up to ~30: RTOL 8e-4, ATOL 2e-3.
#     gemm_batched: K = 48 and 40, values ~2: RTOL 2e-4, ATOL 4e-4.
#     gemm_products: K = 32, values ~2: the same.
#     mixed: K = 64, then layer_norm (which divides by the row's deviation, ~1): RTOL 3e-4, ATOL 3e-4.
#   - 16-bit cases (half_*; outputs h = gelu(x w1 + b1) [M, 96] and p = softmax(layer_norm(h w2 + b2) w3t^T / 16)
#     [M, 32]): both sides start from the same rounded values and compute in float32, so what differs is the
#     GPU's rounding of each stored value to the 16-bit type, a relative error of at most u = 2^-8 (bfloat16) or
#     2^-11 (float16), and how it propagates:
#       h: the GPU computes gelu's tanh form (a 16-bit GEMM's erf gelu is GemmEpilogue::kBiasGeluTanh, in
#          cuBLASLt's GELU_BIAS epilogue or the tiles'; docs/compile.md "The gelu's form"), the reference
#          Paddle's erf form: they differ by at most 4.73e-4 in absolute terms (at |t| = 2.70, t = x w1 + b1;
#          many u |h| for t < 0, where |h| is small), which ATOL carries. Then its own rounding, u |h|; on the separate-kernel
#          path (an unaligned bias, no GELU_BIAS plan) t is rounded too before the gelu, adding u |t gelu'(t)|: up
#          to 1.2 u |h| for t > 0; for t < 0 it grows relative to |h| (7 u |h| at t = -2.5, where |h| = 0.016)
#          while it shrinks in absolute terms (0.094 u there, 0.036 u at t = -3), so 8 u |h| + ATOL covers it.
#       p: the roundings of h, of h w2 + b2 and of layer_norm's output reach the logits through the K = 40 GEMM
#          (|w| < 1), which rounds its result too (|z| ~ 3); the scale by 1/16 divides their absolute error, and
#          softmax turns logit errors e into relative errors e_i - sum_j p_j e_j of p_i: a few u at most.
#     RTOL = 8 u (2^-5 for bfloat16, 2^-8 for float16); ATOL = 7e-4: 2e-4 for the float32 accumulation-order
#     differences of the GEMMs for h near 0 (at most about 6e-5 for K = 64, as above) plus 5e-4 for the gelu
#     forms' difference (4.73e-4; through w2, layer_norm, w3 and the scale it reaches p's logits as ~1e-4, a
#     relative error of p far below 8 u); it is about 2 % of p (p ~ 1/32). tests/gpu/half_tolerance.py replays
#     the roundings and the tanh form without a GPU: at most 0.69 of this tolerance (h, separate-kernel path;
#     0.65 in the GEMM; p: 0.11; 20 seeds), relative errors 2.5 u (h, t > 0) and 1.4 u (p); with the former ATOL
#     2e-4, h would use up to 2.1 (float16) and 1.6 (bfloat16) of it. A wrong index, bias, transpose or
#     conversion, or a missing gelu, gives errors of the size of the values (more than 10 % of p, through the
#     softmax).
CASES="
chain            tests/e2e/fused/chain.yaml             1e-5 1e-6 -
broadcast        tests/e2e/fused/broadcast.yaml         1e-5 1e-6 -
softmax          tests/e2e/fused/softmax.yaml           1e-5 1e-6 -
layer_norm       tests/e2e/fused/layer_norm.yaml        1e-5 1e-6 -
mixed            bench/fusion/programs/mixed_gpu.yaml   1e-5 1e-6 -
lone_op          tests/e2e/fused/lone_op.yaml           1e-5 1e-6 -
gemm_mlp         tests/e2e/fused/gemm_mlp.yaml          8e-4 2e-3 -
gemm_mlp_mk      tests/e2e/fused/gemm_mlp.yaml          8e-4 2e-3 -                         $HINTS
gemm_mlp_nofuse  tests/e2e/fused/gemm_mlp.yaml          8e-4 2e-3 -                         --no-fuse
gemm_batched     tests/e2e/fused/gemm_batched.yaml      2e-4 4e-4 x=5,7,48;x=300,7,48
gemm_batched_mk  tests/e2e/fused/gemm_batched.yaml      2e-4 4e-4 x=5,7,48;x=300,7,48       $HINTS
gemm_products    tests/e2e/fused/gemm_products.yaml     2e-4 4e-4 q=2,3,16,32;q=9,3,16,32
gemm_products_mk tests/e2e/fused/gemm_products.yaml     2e-4 4e-4 q=2,3,16,32;q=9,3,16,32 $HINTS
mixed_gemm       tests/e2e/fused/mixed.yaml             3e-4 3e-4 -
mixed_gemm_mk    tests/e2e/fused/mixed.yaml             3e-4 3e-4 -                         $HINTS
softmax_mk       tests/e2e/fused/softmax.yaml           1e-5 1e-6 -                         $HINTS
layer_norm_mk    tests/e2e/fused/layer_norm.yaml        1e-5 1e-6 -                         $HINTS
rows_mk          bench/fusion/programs/rows_gpu.yaml    1e-5 1e-6 x=7,3000;x=300,4096;x=64,130;x=1000,64;x=3,20001 $HINTS
half_bf16        tests/e2e/fused/half_bf16.yaml:tests/e2e/fused/half_f32.yaml 0.03125 7e-4 x=24,64;x=301,64
half_bf16_mk     tests/e2e/fused/half_bf16.yaml:tests/e2e/fused/half_f32.yaml 0.03125 7e-4 x=24,64;x=301,64 $HINTS
half_fp16_mk     tests/e2e/fused/half_fp16.yaml:tests/e2e/fused/half_f32.yaml 0.00390625 7e-4 x=24,64;x=301,64 $HINTS
"

# Builds one harness: TAG GEN NAME (run in parallel by `run`, on the GPU machine). Programs with GEMMs link cuBLASLt.
build_one() {
  local tag="$1" gen="$2" name="$3" libs=()
  [[ -f "$gen/kforge_cublaslt.cuh" ]] && libs=(-lcublasLt -lcublas)
  "$NVCC" -arch=sm_90 -std=c++17 -O2 -Werror all-warnings -I "$gen" -I "$ROOT/tools/interp" \
    -DKFORGE_PROGRAM_HEADER="\"$name.h\"" -DKFORGE_PROGRAM_CLASS="$name" "$HERE/harness.cu" \
    "$gen/$name.cu" "$gen/${name}_kernels.cu" -o "$OUT_DIR/$tag" "${libs[@]}"
}

prepare() {
  local build="$1" ex="$ROOT/kernels"
  export OUT_DIR="$1/fusion-gpucheck" NVCC ROOT HERE
  rm -rf "$OUT_DIR" && mkdir -p "$OUT_DIR/lib"
  local name prog rtol atol shapes flags
  while read -r name prog rtol atol shapes flags; do
    [[ -z "$name" ]] && continue
    for graph in "" "--cuda-graph"; do
      local tag="$name${graph:+_graph}" gen="$OUT_DIR/gen_$name${graph:+_graph}"
      # shellcheck disable=SC2086  # flags: several words
      "$build/src/kforge" compile "$ROOT/${prog%%:*}" --ops "$ex/ops.yaml" --ops "$ex/fusion.yaml" \
        --op-compat "$ex/op_compat.yaml" -o "$gen" --name "$name" --target cuda $graph $flags
      if [[ -f "$gen/kforge_multikernel.h" ]]; then
        # Every variant name with the number of dispatchers that have it (GEMM variant lists put the name alone
        # on its line, row variant lists follow it with the lambda), and the number of dispatchers.
        grep -oE '^      \{"[a-z0-9_]+",($| \[)' "$gen/$name.cu" | tr -d ' {",[' | sort | uniq -c |
          awk '{print $2, $1}' > "$OUT_DIR/$tag.variants"
        grep -cE 'MultiKernel(<[a-z0-9_]+>)? mk_' "$gen/$name.cu" > "$OUT_DIR/$tag.sites"
      fi
      # The 16-bit inputs and parameters, as the harness's --narrow arguments (from the generated header).
      local narrow
      narrow="$(sed -nE 's#^//   input +([^:]+): (float16|bfloat16) .*#--narrow feed/\1=\2#p;
                         s#^//   parameter +([^:]+): (float16|bfloat16) .*#--narrow param/\1=\2#p' "$gen/$name.h")"
      if [[ -n "$narrow" ]]; then echo "$narrow" > "$OUT_DIR/$tag.narrow"; fi
      echo "$tag $gen $name" >> "$OUT_DIR/builds"
    done
  done <<<"$CASES"
  # The harnesses are built where they run (`run`): the GPU machine's cores are many, this machine's few, and
  # what travels there must stay under 64 MiB.
  sed -i "s#$OUT_DIR#@OUT_DIR@#g" "$OUT_DIR/builds"
  strip -o "$OUT_DIR/kforge-interp" "$build/tools/interp/kforge-interp"
  for lib in $(ldd "$build/tools/interp/kforge-interp" | awk '/libfmt|libyaml-cpp|libdnnl|libgomp|libOpenCL/ {print $3}'); do cp "$lib" "$OUT_DIR/lib/"; done
  echo "prepared $OUT_DIR"
}

# One check: PROGRAM TAG RTOL ATOL SHAPE FORCE; prints PASS/FAIL and returns 1 on failure.
check_one() {
  local prog="$1" tag="$2" rtol="$3" atol="$4" shape="$5" force="$6" seed label shape_args=() narrow=()
  local ref="${prog##*:}" inputs="$tmp/in.bin"  # the reference program (the float32 twin of a 16-bit one)
  seed=$(( $(od -An -N3 -tu4 /dev/urandom) ))
  label="$tag${shape:+ $shape}${force:+ forced $force} (seed $seed)"
  [[ -n "$shape" ]] && shape_args=(--shape "$shape")
  if [[ -s "$dir/$tag.narrow" ]]; then
    mapfile -t narrow < <(tr ' ' '\n' <"$dir/$tag.narrow")
    narrow+=(--rounded-inputs "$tmp/in_rounded.bin")
    inputs="$tmp/in_rounded.bin"
  fi
  if "$dir/kforge-interp" "$ROOT/$ref" --seed "$seed" "${shape_args[@]}" --write-inputs "$tmp/in.bin" &&
     KFORGE_CACHE_DIR="$tmp/cache-$tag" KFORGE_MULTI_KERNEL_LOG=1 KFORGE_MULTI_KERNEL_FORCE="$force" \
       "$dir/$tag" "$tmp/in.bin" "$tmp/out.bin" "${narrow[@]}" 2>"$tmp/log" &&
     "$dir/kforge-interp" "$ROOT/$ref" --inputs "$inputs" --compare "$tmp/out.bin" --rtol "$rtol" --atol "$atol"; then
    if [[ -f "$dir/$tag.sites" ]]; then
      # Every dispatcher must have made its pick the way the run asked for: forced (each dispatcher that has the
      # variant), or by a benchmark (the first shape of a run with a fresh cache directory) or from the cache
      # that benchmark wrote.
      local sites want got
      sites="$(cat "$dir/$tag.sites")"
      if [[ -n "$force" ]]; then
        # Only the dispatchers that have the variant (the others warn that the name is not theirs).
        sites="$(awk -v v="$force" '$1 == v {print $2}' "$dir/$tag.variants")"
        want=" \\* -> $force \\(forced\\)"
      else
        want=" [0-9x]+ -> [a-z0-9_]+ \\((benchmarked|from cache)\\)"
      fi
      got="$(grep -cE "^kforge: multi-kernel mk_[a-z0-9_]+$want" "$tmp/log" || true)"
      if (( got < sites )); then
        echo "FAIL $label: $got of $sites dispatchers logged '$want'"
        cat "$tmp/log"
        return 1
      fi
    fi
    echo "PASS $label"
  else
    echo "FAIL $label"
    cat "$tmp/log" 2>/dev/null || true
    return 1
  fi
}

run() {
  dir="$1/fusion-gpucheck"
  local failed=0 name prog rtol atol shapes flags tag shape force
  export OUT_DIR="$dir" NVCC ROOT HERE
  export -f build_one
  sed -i "s#@OUT_DIR@#$dir#g" "$dir/builds"
  tr ' ' '\n' < "$dir/builds" | xargs -d '\n' -n 3 -P "$(nproc)" bash -c 'build_one "$@"' _ || return 1
  export LD_LIBRARY_PATH="$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  tmp="$(mktemp -d)"
  while read -r name prog rtol atol shapes flags; do
    [[ -z "$name" ]] && continue
    for tag in "$name" "${name}_graph"; do
      local forces=("")
      [[ -f "$dir/$tag.variants" ]] && mapfile -t -O 1 forces < <(cut -d' ' -f1 "$dir/$tag.variants")
      IFS=';' read -r -a shape_list <<<"${shapes/#-/}"
      [[ ${#shape_list[@]} -eq 0 ]] && shape_list=("")
      for shape in "${shape_list[@]}"; do
        for force in "${forces[@]}"; do
          check_one "$prog" "$tag" "$rtol" "$atol" "$shape" "$force" || failed=1
        done
      done
    done
  done <<<"$CASES"
  rm -rf "$tmp"
  return $failed
}

case "${1:-}" in
  prepare) prepare "$2" ;;
  run) run "$2" ;;
  *) echo "usage: check_fusion.sh prepare BUILD | check_fusion.sh run BUILD" >&2; exit 2 ;;
esac
