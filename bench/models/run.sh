#!/usr/bin/env bash
# Whole-model CPU benchmark over the zoo of tools/check-paddle-models (tools/paddle_zoo/models.py): every
# paddle.vision model at two image sizes, the Transformer encoders / decoders, the GPT blocks and decoders, the
# detection head and the BERT-style encoders at the zoo's two sizes, with --paddleocr the PP-OCRv5 architectures and
# with --paddledetection PaddleDetection's detectors (the real architectures of check-paddle-models --real), all
# exported at batch 1 with fixed shapes (export.py), compiled by kforge (kernels/fusion.yaml, the default layout
# plan) against BUILD's kernel library (oneDNN), timed against Paddle's predictor (enable_mkldnn) and ONNX Runtime
# (paddle2onnx) at 1 and 2 threads in one run of compare.py per model and size (interleaved rounds, process CPU time,
# each engine in its own process). Prints each comparison, then the table of all (table.py).
#
#   bench/models/run.sh [BUILD_DIR] [--models "resnet18 gpt_block"] [--sizes "64 224"] [--threads "1,2"]
#                       [--rounds R] [--slow-rounds R] [--per-round K] [--batch-ms MS] [--paddleocr DIR]
#                       [--paddledetection DIR] [--detection-python PYTHON] [--json FILE]
#                       [--before NAME] [--nchw] [--no-fuse] [--reference-build DIR] [--no-paddle]
#
# --models: default the whole zoo. --sizes: the image sides of the paddle.vision models (default "64 224"; LeNet
# runs at 28, alexnet and googlenet at 224 only, inception_v3 at 80 for anything below 80: their heads fix them);
# the other models run at the zoo's two sizes. --threads, --rounds (default 8), --per-round (5), --batch-ms (100):
# compare.py's. --paddleocr: a PaddleOCR extract (tools/paddle_zoo/ppocr_extract.py) adds PP-OCRv5 mobile det
# (320x320), server det (320x320) and mobile rec (48x320); the full-size BERT encoder (128 tokens) is always in.
# --paddledetection: a PaddleDetection checkout (docs/model-zoo.md) adds PP-YOLOE+-s (640x640, with its scale_factor
# input), PicoDet-S (320x320) and RT-DETR-R18 (640x640), each at the size of its config, exported by
# --detection-python (a Python with Paddle and ppdet's own requirements, as /work/venv/det; default the benchmark's
# Python) and converted by the benchmark's. --slow-rounds (default 4): the rounds of the models of more than about
# 100 ms an inference (SLOW below: vgg at 224², PP-OCRv5 server det, PP-YOLOE+-s, RT-DETR-R18). Paddle's predictor
# with oneDNN runs none of the programs with an upsampling (the PP-OCRv5 dets, the detection head, the three
# detectors: its oneDNN instructions reject the float64 scale array), so those have no Paddle figure. --json: the
# results, one line per model, size and thread count (default BUILD_DIR/bench-models/results.jsonl, appended to).
# --before NAME: each model directory's worker-NAME (a copy of an earlier build's worker-fuse), timed in the same
# rounds: a change's before / after. --nchw / --no-fuse: also the code compiled with --layout nchw / --no-fuse.
# --no-paddle: compare.py's (no Paddle figure; a zoo run in about two thirds of the time).
# --reference-build: a build configured with -Donednn=disabled; adds kforge on the reference loops (1 thread).
# Python: $KFORGE_BENCH_PYTHON if set (a venv with paddlepaddle, paddle2onnx, onnxruntime, numpy), else a venv made
# on demand in BUILD_DIR/bench-venv (pip install paddlepaddle==3.3.1 paddle2onnx onnxruntime numpy).
# Exports are kept in BUILD_DIR/bench-models/MODEL_SIZE (delete one to re-export), and the workers there are rebuilt
# only when older than the export, kforge, the kernel library or worker.cc. A model that does not export,
# compile or build is reported and skipped.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
BUILD="$(cd "${1:-$ROOT/build}" && pwd)"
[ "$#" -gt 0 ] && shift
VISION="resnet18 resnet34 resnet50 mobilenet_v1 mobilenet_v2 mobilenet_v3_small mobilenet_v3_large
  shufflenet_v2_x1_0 squeezenet1_0 densenet121 googlenet inception_v3 vgg11 vgg16 alexnet LeNet"
SEQUENCE="transformer_encoder_postnorm transformer_encoder_prenorm transformer_decoder_postnorm
  transformer_decoder_prenorm gpt_block gpt_block_h64 transformer_decoder_h64 bert_encoder bert_encoder_h64
  gpt_decoder gpt_decode_step ppocr_det_head bert_encoder_fixed"
