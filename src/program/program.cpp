#include "program/program.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

namespace kforge::ir {

std::string_view source_format_name(SourceFormat format) {
  switch (format) {
    case SourceFormat::kBuilt: return "built";
    case SourceFormat::kPirJson: return "pir-json";
    case SourceFormat::kPirText: return "pir-text";
    case SourceFormat::kProgramYaml: return "program-yaml";
  }
  return "built";
}

// ---------------------------------------------------------------------------------------------- Op

const NamedAttribute* Op::named_attr(std::string_view attr_name) const {
  for (const NamedAttribute& a : attributes) {
    if (a.name == attr_name) return &a;
  }
  return nullptr;
}

const Attribute* Op::attr(std::string_view attr_name) const {
  const NamedAttribute* a = named_attr(attr_name);
  return a ? &a->value : nullptr;
}

void Op::set_attr(std::string attr_name, Attribute value, SourceLoc at) {
  for (NamedAttribute& a : attributes) {
    if (a.name == attr_name) {
      a.value = std::move(value);
      return;
    }
  }
  attributes.push_back({std::move(attr_name), std::move(value), at});
}

bool Op::erase_attr(std::string_view attr_name) {
  auto it = std::find_if(attributes.begin(), attributes.end(),
                         [&](const NamedAttribute& a) { return a.name == attr_name; });
  if (it == attributes.end()) return false;
  attributes.erase(it);
  return true;
}

std::string Op::string_attr(std::string_view attr_name) const {
  const Attribute* a = attr(attr_name);
  if (!a || (a->kind != AttrKind::kString && a->kind != AttrKind::kTensorName)) return "";
  return a->text;
}

// ---------------------------------------------------------------------------------------------- Program

Program::Program() {
  Block top;
  top.id = BlockId{0};
  blocks_.push_back(std::move(top));
  top_ = BlockId{0};
}

ValueId Program::new_value(Type type, ValueKind kind, SourceLoc loc) {
  Value v;
  v.id = ValueId{static_cast<uint32_t>(values_.size())};
  v.type = std::move(type);
  v.kind = kind;
  v.loc = loc;
  values_.push_back(std::move(v));
  return values_.back().id;
}

OpId Program::new_op(BlockId block_id, OpSpec spec) {
  const OpId id{static_cast<uint32_t>(ops_.size())};
  Op op;
  op.id = id;
  op.dialect = std::move(spec.dialect);
  op.name = std::move(spec.name);
  op.operands = std::move(spec.operands);
  op.attributes = std::move(spec.attributes);
  op.parent = block_id;
  op.loc = spec.loc;
  op.name_loc = spec.name_loc;
  for (size_t i = 0; i < spec.result_types.size(); ++i) {
    const ValueId v = new_value(std::move(spec.result_types[i]), ValueKind::kOpResult, spec.loc);
    values_[v.index].op = id;
    values_[v.index].index = static_cast<uint32_t>(i);
    op.results.push_back(v);
  }
  ops_.push_back(std::move(op));
  return id;
}

OpId Program::append_op(BlockId block_id, OpSpec spec) {
  return insert_op(block_id, block(block_id).ops.size(), std::move(spec));
}

OpId Program::insert_op(BlockId block_id, size_t position, OpSpec spec) {
  const OpId id = new_op(block_id, std::move(spec));
  std::vector<OpId>& list = block(block_id).ops;
  list.insert(list.begin() + static_cast<std::ptrdiff_t>(std::min(position, list.size())), id);
  return id;
}

OpId Program::insert_op_before(OpId anchor, OpSpec spec) {
  const BlockId b = op(anchor).parent;
  const std::vector<OpId>& list = block(b).ops;
  const auto it = std::find(list.begin(), list.end(), anchor);
  return insert_op(b, static_cast<size_t>(it - list.begin()), std::move(spec));
}

BlockId Program::add_region(OpId op_id) {
  op(op_id).regions.emplace_back();
  return add_block(op_id, static_cast<uint32_t>(op(op_id).regions.size() - 1));
}

BlockId Program::add_block(OpId op_id, uint32_t region) {
  Block b;
  b.id = BlockId{static_cast<uint32_t>(blocks_.size())};
  b.parent = op_id;
  b.region_index = region;
  blocks_.push_back(std::move(b));
  op(op_id).regions.at(region).blocks.push_back(blocks_.back().id);
  return blocks_.back().id;
}

ValueId Program::add_block_argument(BlockId block_id, Type type, SourceLoc loc) {
  const ValueId v = new_value(std::move(type), ValueKind::kBlockArgument, loc);
  Block& b = block(block_id);
  values_[v.index].block = block_id;
  // Positional arguments come before keyword arguments.
  auto first_kwarg = std::find_if(b.args.begin(), b.args.end(),
                                  [&](ValueId a) { return !value(a).keyword.empty(); });
  b.args.insert(first_kwarg, v);
  for (size_t i = 0; i < b.args.size(); ++i) values_[b.args[i].index].index = static_cast<uint32_t>(i);
  return v;
}

ValueId Program::add_block_kwarg(BlockId block_id, std::string keyword, Type type, SourceLoc loc) {
  const ValueId v = new_value(std::move(type), ValueKind::kBlockArgument, loc);
  Block& b = block(block_id);
  values_[v.index].block = block_id;
  values_[v.index].keyword = std::move(keyword);
  values_[v.index].index = static_cast<uint32_t>(b.args.size());
  b.args.push_back(v);
  return v;
}

void Program::erase_op(OpId id) {
  Op& o = op(id);
  if (o.erased) return;
  std::vector<OpId>& list = block(o.parent).ops;
  list.erase(std::remove(list.begin(), list.end(), id), list.end());
  // Erase nested ops too, so ops_in_order() and uses() never see them.
  std::vector<OpId> nested;
  for (const Region& r : o.regions) {
    for (BlockId b : r.blocks) nested.insert(nested.end(), block(b).ops.begin(), block(b).ops.end());
  }
  o.erased = true;
  for (OpId n : nested) erase_op(n);
}

void Program::replace_all_uses(ValueId from, ValueId to) {
  for (Op& o : ops_) {
    if (o.erased) continue;
    for (ValueId& v : o.operands) {
      if (v == from) v = to;
    }
  }
}

void Program::set_operand(OpId op_id, uint32_t index, ValueId v) { op(op_id).operands.at(index) = v; }

// ---------------------------------------------------------------------------------------------- queries

void Program::walk(const std::function<void(const Op&)>& fn) const {
  // Iterative pre-order walk: programs can nest regions deeply enough that recursion is not worth the risk.
  struct Frame {
    BlockId block;
    size_t next;
  };
  std::vector<Frame> stack{{top_, 0}};
  while (!stack.empty()) {
    Frame& f = stack.back();
    const Block& b = block(f.block);
    if (f.next >= b.ops.size()) {
      stack.pop_back();
      continue;
    }
    const Op& o = op(b.ops[f.next++]);
    fn(o);
    // Push the op's blocks so that region 0 block 0 is visited first.
    for (auto r = o.regions.rbegin(); r != o.regions.rend(); ++r) {
      for (auto bl = r->blocks.rbegin(); bl != r->blocks.rend(); ++bl) stack.push_back({*bl, 0});
    }
  }
}

std::vector<OpId> Program::ops_in_order() const {
  std::vector<OpId> out;
  walk([&](const Op& o) { out.push_back(o.id); });
  return out;
}

std::vector<Use> Program::uses(ValueId v) const {
  std::vector<Use> out;
  walk([&](const Op& o) {
    for (size_t i = 0; i < o.operands.size(); ++i) {
      if (o.operands[i] == v) out.push_back({o.id, static_cast<uint32_t>(i)});
    }
  });
  return out;
}

std::vector<std::vector<Use>> Program::use_lists() const {
  std::vector<std::vector<Use>> out(values_.size());
  walk([&](const Op& o) {
    for (size_t i = 0; i < o.operands.size(); ++i) {
      if (o.operands[i].valid()) out[o.operands[i].index].push_back({o.id, static_cast<uint32_t>(i)});
    }
  });
  return out;
}

OpId Program::defining_op(ValueId v) const {
  const Value& val = value(v);
  return val.kind == ValueKind::kOpResult ? val.op : OpId{};
}

std::vector<OpId> Program::find_ops(std::string_view full_name) const {
  std::vector<OpId> out;
  const size_t dot = full_name.find('.');
  const std::string_view d = full_name.substr(0, dot);
  const std::string_view n = dot == std::string_view::npos ? std::string_view{} : full_name.substr(dot + 1);
  walk([&](const Op& o) {
    if (o.dialect == d && o.name == n) out.push_back(o.id);
  });
  return out;
}

std::vector<OpId> Program::parameters() const { return find_ops("builtin.parameter"); }

std::vector<OpId> Program::feeds() const {
  std::vector<OpId> out;
  walk([&](const Op& o) {
    if (o.is("pd_op", "data") || o.is("pd_op", "feed")) out.push_back(o.id);
  });
  return out;
}

std::vector<OpId> Program::fetches() const {
  std::vector<OpId> out;
  walk([&](const Op& o) {
    if (o.is("pd_op", "fetch") || o.is("builtin", "shadow_output")) out.push_back(o.id);
  });
  return out;
}

// ---------------------------------------------------------------------------------------------- checks

namespace {

class StructureChecker {
 public:
  explicit StructureChecker(const Program& p) : p_(p), visible_(p.value_capacity(), false) {}

