#!/usr/bin/env python3
"""One replay of torch's CUDA graph of the GPT decode step (torch_gpt.py) between cudaProfilerStart/Stop, for
bench/transformers/profile.sh. Usage: profile_step_torch.py LENGTH BATCH float16|float32"""
import sys

import torch

import torch_gpt


def main():
    length, batch, dtype = int(sys.argv[1]), int(sys.argv[2]), getattr(torch, sys.argv[3])
    torch.manual_seed(1)
    model = torch_gpt.GPT().cuda().eval().to(dtype)
    with torch.no_grad():
        replay = torch_gpt.graphed(model, *torch_gpt.inputs("step", length, batch, dtype))
        replay()
        torch.cuda.synchronize()
        torch.cuda.cudart().cudaProfilerStart()
        replay()
        torch.cuda.synchronize()
        torch.cuda.cudart().cudaProfilerStop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
