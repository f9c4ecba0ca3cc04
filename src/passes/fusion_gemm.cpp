// GEMM groups of the fusion pass (docs/fusion.md, "GEMM groups"): a float32, float16 or bfloat16 matmul that a
// generated GEMM computes, with the bias add and erf gelu that follow it when nothing else needs the
// intermediate values. The gelu's form is decided here: erf for float32, tanh for 16-bit GEMMs (bias_gelu_epilogue).
#include <set>

#include "passes/fusion_internal.h"
#include "passes/gemm.h"

namespace kforge::passes::fusion_detail {

namespace {

class GemmGrouper {
 public:
  GemmGrouper(const LoweredProgram& program, const std::vector<CallInfo>& infos,
              const std::vector<std::vector<uint32_t>>& readers, const std::vector<bool>& is_output)
      : p_(program), infos_(infos), readers_(readers), is_output_(is_output) {}

  std::optional<FusedGroup> group_at(uint32_t matmul, bool epilogues) const {
    const KernelCall& call = p_.calls[matmul];
    if (call.inplace_twin) return std::nullopt;
    std::optional<GemmForm> form = gemm_form(p_, call);
    if (!form) return std::nullopt;
    GemmGroup gemm;
    static_cast<GemmForm&>(gemm) = *form;
    gemm.matmul = matmul;
    std::vector<uint32_t> calls = {matmul};
    std::vector<uint32_t> internal;
    // A batch of products keeps its own output: cuBLASLt's bias epilogue serves single products only.
    if (epilogues && !gemm.batched) extend(gemm, calls, internal);
    return make_group(gemm, calls, internal);
  }

 private:
  // The one call that reads `v`, when v is no program output and owns its buffer (no view or alias of it
  // exists, so nothing else can see it); kNone otherwise.
  uint32_t sole_reader(uint32_t v) const {
    if (is_output_[v] || readers_[v].size() != 1) return kNone;
    const Buffer& b = p_.buffer_of(v);
    if (b.values.size() != 1 || b.kind != BufferKind::kWorkspace) return kNone;
    return readers_[v][0];
  }

  // No call strictly between `first` and `last` (other than the group's) writes a buffer the group reads:
  // the group reads its operands at its position (`last`), not where the matmul was.
  bool operands_stable(const GemmGroup& g, uint32_t first, uint32_t last) const {
    std::set<uint32_t> read;
    for (uint32_t v : {g.x, g.y, g.bias}) {
      if (v != kNone) read.insert(p_.value(v).buffer);
    }
    return !written_between(p_, read, first, last);
  }

  // A bias for a GEMM of N columns: the GEMM's dtype, dims [N] or [1, ..., 1, N].
  bool is_bias(uint32_t v, const GemmGroup& g) const {
    const LoweredValue& b = p_.value(v);
    if (b.dtype != g.dtype || b.dims.empty() || b.dims.back() != g.n) return false;
    for (size_t i = 0; i + 1 < b.dims.size(); ++i) {
      if (b.dims[i].constant() != std::optional<int64_t>(1)) return false;
    }
    return true;
  }

  bool fusible(uint32_t c, std::string_view op) const {
    return c != kNone && infos_[c].kind == CallKind::kElementwise && p_.calls[c].op == op;
  }

  // The epilogue of a GEMM + bias + erf gelu group. float32 keeps Paddle's erf gelu exactly. A 16-bit GEMM takes
  // the tanh form, which cuBLASLt computes inside the GEMM (CUBLASLT_EPILOGUE_GELU_BIAS; the erf form costs a
  // second pass over the output: 202 of 2071 us in BERT-base float16 at S 512, batch 8, on an H200, issue 35):
  // the two differ by at most 4.73e-4 (|x| = 2.70), less than half a float16 ulp at the output there (2.69) and
  // below half a float16 ulp of 1 everywhere (docs/compile.md, "The gelu's form";
  // tests/unit/passes/test_gelu_forms.cpp).
  static GemmEpilogue bias_gelu_epilogue(ir::DataType dtype) {
    const bool half = dtype == ir::DataType::kFloat16 || dtype == ir::DataType::kBFloat16;
    return half ? GemmEpilogue::kBiasGeluTanh : GemmEpilogue::kBiasGelu;
  }

