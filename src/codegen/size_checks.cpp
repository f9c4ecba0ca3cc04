#include "codegen/size_checks.h"

#include <map>
#include <set>
#include <utility>

#include "codegen/cpp_text.h"

namespace kforge::codegen {

namespace {

using passes::SymExpr;

// Whether evaluating `e` can overflow at all: a constant was folded at generation time, a lone dim is an
// input's own (checked on the input).
bool derived(const SymExpr& e) { return !e.is_constant() && !e.is_symbol(); }

}  // namespace

SizeChecks size_checks(const passes::LoweredProgram& p) {
  SizeChecks out;
  if (p.symbols.empty()) return out;
  // The workspace: when it fits, so do the buffers in it. The buffers (outputs too) and the values' dims are
  // checked as well: a value with a zero dim has a zero size whatever its other dims, which may still overflow.
  std::vector<SymExpr> sizes = {p.plan.workspace_bytes};
  for (const passes::Buffer& b : p.buffers) sizes.push_back(b.size_bytes);
  for (const passes::LoweredValue& v : p.values) sizes.insert(sizes.end(), v.dims.begin(), v.dims.end());
  // A monomial c * m (c > 0) fits when the largest c of the same m does: only that one is tested, so a model
  // with a dynamic batch tests one size per shape of product, not one per buffer.
  std::map<std::string, std::pair<SymExpr, int64_t>> largest;  // m's text -> m, the largest c
  std::vector<SymExpr> others;
  for (const SymExpr& e : sizes) {
    if (!derived(e)) continue;
    const int64_t c = e.terms().size() == 1 ? e.terms()[0].coeff : 0;
    if (c <= 0) {
      others.push_back(e);
      continue;
    }
    const SymExpr m = SymExpr::floor_div(e, c);
    auto [it, fresh] = largest.try_emplace(m.to_string(), m, c);
    if (!fresh && c > it->second.second) it->second.second = c;
  }
  std::set<std::string> seen;
  auto add = [&](const SymExpr& e) {
    if (!derived(e)) return;
    std::string text = cpp_checked_int_expr(e);
    if (seen.insert(text).second) out.conditions.push_back(std::move(text));
  };
  for (const auto& [text, m_c] : largest) add(m_c.first * m_c.second);
  for (const SymExpr& e : others) add(e);
  if (out.conditions.empty()) return out;
  for (const passes::Symbol& s : p.symbols) out.symbols.push_back("s" + std::to_string(s.id));
  return out;
}

tmpl::Value size_checks_value(const SizeChecks& checks) {
  tmpl::List conditions(checks.conditions.begin(), checks.conditions.end());
  tmpl::List symbols(checks.symbols.begin(), checks.symbols.end());
  tmpl::Value v = tmpl::Value::map();
  v.set("conditions", tmpl::Value(std::move(conditions)));
  v.set("symbols", tmpl::Value(std::move(symbols)));
  return v;
}

}  // namespace kforge::codegen
