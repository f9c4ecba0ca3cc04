#!/usr/bin/env python3
"""Exports Paddle's resnet18 (paddle.vision.models, tools/paddle_zoo's realistic random weights, seed 1) at 64x64
with a dynamic batch, in the layout of a tests/paddle fixture, for tests/gpu/check_conv.sh:
  OUT/inference.json, OUT/inference.pdiparams   paddle.jit.save
  OUT/input_x.npy                               N(0, 1) inputs, batch 2 (seed 1)
  OUT/expected_0.npy                            Paddle's predictor on the CPU (no IR passes, no oneDNN)
Run with Paddle's interpreter: BUILD/paddle-venv/bin/python tests/gpu/export_resnet18.py OUT"""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "tools" / "paddle_zoo"))

import numpy as np  # noqa: E402
import check  # noqa: E402  (tools/paddle_zoo/check.py: export, paddle_outputs)
import models  # noqa: E402

SIZE, BATCH, SEED = 64, 2, 1


def main():
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    specs = models.image(SIZE)
    check.export(models.vision("resnet18"), specs, SEED, out)
    feeds = models.inputs(specs, BATCH, SEED)
    np.save(out / "input_x.npy", feeds["x"])
    for i, value in enumerate(check.paddle_outputs(out, feeds)):
        np.save(out / f"expected_{i}.npy", value)
    print(f"exported resnet18 {SIZE}x{SIZE} batch {BATCH} to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
