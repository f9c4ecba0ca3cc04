// The fused attention kernel of templates/cuda/kforge_attention.cuh alone, on the GPU: checks it against a plain
// float reference (one thread per output element, softmax in float) and times it with CUDA events, at BERT-base's
// shapes (12 heads of 64) for a few batch and sequence sizes, q / k / v laid out as the projections write them
// ([B, S, H, D], the transposes absorbed) and a padding mask [B, 1, 1, Sk] in float; decoding shapes (1 to 16
// queries over a longer key sequence: attention_decode_kernel), head dims 64, 128 and 32; causal prefills (the bound
// applied by position, masked key tiles skipped) beside the same shapes with the padding mask; and the paths the
// common shapes do not take: bfloat16, a mask of one row per query ([B, 1, Sq, Sk]) and operands off 16-byte
// alignment (element-wise copies).
//   nvcc -arch=sm_90 -std=c++17 -O2 -I templates/cuda bench/transformers/attention_bench.cu -o attention_bench
//   ./attention_bench        prints per shape: max |kernel - reference| / max |reference|, the median over 30
//                            samples of 10 back-to-back launches each (us per launch) and the TFLOP/s that makes
//                            (4 D flops per visible query-key pair); exits 1 on a CUDA error or an error over 1e-2
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "kforge_attention.cuh"
#include "bench_fill.cuh"
#ifdef KFORGE_BENCH_CUDNN
#include "kforge_cudnn_attention.cuh"
#endif

