// Program::dump(): the program as PIR text in the 2024 typed form, so that every attribute kind shows and the
// PIR text reader reads the dump back to an equal program.
//
// The layout follows Paddle's printer (ir_printer.cc, IfOp/WhileOp::Print): 4-space indentation, attributes
// sorted by name, no space after ',' or ':' inside attribute maps, `(%r) = "pd_op.if" (%c) {..} -> T {`
// ... `} else {` ... `}`, `"pd_op.while" (cond=%c, inputs=%a, %b) {` with a `^` line of body arguments,
// kernel ops as "add(phi_kernel)". Values are renumbered in program order (%0, %1, ...; %arg_0, ...;
// %kwarg_<key>), so the dump does not depend on how the source numbered them. Two kforge extensions: block
// arguments print their type after their attributes (`^%arg_0 {} : tensor<f32>`), and every block that
// has arguments prints them on a `^` line (Paddle prints them where they are first used).
#include <fmt/format.h>

#include <algorithm>

#include "program/program.h"

namespace kforge::ir {

namespace {

class Dumper {
 public:
  explicit Dumper(const Program& p) : p_(p), names_(p.value_capacity()) {}

  std::string run() {
    out_ += "{\n";
    block_body(p_.top_block(), 1);
    out_ += "}\n";
    return std::move(out_);
  }

 private:
  static std::string indent(int level) { return std::string(static_cast<size_t>(level) * 4, ' '); }

  const std::string& define(ValueId v) {
    std::string& name = names_[v.index];
    const Value& val = p_.value(v);
    if (val.kind == ValueKind::kOpResult) {
      name = "%" + std::to_string(next_result_++);
    } else if (!val.keyword.empty()) {
      name = "%kwarg_" + val.keyword;
    } else {
      name = "%arg_" + std::to_string(next_arg_++);
    }
    return name;
  }

  std::string use(ValueId v) const {
    if (!v.valid()) return "<<NULL VALUE>>";
    if (v.index >= names_.size() || names_[v.index].empty()) return "<<UNDEFINED VALUE>>";
    return names_[v.index];
  }

  static std::string attr_map(const std::vector<NamedAttribute>& attrs) {
    std::vector<const NamedAttribute*> sorted;
    for (const NamedAttribute& a : attrs) sorted.push_back(&a);
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const NamedAttribute* a, const NamedAttribute* b) { return a->name < b->name; });
    std::string out = "{";
    for (size_t i = 0; i < sorted.size(); ++i) {
      if (i) out += ',';
      out += sorted[i]->name + ":" + to_string(sorted[i]->value);
    }
    return out + "}";
  }

  std::string arg_def(ValueId v) {
    const Value& val = p_.value(v);
    std::string out = define(v) + " " + attr_map(val.attributes);
    if (!val.type.is_none()) out += " : " + to_string(val.type);
    return out;
  }

  // The `^` lines of a block: keyword arguments (PIR's `^kw:` section) and positional arguments.
  void block_args(BlockId bid, int level) {
    const Block& b = p_.block(bid);
    std::vector<std::string> positional;
    std::vector<std::string> keyword;
    for (ValueId a : b.args) {
      (p_.value(a).keyword.empty() ? positional : keyword).push_back(arg_def(a));
    }
    if (!keyword.empty()) {
      out_ += indent(level) + "^kw:\n";
      for (const std::string& k : keyword) out_ += indent(level + 1) + k + "\n";
    }
    if (!positional.empty()) {
      out_ += indent(level) + "^";
      for (size_t i = 0; i < positional.size(); ++i) out_ += (i ? ", " : "") + positional[i];
      out_ += "\n";
    }
  }

  void block_body(BlockId bid, int level) {
    block_args(bid, level);
    for (OpId id : p_.block(bid).ops) op(p_.op(id), level);
  }

