// kforge's reference CPU kernel library: every kernel and infer-meta function that kernels/ops.yaml
// names, in the calling convention of docs/calling-convention.md. A kernel library of your own implements the
// same declarations (the `<P>_decls.h` that `kforge ops` emits lists exactly the ones your op set needs).
//
// Kernels: `Status name(const KernelContext& ctx, <kernel: param: in order>, <outputs as Tensor*>)`. Outputs
// arrive with dtype, dims and data set; an in-place or view output may alias its input. Kernels dispatch on
// ctx.dtype (falling back to the natural input's dtype when it is kUndefined) and return an error status for a
// dtype, shape or value they do not support. They are deterministic: same inputs, same bits.
//
// Infer-meta: `Status Name(<infer_meta: param: in order>, <outputs as Tensor*>)`; they read only dtype and dims
// (nearest_interp's also reads its size tensors, see InterpolateInferMeta) and set the outputs' dtype and dims.
#ifndef KFORGE_EXAMPLES_KERNELS_KFORGE_KERNELS_H_
#define KFORGE_EXAMPLES_KERNELS_KFORGE_KERNELS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kforge_fused.h"  // the kernels of kernels/fusion.yaml's fused ops
#include "kforge_runtime.h"

namespace kforge::kernels {

// ---- library settings (kernels/settings.cc; docs/kernels.md) -------------------------------------------------
// The float32 conv2d, depthwise_conv2d, conv2d_transpose, matmul and NCHW pool2d run on oneDNN when the library was
// built with it (meson option `onednn`; has_onednn()); NHWC pool2d runs a channel-last loop (nn.cc) that computes what
// the reference loops compute; every other dtype and case runs the reference loops.
// conv2d, depthwise_conv2d, conv2d_fused, pool2d and batch_norm also take data_format "NCHW8c" (oneDNN's nChw8c:
// channels a multiple of 8, activations 5-D [N, C/8, H, W, 8], element (n, c, h, w) at
// (((n * C/8 + c/8) * H + h) * W + w) * 8 + c % 8; filters OIHW, per-channel vectors [C]), which oneDNN convolutions
// read and write without reorders and NCHW8c pool2d runs through the channel-last loop; other kernels reject it.
bool has_onednn();
// The activation layout this library's convolutions run fastest in on this CPU, as --layout spells it: "nchw8c"
// where oneDNN's effective ISA (dnnl_get_effective_cpu_isa, which ONEDNN_MAX_CPU_ISA caps) has AVX2 but not
// AVX-512 core, "nhwc" otherwise (and without oneDNN). Classes generated with two layout plans (--layout auto,
// docs/compile.md) ask it when they are constructed.
const char* preferred_conv_layout();
// Threads those oneDNN kernels may use (at least 1; default 1). Their work is split the same way whatever the count,
// so results are bitwise identical for every count. The reference loops are single-threaded. Thread-safe; takes
// effect at the next call.
void set_num_threads(int threads);
int num_threads();
// Declares that the `bytes` at `data` (a model's parameters) will not change until release_constant(data), which must
// come before that memory is written or freed. The oneDNN convolutions then reorder a filter found there into the
// layout their primitive prefers once and keep that copy; other filters are reordered on every call, or read in
// place by a plain-layout primitive when that is cheaper. Thread-safe; both do nothing without oneDNN.
void declare_constant(const void* data, size_t bytes);
void release_constant(const void* data);

// ---- elementwise binary (numpy broadcasting); float32, float64, int32, int64 ---------------------------------
Status add(const KernelContext& ctx, const Tensor& x, const Tensor& y, Tensor* out);
Status subtract(const KernelContext& ctx, const Tensor& x, const Tensor& y, Tensor* out);
Status multiply(const KernelContext& ctx, const Tensor& x, const Tensor& y, Tensor* out);
Status divide(const KernelContext& ctx, const Tensor& x, const Tensor& y, Tensor* out);  // integer /0: error
Status maximum(const KernelContext& ctx, const Tensor& x, const Tensor& y, Tensor* out);
Status minimum(const KernelContext& ctx, const Tensor& x, const Tensor& y, Tensor* out);
// fmax / fmin: a NaN operand is ignored (std::fmax); integers through float (int32) or double (int64) and back
// with lrint, as Paddle's FMaxFunctor.
Status fmax(const KernelContext& ctx, const Tensor& x, const Tensor& y, Tensor* out);
Status fmin(const KernelContext& ctx, const Tensor& x, const Tensor& y, Tensor* out);
Status elementwise_pow(const KernelContext& ctx, const Tensor& x, const Tensor& y, Tensor* out);
// Sum of a list of same-shape tensors (no broadcasting, as Paddle's add_n); at least one input.
Status add_n(const KernelContext& ctx, TensorList inputs, Tensor* out);

// ---- elementwise unary; float32, float64 (relu, scale and clip also int32, int64) -------------------------------
Status relu(const KernelContext& ctx, const Tensor& x, Tensor* out);
Status sigmoid(const KernelContext& ctx, const Tensor& x, Tensor* out);
Status tanh(const KernelContext& ctx, const Tensor& x, Tensor* out);
Status exp(const KernelContext& ctx, const Tensor& x, Tensor* out);
Status rsqrt(const KernelContext& ctx, const Tensor& x, Tensor* out);
Status floor(const KernelContext& ctx, const Tensor& x, Tensor* out);
Status ceil(const KernelContext& ctx, const Tensor& x, Tensor* out);
Status gelu(const KernelContext& ctx, const Tensor& x, bool approximate, Tensor* out);
Status silu(const KernelContext& ctx, const Tensor& x, Tensor* out);
Status swish(const KernelContext& ctx, const Tensor& x, Tensor* out);  // x * sigmoid(x), as silu
Status hardswish(const KernelContext& ctx, const Tensor& x, Tensor* out);
// Paddle's ThresholdedReluFunctor: x > threshold ? x : value.
Status thresholded_relu(const KernelContext& ctx, const Tensor& x, float threshold, float value, Tensor* out);
Status scale(const KernelContext& ctx, const Tensor& x, const Scalar& scale, const Scalar& bias, bool bias_after_scale,
             Tensor* out);
Status clip(const KernelContext& ctx, const Tensor& x, const Scalar& min, const Scalar& max, Tensor* out);
Status cast(const KernelContext& ctx, const Tensor& x, DataType dtype, Tensor* out);
Status where(const KernelContext& ctx, const Tensor& condition, const Tensor& x, const Tensor& y, Tensor* out);

// ---- creation and copies ------------------------------------------------------------------------------------
Status full(const KernelContext& ctx, const IntArray& shape, const Scalar& value, DataType dtype, Tensor* out);
Status full_like(const KernelContext& ctx, const Tensor& x, const Scalar& value, DataType dtype, Tensor* out);
Status full_int_array(const KernelContext& ctx, const std::vector<int64_t>& value, DataType dtype, Tensor* out);
Status assign_raw(const KernelContext& ctx, const Tensor& x, Tensor* out);  // op `assign`
Status assign_value(const KernelContext& ctx, const std::vector<int>& shape, DataType dtype,
                    const std::vector<Scalar>& values, Tensor* out);  // op `assign_value_`
Status shape(const KernelContext& ctx, const Tensor& input, Tensor* out);    // int32
Status shape64(const KernelContext& ctx, const Tensor& input, Tensor* out);  // int64
Status numel(const KernelContext& ctx, const Tensor& x, Tensor* size);       // x's element count, int64 0-D
// Inference (is_test): identity for "upscale_in_train", x * (1 - p) for "downgrade_in_infer"; mask (optional) is
// all ones. Training draws the mask from a counter-based generator seeded by seed_tensor, else `seed`.
Status dropout(const KernelContext& ctx, const Tensor& x, const Tensor* seed_tensor, const Scalar& p, bool is_test,
               const std::string& mode, int seed, bool fix_seed, Tensor* out, Tensor* mask);

// ---- shape manipulation (any dtype) ---------------------------------------------------------------------------
Status reshape(const KernelContext& ctx, const Tensor& x, const IntArray& shape, Tensor* out);
Status flatten(const KernelContext& ctx, const Tensor& x, int start_axis, int stop_axis, Tensor* out);
Status squeeze(const KernelContext& ctx, const Tensor& x, const IntArray& axis, Tensor* out);
Status unsqueeze(const KernelContext& ctx, const Tensor& x, const IntArray& axis, Tensor* out);
Status transpose(const KernelContext& ctx, const Tensor& x, const std::vector<int>& perm, Tensor* out);
Status expand(const KernelContext& ctx, const Tensor& x, const IntArray& shape, Tensor* out);
Status concat(const KernelContext& ctx, TensorList x, const Scalar& axis, Tensor* out);
Status split(const KernelContext& ctx, const Tensor& x, const IntArray& sections, const Scalar& axis,
             MutableTensorList out);
Status split_with_num(const KernelContext& ctx, const Tensor& x, int num, const Scalar& axis, MutableTensorList out);
Status stack(const KernelContext& ctx, TensorList x, int axis, Tensor* out);
Status slice(const KernelContext& ctx, const Tensor& input, const std::vector<int64_t>& axes, const IntArray& starts,
             const IntArray& ends, const std::vector<int64_t>& infer_flags, const std::vector<int64_t>& decrease_axis,
             Tensor* out);
Status strided_slice(const KernelContext& ctx, const Tensor& x, const std::vector<int>& axes, const IntArray& starts,
                     const IntArray& ends, const IntArray& strides, Tensor* out);

// ---- linear algebra, normalisation, reductions ----------------------------------------------------------------
Status matmul(const KernelContext& ctx, const Tensor& x, const Tensor& y, bool transpose_x, bool transpose_y,
              Tensor* out);
Status embedding(const KernelContext& ctx, const Tensor& x, const Tensor& weight, int64_t padding_idx, Tensor* out);
Status softmax(const KernelContext& ctx, const Tensor& x, int axis, Tensor* out);
Status layer_norm(const KernelContext& ctx, const Tensor& x, const Tensor* scale, const Tensor* bias, float epsilon,
                  int begin_norm_axis, Tensor* out, Tensor* mean, Tensor* variance);
Status sum(const KernelContext& ctx, const Tensor& x, const IntArray& axis, DataType dtype, bool keepdim, Tensor* out);
Status mean(const KernelContext& ctx, const Tensor& x, const IntArray& axis, bool keepdim, Tensor* out);
Status max(const KernelContext& ctx, const Tensor& x, const IntArray& axis, bool keepdim, Tensor* out);

// ---- convolution, pooling, normalisation, resizing; float32, float64 --------------------------------------------
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
// Inference (is_test or use_global_stats) normalises with the running statistics; training uses the batch's and
// updates mean_out/variance_out with momentum. saved_mean/saved_variance get the batch mean and 1/sqrt(var + eps)
// in training, zeros in inference; reserve_space (optional) is unused.
Status batch_norm(const KernelContext& ctx, const Tensor& x, const Tensor& mean, const Tensor& variance,
                  const Tensor* scale, const Tensor* bias, bool is_test, float momentum, float epsilon,
                  const std::string& data_format, bool use_global_stats, bool trainable_statistics, Tensor* out,
                  Tensor* mean_out, Tensor* variance_out, Tensor* saved_mean, Tensor* saved_variance,
                  Tensor* reserve_space);
Status pool2d(const KernelContext& ctx, const Tensor& x, const IntArray& kernel_size, const std::vector<int>& strides,
              const std::vector<int>& paddings, bool ceil_mode, bool exclusive, const std::string& data_format,
              const std::string& pooling_type, bool global_pooling, bool adaptive,
              const std::string& padding_algorithm, Tensor* out);
// 4-D input only (NCHW or NHWC).
Status nearest_interp(const KernelContext& ctx, const Tensor& x, const Tensor* out_size, TensorList size_tensor,
                      const Tensor* scale_tensor, const std::string& data_format, int out_d, int out_h, int out_w,
                      const std::vector<float>& scale, const std::string& interp_method, bool align_corners,
                      int align_mode, Tensor* output);

}  // namespace kforge::kernels

