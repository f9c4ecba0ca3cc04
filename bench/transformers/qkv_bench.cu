// The q, k and v projections of an attention layer as three GEMMs (one per weight, bias in cuBLASLt's epilogue, as
// kforge's GEMM groups run them) against one strided-batched GEMM over the three weights packed side by side (A read
// for every product: stride 0; the biases through CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE), float16, each captured
// in a CUDA graph of 12 layers' worth and replayed: the saving kforge's packed sibling GEMMs are built for.
//   nvcc -arch=sm_90 -std=c++17 -O2 -I templates/cuda bench/transformers/qkv_bench.cu -lcublasLt -o qkv_bench
//   ./qkv_bench     per M (batch x sequence): us per layer of each form, their ratio, max |batched - three|
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "kforge_cublaslt.cuh"
#include "bench_fill.cuh"
#include "bench_graph.cuh"

int main() {
  using kforge::cuda_gemm::Batch;
  using kforge::cuda_gemm::CublasLtGemm;
  using kforge::cuda_gemm::Epilogue;
  const int K = 768, N = 768;
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  CublasLtGemm lt(size_t(32) << 20, CUDA_R_16F);
  for (int M : {128, 1024, 4096}) {
    __half *x, *w, *bias, *out3, *outb;
    CHECK(cudaMalloc(&x, size_t(M) * K * 2));
    CHECK(cudaMalloc(&w, size_t(3) * K * N * 2));
    CHECK(cudaMalloc(&bias, size_t(3) * N * 2));
    CHECK(cudaMalloc(&out3, size_t(3) * M * N * 2));
    CHECK(cudaMalloc(&outb, size_t(3) * M * N * 2));
    fill<<<256, 256>>>(x, int64_t(M) * K, 1, 2.0f);
    fill<<<256, 256>>>(w, int64_t(3) * K * N, 2, 0.1f);
    fill<<<256, 256>>>(bias, 3 * N, 3, 1.0f);
    auto three = [&] {
      for (int i = 0; i < 3; ++i) {
        CHECK(kforge::cuda_gemm::cublaslt_gemm(lt, x, w + size_t(i) * K * N, out3 + size_t(i) * M * N,
                                               bias + i * N, M, N, K, Epilogue::kBias, false, false, s));
      }
    };
    Batch batch{3, 0, int64_t(K) * N, int64_t(M) * N};
    batch.stride_bias = N;
    auto packed = [&] {
      CHECK(kforge::cuda_gemm::cublaslt_gemm_batched(lt, x, w, outb, bias, M, N, K, Epilogue::kBias, batch, false, false, s));
    };
    const float t3 = time_graph(s, 12, 50, three), tb = time_graph(s, 12, 50, packed);
    std::vector<__half> a(size_t(3) * M * N), b(a.size());
    CHECK(cudaMemcpy(a.data(), out3, a.size() * 2, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(b.data(), outb, b.size() * 2, cudaMemcpyDeviceToHost));
    float diff = 0, top = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      diff = std::max(diff, std::fabs(__half2float(a[i]) - __half2float(b[i])));
      top = std::max(top, std::fabs(__half2float(a[i])));
    }
    std::printf("M %5d: three GEMMs %7.2f us, one batched %7.2f us, ratio %.3f, max |diff| %.3g of max %.3g\n", M,
                t3, tb, tb / t3, diff, top);
    cudaFree(x);
    cudaFree(w);
    cudaFree(bias);
    cudaFree(out3);
    cudaFree(outb);
  }
  return 0;
}
