// Classification for the fusion pass: which calls can fuse, with their typed expressions (attributes bound
// to the program's constants), reductions and row patterns. See docs/fusion.md for the rules.
#include <algorithm>
#include <set>
#include <sstream>

#include "scalar_expr/expr_rewrite.h"
#include "passes/axis.h"
#include "passes/fusion_internal.h"

namespace kforge::passes::fusion_detail {

using expr::ScalarType;

std::optional<ScalarType> scalar_of(ir::DataType dtype) {
  switch (dtype) {
    case ir::DataType::kBool: return ScalarType::kBool;
    case ir::DataType::kInt32: return ScalarType::kInt32;
    case ir::DataType::kInt64: return ScalarType::kInt64;
    case ir::DataType::kFloat16: return ScalarType::kFloat16;
    case ir::DataType::kBFloat16: return ScalarType::kBFloat16;
    case ir::DataType::kFloat32: return ScalarType::kFloat32;
    case ir::DataType::kFloat64: return ScalarType::kFloat64;
    default: return std::nullopt;
  }
}

bool is_half_float(ir::DataType dtype) { return dtype == ir::DataType::kFloat16 || dtype == ir::DataType::kBFloat16; }

SymExpr product(const SymShape& shape, size_t begin, size_t end) {
  SymExpr p = 1;
  for (size_t i = begin; i < end && i < shape.size(); ++i) p *= shape[i];
  return p;
}

/// `shape` right-aligned against `target`: the dims, padded with leading 1s; nullopt when it does not
/// broadcast to `target`.
std::optional<SymShape> padded_to(const SymShape& shape, const SymShape& target) {
  if (shape.size() > target.size()) {
    // Leading 1s beyond the target's rank are fine.
    for (size_t i = 0; i + target.size() < shape.size(); ++i) {
      if (!is_one(shape[i])) return std::nullopt;
    }
    return padded_to(SymShape(shape.end() - static_cast<std::ptrdiff_t>(target.size()), shape.end()), target);
  }
  SymShape out(target.size() - shape.size(), SymExpr(1));
  out.insert(out.end(), shape.begin(), shape.end());
  for (size_t i = 0; i < out.size(); ++i) {
    if (!is_one(out[i]) && out[i] != target[i]) return std::nullopt;
  }
  return out;
}

std::vector<SymExpr> row_major_strides(const SymShape& dims) {
  std::vector<SymExpr> strides(dims.size(), SymExpr(1));
  SymExpr stride = 1;
  for (size_t k = dims.size(); k-- > 0;) {
    strides[k] = stride;
    stride *= dims[k];
  }
  return strides;
}

std::optional<std::vector<SymExpr>> broadcast_strides(const SymShape& dims, const std::vector<SymExpr>& memory,
                                                      const SymShape& target) {
  if (!padded_to(dims, target)) return std::nullopt;
  // dims right-aligned against target; leading dims beyond target's rank are 1s (padded_to checked).
  const size_t skip = dims.size() > target.size() ? dims.size() - target.size() : 0;
  const size_t lead = target.size() + skip - dims.size();
  std::vector<SymExpr> out(target.size(), SymExpr(0));
  for (size_t k = skip; k < dims.size(); ++k) {
    if (!is_one(dims[k])) out[lead + k - skip] = memory[k];
  }
  return out;
}

bool written_between(const LoweredProgram& program, const std::set<uint32_t>& buffers, uint32_t first, uint32_t last,
                     const std::set<uint32_t>& skip, const std::set<uint32_t>& produced) {
  for (uint32_t k = first + 1; k < last; ++k) {
    if (skip.count(k)) continue;
    for (const CallOutput& o : program.calls[k].outputs) {
      for (uint32_t v : o.values) {
        if (v != kNone && !produced.count(v) && buffers.count(program.value(v).buffer)) return true;
      }
    }
  }
  return false;
}

/// How a tensor of `shape` is read in an iteration space `target` split at `split`; nullopt when it does not
/// broadcast. Fills `strides` for kStrided.
std::optional<InputAccess> access_of(const SymShape& shape, const SymShape& target, size_t split,
                                     std::vector<SymExpr>* strides) {
  std::optional<SymShape> padded = padded_to(shape, target);
  if (!padded) return std::nullopt;
  if (is_one(sym_numel(*padded))) return InputAccess::kScalar;
  bool same = true, outer_ones = true, inner_ones = true, outer_same = true, inner_same = true;
  for (size_t i = 0; i < padded->size(); ++i) {
    const bool eq = (*padded)[i] == target[i];
    const bool one = is_one((*padded)[i]);
    same = same && eq;
    if (i < split) {
      outer_ones = outer_ones && one;
      outer_same = outer_same && eq;
    } else {
      inner_ones = inner_ones && one;
      inner_same = inner_same && eq;
    }
  }
  if (same) return InputAccess::kContiguous;
  if (outer_ones && inner_same) return InputAccess::kInner;
  if (outer_same && inner_ones) return InputAccess::kOuter;
  if (strides) *strides = *broadcast_strides(shape, row_major_strides(shape), target);
  return InputAccess::kStrided;
}

bool exceeds_int32(const SymExpr& numel) {
  const std::optional<int64_t> n = numel.constant();
  return !n || *n > INT32_MAX;
}

namespace {

std::optional<expr::Value> attr_value(const KernelCall& call, std::string_view name) {
  const KernelArg* arg = call.arg(name);
  if (!arg || arg->kind != ArgKind::kConstant) return std::nullopt;
  const AttrConstant& c = arg->constant;
  switch (c.type) {
    case opdef::ArgType::kBool: return expr::Value::of_bool(c.bool_value);
    case opdef::ArgType::kInt:
    case opdef::ArgType::kInt32:
    case opdef::ArgType::kInt64:
    case opdef::ArgType::kLong:
    case opdef::ArgType::kSizeT: return expr::Value::of_int(c.int_value);
    case opdef::ArgType::kFloat:
    case opdef::ArgType::kDouble: return expr::Value::of_float(c.float_value);
    default: break;
  }
  if (opdef::arg_type_info(c.type).spelling.substr(0, 6) == "Scalar" && c.type != opdef::ArgType::kScalarList) {
    if (c.scalar.dtype == ir::DataType::kBool) return expr::Value::of_bool(c.scalar.int_value != 0);
    return c.scalar.is_floating ? expr::Value::of_float(c.scalar.float_value) : expr::Value::of_int(c.scalar.int_value);
  }
  return std::nullopt;
}

expr::ExprContext context_for(const KernelCall& call, const LoweredProgram& program) {
  expr::ExprContext ctx(call.op);
  for (const opdef::Input& in : call.def->inputs) {
    const KernelArg* arg = call.arg(in.name);
    std::optional<ScalarType> t;
    if (arg && arg->kind == ArgKind::kTensor) t = scalar_of(program.value(arg->value).dtype);
    ctx.input(in.name, t.value_or(ScalarType::kFloat32));
  }
  for (const opdef::Attribute& a : call.def->attributes) {
    const std::string_view spelling = opdef::arg_type_info(a.type).spelling;
    if (std::optional<ScalarType> t = expr::paddle_attribute_scalar_type(spelling)) {
      ctx.attribute(a.name, *t);
    } else {
      ctx.opaque_attribute(a.name, std::string(spelling));
    }
  }
  return ctx;
}

expr::NodePtr bind(const expr::Node& typed, const KernelCall& call) {
  expr::NodePtr bound = expr::bind_attributes(typed, [&](std::string_view name) { return attr_value(call, name); });
  return expr::fold_constants(*bound);
}

bool uses_unbound_attribute(const expr::Node& node) {
  bool found = false;
  expr::visit(node, [&](const expr::Node& n) {
    found = found || (n.kind == expr::NodeKind::kName && n.name_kind == expr::NameKind::kAttribute);
  });
  return found;
}

int64_t int_of(const AttrConstant& c) {
  switch (c.type) {
    case opdef::ArgType::kScalar:
    case opdef::ArgType::kScalarInt:
    case opdef::ArgType::kScalarInt64:
    case opdef::ArgType::kScalarFloat:
    case opdef::ArgType::kScalarDouble:
      return c.scalar.is_floating ? static_cast<int64_t>(c.scalar.float_value) : c.scalar.int_value;
    default: return c.int_value;
  }
}

/// normalize_axis (passes/axis.h), where a 0-D tensor also accepts axis 0 (not -1).
std::optional<int64_t> fusible_axis(int64_t axis, size_t rank) {
  if (rank == 0 && axis == 0) return 0;
  return normalize_axis(axis, static_cast<int64_t>(rank));
}

class Classifier {
 public:
  Classifier(const LoweredProgram& program, bool half_floats, bool view_aliases)
      : p_(program), half_floats_(half_floats), view_aliases_(view_aliases), sink_(), diags_(sources_, sink_) {}

