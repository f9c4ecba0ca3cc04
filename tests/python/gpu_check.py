#!/usr/bin/env python3
"""GPU half of tests/python/gpu_run.sh: imports the module of `kforge compile --target cuda --python` built for
this python, runs the compiled tests/paddle/weights_sorted_names from torch CUDA tensors, cupy arrays, numpy
arrays and its own outputs, checks the results against the CPU module's (kforge --target cpu, computed by
`gpu_run.sh prepare`) and Paddle's, the errors, the DLPack stream protocol in both directions, and times run()
from Python. Prints one line per check and a table; exits 1 when a check fails.

    gpu_check.py MODULE_DIR REF_DIR [--cpp-us US] [--calls N]
"""
import argparse
import importlib
import sys
import time
from pathlib import Path

import numpy as np

FAILED = []


def check(name, cond, detail=""):
    print(("ok    " if cond else "FAIL  ") + name + (f"  ({detail})" if detail else ""))
    if not cond:
        FAILED.append(name)


def close(a, b, rtol=1e-5, atol=1e-6):
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and np.allclose(a, b, rtol=rtol, atol=atol)


def raises(fn, exc, *words):
    try:
        fn()
    except exc as e:
        text = str(e)
        return all(w in text for w in words), text
    except Exception as e:  # noqa: BLE001 - reported as the wrong exception
        return False, f"{type(e).__name__}: {e}"
    return False, "no exception"


def write_pdiparams(path, arrays):
    """Paddle's combined parameter file (templates/runtime/kforge_params.h): float32 tensors sorted by name."""
    def varint(v):
        out = bytearray()
        while True:
            b = v & 0x7F
            v >>= 7
            out.append(b | (0x80 if v else 0))
            if not v:
                return bytes(out)
    with open(path, "wb") as f:
        for name in sorted(arrays):
            a = np.ascontiguousarray(arrays[name], np.float32)
            desc = b"\x08" + varint(5) + b"".join(b"\x10" + varint(d) for d in a.shape)  # FP32, dims
            f.write(np.uint32(0).tobytes() + np.uint64(0).tobytes() + np.uint32(0).tobytes())
            f.write(np.int32(len(desc)).tobytes() + desc + a.tobytes())


def chain_reference(x, y, w):
    """tests/e2e/fused/chain.yaml in numpy."""
    h2 = np.maximum(1.5 * x + 0.25, 0) + y
    return np.maximum(np.tanh(h2 * w) - 1 / (1 + np.exp(-h2)), y).astype(np.float32)


def timed(fn, calls, sync):
    """Best of 5 rounds of `calls` calls, then `sync()`: microseconds per call."""
    best = float("inf")
    for _ in range(5):
        sync()
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        sync()
        best = min(best, (time.perf_counter() - start) / calls * 1e6)
    return best


