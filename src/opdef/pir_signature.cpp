#include "opdef/pir_signature.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <unordered_map>

namespace kforge::opdef {

namespace {

constexpr std::string_view kDense = "paddle::dialect::DenseTensorType";
constexpr std::string_view kScalarAttribute = "paddle::dialect::ScalarAttribute";
constexpr std::string_view kIntArrayAttribute = "paddle::dialect::IntArrayAttribute";

std::string tensor_type(TensorKind kind, bool is_list) {
  std::string_view base;
  switch (kind) {
    case TensorKind::kDense: base = kDense; break;
    case TensorKind::kSelectedRows: base = "paddle::dialect::SelectedRowsType"; break;
    case TensorKind::kSparseCoo: base = "paddle::dialect::SparseCooTensorType"; break;
    case TensorKind::kSparseCsr: base = "paddle::dialect::SparseCsrTensorType"; break;
  }
  return is_list ? fmt::format("pir::VectorType<{}>", base) : std::string(base);
}

std::string output_type(OutputType type) {
  switch (type) {
    case OutputType::kTensor: return std::string(kDense);
    case OutputType::kTensorList: return fmt::format("pir::VectorType<{}>", kDense);
    case OutputType::kSelectedRows: return "paddle::dialect::SelectedRowsType";
  }
  return std::string(kDense);
}

struct MutableAttr {
  std::string type;
  std::string data_type;
};

// The mutable attributes of `op`, by attribute name (op_gen.py OpInfoParser.parse_mutable_attribute).
std::unordered_map<std::string, MutableAttr> mutable_attributes(const Op& op, const OpCompat* compat) {
  std::unordered_map<std::string, MutableAttr> out;
  if (!op.support_tensor.empty()) {
    // The op names its tensor-capable attributes itself (`support_tensor : [x]`).
    for (const NameRef& n : op.support_tensor) {
      const Attribute* a = op.find_attribute(n.name);
      if (!a) continue;
      if (is_scalar_type(a->type)) out[a->name] = {std::string(kScalarAttribute), std::string(arg_type_info(a->type).opmaker_type)};
      if (a->type == ArgType::kIntArray) out[a->name] = {std::string(kIntArrayAttribute), "std::vector<int64_t>"};
    }
    return out;
  }
  if (!compat) return out;
  const CompatEntry* entry = compat->lookup(op.name);
  if (!entry && op.forward && (op.name.ends_with("_grad") || op.name.ends_with("_grad_"))) {
    entry = compat->lookup(op.forward->op);
  }
  // op_gen.py replaces pow's compat entry by its `scalar` map, so pow and its grads have no mutable
  // attribute: pd_op.pow keeps `y` as a ScalarAttribute attribute.
  if (!entry || entry->op.name == "pow") return out;
  for (const MutableAttrInfo& m : entry->scalar) {
    if (!m.is_mutable()) continue;
    // op_gen.py: op_compat calls one_hot's attribute by its legacy name `depth`.
    const std::string name = m.name == "depth" && op.name == "one_hot" ? "num_classes" : m.name;
    std::string data_type;
    if (m.data_type) {
      data_type = *m.data_type;
      // op_gen.py patch: isclose and allclose take double tolerances whatever op_compat says.
      if (entry->op.name == "isclose" || entry->op.name == "allclose") data_type = "double";
    } else if (const Attribute* a = op.find_attribute(name)) {
      data_type = std::string(arg_type_info(a->type).opmaker_type);
    }
    out.emplace(name, MutableAttr{std::string(kScalarAttribute), data_type});
  }
  for (const MutableAttrInfo& m : entry->int_array) {
    if (!m.is_mutable()) continue;
    out.emplace(m.name, MutableAttr{std::string(kIntArrayAttribute), m.data_type.value_or("")});
  }
  return out;
}

PirOpSignature make_signature(const Op& op, const KernelFunc* func,
                              const std::unordered_map<std::string, MutableAttr>& mutables) {
  PirOpSignature sig;
  sig.op = &op;
  const bool typed = func && func->has_signature;
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    const Input& in = op.inputs[i];
    PirOperand o;
    o.name = in.name;
    o.type = tensor_type(typed ? func->input_kinds[i] : TensorKind::kDense, in.is_list());
    o.optional = in.optional;
    o.no_need_buffer = in.no_need_buffer;
    o.loc = in.name_loc;
    sig.operands.push_back(std::move(o));
  }
  for (const Attribute& a : op.attributes) {
    auto m = mutables.find(a.name);
    if (m != mutables.end()) {
      PirOperand o;
      o.name = a.name;
      o.type = m->second.type;
      o.mutable_attr = true;
      o.data_type = m->second.data_type;
      o.loc = a.name_loc;
      sig.operands.push_back(std::move(o));
      continue;
    }
    const ArgTypeInfo& info = arg_type_info(a.type);
    sig.attributes.push_back({a.name, std::string(info.pir_attribute), std::string(info.opmaker_type), a.name_loc});
  }
  for (size_t i = 0; i < op.outputs.size(); ++i) {
    const Output& out = op.outputs[i];
    PirResult r;
    r.name = out.name;
    if (typed) {
      r.type = tensor_type(func->output_kinds[i], out.type == OutputType::kTensorList);
    } else {
      r.type = output_type(out.type);
    }
    r.optional = out.optional || out.intermediate;
    r.intermediate = out.intermediate;
    r.loc = out.loc;
    sig.results.push_back(std::move(r));
  }
  if (op.is_base_op() && op.infer_meta) sig.infer_meta = op.infer_meta->func;
  if (func) sig.kernel = func->name;
  return sig;
}

}  // namespace

