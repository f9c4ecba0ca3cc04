// Seeded pseudo-random 16-bit data (__half or __nv_bfloat16) on the GPU for the kernel benchmarks of bench/transformers
// (attention_bench.cu, qkv_bench.cu): x[i] uniform in [-scale / 2, scale / 2), a PCG-style hash of (i, seed), the same
// on every run.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

template <typename T>
__global__ void fill(T* x, int64_t n, uint32_t seed, float scale) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    uint32_t z = uint32_t(i) * 747796405u + seed * 2891336453u;
    z = ((z >> ((z >> 28) + 4)) ^ z) * 277803737u;
    x[i] = T(scale * (float((z >> 22) ^ z) / 4294967296.0f - 0.5f));
  }
}
