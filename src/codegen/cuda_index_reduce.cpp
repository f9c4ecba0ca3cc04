// The index-mapped CUDA kernels that fold lines of values (cuda_index_compute_call.h), each in the CPU kernel's
// order so that the bits agree: sum, mean, max, min, prod, any, all over any axes (one thread per output element,
// kernels/linalg.cc's accumulator types), softmax over an axis that is not the last, log_softmax over any axis, and
// cumsum (one thread per line, kernels/reduce_math.cc; integers wrap).
// The plan's form of each call (passes/cuda_plan_compute.h) is what is rendered: every check is the plan's. The
// statements are templates/program/cuda/index_compute.j2's skeletons; this file supplies their context (names,
// types, sizes, expressions), in the order the sizes become kernel parameters.
#include "codegen/cuda_index_compute_call.h"

namespace kforge::codegen::index_text::compute_internal {

namespace {

// The lowest (highest) value of an integer or float C++ type, as a literal.
std::string extreme(const std::string& type, bool lowest) {
  if (type == "float") return lowest ? "-HUGE_VALF" : "HUGE_VALF";
  if (type == "double") return lowest ? "-HUGE_VAL" : "HUGE_VAL";
  static const std::array<std::array<const char*, 3>, 8> limits = {{
      {"int8_t", "(-127 - 1)", "127"},
      {"uint8_t", "0", "255"},
      {"int16_t", "(-32767 - 1)", "32767"},
      {"uint16_t", "0", "65535"},
      {"int32_t", "(-2147483647 - 1)", "2147483647"},
      {"uint32_t", "0", "4294967295u"},
      {"int64_t", "(-9223372036854775807LL - 1)", "9223372036854775807LL"},
      {"uint64_t", "0", "18446744073709551615ull"},
  }};
  for (const auto& l : limits) {
    if (type == l[0]) return fmt::format("static_cast<{}>({})", type, lowest ? l[1] : l[2]);
  }
  return "";
}

bool is_float_type(const std::string& type) { return type == "float" || type == "double"; }

}  // namespace

void ComputeCall::reduce() {
  const std::string& op = call_.op;
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  // mean_all: the mean of every element (kernels/linalg.cc: mean over no axes).
  const bool every = op == "mean_all";
  // A 16-bit float (max / min only) is read as float: cuda_fp16.h's / cuda_bf16.h's types and conversions.
  const bool half = form_.dtype == ir::DataType::kFloat16 || form_.dtype == ir::DataType::kBFloat16;
  const std::string in = half ? *cuda_element_type(form_.dtype) : *value_type(form_.dtype);
  const std::optional<std::string> out_type = half ? cuda_element_type(form_.out_dtype) : value_type(form_.out_dtype);
  const SymShape& xd = value(x).dims;
  const std::vector<bool>& reduced = form_.reduced;
  SymShape kept_dims, reduced_dims;
  for (size_t d = 0; d < xd.size(); ++d) (reduced[d] ? reduced_dims : kept_dims).push_back(xd[d]);
  SymExpr count = 1;
  for (const SymExpr& d : reduced_dims) count = count * d;
  // The accumulator and its fold, as kernels/linalg.cc's (and reduce_math.cc's prod).
  const bool floating = half || is_float_type(in);
  std::string acc, init, fold;
  if (op == "sum" || op == "mean" || every) {
    acc = floating ? "double" : "int64_t";
    init = "0";
    fold = fmt::format("acc + static_cast<{}>(v)", acc);
  } else if (op == "prod") {
    acc = floating ? "double" : "uint64_t";
    init = "1";
    fold = fmt::format("static_cast<{0}>(acc * static_cast<{0}>(v))", acc);
  } else if (op == "max" || op == "min") {
    acc = half ? "float" : in;
    init = extreme(acc, op == "max");
    // A NaN makes the result NaN, as Paddle's max / min (and the CPU kernels); integers are never NaN. A 16-bit
    // element compared as float: exact, and the float of the chosen element rounds back to it.
    const std::string v = form_.dtype == ir::DataType::kFloat16    ? "__half2float(v)"
                          : form_.dtype == ir::DataType::kBFloat16 ? "__bfloat162float(v)"
                                                                   : "v";
    const std::string nan = floating ? fmt::format(" || isnan(static_cast<float>({}))", v) : "";
    fold = fmt::format("{0} {1} acc{2} ? {0} : acc", v, op == "max" ? ">" : "<", nan);
  } else {
    acc = "bool";
    init = op == "all" ? "true" : "false";
    fold = fmt::format("acc {} (v != static_cast<{}>(0))", op == "all" ? "&&" : "||", in);
  }
  KernelText k = text();
  const std::string src = k.input(x, in);
  k.output(out, *out_type);
  tmpl::Value s = statements_of("reduce");
  s.set("coords", k.coordinates_context(kept_dims));
  std::vector<std::string> coords;
  size_t next_kept = 0, next_reduced = 0;
  for (size_t d = 0; d < xd.size(); ++d) {
    coords.push_back(reduced[d] ? "q" + std::to_string(next_reduced++) : "c" + std::to_string(next_kept++));
  }
  const std::string n = k.size(count);
  s.set("acc", acc);
  s.set("init", init);
  s.set("n", n);
  s.set("reduced", k.coordinates_context(reduced_dims, "j", "q"));
  s.set("type", in);
  s.set("x", src);
  s.set("offset", k.offset(coords, xd));
  s.set("fold", fold);
  std::string result = "acc";
  if (form_.dtype == ir::DataType::kFloat16) result = "__float2half_rn(acc)";
  if (form_.dtype == ir::DataType::kBFloat16) result = "__float2bfloat16_rn(acc)";
  if (op == "mean" || every) {
    // An integer mean over no elements is the CPU kernel's error; 0 here rather than a division by zero.
    result = floating ? fmt::format("acc / static_cast<double>({})", n)
                      : fmt::format("({0}) == 0 ? 0 : acc / static_cast<int64_t>({0})", n);
  }
  s.set("out_type", *out_type);
  s.set("result", result);
  k.statements(std::move(s));
  add(k, value(out).numel());
}

void ComputeCall::line_base(KernelText& k, tmpl::Value& s, const SymExpr& len, const SymExpr& inner) {
  s.set("inner", k.size(inner));
  s.set("line", k.size(len * inner));
}

void ComputeCall::softmax() {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  const std::string type = form_type();
  const SymExpr &outer = form_.outer, &len = form_.len, &inner = form_.inner;
  KernelText k = text();
  const std::string in = k.input(x, type);
  k.output(out, type);
  tmpl::Value s = statements_of("softmax");
  s.set("n", k.size(len));
  s.set("step", k.size(inner));
  line_base(k, s, len, inner);
  s.set("type", type);
  s.set("x", in);
  s.set("exp", type == "float" ? "expf" : "exp");
  s.set("lowest", extreme(type, true));
  k.statements(std::move(s));
  add(k, outer * inner);
}

void ComputeCall::log_softmax() {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  const std::string type = form_type();
  const SymExpr &outer = form_.outer, &len = form_.len, &inner = form_.inner;
  KernelText k = text();
  const std::string in = k.input(x, type);
  k.output(out, type);
  tmpl::Value s = statements_of("log_softmax");
  s.set("n", k.size(len));
  s.set("step", k.size(inner));
  line_base(k, s, len, inner);
  s.set("type", type);
  s.set("x", in);
  s.set("exp", type == "float" ? "expf" : "exp");
  s.set("lowest", extreme(type, true));
  k.statements(std::move(s));
  add(k, outer * inner);
}

void ComputeCall::cumsum() {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  const std::string type = form_type();
  const SymExpr &outer = form_.outer, &len = form_.len, &inner = form_.inner;
  KernelText k = text();
  const std::string in = k.input(x, type);
  k.output(out, type);
  tmpl::Value s = statements_of("cumsum");
  const std::string n = k.size(len);
  s.set("n", n);
  s.set("step", k.size(inner));
  line_base(k, s, len, inner);
  s.set("type", type);
  s.set("x", in);
  s.set("position", form_.reverse ? fmt::format("({} - 1 - j)", n) : "j");
  s.set("exclusive", form_.exclusive);
  // Integers wrap: the sum in the unsigned type of their width.
  s.set("sum", is_float_type(type) ? "acc + v"
                                   : fmt::format("static_cast<{0}>(static_cast<{1}>(acc) + static_cast<{1}>(v))", type,
                                                 unsigned_of(type)));
  k.statements(std::move(s));
  add(k, outer * inner);
}

}  // namespace kforge::codegen::index_text::compute_internal
