// The float32 attention kernel (templates/cuda/kforge_attention_f32.cuh) run on the host, no GPU needed: every block's
// 128 threads are std::threads, __syncthreads / __syncwarp are barriers, a shuffle goes through an array between two
// warp barriers, cp.async is a plain copy (so the pipelining itself is not checked: bench/transformers/
// attention_f32_check.cu does that on a GPU). tests/e2e/attention_f32_emulated.py writes attention_f32_body.h from
// the templates (the kernels and launchers as they are, AttentionArgs, key_limit and the launch helpers from
// kforge_attention_tile.cuh; the TF32 kernel's cvt and mma emulated below) and builds this with g++; each shape is checked against a float64 reference (64-row and 16-row blocks, aligned copies
// and element-wise ones, every mask form, head dims 4 to 128) and nothing may be written outside the output.
#include <barrier>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>
#include <algorithm>
#include <initializer_list>

struct dim3 { unsigned x = 1, y = 1, z = 1; dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {} };
thread_local dim3 threadIdx, blockIdx;
dim3 gridDim;
thread_local unsigned char* emu_smem;
struct alignas(16) float4 { float x, y, z, w; };
inline float4 make_float4(float a, float b, float c, float d) { return {a, b, c, d}; }
struct alignas(8) float2 { float x, y; };
inline float2 make_float2(float a, float b) { return {a, b}; }
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(x)
typedef int cudaError_t;
typedef void* cudaStream_t;
constexpr int cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaFuncAttributeMaxDynamicSharedMemorySize = 0,
              cudaDevAttrMultiProcessorCount = 0;
int emu_processors = 4;
template <typename K> cudaError_t cudaFuncSetAttribute(K, int, int) { return 0; }
inline cudaError_t cudaGetLastError() { return 0; }
inline cudaError_t cudaGetDevice(int* d) { *d = 0; return 0; }
inline cudaError_t cudaDeviceGetAttribute(int* v, int, int) { *v = emu_processors; return 0; }
std::barrier<>* emu_block;
std::barrier<>* emu_warp[4];
float emu_shfl[4][32];
inline void __syncthreads() { emu_block->arrive_and_wait(); }
inline void __syncwarp() { emu_warp[threadIdx.x / 32]->arrive_and_wait(); }
inline float __shfl_xor_sync(unsigned, float x, int m) {
  const int w = threadIdx.x / 32, l = threadIdx.x % 32;
  emu_shfl[w][l] = x;
  __syncwarp();
  const float y = emu_shfl[w][l ^ m];
  __syncwarp();
  return y;
}
inline void __pipeline_memcpy_async(void* d, const void* s, size_t n) { std::memcpy(d, s, n); }
inline void __pipeline_commit() {}
inline void __pipeline_wait_prior(int) {}
inline float __fmul_rn(float a, float b) { volatile float r = a * b; return r; }
inline float __fadd_rn(float a, float b) { volatile float r = a + b; return r; }
inline float fmaxf(float a, float b) { return std::fmax(a, b); }

// cvt.rna.tf32.f32: the float rounded to 10 mantissa bits, to nearest with ties away from zero (finite values).
inline uint32_t emu_to_tf32(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  return std::isfinite(x) ? (bits + 0x1000u) & ~0x1fffu : bits;
}
inline float emu_tf32_value(uint32_t bits) {
  bits &= ~0x1fffu;  // the tensor core reads 10 mantissa bits
  float x;
  std::memcpy(&x, &bits, 4);
  return x;
}
// mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 over one warp: every lane publishes its fragments, then
// computes its four results (lane = 4 g + t: a rows g, g + 8 at columns t, t + 4; b column g at rows t, t + 4;
// c rows g, g + 8 at columns 2 t, 2 t + 1), the products summed in order of k in double and rounded once.
uint32_t emu_a[4][32][4], emu_b[4][32][2];
inline void emu_mma_tf32(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  const int w = threadIdx.x / 32, l = threadIdx.x % 32, g = l / 4, t = l % 4;
  for (int i = 0; i < 4; ++i) emu_a[w][l][i] = a[i];
  emu_b[w][l][0] = b0, emu_b[w][l][1] = b1;
  __syncwarp();
  auto A = [&](int row, int k) {  // the lane holding (row, k) of A
    const int lane = 4 * (row % 8) + k % 4;
    return emu_tf32_value(emu_a[w][lane][(row / 8) + 2 * (k / 4)]);
  };
  auto B = [&](int k, int col) { return emu_tf32_value(emu_b[w][4 * col + k % 4][k / 4]); };
  for (int i = 0; i < 4; ++i) {
    const int row = g + 8 * (i / 2), col = 2 * t + i % 2;
    double acc = c[i];
    for (int k = 0; k < 8; ++k) acc += double(A(row, k)) * B(k, col);
    c[i] = float(acc);
  }
  __syncwarp();
}

