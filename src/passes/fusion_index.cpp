// Absorbed index maps (docs/fusion.md, "Absorbed transposes"): after grouping, a transpose or expand next to an
// elementwise or row group becomes the group's input map (read through) or, for a transpose, its store map (stored
// through) instead of a call of its own. Both are pure index arithmetic: element c of a transpose's output is
// element perm(c) of its input, and an expand's output reads its input at stride 0 along the broadcast dims, so a
// group that reads the output at strides s can read the input at strides composed with the map, and a group that
// stores a transpose's input can store straight into its output. Saves one kernel, one read and one write of the
// whole tensor.
#include <algorithm>
#include <set>

#include "passes/fusion_internal.h"

namespace kforge::passes::fusion_detail {

namespace {

bool all_constant(const std::vector<SymExpr>& exprs) {
  return std::all_of(exprs.begin(), exprs.end(), [](const SymExpr& e) { return e.is_constant(); });
}

// Strides equal to the row-major ones of `shape`, ignoring dims of 1 (whose coordinate is always 0).
bool is_row_major(const std::vector<SymExpr>& strides, const SymShape& shape) {
  const std::vector<SymExpr> dense = row_major_strides(shape);
  for (size_t d = 0; d < shape.size(); ++d) {
    if (!is_one(shape[d]) && strides[d] != dense[d]) return false;
  }
  return true;
}

/// A call the groups may absorb: out[c] = x[sum_k c_k * in_x[k]] for the output's coordinates c.
struct IndexMap {
  uint32_t call = kNone, x = kNone, out = kNone;
  std::vector<SymExpr> in_x;  // per output dim: its stride in x (0: broadcast)
  std::vector<size_t> perm;   // a transpose: output dim k is x dim perm[k] (stored through); empty for expand
};

class Absorber {
 public:
  Absorber(const LoweredProgram& program, FusionPlan& plan, const std::vector<std::vector<uint32_t>>& readers,
           const std::vector<bool>& is_output)
      : p_(program), plan_(plan), readers_(readers), is_output_(is_output) {}

  void run() {
    for (uint32_t c = 0; c < p_.calls.size(); ++c) {
      const std::optional<IndexMap> t = index_map_at(c);
      if (!t) continue;
      if (t->perm.empty() || !store_through(*t)) read_through(*t);
    }
    for (FusedGroup& g : plan_.groups) std::sort(g.absorbed.begin(), g.absorbed.end());
  }

 private:
  // A transpose or an expand (every input dim 1 or the output's) that no group holds, writing a buffer of its own.
  std::optional<IndexMap> index_map_at(uint32_t c) const {
    const KernelCall& call = p_.calls[c];
    if ((call.op != "transpose" && call.op != "expand") || call.inplace_twin || plan_.call_group[c] != kNone) {
      return std::nullopt;
    }
    const KernelArg* x = call.arg("x");
    if (x == nullptr || x->kind != ArgKind::kTensor) return std::nullopt;
    if (call.outputs.size() != 1 || call.outputs[0].values.size() != 1) return std::nullopt;
    IndexMap t{c, x->value, call.outputs[0].values[0], {}, {}};
    if (t.out == kNone) return std::nullopt;
    const LoweredValue& in = p_.value(t.x);
    const LoweredValue& out = p_.value(t.out);
    if (in.dtype != out.dtype || !sole_value_of_buffer(t.out) || in.buffer == out.buffer) return std::nullopt;
    const std::vector<SymExpr> in_strides = row_major_strides(in.dims);
    const size_t rank = in.dims.size();
    if (call.op == "expand") {
      // x right-aligned against the output: a dim of 1 broadcasts (stride 0), any other must be the output's.
      if (rank > out.dims.size()) return std::nullopt;
      const size_t lead = out.dims.size() - rank;
      t.in_x.assign(out.dims.size(), SymExpr(0));
      for (size_t k = 0; k < rank; ++k) {
        if (is_one(in.dims[k])) continue;
        if (in.dims[k] != out.dims[lead + k]) return std::nullopt;
        t.in_x[lead + k] = in_strides[k];
      }
      return t;
    }
    const KernelArg* perm = call.arg("perm");
    if (perm == nullptr || perm->kind != ArgKind::kConstant || out.dims.size() != rank ||
        perm->constant.ints.size() != rank) {
      return std::nullopt;
    }
    std::set<size_t> seen;
    for (int64_t axis : perm->constant.ints) {
      const int64_t a = axis < 0 ? axis + static_cast<int64_t>(rank) : axis;
      if (a < 0 || a >= static_cast<int64_t>(rank) || !seen.insert(static_cast<size_t>(a)).second) return std::nullopt;
      t.perm.push_back(static_cast<size_t>(a));
    }
    for (size_t k = 0; k < rank; ++k) {
      if (out.dims[k] != in.dims[t.perm[k]]) return std::nullopt;
      t.in_x.push_back(in_strides[t.perm[k]]);  // the output's dim k is x's dim perm[k]
    }
    return t;
  }

