// The ops issue 34 adds last, as Paddle's CPU kernels compute them: deformable_conv (ModulatedDeformableIm2col and
// the grouped product), roi_align (the sample grid of GetIndexesAndRatios and its average), and isnan, linspace,
// index_sample; nonzero, masked_select and unique, whose output sizes depend on the data. Each step in the element type T
// and in Paddle's order, so that float32 results match Paddle's.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "kernel_util.h"
#include "kforge_sampling.h"  // deformable_conv's sampling, shared with --target cuda's kernel
#include "kforge_kernels.h"

namespace kforge::kernels {

namespace {

Status check_result(const char* op, const Tensor* out, const Tensor& expected) {
  KFORGE_RETURN_IF_ERROR(util::require_output(out, op));
  if (out->dtype != expected.dtype) return Status::Error(op, ": out is ", out->dtype, ", expected ", expected.dtype);
  return util::require_dims(*out, expected, op);
}

}  // namespace

Status deformable_conv(const KernelContext& ctx, const Tensor& x, const Tensor& offset, const Tensor& filter,
                       const Tensor* mask, const std::vector<int>& strides, const std::vector<int>& paddings,
                       const std::vector<int>& dilations, int deformable_groups, int groups, int im2col_step,
                       Tensor* out) {
  static constexpr const char* kOp = "deformable_conv";
  Tensor expected;
  KFORGE_RETURN_IF_ERROR(meta::DeformableConvInferMeta(x, offset, filter, mask, strides, paddings, dilations,
                                                       deformable_groups, groups, im2col_step, &expected));
  KFORGE_RETURN_IF_ERROR(check_result(kOp, out, expected));
  const int64_t n = x.dims[0], c = x.dims[1], h = x.dims[2], w = x.dims[3];
  const int64_t oc = filter.dims[0], kh = filter.dims[2], kw = filter.dims[3];
  const int64_t oh = out->dims[2], ow = out->dims[3], plane = oh * ow;
  const int64_t cpg = c / groups, ocpg = oc / groups, cpdg = c / deformable_groups, kk = kh * kw;
  return util::visit_float(x.dtype, kOp, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    // One image at a time: its columns [c * kh * kw, oh * ow] (Paddle's im2col, mask applied), then per group
    // out[g] = filter[g] [ocpg, cpg * kh * kw] x columns[g].
    util::Scratch<T> col(ctx, static_cast<size_t>(c * kk * plane));
    const T* xd = x.data_as<const T>();
    const T* od = offset.data_as<const T>();
    const T* md = mask != nullptr ? mask->data_as<const T>() : nullptr;
    const T* fd = filter.data_as<const T>();
    T* yd = out->data_as<T>();
    for (int64_t b = 0; b < n; ++b) {
      for (int64_t ci = 0; ci < c; ++ci) {
        const int64_t dg = ci / cpdg;
        const T* im = xd + (b * c + ci) * h * w;
        const T* off = od + (b * deformable_groups + dg) * 2 * kk * plane;
        const T* msk = md != nullptr ? md + (b * deformable_groups + dg) * kk * plane : nullptr;
        for (int64_t i = 0; i < kh; ++i) {
          for (int64_t j = 0; j < kw; ++j) {
            const int64_t tap = i * kw + j;
            T* dst = col.data() + (ci * kk + tap) * plane;
            for (int64_t y = 0; y < oh; ++y) {
              for (int64_t xo = 0; xo < ow; ++xo) {
                const int64_t p = y * ow + xo;
                const T off_h = off[(2 * tap) * plane + p];
                const T off_w = off[(2 * tap + 1) * plane + p];
                const T h_im = static_cast<T>(y * strides[0] - paddings[0] + i * dilations[0]) + off_h;
                const T w_im = static_cast<T>(xo * strides[1] - paddings[1] + j * dilations[1]) + off_w;
                T val = T(0);
                if (h_im > -1 && w_im > -1 && h_im < static_cast<T>(h) && w_im < static_cast<T>(w)) {
                  val = sampling::dmcn_bilinear(im, h, w, h_im, w_im);
                }
                if (msk != nullptr) val *= msk[tap * plane + p];
                dst[p] = val;
              }
            }
          }
        }
      }
      for (int64_t g = 0; g < groups; ++g) {
        for (int64_t o = 0; o < ocpg; ++o) {
          T* dst = yd + (b * oc + g * ocpg + o) * plane;
          std::fill(dst, dst + plane, T(0));
          const T* f = fd + (g * ocpg + o) * cpg * kk;
          const T* src = col.data() + g * cpg * kk * plane;
          for (int64_t r = 0; r < cpg * kk; ++r) {
            const T fv = f[r];
            const T* row = src + r * plane;
            for (int64_t p = 0; p < plane; ++p) dst[p] += fv * row[p];
          }
        }
      }
    }
    return Status::OK();
  });
}