def main():
    p = argparse.ArgumentParser()
    p.add_argument("module_dir")
    p.add_argument("ref_dir")
    p.add_argument("--cpp-us", type=float, default=None, help="the C++ run() per call, same loop (gpu_cpp_timing)")
    p.add_argument("--cpp-sync-us", type=float, default=None, help="the C++ run() + synchronize() per call")
    p.add_argument("--calls", type=int, default=20000)
    args = p.parse_args()
    sys.path.insert(0, args.module_dir)
    ref = Path(args.ref_dir)
    import torch

    mod = importlib.import_module("wsn_cuda")
    x_np = np.load(ref / "input_x.npy")
    cpu = [np.load(ref / f"cpu_out_{i}.npy") for i in range(2)]
    paddle = [np.load(ref / f"expected_{i}.npy") for i in range(2)]
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name()}, python {sys.version.split()[0]}")

    model = mod.wsn_cuda_model(str(ref / "inference.pdiparams"))
    check("input_names / output_names", list(model.input_names) == ["x"] and len(model.output_names) == 2,
          f"{model.input_names} -> {model.output_names}")

    # torch CUDA tensors in, DeviceTensors out, read back with torch.from_dlpack on torch's stream.
    x = torch.from_numpy(x_np).cuda()
    outs = model.run(x)
    check("run() returns one DeviceTensor per output", isinstance(outs, tuple) and len(outs) == 2 and
          all(type(o).__name__ == "DeviceTensor" for o in outs), repr(outs))
    got = [torch.from_dlpack(o) for o in outs]
    check("torch.from_dlpack(out) is a CUDA tensor sharing the memory",
          all(g.is_cuda for g in got) and got[0].data_ptr() == torch.from_dlpack(outs[0]).data_ptr())
    for i in range(2):
        check(f"output {i} (torch in) equals the CPU module's", close(got[i].cpu().numpy(), cpu[i]),
              f"max |diff| {np.abs(got[i].cpu().numpy() - cpu[i]).max() if got[i].shape == cpu[i].shape else 'shape'}")
        check(f"output {i} equals Paddle's", close(got[i].cpu().numpy(), paddle[i], 1e-5, 1e-5))
        check(f"output {i}.numpy() equals torch's view", np.array_equal(outs[i].numpy(), got[i].cpu().numpy()))
    check("DeviceTensor shape/dtype/device", outs[0].shape == tuple(cpu[0].shape) and outs[0].dtype == str(cpu[0].dtype)
          and outs[0].device == "cuda:0" and outs[0].__dlpack_device__() == (2, 0))

    # cupy in, cupy out.
    try:
        import cupy
        xc = cupy.asarray(x_np)
        outc = model.run(xc)
        check("cupy in, cupy.from_dlpack(out)", all(close(cupy.asnumpy(cupy.from_dlpack(o)), c) for o, c in zip(outc, cpu)))
    except ImportError:
        print("skip  cupy not installed")

    # Host inputs are copied to the device: numpy, a CPU torch tensor.
    check("numpy input (copied to the device)", all(close(o.numpy(), c) for o, c in zip(model.run(x_np), cpu)))
    check("CPU torch tensor input (copied)", all(close(o.numpy(), c) for o, c in zip(model.run(torch.from_numpy(x_np)), cpu)))
    class OnlyDlpack:  # a producer without __dlpack_device__: asked without a stream, the device synchronised
        def __init__(self, t):
            self.t = t

        def __dlpack__(self, stream=None):
            return self.t.__dlpack__()
    check("__dlpack__-only CUDA object", all(close(o.numpy(), c) for o, c in zip(model.run(OnlyDlpack(x)), cpu)))
    check("by keyword run(x=...)", all(close(o.numpy(), c) for o, c in zip(model.run(x=x), cpu)))

    # Errors: Python exceptions naming the input and what was expected.
    ok, text = raises(lambda: model.run(x.double()), ValueError, "'x'", "float32", "float64")
    check("wrong dtype -> ValueError naming x and the dtype", ok, text)
    ok, text = raises(lambda: model.run(torch.zeros(3, 5, device="cuda")), ValueError, "'x'", "[3, 5]")
    check("wrong shape -> ValueError naming x and the dims", ok, text)
    wide = torch.zeros(x.shape[0], x.shape[1] * 2, device="cuda")[:, ::2]
    ok, text = raises(lambda: model.run(wide), ValueError, "'x'", "contiguous")
    check("non-contiguous CUDA tensor -> ValueError", ok, text)
    ok, text = raises(lambda: model.run("x"), TypeError, "'x'")
    check("not a tensor -> TypeError naming x", ok, text)
    ok, text = raises(lambda: model.run(), TypeError, "'x'")
    check("missing input -> TypeError", ok, text)

    # Stream protocol, input side: x is written on torch's stream behind a long sleep; the model (its own stream)
    # must wait for it through x.__dlpack__(stream=model.stream).
    model.synchronize()
    check("the model has a stream of its own", model.stream not in (None, 0, 1, 2), str(model.stream))
    x2_np = (x_np * 3 - 1).astype(np.float32)
    # The reference for x2: the same model, synchronised (no stream question).
    expected2 = [o.numpy() for o in model.run(torch.from_numpy(x2_np).cuda())]
    check("x2 gives other outputs than x", not close(expected2[0], cpu[0]))
    x2_host = torch.from_numpy(x2_np).pin_memory()
    waited = True
    for _ in range(3):
        xs = torch.full_like(x, float("nan"))
        torch.cuda.synchronize()
        torch.cuda._sleep(50_000_000)  # tens of ms of GPU time on torch's current stream
        xs.copy_(x2_host, non_blocking=True)
        outs2 = model.run(xs)  # the model's own stream: it must wait for torch's copy
        res2 = [torch.from_dlpack(o).cpu().numpy() for o in outs2]
        waited = waited and all(close(r, e) for r, e in zip(res2, expected2))
    check("input written on torch's stream after a sleep: the model waited for it", waited)
    # Output side: the model's stream is held back by a sleep; torch reads the output on its own stream and must
    # wait for the run (out.__dlpack__(stream=torch's stream) makes it wait on the run's event). The run writes
    # into the memory of the run before (its outputs were let go), which holds the other input's results: a read
    # that did not wait would see those.
    ext = torch.cuda.ExternalStream(model.stream)
    x2 = torch.from_numpy(x2_np).cuda()
    waited = True
    for first, second, want in ((x, x2, expected2[0]), (x2, x, cpu[0])):
        before = model.run(first)
        model.synchronize()
        pointer = torch.from_dlpack(before[0]).data_ptr()
        del before  # nothing refers to the outputs any more: the next run writes into them again
        with torch.cuda.stream(ext):
            torch.cuda._sleep(50_000_000)
        after = model.run(second)
        reused = torch.from_dlpack(after[0]).data_ptr() == pointer
        got = torch.from_dlpack(after[0]).clone()  # on torch's current stream, no host synchronisation
        del after
        torch.cuda.synchronize()
        waited = waited and reused and close(got.cpu().numpy(), want)
    check("output read on torch's stream while the model's stream sleeps (memory reused): torch waited", waited)
    # Outputs the caller still holds are never written again: four runs kept at once keep four results. In the
    # usual loop, y = model.run(x) (the last outputs still held during the call), two output sets take turns.
    kept = [model.run(v) for v in (x, x2, x, x2)]
    check("four runs' outputs held at once stay intact",
          all(close(k[0].numpy(), w) for k, w in zip(kept, (cpu[0], expected2[0]) * 2)))
    del kept
    pointers, y, right = [], None, True
    for v, want in ((x, cpu[0]), (x2, expected2[0])) * 3:
        y = model.run(v)
        pointers.append(torch.from_dlpack(y[0]).data_ptr())
        right = right and close(y[0].numpy(), want)
    check("y = model.run(x) in a loop: right results, two output sets taking turns (no allocation per call)",
          right and len(set(pointers[2:])) == 2, f"{len(set(pointers))} addresses")
    del y
    # Running on torch's stream: model.stream = torch's current stream.
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        model.stream = s.cuda_stream
        check("model.stream set to a torch stream", model.stream == s.cuda_stream)
        o = model.run(x)
        check("run on torch's stream", close(torch.from_dlpack(o[0]).cpu().numpy(), cpu[0]))
    model.stream = None
    check("model.stream = None: back to a stream of its own (made at the next run)", model.stream is None)

    # Outputs fed back as inputs of another model (DeviceTensor in, zero-copy).
    # (weights_sorted_names' outputs have other shapes than its input: checked through the error message.)
    o = model.run(x)
    ok, text = raises(lambda: model.run(o[0]), ValueError, "'x'")
    check("a DeviceTensor as input reaches the class's checks", ok or o[0].shape == x.shape, text)

    # A second model whose output has its inputs' shape: outputs fed back as inputs (DeviceTensor in, zero-copy),
    # parameters from a .pdiparams written here.
    chain_mod = importlib.import_module("chain_cuda")
    rng = np.random.default_rng(7)
    cx, cy, cw = (rng.standard_normal((64, 300), dtype=np.float32) for _ in range(3))
    write_pdiparams(ref / "chain.pdiparams", {"w": cw})
    chain = chain_mod.chain_cuda_model(str(ref / "chain.pdiparams"))
    out1 = chain.run(torch.from_numpy(cx).cuda(), torch.from_numpy(cy).cuda())
    r1 = chain_reference(cx, cy, cw)
    check("chain: torch in, against numpy", close(out1.numpy(), r1, 1e-5, 1e-5),
          f"max |diff| {np.abs(out1.numpy() - r1).max()}")
    out2 = chain.run(out1, out1)  # DeviceTensors in: zero-copy, ordered after the run that wrote them
    check("chain: its own DeviceTensor outputs as inputs", close(out2.numpy(), chain_reference(r1, r1, cw), 1e-5, 1e-5))
    other = chain_mod.chain_cuda_model(str(ref / "chain.pdiparams"))  # another model, another stream
    out3 = other.run(out2, out1)
    check("chain: a DeviceTensor of one model into another (two streams)",
          close(out3.numpy(), chain_reference(chain_reference(r1, r1, cw), r1, cw), 1e-5, 1e-5))
    ok, text = raises(lambda: chain_mod.chain_cuda_model(str(ref / "inference.pdiparams")), ValueError, "'w'")
    check("load_parameters: a file of another program -> ValueError naming the parameter", ok, text)
    ok, text = raises(lambda: chain.run(out1, out1.numpy().astype(np.float64)), ValueError, "'y'", "float32")
    check("chain: a float64 numpy input -> ValueError naming y", ok, text)

    # Timing: run() from Python, N calls then one synchronize (enqueue cost), and run() + synchronize() per call.
    model = mod.wsn_cuda_model(str(ref / "inference.pdiparams"))
    model.run(x)
    model.synchronize()
    run_us = timed(lambda: model.run(x), args.calls, model.synchronize)
    last = [None]

    def run_holding():  # the outputs of the run before stay alive during the call, as in y = model.run(x)
        last[0] = model.run(x)
    held_us = timed(run_holding, args.calls, model.synchronize)
    last[0] = None
    sync_us = timed(lambda: (model.run(x), model.synchronize()), args.calls // 4, model.synchronize)
    torch_fn = lambda: torch.from_dlpack(model.run(x)[0])  # noqa: E731
    dl_us = timed(torch_fn, args.calls // 4, torch.cuda.synchronize)
    numpy_us = timed(lambda: model.run(x_np), args.calls // 4, model.synchronize)
    chain.run(out1, out1)
    chain_dev_us = timed(lambda: chain.run(out1, out1), args.calls, chain.synchronize)
    xt, yt = torch.from_numpy(cx).cuda(), torch.from_numpy(cy).cuda()
    chain_torch_us = timed(lambda: chain.run(xt, yt), args.calls, chain.synchronize)
    # The same, with the models on torch's current stream: torch's __dlpack__(stream=S) then needs no event between
    # two streams. A cost that stays is the per-input DLPack call itself.
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        model.stream = side.cuda_stream
        chain.stream = side.cuda_stream
        model.run(x)
        same_stream_us = timed(lambda: model.run(x), args.calls, model.synchronize)
        chain_same_us = timed(lambda: chain.run(xt, yt), args.calls, chain.synchronize)
    torch.cuda.synchronize()
    print()
    print("| call (weights_sorted_names on the GPU) | µs per call |")
    print("|---|---|")
    print(f"| Python `model.run(x)`, x a torch CUDA tensor, {args.calls} calls then one synchronize | {run_us:.2f} |")
    if args.cpp_us is not None:
        print(f"| C++ `run()` (gpu_cpp_timing), same loop | {args.cpp_us:.2f} |")
        print(f"| difference | {run_us - args.cpp_us:.2f} |")
    print(f"| Python `y = model.run(x)`, the last outputs held during the call | {held_us:.2f} |")
    print(f"| Python `model.run(x)` + `model.synchronize()` per call | {sync_us:.2f} |")
    if args.cpp_sync_us is not None:
        print(f"| C++ `run()` + `synchronize()` per call | {args.cpp_sync_us:.2f} |")
    print(f"| Python `torch.from_dlpack(model.run(x)[0])` | {dl_us:.2f} |")
    print(f"| Python `model.run(x)`, x a numpy array (copied to the device) | {numpy_us:.2f} |")
    print(f"| chain: Python `run(a, b)`, a and b DeviceTensors (no DLPack call) | {chain_dev_us:.2f} |")
    print(f"| chain: Python `run(x, y)`, x and y torch CUDA tensors | {chain_torch_us:.2f} |")
    print(f"| Python `model.run(x)`, torch CUDA tensor, model.stream = torch's current stream | {same_stream_us:.2f} |")
    print(f"| chain: Python `run(x, y)`, torch CUDA tensors, chain.stream = torch's current stream | {chain_same_us:.2f} |")
    print()
    print(f"{len(FAILED)} check(s) failed" if FAILED else "all checks passed")
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
