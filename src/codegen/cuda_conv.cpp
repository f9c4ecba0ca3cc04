#include "codegen/cuda_conv.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <iterator>
#include <utility>

#include "codegen/cpp_text.h"
#include "codegen/cuda_conv_attrs.h"

namespace kforge::codegen {

namespace {

using passes::ArgKind;
using passes::KernelArg;
using passes::KernelCall;
using passes::kNone;
using passes::LoweredProgram;
using passes::SymExpr;
using passes::SymShape;
using conv_detail::activation_dtype;
using conv_detail::Attrs;
using conv_detail::element_bytes;
using conv_detail::element_enumerator;
using conv_detail::element_type_of;
using conv_detail::int_field;
using conv_detail::nchw;
using conv_detail::Pads;
using conv_detail::paddings;
using conv_detail::single_output;

}  // namespace

bool CudaConvSite::has_epilogue() const {
  return bias != kNone || mean != kNone || residual != kNone || !activation.empty();
}

bool CudaConvSite::direct_depthwise() const { return nhwc && !transposed && groups == c && k == c; }

SymExpr CudaConvSite::padded_input_bytes() const {
  const SymExpr bytes = batch * c * (h + 2 * pad_h + extra_bottom) * (w + 2 * pad_w + extra_right) * element_bytes(dtype);
  return SymExpr::floor_div(bytes + 255, 256) * 256;
}

bool is_cuda_conv_op(std::string_view op) {
  return op == "conv2d" || op == "depthwise_conv2d" || op == "conv2d_fused" || op == "conv2d_transpose";
}

bool is_cuda_pool_op(std::string_view op) { return op == "pool2d"; }

bool is_cuda_batch_norm_op(std::string_view op) { return op == "batch_norm"; }

std::optional<std::string> cuda_conv_activation(std::string_view name) {
  static const std::array<std::pair<std::string_view, std::string_view>, 12> kNames = {{
      {"", "kNone"}, {"relu", "kRelu"}, {"relu6", "kRelu6"}, {"leaky_relu", "kLeakyRelu"}, {"clip", "kClip"},
      {"hardswish", "kHardswish"}, {"sigmoid", "kSigmoid"}, {"tanh", "kTanh"}, {"swish", "kSwish"},
      {"silu", "kSwish"}, {"gelu", "kGelu"}, {"gelu_tanh", "kGeluTanh"},
  }};
  for (const auto& [op, enumerator] : kNames) {
    if (op == name) return "kforge::cuda_conv::Activation::" + std::string(enumerator);
  }
  return std::nullopt;
}

namespace {

// What a convolution and a transposed convolution read alike: float32 operands, the window's attributes, and
// 4-D input, filter and output dims whose channels and spatial dims are known at generation time. Fills `s`'s
// operands, groups, layout and dims; the caller checks how the filter's dims relate to the channels (they sit in
// other places of the two filters) and then calls read_window.
struct ConvAttrs {
  std::vector<int64_t> strides, dilations, paddings;
  std::string algorithm;
  std::array<int64_t, 4> filter{};  // the filter's dims
  SymExpr out_n;                    // the output's batch and channels, to check against the input's
  int64_t out_c = 0;
};
bool read_conv_operands(const LoweredProgram& p, const KernelCall& call, const char* input_name, Attrs& a,
                        CudaConvSite& s, ConvAttrs* c) {
  s.input = call.tensor_arg(input_name);
  s.filter = call.tensor_arg("filter");
  s.out = single_output(call);
  if (s.input == kNone || s.filter == kNone || s.out == kNone) {
    a.fail("it needs an input, a filter and one output");
    return false;
  }
  s.dtype = p.values[s.input].dtype;
  for (uint32_t v : {s.input, s.filter, s.out}) {
    if (!activation_dtype(p.values[v].dtype)) {
      a.fail(fmt::format("{} is {}; the cuDNN convolution takes float32, float16 or bfloat16", p.values[v].label(),
                         ir::dtype_name(p.values[v].dtype)));
      return false;
    }
    if (p.values[v].dtype != s.dtype) {
      a.fail(fmt::format("{} is {} and the input {}; the cuDNN convolution takes an input, filter and output of one "
                         "dtype",
                         p.values[v].label(), ir::dtype_name(p.values[v].dtype), ir::dtype_name(s.dtype)));
      return false;
    }
  }
  const std::string format = a.text("data_format");
  c->strides = a.ints("strides");
  c->dilations = a.ints("dilations");
  c->paddings = a.ints("paddings");
  c->algorithm = a.text("padding_algorithm");
  s.groups = a.integer("groups");
  if (!a.ok()) return false;
  s.nhwc = format == "NHWC";
  const SymShape& fdims = p.values[s.filter].dims;
  if (!nchw(p.values[s.input].dims, s.nhwc, &s.batch, &s.c, &s.h, &s.w) ||
      !nchw(p.values[s.out].dims, s.nhwc, &c->out_n, &c->out_c, &s.out_h, &s.out_w) || fdims.size() != 4 ||
      !fdims[0].constant() || !fdims[1].constant() || !fdims[2].constant() || !fdims[3].constant()) {
    a.fail("its input, filter and output must be 4-D with channels and filter dims known at generation time");
    return false;
  }
  for (size_t i = 0; i < 4; ++i) c->filter[i] = *fdims[i].constant();
  s.r = c->filter[2];
  s.s = c->filter[3];
  return true;
}

// Strides, dilations and the padding into `s`; an asymmetric padding is refused with `asymmetric` ending the message
// unless `asymmetric` is empty (then extra_bottom and extra_right hold it).
bool read_window(Attrs& a, const ConvAttrs& c, CudaConvSite& s, std::string_view asymmetric) {
  s.stride_h = c.strides[0];
  s.stride_w = c.strides[1];
  s.dilation_h = c.dilations[0];
  s.dilation_w = c.dilations[1];
  Pads pads;
  if (!paddings(a, c.paddings, c.algorithm, s.h, s.w, s.r, s.s, s.stride_h, s.stride_w, &pads)) return false;
  if (c.algorithm == "SAME") s.dilation_h = s.dilation_w = 1;  // as Paddle's kernels
  if ((pads.top != pads.bottom || pads.left != pads.right) && !asymmetric.empty()) {
    a.fail(fmt::format("its padding is asymmetric (top {}, bottom {}, left {}, right {}); {}", pads.top, pads.bottom,
                       pads.left, pads.right, asymmetric));
    return false;
  }
  s.pad_h = pads.top;
  s.pad_w = pads.left;
  s.extra_bottom = pads.bottom - pads.top;
  s.extra_right = pads.right - pads.left;
  return true;
}

// conv2d_transpose (x [n, c, h, w], filter [c, k / groups, r, s], out [n, k, out_h, out_w]): cuDNN's backward-data
// convolution of the forward convolution that maps out's shape to x's. The output may be larger than the base size
// (output_padding or output_size) by less than the stride, which the forward convolution's floor division absorbs.
std::optional<CudaConvSite> cuda_conv_transpose_site(const LoweredProgram& p, const KernelCall& call, std::string* why) {
  Attrs a(call, why);
  CudaConvSite s;
  s.transposed = true;
  ConvAttrs c;
  if (!read_conv_operands(p, call, "x", a, s, &c)) return std::nullopt;
  s.k = c.filter[1] * s.groups;
  if (c.strides.size() != 2 || c.dilations.size() != 2 || s.groups <= 0 || s.c != c.filter[0] ||
      s.c % s.groups != 0 || c.out_c != s.k || c.out_n != s.batch) {
    a.fail("its strides, dilations, groups and dims do not describe a 2-D transposed convolution");
    return std::nullopt;
  }
  if (!read_window(a, c, s, "cuDNN pads both sides alike")) return std::nullopt;
  const SymExpr base_h = (s.h - 1) * s.stride_h - 2 * s.pad_h + s.dilation_h * (s.r - 1) + 1;
  const SymExpr base_w = (s.w - 1) * s.stride_w - 2 * s.pad_w + s.dilation_w * (s.s - 1) + 1;
  const std::optional<int64_t> extra_h = (s.out_h - base_h).constant(), extra_w = (s.out_w - base_w).constant();
  if (!extra_h || !extra_w || *extra_h < 0 || *extra_h >= s.stride_h || *extra_w < 0 || *extra_w >= s.stride_w) {
    a.fail(fmt::format("its output is {} x {} but the geometry gives {} x {} (plus less than the stride)",
                       s.out_h.to_string(), s.out_w.to_string(), base_h.to_string(), base_w.to_string()));
    return std::nullopt;
  }
  return s;
}

}  // namespace

std::optional<CudaConvSite> cuda_conv_site(const LoweredProgram& p, const KernelCall& call, std::string* why) {
  if (call.op == "conv2d_transpose") return cuda_conv_transpose_site(p, call, why);
  Attrs a(call, why);
  CudaConvSite s;
  ConvAttrs c;
  if (!read_conv_operands(p, call, "input", a, s, &c)) return std::nullopt;
  s.k = c.filter[0];
  if (c.strides.size() != 2 || c.dilations.size() != 2 || s.groups <= 0 || s.c != c.filter[1] * s.groups ||
      s.k % s.groups != 0 || c.out_c != s.k || c.out_n != s.batch) {
    a.fail("its strides, dilations, groups and dims do not describe a 2-D convolution");
    return std::nullopt;
  }
  if (!read_window(a, c, s, "")) return std::nullopt;
  if (s.pad_h + s.extra_bottom < 0 || s.pad_w + s.extra_right < 0 || s.pad_h < 0 || s.pad_w < 0) {
    a.fail("its padding is negative");
    return std::nullopt;
  }
  const SymExpr out_h =
      SymExpr::floor_div(s.h + 2 * s.pad_h + s.extra_bottom - (s.dilation_h * (s.r - 1) + 1), s.stride_h) + 1;
  const SymExpr out_w =
      SymExpr::floor_div(s.w + 2 * s.pad_w + s.extra_right - (s.dilation_w * (s.s - 1) + 1), s.stride_w) + 1;
  if (out_h != s.out_h || out_w != s.out_w) {
    a.fail(fmt::format("its output is {} x {} but the geometry gives {} x {}", s.out_h.to_string(),
                       s.out_w.to_string(), out_h.to_string(), out_w.to_string()));
    return std::nullopt;
  }
  if (call.op == "conv2d_fused") {
    s.bias = call.tensor_arg("bias");
    s.mean = call.tensor_arg("mean");
    s.variance = call.tensor_arg("variance");
    s.scale = call.tensor_arg("scale");
    s.shift = call.tensor_arg("shift");
    s.residual = call.tensor_arg("residual");
    s.activation = a.text("activation");
    s.alpha = a.floating("activation_alpha");
    s.beta = a.floating("activation_beta");
    s.epsilon = a.floating("epsilon");
    s.activation_after_residual = a.boolean("activation_after_residual");
    if (!a.ok()) return std::nullopt;
    if ((s.mean == kNone) != (s.variance == kNone)) {
      a.fail("its batch norm needs both mean and variance");
      return std::nullopt;
    }
    if (!cuda_conv_activation(s.activation)) {
      a.fail("its activation \"" + s.activation + "\" has no CUDA epilogue");
      return std::nullopt;
    }
    // The bias and the residual are the activations' dtype, the batch-norm vectors float32.
    for (uint32_t v : {s.bias, s.mean, s.variance, s.scale, s.shift, s.residual}) {
      const ir::DataType want = v == s.bias || v == s.residual ? s.dtype : ir::DataType::kFloat32;
      if (v != kNone && p.values[v].dtype != want) {
        a.fail(fmt::format("its epilogue operand {} is {}, not {}", p.values[v].label(),
                           ir::dtype_name(p.values[v].dtype), ir::dtype_name(want)));
        return std::nullopt;
      }
    }
    // A 16-bit convolution's epilogue reads its bias as float32: the fold converts it.
    s.foldable = s.mean != kNone || (s.dtype != ir::DataType::kFloat32 && s.bias != kNone);
  }
  // Paddle's conv bias is reshape(b, [1, C, 1, 1]), a view of the parameter copied into a buffer of its own: a 16-bit
  // convolution, which must fold its bias, reads the parameter it views (the same elements in the same order).
  if (s.dtype != ir::DataType::kFloat32 && s.bias != kNone) {
    while (p.values[s.bias].role == passes::ValueRole::kComputed) {
      const std::optional<std::pair<uint32_t, uint32_t>> view = p.view_values(p.values[s.bias].defined_by);
      if (!view || view->second != s.bias) break;
      s.bias = view->first;
    }
  }
  // An NHWC forward convolution reads a KRSC filter: reordered with the fold, or as it is where each output channel
  // has one input channel (depthwise: OIHW and KRSC are the same bytes).
  const bool reorder = s.nhwc && !s.transposed && s.c / s.groups > 1;
  s.foldable = s.foldable || reorder;
  // The first operand of the fold computed at run time (then nothing is folded), and its role.
  const std::pair<uint32_t, const char*> fold_operands[] = {{s.filter, "filter"}, {s.bias, "bias"},
                                                            {s.mean, "mean"},     {s.variance, "variance"},
                                                            {s.scale, "scale"},   {s.shift, "shift"}};
  const auto computed = std::find_if(std::begin(fold_operands), std::end(fold_operands), [&](const auto& o) {
    return o.first != kNone && p.values[o.first].role == passes::ValueRole::kComputed;
  });
  if (computed != std::end(fold_operands)) s.foldable = false;
  if (computed != std::end(fold_operands) && s.dtype != ir::DataType::kFloat32 && s.bias != kNone) {
    a.fail(fmt::format("its {} {} is computed; a {} convolution folds its filter and bias once, when the parameters "
                       "are bound",
                       computed->second, p.values[computed->first].label(), ir::dtype_name(s.dtype)));
    return std::nullopt;
  }
  s.krsc_filter = s.nhwc && !s.transposed && (s.foldable || !reorder);
  s.tap_major_filter = s.foldable && s.direct_depthwise();
  return s;
}

std::vector<uint32_t> cudnn_scratch_positions(const LoweredProgram& p, const passes::FusionPlan& plan) {
  auto runs_cudnn = [&](const KernelCall& call) {
    std::string why;
    const std::optional<CudaConvSite> site = cuda_conv_site(p, call, &why);
    return site && !site->direct_depthwise();
  };
  std::vector<uint32_t> positions;
  for (const passes::FusedGroup& g : plan.groups) {
    if (g.kind == passes::GroupKind::kConv && runs_cudnn(g.conv_call)) positions.push_back(g.position);
  }
  for (uint32_t c = 0; c < p.calls.size(); ++c) {
    const bool grouped = c < plan.call_group.size() && plan.call_group[c] != kNone;
    if (!grouped && is_cuda_conv_op(p.calls[c].op) && runs_cudnn(p.calls[c])) positions.push_back(c);
  }
  std::sort(positions.begin(), positions.end());
  return positions;
}

std::optional<std::string> cuda_conv_padded_input_problem(const CudaConvSite& s, const passes::Buffer* scratch) {
  const std::string head =
      fmt::format("pads its input for its asymmetric padding (top {}, bottom {}, left {}, right {}) into its cuDNN "
                  "workspace",
                  s.pad_h, s.pad_h + s.extra_bottom, s.pad_w, s.pad_w + s.extra_right);
  if (scratch == nullptr) return head + ", which --cudnn-workspace-mib 0 leaves out";
  const std::optional<int64_t> need = s.padded_input_bytes().constant(), have = scratch->size_bytes.constant();
  if (need && have && *need > *have) {
    return fmt::format("{}, and the padded input takes {} bytes of its {}: raise --cudnn-workspace-mib", head, *need,
                       *have);
  }
  return std::nullopt;
}

int64_t cuda_conv_fold_bytes(const CudaConvSite& s) {
  auto aligned = [](int64_t bytes) { return (bytes + 63) / 64 * 64; };
  return aligned(s.k * (s.c / s.groups) * s.r * s.s * element_bytes(s.dtype)) + aligned(s.k * 4);
}

tmpl::Value cuda_conv_step(const CudaConvSite& s, int64_t number, int64_t launch, const std::string& description,
                           const CudaBufferExpr& buffer, const SizeExpr& size, int64_t fold_offset) {
  tmpl::Value v = tmpl::Value::map();
  v.set("number", number);
  v.set("launch", launch);
  v.set("description", description);
  // ConvSite's method for the step: a direct depthwise convolution has its own, so that a program without one
  // compiles none of that kernel's variants.
  v.set("run", s.direct_depthwise() ? "run_direct_depthwise" : "run");
  // ConvGeometry's last fields (transposed, krsc_filter, tap_major_filter, input_max, data) are false, 0 or
  // float32 by default: printed up to the last that is not.
  const std::string flags = s.dtype != ir::DataType::kFloat32
                                ? fmt::format(", {}, {}, {}, {}, {}", s.transposed, s.krsc_filter, s.tap_major_filter,
                                              cpp_float(static_cast<float>(s.input_max)), element_enumerator(s.dtype))
                            : s.input_max > 0 ? fmt::format(", {}, {}, {}, {}", s.transposed, s.krsc_filter,
                                                          s.tap_major_filter, cpp_float(static_cast<float>(s.input_max)))
                            : s.tap_major_filter ? ", false, true, true"
                            : s.krsc_filter      ? ", false, true"
                            : s.transposed       ? ", true"
                                                 : "";
  // An input padded into the scratch (kforge_conv_pad.cuh) is convolved with no padding; `padding` holds the four.
  const bool padded = s.pads_input();
  v.set("geometry", fmt::format("{{{}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}{}}}", s.c, s.k, s.r, s.s,
                                padded ? 0 : s.pad_h, padded ? 0 : s.pad_w, s.stride_h, s.stride_w, s.dilation_h,
                                s.dilation_w, s.groups, s.nhwc ? "true" : "false", flags));
  if (padded) {
    v.set("padding", fmt::format("{{{}, {}, {}, {}}}", s.pad_h, s.pad_h + s.extra_bottom, s.pad_w,
                                 s.pad_w + s.extra_right));
  } else {
    v.set("padding", false);
  }
  v.set("shape", fmt::format("{{{}, {}, {}, {}, {}}}", int_field(s.batch, size), int_field(s.h, size), int_field(s.w, size),
                             int_field(s.out_h, size), int_field(s.out_w, size)));
  const std::string t = element_type_of(s.dtype);
  v.set("x", buffer(s.input, t, true));
  v.set("w", buffer(s.filter, t, true));
  v.set("y", buffer(s.out, t, false));
  // The bias and the residual are the activations' type, the batch-norm vectors float32.
  auto operand = [&](uint32_t value) {
    if (value == kNone) return std::string("nullptr");
    return buffer(value, value == s.bias || value == s.residual ? t : "float", true);
  };
  tmpl::Value e = tmpl::Value::map();
  if (fold_offset >= 0 && s.foldable) {
    const std::string weights = fmt::format("reinterpret_cast<{}*>(folded_.data() + {})", t, fold_offset);
    const std::string bias = fmt::format("reinterpret_cast<float*>(folded_.data() + {})",
                                         fold_offset + cuda_conv_fold_bytes(s) - (s.k * 4 + 63) / 64 * 64);
    tmpl::Value f = tmpl::Value::map();
    f.set("filter", buffer(s.filter, t, true));
    f.set("bias", operand(s.bias));
    f.set("mean", operand(s.mean));
    f.set("variance", operand(s.variance));
    f.set("scale", operand(s.scale));
    f.set("shift", operand(s.shift));
    f.set("epsilon", cpp_float(static_cast<float>(s.epsilon)));
    f.set("weights", weights);
    f.set("folded_bias", bias);
    v.set("fold", std::move(f));
    v.set("w", weights);
    // The folded bias replaces bias and batch norm; it is all zeros where there was neither.
    e.set("bias", s.bias != kNone || s.mean != kNone ? bias : "nullptr");
    for (const char* key : {"mean", "variance", "scale", "shift"}) e.set(key, "nullptr");
  } else {
    v.set("fold", false);
    e.set("bias", operand(s.bias));
    e.set("mean", operand(s.mean));
    e.set("variance", operand(s.variance));
    e.set("scale", operand(s.scale));
    e.set("shift", operand(s.shift));
  }
  if (!s.has_epilogue()) {
    v.set("epilogue", false);
    return v;
  }
  e.set("residual", operand(s.residual));
  e.set("epsilon", cpp_float(static_cast<float>(s.epsilon)));
  e.set("activation", cuda_conv_activation(s.activation).value_or("kforge::cuda_conv::Activation::kNone"));
  e.set("alpha", cpp_float(static_cast<float>(s.alpha)));
  e.set("beta", cpp_float(static_cast<float>(s.beta)));
  e.set("after_residual", std::string(s.activation_after_residual ? "true" : "false"));
  v.set("epilogue", std::move(e));
  return v;
}

tmpl::Value cuda_copy_step(const LoweredProgram& p, uint32_t from, uint32_t to, int64_t launch,
                           const std::string& description, const CudaBufferExpr& buffer, const SizeExpr& size) {
  tmpl::Value v = tmpl::Value::map();
  v.set("launch", launch);
  v.set("description", description);
  v.set("from", buffer(from, "void", true));
  v.set("to", buffer(to, "void", false));
  v.set("bytes", size(p.values[to].bytes()));
  return v;
}

}  // namespace kforge::codegen
