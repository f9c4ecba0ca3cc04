#include "passes/precision.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace kforge::passes {

namespace {

using ir::DataType;
using ir::OpId;
using ir::ValueId;

// batch_norm's operands 1 to 4: mean, variance, scale, bias (the kernel signature's order).
bool batch_norm_parameter_use(const ir::Op& op, uint32_t operand) {
  return (op.is("pd_op", "batch_norm") || op.is("pd_op", "batch_norm_")) && operand >= 1 && operand <= 4;
}

bool is_float32_tensor(const ir::Type& t) { return t.is_tensor() && t.dtype == DataType::kFloat32; }

class PrecisionPlanner {
 public:
  PrecisionPlanner(ir::Program& p, DataType to, const std::set<std::string>& float32_ops, bool float32_interface)
      : p_(p), float32_ops_(float32_ops), float32_interface_(float32_interface) {
    report_.to = to;
  }

  PrecisionReport run() {
    for (OpId id : p_.top_level_ops()) {
      if (!p_.op(id).regions.empty()) {
        report_.skipped = "the program has control flow (" + p_.op(id).full_name() + ")";
        report_.skipped_at = id;
        return std::move(report_);
      }
    }
    convert_parameters();
    if (float32_interface_) {
      cast_fetches();
      cast_inputs();
    } else {
      convert_inputs();
    }
    cast_around_float32_ops();
    convert_attributes();
    release_result_dtypes();
    return std::move(report_);
  }

 private:
  // Every float32 parameter becomes 16-bit unless batch norms alone read it.
  void convert_parameters() {
    for (OpId id : p_.parameters()) {
      ir::Op& op = p_.op(id);
      if (op.results.size() != 1) continue;
      ir::Type& type = p_.value(op.results[0]).type;
      if (!is_float32_tensor(type)) continue;
      const std::string name = op.string_attr("parameter_name");
      const std::vector<ir::Use> uses = p_.uses(op.results[0]);
      const bool statistics = !uses.empty() && std::all_of(uses.begin(), uses.end(), [&](const ir::Use& u) {
        return batch_norm_parameter_use(p_.op(u.op), u.operand_index);
      });
      if (statistics) {
        report_.kept.push_back(name);
        continue;
      }
      type.dtype = report_.to;
      report_.stored.emplace(name, DataType::kFloat32);
    }
  }

  // DataType attributes float32 -> the 16-bit type, except the program inputs' own (the interface stays float32),
  // the inserted casts' and the float32 ops'.
  void convert_attributes() {
    const std::set<uint32_t> casts = inserted_casts();
    for (OpId id : p_.top_level_ops()) {
      ir::Op& op = p_.op(id);
      if (op.is("pd_op", "data") || op.is("pd_op", "feed") || casts.count(id.index) || kept_ops_.count(id.index)) {
        continue;
      }
      for (ir::NamedAttribute& a : op.attributes) {
        const bool data_type = a.value.kind == ir::AttrKind::kDataType && a.value.dtype == DataType::kFloat32;
        // Program YAML writes `dtype: float32` untyped.
        const bool spelled = a.value.kind == ir::AttrKind::kString && a.value.kind_guessed && a.name == "dtype" &&
                             a.value.text == "float32";
        if (!data_type && !spelled) continue;
        a.value = ir::Attribute::data_type(report_.to).at(a.value.loc);
        ++report_.attributes;
      }
    }
  }

  void cast_inputs() {
    for (OpId id : p_.feeds()) {
      const ir::Op& op = p_.op(id);
      if (op.results.size() != 1 || !is_float32_tensor(p_.type_of(op.results[0]))) continue;
      const ValueId x = op.results[0];
      const std::vector<OpId>& order = p_.block(p_.top_block()).ops;
      const size_t position = static_cast<size_t>(std::find(order.begin(), order.end(), id) - order.begin()) + 1;
      const OpId cast = p_.insert_op(p_.top_block(), position, cast_spec(x, report_.to, op.loc));
      const ValueId low = p_.op(cast).results[0];
      p_.replace_all_uses(x, low);
      p_.set_operand(cast, 0, x);
      report_.casts.push_back({cast, report_.to, "input '" + p_.op(id).string_attr("name") + "'"});
    }
  }