  void extend(GemmGroup& g, std::vector<uint32_t>& calls, std::vector<uint32_t>& internal) const {
    const uint32_t add = sole_reader(g.out);
    if (!fusible(add, "add") || infos_[add].inputs.size() != 2) return;
    uint32_t bias = kNone;
    for (const auto& [arg, v] : infos_[add].inputs) {
      if (v != g.out) bias = v;
    }
    const uint32_t add_out = infos_[add].out;
    const LoweredValue& sum = p_.value(add_out);
    if (bias == kNone || !is_bias(bias, g) || sum.dims != p_.value(g.out).dims || sum.dtype != g.dtype) {
      return;
    }
    GemmGroup with_bias = g;
    with_bias.bias = bias;
    with_bias.epilogue = GemmEpilogue::kBias;
    if (!operands_stable(with_bias, g.matmul, add)) return;
    internal.push_back(g.out);
    calls.push_back(add);
    g = with_bias;
    g.out = add_out;

    const uint32_t gelu = sole_reader(add_out);
    if (!fusible(gelu, "gelu")) return;
    // The kernels implement Paddle's default erf form only; the tanh approximation stays its own group.
    if (p_.calls[gelu].constant_bool("approximate") != std::optional<bool>(false)) return;
    const LoweredValue& act = p_.value(infos_[gelu].out);
    if (act.dims != sum.dims || act.dtype != g.dtype || !operands_stable(g, g.matmul, gelu)) return;
    internal.push_back(add_out);
    calls.push_back(gelu);
    g.out = infos_[gelu].out;
    g.epilogue = bias_gelu_epilogue(g.dtype);
  }

  FusedGroup make_group(const GemmGroup& gemm, const std::vector<uint32_t>& calls,
                        const std::vector<uint32_t>& internal) const {
    FusedGroup g;
    g.kind = GroupKind::kGemm;
    g.calls = calls;
    g.position = calls.back();
    g.shape = p_.value(gemm.out).dims;
    g.outer = gemm.outer * gemm.batch * gemm.m;
    g.inner = gemm.n;
    g.numel = gemm.outer * gemm.batch * gemm.m * gemm.n;
    g.needs_int64 = exceeds_int32(g.numel);
    // Storage is the GEMM's dtype; every GEMM accumulates and applies its epilogue in float32.
    const expr::ScalarType storage = *scalar_of(gemm.dtype);
    auto add_input = [&](uint32_t v, InputAccess access) {
      if (v == kNone) return;
      GroupInput in;
      in.value = v;
      in.name = "in" + std::to_string(g.inputs.size());
      in.dtype = p_.value(v).dtype;
      in.storage = storage;
      in.type = expr::ScalarType::kFloat32;
      in.access = access;
      in.needs_int64 = exceeds_int32(sym_numel(p_.value(v).dims));
      g.inputs.push_back(std::move(in));
    };
    add_input(gemm.x, InputAccess::kContiguous);
    add_input(gemm.y, InputAccess::kContiguous);
    add_input(gemm.bias, InputAccess::kInner);
    GroupStore store;
    store.value = gemm.out;
    store.name = "gemm";
    store.dtype = p_.value(gemm.out).dtype;
    store.storage = storage;
    g.stores.push_back(std::move(store));
    g.internal_values = internal;
    g.has_expensive = gemm.epilogue == GemmEpilogue::kBiasGelu || gemm.epilogue == GemmEpilogue::kBiasGeluTanh;
    for (uint32_t c : calls) g.label += (g.label.empty() ? "" : "+") + p_.calls[c].op;
    g.gemm = gemm;
    return g;
  }

  const LoweredProgram& p_;
  const std::vector<CallInfo>& infos_;
  const std::vector<std::vector<uint32_t>>& readers_;
  const std::vector<bool>& is_output_;
};

}  // namespace

std::vector<FusedGroup> plan_gemm_groups(const LoweredProgram& program, const std::vector<CallInfo>& infos,
                                         const std::vector<std::vector<uint32_t>>& readers,
                                         const std::vector<bool>& is_output, bool epilogues) {
  GemmGrouper grouper(program, infos, readers, is_output);
  std::vector<FusedGroup> groups;
  for (uint32_t c = 0; c < program.calls.size(); ++c) {
    if (std::optional<FusedGroup> g = grouper.group_at(c, epilogues)) groups.push_back(std::move(*g));
  }
  return groups;
}

}  // namespace kforge::passes::fusion_detail