namespace kforge::meta {

Status UnchangedInferMeta(const Tensor& x, Tensor* out);
Status ElementwiseInferMeta(const Tensor& x, const Tensor& y, Tensor* out);
Status CastInferMeta(const Tensor& x, DataType dtype, Tensor* out);
Status WhereInferMeta(const Tensor& condition, const Tensor& x, const Tensor& y, Tensor* out);

Status CreateInferMeta(const IntArray& shape, DataType dtype, Tensor* out);
Status CreateLikeInferMeta(const Tensor& x, DataType dtype, Tensor* out);
Status CreateVecShapeInferMeta(const std::vector<int64_t>& value, DataType dtype, Tensor* out);
Status AssignValueInferMeta(const std::vector<int>& shape, DataType dtype, Tensor* out);
Status ShapeInferMeta(const Tensor& input, Tensor* out);
Status Shape64InferMeta(const Tensor& input, Tensor* out);
Status NumelInferMeta(const Tensor& x, Tensor* size);  // int64, 0-D
Status DropoutInferMeta(const Tensor& x, const Tensor* seed_tensor, const Scalar& p, bool is_test,
                        const std::string& mode, int seed, bool fix_seed, Tensor* out, Tensor* mask);

Status ReshapeInferMeta(const Tensor& x, const IntArray& shape, Tensor* out);
Status FlattenInferMeta(const Tensor& x, int start_axis, int stop_axis, Tensor* out);
Status SqueezeInferMeta(const Tensor& x, const IntArray& axis, Tensor* out);
Status UnsqueezeInferMeta(const Tensor& x, const IntArray& axis, Tensor* out);
Status TransposeInferMeta(const Tensor& x, const std::vector<int>& perm, Tensor* out);
Status ExpandInferMeta(const Tensor& x, const IntArray& shape, Tensor* out);
Status ConcatInferMeta(TensorList x, const Scalar& axis, Tensor* out);
Status AddNInferMeta(TensorList inputs, Tensor* out);
Status SplitInferMeta(const Tensor& x, const IntArray& sections, const Scalar& axis, MutableTensorList out);
Status SplitWithNumInferMeta(const Tensor& x, int num, const Scalar& axis, MutableTensorList out);
Status StackInferMeta(TensorList x, int axis, Tensor* out);
Status SliceRawInferMeta(const Tensor& input, const std::vector<int64_t>& axes, const IntArray& starts,
                         const IntArray& ends, const std::vector<int64_t>& infer_flags,
                         const std::vector<int64_t>& decrease_axis, Tensor* out);
Status StridedSliceInferMeta(const Tensor& x, const std::vector<int>& axes, const IntArray& starts, const IntArray& ends,
                             const IntArray& strides, Tensor* out);

Status MatmulInferMeta(const Tensor& x, const Tensor& y, bool transpose_x, bool transpose_y, Tensor* out);
Status EmbeddingInferMeta(const Tensor& x, const Tensor& weight, int64_t padding_idx, Tensor* out);
Status SoftmaxInferMeta(const Tensor& x, int axis, Tensor* out);
Status LayerNormInferMeta(const Tensor& x, const Tensor* scale, const Tensor* bias, float epsilon, int begin_norm_axis,
                          Tensor* out, Tensor* mean, Tensor* variance);
Status SumInferMeta(const Tensor& x, const IntArray& axis, DataType dtype, bool keepdim, Tensor* out);
Status ReduceIntArrayAxisInferMeta(const Tensor& x, const IntArray& axis, bool keepdim, Tensor* out);

Status ConvInferMeta(const Tensor& input, const Tensor& filter, const std::vector<int>& strides,
                     const std::vector<int>& paddings, const std::string& padding_algorithm,
                     const std::vector<int>& dilations, int groups, const std::string& data_format, Tensor* out);
Status DepthwiseConvInferMeta(const Tensor& input, const Tensor& filter, const std::vector<int>& strides,
                              const std::vector<int>& paddings, const std::string& padding_algorithm, int groups,
                              const std::vector<int>& dilations, const std::string& data_format, Tensor* out);
Status Conv2dTransposeInferMeta(const Tensor& x, const Tensor& filter, const std::vector<int>& strides,
                                const std::vector<int>& paddings, const std::vector<int>& output_padding,
                                const IntArray& output_size, const std::string& padding_algorithm, int groups,
                                const std::vector<int>& dilations, const std::string& data_format, Tensor* out);
Status BatchNormInferMeta(const Tensor& x, const Tensor& mean, const Tensor& variance, const Tensor* scale,
                          const Tensor* bias, bool is_test, float momentum, float epsilon,
                          const std::string& data_format, bool use_global_stats, bool trainable_statistics,
                          Tensor* out, Tensor* mean_out, Tensor* variance_out, Tensor* saved_mean,
                          Tensor* saved_variance, Tensor* reserve_space);
Status Pool2DInferMeta(const Tensor& x, const IntArray& kernel_size, const std::vector<int>& strides,
                       const std::vector<int>& paddings, bool ceil_mode, bool exclusive, const std::string& data_format,
                       const std::string& pooling_type, bool global_pooling, bool adaptive,
                       const std::string& padding_algorithm, Tensor* out);
// The output size comes, in priority order, from size_tensor (one-element int32/int64 tensors), out_size (an
// int32/int64 tensor [h, w]), scale_tensor, the `scale` attribute, then out_h/out_w. Those tensors decide the shape,
// so this function reads their data (CPU); when their data is null it sets the dims they decide to -1.
Status InterpolateInferMeta(const Tensor& x, const Tensor* out_size, TensorList size_tensor, const Tensor* scale_tensor,
                            const std::string& data_format, int out_d, int out_h, int out_w,
                            const std::vector<float>& scale, const std::string& interp_method, bool align_corners,
                            int align_mode, Tensor* output);

}  // namespace kforge::meta

