// GPU benchmark and correctness check of kforge's multi-kernel GEMM (templates/cuda/*.cuh dispatched by
// templates/runtime/kforge_multikernel.h). Modes (one per process; run_gpu.sh runs them all):
//   check             every variant against cuBLAS (fresh random inputs, NaN-poisoned outputs)
//   sweep  PICKS      M = 64..4096 step 64, N = K = 4096: the dispatcher picks (benchmarks each new M, writes
//                     the cache), then every variant is timed carefully: pick vs best in hindsight and vs
//                     cuBLAS; the hint table (a) is the rows M = 64, 256, 4096. PICKS: file of "M variant".
//   fused             GEMM + bias + gelu for M = 1024, 2048, 4096: fused variants vs cuBLAS + separate kernel
//   f32               the fp32 site (SIMT tiles + cuBLASLt fp32) at M = 64, 256, 4096
//   replay PICKS      a second process: the same dispatchers over the same shapes; every pick must come from
//                     the disk cache (nothing benchmarked) and equal the first process's
#include <cublas_v2.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "kforge_gemm_variants.cuh"

using kforge::cuda_gemm::CublasLtGemm;
using kforge::cuda_gemm::Epilogue;
using kforge::cuda_gemm::GemmBf16Args;
using kforge::cuda_gemm::GemmBf16MultiKernel;
using kforge::cuda_gemm::GemmVariantOptions;

