#!/bin/bash
# Transformers on the GPU (issue 35): a BERT-base-sized encoder (bench/transformers/export.py: Paddle's
# nn.TransformerEncoder, 12 post-norm layers, d_model 768, 12 heads, FFN 3072, erf gelu; x [batch, S, 768], a dynamic
# batch, one export per S) compiled by `kforge compile --target cuda --cuda-graph` in float32 and (--precision)
# float16 and bfloat16, against torch's nn.TransformerEncoder of the same configuration on the same GPU
# (bench/transformers/torch_encoder.py: eager, a CUDA graph, torch.compile(mode="reduce-overhead") while time is
# left). float32 is timed twice on both sides: TF32 off (kforge's default, torch's matmul.allow_tf32 default) and
# TF32 on (kforge's set_gemm_tf32(true) through KFORGE_GEMM_TF32=1; torch.backends.cuda.matmul.allow_tf32).
# Batch 1 and 8 at S = 128 and 512. And a GPT-2-small-sized decoder (export.py's gpt_prefill and gpt_step: 12 pre-norm
# layers, d_model 768, 12 heads, vocabulary 50257; ids [-1, -1] with a causal mask built from the run-time length, and
# the decode step: ids [-1, 1] over 24 key / value caches [-1, 12, L, 64] of run-time length L) in float32 and float16
# against bench/transformers/torch_gpt.py (torch's scaled_dot_product_attention): the prefill at S = GPT_SEQS (128),
# the step at L = GPT_LENS (128 512), timed per token; float16 twice: with float32 inputs and outputs (--precision's
# default: the caches converted on the way in and out) and with --io-precision compute (float16 caches in and out,
# as torch's). MODELS (default "bert gpt") picks; PRECISIONS (BERT's) and GPT_PRECISIONS, at prepare, the programs
# compiled (each takes minutes of nvcc on the GPU machine); KFORGE_FLAGS, at prepare, more `kforge compile` options
# for every program (e.g. "--multi-kernel-hints 64,256,4096": each GEMM a dispatcher that picks among cuBLASLt's
# ranked algorithms and kforge's tiles per shape, docs/multi-kernel.md; its picks are made in the warm-up runs). Median of 50 runs after 10 warm-ups, each a host clock
# around run() + synchronize() (torch: model(x) or graph.replay(), then torch.cuda.synchronize()), by
# bench/cuda_models/timing_harness.cu with KFORGE_INPUT_DIMS=B,S,768 and seeded parameters of realistic scale
# filled on the GPU (no weights travel: 340 MB each). Correctness is tests/gpu/check_models.sh's (the zoo's
# transformer encoders, decoders, GPT block and BERT encoder against Paddle's CPU outputs, in every precision).
#
#   bench/transformers/run.sh prepare BUILD   build machine: exports (PADDLE_PYTHON, default BUILD/paddle-venv/bin/python)
#                                             and compiles with BUILD/src/kforge -> BUILD/transformers (sources only)
#   bench/transformers/run.sh run BUILD [--no-torch-compile] [--compile-budget S]
#                                             GPU machine: builds the harnesses (nvcc, all cores), times kforge,
#                                             then torch, and prints the tables
#   bench/transformers/run.sh build BUILD     GPU machine: only the harnesses (BUILD/transformers/bin), for profiling
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
# shellcheck source=bench/cudnn_env.sh
source "$ROOT/bench/cudnn_env.sh"
NVCC="${NVCC:-/usr/local/cuda/bin/nvcc}"
SEQS="${SEQS:-128 512}"
BATCHES="${BATCHES:-1 8}"
PRECISIONS="${PRECISIONS:-float32 float16 bfloat16}"
MODELS="${MODELS:-bert gpt}"
GPT_SEQS="${GPT_SEQS:-128}"
GPT_LENS="${GPT_LENS:-128 512}"
GPT_PRECISIONS="${GPT_PRECISIONS:-float32 float16 float16/io}"

prepare() {
  local out="$1/transformers" ex="$ROOT/kernels" kforge="${KFORGE:-$1/src/kforge}" seq p export_dir
  local python="${PADDLE_PYTHON:-$1/paddle-venv/bin/python}"
  rm -rf "$out" && mkdir -p "$out"
  export_dir="$(mktemp -d)"
  "$python" "$HERE/export.py" "$export_dir" --seqs "$(echo $SEQS | tr ' ' ,)" --models "$(echo $MODELS | tr ' ' ,)" \
    2>&1 | grep "^exported" || true
  local programs=() precisions
  [[ " $MODELS " == *" bert "* ]] && for seq in $SEQS; do programs+=("bert_s$seq"); done
  [[ " $MODELS " == *" gpt "* ]] && programs+=(gpt_prefill gpt_step)
  for m in "${programs[@]}"; do
    [[ -f "$export_dir/$m/inference.json" ]] || { echo "export of $m failed" >&2; exit 1; }
    mkdir -p "$out/$m"
    cp "$export_dir/$m/params.txt" "$export_dir/$m/input_dims" "$out/$m/"
    precisions="$PRECISIONS"
    [[ "$m" == gpt_* ]] && precisions="$GPT_PRECISIONS"
    for p in $precisions; do  # DTYPE/io: --io-precision compute (16-bit inputs and outputs), named DTYPEio
      local io=()
      [[ "$p" == */io ]] && io=(--io-precision compute)
      "$kforge" compile "$export_dir/$m/inference.json" --ops "$ex/ops.yaml" --ops "$ex/fusion.yaml" \
        --op-compat "$ex/op_compat.yaml" -o "$out/$m/gen_${p/\/io/io}" --name "$m" --target cuda --cuda-graph \
        --precision "${p%/io}" "${io[@]}" ${KFORGE_FLAGS:-}
      echo "$m ${p/\/io/io}" >> "$out/compiled"
    done
  done
  rm -rf "$export_dir"
  echo "prepared $out ($(du -sh "$out" | cut -f1)): $(wc -l < "$out/compiled") programs"
}