  std::string results(const Op& o) {
    std::string out = "(";
    for (size_t i = 0; i < o.results.size(); ++i) out += (i ? ", " : "") + define(o.results[i]);
    return out + ")";
  }

  std::string operands(const Op& o) const {
    std::string out = "(";
    for (size_t i = 0; i < o.operands.size(); ++i) out += (i ? ", " : "") + use(o.operands[i]);
    return out + ")";
  }

  std::string result_types(const Op& o) const {
    std::string out;
    for (size_t i = 0; i < o.results.size(); ++i) out += (i ? ", " : "") + to_string(p_.type_of(o.results[i]));
    return out;
  }

  std::string operand_types(const Op& o) const {
    std::string out = "(";
    for (size_t i = 0; i < o.operands.size(); ++i) {
      if (i) out += ", ";
      out += o.operands[i].valid() ? to_string(p_.type_of(o.operands[i])) : "<<NULL TYPE>>";
    }
    return out + ")";
  }

  static std::string quoted_name(const Op& o) {
    if (o.dialect == "pd_kernel" && (o.name == "phi_kernel" || o.name == "legacy_kernel")) {
      std::string kernel = o.string_attr("kernel_name");
      const Attribute* inplace = o.attr("is_inplace");
      if (inplace && inplace->kind == AttrKind::kBool && inplace->bool_value) kernel += "_";
      return fmt::format("\"{}({})\"", kernel, o.name);
    }
    return "\"" + o.full_name() + "\"";
  }

  void op(const Op& o, int level) {
    // Operands print before results are named: an op never uses its own results.
    const std::string ops_text = operands(o);
    const std::string line_start = indent(level) + results(o) + " = " + quoted_name(o) + " ";
    if (o.is("pd_op", "while") && o.regions.size() == 1 && o.regions[0].blocks.size() == 1 &&
        !o.operands.empty()) {
      std::string inputs;
      for (size_t i = 1; i < o.operands.size(); ++i) inputs += (i > 1 ? ", " : "") + use(o.operands[i]);
      out_ += line_start + "(cond=" + use(o.operands[0]) + ", inputs=" + inputs + ") {\n";
      // Paddle always prints the '^' line of the body; it also keeps an empty body from reading as `{}`.
      const BlockId body = o.regions[0].blocks[0];
      if (std::none_of(p_.block(body).args.begin(), p_.block(body).args.end(),
                       [&](ValueId a) { return p_.value(a).keyword.empty(); })) {
        out_ += indent(level + 1) + "^\n";
      }
      block_body(body, level + 1);
      out_ += indent(level) + "}\n";
      return;
    }
    const bool if_like = (o.is("pd_op", "if") && o.regions.size() == 2) || (o.is("pd_op", "pylayer") && o.regions.size() == 1);
    if (if_like && std::all_of(o.regions.begin(), o.regions.end(),
                               [](const Region& r) { return r.blocks.size() == 1; })) {
      out_ += line_start + ops_text + " " + attr_map(o.attributes) + " -> " + result_types(o) + " {\n";
      for (size_t r = 0; r < o.regions.size(); ++r) {
        if (r) out_ += indent(level) + "} else {\n";
        block_body(o.regions[r].blocks[0], level + 1);
      }
      out_ += indent(level) + "}\n";
      return;
    }
    out_ += line_start + ops_text + " " + attr_map(o.attributes) + " : " + operand_types(o) + " -> " +
            result_types(o) + "\n";
    for (const Region& r : o.regions) {
      for (BlockId b : r.blocks) {
        out_ += indent(level) + "{\n";
        block_body(b, level + 1);
        out_ += indent(level) + "}\n";
      }
    }
  }

  const Program& p_;
  std::vector<std::string> names_;
  std::string out_;
  uint32_t next_result_ = 0;
  uint32_t next_arg_ = 0;
};

}  // namespace

std::string Program::dump() const { return Dumper(*this).run(); }

}  // namespace kforge::ir
