// The CUDA target plan (the last step of run_pipeline, for a target whose CompileTarget::cuda_plan is set): what
// runs each convolution, conv2d_transpose, pool2d, lone batch norm and GEMM of a lowered program on the GPU, or
// the located reason it cannot run. The CUDA backend (codegen/cuda_program.h) renders what the plan chose and
// cannot fail for these calls; a refusal is an error of the pipeline, at the op.
//   - A convolution (conv2d, depthwise_conv2d, a convolution group's conv2d_fused, conv2d_transpose) is one cuDNN
//     call (a conv2d_transpose: cuDNN's backward-data convolution; templates/cuda/kforge_cudnn.cuh) or, NHWC with
//     one filter per channel, kforge_depthwise.cuh's direct kernel, and for a group one epilogue over its output
//     (bias, inference batch norm, activation, residual). float32, float16 or bfloat16; NCHW or NHWC; any stride,
//     dilation and group count; explicit, SAME or VALID padding; an asymmetric one (cuDNN pads both sides alike)
//     pads the input into the convolution's cuDNN workspace first (not for conv2d_transpose).
//   - A pool2d is one index-mapped kernel (kforge_pool.cuh): max or average, ceil mode, exclusive or not, global,
//     adaptive; float32, float64 or 16-bit.
//   - An inference batch norm that no convolution group took is the epilogue kernel alone.
//   - A GEMM group's form is the FusionPlan's GemmGroup (operand layouts, epilogue); the plan checks that its dims
//     fit the kernels' int, and says why each matmul outside every GEMM group is no GEMM.
// The channels and the window must be known at generation time (the geometry is a constant of the output); the
// batch and the spatial dims may be dynamic. A SAME padding over a dynamic spatial dim must not depend on it.
// Every other call outside the groups runs as its CudaRun says (cuda_plan_index.h: an index-mapped kernel, the
// known elements written, a compaction, a copy, nothing), or is refused: no kernel runs it, or the attributes of a
// data-movement or select op or a batched matmul are beyond its kernel (CudaIndexMap), or those of a computing op
// (a reduction, a norm, einsum, ...: CudaComputeForm, cuda_plan_compute.h).
// A compaction (nonzero, masked_select, unique) has its CudaCompaction; a size from data the target cannot bind, and a
// tensor dtype the runtime cannot name, are refused (cuda_plan_data.cpp).
// A new CUDA op that a library or header call runs adds its form here (a struct, its builder in a cuda_plan_*.cpp
// that returns it or a reason, a map of CudaPlan) and its rendering to codegen/, which reads the form only.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "passes/cuda_plan_compute.h"
#include "passes/cuda_plan_index.h"
#include "passes/fusion.h"
#include "passes/lowered_program.h"
#include "support/source_manager.h"

namespace kforge::passes {

struct MultiKernelPlan;  // passes/variants.h

/// conv2d_fused's activation (its `activation` attribute's names; silu is swish).
enum class ConvActivation { kNone, kRelu, kRelu6, kLeakyRelu, kClip, kHardswish, kSigmoid, kTanh, kSwish, kGelu, kGeluTanh };

/// The activation conv2d_fused's name stands for ("" is none), or nullopt when the CUDA epilogue has none.
std::optional<ConvActivation> conv_activation(std::string_view name);

/// One convolution: the tensors (value indices; kNone where absent) and its geometry in logical NCHW terms:
/// input [batch, c, h, w], filter [k, c / groups, r, s], output [batch, k, out_h, out_w].
struct CudaConv {
  uint32_t input = kNone, filter = kNone, out = kNone;
  // The epilogue of a convolution group (conv2d_fused's operands).
  uint32_t bias = kNone, mean = kNone, variance = kNone, scale = kNone, shift = kNone, residual = kNone;
  SymExpr batch, h, w, out_h, out_w;
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
  ConvActivation activation = ConvActivation::kNone;
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
  /// mobilenet_v2's relu6 split (plan_cuda): this group's relu6 runs as a ReLU (activation kRelu, which cuDNN
  /// fuses into its call), its clamp at 6 moved into the direct depthwise convolution that alone reads the output.
  bool relu6_as_relu = false;
  /// > 0: the convolution clamps its input at this before use (the consumer of a relu6 split). 0: none.
  double input_max = 0;

  /// Output dims the value has and its geometry gives, equal only under the program's run-time checks (see
  /// output_dims_agree): the generated code checks each pair before any kernel runs.
  std::vector<std::pair<SymExpr, SymExpr>> checked_dims;

