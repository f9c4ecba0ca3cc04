#!/bin/bash
# A/B of two kforge trees on the GPU machine: the --cuda-graph harnesses of bench/cuda_models/run.sh made from
# two `run.sh prepare` directories (A: BUILD_A/cuda-models, B: BUILD_B/cuda-models, e.g. before and after a change
# to a runtime header or a pass), timed in turn: ROUNDS rounds (default 5), in each every model and batch once per
# tree, A first in odd rounds and B first in even ones. Each cell is one process's median of 50 runs after warm-up
# (timing_harness.cu, the multi-kernel dispatcher benchmarking every shape in a fresh cache directory). Prints each
# round, then per model and batch the median over rounds of A and B and B / A.
#
#   MODELS="resnet50 resnet18" VARIANT=graph bench/cuda_models/ab_trees.sh BUILD_A BUILD_B
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=bench/cudnn_env.sh
source "$HERE/../cudnn_env.sh"
ROUNDS="${ROUNDS:-5}"
MODELS="${MODELS:-resnet18 resnet50 mobilenet_v2}"
VARIANT="${VARIANT:-graph}"
A="$1/cuda-models" B="$2/cuda-models"
use_wheel_cudnn
for dir in "$A" "$B"; do  # only the variant timed here
  grep " $VARIANT\$" "$dir/compiled" > "$dir/compiled.ab"
  mv "$dir/compiled.ab" "$dir/compiled"
  "$HERE/run.sh" build "$(dirname "$dir")" > /dev/null || echo "some harnesses of $dir did not build" >&2
done

cell() {  # DIR MODEL BATCH: one harness process's median (ms)
  local cache
  cache="$(mktemp -d)"
  KFORGE_CACHE_DIR="$cache" "$1/bin/${2}_$VARIANT" "$1/$2/params.txt" "$3" | awk '{print $2}'
  rm -rf "$cache"
}

results="$(mktemp)"
for round in $(seq 1 "$ROUNDS"); do
  for m in $MODELS; do
    for batch in 1 10; do
      if ((round % 2)); then a=$(cell "$A" "$m" "$batch"); b=$(cell "$B" "$m" "$batch")
      else b=$(cell "$B" "$m" "$batch"); a=$(cell "$A" "$m" "$batch"); fi
      echo "$m $batch $round $a $b" | tee -a "$results"
    done
  done
done
python3 - "$results" <<'PY'
import statistics, sys
cells = {}
for line in open(sys.argv[1]):
    m, batch, _, a, b = line.split()
    cells.setdefault((m, int(batch)), []).append((float(a), float(b)))
print(f"{'model':13s} {'batch':>5s} {'A ms':>9s} {'B ms':>9s} {'B/A':>6s}  (medians over rounds; B/A per round min-max)")
for (m, batch), runs in cells.items():
    a = statistics.median(r[0] for r in runs)
    b = statistics.median(r[1] for r in runs)
    ratios = [r[1] / r[0] for r in runs]
    print(f"{m:13s} {batch:5d} {a:9.4f} {b:9.4f} {b / a:6.3f}  ({min(ratios):.3f}-{max(ratios):.3f})")
PY
rm -f "$results"
