// The float32 fused attention kernel of templates/cuda/kforge_attention_f32.cuh (attention_float<D>) alone, on the
// GPU: checked against a float64 reference computed on the host, and timed against the unfused path the program takes
// without it (the kforge CUDA program's: q, k and v transposed to [B, H, S, D], cuBLAS strided-batched q k^T with the
// scale, a softmax row kernel adding the mask, cuBLAS p v, the transpose back), with TF32 off and on for the products.
// q, k, v and out are laid out as the projections write them ([B, S, H, D], the transposes absorbed), 12 heads.
// Masks: none, padding ([B, 1, 1, Sk], -inf on the later sequences' last keys), causal (by position; the unfused path
// adds the triu of -inf), a mask per query ([B, 1, Sq, Sk], finite), and operands off 16-byte alignment.
//   nvcc -arch=sm_90 -std=c++17 -O2 -I templates/cuda bench/transformers/attention_f32_check.cu -lcublas \
//        -o attention_f32_check
//   ./attention_f32_check      one line per shape: max |kernel - float64| / max |float64| (fused, and the unfused path
//                              with TF32 off for comparison), the median us per launch of the fused kernel and of the
//                              unfused path (TF32 off / on: its launches summed); exits 1 on a CUDA error or a fused
//                              error over 2e-5 (the GPU check's float32 bound is 1e-4 of max |paddle|)
//   ./attention_f32_check quick   the correctness shapes only, no timing
//   ./attention_f32_check tf32 [quick]   the same with the class's TF32 switch on (attention_float's tf32: the TF32
//                              tensor-core kernel): the unfused path's error is then its TF32-on one, and the bound
//                              2e-3 (TF32 rounds operands to 10-bit mantissas: the GEMMs' own errors are near 1e-3)
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "kforge_attention_f32.cuh"

namespace {

enum Mode { kNone, kPadding, kCausal, kRowMask, kUnaligned };
const char* const kModeNames[] = {"no mask", "padding", "causal", "mask per query", "unaligned+padding"};
constexpr int kHeads = 12;
bool g_tf32 = false;  // attention_float's tf32 argument, and the unfused path's math mode for its error

// Deterministic data in [-scale / 2, scale / 2).
void fill(std::vector<float>& x, uint32_t seed, float scale) {
  uint32_t z = seed * 2891336453u + 12345u;
  for (float& e : x) {
    z = z * 747796405u + 2891336453u;
    const uint32_t w = ((z >> ((z >> 28) + 4)) ^ z) * 277803737u;
    e = scale * (float((w >> 22) ^ w) / 4294967296.0f - 0.5f);
  }
}

// [B, S, H, D] <-> [B, H, S, D] (to_heads) for the unfused path.
__global__ void swap_heads(const float* in, float* out, int B, int S, int H, int D, bool to_heads) {
  const int64_t n = int64_t(B) * S * H * D;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int d = int(i % D);
    const int64_t r = i / D;  // in the [B, S, H] order: (b, s, h)
    const int h = int(r % H), s = int((r / H) % S), b = int(r / (int64_t(H) * S));
    const int64_t heads = ((int64_t(b) * H + h) * S + s) * D + d;
    if (to_heads) out[heads] = in[i]; else out[i] = in[heads];
  }
}

