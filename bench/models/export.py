"""Exports a model of tools/check-paddle-models' zoo (tools/paddle_zoo/models.py: every paddle.vision model, the
transformers, the GPT blocks and decoders, the detection head, the BERT-style encoders; with a PaddleOCR extract the
PP-OCRv5 architectures) for bench/models/compare.py, with every shape fixed at batch 1 (run by run.sh in a venv with
Paddle):

    export.py MODEL SIZE OUT_DIR [--paddleocr DIR] [--paddledetection DIR] [--onnx-python PYTHON]

SIZE: the image side for paddle.vision models (input [1, C, SIZE, SIZE]); for the others one of the zoo's size labels
by its first word (`export.py --list` shows them: seq8, 12, 64x64, ...), whose numbers fill the dynamic dims as the
zoo's inputs() fills them. Writes OUT_DIR/inference.json + inference.pdiparams (paddle.jit.save; random weights of
realistic scale, seed 0, tools/paddle_zoo/models.py realistic_weights), OUT_DIR/model.onnx (paddle2onnx),
OUT_DIR/inputs.npz (seeded inputs by feed name, in the program's order) and OUT_DIR/bundle.kftb: every parameter as
param/<name> and every input as feed/<name>, in the tensor bundle format of tools/interp/tensor_bundle.h that the
kforge worker reads.
--paddledetection: a PaddleDetection checkout to take ppdet from (as check-paddle-models --paddledetection): adds
PaddleDetection's detectors (PP-YOLOE+-s, PicoDet-S, RT-DETR-R18), which also come from an installed paddledet.
Their Python (yaml, typeguard, ...) need not have paddle2onnx: --onnx-python names the one that converts (default
this one).
"""
import argparse
import json
import os
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import paddle
from paddle.static import InputSpec

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "tools" / "paddle_zoo"))
import models as zoo_models  # noqa: E402
from check import export  # noqa: E402  (as check-paddle-models exports: PaddleOCR's re-parameterised first)

DTYPES = {np.dtype(np.float32): 9, np.dtype(np.int64): 6, np.dtype(np.int32): 5,  # kforge::DataType
          np.dtype(np.bool_): 1}  # RT-DETR's valid_mask buffer


def write_bundle(path, tensors):
    with open(path, "wb") as f:
        f.write(b"KFTB" + struct.pack("<II", 1, len(tensors)))
        for name, array in tensors:
            array = np.ascontiguousarray(array)
            if array.dtype not in DTYPES:
                array = array.astype(np.float32)
            encoded = name.encode()
            f.write(struct.pack("<I", len(encoded)) + encoded)
            f.write(struct.pack("<ii", DTYPES[array.dtype], array.ndim))
            f.write(struct.pack(f"<{array.ndim}q", *array.shape))
            f.write(struct.pack("<Q", array.nbytes))
            f.write(array.tobytes())


def float_interp_scales(path, out):
    """Writes to `out` the program at `path` with its interpolation `scale` attributes' float64 elements as float32
    (where float32 holds them exactly, as 2.0); returns how many it rewrote (0: nothing written). Paddle 3.3's PIR
    keeps the scales of nearest_interp / bilinear_interp / ... as an array of float64 (pd_op3.cc checks that), which
    paddle2onnx 2.1 rejects (`the 0th elementwise MUST be ir::FloatAttribute`: PP-OCRv5 det's, PicoDet's and the
    detection head's upsampling by 2.0). The rewritten copy is paddle2onnx's input only: kforge and Paddle read the
    program as exported."""
    program = json.loads(path.read_text())
    count = 0

    def walk(node):
        nonlocal count
        if isinstance(node, dict):
            if str(node.get("#", "")).endswith("_interp") and isinstance(node.get("A"), list):
                for attr in node["A"]:
                    elements = attr.get("AT", {}).get("D") if attr.get("N") == "scale" else None
                    if (isinstance(elements, list) and elements
                            and all(e.get("#") == "0.a_f64" and float(np.float32(e["D"])) == e["D"] for e in elements)):
                        for e in elements:
                            e["#"] = "0.a_f32"
                        count += 1
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)
    walk(program)
    if count:
        out.write_text(json.dumps(program))
    return count


def the_zoo(paddleocr):
    """The zoo's models; real_zoo()'s (the PP-OCRv5 ones, the full-size BERT) under names the zoo does not use."""
    models = zoo_models.real_zoo(paddleocr)
    models.update(zoo_models.zoo())
    return models