// --- math/compare ops (issue 11) ---

namespace kforge::kernels {

// ---- elementwise math (math.cc) ---------------------------------------------------------------------------------
// float32, float64. hardsigmoid: max(min(x * slope + offset, 1), 0); relu6: min(max(x, 0), 6).
Status hardsigmoid(const KernelContext& ctx, const Tensor& x, float slope, float offset, Tensor* out);
// Paddle's LeakyReluFunctor: max(x, slope * x) for a slope below 1, min(x, slope * x) otherwise.
Status leaky_relu(const KernelContext& ctx, const Tensor& x, float negative_slope, Tensor* out);
// Paddle's ELUFunctor: x < 0 ? alpha * (exp(x) - 1) : x (exp as kforge_math.h's, the fused loops' exp).
Status elu(const KernelContext& ctx, const Tensor& x, float alpha, Tensor* out);
// out = x > 0 ? x : alpha[j] * x; mode "all" (alpha of one element), "channel" (one per channel of data_format's
// channel dim) or "element" (one per element of x's dims after the first).
Status prelu(const KernelContext& ctx, const Tensor& x, const Tensor& alpha, const std::string& data_format,
             const std::string& mode, Tensor* out);
Status relu6(const KernelContext& ctx, const Tensor& x, Tensor* out);
Status sqrt(const KernelContext& ctx, const Tensor& x, Tensor* out);
Status erf(const KernelContext& ctx, const Tensor& x, Tensor* out);
Status log(const KernelContext& ctx, const Tensor& x, Tensor* out);
Status sin(const KernelContext& ctx, const Tensor& x, Tensor* out);
Status cos(const KernelContext& ctx, const Tensor& x, Tensor* out);
Status abs(const KernelContext& ctx, const Tensor& x, Tensor* out);  // also int32, int64, complex (to float)
// complex.cc: fft_r2c (Paddle's: the real-to-complex DFT of x along the last of axes, complex along the others,
// scaled per normalization; onesided keeps the last axis' n / 2 + 1 frequencies); real, the complex's real part.
Status fft_r2c(const KernelContext& ctx, const Tensor& x, const std::vector<int64_t>& axes,
               const std::string& normalization, bool forward, bool onesided, Tensor* out);
Status real(const KernelContext& ctx, const Tensor& x, Tensor* out);
Status reciprocal(const KernelContext& ctx, const Tensor& x, Tensor* out);  // 1 / x
Status square(const KernelContext& ctx, const Tensor& x, Tensor* out);      // also int32, int64 (wrapping)
// x ** y with y rounded to float, then to x's type, as Paddle's PowFunctor; float32, float64, int32, int64 (an
// integer x with a negative exponent is an error: Paddle's kernel never returns).
Status pow(const KernelContext& ctx, const Tensor& x, const Scalar& y, Tensor* out);
// Python's floor division (Paddle's FloorDivideFunctor); int8, uint8, int16, int32, int64, float32, float64.
// An integer division by zero is an error; floats follow IEEE (x / 0).
Status floor_divide(const KernelContext& ctx, const Tensor& x, const Tensor& y, Tensor* out);
// Python's % (Paddle's RemainderFunctor): the result has y's sign; float32, float64, int32, int64. An integer
// remainder by zero is an error; a float one is NaN.
Status remainder(const KernelContext& ctx, const Tensor& x, const Tensor& y, Tensor* out);
// out = mask ? value : x, x and mask broadcast (numpy), value one element of x's dtype; bool, int8, uint8, int16,
// int32, int64, float32, float64.
Status masked_fill(const KernelContext& ctx, const Tensor& x, const Tensor& mask, const Tensor& value, Tensor* out);
// silu(x) * y; without y, x's last dim is split in halves a | b and out = silu(a) * b. float32, float64.
Status swiglu(const KernelContext& ctx, const Tensor& x, const Tensor* y, Tensor* out);

// ---- comparisons and logic (compare.cc): broadcasting, bool out ------------------------------------------------
// Comparisons take x and y of one dtype: bool, int8, uint8, int16, int32, int64, float32, float64.
Status equal(const KernelContext& ctx, const Tensor& x, const Tensor& y, Tensor* out);
Status not_equal(const KernelContext& ctx, const Tensor& x, const Tensor& y, Tensor* out);
Status greater_than(const KernelContext& ctx, const Tensor& x, const Tensor& y, Tensor* out);
Status greater_equal(const KernelContext& ctx, const Tensor& x, const Tensor& y, Tensor* out);
Status less_than(const KernelContext& ctx, const Tensor& x, const Tensor& y, Tensor* out);
Status less_equal(const KernelContext& ctx, const Tensor& x, const Tensor& y, Tensor* out);
// Non-zero is true; bool, int8, int16, int32, int64, float32, float64 (Paddle registers no uint8 kernel).
Status logical_and(const KernelContext& ctx, const Tensor& x, const Tensor& y, Tensor* out);
Status logical_or(const KernelContext& ctx, const Tensor& x, const Tensor& y, Tensor* out);
Status logical_not(const KernelContext& ctx, const Tensor& x, Tensor* out);
// Bitwise ops, x and y (broadcast) and out of one dtype: bool, int8, uint8, int16, int32, int64; on bool they are
// the logical ops (bitwise_not of a bool is its negation).
Status bitwise_and(const KernelContext& ctx, const Tensor& x, const Tensor& y, Tensor* out);
Status bitwise_or(const KernelContext& ctx, const Tensor& x, const Tensor& y, Tensor* out);
Status bitwise_xor(const KernelContext& ctx, const Tensor& x, const Tensor& y, Tensor* out);
Status bitwise_not(const KernelContext& ctx, const Tensor& x, Tensor* out);

// ---- creation (creation_math.cc) ------------------------------------------------------------------------------
// value (one element, any dtype) converted to out's dtype; out's dtype: bool, int8 ... float64.
Status full_with_tensor(const KernelContext& ctx, const Tensor& value, const IntArray& shape, DataType dtype,
                        Tensor* out);
// Uniform in [min, max), float32 or float64, from kforge's own counter-based generator (splitmix64 of seed and the
// element index): the same seed gives the same tensor on every run and machine (seed 0 too, unlike Paddle, where
// 0 means "a new seed each run"); it does not reproduce Paddle's random stream.
Status uniform(const KernelContext& ctx, const IntArray& shape, DataType dtype, const Scalar& min, const Scalar& max,
               int seed, Tensor* out);
// randint: integers in [low, high), int32 or int64, from the same generator as uniform with seed 0 (Paddle's randint
// has no seed: its global generator's stream, which kforge does not reproduce; the draws are kforge's own).
Status randint(const KernelContext& ctx, int low, int high, const IntArray& shape, DataType dtype, Tensor* out);
// start, start + step, ... below end (Paddle's ArangeKernel: the size in double, or int64 when no Scalar is
// floating; values accumulated in out's type). out: float32, float64, int32, int64.
Status arange(const KernelContext& ctx, const Scalar& start, const Scalar& end, const Scalar& step, Tensor* out);
// x: int32 or int64 class ids in [0, num_classes) (else an error); out float32.
Status one_hot(const KernelContext& ctx, const Tensor& x, const Scalar& num_classes, Tensor* out);

// ---- scans, reductions, selection (reduce_math.cc) -------------------------------------------------------------
// Running sum along axis (all elements with flatten), accumulated in x's type; int8, uint8, int16, int32, int64,
// float32, float64.
Status cumsum(const KernelContext& ctx, const Tensor& x, const Scalar& axis, bool flatten, bool exclusive,
              bool reverse, Tensor* out);
// Product over axis (every dim with reduce_all, an empty axis or all dims); float32, float64 (accumulated in
// double), int32, int64 (wrapping).
Status prod(const KernelContext& ctx, const Tensor& x, const IntArray& axis, bool keepdim, bool reduce_all,
            Tensor* out);
// Index of the first largest element (NaN never wins, as Eigen's argmax); out int32 or int64; x uint8, int16,
// int32, int64, float32, float64.
Status argmax(const KernelContext& ctx, const Tensor& x, const Scalar& axis, bool keepdims, bool flatten,
              DataType dtype, Tensor* out);
// The k largest (or smallest) along axis, always sorted (NaN counts as the largest, as Paddle's CPU kernel); equal
// values in index order. indices int64. float32, float64, int32, int64.
Status topk(const KernelContext& ctx, const Tensor& x, const Scalar& k, int axis, bool largest, bool sorted,
            Tensor* out, Tensor* indices);
// x sorted along axis (NaN as the largest, as Paddle's CPU kernel), with each element's index there (int64):
// std::sort's order of equal values, or index order when `stable`. float32, float64, int32, int64.
Status argsort(const KernelContext& ctx, const Tensor& x, int axis, bool descending, bool stable, Tensor* out,
               Tensor* indices);
// x - max - log(sum(exp(x - max))) along axis; float32, float64.
Status log_softmax(const KernelContext& ctx, const Tensor& x, int axis, Tensor* out);

}  // namespace kforge::kernels

