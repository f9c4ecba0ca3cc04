// Symbolic integer expressions over the dynamic dims of a program's inputs: the dims of values whose shape
// depends on a `-1` in a feed, the byte sizes of their buffers, and workspace offsets and sizes.
//
// Normal form. An expression is a polynomial with int64 coefficients over *atoms*; an atom is a symbol
// (one dynamic input dim, numbered by the LoweredProgram's `symbols`) or an operation that does not
// distribute: floor_div, ceil_div, max, min (of two expressions). Terms are kept sorted, so two equal
// polynomials compare equal and print the same text: `s0*30/30` simplifies to `s0` (exact division of a
// polynomial by a constant or a monomial that divides every term), `s0 + 0` to `s0`, constant folding is
// exact. Symbols are dims, never negative, so max/min of two polynomials whose difference has no negative
// coefficient simplify (`max(4096 * s0, 16384 * s0)` is `16384 * s0`). Everything that does not simplify stays
// an atom: `floor_div(s0 + 2, 3)`. Deterministic: the order of
// terms depends only on the expression, never on addresses.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace kforge::passes {

class SymExpr {
 public:
  struct Atom;  // below: a symbol or an operation that does not distribute
  using AtomPtr = std::shared_ptr<const Atom>;

  /// The constant 0.
  SymExpr() = default;
  SymExpr(int64_t value);  // NOLINT: implicit on purpose, `SymExpr d = 3;`
  static SymExpr symbol(uint32_t id);
  /// The expression that is the one atom `a` with coefficient 1.
  static SymExpr of_atom(const AtomPtr& a);

  static SymExpr floor_div(const SymExpr& a, const SymExpr& b);  // b must not be the constant 0
  static SymExpr ceil_div(const SymExpr& a, const SymExpr& b);
  static SymExpr max(const SymExpr& a, const SymExpr& b);
  static SymExpr min(const SymExpr& a, const SymExpr& b);
  /// Rounds up to a multiple of `alignment` (> 0): ceil_div(a, alignment) * alignment.
  static SymExpr align_up(const SymExpr& a, int64_t alignment);

  bool is_constant() const;
  /// The value when the expression is a constant.
  std::optional<int64_t> constant() const;
  /// True when the expression is exactly one symbol; `id` gets it.
  bool is_symbol(uint32_t* id = nullptr) const;
  /// True when the expression is >= 0 for every value of its symbols (which are dims, never negative): a
  /// polynomial with no negative coefficient over symbols and over divisions, max and min of such expressions.
  /// False says nothing (`s0 - 1` is not provably non-negative).
  bool provably_non_negative() const;
  /// Every symbol the expression mentions, sorted, without repeats.
  std::vector<uint32_t> symbols() const;

  /// The value for given symbol values (indexed by symbol id). Division by zero gives 0.
  int64_t evaluate(const std::vector<int64_t>& symbol_values) const;

  /// Text in infix notation: `s0 * 30 + 2`, `floor_div(s0 + 2, 3)`, `max(s0, 4)`; symbols print through
  /// `symbol_name` (by default `s<id>`), the four operations as calls of the names given (by default as here:
  /// dumps and messages). Products and sums are parenthesised as needed, so that with function names of the
  /// target language the text is an expression of it: codegen/cpp_text.h spells C++ (cpp_int_expr).
  struct PrintOptions {
    std::function<std::string(uint32_t)> symbol_name;
    std::string floor_div_name = "floor_div";
    std::string ceil_div_name = "ceil_div";
    std::string max_name = "max";
    std::string min_name = "min";
    /// When set and it returns a text for an atom that is not a symbol, that text stands for the atom (a name
    /// the code generator gave the atom's value: codegen/size_table.h) instead of the atom's own spelling.
    std::function<std::optional<std::string>(const AtomPtr&)> atom_text;
  };
  std::string to_string(const PrintOptions& options) const;
  std::string to_string() const;

  friend SymExpr operator+(const SymExpr& a, const SymExpr& b);
  friend SymExpr operator-(const SymExpr& a, const SymExpr& b);
  friend SymExpr operator*(const SymExpr& a, const SymExpr& b);
  friend SymExpr operator-(const SymExpr& a);
  SymExpr& operator+=(const SymExpr& b) { return *this = *this + b; }
  SymExpr& operator*=(const SymExpr& b) { return *this = *this * b; }
  friend bool operator==(const SymExpr& a, const SymExpr& b);
  friend bool operator!=(const SymExpr& a, const SymExpr& b) { return !(a == b); }
  /// A total order (for sorting and maps); not numeric.
  friend bool operator<(const SymExpr& a, const SymExpr& b);

  // ---- representation (public for the implementation's helpers; treat as read-only)
  struct Term {
    int64_t coeff = 0;
    std::vector<AtomPtr> atoms;  // sorted; a repeated atom is a power; empty for the constant term
  };
  const std::vector<Term>& terms() const { return terms_; }

 private:
  std::vector<Term> terms_;  // sorted by atoms, no zero coefficients, no two terms with the same atoms
  friend struct SymExprBuilder;
};

struct SymExpr::Atom {
  enum class Kind { kSymbol, kFloorDiv, kCeilDiv, kMax, kMin } kind = Kind::kSymbol;
  uint32_t symbol = 0;  // kSymbol
  SymExpr lhs, rhs;     // the others
};

/// A shape: one expression per dimension.
using SymShape = std::vector<SymExpr>;

/// Whether `e` is the constant 1 (a dim that broadcasts, or an axis a view may move).
inline bool is_one(const SymExpr& e) { return e.constant() == std::optional<int64_t>(1); }

/// The product of the dims (1 for rank 0).
SymExpr sym_numel(const SymShape& shape);
/// All dims constant: the static dims.
std::optional<std::vector<int64_t>> static_dims(const SymShape& shape);
/// "[s0, 30]".
std::string to_string(const SymShape& shape);

}  // namespace kforge::passes
