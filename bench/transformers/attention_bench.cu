// The fused attention kernel of templates/cuda/kforge_attention.cuh alone, on the GPU: checks it against a plain
// float reference (one thread per output element, softmax in float) and times it with CUDA events, at BERT-base's
// shapes (12 heads of 64) for a few batch and sequence sizes, q / k / v laid out as the projections write them
// ([B, S, H, D], the transposes absorbed) and a padding mask [B, 1, 1, S] in float.
//   nvcc -arch=sm_90 -std=c++17 -O2 -I templates/cuda bench/transformers/attention_bench.cu -o attention_bench
//   ./attention_bench        prints per shape: max |kernel - reference| / max |reference|, median us of 50 runs
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "kforge_attention.cuh"

namespace {

__global__ void fill(__half* x, int64_t n, uint32_t seed, float scale) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    uint32_t z = uint32_t(i) * 747796405u + seed * 2891336453u;
    z = ((z >> ((z >> 28) + 4)) ^ z) * 277803737u;
    x[i] = __float2half(scale * (float((z >> 22) ^ z) / 4294967296.0f - 0.5f));
  }
}

__global__ void reference(const __half* q, const __half* k, const __half* v, const float* mask, float* out, int B,
                          int H, int S, int D, float scale) {
  const int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (e >= int64_t(B) * S * H) return;
  const int h = int(e % H), s = int((e / H) % S), b = int(e / (int64_t(H) * S));
  const int64_t row = int64_t(S) * H * D;
  auto at = [&](const __half* t, int pos, int d) { return __half2float(t[b * row + (int64_t(pos) * H + h) * D + d]); };
  float m = -INFINITY;
  for (int j = 0; j < S; ++j) {
    float dot = 0;
    for (int d = 0; d < D; ++d) dot += at(q, s, d) * at(k, j, d);
    m = fmaxf(m, dot * scale + mask[int64_t(b) * S + j]);
  }
  float sum = 0;
  for (int d = 0; d < D; ++d) out[e * D + d] = 0;
  for (int j = 0; j < S; ++j) {
    float dot = 0;
    for (int d = 0; d < D; ++d) dot += at(q, s, d) * at(k, j, d);
    const float p = expf(dot * scale + mask[int64_t(b) * S + j] - m);
    sum += p;
    for (int d = 0; d < D; ++d) out[e * D + d] += p * at(v, j, d);
  }
  for (int d = 0; d < D; ++d) out[e * D + d] /= sum;
}

}  // namespace

int main() {
  const int H = 12, D = 64;
  const int shapes[][2] = {{1, 128}, {8, 128}, {1, 512}, {8, 512}, {2, 200}};
  for (const auto& shape : shapes) {
    const int B = shape[0], S = shape[1];
    const int64_t n = int64_t(B) * S * H * D;
    __half *q, *k, *v, *o;
    float *mask, *ref;
    cudaMalloc(&q, n * 2);
    cudaMalloc(&k, n * 2);
    cudaMalloc(&v, n * 2);
    cudaMalloc(&o, n * 2);
    cudaMalloc(&ref, n * 4);
    cudaMalloc(&mask, int64_t(B) * S * 4);
    fill<<<256, 256>>>(q, n, 1, 4.0f);
    fill<<<256, 256>>>(k, n, 2, 4.0f);
    fill<<<256, 256>>>(v, n, 3, 2.0f);
    std::vector<float> m(size_t(B) * S, 0.0f);
    for (int b = 0; b < B; ++b)
      for (int j = S - 3 * b; j < S; ++j) m[size_t(b) * S + j] = -1e4f;  // padding at the end of later sequences
    cudaMemcpy(mask, m.data(), m.size() * 4, cudaMemcpyHostToDevice);
    kforge::cuda_attention::AttentionArgs a;
    a.q = q, a.k = k, a.v = v, a.out = o, a.mask = mask;
    a.batch = B, a.heads = H, a.seq_q = S, a.seq_k = S;
    a.q_batch = a.k_batch = a.v_batch = a.o_batch = int64_t(S) * H * D;
    a.q_head = a.k_head = a.v_head = a.o_head = D;
    a.q_seq = a.k_seq = a.v_seq = a.o_seq = int64_t(H) * D;
    a.m_batch = S, a.m_head = 0, a.m_row = 0, a.m_col = 1;
    a.scale = 0.125f;
    cudaError_t e = kforge::cuda_attention::attention<__half, 64, float>(a, nullptr);
    reference<<<int((int64_t(B) * S * H + 127) / 128), 128>>>(q, k, v, mask, ref, B, H, S, D, 0.125f);
    if (e != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess) {
      std::printf("B=%d S=%d: CUDA error %s\n", B, S, cudaGetErrorString(e != cudaSuccess ? e : cudaGetLastError()));
      return 1;
    }
    std::vector<__half> got(n);
    std::vector<float> want(n);
    cudaMemcpy(got.data(), o, n * 2, cudaMemcpyDeviceToHost);
    cudaMemcpy(want.data(), ref, n * 4, cudaMemcpyDeviceToHost);
    double err = 0, top = 0;
    for (int64_t i = 0; i < n; ++i) {
      err = std::max(err, std::fabs(double(__half2float(got[i])) - want[i]));
      top = std::max(top, std::fabs(double(want[i])));
    }
    cudaEvent_t t0, t1;
    cudaEventCreate(&t0);
    cudaEventCreate(&t1);
    std::vector<float> us;
    for (int i = 0; i < 60; ++i) {
      cudaEventRecord(t0);
      kforge::cuda_attention::attention<__half, 64, float>(a, nullptr);
      cudaEventRecord(t1);
      cudaEventSynchronize(t1);
      float ms = 0;
      cudaEventElapsedTime(&ms, t0, t1);
      if (i >= 10) us.push_back(ms * 1000);
    }
    std::sort(us.begin(), us.end());
    std::printf("B=%d H=%d S=%d D=%d: relative error %.2e, %.1f us (median of 50)\n", B, H, S, D, err / top,
                us[us.size() / 2]);
    cudaFree(q), cudaFree(k), cudaFree(v), cudaFree(o), cudaFree(ref), cudaFree(mask);
  }
  return 0;
}
