// The sizes a dynamic program derives from its input dims, each computed once.
//
// Every dim, element count, byte size, stride and workspace offset of a program with dynamic dims is a SymExpr
// over the dims s0, s1, ... (passes/sym_expr.h). Spelled out where it is used, a deep network repeats the same
// subexpressions in every call (the workspace offset of one value nests the sizes of all values live before it),
// and the generated code grows with the square of the program: megabytes of C++, lines of 80 KB. The table
// instead gives every distinct expression that is neither a constant nor a lone dim one entry, and every
// operation atom inside one (floor_div, ceil_div, max, min) an entry of its own: an entry's definition names the
// entries of its atoms, so it stays as short as one step of the computation, and the code that uses a size
// names its entry; so does a sum that is an operation's operand. The generated class computes the entries once per new set of input dims, in order (an entry
// only names earlier ones), with int64 overflow checks (kforge::CheckedInt), and keeps them in an array.
//
// Structurally equal expressions are one entry (SymExpr's normal form makes equal polynomials compare equal);
// entries are numbered in the order they are first needed, so the table is deterministic.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "passes/lowered_program.h"
#include "passes/sym_expr.h"
#include "template/value.h"

namespace kforge::codegen {

/// A size as the generated code spells it where it is used (SizeTable::ref with the place's spelling).
using SizeExpr = std::function<std::string(const passes::SymExpr&)>;

class SizeTable {
 public:
  /// How the generated code names entry `k` where it is used: "sizes_[3]" in the class, "z3" as a parameter.
  using Spelling = std::function<std::string(uint32_t k)>;

  /// `e` in C++ where the entries are spelled by `spell`: a constant as a literal, a lone dim as `s<id>`,
  /// anything else as its entry (registered with the entries of its atoms when new).
  std::string ref(const passes::SymExpr& e, const Spelling& spell);
  /// The entry of `e` (registered when new); `e` must be neither a constant nor a lone dim.
  uint32_t entry(const passes::SymExpr& e);
  /// Whether `e` needs an entry: neither a constant nor a lone dim.
  static bool needs_entry(const passes::SymExpr& e);

  /// Entry k's definition as a C++ expression of type kforge::CheckedInt, over the dims (`s0`: they must be
  /// kforge::CheckedInt there, so that every step is checked) and the earlier entries spelled by `spell`.
  std::string checked_definition(uint32_t k, const Spelling& spell) const;

  size_t size() const { return entries_.size(); }

  /// Registers every buffer's bytes and every value's dims of a dynamic program, so that compute_sizes() checks
  /// them for overflow even where no line uses them (an output's bytes, a dim of a value whose other dim is 0).
  void add_program_sizes(const passes::LoweredProgram& program);
  /// The `sizes` key of the class templates (class.j2, compute_sizes): each entry's index and checked definition
  /// (`index`, `definition`), the entries spelled `z[k]`; every entry, or those `include` accepts.
  tmpl::Value definitions_value(const std::function<bool(uint32_t)>& include = {}) const;
  /// The expression entry `k` stands for.
  const passes::SymExpr& expression(uint32_t k) const { return entries_.at(k); }

  /// The same entries numbered in an order that depends only on the expressions (each after its operands), not on
  /// the order in which code generation asked for them: a generator builds its output once to collect the sizes,
  /// then again over the canonical table, so that two compilers of kforge (which evaluate a call's arguments in
  /// different orders) generate the same file.
  SizeTable canonical() const;

 private:
  std::string print(uint32_t k, passes::SymExpr::PrintOptions options, const Spelling& spell) const;
  /// The operation `e` is, when it is one floor_div / ceil_div / max / min with coefficient 1.
  static const passes::SymExpr::Atom* operation(const passes::SymExpr& e);
  /// Registers the atoms of `e` that are operations (their operands' atoms first).
  void register_atoms(const passes::SymExpr& e);
  /// Registers what an operation's operand `e` needs.
  void register_operand(const passes::SymExpr& e);

  std::vector<passes::SymExpr> entries_;
  std::map<passes::SymExpr, uint32_t> index_;
};

/// The sizes a generated function (a fused CPU group, a CUDA kernel) uses, taken as int64_t parameters: a dim as
/// itself (`s0`), any other size as its entry of the program's size table (parameter `z3`; the call site passes
/// the entry, `sizes_[3]`), so that the function computes no size of its own and its call passes each once.
class SizeParams {
 public:
  /// `argument(k)`: how the call site spells entry k.
  SizeParams(SizeTable& table, SizeTable::Spelling argument) : table_(table), argument_(std::move(argument)) {}
  /// `e` in the function; records the parameter it needs.
  std::string text(const passes::SymExpr& e);
  /// In a fixed order whatever the order of the text() calls (C++ leaves the order of a call's arguments open):
  /// the dims by id, then the entries by number.
  std::vector<std::string> params() const;  // "int64_t z3"
  std::vector<std::string> args() const;    // "sizes_[3]"

 private:
  SizeTable& table_;
  SizeTable::Spelling argument_;
  std::set<uint32_t> symbols_, entries_;
};

/// A shape for a comment: the dumps' notation (`[s0, floor_div(s1 - 1, 2) + 1, 16]`); when that is long, the dims
/// that are neither constants nor lone dims as `?`.
std::string comment_shape(const passes::SymShape& shape);
/// A size for a comment: the dumps' notation, or `?` when that is long.
std::string comment_size(const passes::SymExpr& e);

}  // namespace kforge::codegen
