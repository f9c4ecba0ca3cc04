#!/bin/bash
# GPU benchmark of the row groups' multi-kernel dispatch (BENCHMARKS.md, "Multi-kernel row reductions"): for a
# softmax and a three-pass normalisation over rows x length shapes:
#   - run(): the time per run() (CUDA events around 10 back-to-back runs, median of 30) with every variant
#     forced (KFORGE_MULTI_KERNEL_FORCE; row_auto is what runs without --multi-kernel-hints; "-": the variant
#     cannot hold the row), and with the dispatcher's pick: its gap to the best forced variant and its speed-up
#     over row_auto. Below ~6 us a run() is bound by the host's launch work, not by the kernel, so there the
#     columns compare noise;
#   - kernel: two independent processes with fresh caches each benchmark the shape (the dispatcher's event
#     timer: kernel time alone); the pick of the second is scored against the first one's medians (the best
#     in hindsight from an independent measurement) and against row_auto there.
# Then the worst and mean gaps of both.
#   bench/multikernel/row_bench.sh prepare BUILD   build machine: kforge + nvcc -> BUILD/row-bench/ (carry it)
#   bench/multikernel/row_bench.sh run BUILD       GPU machine
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
NVCC="${NVCC:-/usr/local/cuda/bin/nvcc}"
SHAPES="64,128 64,1024 64,4096 64,12288 1024,128 1024,1024 1024,4096 1024,12288 16384,128 16384,1024 16384,4096 16384,12288"

prepare() {
  local build="$1" ex="$ROOT/kernels" out="$1/row-bench" pids=()
  rm -rf "$out" && mkdir -p "$out"
  for name in row_softmax row_norm; do
    local gen="$out/gen_$name"
    "$build/src/kforge" compile "$HERE/programs/$name.yaml" --ops "$ex/ops.yaml" --ops "$ex/fusion.yaml" \
      --op-compat "$ex/op_compat.yaml" -o "$gen" --name "$name" --target cuda --multi-kernel-hints 64,256,4096
    grep -oE '^      \{"row_[a-z0-9_]+", \[' "$gen/$name.cu" | tr -d ' {",[' > "$out/$name.variants"
    "$NVCC" -arch=sm_90 -std=c++17 -O3 -Werror all-warnings -I "$gen" -DKFORGE_PROGRAM_HEADER="\"$name.h\"" \
      -DKFORGE_PROGRAM_CLASS="$name" "$ROOT/bench/fusion/bench_driver.cu" "$gen/$name.cu" "$gen/${name}_kernels.cu" \
      -o "$out/$name" &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
  echo "prepared $out"
}

# median_ms of one driver run: NAME SHAPE [FORCE]; "-" when the forced variant cannot run the shape (the
# dispatcher then chooses as usual and says so).
time_one() {
  local name="$1" shape="$2" force="${3:-}" t
  t="$(KFORGE_MULTI_KERNEL_FORCE="$force" KFORGE_CACHE_DIR="$work/cache" KFORGE_MULTI_KERNEL_LOG=1 \
    "$dir/$name" "$name" --mode events --runs 30 --batch 10 --input "$shape" 2>"$work/run.log" |
    awk '{for (i = 1; i < NF; ++i) if ($i == "median_ms") print $(i + 1)}')"
  cat "$work/run.log" >>"$work/log"
  if [[ -n "$force" ]] && grep -q "cannot run shape" "$work/run.log"; then echo "-"; else echo "$t"; fi
}

# The dispatcher's benchmark line for a shape from one process with a fresh cache ("... times: name=us ...").
bench_line() {
  local name="$1" shape="$2" cache
  cache="$(mktemp -d -p "$work")"
  KFORGE_CACHE_DIR="$cache" KFORGE_MULTI_KERNEL_LOG=1 "$dir/$name" "$name" --mode events --runs 1 \
    --input "$shape" 2>&1 >/dev/null | grep -E "^kforge: multi-kernel mk_[a-z0-9_]+ ${shape/,/x} -> .* times:" | tail -1
}

# Kernel-level score of one shape: process A's medians, process B's pick.
kernel_score() {
  local a b
  a="$(bench_line "$1" "$2")"
  b="$(bench_line "$1" "$2")"
  awk -v a="$a" -v b="$b" 'BEGIN {
    n = split(a, f, " "); best = 1e30
    for (i = 1; i <= n; ++i) if (f[i] ~ /^row_[a-z0-9_]+=[0-9.]+us$/) {
      split(f[i], kv, "="); t = kv[2] + 0; us[kv[1]] = t; if (t < best) best = t
    }
    split(b, g, " "); picked = g[6]
    printf " %8.2f %8.2f %-18s %6.1f %6.2fx\n", best, us["row_auto"], picked, 100 * (us[picked] / best - 1),
      us["row_auto"] / us[picked]
  }'
}

run() {
  dir="$1/row-bench"
  work="$(mktemp -d)"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader || true
  for name in row_softmax row_norm; do
    mapfile -t variants <"$dir/$name.variants"
    printf '%-12s %-12s' "$name" "shape"
    printf ' %9s' "${variants[@]}" | sed 's/row_//g'
    printf ' %9s %-18s %6s %7s | %8s %8s %-18s %6s %7s\n' "pick_ms" "picked" "gap%" "vs_auto" "k_best" "k_auto" \
      "k_picked" "k_gap%" "k_auto/"
    for shape in $SHAPES; do
      local times=() best=1e30 t auto pick picked
      for v in "${variants[@]}"; do
        t="$(time_one "$name" "$shape" "$v")"
        times+=("$t")
        [[ "$t" == "-" ]] || best="$(awk -v a="$t" -v b="$best" 'BEGIN {print (a < b) ? a : b}')"
      done
      auto="${times[0]}"
      pick="$(time_one "$name" "$shape")"  # a fresh shape for the dispatcher: benchmarked, then timed
      picked="$(grep -E "^kforge: multi-kernel mk_[a-z0-9_]+ ${shape/,/x} -> " "$work/log" | tail -1 |
                awk '{print $6}')"
      printf '%-12s %-12s' "$name" "${shape/,/x}"
      printf ' %9s' "${times[@]}"
      printf ' %9.4f %-18s' "$pick" "$picked"
      awk -v p="$pick" -v b="$best" -v a="$auto" 'BEGIN {printf " %6.1f %6.2fx |", 100 * (p / b - 1), a / p}'
      kernel_score "$name" "$shape"
    done
  done | tee "$work/table"
  # run() gaps only where the best forced run() takes >= 20 us (kernel-bound); kernel gaps everywhere.
  awk '/\|/ && $2 != "shape" {
         split($0, half, "|"); nr = split(half[1], r, " "); nk = split(half[2], k, " ")
         gap = r[nr - 1]; best_ms = r[nr - 3] / (1 + gap / 100)
         if (best_ms >= 0.020) { rs += gap; rn += 1; if (gap > rw) rw = gap }
         kg = k[nk - 1]; ks += kg; kn += 1; if (kg > kw) kw = kg
       }
       END {
         printf "run() where the best forced run() takes >= 20 us (%d shapes): pick vs best: worst %.1f %%, mean %.2f %%\n", rn, rw, rs / rn
         printf "kernel (%d shapes): pick of one process vs the best of another: worst %.1f %%, mean %.2f %%\n", kn, kw, ks / kn
       }' "$work/table"
  rm -rf "$work"
}

case "${1:-}" in
  prepare) prepare "$2" ;;
  run) run "$2" ;;
  *) echo "usage: row_bench.sh prepare BUILD | row_bench.sh run BUILD" >&2; exit 2 ;;
esac
