#include "passes/if_conversion.h"

#include <string>
#include <vector>

namespace kforge::passes {

namespace {

using ir::Op;
using ir::OpId;
using ir::OpSpec;
using ir::ValueId;

bool is_if(const Op& op) { return !op.erased && op.is("pd_op", "if"); }

// Whether hoisting `op` out of its branch (running it when the branch would not) changes nothing but time.
bool hoistable(const Op& op) {
  if (!op.regions.empty() || op.dialect == "cf") return op.is("cf", "yield");
  if (op.dialect != "pd_op" && op.dialect != "builtin") return false;
  if (!op.name.empty() && op.name.back() == '_') return false;  // in place: writes an operand
  static const char* const kEffects[] = {"print", "assert", "data", "feed", "fetch", "while", "if"};
  for (const char* name : kEffects) {
    if (op.name == name) return false;
  }
  return !op.is("builtin", "parameter") && !op.is("builtin", "shadow_output");
}

class IfConverter {
 public:
  explicit IfConverter(ir::Program& p) : p_(p) {}

  // The if's two branches' blocks, each ending in cf.yield, if it can be converted.
  bool convertible(const Op& op) const {
    if (op.operands.size() != 1 || !op.operands[0].valid() || op.regions.size() != 2) return false;
    for (const ir::Region& region : op.regions) {
      if (region.blocks.size() != 1) return false;
      const ir::Block& block = p_.block(region.blocks[0]);
      if (block.ops.empty() || !p_.op(block.ops.back()).is("cf", "yield")) return false;
      if (p_.op(block.ops.back()).operands.size() != op.results.size()) return false;
      for (OpId id : block.ops) {
        if (!hoistable(p_.op(id))) return false;
      }
    }
    return true;
  }

  void convert(OpId if_id) {
    std::vector<std::vector<ValueId>> yields;
    for (size_t r = 0; r < 2; ++r) {
      const std::vector<OpId> ops = p_.block(p_.op(if_id).regions[r].blocks[0]).ops;  // copy: hoisting edits
      for (OpId id : ops) {
        if (p_.op(id).is("cf", "yield")) {
          yields.push_back(p_.op(id).operands);
          continue;
        }
        hoist(id, if_id);
      }
    }
    const Op& op = p_.op(if_id);
    const ValueId cond = op.operands[0];
    const std::vector<ValueId> results = op.results;
    for (size_t i = 0; i < results.size(); ++i) {
      const ValueId a = yields[0][i], b = yields[1][i];
      ValueId value = a;
      if (a != b) {
        const ir::Type& type = p_.type_of(results[i]);
        const ir::Type mask_type = ir::Type::tensor(ir::DataType::kBool, type.dims);
        const ValueId zeros = add(if_id, "full_like", {a}, mask_type,
                                  {{"value", ir::Attribute::scalar_float(ir::DataType::kFloat32, 0.0), {}},
                                   {"dtype", ir::Attribute::data_type(ir::DataType::kBool), {}}});
        const ValueId mask = add(if_id, "logical_or", {zeros, cond}, mask_type, {});
        value = add(if_id, "where", {mask, a, b}, type, {});
      }
      p_.replace_all_uses(results[i], value);
    }
    p_.erase_op(if_id);
  }

 private:
  // Re-creates `id` right before `anchor` and points every use of its results at the new ones.
  void hoist(OpId id, OpId anchor) {
    const Op& op = p_.op(id);
    OpSpec spec;
    spec.dialect = op.dialect;
    spec.name = op.name;
    spec.operands = op.operands;
    for (ValueId r : op.results) spec.result_types.push_back(p_.type_of(r));
    spec.attributes = op.attributes;
    spec.loc = op.loc;
    spec.name_loc = op.name_loc;
    const std::vector<ValueId> old_results = op.results;
    const OpId moved = p_.insert_op_before(anchor, std::move(spec));
    const std::vector<ValueId> new_results = p_.op(moved).results;
    for (size_t i = 0; i < old_results.size(); ++i) {
      p_.value(new_results[i]).name = p_.value(old_results[i]).name;
      p_.replace_all_uses(old_results[i], new_results[i]);
    }
  }

  ValueId add(OpId anchor, const char* name, std::vector<ValueId> operands, const ir::Type& type,
              std::vector<ir::NamedAttribute> attributes) {
    const Op& at = p_.op(anchor);
    OpSpec spec;
    spec.dialect = "pd_op";
    spec.name = name;
    spec.operands = std::move(operands);
    spec.result_types = {type};
    spec.attributes = std::move(attributes);
    spec.loc = at.loc;
    spec.name_loc = at.name_loc;
    return p_.op(p_.insert_op_before(anchor, std::move(spec))).results[0];
  }

  ir::Program& p_;
};

}  // namespace

size_t convert_ifs(ir::Program& program) {
  IfConverter converter(program);
  size_t converted = 0;
  // Innermost first: an if whose branches hold a convertible if becomes convertible once that one is converted.
  for (bool progress = true; progress;) {
    progress = false;
    for (OpId id : program.ops_in_order()) {
      if (!is_if(program.op(id)) || !converter.convertible(program.op(id))) continue;
      converter.convert(id);
      ++converted;
      progress = true;
      break;  // the order changed
    }
  }
  return converted;
}

}  // namespace kforge::passes