#include "attention_f32_args.h"

template <typename K, typename A>
void emu_launch(K kernel, dim3 grid, size_t bytes, const A& a) {
  gridDim = grid;
  for (unsigned by = 0; by < grid.y; ++by) {
    for (unsigned bx = 0; bx < grid.x; ++bx) {
      std::vector<float> smem(bytes / 4 + 4, std::nanf(""));
      std::barrier<> block(128);
      std::barrier<> w0(32), w1(32), w2(32), w3(32);
      emu_block = &block;
      emu_warp[0] = &w0, emu_warp[1] = &w1, emu_warp[2] = &w2, emu_warp[3] = &w3;
      std::vector<std::thread> ts;
      for (unsigned t = 0; t < 128; ++t) {
        ts.emplace_back([&, t] {
          threadIdx = dim3(t);
          blockIdx = dim3(bx, by);
          emu_smem = reinterpret_cast<unsigned char*>(smem.data());
          kernel(a);
        });
      }
      for (auto& t : ts) t.join();
    }
  }
}

#include "attention_f32_body.h"

using kforge::cuda_attention::AttentionArgs;
enum Mode { kNone, kPadding, kCausal, kRowMask, kUnaligned };

// tf32: attention_float's switch (the TF32 kernel where D is a multiple of 8 and Sq > 16), checked within 2e-3.
template <int D>
bool run(int B, int H, int Sq, int Sk, Mode mode, int processors, bool tf32 = false) {
  emu_processors = processors;
  const int64_t nq = int64_t(B) * Sq * H * D, nk = int64_t(B) * Sk * H * D;
  const int skew = mode == kUnaligned ? 1 : 0;
  std::vector<float> qb(nq + 8), kb(nk + 8), vb(nk + 8), ob(nq + 8, std::nanf(""));
  float *q = qb.data() + skew, *k = kb.data() + skew, *v = vb.data() + skew, *o = ob.data() + skew;
  uint32_t z = 1;
  auto rnd = [&] { z = z * 1664525u + 1013904223u; return float(z >> 8) / 16777216.0f - 0.5f; };
  for (int64_t i = 0; i < nq; ++i) q[i] = 4 * rnd();
  for (int64_t i = 0; i < nk; ++i) k[i] = 4 * rnd(), v[i] = 2 * rnd();
  const bool per_row = mode == kRowMask, masked = mode == kPadding || mode == kUnaligned || per_row;
  const int64_t m_row = per_row ? Sk : 0, m_batch = (per_row ? Sq : 1) * int64_t(Sk);
  std::vector<float> mask(masked ? B * m_batch : 0);
  for (int b = 0; b < B && masked; ++b)
    for (int64_t i = 0; i < (per_row ? Sq : 1); ++i)
      for (int j = 0; j < Sk; ++j)
        mask[b * m_batch + i * m_row + j] = (!per_row && j >= std::max(1, Sk - 3 * b)) ? -INFINITY
                                           : per_row ? -float((i * 7 + j * 3) % 11) / 4 : 0.0f;
  AttentionArgs a;
  a.q = q, a.k = k, a.v = v, a.out = o, a.mask = masked ? mask.data() : nullptr;
  a.batch = B, a.heads = H, a.seq_q = Sq, a.seq_k = Sk;
  a.q_batch = a.o_batch = int64_t(Sq) * H * D;
  a.k_batch = a.v_batch = int64_t(Sk) * H * D;
  a.q_head = a.k_head = a.v_head = a.o_head = D;
  a.q_seq = a.k_seq = a.v_seq = a.o_seq = int64_t(H) * D;
  a.m_batch = m_batch, a.m_row = m_row, a.m_col = 1;
  a.scale = 1.0f / std::sqrt(float(D));
  if (mode == kCausal) a.causal = true, a.diagonal = Sk - Sq + 1;
  if (kforge::cuda_attention::attention_float<D>(a, nullptr, tf32) != 0) { std::printf("launch error\n"); return false; }
  double err = 0, top = 0;
  for (int b = 0; b < B; ++b) for (int h = 0; h < H; ++h) for (int i = 0; i < Sq; ++i) {
    std::vector<double> p(Sk), ref(D, 0.0);
    double m = -INFINITY;
    for (int j = 0; j < Sk; ++j) {
      double dot = 0;
      for (int d = 0; d < D; ++d) dot += double(q[((int64_t(b) * Sq + i) * H + h) * D + d]) * k[((int64_t(b) * Sk + j) * H + h) * D + d];
      double x = dot * a.scale;
      if (masked) x += mask[b * m_batch + i * m_row + j];
      if (mode == kCausal && j - i >= a.diagonal) x = -INFINITY;
      p[j] = x; m = std::max(m, x);
    }
    double sum = 0;
    for (int j = 0; j < Sk; ++j) sum += p[j] = std::exp(p[j] - m);
    for (int j = 0; j < Sk; ++j) for (int d = 0; d < D; ++d) ref[d] += p[j] / sum * v[((int64_t(b) * Sk + j) * H + h) * D + d];
    for (int d = 0; d < D; ++d) {
      const double g = o[((int64_t(b) * Sq + i) * H + h) * D + d];
      err = std::isfinite(g) ? std::max(err, std::fabs(g - ref[d])) : INFINITY;
      top = std::max(top, std::fabs(ref[d]));
    }
  }
  // nothing written outside the output
  bool fence = std::isnan(ob[0]) || skew == 0;
  for (int64_t i = nq + skew; i < nq + 8; ++i) fence = fence && std::isnan(ob[i]);
  const bool ok = err / top <= (tf32 ? 2e-3 : 2e-5) && fence;
  std::printf("D=%d B=%d H=%d Sq=%d Sk=%d mode=%d procs=%d%s: rel err %.2e%s%s\n", D, B, H, Sq, Sk, int(mode),
              processors, tf32 ? " tf32" : "", err / top, fence ? "" : " WROTE OUTSIDE", ok ? "" : " WRONG");
  return ok;
}