build_one() {  # MODEL PRECISION: DIR/bin/MODEL_PRECISION (16-bit attention groups: linked with cuDNN too)
  local m="$1" p="$2" gen="$DIR/$1/gen_$2" cudnn=()
  [[ "$DIR/bin/${m}_$p" -nt "$gen/$m.cu" ]] && return 0  # built by an earlier `run` or `build` of this directory
  if [[ -f "$gen/kforge_cudnn_attention.cuh" ]]; then
    cudnn=(-lcudnn)
    [[ -n "${CUDNN_DIR:-}" ]] && cudnn=(-I "$CUDNN_DIR/include" -L "$CUDNN_DIR/lib" -l:libcudnn.so.9)
  fi
  "$NVCC" -arch=sm_90 -std=c++17 -O2 -Werror all-warnings -I "$gen" -DKFORGE_PROGRAM_HEADER="\"$m.h\"" \
    -DKFORGE_PROGRAM_CLASS="$m" "$ROOT/bench/cuda_models/timing_harness.cu" "$gen/$m.cu" "$gen/${m}_kernels.cu" \
    -o "$DIR/bin/${m}_$p" -lcublasLt -lcublas "${cudnn[@]}" > "$DIR/bin/${m}_$p.log" 2>&1 ||
    { cat "$DIR/bin/${m}_$p.log" >&2; return 1; }
}

build() {  # BUILD: the harnesses of BUILD/transformers/compiled, nvcc on every core
  local dir="$1/transformers" start=$SECONDS
  use_wheel_cudnn
  export DIR="$dir" NVCC ROOT
  export -f build_one
  mkdir -p "$dir/bin"
  tr ' ' '\n' < "$dir/compiled" | xargs -d '\n' -n 2 -P "$(nproc)" bash -c 'build_one "$@"' _ ||
    echo "some harnesses did not build (above): timing the others" >&2
  echo "harnesses built in $((SECONDS - start)) s"
}

run() {
  local dir="$1/transformers" m p start batch
  start=$SECONDS
  build "$1"
  shift
  : > "$dir/kforge.txt"
  local cell lengths name
  while read -r m p; do
    local variants=("$p")
    [[ "$p" == float32 && "$m" == bert_* ]] && variants+=(tf32)
    lengths="-"
    [[ "$m" == gpt_prefill ]] && lengths="$GPT_SEQS"
    [[ "$m" == gpt_step ]] && lengths="$GPT_LENS"
    for v in "${variants[@]}"; do
      for len in $lengths; do
        name="$m"
        [[ "$m" == gpt_prefill ]] && name="${m}_s$len"
        [[ "$m" == gpt_step ]] && name="${m}_l$len"
        for batch in $BATCHES; do  # one process per cell: a failure loses one cell
          if ! KFORGE_INPUT_DIMS="$(sed "s/S/$len/g; s/L/$len/g" "$dir/$m/input_dims")" KFORGE_INT_HIGH=50257 \
               KFORGE_GEMM_TF32="$([[ $v == tf32 ]] && echo 1 || echo 0)" \
               "$dir/bin/${m}_$p" "$dir/$m/params.txt" "$batch" > "$dir/cell.txt"; then
            echo "kforge $name $v batch $batch FAILED (its cell shows -)" >&2
            continue
          fi
          sed "s/^/$name $v /" "$dir/cell.txt" | tee -a "$dir/kforge.txt"
        done
      done
    done
  done < "$dir/compiled"
  echo "kforge timed at $((SECONDS - start)) s"
  if [[ " $MODELS " == *" gpt "* ]]; then
    local cells=()
    for len in $GPT_SEQS; do cells+=("prefill:$len"); done
    for len in $GPT_LENS; do cells+=("step:$len"); done
    # shellcheck disable=SC2086
    python3 "$HERE/torch_gpt.py" --kforge "$dir/kforge.txt" --cells "${cells[@]}" --batches $BATCHES \
      --elapsed $((SECONDS - start)) "$@"
  fi
  if [[ " $MODELS " == *" bert "* ]]; then
    # shellcheck disable=SC2086
    python3 "$HERE/torch_encoder.py" --kforge "$dir/kforge.txt" --seqs $SEQS --batches $BATCHES \
      --elapsed $((SECONDS - start)) "$@"
  fi
  echo "total $((SECONDS - start)) s"
}

case "${1:-}" in
  prepare) prepare "$2" ;;
  run) run "${@:2}" ;;
  build) build "$2" ;;
  *) echo "usage: run.sh prepare BUILD | run.sh run BUILD [--no-torch-compile] [--compile-budget S] | run.sh build BUILD" >&2
     exit 2 ;;
esac