Status roi_align(const KernelContext& ctx, const Tensor& x, const Tensor& boxes, const Tensor* boxes_num,
                 int pooled_height, int pooled_width, float spatial_scale, int sampling_ratio, bool aligned,
                 Tensor* out) {
  (void)ctx;
  static constexpr const char* kOp = "roi_align";
  Tensor expected;
  KFORGE_RETURN_IF_ERROR(meta::RoiAlignInferMeta(x, boxes, boxes_num, pooled_height, pooled_width, spatial_scale,
                                                 sampling_ratio, aligned, &expected));
  KFORGE_RETURN_IF_ERROR(check_result(kOp, out, expected));
  const int64_t batch = x.dims[0], channels = x.dims[1], height = x.dims[2], width = x.dims[3];
  const int64_t rois = boxes.dims[0];
  // The image of each box: boxes_num[i] boxes of image i, in order (without boxes_num, Paddle reads the boxes' LoD,
  // which a program does not carry: every box is then of the only image).
  std::vector<int64_t> image(static_cast<size_t>(rois), 0);
  if (boxes_num != nullptr) {
    if (boxes_num->numel() != batch) {
      return Status::Error(kOp, ": boxes_num has ", boxes_num->numel(), " counts for a batch of ", batch);
    }
    int64_t at = 0;
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t count = boxes_num->dtype == DataType::kInt64 ? boxes_num->data_as<const int64_t>()[b]
                                                                 : boxes_num->data_as<const int32_t>()[b];
      if (count < 0 || count > rois - at) {
        return Status::Error(kOp, ": boxes_num[", b, "] is ", count, "; the counts must add up to the ", rois,
                             " boxes");
      }
      for (int64_t i = 0; i < count; ++i) image[static_cast<size_t>(at + i)] = b;
      at += count;
    }
    if (at != rois) return Status::Error(kOp, ": boxes_num adds up to ", at, " boxes, boxes has ", rois);
  } else if (batch != 1 && rois > 0) {
    return Status::Error(kOp, ": without boxes_num, x must hold one image, got a batch of ", batch);
  }
  return util::visit_float(x.dtype, kOp, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    struct Sample {
      int64_t xy = 0, xY = 0, Xy = 0, XY = 0;
      T wxy = 0, wxY = 0, wXy = 0, wXY = 0;
    };
    const T* bd = boxes.data_as<const T>();
    T* o = out->data_as<T>();
    const T roi_offset = aligned ? T(0.5) : T(0);
    std::vector<Sample> samples;
    for (int64_t r = 0; r < rois; ++r) {
      const T* box = bd + r * 4;
      const T xmin = box[0] * spatial_scale - roi_offset, ymin = box[1] * spatial_scale - roi_offset;
      const T xmax = box[2] * spatial_scale - roi_offset, ymax = box[3] * spatial_scale - roi_offset;
      T roi_w = xmax - xmin, roi_h = ymax - ymin;
      if (!aligned) {
        roi_w = std::max(roi_w, T(1));
        roi_h = std::max(roi_h, T(1));
      }
      const int64_t grid_h = sampling_ratio > 0 ? sampling_ratio : static_cast<int64_t>(std::ceil(roi_h / pooled_height));
      const int64_t grid_w = sampling_ratio > 0 ? sampling_ratio : static_cast<int64_t>(std::ceil(roi_w / pooled_width));
      // An aligned box of negative size makes an empty grid (ceil of a negative): Paddle's average of no samples,
      // 0 * (1 / 0), NaN. A grid below -1 would be Paddle's unsigned overflow: refused.
      if (grid_h < 0 || grid_w < 0 || grid_h * grid_w > (int64_t{1} << 24)) {
        return Status::Error(kOp, ": box ", r, " gives a sample grid of ", grid_h, " x ", grid_w);
      }
      // GetIndexesAndRatios: the samples of every bin, row by row.
      samples.clear();
      const T bin_w = roi_w / static_cast<T>(pooled_width), bin_h = roi_h / static_cast<T>(pooled_height);
      for (int64_t py = 0; py < pooled_height; ++py) {
        for (int64_t px = 0; px < pooled_width; ++px) {
          for (int64_t iy = 0; iy < grid_h; ++iy) {
            T y = ymin + bin_h * (static_cast<T>(py) + static_cast<T>(iy + .5f) / static_cast<T>(grid_h));
            for (int64_t ix = 0; ix < grid_w; ++ix) {
              T xs = xmin + bin_w * (static_cast<T>(px) + static_cast<T>(ix + .5f) / static_cast<T>(grid_w));
              if (y < -1.0 || y > height || xs < -1.0 || xs > width) {
                samples.emplace_back();
                continue;
              }
              T yy = y <= 0 ? T(0) : y;
              xs = xs <= 0 ? T(0) : xs;
              int64_t x_lo = static_cast<int64_t>(xs), x_hi = 0;
              if (x_lo >= width - 1) {
                x_hi = x_lo = width - 1;
                xs = static_cast<T>(x_lo);
              } else {
                x_hi = x_lo + 1;
              }
              const T x_ratio = static_cast<T>(x_hi) - xs;
              int64_t y_lo = static_cast<int64_t>(yy), y_hi = 0;
              if (y_lo >= height - 1) {
                y_hi = y_lo = height - 1;
                yy = static_cast<T>(y_lo);
              } else {
                y_hi = y_lo + 1;
              }
              const T y_ratio = static_cast<T>(y_hi) - yy;
              Sample s;
              s.xy = y_lo * width + x_lo;
              s.xY = y_hi * width + x_lo;
              s.Xy = y_lo * width + x_hi;
              s.XY = y_hi * width + x_hi;
              s.wxy = x_ratio * y_ratio;
              s.wxY = x_ratio * (1 - y_ratio);
              s.wXy = (1 - x_ratio) * y_ratio;
              s.wXY = (1 - x_ratio) * (1 - y_ratio);
              samples.push_back(s);
            }
          }
        }
      }
      // Interpolate and AvgPool: the values of a bin summed in order, times 1 / count.
      const int64_t points = grid_h * grid_w;
      const T count =
          points == 0 ? std::numeric_limits<T>::infinity() : static_cast<T>(1.0 / static_cast<double>(points));
      for (int64_t ch = 0; ch < channels; ++ch) {
        const T* data = x.data_as<const T>() + (image[static_cast<size_t>(r)] * channels + ch) * height * width;
        T* dst = o + (r * channels + ch) * pooled_height * pooled_width;
        for (int64_t bin = 0; bin < pooled_height * pooled_width; ++bin) {
          T sum = 0;
          for (int64_t k = 0; k < points; ++k) {
            const Sample& s = samples[static_cast<size_t>(bin * points + k)];
            sum = sum + (s.wxy * data[s.xy] + s.wXy * data[s.Xy] + s.wxY * data[s.xY] + s.wXY * data[s.XY]);
          }
          dst[bin] = sum * count;
        }
      }
    }
    return Status::OK();
  });
}