namespace kforge::meta {

Status RealAndImagInferMeta(const Tensor& x, Tensor* out);
Status FFTR2CInferMeta(const Tensor& x, const std::vector<int64_t>& axes, const std::string& normalization,
                       bool forward, bool onesided, Tensor* out);
Status CompareInferMeta(const Tensor& x, const Tensor& y, Tensor* out);
Status LogicalBinaryInferMeta(const Tensor& x, const Tensor& y, Tensor* out);
Status LogicalNotInferMeta(const Tensor& x, Tensor* out);
Status MaskedFillInferMeta(const Tensor& x, const Tensor& mask, const Tensor& value, Tensor* out);
Status SwiGLUInferMeta(const Tensor& x, const Tensor* y, Tensor* out);
Status FullWithTensorInferMeta(const IntArray& shape, DataType dtype, Tensor* out);
Status UniformRandomInferMeta(const IntArray& shape, DataType dtype, Tensor* out);
Status RandintInferMeta(int low, int high, const IntArray& shape, DataType dtype, Tensor* out);
Status ArangeInferMeta(const Scalar& start, const Scalar& end, const Scalar& step, DataType dtype, Tensor* out);
Status OneHotInferMeta(const Tensor& x, const Scalar& num_classes, Tensor* out);
Status CumScalarAxisInferMeta(const Tensor& x, const Scalar& axis, bool flatten, bool exclusive, bool reverse,
                              Tensor* out);
Status ReduceIntArrayAxisInferMetaBase(const Tensor& x, const IntArray& axis, bool keepdim, bool reduce_all,
                                       Tensor* out);
Status ArgMinMaxInferMeta(const Tensor& x, const Scalar& axis, bool keepdims, bool flatten, DataType dtype,
                          Tensor* out);
Status TopKInferMeta(const Tensor& x, const Scalar& k, int axis, bool largest, bool sorted, Tensor* out,
                     Tensor* indices);
Status ArgsortInferMeta(const Tensor& x, int axis, bool descending, bool stable, Tensor* out, Tensor* indices);
Status UnchangedInferMetaCheckAxis(const Tensor& x, int axis, Tensor* out);

}  // namespace kforge::meta