std::string pir_class_name(std::string_view name, bool inplace_suffix) {
  // Python's str.capitalize on each '_'-separated word: first character upper, the rest lower.
  std::string out;
  bool word_start = true;
  for (char c : name) {
    if (c == '_') {
      word_start = true;
      continue;
    }
    out += word_start ? static_cast<char>(std::toupper(static_cast<unsigned char>(c)))
                      : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    word_start = false;
  }
  if (!name.empty() && name.back() == '_') out += '_';
  if (inplace_suffix) out += '_';
  return out + "Op";
}

std::vector<PirOpSignature> derive_pir_signatures(const OpLibrary& library, const OpCompat* compat,
                                                  DiagnosticEngine& diags, const PirSignatureOptions& options) {
  std::vector<PirOpSignature> out;
  std::unordered_map<std::string, const Op*> seen;
  for (const Op& op : library.ops()) {
    const bool base = op.is_base_op();
    std::vector<std::string> phi_names = {op.name};
    if (base && (op.has_inplace_key || op.has_view_key) && !op.name.ends_with("_")) phi_names.push_back(op.name + "_");
    const auto mutables = mutable_attributes(op, compat);
    std::vector<const KernelFunc*> funcs;
    if (base && op.kernel) {
      for (const KernelFunc& f : op.kernel->funcs) funcs.push_back(&f);
    }
    if (funcs.empty()) funcs.push_back(nullptr);
    for (const std::string& phi : phi_names) {
      if (std::find(options.manual_ops.begin(), options.manual_ops.end(), phi) != options.manual_ops.end()) continue;
      const bool inplace = phi.ends_with("_");
      for (const KernelFunc* func : funcs) {
        PirOpSignature sig = make_signature(op, func, mutables);
        sig.inplace = inplace && phi != op.name;
        if (funcs.size() == 1) {
          sig.name = fmt::format("{}.{}", options.dialect, phi);
          sig.class_name = pir_class_name(phi, false);
        } else {
          // Several kernels: one op per kernel, named after it (op_gen.py AutoCodeGen).
          sig.name = fmt::format("{}.{}{}", options.dialect, func->name, inplace ? "_" : "");
          sig.class_name = pir_class_name(func->name, inplace);
        }
        auto [it, inserted] = seen.emplace(sig.name, &op);
        if (!inserted) {
          Diagnostic d{Severity::kError, op.loc,
                       fmt::format("op '{}' derives the PIR op '{}', which op '{}' already derives", op.name, sig.name,
                                   it->second->name),
                       {}};
          d.note(fmt::format("'{}' is defined here", it->second->name), it->second->loc);
          diags.report(std::move(d));
          continue;
        }
        out.push_back(std::move(sig));
      }
    }
  }
  return out;
}

}  // namespace kforge::opdef
