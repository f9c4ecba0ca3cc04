#!/usr/bin/env python3
"""A GraphNet sample as a GPU-check fixture whose weights travel as seeds (tests/gpu/check_models.sh with
GRAPHNET_RESEED=1): the sample's float32 weights are replaced by seeded values of the same scale and spread
(q8_params.reseed: only the seeds are carried, so samples of any weight size fit a device call), and Paddle's
predictor (CPU, IR optimisation and oneDNN off, as for every fixture) computes the expected outputs anew with them
on the sample's own inputs, or where an input is a large float32 one, on seeded values of its scale and spread
(FIXTURE/input_NAME.seed, rebuilt by `q8_params.py inputs FIXTURE` on the GPU machine).

Run with Paddle's interpreter:
  PADDLE_PYTHON bench/cuda_models/reseed_fixture.py EXPORT INPUTS OUTPUTS FIXTURE SEED
EXPORT holds inference.json (and inference.pdiparams where the sample has parameters), INPUTS one NAME.npy per
feed, OUTPUTS Paddle's outputs <i>.npy with the drawn weights (taken as they are for a sample without parameters);
writes FIXTURE/params.q8 (when there are parameters), FIXTURE/input_NAME.npy and FIXTURE/expected_<i>.npy."""
import json
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

LARGE = 256 << 10  # bytes of a float32 input above which it travels as a seed


def has_parameters(program):
    """Whether a Paddle PIR JSON program declares parameters (ops "p" of its top block: builtin.parameter)."""
    ops = json.loads(program.read_text())["program"]["regions"][0]["blocks"][0]["ops"]
    return any(op.get("#") == "p" for op in ops)


def main():
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    export, inputs, outputs, fixture = (Path(a) for a in sys.argv[1:5])
    seed = int(sys.argv[5])
    fixture.mkdir(parents=True, exist_ok=True)
    feeds = {p.stem: np.load(p) for p in sorted(inputs.glob("*.npy"))}
    for index, (name, value) in enumerate(feeds.items()):
        # A large float32 input (a batch of images) becomes seeded values too: only its spec travels.
        seeded = q8_params.reseed_input(value, seed * 1000003 + 500000 + index) if value.nbytes > LARGE else None
        if seeded is None:
            np.save(fixture / f"input_{name}.npy", value)
            continue
        feeds[name], spec = seeded
        (fixture / f"input_{name}.seed").write_text(json.dumps(spec) + "\n")
    params = export / "inference.pdiparams"
    if not params.exists() and has_parameters(export / "inference.json"):
        # Paddle's predictor would run the program on whatever its parameters hold: refuse rather than write
        # expected outputs of no weights.
        sys.exit(f"reseed_fixture.py: {export}/inference.json has parameters but {params} is missing (the weights "
                 "were not kept: export the sample again, e.g. tools/check-graphnet --target cuda --keep)")
    if not params.exists() and not list(fixture.glob("input_*.seed")):
        for p in sorted(outputs.glob("*.npy")):
            shutil.copy(p, fixture / f"expected_{p.name}")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        shutil.copy(export / "inference.json", tmp)
        if params.exists():  # (a program without parameters has its inputs seeded)
            shutil.copy(params, tmp)
            q8_params.reseed(tmp / "inference.pdiparams", seed, fixture / "params.q8")
        for i, value in enumerate(check.paddle_outputs(tmp, feeds)):
            np.save(fixture / f"expected_{i}.npy", value)
    return 0


if __name__ == "__main__":
    sys.exit(main())
