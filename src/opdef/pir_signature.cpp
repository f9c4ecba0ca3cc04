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
  // Compat entries are looked up by the bare name, so a sparse op finds its dense namesake's (abs).
  const CompatEntry* entry = compat->lookup(op.name);
  if (!entry && op.forward && (op.name.ends_with("_grad") || op.name.ends_with("_grad_"))) {
    entry = compat->lookup(op.forward->op);
  }
  // op_gen.py replaces pow's compat entry by its `scalar` map, so pow and its grads have no mutable
  // attribute: pd_op.pow keeps `y` as a ScalarAttribute attribute.
  if (!entry || entry->op.name == "pow") return out;
  // op_gen.py skips the `scalar` part for the ops of sparse_ops.yaml (not sparse_backward.yaml): their
  // Scalar attributes stay attributes.
  const bool scalars_mutable = !(op.sparse && !op.is_backward);
  for (const MutableAttrInfo& m : entry->scalar) {
    if (!m.is_mutable() || !scalars_mutable) continue;
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

// The PIR op name and C++ class of one (phi name, kernel) of `op`, as op_gen.py AutoCodeGen names them:
//   one kernel:  phi                      `abs`, `abs_`          class AbsOp, Abs_Op
//   several:     kernel [+ '_' in place]  `scale_sr`, `adam_dense_param_sparse_grad_`
// and for sparse ops `_sp` is appended, or `sp_` after an in-place '_' (`batch_norm_sp_`), and the class
// gets `Sp` before its in-place '_' (BatchNorm_SpOp, AbsCooSpOp).
void name_signature(PirOpSignature& sig, const Op& op, const std::string& phi, const KernelFunc* func,
                    bool several_kernels, std::string_view dialect) {
  const bool inplace = phi.ends_with("_");
  std::string base = several_kernels ? func->name + (inplace ? "_" : "") : phi;
  if (op.sparse) base += inplace ? "sp_" : "_sp";
  sig.name = fmt::format("{}.{}", dialect, base);
  sig.class_name = several_kernels ? pir_class_name(func->name, inplace, op.sparse)
                                   : pir_class_name(phi, false, op.sparse);
}

}  // namespace

std::string pir_class_name(std::string_view name, bool inplace_suffix, bool sparse) {
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
  if (sparse) out += "Sp";
  if (inplace_suffix) out += '_';
  return out + "Op";
}

std::vector<PirOpSignature> derive_pir_signatures(const OpLibrary& library, const OpCompat* compat,
                                                  DiagnosticEngine& diags, const PirSignatureOptions& options) {
  std::vector<PirOpSignature> out;
  std::unordered_map<std::string, const Op*> seen;
  auto listed = [](const std::vector<std::string>& list, const std::string& name) {
    return std::find(list.begin(), list.end(), name) != list.end();
  };
  for (const Op& op : library.ops()) {
    if (!op.sparse && listed(options.vjp_only_ops, op.name)) continue;
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
      if (listed(options.manual_ops, phi)) continue;
      const bool inplace = phi.ends_with("_");
      for (const KernelFunc* func : funcs) {
        PirOpSignature sig = make_signature(op, func, mutables);
        sig.inplace = inplace && phi != op.name;
        name_signature(sig, op, phi, func, funcs.size() > 1, options.dialect);
        auto [it, inserted] = seen.emplace(sig.name, &op);
        if (!inserted) {
          Diagnostic d{Severity::kError, op.loc,
                       fmt::format("op '{}' derives the PIR op '{}', which op '{}' already derives",
                                   op.display_name(), sig.name, it->second->display_name()),
                       {}};
          d.note(fmt::format("'{}' is defined here", it->second->display_name()), it->second->loc);
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
