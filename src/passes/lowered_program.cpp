#include "passes/lowered_program.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "opdef/types.h"
#include "support/text.h"

namespace kforge::passes {

bool transpose_moves_no_element(const KernelCall& call, const std::vector<LoweredValue>& values) {
  if (call.op != "transpose" || call.inplace_twin || call.outputs.size() != 1 || call.outputs[0].is_list ||
      call.outputs[0].values.size() != 1 || call.outputs[0].values[0] == kNone) {
    return false;
  }
  const uint32_t x = call.tensor_arg("x");
  const KernelArg* perm = call.arg("perm");
  if (x == kNone || perm == nullptr || perm->kind != ArgKind::kConstant) return false;
  const SymShape& dims = values[x].dims;
  const int64_t rank = static_cast<int64_t>(dims.size());
  if (static_cast<int64_t>(perm->constant.ints.size()) != rank) return false;
  int64_t last = -1;
  for (int64_t axis : perm->constant.ints) {  // output dim k is x's dim perm[k]
    const int64_t a = axis < 0 ? axis + rank : axis;
    if (a < 0 || a >= rank) return false;
    if (dims[static_cast<size_t>(a)].constant() == std::optional<int64_t>(1)) continue;
    if (a < last) return false;
    last = a;
  }
  return values[x].dtype == values[call.outputs[0].values[0]].dtype;
}

std::vector<opdef::InplacePair> view_pairs(const KernelCall& call, const std::vector<LoweredValue>& values) {
  if (call.def == nullptr || call.inplace_twin) return {};
  std::vector<opdef::InplacePair> pairs = call.def->view;
  if (transpose_moves_no_element(call, values)) pairs.push_back(opdef::InplacePair{"x", "out", {}, {}});
  return pairs;
}

std::optional<std::pair<uint32_t, uint32_t>> LoweredProgram::view_values(uint32_t c) const {
  const KernelCall& call = calls.at(c);
  if (transpose_moves_no_element(call, values)) return std::make_pair(call.tensor_arg("x"), call.outputs[0].values[0]);
  if (call.def == nullptr || call.def->view.size() != 1) return std::nullopt;
  // The output the `view:` names (rnn's is its second), not necessarily the first.
  const auto named = std::find_if(call.outputs.begin(), call.outputs.end(),
                                  [&](const CallOutput& o) { return o.name == call.def->view[0].output; });
  if (named == call.outputs.end() || named->is_list || named->values.size() != 1) return std::nullopt;
  const KernelArg* in = call.arg(call.def->view[0].input);
  const uint32_t out = named->values[0];
  if (in == nullptr || in->kind != ArgKind::kTensor || out == kNone) return std::nullopt;
  const LoweredValue& x = values[in->value];
  const LoweredValue& y = values[out];
  // Dims read from a tensor's values just before the call (a reshape to a shape computed from data) are checked
  // there by its infer-meta to hold x's elements: the same bytes, though not the same expression.
  const bool dims_read_before = std::any_of(symbols.begin(), symbols.end(), [&](const Symbol& s) {
    return !s.is_input_dim() && s.before_call && s.call == c;
  });
  if (x.dtype != y.dtype || (x.numel() != y.numel() && !dims_read_before)) return std::nullopt;
  return std::make_pair(in->value, out);
}

const KernelArg* KernelCall::arg(std::string_view name) const {
  for (const KernelArg& a : args) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

uint32_t KernelCall::tensor_arg(std::string_view name) const {
  const KernelArg* a = arg(name);
  return a != nullptr && a->kind == ArgKind::kTensor ? a->value : kNone;
}

std::optional<bool> KernelCall::constant_bool(std::string_view name) const {
  const KernelArg* a = arg(name);
  if (a == nullptr || a->kind != ArgKind::kConstant) return std::nullopt;
  return a->constant.bool_value;
}

std::optional<double> KernelCall::constant_number(std::string_view name) const {
  const KernelArg* a = arg(name);
  if (a == nullptr || a->kind != ArgKind::kConstant) return std::nullopt;
  const AttrConstant& c = a->constant;
  switch (c.type) {
    case opdef::ArgType::kFloat:
    case opdef::ArgType::kDouble: return c.float_value;
    case opdef::ArgType::kScalar:
    case opdef::ArgType::kScalarInt:
    case opdef::ArgType::kScalarInt64:
    case opdef::ArgType::kScalarFloat:
    case opdef::ArgType::kScalarDouble:
      return c.scalar.is_floating ? c.scalar.float_value : static_cast<double>(c.scalar.int_value);
    default: return static_cast<double>(c.int_value);
  }
}

SymExpr LoweredValue::bytes() const { return numel() * static_cast<int64_t>(ir::dtype_size(dtype)); }

SymExpr LoweredValue::buffer_bytes() const {
  return capacity.empty() ? bytes() : sym_numel(capacity) * static_cast<int64_t>(ir::dtype_size(dtype));
}

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

namespace {

// The dump's notation for constants: what the value is, never how a backend spells it (codegen owns that):
// `true`, `-3`, `1e-05`, `"NCHW"`, `[1, -2]`, `float32`, `NCHW`, `gpu:0`, scalars as `2.5:float32`.
std::string number_text(double v) {
  std::string s = fmt::format("{}", v);
  if (std::isfinite(v) && s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

std::string quoted(const std::string& s) { return c_string_literal(s); }

std::string scalar_text(const ScalarConstant& s) {
  std::string v;
  if (s.dtype == ir::DataType::kBool) {
    v = s.int_value != 0 ? "true" : "false";
  } else {
    v = s.is_floating ? number_text(s.float_value) : fmt::format("{}", s.int_value);
  }
  return fmt::format("{}:{}", v, ir::dtype_name(s.dtype));
}

template <typename T, typename F>
std::string list_text(const std::vector<T>& items, F&& each) {
  std::vector<std::string> parts;
  for (const T& item : items) parts.push_back(each(item));
  return fmt::format("[{}]", fmt::join(parts, ", "));
}

std::string place_text(const ir::Place& p) {
  switch (p.type) {
    case ir::AllocationType::kCpu: return "cpu";
    case ir::AllocationType::kGpu: return fmt::format("gpu:{}", p.device_id);
    default: return "undefined";
  }
}

}  // namespace

std::string constant_text(const AttrConstant& c) {
  using opdef::ArgType;
  auto integer = [](int64_t v) { return fmt::format("{}", v); };
  switch (c.type) {
    case ArgType::kBool: return c.bool_value ? "true" : "false";
    case ArgType::kInt:
    case ArgType::kInt32:
    case ArgType::kInt64:
    case ArgType::kLong:
    case ArgType::kSizeT: return integer(c.int_value);
    case ArgType::kFloat:
    case ArgType::kDouble: return number_text(c.float_value);
    case ArgType::kStr: return quoted(c.string_value);
    case ArgType::kIntList:
    case ArgType::kInt64List:
    case ArgType::kIntArray: return list_text(c.ints, integer);
    case ArgType::kFloatList:
    case ArgType::kDoubleList: return list_text(c.floats, number_text);
    case ArgType::kBoolList: return list_text(c.bools, [](bool v) { return std::string(v ? "true" : "false"); });
    case ArgType::kStrList: return list_text(c.strings, quoted);
    case ArgType::kScalarList: return list_text(c.scalars, scalar_text);
    case ArgType::kDataType: return std::string(ir::dtype_name(c.dtype));
    case ArgType::kDataLayout: return std::string(ir::layout_name(c.layout));
    case ArgType::kPlace: return place_text(c.place);
    case ArgType::kTensor:
    case ArgType::kTensorList: return "tensor";
    default: break;
  }
  if (opdef::is_scalar_type(c.type)) return scalar_text(c.scalar);
  return "unsupported";
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
    case ArgKind::kConstant: return fmt::format("{}={}", a.name, constant_text(a.constant));
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
    case BufferKind::kRuntime: return "run-time";
  }
  return "?";
}

}  // namespace

std::string LoweredProgram::dump() const {
  std::string out = fmt::format("program {}\n", name);
  for (const Symbol& s : symbols) {
    out += fmt::format("symbol s{} = {}", s.id, s.name);
    if (!s.is_input_dim()) out += fmt::format(" (after call {}, at most {})", s.call, s.bound.to_string());
    out += "\n";
  }
  auto vtext = [&](uint32_t v) {
    const LoweredValue& lv = values.at(v);
    return fmt::format("v{}: {}{}", v, ir::dtype_name(lv.dtype), to_string(lv.dims));
  };
  for (const ProgramInput& i : inputs) out += fmt::format("input {} {}\n", i.name, vtext(i.value));
  for (const ProgramParameter& p : parameters) {
    out += fmt::format("parameter {} {}{}\n", p.name, vtext(p.value),
                       p.stored_dtype != ir::DataType::kUndefined
                           ? fmt::format(" (stored {})", ir::dtype_name(p.stored_dtype))
                           : "");
  }
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
    for (uint32_t v : b.values) {
      const SymExpr& at = values.at(v).buffer_offset;
      vs.push_back(at.constant() == std::optional<int64_t>(0) ? fmt::format("v{}", v)
                                                               : fmt::format("v{}@+{}", v, at.to_string()));
    }
    out += fmt::format("buffer {} {}", b.index, buffer_kind_name(b.kind));
    if (b.kind == BufferKind::kWorkspace) out += fmt::format(" offset {}", b.offset.to_string());
    out += fmt::format(" size {} live [{}, {}]", b.size_bytes.to_string(), b.first_call, b.last_call);
    out += b.scratch_at == kNone ? fmt::format(" values {}\n", fmt::join(vs, " "))
                                 : fmt::format(" scratch of call {}\n", b.scratch_at);
  }
  out += fmt::format("workspace {} bytes (unshared {})\n", plan.workspace_bytes.to_string(), plan.unshared_bytes.to_string());
  return out;
}

void LoweredProgram::move_values_into(uint32_t from, uint32_t to, const SymExpr& offset) {
  Buffer& f = buffers.at(from);
  Buffer& t = buffers.at(to);
  for (uint32_t m : f.values) {
    LoweredValue& mv = values[m];
    mv.buffer_offset = mv.buffer_offset + offset;
    mv.buffer = t.index;
    t.values.push_back(m);
  }
  t.first_call = std::min(t.first_call, f.first_call);
  t.last_call = std::max(t.last_call, f.last_call);
  std::sort(t.values.begin(), t.values.end(), [&](uint32_t a, uint32_t b) {
    const uint32_t da = values[a].defined_by, db = values[b].defined_by;
    return da != db ? da < db : a < b;
  });
  f.values.clear();
  f.size_bytes = 0;
}

std::vector<std::vector<uint32_t>> LoweredProgram::value_readers() const {
  std::vector<std::vector<uint32_t>> readers(values.size());
  for (uint32_t c = 0; c < calls.size(); ++c) {
    for (const KernelArg& a : calls[c].args) {
      std::vector<uint32_t> vs = a.values;
      if (a.value != kNone) vs.push_back(a.value);
      for (uint32_t v : vs) {
        if (readers[v].empty() || readers[v].back() != c) readers[v].push_back(c);
      }
    }
  }
  return readers;
}

EqualDims::EqualDims(const std::vector<DimEquality>& equalities) {
  for (const DimEquality& e : equalities) {
    const SymExpr a = resolve(e.a), b = resolve(e.b);
    if (a != b) canonical_[b] = a;
  }
}

SymExpr EqualDims::resolve(SymExpr d) const {
  for (auto it = canonical_.find(d); it != canonical_.end(); it = canonical_.find(d)) d = it->second;
  return d;
}

}  // namespace kforge::passes
