// GPU check and timing of kforge_cublaslt.cuh's compact_rows_kernel (a padded product's rows copied out into rows
// of n elements that start anywhere: the GPT logits at N 50257): every element of several n and output offsets
// against the input, nothing written outside, for float16 and float32; then the time of the logits' copy at
// 8192 x 50257 float16 against one element per thread (the kernel before the shifted 16-byte stores).
//   nvcc -arch=sm_90 -std=c++17 -O2 -I templates/cuda tests/gpu/compact_rows_check.cu -o compact_rows_check -lcublasLt
//   ./compact_rows_check   (exit 0 when every element is right)
#include <cstdio>
#include <vector>

#include "kforge_cublaslt.cuh"

namespace {

template <typename T>
__global__ void one_per_thread(T* __restrict__ out, const T* __restrict__ in, int64_t rows, int64_t n, int64_t ld) {
  for (int64_t r = blockIdx.y; r < rows; r += gridDim.y)
    for (int64_t c = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; c < n; c += int64_t(gridDim.x) * blockDim.x)
      out[r * n + c] = in[r * ld + c];
}

template <typename T, typename Bits>
int check(int64_t rows, int64_t n, int offset) {
  constexpr int64_t P = 16 / sizeof(T);
  const int64_t ld = (n + P - 1) / P * P, slack = 16;
  std::vector<Bits> host(rows * ld), got(rows * n + offset + slack);
  for (size_t k = 0; k < host.size(); ++k) host[k] = Bits(k * 2654435761u >> 5) | 1;
  Bits *in = nullptr, *out = nullptr;
  cudaMalloc(&in, host.size() * sizeof(Bits));
  cudaMalloc(&out, got.size() * sizeof(Bits));
  cudaMemcpy(in, host.data(), host.size() * sizeof(Bits), cudaMemcpyHostToDevice);
  cudaMemset(out, 0, got.size() * sizeof(Bits));
  const unsigned columns = unsigned(std::min<int64_t>((n / P + 255) / 256 + 1, 64));
  kforge::cuda_gemm::compact_rows_kernel<T><<<dim3(columns, unsigned(rows)), 256>>>(
      reinterpret_cast<T*>(out + offset), reinterpret_cast<const T*>(in), rows, n, ld);
  cudaMemcpy(got.data(), out, got.size() * sizeof(Bits), cudaMemcpyDeviceToHost);
  int bad = 0;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < n; ++c) bad += got[offset + r * n + c] != host[r * ld + c];
  for (int64_t k = 0; k < offset; ++k) bad += got[k] != 0;
  for (size_t k = size_t(offset + rows * n); k < got.size(); ++k) bad += got[k] != 0;
  cudaFree(in);
  cudaFree(out);
  if (bad != 0) std::printf("  %zu-byte elements, %lld x %lld at offset %d: %d wrong\n", sizeof(T), (long long)rows,
                            (long long)n, offset, bad);
  return bad;
}

template <typename Kernel>
float time_ms(Kernel launch) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  launch();
  cudaEventRecord(a);
  for (int k = 0; k < 20; ++k) launch();
  cudaEventRecord(b);
  cudaEventSynchronize(b);
  float ms = 0;
  cudaEventElapsedTime(&ms, a, b);
  return ms / 20;
}

}  // namespace

int main() {
  int bad = 0;
  for (int64_t n : {1, 7, 8, 9, 15, 33, 50257})
    for (int offset : {0, 1, 3, 7}) {
      bad += check<__half, uint16_t>(5, n, offset);
      bad += check<float, uint32_t>(5, n, offset);
    }
  std::printf("compact_rows: %s\n", bad == 0 ? "every element right" : "WRONG");
  const int64_t rows = 8192, n = 50257, ld = 50264;
  __half *in = nullptr, *out = nullptr;
  cudaMalloc(&in, rows * ld * 2);
  cudaMalloc(&out, rows * n * 2);
  const float shifted = time_ms([&] {
    kforge::cuda_gemm::compact_rows_kernel<__half><<<dim3(64, unsigned(rows)), 256>>>(out, in, rows, n, ld);
  });
  const float single = time_ms([&] { one_per_thread<__half><<<dim3(64, unsigned(rows)), 256>>>(out, in, rows, n, ld); });
  std::printf("8192 x 50257 float16: 16-byte stores %.3f ms, one element per thread %.3f ms (%.2f TB/s moved)\n",
              shifted, single, 2.0 * rows * n * 2 / (shifted * 1e-3) / 1e12);
  return bad == 0 ? 0 : 1;
}
