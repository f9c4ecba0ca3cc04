#include "passes/sym_expr.h"

#include <algorithm>

#include <fmt/format.h>

namespace kforge::passes {

namespace {

int compare_expr(const SymExpr& a, const SymExpr& b);

int compare_atom(const SymExpr::Atom& a, const SymExpr::Atom& b) {
  if (a.kind != b.kind) return a.kind < b.kind ? -1 : 1;
  if (a.kind == SymExpr::Atom::Kind::kSymbol) return a.symbol == b.symbol ? 0 : (a.symbol < b.symbol ? -1 : 1);
  if (int c = compare_expr(a.lhs, b.lhs)) return c;
  return compare_expr(a.rhs, b.rhs);
}

int compare_atoms(const std::vector<SymExpr::AtomPtr>& a, const std::vector<SymExpr::AtomPtr>& b) {
  // Fewer atoms first, so the constant term sorts first and lower degrees before higher ones.
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  for (size_t i = 0; i < a.size(); ++i) {
    if (int c = compare_atom(*a[i], *b[i])) return c;
  }
  return 0;
}

int compare_expr(const SymExpr& a, const SymExpr& b) {
  const auto& ta = a.terms();
  const auto& tb = b.terms();
  for (size_t i = 0; i < ta.size() && i < tb.size(); ++i) {
    if (int c = compare_atoms(ta[i].atoms, tb[i].atoms)) return c;
    if (ta[i].coeff != tb[i].coeff) return ta[i].coeff < tb[i].coeff ? -1 : 1;
  }
  if (ta.size() != tb.size()) return ta.size() < tb.size() ? -1 : 1;
  return 0;
}

int64_t floor_div_int(int64_t a, int64_t b) {
  if (b == 0) return 0;
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int64_t ceil_div_int(int64_t a, int64_t b) {
  if (b == 0) return 0;
  return -floor_div_int(-a, b);
}

bool atoms_less(const SymExpr::AtomPtr& a, const SymExpr::AtomPtr& b) { return compare_atom(*a, *b) < 0; }

/// Removes the multiset `divisor` from `atoms`; false when `atoms` does not contain it.
bool remove_atoms(std::vector<SymExpr::AtomPtr>& atoms, const std::vector<SymExpr::AtomPtr>& divisor) {
  for (const SymExpr::AtomPtr& d : divisor) {
    auto it = std::find_if(atoms.begin(), atoms.end(),
                           [&](const SymExpr::AtomPtr& a) { return compare_atom(*a, *d) == 0; });
    if (it == atoms.end()) return false;
    atoms.erase(it);
  }
  return true;
}

}  // namespace

struct SymExprBuilder {
  static SymExpr make(std::vector<SymExpr::Term> terms) {
    for (auto& t : terms) std::sort(t.atoms.begin(), t.atoms.end(), atoms_less);
    std::sort(terms.begin(), terms.end(),
              [](const SymExpr::Term& a, const SymExpr::Term& b) { return compare_atoms(a.atoms, b.atoms) < 0; });
    SymExpr out;
    for (auto& t : terms) {
      if (!out.terms_.empty() && compare_atoms(out.terms_.back().atoms, t.atoms) == 0) {
        out.terms_.back().coeff += t.coeff;
      } else {
        out.terms_.push_back(std::move(t));
      }
    }
    std::erase_if(out.terms_, [](const SymExpr::Term& t) { return t.coeff == 0; });
    return out;
  }

  static SymExpr atom(SymExpr::Atom a) {
    SymExpr out;
    out.terms_.push_back({1, {std::make_shared<const SymExpr::Atom>(std::move(a))}});
    return out;
  }

