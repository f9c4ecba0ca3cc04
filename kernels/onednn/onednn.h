// The oneDNN paths of the float32 conv2d, depthwise_conv2d, conv2d_transpose, matmul and pool2d kernels (conv.cc,
// linalg.cc and nn.cc call them after validating their arguments). Internal to kernels/ and its tests.
//
// Each one either computes `out` and sets *handled (returning its status), or leaves *handled false and returns
// OK when oneDNN cannot do the case exactly as the reference loops define it; the caller then runs those loops.
#ifndef KFORGE_KERNELS_ONEDNN_ONEDNN_H_
#define KFORGE_KERNELS_ONEDNN_ONEDNN_H_

#include <cstdint>
#include <string>

#include "activation.h"
#include "kernel_util.h"
#include "kforge_runtime.h"

namespace kforge::kernels::onednn {

// What conv2d_fused applies after the convolution (kforge_fused.h gives the formula); all absent for conv2d.
// The tensors are float32 [out_c] (residual: out's shape), checked by the caller.
struct ConvEpilogue {
  const Tensor* bias = nullptr;
  const Tensor* mean = nullptr;  // a batch norm when given (variance too; scale, shift optional)
  const Tensor* variance = nullptr;
  const Tensor* scale = nullptr;
  const Tensor* shift = nullptr;
  float epsilon = 0;
  util::Activation activation = util::Activation::kNone;
  float alpha = 0, beta = 0;
  bool activation_after_residual = false;
  const Tensor* residual = nullptr;
  // NHWC without a residual: elements between consecutive output pixels, out being a slice of a wider tensor's
  // channels; 0: out_c (dense).
  int64_t out_pixel_stride = 0;
};

// conv2d, depthwise_conv2d (any groups) and conv2d_fused, NCHW or NHWC, OIHW filter; `s` from util::conv_shape.
Status conv2d(const char* op, const Tensor& input, const Tensor& filter, const util::ConvShape& s,
              const ConvEpilogue& epilogue, Tensor* out, bool* handled);

// conv2d_transpose, NCHW or NHWC, filter [in_c, out_c / groups, kh, kw]; `s` from util::conv_transpose_shape.
Status conv2d_transpose(const Tensor& x, const Tensor& filter, const util::ConvShape& s, Tensor* out, bool* handled);

// matmul with Paddle's rules (transpose flags, vectors, broadcast batch dims); `out` validated by the caller.
Status matmul(const Tensor& x, const Tensor& y, bool transpose_x, bool transpose_y, Tensor* out, bool* handled);

// Whether matmul's inner-product path (a constant y) may sum a chunked K in one pass over the output
// (chunked_gemm.h) where its chunk primitives are brgemm:avx512_core's (default true); false keeps a primitive per
// chunk. The bits are the same: tests compare the two. Takes effect at a call site's next call.
void set_matmul_one_pass(bool allowed);
// Whether the last matmul call on this thread ran that one-pass path; for tests.
bool last_matmul_one_pass();

// pool2d max / avg (exclusive or not), ceil_mode, global, and adaptive where the windows are uniform.
Status pool2d(const Tensor& x, const util::PoolShape& s, bool exclusive, Tensor* out, bool* handled);

// How many plans (primitive sets) the process has built: tests check that a repeated call builds none.
uint64_t plans_built();

// How many call-site states (runtime.h's SiteTable) the process has filled: a repeated call from the same call site
// (same operand and output addresses, shapes and attributes) fills none, so it looks nothing up in a shared map.
uint64_t sites_filled();

// The plan the last conv2d / depthwise_conv2d / conv2d_transpose call on this thread ran: its variant ("blocked" weights reordered into oneDNN's layout,
// "plain" the caller's OIHW read in place) and the primitive's implementation name; for tests and benchmarks.
struct ConvPlanInfo {
  bool blocked = false;
  int64_t chunks = 0;        // output-channel chunks per image group
  int64_t group_images = 0;  // images per task
  int64_t ic_chunks = 0;     // primitive runs per task, each over a chunk of the input channels (the reduction)
  int64_t bands = 0;         // bands of output rows the reduction chunks run in, one after the other (0: none)
  std::string impl;
};
ConvPlanInfo last_conv_plan();

}  // namespace kforge::kernels::onednn

#endif  // KFORGE_KERNELS_ONEDNN_ONEDNN_H_
