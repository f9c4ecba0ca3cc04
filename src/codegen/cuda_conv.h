// The host code of the convolutions, pools and lone batch norms of `kforge compile --target cuda`: the template
// context of each step (templates/program/cuda/conv.j2) from the form the CUDA target plan chose for it
// (passes/cuda_plan.h, which says what runs and refuses what cannot). Nothing here fails.
//   - A convolution is one cuDNN call (a conv2d_transpose: cuDNN's backward-data convolution) (templates/cuda/
//     kforge_cudnn.cuh: descriptors made once, the algorithm found once per batch), or kforge_depthwise.cuh's
//     direct kernel, and for a group one epilogue kernel over its output; an asymmetric padding pads the input into
//     the convolution's scratch first (templates/cuda/kforge_conv_pad.cuh).
//   - A pool2d is one generated index-mapped kernel (templates/cuda/kforge_pool.cuh).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "codegen/size_table.h"
#include "passes/cuda_plan.h"
#include "passes/lowered_program.h"
#include "template/value.h"

namespace kforge::codegen {

using passes::CudaBatchNorm;
using passes::CudaConv;
using passes::CudaPool;

/// conv2d_fused's activation as the header's enumerator ("kforge::cuda_conv::Activation::kRelu").
std::string cuda_conv_activation(passes::ConvActivation activation);

/// The host expression of a value's device pointer, typed: (value, element type, is_const).
using CudaBufferExpr = std::function<std::string(uint32_t, const std::string&, bool)>;

/// The context of one convolution step (templates/program/cuda/conv.j2, `conv_step`): number (the site's
/// index among the program's convolutions), launch (its index in kLaunchNames), description, geometry (the
/// C++ initializer of kforge::cuda_conv::ConvGeometry), shape (of kforge::cuda_conv::ConvShape: literals, or
/// expressions over the symbols), x, w, y (pointer expressions), and epilogue:
/// false or {bias, mean, variance, scale, shift, residual (pointer expressions or "nullptr"), epsilon,
/// activation, alpha, beta (C++ literals), after_residual ("true"/"false")}.
/// With `fold_offset` >= 0 (a foldable convolution, see CudaConv::foldable), the filter is rewritten: the step's
/// `fold` is {filter, bias, mean, variance, scale, shift (the original operands), epsilon, weights, folded_bias
/// (pointer expressions into the class's folded-weights memory at fold_offset bytes)}, the convolution reads
/// `weights` and the epilogue adds `folded_bias` instead of the bias and batch norm; otherwise `fold` is false.
tmpl::Value cuda_conv_step(const CudaConv& site, int64_t number, int64_t launch, const std::string& description,
                           const CudaBufferExpr& buffer, const SizeExpr& size, int64_t fold_offset = -1);

/// Bytes of the folded filter and bias of a foldable site, each 64-byte aligned.
int64_t cuda_conv_fold_bytes(const CudaConv& site);
/// The context of one pool step (`pool_step`): number, launch, description, geometry (the initializer of
/// kforge::cuda_pool::Pool2dGeometry: literals, or expressions over the symbols), type ("float"/"double"), batch,
/// x, y.
tmpl::Value cuda_pool_step(const CudaPool& site, int64_t number, int64_t launch, const std::string& description,
                           const CudaBufferExpr& buffer, const SizeExpr& size);

/// The context of one rnn step (`rnn_step`, kforge_rnn.cuh's rnn): launch, description, type, cell (the Cell
/// enumerator), steps, batch, input, hidden, layers, dirs, the pointers x, h0, c0, out, h, c (nullptr where absent),
/// weights (Paddle's weight list, in order), len32 / len64 (the lengths as the type they have, else nullptr) and
/// scratch (the call's scratch buffer, `scratch`).
tmpl::Value cuda_rnn_step(const passes::CudaRnn& site, int64_t launch, const std::string& description,
                          const CudaBufferExpr& buffer, const SizeExpr& size, const std::string& scratch);

/// The context of one batch norm step (`batch_norm_step`): launch, description, x, y, batch, channels, spatial,
/// nhwc ("true"/"false"), and epilogue {bias, mean, variance, scale, shift, residual, epsilon, activation, alpha,
/// beta, after_residual} as for a convolution.
tmpl::Value cuda_batch_norm_step(const CudaBatchNorm& site, int64_t launch, const std::string& description,
                                 const CudaBufferExpr& buffer, const SizeExpr& size);

/// The context of one copy step (`copy_step`): a view (reshape, flatten, ...) whose output has a buffer of its
/// own, because its input is memory the caller owns: launch, description, to, from (pointer expressions), bytes.
tmpl::Value cuda_copy_step(const passes::LoweredProgram& program, uint32_t from, uint32_t to, int64_t launch,
                           const std::string& description, const CudaBufferExpr& buffer, const SizeExpr& size);

inline constexpr const char* kCudaEpilogueHeaderTemplate = "cuda/kforge_channel_epilogue.cuh";
inline constexpr const char* kCudaDepthwiseHeaderTemplate = "cuda/kforge_depthwise.cuh";
inline constexpr const char* kCudaCudnnHeaderTemplate = "cuda/kforge_cudnn.cuh";
inline constexpr const char* kCudaCudnnGraphHeaderTemplate = "cuda/kforge_cudnn_graph.cuh";
// The backend-API descriptor handle kforge_cudnn_graph.cuh and kforge_cudnn_attention.cuh share.
inline constexpr const char* kCudaCudnnBackendHeaderTemplate = "cuda/kforge_cudnn_backend.cuh";
inline constexpr const char* kCudaConvPadHeaderTemplate = "cuda/kforge_conv_pad.cuh";
inline constexpr const char* kCudaPoolHeaderTemplate = "cuda/kforge_pool.cuh";
inline constexpr const char* kCudaRnnHeaderTemplate = "cuda/kforge_rnn.cuh";

}  // namespace kforge::codegen
