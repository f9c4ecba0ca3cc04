#include "codegen/program_context.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>

#include "codegen/cpp_text.h"
#include "codegen/fused_cpu.h"
#include "codegen/multikernel_context.h"
#include "codegen/size_table.h"
#include "output/banner.h"

namespace kforge::codegen {

namespace {

using passes::ArgKind;
using passes::Buffer;
using passes::BufferKind;
using passes::KernelArg;
using passes::KernelCall;
using passes::LoweredProgram;
using passes::LoweredValue;
using passes::SymExpr;
using passes::ValueRole;
using tmpl::List;
using tmpl::Value;

constexpr int kMaxRank = 9;  // kforge::kMaxRank of the runtime

/// Builds the context; `ok` turns false at the first problem reported.
class ContextBuilder {
 public:
  /// `sizes`: the size table to number the sizes by (SizeTable::canonical of an earlier build), or empty.
  ContextBuilder(const LoweredProgram& program, const SourceManager& sources, const ProgramCodegenOptions& options,
                 DiagnosticEngine& diags, SizeTable sizes = {})
      : p_(program), sources_(sources), options_(options), diags_(diags), sizes_(std::move(sizes)) {}

  std::optional<Value> build();
  const SizeTable& sizes() const { return sizes_; }

 private:
  void error(SourceLoc loc, std::string message) {
    diags_.error(loc, std::move(message));
    ok_ = false;
  }

  /// A size where the class uses it: a constant, a dim, or its entry of the size table (`sizes_[k]`).
  std::string sym(const SymExpr& e) { return sizes_.ref(e, member_size); }
  static std::string member_size(uint32_t k) { return "sizes_[" + std::to_string(k) + "]"; }
  std::string dims_init(const passes::SymShape& dims) {
    std::string out = "{";
    for (size_t i = 0; i < dims.size(); ++i) out += (i ? ", " : "") + sym(dims[i]);
    return out + "}";
  }
  std::string shape_text(const std::vector<int64_t>& dims) const {
    std::string out = "[";
    for (size_t i = 0; i < dims.size(); ++i) out += (i ? ", " : "") + (dims[i] < 0 ? std::string("?") : std::to_string(dims[i]));
    return out + "]";
  }
  std::string shape_text(const passes::SymShape& dims) {
    std::string out = "[";
    for (size_t i = 0; i < dims.size(); ++i) out += (i ? ", " : "") + sym(dims[i]);
    return out + "]";
  }
  std::string where(SourceLoc loc) const {
    if (!loc.valid()) return program_display_;
    const LineCol lc = sources_.line_col(loc);
    return program_display_ + ":" + std::to_string(lc.line) + ":" + std::to_string(lc.col);
  }
  std::string dtype_of(ir::DataType dtype, SourceLoc loc, const std::string& what) {
    std::optional<std::string> text = runtime_dtype(dtype);
    if (!text) {
      error(loc, what + " has dtype " + std::string(ir::dtype_name(dtype)) + ", which the kforge runtime cannot represent");
      return "kforge::DataType::kUndefined";
    }
    return *text;
  }

  /// The C++ expression of a tensor value.
  std::string expr(uint32_t value_index) const {
    const LoweredValue& v = p_.value(value_index);
    switch (v.role) {
      case ValueRole::kInput: return input_idents_.at(v.role_index);
      case ValueRole::kParameter: return "parameters_[" + std::to_string(v.role_index) + "]";
      case ValueRole::kConstant: return "constants_[" + std::to_string(v.role_index) + "]";
      case ValueRole::kComputed: break;
    }
    auto it = slots_.find(value_index);
    return it == slots_.end() ? "values_[?]" : "values_[" + std::to_string(it->second) + "]";
  }
  std::string trace_key(const LoweredValue& v) const {
    return v.source_id.empty() ? "v" + std::to_string(v.source.index) : v.source_id;
  }

  /// The data-dependent symbol among `e`'s that is known last (bound by the latest call), or kNone: the bind_s<id>()
  /// function that computes `e` (or lays out a value sized by it).
  uint32_t late_symbol(const SymExpr& e) const {
    uint32_t best = passes::kNone;
    for (uint32_t id : e.symbols()) {
      if (id >= p_.symbols.size() || p_.symbols[id].is_input_dim()) continue;
      if (best == passes::kNone || bound_later(id, best)) best = id;
    }
    return best;
  }
  uint32_t late_symbol(const passes::SymShape& dims) const {
    uint32_t best = passes::kNone;
    for (const SymExpr& d : dims) {
      const uint32_t id = late_symbol(d);
      if (id != passes::kNone && (best == passes::kNone || bound_later(id, best))) best = id;
    }
    return best;
  }
  /// The order run() binds data-dependent symbols in: by call; a call's dims read before it (from its infer-meta)
  /// before those its kernel finds; then by id.
  bool bound_later(uint32_t a, uint32_t b) const {
    auto key = [&](uint32_t id) {
      const passes::Symbol& s = p_.symbols[id];
      return std::tuple(s.call, s.before_call ? 0 : 1, id);
    };
    return key(a) > key(b);
  }
  /// A value laid out only once a data-dependent dim is known (its dims mention one; not the op's own result, which
  /// has a capacity).
  bool is_late(const LoweredValue& v) const { return v.capacity.empty() && late_symbol(v.dims) != passes::kNone; }