SLOW="vgg11_224 vgg16_224 ppocrv5_server_det_fixed_320x320 ppyoloe_plus_s_fixed_640x640 rtdetr_r18_fixed_640x640"
REF_BUILD="" MODELS="" SIZES="64 224" ROUNDS=8 SLOW_ROUNDS=4 PER_ROUND=5 BATCH_MS=100 THREADS="1,2"
NCHW=0 NO_FUSE=0 NO_PADDLE=() PADDLEOCR="" PADDLEDETECTION="" DET_PYTHON="" JSON="" BEFORE=""
while [ "$#" -gt 0 ]; do
  case "$1" in
    --reference-build) REF_BUILD="$(cd "$2" && pwd)"; shift 2 ;;
    --models) MODELS="$2"; shift 2 ;;
    --sizes) SIZES="$2"; shift 2 ;;
    --rounds) ROUNDS="$2"; shift 2 ;;
    --slow-rounds) SLOW_ROUNDS="$2"; shift 2 ;;
    --per-round) PER_ROUND="$2"; shift 2 ;;
    --batch-ms) BATCH_MS="$2"; shift 2 ;;
    --threads) THREADS="$2"; shift 2 ;;
    --paddleocr) PADDLEOCR="$(cd "$2" && pwd)"; shift 2 ;;
    --paddledetection) PADDLEDETECTION="$(cd "$2" && pwd)"; shift 2 ;;
    --detection-python) DET_PYTHON="$2"; shift 2 ;;
    --json) JSON="$2"; shift 2 ;;
    --before) BEFORE="$2"; shift 2 ;;
    --nchw) NCHW=1; shift ;;
    --no-fuse) NO_FUSE=1; shift ;;
    --no-paddle) NO_PADDLE=(--no-paddle); shift ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$PADDLEOCR" ] && SEQUENCE="$SEQUENCE ppocrv5_mobile_det_fixed ppocrv5_server_det_fixed ppocrv5_mobile_rec_fixed"
DETECTION="ppyoloe_plus_s_fixed picodet_s_fixed rtdetr_r18_fixed"
[ -n "$PADDLEDETECTION" ] && SEQUENCE="$SEQUENCE $DETECTION"
MODELS="${MODELS:-$VISION $SEQUENCE}"
JSON="${JSON:-$BUILD/bench-models/results.jsonl}"
mkdir -p "$BUILD/bench-models"

PYTHON="${KFORGE_BENCH_PYTHON:-}"
if [ -z "$PYTHON" ]; then
  PYTHON="$BUILD/bench-venv/bin/python"
  if ! "$PYTHON" -c "import paddle, paddle2onnx, onnxruntime, numpy" 2>/dev/null; then
    python3 -m venv "$BUILD/bench-venv"
    "$PYTHON" -m pip install --quiet paddlepaddle==3.3.1 paddle2onnx onnxruntime numpy
  fi
fi
DET_PYTHON="${DET_PYTHON:-$PYTHON}"
# export.py's arguments: where the real architectures come from; ppdet's only for the detectors, as importing it
# needs --detection-python's packages.
ZOO_ARGS=() DET_ARGS=()
[ -n "$PADDLEOCR" ] && ZOO_ARGS+=(--paddleocr "$PADDLEOCR")
[ -n "$PADDLEDETECTION" ] && DET_ARGS+=(--paddledetection "$PADDLEDETECTION")
# The zoo's names and size labels, listed once (a Paddle import each time is 5-30 s on a loaded machine).
ZOO_LIST="$("$DET_PYTHON" "$ROOT/bench/models/export.py" --list "${ZOO_ARGS[@]}" "${DET_ARGS[@]}" 2>/dev/null)"

