#include "codegen/cuda_conv.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <iterator>
#include <utility>

#include "codegen/cpp_text.h"

namespace kforge::codegen {

namespace {

using passes::ArgKind;
using passes::KernelArg;
using passes::KernelCall;
using passes::kNone;
using passes::LoweredProgram;
using passes::SymExpr;
using passes::SymShape;

// Reads a call's constant attributes; the first failure leaves a reason in `why` and makes ok() false.
class Attrs {
 public:
  Attrs(const KernelCall& call, std::string* why) : call_(call), why_(why) {}
  bool ok() const { return ok_; }

  const passes::AttrConstant* get(std::string_view name) {
    const KernelArg* a = call_.arg(name);
    if (a == nullptr || a->kind != ArgKind::kConstant) {
      fail(fmt::format("its {} is not a constant known at generation time", name));
      return nullptr;
    }
    return &a->constant;
  }
  std::vector<int64_t> ints(std::string_view name) {
    const passes::AttrConstant* c = get(name);
    return c != nullptr ? c->ints : std::vector<int64_t>{};
  }
  int64_t integer(std::string_view name) {
    const passes::AttrConstant* c = get(name);
    return c != nullptr ? c->int_value : 0;
  }
  double floating(std::string_view name) {
    const passes::AttrConstant* c = get(name);
    return c != nullptr ? c->float_value : 0;
  }
  bool boolean(std::string_view name) {
    const passes::AttrConstant* c = get(name);
    return c != nullptr && c->bool_value;
  }
  std::string text(std::string_view name) {
    const passes::AttrConstant* c = get(name);
    return c != nullptr ? c->string_value : std::string();
  }
  void fail(std::string reason) {
    if (ok_ && why_ != nullptr) *why_ = std::move(reason);
    ok_ = false;
  }