  void add_symbols(Value& ctx);
  List data_symbols_value();
  void add_late_sizes(List& data_symbols);
  void add_inputs(Value& ctx);
  void add_parameters(Value& ctx);
  void add_values(Value& ctx);
  void add_outputs(Value& ctx);
  void add_constants(Value& ctx);
  Value call_context(const KernelCall& call, uint32_t index);
  std::string bind_arg(const KernelCall& call, uint32_t index, const KernelArg& arg, List& pre);
  std::string named_attr(const KernelCall& call, const KernelArg& arg, const std::string& init);
  std::string context_name(ir::DataType dtype, SourceLoc loc);
  void declare_kernel(const KernelCall& call);
  /// The infer-meta call that gives a call's data-dependent dims before it runs (Symbol::before_call), or none.
  std::optional<Value> run_time_meta(const KernelCall& call, uint32_t index, const List& args, List& pre);
  static std::string meta_output(uint32_t index, const std::string& output) {
    return "kf_c" + std::to_string(index) + "_meta_" + cpp_identifier(output);
  }

  const LoweredProgram& p_;
  const SourceManager& sources_;
  const ProgramCodegenOptions& options_;
  DiagnosticEngine& diags_;
  bool ok_ = true;
  std::string program_display_;
  std::vector<std::string> input_idents_;
  std::map<uint32_t, uint32_t> slots_;  // computed value index -> values_ slot
  IdentifierScope attr_names_;
  std::map<std::string, std::string> attr_by_text_;  // "type = init" -> name
  List attrs_;
  std::map<std::string, std::string> contexts_;  // name -> dtype
  std::map<std::string, Value> kernel_decls_;
  std::map<std::string, Value> meta_decls_;  // infer-meta functions run before a call (run_time_meta)
  std::vector<std::string> kernel_order_;
  SizeTable sizes_;  // every size of a dynamic program, computed once per new set of dims
};

void ContextBuilder::add_symbols(Value& ctx) {
  List symbols;
  for (const passes::Symbol& s : p_.symbols) {
    if (!s.is_input_dim()) continue;  // data_symbols_value()
    Value sv = Value::map();
    const std::string input = input_idents_.at(s.input);
    sv.set("name", "s" + std::to_string(s.id));
    sv.set("id", static_cast<int64_t>(s.id));
    sv.set("input", input);
    sv.set("axis", static_cast<int64_t>(s.axis));
    sv.set("meaning", p_.inputs.at(s.input).name + ".dims[" + std::to_string(s.axis) + "]");
    sv.set("init", input + ".dims[" + std::to_string(s.axis) + "]");
    symbols.push_back(std::move(sv));
  }
  ctx.set("symbols", Value(std::move(symbols)));
}

void ContextBuilder::add_inputs(Value& ctx) {
  List inputs;
  for (size_t i = 0; i < p_.inputs.size(); ++i) {
    const passes::ProgramInput& in = p_.inputs[i];
    const std::string dtype = dtype_of(in.dtype, in.loc, "input '" + in.name + "'");
    if (in.declared_dims.size() > static_cast<size_t>(kMaxRank)) error(in.loc, "input '" + in.name + "' has rank above 9");
    // dtype, rank and place, then each dim: a declared one exactly, a dynamic one (`?`) at least 0.
    std::string cond = input_idents_[i] + ".dtype != " + dtype + " || " + input_idents_[i] +
                       ".ndim != " + std::to_string(in.declared_dims.size()) + " || " + input_idents_[i] +
                       ".place.backend != kforge::Backend::kCPU";
    for (size_t a = 0; a < in.declared_dims.size(); ++a) {
      const std::string dim = input_idents_[i] + ".dims[" + std::to_string(a) + "]";
      if (in.declared_dims[a] >= 0) {
        cond += " || " + dim + " != " + std::to_string(in.declared_dims[a]);
      } else {
        cond += " || " + dim + " < 0";
      }
    }
    Value iv = Value::map();
    iv.set("name", in.name);
    iv.set("ident", input_idents_[i]);
    iv.set("dtype", dtype);
    iv.set("dtype_name", std::string(ir::dtype_name(in.dtype)));
    iv.set("rank", static_cast<int64_t>(in.declared_dims.size()));
    iv.set("shape_text", shape_text(in.declared_dims));
    std::string dims = "{";
    for (size_t a = 0; a < in.declared_dims.size(); ++a) dims += (a ? ", " : "") + std::to_string(in.declared_dims[a]);
    iv.set("dims", dims + "}");
    iv.set("condition", cond);
    inputs.push_back(std::move(iv));
  }
  ctx.set("inputs", Value(std::move(inputs)));
}

void ContextBuilder::add_parameters(Value& ctx) {
  List params;
  IdentifierScope fields;
  std::map<std::string, size_t> first;  // name -> index of the parameter op that defines it first
  for (size_t i = 0; i < p_.parameters.size(); ++i) {
    const passes::ProgramParameter& param = p_.parameters[i];
    if (auto [it, fresh] = first.emplace(param.name, i); !fresh) {
      // Binding by name and the name-sorted .pdiparams file both need one tensor per name.
      Diagnostic d{Severity::kError, param.loc, "parameter '" + param.name + "' is defined twice", {}};
      d.note("first defined here", p_.parameters[it->second].loc);
      diags_.report(std::move(d));
      ok_ = false;
    }
    const LoweredValue& v = p_.value(param.value);
    const std::string dtype = dtype_of(v.dtype, param.loc, "parameter '" + param.name + "'");
    if (v.dims.size() > static_cast<size_t>(kMaxRank)) error(param.loc, "parameter '" + param.name + "' has rank above 9");
    std::string dims = "{";
    for (size_t a = 0; a < v.dims.size(); ++a) {
      const std::optional<int64_t> d = v.dims[a].constant();
      dims += (a ? ", " : "") + std::to_string(d ? *d : -1);
    }
    dims += "}";
    Value pv = Value::map();
    pv.set("index", static_cast<int64_t>(i));
    pv.set("name", param.name);
    pv.set("ident", fields.take(param.name));
    pv.set("dtype", dtype);
    pv.set("dtype_name", std::string(ir::dtype_name(v.dtype)));
    pv.set("rank", static_cast<int64_t>(v.dims.size()));
    pv.set("dims", dims);
    pv.set("shape_text", passes::to_string(v.dims));
    params.push_back(std::move(pv));
  }
  ctx.set("parameters", Value(std::move(params)));
  // Paddle's save_inference_model writes the parameters sorted by name (Python's sorted(): code point order,
  // which is the byte order of UTF-8 and of std::string's operator<), whatever their order in the program.
  List file_order;
  for (const auto& [name, index] : first) file_order.push_back(Value(static_cast<int64_t>(index)));
  ctx.set("parameter_file_order", Value(std::move(file_order)));
}

void ContextBuilder::add_values(Value& ctx) {
  List values;
  for (const LoweredValue& v : p_.values) {
    if (v.role != ValueRole::kComputed || v.buffer == passes::kNone) continue;
    if (options_.fusion && passes::is_fused_internal(*options_.fusion, v.index)) continue;  // lives in registers
    const Buffer& b = p_.buffers.at(v.buffer);
    if (b.kind != BufferKind::kWorkspace && b.kind != BufferKind::kOutput && b.kind != BufferKind::kRuntime) {
      error(v.loc, "internal: computed value " + v.source_id + " is stored in a buffer the caller owns");
      continue;
    }
    if (v.dims.size() > static_cast<size_t>(kMaxRank)) error(v.loc, "value " + v.source_id + " has rank above 9");
    const uint32_t slot = static_cast<uint32_t>(slots_.size());
    slots_[v.index] = slot;
    Value vv = Value::map();
    vv.set("slot", static_cast<int64_t>(slot));
    vv.set("dtype", dtype_of(v.dtype, v.loc, "value " + v.source_id));
    // A data-dependent result is laid out for its capacity; a value sized by it only in bind_s<id>().
    vv.set("late", is_late(v));
    if (!is_late(v)) vv.set("dims", dims_init(v.capacity.empty() ? v.dims : v.capacity));
    vv.set("in_workspace", b.kind == BufferKind::kWorkspace);
    if (v.buffer_offset != 0 && b.kind == BufferKind::kOutput) {
      error(v.loc, "internal: value " + v.source_id + " lies inside a buffer the caller owns");
    }
    if (b.kind == BufferKind::kRuntime) {
      vv.set("comment", v.label());
      values.push_back(std::move(vv));  // laid out by bind_s<id>(): data_symbols_value()
      continue;
    }
    // A value in its slice of a concat's output (passes/concat_in_place.h) starts buffer_offset bytes in.
    vv.set("offset", b.kind != BufferKind::kWorkspace ? std::string("0")
                     : v.buffer_offset == 0       ? sym(b.offset)
                                                  : sym(b.offset + SymExpr(v.buffer_offset)));
    // The dims of a dynamic value are in its init_tensor() line already: the comment gives the static ones.
    std::string comment = v.label() + ": " + std::string(ir::dtype_name(v.dtype)) +
                          (passes::static_dims(v.dims) ? shape_text(v.dims) : std::string());
    if (!v.capacity.empty()) comment += ", laid out for its most rows";
    if (v.defined_by != passes::kNone) comment += ", " + p_.calls.at(v.defined_by).pir_name;
    if (b.kind == BufferKind::kOutput) comment += ", in output '" + p_.outputs.at(b.role_index).name + "'";
    vv.set("comment", comment);
    values.push_back(std::move(vv));
  }
  ctx.set("values", Value(std::move(values)));
}

void ContextBuilder::add_outputs(Value& ctx) {
  List outputs;
  IdentifierScope names({"inputs", "outputs"});
  for (const std::string& in : input_idents_) names.take(in);
  for (size_t i = 0; i < p_.outputs.size(); ++i) {
    const passes::ProgramOutput& out = p_.outputs[i];
    const LoweredValue& v = p_.value(out.value);
    Value ov = Value::map();
    ov.set("index", static_cast<int64_t>(i));
    ov.set("name", out.name);
    ov.set("ident", names.take(out.name));
    ov.set("dtype", dtype_of(v.dtype, out.loc, "output '" + out.name + "'"));
    ov.set("dtype_name", std::string(ir::dtype_name(v.dtype)));
    ov.set("rank", static_cast<int64_t>(v.dims.size()));
    // An output sized by data is allocated after the calls (it is always a copy: passes/lower.cpp).
    const bool late = late_symbol(v.dims) != passes::kNone;
    ov.set("late", late);
    ov.set("dims", dims_init(v.dims));
    ov.set("shape_text", passes::to_string(v.dims));  // the header's comment: in the dumps' notation
    ov.set("copy", out.copy);
    ov.set("source", expr(out.value));
    List aliases;
    if (!out.copy) {
      if (v.buffer == passes::kNone || p_.buffers.at(v.buffer).kind != BufferKind::kOutput) {
        error(out.loc, "internal: output '" + out.name + "' is neither copied nor computed into the caller's tensor");
      } else {
        for (uint32_t alias : p_.buffers.at(v.buffer).values) {
          auto it = slots_.find(alias);
          if (it != slots_.end()) aliases.push_back("values_[" + std::to_string(it->second) + "]");
        }
      }
    }
    ov.set("aliases", Value(std::move(aliases)));
    outputs.push_back(std::move(ov));
  }
  ctx.set("outputs", Value(std::move(outputs)));
}

void ContextBuilder::add_constants(Value& ctx) {
  List constants;
  for (size_t i = 0; i < p_.constants.size(); ++i) {
    const passes::ConstantData& c = p_.constants[i];
    const std::optional<std::string> elem = element_type(c.dtype);
    if (!elem) {
      error(c.loc, "a constant of dtype " + std::string(ir::dtype_name(c.dtype)) + " cannot be emitted");
      continue;
    }
    const bool floating = ir::is_floating(c.dtype);
    auto literal = [&](int64_t k) -> std::string {
      if (c.dtype == ir::DataType::kFloat32) return cpp_float(static_cast<float>(c.float_at(k)));
      if (c.dtype == ir::DataType::kFloat64) return cpp_double(c.float_at(k));
      if (c.dtype == ir::DataType::kBool) return c.int_at(k) != 0 ? "true" : "false";
      if (c.dtype == ir::DataType::kInt64) return "int64_t{" + std::to_string(c.int_at(k)) + "}";
      return std::to_string(c.int_at(k));
    };
    (void)floating;
    const int64_t numel = c.numel();
    const bool splat = c.splat || numel == 0;
    List lines;
    if (!splat) {
      std::string line;
      for (int64_t k = 0; k < numel; ++k) {
        line += literal(k) + ",";
        if (line.size() > 90 || k + 1 == numel) {
          lines.push_back(line);
          line.clear();
        } else {
          line += " ";
        }
      }
    }
    std::vector<int64_t> dims = c.dims;
    std::string dims_text = "{";
    for (size_t a = 0; a < dims.size(); ++a) dims_text += (a ? ", " : "") + std::to_string(dims[a]);
    dims_text += "}";
    Value cv = Value::map();
    cv.set("index", static_cast<int64_t>(i));
    cv.set("data_name", "kConstantData" + std::to_string(i));
    cv.set("element_type", *elem);
    cv.set("dtype", dtype_of(c.dtype, c.loc, "a constant"));
    cv.set("dims", dims_text);
    cv.set("numel", numel);
    cv.set("splat", splat);
    cv.set("splat_value", numel > 0 ? literal(0) : std::string(c.dtype == ir::DataType::kBool ? "false" : "0"));
    cv.set("data_lines", Value(std::move(lines)));
    cv.set("comment", std::string(ir::dtype_name(c.dtype)) + shape_text(c.dims) + (c.splat ? " (every element equal)" : "") +
                          ", folded from " + where(c.loc));
    constants.push_back(std::move(cv));
  }
  ctx.set("constants", Value(std::move(constants)));
}

std::string ContextBuilder::context_name(ir::DataType dtype, SourceLoc loc) {
  std::string name = "kCtx";
  bool upper = true;
  const std::string_view spelled = ir::dtype_name(dtype);
  for (char c : spelled) {
    if (c == '_') {
      upper = true;
      continue;
    }
    name += upper && c >= 'a' && c <= 'z' ? static_cast<char>(c - 32) : c;
    upper = false;
  }
  contexts_[name] = dtype_of(dtype, loc, "a kernel call");
  return name;
}

std::string ContextBuilder::named_attr(const KernelCall& call, const KernelArg& arg, const std::string& init) {
  // Shared only by the same argument of the same kernel (the strides of every conv2d, say), so each name
  // says what it is.
  const std::string type = constant_type(arg.type);
  const std::string key = call.kernel + "." + arg.name + ": " + type + " = " + init;
  auto it = attr_by_text_.find(key);
  if (it != attr_by_text_.end()) return it->second;
  const std::string name = attr_names_.take("kAttr_" + call.kernel + "_" + arg.name);
  attr_by_text_[key] = name;
  Value av = Value::map();
  av.set("name", name);
  av.set("type", type);
  av.set("init", init);
  attrs_.push_back(std::move(av));
  return name;
}

std::string ContextBuilder::bind_arg(const KernelCall& call, uint32_t index, const KernelArg& arg, List& pre) {
  const std::string local = "kf_c" + std::to_string(index) + "_" + cpp_identifier(arg.name);
  const std::string call_index = std::to_string(index);
  auto tensor_list = [&](const std::vector<uint32_t>& values, const std::string& name) {
    std::string items;
    for (uint32_t v : values) items += (items.empty() ? "&" : ", &") + expr(v);
    pre.push_back("const kforge::Tensor* const " + name + "[] = {" + items + "};");
    return "kforge::TensorList{" + name + ", " + std::to_string(values.size()) + "}";
  };
  switch (arg.kind) {
    case ArgKind::kTensor: return (arg.optional ? "&" : "") + expr(arg.value);
    case ArgKind::kAbsentTensor: return arg.type == opdef::ArgType::kTensorList ? "kforge::TensorList{}" : "nullptr";
    case ArgKind::kTensorList:
      if (arg.values.empty()) return "kforge::TensorList{}";
      return tensor_list(arg.values, local + "_list");
    case ArgKind::kConstant: {
      std::string why;
      std::optional<std::string> text = constant_literal(arg.constant, &why);
      if (!text) {
        error(call.loc, "argument '" + arg.name + "' of " + call.pir_name + " is " + why +
                            ", which the generated code cannot express");
        return "{}";
      }
      return is_inline_constant(arg.type) ? *text : named_attr(call, arg, *text);
    }
    case ArgKind::kTensorToAttr:
    case ArgKind::kTensorListToAttr: {
      const bool is_scalar = opdef::is_scalar_type(arg.type);
      const bool is_int_array = arg.type == opdef::ArgType::kIntArray || arg.type == opdef::ArgType::kIntList ||
                                arg.type == opdef::ArgType::kInt64List;
      if (!is_scalar && !is_int_array) {
        error(call.loc, "argument '" + arg.name + "' of " + call.pir_name + " comes from a tensor, which only IntArray "
                        "and Scalar arguments can");
        return "{}";
      }
      if (arg.kind == ArgKind::kTensorListToAttr && is_scalar) {
        error(call.loc, "argument '" + arg.name + "' of " + call.pir_name + " is a Scalar made of a list of tensors");
        return "{}";
      }
      const std::string holder = is_scalar ? "kforge::Scalar" : "kforge::IntArray";
      pre.push_back(holder + " " + local + ";");
      std::string source;
      if (arg.kind == ArgKind::kTensorToAttr) {
        source = (is_scalar ? "kforge::scalar_from_tensor(" : "kforge::int_array_from_tensor(") + expr(arg.value) + ", &" +
                 local + ")";
      } else {
        source = "kforge::int_array_from_tensors(" + tensor_list(arg.values, local + "_list") + ", &" + local + ")";
      }
      pre.push_back("KFORGE_CALL(" + call_index + ", " + source + ");");
      if (arg.type == opdef::ArgType::kIntList) {
        pre.push_back("const std::vector<int> " + local + "_ints(" + local + ".begin(), " + local + ".end());");
        return local + "_ints";
      }
      if (arg.type == opdef::ArgType::kInt64List) return local + ".values()";
      return local;
    }
    case ArgKind::kSymbolic: {
      std::vector<std::string> items;
      for (const SymExpr& e : arg.symbolic) items.push_back(sym(e));
      std::string joined;
      for (const std::string& item : items) joined += (joined.empty() ? "" : ", ") + item;
      switch (arg.type) {
        case opdef::ArgType::kIntArray:
          pre.push_back("const kforge::IntArray " + local + "{" + joined + "};");
          return local;
        case opdef::ArgType::kInt64List:
          pre.push_back("const std::vector<int64_t> " + local + "{" + joined + "};");
          return local;
        case opdef::ArgType::kIntList: {
          std::string casted;
          for (const std::string& item : items) casted += (casted.empty() ? "" : ", ") + ("static_cast<int>(" + item + ")");
          pre.push_back("const std::vector<int> " + local + "{" + casted + "};");
          return local;
        }
        case opdef::ArgType::kInt:
        case opdef::ArgType::kInt32:
          if (items.size() == 1) return "static_cast<int>(" + items[0] + ")";
          break;
        case opdef::ArgType::kInt64:
          if (items.size() == 1) return "static_cast<int64_t>(" + items[0] + ")";
          break;
        default:
          if (opdef::is_scalar_type(arg.type) && items.size() == 1) {
            pre.push_back("const kforge::Scalar " + local + "(static_cast<int64_t>(" + items[0] + "));");
            return local;
          }
          break;
      }
      error(call.loc, "argument '" + arg.name + "' of " + call.pir_name + " depends on the input dims in a way the "
                      "generated code cannot express");
      return "{}";
    }
  }
  return "{}";
}

void ContextBuilder::declare_kernel(const KernelCall& call) {
  if (kernel_decls_.count(call.kernel) != 0) return;
  List params;
  params.push_back("const kforge::KernelContext& ctx");
  for (const KernelArg& arg : call.args) {
    params.push_back(param_type(arg.type, arg.optional) + " " + cpp_identifier(arg.name));
  }
  for (const passes::CallOutput& out : call.outputs) {
    params.push_back(std::string(out.is_list ? "kforge::MutableTensorList " : "kforge::Tensor* ") + cpp_identifier(out.name));
  }
  Value decl = Value::map();
  decl.set("name", call.kernel);
  decl.set("params", Value(std::move(params)));
  kernel_decls_[call.kernel] = decl;
  kernel_order_.push_back(call.kernel);
}

std::optional<Value> ContextBuilder::run_time_meta(const KernelCall& call, uint32_t index, const List& args,
                                                   List& pre) {
  const bool needed = std::any_of(p_.symbols.begin(), p_.symbols.end(), [&](const passes::Symbol& s) {
    return !s.is_input_dim() && s.before_call && s.call == index;
  });
  if (!needed) return std::nullopt;
  if (call.infer_meta.empty()) {
    error(call.loc, call.pir_name + ": its output dims are read from a tensor at run time, but its op has no "
                    "infer_meta function to compute them");
    return std::nullopt;
  }
  // The infer-meta's arguments: the kernel's own where they are the same (a shape converted from a tensor once).
  std::map<std::string, std::string> by_name;
  for (size_t i = 0; i < call.args.size(); ++i) by_name[call.args[i].name] = args[i].as_string();
  List meta_args, params, outputs;
  for (const KernelArg& arg : call.infer_meta_args) {
    auto it = by_name.find(arg.name);
    meta_args.push_back(it != by_name.end() ? it->second : bind_arg(call, index, arg, pre));
    params.push_back(param_type(arg.type, arg.optional) + " " + cpp_identifier(arg.name));
  }
  for (const passes::CallOutput& out : call.outputs) {
    if (out.is_list) {
      error(call.loc, call.pir_name + ": its output dims are read from a tensor at run time, which kforge does not "
                      "do for a list of outputs ('" + out.name + "')");
      return std::nullopt;
    }
    outputs.push_back(meta_output(index, out.name));
    meta_args.push_back("&" + meta_output(index, out.name));
    params.push_back("kforge::Tensor* " + cpp_identifier(out.name));
  }
  if (!meta_decls_.contains(call.infer_meta)) {
    Value decl = Value::map();
    decl.set("name", call.infer_meta);
    decl.set("params", Value(std::move(params)));
    meta_decls_[call.infer_meta] = std::move(decl);
  }
  Value meta = Value::map();
  meta.set("function", call.infer_meta);
  meta.set("args", Value(std::move(meta_args)));
  meta.set("outputs", Value(std::move(outputs)));
  return meta;
}

Value ContextBuilder::call_context(const KernelCall& call, uint32_t index) {
  declare_kernel(call);
  List pre, args, traces;
  for (const KernelArg& arg : call.args) args.push_back(bind_arg(call, index, arg, pre));
  for (const passes::CallOutput& out : call.outputs) {
    std::vector<std::string> ptrs;
    for (uint32_t v : out.values) {
      // A data-dependent result: its kernel wrote the last run's count into its dims; lay it out for the most again.
      if (v != passes::kNone && !p_.value(v).capacity.empty()) {
        const LoweredValue& value = p_.value(v);
        pre.push_back("init_tensor(" + expr(v) + ", " + dtype_of(value.dtype, value.loc, "value " + value.source_id) +
                      ", " + dims_init(value.capacity) + ", " + expr(v) + ".data);");
      }
      if (v == passes::kNone || p_.value(v).buffer == passes::kNone) {
        if (!out.optional && !out.is_list) {
          error(call.loc, "internal: output '" + out.name + "' of " + call.pir_name + " is needed by its kernel but has no buffer");
        }
        ptrs.push_back("nullptr");
        continue;
      }
      ptrs.push_back("&" + expr(v));
      if (options_.trace_hooks) {
        Value t = Value::map();
        t.set("key", trace_key(p_.value(v)));
        t.set("expr", expr(v));
        traces.push_back(std::move(t));
      }
    }
    if (!out.is_list) {
      args.push_back(ptrs.empty() ? "nullptr" : ptrs[0]);
      continue;
    }
    const std::string name = "kf_c" + std::to_string(index) + "_" + cpp_identifier(out.name) + "_list";
    std::string items;
    for (const std::string& ptr : ptrs) items += (items.empty() ? "" : ", ") + ptr;
    pre.push_back("kforge::Tensor* const " + name + "[] = {" + items + "};");
    args.push_back("kforge::MutableTensorList{" + name + ", " + std::to_string(ptrs.size()) + "}");
  }
  std::optional<Value> meta = run_time_meta(call, index, args, pre);
  Value cv = Value::map();
  cv.set("index", static_cast<int64_t>(index));
  cv.set("meta", meta ? std::move(*meta) : Value(false));
  cv.set("kernel", call.kernel);
  cv.set("callee", multi_kernel_callee(options_.multi_kernel, call, index));
  cv.set("pir_name", call.pir_name);
  cv.set("where", where(call.loc));
  cv.set("ctx", context_name(call.kernel_dtype, call.loc));
  cv.set("pre", Value(std::move(pre)));
  cv.set("args", Value(std::move(args)));
  cv.set("traces", Value(std::move(traces)));
  return cv;
}

List ContextBuilder::data_symbols_value() {
  std::vector<uint32_t> order;  // the data-dependent symbols that are bound, in call order
  for (const passes::Symbol& s : p_.symbols) {
    if (!s.is_input_dim() && s.call != passes::kNone) order.push_back(s.id);
  }
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return bound_later(b, a); });
  std::map<uint32_t, uint32_t> runtime_slot;  // kRuntime buffer index -> runtime_ slot
  for (const Buffer& b : p_.buffers) {
    // Only buffers of values the class holds: one whose values all live in a fused loop's registers needs none.
    const bool held = std::any_of(b.values.begin(), b.values.end(), [&](uint32_t v) { return slots_.contains(v); });
    if (b.kind == BufferKind::kRuntime && held) runtime_slot.emplace(b.index, static_cast<uint32_t>(runtime_slot.size()));
  }
  List out;
  std::vector<std::string> known;  // input dims, then each data-dependent one as it is bound
  for (const passes::Symbol& s : p_.symbols) {
    if (s.is_input_dim()) known.push_back("s" + std::to_string(s.id));
  }
  for (uint32_t id : order) {
    const passes::Symbol& s = p_.symbols[id];
    const std::string name = "s" + std::to_string(id);
    known.push_back(name);
    Value sv = Value::map();
    sv.set("name", name);
    sv.set("meaning", s.name);
    sv.set("call", static_cast<int64_t>(s.call));
    sv.set("before", s.before_call);
    if (s.before_call) {
      // From the infer-meta's output (run_time_meta) that is this value.
      std::string output;
      for (const passes::CallOutput& o : p_.calls.at(s.call).outputs) {
        if (std::find(o.values.begin(), o.values.end(), s.value) != o.values.end()) output = o.name;
      }
      sv.set("init", meta_output(s.call, output) + ".dims[" + std::to_string(s.axis) + "]");
      sv.set("bound", "");
    } else {
      sv.set("init", expr(s.value) + ".dims[" + std::to_string(s.axis) + "]");
      sv.set("bound", sym(s.bound));
    }
    List params;
    for (const std::string& k : known) params.push_back(k);
    sv.set("params", Value(std::move(params)));
    List runtime;
    for (const auto& [buffer, slot] : runtime_slot) {
      const Buffer& b = p_.buffers[buffer];
      if (late_symbol(b.size_bytes) != id) continue;
      Value rv = Value::map();
      rv.set("slot", static_cast<int64_t>(slot));
      rv.set("bytes", sym(b.size_bytes));
      runtime.push_back(std::move(rv));
    }
    sv.set("runtime", Value(std::move(runtime)));
    List values;
    for (const auto& [index, slot] : slots_) {
      const LoweredValue& v = p_.value(index);
      if (!is_late(v) || late_symbol(v.dims) != id) continue;
      const Buffer& b = p_.buffers.at(v.buffer);
      Value vv = Value::map();
      vv.set("slot", static_cast<int64_t>(slot));
      vv.set("dtype", dtype_of(v.dtype, v.loc, "value " + v.source_id));
      vv.set("dims", dims_init(v.dims));
      std::string data = "nullptr";  // an output's memory: run() points it at the caller's tensor
      if (b.kind == BufferKind::kRuntime) {
        data = "runtime_[" + std::to_string(runtime_slot.at(b.index)) + "].data" +
               (v.buffer_offset != 0 ? " + " + std::to_string(v.buffer_offset) : "");
      } else if (b.kind == BufferKind::kWorkspace) {
        data = "workspace_ + " + sym(b.offset + SymExpr(v.buffer_offset));
      }
      vv.set("data", data);
      vv.set("comment", v.label() + ": " + std::string(ir::dtype_name(v.dtype)) +
                            (v.defined_by != passes::kNone ? ", " + p_.calls.at(v.defined_by).pir_name : ""));
      values.push_back(std::move(vv));
    }
    sv.set("values", Value(std::move(values)));
    out.push_back(std::move(sv));
  }
  return out;
}

