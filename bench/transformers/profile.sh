#!/bin/bash
# Where the GPT's GPU time goes: Nsight Compute's duration of every kernel of one run() of kforge's class (the
# harness `run.sh build` made; KFORGE_PROFILE_RUN=1: one run between cudaProfilerStart/Stop) and of one run of torch's
# same model (profile_torch.py: its CUDA graph of eager torch, and for the prefill torch.compile too), summed by kernel
# name (bench/cuda_models/ncu_summary.py). Kernels run one at a time under ncu: a per-kernel picture, not the latency.
#
#   bench/transformers/profile.sh BUILD SETTING LENGTH BATCH [MODEL]   GPU machine, after `run.sh build BUILD`;
#       SETTING float32, float16, bfloat16 or float16io; MODEL gpt_step (default: LENGTH cached tokens), gpt_prefill
#       (LENGTH tokens) or bert (the encoder over [BATCH, LENGTH, 768]: the program bert_sLENGTH)
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
dir="$1/transformers" setting="$2" len="$3" batch="$4" model="${5:-gpt_step}"
NCU="${NCU:-ncu}"
ncu_csv() { "$NCU" --profile-from-start off --clock-control none --metrics gpu__time_duration.sum --csv "$@" 2>/dev/null; }
kind=step
[[ "$model" == gpt_prefill ]] && kind=prefill
[[ "$model" == bert ]] && kind=encoder model="bert_s$len"
KFORGE_PROFILE_RUN=1 KFORGE_INT_HIGH=50257 KFORGE_INPUT_DIMS="$(sed "s/L/$len/g; s/S/$len/g" "$dir/$model/input_dims")" \
  ncu_csv "$dir/bin/${model}_$setting" "$dir/$model/params.txt" "$batch" |
  python3 "$HERE/../cuda_models/ncu_summary.py" "kforge $model $setting length $len batch $batch" 16
dtype=float16
[[ "$setting" == float32 || "$setting" == bfloat16 ]] && dtype="$setting"
modes=(graph)
[[ "$kind" == prefill ]] && modes+=(compile)
for mode in "${modes[@]}"; do
  ncu_csv python3 "$HERE/profile_torch.py" "$len" "$batch" "$dtype" "$kind" "$mode" |
    python3 "$HERE/../cuda_models/ncu_summary.py" "torch ($mode) $kind $dtype length $len batch $batch" 16
done
