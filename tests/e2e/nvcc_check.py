"""What the CI tests that compile CUDA with nvcc share (no GPU here): where nvcc is, and the optimisation they build at.

The CI tests only check that generated and hand-written CUDA compiles and links, warnings as errors; the GPU checks
(tests/gpu/) build optimised on the GPU machine and run it. So the checks here build without optimising, on host
(gcc) and device (cicc: NVVM's optimiser, ptxas: PTX to SASS) alike: the same front ends, the same diagnostics and
the same link, about a third less CPU (e2e-cuda-fused-compile's shard 3: 54 s of CPU at nvcc's defaults, 37 s so).
run-model's builds take the same flags through $NVCC_OPT_FLAGS (tools/run_model/model.py)."""

import os
import shutil

CHECK_OPT_FLAGS = ["-O0", "-Xcicc", "-O0", "-Xptxas", "-O0"]


def find_nvcc():
    """$NVCC, else nvcc on PATH, else the toolkit's; None when there is none."""
    for candidate in (os.environ.get("NVCC"), shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
        if candidate and os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None
