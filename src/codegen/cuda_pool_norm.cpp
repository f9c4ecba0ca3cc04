// The step contexts of the pool2d, rnn and lone inference batch norms of kforge compile --target cuda
// (codegen/cuda_conv.h; their forms are passes/cuda_plan.h's, the convolutions' steps cuda_conv.cpp's).
#include <fmt/format.h>

#include "codegen/cpp_text.h"
#include "codegen/cuda_conv.h"
#include "codegen/cuda_conv_attrs.h"

namespace kforge::codegen {

namespace {

using passes::kNone;
using conv_detail::element_type_of;
using conv_detail::int_field;

}  // namespace

tmpl::Value cuda_batch_norm_step(const CudaBatchNorm& s, int64_t launch, const std::string& description,
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
  e.set("epsilon", cuda_device_constant(s.epsilon, "float"));
  e.set("activation", "kforge::cuda_conv::Activation::kNone");
  e.set("alpha", "0.0f");
  e.set("beta", "0.0f");
  e.set("after_residual", "false");
  v.set("epilogue", std::move(e));
  return v;
}

tmpl::Value cuda_rnn_step(const passes::CudaRnn& s, int64_t launch, const std::string& description,
                          const CudaBufferExpr& buffer, const SizeExpr& size, const std::string& scratch) {
  const std::string type = element_type_of(s.dtype);
  tmpl::Value v = tmpl::Value::map();
  v.set("launch", launch);
  v.set("description", description);
  v.set("type", type);
  const char* cell = s.mode == "LSTM" ? "kLstm" : s.mode == "GRU" ? "kGru" : s.mode == "RNN_RELU" ? "kRelu" : "kTanh";
  v.set("cell", fmt::format("kforge::cuda_rnn::Cell::{}", cell));
  v.set("steps", size(s.steps));
  v.set("batch", size(s.batch));
  v.set("input", size(s.input));
  v.set("hidden", std::to_string(s.hidden));
  v.set("layers", std::to_string(s.layers));
  v.set("dirs", std::to_string(s.dirs));
  auto in = [&](uint32_t value) { return value == kNone ? std::string("nullptr") : buffer(value, type, true); };
  auto out = [&](uint32_t value) { return value == kNone ? std::string("nullptr") : buffer(value, type, false); };
  v.set("x", in(s.x));
  v.set("h0", in(s.h0));
  v.set("c0", in(s.c0));
  v.set("out", out(s.out));
  v.set("h", out(s.h));
  v.set("c", out(s.c));
  tmpl::List weights;
  for (uint32_t w : s.weights) weights.push_back(in(w));
  v.set("weights", tmpl::Value(std::move(weights)));
  const bool wide = s.length_dtype == ir::DataType::kInt64;
  v.set("len32", s.lengths == kNone || wide ? std::string("nullptr") : buffer(s.lengths, "int32_t", true));
  v.set("len64", s.lengths == kNone || !wide ? std::string("nullptr") : buffer(s.lengths, "int64_t", true));
  v.set("scratch", fmt::format("static_cast<{}*>({})", type, scratch));
  return v;
}

tmpl::Value cuda_pool_step(const CudaPool& s, int64_t number, int64_t launch, const std::string& description,
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
