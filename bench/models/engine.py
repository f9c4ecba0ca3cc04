"""The Paddle and ONNX Runtime sides of bench/models/compare.py, one process each (same protocol as worker.cc):

    engine.py paddle|ort MODEL_DIR THREADS

paddle: Paddle Inference's predictor on inference.json/.pdiparams with enable_mkldnn() (oneDNN) and THREADS math
threads; ort: ONNX Runtime's CPU provider on model.onnx with intra_op_num_threads = inter_op_num_threads = THREADS
and all graph optimisations. Inputs: MODEL_DIR/inputs.npz by feed name (export.py), or an older export's
MODEL_DIR/input.npy (the one input). Commands on stdin: "out PATH" (first output as raw
float32, answers its dims), "time N" (N process CPU times in ms), "quit".
"""
import sys
import time
from pathlib import Path

import numpy as np


def paddle_runner(model_dir, threads, feeds):
    import paddle.inference as pi
    config = pi.Config(str(model_dir / "inference.json"), str(model_dir / "inference.pdiparams"))
    config.disable_gpu()
    config.enable_mkldnn()
    config.set_cpu_math_library_num_threads(threads)
    config.disable_glog_info()
    predictor = pi.create_predictor(config)
    names = predictor.get_input_names()
    handles = [predictor.get_input_handle(n) for n in names]
    values = [feeds[n] if n in feeds else list(feeds.values())[i] for i, n in enumerate(names)]
    out = predictor.get_output_handle(predictor.get_output_names()[0])

    def run():
        for handle, value in zip(handles, values):
            handle.copy_from_cpu(value)
        predictor.run()
        return out.copy_to_cpu()
    return run


def ort_runner(model_dir, threads, feeds):
    import onnxruntime as ort
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = threads
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = ort.InferenceSession(str(model_dir / "model.onnx"), options, providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    values = {n: feeds[n] if n in feeds else list(feeds.values())[i] for i, n in enumerate(names)}
    return lambda: session.run(None, values)[0]


def main():
    engine, model_dir, threads = sys.argv[1], Path(sys.argv[2]), int(sys.argv[3])
    if (model_dir / "inputs.npz").exists():
        with np.load(model_dir / "inputs.npz") as npz:
            feeds = {n: npz[n] for n in npz.files}
    else:
        feeds = {"x": np.load(model_dir / "input.npy")}
    run = (paddle_runner if engine == "paddle" else ort_runner)(model_dir, threads, feeds)
    run()
    print("ready", flush=True)
    for line in sys.stdin:
        words = line.split()
        if not words or words[0] == "quit":
            break
        if words[0] == "out":
            y = np.ascontiguousarray(run(), dtype=np.float32)
            y.tofile(words[1])
            print("[" + ", ".join(str(d) for d in y.shape) + "]", flush=True)
        elif words[0] == "time":
            times = []
            for _ in range(int(words[1])):
                t0 = time.process_time_ns()
                run()
                times.append((time.process_time_ns() - t0) / 1e6)
            print(" ".join(f"{t:.6f}" for t in times), flush=True)


if __name__ == "__main__":
    main()
