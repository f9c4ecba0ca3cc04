// 16-bit floating-point storage in the CUDA code `kforge compile --target cuda` generates: float16 (__half,
// cuda_fp16.h) and bfloat16 (__nv_bfloat16, cuda_bf16.h). kforge copies this header beside the outputs when
// the program has 16-bit fused values or any GEMM (kforge_gemm.cuh includes it).
//
// Both types compute in float32 (src/kernel/scalar_type.h, compute_type): a kernel loads the 16-bit value,
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

namespace kforge {
namespace cuda {

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }

// Round to nearest even (the _rn intrinsics), as PyTorch and Paddle store 16-bit results.
template <typename T>
__device__ __forceinline__ T from_float(float x);
template <>
__device__ __forceinline__ float from_float<float>(float x) {
  return x;
}
template <>
__device__ __forceinline__ __half from_float<__half>(float x) {
  return __float2half_rn(x);
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

}  // namespace cuda
}  // namespace kforge

#endif  // KFORGE_HALF_CUH_
