#!/bin/bash
# GPU machine: tools/run-model --target cuda on Paddle models against Paddle's CPU outputs, --precision float32 /
# float16 / bfloat16, each with and without --cuda-graph (all runs in parallel), printing
# max|gpu - paddle| / max|paddle| per run (BENCHMARKS.md, "16-bit compute").
#
#   bench/cuda_models/run_model_gpu.sh DIR     DIR (carried to the GPU machine) holds a kforge build for run-model's
#                                               --build-dir: src/kforge (stripped), lib/ (the libfmt and libyaml-cpp it
#                                               links), share/kforge/templates (a copy of templates/), and models/M/ as
#                                               bench/cuda_models/export_fixtures.py writes them (inference.json,
#                                               inference.pdiparams or params.q8, input_x.npy, expected_0.npy)
set -u
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
R="$1"
# shellcheck source=bench/cudnn_env.sh
source "$ROOT/bench/cudnn_env.sh"
use_wheel_cudnn > /dev/null
export LD_LIBRARY_PATH="$R/lib:${LD_LIBRARY_PATH:-}"
tmp="$(mktemp -d)"
one() {  # MODEL PRECISION [--cuda-graph]
  local m=$1 p=$2 g=${3:-} out="$tmp/out_$1_$2${3:-}"
  if "$ROOT/tools/run-model" "$R/models/$m" --input "x=$R/models/$m/input_x.npy" --target cuda --precision "$p" $g \
       --build-dir "$R" --output-dir "$out" > "$out.log" 2>&1; then
    python3 -c "
import numpy as np; g = np.load('$out/0.npy'); e = np.load('$R/models/$m/expected_0.npy')
print('$m $p ${g:-plain}', g.dtype, g.shape, 'max|diff|/max|paddle| %.2e' % (np.abs(g - e).max() / np.abs(e).max()))"
  else
    echo "$m $p $g FAILED"; tail -5 "$out.log"
  fi
}
for m in $(ls "$R/models"); do
  [[ -f "$R/models/$m/params.q8" && ! -f "$R/models/$m/inference.pdiparams" ]] &&
    python3 "$HERE/q8_params.py" unpack "$R/models/$m/params.q8" "$R/models/$m/inference.pdiparams" > /dev/null
  for p in float32 float16 bfloat16; do
    one "$m" "$p" > "$tmp/r_${m}_$p" &
    one "$m" "$p" --cuda-graph > "$tmp/r_${m}_${p}_g" &
  done
done
wait
cat "$tmp"/r_*
rm -rf "$tmp"
