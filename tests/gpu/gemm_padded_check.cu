// cublaslt_gemm with an N that is not a multiple of 16 bytes against a float reference on the host, both of its
// ways: in place by phases of rows (cublaslt_gemm_phased_n: B stored [N, K], K a multiple of 16 bytes, M large) and
// at a padded N (CublasLtGemm::padded_n: B padded, the product at the padded N, its rows copied out; B stored [K, N],
// K unaligned or M small), in float16, bfloat16 and float32, with and without a bias, M and N of every phase
// remainder, and under a CUDA graph capture after cublaslt_gemm_prepare (nothing allocated inside it). GPU machine:
//   nvcc -arch=sm_90 -std=c++17 -O2 -I templates/cuda -I templates/runtime tests/gpu/gemm_padded_check.cu
//        -lcublasLt -lcublas -o gemm_padded_check && ./gemm_padded_check      (one command line)
#include <cstdio>
#include <cmath>
#include <random>
#include <vector>

#include "kforge_cublaslt.cuh"

using namespace kforge::cuda_gemm;

template <typename T>
float to_float(T v) { return static_cast<float>(v); }

template <typename T>
int check(const char* name, cudaDataType_t type, int M, int N, int K, bool with_bias, bool graph, bool tb = true) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<T> a(size_t(M) * K), b(size_t(N) * K), bias(N);
  for (auto& v : a) v = T(u(rng));
  for (auto& v : b) v = T(u(rng));
  for (auto& v : bias) v = T(u(rng));
  T *da, *db, *dc, *dbias;
  cudaMalloc(&da, a.size() * sizeof(T));
  cudaMalloc(&db, b.size() * sizeof(T));
  cudaMalloc(&dc, size_t(M) * N * sizeof(T));
  cudaMalloc(&dbias, N * sizeof(T));
  cudaMemcpy(da, a.data(), a.size() * sizeof(T), cudaMemcpyHostToDevice);
  cudaMemcpy(db, b.data(), b.size() * sizeof(T), cudaMemcpyHostToDevice);
  cudaMemcpy(dbias, bias.data(), N * sizeof(T), cudaMemcpyHostToDevice);
  CublasLtGemm lt(size_t(32) << 20, type);
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  const Epilogue epilogue = with_bias ? Epilogue::kBias : Epilogue::kNone;
  cudaError_t e = cudaSuccess;
  if (graph) {
    cublaslt_gemm_prepare(lt, da, db, dc, with_bias ? dbias : nullptr, M, N, K, epilogue, false, tb);
    cudaGraph_t g;
    cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal);
    e = cublaslt_gemm(lt, da, db, dc, with_bias ? dbias : nullptr, M, N, K, epilogue, false, tb, stream);
    cudaStreamEndCapture(stream, &g);
    cudaGraphExec_t exec;
    if (e == cudaSuccess) e = cudaGraphInstantiate(&exec, g, 0);
    if (e == cudaSuccess) e = cudaGraphLaunch(exec, stream);
  } else {
    e = cublaslt_gemm(lt, da, db, dc, with_bias ? dbias : nullptr, M, N, K, epilogue, false, tb, stream);
  }
  cudaStreamSynchronize(stream);
  if (e != cudaSuccess || cudaGetLastError() != cudaSuccess) {
    std::printf("FAIL %s M %d N %d K %d: %s\n", name, M, N, K, cudaGetErrorString(e));
    return 1;
  }
  std::vector<T> c(size_t(M) * N);
  cudaMemcpy(c.data(), dc, c.size() * sizeof(T), cudaMemcpyDeviceToHost);
  double worst = 0, scale = 0;
  for (int i = 0; i < M; i += std::max(1, M / 16)) {
    for (int j = 0; j < N; ++j) {
      double ref = with_bias ? to_float(bias[j]) : 0.0;
      for (int k = 0; k < K; ++k) {
        ref += double(to_float(a[size_t(i) * K + k])) * to_float(tb ? b[size_t(j) * K + k] : b[size_t(k) * N + j]);
      }
      worst = std::max(worst, std::fabs(ref - to_float(c[size_t(i) * N + j])));
      scale = std::max(scale, std::fabs(ref));
    }
  }
  const double bound = (sizeof(T) == 2 ? 1e-2 : 1e-5) * scale;
  const bool ok = worst <= bound;
  const bool padded = CublasLtGemm::padded_n(M, N, sizeof(T)) > 0;
  const char* way = !padded ? "as it is" : cublaslt_prefers_phased_n(lt, da, db, dc, M, N, K, false, tb) ? "phased" : "padded";
  std::printf("%s %s M %d N %d K %d%s%s%s: %s, max |gpu - ref| %.3g (bound %.3g)\n", ok ? "ok  " : "FAIL", name, M, N,
              K, tb ? "" : " B [K, N]", with_bias ? " +bias" : "", graph ? " graph" : "", way, worst, bound);
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
  cudaFree(dbias);
  cudaStreamDestroy(stream);
  return ok ? 0 : 1;
}

int main() {
  int failed = 0;
  for (bool graph : {false, true}) {
    for (bool bias : {false, true}) {
      failed += check<__half>("float16", CUDA_R_16F, 1024, 50257, 768, bias, graph);
      failed += check<__half>("float16", CUDA_R_16F, 2051, 50257, 768, bias, graph);  // eight phases
      failed += check<__nv_bfloat16>("bfloat16", CUDA_R_16BF, 512, 1001, 256, bias, graph);
      failed += check<float>("float32", CUDA_R_32F, 300, 4099, 128, bias, graph);
      failed += check<__half>("float16 (aligned)", CUDA_R_16F, 256, 4096, 256, bias, graph);
      failed += check<__half>("float16", CUDA_R_16F, 200, 3001, 96, bias, graph, /*tb=*/false);
      failed += check<__half>("float16 (small M)", CUDA_R_16F, 8, 50257, 768, bias, graph);
      failed += check<__half>("float16", CUDA_R_16F, 301, 32002, 64, bias, graph);         // four phases, M odd
      failed += check<__nv_bfloat16>("bfloat16", CUDA_R_16BF, 99, 4100, 256, bias, graph);  // two phases
      failed += check<__half>("float16 (K unaligned)", CUDA_R_16F, 128, 5001, 100, bias, graph);
    }
  }
  std::printf("%s\n", failed ? "FAILED" : "all ok");
  return failed ? 1 : 0;
}
