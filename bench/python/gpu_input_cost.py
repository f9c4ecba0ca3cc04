#!/usr/bin/env python3
"""Where the time of a CUDA module's run() goes when its input is a torch CUDA tensor (issue 17).

Times, in one process on the GPU machine, each piece of taking a torch tensor in (torch's __dlpack__ with and
without a stream, __cuda_array_interface__, data_ptr, torch's current stream) and the module's run() with a
torch tensor, a DeviceTensor and a numpy array. Usage, after `tests/python/gpu_run.sh run BUILD`:

    python3 bench/python/gpu_input_cost.py BUILD/python-gpu
"""
import sys
import time

import numpy as np
import torch


def per_call_us(fn, calls=20000, sync=None):
    best = float("inf")
    for _ in range(5):
        if sync:
            sync()
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        if sync:
            sync()
        best = min(best, (time.perf_counter() - start) / calls * 1e6)
    return best


def main():
    out = sys.argv[1]
    sys.path.insert(0, out)
    import chain_cuda
    import wsn_cuda

    print(f"torch {torch.__version__}; exchange API attributes:",
          {name: hasattr(torch.Tensor, name) for name in ("__dlpack_c_exchange_api__", "__c_dlpack_exchange_api__")})
    x = torch.from_numpy(np.load(f"{out}/ref/input_x.npy")).cuda()
    model = wsn_cuda.wsn_cuda_model(f"{out}/ref/inference.pdiparams")
    model.run(x)
    stream = model.stream
    rows = [
        ("x.__dlpack__(stream=model stream)", lambda: x.__dlpack__(stream=stream)),
        ("x.__dlpack__(stream=-1)", lambda: x.__dlpack__(stream=-1)),
        ("x.__dlpack__()", lambda: x.__dlpack__()),
        ("x.__dlpack_device__()", lambda: x.__dlpack_device__()),
        ("x.__cuda_array_interface__", lambda: x.__cuda_array_interface__),
        ("x.data_ptr()", lambda: x.data_ptr()),
        ("torch.cuda.current_stream().cuda_stream", lambda: torch.cuda.current_stream().cuda_stream),
    ]
    if hasattr(torch._C, "_cuda_getCurrentRawStream"):
        rows.append(("torch._C._cuda_getCurrentRawStream(0)", lambda: torch._C._cuda_getCurrentRawStream(0)))
    for name, fn in rows:
        print(f"{name:55s} {per_call_us(fn, 5000):8.2f} us")
    sync = model.synchronize
    print(f"{'model.run(x), torch tensor':55s} {per_call_us(lambda: model.run(x), 20000, sync):8.2f} us")
    held = [model.run(x)]

    def run_holding():  # the usual loop: y = model.run(x) keeps the previous outputs alive during the call
        held[0] = model.run(x)
    print(f"{'y = model.run(x) (previous outputs held)':55s} {per_call_us(run_holding, 20000, sync):8.2f} us")
    x_np = np.load(f"{out}/ref/input_x.npy")
    print(f"{'model.run(x_np), numpy':55s} {per_call_us(lambda: model.run(x_np), 20000, sync):8.2f} us")
    rng = np.random.default_rng(0)
    a, b = (torch.from_numpy(rng.standard_normal((64, 300), dtype=np.float32)).cuda() for _ in range(2))
    chain = chain_cuda.chain_cuda_model(f"{out}/ref/chain.pdiparams")  # written by gpu_check.py
    o = chain.run(a, b)
    print(f"{'chain.run(a, b), torch tensors':55s} {per_call_us(lambda: chain.run(a, b), 20000, chain.synchronize):8.2f} us")
    print(f"{'chain.run(o, o), DeviceTensors':55s} {per_call_us(lambda: chain.run(o, o), 20000, chain.synchronize):8.2f} us")


if __name__ == "__main__":
    main()
