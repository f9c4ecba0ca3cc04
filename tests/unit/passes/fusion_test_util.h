// Shared by the fusion pass's tests (test_fusion.cpp, test_fusion_attention.cpp): the reference op set with its
// fusion overlay, compiling hand-written programs, and the invariants every fusion plan keeps.
#pragma once

#include "pass_test_util.h"
#include "passes/fusion.h"

namespace kforge::passes::fusion_test {

/// The reference op set with the fusion overlay.
class FusionEnv {
 public:
  FusionEnv() : diags_(sources_, out_) {
    library_ = opdef::load_op_library(
        {test::source_path("kernels/ops.yaml"), test::source_path("kernels/fusion.yaml")}, sources_,
        diags_);
    compat_ = opdef::load_op_compat(test::source_path("kernels/op_compat.yaml"), sources_, diags_);
    ops_ = std::make_unique<OpSet>(library_, &compat_, diags_);
    INFO(out_.str());
    REQUIRE_FALSE(diags_.has_errors());
  }

  LoweredProgram compile(const std::string& yaml) {
    const uint32_t file = sources_.add_buffer("t.yaml", yaml);
    std::optional<ir::Program> p = ir::read_program(sources_, file, diags_);
    INFO(out_.str());
    REQUIRE(p.has_value());
    std::optional<LoweredProgram> lp = compile_program(*p, *ops_, diags_);
    INFO(out_.str());
    REQUIRE(lp.has_value());
    return std::move(*lp);
  }

  const opdef::Op* op(std::string_view name) const { return library_.find(name); }

 private:
  SourceManager sources_;
  std::ostringstream out_;
  DiagnosticEngine diags_;
  opdef::OpLibrary library_;
  opdef::OpCompat compat_;
  std::unique_ptr<OpSet> ops_;
};

/// The fusion options --target cuda sets (compile_target.cpp): lone calls, GEMMs, 16-bit values, absorbed
/// transposes and attention groups.
inline FusionOptions cuda_fusion_options() {
  FusionOptions o;
  o.single_call_groups = true;
  o.gemm_groups = true;
  o.half_floats = true;
  o.absorb_transposes = true;
  o.attention_groups = true;
  return o;
}

inline FusionEnv& env() {
  static FusionEnv e;
  return e;
}

/// The calls of each group as "0,1,2".
inline std::vector<std::string> group_calls(const FusionPlan& plan) {
  std::vector<std::string> out;
  for (const FusedGroup& g : plan.groups) {
    std::string s;
    for (uint32_t c : g.calls) s += (s.empty() ? "" : ",") + std::to_string(c);
    out.push_back(s);
  }
  return out;
}

inline const GroupInput* input_for(const LoweredProgram& lp, const FusedGroup& g, const std::string& name) {
  for (const GroupInput& in : g.inputs) {
    if (lp.value(in.value).name == name) return &in;
  }
  return nullptr;
}

/// The invariants every plan keeps: each call in at most one group, groups ordered by position, every value a
/// group reads is computed before its position, every reader outside the group runs after it.
inline void check_invariants(const LoweredProgram& lp, const FusionPlan& plan) {
  std::vector<int> seen(lp.calls.size(), 0);
  uint32_t last_position = 0;
  for (const FusedGroup& g : plan.groups) {
    CHECK(g.position >= last_position);
    last_position = g.position;
    // A packed GEMM (gemm_siblings.h) runs where its first sibling ran; every other group where its last call was.
    if (g.kind == GroupKind::kGemm && g.gemm.packed()) {
      CHECK(std::find(g.calls.begin(), g.calls.end(), g.position) != g.calls.end());
    } else {
      CHECK(g.position == g.calls.back());
    }
    for (uint32_t c : g.calls) {
      ++seen[c];
      CHECK(plan.call_group[c] == g.index);
    }
    for (uint32_t c : g.absorbed) CHECK(plan.call_group[c] == g.index);
    for (const GroupInput& in : g.inputs) {
      const uint32_t def = lp.value(in.value).defined_by;
      if (def != kNone) CHECK(plan.call_group[def] != g.index);  // read from memory: computed outside
      if (def != kNone) CHECK(def < g.position);
    }
    for (uint32_t c = 0; c < lp.calls.size(); ++c) {
      if (plan.call_group[c] == g.index) continue;
      for (const KernelArg& a : lp.calls[c].args) {
        if (a.kind != ArgKind::kTensor) continue;
        const uint32_t def = lp.value(a.value).defined_by;
        if (def != kNone && plan.call_group[def] == g.index) CHECK(c > g.position);
      }
    }
  }
  for (int n : seen) CHECK(n <= 1);
}


/// The fusion options of the GEMM groups as --target cuda sets them, without absorbed transposes or attention.
inline FusionOptions gemm_options() {
  FusionOptions o;
  o.single_call_groups = true;  // as --target cuda sets them
  o.gemm_groups = true;
  o.half_floats = true;
  return o;
}

/// The group that call `call` is in, or null.
inline const FusedGroup* group_of_call(const FusionPlan& plan, uint32_t call) {
  return plan.call_group[call] == kNone ? nullptr : &plan.groups[plan.call_group[call]];
}

}  // namespace kforge::passes::fusion_test
