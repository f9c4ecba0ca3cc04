#include "passes/lowered_program.h"

#include <cmath>

#include <fmt/format.h>

#include "opdef/types.h"

namespace kforge::passes {

const KernelArg* KernelCall::arg(std::string_view name) const {
  for (const KernelArg& a : args) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

std::optional<bool> KernelCall::constant_bool(std::string_view name) const {
  const KernelArg* a = arg(name);
  if (a == nullptr || a->kind != ArgKind::kConstant) return std::nullopt;
  return a->constant.bool_value;
}

SymExpr LoweredValue::bytes() const { return numel() * static_cast<int64_t>(ir::dtype_size(dtype)); }

int64_t ConstantData::numel() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

double ConstantData::float_at(int64_t i) const {
  const size_t at = splat ? 0 : static_cast<size_t>(i);
  if (!floats.empty()) return floats.at(at);
  return static_cast<double>(ints.at(at));
}

int64_t ConstantData::int_at(int64_t i) const {
  const size_t at = splat ? 0 : static_cast<size_t>(i);
  if (!ints.empty()) return ints.at(at);
  return static_cast<int64_t>(floats.at(at));
}

std::string cpp_dtype(ir::DataType dtype) {
  switch (dtype) {
    case ir::DataType::kBool: return "kforge::DataType::kBool";
    case ir::DataType::kInt8: return "kforge::DataType::kInt8";
    case ir::DataType::kUInt8: return "kforge::DataType::kUInt8";
    case ir::DataType::kInt16: return "kforge::DataType::kInt16";
    case ir::DataType::kInt32: return "kforge::DataType::kInt32";
    case ir::DataType::kInt64:
    case ir::DataType::kIndex: return "kforge::DataType::kInt64";
    case ir::DataType::kFloat16: return "kforge::DataType::kFloat16";
    case ir::DataType::kBFloat16: return "kforge::DataType::kBFloat16";
    case ir::DataType::kFloat32: return "kforge::DataType::kFloat32";
    case ir::DataType::kFloat64: return "kforge::DataType::kFloat64";
    case ir::DataType::kComplex64: return "kforge::DataType::kComplex64";
    case ir::DataType::kComplex128: return "kforge::DataType::kComplex128";
    default: return "kforge::DataType::kUndefined";
  }
}

namespace {

std::string float_text(double v, bool single) {
  if (std::isnan(v)) return single ? "std::numeric_limits<float>::quiet_NaN()" : "std::numeric_limits<double>::quiet_NaN()";
  if (std::isinf(v)) {
    const std::string inf = single ? "std::numeric_limits<float>::infinity()" : "std::numeric_limits<double>::infinity()";
    return v < 0 ? "-" + inf : inf;
  }
  std::string s = single ? fmt::format("{}", static_cast<float>(v)) : fmt::format("{}", v);
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return single ? s + "f" : s;
}

std::string int64_text(int64_t v) {
  if (v == INT64_MIN) return "INT64_MIN";
  return fmt::format("int64_t{{{}}}", v);
}

/// An element of a braced int64 list: the list's type makes it int64_t.
std::string plain_int64_text(int64_t v) {
  if (v == INT64_MIN) return "INT64_MIN";
  return fmt::format("{}", v);
}

std::string int32_text(int64_t v) {
  if (v == INT32_MIN) return "INT32_MIN";
  return fmt::format("{}", v);
}

std::string string_text(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default: out += c;
    }
  }
  return out + "\"";
}

std::string scalar_text(const ScalarConstant& s) {
  std::string base;
  ir::DataType natural;
  if (s.dtype == ir::DataType::kBool) {
    base = s.int_value != 0 ? "kforge::Scalar(true)" : "kforge::Scalar(false)";
    natural = ir::DataType::kBool;
  } else if (s.is_floating) {
    const bool single = s.dtype == ir::DataType::kFloat32;
    base = fmt::format("kforge::Scalar({})", float_text(s.float_value, single));
    natural = single ? ir::DataType::kFloat32 : ir::DataType::kFloat64;
  } else if (s.dtype == ir::DataType::kInt32) {
    base = fmt::format("kforge::Scalar(int32_t{{{}}})", s.int_value);
    natural = ir::DataType::kInt32;
  } else {
    base = fmt::format("kforge::Scalar({})", int64_text(s.int_value));
    natural = ir::DataType::kInt64;
  }
  if (s.dtype != natural && s.dtype != ir::DataType::kIndex) base += fmt::format(".with_dtype({})", cpp_dtype(s.dtype));
  return base;
}

template <typename T, typename F>
std::string list_text(const std::string& type, const std::vector<T>& items, F&& each) {
  std::string out = type + "{";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += ", ";
    out += each(items[i]);
  }
  return out + "}";
}

