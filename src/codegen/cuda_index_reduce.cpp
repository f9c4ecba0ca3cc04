// The index-mapped CUDA kernels that fold lines of values (cuda_index_compute_call.h), each in the CPU kernel's
// order so that the bits agree: sum, mean, max, min, prod, any, all over any axes (one thread per output element,
// kernels/linalg.cc's accumulator types), softmax over an axis that is not the last, and cumsum (one thread per
// line, kernels/reduce_math.cc; integers wrap).
#include "codegen/cuda_index_compute_call.h"
#include "passes/axis.h"

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
  const std::string in = *value_type(form_.dtype);
  const std::optional<std::string> out_type = value_type(form_.out_dtype);
  const SymShape& xd = value(x).dims;
  const std::vector<bool>& reduced = form_.reduced;
  SymShape kept_dims, reduced_dims;
  for (size_t d = 0; d < xd.size(); ++d) (reduced[d] ? reduced_dims : kept_dims).push_back(xd[d]);
  SymExpr count = 1;
  for (const SymExpr& d : reduced_dims) count = count * d;
  // The accumulator and its fold, as kernels/linalg.cc's (and reduce_math.cc's prod).
  const bool floating = is_float_type(in);
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
    acc = in;
    init = extreme(in, op == "max");
    fold = op == "max" ? "v > acc ? v : acc" : "v < acc ? v : acc";
  } else {
    acc = "bool";
    init = op == "all" ? "true" : "false";
    fold = fmt::format("acc {} (v != static_cast<{}>(0))", op == "all" ? "&&" : "||", in);
  }
  KernelText k = text();
  const std::string src = k.input(x, in);
  k.output(out, *out_type);
  k.coordinates(kept_dims);
  std::vector<std::string> coords;
  size_t next_kept = 0, next_reduced = 0;
  for (size_t d = 0; d < xd.size(); ++d) {
    coords.push_back(reduced[d] ? "q" + std::to_string(next_reduced++) : "c" + std::to_string(next_kept++));
  }
  const std::string n = k.size(count);
  k.line(fmt::format("{} acc = {};", acc, init));
  k.line(fmt::format("for (int64_t j = 0; j < {}; ++j) {{", n));
  k.indent(2);
  k.coordinates(reduced_dims, "j", "q");
  k.line(fmt::format("const {} v = {}[{}];", in, src, k.offset(coords, xd)));
  k.line(fmt::format("acc = {};", fold));
  k.indent(-2);
  k.line("}");
  std::string result = "acc";
  if (op == "mean" || every) {
    // An integer mean over no elements is the CPU kernel's error; 0 here rather than a division by zero.
    result = floating ? fmt::format("acc / static_cast<double>({})", n)
                      : fmt::format("({0}) == 0 ? 0 : acc / static_cast<int64_t>({0})", n);
  }
  k.line(fmt::format("out[e] = static_cast<{}>({});", *out_type, result));
  add(k, value(out).numel());
}

void ComputeCall::line_base(KernelText& k, const SymExpr& len, const SymExpr& inner) {
  const std::string in = k.size(inner);
  k.line(fmt::format("const int64_t base = (e / {}) * {} + e % {};", in, k.size(len * inner), in));
}

void ComputeCall::softmax() {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  const std::string type = form_type();
  const SymExpr &outer = form_.outer, &len = form_.len, &inner = form_.inner;
  KernelText k = text();
  const std::string in = k.input(x, type);
  k.output(out, type);
  const std::string n = k.size(len), step = k.size(inner), exp = type == "float" ? "expf" : "exp";
  line_base(k, len, inner);
  k.line(fmt::format("{} top = {};", type, extreme(type, true)));
  k.line(fmt::format("for (int64_t j = 0; j < {}; ++j) top = {}[base + j * {}] > top ? {}[base + j * {}] : top;", n,
                     in, step, in, step));
  k.line(fmt::format("{} total = 0;", type));
  k.line(fmt::format("for (int64_t j = 0; j < {}; ++j) {{", n));
  k.line(fmt::format("  const {} v = {}({}[base + j * {}] - top);", type, exp, in, step));
  k.line(fmt::format("  out[base + j * {}] = v;", step));
  k.line("  total += v;");
  k.line("}");
  k.line(fmt::format("for (int64_t j = 0; j < {}; ++j) out[base + j * {}] /= total;", n, step));
  add(k, outer * inner);
}

void ComputeCall::cumsum() {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  const std::string type = form_type();
  const SymExpr &outer = form_.outer, &len = form_.len, &inner = form_.inner;
  const bool exclusive = form_.exclusive, reverse = form_.reverse;
  KernelText k = text();
  const std::string in = k.input(x, type);
  k.output(out, type);
  const std::string n = k.size(len), step = k.size(inner);
  line_base(k, len, inner);
  k.line(fmt::format("{} acc = 0;", type));
  k.line(fmt::format("for (int64_t j = 0; j < {}; ++j) {{", n));
  k.line(fmt::format("  const int64_t at = base + {} * {};", reverse ? fmt::format("({} - 1 - j)", n) : "j", step));
  k.line(fmt::format("  const {} v = {}[at];", type, in));
  const std::string add_v = is_float_type(type) ? "acc + v"
                                                : fmt::format("static_cast<{0}>(static_cast<{1}>(acc) + static_cast<{1}>(v))",
                                                              type, unsigned_of(type));
  if (exclusive) k.line("  out[at] = acc;");
  k.line(fmt::format("  acc = {};", add_v));
  if (!exclusive) k.line("  out[at] = acc;");
  k.line("}");
  add(k, outer * inner);
}

}  // namespace kforge::codegen::index_text::compute_internal