namespace {

enum Mode { kPadding, kCausal, kRowMask, kUnaligned };
const char* const kModeNames[] = {"padding mask", "causal", "mask per query", "unaligned, padding mask"};

// mask == nullptr: causal, key j masked for query i where j - i >= diagonal; else mask[b * mb + i * mi + j].
template <typename T>
__global__ void reference(const T* q, const T* k, const T* v, const float* mask, int64_t mb, int64_t mi, float* out,
                          int B, int H, int Sq, int Sk, int D, float scale, int diagonal) {
  const int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (e >= int64_t(B) * Sq * H) return;
  const int h = int(e % H), s = int((e / H) % Sq), b = int(e / (int64_t(H) * Sq));
  auto at = [&](const T* t, int rows, int pos, int d) {
    return kforge::cuda::to_float(t[int64_t(b) * rows * H * D + (int64_t(pos) * H + h) * D + d]);
  };
  auto mask_at = [&](int j) {
    return mask != nullptr ? mask[b * mb + s * mi + j] : j - s >= diagonal ? -INFINITY : 0.0f;
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

// One shape: checks the kernel against the reference and times it; false on a CUDA error or a wrong result.
// kCausal: no mask tensor, the kernel's causal bound instead (diagonal Sk - Sq + 1: the last query sees every key,
// as a prefill after a cache). kUnaligned: q, k, v and out one element past a 16-byte boundary.
template <typename T, int D>
bool run(int B, int Sq, int Sk, Mode mode = kPadding) {
  const int H = 12;
  const int64_t nq = int64_t(B) * Sq * H * D, nk = int64_t(B) * Sk * H * D;
  const int skew = mode == kUnaligned ? 1 : 0;
  const int64_t mask_rows = mode == kRowMask ? Sq : 1;
  T *q, *k, *v, *o;
  float *mask, *ref;
  cudaMalloc(&q, (nq + 8) * sizeof(T));
  cudaMalloc(&k, (nk + 8) * sizeof(T));
  cudaMalloc(&v, (nk + 8) * sizeof(T));
  cudaMalloc(&o, (nq + 8) * sizeof(T));
  cudaMalloc(&ref, nq * 4);
  cudaMalloc(&mask, int64_t(B) * mask_rows * Sk * 4);
  q += skew, k += skew, v += skew, o += skew;
  fill<<<256, 256>>>(q, nq, 1, 4.0f);
  fill<<<256, 256>>>(k, nk, 2, 4.0f);
  fill<<<256, 256>>>(v, nk, 3, 2.0f);
  // Padding: the later sequences' last keys; per query: also every fifth key of query i from i on.
  std::vector<float> m(size_t(B) * mask_rows * Sk, 0.0f);
  for (int b = 0; b < B; ++b) {
    for (int64_t i = 0; i < mask_rows; ++i) {
      for (int j = 0; j < Sk; ++j) {
        const bool padded = j >= std::max(1, Sk - 3 * b), struck = mode == kRowMask && j > i && j % 5 == 0;
        if (padded || struck) m[(size_t(b) * mask_rows + i) * Sk + j] = -1e4f;
      }
    }
  }
  cudaMemcpy(mask, m.data(), m.size() * 4, cudaMemcpyHostToDevice);
  const float scale = 1.0f / std::sqrt(float(D));
  kforge::cuda_attention::AttentionArgs a;
  a.q = q, a.k = k, a.v = v, a.out = o, a.mask = mask;
  a.batch = B, a.heads = H, a.seq_q = Sq, a.seq_k = Sk;
  a.q_batch = a.o_batch = int64_t(Sq) * H * D;
  a.k_batch = a.v_batch = int64_t(Sk) * H * D;
  a.q_head = a.k_head = a.v_head = a.o_head = D;
  a.q_seq = a.k_seq = a.v_seq = a.o_seq = int64_t(H) * D;
  a.m_batch = mask_rows * Sk, a.m_head = 0, a.m_row = mode == kRowMask ? Sk : 0, a.m_col = 1;
  a.scale = scale;
  if (mode == kCausal) {
    a.mask = nullptr;
    a.causal = true;
    a.diagonal = Sk - Sq + 1;
  }
  cudaMemset(o - skew, 0xff, (nq + 8) * sizeof(T));  // NaN: an element the kernel misses fails the check
  cudaError_t e = kforge::cuda_attention::attention<T, D, float>(a, nullptr);
  reference<<<int((int64_t(B) * Sq * H + 127) / 128), 128>>>(q, k, v, a.mask == nullptr ? nullptr : mask, a.m_batch,
                                                             a.m_row, ref, B, H, Sq, Sk, D, scale, Sk - Sq + 1);
  if (e != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess) {
    std::printf("B=%d Sq=%d Sk=%d D=%d: CUDA error %s\n", B, Sq, Sk, D,
                cudaGetErrorString(e != cudaSuccess ? e : cudaGetLastError()));
    return false;
  }
  std::vector<T> got(nq);
  std::vector<float> want(nq);
  cudaMemcpy(got.data(), o, nq * sizeof(T), cudaMemcpyDeviceToHost);
  cudaMemcpy(want.data(), ref, nq * 4, cudaMemcpyDeviceToHost);
  double err = 0, top = 0;
  for (int64_t i = 0; i < nq; ++i) {
    const double x = kforge::cuda::to_float(got[i]);
    err = std::isfinite(x) ? std::max(err, std::fabs(x - want[i])) : INFINITY;
    top = std::max(top, std::fabs(double(want[i])));
  }
  cudaEvent_t t0, t1;
  cudaEventCreate(&t0);
  cudaEventCreate(&t1);
  auto time_us = [&](auto launch) {  // median over 30 samples of 10 back-to-back launches, us per launch
    std::vector<float> us;
    for (int i = 0; i < 35; ++i) {
      cudaEventRecord(t0);
      for (int j = 0; j < 10; ++j) launch();
      cudaEventRecord(t1);
      cudaEventSynchronize(t1);
      float ms = 0;
      cudaEventElapsedTime(&ms, t0, t1);
      if (i >= 5) us.push_back(ms * 100);
    }
    std::sort(us.begin(), us.end());
    return double(us[us.size() / 2]);
  };
  const double median = time_us([&] { kforge::cuda_attention::attention<T, D, float>(a, nullptr); });
  auto relative_error = [&] {
    std::vector<T> out(nq);
    cudaMemcpy(out.data(), o, nq * sizeof(T), cudaMemcpyDeviceToHost);
    double worst = 0;
    for (int64_t i = 0; i < nq; ++i) {
      const double x = kforge::cuda::to_float(out[i]);
      worst = std::isfinite(x) ? std::max(worst, std::fabs(x - want[i])) : INFINITY;
    }
    return worst / top;
  };
  std::string cudnn = "";
#ifdef KFORGE_BENCH_CUDNN
  static kforge::cuda_attention::CudnnAttention cudnn_attention;
  if (!cudnn_attention.prepare<T, float>(a, D)) {
    cudnn = ", cuDNN: no plan: " + cudnn_attention.last_error();
  } else {
    cudaMemset(o - skew, 0xff, (nq + 8) * sizeof(T));
    const cudaError_t ce = cudnn_attention.run<T, float>(a, D, nullptr);
    const double cudnn_error = ce == cudaSuccess && cudaDeviceSynchronize() == cudaSuccess ? relative_error() : INFINITY;
    const double cudnn_us = time_us([&] { cudnn_attention.run<T, float>(a, D, nullptr); });
    char text[160];
    std::snprintf(text, sizeof(text), ", cuDNN: relative error %.2e%s, %.1f us (%.2fx)", cudnn_error,
                  cudnn_error < 1e-2 ? "" : " WRONG", cudnn_us, median / cudnn_us);
    cudnn = text;
  }
#endif
  double pairs = 0;  // the query-key pairs the mask (or causal bound) leaves, per (batch, head)
  for (int i = 0; i < Sq; ++i) pairs += mode == kCausal ? std::clamp(i + (Sk - Sq + 1), 0, Sk) : Sk;
  const double tflops = 4.0 * D * pairs * B * H / (median * 1e6);
  const bool right = err / top < 1e-2;
  std::printf("%s B=%d H=%d Sq=%d Sk=%d D=%d %s: relative error %.2e%s, %.1f us, %.1f TFLOP/s%s\n",
              std::is_same_v<T, __half> ? "f16" : "bf16", B, H, Sq, Sk, D, kModeNames[mode], err / top,
              right ? "" : " WRONG", median, tflops, cudnn.c_str());
  cudaFree(q - skew), cudaFree(k - skew), cudaFree(v - skew), cudaFree(o - skew), cudaFree(ref), cudaFree(mask);
  return cudaGetLastError() == cudaSuccess && right;
}

}  // namespace

int main() {
  bool ok = true;
  // Encoder shapes (Sq = Sk) and decoding ones (one new token, or a few, over a longer cache: the decode kernel).
  const int shapes[][3] = {{1, 128, 128}, {8, 128, 128}, {1, 512, 512}, {8, 512, 512}, {2, 200, 200},
                           {1, 1, 129},   {8, 1, 129},   {1, 1, 513},   {8, 1, 513},   {8, 5, 200}, {2, 16, 40}};
  for (const auto& s : shapes) ok = run<__half, 64>(s[0], s[1], s[2]) && ok;
  for (const auto& s : {std::array<int, 3>{8, 1, 513}, std::array<int, 3>{2, 3, 70}}) {
    ok = run<__half, 128>(s[0], s[1], s[2]) && ok;
    ok = run<__half, 32>(s[0], s[1], s[2]) && ok;
  }
  // Causal (a decoder's prefill, the mask applied by position): against the padding mask's time at the same shape.
  const int causal_shapes[][3] = {{8, 128, 128}, {1, 1024, 1024}, {8, 1024, 1024},
                                  {2, 200, 200}, {2, 70, 100},     {8, 5, 200}};
  for (const auto& s : causal_shapes) {
    ok = run<__half, 64>(s[0], s[1], s[2], kCausal) && ok;
    ok = run<__half, 64>(s[0], s[1], s[2]) && ok;
  }
  // Head dims 128 and 32 at prefill sizes; bfloat16; a mask per query; unaligned operands.
  for (Mode mode : {kCausal, kPadding}) {
    ok = run<__half, 128>(8, 1024, 1024, mode) && ok;
    ok = run<__half, 32>(8, 1024, 1024, mode) && ok;
    ok = run<__half, 128>(2, 200, 200, mode) && ok;
    ok = run<__half, 32>(2, 70, 100, mode) && ok;
  }
  ok = run<__nv_bfloat16, 64>(8, 1024, 1024, kCausal) && ok;
  ok = run<__nv_bfloat16, 64>(8, 512, 512) && ok;
  ok = run<__nv_bfloat16, 128>(2, 200, 200, kCausal) && ok;
  ok = run<__half, 64>(8, 512, 512, kRowMask) && ok;
  ok = run<__half, 64>(2, 200, 130, kRowMask) && ok;
  ok = run<__half, 128>(2, 70, 100, kRowMask) && ok;
  ok = run<__half, 64>(2, 200, 200, kUnaligned) && ok;
  ok = run<__half, 32>(2, 9, 70, kUnaligned) && ok;
  return ok ? 0 : 1;
}