std::string layout_text(ir::DataLayout l) {
  switch (l) {
    case ir::DataLayout::kNCHW: return "kforge::DataLayout::kNCHW";
    case ir::DataLayout::kNHWC: return "kforge::DataLayout::kNHWC";
    case ir::DataLayout::kUndefined: return "kforge::DataLayout::kAnyLayout";
    default: return "kforge::DataLayout::kUndefined";
  }
}

std::string place_text(const ir::Place& p) {
  switch (p.type) {
    case ir::AllocationType::kCpu: return "kforge::CPUPlace()";
    case ir::AllocationType::kGpu: return fmt::format("kforge::GPUPlace({})", p.device_id);
    default: return "kforge::Place{}";
  }
}

}  // namespace

std::string cpp_literal(const AttrConstant& c) {
  using opdef::ArgType;
  switch (c.type) {
    case ArgType::kBool: return c.bool_value ? "true" : "false";
    case ArgType::kInt:
    case ArgType::kInt32: return int32_text(c.int_value);
    case ArgType::kInt64:
    case ArgType::kLong:
    case ArgType::kSizeT: return int64_text(c.int_value);
    case ArgType::kFloat: return float_text(c.float_value, true);
    case ArgType::kDouble: return float_text(c.float_value, false);
    case ArgType::kStr: return fmt::format("std::string({})", string_text(c.string_value));
    case ArgType::kIntList: return list_text("std::vector<int>", c.ints, int32_text);
    case ArgType::kInt64List: return list_text("std::vector<int64_t>", c.ints, plain_int64_text);
    case ArgType::kIntArray: return list_text("kforge::IntArray", c.ints, plain_int64_text);
    case ArgType::kFloatList:
      return list_text("std::vector<float>", c.floats, [](double v) { return float_text(v, true); });
    case ArgType::kDoubleList:
      return list_text("std::vector<double>", c.floats, [](double v) { return float_text(v, false); });
    case ArgType::kBoolList:
      return list_text("std::vector<bool>", c.bools, [](bool v) { return std::string(v ? "true" : "false"); });
    case ArgType::kStrList: return list_text("std::vector<std::string>", c.strings, string_text);
    case ArgType::kScalarList: return list_text("std::vector<kforge::Scalar>", c.scalars, scalar_text);
    case ArgType::kDataType: return cpp_dtype(c.dtype);
    case ArgType::kDataLayout: return layout_text(c.layout);
    case ArgType::kPlace: return place_text(c.place);
    case ArgType::kTensor:
    case ArgType::kTensorList: return "/* tensor */";
    default: break;
  }
  if (opdef::is_scalar_type(c.type)) return scalar_text(c.scalar);
  return "/* unsupported */";
}

