// Convolutions and pooling under `kforge compile --target cuda`: what each conv2d / depthwise_conv2d (alone, or
// the conv2d_fused call of a convolution group, passes/fusion.h) and each pool2d of a LoweredProgram is on the
// GPU, as typed sites built here, and the template context of their host code (templates/program/cuda/conv.j2).
//   - A convolution is one cuDNN call (a conv2d_transpose: cuDNN's backward-data convolution) (templates/cuda/kforge_cudnn.cuh: descriptors made once, the algorithm
//     found once per batch) and, for a group, one epilogue kernel over its output (bias, inference batch norm,
//     activation, residual). float32 only; NCHW or NHWC; any stride, dilation and group count; explicit, SAME
//     or VALID padding; an asymmetric one (cuDNN pads both sides alike) pads the input into the convolution's
//     scratch first (templates/cuda/kforge_conv_pad.cuh; not for conv2d_transpose).
//   - A pool2d is one generated index-mapped kernel (templates/cuda/kforge_pool.cuh): max or average, ceil mode,
//     exclusive or not, global, adaptive; float32 or float64.
// The channels and the window must be known at generation time (the geometry is a constant of the output); the
// batch and the spatial dims may be dynamic (the generated code computes them from the input's dims, and cuDNN's
// method is chosen per shape). A SAME padding over a dynamic spatial dim must not depend on it (stride 1).
// Anything else is a reason (`why`) that the caller reports at the op.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/size_table.h"
#include "passes/fusion.h"
#include "passes/lowered_program.h"
#include "template/value.h"

namespace kforge::codegen {

/// One convolution: the tensors (value indices; kNone where absent) and its geometry in logical NCHW terms:
/// input [batch, c, h, w], filter [k, c / groups, r, s], output [batch, k, out_h, out_w].
struct CudaConvSite {
  uint32_t input = passes::kNone, filter = passes::kNone, out = passes::kNone;
  // The epilogue of a convolution group (conv2d_fused's operands).
  uint32_t bias = passes::kNone, mean = passes::kNone, variance = passes::kNone, scale = passes::kNone,
           shift = passes::kNone, residual = passes::kNone;
  passes::SymExpr batch, h, w, out_h, out_w;
  /// The element type of x, the filter, y, a conv bias and the residual: float32, or float16 / bfloat16 (a program
  /// compiled with --precision; the batch-norm vectors stay float32 and the epilogue computes in float32).
  ir::DataType dtype = ir::DataType::kFloat32;
  int64_t c = 0, k = 0, r = 0, s = 0;
  int64_t pad_h = 0, pad_w = 0, stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1, groups = 1;
  /// An asymmetric padding (Paddle's [top, bottom, left, right], which cuDNN cannot take): the bottom and right pads
  /// minus pad_h and pad_w (the top and left ones); 0 for a symmetric padding. A direct depthwise convolution reads
  /// the top and left pads (its bounds checks are the others); cuDNN runs on the input padded into the front of the
  /// convolution's scratch (templates/cuda/kforge_conv_pad.cuh) with no padding of its own.
  int64_t extra_bottom = 0, extra_right = 0;
  bool nhwc = false;
  std::string activation;  // conv2d_fused's name ("relu", "gelu_tanh", ...), "" for none
  double alpha = 0, beta = 0, epsilon = 1e-5;
  bool activation_after_residual = false;
  /// conv2d_transpose: input [batch, c, h, w], filter [c, k / groups, r, s], output [batch, k, out_h, out_w]; run as
  /// cuDNN's backward-data convolution (pads, strides and dilations are the forward convolution's).
  bool transposed = false;
  /// The filter is rewritten once the parameters are bound (fold_filter in kforge_cudnn.cuh): the batch norm (and
  /// bias) folded in, and for NHWC data reordered to KRSC. Set where there is either to do and the filter and
  /// epilogue vectors are all parameters or constants (nothing computed).
  bool foldable = false;
  /// cuDNN reads the filter as KRSC [k, r, s, c / groups]: an NHWC forward convolution whose filter is rewritten
  /// (or a depthwise one, whose OIHW filter has the same bytes). cuDNN's NHWC tensor-core kernels want that.
  bool krsc_filter = false;
  /// A direct depthwise convolution (NHWC, one filter per channel: kforge_depthwise.cuh, not cuDNN) whose filter is
  /// rewritten anyway (foldable) is rewritten tap-major, [r, s, k]: the kernel loads a tap's four channels at once.
  bool tap_major_filter = false;
  /// > 0: the convolution clamps its input at this before use (a direct depthwise convolution whose producer's relu6
  /// left its upper clamp undone, so that the producer's cuDNN call can fuse a plain ReLU). 0: none.
  double input_max = 0;

