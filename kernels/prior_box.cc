// prior_box (SSD-style anchors, BlazeFace): Paddle's PriorBoxKernel (phi/kernels/cpu/prior_box_kernel.cc) and its
// PriorBoxInferMeta. The boxes depend only on the dims of input (the feature map) and image, never on their values.
#include <algorithm>
#include <cmath>
#include <vector>

#include "kernel_util.h"
#include "kforge_kernels.h"

namespace kforge {

namespace {

// Paddle's ExpandAspectRatios: 1 first, then each ratio not yet present (within 1e-6), followed by its inverse
// when flip is set.
std::vector<float> expand_aspect_ratios(const std::vector<float>& given, bool flip) {
  std::vector<float> out{1.0f};
  for (float ar : given) {
    bool seen = false;
    for (float o : out) seen = seen || std::fabs(ar - o) < 1e-6f;
    if (seen) continue;
    out.push_back(ar);
    if (flip) out.push_back(1.0f / ar);
  }
  return out;
}

}  // namespace

namespace meta {

Status PriorBoxInferMeta(const Tensor& input, const Tensor& image, const std::vector<float>& min_sizes,
                         const std::vector<float>& max_sizes, const std::vector<float>& aspect_ratios,
                         const std::vector<float>& variances, bool flip, bool clip, float step_w, float step_h,
                         float offset, bool min_max_aspect_ratios_order, Tensor* out, Tensor* var) {
  (void)clip;
  (void)offset;
  (void)min_max_aspect_ratios_order;
  static constexpr const char* kOp = "PriorBoxInferMeta";
  if (input.ndim != 4) return Status::Error(kOp, ": input must be 4-D NCHW, got ", input.dims_string());
  if (image.ndim != 4) return Status::Error(kOp, ": image must be 4-D NCHW, got ", image.dims_string());
  if (input.dtype != DataType::kFloat32 && input.dtype != DataType::kFloat64) {
    return Status::Error(kOp, ": input must be float32 or float64, got ", input.dtype);
  }
  if (min_sizes.empty()) return Status::Error(kOp, ": min_sizes must not be empty");
  for (float s : min_sizes) {
    if (!(s > 0)) return Status::Error(kOp, ": min_sizes must be positive, got ", s);
  }
  if (!max_sizes.empty()) {
    if (max_sizes.size() != min_sizes.size()) {
      return Status::Error(kOp, ": max_sizes has ", max_sizes.size(), " values, min_sizes ", min_sizes.size());
    }
    for (size_t i = 0; i < max_sizes.size(); ++i) {
      if (!(max_sizes[i] > min_sizes[i])) {
        return Status::Error(kOp, ": max_sizes[", i, "] (", max_sizes[i], ") must exceed min_sizes[", i, "]");
      }
    }
  }
  if (variances.size() != 4) return Status::Error(kOp, ": variances must have 4 values, got ", variances.size());
  if (step_w < 0 || step_h < 0) return Status::Error(kOp, ": step_w and step_h must not be negative");
  const int64_t priors = static_cast<int64_t>(expand_aspect_ratios(aspect_ratios, flip).size() * min_sizes.size() +
                                              max_sizes.size());
  const std::vector<int64_t> dims = {input.dims[2], input.dims[3], priors, 4};
  for (Tensor* t : {out, var}) {
    if (t == nullptr) return Status::Error(kOp, ": output is null");
    t->dtype = input.dtype;
    KFORGE_RETURN_IF_ERROR(t->set_dims(dims));
  }
  return Status::OK();
}

}  // namespace meta

namespace kernels {

Status prior_box(const KernelContext& ctx, const Tensor& input, const Tensor& image,
                 const std::vector<float>& min_sizes, const std::vector<float>& max_sizes,
                 const std::vector<float>& aspect_ratios, const std::vector<float>& variances, bool flip, bool clip,
                 float step_w, float step_h, float offset, bool min_max_aspect_ratios_order, Tensor* out,
                 Tensor* var) {
  static constexpr const char* kOp = "prior_box";
  KFORGE_RETURN_IF_ERROR(util::require_output(out, kOp));
  KFORGE_RETURN_IF_ERROR(util::require_output(var, kOp));
  Tensor want_out, want_var;
  KFORGE_RETURN_IF_ERROR(meta::PriorBoxInferMeta(input, image, min_sizes, max_sizes, aspect_ratios, variances, flip,
                                                 clip, step_w, step_h, offset, min_max_aspect_ratios_order,
                                                 &want_out, &want_var));
  for (const Tensor* t : {out, var}) {
    if (t->dtype != want_out.dtype) return Status::Error(kOp, ": outputs must be ", want_out.dtype, ", got ", t->dtype);
    KFORGE_RETURN_IF_ERROR(util::require_dims(*t, want_out, kOp));
  }
  const std::vector<float> ratios = expand_aspect_ratios(aspect_ratios, flip);
  return util::visit_float(util::kernel_dtype(ctx, input), kOp, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const int64_t img_h = image.dims[2], img_w = image.dims[3], fh = input.dims[2], fw = input.dims[3];
    T step_width = static_cast<T>(step_w), step_height = static_cast<T>(step_h);
    if (step_width == 0 || step_height == 0) {
      step_width = static_cast<T>(img_w) / static_cast<T>(fw);
      step_height = static_cast<T>(img_h) / static_cast<T>(fh);
    }
    const T iw = static_cast<T>(img_w), ih = static_cast<T>(img_h);
    T* b = out->data_as<T>();
    auto box = [&](T cx, T cy, T bw, T bh) {
      b[0] = (cx - bw) / iw;
      b[1] = (cy - bh) / ih;
      b[2] = (cx + bw) / iw;
      b[3] = (cy + bh) / ih;
      b += 4;
    };
    for (int64_t h = 0; h < fh; ++h) {
      for (int64_t w = 0; w < fw; ++w) {
        const T cx = (static_cast<T>(w) + static_cast<T>(offset)) * step_width;
        const T cy = (static_cast<T>(h) + static_cast<T>(offset)) * step_height;
        for (size_t s = 0; s < min_sizes.size(); ++s) {
          const float min_size = min_sizes[s];
          // The square of side sqrt(min * max) when max_sizes are given.
          auto max_box = [&] {
            if (max_sizes.empty()) return;
            const T side = static_cast<T>(std::sqrt(min_size * max_sizes[s]) / 2.);
            box(cx, cy, side, side);
          };
          if (min_max_aspect_ratios_order) {
            const T half = static_cast<T>(min_size / 2.);
            box(cx, cy, half, half);
            max_box();
            for (float ar : ratios) {
              if (std::fabs(ar - 1.) < 1e-6) continue;
              box(cx, cy, static_cast<T>(min_size * std::sqrt(ar) / 2.), static_cast<T>(min_size / std::sqrt(ar) / 2.));
            }
          } else {
            for (float ar : ratios) {
              box(cx, cy, static_cast<T>(min_size * std::sqrt(ar) / 2.), static_cast<T>(min_size / std::sqrt(ar) / 2.));
            }
            max_box();
          }
        }
      }
    }
    T* o = out->data_as<T>();
    if (clip) {
      for (int64_t i = 0, n = out->numel(); i < n; ++i) o[i] = std::min<T>(std::max<T>(o[i], T(0)), T(1));
    }
    T* v = var->data_as<T>();
    for (int64_t i = 0, n = var->numel(); i < n; ++i) v[i] = static_cast<T>(variances[static_cast<size_t>(i % 4)]);
    return Status::OK();
  });
}

}  // namespace kernels

}  // namespace kforge
