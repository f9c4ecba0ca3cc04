// Shape rules of convolution, pooling, batch_norm and interpolation (ConvInferMeta, DepthwiseConvInferMeta,
// Conv2dTransposeInferMeta, Pool2DInferMeta, BatchNormInferMeta, InterpolateInferMeta), mirroring
// kernels/meta_nn.cc and kernel_util.h's conv_geometry over symbolic spatial dims.
#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "passes/op_context.h"

namespace kforge::passes::detail {

namespace {

using ir::DataType;

// Where the channels sit: second (NCHW), last (NHWC), or in blocks of 8 (NCHW8c: [N, C / 8, H, W, 8], oneDNN's
// nChw8c, which `--layout nchw8c` gives convolution regions; the kernel library's conv, pool and batch norm take it).
enum class Format { kChannelFirst, kChannelLast, kBlocked8 };

constexpr int64_t kBlock = 8;

struct Layout {
  Format format = Format::kChannelFirst;
  SymExpr n, c, h, w;
};

std::string read_format(const std::string& data_format, Format* f) {
  if (data_format == "NHWC" || data_format == "NDHWC" || data_format == "NLC") {
    *f = Format::kChannelLast;
  } else if (data_format == "NCHW" || data_format == "NCDHW" || data_format == "NCL" || data_format == "NC" ||
             data_format == "AnyLayout") {
    *f = Format::kChannelFirst;
  } else if (data_format == "NCHW8c") {
    *f = Format::kBlocked8;
  } else {
    return fmt::format("unknown data_format \"{}\"", data_format);
  }
  return "";
}

/// NCHW8c: a 5-D tensor whose last dim is the block of 8 channels.
std::string check_blocked(const ValueInfo& t, const std::string& name) {
  if (t.dims.size() != 5 || t.dims[4] != SymExpr(kBlock)) {
    return fmt::format("{} must be 5-D [N, C / 8, H, W, 8] for data_format \"NCHW8c\", got {}", name, to_string(t.dims));
  }
  return "";
}

std::string read_layout(const std::string& data_format, const ValueInfo& t, const std::string& name, Layout* l) {
  if (std::string e = read_format(data_format, &l->format); !e.empty()) return e;
  if (l->format == Format::kBlocked8) {
    if (std::string e = check_blocked(t, name); !e.empty()) return e;
    l->n = t.dims[0];
    l->c = t.dims[1] * kBlock;
    l->h = t.dims[2];
    l->w = t.dims[3];
    return "";
  }
  if (t.dims.size() != 4) return fmt::format("{} must be 4-D, got {}", name, to_string(t.dims));
  const bool last = l->format == Format::kChannelLast;
  l->n = t.dims[0];
  l->c = last ? t.dims[3] : t.dims[1];
  l->h = last ? t.dims[1] : t.dims[2];
  l->w = last ? t.dims[2] : t.dims[3];
  return "";
}

/// The dims of [n, c, h, w] in `format`; for NCHW8c, c must be a multiple of 8 (checked by the rules first).
SymShape layout_dims(Format format, const SymExpr& n, const SymExpr& c, const SymExpr& h, const SymExpr& w) {
  switch (format) {
    case Format::kChannelLast: return SymShape{n, h, w, c};
    case Format::kBlocked8: return SymShape{n, SymExpr::floor_div(c, kBlock), h, w, SymExpr(kBlock)};
    case Format::kChannelFirst: break;
  }
  return SymShape{n, c, h, w};
}

/// A result's channel count in NCHW8c: a static multiple of 8.
std::string check_blocked_channels(Format format, const SymExpr& c, const std::string& what) {
  if (format != Format::kBlocked8) return "";
  const std::optional<int64_t> v = c.constant();
  if (!v || *v % kBlock != 0) {
    return fmt::format("data_format \"NCHW8c\" needs {} to be a static multiple of 8, got {}", what, c.to_string());
  }
  return "";
}

struct Geometry {
  int64_t stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  int64_t pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;
  bool same = false;  // SAME padding: out = ceil(in / stride), pads depend on the input size
};

std::string geometry(const std::vector<int64_t>& strides, const std::vector<int64_t>& paddings,
                     const std::vector<int64_t>& dilations, const std::string& algorithm, Geometry* g) {
  if (strides.size() != 2) return fmt::format("strides must have 2 values, got {}", strides.size());
  if (dilations.size() != 2) return fmt::format("dilations must have 2 values, got {}", dilations.size());
  g->stride_h = strides[0];
  g->stride_w = strides[1];
  g->dilation_h = dilations[0];
  g->dilation_w = dilations[1];
  if (g->stride_h <= 0 || g->stride_w <= 0) return "strides must be positive";
  if (g->dilation_h <= 0 || g->dilation_w <= 0) return "dilations must be positive";
  if (paddings.size() == 2) {
    g->pad_top = g->pad_bottom = paddings[0];
    g->pad_left = g->pad_right = paddings[1];
  } else if (paddings.size() == 4) {
    g->pad_top = paddings[0];
    g->pad_bottom = paddings[1];
    g->pad_left = paddings[2];
    g->pad_right = paddings[3];
  } else {
    return fmt::format("paddings must have 2 or 4 values, got {}", paddings.size());
  }
  if (algorithm == "SAME") {
    g->same = true;
    g->dilation_h = g->dilation_w = 1;
  } else if (algorithm == "VALID") {
    g->pad_top = g->pad_bottom = g->pad_left = g->pad_right = 0;
  } else if (algorithm != "EXPLICIT") {
    return fmt::format("padding_algorithm must be EXPLICIT, SAME or VALID, got \"{}\"", algorithm);
  }
  if (g->pad_top < 0 || g->pad_bottom < 0 || g->pad_left < 0 || g->pad_right < 0) return "paddings must not be negative";
  return "";
}

/// SAME pads of one spatial dim for a static input size (conv_geometry's `same`).
void same_pads(int64_t in, int64_t stride, int64_t k, int64_t* p0, int64_t* p1) {
  const int64_t out = (in + stride - 1) / stride;
  int64_t sum = (out - 1) * stride + k - in;
  if (sum < 0) sum = 0;
  *p0 = sum / 2;
  *p1 = sum - *p0;
}

SymExpr conv_out(const SymExpr& in, int64_t k, int64_t dilation, int64_t p0, int64_t p1, int64_t stride, bool same) {
  if (same) return SymExpr::ceil_div(in, stride);  // (in + pads - k) / stride + 1 with SAME pads
  return SymExpr::floor_div(in + (p0 + p1 - (dilation * (k - 1) + 1)), stride) + 1;
}

#define ARG_INTS(var, index)                                                                             \
  auto var##_opt = c.static_ints(c.param(index));                                                        \
  if (!var##_opt) return c.runtime_value(c.param(index));                                               \
  const std::vector<int64_t>& var = *var##_opt;

#define ARG_TENSOR(var, index)                                                                          \
  const ValueInfo* var = c.tensor(c.param(index));                                                      \
  if (!(var) || (var)->is_vector) return fmt::format("input '{}' is required to infer the output shape", c.param(index));

std::optional<int64_t> static_dim(const SymExpr& e) { return e.constant(); }

/// Paddle's interpolation size int(float(in) * scale) (float32 arithmetic). Over a dynamic dim it is exact as
/// floor(in * m / 2^k) when scale is m / 2^k with m < 256: float(in) * scale is then exact for in < 2^16, and a
/// larger input makes the kernel's own check fail with an error status, never a wrong size.
std::optional<SymExpr> scaled_dim(const SymExpr& in, float scale) {
  if (auto n = in.constant()) return SymExpr(static_cast<int64_t>(static_cast<float>(*n) * scale));
  double m = static_cast<double>(scale);
  int k = 0;
  while (m != std::floor(m) && k < 64) {
    m *= 2;
    ++k;
  }
  if (m != std::floor(m) || m <= 0 || m >= 256) return std::nullopt;
  int64_t num = static_cast<int64_t>(m);
  while (k > 0 && num % 2 == 0) {  // lowest terms: s0 * 2 rather than floor_div(s0 * 4, 2)
    num /= 2;
    --k;
  }
  return k == 0 ? in * num : SymExpr::floor_div(in * num, int64_t{1} << k);
}

}  // namespace

std::string conv_rule(OpContext& c, bool depthwise) {
  // ConvInferMeta(input, filter, strides, paddings, padding_algorithm, dilations, groups, data_format);
  // DepthwiseConvInferMeta swaps groups and dilations.
  ARG_TENSOR(input, 0);
  ARG_TENSOR(filter, 1);
  ARG_INTS(strides, 2);
  ARG_INTS(paddings, 3);
  const std::string algorithm = c.string_value(c.param(4)).value_or("EXPLICIT");
  ARG_INTS(dilations, depthwise ? 6 : 5);
  const int64_t groups = c.static_int(c.param(depthwise ? 5 : 6)).value_or(1);
  const std::string data_format = c.string_value(c.param(7)).value_or("NCHW");
  Layout l;
  // NCHW8c also takes a 4-D NCHW input: a stem, whose 3 channels make no block, writing NCHW8c (passes/layout.h).
  const bool stem = data_format == "NCHW8c" && input->dims.size() == 4;
  if (std::string e = read_layout(stem ? "NCHW" : data_format, *input, "input", &l); !e.empty()) return e;
  if (stem) l.format = Format::kBlocked8;
  if (filter->dims.size() != 4) return fmt::format("filter must be 4-D [out_c, in_c / groups, kh, kw], got {}", to_string(filter->dims));
  if (groups <= 0) return fmt::format("groups must be positive, got {}", groups);
  if (input->dtype != filter->dtype) {
    return fmt::format("dtype conflict: input is {}, filter is {}", ir::dtype_name(input->dtype), ir::dtype_name(filter->dtype));
  }
  auto kh = static_dim(filter->dims[2]), kw = static_dim(filter->dims[3]);
  if (!kh || !kw) return "the filter's spatial dims must be static";
  const SymExpr out_c = filter->dims[0];
  const SymExpr want_c = filter->dims[1] * groups;
  if (l.c.is_constant() && want_c.is_constant() && l.c != want_c) {
    return fmt::format("input {} has {} channels but filter {} with groups {} expects {}", to_string(input->dims),
                       l.c.to_string(), to_string(filter->dims), groups, want_c.to_string());
  }
  Geometry g;
  if (std::string e = geometry(strides, paddings, dilations, algorithm, &g); !e.empty()) return e;
  const SymExpr out_h = conv_out(l.h, *kh, g.dilation_h, g.pad_top, g.pad_bottom, g.stride_h, g.same);
  const SymExpr out_w = conv_out(l.w, *kw, g.dilation_w, g.pad_left, g.pad_right, g.stride_w, g.same);
  for (const SymExpr* o : {&out_h, &out_w}) {
    if (auto v = o->constant(); v && *v <= 0) {
      return fmt::format("input {} with filter {} gives an empty output ({} x {})", to_string(input->dims),
                         to_string(filter->dims), out_h.to_string(), out_w.to_string());
    }
  }
  if (std::string e = check_blocked_channels(l.format, out_c, "the output channels"); !e.empty()) return e;
  c.set_result(0, input->dtype, layout_dims(l.format, l.n, out_c, out_h, out_w));
  return "";
}

std::string conv_transpose_rule(OpContext& c) {
  // (x, filter, strides, paddings, output_padding, output_size, padding_algorithm, groups, dilations, data_format)
  ARG_TENSOR(x, 0);
  ARG_TENSOR(filter, 1);
  ARG_INTS(strides, 2);
  ARG_INTS(paddings, 3);
  ARG_INTS(output_padding, 4);
  ARG_INTS(output_size, 5);
  const std::string algorithm = c.string_value(c.param(6)).value_or("EXPLICIT");
  const int64_t groups = c.static_int(c.param(7)).value_or(1);
  ARG_INTS(dilations, 8);
  const std::string data_format = c.string_value(c.param(9)).value_or("NCHW");
  Layout l;
  if (std::string e = read_layout(data_format, *x, "x", &l); !e.empty()) return e;
  if (l.format == Format::kBlocked8) return "conv2d_transpose does not take data_format \"NCHW8c\"";
  if (filter->dims.size() != 4) return fmt::format("filter must be 4-D [in_c, out_c / groups, kh, kw], got {}", to_string(filter->dims));
  if (groups <= 0) return fmt::format("groups must be positive, got {}", groups);
  if (x->dtype != filter->dtype) {
    return fmt::format("dtype conflict: x is {}, filter is {}", ir::dtype_name(x->dtype), ir::dtype_name(filter->dtype));
  }
  auto kh = static_dim(filter->dims[2]), kw = static_dim(filter->dims[3]);
  auto in_h = static_dim(l.h), in_w = static_dim(l.w);
  if (!kh || !kw) return "conv2d_transpose needs the filter's spatial dims static";
  Geometry g;
  if (std::string e = geometry(strides, paddings, dilations, algorithm, &g); !e.empty()) return e;
  if (!in_h || !in_w) {
    // Dynamic spatial dims (a detector's upsampling head): the transposed-conv size formula over them. SAME pads
    // and output_size depend on the actual sizes, so they stay static-only.
    if (g.same || !output_size.empty()) {
      return "conv2d_transpose over dynamic spatial dims needs EXPLICIT or VALID padding and no output_size";
    }
    if (!output_padding.empty() && output_padding.size() != 2) {
      return fmt::format("output_padding must have 2 values, got {}", output_padding.size());
    }
    const int64_t extra_h = output_padding.empty() ? 0 : output_padding[0];
    const int64_t extra_w = output_padding.empty() ? 0 : output_padding[1];
    const SymExpr out_h = (l.h - 1) * g.stride_h + (g.dilation_h * (*kh - 1) + 1 - g.pad_top - g.pad_bottom + extra_h);
    const SymExpr out_w = (l.w - 1) * g.stride_w + (g.dilation_w * (*kw - 1) + 1 - g.pad_left - g.pad_right + extra_w);
    c.set_result(0, x->dtype, layout_dims(l.format, l.n, filter->dims[1] * groups, out_h, out_w));
    return "";
  }
  if (g.same) {
    same_pads(*in_h, g.stride_h, *kh, &g.pad_top, &g.pad_bottom);
    same_pads(*in_w, g.stride_w, *kw, &g.pad_left, &g.pad_right);
  }
  int64_t out_h = (*in_h - 1) * g.stride_h - g.pad_top - g.pad_bottom + g.dilation_h * (*kh - 1) + 1;
  int64_t out_w = (*in_w - 1) * g.stride_w - g.pad_left - g.pad_right + g.dilation_w * (*kw - 1) + 1;
  if (out_h <= 0 || out_w <= 0) return fmt::format("x {} with filter {} gives an empty output", to_string(x->dims), to_string(filter->dims));
  if (!output_size.empty()) {
    if (output_size.size() != 2) return fmt::format("output_size must have 2 values, got {}", output_size.size());
    const int64_t infer[2] = {out_h, out_w}, stride[2] = {g.stride_h, g.stride_w};
    for (int i = 0; i < 2; ++i) {
      if (output_size[i] < infer[i] || output_size[i] >= infer[i] + stride[i]) {
        return fmt::format("output_size {} must be in [{}, {})", output_size[i], infer[i], infer[i] + stride[i]);
      }
    }
    out_h = output_size[0];
    out_w = output_size[1];
  } else if (!output_padding.empty()) {
    if (output_padding.size() != 2) return fmt::format("output_padding must have 2 values, got {}", output_padding.size());
    out_h += output_padding[0];
    out_w += output_padding[1];
  }
  c.set_result(0, x->dtype, layout_dims(l.format, l.n, filter->dims[1] * groups, out_h, out_w));
  return "";
}

std::string batch_norm_rule(OpContext& c) {
  // (x, mean, variance, scale, bias, is_test, momentum, epsilon, data_format, use_global_stats, trainable_statistics)
  ARG_TENSOR(x, 0);
  ARG_TENSOR(mean, 1);
  if (x->dims.size() < 2 || x->dims.size() > 5) return fmt::format("x must have rank 2 to 5, got {}", to_string(x->dims));
  const std::string data_format = c.string_value(c.param(8)).value_or("NCHW");
  Format format = Format::kChannelFirst;
  if (std::string e = read_format(data_format, &format); !e.empty()) return e;
  if (format == Format::kBlocked8) {
    if (std::string e = check_blocked(*x, "x"); !e.empty()) return e;
  }
  const SymExpr channels = format == Format::kBlocked8     ? x->dims[1] * kBlock
                           : format == Format::kChannelLast ? x->dims[x->dims.size() - 1]
                                                            : x->dims[1];
  for (size_t i : {size_t{1}, size_t{2}, size_t{3}, size_t{4}}) {
    const ValueInfo* t = c.tensor(c.param(i));
    if (!t || t->is_vector) continue;
    if (t->dims.size() != 1 || (t->dims[0].is_constant() && channels.is_constant() && t->dims[0] != channels)) {
      return fmt::format("{} {} must be [{}], the channels of x {}", c.param(i), to_string(t->dims),
                         channels.to_string(), to_string(x->dims));
    }
  }
  c.set_result(0, x->dtype, x->dims);
  for (size_t r = 1; r < std::min<size_t>(5, c.result_count()); ++r) c.set_result(r, mean->dtype, {channels});
  if (c.result_count() > 5) c.set_result(5, DataType::kUInt8, {SymExpr(0)});
  return "";
}

std::string pool2d_rule(OpContext& c) {
  // (x, kernel_size, strides, paddings, ceil_mode, exclusive, data_format, pooling_type, global_pooling, adaptive,
  //  padding_algorithm)
  ARG_TENSOR(x, 0);
  ARG_INTS(kernel_size, 1);
  ARG_INTS(strides_in, 2);
  ARG_INTS(paddings, 3);
  const bool ceil_mode = c.bool_value(c.param(4)).value_or(false);
  const std::string data_format = c.string_value(c.param(6)).value_or("NCHW");
  const std::string pooling_type = c.string_value(c.param(7)).value_or("max");
  const bool global = c.bool_value(c.param(8)).value_or(false);
  const bool adaptive = c.bool_value(c.param(9)).value_or(false);
  const std::string algorithm = c.string_value(c.param(10)).value_or("EXPLICIT");
  Layout l;
  if (std::string e = read_layout(data_format, *x, "x", &l); !e.empty()) return e;
  if (pooling_type != "max" && pooling_type != "avg") {
    return fmt::format("pooling_type must be max or avg, got \"{}\"", pooling_type);
  }
  if (kernel_size.size() != 1 && kernel_size.size() != 2) {
    return fmt::format("kernel_size must have 1 or 2 values, got {}", kernel_size.size());
  }
  if (global) {
    c.set_result(0, x->dtype, layout_dims(l.format, l.n, l.c, 1, 1));
    return "";
  }
  const int64_t kh = kernel_size[0], kw = kernel_size.back();
  if (kh <= 0 || kw <= 0) return "kernel_size must be positive";
  if (adaptive) {
    c.set_result(0, x->dtype, layout_dims(l.format, l.n, l.c, kh, kw));
    return "";
  }
  const std::vector<int64_t> strides =
      strides_in.size() == 1 ? std::vector<int64_t>{strides_in[0], strides_in[0]} : strides_in;
  Geometry g;
  if (std::string e = geometry(strides, paddings, {1, 1}, algorithm, &g); !e.empty()) return e;
  auto out = [&](const SymExpr& in, int64_t k, int64_t p0, int64_t p1, int64_t stride) {
    if (g.same) {
      auto ci = in.constant();
      if (ci) same_pads(*ci, stride, k, &p0, &p1);
      else return SymExpr::ceil_div(in, stride);
    }
    const SymExpr num = in + (p0 + p1 - k + (ceil_mode ? stride - 1 : 0));
    return SymExpr::floor_div(num, stride) + 1;
  };
  const SymExpr out_h = out(l.h, kh, g.pad_top, g.pad_bottom, g.stride_h);
  const SymExpr out_w = out(l.w, kw, g.pad_left, g.pad_right, g.stride_w);
  for (const SymExpr* o : {&out_h, &out_w}) {
    if (auto v = o->constant(); v && *v <= 0) {
      return fmt::format("x {} with kernel {} x {} gives an empty output", to_string(x->dims), kh, kw);
    }
  }
  c.set_result(0, x->dtype, layout_dims(l.format, l.n, l.c, out_h, out_w));
  return "";
}

namespace {

/// linear_interp: a 3-D x, [N, C, W] ("NCW", which Paddle spells "NCHW") or [N, W, C] ("NWC" / "NHWC"); the
/// output width from size_tensor (one tensor), out_size (one value), scale (its first value) or out_w.
std::string interpolate_1d_rule(OpContext& c, const ValueInfo& x) {
  if (x.dims.size() != 3) return fmt::format("x must be 3-D ([N, C, W] or [N, W, C]), got {}", to_string(x.dims));
  const std::string data_format = c.string_value(c.param(4)).value_or("NCHW");
  const bool last = data_format == "NWC" || data_format == "NHWC";
  if (!last && data_format != "NCW" && data_format != "NCHW") {
    return fmt::format("data_format must be NCW or NWC, got \"{}\"", data_format);
  }
  const SymExpr in_w = last ? x.dims[1] : x.dims[2];
  SymExpr out_w = c.static_int(c.param(7)).value_or(0);
  const std::string runtime = "the output size comes from a tensor whose value kforge cannot know when it generates code";
  const std::vector<const ValueInfo*> size_tensor = c.tensors(c.param(2));
  const ValueInfo* out_size = c.tensor(c.param(1));
  const ValueInfo* scale_tensor = c.tensor(c.param(3));
  if (!size_tensor.empty()) {
    if (size_tensor.size() != 1) return fmt::format("size_tensor must hold 1 tensor, got {}", size_tensor.size());
    if (!size_tensor[0]->data || size_tensor[0]->data->numel() != 1) return runtime;
    out_w = size_tensor[0]->data->int_at(0);
  } else {
    std::vector<double> scales = c.floats(c.param(8));
    if (scale_tensor) {
      if (!scale_tensor->data || !scale_tensor->data->is_static()) return runtime;
      scales.clear();
      for (int64_t i = 0; i < scale_tensor->data->numel(); ++i) scales.push_back(scale_tensor->data->float_at(i));
      if (scales.empty()) return "scale_tensor is empty";
    }
    if (!scales.empty()) {
      const float sw = static_cast<float>(scales[0]);
      if (!(sw > 0.f)) return fmt::format("scale must be positive, got {}", sw);
      auto scaled = scaled_dim(in_w, sw);
      if (!scaled) {
        return fmt::format("scale {} of a dynamic width is not supported: kforge computes Paddle's int(in * scale) "
                           "over a dynamic dim only for scales m / 2^k with m < 256 (2, 0.5, 1.5, ...)",
                           sw);
      }
      out_w = *scaled;
    }
    if (out_size) {
      if (!out_size->data || out_size->data->numel() != 1) return runtime;
      out_w = out_size->data->int_at(0);
    }
  }
  if (auto v = out_w.constant(); v && *v <= 0) return fmt::format("output width {} must be positive", *v);
  c.set_result(0, x.dtype, last ? SymShape{x.dims[0], out_w, x.dims[2]} : SymShape{x.dims[0], x.dims[1], out_w});
  return "";
}

}  // namespace

std::string interpolate_rule(OpContext& c) {
  // (x, out_size, size_tensor, scale_tensor, data_format, out_d, out_h, out_w, scale, interp_method,
  //  align_corners, align_mode)
  ARG_TENSOR(x, 0);
  if (c.base_name() == "linear_interp") return interpolate_1d_rule(c, *x);
  const std::string data_format = c.string_value(c.param(4)).value_or("NCHW");
  Layout l;
  if (std::string e = read_layout(data_format, *x, "x", &l); !e.empty()) return e;
  if (l.format == Format::kBlocked8) return "interpolation does not take data_format \"NCHW8c\"";
  SymExpr out_h = c.static_int(c.param(6)).value_or(0), out_w = c.static_int(c.param(7)).value_or(0);
  const std::vector<const ValueInfo*> size_tensor = c.tensors(c.param(2));
  const ValueInfo* out_size = c.tensor(c.param(1));
  const ValueInfo* scale_tensor = c.tensor(c.param(3));
  if (!size_tensor.empty()) {
    if (size_tensor.size() != 2) return fmt::format("size_tensor must hold 2 tensors, got {}", size_tensor.size());
    for (const ValueInfo* t : size_tensor) {
      if (!t->data || t->data->numel() != 1) return c.runtime_value(c.param(2));
    }
    out_h = size_tensor[0]->data->int_at(0);
    out_w = size_tensor[1]->data->int_at(0);
  } else {
    std::vector<double> scales = c.floats(c.param(8));
    if (scale_tensor) {
      if (!scale_tensor->data || !scale_tensor->data->is_static()) return c.runtime_value(c.param(3));
      scales.clear();
      for (int64_t i = 0; i < scale_tensor->data->numel(); ++i) scales.push_back(scale_tensor->data->float_at(i));
      if (scales.empty()) return "scale_tensor is empty";
    }
    if (!scales.empty()) {
      const float sh = static_cast<float>(scales[0]), sw = static_cast<float>(scales.size() > 1 ? scales[1] : scales[0]);
      if (!(sh > 0.f && sw > 0.f)) return fmt::format("scale must be positive, got {} and {}", sh, sw);
      auto scaled_h = scaled_dim(l.h, sh), scaled_w = scaled_dim(l.w, sw);
      if (!scaled_h || !scaled_w) {
        return fmt::format("scale {} x {} of a dynamic spatial dim is not supported: kforge computes Paddle's "
                           "int(in * scale) over a dynamic dim only for scales m / 2^k with m < 256 (2, 0.5, 1.5, ...)",
                           sh, sw);
      }
      out_h = *scaled_h;
      out_w = *scaled_w;
    }
    if (out_size) {
      if (!out_size->data) return c.runtime_value(c.param(1));
      if (out_size->data->numel() != 2) return fmt::format("out_size must hold 2 values, got {}", out_size->data->numel());
      out_h = out_size->data->int_at(0);
      out_w = out_size->data->int_at(1);
    }
  }
  for (const SymExpr* o : {&out_h, &out_w}) {
    if (auto v = o->constant(); v && *v <= 0) {
      return fmt::format("output size {} x {} must be positive", out_h.to_string(), out_w.to_string());
    }
  }
  c.set_result(0, x->dtype, layout_dims(l.format, l.n, l.c, out_h, out_w));
  return "";
}

}  // namespace kforge::passes::detail
