// The CUDA target plan's forms of the index-mapped ops that compute on the values (cuda_plan_index.h's families
// kCompute, kNorm, kEinsum and kBinary; codegen/cuda_index_{compute,reduce,norm,linalg,binary}.cpp render them):
// each call's attributes resolved (axes normalised, modes and constants read, the element types checked), or the
// reason its kernel cannot run it ("its axis is out of range"), which the plan reports at the op as
// "--target cuda: OP (NAME) has no CUDA kernel: REASON". Codegen reads the form and cannot fail.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "passes/lowered_program.h"

namespace kforge::passes {

/// prelu's slope: one for all, one per channel, one per element of a batch item.
enum class CudaSlopeMode { kAll, kChannel, kElement };

/// The form of a computing call: the fields its op reads (the others keep their defaults). Value indices are the
/// call's own (KernelCall::tensor_arg, its outputs).
struct CudaComputeForm {
  /// The element type computed on: x's and the output's (a reduction's x; arange's, uniform's and full_with_tensor's
  /// output; an einsum's operands and output).
  ir::DataType dtype = ir::DataType::kUndefined;
  /// A reduction's output, full_with_tensor's output when it converts the value (`converts`).
  ir::DataType out_dtype = ir::DataType::kUndefined;
  /// one_hot's ids: int32 or int64.
  ir::DataType index_dtype = ir::DataType::kUndefined;
  /// dropout: a copy (upscale_in_train), or x * (1 - p) (downgrade_in_infer).
  bool upscale = true;
  double probability = 0;
  /// nearest_interp / bilinear_interp / linear_interp, grid_sample: the layout (linear_interp: NWC), align_corners,
  /// align_mode, the scales (-1: none; linear_interp's one scale is scale_w).
  bool nhwc = false, align_corners = false;
  int64_t align_mode = 0;
  double scale_h = -1, scale_w = -1;
  /// grid_sample: nearest (or bilinear), the padding (0 zeros, 1 border, 2 reflection).
  bool nearest = false;
  int padding = 0;
  /// triu / tril.
  int64_t diagonal = 0;
  /// diag: the offset is `diagonal`; the value off the diagonal of a matrix made from a vector.
  double padding_value = 0;
  /// arange: a start that is an expression of the dims (`start_dim`), or the constant `start`; the step.
  bool symbolic_start = false;
  SymExpr start_dim;
  double start = 0, step = 0;
  /// full_with_tensor: the value converted to the output's dtype (out_dtype), as the CPU kernel's static_cast; cast:
  /// x (dtype) converted to out_dtype, as the CPU kernel's util::convert.
  bool converts = false;
  /// full_with_tensor whose value is a 16-bit float constant known at generation time (paddleformers' bool masks
  /// under --precision float16: `full_with_tensor(1.0, [b, s], bool)`): that constant, converted to out_dtype as a
  /// literal (the index kernels compute on no 16-bit float).
  std::optional<double> constant_value;
  /// pow: the exponent as the float attribute holds it.
  float exponent = 0;
  /// sum / mean / mean_all / max / min / prod / any / all: which dims of x are folded.
  std::vector<bool> reduced;
  /// softmax, cumsum, p_norm: x viewed as [outer, len, inner] around the axis (every element one line: cumsum's
  /// flatten, p_norm's asvector).
  SymExpr outer = 1, len = 1, inner = 1;
  /// cumsum.
  bool exclusive = false, reverse = false;
  /// group_norm: groups of channels / groups channels, the product of the other dims after the batch, NHWC-like
  /// (channels last), whether the statistics go to the op's mean and variance outputs, epsilon (rounded to float).
  int64_t groups = 0, channels = 0;
  SymExpr spatial = 1;
  bool channel_last = false, stats = false;
  double epsilon = 0;
  /// p_norm's order (the float attribute widened to double).
  double p = 0;
  /// uniform: [min, max) and the seed. randint: [low, high) as min and max.
  double min = 0, max = 0;
  int64_t seed = 0;
  /// deformable_conv: [stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w]; its deformable groups (its groups
  /// are `groups`).
  std::vector<int64_t> window;
  int64_t deformable_groups = 1;
  /// prior_box: each prior's half width and height as the CPU kernel computes them before their cast to the
  /// element type (kernels/prior_box.cc: the expanded aspect ratios and the min / max sizes, in its order), the four
  /// variances, the offset and steps (its float attributes), whether the boxes are clipped to [0, 1].
  std::vector<double> prior_half_w, prior_half_h, variances;
  double prior_offset = 0, step_w = 0, step_h = 0;
  bool clip = false;
  /// roi_align: the pooled size, the sample grid (<= 0: from each box's size), the scale (the float attribute) and
  /// the half-pixel shift; boxes_num's dtype is index_dtype (kUndefined: no boxes_num, every box of image 0).
  int64_t pooled_h = 1, pooled_w = 1, sampling_ratio = -1;
  float spatial_scale = 1;
  bool aligned = false;
  /// yolo_box: the anchors' (width, height) pairs, the class count, the downsample ratio, conf_thresh, scale_x_y,
  /// iou_aware and its factor (the float attributes as floats); clip_bbox is `clip`.
  std::vector<int64_t> anchors;
  int64_t class_num = 0, downsample_ratio = 0;
  float conf_thresh = 0, scale_x_y = 1, iou_aware_factor = 0;
  bool iou_aware = false;
  /// prelu: whose slope; for kChannel, whether the channels are dim 1 (else the last).
  CudaSlopeMode slope = CudaSlopeMode::kAll;
  bool channel_first = false;
  /// einsum: the output's labels, then the contracted ones; each operand's element stride per loop label (a label
  /// repeated in an operand walks its diagonal); the contracted labels' extents.
  size_t output_labels = 0;
  std::vector<std::vector<SymExpr>> strides;
  SymShape contracted;
};

/// Whether `call` is of a computing family (a CudaComputeForm): kCompute, kNorm, kEinsum, kBinary.
bool has_cuda_compute_form(const KernelCall& call);
/// The form of such a call, or nullopt with `why` (a sentence) when its CUDA kernel cannot run it.
std::optional<CudaComputeForm> plan_cuda_compute(const LoweredProgram& program, const KernelCall& call,
                                                 std::string* why);

}  // namespace kforge::passes
