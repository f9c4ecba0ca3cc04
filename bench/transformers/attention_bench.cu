// The fused attention kernel of templates/cuda/kforge_attention.cuh alone, on the GPU: checks it against a plain
// float reference (one thread per output element, softmax in float) and times it with CUDA events, at BERT-base's
// shapes (12 heads of 64) for a few batch and sequence sizes, q / k / v laid out as the projections write them
// ([B, S, H, D], the transposes absorbed) and a padding mask [B, 1, 1, Sk] in float; and decoding shapes (1 to 16
// queries over a longer key sequence: attention_decode_kernel), head dims 64, 128 and 32.
//   nvcc -arch=sm_90 -std=c++17 -O2 -I templates/cuda bench/transformers/attention_bench.cu -o attention_bench
//   ./attention_bench        prints per shape: max |kernel - reference| / max |reference|, median us of 50 runs
//                            (exits 1 on a CUDA error); causal prefills (the bound applied by position, masked key
//                            tiles skipped) beside the same shapes with the padding mask
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <vector>

#include "kforge_attention.cuh"
#include "bench_fill.cuh"

namespace {

// mask == nullptr: causal, key j masked for query i where j - i >= diagonal.
__global__ void reference(const __half* q, const __half* k, const __half* v, const float* mask, float* out, int B,
                          int H, int Sq, int Sk, int D, float scale, int diagonal) {
  const int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (e >= int64_t(B) * Sq * H) return;
  const int h = int(e % H), s = int((e / H) % Sq), b = int(e / (int64_t(H) * Sq));
  auto at = [&](const __half* t, int rows, int pos, int d) {
    return __half2float(t[int64_t(b) * rows * H * D + (int64_t(pos) * H + h) * D + d]);
  };
  auto mask_at = [&](int j) {
    return mask != nullptr ? mask[int64_t(b) * Sk + j] : j - s >= diagonal ? -INFINITY : 0.0f;
  };
  float m = -INFINITY;
  for (int j = 0; j < Sk; ++j) {
    float dot = 0;
    for (int d = 0; d < D; ++d) dot += at(q, Sq, s, d) * at(k, Sk, j, d);
    m = fmaxf(m, dot * scale + mask_at(j));
  }
  float sum = 0;
  for (int d = 0; d < D; ++d) out[e * D + d] = 0;
  for (int j = 0; j < Sk; ++j) {
    float dot = 0;
    for (int d = 0; d < D; ++d) dot += at(q, Sq, s, d) * at(k, Sk, j, d);
    const float p = expf(dot * scale + mask_at(j) - m);
    sum += p;
    for (int d = 0; d < D; ++d) out[e * D + d] += p * at(v, Sk, j, d);
  }
  for (int d = 0; d < D; ++d) out[e * D + d] /= sum;
}

// One shape: checks the kernel against the reference and times it; false on a CUDA error. `causal`: no mask tensor,
// the kernel's causal bound instead (diagonal Sk - Sq + 1: the last query sees every key, as a prefill after a cache).
template <int D>
bool run(int B, int Sq, int Sk, bool causal = false) {
  const int H = 12;
  const int64_t nq = int64_t(B) * Sq * H * D, nk = int64_t(B) * Sk * H * D;
  __half *q, *k, *v, *o;
  float *mask, *ref;
  cudaMalloc(&q, nq * 2);
  cudaMalloc(&k, nk * 2);
  cudaMalloc(&v, nk * 2);
  cudaMalloc(&o, nq * 2);
  cudaMalloc(&ref, nq * 4);
  cudaMalloc(&mask, int64_t(B) * Sk * 4);
  fill<<<256, 256>>>(q, nq, 1, 4.0f);
  fill<<<256, 256>>>(k, nk, 2, 4.0f);
  fill<<<256, 256>>>(v, nk, 3, 2.0f);
  std::vector<float> m(size_t(B) * Sk, 0.0f);
  for (int b = 0; b < B; ++b)
    for (int j = std::max(1, Sk - 3 * b); j < Sk; ++j) m[size_t(b) * Sk + j] = -1e4f;  // padding, later sequences
  cudaMemcpy(mask, m.data(), m.size() * 4, cudaMemcpyHostToDevice);
  const float scale = 1.0f / std::sqrt(float(D));
  kforge::cuda_attention::AttentionArgs a;
  a.q = q, a.k = k, a.v = v, a.out = o, a.mask = mask;
  a.batch = B, a.heads = H, a.seq_q = Sq, a.seq_k = Sk;
  a.q_batch = a.o_batch = int64_t(Sq) * H * D;
  a.k_batch = a.v_batch = int64_t(Sk) * H * D;
  a.q_head = a.k_head = a.v_head = a.o_head = D;
  a.q_seq = a.k_seq = a.v_seq = a.o_seq = int64_t(H) * D;
  a.m_batch = Sk, a.m_head = 0, a.m_row = 0, a.m_col = 1;
  a.scale = scale;
  if (causal) {
    a.mask = nullptr;
    a.causal = true;
    a.diagonal = Sk - Sq + 1;
  }
  cudaError_t e = kforge::cuda_attention::attention<__half, D, float>(a, nullptr);
  reference<<<int((int64_t(B) * Sq * H + 127) / 128), 128>>>(q, k, v, causal ? nullptr : mask, ref, B, H, Sq, Sk, D,
                                                             scale, Sk - Sq + 1);
  if (e != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess) {
    std::printf("B=%d Sq=%d Sk=%d D=%d: CUDA error %s\n", B, Sq, Sk, D,
                cudaGetErrorString(e != cudaSuccess ? e : cudaGetLastError()));
    return false;
  }
  std::vector<__half> got(nq);
  std::vector<float> want(nq);
  cudaMemcpy(got.data(), o, nq * 2, cudaMemcpyDeviceToHost);
  cudaMemcpy(want.data(), ref, nq * 4, cudaMemcpyDeviceToHost);
  double err = 0, top = 0;
  for (int64_t i = 0; i < nq; ++i) {
    err = std::max(err, std::fabs(double(__half2float(got[i])) - want[i]));
    top = std::max(top, std::fabs(double(want[i])));
  }
  cudaEvent_t t0, t1;
  cudaEventCreate(&t0);
  cudaEventCreate(&t1);
  std::vector<float> us;
  for (int i = 0; i < 60; ++i) {
    cudaEventRecord(t0);
    kforge::cuda_attention::attention<__half, D, float>(a, nullptr);
    cudaEventRecord(t1);
    cudaEventSynchronize(t1);
    float ms = 0;
    cudaEventElapsedTime(&ms, t0, t1);
    if (i >= 10) us.push_back(ms * 1000);
  }
  std::sort(us.begin(), us.end());
  std::printf("B=%d H=%d Sq=%d Sk=%d D=%d%s: relative error %.2e, %.1f us (median of 50)\n", B, H, Sq, Sk, D,
              causal ? " causal" : "", err / top, us[us.size() / 2]);
  cudaFree(q), cudaFree(k), cudaFree(v), cudaFree(o), cudaFree(ref), cudaFree(mask);
  return true;
}

}  // namespace

