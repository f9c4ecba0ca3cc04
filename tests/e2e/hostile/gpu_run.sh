#!/bin/bash
# Hostile calls of the --target cuda class on a GPU (docs/fuzzing.md, "Generated code under hostile calls"): the
# driver of tests/e2e/hostile/driver.cc built with nvcc (-DHOSTILE_CUDA) against `kforge compile --target cuda` of
# hostile_net_cuda.yaml, once plain and once with --multi-kernel-hints (GEMM and row dispatchers, so the disk cache is
# written and read). It prints PASS/FAIL per case; the multi-kernel build runs three times on one fresh cache (the
# dispatchers benchmark, then read their entries), then after every entry was truncated and after every entry was
# replaced by garbage (each must be ignored with one warning and rewritten), then with a cache root that cannot be
# created (a warning per entry, the picks kept in memory).
#   tests/e2e/hostile/gpu_run.sh prepare BUILD   build machine: kforge (BUILD/src/kforge) + nvcc -> BUILD/hostile-gpu/
#   tests/e2e/hostile/gpu_run.sh run BUILD       GPU machine (libcublasLt / libcublas of CUDA 12 or later)
#   tests/e2e/hostile/gpu_run.sh all BUILD       both, where kforge and nvcc are on the GPU machine
# The last line is "hostile-gpu: N passed, N failed"; the exit status is 1 on any failure.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
NVCC="${NVCC:-/usr/local/cuda/bin/nvcc}"
mode="${1:-}"
BUILD="$(cd "${2:?usage: gpu_run.sh prepare|run|all BUILD}" && pwd)"
OUT="$BUILD/hostile-gpu"

prepare() {
  rm -rf "$OUT"
  mkdir -p "$OUT"
  local ops=(--ops "$ROOT/kernels/ops.yaml" --ops "$ROOT/kernels/fusion.yaml" --op-compat "$ROOT/kernels/op_compat.yaml")
  local variant flags
  for variant in plain mk; do
    flags=()
    [ "$variant" = mk ] && flags=(--multi-kernel-hints 16,64,256)
    "$BUILD/src/kforge" compile "$HERE/hostile_net_cuda.yaml" "${ops[@]}" -o "$OUT/gen-$variant" --name hostile_net \
      --target cuda "${flags[@]}"
    "$NVCC" -arch=sm_90 -std=c++17 -O2 -Werror all-warnings -Xcompiler -Wall,-Wextra -DHOSTILE_CUDA \
      -I "$OUT/gen-$variant" '-DKFORGE_PROGRAM_HEADER="hostile_net.h"' -DKFORGE_PROGRAM_CLASS=hostile_net \
      -x cu "$HERE/driver.cc" "$OUT/gen-$variant/hostile_net.cu" "$OUT/gen-$variant/hostile_net_kernels.cu" \
      -o "$OUT/driver-$variant" -lcublasLt -lcublas
  done
  echo "built $OUT/driver-plain and $OUT/driver-mk"
}

passed=0
failed=0
verdict() {  # NAME OK(0/1) [DETAIL]
  if [ "$2" = 0 ]; then
    passed=$((passed + 1))
    printf '%-44s PASS %s\n' "$1" "${3:-}"
  else
    failed=$((failed + 1))
    printf '%-44s FAIL %s\n' "$1" "${3:-}"
  fi
}

# Runs a driver; the case passes when it exits 0 and its own last line says 0 failed.
drive() {  # NAME DRIVER LOG [env...]
  local name="$1" driver="$2" log="$3"
  shift 3
  local scratch
  scratch="$(mktemp -d)"
  env "$@" "$driver" "$scratch" >"$log.out" 2>"$log.err"
  local status=$?
  rm -rf "$scratch"
  grep -E '^(PASS|FAIL) ' "$log.out" | sed "s/^/  [$name] /" || true
  local summary
  summary="$(tail -n 1 "$log.out")"
  [ "$status" = 0 ] && [[ "$summary" == *" 0 failed" ]]
  verdict "$name" $? "$summary (exit $status)"
}

run_all() {
  set +e  # a failed check is a FAIL line, not the end of the script
  shopt -s nullglob
  [ -x "$OUT/driver-plain" ] || { echo "no $OUT/driver-plain: run 'gpu_run.sh prepare $BUILD' first" >&2; exit 2; }
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
  local logs cache
  logs="$(mktemp -d)"
  drive "cuda hostile calls" "$OUT/driver-plain" "$logs/plain" KFORGE_MULTI_KERNEL_CACHE=0

  cache="$(mktemp -d)/cache"
  drive "mk: fresh cache (benchmarks)" "$OUT/driver-mk" "$logs/mk1" KFORGE_CACHE_DIR="$cache" KFORGE_MULTI_KERNEL_LOG=1
  local n
  n="$(find "$cache/multi-kernel" -name '*.pick' 2>/dev/null | wc -l)"
  [ "$n" -gt 0 ]
  verdict "mk: entries written" $? "$n entries"
  drive "mk: second process" "$OUT/driver-mk" "$logs/mk2" KFORGE_CACHE_DIR="$cache" KFORGE_MULTI_KERNEL_LOG=1
  grep -q '(from cache)' "$logs/mk2.err" && ! grep -q '(benchmarked)' "$logs/mk2.err"
  verdict "mk: second process reads every pick" $?

  local f
  for f in "$cache"/multi-kernel/*.pick; do head -c 40 "$f" >"$f.cut" && mv "$f.cut" "$f"; done
  drive "mk: truncated entries" "$OUT/driver-mk" "$logs/mk3" KFORGE_CACHE_DIR="$cache" KFORGE_MULTI_KERNEL_LOG=1
  [ "$n" -gt 0 ] && [ "$(grep -c 'ignoring multi-kernel cache entry' "$logs/mk3.err")" = "$n" ]
  verdict "mk: one warning per truncated entry" $? "$(grep -c 'ignoring multi-kernel' "$logs/mk3.err") of $n"

  for f in "$cache"/multi-kernel/*.pick; do head -c 3000 /dev/urandom >"$f"; done
  drive "mk: garbage entries" "$OUT/driver-mk" "$logs/mk4" KFORGE_CACHE_DIR="$cache" KFORGE_MULTI_KERNEL_LOG=1
  [ "$n" -gt 0 ] && [ "$(grep -c 'ignoring multi-kernel cache entry' "$logs/mk4.err")" = "$n" ]
  verdict "mk: one warning per garbage entry" $?
  local complete=0
  [ "$n" -gt 0 ] || complete=1
  for f in "$cache"/multi-kernel/*.pick; do [ "$(tail -n 1 "$f")" = end ] || complete=1; done
  verdict "mk: entries rewritten complete" $complete

  local blocker
  blocker="$(mktemp)"
  drive "mk: unwritable cache root" "$OUT/driver-mk" "$logs/mk5" KFORGE_CACHE_DIR="$blocker/cache" KFORGE_MULTI_KERNEL_LOG=1
  grep -q 'cannot write multi-kernel cache entry' "$logs/mk5.err"
  verdict "mk: unwritable cache warns" $?
  rm -f "$blocker"
  echo "logs: $logs"
  echo "hostile-gpu: $passed passed, $failed failed"
  [ "$failed" = 0 ]
}

case "$mode" in
  prepare) prepare ;;
  run) run_all ;;
  all) prepare && run_all ;;
  *) echo "usage: gpu_run.sh prepare|run|all BUILD" >&2; exit 2 ;;
esac
