// The reference loops of the kernels that have a oneDNN path (kforge_kernels.h runs those for float32 when the
// library has oneDNN, these otherwise): same signatures and checks, always the loops. For tests and benchmarks that
// compare the two; internal to kernels/, its tests and bench/.
#ifndef KFORGE_KERNELS_REFERENCE_H_
#define KFORGE_KERNELS_REFERENCE_H_

#include <string>
#include <vector>

#include "kforge_runtime.h"

namespace kforge::kernels::reference {

Status conv2d(const KernelContext& ctx, const Tensor& input, const Tensor& filter, const std::vector<int>& strides,
              const std::vector<int>& paddings, const std::string& padding_algorithm, const std::vector<int>& dilations,
              int groups, const std::string& data_format, Tensor* out);
Status depthwise_conv2d(const KernelContext& ctx, const Tensor& input, const Tensor& filter,
                        const std::vector<int>& strides, const std::vector<int>& paddings,
                        const std::string& padding_algorithm, int groups, const std::vector<int>& dilations,
                        const std::string& data_format, Tensor* out);
Status conv2d_transpose(const KernelContext& ctx, const Tensor& x, const Tensor& filter, const std::vector<int>& strides,
                        const std::vector<int>& paddings, const std::vector<int>& output_padding,
                        const IntArray& output_size, const std::string& padding_algorithm, int groups,
                        const std::vector<int>& dilations, const std::string& data_format, Tensor* out);
Status matmul(const KernelContext& ctx, const Tensor& x, const Tensor& y, bool transpose_x, bool transpose_y,
              Tensor* out);
Status pool2d(const KernelContext& ctx, const Tensor& x, const IntArray& kernel_size, const std::vector<int>& strides,
              const std::vector<int>& paddings, bool ceil_mode, bool exclusive, const std::string& data_format,
              const std::string& pooling_type, bool global_pooling, bool adaptive,
              const std::string& padding_algorithm, Tensor* out);
Status conv2d_fused(const KernelContext& ctx, const Tensor& input, const Tensor& filter, const Tensor* bias,
                    const Tensor* mean, const Tensor* variance, const Tensor* scale, const Tensor* shift,
                    const Tensor* residual, const std::vector<int>& strides, const std::vector<int>& paddings,
                    const std::string& padding_algorithm, const std::vector<int>& dilations, int groups,
                    const std::string& data_format, float epsilon, const std::string& activation,
                    float activation_alpha, float activation_beta, bool activation_after_residual, int out_pixel_stride,
                    Tensor* out);

}  // namespace kforge::kernels::reference

#endif  // KFORGE_KERNELS_REFERENCE_H_
