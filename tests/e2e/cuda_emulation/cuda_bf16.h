// Host-only stand-in (tests/e2e/cuda_emulation/cuda_runtime.h); see cuda_fp16.h.
#ifndef KFORGE_TEST_FAKE_CUDA_BF16_H_
#define KFORGE_TEST_FAKE_CUDA_BF16_H_
#include <cstdint>
struct __nv_bfloat16 {
  uint16_t bits;
};
inline __nv_bfloat16 __float2bfloat16_rn(float) { return __nv_bfloat16{0}; }
inline float __bfloat162float(__nv_bfloat16) { return 0.0f; }
#endif