Status isnan(const KernelContext& ctx, const Tensor& x, Tensor* out) {
  (void)ctx;
  static constexpr const char* kOp = "isnan";
  Tensor expected;
  KFORGE_RETURN_IF_ERROR(meta::IsfiniteInferMeta(x, &expected));
  KFORGE_RETURN_IF_ERROR(check_result(kOp, out, expected));
  bool* o = out->data_as<bool>();
  return util::visit_number(x.dtype, kOp, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* xd = x.data_as<const T>();
    for (int64_t i = 0, n = x.numel(); i < n; ++i) {
      if constexpr (std::is_floating_point<T>::value) {
        o[i] = std::isnan(xd[i]);
      } else {
        o[i] = false;
      }
    }
    return Status::OK();
  });
}

Status linspace(const KernelContext& ctx, const Tensor& start, const Tensor& stop, const Tensor& number,
                DataType dtype, Tensor* out) {
  (void)ctx;
  static constexpr const char* kOp = "linspace";
  Tensor expected;
  KFORGE_RETURN_IF_ERROR(meta::LinspaceInferMeta(start, stop, number, dtype, &expected));
  KFORGE_RETURN_IF_ERROR(check_result(kOp, out, expected));
  // start and stop converted to dtype first (Paddle's TransDataType; through double, exact for every value of an
  // int32 or a float, and for int64 values up to 2^53), then the two halves from either end.
  auto value_of = [](const Tensor& t) -> double {
    switch (t.dtype) {
      case DataType::kFloat32: return t.data_as<const float>()[0];
      case DataType::kFloat64: return t.data_as<const double>()[0];
      case DataType::kInt32: return t.data_as<const int32_t>()[0];
      default: return static_cast<double>(t.data_as<const int64_t>()[0]);  // int64 (LinspaceInferMeta checked)
    }
  };
  return util::visit_number(dtype, kOp, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral<T>::value) {
      for (const double v : {value_of(start), value_of(stop)}) {  // the conversion would be undefined
        if (!(v >= static_cast<double>(std::numeric_limits<T>::lowest()) &&
              v < static_cast<double>(std::numeric_limits<T>::max()) + 1.0)) {
          return Status::Error(kOp, ": ", v, " does not fit ", dtype);
        }
      }
    }
    const T first = static_cast<T>(value_of(start)), last = static_cast<T>(value_of(stop));
    T* o = out->data_as<T>();
    const int64_t num = out->dims[0];
    if (num == 1) o[0] = first;
    if (num <= 1) return Status::OK();
    // Paddle: (double)(stop - start) / (num - 1), the difference in T; for integers in double (the same value
    // where T's difference does not overflow).
    const double span = std::is_integral<T>::value ? static_cast<double>(last) - static_cast<double>(first)
                                                   : static_cast<double>(last - first);
    const double step = span / static_cast<double>(num - 1);
    const int64_t half = num / 2;
    for (int64_t i = 0; i < num; ++i) {
      o[i] = i < half ? static_cast<T>(first + step * static_cast<double>(i))
                      : static_cast<T>(last - step * static_cast<double>(num - i - 1));
    }
    return Status::OK();
  });
}

