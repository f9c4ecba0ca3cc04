// cublaslt_gemm's gelu epilogues on every path (issue 35): kBiasGeluTanh (the tanh form, what kforge plans for
// 16-bit GEMMs: cuBLASLt's GELU_BIAS inside the GEMM) and kBiasGelu (erf: the GEMM, then a separate kernel), each
// with a 16-byte aligned bias (in the GEMM), an unaligned one (bias_epilogue after it) and an N that is no multiple
// of 16 bytes (the padded product, then bias_epilogue), in float16, bfloat16 and float32, eagerly and under a CUDA
// graph capture after cublaslt_gemm_prepare. Against a double reference of the requested form: each element within
// its roundings (the result's; on the separate paths the pre-activation's too), which a gelu applied twice or not
// at all, or a bias added twice, exceeds by far. float32 also tells the forms apart (4.73e-4 against a 1e-5 bound).
// GPU machine:
//   nvcc -arch=sm_90 -std=c++17 -O2 -I templates/cuda -I templates/runtime tests/gpu/gemm_gelu_check.cu
//        -lcublasLt -lcublas -o gemm_gelu_check && ./gemm_gelu_check      (one command line)
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "kforge_cublaslt.cuh"

using namespace kforge::cuda_gemm;

namespace {

template <typename T>
float to_float(T v) { return static_cast<float>(v); }

double gelu_erf(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
double gelu_tanh(double x) { return 0.5 * x * (1.0 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))); }

template <typename T>
int check(const char* name, cudaDataType_t type, int M, int N, int K, Epilogue epilogue, bool aligned_bias, bool graph) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<T> a(size_t(M) * K), b(size_t(K) * N), bias(N + 1);
  for (auto& v : a) v = T(u(rng));
  for (auto& v : b) v = T(u(rng) * 0.25f);  // pre-activations of a few units: both gelu branches matter
  for (auto& v : bias) v = T(u(rng));
  T *da, *db, *dc, *dbias;
  cudaMalloc(&da, a.size() * sizeof(T));
  cudaMalloc(&db, b.size() * sizeof(T));
  cudaMalloc(&dc, size_t(M) * N * sizeof(T));
  cudaMalloc(&dbias, (N + 1) * sizeof(T));
  cudaMemcpy(da, a.data(), a.size() * sizeof(T), cudaMemcpyHostToDevice);
  cudaMemcpy(db, b.data(), b.size() * sizeof(T), cudaMemcpyHostToDevice);
  cudaMemcpy(dbias, bias.data(), (N + 1) * sizeof(T), cudaMemcpyHostToDevice);
  cudaMemset(dc, 0xFF, size_t(M) * N * sizeof(T));  // NaN: every element must be written
  const int offset = aligned_bias ? 0 : 1;  // one element in: 2 or 4 bytes, never 16-byte aligned
  const T* bias_ptr = dbias + offset;
  CublasLtGemm lt(size_t(32) << 20, type);
  cudaStream_t stream;
  cudaStreamCreate(&stream);
  cudaError_t e = cudaSuccess;
  if (graph) {
    cublaslt_gemm_prepare(lt, da, db, dc, bias_ptr, M, N, K, epilogue, false, false);
    cudaGraph_t g;
    cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal);
    e = cublaslt_gemm(lt, da, db, dc, bias_ptr, M, N, K, epilogue, false, false, stream);
    cudaStreamEndCapture(stream, &g);
    cudaGraphExec_t exec;
    if (e == cudaSuccess) e = cudaGraphInstantiate(&exec, g, 0);
    if (e == cudaSuccess) e = cudaGraphLaunch(exec, stream);
  } else {
    e = cublaslt_gemm(lt, da, db, dc, bias_ptr, M, N, K, epilogue, false, false, stream);
  }
  cudaStreamSynchronize(stream);
  if (e != cudaSuccess || cudaGetLastError() != cudaSuccess) {
    std::printf("FAIL %s %s M %d N %d K %d: %s\n", name, name_of(epilogue), M, N, K, cudaGetErrorString(e));
    return 1;
  }
  std::vector<T> c(size_t(M) * N);
  cudaMemcpy(c.data(), dc, c.size() * sizeof(T), cudaMemcpyDeviceToHost);
  const double unit = sizeof(T) == 4 ? 0.0 : type == CUDA_R_16F ? std::ldexp(1.0, -11) : std::ldexp(1.0, -8);
  const bool tanh_form = epilogue == Epilogue::kBiasGeluTanh;
  double used = 0, other = 0;  // the largest share of the bound used; the largest distance to the other form
  for (int i = 0; i < M; i += std::max(1, M / 32)) {
    for (int j = 0; j < N; ++j) {
      double t = to_float(bias[j + offset]), sum_abs = 0;
      for (int k = 0; k < K; ++k) {
        const double p = double(to_float(a[size_t(i) * K + k])) * to_float(b[size_t(k) * N + j]);
        t += p;
        sum_abs += std::fabs(p);
      }
      const double ref = tanh_form ? gelu_tanh(t) : gelu_erf(t);
      const double got = to_float(c[size_t(i) * N + j]);
      // The result's rounding, the pre-activation's on the separate paths (|gelu'| <= 1.13), float32 sums. A
      // separate path rounds the product before the bias is added, so that rounding scales with the product, which
      // can be far larger than the sum when the bias cancels it.
      const double product = t - to_float(bias[j + offset]);
      const double bound =
          unit * (std::fabs(ref) + 1.13 * std::max(std::fabs(t), std::fabs(product))) + 4e-6 * (sum_abs + 1);
      used = std::isnan(got) ? INFINITY : std::max(used, std::fabs(got - ref) / bound);
      other = std::max(other, std::fabs(got - (tanh_form ? gelu_erf(t) : gelu_tanh(t))));
    }
  }
  const bool ok = used <= 1;
  std::printf("%s %-8s %-14s M %d N %d K %d%s%s: padded N %lld, |gpu - ref| <= %.2f of its bound; %.3g from the other "
              "form\n", ok ? "ok  " : "FAIL", name, name_of(epilogue), M, N, K, aligned_bias ? "" : " unaligned bias",
              graph ? " graph" : "", static_cast<long long>(CublasLtGemm::padded_n(M, N, sizeof(T))), used, other);
  cudaFree(da);
  cudaFree(db);
  cudaFree(dc);
  cudaFree(dbias);
  cudaStreamDestroy(stream);
  return ok ? 0 : 1;
}

}  // namespace

int main() {
  int failed = 0;
  for (bool graph : {false, true}) {
    for (Epilogue epilogue : {Epilogue::kBiasGeluTanh, Epilogue::kBiasGelu}) {
      for (bool aligned : {true, false}) {
        failed += check<__half>("float16", CUDA_R_16F, 512, 3072, 768, epilogue, aligned, graph);
        failed += check<__nv_bfloat16>("bfloat16", CUDA_R_16BF, 512, 3072, 768, epilogue, aligned, graph);
        failed += check<float>("float32", CUDA_R_32F, 256, 1024, 256, epilogue, aligned, graph);
        failed += check<__half>("float16", CUDA_R_16F, 1024, 1001, 256, epilogue, aligned, graph);  // padded N
      }
    }
  }
  std::printf("%s\n", failed ? "FAILED" : "all ok");
  return failed ? 1 : 0;
}
