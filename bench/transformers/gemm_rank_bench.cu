// cuBLASLt's ranked algorithms against its first choice, at the GEMMs of a BERT-base / GPT-2 layer in float16: for
// each product (q/k/v as one batch of 3, the output projection, the FFN's two with their epilogues) and each M
// (batch x sequence), every rank the heuristic offers (kforge_cublaslt.cuh's algo_index 0..7) is captured in a CUDA
// graph and replayed (median of 30, 20 products a replay). Prints each rank's time, the fastest, and the layer's sum
// at rank 0 against the per-product fastest: what a per-shape choice among the ranks could gain.
//   nvcc -arch=sm_90 -std=c++17 -O2 -I templates/cuda bench/transformers/gemm_rank_bench.cu -lcublasLt -o gemm_rank_bench
//   ./gemm_rank_bench [M ...]     default M: 128 512 1024 4096 8192
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "kforge_cublaslt.cuh"
#include "bench_fill.cuh"
#include "bench_graph.cuh"

namespace {

using kforge::cuda_gemm::Batch;
using kforge::cuda_gemm::CublasLtGemm;
using kforge::cuda_gemm::Epilogue;

struct Product {
  const char* name;
  int N, K, count;
  Epilogue epilogue;
};

// Times every rank of one product; returns {rank 0's time, the fastest time}.
std::pair<float, float> time_ranks(CublasLtGemm& lt, const Product& p, int M, cudaStream_t s) {
  __half *a, *b, *c, *bias;
  const size_t count = size_t(p.count);
  CHECK(cudaMalloc(&a, size_t(M) * p.K * sizeof(__half)));
  CHECK(cudaMalloc(&b, count * p.K * p.N * sizeof(__half)));
  CHECK(cudaMalloc(&c, count * M * p.N * sizeof(__half)));
  CHECK(cudaMalloc(&bias, count * p.N * sizeof(__half)));
  fill<<<256, 256>>>(a, int64_t(M) * p.K, 1, 2.0f);
  fill<<<256, 256>>>(b, int64_t(count) * p.K * p.N, 2, 0.1f);
  fill<<<256, 256>>>(bias, int64_t(count) * p.N, 3, 0.5f);
  Batch batch;
  batch.count = p.count;
  batch.stride_b = int64_t(p.K) * p.N;
  batch.stride_c = int64_t(M) * p.N;
  batch.stride_bias = p.N;
  std::printf("%-8s M %5d N %5d K %5d x%d:", p.name, M, p.N, p.K, p.count);
  float first = 0, best = 1e30f;
  int best_rank = 0;
  for (int rank = 0; rank < CublasLtGemm::kMaxAlgos; ++rank) {
    if (!lt.can_run(M, p.N, p.K, p.epilogue, bias, rank, false, false, a, b, c, batch)) break;
    const float us = time_graph(s, 20, 30, [&] {
      if (lt.run(a, b, c, bias, M, p.N, p.K, p.epilogue, s, rank, false, false, batch) != CUBLAS_STATUS_SUCCESS) {
        std::printf(" run failed (rank %d)\n", rank);
        std::exit(1);
      }
    });
    std::printf(" %7.2f", us);
    if (rank == 0) first = us;
    if (us < best) best = us, best_rank = rank;
  }
  std::printf("  | best rank %d: %.2f us (%.3fx)\n", best_rank, best, best / first);
  CHECK(cudaFree(a));
  CHECK(cudaFree(b));
  CHECK(cudaFree(c));
  CHECK(cudaFree(bias));
  return {first, best};
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> ms;
  for (int i = 1; i < argc; ++i) ms.push_back(std::atoi(argv[i]));
  if (ms.empty()) ms = {128, 512, 1024, 4096, 8192};
  cudaStream_t s;
  CHECK(cudaStreamCreate(&s));
  CublasLtGemm lt(size_t(32) << 20, CUDA_R_16F);
  const Product layer[] = {{"qkv", 768, 768, 3, Epilogue::kBias},
                           {"out", 768, 768, 1, Epilogue::kBias},
                           {"ffn1", 3072, 768, 1, Epilogue::kBiasGeluTanh},
                           {"ffn2", 768, 3072, 1, Epilogue::kBias}};
  for (int M : ms) {
    float first = 0, best = 0;
    for (const Product& p : layer) {
      const auto [f, b] = time_ranks(lt, p, M, s);
      first += f;
      best += b;
    }
    std::printf("layer M %5d: rank 0 %.2f us, per-product fastest %.2f us (%.3fx)\n\n", M, first, best, best / first);
  }
  return 0;
}