// The unfused softmax row kernel: one block per row of the scores [B, H, Sq, Sk], the mask added.
__global__ void softmax_rows(float* s, const float* mask, int64_t m_batch, int64_t m_row, int H, int Sq, int Sk,
                             bool causal) {
  const int64_t row = blockIdx.x;
  const int i = int(row % Sq), b = int(row / (int64_t(H) * Sq));
  float* x = s + row * Sk;
  __shared__ float red[32];
  float m = -INFINITY;
  for (int j = threadIdx.x; j < Sk; j += blockDim.x) {
    float v = x[j];
    if (mask != nullptr) v += mask[b * m_batch + i * m_row + j];
    if (causal && j - i >= Sk - Sq + 1) v = -INFINITY;
    x[j] = v;
    m = fmaxf(m, v);
  }
  for (int o = 16; o > 0; o /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
  if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = m;
  __syncthreads();
  m = -INFINITY;
  for (int w = 0; w < int(blockDim.x / 32); ++w) m = fmaxf(m, red[w]);
  __syncthreads();
  float sum = 0;
  for (int j = threadIdx.x; j < Sk; j += blockDim.x) sum += expf(x[j] - m);
  for (int o = 16; o > 0; o /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, o);
  if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = sum;
  __syncthreads();
  sum = 0;
  for (int w = 0; w < int(blockDim.x / 32); ++w) sum += red[w];
  for (int j = threadIdx.x; j < Sk; j += blockDim.x) x[j] = expf(x[j] - m) / sum;
}

struct Shape {
  int B, Sq, Sk, D;
  Mode mode;
};

// The float64 reference of output row (b, h, i), into ref[0 .. D).
void reference_row(const Shape& s, const std::vector<float>& q, const std::vector<float>& k,
                   const std::vector<float>& v, const std::vector<float>& mask, int64_t m_batch, int64_t m_row,
                   int b, int h, int i, double scale, std::vector<double>& ref) {
  const int D = s.D;
  std::vector<double> p(s.Sk);
  double m = -INFINITY;
  for (int j = 0; j < s.Sk; ++j) {
    double dot = 0;
    for (int d = 0; d < D; ++d) {
      const double x = q[((int64_t(b) * s.Sq + i) * kHeads + h) * D + d];
      dot += x * k[((int64_t(b) * s.Sk + j) * kHeads + h) * D + d];
    }
    double x = dot * scale;
    if (!mask.empty()) x += mask[b * m_batch + i * m_row + j];
    if (s.mode == kCausal && j - i >= s.Sk - s.Sq + 1) x = -INFINITY;
    p[j] = x;
    m = std::max(m, x);
  }
  double sum = 0;
  for (int j = 0; j < s.Sk; ++j) sum += p[j] = std::exp(p[j] - m);
  std::fill(ref.begin(), ref.end(), 0.0);
  for (int j = 0; j < s.Sk; ++j) {
    for (int d = 0; d < D; ++d) ref[d] += p[j] / sum * v[((int64_t(b) * s.Sk + j) * kHeads + h) * D + d];
  }
}

template <typename F>
float median_us(F&& launch) {
  cudaEvent_t t0, t1;
  cudaEventCreate(&t0);
  cudaEventCreate(&t1);
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
  cudaEventDestroy(t0);
  cudaEventDestroy(t1);
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

bool run(cublasHandle_t blas, const Shape& s, bool timed) {
  const int B = s.B, Sq = s.Sq, Sk = s.Sk, D = s.D, H = kHeads;
  const int64_t nq = int64_t(B) * Sq * H * D, nk = int64_t(B) * Sk * H * D;
  const int skew = s.mode == kUnaligned ? 1 : 0;
  const bool per_row = s.mode == kRowMask, masked = s.mode == kPadding || s.mode == kUnaligned || per_row;
  const int64_t m_row = per_row ? Sk : 0, m_batch = (per_row ? Sq : 1) * int64_t(Sk);
  std::vector<float> q(nq), k(nk), v(nk), mask;
  fill(q, 1 + Sq + D, 4.0f), fill(k, 2 + Sk, 4.0f), fill(v, 3 + B, 2.0f);
  if (masked) {
    mask.assign(size_t(B) * m_batch, 0.0f);
    for (int b = 0; b < B; ++b) {
      for (int64_t i = 0; i < (per_row ? Sq : 1); ++i) {
        for (int j = 0; j < Sk; ++j) {
          const bool padded = !per_row && j >= std::max(1, Sk - (7 * b) % std::max(1, Sk / 2));
          mask[b * m_batch + i * m_row + j] = padded ? -INFINITY : per_row ? -float((i * 7 + j * 3) % 11) / 4 : 0.0f;
        }
      }
    }
  }
  float *dq, *dk, *dv, *dout, *dmask = nullptr;
  cudaMalloc(&dq, (nq + 4) * 4), cudaMalloc(&dk, (nk + 4) * 4), cudaMalloc(&dv, (nk + 4) * 4);
  cudaMalloc(&dout, (nq + 4) * 4);
  dq += skew, dk += skew, dv += skew, dout += skew;
  cudaMemcpy(dq, q.data(), nq * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(dk, k.data(), nk * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(dv, v.data(), nk * 4, cudaMemcpyHostToDevice);
  if (masked) {
    cudaMalloc(&dmask, mask.size() * 4);
    cudaMemcpy(dmask, mask.data(), mask.size() * 4, cudaMemcpyHostToDevice);
  }
  const float scale = 1.0f / std::sqrt(float(D));
  kforge::cuda_attention::AttentionArgs a;
  a.q = dq, a.k = dk, a.v = dv, a.out = dout, a.mask = dmask;
  a.batch = B, a.heads = H, a.seq_q = Sq, a.seq_k = Sk;
  a.q_batch = a.o_batch = int64_t(Sq) * H * D;
  a.k_batch = a.v_batch = int64_t(Sk) * H * D;
  a.q_head = a.k_head = a.v_head = a.o_head = D;
  a.q_seq = a.k_seq = a.v_seq = a.o_seq = int64_t(H) * D;
  a.m_batch = m_batch, a.m_head = 0, a.m_row = m_row, a.m_col = 1;
  a.scale = scale;
  if (s.mode == kCausal) a.causal = true, a.diagonal = Sk - Sq + 1;
  auto fused = [&] {
    return D == 16 ? kforge::cuda_attention::attention_float<16>(a, nullptr, g_tf32)
         : D == 32 ? kforge::cuda_attention::attention_float<32>(a, nullptr, g_tf32)
         : D == 64 ? kforge::cuda_attention::attention_float<64>(a, nullptr, g_tf32)
                   : kforge::cuda_attention::attention_float<128>(a, nullptr, g_tf32);
  };
  cudaMemset(dout - skew, 0xff, (nq + 4) * 4);  // NaN: an element the kernel misses fails the check
  const cudaError_t e = fused();
  std::vector<float> got(nq);
  if (e != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess) {
    std::printf("B=%d Sq=%d Sk=%d D=%d: CUDA error %s\n", B, Sq, Sk, D,
                cudaGetErrorString(e != cudaSuccess ? e : cudaGetLastError()));
    return false;
  }
  cudaMemcpy(got.data(), dout, nq * 4, cudaMemcpyDeviceToHost);

  // The unfused path: heads-major copies, cuBLAS products (column-major: S^T[Sk x Sq] = K Q^T), softmax, transpose.
  float *tq, *tk, *tv, *scores, *to;
  cudaMalloc(&tq, nq * 4), cudaMalloc(&tk, nk * 4), cudaMalloc(&tv, nk * 4), cudaMalloc(&to, nq * 4);
  cudaMalloc(&scores, int64_t(B) * H * Sq * Sk * 4);
  auto unfused = [&] {
    swap_heads<<<1024, 256>>>(dq, tq, B, Sq, H, D, true);
    swap_heads<<<1024, 256>>>(dk, tk, B, Sk, H, D, true);
    swap_heads<<<1024, 256>>>(dv, tv, B, Sk, H, D, true);
    const float one = 1.0f, zero = 0.0f;
    cublasSgemmStridedBatched(blas, CUBLAS_OP_T, CUBLAS_OP_N, Sk, Sq, D, &scale, tk, D, int64_t(Sk) * D, tq, D,
                              int64_t(Sq) * D, &zero, scores, Sk, int64_t(Sq) * Sk, B * H);
    softmax_rows<<<unsigned(int64_t(B) * H * Sq), 256>>>(scores, dmask, m_batch, m_row, H, Sq, Sk,
                                                         s.mode == kCausal);
    cublasSgemmStridedBatched(blas, CUBLAS_OP_N, CUBLAS_OP_N, D, Sq, Sk, &one, tv, D, int64_t(Sk) * D, scores, Sk,
                              int64_t(Sq) * Sk, &zero, to, D, int64_t(Sq) * D, B * H);
    swap_heads<<<1024, 256>>>(to, dout, B, Sq, H, D, false);
  };
  cublasSetMathMode(blas, g_tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH);
  unfused();
  std::vector<float> plain(nq);
  if (cudaDeviceSynchronize() != cudaSuccess) {
    std::printf("unfused path: CUDA error %s\n", cudaGetErrorString(cudaGetLastError()));
    return false;
  }
  cudaMemcpy(plain.data(), dout, nq * 4, cudaMemcpyDeviceToHost);

  // float64 on the host: every row at small sizes; at large ones heads 0, 5 and 11 and every third query row.
  const bool all = int64_t(B) * Sq * Sk <= 8 * 128 * 128;
  double err = 0, err_unfused = 0, top = 0;
  std::vector<double> ref(D);
  for (int b = 0; b < B; ++b) {
    for (int h = 0; h < H; ++h) {
      if (!all && h != 0 && h != 5 && h != 11) continue;
      for (int i = 0; i < Sq; ++i) {
        if (!all && i % 3 != 0 && i != Sq - 1) continue;
        reference_row(s, q, k, v, mask, m_batch, m_row, b, h, i, scale, ref);
        for (int d = 0; d < D; ++d) {
          const int64_t at = ((int64_t(b) * Sq + i) * H + h) * D + d;
          err = std::isfinite(got[at]) ? std::max(err, std::fabs(got[at] - ref[d])) : INFINITY;
          err_unfused = std::max(err_unfused, std::fabs(plain[at] - ref[d]));
          top = std::max(top, std::fabs(ref[d]));
        }
      }
    }
  }
  const bool right = err / top <= (g_tf32 ? 2e-3 : 2e-5);
  std::printf("B=%d H=%d Sq=%d Sk=%d D=%d %-18s error %.2e (unfused %.2e)%s", B, H, Sq, Sk, D, kModeNames[s.mode],
              err / top, err_unfused / top, right ? "" : " WRONG");
  if (timed) {
    const float t_fused = median_us(fused);
    cublasSetMathMode(blas, CUBLAS_DEFAULT_MATH);
    const float t_off = median_us(unfused);
    cublasSetMathMode(blas, CUBLAS_TF32_TENSOR_OP_MATH);
    const float t_on = median_us(unfused);
    cublasSetMathMode(blas, CUBLAS_DEFAULT_MATH);
    std::printf("  fused %.1f us, unfused %.1f us (TF32 on %.1f): %.2fx / %.2fx", t_fused, t_off, t_on,
                t_fused / t_off, t_fused / t_on);
  }
  std::printf("\n");
  cudaFree(dq - skew), cudaFree(dk - skew), cudaFree(dv - skew), cudaFree(dout - skew), cudaFree(dmask);
  cudaFree(tq), cudaFree(tk), cudaFree(tv), cudaFree(to), cudaFree(scores);
  return cudaGetLastError() == cudaSuccess && right;
}

}  // namespace

int main(int argc, char** argv) {
  int arg = 1;
  g_tf32 = argc > arg && std::strcmp(argv[arg], "tf32") == 0;
  arg += g_tf32 ? 1 : 0;
  const bool timed = !(argc > arg && std::strcmp(argv[arg], "quick") == 0);
  cublasHandle_t blas;
  if (cublasCreate(&blas) != CUBLAS_STATUS_SUCCESS) return 1;
  bool ok = true;
  // BERT's shapes (12 heads of 64) over lengths that are and are not multiples of the tiles (64 rows, 64 keys).
  for (int B : {1, 8}) {
    for (int S : {1, 2, 17, 63, 64, 65, 128, 129, 200, 384, 512, 600}) {
      for (Mode mode : {kNone, kPadding, kCausal}) ok = run(blas, {B, S, S, 64, mode}, timed) && ok;
    }
  }
  // Decoding (few queries over longer keys), cross-attention lengths, head dims 32, 128 and 16 (the test-sized
  // models'), a mask per query, unaligned operands (the element-wise copies), long sequences (where the pass stops
  // fusing static lengths: 4096).
  const Shape more[] = {{8, 1, 513, 64, kPadding}, {8, 1, 513, 64, kCausal}, {8, 5, 200, 64, kCausal},
                        {2, 70, 100, 64, kPadding}, {2, 70, 100, 64, kCausal}, {2, 200, 200, 32, kPadding},
                        {2, 200, 200, 128, kPadding}, {8, 512, 512, 128, kCausal}, {8, 512, 512, 32, kNone},
                        {2, 200, 130, 64, kRowMask}, {2, 70, 100, 128, kRowMask}, {2, 200, 200, 64, kUnaligned},
                        {2, 9, 70, 32, kUnaligned}, {1, 2048, 2048, 64, kCausal}, {8, 1024, 1024, 64, kPadding},
                        {1, 4096, 4096, 64, kNone},  {2, 40, 40, 16, kPadding},  {2, 30, 30, 16, kCausal},
                        {2, 12, 12, 16, kRowMask}};
  for (const Shape& s : more) ok = run(blas, s, timed) && ok;
  cublasDestroy(blas);
  std::printf(ok ? (g_tf32 ? "all shapes within 2e-3 (TF32)\n" : "all shapes within 2e-5\n") : "FAILED\n");
  return ok ? 0 : 1;
}
