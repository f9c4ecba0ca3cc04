// Sibling GEMMs packed into one batched product (passes/gemm_siblings.h, --target cuda): which GEMM groups pack, the
// packed group's batch and strides, the parameter packs, where the outputs lie, and that the memory plan keeps the
// packed buffer from overlapping anything live with it.
#include "fusion_test_util.h"
#include "passes/gemm_siblings.h"
#include "passes/memory_plan.h"

using namespace kforge;
using namespace kforge::passes;
using namespace kforge::passes::fusion_test;

namespace {

// x [-1, 8, 32] projected by `count` linears of N 32 (weights wq, wk, wv, biases bq, bk, bv), each followed by
// `after` (e.g. a relu of its output); `extra` ops before the outputs.
std::string projections(int count, const std::string& dtype = "float16", const std::string& extra = "",
                        const std::string& outputs = "") {
  const char* names[] = {"q", "k", "v"};
  std::string params, ops, outs;
  for (int i = 0; i < count; ++i) {
    const std::string n = names[i];
    params += "  - {name: w" + n + ", dtype: " + dtype + ", shape: [32, 32]}\n  - {name: b" + n + ", dtype: " + dtype +
              ", shape: [32]}\n";
    ops += "  - {op: matmul, in: [x, w" + n + "], out: [m" + n + "], attrs: {transpose_x: false, transpose_y: false}}\n"
           "  - {op: add, in: [m" + n + ", b" + n + "], out: [" + n + "]}\n"
           "  - {op: relu, in: [" + n + "], out: [r" + n + "]}\n";
    outs += std::string(outs.empty() ? "" : ", ") + "r" + n;
  }
  return "program: qkv\ninputs: [{name: x, dtype: " + dtype + ", shape: [-1, 8, 32]}]\nparams:\n" + params +
         "ops:\n" + ops + extra + "outputs: [" + (outputs.empty() ? outs : outputs) + "]\n";
}

struct Packed {
  LoweredProgram lp;
  FusionPlan plan;
  uint32_t packed_away = 0;

  uint32_t value(const std::string& name) const {
    for (const LoweredValue& v : lp.values) {
      if (v.name == name || v.source_id == name) return v.index;
    }
    FAIL("no value " << name);
    return kNone;
  }
  const FusedGroup* packed_group() const {
    for (const FusedGroup& g : plan.groups) {
      if (g.kind == GroupKind::kGemm && g.gemm.packed()) return &g;
    }
    return nullptr;
  }
};

Packed pack(const std::string& yaml) {
  Packed p{env().compile(yaml), {}, 0};
  p.plan = plan_fusion(p.lp, cuda_fusion_options());
  p.packed_away = pack_sibling_gemms(p.lp, p.plan);
  apply_fusion_to_memory_plan(p.lp, p.plan);
  check_invariants(p.lp, p.plan);
  return p;
}

}  // namespace