void ContextBuilder::add_late_sizes(List& data_symbols) {
  for (Value& sv : data_symbols) {
    const uint32_t id = static_cast<uint32_t>(std::stoul(sv.find("name")->as_string().substr(1)));
    sv.set("sizes", sizes_.definitions_value([&](uint32_t k) { return late_symbol(sizes_.expression(k)) == id; }));
  }
}

std::optional<Value> ContextBuilder::build() {
  program_display_ = banner_input_path(options_.program_path, options_.output_dir + "/" + options_.class_name + ".h");
  IdentifierScope input_scope({"inputs", "outputs"});
  for (const passes::ProgramInput& in : p_.inputs) input_idents_.push_back(input_scope.take(in.name));

  Value ctx = Value::map();
  ctx.set("class_name", options_.class_name);
  ctx.set("header", options_.class_name + ".h");
  set_namespace_keys(ctx, options_);
  std::string guard = "KFORGE_GENERATED_";
  for (char c : namespace_guard_prefix(options_) + cpp_identifier(options_.class_name)) {
    guard += c >= 'a' && c <= 'z' ? static_cast<char>(c - 32) : c;
  }
  ctx.set("guard", guard + "_H_");
  ctx.set("source", program_display_);
  ctx.set("program_name", p_.name);
  ctx.set("trace_hooks", options_.trace_hooks);
  // Static: no dynamic dims. (A dynamic program may have a constant workspace, 0 bytes when every value it
  // computes is an output or lives in a fused loop; it still needs its dims at run time.)
  const bool is_static = p_.plan.is_static() && p_.symbols.empty();
  ctx.set("is_static", is_static);
  // workspace_bytes() and resize() read the workspace's size from their own table, `sizes`.
  ctx.set("workspace_bytes",
          sizes_.ref(p_.plan.workspace_bytes, [](uint32_t k) { return "sizes[" + std::to_string(k) + "]"; }));
  ctx.set("has_workspace", !is_static || p_.plan.workspace_bytes.constant().value_or(0) != 0);
  if (is_static) ctx.set("unshared_bytes", sym(p_.plan.unshared_bytes));
  ctx.set("num_calls", static_cast<int64_t>(p_.calls.size()));

  add_symbols(ctx);
  add_inputs(ctx);
  add_parameters(ctx);
  add_values(ctx);
  add_outputs(ctx);
  add_constants(ctx);
  List run_params, run_generic_args;
  for (size_t i = 0; i < input_idents_.size(); ++i) {
    run_params.push_back("const kforge::Tensor& " + input_idents_[i]);
    run_generic_args.push_back("*inputs.items[" + std::to_string(i) + "]");
  }
  for (size_t i = 0; i < p_.outputs.size(); ++i) {
    run_params.push_back("kforge::Tensor* " + ctx.find("outputs")->as_list()[i].find("ident")->as_string());
    run_generic_args.push_back("outputs.items[" + std::to_string(i) + "]");
  }
  ctx.set("run_params", Value(std::move(run_params)));
  ctx.set("run_generic_args", Value(std::move(run_generic_args)));
  List calls, steps, fused_groups;
  const passes::FusionPlan* fusion = options_.fusion;
  for (uint32_t i = 0; i < p_.calls.size(); ++i) {
    const uint32_t group = fusion && i < fusion->call_group.size() ? fusion->call_group[i] : passes::kNone;
    if (group == passes::kNone) {
      Value cv = call_context(p_.calls[i], i);
      cv.set("fused", false);
      steps.push_back(cv);
      calls.push_back(std::move(cv));
      continue;
    }
    // A fused call: named in error messages (kCallNames) but never called.
    Value cv = Value::map();
    cv.set("index", static_cast<int64_t>(i));
    cv.set("kernel", p_.calls[i].kernel);
    cv.set("pir_name", p_.calls[i].pir_name);
    cv.set("where", where(p_.calls[i].loc));
    cv.set("fused", true);
    calls.push_back(std::move(cv));
    const passes::FusedGroup& g = fusion->groups[group];
    if (g.position != i) continue;
    if (g.kind == passes::GroupKind::kConv) {  // one library call (conv2d_fused), errors named after the conv
      Value step = call_context(g.conv_call, g.calls.front());
      step.set("fused", false);
      steps.push_back(std::move(step));
      continue;
    }
    SizeParams group_sizes(sizes_, member_size);
    fused_groups.push_back(fused_group_function(p_, g, group_sizes));
    steps.push_back(fused_group_call(p_, g, group_sizes, [this](uint32_t v) { return expr(v); },
                                     where(p_.calls[g.calls.front()].loc), options_.trace_hooks));
  }
  ctx.set("calls", Value(std::move(calls)));
  ctx.set("steps", Value(std::move(steps)));
  ctx.set("fused_groups", Value(std::move(fused_groups)));
  ctx.set("attrs", Value(attrs_));
  List contexts;
  for (const auto& [name, dtype] : contexts_) {
    Value c = Value::map();
    c.set("name", name);
    c.set("dtype", dtype);
    contexts.push_back(std::move(c));
  }
  ctx.set("contexts", Value(std::move(contexts)));
  List decls;
  std::vector<std::string> sorted = kernel_order_;
  std::sort(sorted.begin(), sorted.end());
  for (const std::string& name : sorted) decls.push_back(kernel_decls_.at(name));
  ctx.set("kernel_decls", Value(std::move(decls)));
  List meta_decls;
  for (const auto& [name, decl] : meta_decls_) meta_decls.push_back(decl);
  ctx.set("meta_decls", Value(std::move(meta_decls)));
  add_multi_kernel_context(ctx, p_, options_.multi_kernel,
                           [this](const passes::KernelCall& call) { return where(call.loc); });
  sizes_.add_program_sizes(p_);
  List data_symbols = data_symbols_value();
  // Last: everything above registered the sizes it uses. compute_sizes() computes those of the input dims; each
  // bind_s<id>() those that need its data-dependent dim.
  add_late_sizes(data_symbols);
  int64_t runtime_buffers = 0;
  for (const Value& d : data_symbols) runtime_buffers += static_cast<int64_t>(d.find("runtime")->as_list().size());
  ctx.set("num_runtime_buffers", runtime_buffers);
  ctx.set("data_symbols", Value(std::move(data_symbols)));
  ctx.set("num_sizes", static_cast<int64_t>(sizes_.size()));
  ctx.set("sizes", sizes_.definitions_value([&](uint32_t k) { return late_symbol(sizes_.expression(k)) == passes::kNone; }));
  if (!ok_) return std::nullopt;
  return ctx;
}

}  // namespace

