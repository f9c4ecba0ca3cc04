#!/bin/bash
# Where a whole model's GPU time goes (issue 14): Nsight Compute's duration of every kernel of one run, for kforge's
# generated class (the harnesses `bench/cuda_models/run.sh run` built, KFORGE_PROFILE_RUN: one run() between
# cudaProfilerStart/Stop) and for torch's CUDA graph of the same torchvision model (one replay), summed by kernel
# name. Kernels run one at a time under ncu (no overlap, clocks left alone), so the sums are a per-kernel picture,
# not the end-to-end latency that run.sh measures.
#
#   bench/cuda_models/profile.sh BUILD MODEL BATCH [VARIANT]   GPU machine, after `run.sh run BUILD` (or `build`);
#                                                              VARIANT: graph (default), plain or graph_nchw
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
dir="$1/cuda-models" model="$2" batch="$3" variant="${4:-graph}"
NCU="${NCU:-ncu}"
summarize() { python3 "$HERE/ncu_summary.py" "$@"; }  # ncu --csv on stdin -> kernels by total time
# shellcheck source=bench/cudnn_env.sh
source "$HERE/../cudnn_env.sh"
use_wheel_cudnn > /dev/null
KFORGE_PROFILE_RUN=1 "$NCU" --profile-from-start off --clock-control none --metrics gpu__time_duration.sum --csv \
  "$dir/bin/${model}_$variant" "$dir/$model/params.txt" "$batch" 2>/dev/null | summarize "kforge $model $variant batch $batch" 14
"$NCU" --profile-from-start off --clock-control none --metrics gpu__time_duration.sum --csv \
  python3 "$HERE/torch_profile_run.py" "$model" "$batch" 2>/dev/null | summarize "torch CUDA graph $model batch $batch" 14