TEST_CASE("gemm siblings: the q, k, v projections of one x run as one batched product with packed weights") {
  const Packed p = pack(projections(3));
  INFO(p.lp.dump() << dump_fusion(p.lp, p.plan));
  CHECK(p.packed_away == 2);
  const FusedGroup* g = p.packed_group();
  REQUIRE(g != nullptr);
  const GemmGroup& gm = g->gemm;
  CHECK(gm.batched);
  CHECK(gm.batch == SymExpr(3));
  CHECK(gm.epilogue == GemmEpilogue::kBias);
  CHECK(gm.stride_x == SymExpr(0));
  CHECK(gm.stride_y == SymExpr(32 * 32));
  CHECK(gm.stride_out == gm.m * SymExpr(32));
  // The outputs side by side in the first one's buffer, M x N elements of 2 bytes apart.
  REQUIRE(gm.outs.size() == 3);
  const uint32_t buffer = p.lp.value(gm.outs[0]).buffer;
  for (size_t i = 0; i < 3; ++i) {
    const LoweredValue& out = p.lp.value(gm.outs[i]);
    CHECK(out.buffer == buffer);
    CHECK(out.buffer_offset == SymExpr(static_cast<int64_t>(i)) * out.bytes());
  }
  CHECK(p.lp.buffers[buffer].size_bytes == SymExpr(3) * p.lp.value(gm.outs[0]).bytes());
  // The packs: the weights in program order, then the biases.
  REQUIRE(p.lp.parameter_packs.size() == 2);
  const ParameterPack& weights = p.lp.parameter_packs[gm.y_pack];
  const ParameterPack& biases = p.lp.parameter_packs[gm.bias_pack];
  CHECK(weights.member_elements == 32 * 32);
  CHECK(biases.member_elements == 32);
  std::vector<std::string> names;
  for (uint32_t i : weights.parameters) names.push_back(p.lp.parameters[i].name);
  for (uint32_t i : biases.parameters) names.push_back(p.lp.parameters[i].name);
  CHECK(names == std::vector<std::string>{"wq", "wk", "wv", "bq", "bk", "bv"});
  // It runs where the first projection ran; every sibling's calls are its own, and no group is left for them.
  CHECK(g->calls.size() == 6);
  for (uint32_t c : g->calls) CHECK(p.plan.call_group[c] == g->index);
  CHECK(g->position == g->calls[1]);  // the first add
  for (const FusedGroup& other : p.plan.groups) {
    if (&other != g) CHECK(other.kind != GroupKind::kGemm);
  }
  // The relus read the packed outputs while the buffer is live, and nothing overlaps it.
  for (int s0 : {1, 7, 64}) CHECK(find_overlap(p.lp, {s0}) == "");
}

TEST_CASE("gemm siblings: what does not pack") {
  SECTION("a lone projection") {
    const Packed p = pack(projections(1));
    CHECK(p.packed_away == 0);
    CHECK(p.lp.parameter_packs.empty());
  }
  SECTION("float32 (its batched products measured slower than the single ones)") {
    const Packed p = pack(projections(3, "float32"));
    CHECK(p.packed_away == 0);
  }
  SECTION("a projection whose output is a program output") {
    const Packed p = pack(projections(2, "float16", "", "q, rk"));
    CHECK(p.packed_away == 0);
  }
  SECTION("N not a multiple of 16 bytes") {
    std::string yaml = projections(2);
    for (std::string from : {"[32, 32]}", "[32]}"}) {
      const std::string to = from == "[32]}" ? "[6]}" : "[32, 6]}";
      for (size_t at = yaml.find(from); at != std::string::npos; at = yaml.find(from, at + 1)) yaml.replace(at, from.size(), to);
    }
    const Packed p = pack(yaml);
    CHECK(p.packed_away == 0);
  }
}

TEST_CASE("gemm siblings: a packed output read through an absorbed transpose stays live until that read") {
  // q's heads transposed and scaled (one elementwise group absorbing the transpose, after k's relu): the packed
  // buffer must live until that group runs, and renumbering keeps the absorbed transpose in its group.
  const std::string extra =
      "  - {op: reshape, in: [q], out: [q4], attrs: {shape: [0, 0, 2, 16]}}\n"
      "  - {op: transpose, in: [q4], out: [qt], attrs: {perm: [0, 2, 1, 3]}}\n"
      "  - {op: scale, in: [qt], out: [qs], attrs: {scale: 0.25, bias: 0.0, bias_after_scale: true}}\n";
  const Packed p = pack(projections(2, "float16", extra, "rq, rk, qs"));
  INFO(p.lp.dump() << dump_fusion(p.lp, p.plan));
  REQUIRE(p.packed_group() != nullptr);
  bool absorbed = false;
  for (const FusedGroup& g : p.plan.groups) absorbed |= !g.absorbed.empty();
  CHECK(absorbed);
  const Buffer& packed = p.lp.buffers[p.lp.value(p.value("q")).buffer];
  CHECK(packed.last_call >= p.plan.groups[p.plan.call_group[p.lp.value(p.value("qs")).defined_by]].position);
  for (int s0 : {1, 3, 64}) CHECK(find_overlap(p.lp, {s0}) == "");
}