int main() {
  // Encoder shapes (Sq = Sk) and decoding ones (one new token, or a few, over a longer cache: the decode kernel).
  const int shapes[][3] = {{1, 128, 128}, {8, 128, 128}, {1, 512, 512}, {8, 512, 512}, {2, 200, 200},
                           {1, 1, 129},   {8, 1, 129},   {1, 1, 513},   {8, 1, 513},   {8, 5, 200}, {2, 16, 40}};
  for (const auto& shape : shapes) {
    if (!run<64>(shape[0], shape[1], shape[2])) return 1;
  }
  for (const auto& shape : {std::array<int, 3>{8, 1, 513}, std::array<int, 3>{2, 3, 70}}) {
    if (!run<128>(shape[0], shape[1], shape[2]) || !run<32>(shape[0], shape[1], shape[2])) return 1;
  }
  // Causal (a decoder's prefill, the mask applied by position): against the padding mask's time at the same shape.
  const int causal_shapes[][3] = {{8, 128, 128}, {1, 1024, 1024}, {8, 1024, 1024}, {2, 200, 200}, {2, 70, 100}, {8, 5, 200}};
  for (const auto& shape : causal_shapes) {
    if (!run<64>(shape[0], shape[1], shape[2], true) || !run<64>(shape[0], shape[1], shape[2])) return 1;
  }
  return 0;
}