  CallInfo classify(uint32_t index) {
    const KernelCall& call = p_.calls[index];
    CallInfo info;
    if (!call.def || call.inplace_twin) return info;
    const opdef::Op& def = *call.def;
    if (!def.compute && !def.reduce && !def.row_pattern) return info;
    // Every output value must own its buffer (no views, no aliases; with view_aliases, later views of it may
    // share it) and have a plain dtype.
    for (const CallOutput& o : call.outputs) {
      if (o.is_list) return info;
      for (uint32_t v : o.values) {
        if (v == kNone) continue;
        const LoweredValue& val = p_.value(v);
        if (val.buffer == kNone || !owns_buffer(val) || !fusible(val.dtype)) return info;
      }
    }
    for (const KernelArg& a : call.args) {
      if (a.kind == ArgKind::kTensor) {
        if (!fusible(p_.value(a.value).dtype)) return info;
        info.inputs.emplace_back(a.name, a.value);
      } else if (a.kind == ArgKind::kTensorToAttr && scalar_tensor_attribute(call, a)) {
        // A scalar attribute read from a one-element tensor at run time (clip's bounds from an image's size):
        // in an elementwise expression the tensor is one more input, read as a broadcast scalar, instead of a
        // value the host must fetch before the kernel runs (which a fused CUDA group cannot do).
        info.inputs.emplace_back(a.name, a.value);
        info.tensor_attributes.push_back(a.name);
      } else if (a.kind != ArgKind::kConstant && a.kind != ArgKind::kAbsentTensor) {
        return info;  // tensor lists and other run-time attributes
      }
    }
    if (call.outputs.empty() || call.outputs[0].values.empty() || call.outputs[0].values[0] == kNone) return info;
    info.out = call.outputs[0].values[0];
    if (def.row_pattern) return classify_row_pattern(call, std::move(info));
    if (def.reduce) return classify_reduce(call, std::move(info));
    return classify_elementwise(call, std::move(info));
  }