Status index_sample(const KernelContext& ctx, const Tensor& x, const Tensor& index, Tensor* out) {
  (void)ctx;
  static constexpr const char* kOp = "index_sample";
  Tensor expected;
  KFORGE_RETURN_IF_ERROR(meta::IndexSampleInferMeta(x, index, &expected));
  KFORGE_RETURN_IF_ERROR(check_result(kOp, out, expected));
  const int64_t rows = x.dims[0], len = x.dims[1], picks = index.dims[1];
  return util::visit_number(x.dtype, kOp, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* xd = x.data_as<const T>();
    T* o = out->data_as<T>();
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t j = 0; j < picks; ++j) {
        const int64_t at = r * picks + j;
        const int64_t k = index.dtype == DataType::kInt64 ? index.data_as<const int64_t>()[at]
                                                          : index.data_as<const int32_t>()[at];
        if (k < 0 || k >= len) {
          return Status::Error(kOp, ": index[", r, ", ", j, "] is ", k, ", outside [0, ", len, ")");
        }
        o[at] = xd[r * len + k];
      }
    }
    return Status::OK();
  });
}

namespace {

// out must be laid out for `capacity` (the infer-meta's dims): the same dtype and trailing dims, and room for as
// many rows.
Status check_capacity(const char* op, const Tensor* out, const Tensor& capacity) {
  KFORGE_RETURN_IF_ERROR(util::require_output(out, op));
  if (out->dtype != capacity.dtype) return Status::Error(op, ": out is ", out->dtype, ", expected ", capacity.dtype);
  bool fits = out->ndim == capacity.ndim && out->ndim >= 1 && out->dims[0] >= capacity.dims[0];
  for (int32_t a = 1; fits && a < out->ndim; ++a) fits = out->dims[a] == capacity.dims[a];
  if (!fits) {
    return Status::Error(op, ": out ", out->dims_string(), " has no room for ", capacity.dims_string(),
                         " (its size depends on the data: lay it out for the most it can be)");
  }
  return Status::OK();
}

}  // namespace