// --- data movement / nn ops (issue 11) ---------------------------------------------------------------------------
// Index and data-movement kernels take any dtype (they move elements); gather, index_select and scatter take int32 or
// int64 indices and return an error status for one out of range. set_value / scatter / pad3d work on the plain
// dtypes; interpolation, bmm, einsum and the normalisations on float32 and float64 (bilinear_interp also uint8).
namespace kforge::kernels {

// bilinear_interp: Paddle's BilinearInterpolation (align_corners, align_mode 0/1), 4-D NCHW or NHWC input.
Status bilinear_interp(const KernelContext& ctx, const Tensor& x, const Tensor* out_size, TensorList size_tensor,
                       const Tensor* scale_tensor, const std::string& data_format, int out_d, int out_h, int out_w,
                       const std::vector<float>& scale, const std::string& interp_method, bool align_corners,
                       int align_mode, Tensor* output);
// bicubic_interp: Paddle's BicubicInterpolation of a 4-D NCHW or NHWC input (cubic convolution, A = -0.75, taps
// clamped to the edges; align_corners or half-pixel centres, align_mode unused).
Status bicubic_interp(const KernelContext& ctx, const Tensor& x, const Tensor* out_size, TensorList size_tensor,
                      const Tensor* scale_tensor, const std::string& data_format, int out_d, int out_h, int out_w,
                      const std::vector<float>& scale, const std::string& interp_method, bool align_corners,
                      int align_mode, Tensor* output);
// linear_interp (issue 34): Paddle's LinearInterpolation of a 3-D NCW or NWC input (data_format "NCHW" / "NHWC"
// as Paddle's programs spell it), the width from size_tensor (one tensor), out_size (one value), scale[0] or out_w.
Status linear_interp(const KernelContext& ctx, const Tensor& x, const Tensor* out_size, TensorList size_tensor,
                     const Tensor* scale_tensor, const std::string& data_format, int out_d, int out_h, int out_w,
                     const std::vector<float>& scale, const std::string& interp_method, bool align_corners,
                     int align_mode, Tensor* output);
// x[starts:ends:steps] over `axes` = values (broadcast to the slice; `shape` is their shape). out may alias x.
Status set_value(const KernelContext& ctx, const Tensor& x, const IntArray& starts, const IntArray& ends,
                 const IntArray& steps, const std::vector<int64_t>& axes, const std::vector<int64_t>& decrease_axes,
                 const std::vector<int64_t>& none_axes, const std::vector<int64_t>& shape,
                 const std::vector<Scalar>& values, Tensor* out);
Status set_value_with_tensor(const KernelContext& ctx, const Tensor& x, const Tensor& values, const IntArray& starts,
                             const IntArray& ends, const IntArray& steps, const std::vector<int64_t>& axes,
                             const std::vector<int64_t>& decrease_axes, const std::vector<int64_t>& none_axes,
                             Tensor* out);
Status gather(const KernelContext& ctx, const Tensor& x, const Tensor& index, const Scalar& axis, Tensor* out);
Status index_select(const KernelContext& ctx, const Tensor& x, const Tensor& index, int axis, Tensor* out);
// Rows of x replaced (overwrite) or, for overwrite=false, zeroed and then accumulated from updates. out may alias x.
Status scatter(const KernelContext& ctx, const Tensor& x, const Tensor& index, const Tensor& updates, bool overwrite,
               Tensor* out);
Status tile(const KernelContext& ctx, const Tensor& x, const IntArray& repeat_times, Tensor* out);
// repeat_interleave (an int repeats): every element of x along axis `repeats` times in a row, as Paddle's CPU kernel
// (an index_select of 0, 0, .., 1, 1, ..); output_size, when positive, must be the repeated dim.
Status repeat_interleave(const KernelContext& ctx, const Tensor& x, int repeats, int axis, int64_t output_size,
                         Tensor* out);
// Empty axis: x rolled as one flat vector by shifts[0].
Status roll(const KernelContext& ctx, const Tensor& x, const IntArray& shifts, const std::vector<int64_t>& axis,
            Tensor* out);
Status flip(const KernelContext& ctx, const Tensor& x, const std::vector<int>& axis, Tensor* out);
// paddings: [left, right, top, bottom, front, back]; mode constant, reflect, replicate or circular; 5-D input.
Status pad3d(const KernelContext& ctx, const Tensor& x, const IntArray& paddings, const std::string& mode,
             float pad_value, const std::string& data_format, Tensor* out);
Status bmm(const KernelContext& ctx, const Tensor& x, const Tensor& y, Tensor* out);
// One or two operands; every label appears at most twice in all; no broadcasting ellipsis. inner_cache and xshape
// (backward-only outputs in Paddle) are zero-filled so that results are deterministic.
Status einsum(const KernelContext& ctx, TensorList x, const std::string& equation, Tensor* out,
              MutableTensorList inner_cache, MutableTensorList xshape);
Status group_norm(const KernelContext& ctx, const Tensor& x, const Tensor* scale, const Tensor* bias, float epsilon,
                  int groups, const std::string& data_format, Tensor* y, Tensor* mean, Tensor* variance);
// saved_variance holds 1 / sqrt(var + epsilon), as Paddle's.
Status instance_norm(const KernelContext& ctx, const Tensor& x, const Tensor* scale, const Tensor* bias, float epsilon,
                     Tensor* y, Tensor* saved_mean, Tensor* saved_variance);
// Paddle's rms_norm (3.3: fused_rms_norm_quant): h = x + bias + residual, out = h * rsqrt(mean(h^2) + epsilon) *
// norm_weight + norm_bias over the dims from begin_norm_axis; residual_out = h. quant_scale > 0 is not supported.
Status rms_norm(const KernelContext& ctx, const Tensor& x, const Tensor* bias, const Tensor* residual,
                const Tensor& norm_weight, const Tensor* norm_bias, float epsilon, int begin_norm_axis,
                float quant_scale, int quant_round_type, float quant_max_bound, float quant_min_bound, Tensor* out,
                Tensor* residual_out, Tensor* inv_var);
// Elements above (tril) or below (triu) the `diagonal`-th diagonal of the last two dims set to 0; any dtype.
Status tril(const KernelContext& ctx, const Tensor& x, int diagonal, Tensor* out);
Status triu(const KernelContext& ctx, const Tensor& x, int diagonal, Tensor* out);
// start, start + step, ... below end (above, for a negative step); float32, float64, int32, int64.

}  // namespace kforge::kernels