  /// Whether an epilogue kernel runs after the convolution.
  bool has_epilogue() const;
  bool asymmetric() const { return extra_bottom != 0 || extra_right != 0; }
  /// Whether its input is padded into its scratch before cuDNN runs (an asymmetric padding that cuDNN runs).
  bool pads_input() const { return asymmetric() && !direct_depthwise(); }
  /// Bytes of the padded input of a pads_input() convolution (kforge_conv_pad.cuh's padded_bytes, 256-aligned).
  SymExpr padded_input_bytes() const;
  /// Whether it runs as kforge_depthwise.cuh's kernel, not cuDNN: NHWC, one filter per channel (the header's
  /// direct_depthwise(ConvGeometry) decides the same from the geometry codegen prints).
  bool direct_depthwise() const;
};

/// One pool2d: input [batch, c, h, w], output [batch, c, out_h, out_w] (logical NCHW).
struct CudaPool {
  uint32_t x = kNone, out = kNone;
  ir::DataType dtype = ir::DataType::kFloat32;
  SymExpr batch, h, w, out_h, out_w;
  int64_t c = 0;
  int64_t k_h = 0, k_w = 0, stride_h = 1, stride_w = 1, pad_top = 0, pad_left = 0;
  /// As CudaConv::checked_dims.
  std::vector<std::pair<SymExpr, SymExpr>> checked_dims;
  bool nhwc = false, is_max = true, exclusive = true, adaptive = false;  // a global pool is adaptive to 1 x 1
};

/// An inference batch_norm that no convolution group took: the epilogue kernel alone, x -> out.
struct CudaBatchNorm {
  uint32_t x = kNone, out = kNone;
  uint32_t mean = kNone, variance = kNone, scale = kNone, shift = kNone;
  ir::DataType dtype = ir::DataType::kFloat32;  // x's and y's: float32, float16 or bfloat16 (the vectors are float32)
  SymExpr batch, spatial;                       // the product of the dims after the batch but the channels
  int64_t c = 0;
  bool nhwc = false;
  double epsilon = 1e-5;
};

/// An rnn (kforge_rnn.cuh): the values of x, out, the initial and final states (c0 and c: LSTM only), Paddle's weight
/// list and the sequence lengths (kNone: every row runs every step); its scratch holds the gates of every step
/// (cuda_index_scratch).
struct CudaRnn {
  uint32_t x = kNone, out = kNone, h0 = kNone, c0 = kNone, h = kNone, c = kNone, lengths = kNone;
  std::vector<uint32_t> weights;
  ir::DataType dtype = ir::DataType::kFloat32, length_dtype = ir::DataType::kInt32;
  SymExpr steps, batch, input;
  int64_t hidden = 0, layers = 1, dirs = 1;
  std::string mode;
};

/// An fft_r2c (kforge_cufft.cuh): x (float32 or float64) and out (complex64 / complex128 of the same precision),
/// x's dims, the transformed axes (non-negative, Paddle's order: the last is the real-to-complex one, 1 to 3 of
/// them: cuFFT's plans), the normalization ("backward", "forward" or "ortho") and direction, onesided. Its scratch
/// (cuda_index_scratch) holds cuFFT's one-sided spectrum and, where the axes are not x's last ones in order, x
/// permuted.
struct CudaFft {
  uint32_t x = kNone, out = kNone;
  ir::DataType dtype = ir::DataType::kFloat32;
  SymShape dims;
  std::vector<int64_t> axes;
  std::string normalization;
  bool forward = true, onesided = true;
  /// Whether x is permuted into the scratch first (its transformed axes are not its last ones in order).
  bool permuted() const;
  /// The scratch bytes (kforge_cufft.cuh's fft_scratch_bytes).
  SymExpr scratch_bytes() const;
};

/// `real` or `abs` of a complex64 / complex128 tensor (kforge_cufft.cuh's complex_part): x, out, the element type
/// of out (float32 or float64) and the element count.
struct CudaComplexPart {
  uint32_t x = kNone, out = kNone;
  ir::DataType dtype = ir::DataType::kFloat32;
  SymExpr count;
  bool abs = false;
};

/// A compaction (nonzero, masked_select, unique: kforge_select.cuh, kforge_unique.cuh; generate_proposals,
/// distribute_fpn_proposals: kforge_proposals.cuh): its count comes back to the host and binds the data-dependent dim `symbol` (cuda_plan_data.cpp). Value indices; kNone where absent.
struct CudaCompaction {
  uint32_t x = kNone;
  uint32_t mask = kNone;    // masked_select's bool mask
  uint32_t out = kNone;     // nonzero's indices, masked_select's elements, unique's `out`
  uint32_t symbol = kNone;  // the Symbol its count gives
  /// unique: its other outputs (kNone where absent or unread) and their index type (int32 or int64); along an axis
  /// (its axis=[a]) x is read as [outer, x.dims[a], inner].
  bool unique = false;
  uint32_t indices = kNone, inverse = kNone, counts = kNone;
  ir::DataType index_dtype = ir::DataType::kInt64;
  bool along_axis = false;
  SymExpr outer = 1, inner = 1;
  /// generate_proposals (kforge_proposals.cuh): `out` is rpn_rois; its operands scores, bbox_deltas, im_shape,
  /// anchors and variances in that order, rpn_roi_probs and rpn_rois_num (kNone where unread), scores' [N, A, H * W]
  /// and the attributes (constants).
  bool proposals = false;
  std::vector<uint32_t> operands;
  uint32_t probs = kNone, rois_num = kNone;
  SymExpr images = 1, anchors = 1, places = 1;
  int64_t pre_nms_top_n = 0, post_nms_top_n = 0;
  double nms_thresh = 0, min_size = 0, eta = 1;
  bool pixel_offset = true;
  /// distribute_fpn_proposals (kforge_proposals.cuh): `x` is fpn_rois, `mask` rois_num, `out` restore_index (fpn_rois'
  /// rows: no symbol); per level its rois, their count per image (kNone where unread) and the Symbol of its rows
  /// (kNone where none); the attributes.
  bool fpn = false;
  std::vector<uint32_t> level_rois, level_nums, level_symbols;
  int64_t min_level = 0, max_level = 0, refer_level = 0, refer_scale = 0;
};

/// Why a call cannot run on the GPU, at its op: the whole message the pipeline reports ("--target cuda: ...").
struct CudaRefusal {
  SourceLoc loc;
  std::string message;
};

struct CudaPlan {
  /// Each convolution group's conv2d_fused, by group index.
  std::map<uint32_t, CudaConv> group_convs;
  /// The convolutions, pools and batch norms outside every group, by call index.
  std::map<uint32_t, CudaConv> convs;
  std::map<uint32_t, CudaPool> pools;
  std::map<uint32_t, CudaBatchNorm> batch_norms;
  /// The rnn calls, by call index.
  std::map<uint32_t, CudaRnn> rnns;
  /// The fft_r2c calls and the `real` / `abs` calls of complex tensors, by call index.
  std::map<uint32_t, CudaFft> ffts;
  std::map<uint32_t, CudaComplexPart> complex_parts;
  /// The matmul / bmm calls outside every GEMM group: why each is no GEMM (the batched kernel runs it).
  std::map<uint32_t, std::string> no_gemm;
  /// How each call outside every group runs, by call index (cuda_plan_index.h); a call no kernel runs is refused.
  std::map<uint32_t, CudaRun> runs;
  /// The data-movement calls' and the batched matmuls' forms, by call index (those whose results are not known).
  std::map<uint32_t, CudaIndexMap> index_maps;
  /// The computing calls' forms (cuda_plan_compute.h: reductions, norms, einsum, ...), by call index.
  std::map<uint32_t, CudaComputeForm> compute_forms;
  /// The compactions the backend runs, by call index (cuda_plan_data.cpp).
  std::map<uint32_t, CudaCompaction> compactions;
  /// The positions (Buffer::scratch_at) of the convolutions cuDNN runs, each with a scratch buffer of the memory
  /// plan (its cuDNN workspace, add_scratch_buffers): the groups' and the lone calls', but the direct depthwise.
  std::vector<uint32_t> scratch_positions;
  /// The convolutions' and pools' checked_dims with their calls, for the generated code to check at run time.
  std::vector<DimEquality> geometry_checks;
  /// What cannot run, in the order the pipeline reports it: the GEMM groups', the convolution groups', then the
  /// calls outside every group in program order.
  std::vector<CudaRefusal> refusals;
  /// Index-mapped calls launched together as one kernel (plan_cuda_index_batches), each list ascending, of two or
  /// more calls; the launch runs where the last of them ran.
  std::vector<std::vector<uint32_t>> index_batches;

