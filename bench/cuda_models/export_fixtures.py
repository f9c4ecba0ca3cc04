#!/usr/bin/env python3
"""Exports zoo models (tools/paddle_zoo) as fixtures for tests/gpu/check_models.sh, in the layout of a
tests/paddle fixture:
  OUT/<case>/inference.json, inference.pdiparams   paddle.jit.save (dynamic batch)
  OUT/<case>/input_x.npy                           seeded N(0, 1) inputs
  OUT/<case>/expected_<i>.npy                      Paddle's predictor on the CPU (no IR passes, no oneDNN)
Weights are tools/paddle_zoo's realistic random weights, each tensor then rounded to q * 2^-k with q an integer in
[-127, 127] (k per tensor, the smallest scale that holds its largest value), so that q8_params.py can carry them as
one byte per value and rebuild the exact .pdiparams on the GPU machine: Paddle computes the expected outputs with
exactly the values the GPU gets.

Run with Paddle's interpreter: BUILD/paddle-venv/bin/python bench/cuda_models/export_fixtures.py OUT CASE...
A CASE is MODEL:SIZE:BATCH (a paddle.vision model of tools/paddle_zoo, square input size, batch), ocr_static:SIZE:BATCH
(the zoo's PP-OCR-style detector exported with static spatial dims), NAME:0:BATCH for another zoo model
(transformer_encoder_postnorm, gpt_block, ...: its first input size), NAME:sK:BATCH for its K-th size (fixture
OUT/NAME_sK: real_qwen2_small:s1:2 is the length-40 case), or NAME:HxW:BATCH for a zoo model exported
with dynamic spatial dims (ppocr_det_head), run at H x W; its fixture is OUT/NAME_HxW (fixture_name). A CASE ending
in :seeded (vgg16:64:2:seeded) gets weights too large to carry even as bytes made from seeds instead
(q8_params.reseed, before Paddle runs; it writes OUT/<case>/params.q8 itself).
A MODEL named real_NAME is NAME of the real architectures (tools/paddle_zoo/models.py real_zoo: the PP-OCRv5 ones
need KFORGE_PADDLEOCR, a PaddleOCR extract of tools/paddle_zoo/ppocr_extract.py): real_bert_encoder:0:2,
real_ppocrv5_mobile_det_bncal:320x320:1; PaddleDetection's detectors, where ppdet imports (paddledet in the venv, or
$KFORGE_PADDLEDETECTION for RT-DETR: tools/paddle_zoo/paddledet_models.py): real_ppyoloe_plus_s:0:1. Its re-parameterisation and batch-norm calibration (kforge_after_weights)
run before the rounding, and it is saved as PaddleOCR's export_model.py saves it (to_static with its specs). Its
fixture also holds float64_<i>.npy: the same model (same weights) cast to float64 and run in dygraph on the same
inputs, against which tests/gpu/fixture_bundle.py compares the GPU's error with Paddle's own float32 error."""
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "tools" / "paddle_zoo"))

import numpy as np  # noqa: E402
import paddle  # noqa: E402
from paddle.static import InputSpec  # noqa: E402

import check  # noqa: E402  (tools/paddle_zoo/check.py: paddle_outputs)
import models  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import q8_params  # noqa: E402

SEED = 3


def quantize(net):
    """Every parameter and buffer (batch-norm statistics) of `net` rounded to q * 2^-k, |q| <= 127."""
    tensors = list(net.parameters()) + [b for b in net.buffers() if b is not None]
    for t in tensors:
        w = t.numpy()
        if w.dtype != np.float32 or w.size == 0:
            continue
        if not np.all(np.isfinite(w)):  # RT-DETR's anchors (inf where invalid): carried as raw bytes
            continue
        top = float(np.max(np.abs(w)))
        if top == 0:
            continue
        scale = 2.0 ** -q8_params.scale_exponent(top)
        # + 0: no -0.0, which q8_params.py could not carry as a byte.
        t.set_value((np.clip(np.round(w / scale), -127, 127) * scale + 0.0).astype(np.float32))


def fixture_name(name, size):
    """The fixture's directory: the model's name, with the spatial size of a dynamic-H, W case appended."""
    return f"{name}_{size}" if "x" in size or size.startswith("s") else name


def catalogue(name):
    """(builder, [(size label, specs)]) of a zoo model, or of a real architecture for real_NAME."""
    if name.startswith("real_"):
        return models.real_zoo(os.environ.get("KFORGE_PADDLEOCR"))[name[len("real_"):]]
    return models.zoo()[name]


def prepared(builder):
    """The model with the fixtures' weights: realistic, after its own after-weights step, rounded (quantize)."""
    net, repped = models.with_weights(builder, SEED)
    quantize(net)
    return net, repped


def float64_outputs(builder, feeds):
    """The outputs of the model rebuilt with the same weights, cast to float64, run in dygraph on `feeds`."""
    net, _ = prepared(builder)
    check.to_float64(net)
    args = [paddle.to_tensor(v.astype(np.float64) if v.dtype == np.float32 else v) for v in feeds.values()]
    with paddle.no_grad():
        ys = net(*args)
    ys = list(ys.values()) if isinstance(ys, dict) else list(ys) if isinstance(ys, (list, tuple)) else [ys]
    return [y.numpy() for y in ys]


def build(name, size):
    """(builder, input specs, size label) of a case; `size` is the case's SIZE text."""
    if "x" in size:  # dynamic H, W: the zoo's specs, the inputs at H x W
        builder, sizes = catalogue(name)
        return builder, sizes[0][1], size
    if size.startswith("s"):  # sK: the model's K-th size of its catalogue (real_qwen2_small:s1:2: length 40)
        builder, sizes = catalogue(name)
        label, specs = sizes[int(size[1:])]
        return builder, specs, label
    size = int(size)
    if name == "ocr_static":
        return models.DetectionHead, [InputSpec([None, 3, size, size], "float32", "x")], f"{size}x{size}"
    if name in models.VISION:
        return models.vision(name), models.image(size, 1 if name == "LeNet" else 3), f"{size}x{size}"
    builder, sizes = catalogue(name)
    label, specs = sizes[0]
    return builder, specs, label


def main():
    out = Path(sys.argv[1])
    paddle.set_device("cpu")
    for case in sys.argv[2:]:
        name, size, batch, *how = case.split(":")
        if how not in ([], ["seeded"]):
            sys.exit(f"export_fixtures.py: case '{case}': only ':seeded' may follow MODEL:SIZE:BATCH")
        batch = int(batch)
        path = out / fixture_name(name, size)
        path.mkdir(parents=True, exist_ok=True)
        builder, specs, label = build(name, size)
        net, repped = prepared(builder)
        if not repped:
            paddle.jit.save(net, str(path / "inference"), input_spec=specs)
        else:  # as tools/paddle_zoo/check.py export: to_static after the re-parameterisation
            paddle.jit.save(paddle.jit.to_static(net, input_spec=specs), str(path / "inference"))
        if how == ["seeded"]:
            q8_params.reseed(path / "inference.pdiparams", SEED, path / "params.q8")
        feeds = models.model_inputs(net, specs, batch, SEED, label)  # with the fixture's (rounded) weights
        for feed, value in feeds.items():
            np.save(path / f"input_{feed}.npy", value)
        for i, value in enumerate(check.paddle_outputs(path, feeds)):
            np.save(path / f"expected_{i}.npy", value)
        if name.startswith("real_"):
            for i, value in enumerate(float64_outputs(builder, feeds)):
                np.save(path / f"float64_{i}.npy", value)
        print(f"exported {name} {label} batch {batch} to {path}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
