#include "passes/isa_layouts.h"

#include <string_view>

namespace kforge::passes {

size_t converted_convolutions(const LayoutReport& report) {
  size_t n = 0;
  for (const LayoutReport::Converted& c : report.converted) {
    if (c.name == "pd_op.conv2d" || c.name == "pd_op.depthwise_conv2d" || c.name == "pd_op.conv2d_transpose") ++n;
  }
  return n;
}

bool blocked_plan_pays(const LayoutReport& first, const LayoutReport& blocked) {
  const size_t converted = converted_convolutions(blocked);
  return converted > 0 && converted * 4 >= converted_convolutions(first) * 3;
}

namespace {

std::string describe(const LoweredProgram& p, std::string_view what, const std::string& name, uint32_t value) {
  const LoweredValue& v = p.value(value);
  return std::string(what) + " '" + name + "' " + std::string(ir::dtype_name(v.dtype)) + " " + to_string(v.dims);
}

}  // namespace

std::string interface_difference(const LoweredProgram& a, const LoweredProgram& b) {
  if (a.inputs.size() != b.inputs.size() || a.parameters.size() != b.parameters.size() ||
      a.outputs.size() != b.outputs.size()) {
    return "the numbers of inputs, parameters or outputs";
  }
  for (size_t i = 0; i < a.inputs.size(); ++i) {
    const std::string x = describe(a, "input", a.inputs[i].name, a.inputs[i].value);
    if (x != describe(b, "input", b.inputs[i].name, b.inputs[i].value) ||
        a.inputs[i].declared_dims != b.inputs[i].declared_dims) {
      return x;
    }
  }
  for (size_t i = 0; i < a.parameters.size(); ++i) {
    const std::string x = describe(a, "parameter", a.parameters[i].name, a.parameters[i].value);
    if (x != describe(b, "parameter", b.parameters[i].name, b.parameters[i].value) ||
        a.parameters[i].stored_dtype != b.parameters[i].stored_dtype) {
      return x;
    }
  }
  for (size_t i = 0; i < a.outputs.size(); ++i) {
    const std::string x = describe(a, "output", a.outputs[i].name, a.outputs[i].value);
    if (x != describe(b, "output", b.outputs[i].name, b.outputs[i].value)) return x;
  }
  size_t a_inputs = 0, b_inputs = 0;
  for (const Symbol& s : a.symbols) a_inputs += s.kind == SymbolKind::kInputDim ? 1 : 0;
  for (const Symbol& s : b.symbols) b_inputs += s.kind == SymbolKind::kInputDim ? 1 : 0;
  if (a_inputs != b_inputs) return "the dynamic input dims";
  for (size_t i = 0; i < a.symbols.size() && i < b.symbols.size(); ++i) {
    const Symbol& x = a.symbols[i];
    const Symbol& y = b.symbols[i];
    if (x.kind != SymbolKind::kInputDim || y.kind != SymbolKind::kInputDim) break;
    if (x.input != y.input || x.axis != y.axis || x.name != y.name) return "the dynamic input dim " + x.name;
  }
  return "";
}

}  // namespace kforge::passes
