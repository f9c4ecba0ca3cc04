// The ComputeCall of compute_kernels (cuda_index_text.h), shared by the files that define its members:
// cuda_index_compute.cpp (dropout, interpolation, grid_sample, triu / tril, arange, full_with_tensor, one_hot, pow)
// and cuda_index_reduce.cpp (reductions over any axes, softmax off the last axis, cumsum: one thread per output
// element or line). Internal to codegen/.
#pragma once

#include <fmt/format.h>

#include <array>
#include <set>

#include "codegen/cpp_text.h"
#include "codegen/cuda_index_text.h"
#include "passes/cuda_plan_compute.h"

namespace kforge::codegen::index_text::compute_internal {

// The C++ type of a dtype these kernels compute on (bool, integers, float32, float64); nullopt for 16-bit floats.
inline std::optional<std::string> value_type(ir::DataType d) {
  if (d == ir::DataType::kFloat16 || d == ir::DataType::kBFloat16) return std::nullopt;
  return element_type(d);
}

// The unsigned type of an integer type's width (wrapping arithmetic without undefined behaviour).
inline std::string unsigned_of(const std::string& type) {
  if (type == "int8_t" || type == "uint8_t") return "uint8_t";
  if (type == "int16_t" || type == "uint16_t") return "uint16_t";
  if (type == "int32_t" || type == "uint32_t") return "uint32_t";
  return "uint64_t";
}

// Renders the plan's form of one call (passes::CudaComputeForm): every check was the plan's, so none fails here.
class ComputeCall : public IndexBuilder {
 public:
  ComputeCall(const passes::CudaComputeForm& form, const passes::LoweredProgram& p, const passes::KernelCall& call,
              const std::string& prefix, size_t first, const std::string& description, const CudaBufferExpr& buffer,
              SizeTable& sizes, const SizeTable::Spelling& size_argument)
      : IndexBuilder(p, call, prefix, first, description, buffer, sizes, size_argument), form_(form) {}

  std::vector<CudaIndexKernel> build();

 private:
  // The C++ type of the form's element type (the plan checked it has one).
  std::string form_type() const { return *move_type(form_.dtype); }

  // Inference dropout: a copy (upscale_in_train) or x * (1 - p) (downgrade_in_infer), as kernels/creation.cc.
  void dropout();

  // nearest_interp / bilinear_interp of a 4-D x (bilinear also linear_interp's 3-D x, an image of height 1) to the
  // output's spatial size, with Paddle's source coordinates (kernels/nn.cc, kernels/resize.cc): kforge_index.cuh's
  // interp_ratio, nearest_source and bilinear_tap.
  void interpolate(bool bilinear);
  // bicubic_interp of a 4-D x: Paddle's copy at equal sizes, else kforge_index.cuh's bicubic_at over x's plane of
  // the output element (kernels/resize.cc's arithmetic, kforge_sampling.h).
  void bicubic();
  // prior_box: one thread per coordinate of out [h, w, prior, 4] (and var's, the same dims), the boxes of
  // kernels/prior_box.cc from the plan's half sizes, the centre from the feature map's and image's dims.
  void prior_box();

  // grid_sample of a 4-D NCHW x at grid [n, oh, ow, 2] (x then y in [-1, 1]), as kernels/losses.cc: one thread per
  // output element, kforge_index.cuh's grid_coordinate and grid_pixel.
  void grid_sample();

  // deformable_conv of a 4-D NCHW x (offsets, optional mask, grouped filter) as kernels/detection.cc: one thread per
  // output element, kforge_index.cuh's deformable_conv_at.
  void deformable_conv();

  // roi_align of a 4-D NCHW x over boxes [r, 4] as kernels/detection.cc: one thread per output element
  // [r, c, ph, pw], kforge_index.cuh's roi_align_at (the box's samples in the CPU kernel's order).
  void roi_align();

  // yolo_box as kernels/yolo_box.cc: one thread per box coordinate, then one per class score (each output that has
  // a value), kforge_index.cuh's yolo_box_at / yolo_score_at.
  void yolo_box();

  // triu / tril over the last two dims: an element kept or zeroed by its column minus its row.
  void triangle(bool upper);
  void diag();

  // arange with a constant step and a constant start, or one that is an expression of the dims
  // (`arange(n - 1, ...)`): out[e] = start + e * step in the output's type (Paddle's order).
  void arange();

  // linspace: start[0] to stop[0] in the output's number of steps, as kernels/detection.cc (two halves).
  void linspace();

  // full_with_tensor: every element is the value tensor's one (`paddle.full([n, n], -inf)` over a dynamic n, whose
  // dims the shape rule took from the shape tensor's known contents).
  void fill();
  void cast();

  // sum / mean / max / min / prod / any / all over the axes of `axis` (every axis when it is empty, or prod's
  // reduce_all): output element e is the kept dims' coordinate; its reduced elements are folded in row-major order.
  void reduce();

  // The sizes index_compute.j2's line_base reads to put line e's first element at `base`: `inner` and `line`
  // (len * inner), into the statements' context s.
  static void line_base(KernelText& k, tmpl::Value& s, const SymExpr& len, const SymExpr& inner);

  // softmax along an axis that is not the last (the fused row kernels take the last): one thread per line, max,
  // exp and sum in x's type as kernels/linalg.cc computes them.
  void softmax();

  // log_softmax along any axis: one thread per line, in kernels/reduce_math.cc's order (the max, the sum of
  // exp(x - max) in double, then (x - max) - log of the sum).
  void log_softmax();

  // cumsum: one thread per line along the axis (every element in one line when flatten), in kernels/reduce_math.cc's
  // order; exclusive stores the sum before the element, reverse walks the line backwards; integers wrap.
  void cumsum();

  // one_hot: out[..., c] = 1.0f where c is x[...]; an id outside [0, num_classes) gives a row of zeros.
  void one_hot();

  // pow with a constant exponent, as kernels/math.cc: powf / pow for floats (the exponent rounded to x's type);
  // for int32 / int64 the exponent truncated, which must be >= 0 and fit, and x**e by squaring, wrapping.
  void pow();

  const passes::CudaComputeForm& form_;
};

}  // namespace kforge::codegen::index_text::compute_internal