Status nonzero(const KernelContext& ctx, const Tensor& condition, Tensor* out) {
  (void)ctx;
  static constexpr const char* kOp = "nonzero";
  Tensor capacity;
  KFORGE_RETURN_IF_ERROR(meta::NonZeroInferMeta(condition, &capacity));
  KFORGE_RETURN_IF_ERROR(check_capacity(kOp, out, capacity));
  const int32_t rank = condition.ndim;
  int64_t strides[kMaxRank];
  util::contiguous_strides(condition.dims, rank, strides);
  return util::visit_plain(condition.dtype, kOp, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* c = condition.data_as<const T>();
    int64_t* o = out->data_as<int64_t>();
    int64_t rows = 0;
    for (int64_t i = 0, n = condition.numel(); i < n; ++i) {
      if (!(c[i] != T(0))) continue;
      for (int32_t a = 0; a < rank; ++a) o[rows * rank + a] = (i / strides[a]) % condition.dims[a];
      ++rows;
    }
    out->dims[0] = rows;
    return Status::OK();
  });
}

Status masked_select(const KernelContext& ctx, const Tensor& x, const Tensor& mask, Tensor* out) {
  (void)ctx;
  static constexpr const char* kOp = "masked_select";
  Tensor capacity;
  KFORGE_RETURN_IF_ERROR(meta::MaskedSelectInferMeta(x, mask, &capacity));
  KFORGE_RETURN_IF_ERROR(check_capacity(kOp, out, capacity));
  std::vector<int64_t> both;
  KFORGE_RETURN_IF_ERROR(util::broadcast_dims(x, mask, kOp, &both));
  const int32_t rank = static_cast<int32_t>(both.size());
  int64_t xs[kMaxRank], ms[kMaxRank], strides[kMaxRank];
  util::broadcast_strides(x, rank, xs);
  util::broadcast_strides(mask, rank, ms);
  util::contiguous_strides(both.data(), rank, strides);
  const bool* m = mask.data_as<const bool>();
  const size_t width = size_of(x.dtype);
  const auto* xd = static_cast<const unsigned char*>(x.data);
  auto* o = static_cast<unsigned char*>(out->data);
  int64_t count = 0;
  for (int64_t i = 0, n = capacity.dims[0]; i < n; ++i) {
    int64_t xo = 0, mo = 0;
    for (int32_t a = 0; a < rank; ++a) {
      const int64_t k = (i / strides[a]) % both[a];
      xo += k * xs[a];
      mo += k * ms[a];
    }
    if (!m[mo]) continue;
    std::memcpy(o + count * width, xd + xo * width, width);
    ++count;
  }
  out->dims[0] = count;
  return Status::OK();
}

