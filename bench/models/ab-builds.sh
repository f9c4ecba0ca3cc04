#!/usr/bin/env bash
# A/B of two builds of the kernel library on whole models: the same generated code (compiled once, by the first
# build's kforge, with kernels/fusion.yaml and the default layout plan) linked to each build's libkforge_kernels.a
# (e.g. one against Debian's oneDNN, one with -Donednn_prefix=...), timed by ab.py in interleaved rounds (process CPU
# ms per inference, each worker in its own process); prints each model's ratio B / A.
#
#   bench/models/ab-builds.sh BUILD_A BUILD_B [--models "resnet18 mobilenet_v2"] [--sizes "64 224"] [--threads N]
#                             [--rounds R] [--per-round K] [--env-b VAR=VALUE,...] [--wrap "taskset -c 0"]
#
# Exports are read from BUILD_A/bench-models/MODEL_SIZE (bench/models/run.sh or export.py writes them).
# --env-b: environment of B's workers only (what a build's oneDNN needs at run time); --wrap: a command both workers
# run under (taskset, to give both the same CPUs). Before timing, each pair's first outputs are compared: the
# largest absolute difference and the largest |a| (numpy: $KFORGE_BENCH_PYTHON, else python3).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
A="$(cd "$1" && pwd)" B="$(cd "$2" && pwd)"
shift 2
MODELS="resnet18 mobilenet_v2" SIZES="64 224" THREADS=1 ROUNDS=10 PER_ROUND=5 ENV_B="" WRAP=""
while [ "$#" -gt 0 ]; do
  case "$1" in
    --models) MODELS="$2"; shift 2 ;;
    --sizes) SIZES="$2"; shift 2 ;;
    --threads) THREADS="$2"; shift 2 ;;
    --rounds) ROUNDS="$2"; shift 2 ;;
    --per-round) PER_ROUND="$2"; shift 2 ;;
    --env-b) ENV_B="$2"; shift 2 ;;
    --wrap) WRAP="$2"; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done

ninja -C "$A" src/kforge kernels/libkforge_kernels.a >/dev/null
ninja -C "$B" kernels/libkforge_kernels.a >/dev/null
OPS=(--ops "$ROOT/kernels/ops.yaml" --ops "$ROOT/kernels/fusion.yaml")
EXTRA=()
if ! grep -q '^- op : relu6$' "$ROOT/kernels/ops.yaml"; then
  OPS+=(--ops "$ROOT/bench/models/extra_ops.yaml")
  EXTRA=("$ROOT/bench/models/extra_kernels.cc")
fi
build_worker() {  # BUILD_DIR GEN_DIR OUTPUT
  local link=()
  read -ra link < "$1/kernels/kforge_kernels.link"
  g++ -std=c++17 -O2 -Wall -Wextra -Werror -I "$2" -I "$ROOT/tools/interp" -I "$ROOT/kernels" \
    -DKFORGE_MODEL_HEADER='"net.h"' -DKFORGE_MODEL_CLASS=net "$ROOT/bench/models/worker.cc" "$2/net.cc" \
    "${EXTRA[@]}" "$1/kernels/libkforge_kernels.a" "${link[@]}" -o "$3"
}

WRAP_ARGS=()
read -ra WRAP_ARGS <<< "$WRAP"
ENV_ARGS=()
IFS=',' read -ra ENV_ARGS <<< "$ENV_B"
echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "A: $A ($(cat "$A/kernels/kforge_kernels.link"))"
echo "B: $B ($(cat "$B/kernels/kforge_kernels.link"))${ENV_B:+, env $ENV_B}"
echo "threads $THREADS, $ROUNDS rounds of $PER_ROUND${WRAP:+, under $WRAP}"
for model in $MODELS; do
  for size in $SIZES; do
    dir="$A/bench-models/${model}_${size}"
    work="$dir/ab-builds"
    mkdir -p "$work"
    "$A/src/kforge" compile "$dir/inference.json" "${OPS[@]}" --op-compat "$ROOT/kernels/op_compat.yaml" \
      -o "$work/gen" --name net --target cpu
    build_worker "$A" "$work/gen" "$work/worker-a"
    build_worker "$B" "$work/gen" "$work/worker-b"
    # The outputs first: the same model on both libraries agrees to float32 rounding (oneDNN sums in another order).
    printf 'out %s\nquit\n' "$work/out-a.bin" | "${WRAP_ARGS[@]}" "$work/worker-a" "$dir/bundle.kftb" >/dev/null
    printf 'out %s\nquit\n' "$work/out-b.bin" | env "${ENV_ARGS[@]}" "${WRAP_ARGS[@]}" "$work/worker-b" \
      "$dir/bundle.kftb" >/dev/null
    diff=$("${KFORGE_BENCH_PYTHON:-python3}" -c "import numpy as np, sys; a, b = (np.fromfile(f, np.float32) for f in sys.argv[1:]); \
print(f'max |a - b| {np.abs(a - b).max():.3g}, max |a| {np.abs(a).max():.3g}')" "$work/out-a.bin" "$work/out-b.bin")
    echo "== ${model} ${size}x${size}: $diff"
    python3 "$ROOT/bench/models/ab.py" "$ROUNDS" "$PER_ROUND" \
      "A::::$WRAP $work/worker-a $dir/bundle.kftb --threads $THREADS" \
      "B::$ENV_B::$WRAP $work/worker-b $dir/bundle.kftb --threads $THREADS"
  done
done