  // --io-precision compute: a float32 input is declared 16-bit (its result and its dtype attribute); the fetches
  // follow what they read (their results are inferred again).
  void convert_inputs() {
    for (OpId id : p_.feeds()) {
      ir::Op& op = p_.op(id);
      if (op.results.size() != 1 || !is_float32_tensor(p_.type_of(op.results[0]))) continue;
      p_.value(op.results[0]).type.dtype = report_.to;
      for (ir::NamedAttribute& a : op.attributes) {
        if (a.value.kind == ir::AttrKind::kDataType && a.value.dtype == DataType::kFloat32) {
          a.value = ir::Attribute::data_type(report_.to).at(a.value.loc);
        } else if (a.value.kind == ir::AttrKind::kString && a.value.kind_guessed && a.name == "dtype" &&
                   a.value.text == "float32") {  // program YAML's untyped `dtype: float32`
          a.value = ir::Attribute::data_type(report_.to).at(a.value.loc);
        }
      }
      ++report_.interface;
    }
  }

  // A fetched value that was float32 is fetched through a cast back to float32 (a value that stayed float32, a
  // batch norm's running mean, gets a copy: the pass does not infer dtypes, the analysis after it does).
  void cast_fetches() {
    for (OpId id : p_.fetches()) {
      const ir::Op& op = p_.op(id);
      if (op.operands.empty() || !op.operands[0].valid()) continue;
      const ValueId x = op.operands[0];
      if (!is_float32_tensor(p_.type_of(x))) continue;
      const std::string name = op.string_attr(op.is("pd_op", "fetch") ? "name" : "output_name");
      const OpId cast = p_.insert_op_before(id, cast_spec(x, DataType::kFloat32, op.loc));
      p_.set_operand(id, 0, p_.op(cast).results[0]);
      report_.casts.push_back({cast, DataType::kFloat32, "output '" + name + "'"});
    }
  }

  // An op of float32_ops reads its float32 operands through casts to float32 (of values that become 16-bit; a cast of
  // one that stays float32 is a copy) and its float32 results reach their readers through casts to the 16-bit type.
  // The op keeps its declared float32 results.
  void cast_around_float32_ops() {
    const std::vector<OpId> order = p_.top_level_ops();  // the casts inserted below are not visited
    for (OpId id : order) {
      if (p_.op(id).dialect != "pd_op" || !float32_ops_.count(p_.op(id).name)) continue;
      const std::string name = p_.op(id).full_name();
      for (uint32_t i = 0; i < p_.op(id).operands.size(); ++i) {
        const ValueId x = p_.op(id).operands[i];
        // float32 as declared, or already 16-bit: a program input's cast.
        if (!x.valid() || !p_.type_of(x).is_tensor() ||
            (p_.type_of(x).dtype != DataType::kFloat32 && p_.type_of(x).dtype != report_.to)) {
          continue;
        }
        const OpId cast = p_.insert_op_before(id, cast_spec(x, DataType::kFloat32, p_.op(id).loc));
        p_.set_operand(id, i, p_.op(cast).results[0]);
        report_.casts.push_back({cast, DataType::kFloat32, "operand of " + name});
      }
      kept_ops_.insert(id.index);
      const std::vector<ValueId> results = p_.op(id).results;
      for (ValueId r : results) {
        if (!is_float32_tensor(p_.type_of(r)) || p_.uses(r).empty()) continue;
        const std::vector<OpId>& now = p_.block(p_.top_block()).ops;
        const size_t after = static_cast<size_t>(std::find(now.begin(), now.end(), id) - now.begin()) + 1;
        const OpId cast = p_.insert_op(p_.top_block(), after, cast_spec(r, report_.to, p_.op(id).loc));
        const ValueId low = p_.op(cast).results[0];
        p_.replace_all_uses(r, low);
        p_.set_operand(cast, 0, r);
        report_.casts.push_back({cast, report_.to, "result of " + name});
      }
    }
  }

