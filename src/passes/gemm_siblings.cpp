// Sibling GEMMs packed into one batched product: see gemm_siblings.h.
#include "passes/gemm_siblings.h"

#include <algorithm>
#include <set>

#include "opdef/types.h"
#include "passes/fusion_internal.h"

namespace kforge::passes {

namespace {

using fusion_detail::written_between;

class SiblingPacker {
 public:
  SiblingPacker(LoweredProgram& program, FusionPlan& plan) : p_(program), plan_(plan) {}

  uint32_t run() {
    // Candidates in position order; each set is the candidates of one key, packed into its first.
    std::vector<uint32_t> candidates;
    for (const FusedGroup& g : plan_.groups) {
      if (candidate(g)) candidates.push_back(g.index);
    }
    std::set<uint32_t> taken, removed;
    for (size_t i = 0; i < candidates.size(); ++i) {
      if (taken.contains(candidates[i])) continue;
      std::vector<uint32_t> set = {candidates[i]};
      for (size_t j = i + 1; j < candidates.size(); ++j) {
        if (!taken.contains(candidates[j]) && siblings(group(candidates[i]), group(candidates[j])) &&
            x_stable(group(candidates[i]), group(candidates[j]))) {
          set.push_back(candidates[j]);
        }
      }
      if (set.size() < 2) continue;
      taken.insert(set.begin(), set.end());
      pack(set);
      removed.insert(set.begin() + 1, set.end());
    }
    if (removed.empty()) return 0;
    renumber(removed);
    return static_cast<uint32_t>(removed.size());
  }

 private:
  const FusedGroup& group(uint32_t g) const { return plan_.groups[g]; }

  static bool is_parameter(const LoweredValue& v) {
    return v.role == ValueRole::kParameter && v.has_static_shape();
  }

  // A single product whose weight (and bias) is a parameter and whose output owns a buffer of M x N elements.
  bool candidate(const FusedGroup& g) const {
    if (g.kind != GroupKind::kGemm || g.gemm.batched || g.gemm.packed()) return false;
    const GemmGroup& gm = g.gemm;
    // 16-bit only: float32's batched products were slower than its single ones (gemm_siblings.h).
    if (gm.dtype != ir::DataType::kFloat16 && gm.dtype != ir::DataType::kBFloat16) return false;
    if (!is_parameter(p_.value(gm.y)) || (gm.bias != kNone && !is_parameter(p_.value(gm.bias)))) return false;
    const std::optional<int64_t> n = gm.n.constant(), k = gm.k.constant();
    const int64_t esize = static_cast<int64_t>(ir::dtype_size(gm.dtype));
    if (!n || !k || esize == 0 || (*n * esize) % 16 != 0) return false;
    const LoweredValue& out = p_.value(gm.out);
    const Buffer& b = p_.buffers[out.buffer];
    if (b.kind != BufferKind::kWorkspace || b.scratch_at != kNone) return false;
    if (out.buffer_offset.constant() != std::optional<int64_t>(0) || !(b.size_bytes == out.bytes())) return false;
    if (!(out.bytes() == gm.m * gm.n * SymExpr(esize))) return false;
    for (uint32_t v : b.values) {
      if (is_output(v)) return false;
    }
    return true;
  }

  bool is_output(uint32_t v) const {
    return std::any_of(p_.outputs.begin(), p_.outputs.end(), [&](const ProgramOutput& o) { return o.value == v; });
  }

  static bool siblings(const FusedGroup& a, const FusedGroup& b) {
    const GemmGroup &x = a.gemm, &y = b.gemm;
    return x.x == y.x && x.dtype == y.dtype && x.transpose_x == y.transpose_x && x.transpose_y == y.transpose_y &&
           x.m == y.m && x.n == y.n && x.k == y.k && x.epilogue == y.epilogue;
  }

  // The packed group reads x where `first` runs: nothing between it and `later` may write x.
  bool x_stable(const FusedGroup& first, const FusedGroup& later) const {
    return !written_between(p_, {p_.value(first.gemm.x).buffer}, first.position, later.position,
                            std::set<uint32_t>(later.calls.begin(), later.calls.end()));
  }

  uint32_t add_pack(const std::vector<uint32_t>& values, ir::DataType dtype) {
    ParameterPack pack;
    pack.dtype = dtype;
    pack.member_elements = *sym_numel(p_.value(values[0]).dims).constant();
    for (uint32_t v : values) pack.parameters.push_back(p_.value(v).role_index);
    p_.parameter_packs.push_back(std::move(pack));
    return static_cast<uint32_t>(p_.parameter_packs.size() - 1);
  }

  void pack(const std::vector<uint32_t>& set) {
    FusedGroup& first = plan_.groups[set[0]];
    GemmGroup& gm = first.gemm;
    std::vector<uint32_t> ys, biases;
    const SymExpr slot = p_.value(gm.out).bytes();
    const uint32_t buffer = p_.value(gm.out).buffer;
    for (size_t i = 0; i < set.size(); ++i) {
      const FusedGroup& g = group(set[i]);
      ys.push_back(g.gemm.y);
      if (g.gemm.bias != kNone) biases.push_back(g.gemm.bias);
      gm.outs.push_back(g.gemm.out);
      if (i == 0) continue;
      p_.move_values_into(p_.value(g.gemm.out).buffer, buffer, SymExpr(static_cast<int64_t>(i)) * slot);
      first.calls.insert(first.calls.end(), g.calls.begin(), g.calls.end());
      first.inputs.insert(first.inputs.end(), g.inputs.begin() + 1, g.inputs.end());  // x once
      first.stores.insert(first.stores.end(), g.stores.begin(), g.stores.end());
      first.internal_values.insert(first.internal_values.end(), g.internal_values.begin(), g.internal_values.end());
    }
    for (size_t i = 0; i < first.inputs.size(); ++i) first.inputs[i].name = "in" + std::to_string(i);
    p_.buffers[buffer].size_bytes = SymExpr(static_cast<int64_t>(set.size())) * slot;
    std::sort(first.calls.begin(), first.calls.end());
    const SymExpr n = SymExpr(static_cast<int64_t>(set.size()));
    gm.batched = true;
    gm.batch = n;
    gm.stride_x = 0;
    gm.stride_y = gm.k * gm.n;
    gm.stride_out = gm.m * gm.n;
    gm.y_pack = add_pack(ys, gm.dtype);
    if (!biases.empty()) gm.bias_pack = add_pack(biases, gm.dtype);
    first.numel = n * first.numel;
    first.outer = n * first.outer;
    first.label += " x" + std::to_string(set.size());
  }

  // Drops the packed-away groups; indices and call_group follow the remaining groups' order (still by position).
  void renumber(const std::set<uint32_t>& removed) {
    std::vector<FusedGroup> kept;
    for (FusedGroup& g : plan_.groups) {
      if (!removed.contains(g.index)) kept.push_back(std::move(g));
    }
    plan_.groups = std::move(kept);
    renumber_groups(plan_);
  }

  LoweredProgram& p_;
  FusionPlan& plan_;
};

}  // namespace

uint32_t pack_sibling_gemms(LoweredProgram& program, FusionPlan& plan) { return SiblingPacker(program, plan).run(); }

}  // namespace kforge::passes
