// The CPU program context's tables of tensors: the program's inputs, parameters, computed values, outputs and
// constants (ContextBuilder::add_inputs ... add_constants), each with the checks and C++ text the templates print.
#include "codegen/program_context_builder.h"
#include "support/text.h"

namespace kforge::codegen::program_context_internal {

void ContextBuilder::add_inputs(Value& ctx) {
  List inputs;
  for (size_t i = 0; i < p_.inputs.size(); ++i) {
    const passes::ProgramInput& in = p_.inputs[i];
    const std::string dtype = dtype_of(in.dtype, in.loc, "input '" + in.name + "'");
    if (in.declared_dims.size() > static_cast<size_t>(kMaxRank)) error(in.loc, "input '" + in.name + "' has rank above 9");
    // dtype, rank and place, then each dim: a declared one exactly, a dynamic one (`?`) at least 0.
    const std::string& x = input_idents_[i];
    std::vector<std::string> mismatches = {fmt::format("{}.dtype != {}", x, dtype),
                                           fmt::format("{}.ndim != {}", x, in.declared_dims.size()),
                                           x + ".place.backend != kforge::Backend::kCPU"};
    for (size_t a = 0; a < in.declared_dims.size(); ++a) {
      const int64_t d = in.declared_dims[a];
      mismatches.push_back(d >= 0 ? fmt::format("{}.dims[{}] != {}", x, a, d) : fmt::format("{}.dims[{}] < 0", x, a));
    }
    Value iv = Value::map();
    iv.set("name", in.name);
    iv.set("ident", input_idents_[i]);
    iv.set("dtype", dtype);
    iv.set("dtype_name", std::string(ir::dtype_name(in.dtype)));
    iv.set("rank", static_cast<int64_t>(in.declared_dims.size()));
    iv.set("shape_text", shape_text(in.declared_dims));
    iv.set("dims", cpp_int_list(in.declared_dims));
    iv.set("condition", kforge::join(mismatches, " || "));
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
    Value pv = Value::map();
    pv.set("index", static_cast<int64_t>(i));
    pv.set("name", param.name);
    pv.set("ident", fields.take(param.name));
    pv.set("dtype", dtype);
    pv.set("dtype_name", std::string(ir::dtype_name(v.dtype)));
    pv.set("rank", static_cast<int64_t>(v.dims.size()));
    pv.set("dims", cpp_known_dims(v.dims));
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
    const bool at_start = v.buffer_offset.constant() == std::optional<int64_t>(0);
    if (!at_start && b.kind == BufferKind::kOutput) {
      error(v.loc, "internal: value " + v.source_id + " lies inside a buffer the caller owns");
    }
    if (b.kind == BufferKind::kRuntime) {
      vv.set("comment", v.label());
      values.push_back(std::move(vv));  // laid out by bind_s<id>(): data_symbols_value()
      continue;
    }
    // A value in its slice of a concat's output (passes/concat_in_place.h) starts buffer_offset bytes in.
    vv.set("offset", b.kind != BufferKind::kWorkspace ? std::string("0")
                     : at_start                   ? sym(b.offset)
                                                  : sym(b.offset + v.buffer_offset));
    // The dims of a dynamic value are in its init_tensor() line already: the comment gives the static ones.
    std::vector<std::string> comment = {v.label() + ": " + std::string(ir::dtype_name(v.dtype)) +
                                        (passes::static_dims(v.dims) ? shape_text(v.dims) : std::string())};
    if (!v.capacity.empty()) comment.push_back("laid out for its most rows");
    if (v.defined_by != passes::kNone) comment.push_back(p_.calls.at(v.defined_by).pir_name);
    if (b.kind == BufferKind::kOutput) comment.push_back("in output '" + p_.outputs.at(b.role_index).name + "'");
    vv.set("comment", kforge::join(comment, ", "));
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
    // The data's rows: "v," items joined by spaces, a row ending once it is longer than 90 characters.
    List lines;
    std::vector<std::string> row;
    for (int64_t k = 0; k < (splat ? 0 : numel); ++k) {
      row.push_back(literal(k) + ",");
      std::string text = kforge::join(row, " ");
      if (text.size() > 90 || k + 1 == numel) {
        lines.push_back(std::move(text));
        row.clear();
      }
    }
    Value cv = Value::map();
    cv.set("index", static_cast<int64_t>(i));
    cv.set("data_name", "kConstantData" + std::to_string(i));
    cv.set("element_type", *elem);
    cv.set("dtype", dtype_of(c.dtype, c.loc, "a constant"));
    cv.set("dims", cpp_int_list(c.dims));
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

}  // namespace kforge::codegen::program_context_internal
