// Unit tests of the CUDA target plan's index batches (passes/cuda_plan_batches.cpp): independent index-mapped calls
// that launch one after the other become one launch; a call that reads another's result, a launch between them, or
// an output that may take the bytes of a buffer the batch still reads keeps them apart.
#include "cuda_plan_test_util.h"

namespace kforge::passes {
namespace {

using test::kLibraryOps;
using test::library_program;
using test::PlanFixture;

// The kernel library's ops with their fusion rules (relu, exp: groups).
const std::vector<std::string> kFusingOps = {"kernels/ops.yaml", "kernels/fusion.yaml"};

// The ops of the calls of each batch, in order ("transpose,concat|...").
std::string batches(const PlanFixture& f) {
  std::string out;
  for (const std::vector<uint32_t>& batch : f.plan.index_batches) {
    if (!out.empty()) out += "|";
    for (size_t k = 0; k < batch.size(); ++k) out += (k ? "," : "") + f.lowered->calls[batch[k]].op;
  }
  return out;
}

TEST_CASE("cuda plan: independent index calls one after the other are one batch") {
  SECTION("two caches grown side by side (a decoder layer's keys and values)") {
    PlanFixture f(library_program("{name: pk, dtype: float16, shape: [2, 3, 5, 8]}, "
                                  "{name: pv, dtype: float16, shape: [2, 3, 5, 8]}, "
                                  "{name: k, dtype: float16, shape: [2, 3, 1, 8]}, "
                                  "{name: v, dtype: float16, shape: [2, 3, 1, 8]}",
                                  "  - {op: builtin.combine, in: [pk, k], out: [kl]}\n"
                                  "  - {op: concat, in: [kl], out: [ko], attrs: {axis: 2}}\n"
                                  "  - {op: builtin.combine, in: [pv, v], out: [vl]}\n"
                                  "  - {op: concat, in: [vl], out: [vo], attrs: {axis: 2}}\n",
                                  "ko, vo"),
                  64 << 20, kLibraryOps);
    INFO(f.refusals());
    REQUIRE(f.plan.refusals.empty());
    CHECK(batches(f) == "concat,concat");
  }
  SECTION("a view between them launches nothing") {
    PlanFixture f(library_program("{name: x, dtype: float32, shape: [2, 3, 4]}, {name: y, dtype: float32, shape: [4, 3]}",
                                  "  - {op: transpose, in: [x], out: [t], attrs: {perm: [2, 0, 1]}}\n"
                                  "  - {op: reshape, in: [t], out: [r], attrs: {shape: [4, 6]}}\n"
                                  "  - {op: transpose, in: [y], out: [u], attrs: {perm: [1, 0]}}\n",
                                  "r, u"),
                  64 << 20, kLibraryOps);
    REQUIRE(f.plan.refusals.empty());
    CHECK(batches(f) == "transpose,transpose");
  }
}

TEST_CASE("cuda plan: index calls stay apart where one launch would change what they compute") {
  SECTION("the second reads the first's result") {
    PlanFixture f(library_program("{name: x, dtype: float32, shape: [2, 3, 4]}",
                                  "  - {op: transpose, in: [x], out: [t], attrs: {perm: [2, 0, 1]}}\n"
                                  "  - {op: transpose, in: [t], out: [u], attrs: {perm: [1, 0, 2]}}\n",
                                  "u"),
                  64 << 20, kLibraryOps);
    REQUIRE(f.plan.refusals.empty());
    CHECK(batches(f) == "");
  }
  SECTION("a group launches between them") {
    PlanFixture f(library_program("{name: x, dtype: float32, shape: [2, 3, 4]}, {name: y, dtype: float32, shape: [4, 3]}",
                                  "  - {op: transpose, in: [x], out: [t], attrs: {perm: [2, 0, 1]}}\n"
                                  "  - {op: relu, in: [y], out: [r]}\n"
                                  "  - {op: transpose, in: [r], out: [u], attrs: {perm: [1, 0]}}\n",
                                  "t, u"),
                  64 << 20, kFusingOps);
    INFO(f.refusals());
    REQUIRE(f.plan.refusals.empty());
    CHECK(batches(f) == "");
  }
  SECTION("a workspace output after a buffer the batch reads has died") {
    // r dies at the first transpose; the second's output u, a workspace buffer (the relu reads it), may take r's
    // bytes: run together, the first would read what the second writes.
    PlanFixture f(library_program("{name: x, dtype: float32, shape: [4, 3]}, {name: y, dtype: float32, shape: [3, 4]}",
                                  "  - {op: relu, in: [x], out: [r]}\n"
                                  "  - {op: transpose, in: [r], out: [t], attrs: {perm: [1, 0]}}\n"
                                  "  - {op: transpose, in: [y], out: [u], attrs: {perm: [1, 0]}}\n"
                                  "  - {op: exp, in: [u], out: [e]}\n",
                                  "t, e"),
                  64 << 20, kFusingOps);
    INFO(f.refusals());
    REQUIRE(f.plan.refusals.empty());
    CHECK(batches(f) == "");
  }
}

}  // namespace
}  // namespace kforge::passes
