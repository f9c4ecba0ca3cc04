#!/usr/bin/env python3
"""The GPU half of conv_precision.py: how far cuDNN's float32 convolution (TF32 off, as kforge's CUDA classes run
by default) is from float64 on the same layers, and what summing the reduction in chunks of input channels would
give. Runs on the GPU machine under a Python that has torch (no Paddle there):

    python3 tools/paddle_zoo/conv_precision_cudnn.py IC,OC,K,HW [IC,OC,K,HW ...] [--chunks 16,32]

Same layers, weights and inputs as conv_precision.py (stride 1, padding K // 2, no bias, He-uniform weights and an
N(0, 1) input drawn with numpy's generator, seed 1). Prints the rms of each float32 result's difference from the
float64 result over the rms of float64 (the figure docs/dynamic-shapes-measured.md quotes for Paddle's CPU kernel
and for kforge's), for: cuDNN float32 (NCHW and channels-last), the CPU (torch's oneDNN) float32, and cuDNN float32
run over chunks of C input channels whose results are added in float32 (issue 34 item 5: would chunking fix the
GPU's figure as it does the CPU's?)."""
import argparse
import sys

import numpy as np
import torch
import torch.nn.functional as F


def rms_rel(a, exact):
    a = a.double().cpu()
    return float(torch.sqrt(torch.mean((a - exact) ** 2)) / torch.sqrt(torch.mean(exact ** 2)))


def measure(spec, chunks):
    ic, oc, k, hw = spec
    rng = np.random.default_rng(1)
    # conv_precision.py draws the weight first ([oc, ic, k, k]), then the input: the same numbers.
    w = rng.uniform(-1, 1, [oc, ic, k, k]).astype(np.float32) * np.float32(np.sqrt(6 / (ic * k * k)))
    x = rng.standard_normal([1, ic, hw, hw]).astype(np.float32)
    exact = F.conv2d(torch.from_numpy(x).double(), torch.from_numpy(w).double(), padding=k // 2)
    xg, wg = torch.from_numpy(x).cuda(), torch.from_numpy(w).cuda()
    row = {
        "cudnn": rms_rel(F.conv2d(xg, wg, padding=k // 2), exact),
        "cudnn_nhwc": rms_rel(F.conv2d(xg.to(memory_format=torch.channels_last),
                                       wg.to(memory_format=torch.channels_last), padding=k // 2), exact),
        "cpu": rms_rel(F.conv2d(torch.from_numpy(x), torch.from_numpy(w), padding=k // 2), exact),
    }
    for c in chunks:
        if c >= ic:
            continue
        acc = None
        for c0 in range(0, ic, c):
            part = F.conv2d(xg[:, c0:c0 + c].contiguous(), wg[:, c0:c0 + c].contiguous(), padding=k // 2)
            acc = part if acc is None else acc + part
        row[f"chunks_of_{c}"] = rms_rel(acc, exact)
    return row


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("specs", nargs="+", help="IC,OC,K,HW")
    p.add_argument("--chunks", default="16,32,64", help="input channels per chunk, comma-separated")
    args = p.parse_args()
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    chunks = [int(c) for c in args.chunks.split(",") if c]
    print(f"torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, {torch.cuda.get_device_name()}")
    for s in args.specs:
        spec = [int(v) for v in s.split(",")]
        if len(spec) != 4:
            p.error(f"{s}: want IC,OC,K,HW")
        row = measure(spec, chunks)
        print(f"{s}: " + "  ".join(f"{name} {value:.3g}" for name, value in row.items()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