  std::string run() {
    check_block(p_.top_block(), 0);
    return problem_;
  }

 private:
  std::string describe(const Op& o) const { return fmt::format("op #{} '{}'", o.id.index, o.full_name()); }

  void fail(std::string msg) {
    if (problem_.empty()) problem_ = std::move(msg);
  }

  void check_block(BlockId bid, int depth) {
    if (depth > 256) return fail("regions nested more than 256 deep");
    const Block& b = p_.block(bid);
    std::vector<ValueId> defined;
    for (ValueId a : b.args) {
      if (p_.value(a).kind != ValueKind::kBlockArgument || p_.value(a).block != bid) {
        fail(fmt::format("block #{} argument {} does not point back at its block", bid.index, a.index));
      }
      visible_[a.index] = true;
      defined.push_back(a);
    }
    for (OpId oid : b.ops) {
      const Op& o = p_.op(oid);
      if (o.erased) fail(describe(o) + " is erased but still in its block");
      if (o.parent != bid) fail(describe(o) + " does not point back at its block");
      for (size_t i = 0; i < o.operands.size(); ++i) {
        const ValueId v = o.operands[i];
        if (!v.valid()) continue;
        if (v.index >= p_.value_capacity()) {
          fail(fmt::format("{} operand {} names value {} which does not exist", describe(o), i, v.index));
        } else if (!visible_[v.index]) {
          fail(fmt::format("{} operand {} uses value {} before its definition or outside its scope",
                           describe(o), i, v.index));
        }
      }
      for (size_t r = 0; r < o.regions.size(); ++r) {
        for (BlockId nested : o.regions[r].blocks) {
          if (p_.block(nested).parent != oid || p_.block(nested).region_index != r) {
            fail(fmt::format("block #{} does not point back at {}", nested.index, describe(o)));
          }
          check_block(nested, depth + 1);
        }
      }
      for (size_t i = 0; i < o.results.size(); ++i) {
        const Value& rv = p_.value(o.results[i]);
        if (rv.kind != ValueKind::kOpResult || rv.op != oid || rv.index != i) {
          fail(fmt::format("{} result {} does not point back at it", describe(o), i));
        }
        visible_[o.results[i].index] = true;
        defined.push_back(o.results[i]);
      }
    }
    // Values of a block are not visible after it.
    for (ValueId v : defined) visible_[v.index] = false;
  }

  const Program& p_;
  std::vector<bool> visible_;
  std::string problem_;
};

}  // namespace

std::string Program::check_structure() const { return StructureChecker(*this).run(); }

void assign_value_names(Program& program) {
  for (OpId id : program.ops_in_order()) {
    const Op& o = program.op(id);
    std::string name;
    if (o.is("builtin", "parameter")) {
      name = o.string_attr("parameter_name");
    } else if (o.is("pd_op", "data") || o.is("pd_op", "feed") || o.is("pd_op", "fetch")) {
      name = o.string_attr("name");
    }
    if (name.empty() || o.results.empty()) continue;
    Value& v = program.value(o.results[0]);
    if (v.name.empty()) v.name = name;
  }
}

}  // namespace kforge::ir