  // The float32 results the program declares are inferred again from the new operand dtypes: a batch norm's
  // running statistics stay float32, its y follows x. The inputs, the parameters and the inserted casts keep theirs.
  void release_result_dtypes() {
    const std::set<uint32_t> casts = inserted_casts();
    for (OpId id : p_.top_level_ops()) {
      const ir::Op& op = p_.op(id);
      if (casts.count(id.index) || kept_ops_.count(id.index) || op.is("pd_op", "data") || op.is("pd_op", "feed") ||
          op.is("builtin", "parameter")) {
        continue;
      }
      for (ValueId r : op.results) release(p_.value(r).type);
    }
  }

  std::set<uint32_t> inserted_casts() const {
    std::set<uint32_t> casts;
    for (const PrecisionReport::Cast& c : report_.casts) casts.insert(c.op.index);
    return casts;
  }

  static void release(ir::Type& type) {
    if (type.is_vector()) {
      for (ir::Type& e : type.elements) release(e);
    } else if (is_float32_tensor(type)) {
      type.dtype = DataType::kUndefined;
    }
  }

  ir::OpSpec cast_spec(ValueId x, DataType to, SourceLoc loc) const {
    const ir::Type& type = p_.type_of(x);
    ir::OpSpec spec;
    spec.dialect = "pd_op";
    spec.name = "cast";
    spec.operands = {x};
    spec.result_types = {ir::Type::tensor(to, type.dims)};
    spec.attributes.push_back({"dtype", ir::Attribute::data_type(to), {}});
    spec.loc = loc;
    spec.name_loc = loc;
    return spec;
  }

  ir::Program& p_;
  const std::set<std::string>& float32_ops_;
  const bool float32_interface_;
  std::set<uint32_t> kept_ops_;  // ops of float32_ops, by OpId index
  PrecisionReport report_;
};

}  // namespace

std::string PrecisionReport::dump(const ir::Program& program) const {
  std::string out = fmt::format("precision: {}, {} parameters converted, {} kept float32, {} casts, {} dtype "
                                "attributes{}{}\n",
                                ir::dtype_name(to), stored.size(), kept.size(), casts.size(), attributes,
                                interface == 0 ? "" : fmt::format(", {} inputs {} themselves", interface,
                                                                  ir::dtype_name(to)),
                                skipped.empty() ? "" : " (skipped: " + skipped + ")");
  for (const auto& [name, from] : stored) {
    out += fmt::format("precision: parameter {} {} -> {}\n", name, ir::dtype_name(from), ir::dtype_name(to));
  }
  std::vector<std::string> sorted = kept;
  std::sort(sorted.begin(), sorted.end());
  for (const std::string& name : sorted) out += fmt::format("precision: parameter {} stays float32\n", name);
  std::map<uint32_t, size_t> position;
  const std::vector<OpId>& order = program.top_level_ops();
  for (size_t i = 0; i < order.size(); ++i) position[order[i].index] = i;
  std::map<size_t, std::string> lines;  // in program order
  for (const Cast& c : casts) {
    if (!position.count(c.op.index)) continue;
    const size_t at = position[c.op.index];
    lines[at] = fmt::format("precision: op {} pd_op.cast -> {} ({})\n", at, ir::dtype_name(c.to), c.what);
  }
  for (const auto& [at, line] : lines) out += line;
  return out;
}

PrecisionReport plan_precision(ir::Program& program, DataType to, const std::set<std::string>& float32_ops,
                               bool float32_interface) {
  if (to == DataType::kFloat32) return {};
  return PrecisionPlanner(program, to, float32_ops, float32_interface).run();
}

}  // namespace kforge::passes
