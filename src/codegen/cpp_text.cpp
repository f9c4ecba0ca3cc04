#include "codegen/cpp_text.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "support/text.h"
#include "support/ascii.h"

namespace kforge::codegen {

namespace {

using ascii::is_alpha;
using ascii::is_digit;


std::string join(const std::vector<std::string>& items) { return kforge::join(items, ", "); }

std::string scalar_literal(const passes::ScalarConstant& s, std::string* why, bool* ok) {
  const std::optional<std::string> dtype = runtime_dtype(s.dtype);
  if (!dtype) {
    *why = "a Scalar of dtype " + std::string(ir::dtype_name(s.dtype));
    *ok = false;
    return "";
  }
  if (s.dtype == ir::DataType::kBool) return s.int_value != 0 ? "kforge::Scalar(true)" : "kforge::Scalar(false)";
  if (s.is_floating) return "kforge::Scalar(" + cpp_double(s.float_value) + ").with_dtype(" + *dtype + ")";
  return "kforge::Scalar(int64_t{" + std::to_string(s.int_value) + "}).with_dtype(" + *dtype + ")";
}

}  // namespace

std::string cpp_identifier(std::string_view text) {
  std::string out(text);
  std::replace_if(out.begin(), out.end(), [](char c) { return !is_alpha(c) && !is_digit(c) && c != '_'; }, '_');
  if (out.empty() || is_digit(out[0])) out.insert(out.begin(), '_');
  return is_cpp_keyword(out) ? out + "_" : out;
}

std::optional<NamespaceProblem> namespace_problem(std::string_view text) {
  // Names the generated code spells unqualified: inside a namespace a::N, `N` would name the namespace.
  static constexpr std::string_view kHidden[] = {"std",      "kforge",    "size_t",   "ptrdiff_t", "int8_t",
                                                 "int16_t",  "int32_t",   "int64_t",  "uint8_t",   "uint16_t",
                                                 "uint32_t", "uint64_t",  "intptr_t", "uintptr_t"};
  if (text.empty()) return NamespaceProblem{0, "the namespace is empty"};
  size_t begin = 0;
  while (true) {
    const size_t sep = text.find("::", begin);
    const std::string_view part = text.substr(begin, sep == std::string_view::npos ? std::string_view::npos : sep - begin);
    if (part.empty()) {
      return NamespaceProblem{begin, begin == 0 ? "a namespace name cannot start with '::'"
                                                : sep == std::string_view::npos ? "a namespace name cannot end with '::'"
                                                                                 : "empty name between '::'"};
    }
    const std::string quoted = "'" + std::string(part) + "'";
    if (is_digit(part[0])) return NamespaceProblem{begin, quoted + " is not a C++ identifier: it starts with a digit"};
    for (size_t i = 0; i < part.size(); ++i) {
      if (!is_alpha(part[i]) && !is_digit(part[i]) && part[i] != '_') {
        return NamespaceProblem{begin + i, quoted + " is not a C++ identifier (letters, digits and '_')"};
      }
    }
    if (is_cpp_keyword(part)) return NamespaceProblem{begin, quoted + " is a C++ keyword"};
    if (part.find("__") != std::string_view::npos || (part.size() > 1 && part[0] == '_' && part[1] >= 'A' && part[1] <= 'Z')) {
      return NamespaceProblem{begin, quoted + " is reserved to the C++ implementation ('__' or '_' and a capital)"};
    }
    for (std::string_view hidden : kHidden) {
      if (part == hidden) {
        return NamespaceProblem{begin, quoted + " is a name the generated code uses (std::, kforge::, the <cstdint> "
                                                "types): inside the namespace it would name the namespace"};
      }
    }
    if (sep == std::string_view::npos) return std::nullopt;
    begin = sep + 2;
  }
}

std::string IdentifierScope::take(std::string_view text) {
  const std::string base = cpp_identifier(text);
  std::string name = base;
  for (int n = 2; used_.count(name) != 0; ++n) name = base + "_" + std::to_string(n);
  used_.insert(name);
  return name;
}

std::string cpp_int_list(const std::vector<int64_t>& values) { return fmt::format("{{{}}}", fmt::join(values, ", ")); }

std::string cpp_known_dims(const passes::SymShape& dims) {
  return braced_list(dims, [](const passes::SymExpr& d) { return std::to_string(d.constant().value_or(-1)); });
}

std::string cpp_string(std::string_view text) { return c_string_literal(text); }

std::string cpp_double(double value) {
  if (std::isnan(value)) return "std::numeric_limits<double>::quiet_NaN()";
  if (std::isinf(value)) return value > 0 ? "std::numeric_limits<double>::infinity()" : "-std::numeric_limits<double>::infinity()";
  std::string text = fmt::format("{}", value);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

std::string cuda_device_constant(double value, const std::string& type) {
  // A double beyond float's range is an infinity as float: spelled as one, not as std::numeric_limits.
  if (type == "float" && !std::isnan(value)) value = static_cast<float>(value);
  if (std::isnan(value)) return fmt::format("static_cast<{}>(nan(\"\"))", type);
  if (std::isinf(value)) return fmt::format("static_cast<{}>({}HUGE_VAL)", type, value < 0 ? "-" : "");
  if (type == "float") return cpp_float(static_cast<float>(value));
  return fmt::format("static_cast<{}>({:.17g})", type, value);
}

std::string cuda_device_digits(double value, const std::string& type) {
  if (!std::isfinite(value)) return cuda_device_constant(value, type);
  return fmt::format("{:.17g}", value);
}

std::string cpp_float(float value) {
  if (std::isnan(value)) return "std::numeric_limits<float>::quiet_NaN()";
  if (std::isinf(value)) return value > 0 ? "std::numeric_limits<float>::infinity()" : "-std::numeric_limits<float>::infinity()";
  std::string text = fmt::format("{}", value);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text + "f";
}

std::optional<std::string> runtime_dtype(ir::DataType dtype) {
  switch (dtype) {
    case ir::DataType::kUndefined: return "kforge::DataType::kUndefined";
    case ir::DataType::kBool: return "kforge::DataType::kBool";
    case ir::DataType::kInt8: return "kforge::DataType::kInt8";
    case ir::DataType::kUInt8: return "kforge::DataType::kUInt8";
    case ir::DataType::kInt16: return "kforge::DataType::kInt16";
    case ir::DataType::kInt32: return "kforge::DataType::kInt32";
    case ir::DataType::kInt64: return "kforge::DataType::kInt64";
    case ir::DataType::kFloat16: return "kforge::DataType::kFloat16";
    case ir::DataType::kBFloat16: return "kforge::DataType::kBFloat16";
    case ir::DataType::kFloat32: return "kforge::DataType::kFloat32";
    case ir::DataType::kFloat64: return "kforge::DataType::kFloat64";
    case ir::DataType::kComplex64: return "kforge::DataType::kComplex64";
    case ir::DataType::kComplex128: return "kforge::DataType::kComplex128";
    default: return std::nullopt;
  }
}

std::optional<expr::ScalarType> scalar_type_of(ir::DataType dtype) {
  return expr::scalar_type_from_name(ir::dtype_name(dtype));
}

std::optional<std::string> element_type(ir::DataType dtype) {
  const std::optional<expr::ScalarType> s = scalar_type_of(dtype);
  if (!s) return std::nullopt;
  const std::optional<std::string_view> name = expr::cpp_scalar_name(*s);
  if (!name) return std::nullopt;
  return std::string(*name);
}

std::optional<std::string> cuda_half_type(expr::ScalarType type) {
  if (type == expr::ScalarType::kFloat16) return "__half";
  if (type == expr::ScalarType::kBFloat16) return "__nv_bfloat16";
  return std::nullopt;
}

std::optional<std::string> cuda_element_type(ir::DataType dtype) {
  const std::optional<expr::ScalarType> s = scalar_type_of(dtype);
  if (s) {
    if (std::optional<std::string> half = cuda_half_type(*s)) return half;
  }
  return element_type(dtype);
}

std::optional<std::string> cuda_scalar_type(expr::ScalarType type) {
  if (std::optional<std::string> half = cuda_half_type(type)) return half;
  if (type != expr::compute_type(type)) return std::nullopt;
  const std::optional<std::string_view> name = expr::cpp_scalar_name(type);
  if (!name) return std::nullopt;
  return std::string(*name);
}

std::string param_type(opdef::ArgType type, bool optional) {
  using opdef::ArgType;
  switch (type) {
    case ArgType::kTensor: return optional ? "const kforge::Tensor*" : "const kforge::Tensor&";
    case ArgType::kTensorList: return "kforge::TensorList";
    case ArgType::kInt:
    case ArgType::kInt32: return "int";
    case ArgType::kInt64: return "int64_t";
    case ArgType::kLong: return "long";
    case ArgType::kSizeT: return "size_t";
    case ArgType::kFloat: return "float";
    case ArgType::kDouble: return "double";
    case ArgType::kBool: return "bool";
    case ArgType::kDataType: return "kforge::DataType";
    case ArgType::kDataLayout: return "kforge::DataLayout";
    case ArgType::kPlace: return "const kforge::Place&";
    default: return "const " + constant_type(type) + "&";
  }
}

bool is_inline_constant(opdef::ArgType type) {
  using opdef::ArgType;
  switch (type) {
    case ArgType::kInt:
    case ArgType::kInt32:
    case ArgType::kInt64:
    case ArgType::kLong:
    case ArgType::kSizeT:
    case ArgType::kFloat:
    case ArgType::kDouble:
    case ArgType::kBool:
    case ArgType::kDataType:
    case ArgType::kDataLayout:
    case ArgType::kPlace: return true;
    default: return false;
  }
}

std::optional<SymbolicArg> symbolic_arg(opdef::ArgType type, const std::vector<std::string>& items,
                                        const std::string& local) {
  auto list_local = [&](std::string local_type, std::vector<std::string> values) {
    return SymbolicArg{local, SymbolicLocal{std::move(local_type), local, std::move(values), false}};
  };
  switch (type) {
    case opdef::ArgType::kIntArray: return list_local("kforge::IntArray", items);
    case opdef::ArgType::kInt64List: return list_local("std::vector<int64_t>", items);
    case opdef::ArgType::kIntList: {
      std::vector<std::string> casted;
      for (const std::string& item : items) casted.push_back(fmt::format("static_cast<int>({})", item));
      return list_local("std::vector<int>", std::move(casted));
    }
    case opdef::ArgType::kInt:
    case opdef::ArgType::kInt32:
      if (items.size() == 1) return SymbolicArg{fmt::format("static_cast<int>({})", items[0]), std::nullopt};
      return std::nullopt;
    case opdef::ArgType::kInt64:
      if (items.size() == 1) return SymbolicArg{fmt::format("static_cast<int64_t>({})", items[0]), std::nullopt};
      return std::nullopt;
    default:
      if (opdef::is_scalar_type(type) && items.size() == 1) {
        return SymbolicArg{local, SymbolicLocal{"kforge::Scalar", local, items, true}};
      }
      return std::nullopt;
  }
}

std::string constant_type(opdef::ArgType type) {
  using opdef::ArgType;
  switch (type) {
    case ArgType::kStr: return "std::string";
    case ArgType::kIntList: return "std::vector<int>";
    case ArgType::kInt64List: return "std::vector<int64_t>";
    case ArgType::kFloatList: return "std::vector<float>";
    case ArgType::kDoubleList: return "std::vector<double>";
    case ArgType::kBoolList: return "std::vector<bool>";
    case ArgType::kStrList: return "std::vector<std::string>";
    case ArgType::kIntArray: return "kforge::IntArray";
    case ArgType::kScalarList: return "std::vector<kforge::Scalar>";
    case ArgType::kScalar:
    case ArgType::kScalarBool:
    case ArgType::kScalarInt:
    case ArgType::kScalarInt64:
    case ArgType::kScalarFloat:
    case ArgType::kScalarDouble: return "kforge::Scalar";
    default: return std::string(param_type(type, false));
  }
}

std::optional<std::string> constant_literal(const passes::AttrConstant& c, std::string* why) {
  using opdef::ArgType;
  std::vector<std::string> items;
  bool ok = true;
  switch (c.type) {
    case ArgType::kBool: return std::string(c.bool_value ? "true" : "false");
    case ArgType::kInt:
    case ArgType::kInt32: return std::to_string(c.int_value);
    case ArgType::kInt64: return "int64_t{" + std::to_string(c.int_value) + "}";
    case ArgType::kLong: return std::to_string(c.int_value) + "L";
    case ArgType::kSizeT: return "size_t{" + std::to_string(c.int_value) + "}";
    case ArgType::kFloat: return cpp_float(static_cast<float>(c.float_value));
    case ArgType::kDouble: return cpp_double(c.float_value);
    case ArgType::kStr: return cpp_string(c.string_value);
    case ArgType::kIntList:
    case ArgType::kInt64List:
    case ArgType::kIntArray:
      for (int64_t v : c.ints) items.push_back(std::to_string(v));
      return "{" + join(items) + "}";
    case ArgType::kFloatList:
      for (double v : c.floats) items.push_back(cpp_float(static_cast<float>(v)));
      return "{" + join(items) + "}";
    case ArgType::kDoubleList:
      for (double v : c.floats) items.push_back(cpp_double(v));
      return "{" + join(items) + "}";
    case ArgType::kBoolList:
      for (bool v : c.bools) items.push_back(v ? "true" : "false");
      return "{" + join(items) + "}";
    case ArgType::kStrList:
      for (const std::string& v : c.strings) items.push_back(cpp_string(v));
      return "{" + join(items) + "}";
    case ArgType::kScalar:
    case ArgType::kScalarBool:
    case ArgType::kScalarInt:
    case ArgType::kScalarInt64:
    case ArgType::kScalarFloat:
    case ArgType::kScalarDouble: {
      std::string text = scalar_literal(c.scalar, why, &ok);
      if (!ok) return std::nullopt;
      return text;
    }
    case ArgType::kScalarList:
      for (const passes::ScalarConstant& s : c.scalars) {
        items.push_back(scalar_literal(s, why, &ok));
        if (!ok) return std::nullopt;
      }
      return "{" + join(items) + "}";
    case ArgType::kDataType: {
      std::optional<std::string> d = runtime_dtype(c.dtype);
      if (!d) *why = "the data type " + std::string(ir::dtype_name(c.dtype));
      return d;
    }
    case ArgType::kDataLayout:
      switch (c.layout) {
        case ir::DataLayout::kUndefined: return std::string("kforge::DataLayout::kUndefined");
        case ir::DataLayout::kNCHW: return std::string("kforge::DataLayout::kNCHW");
        case ir::DataLayout::kNHWC: return std::string("kforge::DataLayout::kNHWC");
        default: *why = "the layout " + std::string(ir::layout_name(c.layout)); return std::nullopt;
      }
    case ArgType::kPlace:
      switch (c.place.type) {
        case ir::AllocationType::kUndefined: return std::string("kforge::Place{}");
        case ir::AllocationType::kCpu: return std::string("kforge::CPUPlace()");
        case ir::AllocationType::kGpu: return "kforge::GPUPlace(" + std::to_string(c.place.device_id) + ")";
        default: *why = "the place " + ir::place_to_string(c.place); return std::nullopt;
      }
    case ArgType::kTensor:
    case ArgType::kTensorList: break;
  }
  *why = "a tensor argument as a constant";
  return std::nullopt;
}

passes::SymExpr::PrintOptions cpp_int_options() {
  passes::SymExpr::PrintOptions cpp;
  cpp.symbol_name = [](uint32_t id) { return "s" + std::to_string(id); };
  cpp.floor_div_name = "kforge_floor_div";
  cpp.ceil_div_name = "kforge_ceil_div";
  cpp.max_name = "std::max<int64_t>";
  cpp.min_name = "std::min<int64_t>";
  return cpp;
}

passes::SymExpr::PrintOptions cpp_checked_int_options() {
  passes::SymExpr::PrintOptions checked;
  checked.symbol_name = [](uint32_t id) { return "kforge::CheckedInt(s" + std::to_string(id) + ")"; };
  checked.floor_div_name = "kforge::checked_floor_div";
  checked.ceil_div_name = "kforge::checked_ceil_div";
  checked.max_name = "kforge::checked_max";
  checked.min_name = "kforge::checked_min";
  return checked;
}

std::string cpp_int_expr(const passes::SymExpr& e) { return e.to_string(cpp_int_options()); }

std::string cpp_checked_int_expr(const passes::SymExpr& e) {
  // A constant prints as a bare integer: make it a CheckedInt too, so that .ok() and .value() apply.
  const std::string text = e.to_string(cpp_checked_int_options());
  return e.is_constant() ? "kforge::CheckedInt(" + text + ")" : text;
}

}  // namespace kforge::codegen