 private:
  const KernelCall& call_;
  std::string* why_;
  bool ok_ = true;
};

uint32_t single_output(const KernelCall& call) {
  return call.outputs.size() == 1 && call.outputs[0].values.size() == 1 ? call.outputs[0].values[0] : kNone;
}

// The logical NCHW dims of a 4-D value: batch, H and W (any SymExpr) and C, which must be static.
bool nchw(const SymShape& dims, bool nhwc, SymExpr* n, int64_t* c, SymExpr* h, SymExpr* w) {
  if (dims.size() != 4) return false;
  const std::optional<int64_t> dc = dims[nhwc ? 3 : 1].constant();
  if (!dc) return false;
  *n = dims[0];
  *c = *dc;
  *h = dims[nhwc ? 1 : 2];
  *w = dims[nhwc ? 2 : 3];
  return true;
}

// A dim as the generated code passes it to an int field: the literal, or the size where the step runs.
std::string int_field(const SymExpr& d, const SizeExpr& size) {
  if (std::optional<int64_t> c = d.constant()) return std::to_string(*c);
  return "static_cast<int>(" + size(d) + ")";
}

// Paddle's padding of one spatial dim (kernels/kernel_util.h, conv_geometry): explicit, or SAME's
// (out = ceil(in / stride), the extra row at the end), or none for VALID.
struct Pads {
  int64_t top = 0, bottom = 0, left = 0, right = 0;
};

bool paddings(Attrs& a, const std::vector<int64_t>& given, const std::string& algorithm, const SymExpr& in_h,
              const SymExpr& in_w, int64_t k_h, int64_t k_w, int64_t stride_h, int64_t stride_w, Pads* p) {
  if (given.size() == 2) {
    p->top = p->bottom = given[0];
    p->left = p->right = given[1];
  } else if (given.size() == 4) {
    *p = Pads{given[0], given[1], given[2], given[3]};
  } else {
    a.fail(fmt::format("paddings has {} values (2 or 4 expected)", given.size()));
    return false;
  }
  if (algorithm == "SAME") {
    // The padding is a constant of the geometry: a dim known only at run time must not change it (stride 1).
    auto same = [&a](const SymExpr& dim, int64_t stride, int64_t k, int64_t* p0, int64_t* p1) {
      const std::optional<int64_t> in = dim.constant();
      if (!in && stride != 1) {
        a.fail(fmt::format("its SAME padding of stride {} depends on a spatial dim known only at run time", stride));
        return false;
      }
      const int64_t sum = in ? std::max<int64_t>(((*in + stride - 1) / stride - 1) * stride + k - *in, 0)
                             : std::max<int64_t>(k - 1, 0);
      *p0 = sum / 2;
      *p1 = sum - *p0;
      return true;
    };
    if (!same(in_h, stride_h, k_h, &p->top, &p->bottom) || !same(in_w, stride_w, k_w, &p->left, &p->right)) {
      return false;
    }
  } else if (algorithm == "VALID") {
    *p = Pads{};
  } else if (algorithm != "EXPLICIT") {
    a.fail("padding_algorithm is \"" + algorithm + "\" (EXPLICIT, SAME or VALID expected)");
    return false;
  }
  if (p->top < 0 || p->bottom < 0 || p->left < 0 || p->right < 0) {
    a.fail("a padding is negative");
    return false;
  }
  return true;
}


}  // namespace

// The activations' element types the convolution, pooling and batch-norm kernels take: float32, or 16-bit floats
// (--precision), which they load, compute on in float32 and store rounded.
bool activation_dtype(ir::DataType d) {
  return d == ir::DataType::kFloat32 || d == ir::DataType::kFloat16 || d == ir::DataType::kBFloat16;
}

// The C++ element type of an activation dtype (activation_dtype, or float64 for pooling).
std::string element_type_of(ir::DataType d) { return cuda_element_type(d).value_or("float"); }

// kforge::cuda_conv::ElementType's enumerator of `d`.
std::string element_enumerator(ir::DataType d) {
  switch (d) {
    case ir::DataType::kFloat16: return "kforge::cuda_conv::ElementType::kFloat16";
    case ir::DataType::kBFloat16: return "kforge::cuda_conv::ElementType::kBFloat16";
    default: return "kforge::cuda_conv::ElementType::kFloat32";
  }
}

int64_t element_bytes(ir::DataType d) { return d == ir::DataType::kFloat32 ? 4 : 2; }

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

std::optional<CudaPoolSite> cuda_pool_site(const LoweredProgram& p, const KernelCall& call, std::string* why) {
  Attrs a(call, why);
  CudaPoolSite s;
  s.x = call.tensor_arg("x");
  s.out = single_output(call);
  if (s.x == kNone || s.out == kNone) {
    a.fail("it needs an input and one output");
    return std::nullopt;
  }
  s.dtype = p.values[s.x].dtype;
  if ((!activation_dtype(s.dtype) && s.dtype != ir::DataType::kFloat64) || p.values[s.out].dtype != s.dtype) {
    a.fail(fmt::format("x is {}; the CUDA pooling kernel takes float32, float64, float16 and bfloat16",
                       ir::dtype_name(s.dtype)));
    return std::nullopt;
  }
  const std::vector<int64_t> kernel = a.ints("kernel_size");
  std::vector<int64_t> strides = a.ints("strides");
  const std::vector<int64_t> given_pads = a.ints("paddings");
  const bool ceil_mode = a.boolean("ceil_mode");
  s.exclusive = a.boolean("exclusive");
  const std::string format = a.text("data_format");
  const std::string type = a.text("pooling_type");
  const bool global = a.boolean("global_pooling");
  s.adaptive = a.boolean("adaptive");
  const std::string algorithm = a.text("padding_algorithm");
  if (!a.ok()) return std::nullopt;
  s.nhwc = format == "NHWC";
  SymExpr out_n;
  int64_t out_c = 0;
  if (!nchw(p.values[s.x].dims, s.nhwc, &s.batch, &s.c, &s.h, &s.w) ||
      !nchw(p.values[s.out].dims, s.nhwc, &out_n, &out_c, &s.out_h, &s.out_w) || out_c != s.c || out_n != s.batch) {
    a.fail("its input and output must be 4-D with channels known at generation time");
    return std::nullopt;
  }
  if (type != "max" && type != "avg") {
    a.fail("pooling_type is \"" + type + "\" (max or avg expected)");
    return std::nullopt;
  }
  s.is_max = type == "max";
  if (kernel.size() != 1 && kernel.size() != 2) {
    a.fail(fmt::format("kernel_size has {} values (1 or 2 expected)", kernel.size()));
    return std::nullopt;
  }
  // A global pool is the adaptive pool to 1 x 1 (one window over the whole map, whatever its size).
  s.adaptive = s.adaptive || global;
  s.k_h = global ? 1 : kernel.front();
  s.k_w = global ? 1 : kernel.back();
  if (strides.size() == 1) strides.push_back(strides[0]);
  if (strides.size() != 2 || strides[0] <= 0 || strides[1] <= 0 || s.k_h <= 0 || s.k_w <= 0) {
    a.fail("its kernel_size and strides must be positive pairs");
    return std::nullopt;
  }
  s.stride_h = strides[0];
  s.stride_w = strides[1];
  Pads pads;  // none for an adaptive pool
  if (!s.adaptive &&
      !paddings(a, given_pads, algorithm, s.h, s.w, s.k_h, s.k_w, s.stride_h, s.stride_w, &pads)) {
    return std::nullopt;
  }
  s.pad_top = pads.top;
  s.pad_left = pads.left;
  SymExpr out_h = s.k_h, out_w = s.k_w;  // adaptive: the kernel size is the output size
  if (!s.adaptive) {
    auto out_size = [ceil_mode](const SymExpr& in, int64_t k, int64_t p0, int64_t p1, int64_t stride) {
      return SymExpr::floor_div(in - k + p0 + p1 + (ceil_mode ? stride - 1 : 0), stride) + 1;
    };
    out_h = out_size(s.h, s.k_h, pads.top, pads.bottom, s.stride_h);
    out_w = out_size(s.w, s.k_w, pads.left, pads.right, s.stride_w);
  }
  if (out_h != s.out_h || out_w != s.out_w) {
    a.fail(fmt::format("its output is {} x {} but the geometry gives {} x {}", s.out_h.to_string(),
                       s.out_w.to_string(), out_h.to_string(), out_w.to_string()));
    return std::nullopt;
  }
  return s;
}

std::optional<CudaBatchNormSite> cuda_batch_norm_site(const LoweredProgram& p, const KernelCall& call,
                                                      const std::function<bool(uint32_t)>& is_read, std::string* why) {
  Attrs a(call, why);
  CudaBatchNormSite s;
  s.x = call.tensor_arg("x");
  s.mean = call.tensor_arg("mean");
  s.variance = call.tensor_arg("variance");
  s.scale = call.tensor_arg("scale");
  s.shift = call.tensor_arg("bias");
  s.out = call.outputs.empty() || call.outputs[0].values.size() != 1 ? kNone : call.outputs[0].values[0];
  const bool test = call.constant_bool("is_test").value_or(false) || call.constant_bool("use_global_stats").value_or(false);
  const std::string format = a.text("data_format");
  s.epsilon = a.floating("epsilon");
  if (!a.ok()) return std::nullopt;
  if (!test) {
    a.fail("it is a training batch norm (batch statistics); only inference (is_test or use_global_stats) runs");
    return std::nullopt;
  }
  if (s.x == kNone || s.out == kNone || s.mean == kNone || s.variance == kNone) {
    a.fail("it needs x, mean, variance and an output");
    return std::nullopt;
  }
  for (size_t i = 1; i < call.outputs.size(); ++i) {
    for (uint32_t v : call.outputs[i].values) {
      if (v != kNone && is_read(v)) {
        a.fail("its output " + call.outputs[i].name + " is read, and the CUDA batch norm computes out alone");
        return std::nullopt;
      }
    }
  }
  // Any rank from 2: [n, c, ...] or channel-last [n, ..., c] (NHWC, NLC, NDHWC), the dims but n and c the spatial.
  s.nhwc = format == "NHWC" || format == "NLC" || format == "NDHWC";
  const SymShape& dims = p.values[s.x].dims;
  const std::optional<int64_t> channels = dims.size() >= 2 ? dims[s.nhwc ? dims.size() - 1 : 1].constant() : std::nullopt;
  if (!channels) {
    a.fail("x must have at least 2 dims, its channels known at generation time");
    return std::nullopt;
  }
  s.batch = dims[0];
  s.c = *channels;
  s.spatial = 1;
  for (size_t d = 1; d < dims.size(); ++d) {
    if (d != (s.nhwc ? dims.size() - 1 : 1)) s.spatial = s.spatial * dims[d];
  }
  s.dtype = p.values[s.x].dtype;
  for (uint32_t v : {s.x, s.out, s.mean, s.variance, s.scale, s.shift}) {
    const ir::DataType want = v == s.x || v == s.out ? s.dtype : ir::DataType::kFloat32;
    if (v != kNone && (p.values[v].dtype != want || !activation_dtype(s.dtype))) {
      a.fail(fmt::format("{} is {}; the CUDA batch norm takes float32, float16 or bfloat16 x and y and float32 "
                         "statistics",
                         p.values[v].label(), ir::dtype_name(p.values[v].dtype)));
      return std::nullopt;
    }
  }
  return s;
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

tmpl::Value cuda_batch_norm_step(const CudaBatchNormSite& s, int64_t launch, const std::string& description,
                                 const CudaBufferExpr& buffer, const SizeExpr& size) {
  tmpl::Value v = tmpl::Value::map();
  v.set("launch", launch);
  v.set("description", description);
  v.set("x", buffer(s.x, element_type_of(s.dtype), true));
  v.set("y", buffer(s.out, element_type_of(s.dtype), false));
  v.set("batch", size(s.batch));
  v.set("channels", std::to_string(s.c));
  v.set("spatial", size(s.spatial));
  v.set("nhwc", std::string(s.nhwc ? "true" : "false"));
  auto operand = [&](uint32_t value) { return value == kNone ? std::string("nullptr") : buffer(value, "float", true); };
  tmpl::Value e = tmpl::Value::map();
  e.set("bias", "nullptr");
  e.set("mean", operand(s.mean));
  e.set("variance", operand(s.variance));
  e.set("scale", operand(s.scale));
  e.set("shift", operand(s.shift));
  e.set("residual", "nullptr");
  e.set("epsilon", cpp_float(static_cast<float>(s.epsilon)));
  e.set("activation", "kforge::cuda_conv::Activation::kNone");
  e.set("alpha", "0.0f");
  e.set("beta", "0.0f");
  e.set("after_residual", "false");
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

tmpl::Value cuda_pool_step(const CudaPoolSite& s, int64_t number, int64_t launch, const std::string& description,
                           const CudaBufferExpr& buffer, const SizeExpr& size) {
  const std::string type = element_type_of(s.dtype);
  tmpl::Value v = tmpl::Value::map();
  v.set("number", number);
  v.set("launch", launch);
  v.set("description", description);
  auto b = [](bool x) { return x ? "true" : "false"; };
  v.set("geometry", fmt::format("{{{}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}, {}}}", s.c, int_field(s.h, size),
                                int_field(s.w, size), int_field(s.out_h, size), int_field(s.out_w, size), s.k_h, s.k_w, s.stride_h,
                                s.stride_w, s.pad_top, s.pad_left, b(s.nhwc), b(s.is_max), b(s.exclusive),
                                b(s.adaptive)));
  v.set("type", type);
  v.set("batch", size(s.batch));
  v.set("x", buffer(s.x, type, true));
  v.set("y", buffer(s.out, type, false));
  return v;
}

}  // namespace kforge::codegen