  bool sole_value_of_buffer(uint32_t v) const {
    const Buffer& b = p_.buffers[p_.value(v).buffer];
    return b.values.size() == 1 && b.values[0] == v;
  }

  // The group of value v's defining call (kNone for a program input, parameter or an ungrouped call).
  uint32_t group_defining(uint32_t v) const {
    const uint32_t c = p_.value(v).defined_by;
    return c == kNone ? kNone : plan_.call_group[c];
  }

  // An elementwise group stores x, which only the transpose reads: it stores the transpose's output instead.
  bool store_through(const IndexMap& t) {
    const uint32_t gi = group_defining(t.x);
    if (gi == kNone || is_output_[t.x] || readers_[t.x] != std::vector<uint32_t>{t.call}) return false;
    FusedGroup& g = plan_.groups[gi];
    if (g.kind != GroupKind::kElementwise || !sole_value_of_buffer(t.x) || p_.value(t.x).dims != g.shape) return false;
    auto store = std::find_if(g.stores.begin(), g.stores.end(), [&](const GroupStore& s) { return s.value == t.x; });
    if (store == g.stores.end() || !store->strides.empty()) return false;
    // x's dim perm[k] is the output's dim k, which lies at the output's stride k.
    const std::vector<SymExpr> out_strides = row_major_strides(p_.value(t.out).dims);
    std::vector<SymExpr> memory(g.shape.size());
    for (size_t k = 0; k < t.perm.size(); ++k) memory[t.perm[k]] = out_strides[k];
    store->value = t.out;
    if (!is_row_major(memory, g.shape)) store->strides = std::move(memory);
    std::sort(g.stores.begin(), g.stores.end(),
              [](const GroupStore& a, const GroupStore& b) { return a.value < b.value; });
    g.internal_values.push_back(t.x);
    absorb(g, t, /*before=*/false);
    return true;
  }

  // Only one group's calls read the map's output: that group reads the map's input instead.
  bool read_through(const IndexMap& t) {
    if (is_output_[t.out] || readers_[t.out].empty()) return false;
    const uint32_t gi = plan_.call_group[readers_[t.out].front()];
    if (gi == kNone) return false;
    for (uint32_t r : readers_[t.out]) {
      if (plan_.call_group[r] != gi) return false;
    }
    FusedGroup& g = plan_.groups[gi];
    if (g.kind != GroupKind::kElementwise && g.kind != GroupKind::kRow) return false;
    auto input = std::find_if(g.inputs.begin(), g.inputs.end(), [&](const GroupInput& in) { return in.value == t.out; });
    if (input == g.inputs.end() || written_between(p_, {p_.value(t.x).buffer}, t.call, g.position)) return false;
    // A row group's per-row (kOuter) and scalar inputs may feed its row statements, which load no strided input.
    if (g.kind == GroupKind::kRow && input->access != InputAccess::kContiguous && input->access != InputAccess::kInner &&
        input->access != InputAccess::kStrided) {
      return false;
    }
    std::optional<std::vector<SymExpr>> strides = broadcast_strides(p_.value(t.out).dims, t.in_x, g.shape);
    if (!strides) return false;
    // CUDA's row launchers take no shape parameters (codegen/cuda_kernels.cpp): every dim and stride a literal.
    if (g.kind == GroupKind::kRow && (!all_constant(*strides) || !all_constant(g.shape))) return false;
    input->value = t.x;
    input->access = InputAccess::kStrided;
    input->strides = std::move(*strides);
    g.internal_values.push_back(t.out);
    absorb(g, t, /*before=*/true);
    return true;
  }

  void absorb(FusedGroup& g, const IndexMap& t, bool before) {
    g.absorbed.push_back(t.call);
    plan_.call_group[t.call] = g.index;
    const std::string& op = p_.calls[t.call].op;
    g.label = before ? op + "+" + g.label : g.label + "+" + op;
  }

  const LoweredProgram& p_;
  FusionPlan& plan_;
  const std::vector<std::vector<uint32_t>>& readers_;
  const std::vector<bool>& is_output_;
};

}  // namespace

void absorb_transposes(const LoweredProgram& program, FusionPlan& plan,
                       const std::vector<std::vector<uint32_t>>& readers, const std::vector<bool>& is_output) {
  Absorber(program, plan, readers, is_output).run();
}

}  // namespace kforge::passes::fusion_detail
