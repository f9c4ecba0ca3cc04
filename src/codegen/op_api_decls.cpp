// The op API's declarations (op_api_builder.h): the parameters of the kernels and infer-meta functions an op's
// functions call, declared once per signature, and the form of an op whose functions invoke another op's.
#include "codegen/op_api_builder.h"

namespace kforge::codegen::op_api_internal {

std::optional<Skip> OpApiBuilder::param_decl(const opdef::ParamItem& item, size_t index, std::string& decl) const {
  if (item.is_literal) {
    const std::optional<std::string> type = literal_type(item.text);
    if (!type) return Skip{"param literal '" + item.text + "' has no C++ type"};
    decl = *type + " literal_" + std::to_string(index);
  } else if (const Input* in = op_.find_input(item.text)) {
    decl = param_type(in->type, in->optional) + " " + in->name;
  } else if (const Attribute* a = op_.find_attribute(item.text)) {
    decl = param_type(a->type, false) + " " + a->name;
  } else {
    return Skip{"param '" + item.text + "' is not an argument"};
  }
  return std::nullopt;
}

void OpApiBuilder::output_decls(std::vector<std::string>& params) const {
  for (const Output& out : op_.outputs) {
    params.push_back((out.type == OutputType::kTensorList ? "kforge::MutableTensorList " : "kforge::Tensor* ") +
                     out.name);
  }
}

namespace {

// Backward ops may pass one argument twice (`param : [x, x, grad_x_grad]`): a declaration's parameters
// get distinct names (`x`, `x_1`) so that it compiles. Each entry is "TYPE NAME".
void make_param_names_unique(std::vector<std::string>& params) {
  std::set<std::string> seen;
  for (size_t i = 0; i < params.size(); ++i) {
    const size_t space = params[i].rfind(' ');
    const std::string name = params[i].substr(space + 1);
    std::string unique = name;
    for (size_t n = 1; seen.count(unique) != 0; ++n) unique = name + "_" + std::to_string(n);
    seen.insert(unique);
    if (unique != name) params[i] = params[i].substr(0, space + 1) + unique;
  }
}

}  // namespace

std::optional<Skip> OpApiBuilder::build_decls(std::vector<FunctionDecl>& kernels,
                                              std::vector<FunctionDecl>& metas) const {
  FunctionDecl meta;
  qualified_meta(op_.infer_meta->func, &meta.name_space, &meta.name);
  const std::vector<opdef::ParamItem> meta_items = meta_param();
  for (size_t i = 0; i < meta_items.size(); ++i) {
    std::string decl;
    if (auto s = param_decl(meta_items[i], i, decl)) return s;
    meta.params.push_back(decl);
  }
  output_decls(meta.params);
  make_param_names_unique(meta.params);
  meta.first_use = op_.name;

  FunctionDecl kernel;
  kernel.name_space = "kforge::kernels";
  kernel.name = kernel_->name;
  kernel.params.push_back("const kforge::KernelContext& ctx");
  const std::vector<opdef::ParamItem> kernel_items = kernel_param();
  for (size_t i = 0; i < kernel_items.size(); ++i) {
    std::string decl;
    if (auto s = param_decl(kernel_items[i], i, decl)) return s;
    kernel.params.push_back(decl);
  }
  output_decls(kernel.params);
  make_param_names_unique(kernel.params);
  kernel.first_use = op_.name;
  metas.push_back(std::move(meta));
  kernels.push_back(std::move(kernel));
  return std::nullopt;
}

namespace {

// Whether a value of `from` may be passed where the invoked op takes `to`.
bool invoke_compatible(ArgType from, ArgType to) {
  if (from == to) return true;
  const bool from_number = from == ArgType::kInt || from == ArgType::kInt64 || from == ArgType::kFloat ||
                           from == ArgType::kDouble || from == ArgType::kBool || opdef::is_scalar_type(from);
  return opdef::is_scalar_type(to) && from_number;
}

}  // namespace

std::optional<Skip> OpApiBuilder::build_invoke(const std::unordered_map<std::string, const OpApi*>& generated,
                                               ApiFunction& fn) const {
  const opdef::Call& call = *op_.invoke;
  auto target_it = generated.find(call.func);
  const OpApi* target = target_it == generated.end() ? nullptr : target_it->second;
  if (target == nullptr || target->functions.empty() || target->functions.front().inplace_twin) {
    return Skip{"it invokes '" + call.func + "', which is not a generated op"};
  }
  const Op& callee = *target->op;
  if (call.has_keywords()) return Skip{"it invokes '" + call.func + "' with keyword arguments"};
  if (call.args.size() != callee.inputs.size() + callee.attributes.size()) {
    return Skip{"it invokes '" + call.func + "' with " + std::to_string(call.args.size()) + " arguments, not " +
                std::to_string(callee.inputs.size() + callee.attributes.size())};
  }
  if (callee.outputs.size() != op_.outputs.size()) return Skip{"its outputs do not match those of '" + call.func + "'"};
  std::vector<std::string> inputs, attributes, outputs;
  for (size_t i = 0; i < call.args.size(); ++i) {
    const std::string& arg = call.args[i];
    const bool to_input = i < callee.inputs.size();
    if (const Input* in = op_.find_input(arg)) {
      const Input* want = to_input ? &callee.inputs[i] : nullptr;
      if (want == nullptr || want->type != in->type || (in->optional && !want->optional)) {
        return Skip{"invoke argument '" + arg + "' does not fit the parameter of '" + call.func + "'"};
      }
      inputs.push_back(arg);
    } else if (const Attribute* a = op_.find_attribute(arg)) {
      const Attribute* want = to_input ? nullptr : &callee.attributes[i - callee.inputs.size()];
      if (want == nullptr || !invoke_compatible(a->type, want->type)) {
        return Skip{"invoke argument '" + arg + "' does not fit the parameter of '" + call.func + "'"};
      }
      attributes.push_back(arg);
    } else {
      const Attribute* want = to_input ? nullptr : &callee.attributes[i - callee.inputs.size()];
      opdef::DefaultValue literal;
      literal.text = arg;
      literal.kind = opdef::DefaultKind::kExpression;
      std::string why;
      if (want == nullptr || !cpp_default_value(want->type, literal, &why)) {
        return Skip{"invoke argument '" + arg + "' is neither an argument nor a literal of the right type"};
      }
      attributes.push_back(arg);
    }
  }
  for (size_t i = 0; i < op_.outputs.size(); ++i) {
    if (op_.outputs[i].type != callee.outputs[i].type) {
      return Skip{"output '" + op_.outputs[i].name + "' does not match that of '" + call.func + "'"};
    }
    outputs.push_back(op_.outputs[i].name);
  }
  fn.is_invoke = true;
  fn.invoke.func = target->functions.front().name;
  fn.invoke.args = inputs;
  fn.invoke.args.insert(fn.invoke.args.end(), outputs.begin(), outputs.end());
  fn.invoke.args.insert(fn.invoke.args.end(), attributes.begin(), attributes.end());
  fn.checks.clear();
  return std::nullopt;
}

}  // namespace kforge::codegen::op_api_internal
