#!/usr/bin/env python3
"""How Paddle's CPU float32 matmul sums its dot products (issue 34 item 5, docs/model-zoo.md "RT-DETR"): Paddle's
result (dygraph paddle.matmul, the phi kernel the predictor runs with oneDNN off: MKL's cblas_sgemm) of an N(0, 1)
M x K matrix by a K x N one scaled by 1/sqrt(K) (seed 1), against float32 sums in candidate orders computed here
exactly (numpy float32, every multiply and add rounded, no FMA), and all of them against float64. Run under a Python
that has Paddle:

    PY tools/paddle_zoo/matmul_order.py [--m 200] [--n 256] K [K ...]

Prints per K and order: the share of Paddle's elements it reproduces bit for bit, and max / mean |x - float64|.
The orders: one accumulator over the whole K ("one accumulator": what kforge's oneDNN matmul did; it sums with FMA,
within a few float32 roundings of this), blocks of B products each summed in an accumulator of its own then added
in order ("blocks of B"), kforge's chunks (util::gemm_chunks: blocks of 64 from K = 113 on)."""
import argparse

import numpy as np


def blocked(a, b, block):
    """Each element's dot product in blocks of `block` products, every block in its own float32 accumulator, the
    blocks' sums added in order; every operation rounded to float32."""
    k = a.shape[1]
    total = None
    for start in range(0, k, block):
        acc = np.zeros((a.shape[0], b.shape[1]), np.float32)
        for p in range(start, min(k, start + block)):
            acc = acc + np.outer(a[:, p], b[p]).astype(np.float32)  # float32 * float32 rounds to float32
        total = acc if total is None else (total + acc).astype(np.float32)
    return total


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("k", type=int, nargs="+")
    p.add_argument("--m", type=int, default=200)
    p.add_argument("--n", type=int, default=256)
    args = p.parse_args()
    import paddle
    paddle.set_device("cpu")
    for k in args.k:
        rng = np.random.default_rng(1)
        a = rng.standard_normal((args.m, k)).astype(np.float32)
        b = (rng.standard_normal((k, args.n)) / np.sqrt(k)).astype(np.float32)
        exact = a.astype(np.float64) @ b.astype(np.float64)
        paddle_out = paddle.matmul(paddle.to_tensor(a), paddle.to_tensor(b)).numpy()
        orders = [("Paddle", paddle_out), ("one accumulator", blocked(a, b, k))]
        orders += [(f"blocks of {s}", blocked(a, b, s)) for s in (64, 112, 128) if s < k]
        orders.append(("kforge's chunks", blocked(a, b, 64 if k > 112 else k)))
        for name, out in orders:
            err = np.abs(out - exact)
            same = np.mean(out == paddle_out)
            print(f"K={k:5d} {name:16s} equal to Paddle {same:6.1%}  max {err.max():.3g}  mean {err.mean():.3g}",
                  flush=True)


if __name__ == "__main__":
    main()
