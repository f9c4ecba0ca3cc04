// What programmatic dependent launch (PDL, Hopper) would save between a BERT-base layer's kernels in a CUDA graph.
// A float16 layer as kforge launches it at a given M (batch x sequence): cuBLASLt's q / k / v product (one batch of
// 3), a row kernel standing for the attention (reads the three, writes [M, 768]), the output projection, a residual
// add + layer norm row kernel, the FFN's two products (GELU_BIAS epilogue on the first), a second add + layer norm.
// 12 layers in one graph, replayed (median of 30). The three row kernels are launched either plainly or with
// cudaLaunchAttributeProgrammaticStreamSerialization, in which case each waits for its producer with
// cudaGridDependencySynchronize() before reading (so the results are the same) and can be scheduled while the
// producer's last blocks drain (the products stay plain launches: cuBLASLt launches its own kernels). Plain and PDL
// alternate twice per M; the check is that both give the same bits.
//   nvcc -arch=sm_90 -std=c++17 -O2 -I templates/cuda bench/transformers/pdl_bench.cu -lcublasLt -o pdl_bench
//   ./pdl_bench [M ...]     default M: 128 1024 4096
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "kforge_cublaslt.cuh"
#include "bench_fill.cuh"
#include "bench_graph.cuh"

namespace {

using kforge::cuda_gemm::Batch;
using kforge::cuda_gemm::CublasLtGemm;
using kforge::cuda_gemm::Epilogue;

constexpr int kD = 768, kFfn = 3072, kLayers = 12;

__device__ __forceinline__ void wait_for_producer(bool pdl) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (pdl) cudaGridDependencySynchronize();
#endif
}

// Stands for the attention: out[m, j] = q[m, j] + k[m, j] * v[m, j] (q, k, v: the three products' outputs).
__global__ void mix_qkv(const __half* qkv, __half* out, int M, bool pdl) {
  wait_for_producer(pdl);
  const int64_t n = int64_t(M) * kD;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const float q = __half2float(qkv[i]), k = __half2float(qkv[n + i]), v = __half2float(qkv[2 * n + i]);
    out[i] = __float2half(q + k * v);
  }
}

// y = layer_norm(x + r) over rows of kD, one block of 256 threads per row (3 values a thread).
__global__ void add_layer_norm(const __half* x, const __half* r, __half* y, bool pdl) {
  wait_for_producer(pdl);
  const int row = blockIdx.x;
  float v[3], sum = 0, sq = 0;
  for (int j = 0; j < 3; ++j) {
    const int64_t i = int64_t(row) * kD + threadIdx.x + 256 * j;
    v[j] = __half2float(x[i]) + __half2float(r[i]);
    sum += v[j];
    sq += v[j] * v[j];
  }
  __shared__ float s_sum[8], s_sq[8];
  for (int o = 16; o > 0; o /= 2) {
    sum += __shfl_xor_sync(0xffffffffu, sum, o);
    sq += __shfl_xor_sync(0xffffffffu, sq, o);
  }
  if (threadIdx.x % 32 == 0) s_sum[threadIdx.x / 32] = sum, s_sq[threadIdx.x / 32] = sq;
  __syncthreads();
  sum = sq = 0;
  for (int w = 0; w < 8; ++w) sum += s_sum[w], sq += s_sq[w];
  const float mean = sum / kD, inv = rsqrtf(sq / kD - mean * mean + 1e-5f);
  for (int j = 0; j < 3; ++j) y[int64_t(row) * kD + threadIdx.x + 256 * j] = __float2half((v[j] - mean) * inv);
}

template <typename... Params, typename... Args>
void launch(bool pdl, void (*kernel)(Params...), dim3 grid, dim3 block, cudaStream_t s, Args... args) {
  cudaLaunchConfig_t config = {};
  config.gridDim = grid;
  config.blockDim = block;
  config.stream = s;
  cudaLaunchAttribute attribute[1];
  attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attribute[0].val.programmaticStreamSerializationAllowed = 1;
  config.attrs = attribute;
  config.numAttrs = pdl ? 1 : 0;
  CHECK(cudaLaunchKernelEx(&config, kernel, args...));
}

struct Layer {
  __half *x, *qkv, *mixed, *proj, *h, *f, *g;
  __half *w_qkv, *w_out, *w_ffn1, *w_ffn2, *b_qkv, *b_out, *b_ffn1, *b_ffn2;
};

void gemm(CublasLtGemm& lt, const __half* a, const __half* b, __half* c, const __half* bias, int M, int N, int K,
          Epilogue e, cudaStream_t s, const Batch& batch = Batch{}) {
  if (lt.run(a, b, c, bias, M, N, K, e, s, 0, false, false, batch) != CUBLAS_STATUS_SUCCESS) {
    std::printf("cuBLASLt failed at M %d N %d K %d\n", M, N, K);
    std::exit(1);
  }
}