namespace kforge::meta {

Status SetValueInferMeta(const Tensor& x, Tensor* out);
Status GatherInferMeta(const Tensor& x, const Tensor& index, const Scalar& axis, Tensor* out);
Status IndexSelectInferMeta(const Tensor& x, const Tensor& index, int axis, Tensor* out);
Status ScatterInferMeta(const Tensor& x, const Tensor& index, const Tensor& updates, bool overwrite, Tensor* out);
Status TileInferMeta(const Tensor& x, const IntArray& repeat_times, Tensor* out);
Status RepeatInterleaveInferMeta(const Tensor& x, int repeats, int axis, int64_t output_size, Tensor* out);
Status RollInferMeta(const Tensor& x, const IntArray& shifts, const std::vector<int64_t>& axis, Tensor* out);
Status FlipInferMeta(const Tensor& x, const std::vector<int>& axis, Tensor* out);
Status Pad3dInferMeta(const Tensor& x, const IntArray& paddings, const std::string& mode, float pad_value,
                      const std::string& data_format, Tensor* out);
Status BmmInferMeta(const Tensor& x, const Tensor& y, Tensor* out);
Status EinsumRawInferMeta(TensorList x, const std::string& equation, Tensor* out, MutableTensorList inner_cache,
                          MutableTensorList xshape);
Status GroupNormInferMeta(const Tensor& x, const Tensor* scale, const Tensor* bias, float epsilon, int groups,
                          const std::string& data_format, Tensor* y, Tensor* mean, Tensor* variance);
Status InstanceNormInferMeta(const Tensor& x, const Tensor* scale, const Tensor* bias, float epsilon, Tensor* y,
                             Tensor* saved_mean, Tensor* saved_variance);
Status RmsNormInferMeta(const Tensor& x, const Tensor* bias, const Tensor* residual, const Tensor& norm_weight,
                        const Tensor* norm_bias, float epsilon, int begin_norm_axis, float quant_scale,
                        int quant_round_type, float quant_max_bound, float quant_min_bound, Tensor* out,
                        Tensor* residual_out, Tensor* inv_var);
Status TrilInferMeta(const Tensor& x, int diagonal, Tensor* out);
Status TriuInferMeta(const Tensor& x, int diagonal, Tensor* out);

}  // namespace kforge::meta
// --- end of data movement / nn ops (issue 11) ---------------------------------------------------------------------

