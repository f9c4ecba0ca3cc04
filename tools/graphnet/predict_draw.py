"""Paddle's predictor on one redraw of a sample's inputs (tools/check-graphnet's float64 rule over draws), under a
Python that has Paddle, as a subprocess so that Paddle's crash or hang stops only that draw:

    python predict_draw.py EXPORT_DIR DRAW_DIR

Reads DRAW_DIR/inputs/<name>.npy, runs EXPORT_DIR/inference.json (+ .pdiparams) as export_sample.py does (CPU, IR
optimisation and oneDNN off) and writes DRAW_DIR/paddle/<i>.npy.
"""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "paddle_zoo"))


def main():
    import check  # tools/paddle_zoo/check.py: the predictor as check-graphnet and check-paddle-models run it
    export, draw = Path(sys.argv[1]), Path(sys.argv[2])
    feeds = {f.stem: np.load(f) for f in sorted((draw / "inputs").glob("*.npy"))}
    (draw / "paddle").mkdir(parents=True, exist_ok=True)
    for i, y in enumerate(check.paddle_outputs(export, feeds)):
        np.save(draw / "paddle" / f"{i}.npy", y)
    return 0


if __name__ == "__main__":
    sys.exit(main())
