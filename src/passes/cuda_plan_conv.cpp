// The convolutions of the CUDA target plan (cuda_plan.h): conv2d, depthwise_conv2d, a convolution group's
// conv2d_fused and conv2d_transpose read from a lowered call into a CudaConv, or the reason the GPU cannot run them.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <iterator>
#include <utility>

#include "passes/cuda_plan.h"
#include "passes/cuda_plan_attrs.h"

namespace kforge::passes {

using namespace cuda_plan_detail;  // Attrs, nchw, paddings, ... (cuda_plan_attrs.h)

bool CudaConv::has_epilogue() const {
  return bias != kNone || mean != kNone || residual != kNone || activation != ConvActivation::kNone;
}

bool CudaConv::direct_depthwise() const { return nhwc && !transposed && groups == c && k == c; }

SymExpr CudaConv::padded_input_bytes() const {
  const SymExpr bytes = batch * c * (h + 2 * pad_h + extra_bottom) * (w + 2 * pad_w + extra_right) *
                        static_cast<int64_t>(ir::dtype_size(dtype));
  return SymExpr::floor_div(bytes + 255, 256) * 256;
}

std::optional<ConvActivation> conv_activation(std::string_view name) {
  static const std::array<std::pair<std::string_view, ConvActivation>, 12> kNames = {{
      {"", ConvActivation::kNone}, {"relu", ConvActivation::kRelu}, {"relu6", ConvActivation::kRelu6},
      {"leaky_relu", ConvActivation::kLeakyRelu}, {"clip", ConvActivation::kClip},
      {"hardswish", ConvActivation::kHardswish}, {"sigmoid", ConvActivation::kSigmoid},
      {"tanh", ConvActivation::kTanh}, {"swish", ConvActivation::kSwish}, {"silu", ConvActivation::kSwish},
      {"gelu", ConvActivation::kGelu}, {"gelu_tanh", ConvActivation::kGeluTanh},
  }};
  for (const auto& [op, activation] : kNames) {
    if (op == name) return activation;
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
                        CudaConv& s, ConvAttrs* c) {
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
bool read_window(Attrs& a, const ConvAttrs& c, CudaConv& s, std::string_view asymmetric) {
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
std::optional<CudaConv> plan_cuda_conv_transpose(const LoweredProgram& p, const KernelCall& call, std::string* why) {
  Attrs a(call, why);
  CudaConv s;
  s.transposed = true;
  ConvAttrs c;
  if (!read_conv_operands(p, call, "x", a, s, &c)) return std::nullopt;
  s.k = c.filter[1] * s.groups;
  if (c.strides.size() != 2 || c.dilations.size() != 2 || s.groups <= 0 || s.c != c.filter[0] ||
      s.c % s.groups != 0 || c.out_c != s.k || c.out_n != s.batch) {
    a.fail("its strides, dilations, groups and dims do not describe a 2-D transposed convolution");
    return std::nullopt;
  }
  // cuDNN 9.19 (H200) lists no backward-data algorithm for a grouped one over NHWC data (Paddle fixture
  // depthwise_conv2d_transpose_nhwc): a refusal here, not a run-time error. kforge's own layout plan never makes a
  // transposed convolution NHWC on this target (compile_target.cpp); only a program's own data_format does.
  if (s.nhwc && s.groups > 1) {
    a.fail(fmt::format("it is a grouped transposed convolution ({} groups) over NHWC data, for which cuDNN lists no "
                       "algorithm; with data_format NCHW it runs",
                       s.groups));
    return std::nullopt;
  }
  if (!read_window(a, c, s, "cuDNN pads both sides alike")) return std::nullopt;
  const SymExpr base_h = (s.h - 1) * s.stride_h - 2 * s.pad_h + s.dilation_h * (s.r - 1) + 1;
  const SymExpr base_w = (s.w - 1) * s.stride_w - 2 * s.pad_w + s.dilation_w * (s.s - 1) + 1;
  const EqualDims equal(p.dim_equalities);
  const std::optional<int64_t> extra_h = (equal.resolve(s.out_h) - equal.resolve(base_h)).constant(),
                               extra_w = (equal.resolve(s.out_w) - equal.resolve(base_w)).constant();
  if (!extra_h || !extra_w || *extra_h < 0 || *extra_h >= s.stride_h || *extra_w < 0 || *extra_w >= s.stride_w) {
    a.fail(fmt::format("its output is {} x {} but the geometry gives {} x {} (plus less than the stride)",
                       s.out_h.to_string(), s.out_w.to_string(), base_h.to_string(), base_w.to_string()));
    return std::nullopt;
  }
  return s;
}

}  // namespace

std::optional<CudaConv> plan_cuda_conv(const LoweredProgram& p, const KernelCall& call, std::string* why) {
  if (call.op == "conv2d_transpose") return plan_cuda_conv_transpose(p, call, why);
  Attrs a(call, why);
  CudaConv s;
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
  if (!output_dims_agree(p, s.out_h, out_h, &s.checked_dims) || !output_dims_agree(p, s.out_w, out_w, &s.checked_dims)) {
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
    const std::string activation = a.text("activation");
    s.alpha = a.floating("activation_alpha");
    s.beta = a.floating("activation_beta");
    s.epsilon = a.floating("epsilon");
    s.activation_after_residual = a.boolean("activation_after_residual");
    if (!a.ok()) return std::nullopt;
    if ((s.mean == kNone) != (s.variance == kNone)) {
      a.fail("its batch norm needs both mean and variance");
      return std::nullopt;
    }
    const std::optional<ConvActivation> known = conv_activation(activation);
    if (!known) {
      a.fail("its activation \"" + activation + "\" has no CUDA epilogue");
      return std::nullopt;
    }
    s.activation = *known;
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

}  // namespace kforge::passes
