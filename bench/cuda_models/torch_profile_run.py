"""One replay of torch's CUDA graph of a torchvision model between cudaProfilerStart/Stop (bench/cuda_models/profile.sh),
with torch_bench.py's settings: cudnn.benchmark, TF32 convolutions, no_grad, eval mode."""
import sys

import torch
import torchvision

name, batch = sys.argv[1], int(sys.argv[2])
torch.backends.cudnn.benchmark = True
model = getattr(torchvision.models, name)().cuda().eval()
x = torch.randn(batch, 3, 224, 224, device="cuda")
with torch.no_grad():
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            model(x)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        model(x)
    graph.replay()
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    graph.replay()
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()
