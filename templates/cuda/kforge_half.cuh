// 16-bit floating-point storage in the CUDA code `kforge compile --target cuda` generates: float16 (__half,
// cuda_fp16.h) and bfloat16 (__nv_bfloat16, cuda_bf16.h). kforge copies this header beside the outputs when
// the program has 16-bit fused values or any GEMM (kforge_gemm.cuh includes it).
//
// Both types compute in float32 (src/scalar_expr/scalar_type.h, compute_type): a kernel loads the 16-bit value,
// converts it to float, computes in float and rounds the result back to nearest even when it stores it.
// Generated kernels convert through to_float() and from_float<T>() below, never static_cast: __half and
// __nv_bfloat16 define conversions to and from many arithmetic types, so a cast to bool or an integer type
// can be ambiguous, and a conversion from double would round twice. Every conversion here goes through float,
// which is exact on load and rounds once on store. The float overloads are identities, so that templates over
// the element type (the GEMM epilogue kernels) spell every type alike.
#ifndef KFORGE_HALF_CUH_
#define KFORGE_HALF_CUH_

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <vector>

namespace kforge {
namespace cuda {

__host__ __device__ __forceinline__ float to_float(float x) { return x; }
__host__ __device__ __forceinline__ float to_float(__half x) { return __half2float(x); }
__host__ __device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }

// Round to nearest even (the _rn intrinsics), as PyTorch and Paddle store 16-bit results. Host code may call
// these too (upload_rounded).
template <typename T>
__host__ __device__ __forceinline__ T from_float(float x);
template <>
__host__ __device__ __forceinline__ float from_float<float>(float x) {
  return x;
}
template <>
__host__ __device__ __forceinline__ __half from_float<__half>(float x) {
  return __float2half_rn(x);
}
template <>
__host__ __device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

// Host: copies n float32 values to the device as T, each rounded to nearest even (the conversions above are host
// functions too), in pieces of at most 1 Mi values: the parameters that `kforge compile --precision` made 16-bit,
// which load_parameters() reads as the file's float32.
template <typename T>
cudaError_t upload_rounded(const float* host, T* device, size_t n) {
  constexpr size_t kPiece = size_t{1} << 20;
  std::vector<T> rounded(std::min(n, kPiece));
  for (size_t start = 0; start < n; start += kPiece) {
    const size_t count = std::min(kPiece, n - start);
    for (size_t i = 0; i < count; ++i) rounded[i] = from_float<T>(host[start + i]);
    const cudaError_t e = cudaMemcpy(device + start, rounded.data(), count * sizeof(T), cudaMemcpyHostToDevice);
    if (e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

}  // namespace cuda
}  // namespace kforge

#endif  // KFORGE_HALF_CUH_
