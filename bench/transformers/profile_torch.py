#!/usr/bin/env python3
"""One run of torch's GPT (torch_gpt.py) or BERT-base encoder (torch_encoder.py) between cudaProfilerStart/Stop, for
bench/transformers/profile.sh: the GPT's decode step or prefill, or the encoder over [BATCH, LENGTH, 768], replayed
from a CUDA graph of eager torch or run as torch.compile built it (warmed up first, so that only the run itself is
profiled).

Usage: profile_torch.py LENGTH BATCH float16|bfloat16|float32 [step|prefill|encoder] [graph|compile]"""
import sys

import torch

import torch_encoder
import torch_gpt


def main():
    length, batch, dtype = int(sys.argv[1]), int(sys.argv[2]), getattr(torch, sys.argv[3])
    kind = sys.argv[4] if len(sys.argv) > 4 else "step"
    mode = sys.argv[5] if len(sys.argv) > 5 else "graph"
    torch.manual_seed(1)
    with torch.no_grad():
        if kind == "encoder":
            model = torch_encoder.encoder(dtype)
            xs = [torch.empty(batch, length, torch_encoder.D_MODEL, device="cuda").uniform_(-1, 1).to(dtype)]
        else:
            model = torch_gpt.GPT().cuda().eval().to(dtype)
            xs = torch_gpt.inputs(kind, length, batch, dtype)
        if mode == "compile":
            compiled = torch.compile(model)
            run = lambda: compiled(*xs)  # noqa: E731
        else:
            run = torch_gpt.graphed(model, *xs)
        for _ in range(3):
            run()
        torch.cuda.synchronize()
        torch.cuda.cudart().cudaProfilerStart()
        run()
        torch.cuda.synchronize()
        torch.cuda.cudart().cudaProfilerStop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