// --- GraphNet's missing ops (issue 34) ---------------------------------------------------------------------------
// Index ops take int32 or int64 indices, negative ones counting from the end of their axis as Paddle's do, and
// return an error status for one out of range; data movement takes any dtype; the losses and grid_sample take
// float32 and float64. Kernels in index_movement.cc, linalg.cc (the reductions) and losses.cc; infer-meta in
// meta_graphnet.cc and, for the reductions, meta_basic.cc.
namespace kforge::kernels {

// share_data_ (what Tensor.detach() saves): out is a copy of x (or x itself when the caller aliases them).
Status share_data(const KernelContext& ctx, const Tensor& x, Tensor* out);
// out[i...] = x[index[i..., 0], ..., index[i..., k-1], ...], k = index's last dim (<= x's rank).
Status gather_nd(const KernelContext& ctx, const Tensor& x, const Tensor& index, Tensor* out);
// out = x with out[i0[b], ..., i(m-1)[b], ...] = value (accumulate: +=) for every position b of the indices broadcast
// together; m <= rank int32 / int64 index tensors (negative from the end), value broadcast to b's dims + x's after m.
// Positions named twice: the later wins (accumulate: both add), in index order.
Status index_put(const KernelContext& ctx, const Tensor& x, TensorList indices, const Tensor& value, bool accumulate,
                 Tensor* out);
// out[i][j0, ..., jn-1] = inputs[i][ji] for n 1-D inputs of one dtype (Paddle's "ij" indexing).
Status meshgrid(const KernelContext& ctx, TensorList inputs, MutableTensorList out);
// out[i] = input[i] broadcast to the dims of all inputs broadcast together (numpy's rules), any dtype.
Status broadcast_tensors(const KernelContext& ctx, TensorList input, MutableTensorList out);
// Paddle's rnn over x [time, batch, input_size] (kernels/rnn.cc): mode LSTM (gates i, f, c, o), GRU (r, u, c; the
// reset gate scales h W_hc + b_hc), RNN_TANH or RNN_RELU; num_layers, bidirectional (out's last dim [forward,
// backward]); weight_list as Paddle's RNN layers flatten it (every W_ih, W_hh by layer and direction, then every
// b_ih, b_hh); sequence_length (int32 / int64 [batch]) masks steps past a row's length (out 0, state kept).
// pre_state: [h0] or [h0, c0], each [layers * directions, batch, hidden]; state the same. Inference: dropout between
// layers only where is_test is false and it draws (refused); dropout_state_out empty uint8 [0] and reserve float32 0-D
// (0) as Paddle's predictor returns them.
Status rnn(const KernelContext& ctx, const Tensor& x, TensorList pre_state, TensorList weight_list,
           const Tensor* sequence_length, const Tensor& dropout_state_in, float dropout_prob, bool is_bidirec,
           int input_size, int hidden_size, int num_layers, const std::string& mode, int seed, bool is_test,
           Tensor* out, Tensor* dropout_state_out, MutableTensorList state, Tensor* reserve);
// out = arr[..., indices[...], ...] along axis; indices' dims are at most arr's off the axis.
Status take_along_axis(const KernelContext& ctx, const Tensor& arr, const Tensor& indices, int axis, Tensor* out);
// A 1-D x becomes a square matrix with x on its offset-th diagonal and padding_value elsewhere; a 2-D x gives its
// offset-th diagonal.
Status diag(const KernelContext& ctx, const Tensor& x, int offset, float padding_value, Tensor* out);
// x broadcast to y's dims (to target_shape when y is absent).
Status expand_as(const KernelContext& ctx, const Tensor& x, const Tensor* y, const std::vector<int>& target_shape,
                 Tensor* out);
// Constant padding of every dim: paddings [before0, after0, before1, after1, ...], each >= 0.
Status pad(const KernelContext& ctx, const Tensor& x, const std::vector<int>& paddings, const Scalar& pad_value,
           Tensor* out);
// Reductions: min over axis as max; any / all of x != 0 (bool out) over int64 axes (empty: every axis).
Status min(const KernelContext& ctx, const Tensor& x, const IntArray& axis, bool keepdim, Tensor* out);
Status mean_all(const KernelContext& ctx, const Tensor& x, Tensor* out);  // mean of every element, 0-D
Status any(const KernelContext& ctx, const Tensor& x, const std::vector<int64_t>& axis, bool keepdim, Tensor* out);
Status all(const KernelContext& ctx, const Tensor& x, const std::vector<int64_t>& axis, bool keepdim, Tensor* out);
// The porder-norm along axis (every element with asvector): sum(|x|^p)^(1/p); p = 0 counts nonzeros, inf / -inf
// take the largest / smallest |x|. float32, float64, accumulated in double. epsilon is the backward's only.
Status p_norm(const KernelContext& ctx, const Tensor& x, float porder, int axis, float epsilon, bool keepdim,
              bool asvector, Tensor* out);
// -(label * log(input) + (1 - label) * log(1 - input)), each log clamped at -100 as Paddle's.
Status bce_loss(const KernelContext& ctx, const Tensor& input, const Tensor& label, Tensor* out);
// (1 - label) * x + w * (log(1 + exp(-|x|)) + max(-x, 0)), w = pos_weight or 1 (Paddle's Python passes
// label * (pos_weight - 1) + 1 there), 0 where label is ignore_index; normalize divides by the count of labels
// that are not ignored.
Status sigmoid_cross_entropy_with_logits(const KernelContext& ctx, const Tensor& x, const Tensor& label,
                                         const Tensor* pos_weight, bool normalize, int ignore_index, Tensor* out);
// Paddle's CPU kernel: softmax along `axis` (use_softmax; else input is taken as the probabilities and copied), then
// the loss with the axis dim 1: -log(p[label]) for a hard int32 / int64 label (0 where it is ignore_index; an
// other label outside [0, classes) is an error), -sum(label * log(p)) for a soft label of input's dims; log(0) is
// taken as -1e20. numeric_stable_mode does not change the CPU result.
Status cross_entropy_with_softmax(const KernelContext& ctx, const Tensor& input, const Tensor& label, bool soft_label,
                                  bool use_softmax, bool numeric_stable_mode, int ignore_index, int axis,
                                  Tensor* softmax, Tensor* loss);
// Samples NCHW x at grid [N, H', W', 2] (x, y in [-1, 1]): mode bilinear or nearest, padding_mode zeros, border or
// reflection, align_corners; out [N, C, H', W'].
Status grid_sample(const KernelContext& ctx, const Tensor& x, const Tensor& grid, const std::string& mode,
                   const std::string& padding_mode, bool align_corners, Tensor* out);
// ---- detection.cc: Paddle's CPU kernels. deformable_conv: NCHW x float32 / float64, offset [N, 2 * dg * kh * kw,
// oh, ow] (y then x per tap), optional mask [N, dg * kh * kw, oh, ow], grouped; samples outside x are 0.
Status deformable_conv(const KernelContext& ctx, const Tensor& x, const Tensor& offset, const Tensor& filter,
                       const Tensor* mask, const std::vector<int>& strides, const std::vector<int>& paddings,
                       const std::vector<int>& dilations, int deformable_groups, int groups, int im2col_step,
                       Tensor* out);
// roi_align: boxes [R, 4] (x1, y1, x2, y2) of the images boxes_num counts (absent: one image), out [R, C, ph, pw].
Status roi_align(const KernelContext& ctx, const Tensor& x, const Tensor& boxes, const Tensor* boxes_num,
                 int pooled_height, int pooled_width, float spatial_scale, int sampling_ratio, bool aligned,
                 Tensor* out);
// isnan: bool out (false for integers); linspace: `number` values from start to stop (one-element tensors), the
// first half from start, the second from stop; index_sample: out[i, j] = x[i, index[i, j]] (index in range).
Status isnan(const KernelContext& ctx, const Tensor& x, Tensor* out);
// prior_box (prior_box.cc): SSD anchors [H, W, priors, 4] of input's feature map over image (NCHW; only their dims
// are read), normalised by the image size; var [H, W, priors, 4] the four variances.
Status prior_box(const KernelContext& ctx, const Tensor& input, const Tensor& image,
                 const std::vector<float>& min_sizes, const std::vector<float>& max_sizes,
                 const std::vector<float>& aspect_ratios, const std::vector<float>& variances, bool flip, bool clip,
                 float step_w, float step_h, float offset, bool min_max_aspect_ratios_order, Tensor* out,
                 Tensor* var);
// yolo_box (yolo_box.cc): YOLOv3's head x [N, A * (5 + classes), H, W] decoded into boxes [N, A * H * W, 4] (x1, y1,
// x2, y2 in the pixels of img_size [N, 2] int32, height then width) and scores [N, A * H * W, classes]; zero where
// the objectness is below conf_thresh.
Status yolo_box(const KernelContext& ctx, const Tensor& x, const Tensor& img_size, const std::vector<int>& anchors,
                int class_num, float conf_thresh, int downsample_ratio, bool clip_bbox, float scale_x_y,
                bool iou_aware, float iou_aware_factor, Tensor* boxes, Tensor* scores);
// generate_proposals (proposals.cc, Paddle's v2): per image, the pre_nms_top_n best anchors of scores [N, A, H, W]
// decoded by bbox_deltas [N, 4A, H, W], clipped to im_shape [N, 2] (h, w), the small ones dropped, NMS, the first
// post_nms_top_n kept: rpn_rois [R, 4], rpn_roi_probs [R, 1] and rpn_rois_num [N] int32 (optional). rpn_rois and
// rpn_roi_probs are laid out for the most they can hold (GenerateProposalsV2InferMeta); the kernel sets dims[0].
Status generate_proposals(const KernelContext& ctx, const Tensor& scores, const Tensor& bbox_deltas,
                          const Tensor& im_shape, const Tensor& anchors, const Tensor& variances, int pre_nms_top_n,
                          int post_nms_top_n, float nms_thresh, float min_size, float eta, bool pixel_offset,
                          Tensor* rpn_rois, Tensor* rpn_roi_probs, Tensor* rpn_rois_num);
// distribute_fpn_proposals (proposals.cc): each roi of fpn_rois [R, 4] to the FPN level of its scale, in order:
// multi_fpn_rois[l] [R_l, 4] (laid out for R rows, dims[0] set), multi_level_rois_num[l] [N] int32 (optional; the
// images rois_num counts), restore_index [R, 1] int32 that puts the levels' rows back; rois_num must count R rois
// (Paddle's restore_index has the sum of rois_num rows: an error here where that is not R).
Status distribute_fpn_proposals(const KernelContext& ctx, const Tensor& fpn_rois, const Tensor* rois_num,
                                int min_level, int max_level, int refer_level, int refer_scale, bool pixel_offset,
                                MutableTensorList multi_fpn_rois, MutableTensorList multi_level_rois_num,
                                Tensor* restore_index);
Status linspace(const KernelContext& ctx, const Tensor& start, const Tensor& stop, const Tensor& number,
                DataType dtype, Tensor* out);
Status index_sample(const KernelContext& ctx, const Tensor& x, const Tensor& index, Tensor* out);
// Output sizes that depend on data: out arrives laid out for the most the op can write (its infer-meta's dims:
// [numel, rank] for nonzero, [numel of the broadcast shape] for masked_select), and the kernel sets out's first dim
// to what it wrote. nonzero: the row-major coordinates of condition's nonzero elements (int64 [count, rank]);
// masked_select: x's elements where mask (broadcast with x) is true, in row-major order.
Status nonzero(const KernelContext& ctx, const Tensor& condition, Tensor* out);
Status masked_select(const KernelContext& ctx, const Tensor& x, const Tensor& mask, Tensor* out);
// unique over every element of x (axis empty), sorted (is_sorted true, as paddle.unique writes it): out the distinct
// values ascending, indices the position of each one's first occurrence in x, inverse (x's numel) each element's
// position in out, counts how often each occurs; out, indices and counts laid out for x's numel, their first dim set
// to the count. indices and counts may be null. Along an axis (axis [a]): the same over the slices of x along a
// (compared element by element), out laid out as x and written compact with the count at dim a, inverse [x.dims[a]].
Status unique(const KernelContext& ctx, const Tensor& x, bool return_index, bool return_inverse, bool return_counts,
              const std::vector<int>& axis, DataType dtype, bool is_sorted, Tensor* out, Tensor* indices,
              Tensor* inverse, Tensor* counts);

}  // namespace kforge::kernels

