// Kernels for the ops of extra_ops.yaml (only what the benchmarked models need and kernels/ lacks).
#include <algorithm>

#include "kforge_runtime.h"

namespace kforge::kernels {

// Paddle's relu6: min(max(x, 0), 6), float32.
Status relu6(const KernelContext& ctx, const Tensor& x, Tensor* out) {
  (void)ctx;
  if (x.dtype != DataType::kFloat32 || out->dtype != DataType::kFloat32) return Status::Error("relu6: float32 only");
  const float* in = x.data_as<const float>();
  float* o = out->data_as<float>();
  for (int64_t i = 0, n = x.numel(); i < n; ++i) o[i] = std::min(std::max(in[i], 0.f), 6.f);
  return Status::OK();
}

}  // namespace kforge::kernels