 private:
  // A dtype the fused loops of this target handle (FusionOptions::half_floats).
  bool fusible(ir::DataType dtype) const { return scalar_of(dtype) && (half_floats_ || !is_half_float(dtype)); }

  CallInfo classify_elementwise(const KernelCall& call, CallInfo info) {
    if (call.outputs.size() != 1 || call.outputs[0].values.size() != 1) return CallInfo{};
    std::optional<expr::Expression> parsed =
        expr::parse_expression(call.def->compute->text, SourceLoc{}, nullptr, diags_);
    if (!parsed) return CallInfo{};
    std::optional<expr::Expression> typed = expr::check_expression(*parsed, context_for(call, p_), diags_);
    if (!typed) return CallInfo{};
    typed->root = bind(*typed->root, call);
    if (!info.tensor_attributes.empty()) typed->root = read_tensor_attributes(*typed->root, call, info.tensor_attributes);
    if (uses_unbound_attribute(*typed->root)) return CallInfo{};
    for (const std::string& name : expr::names_used(*typed->root, expr::NameKind::kInput)) {
      bool present = false;
      for (const auto& in : info.inputs) present = present || in.first == name;
      if (!present) return CallInfo{};
    }
    const SymShape& out = p_.value(info.out).dims;
    for (const auto& in : info.inputs) {
      if (!padded_to(p_.value(in.second).dims, out)) return CallInfo{};
    }
    info.expensive = is_expensive(*typed->root);
    info.compute = std::move(typed);
    info.kind = CallKind::kElementwise;
    return info;
  }

  // `a` is a kTensorToAttr argument the elementwise expression can read as an input: the op computes elementwise,
  // the attribute is a scalar of the expression language, and the tensor holds one element of a fusible dtype.
  bool scalar_tensor_attribute(const KernelCall& call, const KernelArg& a) const {
    if (!call.def->compute) return false;
    const LoweredValue& v = p_.value(a.value);
    if (!fusible(v.dtype) || sym_numel(v.dims).constant() != std::optional<int64_t>(1)) return false;
    for (const opdef::Attribute& attr : call.def->attributes) {
      if (attr.name == a.name) {
        return expr::paddle_attribute_scalar_type(opdef::arg_type_info(attr.type).spelling).has_value();
      }
    }
    return false;
  }