  /// a / b when it is exact for every value of the symbols, else nullopt.
  static std::optional<SymExpr> exact_div(const SymExpr& a, const SymExpr& b) {
    if (b.terms_.size() != 1) {
      if (a == b && !a.terms_.empty()) return SymExpr(1);
      return std::nullopt;
    }
    const SymExpr::Term& d = b.terms_[0];
    if (d.coeff == 0) return std::nullopt;
    std::vector<SymExpr::Term> terms;
    for (const SymExpr::Term& t : a.terms_) {
      if (t.coeff % d.coeff != 0) return std::nullopt;
      SymExpr::Term q{t.coeff / d.coeff, t.atoms};
      if (!remove_atoms(q.atoms, d.atoms)) return std::nullopt;
      terms.push_back(std::move(q));
    }
    return make(std::move(terms));
  }
};

SymExpr::SymExpr(int64_t value) {
  if (value != 0) terms_.push_back({value, {}});
}

SymExpr SymExpr::symbol(uint32_t id) {
  Atom a;
  a.kind = Atom::Kind::kSymbol;
  a.symbol = id;
  return SymExprBuilder::atom(std::move(a));
}

SymExpr SymExpr::of_atom(const AtomPtr& a) {
  SymExpr out;
  out.terms_.push_back({1, {a}});
  return out;
}

bool SymExpr::is_constant() const { return terms_.empty() || (terms_.size() == 1 && terms_[0].atoms.empty()); }

std::optional<int64_t> SymExpr::constant() const {
  if (terms_.empty()) return 0;
  if (terms_.size() == 1 && terms_[0].atoms.empty()) return terms_[0].coeff;
  return std::nullopt;
}

bool SymExpr::is_symbol(uint32_t* id) const {
  if (terms_.size() != 1 || terms_[0].coeff != 1 || terms_[0].atoms.size() != 1) return false;
  const Atom& a = *terms_[0].atoms[0];
  if (a.kind != Atom::Kind::kSymbol) return false;
  if (id) *id = a.symbol;
  return true;
}

namespace {
void collect_symbols(const SymExpr& e, std::vector<uint32_t>& out) {
  for (const auto& t : e.terms()) {
    for (const auto& a : t.atoms) {
      if (a->kind == SymExpr::Atom::Kind::kSymbol) {
        out.push_back(a->symbol);
      } else {
        collect_symbols(a->lhs, out);
        collect_symbols(a->rhs, out);
      }
    }
  }
}
}  // namespace

std::vector<uint32_t> SymExpr::symbols() const {
  std::vector<uint32_t> out;
  collect_symbols(*this, out);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

SymExpr operator+(const SymExpr& a, const SymExpr& b) {
  std::vector<SymExpr::Term> terms = a.terms_;
  terms.insert(terms.end(), b.terms_.begin(), b.terms_.end());
  return SymExprBuilder::make(std::move(terms));
}

SymExpr operator-(const SymExpr& a) {
  std::vector<SymExpr::Term> terms = a.terms_;
  for (auto& t : terms) t.coeff = -t.coeff;
  return SymExprBuilder::make(std::move(terms));
}

SymExpr operator-(const SymExpr& a, const SymExpr& b) { return a + (-b); }

SymExpr operator*(const SymExpr& a, const SymExpr& b) {
  std::vector<SymExpr::Term> terms;
  for (const auto& ta : a.terms_) {
    for (const auto& tb : b.terms_) {
      SymExpr::Term t{ta.coeff * tb.coeff, ta.atoms};
      t.atoms.insert(t.atoms.end(), tb.atoms.begin(), tb.atoms.end());
      terms.push_back(std::move(t));
    }
  }
  return SymExprBuilder::make(std::move(terms));
}

bool operator==(const SymExpr& a, const SymExpr& b) { return compare_expr(a, b) == 0; }
bool operator<(const SymExpr& a, const SymExpr& b) { return compare_expr(a, b) < 0; }

namespace {

/// a = whole * c + rest, where `whole` gathers the terms of a whose coefficient c divides: then
/// floor_div(a, c) = whole + floor_div(rest, c) and likewise for ceil_div, exactly, for any integer values. So
/// `floor_div(4 * floor_div(h, 4) + 4 - h, 4)` (a remainder's quotient) is `floor_div(h, 4) + 1 + floor_div(-h, 4)`.
/// False when no term divides (nothing to split).
bool split_multiples(const SymExpr& a, int64_t c, SymExpr* whole, SymExpr* rest) {
  std::vector<SymExpr::Term> whole_terms, rest_terms;
  for (const SymExpr::Term& t : a.terms()) {
    if (t.coeff % c == 0) whole_terms.push_back({t.coeff / c, t.atoms});
    else rest_terms.push_back(t);
  }
  if (whole_terms.empty()) return false;
  *whole = SymExprBuilder::make(std::move(whole_terms));
  *rest = SymExprBuilder::make(std::move(rest_terms));
  return true;
}

/// True when every term of a non-zero `e` has a negative coefficient: floor_div(e, c) is then spelled
/// -ceil_div(-e, c) (and the reverse), one form for `floor_div(-h, 4)` and `-ceil_div(h, 4)`.
bool all_negative(const SymExpr& e) {
  if (e.terms().empty()) return false;
  for (const SymExpr::Term& t : e.terms()) {
    if (t.coeff >= 0) return false;
  }
  return true;
}

}  // namespace

SymExpr SymExpr::floor_div(const SymExpr& a, const SymExpr& b) {
  auto ca = a.constant(), cb = b.constant();
  if (ca && cb) return floor_div_int(*ca, *cb);
  if (cb && *cb == 1) return a;
  if (auto q = SymExprBuilder::exact_div(a, b)) return *q;
  if (cb && *cb > 1) {
    SymExpr whole, rest;
    if (split_multiples(a, *cb, &whole, &rest)) return whole + floor_div(rest, b);
    if (all_negative(a)) return -ceil_div(-a, b);
  }
  Atom atom;
  atom.kind = Atom::Kind::kFloorDiv;
  atom.lhs = a;
  atom.rhs = b;
  return SymExprBuilder::atom(std::move(atom));
}

SymExpr SymExpr::ceil_div(const SymExpr& a, const SymExpr& b) {
  auto ca = a.constant(), cb = b.constant();
  if (ca && cb) return ceil_div_int(*ca, *cb);
  if (cb && *cb == 1) return a;
  if (auto q = SymExprBuilder::exact_div(a, b)) return *q;
  if (cb && *cb > 1) {
    SymExpr whole, rest;
    if (split_multiples(a, *cb, &whole, &rest)) return whole + ceil_div(rest, b);
    if (all_negative(a)) return -floor_div(-a, b);
  }
  Atom atom;
  atom.kind = Atom::Kind::kCeilDiv;
  atom.lhs = a;
  atom.rhs = b;
  return SymExprBuilder::atom(std::move(atom));
}

namespace {

/// An atom that is provably >= 0 (see SymExpr::provably_non_negative): a symbol; a floor or ceil division of a
/// non-negative expression by a positive one; a max with one non-negative side; a min of two.
bool atom_non_negative(const SymExpr::Atom& a) {
  switch (a.kind) {
    case SymExpr::Atom::Kind::kSymbol: return true;
    case SymExpr::Atom::Kind::kFloorDiv:
    case SymExpr::Atom::Kind::kCeilDiv:
      return a.lhs.provably_non_negative() && a.rhs.provably_non_negative() && !(a.rhs.constant() == int64_t{0});
    case SymExpr::Atom::Kind::kMax: return a.lhs.provably_non_negative() || a.rhs.provably_non_negative();
    case SymExpr::Atom::Kind::kMin: return a.lhs.provably_non_negative() && a.rhs.provably_non_negative();
  }
  return false;
}

}  // namespace

namespace {

/// No negative coefficient, every atom non-negative: the direct test of provably_non_negative.
bool terms_non_negative(const SymExpr& e) {
  for (const SymExpr::Term& t : e.terms()) {
    if (t.coeff < 0) return false;
    for (const SymExpr::AtomPtr& a : t.atoms) {
      if (!atom_non_negative(*a)) return false;
    }
  }
  return true;
}

}  // namespace

bool SymExpr::provably_non_negative() const {
  // Symbols are dims (never negative), and so is every atom atom_non_negative accepts: a polynomial in such
  // atoms with no negative coefficient is >= 0 whatever their values.
  if (terms_non_negative(*this)) return true;
  // Else a lower bound: a term -c * floor_div(p, k) (p >= 0, k >= 1) is at least -c * p, so `n - floor_div(n, 2)`
  // (what a slice from the middle keeps) is >= n - n = 0.
  SymExpr bound;
  bool replaced = false;
  for (const Term& t : terms_) {
    SymExpr term;
    term.terms_.push_back(t);
    if (t.coeff < 0 && t.atoms.size() == 1 && t.atoms[0]->kind == Atom::Kind::kFloorDiv) {
      const Atom& a = *t.atoms[0];
      auto k = a.rhs.constant();
      if (k && *k >= 1 && terms_non_negative(a.lhs)) {
        term = SymExpr(t.coeff) * a.lhs;
        replaced = true;
      }
    }
    bound += term;
  }
  return replaced && terms_non_negative(bound);
}

SymExpr SymExpr::max(const SymExpr& a, const SymExpr& b) {
  auto ca = a.constant(), cb = b.constant();
  if (ca && cb) return std::max(*ca, *cb);
  if (a == b) return a;
  if ((a - b).provably_non_negative()) return a;
  if ((b - a).provably_non_negative()) return b;
  Atom atom;
  atom.kind = Atom::Kind::kMax;
  atom.lhs = b < a ? b : a;  // commutative: one spelling
  atom.rhs = b < a ? a : b;
  return SymExprBuilder::atom(std::move(atom));
}

SymExpr SymExpr::min(const SymExpr& a, const SymExpr& b) {
  auto ca = a.constant(), cb = b.constant();
  if (ca && cb) return std::min(*ca, *cb);
  if (a == b) return a;
  if ((a - b).provably_non_negative()) return b;
  if ((b - a).provably_non_negative()) return a;
  Atom atom;
  atom.kind = Atom::Kind::kMin;
  atom.lhs = b < a ? b : a;
  atom.rhs = b < a ? a : b;
  return SymExprBuilder::atom(std::move(atom));
}

SymExpr SymExpr::align_up(const SymExpr& a, int64_t alignment) {
  if (alignment <= 1) return a;
  // An expression that is a multiple of the alignment term by term is already aligned.
  if (auto q = SymExprBuilder::exact_div(a, SymExpr(alignment))) return a;
  return ceil_div(a, alignment) * alignment;
}

int64_t SymExpr::evaluate(const std::vector<int64_t>& symbol_values) const {
  int64_t sum = 0;
  for (const Term& t : terms_) {
    int64_t product = t.coeff;
    for (const AtomPtr& a : t.atoms) {
      int64_t v = 0;
      switch (a->kind) {
        case Atom::Kind::kSymbol: v = a->symbol < symbol_values.size() ? symbol_values[a->symbol] : 0; break;
        case Atom::Kind::kFloorDiv: v = floor_div_int(a->lhs.evaluate(symbol_values), a->rhs.evaluate(symbol_values)); break;
        case Atom::Kind::kCeilDiv: v = ceil_div_int(a->lhs.evaluate(symbol_values), a->rhs.evaluate(symbol_values)); break;
        case Atom::Kind::kMax: v = std::max(a->lhs.evaluate(symbol_values), a->rhs.evaluate(symbol_values)); break;
        case Atom::Kind::kMin: v = std::min(a->lhs.evaluate(symbol_values), a->rhs.evaluate(symbol_values)); break;
      }
      product *= v;
    }
    sum += product;
  }
  return sum;
}

namespace {

std::string print_atom(const SymExpr::AtomPtr& atom, const SymExpr::PrintOptions& o) {
  const SymExpr::Atom& a = *atom;
  if (o.atom_text && a.kind != SymExpr::Atom::Kind::kSymbol) {
    if (std::optional<std::string> text = o.atom_text(atom)) return *std::move(text);
  }
  switch (a.kind) {
    case SymExpr::Atom::Kind::kSymbol: return o.symbol_name ? o.symbol_name(a.symbol) : fmt::format("s{}", a.symbol);
    case SymExpr::Atom::Kind::kFloorDiv: return fmt::format("{}({}, {})", o.floor_div_name, a.lhs.to_string(o), a.rhs.to_string(o));
    case SymExpr::Atom::Kind::kCeilDiv: return fmt::format("{}({}, {})", o.ceil_div_name, a.lhs.to_string(o), a.rhs.to_string(o));
    case SymExpr::Atom::Kind::kMax: return fmt::format("{}({}, {})", o.max_name, a.lhs.to_string(o), a.rhs.to_string(o));
    case SymExpr::Atom::Kind::kMin: return fmt::format("{}({}, {})", o.min_name, a.lhs.to_string(o), a.rhs.to_string(o));
  }
  return "?";
}

/// One term without its sign.
std::string print_term_magnitude(const SymExpr::Term& t, const SymExpr::PrintOptions& o) {
  const int64_t magnitude = t.coeff < 0 ? -t.coeff : t.coeff;
  std::string out;
  if (t.atoms.empty() || magnitude != 1) out = fmt::format("{}", magnitude);
  for (const auto& a : t.atoms) {
    if (!out.empty()) out += " * ";
    out += print_atom(a, o);
  }
  return out;
}

}  // namespace

std::string SymExpr::to_string(const PrintOptions& options) const {
  if (terms_.empty()) return "0";
  // Non-constant terms first (the constant term sorts first in the normal form): "s0 * 30 + 2".
  std::vector<const Term*> order;
  for (const Term& t : terms_) {
    if (!t.atoms.empty()) order.push_back(&t);
  }
  for (const Term& t : terms_) {
    if (t.atoms.empty()) order.push_back(&t);
  }
  std::string out;
  for (size_t i = 0; i < order.size(); ++i) {
    const Term& t = *order[i];
    if (i == 0) {
      if (t.coeff < 0) out += "-";
    } else {
      out += t.coeff < 0 ? " - " : " + ";
    }
    out += print_term_magnitude(t, options);
  }
  return out;
}

std::string SymExpr::to_string() const { return to_string(PrintOptions{}); }

SymExpr sym_numel(const SymShape& shape) {
  SymExpr n = 1;
  for (const SymExpr& d : shape) n *= d;
  return n;
}

std::optional<std::vector<int64_t>> static_dims(const SymShape& shape) {
  std::vector<int64_t> out;
  for (const SymExpr& d : shape) {
    auto c = d.constant();
    if (!c) return std::nullopt;
    out.push_back(*c);
  }
  return out;
}

std::string to_string(const SymShape& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ", ";
    out += shape[i].to_string();
  }
  return out + "]";
}

}  // namespace kforge::passes