sizes_of() {  # MODEL: the sizes it runs at
  case "$1" in
    LeNet) echo 28 ;;
    alexnet|googlenet) echo 224 ;;
    inception_v3) for s in $SIZES; do [ "$s" -lt 80 ] && echo 80 || echo "$s"; done | sort -un | tr '\n' ' ' ;;
    *) if [[ " $(echo $VISION) " == *" $1 "* ]]; then echo "$SIZES"; else
         echo "$ZOO_LIST" | sed -n "s/^$1 //p"; fi ;;
  esac
}
kernels_link() {  # what BUILD_DIR's kernel library needs after it
  local link=()
  read -ra link < "$1/kernels/kforge_kernels.link"
  echo "${link[@]}"
}
build_worker() {  # BUILD_DIR GEN_DIR OUTPUT
  # shellcheck disable=SC2046
  g++ -std=c++17 -O2 -Wall -Wextra -Werror -I "$2" -I "$ROOT/tools/interp" -I "$ROOT/kernels" \
    -DKFORGE_MODEL_HEADER='"net.h"' -DKFORGE_MODEL_CLASS=net "$ROOT/bench/models/worker.cc" "$2/net.cc" \
    "${EXTRA[@]}" "$1/kernels/libkforge_kernels.a" $(kernels_link "$1") -o "$3"
}
up_to_date() {  # TARGET SOURCE...: TARGET exists and is newer than every SOURCE
  local target="$1" source
  shift
  [ -f "$target" ] || return 1
  for source in "$@"; do [ "$target" -nt "$source" ] || return 1; done
}
prepare() {  # MODEL SIZE DIR: export, compile and build the workers; the compare.py arguments on stdout
  local model="$1" size="$2" dir="$3" variants=(fuse) exporter=("$PYTHON")
  [[ " $DETECTION " == *" $model "* ]] && exporter=("$DET_PYTHON" "${DET_ARGS[@]}")
  if [ ! -f "$dir/bundle.kftb" ]; then
    "${exporter[0]}" "$ROOT/bench/models/export.py" "$model" "$size" "$dir" "${ZOO_ARGS[@]}" "${exporter[@]:1}" \
      --onnx-python "$PYTHON" \
      >"$dir.log" 2>&1 || return 1
  fi
  [ "$NCHW" = 1 ] && variants+=(nchw)
  [ "$NO_FUSE" = 1 ] && variants+=(no-fuse)
  local args=(--kforge "$dir/worker-fuse")
  for variant in "${variants[@]}"; do
    local flags=()
    [ "$variant" = no-fuse ] && flags=(--no-fuse)
    [ "$variant" = nchw ] && flags=(--layout nchw)
    if ! up_to_date "$dir/worker-$variant" "$dir/inference.json" "$BUILD/src/kforge" \
        "$BUILD/kernels/libkforge_kernels.a" "$ROOT/bench/models/worker.cc"; then
      "$BUILD/src/kforge" compile "$dir/inference.json" "${OPS[@]}" --op-compat "$ROOT/kernels/op_compat.yaml" \
        -o "$dir/gen-$variant" --name net --target cpu "${flags[@]}" >>"$dir.log" 2>&1 || return 1
      build_worker "$BUILD" "$dir/gen-$variant" "$dir/worker-$variant" >>"$dir.log" 2>&1 || return 1
    fi
    [ "$variant" != fuse ] && args+=("--kforge-$variant" "$dir/worker-$variant")
  done
  [ -n "$BEFORE" ] && [ -x "$dir/worker-$BEFORE" ] && args+=(--kforge-before "$dir/worker-$BEFORE")
  if [ -n "$REF_BUILD" ]; then
    build_worker "$REF_BUILD" "$dir/gen-fuse" "$dir/worker-reference" >>"$dir.log" 2>&1 || return 1
    args+=(--kforge-reference "$dir/worker-reference")
  fi
  echo "${args[@]}"
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
versions='import paddle, onnxruntime; print("paddle", paddle.__version__, "onnxruntime", onnxruntime.__version__)'
echo "kforge $(git -C "$ROOT" rev-parse --short HEAD), $("$PYTHON" -c "$versions" 2>/dev/null)"
for model in $MODELS; do
  sizes="$(sizes_of "$model")"
  [ -z "$sizes" ] && echo "$model: no such model in the zoo (export.py --list)"
  for size in $sizes; do
    dir="$BUILD/bench-models/${model}_${size}"
    mkdir -p "$dir"
    if ! args="$(prepare "$model" "$size" "$dir")"; then
      echo "$model $size: not run, see $dir.log: $(tail -n 2 "$dir.log" | tr '\n' ' ' | cut -c1-200)"
      echo
      continue
    fi
    rounds="$ROUNDS"
    [[ " $SLOW " == *" ${model}_${size} "* ]] && rounds="$SLOW_ROUNDS"
    # shellcheck disable=SC2086
    "$PYTHON" "$ROOT/bench/models/compare.py" "$dir" $args --rounds "$rounds" --per-round "$PER_ROUND" \
      --batch-ms "$BATCH_MS" "${NO_PADDLE[@]}" \
      --threads "$THREADS" --json "$JSON" || echo "$model $size: compare.py failed"
    echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo
  done
done
"$PYTHON" "$ROOT/bench/models/table.py" "$JSON"