  /// The convolution of group g (a convolution group) or of call c outside every group; null where none.
  const CudaConv* group_conv(uint32_t g) const;
  const CudaConv* call_conv(uint32_t c) const;
};

/// Index batches (cuda_plan_batches.cpp): runs of index-mapped calls that launch one after the other with nothing
/// between them and do not depend on each other -- a decoder layer's key and value caches grown by concat, one
/// after the other -- become one launch (CudaPlan::index_batches). A decode step is bound by its launches, not its
/// bytes: each one saved is a few microseconds of a step of ~0.6 ms.
void plan_cuda_index_batches(const LoweredProgram& program, const FusionPlan& fusion, CudaPlan& plan);

/// conv2d, depthwise_conv2d, conv2d_fused (a convolution group's call) and conv2d_transpose.
bool is_cuda_conv_op(std::string_view op);
/// pool2d.
bool is_cuda_pool_op(std::string_view op);
/// batch_norm (and its twin batch_norm_).
bool is_cuda_batch_norm_op(std::string_view op);
/// rnn.
bool is_cuda_rnn_op(std::string_view op);
/// fft_r2c.
bool is_cuda_fft_op(std::string_view op);
/// `real` or `abs` of a complex tensor.
bool is_cuda_complex_part(const LoweredProgram& program, const KernelCall& call);
/// Whether every result of `call` is known at generation time (LoweredValue::known), of a dtype the index-mapped
/// kernels move, and it has one: the backend writes the known elements instead of running the op.
bool cuda_results_known(const LoweredProgram& program, const KernelCall& call);

/// Whether the output dims `value` (a conv's or pool's out_h / out_w as its value has them) agree with `geometry`
/// (those its geometry gives). Equal after the broadcast equalities (EqualDims) is agreement; with such equalities
/// in the program, two symbolic dims may also be equal only through them, spelled differently (an FPN's upsampled
/// maps make a detector's dims multiples of 32): that pair goes into `checked` for a run-time check. A constant
/// difference is a disagreement.
bool output_dims_agree(const LoweredProgram& program, const SymExpr& value, const SymExpr& geometry,
                       std::vector<std::pair<SymExpr, SymExpr>>* checked);

/// The form of a convolution call, or nullopt with `why` (a sentence) when the CUDA target cannot run it.
std::optional<CudaConv> plan_cuda_conv(const LoweredProgram& program, const KernelCall& call, std::string* why);
/// The form of an rnn call (cuda_plan_rnn.cpp), or nullopt with `why`.
std::optional<CudaRnn> plan_cuda_rnn(const LoweredProgram& program, const KernelCall& call, std::string* why);
/// The form of an fft_r2c call (cuda_plan_fft.cpp), or nullopt with `why` (with `cuda_graph` always: its plan is
/// made by the first run with new dims).
std::optional<CudaFft> plan_cuda_fft(const LoweredProgram& program, const KernelCall& call, bool cuda_graph,
                                     std::string* why);
/// The form of `real` / `abs` of a complex tensor (is_cuda_complex_part), or nullopt with `why`.
std::optional<CudaComplexPart> plan_cuda_complex_part(const LoweredProgram& program, const KernelCall& call,
                                                      std::string* why);
/// The form of a pool2d call, or nullopt with `why`.
std::optional<CudaPool> plan_cuda_pool(const LoweredProgram& program, const KernelCall& call, std::string* why);
/// The form of an inference batch_norm (is_test or use_global_stats, float32, float16 or bfloat16, any rank from 2:
/// [n, c, ...] or channel-last), or nullopt with `why`. `readers[v]`: how many calls read value v (plus one for a
/// program output): batch_norm's outputs other than `out` are not computed, so nothing may read them.
std::optional<CudaBatchNorm> plan_cuda_batch_norm(const LoweredProgram& program, const KernelCall& call,
                                                  const std::vector<uint32_t>& readers, std::string* why);

/// The plan of the whole program: every form above, the relu6 splits, and a scratch buffer of `scratch_bytes` per
/// cuDNN convolution added to `program`'s memory plan (add_scratch_buffers), and one per call that needs a scratch
/// of its own size (cuda_index_scratch.h: topk).
/// `cuda_graph` (--cuda-graph): no dim may be sized by data (a captured graph replays fixed sizes). When nothing
/// else is refused, the data-dependent part is planned last (plan_cuda_data_dependent).
CudaPlan plan_cuda(LoweredProgram& program, const FusionPlan& fusion, int64_t scratch_bytes,
                   bool cuda_graph = false);

/// The elementwise and row groups whose fused kernels cannot be written (a dtype with no CUDA spelling, an rms_norm
/// row pattern, a row pattern outside float32 / float64, a row group's strided store), added to `refusals` at each
/// group's first call (cuda_plan_groups.cpp).
void refuse_cuda_fused_groups(const LoweredProgram& program, const FusionPlan& fusion,
                              std::vector<CudaRefusal>& refusals);

/// The compactions' forms (CudaPlan::compactions) and the refusals of what the target cannot size from data: every
/// data-dependent dim with `cuda_graph`, a dim read from a tensor's values by a shape rule the host does not run,
/// one counted by an op with no counting kernel, a compaction its kernels do not take, an output sized by data
/// that is not copied. Needs the plan's runs, convolutions, pools and batch norms.
void plan_cuda_data_dependent(const LoweredProgram& program, bool cuda_graph, CudaPlan& plan);

/// Whether the runtime (kforge_runtime.h's kforge::DataType) has an enumerator for `dtype`: the CUDA class names the
/// dtype of each input, parameter and output (codegen's runtime_dtype spells it).
bool cuda_runtime_dtype(ir::DataType dtype);

/// Refuses an input, parameter (or the dtype its file holds) or output whose dtype the runtime has no name for, at
/// its place, and a constant of a dtype that cannot be uploaded (cuda_plan_data.cpp).
void plan_cuda_tensor_dtypes(const LoweredProgram& program, CudaPlan& plan);

}  // namespace kforge::passes
