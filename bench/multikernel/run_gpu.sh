#!/bin/bash
# GPU benchmarks (a)-(d) of the multi-kernel GEMM (BENCHMARKS.md, "Multi-kernel GEMM on the GPU"), plus the
# correctness check of every variant against cuBLAS. Run from anywhere on a machine with an sm_90 GPU:
#   bench/multikernel/run_gpu.sh [BINARY]
# BINARY: a prebuilt gemm_gpu_bench (default build-gemm/gemm_gpu_bench, built here with nvcc when absent or
# not runnable). Logs go to $OUT (default /tmp/kforge-mk-gpu).
set -euo pipefail
cd "$(dirname "$0")/../.."
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
OUT=${OUT:-/tmp/kforge-mk-gpu}
BIN=${1:-build-gemm/gemm_gpu_bench}
mkdir -p "$OUT" "$(dirname "$BIN")"
if [ ! -x "$BIN" ] || ldd "$BIN" | grep -q "not found"; then
  echo "building $BIN"
  "$NVCC" -O3 -std=c++17 -arch=sm_90 -Itemplates/runtime -Itemplates/cuda bench/multikernel/gemm_gpu_bench.cu \
    -lcublasLt -lcublas -o "$BIN"
fi
(command -v cuobjdump >/dev/null && cuobjdump -sass "$BIN" | grep -oE "HMMA\.[0-9A-Z.]+|LDSM[.A-Z0-9]*|LDGSTS[.A-Z0-9]*" | sort | uniq -c) || true
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw --format=csv || true

# One cache directory shared by the first processes (which benchmark and write) and the second (which reads);
# caches and pick lists live outside $OUT (the device tool brings back at most 8 files).
WORK=$(mktemp -d)
export KFORGE_CACHE_DIR="$WORK/cache"
export KFORGE_MULTI_KERNEL_LOG=1

"$BIN" check > "$OUT/check.log" 2>&1 || { cat "$OUT/check.log"; echo "CHECK FAILED"; exit 1; }
grep -c "^ok" "$OUT/check.log" | sed 's/^/check: variants x epilogues x shapes passing: /'
grep -E "FAIL|tanh|check:" "$OUT/check.log" | head -20

"$BIN" sweep "$WORK/picks.txt" > "$OUT/sweep.log" 2> "$OUT/sweep.dispatch.log"
"$BIN" fused > "$OUT/fused.log" 2> "$WORK/fused.dispatch.log"
"$BIN" f32 > "$OUT/f32.log" 2> /dev/null
# (d) a second process, same KFORGE_CACHE_DIR: every pick must come from disk.
"$BIN" replay "$WORK/picks.txt" > "$OUT/replay.log" 2> "$OUT/replay.dispatch.log" || { echo "REPLAY FAILED"; tail -5 "$OUT/replay.log"; }

# The sweep again, in a fresh cache directory (benchmarks again): the spread between two runs of the same code.
KFORGE_CACHE_DIR="$WORK/cache2" "$BIN" sweep "$WORK/picks2.txt" > "$OUT/sweep2.log" 2> /dev/null

echo "== (a)+(b) sweep: rows M=64,256,4096 and the summary"
head -2 "$OUT/sweep.log"
grep -E "^(64|256|4096) " "$OUT/sweep.log"
grep -E "^(SUMMARY|dispatcher stats|known-shape)" "$OUT/sweep.log"
echo "second sweep (fresh cache):"; grep -E "^SUMMARY" "$OUT/sweep2.log"
echo "rows with a gap over 3 % (either pick):"; awk '$1 ~ /^[0-9]+$/ && ($6+0 > 3 || $NF+0 > 3)' "$OUT/sweep.log" "$OUT/sweep2.log" | cut -c1-60,190-
echo "picks that differ between the two sweeps: $(paste "$WORK/picks.txt" "$WORK/picks2.txt" | awk '$2 != $4' | wc -l) of 64"
echo "== (c) fused"
cat "$OUT/fused.log"
echo "== fp32 site (SIMT kernels + cuBLASLt fp32, no TF32), us"
cat "$OUT/f32.log"
echo "== (d) second process"
grep -E "^(dispatcher stats|replay|fused replay)" "$OUT/replay.log"
echo "first process log (benchmarked), 1 line:"; head -1 "$OUT/sweep.dispatch.log" | cut -c1-400
echo "second process log (from cache), 2 lines:"; head -2 "$OUT/replay.dispatch.log" | cut -c1-400
echo "cache entries: $(ls "$KFORGE_CACHE_DIR/multi-kernel" | wc -l)"; cat "$(ls -d "$KFORGE_CACHE_DIR"/multi-kernel/* | head -1)"