  // The attributes `names` (read from one-element tensors) as input names of the tensors' own types, converted
  // straight to the type of each use: Paddle converts a Scalar read from a tensor to x's type, never through the
  // attribute's declared float (a float64 bound stays exact).
  expr::NodePtr read_tensor_attributes(const expr::Node& root, const KernelCall& call,
                                       const std::vector<std::string>& names) const {
    return expr::substitute_at_use(root, [&](const expr::Node& n) -> expr::NodePtr {
      if (n.name_kind != expr::NameKind::kAttribute || std::find(names.begin(), names.end(), n.name) == names.end()) {
        return nullptr;
      }
      expr::NodePtr input = expr::clone(n);
      input->name_kind = expr::NameKind::kInput;
      input->weak = false;
      input->type = expr::compute_type(*scalar_of(p_.value(call.arg(n.name)->value).dtype));  // fusible: a scalar
      return input;
    });
  }

  CallInfo classify_reduce(const KernelCall& call, CallInfo info) {
    const opdef::Reduce& r = *call.def->reduce;
    expr::RawReduce raw;
    raw.init = expr::RawString{r.init.text, SourceLoc{}};
    raw.combine = expr::RawString{r.combine.text, SourceLoc{}};
    if (r.finalize) raw.finalize = expr::RawString{r.finalize->text, SourceLoc{}};
    raw.axis = expr::RawString{r.axis.name, SourceLoc{}};
    std::optional<expr::Reduction> parsed = expr::parse_reduction(raw, nullptr, diags_);
    if (!parsed) return CallInfo{};
    const expr::ExprContext ctx = context_for(call, p_);
    std::optional<expr::TypedReduction> typed = expr::check_reduction(*parsed, ctx, diags_);
    if (!typed) return CallInfo{};
    // Floating inputs accumulate in float64, as the reference kernels (kernels) do.
    if (expr::is_float(typed->input_type)) typed = expr::check_reduction(*parsed, ctx, diags_, ScalarType::kFloat64);
    if (!typed) return CallInfo{};
    uint32_t x = kNone;
    for (const auto& in : info.inputs) {
      if (in.first == typed->input) x = in.second;
    }
    const KernelArg* axis = call.arg(typed->axis);
    if (x == kNone || !axis || axis->kind != ArgKind::kConstant) return CallInfo{};
    const SymShape& shape = p_.value(x).dims;
    std::set<int64_t> axes;
    for (int64_t a : axis->constant.ints) {
      std::optional<int64_t> n = fusible_axis(a, shape.size());
      if (!n) return CallInfo{};
      axes.insert(*n);
    }
    size_t split = 0;
    if (!axes.empty()) {
      split = static_cast<size_t>(*axes.begin());
      if (*axes.rbegin() != static_cast<int64_t>(shape.size()) - 1 || axes.size() != shape.size() - split) {
        return CallInfo{};  // not the trailing axes
      }
    }
    if (sym_numel(p_.value(info.out).dims) != product(shape, 0, split)) return CallInfo{};
    for (expr::Expression* e : {&typed->init, &typed->combine, &typed->merge}) e->root = bind(*e->root, call);
    if (typed->finalize) typed->finalize->root = bind(*typed->finalize->root, call);
    info.split = split;
    info.inputs = {{typed->input, x}};
    info.reduction = std::move(typed);
    info.expensive = true;
    info.kind = CallKind::kReduce;
    return info;
  }