int main() {
  bool ok = true;
  for (int procs : {1, 1000}) {  // 1: 64-row blocks where Sq > 16; 1000: 16-row blocks
    ok = run<64>(2, 2, 70, 70, kPadding, procs) && ok;
    ok = run<64>(1, 2, 130, 130, kCausal, procs) && ok;
    ok = run<64>(1, 1, 65, 100, kNone, procs) && ok;
    ok = run<16>(2, 2, 12, 12, kPadding, procs) && ok;
    ok = run<16>(2, 1, 30, 30, kCausal, procs) && ok;
    ok = run<4>(2, 2, 5, 5, kCausal, procs) && ok;
    ok = run<48>(1, 2, 20, 33, kRowMask, procs) && ok;
    ok = run<128>(1, 1, 40, 70, kRowMask, procs) && ok;
    ok = run<32>(1, 2, 17, 70, kUnaligned, procs) && ok;
    ok = run<64>(2, 1, 1, 129, kPadding, procs) && ok;
  }
  // The TF32 kernel (64 query rows a block, 4 warps of 16): tails of rows and keys, every mask form, head dims 8-128.
  ok = run<64>(2, 2, 70, 70, kPadding, 1, true) && ok;
  ok = run<64>(1, 2, 130, 130, kCausal, 1, true) && ok;
  ok = run<8>(1, 1, 33, 40, kNone, 1, true) && ok;
  ok = run<48>(1, 2, 20, 33, kRowMask, 1, true) && ok;
  ok = run<128>(1, 1, 40, 70, kRowMask, 1, true) && ok;
  ok = run<32>(1, 2, 17, 70, kUnaligned, 1, true) && ok;
  std::printf(ok ? "ALL OK\n" : "FAILED\n");
  return ok ? 0 : 1;
}
