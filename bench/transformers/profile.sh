#!/bin/bash
# Where the GPT decode step's GPU time goes: Nsight Compute's duration of every kernel of one run() of kforge's class
# (the harness `run.sh build` made; KFORGE_PROFILE_RUN=1: one run between cudaProfilerStart/Stop) and of one replay
# of torch's CUDA graph of the same model (profile_step_torch.py), summed by kernel name
# (bench/cuda_models/ncu_summary.py). Kernels run one at a time under ncu: a per-kernel picture, not the latency.
#
#   bench/transformers/profile.sh BUILD SETTING LENGTH BATCH   GPU machine, after `run.sh build BUILD`;
#                                                             SETTING float32, float16 or float16io
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
dir="$1/transformers" setting="$2" len="$3" batch="$4"
NCU="${NCU:-ncu}"
ncu_csv() { "$NCU" --profile-from-start off --clock-control none --metrics gpu__time_duration.sum --csv "$@" 2>/dev/null; }
KFORGE_PROFILE_RUN=1 KFORGE_INT_HIGH=50257 KFORGE_INPUT_DIMS="$(sed "s/L/$len/g" "$dir/gpt_step/input_dims")" \
  ncu_csv "$dir/bin/gpt_step_$setting" "$dir/gpt_step/params.txt" "$batch" |
  python3 "$HERE/../cuda_models/ncu_summary.py" "kforge gpt_step $setting L $len batch $batch" 16
dtype=float16
[[ "$setting" == float32 ]] && dtype=float32
ncu_csv python3 "$HERE/profile_step_torch.py" "$len" "$batch" "$dtype" |
  python3 "$HERE/../cuda_models/ncu_summary.py" "torch CUDA graph gpt step $dtype L $len batch $batch" 16
