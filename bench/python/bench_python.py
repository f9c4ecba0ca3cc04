#!/usr/bin/env python3
"""Per-call overhead from Python: a 1-element float32 CPU add through kforge's generated module (kforge ops
--python) vs numpy, paddle and torch eager (those importable), the same add bound with pybind11, and a compiled
model's run() from Python vs its C++ call (tools/run-model --bench).

    bench_python.py --build-dir BUILD [--python-for-peers VENV/bin/python] [--number N] [--repeat R]
    bench_python.py --module-dir DIR --cpp-runner RUNNER      (tests/python/gpu_run.sh bench)

BUILD is a kforge build with tests on (BUILD/tests/python/ops/refops*.so, BUILD/tests/python/model/wsn*.so). The
peers run in the interpreter given by --python-for-peers (a venv with numpy, paddle, torch from PyPI), the kforge
modules in the same interpreter (same CPython ABI; the module does not use numpy's C API). Every peer is
optional: one that does not import is listed as "not installed". Each figure is the best of R rounds of N calls
(timeit), in microseconds per call.
"""

import argparse
import json
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WSN = ROOT / "tests" / "paddle" / "weights_sorted_names"

PEERS = textwrap.dedent('''
    import json, sys, timeit
    sys.path[:0] = {paths!r}
    number, repeat = {number}, {repeat}
    res = {{}}
    def bench(name, stmt, env):
        res[name] = min(timeit.repeat(stmt, globals=env, number=number, repeat=repeat)) / number * 1e6
    def absent(name, e):
        res[name + ": not installed (" + str(e) + ")"] = None  # or, for pybind11_add, not built
    res["python " + sys.version.split()[0] + " (" + sys.executable + ")"] = None
    try:
        import numpy as np
    except ImportError as e:  # the kforge modules take any buffer; without numpy, array.array
        np = None
        absent("numpy", e)
    if np is not None:
        a = np.ones(1, np.float32); b = np.ones(1, np.float32)
        bench("numpy np.add(a, b)", "f(a, b)", dict(f=np.add, a=a, b=b))
    else:
        import array
        a = array.array("f", [1.0]); b = array.array("f", [1.0])
    try:
        import refops
    except ImportError as e:
        refops = None
        absent("kforge refops", e)
    if refops is not None:
        ta, tb = refops.Tensor(a), refops.Tensor(b)
        bench("kforge refops.add(Tensor, Tensor)", "f(a, b)", dict(f=refops.add, a=ta, b=tb))
        bench("kforge refops.add(ndarray, ndarray)", "f(a, b)", dict(f=refops.add, a=a, b=b))
        bench("kforge refops.add(x=, y=) keywords", "f(x=a, y=b)", dict(f=refops.add, a=ta, b=tb))
    try:
        import pybind11_add
        pa, pb = pybind11_add.Tensor(a), pybind11_add.Tensor(b)
        bench("pybind11 add(Tensor, Tensor)", "f(a, b)", dict(f=pybind11_add.add, a=pa, b=pb))
    except ImportError as e:
        absent("pybind11 add", e)
    try:
        import paddle
    except ImportError as e:
        absent("paddle", e)
    else:
        paddle.set_device("cpu")
        pa, pb = paddle.ones([1], "float32"), paddle.ones([1], "float32")
        bench("paddle.add (dygraph)", "f(a, b)", dict(f=paddle.add, a=pa, b=pb))
        bench("paddle._C_ops.add", "f(a, b)", dict(f=paddle._C_ops.add, a=pa, b=pb))
    try:
        import torch
    except ImportError as e:
        absent("torch", e)
    else:
        torch.set_num_threads(1)
        tt, tu = torch.ones(1), torch.ones(1)
        res["torch " + torch.__version__] = None
        bench("torch.add (eager)", "f(a, b)", dict(f=torch.add, a=tt, b=tu))
        if refops is not None and np is not None:
            # torch tensors in through DLPack's C exchange API where torch publishes it (2.10 and later)
            sum_ = np.asarray(refops.add(tt * 2, tu))
            if sum_.shape != (1,) or float(sum_[0]) != 3.0:
                raise SystemExit(f"kforge refops.add(torch, torch) gave {{sum_!r}}, expected [3.0]")
            bench("kforge refops.add(torch CPU tensors)", "f(a, b)", dict(f=refops.add, a=tt, b=tu))
    try:
        import wsn
    except ImportError as e:
        absent("kforge wsn", e)
    else:
        model = wsn.wsn_model({params!r})
        x = np.load({x!r}) if np is not None else None
        if x is not None:
            bench("wsn_model.run(x) from Python", "m.run(x)", dict(m=model, x=x))
    print(json.dumps(res))
''')


