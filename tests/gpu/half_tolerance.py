#!/usr/bin/env python3
"""How much of check_fusion.sh's 16-bit tolerance the rounding alone uses (no GPU, no numpy: plain Python).

Models the half_bf16 / half_fp16 cases of tests/gpu/check_fusion.sh: the program of tests/e2e/fused/half_*.yaml on
random inputs uniform in [-1, 1) (as kforge-interp makes them) already rounded to the 16-bit type, computed once in
double (the float32 twin's reference, Paddle's erf gelu) and once as the generated CUDA code computes it: every
value a kernel stores rounded to the 16-bit type to nearest even, everything else exact. A 16-bit GEMM + bias +
erf gelu computes the tanh form of gelu (GemmEpilogue::kBiasGeluTanh; docs/compile.md "The gelu's form"), on two
paths: in the GEMM's epilogue, rounding only the result (cuBLASLt's GELU_BIAS, the tensor-core tiles), or after the
GEMM rounded its result (the separate kernel: an unaligned bias, no GELU_BIAS plan). Prints, per output, the
largest |gpu - ref| / (ATOL + RTOL |ref|) over all elements and seeds (must stay well below 1) and the largest
relative error of elements above 0.01, in units of u (for h, those of t = x w1 + b1 > 0 only: for t < 0 the tanh
form's absolute difference, at most 4.73e-4, is many ulps of the small |h|; ATOL covers it).

  tests/gpu/half_tolerance.py bfloat16 --seeds 20
"""
import argparse
import math
import random
import struct

M, K1, N1, N2, N3 = 301, 64, 96, 40, 32  # the largest batch check_fusion.sh runs, and the program's dims


def round_bf16(v):
    bits = struct.unpack("<I", struct.pack("<f", v))[0]  # the float32 accumulator, then to nearest even
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def round_fp16(v):
    return struct.unpack("<e", struct.pack("<e", v))[0]  # IEEE half, to nearest even


def gelu(t):
    return 0.5 * t * (1 + math.erf(t / math.sqrt(2)))


def gelu_tanh(t):
    return 0.5 * t * (1 + math.tanh(math.sqrt(2 / math.pi) * (t + 0.044715 * t ** 3)))


def matmul(a, b):
    return [[sum(a[i][k] * b[k][j] for k in range(len(b))) for j in range(len(b[0]))] for i in range(len(a))]


def layer_norm(rows, g, beta, rnd):
    out = []
    for row in rows:
        mean = sum(row) / len(row)
        rstd = 1 / math.sqrt(sum((e - mean) ** 2 for e in row) / len(row) + 1e-5)
        out.append([rnd((e - mean) * rstd * g[j] + beta[j]) for j, e in enumerate(row)])
    return out


def softmax_of_sixteenth(rows, rnd):
    out = []
    for row in rows:
        top = max(row) / 16
        e = [math.exp(v / 16 - top) for v in row]
        total = sum(e)
        out.append([rnd(v / total) for v in e])
    return out


def run(rnd, seed, separate):
    """(h, h on the GPU, p, p on the GPU) for one seed."""
    r = random.Random(seed)
    rand = lambda rows, cols: [[rnd(r.uniform(-1, 1)) for _ in range(cols)] for _ in range(rows)]
    x, w1, b1, w2 = rand(M, K1), rand(K1, N1), rand(1, N1)[0], rand(N1, N2)
    b2, g, beta, w3t = rand(1, N2)[0], rand(1, N2)[0], rand(1, N2)[0], rand(N3, N2)
    w3 = [list(c) for c in zip(*w3t)]
    exact = lambda v: v
    xw1 = matmul(x, w1)
    h = [[gelu(xw1[i][j] + b1[j]) for j in range(N1)] for i in range(M)]
    a = [[v + b2[j] for j, v in enumerate(row)] for row in matmul(h, w2)]
    p = softmax_of_sixteenth(matmul(layer_norm(a, g, beta, exact), w3), exact)
    if separate:
        hg = [[rnd(gelu_tanh(rnd(xw1[i][j] + b1[j]))) for j in range(N1)] for i in range(M)]
    else:
        hg = [[rnd(gelu_tanh(xw1[i][j] + b1[j])) for j in range(N1)] for i in range(M)]
    ag = [[rnd(v + b2[j]) for j, v in enumerate(row)] for row in matmul(hg, w2)]
    zg = [[rnd(v) for v in row] for row in matmul(layer_norm(ag, g, beta, rnd), w3)]
    positive = [[xw1[i][j] + b1[j] > 0 for j in range(N1)] for i in range(M)]
    return h, hg, p, softmax_of_sixteenth(zg, rnd), positive


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("dtype", choices=["bfloat16", "float16"])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--atol", type=float, default=7e-4, help="check_fusion.sh's; 2e-4 before the tanh gelu")
    args = parser.parse_args()
    rnd, u = (round_bf16, 2.0**-8) if args.dtype == "bfloat16" else (round_fp16, 2.0**-11)
    rtol, atol = 8 * u, args.atol  # check_fusion.sh's half_* cases
    for separate in (False, True):
        used, rel = {"h": 0.0, "p": 0.0}, {"h": 0.0, "p": 0.0}
        for seed in range(args.seeds):
            h, hg, p, pg, positive = run(rnd, seed, separate)
            for name, ref, gpu, keep in (("h", h, hg, positive), ("p", p, pg, None)):
                for r, (ref_row, gpu_row) in enumerate(zip(ref, gpu)):
                    for c, (e, g) in enumerate(zip(ref_row, gpu_row)):
                        used[name] = max(used[name], abs(g - e) / (atol + rtol * abs(e)))
                        if abs(e) > 0.01 and (keep is None or keep[r][c]):
                            rel[name] = max(rel[name], abs(g - e) / abs(e) / u)
        path = "separate" if separate else "in-GEMM"
        print(f"{args.dtype} {path:8} " +
              "  ".join(f"{n}: {used[n]:.2f} of the tolerance, relative error {rel[n]:.2f} u" for n in ("h", "p")))


if __name__ == "__main__":
    main()