namespace {

std::string value_ref(uint32_t v) { return v == kNone ? "null" : fmt::format("v{}", v); }

std::string arg_text(const KernelArg& a) {
  switch (a.kind) {
    case ArgKind::kTensor: return fmt::format("{}={}", a.name, value_ref(a.value));
    case ArgKind::kAbsentTensor: return fmt::format("{}=absent", a.name);
    case ArgKind::kTensorList: {
      std::vector<std::string> parts;
      for (uint32_t v : a.values) parts.push_back(value_ref(v));
      return fmt::format("{}=[{}]", a.name, fmt::join(parts, ", "));
    }
    case ArgKind::kConstant: return fmt::format("{}={}", a.name, cpp_literal(a.constant));
    case ArgKind::kTensorToAttr: return fmt::format("{}=from({})", a.name, value_ref(a.value));
    case ArgKind::kTensorListToAttr: {
      std::vector<std::string> parts;
      for (uint32_t v : a.values) parts.push_back(value_ref(v));
      return fmt::format("{}=from([{}])", a.name, fmt::join(parts, ", "));
    }
    case ArgKind::kSymbolic: {
      std::vector<std::string> parts;
      for (const SymExpr& e : a.symbolic) parts.push_back(e.to_string());
      return fmt::format("{}=sym[{}]", a.name, fmt::join(parts, ", "));
    }
  }
  return a.name;
}

std::string_view buffer_kind_name(BufferKind k) {
  switch (k) {
    case BufferKind::kInput: return "input";
    case BufferKind::kParameter: return "parameter";
    case BufferKind::kConstant: return "constant";
    case BufferKind::kOutput: return "output";
    case BufferKind::kWorkspace: return "workspace";
  }
  return "?";
}

}  // namespace

std::string LoweredProgram::dump() const {
  std::string out = fmt::format("program {}\n", name);
  for (const Symbol& s : symbols) out += fmt::format("symbol s{} = {}\n", s.id, s.name);
  auto vtext = [&](uint32_t v) {
    const LoweredValue& lv = values.at(v);
    return fmt::format("v{}: {}{}", v, ir::dtype_name(lv.dtype), to_string(lv.dims));
  };
  for (const ProgramInput& i : inputs) out += fmt::format("input {} {}\n", i.name, vtext(i.value));
  for (const ProgramParameter& p : parameters) out += fmt::format("parameter {} {}\n", p.name, vtext(p.value));
  for (const ConstantData& c : constants) {
    out += fmt::format("constant {}{}\n", vtext(c.value), c.splat ? " splat" : "");
  }
  for (size_t k = 0; k < calls.size(); ++k) {
    const KernelCall& c = calls[k];
    std::vector<std::string> args, outs;
    for (const KernelArg& a : c.args) args.push_back(arg_text(a));
    for (const CallOutput& o : c.outputs) {
      std::vector<std::string> vs;
      for (uint32_t v : o.values) vs.push_back(v == kNone ? "null" : vtext(v));
      outs.push_back(fmt::format("{}={}", o.name, o.is_list ? "[" + fmt::format("{}", fmt::join(vs, ", ")) + "]" : vs.at(0)));
    }
    out += fmt::format("call {} {} ({}) dtype {}: {} -> {}\n", k, c.kernel, c.pir_name, ir::dtype_name(c.kernel_dtype),
                       fmt::join(args, ", "), fmt::join(outs, ", "));
  }
  for (const ProgramOutput& o : outputs) {
    out += fmt::format("output {} col {} = v{}{}\n", o.name, o.col, o.value, o.copy ? " (copy)" : "");
  }
  for (const Buffer& b : buffers) {
    std::vector<std::string> vs;
    for (uint32_t v : b.values) vs.push_back(fmt::format("v{}", v));
    out += fmt::format("buffer {} {}", b.index, buffer_kind_name(b.kind));
    if (b.kind == BufferKind::kWorkspace) out += fmt::format(" offset {}", b.offset.to_string());
    out += fmt::format(" size {} live [{}, {}] values {}\n", b.size_bytes.to_string(), b.first_call, b.last_call,
                       fmt::join(vs, " "));
  }
  out += fmt::format("workspace {} bytes (unshared {})\n", plan.workspace_bytes.to_string(), plan.unshared_bytes.to_string());
  return out;
}

}  // namespace kforge::passes