def build_pybind11(build, out_dir):
    """Compiles pybind11_add.cc against the generated op library of BUILD/tests/python/ops; None when it fails."""
    ops = build / "tests" / "python" / "ops"
    inc = subprocess.run(["/usr/bin/python3", "-c", "import sysconfig; print(sysconfig.get_paths()['include'])"],
                         stdout=subprocess.PIPE, text=True).stdout.strip()
    link = (build / "kernels" / "kforge_kernels.link").read_text().split()
    suffix = subprocess.run(["/usr/bin/python3-config", "--extension-suffix"], stdout=subprocess.PIPE,
                            text=True).stdout.strip()
    target = out_dir / f"pybind11_add{suffix}"
    cmd = ["g++", "-std=c++17", "-O2", "-shared", "-fPIC", f"-I{ops}", f"-I{ROOT / 'kernels'}", f"-I{inc}",
           str(Path(__file__).parent / "pybind11_add.cc"), str(ops / "ref_api.cc"), str(ops / "ref_args_info.cc"),
           str(build / "kernels" / "libkforge_kernels.a"), *link, "-o", str(target)]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        print(proc.stdout[-2000:], file=sys.stderr)
        return None
    return target


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build-dir", help="a kforge build with tests on: its python suite's modules, its pybind11 "
                                       "bind and tools/run-model for the C++ call")
    p.add_argument("--module-dir", help="where refops and wsn were built for --python-for-peers instead "
                                        "(tests/python/gpu_run.sh bench)")
    p.add_argument("--cpp-runner", help="a built tools/run-model runner of the model (instead of tools/run-model)")
    p.add_argument("--python-for-peers", default=sys.executable)
    p.add_argument("--number", type=int, default=200000)
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--model-runs", type=int, default=20000)
    args = p.parse_args()
    if not args.build_dir and not args.module_dir:
        p.error("give --build-dir or --module-dir")
    build = Path(args.build_dir).resolve() if args.build_dir else None
    with tempfile.TemporaryDirectory() as tmp:
        paths = [tmp]
        if build is not None:
            build_pybind11(build, Path(tmp))
            paths += [str(build / "tests/python/ops"), str(build / "tests/python/model")]
        if args.module_dir:
            paths.insert(0, str(Path(args.module_dir).resolve()))
        script = PEERS.format(paths=paths, number=args.number, repeat=args.repeat,
                              params=str(WSN / "inference.pdiparams"), x=str(WSN / "input_x.npy"))
        proc = subprocess.run([args.python_for_peers, "-c", script], stdout=subprocess.PIPE, text=True, check=True)
        results = json.loads(proc.stdout.strip().splitlines()[-1])
        bench_json = Path(tmp) / "bench.json"
        name = "wsn_model.run() in C++ (tools/run-model --bench, median)"
        if args.cpp_runner:
            subprocess.run([args.cpp_runner, "--output-dir", tmp, "--seed", "0", "--threads", "1", "--params",
                            str(WSN / "inference.pdiparams"), "--input", f"x={WSN / 'input_x.npy'}", "--bench",
                            str(args.model_runs), "--bench-json", str(bench_json)], check=True,
                           stdout=subprocess.DEVNULL)
        elif build is not None:
            subprocess.run([sys.executable, str(ROOT / "tools" / "run-model"), str(WSN), "--input",
                            f"x={WSN / 'input_x.npy'}", "--bench", str(args.model_runs), "--bench-json",
                            str(bench_json), "--output-dir", tmp, "--build-dir", str(build)], check=True,
                           stdout=subprocess.DEVNULL)
        results[name] = json.loads(bench_json.read_text())["median_ms"] * 1000 if bench_json.exists() else None
    for name, us in results.items():
        print(f"{name:58s} {'' if us is None else f'{us:8.3f} us'}")


if __name__ == "__main__":
    sys.exit(main())