  /// Whether an epilogue kernel runs after the convolution.
  bool has_epilogue() const;
  bool asymmetric() const { return extra_bottom != 0 || extra_right != 0; }
  /// Whether its input is padded into its scratch before cuDNN runs (an asymmetric padding that cuDNN runs).
  bool pads_input() const { return asymmetric() && !direct_depthwise(); }
  /// Bytes of the padded input of a pads_input() site (kforge_conv_pad.cuh's padded_bytes, 256-aligned).
  passes::SymExpr padded_input_bytes() const;
  /// Whether it runs as kforge_depthwise.cuh's kernel, not cuDNN: NHWC, one filter per channel (the header's
  /// direct_depthwise(ConvGeometry) decides the same from the geometry this site prints).
  bool direct_depthwise() const;
};

/// One pool2d: input [batch, c, h, w], output [batch, c, out_h, out_w] (logical NCHW).
struct CudaPoolSite {
  uint32_t x = passes::kNone, out = passes::kNone;
  ir::DataType dtype = ir::DataType::kFloat32;
  passes::SymExpr batch, h, w, out_h, out_w;
  int64_t c = 0;
  int64_t k_h = 0, k_w = 0, stride_h = 1, stride_w = 1, pad_top = 0, pad_left = 0;
  bool nhwc = false, is_max = true, exclusive = true, adaptive = false;  // a global pool is adaptive to 1 x 1
};

/// An inference batch_norm that no convolution group took: the epilogue kernel alone, x -> out.
struct CudaBatchNormSite {
  uint32_t x = passes::kNone, out = passes::kNone;
  uint32_t mean = passes::kNone, variance = passes::kNone, scale = passes::kNone, shift = passes::kNone;
  ir::DataType dtype = ir::DataType::kFloat32;  // x's and y's: float32, float16 or bfloat16 (the vectors are float32)
  passes::SymExpr batch, spatial;  // the product of the dims after the batch but the channels
  int64_t c = 0;
  bool nhwc = false;
  double epsilon = 1e-5;
};

/// conv2d, depthwise_conv2d, conv2d_fused (a convolution group's call) and conv2d_transpose.
bool is_cuda_conv_op(std::string_view op);
/// pool2d.
bool is_cuda_pool_op(std::string_view op);
/// batch_norm (and its twin batch_norm_).
bool is_cuda_batch_norm_op(std::string_view op);

/// The site of a convolution call, or nullopt with `why` (a sentence) when the CUDA backend cannot run it.
std::optional<CudaConvSite> cuda_conv_site(const passes::LoweredProgram& program, const passes::KernelCall& call,
                                           std::string* why);
/// The positions (passes::Buffer::scratch_at) of the convolutions cuDNN runs: each convolution group's and each
/// convolution call's outside every group, except the direct depthwise ones (no cuDNN). Each gets a scratch
/// buffer in the memory plan (passes::add_scratch_buffers), its cuDNN workspace.
std::vector<uint32_t> cudnn_scratch_positions(const passes::LoweredProgram& program, const passes::FusionPlan& plan);

/// Why the padded input of a pads_input() site cannot go into its scratch (null: none, --cudnn-workspace-mib 0), or
/// nullopt where it can (or its dims are known only at run time: the generated code checks it then).
std::optional<std::string> cuda_conv_padded_input_problem(const CudaConvSite& site, const passes::Buffer* scratch);

/// The site of a pool2d call, or nullopt with `why`.
std::optional<CudaPoolSite> cuda_pool_site(const passes::LoweredProgram& program, const passes::KernelCall& call,
                                           std::string* why);

/// The site of an inference batch_norm (is_test or use_global_stats, float32, float16 or bfloat16, any rank from 2:
/// [n, c, ...] or channel-last), or nullopt with `why`.
/// `is_read(v)`: whether anything reads value v (or it is a program output): batch_norm's outputs other than
/// `out` are not computed, so they must not be.
std::optional<CudaBatchNormSite> cuda_batch_norm_site(const passes::LoweredProgram& program,
                                                      const passes::KernelCall& call,
                                                      const std::function<bool(uint32_t)>& is_read, std::string* why);

/// conv2d_fused's activation as the header's enumerator ("kforge::cuda_conv::Activation::kRelu"), or nullopt.
std::optional<std::string> cuda_conv_activation(std::string_view name);

/// The host expression of a value's device pointer, typed: (value, element type, is_const).
using CudaBufferExpr = std::function<std::string(uint32_t, const std::string&, bool)>;

/// The context of one convolution step (templates/program/cuda/conv.j2, `conv_step`): number (the site's
/// index among the program's convolutions), launch (its index in kLaunchNames), description, geometry (the
/// C++ initializer of kforge::cuda_conv::ConvGeometry), shape (of kforge::cuda_conv::ConvShape: literals, or
/// expressions over the symbols), x, w, y (pointer expressions), and epilogue:
/// false or {bias, mean, variance, scale, shift, residual (pointer expressions or "nullptr"), epsilon,
/// activation, alpha, beta (C++ literals), after_residual ("true"/"false")}.
/// With `fold_offset` >= 0 (a foldable site, see CudaConvSite::foldable), the filter is rewritten: the step's
/// `fold` is {filter, bias, mean, variance, scale, shift (the original operands), epsilon, weights, folded_bias
/// (pointer expressions into the class's folded-weights memory at fold_offset bytes)}, the convolution reads
/// `weights` and the epilogue adds `folded_bias` instead of the bias and batch norm; otherwise `fold` is false.
tmpl::Value cuda_conv_step(const CudaConvSite& site, int64_t number, int64_t launch, const std::string& description,
                           const CudaBufferExpr& buffer, const SizeExpr& size, int64_t fold_offset = -1);

/// Bytes of the folded filter and bias of a foldable site, each 64-byte aligned.
int64_t cuda_conv_fold_bytes(const CudaConvSite& site);
/// The context of one pool step (`pool_step`): number, launch, description, geometry (the initializer of
/// kforge::cuda_pool::Pool2dGeometry: literals, or expressions over the symbols), type ("float"/"double"), batch,
/// x, y.
tmpl::Value cuda_pool_step(const CudaPoolSite& site, int64_t number, int64_t launch, const std::string& description,
                           const CudaBufferExpr& buffer, const SizeExpr& size);

/// The context of one batch norm step (`batch_norm_step`): launch, description, x, y, batch, channels, spatial,
/// nhwc ("true"/"false"), and epilogue {bias, mean, variance, scale, shift, residual, epsilon, activation, alpha,
/// beta, after_residual} as for a convolution.
tmpl::Value cuda_batch_norm_step(const CudaBatchNormSite& site, int64_t launch, const std::string& description,
                                 const CudaBufferExpr& buffer, const SizeExpr& size);

/// The context of one copy step (`copy_step`): a view (reshape, flatten, ...) whose output has a buffer of its
/// own, because its input is memory the caller owns: launch, description, to, from (pointer expressions), bytes.
tmpl::Value cuda_copy_step(const passes::LoweredProgram& program, uint32_t from, uint32_t to, int64_t launch,
                           const std::string& description, const CudaBufferExpr& buffer, const SizeExpr& size);

inline constexpr const char* kCudaEpilogueHeaderTemplate = "cuda/kforge_channel_epilogue.cuh";
inline constexpr const char* kCudaDepthwiseHeaderTemplate = "cuda/kforge_depthwise.cuh";
inline constexpr const char* kCudaCudnnHeaderTemplate = "cuda/kforge_cudnn.cuh";
inline constexpr const char* kCudaConvPadHeaderTemplate = "cuda/kforge_conv_pad.cuh";
inline constexpr const char* kCudaPoolHeaderTemplate = "cuda/kforge_pool.cuh";

}  // namespace kforge::codegen