Status unique(const KernelContext& ctx, const Tensor& x, bool return_index, bool return_inverse, bool return_counts,
              const std::vector<int>& axis, DataType dtype, bool is_sorted, Tensor* out, Tensor* indices,
              Tensor* inverse, Tensor* counts) {
  (void)ctx;
  static constexpr const char* kOp = "unique";
  Tensor c_out, c_indices, c_inverse, c_counts;
  KFORGE_RETURN_IF_ERROR(meta::UniqueRawInferMeta(x, return_index, return_inverse, return_counts, axis, dtype,
                                                   is_sorted, &c_out, &c_indices, &c_inverse, &c_counts));
  KFORGE_RETURN_IF_ERROR(check_capacity(kOp, out, c_out));
  if (indices != nullptr) KFORGE_RETURN_IF_ERROR(check_capacity(kOp, indices, c_indices));
  KFORGE_RETURN_IF_ERROR(check_result(kOp, inverse, c_inverse));
  if (counts != nullptr) KFORGE_RETURN_IF_ERROR(check_capacity(kOp, counts, c_counts));
  const int64_t n = x.numel();
  return util::visit_plain(x.dtype, kOp, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* xd = x.data_as<const T>();
    // A strict weak order even over NaN (sorted last, as one value): std::stable_sort with plain < on NaN is
    // undefined behaviour.
    auto less = [](T a, T b) {
      if constexpr (std::is_floating_point_v<T>) return !std::isnan(a) && (std::isnan(b) || a < b);
      return a < b;
    };
    auto store = [&](Tensor* t, int64_t at, int64_t v) {
      if (dtype == DataType::kInt64) {
        t->data_as<int64_t>()[at] = v;
      } else {
        t->data_as<int32_t>()[at] = static_cast<int32_t>(v);
      }
    };
    if (!axis.empty()) {
      // Along axis a: the slices x[..., i, ...], compared element by element in the row-major order of the other
      // dims (Paddle's UniqueDim); out is written compact, x's dims with the count at a.
      const int32_t a = axis[0] < 0 ? axis[0] + x.ndim : axis[0];
      int64_t outer = 1, inner = 1;
      for (int32_t d = 0; d < a; ++d) outer *= x.dims[d];
      for (int32_t d = a + 1; d < x.ndim; ++d) inner *= x.dims[d];
      const int64_t length = x.dims[a];
      auto at = [&](int64_t slice, int64_t k) { return xd[((k / inner) * length + slice) * inner + k % inner]; };
      auto slice_less = [&](int64_t p, int64_t q) {
        for (int64_t k = 0; k < outer * inner; ++k) {
          if (less(at(p, k), at(q, k))) return true;
          if (less(at(q, k), at(p, k))) return false;
        }
        return false;
      };
      std::vector<int64_t> slices(static_cast<size_t>(length));
      for (int64_t i = 0; i < length; ++i) slices[static_cast<size_t>(i)] = i;
      std::stable_sort(slices.begin(), slices.end(), slice_less);
      std::vector<int64_t> firsts;  // the first slice of each run of equal ones, ascending
      int64_t run_start = 0;
      for (int64_t k = 0; k < length; ++k) {
        const int64_t i = slices[static_cast<size_t>(k)];
        if (k == 0 || slice_less(slices[static_cast<size_t>(k - 1)], i)) {
          if (counts != nullptr && k > 0) store(counts, static_cast<int64_t>(firsts.size()) - 1, k - run_start);
          if (indices != nullptr) store(indices, static_cast<int64_t>(firsts.size()), i);
          firsts.push_back(i);
          run_start = k;
        }
        store(inverse, i, static_cast<int64_t>(firsts.size()) - 1);
      }
      const int64_t count = static_cast<int64_t>(firsts.size());
      if (counts != nullptr && length > 0) store(counts, count - 1, length - run_start);
      T* o = out->data_as<T>();
      for (int64_t b = 0; b < outer; ++b) {
        for (int64_t r = 0; r < count; ++r) {
          const T* from = xd + (b * length + firsts[static_cast<size_t>(r)]) * inner;
          std::copy(from, from + inner, o + (b * count + r) * inner);
        }
      }
      out->dims[a] = count;
      if (indices != nullptr) indices->dims[0] = count;
      if (counts != nullptr) counts->dims[0] = count;
      return Status::OK();
    }
    // Positions sorted by value, ties by position: each run of equal values starts at its first occurrence.
    std::vector<int64_t> order(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) order[static_cast<size_t>(i)] = i;
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return less(xd[a], xd[b]); });
    int64_t count = 0, run_start = 0;  // distinct values so far; where the current run began in `order`
    for (int64_t k = 0; k < n; ++k) {
      const int64_t i = order[static_cast<size_t>(k)];
      if (k == 0 || less(xd[order[static_cast<size_t>(k - 1)]], xd[i])) {
        if (counts != nullptr && k > 0) store(counts, count - 1, k - run_start);
        out->data_as<T>()[count] = xd[i];
        if (indices != nullptr) store(indices, count, i);
        run_start = k;
        ++count;
      }
      store(inverse, i, count - 1);
    }
    if (counts != nullptr && n > 0) store(counts, count - 1, n - run_start);
    out->dims[0] = count;
    if (indices != nullptr) indices->dims[0] = count;
    if (counts != nullptr) counts->dims[0] = count;
    return Status::OK();
  });
}

}  // namespace kforge::kernels
