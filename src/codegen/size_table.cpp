#include "codegen/size_table.h"

#include <algorithm>
#include <utility>

#include "codegen/cpp_text.h"

namespace kforge::codegen {

using passes::SymExpr;

bool SizeTable::needs_entry(const SymExpr& e) { return !e.is_constant() && !e.is_symbol(); }

const SymExpr::Atom* SizeTable::operation(const SymExpr& e) {
  const std::vector<SymExpr::Term>& terms = e.terms();
  if (terms.size() != 1 || terms[0].coeff != 1 || terms[0].atoms.size() != 1) return nullptr;
  const SymExpr::Atom* a = terms[0].atoms[0].get();
  return a->kind == SymExpr::Atom::Kind::kSymbol ? nullptr : a;
}

void SizeTable::register_operand(const SymExpr& e) {
  // A sum (a value's byte count: 64 * s0 + 64 * s0 * z1 + ...) is an entry of its own: the same sums recur as
  // the operands of many max() of the memory plan. A single term stays inline (`2 * z5`).
  if (needs_entry(e) && e.terms().size() > 1) {
    entry(e);
  } else {
    register_atoms(e);
  }
}

void SizeTable::register_atoms(const SymExpr& e) {
  for (const SymExpr::Term& t : e.terms()) {
    for (const SymExpr::AtomPtr& a : t.atoms) {
      if (a->kind != SymExpr::Atom::Kind::kSymbol) entry(SymExpr::of_atom(a));
    }
  }
}

uint32_t SizeTable::entry(const SymExpr& e) {
  if (auto it = index_.find(e); it != index_.end()) return it->second;
  // The operands first, so that an entry only names earlier ones. An expression that is one operation atom
  // registers the atoms of its operands; any other registers its own atoms.
  if (const SymExpr::Atom* a = operation(e)) {
    register_operand(a->lhs);
    register_operand(a->rhs);
  } else {
    register_atoms(e);
  }
  const auto k = static_cast<uint32_t>(entries_.size());
  entries_.push_back(e);
  index_.emplace(e, k);
  return k;
}

SizeTable SizeTable::canonical() const {
  std::vector<SymExpr> sorted = entries_;
  std::sort(sorted.begin(), sorted.end());
  SizeTable out;
  for (const SymExpr& e : sorted) out.entry(e);  // operands first, by the same rules
  return out;
}

void SizeTable::add_program_sizes(const passes::LoweredProgram& program) {
  if (program.symbols.empty()) return;
  auto add = [this](const SymExpr& e) {
    if (needs_entry(e)) entry(e);
  };
  for (const passes::Buffer& b : program.buffers) add(b.size_bytes);
  for (const passes::LoweredValue& v : program.values) {
    for (const SymExpr& d : v.dims) add(d);
  }
}

tmpl::Value SizeTable::definitions_value(const std::function<bool(uint32_t)>& include) const {
  tmpl::List out;
  for (uint32_t k = 0; k < size(); ++k) {
    if (include && !include(k)) continue;
    tmpl::Value d = tmpl::Value::map();
    d.set("index", static_cast<int64_t>(k));
    d.set("definition", checked_definition(k, [](uint32_t e) { return "z[" + std::to_string(e) + "]"; }));
    out.push_back(std::move(d));
  }
  return tmpl::Value(std::move(out));
}

std::string SizeTable::ref(const SymExpr& e, const Spelling& spell) {
  if (!needs_entry(e)) return cpp_int_expr(e);
  return spell(entry(e));
}

std::string SizeTable::print(uint32_t k, SymExpr::PrintOptions options, const Spelling& spell) const {
  const SymExpr& e = entries_.at(k);
  // Atoms that are entries print as their names; the entry being defined prints its own operation over them.
  options.atom_text = [&](const SymExpr::AtomPtr& a) -> std::optional<std::string> {
    auto it = index_.find(SymExpr::of_atom(a));
    if (it == index_.end()) return std::nullopt;
    return spell(it->second);
  };
  const SymExpr::Atom* a = operation(e);
  if (a == nullptr) return e.to_string(options);
  // An operand that is an entry registered before this one (one registered later, as a dim of its own, is
  // spelled out: it is not computed yet).
  auto operand = [&](const SymExpr& x) {
    auto it = index_.find(x);
    return it != index_.end() && it->second < k ? spell(it->second) : x.to_string(options);
  };
  const std::string* name = &options.min_name;
  switch (a->kind) {
    case SymExpr::Atom::Kind::kFloorDiv: name = &options.floor_div_name; break;
    case SymExpr::Atom::Kind::kCeilDiv: name = &options.ceil_div_name; break;
    case SymExpr::Atom::Kind::kMax: name = &options.max_name; break;
    case SymExpr::Atom::Kind::kMin:
    case SymExpr::Atom::Kind::kSymbol: break;
  }
  return *name + "(" + operand(a->lhs) + ", " + operand(a->rhs) + ")";
}

std::string SizeTable::checked_definition(uint32_t k, const Spelling& spell) const {
  passes::SymExpr::PrintOptions options = cpp_checked_int_options();
  options.symbol_name = [](uint32_t id) { return "s" + std::to_string(id); };  // CheckedInt parameters
  return print(k, std::move(options), spell);
}

std::string SizeParams::text(const SymExpr& e) {
  if (!SizeTable::needs_entry(e)) {
    for (uint32_t s : e.symbols()) symbols_.insert(s);
    return cpp_int_expr(e);
  }
  const uint32_t k = table_.entry(e);
  entries_.insert(k);
  return "z" + std::to_string(k);
}

std::vector<std::string> SizeParams::params() const {
  std::vector<std::string> out;
  for (uint32_t s : symbols_) out.push_back("int64_t s" + std::to_string(s));
  for (uint32_t k : entries_) out.push_back("int64_t z" + std::to_string(k));
  return out;
}

std::vector<std::string> SizeParams::args() const {
  std::vector<std::string> out;
  for (uint32_t s : symbols_) out.push_back("s" + std::to_string(s));
  for (uint32_t k : entries_) out.push_back(argument_(k));
  return out;
}

namespace {
constexpr size_t kLongComment = 120;  // characters
}  // namespace

std::string comment_shape(const passes::SymShape& shape) {
  std::string text = passes::to_string(shape);
  if (text.size() <= kLongComment) return text;
  return bracket_list(shape, [](const SymExpr& d) { return SizeTable::needs_entry(d) ? "?" : d.to_string(); });
}

std::string comment_size(const SymExpr& e) {
  std::string text = e.to_string();
  return text.size() <= kLongComment ? text : "?";
}

}  // namespace kforge::codegen