#define CUDA_CHECK(expr)                                                                               \
  do {                                                                                                 \
    cudaError_t err_ = (expr);                                                                         \
    if (err_ != cudaSuccess) {                                                                         \
      std::fprintf(stderr, "%s:%d: CUDA error %s: %s\n", __FILE__, __LINE__, #expr, cudaGetErrorString(err_)); \
      std::exit(2);                                                                                    \
    }                                                                                                  \
  } while (0)
#define CUBLAS_CHECK(expr)                                                                  \
  do {                                                                                      \
    cublasStatus_t st_ = (expr);                                                            \
    if (st_ != CUBLAS_STATUS_SUCCESS) {                                                     \
      std::fprintf(stderr, "%s:%d: cuBLAS error %d: %s\n", __FILE__, __LINE__, int(st_), #expr); \
      std::exit(2);                                                                         \
    }                                                                                       \
  } while (0)

namespace {

constexpr int kN = 4096;
constexpr int kK = 4096;
constexpr int kMaxM = 4096;

// Counter-based uniform(-scale, scale) fill: a different seed per call gives fresh inputs.
__global__ void fill_bf16(__nv_bfloat16* out, size_t n, uint64_t seed, float scale) {
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    uint64_t x = (i + 1) * 0x9E3779B97F4A7C15ull ^ seed;
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 29;
    x *= 0x94D049BB133111EBull;
    x ^= x >> 32;
    const float u = float(x & 0xFFFFFF) / float(0x1000000) * 2.0f - 1.0f;
    out[i] = __float2bfloat16_rn(u * scale);
  }
}
__global__ void bf16_to_f32(const __nv_bfloat16* in, float* out, size_t n) {
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    out[i] = __bfloat162float(in[i]);
}

uint64_t g_seed = 0x1234567ull;
void fill(__nv_bfloat16* p, size_t n, float scale) {
  g_seed = g_seed * 6364136223846793005ull + 1442695040888963407ull;
  fill_bf16<<<1024, 256>>>(p, n, g_seed, scale);
  CUDA_CHECK(cudaGetLastError());
}

struct Buffers {
  __nv_bfloat16 *A = nullptr, *B = nullptr, *C = nullptr, *bias = nullptr;
  float* ref = nullptr;
  Buffers() {
    CUDA_CHECK(cudaMalloc(&A, size_t(kMaxM) * kK * 2));
    CUDA_CHECK(cudaMalloc(&B, size_t(kK) * kN * 2));
    CUDA_CHECK(cudaMalloc(&C, size_t(kMaxM) * kN * 2));
    CUDA_CHECK(cudaMalloc(&bias, size_t(kN) * 2));
    CUDA_CHECK(cudaMalloc(&ref, size_t(kMaxM) * kN * 4));
    // Never time on zeros: random A, B scaled so that outputs are O(1) and gelu is not just relu.
    fill(A, size_t(kMaxM) * kK, 1.0f);
    fill(B, size_t(kK) * kN, 1.0f / 16.0f);
    fill(bias, kN, 1.0f);
    CUDA_CHECK(cudaDeviceSynchronize());
  }
  ~Buffers() {
    cudaFree(A);
    cudaFree(B);
    cudaFree(C);
    cudaFree(bias);
    cudaFree(ref);
  }
};

// Hindsight timing of several candidates: `rounds` round-robin passes, each timing every candidate once (one
// call after a spin kernel, GPU time only, as the dispatcher does), median per candidate. Interleaving makes
// clock and temperature drift hit every candidate alike instead of favouring whichever ran first.
std::vector<double> interleaved_us(cudaStream_t stream, const std::vector<std::function<void()>>& fns, int rounds = 32) {
  kforge::cuda_timing::CudaEventTimer timer(stream);
  for (const auto& fn : fns) {
    fn();
    fn();
  }
  std::vector<std::vector<double>> samples(fns.size());
  // Each round starts at a different candidate, so that no candidate always runs right after the same (say, a
  // long, hot) one: a fixed order measurably penalised slot 0 on the H100 (up to 8 %).
  for (int r = 0; r < rounds; ++r)
    for (size_t j = 0; j < fns.size(); ++j) {
      const size_t i = (j + size_t(r)) % fns.size();
      samples[i].push_back(timer.measure_us(fns[i]));
    }
  CUDA_CHECK(cudaGetLastError());
  std::vector<double> medians;
  for (auto& s : samples) {
    std::sort(s.begin(), s.end());
    medians.push_back(s[s.size() / 2]);
  }
  return medians;
}

// Brings the GPU out of its idle clocks before anything is measured (~0.5 s of large GEMMs).
void warm_up_gpu(CublasLtGemm& lt, const Buffers& buf, cudaStream_t stream) {
  for (int i = 0; i < 2500; ++i) lt.run(buf.A, buf.B, buf.C, nullptr, kMaxM, kN, kK, Epilogue::kNone, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
}

double gelu_erf_host(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
double gelu_tanh_host(double x) {
  return 0.5 * x * (1.0 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}
float bf16_bits_to_float(uint16_t bits) {
  uint32_t u = uint32_t(bits) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// ---------------------------------------------------------------------------------------------------------
// check
// ---------------------------------------------------------------------------------------------------------
int run_check(cudaStream_t stream) {
  cublasHandle_t handle;
  CUBLAS_CHECK(cublasCreate(&handle));
  CUBLAS_CHECK(cublasSetStream(handle, stream));
  auto lt = std::make_shared<CublasLtGemm>();
  if (!lt->ok()) {
    std::printf("cuBLASLt handle creation failed\n");
    return 1;
  }
  int failures = 0;
  struct Shape {
    int M, N, K;
  };
  // A ragged shape (predicated tiles), the benchmark's shapes, and one with N % 8 != 0 (library fallback).
  const Shape shapes[] = {{77, 136, 264}, {200, 4096, 4096}, {64, 4096, 4096}, {4096, 4096, 4096}, {33, 100, 72}};
  for (const Shape& s : shapes) {
    __nv_bfloat16 *A, *B, *C, *bias;
    float* ref;
    CUDA_CHECK(cudaMalloc(&A, size_t(s.M) * s.K * 2));
    CUDA_CHECK(cudaMalloc(&B, size_t(s.K) * s.N * 2));
    CUDA_CHECK(cudaMalloc(&C, size_t(s.M) * s.N * 2));
    CUDA_CHECK(cudaMalloc(&bias, size_t(s.N) * 2));
    CUDA_CHECK(cudaMalloc(&ref, size_t(s.M) * s.N * 4));
    fill(A, size_t(s.M) * s.K, 1.0f);
    fill(B, size_t(s.K) * s.N, 1.0f / float(std::sqrt(double(s.K)) / 4.0));
    fill(bias, s.N, 1.0f);
    const float one = 1.0f, zero = 0.0f;
    // Reference: cuBLAS with fp32 output. Row-major C = A B is column-major C^T = B^T A^T.
    CUBLAS_CHECK(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, s.N, s.M, s.K, &one, B, CUDA_R_16BF, s.N, A,
                              CUDA_R_16BF, s.K, &zero, ref, CUDA_R_32F, s.N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    std::vector<float> ref_h(size_t(s.M) * s.N);
    std::vector<uint16_t> bias_h(s.N), out_h(size_t(s.M) * s.N);
    CUDA_CHECK(cudaMemcpy(ref_h.data(), ref, ref_h.size() * 4, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(bias_h.data(), bias, bias_h.size() * 2, cudaMemcpyDeviceToHost));

    for (Epilogue epi : {Epilogue::kNone, Epilogue::kBias, Epilogue::kBiasGelu, Epilogue::kBiasGeluTanh}) {
      auto variants = kforge::cuda_gemm::make_gemm_bf16_variants(lt, epi);
      for (const auto& v : variants) {
        CUDA_CHECK(cudaMemset(C, 0xFF, size_t(s.M) * s.N * 2));  // NaN poison: every element must be written
        GemmBf16Args args{A, B, C, epi == Epilogue::kNone ? nullptr : bias, s.M, s.N, s.K, epi, stream};
        const cudaError_t launched = v.fn(args);
        const cudaError_t synced = cudaStreamSynchronize(stream);
        if (launched != cudaSuccess || synced != cudaSuccess) {
          std::printf("FAIL %-26s %-9s M=%d N=%d K=%d: %s\n", v.name.c_str(), kforge::cuda_gemm::name_of(epi), s.M,
                      s.N, s.K, cudaGetErrorString(launched != cudaSuccess ? launched : synced));
          ++failures;
          continue;
        }
        CUDA_CHECK(cudaMemcpy(out_h.data(), C, out_h.size() * 2, cudaMemcpyDeviceToHost));
        // The set's own form is the reference; the other gelu form is reported beside it (kforge_cublaslt.cuh).
        const bool gelu = epi == Epilogue::kBiasGelu || epi == Epilogue::kBiasGeluTanh;
        double err2 = 0, ref2 = 0, err_other2 = 0, max_abs = 0;
        size_t unwritten = 0;
        for (int i = 0; i < s.M; ++i)
          for (int j = 0; j < s.N; ++j) {
            const size_t idx = size_t(i) * s.N + j;
            double x = ref_h[idx];
            if (epi != Epilogue::kNone) x += bf16_bits_to_float(bias_h[j]);
            double expect = x, other = x;
            if (epi == Epilogue::kBiasGelu) {
              expect = gelu_erf_host(x);
              other = gelu_tanh_host(x);
            } else if (epi == Epilogue::kBiasGeluTanh) {
              expect = gelu_tanh_host(x);
              other = gelu_erf_host(x);
            }
            const double got = bf16_bits_to_float(out_h[idx]);
            if (std::isnan(got)) {
              ++unwritten;
              continue;
            }
            err2 += (got - expect) * (got - expect);
            err_other2 += (got - other) * (got - other);
            ref2 += expect * expect;
            max_abs = std::max(max_abs, std::fabs(got - expect));
          }
        const double rel = std::sqrt(err2 / std::max(ref2, 1e-30));
        const double rel_other = std::sqrt(err_other2 / std::max(ref2, 1e-30));
        // bf16 output rounding alone gives ~1.5e-3; 1e-2 leaves room for accumulation order.
        const bool ok = unwritten == 0 && rel < 1e-2;
        if (!ok) ++failures;
        std::printf("%s %-26s %-14s M=%-4d N=%-4d K=%-4d rel_err=%.2e max_abs=%.2e%s%s\n", ok ? "ok  " : "FAIL",
                    v.name.c_str(), kforge::cuda_gemm::name_of(epi), s.M, s.N, s.K, rel, max_abs,
                    unwritten ? " UNWRITTEN" : "",
                    gelu ? (std::string(" rel_err(other gelu form)=") + std::to_string(rel_other)).c_str() : "");
      }
    }
    cudaFree(A);
    cudaFree(B);
    cudaFree(C);
    cudaFree(bias);
    cudaFree(ref);
  }

  // fp32 variants (SIMT kernels, cuBLASLt fp32) against cublasSgemm (default math mode: no TF32).
  {
    const Shape simt_shapes[] = {{77, 136, 264}, {256, 1024, 512}};
    for (const Shape& s : simt_shapes) {
      __nv_bfloat16 *Ab, *Bb, *biasb;
      float *A, *B, *C, *bias, *ref;
      CUDA_CHECK(cudaMalloc(&Ab, size_t(s.M) * s.K * 2));
      CUDA_CHECK(cudaMalloc(&Bb, size_t(s.K) * s.N * 2));
      CUDA_CHECK(cudaMalloc(&biasb, size_t(s.N) * 2));
      CUDA_CHECK(cudaMalloc(&A, size_t(s.M) * s.K * 4));
      CUDA_CHECK(cudaMalloc(&B, size_t(s.K) * s.N * 4));
      CUDA_CHECK(cudaMalloc(&C, size_t(s.M) * s.N * 4));
      CUDA_CHECK(cudaMalloc(&bias, size_t(s.N) * 4));
      CUDA_CHECK(cudaMalloc(&ref, size_t(s.M) * s.N * 4));
      fill(Ab, size_t(s.M) * s.K, 1.0f);
      fill(Bb, size_t(s.K) * s.N, 0.1f);
      fill(biasb, s.N, 1.0f);
      bf16_to_f32<<<256, 256>>>(Ab, A, size_t(s.M) * s.K);
      bf16_to_f32<<<256, 256>>>(Bb, B, size_t(s.K) * s.N);
      bf16_to_f32<<<256, 256>>>(biasb, bias, size_t(s.N));
      const float one = 1.0f, zero = 0.0f;
      CUBLAS_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, s.N, s.M, s.K, &one, B, s.N, A, s.K, &zero, ref, s.N));
      CUDA_CHECK(cudaDeviceSynchronize());
      std::vector<float> ref_h(size_t(s.M) * s.N), out_h(ref_h.size()), bias_h(s.N);
      CUDA_CHECK(cudaMemcpy(ref_h.data(), ref, ref_h.size() * 4, cudaMemcpyDeviceToHost));
      CUDA_CHECK(cudaMemcpy(bias_h.data(), bias, bias_h.size() * 4, cudaMemcpyDeviceToHost));
      auto lt_f32 = std::make_shared<CublasLtGemm>(size_t(32) << 20, CUDA_R_32F);
      const auto f32_variants = kforge::cuda_gemm::make_gemm_f32_variants(lt_f32);
      for (const auto& v : f32_variants)
        for (Epilogue epi : {Epilogue::kNone, Epilogue::kBias, Epilogue::kBiasGelu}) {
          CUDA_CHECK(cudaMemsetAsync(C, 0xFF, size_t(s.M) * s.N * 4, stream));
          const kforge::cuda_gemm::GemmF32Args args{A, B, C, epi == Epilogue::kNone ? nullptr : bias, s.M, s.N, s.K,
                                                    epi, stream};
          CUDA_CHECK(v.fn(args));
          CUDA_CHECK(cudaStreamSynchronize(stream));
          CUDA_CHECK(cudaMemcpy(out_h.data(), C, out_h.size() * 4, cudaMemcpyDeviceToHost));
          double err2 = 0, ref2 = 0;
          size_t unwritten = 0;
          for (int i = 0; i < s.M; ++i)
            for (int j = 0; j < s.N; ++j) {
              const size_t idx = size_t(i) * s.N + j;
              double expect = ref_h[idx];
              if (epi != Epilogue::kNone) expect += bias_h[j];
              if (epi == Epilogue::kBiasGelu) expect = gelu_erf_host(expect);
              if (std::isnan(out_h[idx])) {
                ++unwritten;
                continue;
              }
              err2 += (out_h[idx] - expect) * (out_h[idx] - expect);
              ref2 += expect * expect;
            }
          const double rel = std::sqrt(err2 / std::max(ref2, 1e-30));
          const bool ok = unwritten == 0 && rel < 1e-5;
          if (!ok) ++failures;
          std::printf("%s %-26s %-9s M=%-4d N=%-4d K=%-4d rel_err=%.2e%s\n", ok ? "ok  " : "FAIL", v.name.c_str(),
                      kforge::cuda_gemm::name_of(epi), s.M, s.N, s.K, rel, unwritten ? " UNWRITTEN" : "");
        }
      cudaFree(Ab);
      cudaFree(Bb);
      cudaFree(biasb);
      cudaFree(A);
      cudaFree(B);
      cudaFree(C);
      cudaFree(bias);
      cudaFree(ref);
    }
  }
  cublasDestroy(handle);
  std::printf("check: %d failure(s)\n", failures);
  return failures == 0 ? 0 : 1;
}

// ---------------------------------------------------------------------------------------------------------
// sweep / replay
// ---------------------------------------------------------------------------------------------------------
int run_sweep(cudaStream_t stream, const char* picks_path, bool replay) {
  Buffers buf;
  auto lt = std::make_shared<CublasLtGemm>();
  auto variants = kforge::cuda_gemm::make_gemm_bf16_variants(lt, Epilogue::kNone);
  auto config = kforge::cuda_gemm::make_gemm_bf16_config("bench_gemm_n4096_k4096", stream, variants);
  GemmBf16MultiKernel dispatcher(variants, config);
  warm_up_gpu(*lt, buf, stream);
  const size_t nv = dispatcher.size();
  size_t cublas_index = nv;
  for (size_t v = 0; v < nv; ++v)
    if (dispatcher.variant(v).name == "cublaslt") cublas_index = v;

  std::map<int, std::string> first_picks;
  if (replay) {
    std::ifstream in(picks_path);
    int m;
    std::string name;
    while (in >> m >> name) first_picks[m] = name;
    if (first_picks.empty()) {
      std::printf("replay: no picks in %s\n", picks_path);
      return 1;
    }
  }
  std::ofstream picks_out;
  if (!replay) picks_out.open(picks_path);

  std::printf("%-5s %-22s %-12s %9s %9s %8s %9s | per-variant us:", "M", "pick", "source", "pick_us", "best_us",
              "gap%", "vs_cublas");
  for (size_t v = 0; v < nv; ++v) std::printf(" %s", dispatcher.variant(v).name.c_str());
  std::printf("\n");
  double worst_gap = 0, sum_gap = 0, worst_vs_cublas = 0;
  double worst_igap = 0, sum_igap = 0, worst_ivs_cublas = 0;
  int count = 0, mismatches = 0, slower_than_cublas = 0, islower_than_cublas = 0;
  for (int M = 64; M <= kMaxM; M += 64) {
    GemmBf16Args args{buf.A, buf.B, buf.C, nullptr, M, kN, kK, Epilogue::kNone, stream};
    const kforge::mk::ShapeKey key{M, kN, kK};
    CUDA_CHECK(dispatcher(key, args));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    kforge::mk::Pick pick;
    dispatcher.pick_for(key, &pick);
    const std::string& pick_name = dispatcher.variant(pick.variant).name;
    if (replay) {
      if (first_picks[M] != pick_name) ++mismatches;
      std::printf("%-5d %-22s %-12s first process picked %s\n", M, pick_name.c_str(),
                  kforge::mk::name_of(pick.source), first_picks[M].c_str());
      continue;
    }
    picks_out << M << " " << pick_name << "\n";
    std::vector<std::function<void()>> fns;
    for (size_t v = 0; v < nv; ++v) fns.push_back([&, v] { dispatcher.variant(v).fn(args); });
    // What a dispatcher that interleaves its repetitions (REQUEST(GEMM) in kforge_multikernel.h) would pick:
    // the same tie rule over 15 interleaved rounds, measured before (and apart from) the hindsight timing.
    const size_t ipick = GemmBf16MultiKernel::choose_fastest(variants, interleaved_us(stream, fns, 15),
                                                             dispatcher.config().bench.tie_margin);
    const std::vector<double> t = interleaved_us(stream, fns);
    const double best = *std::min_element(t.begin(), t.end());
    const double gap = t[pick.variant] / best - 1.0;
    const double vs_cublas = t[pick.variant] / t[cublas_index];
    worst_gap = std::max(worst_gap, gap);
    worst_vs_cublas = std::max(worst_vs_cublas, vs_cublas);
    if (vs_cublas > 1.0) ++slower_than_cublas;
    sum_gap += gap;
    const double igap = t[ipick] / best - 1.0;
    worst_igap = std::max(worst_igap, igap);
    worst_ivs_cublas = std::max(worst_ivs_cublas, t[ipick] / t[cublas_index]);
    if (t[ipick] > t[cublas_index]) ++islower_than_cublas;
    sum_igap += igap;
    ++count;
    std::printf("%-5d %-22s %-12s %9.2f %9.2f %7.2f%% %9.3f |", M, pick_name.c_str(), kforge::mk::name_of(pick.source),
                t[pick.variant], best, gap * 100, vs_cublas);
    for (size_t v = 0; v < nv; ++v) std::printf(" %.2f", t[v]);
    std::printf(" | interleaved pick %s gap %.2f%%\n", dispatcher.variant(ipick).name.c_str(), igap * 100);
  }
  const kforge::mk::Stats stats = dispatcher.stats();
  std::printf("dispatcher stats: shapes_benchmarked=%llu variant_runs=%llu disk_hits=%llu disk_writes=%llu "
              "ignored_entries=%llu\n",
              (unsigned long long)stats.shapes_benchmarked, (unsigned long long)stats.variant_runs,
              (unsigned long long)stats.disk_hits, (unsigned long long)stats.disk_writes,
              (unsigned long long)stats.ignored_entries);
  if (replay) {
    const bool ok = stats.shapes_benchmarked == 0 && stats.variant_runs == 0 && stats.disk_hits == 64 && mismatches == 0;
    std::printf("replay: %s (64 shapes, %d pick(s) differ from the first process)\n", ok ? "OK: every pick from disk, nothing benchmarked" : "FAILED", mismatches);
    return ok ? 0 : 1;
  }
  // Known-shape dispatch cost on this path (host side, lookup only; the launch follows).
  {
    const kforge::mk::ShapeKey key{1024, kN, kK};
    size_t index = 0;
    volatile size_t sink = 0;
    const int iters = 2000000;
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) {
      const kforge::mk::ShapeKey k{int64_t(1024 + (i & 0)), kN, kK};
      dispatcher.lookup(k, &index);
      sink = sink + index;
    }
    auto stop = std::chrono::steady_clock::now();
    (void)key;
    std::printf("known-shape lookup (ShapeKey build + lookup): %.1f ns/call\n",
                std::chrono::duration<double, std::nano>(stop - start).count() / iters);
  }
  std::printf("SUMMARY sweep M=64..4096 step 64 (%d shapes): pick vs best in hindsight: worst %.2f%%, mean %.2f%%; "
              "pick/cuBLAS worst %.3f, pick slower than cuBLAS at %d shape(s)\n",
              count, worst_gap * 100, sum_gap / count * 100, worst_vs_cublas, slower_than_cublas);
  std::printf("SUMMARY-INTERLEAVED picks an interleaving dispatcher would make: vs best in hindsight: worst %.2f%%, "
              "mean %.2f%%; pick/cuBLAS worst %.3f, slower than cuBLAS at %d shape(s)\n",
              worst_igap * 100, sum_igap / count * 100, worst_ivs_cublas, islower_than_cublas);
  return 0;
}

// ---------------------------------------------------------------------------------------------------------
// fused
// ---------------------------------------------------------------------------------------------------------
int run_fused(cudaStream_t stream, bool replay) {
  Buffers buf;
  auto lt = std::make_shared<CublasLtGemm>();
  // erf gelu (Paddle's gelu(approximate=false)) in every candidate, and the tanh form in every candidate
  // (cuBLASLt's fused GELU_BIAS, the tiles' tanh epilogue): the set kforge plans for 16-bit GEMMs.
  auto exact_variants = kforge::cuda_gemm::make_gemm_bf16_variants(lt, Epilogue::kBiasGelu);
  auto tanh_variants = kforge::cuda_gemm::make_gemm_bf16_variants(lt, Epilogue::kBiasGeluTanh);
  GemmBf16MultiKernel exact_dispatcher(
      exact_variants, kforge::cuda_gemm::make_gemm_bf16_config("bench_gemm_bias_gelu_erf", stream, exact_variants));
  GemmBf16MultiKernel tanh_dispatcher(
      tanh_variants, kforge::cuda_gemm::make_gemm_bf16_config("bench_gemm_bias_gelu_tanh_ok", stream, tanh_variants));

  if (!replay)
    std::printf("%-5s %12s %12s %12s | %-26s %9s %8s | %-26s %9s %8s | the other candidates us\n", "M",
                "cublas_gemm", "epilogue", "cublas+epi", "pick (erf only)", "us", "speedup", "pick (tanh set)",
                "us", "speedup");
  warm_up_gpu(*lt, buf, stream);
  int failures = 0;
  for (int M : {1024, 2048, 4096}) {
    GemmBf16Args args{buf.A, buf.B, buf.C, buf.bias, M, kN, kK, Epilogue::kBiasGelu, stream};
    GemmBf16Args tanh_args = args;
    tanh_args.epilogue = Epilogue::kBiasGeluTanh;
    const kforge::mk::ShapeKey key{M, kN, kK};
    CUDA_CHECK(exact_dispatcher(key, args));
    CUDA_CHECK(tanh_dispatcher(key, tanh_args));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    kforge::mk::Pick exact_pick, tanh_pick;
    exact_dispatcher.pick_for(key, &exact_pick);
    tanh_dispatcher.pick_for(key, &tanh_pick);
    if (replay) {
      std::printf("%-5d erf-only pick %s (%s); tanh-set pick %s (%s)\n", M,
                  exact_dispatcher.variant(exact_pick.variant).name.c_str(), kforge::mk::name_of(exact_pick.source),
                  tanh_dispatcher.variant(tanh_pick.variant).name.c_str(), kforge::mk::name_of(tanh_pick.source));
      if (exact_pick.source != kforge::mk::PickSource::kDiskCache ||
          tanh_pick.source != kforge::mk::PickSource::kDiskCache)
        ++failures;
      continue;
    }
    // One interleaved measurement of: cuBLAS GEMM alone, the epilogue kernel alone, then every variant of the
    // erf set, then every variant of the tanh set.
    std::vector<std::function<void()>> fns;
    fns.push_back([&] { lt->run(buf.A, buf.B, buf.C, nullptr, M, kN, kK, Epilogue::kNone, stream); });
    fns.push_back([&] { kforge::cuda_gemm::bias_epilogue(buf.C, buf.bias, M, kN, Epilogue::kBiasGelu, stream); });
    for (size_t v = 0; v < exact_dispatcher.size(); ++v) fns.push_back([&, v] { exact_dispatcher.variant(v).fn(args); });
    for (size_t v = 0; v < tanh_dispatcher.size(); ++v) fns.push_back([&, v] { tanh_dispatcher.variant(v).fn(tanh_args); });
    const std::vector<double> all = interleaved_us(stream, fns);
    const double gemm_us = all[0], epi_us = all[1];
    const std::vector<double> t_exact(all.begin() + 2, all.begin() + 2 + exact_dispatcher.size());
    const std::vector<double> t_tanh(all.begin() + 2 + exact_dispatcher.size(), all.end());
    const double baseline = t_exact[0];  // variant 0 is cublaslt_then_gelu: cuBLAS's first choice + erf kernel
    const double exact_us = t_exact[exact_pick.variant], tanh_us = t_tanh[tanh_pick.variant];
    std::printf("%-5d %12.2f %12.2f %12.2f | %-26s %9.2f %7.3fx | %-26s %9.2f %7.3fx |", M, gemm_us, epi_us, baseline,
                exact_dispatcher.variant(exact_pick.variant).name.c_str(), exact_us, baseline / exact_us,
                tanh_dispatcher.variant(tanh_pick.variant).name.c_str(), tanh_us, baseline / tanh_us);
    for (size_t v = 1; v < t_exact.size(); ++v)
      std::printf(" %s=%.2f", exact_dispatcher.variant(v).name.c_str(), t_exact[v]);
    for (size_t v = 0; v < t_tanh.size(); ++v)
      std::printf(" %s(tanh)=%.2f", tanh_dispatcher.variant(v).name.c_str(), t_tanh[v]);
    std::printf("\n");
  }
  if (replay) std::printf("fused replay: %s\n", failures == 0 ? "OK: every pick from disk" : "FAILED");
  return failures == 0 ? 0 : 1;
}

// ---------------------------------------------------------------------------------------------------------
// f32: the fp32 site (SIMT kernels + cuBLASLt fp32), N = K = 4096, M in {64, 256, 4096}
// ---------------------------------------------------------------------------------------------------------
int run_f32(cudaStream_t stream) {
  Buffers buf;  // bf16 inputs converted to fp32 below
  float *A, *B, *C, *bias;
  CUDA_CHECK(cudaMalloc(&A, size_t(kMaxM) * kK * 4));
  CUDA_CHECK(cudaMalloc(&B, size_t(kK) * kN * 4));
  CUDA_CHECK(cudaMalloc(&C, size_t(kMaxM) * kN * 4));
  CUDA_CHECK(cudaMalloc(&bias, size_t(kN) * 4));
  bf16_to_f32<<<1024, 256>>>(buf.A, A, size_t(kMaxM) * kK);
  bf16_to_f32<<<1024, 256>>>(buf.B, B, size_t(kK) * kN);
  bf16_to_f32<<<64, 256>>>(buf.bias, bias, size_t(kN));
  CUDA_CHECK(cudaDeviceSynchronize());
  auto lt_f32 = std::make_shared<CublasLtGemm>(size_t(32) << 20, CUDA_R_32F);
  const auto variants = kforge::cuda_gemm::make_gemm_f32_variants(lt_f32);
  kforge::cuda_gemm::GemmF32MultiKernel dispatcher(
      variants, kforge::cuda_gemm::make_gemm_f32_config("bench_gemm_f32_n4096_k4096", stream, variants));
  std::printf("%-5s %-22s %9s |", "M", "pick (fp32 site)", "pick_us");
  for (size_t v = 0; v < dispatcher.size(); ++v) std::printf(" %s", dispatcher.variant(v).name.c_str());
  std::printf("\n");
  for (int M : {64, 256, 4096}) {
    const kforge::cuda_gemm::GemmF32Args args{A, B, C, nullptr, M, kN, kK, Epilogue::kNone, stream};
    const kforge::mk::ShapeKey key{M, kN, kK};
    CUDA_CHECK(dispatcher(key, args));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    kforge::mk::Pick pick;
    dispatcher.pick_for(key, &pick);
    std::vector<std::function<void()>> fns;
    for (size_t v = 0; v < dispatcher.size(); ++v) fns.push_back([&, v] { dispatcher.variant(v).fn(args); });
    const std::vector<double> t = interleaved_us(stream, fns, 9);
    std::printf("%-5d %-22s %9.2f |", M, dispatcher.variant(pick.variant).name.c_str(), t[pick.variant]);
    for (double us : t) std::printf(" %.2f", us);
    std::printf("\n");
  }
  cudaFree(A);
  cudaFree(B);
  cudaFree(C);
  cudaFree(bias);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s check | sweep PICKS | fused | f32 | replay PICKS\n", argv[0]);
    return 2;
  }
  const std::string mode = argv[1];
  cudaDeviceProp props{};
  CUDA_CHECK(cudaGetDeviceProperties(&props, 0));
  const kforge::mk::DeviceInfo info = kforge::cuda_timing::cuda_device_info();
  std::printf("device: %s (%s, %s, %d SMs), mode %s\n", info.name.c_str(), info.arch.c_str(), info.runtime.c_str(),
              props.multiProcessorCount, mode.c_str());
  cudaStream_t stream;
  // A blocking stream: it orders itself after the legacy default stream, where the fills and memsets run.
  CUDA_CHECK(cudaStreamCreate(&stream));
  int rc = 2;
  if (mode == "check") rc = run_check(stream);
  else if (mode == "sweep" && argc >= 3) rc = run_sweep(stream, argv[2], false);
  else if (mode == "replay" && argc >= 3) {
    rc = run_sweep(stream, argv[2], true);
    rc = std::max(rc, run_fused(stream, true));
  } else if (mode == "fused") rc = run_fused(stream, false);
  else if (mode == "f32") rc = run_f32(stream);
  else std::fprintf(stderr, "unknown mode '%s'\n", mode.c_str());
  cudaStreamDestroy(stream);
  return rc;
}
