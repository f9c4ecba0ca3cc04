#!/usr/bin/env python3
"""A GraphNet sample as a GPU-check fixture whose weights travel as seeds (tests/gpu/check_models.sh with
GRAPHNET_RESEED=1): the sample's float32 weights are replaced by seeded values of the same scale and spread
(q8_params.reseed: only the seeds are carried, so samples of any weight size fit a device call), and Paddle's
predictor (CPU, IR optimisation and oneDNN off, as for every fixture) computes the expected outputs anew with them
on the sample's own inputs.

Run with Paddle's interpreter:
  PADDLE_PYTHON bench/cuda_models/reseed_fixture.py EXPORT INPUTS OUTPUTS FIXTURE SEED
EXPORT holds inference.json (and inference.pdiparams where the sample has parameters), INPUTS one NAME.npy per
feed, OUTPUTS Paddle's outputs <i>.npy with the drawn weights (taken as they are for a sample without parameters);
writes FIXTURE/params.q8 (when there are parameters), FIXTURE/input_NAME.npy and FIXTURE/expected_<i>.npy."""
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "tools" / "paddle_zoo"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

import check  # noqa: E402  (tools/paddle_zoo/check.py: paddle_outputs)
import q8_params  # noqa: E402


def main():
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    export, inputs, outputs, fixture = (Path(a) for a in sys.argv[1:5])
    seed = int(sys.argv[5])
    fixture.mkdir(parents=True, exist_ok=True)
    feeds = {p.stem: np.load(p) for p in sorted(inputs.glob("*.npy"))}
    for name, value in feeds.items():
        np.save(fixture / f"input_{name}.npy", value)
    params = export / "inference.pdiparams"
    if not params.exists():
        for p in sorted(outputs.glob("*.npy")):
            shutil.copy(p, fixture / f"expected_{p.name}")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        shutil.copy(export / "inference.json", tmp)
        shutil.copy(params, tmp)
        q8_params.reseed(tmp / "inference.pdiparams", seed, fixture / "params.q8")
        for i, value in enumerate(check.paddle_outputs(tmp, feeds)):
            np.save(fixture / f"expected_{i}.npy", value)
    return 0


if __name__ == "__main__":
    sys.exit(main())