namespace kforge::meta {

Status GatherNdInferMeta(const Tensor& x, const Tensor& index, Tensor* out);
Status PReluInferMeta(const Tensor& x, const Tensor& alpha, const std::string& data_format, const std::string& mode,
                      Tensor* out);
Status IndexPutInferMeta(const Tensor& x, TensorList indices, const Tensor& value, bool accumulate, Tensor* out);
Status MeshgridInferMeta(TensorList inputs, MutableTensorList out);
Status BroadcastTensorsInferMeta(TensorList input, MutableTensorList out);
Status RnnInferMeta(const Tensor& x, TensorList pre_state, TensorList weight_list, const Tensor* sequence_length,
                    const Tensor& dropout_state_in, float dropout_prob, bool is_bidirec, int input_size,
                    int hidden_size, int num_layers, const std::string& mode, int seed, bool is_test, Tensor* out,
                    Tensor* dropout_state_out, MutableTensorList state, Tensor* reserve);
Status TakeAlongAxisInferMeta(const Tensor& arr, const Tensor& indices, int axis, Tensor* out);
Status DiagInferMeta(const Tensor& x, int offset, float padding_value, Tensor* out);
Status ExpandAsInferMeta(const Tensor& x, const Tensor* y, const std::vector<int>& target_shape, Tensor* out);
Status PadInferMeta(const Tensor& x, const std::vector<int>& paddings, const Scalar& pad_value, Tensor* out);
Status MeanAllInferMeta(const Tensor& x, Tensor* out);  // 0-D
Status ReduceInferMeta(const Tensor& x, const std::vector<int64_t>& axis, bool keepdim, Tensor* out);  // bool out
Status PNormInferMeta(const Tensor& x, float porder, int axis, float epsilon, bool keepdim, bool asvector,
                      Tensor* out);
Status BCELossInferMeta(const Tensor& input, const Tensor& label, Tensor* out);
Status CrossEntropyWithSoftmaxInferMeta(const Tensor& input, const Tensor& label, bool soft_label, bool use_softmax,
                                        bool numeric_stable_mode, int ignore_index, int axis, Tensor* softmax,
                                        Tensor* loss);
Status SigmoidCrossEntropyWithLogitsInferMeta(const Tensor& x, const Tensor& label, const Tensor* pos_weight,
                                              bool normalize, int ignore_index, Tensor* out);
Status GridSampleBaseInferMeta(const Tensor& x, const Tensor& grid, Tensor* out);
// meta_detection.cc
Status IsfiniteInferMeta(const Tensor& x, Tensor* out);
Status PriorBoxInferMeta(const Tensor& input, const Tensor& image, const std::vector<float>& min_sizes,
                         const std::vector<float>& max_sizes, const std::vector<float>& aspect_ratios,
                         const std::vector<float>& variances, bool flip, bool clip, float step_w, float step_h,
                         float offset, bool min_max_aspect_ratios_order, Tensor* out, Tensor* var);
Status YoloBoxInferMeta(const Tensor& x, const Tensor& img_size, const std::vector<int>& anchors, int class_num,
                        float conf_thresh, int downsample_ratio, bool clip_bbox, float scale_x_y, bool iou_aware,
                        float iou_aware_factor, Tensor* boxes, Tensor* scores);
// The most generate_proposals / distribute_fpn_proposals can write: their data-dependent outputs are laid out for it.
Status GenerateProposalsV2InferMeta(const Tensor& scores, const Tensor& bbox_deltas, const Tensor& im_shape,
                                    const Tensor& anchors, const Tensor& variances, int pre_nms_top_n,
                                    int post_nms_top_n, float nms_thresh, float min_size, float eta, bool pixel_offset,
                                    Tensor* rpn_rois, Tensor* rpn_roi_probs, Tensor* rpn_rois_num);
Status DistributeFpnProposalsInferMeta(const Tensor& fpn_rois, const Tensor* rois_num, int min_level, int max_level,
                                       int refer_level, int refer_scale, bool pixel_offset,
                                       MutableTensorList multi_fpn_rois, MutableTensorList multi_level_rois_num,
                                       Tensor* restore_index);
Status LinspaceInferMeta(const Tensor& start, const Tensor& stop, const Tensor& number, DataType dtype, Tensor* out);
Status IndexSampleInferMeta(const Tensor& x, const Tensor& index, Tensor* out);
// The most nonzero / masked_select can write (every element nonzero / selected): out is laid out for that.
Status NonZeroInferMeta(const Tensor& condition, Tensor* out);
Status MaskedSelectInferMeta(const Tensor& x, const Tensor& mask, Tensor* out);
Status UniqueRawInferMeta(const Tensor& x, bool return_index, bool return_inverse, bool return_counts,
                          const std::vector<int>& axis, DataType dtype, bool is_sorted, Tensor* out, Tensor* indices,
                          Tensor* inverse, Tensor* counts);
Status RoiAlignInferMeta(const Tensor& x, const Tensor& boxes, const Tensor* boxes_num, int pooled_height,
                         int pooled_width, float spatial_scale, int sampling_ratio, bool aligned, Tensor* out);
Status DeformableConvInferMeta(const Tensor& x, const Tensor& offset, const Tensor& filter, const Tensor* mask,
                               const std::vector<int>& strides, const std::vector<int>& paddings,
                               const std::vector<int>& dilations, int deformable_groups, int groups, int im2col_step,
                               Tensor* out);

}  // namespace kforge::meta
// --- end of GraphNet's missing ops (issue 34) --------------------------------------------------------------------

#endif  // KFORGE_EXAMPLES_KERNELS_KFORGE_KERNELS_H_
