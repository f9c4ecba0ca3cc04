// The data-dependent symbols as both classes bind them (data_symbols.h).
#include "codegen/data_symbols.h"

#include <algorithm>
#include <tuple>

namespace kforge::codegen {

uint32_t DataSymbols::late_symbol(const passes::SymExpr& e) const {
  uint32_t best = passes::kNone;
  for (uint32_t id : e.symbols()) {
    if (id >= p_.symbols.size() || p_.symbols[id].is_input_dim()) continue;
    if (best == passes::kNone || bound_later(id, best)) best = id;
  }
  return best;
}

uint32_t DataSymbols::late_symbol(const passes::SymShape& dims) const {
  uint32_t best = passes::kNone;
  for (const passes::SymExpr& d : dims) {
    const uint32_t id = late_symbol(d);
    if (id != passes::kNone && (best == passes::kNone || bound_later(id, best))) best = id;
  }
  return best;
}

bool DataSymbols::bound_later(uint32_t a, uint32_t b) const {
  auto key = [&](uint32_t id) {
    const passes::Symbol& s = p_.symbols[id];
    return std::tuple(s.call, s.before_call ? 0 : 1, id);
  };
  return key(a) > key(b);
}

std::vector<uint32_t> DataSymbols::bind_order() const {
  std::vector<uint32_t> order;
  for (const passes::Symbol& s : p_.symbols) {
    if (!s.is_input_dim() && s.call != passes::kNone) order.push_back(s.id);
  }
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return bound_later(b, a); });
  return order;
}

}  // namespace kforge::codegen