def fixed(spec, numbers):
    """The spec with batch 1 and its other dynamic dims filled from the label's numbers, last to last."""
    if isinstance(spec, list):
        return [fixed(s, numbers) for s in spec]
    shape = list(spec.shape)
    if shape and (shape[0] is None or shape[0] < 0):
        shape[0] = 1
    dynamic = [i for i, d in enumerate(shape) if i > 0 and (d is None or d < 0)]
    if len(dynamic) > len(numbers):
        sys.exit(f"export.py: {spec.name} has {len(dynamic)} dynamic dims, the size gives {len(numbers)} numbers")
    for i, n in zip(reversed(dynamic), reversed(numbers)):
        shape[i] = n
    return InputSpec(shape, spec.dtype, spec.name)


def model_and_specs(name, size, paddleocr):
    zoo = the_zoo(paddleocr)
    if name not in zoo:
        sys.exit(f"export.py: no model {name} in the zoo (export.py --list)")
    builder, sizes = zoo[name]
    if name in zoo_models.VISION:
        channels = 1 if name == "LeNet" else 3
        return builder, zoo_models.image(int(size), channels), f"{size}x{size}"
    for label, specs in sizes:
        if label.split(" ")[0] == size:
            numbers = [int(v) for v in size.split("x")] if size[:1].isdigit() else []
            return builder, [fixed(s, numbers) for s in specs], label
    sys.exit(f"export.py: {name} has no size {size} (its sizes: {', '.join(l.split(' ')[0] for l, _ in sizes)})")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("model", nargs="?")
    p.add_argument("size", nargs="?")
    p.add_argument("out", nargs="?", type=Path)
    p.add_argument("--paddleocr", help="a PaddleOCR extract (tools/paddle_zoo/ppocr_extract.py)")
    p.add_argument("--paddledetection", help="a PaddleDetection checkout (ppdet's detectors)")
    p.add_argument("--onnx-python", default=sys.executable, help="the Python that runs paddle2onnx")
    p.add_argument("--list", action="store_true")
    args = p.parse_args()
    if args.paddledetection:  # read by tools/paddle_zoo/paddledet_models.py
        os.environ["KFORGE_PADDLEDETECTION"] = str(Path(args.paddledetection).resolve())
    if args.list:
        for name, (_, sizes) in the_zoo(args.paddleocr).items():
            print(name, " ".join("<side>" if name in zoo_models.VISION else l.split(" ")[0] for l, _ in sizes))
        return
    paddle.set_device("cpu")
    builder, specs, label = model_and_specs(args.model, args.size, args.paddleocr)
    args.out.mkdir(parents=True, exist_ok=True)
    net = export(builder, specs, 0, args.out)
    # The program names parameters and buffers (batch norm statistics) by their .name.
    tensors = [("param/" + t.name, t.numpy()) for t in list(net.parameters()) + list(net.buffers())]
    feeds = zoo_models.inputs(specs, 1, 1, label)
    write_bundle(args.out / "bundle.kftb", tensors + [("feed/" + n, v) for n, v in feeds.items()])
    np.savez(args.out / "inputs.npz", **feeds)
    convert = "import sys; from paddle2onnx.command import main; sys.argv[0] = 'paddle2onnx'; sys.exit(main())"
    onnx_input = "inference.float-scales.json"
    if not float_interp_scales(args.out / "inference.json", args.out / onnx_input):
        onnx_input = "inference.json"
    converted = subprocess.run([args.onnx_python, "-c", convert, "--model_dir", str(args.out), "--model_filename",
                                onnx_input, "--params_filename", "inference.pdiparams", "--save_file",
                                str(args.out / "model.onnx")], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True)
    if converted.returncode == 0:
        subprocess.run([args.onnx_python, str(Path(__file__).parent / "onnx_scalars.py"), str(args.out / "model.onnx")],
                       check=True)
    else:  # compare.py then runs without ONNX Runtime
        (args.out / "model.onnx").unlink(missing_ok=True)
        errors = [l for l in converted.stdout.splitlines() if "ERROR" in l] or converted.stdout.splitlines()[-1:]
        print(f"export.py: paddle2onnx failed ({converted.returncode}): {' '.join(errors)[:300]}")


if __name__ == "__main__":
    main()
