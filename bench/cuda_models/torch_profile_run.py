"""One replay of torch's CUDA graph of a torchvision model between cudaProfilerStart/Stop (bench/cuda_models/profile.sh),
captured as torch_bench.py captures it (its `graphed`), with its settings: cudnn.benchmark, TF32 convolutions,
no_grad, eval mode."""
import sys

import torch
import torchvision

from torch_bench import graphed

name, batch = sys.argv[1], int(sys.argv[2])
torch.backends.cudnn.benchmark = True
model = getattr(torchvision.models, name)().cuda().eval()
with torch.no_grad():
    replay = graphed(model, torch.randn(batch, 3, 224, 224, device="cuda"))
    replay()
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    replay()
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()
