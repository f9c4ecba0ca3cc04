#include "passes/op_context.h"

#include "passes/shape_rule_helpers.h"

#include <cmath>

#include <fmt/format.h>

namespace kforge::passes::detail {

namespace {

/// Ops whose output's size or values depend on the data of their inputs, not only on their dims: where the trail of
/// an unknown shape value ends at one of these, no generation-time analysis can know it.
bool is_data_dependent_op(const ir::Op& op) {
  static const char* const kNames[] = {"nonzero",     "masked_select",      "unique", "unique_consecutive",
                                       "where_index", "generate_proposals", "distribute_fpn_proposals"};
  for (const char* n : kNames) {
    if (op.name == n) return true;
  }
  return false;
}

bool is_program_input_op(const ir::Op& op) {
  return (op.dialect == "pd_op" && (op.name == "data" || op.name == "feed")) ||
         (op.dialect == "builtin" && op.name == "parameter");
}

}  // namespace

std::string OpContext::runtime_value(const std::string& name) {
  // Known, but as expressions of the dims: the rule needed constants (an axis, a permutation, strides).
  if (std::optional<std::vector<SymExpr>> values = ints(name)) {
    return fmt::format("the value of '{}' is known only as {}, an expression of the dynamic input dims; kforge needs "
                       "a constant here",
                       name, to_string(*values));
  }
  read_at_run_time_ = true;
  const std::string head =
      fmt::format("the output shape depends on the run-time value of '{}', which kforge cannot know when it generates "
                  "code",
                  name);
  ir::ValueId v = operand(name);
  // Follow the first operand whose contents are unknown, back to where the unknown starts. Values are SSA, so the
  // walk ends; the bound only guards against a malformed program.
  for (int step = 0; v.valid() && step < 10000; ++step) {
    const ir::Value& value = program_.value(v);
    const ir::OpId def = program_.defining_op(v);
    if (value.kind == ir::ValueKind::kBlockArgument || !def.valid()) {
      notes_.push_back({value.loc, "the value comes from here"});
      return head + ": it is read from the data of a block argument, not computed from dims";
    }
    const ir::Op& producer = program_.op(def);
    // As the analysis names ops: program YAML spells Paddle's ops without their dialect.
    const std::string pname = program_.format == ir::SourceFormat::kProgramYaml && producer.dialect == "pd_op"
                                  ? producer.name
                                  : producer.full_name();
    if (is_program_input_op(producer)) {
      const std::string what = producer.name == "parameter" ? "parameter" : "program input";
      notes_.push_back({producer.loc, fmt::format("'{}' is read here", value.name.empty() ? pname : value.name)});
      return fmt::format("{}: it is computed from the data of the {} '{}', not only from its dims", head, what,
                         value.name.empty() ? value.source_id : value.name);
    }
    if (is_data_dependent_op(producer)) {
      notes_.push_back({producer.loc, fmt::format("'{}' is here", pname)});
      return fmt::format("{}: it comes from '{}', whose output size depends on the data of its input", head, pname);
    }
    // The next value back: the first operand (or element of a combined list) whose contents are unknown.
    ir::ValueId next;
    for (ir::ValueId in : producer.operands) {
      if (!in.valid()) continue;
      const ValueInfo& info = analysis_.values.at(in.index);
      if (info.is_vector) {
        bool all_known = true;
        for (const ValueInfo& e : info.elements) all_known = all_known && e.data.has_value();
        if (all_known) continue;
      } else if (info.data) {
        continue;
      }
      next = in;
      break;
    }
    if (!next.valid()) {
      notes_.push_back({producer.loc, fmt::format("'{}' is here", pname)});
      return fmt::format("{}: '{}' computes it from values kforge knows, but kforge does not evaluate '{}' at "
                         "generation time",
                         head, pname, pname);
    }
    v = next;
  }
  return head;
}

OpContext::OpContext(const ir::Program& program, const ir::Op& op, const opdef::PirOpSignature& sig, Analysis& analysis)
    : program_(program), op_(op), sig_(sig), analysis_(analysis), params_(sig.op->effective_infer_meta_param()) {}

std::optional<SymShape> OpContext::broadcast(const SymShape& x, const SymShape& y) {
  std::vector<std::pair<SymExpr, SymExpr>> taken_equal;
  std::optional<SymShape> dims = broadcast_shapes(x, y, analysis_.equal_broadcast_dims ? &taken_equal : nullptr);
  if (!dims) return std::nullopt;
  for (auto& [a, b] : taken_equal) analysis_.dim_equalities.push_back({op_.loc, op_.full_name(), std::move(a), std::move(b)});
  return dims;
}

bool OpContext::take_equal(const SymExpr& a, const SymExpr& b) {
  if (!analysis_.equal_broadcast_dims) return false;
  analysis_.dim_equalities.push_back({op_.loc, op_.full_name(), a, b});
  return true;
}

SymExpr OpContext::data_dependent_dim(size_t result, uint32_t axis, const SymExpr& bound, const std::string& meaning) {
  return add_data_dependent_symbol(analysis_, op_.id, static_cast<uint32_t>(result), axis, meaning, bound,
                                   /*before_call=*/false);
}

SymExpr OpContext::data_dependent_element_dim(size_t result, uint32_t element, uint32_t axis, const SymExpr& bound,
                                              const std::string& meaning) {
  return add_data_dependent_symbol(analysis_, op_.id, static_cast<uint32_t>(result), axis, meaning, bound,
                                   /*before_call=*/false, element);
}

std::optional<size_t> OpContext::operand_index(const std::string& name) const {
  for (size_t i = 0; i < sig_.operands.size(); ++i) {
    if (sig_.operands[i].name == name) return i;
  }
  return std::nullopt;
}

ir::ValueId OpContext::operand(const std::string& name) const {
  auto i = operand_index(name);
  if (!i || *i >= op_.operands.size()) return {};
  return op_.operands[*i];
}

const ValueInfo* OpContext::tensor(const std::string& name) const {
  const ir::ValueId v = operand(name);
  if (!v.valid()) return nullptr;
  return &analysis_.values.at(v.index);
}

std::vector<const ValueInfo*> OpContext::tensors(const std::string& name) const {
  std::vector<const ValueInfo*> out;
  const ValueInfo* list = tensor(name);
  if (!list) return out;
  for (const ValueInfo& e : list->elements) out.push_back(&e);
  return out;
}

const ir::Attribute* OpContext::attribute(const std::string& name) const { return op_.attr(name); }

std::optional<std::vector<SymExpr>> OpContext::ints(const std::string& name) const {
  const ir::ValueId v = operand(name);
  if (v.valid()) {
    const ValueInfo& info = analysis_.values.at(v.index);
    std::vector<SymExpr> out;
    if (info.is_vector) {
      for (const ValueInfo& e : info.elements) {
        if (!e.data || e.data->numel() != 1) return std::nullopt;
        out.push_back(e.data->int_at(0));
      }
      return out;
    }
    if (!info.data) return std::nullopt;
    for (int64_t i = 0, n = info.data->numel(); i < n; ++i) out.push_back(info.data->int_at(i));
    return out;
  }
  const ir::Attribute* a = attribute(name);
  if (!a) return std::nullopt;
  if (a->kind != ir::AttrKind::kIntArray && !(a->kind == ir::AttrKind::kArray && a->is_int_list())) return std::nullopt;
  std::vector<SymExpr> out;
  for (int64_t x : a->as_int_list()) out.push_back(x);
  return out;
}

std::optional<std::vector<int64_t>> OpContext::static_ints(const std::string& name) const {
  auto list = ints(name);
  if (!list) return std::nullopt;
  std::vector<int64_t> out;
  for (const SymExpr& e : *list) {
    auto c = e.constant();
    if (!c) return std::nullopt;
    out.push_back(*c);
  }
  return out;
}

std::optional<SymExpr> OpContext::int_value(const std::string& name) const {
  const ir::ValueId v = operand(name);
  if (v.valid()) {
    const ValueInfo& info = analysis_.values.at(v.index);
    if (!info.data || info.data->numel() < 1) return std::nullopt;
    return info.data->int_at(0);
  }
  const ir::Attribute* a = attribute(name);
  if (!a) return std::nullopt;
  if (a->is_integer()) return SymExpr(a->int_value);
  if (a->kind == ir::AttrKind::kBool) return SymExpr(a->bool_value ? 1 : 0);
  if (a->is_floating() && std::trunc(a->float_value) == a->float_value) return SymExpr(static_cast<int64_t>(a->float_value));
  if (a->kind == ir::AttrKind::kScalar) {
    if (ir::is_floating(a->dtype)) return SymExpr(static_cast<int64_t>(a->float_value));
    if (a->dtype == ir::DataType::kBool) return SymExpr(a->bool_value ? 1 : 0);
    return SymExpr(a->int_value);
  }
  return std::nullopt;
}

std::optional<int64_t> OpContext::static_int(const std::string& name) const {
  auto v = int_value(name);
  if (!v) return std::nullopt;
  return v->constant();
}

std::optional<double> OpContext::float_value(const std::string& name) const {
  const ir::ValueId v = operand(name);
  if (v.valid()) {
    const ValueInfo& info = analysis_.values.at(v.index);
    if (!info.data || info.data->numel() < 1 || !info.data->is_static()) return std::nullopt;
    return info.data->float_at(0);
  }
  const ir::Attribute* a = attribute(name);
  if (!a) return std::nullopt;
  if (a->is_floating()) return a->float_value;
  if (a->is_integer()) return static_cast<double>(a->int_value);
  if (a->kind == ir::AttrKind::kBool) return a->bool_value ? 1.0 : 0.0;
  if (a->kind == ir::AttrKind::kScalar) {
    if (ir::is_floating(a->dtype) || ir::is_complex(a->dtype)) return a->float_value;
    if (a->dtype == ir::DataType::kBool) return a->bool_value ? 1.0 : 0.0;
    return static_cast<double>(a->int_value);
  }
  return std::nullopt;
}

std::optional<bool> OpContext::bool_value(const std::string& name) const {
  const ir::Attribute* a = attribute(name);
  if (!a || a->kind != ir::AttrKind::kBool) return std::nullopt;
  return a->bool_value;
}

std::optional<std::string> OpContext::string_value(const std::string& name) const {
  const ir::Attribute* a = attribute(name);
  if (!a || a->kind != ir::AttrKind::kString) return std::nullopt;
  return a->text;
}

std::optional<ir::DataType> OpContext::dtype_value(const std::string& name) const {
  const ir::Attribute* a = attribute(name);
  if (!a || a->kind != ir::AttrKind::kDataType) return std::nullopt;
  return a->dtype;
}

std::vector<double> OpContext::floats(const std::string& name) const {
  std::vector<double> out;
  const ir::Attribute* a = attribute(name);
  if (!a || a->kind != ir::AttrKind::kArray) return out;
  for (const ir::Attribute& e : a->elements) out.push_back(e.is_floating() ? e.float_value : static_cast<double>(e.int_value));
  return out;
}

const std::string& OpContext::param(size_t i) const {
  static const std::string kEmpty;
  return i < params_.size() ? params_[i] : kEmpty;
}

ir::ValueId OpContext::result(size_t i) const { return i < op_.results.size() ? op_.results[i] : ir::ValueId{}; }

ValueInfo* OpContext::result_info(size_t i) {
  if (i < op_.results.size()) return &analysis_.values.at(op_.results[i].index);
  std::vector<ValueInfo>& omitted = analysis_.omitted_results[op_.id.index];
  if (omitted.size() < sig_.results.size()) omitted.resize(sig_.results.size());
  return i < omitted.size() ? &omitted[i] : nullptr;
}

void OpContext::set_result(size_t i, ir::DataType dtype, SymShape dims) {
  ValueInfo* info = result_info(i);
  if (!info) return;
  info->known = true;
  info->is_vector = false;
  info->dtype = dtype;
  info->dims = std::move(dims);
}

void OpContext::set_result_list(size_t i, std::vector<ValueInfo> elements) {
  ValueInfo* info = result_info(i);
  if (!info) return;
  info->known = true;
  info->is_vector = true;
  info->elements = std::move(elements);
}

}  // namespace kforge::passes::detail