  CallInfo classify_row_pattern(const KernelCall& call, CallInfo info) {
    auto input = [&](std::string_view name) {
      for (const auto& in : info.inputs) {
        if (in.first == name) return in.second;
      }
      return kNone;
    };
    const uint32_t x = input("x");
    if (x == kNone) return CallInfo{};
    const LoweredValue& xv = p_.value(x);
    const bool half = is_half_float(xv.dtype);  // (fusible() already refused it where the target has no 16-bit loops)
    if (xv.dtype != ir::DataType::kFloat32 && xv.dtype != ir::DataType::kFloat64 && !half) return CallInfo{};
    if (xv.dims.empty() || p_.value(info.out).dims != xv.dims || p_.value(info.out).dtype != xv.dtype) return CallInfo{};
    info.pattern = call.def->row_pattern->kind;
    if (info.pattern == RowPatternKind::kSoftmax) {
      const KernelArg* axis = call.arg("axis");
      if (!axis || axis->kind != ArgKind::kConstant) return CallInfo{};
      const int64_t a = int_of(axis->constant);
      if (fusible_axis(a, xv.dims.size()) != std::optional<int64_t>(static_cast<int64_t>(xv.dims.size()) - 1)) {
        return CallInfo{};
      }
      info.split = xv.dims.size() - 1;
      info.inputs = {{"x", x}};
    } else if (info.pattern == RowPatternKind::kLayerNorm) {
      const KernelArg* axis = call.arg("begin_norm_axis");
      const KernelArg* eps = call.arg("epsilon");
      if (!axis || !eps || axis->kind != ArgKind::kConstant || eps->kind != ArgKind::kConstant) return CallInfo{};
      std::optional<int64_t> a = fusible_axis(int_of(axis->constant), xv.dims.size());
      if (!a) return CallInfo{};
      info.split = static_cast<size_t>(*a);
      info.epsilon = eps->constant.float_value;
      const SymExpr inner = product(xv.dims, info.split, xv.dims.size());
      std::vector<std::pair<std::string, uint32_t>> kept = {{"x", x}};
      for (const char* name : {"scale", "bias"}) {
        const uint32_t v = input(name);
        if (v == kNone) continue;
        // Paddle lets 16-bit layer_norm take float32 scale and bias (mixed precision); the loads convert.
        const ir::DataType t = p_.value(v).dtype;
        if ((t != xv.dtype && !(half && t == ir::DataType::kFloat32)) || sym_numel(p_.value(v).dims) != inner) {
          return CallInfo{};
        }
        kept.emplace_back(name, v);
      }
      info.inputs = std::move(kept);
      const SymExpr outer = product(xv.dims, 0, info.split);
      // mean and variance: float32 for 16-bit x (LayerNormInferMeta), else x's dtype.
      const ir::DataType stat = half ? ir::DataType::kFloat32 : xv.dtype;
      for (size_t k = 1; k < call.outputs.size() && k < 3; ++k) {
        const uint32_t v = call.outputs[k].values.empty() ? kNone : call.outputs[k].values[0];
        if (v != kNone && (sym_numel(p_.value(v).dims) != outer || p_.value(v).dtype != stat)) return CallInfo{};
        info.extras.push_back({call.outputs[k].name, v, v == kNone ? "" : "v" + std::to_string(v), true});
      }
    } else {
      return CallInfo{};  // rms_norm: no reference kernel to check a fused loop against yet
    }
    info.expensive = true;
    info.kind = CallKind::kRowPattern;
    return info;
  }

  const LoweredProgram& p_;
  bool half_floats_;
  bool view_aliases_ = false;  // classify_calls' view_aliases
  // Whether `val` is its buffer's only value or, with view_aliases_, its first, the others being outputs of
  // view calls (reshape, flatten, ...), which write nothing, or of in-place calls after it (set_value_ on a
  // compare's mask, DETR-style detectors), which never fuse (classify) and so rewrite the buffer once the group has
  // written it, as they would the unfused call's output.
  bool owns_buffer(const LoweredValue& val) const {
    const std::vector<uint32_t>& values = p_.buffers[val.buffer].values;
    if (values.size() == 1) return true;
    if (!view_aliases_ || values.front() != val.index) return false;
    for (size_t i = 1; i < values.size(); ++i) {
      const uint32_t by = p_.value(values[i]).defined_by;
      if (by == kNone || p_.calls[by].def == nullptr) return false;
      const bool view = !view_pairs(p_.calls[by], p_.values).empty();
      const bool rewrite = p_.calls[by].inplace_twin && val.defined_by != kNone && by > val.defined_by;
      if (!view && !rewrite) return false;
    }
    return true;
  }

  SourceManager sources_;
  std::ostringstream sink_;
  DiagnosticEngine diags_;
};

}  // namespace

std::vector<CallInfo> classify_calls(const LoweredProgram& program, bool half_floats, bool view_aliases) {
  std::vector<CallInfo> infos(program.calls.size());
  Classifier classifier(program, half_floats, view_aliases);
  for (uint32_t c = 0; c < program.calls.size(); ++c) infos[c] = classifier.classify(c);
  return infos;
}

}  // namespace kforge::passes::fusion_detail
