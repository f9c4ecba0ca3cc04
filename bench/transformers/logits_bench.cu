// A language model's output projection, C[M, N] = A[M, K] W[N, K]^T with a vocabulary N that is not a multiple of
// 16 bytes (GPT-2's 50257 logits, K 768), three ways through kforge_cublaslt.cuh: in place by phases of rows
// (cublaslt_gemm_phased_n, what cublaslt_gemm runs where it can), at a padded N with the rows compacted after
// (cublaslt_gemm_padded_n, the fallback), and at N as it is (cuBLASLt's alignment-1 kernels). Each is captured in
// a CUDA graph and replayed (median of 30); the phased result is compared with the padded one element by element.
//   nvcc -arch=sm_90 -std=c++17 -O2 -I templates/cuda bench/transformers/logits_bench.cu -lcublasLt -o logits_bench
//   ./logits_bench [M ...]     default M: 128 1024 8192 (batch x sequence)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "kforge_cublaslt.cuh"
#include "bench_fill.cuh"
#include "bench_graph.cuh"

namespace {

using kforge::cuda_gemm::CublasLtGemm;
using kforge::cuda_gemm::Epilogue;

template <typename T>
void compare(int M, int N, int K, const char* name, cudaDataType_t type, cudaStream_t s) {
  CublasLtGemm lt(size_t(32) << 20, type);
  T *a, *w, *phased, *padded;
  CHECK(cudaMalloc(&a, size_t(M) * K * sizeof(T)));
  CHECK(cudaMalloc(&w, size_t(N) * K * sizeof(T)));
  CHECK(cudaMalloc(&phased, size_t(M) * N * sizeof(T)));
  CHECK(cudaMalloc(&padded, size_t(M) * N * sizeof(T)));
  fill<<<256, 256>>>(a, int64_t(M) * K, 1, 2.0f);
  fill<<<256, 256>>>(w, int64_t(N) * K, 2, 0.1f);
  const int64_t n_pad = CublasLtGemm::padded_n(M, N, sizeof(T));
  if (n_pad == 0) {
    std::printf("%s M %5d: N %d needs no padding\n", name, M, N);
    return;
  }
  T* buffer = static_cast<T*>(lt.padded_buffer(kforge::cuda_gemm::cublaslt_padded_elements(M, K, n_pad) * sizeof(T), s));
  const bool can_phase = kforge::cuda_gemm::cublaslt_can_run_phased_n(lt, a, w, phased, M, N, K, false, true);
  const float t_phased = !can_phase ? -1.0f : time_graph(s, 1, 30, [&] {
    CHECK(kforge::cuda_gemm::cublaslt_gemm_phased_n(lt, a, w, phased, M, N, K, s));
  });
  const float t_padded = time_graph(s, 1, 30, [&] {
    CHECK(kforge::cuda_gemm::cublaslt_gemm_padded_n(lt, a, w, padded, M, N, K, n_pad, false, true, buffer, s));
  });
  const bool can_direct = lt.can_run(M, N, K, Epilogue::kNone, nullptr, 0, false, true, a, w, phased);
  const float t_direct = !can_direct ? -1.0f : time_graph(s, 1, 30, [&] {
    if (lt.run(a, w, phased, nullptr, M, N, K, Epilogue::kNone, s, 0, false, true) != CUBLAS_STATUS_SUCCESS) std::exit(2);
  });
  if (can_phase) {  // the direct run overwrote it
    CHECK(kforge::cuda_gemm::cublaslt_gemm_phased_n(lt, a, w, phased, M, N, K, s));
  }
  CHECK(cudaStreamSynchronize(s));
  std::vector<T> x(size_t(M) * N), y(x.size());
  CHECK(cudaMemcpy(x.data(), phased, x.size() * sizeof(T), cudaMemcpyDeviceToHost));
  CHECK(cudaMemcpy(y.data(), padded, y.size() * sizeof(T), cudaMemcpyDeviceToHost));
  float diff = 0, top = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    diff = std::max(diff, std::fabs(float(x[i]) - float(y[i])));
    top = std::max(top, std::fabs(float(y[i])));
  }
  std::printf("%s M %5d N %d K %d: phased %8.1f us, padded + compacted %8.1f us, unaligned %8.1f us; "
              "phased / padded %.3f; max |phased - padded| %.3g of max %.3g\n",
              name, M, N, K, t_phased, t_padded, t_direct, t_phased / t_padded, diff, top);
  cudaFree(a);
  cudaFree(w);
  cudaFree(phased);
  cudaFree(padded);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> ms;
  for (int i = 1; i < argc; ++i) ms.push_back(std::atoi(argv[i]));
  if (ms.empty()) ms = {128, 1024, 8192};
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  for (int M : ms) {
    compare<__half>(M, 50257, 768, "float16 ", CUDA_R_16F, s);
    compare<__nv_bfloat16>(M, 50257, 768, "bfloat16", CUDA_R_16BF, s);
    compare<__half>(M, 32002, 768, "float16 ", CUDA_R_16F, s);  // N = 2 mod 8: four phases
  }
  return 0;
}