void set_namespace_keys(tmpl::Value& ctx, const ProgramCodegenOptions& options) {
  ctx.set("namespace", options.cpp_namespace);
  ctx.set("qualified_class_name",
          options.cpp_namespace.empty() ? options.class_name : options.cpp_namespace + "::" + options.class_name);
}

std::string namespace_guard_prefix(const ProgramCodegenOptions& options) {
  if (options.cpp_namespace.empty()) return "";
  std::string prefix;
  for (size_t i = 0; i < options.cpp_namespace.size(); ++i) {
    if (options.cpp_namespace.compare(i, 2, "::") == 0) {
      prefix += '_';
      ++i;
    } else {
      prefix += options.cpp_namespace[i];
    }
  }
  return prefix + "_";
}

std::optional<tmpl::Value> build_program_context(const passes::LoweredProgram& program, const SourceManager& sources,
                                                 const ProgramCodegenOptions& options, DiagnosticEngine& diags) {
  // Twice: the first build collects the sizes in the order code generation asks for them, which depends on the
  // compiler that built kforge; the second numbers them canonically (SizeTable::canonical). Only the first can
  // report: the second sees the same program.
  ContextBuilder first(program, sources, options, diags);
  if (!first.build()) return std::nullopt;
  ContextBuilder second(program, sources, options, diags, first.sizes().canonical());
  return second.build();
}

}  // namespace kforge::codegen
