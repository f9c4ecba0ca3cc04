#!/usr/bin/env bash
# CPU fusion measurement: the 8-op elementwise chain of chain8.yaml over 4M floats, compiled with fusion (one
# loop) and with --no-fuse (eight kernel calls), each built with g++ -O2 and timed in the same run by the
# check harness (--bench: thread CPU time per run after 100 warm-up runs).
#   bench/fusion_cpu/run.sh [BUILD_DIR] [RUNS]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
BUILD="$(cd "${1:-$ROOT/build}" && pwd)"
RUNS="${2:-30}"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
PROGRAM="$ROOT/bench/fusion_cpu/chain8.yaml"
K="$ROOT/kernels"
kernels_link=()  # what the kernel library needs after it (oneDNN's libraries when built with them)
read -ra kernels_link < "$BUILD/kernels/kforge_kernels.link"
"$BUILD/tools/interp/kforge-interp" "$PROGRAM" --seed 1 --write-inputs "$WORK/inputs.bin"
for variant in fused unfused; do
  flags=()
  [[ $variant == unfused ]] && flags=(--no-fuse)
  "$BUILD/src/kforge" compile "$PROGRAM" --ops "$K/ops.yaml" --ops "$K/fusion.yaml" --op-compat "$K/op_compat.yaml" \
    -o "$WORK/$variant" --name chain8 "${flags[@]}"
  g++ -std=c++17 -O2 -I "$WORK/$variant" -I "$ROOT/tools/interp" -DKFORGE_PROGRAM_HEADER='"chain8.h"' \
    -DKFORGE_PROGRAM_CLASS=chain8 -DKFORGE_TRACE_HOOK=kforge_harness_trace "$ROOT/tools/check_program/harness.cc" \
    "$WORK/$variant/chain8.cc" "$BUILD/kernels/libkforge_kernels.a" "${kernels_link[@]}" -o "$WORK/$variant/harness"
done
for variant in fused unfused; do
  ns=$("$WORK/$variant/harness" "$WORK/inputs.bin" "$WORK/$variant/out.bin" --bench "$RUNS" | sed -n 's/.*, \([0-9.]*\) ns per run.*/\1/p')
  echo "$variant: $(awk -v n="$ns" 'BEGIN { printf "%.3f", n / 1e6 }') ms per run"
  eval "${variant}_ns=$ns"
done
awk -v f="$fused_ns" -v u="$unfused_ns" 'BEGIN { printf "fused / unfused time: %.3f (%.2fx faster)\n", f / u, u / f }'
