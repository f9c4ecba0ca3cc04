// Kernels of the fused ops that kernels/fusion.yaml defines: the fusion pass of `kforge compile` replaces a chain
// of kernel calls with one call of these when the op set has them (docs/kernels.md, "Fused convolutions").
// Same calling convention as kforge_kernels.h.
#ifndef KFORGE_KERNELS_KFORGE_FUSED_H_
#define KFORGE_KERNELS_KFORGE_FUSED_H_

#include <string>
#include <vector>

#include "kforge_runtime.h"

namespace kforge::kernels {

// conv2d (any groups, so depthwise_conv2d too) with its epilogue, per output element of channel c:
//   v = conv(input, filter)
//   v = v + bias[c]                                         when bias is given
//   v = v * s[c] + (shift[c] - mean[c] * s[c])              when mean is given (batch norm, inference), with
//       s[c] = scale[c] / sqrt(variance[c] + epsilon)       (scale 1 and shift 0 when absent)
//   v = act(v)                                              unless activation_after_residual
//   v = v + residual[i]                                     when residual is given (out's shape)
//   v = act(v)                                              if activation_after_residual
// act: activation "" (none), relu, relu6, leaky_relu (slope activation_alpha), clip (activation_alpha,
// activation_beta), hardswish, sigmoid, tanh, swish / silu, gelu, gelu_tanh: the formulas of the library's kernels
// of those names. bias, mean, variance, scale and shift are [out_c]; float32 and float64. The reference loops
// compute exactly the separate kernels' results; with oneDNN (float32) the batch norm is folded into the filter
// and bias (once, when they lie in memory declared constant) and the rest are oneDNN post-ops.
// out_pixel_stride (NHWC only, no residual): out's pixels lie that many elements apart, out being a slice of the
// channels of a wider tensor (kforge compile places a concat's inputs in their slices of its output); 0 or out_c:
// dense. The values are the same bits either way.
Status conv2d_fused(const KernelContext& ctx, const Tensor& input, const Tensor& filter, const Tensor* bias,
                    const Tensor* mean, const Tensor* variance, const Tensor* scale, const Tensor* shift,
                    const Tensor* residual, const std::vector<int>& strides, const std::vector<int>& paddings,
                    const std::string& padding_algorithm, const std::vector<int>& dilations, int groups,
                    const std::string& data_format, float epsilon, const std::string& activation,
                    float activation_alpha, float activation_beta, bool activation_after_residual, int out_pixel_stride,
                    Tensor* out);

}  // namespace kforge::kernels

#endif  // KFORGE_KERNELS_KFORGE_FUSED_H_
