#include "passes/transforms.h"

#include <algorithm>

#include "passes/attr_values.h"

namespace kforge::passes {

namespace {

bool has_side_effects(const ir::Op& op, const OpSet& ops) {
  const opdef::PirOpSignature* sig = ops.find(op.full_name());
  if (!sig || !sig->op) return false;
  for (const opdef::NameRef& t : sig->op->traits) {
    if (t.name.find("SideEffectTrait") != std::string::npos) {
      const ir::Attribute* is_test = op.attr("is_test");
      return !(is_test && is_test->kind == ir::AttrKind::kBool && is_test->bool_value);
    }
  }
  return false;
}

bool always_kept(const ir::Op& op) {
  return op.is("pd_op", "fetch") || op.is("builtin", "shadow_output") || op.is("pd_op", "data") ||
         op.is("pd_op", "feed") || op.is("builtin", "parameter") || is_control_flow_op(op);
}

/// The operands an in-place twin writes: the inputs of its `inplace` pairs.
std::vector<ir::ValueId> inplace_inputs(const ir::Op& op, const OpSet& ops) {
  std::vector<ir::ValueId> out;
  const opdef::PirOpSignature* sig = ops.find(op.full_name());
  if (!sig || !sig->op || !sig->inplace) return out;
  for (const opdef::InplacePair& p : sig->op->inplace) {
    for (size_t i = 0; i < sig->operands.size() && i < op.operands.size(); ++i) {
      if (sig->operands[i].name == p.input && op.operands[i].valid()) out.push_back(op.operands[i]);
    }
  }
  return out;
}

}  // namespace

size_t eliminate_dead_code(ir::Program& program, const OpSet& ops) {
  // One backward sweep: an op is dead when nothing reads its results and, for an in-place twin, nothing after
  // it reads the operands it overwrites (their readers see its writes).
  std::vector<size_t> uses(program.value_capacity(), 0);
  const std::vector<std::vector<ir::Use>> use_lists = program.use_lists();
  for (size_t v = 0; v < use_lists.size(); ++v) uses[v] = use_lists[v].size();
  const std::vector<ir::OpId> order = program.top_level_ops();
  std::vector<uint32_t> position(program.op_capacity(), UINT32_MAX);
  for (size_t i = 0; i < order.size(); ++i) position[order[i].index] = static_cast<uint32_t>(i);
  std::vector<bool> erased(program.op_capacity(), false);

  auto used_after = [&](ir::ValueId v, uint32_t pos) {
    for (const ir::Use& u : use_lists[v.index]) {
      if (erased[u.op.index]) continue;
      const uint32_t p = position[u.op.index];
      if (p == UINT32_MAX || p > pos) return true;  // inside a region counts as after (conservative)
    }
    return false;
  };

  size_t count = 0;
  for (size_t i = order.size(); i-- > 0;) {
    const ir::Op& op = program.op(order[i]);
    if (op.erased || always_kept(op) || has_side_effects(op, ops)) continue;
    bool dead = true;
    for (ir::ValueId r : op.results) dead = dead && uses[r.index] == 0;
    for (ir::ValueId v : inplace_inputs(op, ops)) dead = dead && !used_after(v, static_cast<uint32_t>(i));
    if (!dead) continue;
    for (ir::ValueId v : op.operands) {
      if (v.valid() && uses[v.index] > 0) --uses[v.index];
    }
    erased[order[i].index] = true;
    program.erase_op(order[i]);
    ++count;
  }
  return count;
}

namespace {

/// A one-element known tensor as the Scalar attribute the runtime's scalar_from_tensor would make.
std::optional<ir::Attribute> scalar_attribute(const KnownData& d) {
  if (d.numel() != 1 || !d.is_static()) return std::nullopt;
  const bool floating = ir::is_floating(d.dtype);
  switch (d.dtype) {
    case ir::DataType::kFloat32: return ir::Attribute::float32(static_cast<float>(d.float_at(0)));
    case ir::DataType::kFloat64: return ir::Attribute::float64(d.float_at(0));
    case ir::DataType::kInt32: return ir::Attribute::int32(static_cast<int32_t>(*d.int_at(0).constant()));
    case ir::DataType::kInt64: return ir::Attribute::int64(*d.int_at(0).constant());
    case ir::DataType::kBool: return ir::Attribute::boolean(*d.int_at(0).constant() != 0);
    default: break;
  }
  if (floating) return ir::Attribute::scalar_float(d.dtype, d.float_at(0));
  return ir::Attribute::scalar_int(d.dtype, *d.int_at(0).constant());
}

}  // namespace

size_t fold_constants(ir::Program& program, const OpSet& ops, const Analysis& analysis) {
  size_t count = 0;
  for (ir::OpId id : program.top_level_ops()) {
    ir::Op& op = program.op(id);
    const opdef::PirOpSignature* sig = ops.find(op.full_name());
    if (!sig || !sig->op) continue;
    for (size_t i = 0; i < sig->operands.size() && i < op.operands.size(); ++i) {
      const opdef::PirOperand& so = sig->operands[i];
      const ir::ValueId v = op.operands[i];
      if (!so.mutable_attr || !v.valid() || v.index >= analysis.values.size()) continue;
      const opdef::Attribute* def = sig->op->find_attribute(so.name);
      if (!def) continue;
      const ValueInfo& info = analysis.values[v.index];
      std::optional<ir::Attribute> value;
      if (def->type == opdef::ArgType::kIntArray) {
        std::vector<int64_t> ints;
        bool ok = info.known;
        if (info.is_vector) {
          for (const ValueInfo& e : info.elements) {
            ok = ok && e.data && e.data->numel() == 1 && e.data->is_static();
            if (ok) ints.push_back(*e.data->int_at(0).constant());
          }
        } else {
          ok = ok && info.data && info.data->is_static();
          for (int64_t k = 0; ok && k < info.data->numel(); ++k) ints.push_back(*info.data->int_at(k).constant());
        }
        if (ok) value = ir::Attribute::int_array(std::move(ints));
      } else if (opdef::is_scalar_type(def->type) && info.known && !info.is_vector && info.data) {
        value = scalar_attribute(*info.data);
      }
      if (!value) continue;
      value->loc = op.loc;
      op.set_attr(so.name, std::move(*value));
      program.set_operand(id, static_cast<uint32_t>(i), ir::ValueId{});
      ++count;
    }
  }
  return count;
}

size_t canonicalize_ops(ir::Program& program) {
  size_t rewritten = 0;
  auto is_bool = [&](ir::ValueId v) {
    return v.valid() && program.type_of(v).is_tensor() && program.type_of(v).dtype == ir::DataType::kBool;
  };
  for (ir::OpId id : program.ops_in_order()) {
    ir::Op& op = program.op(id);
    if (op.dialect != "pd_op" || op.operands.empty()) continue;
    if (op.name == "depthwise_conv2d_transpose") {
      op.name = "conv2d_transpose";
      ++rewritten;
      continue;
    }
    if (op.name == "bitwise_and" || op.name == "bitwise_or" || op.name == "bitwise_not") {  // (no logical_xor op)
      if (!std::all_of(op.operands.begin(), op.operands.end(), is_bool)) continue;
      op.name = "logical_" + op.name.substr(8);
      ++rewritten;
    } else if (op.name == "multiply" && op.operands.size() == 2 && std::all_of(op.operands.begin(), op.operands.end(), is_bool)) {
      op.name = "logical_and";
      ++rewritten;
    } else if (op.name == "swiglu" && op.operands.size() == 2 && op.operands[1].valid() && op.results.size() == 1) {
      ir::OpSpec silu;
      silu.dialect = "pd_op";
      silu.name = "silu";
      silu.operands = {op.operands[0]};
      silu.result_types = {program.type_of(op.operands[0])};
      silu.loc = op.loc;
      silu.name_loc = op.name_loc;
      const ir::ValueId s = program.op(program.insert_op_before(id, std::move(silu))).results[0];
      ir::Op& swiglu = program.op(id);  // (the insertion may have moved the op table)
      swiglu.name = "multiply";
      swiglu.attributes.clear();
      program.set_operand(id, 0, s);
      ++rewritten;
    }
  }
  return rewritten;
}

}  // namespace kforge::passes
