// The convolution and copy steps of kforge compile --target cuda (codegen/cuda_conv.h): the forms of
// passes/cuda_plan.h spelled as the template context of templates/program/cuda/conv.j2.
#include "codegen/cuda_conv.h"

#include <fmt/format.h>

#include <utility>

#include "codegen/cpp_text.h"
#include "codegen/cuda_conv_attrs.h"

namespace kforge::codegen {

namespace {

using passes::kNone;
using passes::LoweredProgram;
using conv_detail::element_bytes;
using conv_detail::element_enumerator;
using conv_detail::element_type_of;
using conv_detail::int_field;

}  // namespace

std::string cuda_conv_activation(passes::ConvActivation activation) {
  using passes::ConvActivation;
  const char* enumerator = "kNone";
  switch (activation) {
    case ConvActivation::kNone: enumerator = "kNone"; break;
    case ConvActivation::kRelu: enumerator = "kRelu"; break;
    case ConvActivation::kRelu6: enumerator = "kRelu6"; break;
    case ConvActivation::kLeakyRelu: enumerator = "kLeakyRelu"; break;
    case ConvActivation::kClip: enumerator = "kClip"; break;
    case ConvActivation::kHardswish: enumerator = "kHardswish"; break;
    case ConvActivation::kSigmoid: enumerator = "kSigmoid"; break;
    case ConvActivation::kTanh: enumerator = "kTanh"; break;
    case ConvActivation::kSwish: enumerator = "kSwish"; break;
    case ConvActivation::kGelu: enumerator = "kGelu"; break;
    case ConvActivation::kGeluTanh: enumerator = "kGeluTanh"; break;
  }
  return std::string("kforge::cuda_conv::Activation::") + enumerator;
}

int64_t cuda_conv_fold_bytes(const CudaConv& s) {
  auto aligned = [](int64_t bytes) { return (bytes + 63) / 64 * 64; };
  return aligned(s.k * (s.c / s.groups) * s.r * s.s * element_bytes(s.dtype)) + aligned(s.k * 4);
}

tmpl::Value cuda_conv_step(const CudaConv& s, int64_t number, int64_t launch, const std::string& description,
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
                                              cuda_device_constant(s.input_max, "float"), element_enumerator(s.dtype))
                            : s.input_max > 0 ? fmt::format(", {}, {}, {}, {}", s.transposed, s.krsc_filter,
                                                          s.tap_major_filter, cuda_device_constant(s.input_max, "float"))
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
    f.set("epsilon", cuda_device_constant(s.epsilon, "float"));
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
  e.set("epsilon", cuda_device_constant(s.epsilon, "float"));
  e.set("activation", cuda_conv_activation(s.activation));
  e.set("alpha", cuda_device_constant(s.alpha, "float"));
  e.set("beta", cuda_device_constant(s.beta, "float"));
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