// One layer; its output is the next layer's x (in place of `out`).
void run_layer(CublasLtGemm& lt, const Layer& l, __half* out, int M, bool pdl, cudaStream_t s) {
  Batch three;
  three.count = 3;
  three.stride_b = int64_t(kD) * kD;
  three.stride_c = int64_t(M) * kD;
  three.stride_bias = kD;
  gemm(lt, l.x, l.w_qkv, l.qkv, l.b_qkv, M, kD, kD, Epilogue::kBias, s, three);
  launch(pdl, mix_qkv, dim3(264), dim3(256), s, (const __half*)l.qkv, l.mixed, M, pdl);
  gemm(lt, l.mixed, l.w_out, l.proj, l.b_out, M, kD, kD, Epilogue::kBias, s);
  launch(pdl, add_layer_norm, dim3(M), dim3(256), s, (const __half*)l.proj, (const __half*)l.x, l.h, pdl);
  gemm(lt, l.h, l.w_ffn1, l.f, l.b_ffn1, M, kFfn, kD, Epilogue::kBiasGeluTanh, s);
  gemm(lt, l.f, l.w_ffn2, l.g, l.b_ffn2, M, kD, kFfn, Epilogue::kBias, s);
  launch(pdl, add_layer_norm, dim3(M), dim3(256), s, (const __half*)l.g, (const __half*)l.h, out, pdl);
}

__half* alloc(size_t n, uint32_t seed, float scale) {
  __half* p;
  CHECK(cudaMalloc(&p, n * sizeof(__half)));
  fill<<<256, 256>>>(p, int64_t(n), seed, scale);
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> ms;
  for (int i = 1; i < argc; ++i) ms.push_back(std::atoi(argv[i]));
  if (ms.empty()) ms = {128, 1024, 4096};
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  CublasLtGemm lt(size_t(32) << 20, CUDA_R_16F);
  for (int M : ms) {
    Layer l;
    l.w_qkv = alloc(size_t(3) * kD * kD, 1, 0.07f);
    l.w_out = alloc(size_t(kD) * kD, 2, 0.07f);
    l.w_ffn1 = alloc(size_t(kD) * kFfn, 3, 0.07f);
    l.w_ffn2 = alloc(size_t(kFfn) * kD, 4, 0.035f);
    l.b_qkv = alloc(3 * kD, 5, 0.1f);
    l.b_out = alloc(kD, 6, 0.1f);
    l.b_ffn1 = alloc(kFfn, 7, 0.1f);
    l.b_ffn2 = alloc(kD, 8, 0.1f);
    __half* input = alloc(size_t(M) * kD, 9, 2.0f);
    l.x = alloc(size_t(M) * kD, 9, 2.0f);
    l.qkv = alloc(size_t(3) * M * kD, 0, 0);
    l.mixed = alloc(size_t(M) * kD, 0, 0);
    l.proj = alloc(size_t(M) * kD, 0, 0);
    l.h = alloc(size_t(M) * kD, 0, 0);
    l.f = alloc(size_t(M) * kFfn, 0, 0);
    l.g = alloc(size_t(M) * kD, 0, 0);
    std::vector<__half> result[2];
    float times[2][2];
    for (int round = 0; round < 2; ++round) {
      for (int pdl = 0; pdl < 2; ++pdl) {
        // 12 layers per replay, each reading the last one's output (x is rewritten in place by the last row kernel).
        times[round][pdl] = time_graph(s, 1, 30, [&] {
          CHECK(cudaMemcpyAsync(l.x, input, size_t(M) * kD * sizeof(__half), cudaMemcpyDeviceToDevice, s));
          for (int layer = 0; layer < kLayers; ++layer) run_layer(lt, l, l.x, M, pdl != 0, s);
        });
        result[pdl].resize(size_t(M) * kD);
        CHECK(cudaStreamSynchronize(s));
        CHECK(cudaMemcpy(result[pdl].data(), l.x, size_t(M) * kD * sizeof(__half), cudaMemcpyDeviceToHost));
      }
    }
    const bool same = std::memcmp(result[0].data(), result[1].data(), result[0].size() * sizeof(__half)) == 0;
    std::printf("M %5d, 12 layers: plain %8.2f / %8.2f us, PDL row kernels %8.2f / %8.2f us (%.3fx, %.3fx); %s\n", M,
                times[0][0], times[1][0], times[0][1], times[1][1], times[0][1] / times[0][0],
                times[1][1] / times[1][0], same ? "same bits" : "RESULTS DIFFER");
    for (__half* p : {l.w_qkv, l.w_out, l.w_ffn1, l.w_ffn2, l.b_qkv, l.b_out, l.b_ffn1, l.b_ffn2, input, l.x, l.qkv,
                      l.mixed, l.proj, l.h, l.f, l.g})
      CHECK(cudaFree(p));
  }
  return 0;
}
