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

bool ComputeCall::reduce() {
  const std::string& op = call_.op;
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  if (x == kNone || out == kNone) return fail("it needs an input and an output");
  // mean_all: the mean of every element (kernels/linalg.cc: mean over no axes).
  const bool every = op == "mean_all";
  const passes::AttrConstant* axis = every ? nullptr : constant(call_, "axis", why_);
  if (axis == nullptr && !every) return false;
  std::optional<bool> all_axes = op == "prod" ? call_.constant_bool("reduce_all") : std::optional<bool>(every);
  if (!all_axes) return fail("its reduce_all is not a constant known at generation time");
  const std::optional<std::string> in_type = value_type(value(x).dtype), out_type = value_type(value(out).dtype);
  if (!in_type || !out_type) {
    return fail(fmt::format("it reduces {} into {}; the CUDA kernel of a reduction outside a fused group takes bool, "
                            "integers, float32 and float64",
                            ir::dtype_name(value(x).dtype), ir::dtype_name(value(out).dtype)));
  }
  const std::string& in = *in_type;
  const bool logical = op == "any" || op == "all";
  if (logical ? *out_type != "bool" : (op != "sum" && *out_type != in)) {
    return fail(fmt::format("its input is {} and its output {}", ir::dtype_name(value(x).dtype),
                            ir::dtype_name(value(out).dtype)));
  }
  if (!logical && op != "sum" && in == "bool") return fail("it reduces bool values, which " + op + " does not take");
  const SymShape& xd = value(x).dims;
  std::vector<bool> reduced(xd.size(), every || axis->ints.empty() || *all_axes);
  for (int64_t a : every ? std::vector<int64_t>{} : axis->ints) {
    size_t n = 0;
    if (!passes::normalize_axis(a, static_cast<int64_t>(xd.size()), &n)) {
      if (!xd.empty() || (a != 0 && a != -1)) return fail("its axis names an axis out of range");
      continue;
    }
    reduced[n] = true;
  }
  SymShape kept_dims, reduced_dims;
  for (size_t d = 0; d < xd.size(); ++d) (reduced[d] ? reduced_dims : kept_dims).push_back(xd[d]);
  SymExpr count = 1;
  for (const SymExpr& d : reduced_dims) count = count * d;
  if (passes::sym_numel(kept_dims) != value(out).numel()) return fail("its output's size is not its kept dims'");
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
  return true;
}

bool ComputeCall::lines(uint32_t x, int64_t given, SymExpr* outer, SymExpr* len, SymExpr* inner) {
  const SymShape& xd = value(x).dims;
  *outer = 1;
  *len = 1;
  *inner = 1;
  if (xd.empty()) return true;
  size_t a = 0;
  if (!passes::normalize_axis(given, static_cast<int64_t>(xd.size()), &a)) return fail("its axis is out of range");
  for (size_t d = 0; d < a; ++d) *outer = *outer * xd[d];
  *len = xd[a];
  for (size_t d = a + 1; d < xd.size(); ++d) *inner = *inner * xd[d];
  return true;
}

void ComputeCall::line_base(KernelText& k, const SymExpr& len, const SymExpr& inner) {
  const std::string in = k.size(inner);
  k.line(fmt::format("const int64_t base = (e / {}) * {} + e % {};", in, k.size(len * inner), in));
}

bool ComputeCall::softmax() {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  const std::string type = same_type(x, out, true);
  const std::optional<int64_t> axis = type.empty() ? std::nullopt : constant_int(call_, "axis", why_);
  if (!axis || !own_buffer(x, out)) return false;
  SymExpr outer, len, inner;
  if (!lines(x, *axis, &outer, &len, &inner)) return false;
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
  return true;
}

bool ComputeCall::cumsum() {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  const std::string type = same_type(x, out, false);
  if (type.empty() || !own_buffer(x, out)) return false;
  if (type == "bool" || type == "uint16_t" || !value_type(value(x).dtype)) {
    return fail(fmt::format("it sums {} values, which cumsum does not take", ir::dtype_name(value(x).dtype)));
  }
  const std::optional<bool> flatten = call_.constant_bool("flatten"), exclusive = call_.constant_bool("exclusive"),
                            reverse = call_.constant_bool("reverse");
  if (!flatten || !exclusive || !reverse) return fail("its flatten, exclusive or reverse is not a constant");
  SymExpr outer = 1, len = value(x).numel(), inner = 1;
  if (!*flatten) {
    const std::optional<int64_t> axis = constant_int(call_, "axis", why_);
    if (!axis || !lines(x, *axis, &outer, &len, &inner)) return false;
  }
  KernelText k = text();
  const std::string in = k.input(x, type);
  k.output(out, type);
  const std::string n = k.size(len), step = k.size(inner);
  line_base(k, len, inner);
  k.line(fmt::format("{} acc = 0;", type));
  k.line(fmt::format("for (int64_t j = 0; j < {}; ++j) {{", n));
  k.line(fmt::format("  const int64_t at = base + {} * {};", *reverse ? fmt::format("({} - 1 - j)", n) : "j", step));
  k.line(fmt::format("  const {} v = {}[at];", type, in));
  const std::string add_v = is_float_type(type) ? "acc + v"
                                                : fmt::format("static_cast<{0}>(static_cast<{1}>(acc) + static_cast<{1}>(v))",
                                                              type, unsigned_of(type));
  if (*exclusive) k.line("  out[at] = acc;");
  k.line(fmt::format("  acc = {};", add_v));
  if (!*exclusive) k.line("  out[at] = acc;");
  k.line("}");
  add(k, outer * inner);
  return true;
}

}  // namespace kforge::codegen::index_text::compute_internal
