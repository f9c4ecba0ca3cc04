// Memory plan properties, checked by brute force on hand-written and random programs: no two buffers live at
// the same call overlap, offsets are aligned, the workspace is no bigger than the sum of its buffers, reuse
// happens, in-place aliasing is honoured; for dynamic shapes at several values of the symbols.
#include <random>

#include "pass_test_util.h"
#include "passes/memory_plan.h"

using namespace kforge;
using namespace kforge::passes;

namespace {

/// Independent of find_overlap: for every call, every pair of kforge-owned buffers live there.
std::string brute_force_overlap(const LoweredProgram& lp, const std::vector<int64_t>& symbols) {
  const int64_t workspace = lp.plan.workspace_bytes.evaluate(symbols);
  for (uint32_t call = 0; call < lp.calls.size(); ++call) {
    std::vector<const Buffer*> live;
    for (const Buffer& b : lp.buffers) {
      if (b.kind == BufferKind::kWorkspace && b.first_call <= call && call <= b.last_call) live.push_back(&b);
    }
    for (size_t i = 0; i < live.size(); ++i) {
      const int64_t oi = live[i]->offset.evaluate(symbols), ei = oi + live[i]->size_bytes.evaluate(symbols);
      if (oi % lp.plan.alignment != 0) return "unaligned buffer " + std::to_string(live[i]->index);
      if (oi < 0 || ei > workspace) return "buffer " + std::to_string(live[i]->index) + " outside the workspace";
      for (size_t j = i + 1; j < live.size(); ++j) {
        const int64_t oj = live[j]->offset.evaluate(symbols), ej = oj + live[j]->size_bytes.evaluate(symbols);
        if (ei > oi && ej > oj && oi < ej && oj < ei) {
          return "buffers " + std::to_string(live[i]->index) + " and " + std::to_string(live[j]->index) +
                 " overlap at call " + std::to_string(call);
        }
      }
    }
  }
  return "";
}

/// Every value is written by its call while its buffer is live, and read while it is live.
std::string check_live_ranges(const LoweredProgram& lp) {
  for (uint32_t c = 0; c < lp.calls.size(); ++c) {
    auto in_range = [&](uint32_t v) {
      if (v == kNone) return true;
      const Buffer& b = lp.buffer_of(v);
      return b.first_call <= c && c <= b.last_call;
    };
    for (const KernelArg& a : lp.calls[c].args) {
      if (!in_range(a.value)) return "value " + std::to_string(a.value) + " read outside its live range";
      for (uint32_t v : a.values) {
        if (!in_range(v)) return "value " + std::to_string(v) + " read outside its live range";
      }
    }
    for (const CallOutput& o : lp.calls[c].outputs) {
      for (uint32_t v : o.values) {
        if (!in_range(v)) return "value " + std::to_string(v) + " written outside its live range";
      }
    }
  }
  return "";
}

/// A random program of elementwise, reshape and in-place ops over shapes with 64 elements (some dynamic).
std::string random_program(uint32_t seed, bool dynamic) {
  std::mt19937 rng(seed);
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  std::vector<std::pair<std::string, std::string>> values;  // name, shape key
  std::string ops;
  const std::string batch = dynamic ? "-1" : "3";
  std::string text = "program: r\ninputs: [{name: x0, dtype: float32, shape: [" + batch +
                     ", 4, 16]}, {name: x1, dtype: float32, shape: [" + batch + ", 64]}]\nops:\n";
  values.push_back({"x0", "a"});
  values.push_back({"x1", "b"});
  const char* unary[] = {"exp", "relu", "tanh", "sigmoid", "floor"};
  const int count = 6 + static_cast<int>(pick(14));
  for (int i = 0; i < count; ++i) {
    const std::string out = "v" + std::to_string(i);
    const auto& src = values[pick(values.size())];
    switch (pick(5)) {
      case 0:
      case 1: ops += "  - {op: " + std::string(unary[pick(5)]) + ", in: [" + src.first + "], out: [" + out + "]}\n"; break;
      case 2: {
        std::vector<std::string> same;
        for (const auto& v : values) {
          if (v.second == src.second) same.push_back(v.first);
        }
        ops += "  - {op: add, in: [" + src.first + ", " + same[pick(same.size())] + "], out: [" + out + "]}\n";
        break;
      }
      case 3:
        ops += "  - {op: reshape, in: [" + src.first + "], out: [" + out + "], attrs: {shape: " +
               (src.second == "a" ? "[-1, 64]" : "[-1, 4, 16]") + "}}\n";
        values.push_back({out, src.second == "a" ? "b" : "a"});
        continue;
      default:
        // In place on a computed value only (program inputs are never written).
        if (src.first[0] == 'x') {
          ops += "  - {op: exp, in: [" + src.first + "], out: [" + out + "]}\n";
        } else {
          ops += "  - {op: relu_, in: [" + src.first + "], out: [" + out + "]}\n";
        }
        break;
    }
    values.push_back({out, src.second});
  }
  text += ops + "outputs: [" + values.back().first + ", " + values[values.size() - 2].first + "]\n";
  return text;
}

/// Five 1000-float values, each read only by the next op: two live at any call.
constexpr const char* kChain = R"(program: t
inputs: [{name: x, dtype: float32, shape: [1000]}]
ops:
  - {op: exp, in: [x], out: [a]}
  - {op: tanh, in: [a], out: [b]}
  - {op: exp, in: [b], out: [c]}
  - {op: tanh, in: [c], out: [d]}
  - {op: exp, in: [d], out: [y]}
outputs: [y]
)";

}  // namespace

TEST_CASE("memory plan: a chain reuses two buffers") {
  test::Env env;
  std::optional<LoweredProgram> lp = env.compile_yaml(kChain);
  REQUIRE(lp);
  CHECK(lp->plan.is_static());
  CHECK(lp->plan.workspace_bytes.constant() == 2 * 4032);  // 4000 bytes aligned to 64, two at a time
  CHECK(lp->plan.unshared_bytes.constant() == 4 * 4032);
  CHECK(brute_force_overlap(*lp, {}).empty());
  CHECK(find_overlap(*lp, {}).empty());
}

TEST_CASE("memory plan: best fit puts a small buffer into the smallest gap") {
  // Sizes 4096 (a), 1024 (b), 2048 (c), then a small d while a and c are live but b is dead: d goes into b's gap.
  test::Env env;
  std::optional<LoweredProgram> lp = env.compile_yaml(R"(program: t
inputs: [{name: x, dtype: float32, shape: [1024]}, {name: s, dtype: float32, shape: [256]}, {name: m, dtype: float32, shape: [512]}]
ops:
  - {op: exp, in: [x], out: [a]}
  - {op: exp, in: [s], out: [b]}
  - {op: exp, in: [m], out: [c]}
  - {op: tanh, in: [b], out: [b2]}
  - {op: exp, in: [s], out: [d]}
  - {op: add, in: [d, b2], out: [e]}
  - {op: relu, in: [a], out: [a2]}
  - {op: relu, in: [c], out: [c2]}
outputs: [a2, c2, e]
)");
  REQUIRE(lp);
  CHECK(brute_force_overlap(*lp, {}).empty());
  CHECK(check_live_ranges(*lp).empty());
  CHECK(*lp->plan.workspace_bytes.constant() < *lp->plan.unshared_bytes.constant());
}

TEST_CASE("memory plan: random static programs never overlap") {
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    test::Env env;
    const std::string text = random_program(seed, false);
    INFO(text);
    std::optional<LoweredProgram> lp = env.compile_yaml(text);
    INFO(env.printed());
    REQUIRE(lp);
    INFO(lp->dump());
    CHECK(lp->plan.is_static());
    CHECK(brute_force_overlap(*lp, {}) == "");
    CHECK(find_overlap(*lp, {}) == "");
    CHECK(check_live_ranges(*lp) == "");
    CHECK(*lp->plan.workspace_bytes.constant() <= *lp->plan.unshared_bytes.constant());
    // In-place outputs share their input's buffer.
    for (const KernelCall& c : lp->calls) {
      if (!c.inplace_twin) continue;
      CHECK(lp->value(c.args[0].value).buffer == lp->value(c.outputs[0].values[0]).buffer);
    }
  }
}

TEST_CASE("memory plan: random dynamic programs never overlap, for any batch") {
  for (uint32_t seed = 1; seed <= 30; ++seed) {
    test::Env env;
    const std::string text = random_program(seed, true);
    INFO(text);
    std::optional<LoweredProgram> lp = env.compile_yaml(text);
    INFO(env.printed());
    REQUIRE(lp);
    INFO(lp->dump());
    for (int64_t batch : {1, 2, 7, 33}) {
      const std::vector<int64_t> symbols(lp->symbols.size(), batch);
      CHECK(brute_force_overlap(*lp, symbols) == "");
      CHECK(lp->plan.workspace_bytes.evaluate(symbols) <= lp->plan.unshared_bytes.evaluate(symbols));
    }
    CHECK(check_live_ranges(*lp) == "");
  }
}

TEST_CASE("memory plan: static and dynamic buffers in one workspace") {
  test::Env env;
  std::optional<LoweredProgram> lp = env.compile_yaml(R"(program: t
inputs: [{name: x, dtype: float32, shape: [-1, 10]}, {name: k, dtype: float32, shape: [100]}]
ops:
  - {op: exp, in: [k], out: [k1]}
  - {op: exp, in: [x], out: [a]}
  - {op: tanh, in: [a], out: [b]}
  - {op: tanh, in: [k1], out: [k2]}
  - {op: add, in: [b, a], out: [c]}
outputs: [c, k2]
)");
  REQUIRE(lp);
  CHECK_FALSE(lp->plan.is_static());
  for (int64_t batch : {1, 5, 100}) {
    CHECK(brute_force_overlap(*lp, {batch}) == "");
    CHECK(find_overlap(*lp, {batch}) == "");
  }
  // The static buffer sits at the start; dynamic slots come after it.
  for (const Buffer& b : lp->buffers) {
    if (b.kind != BufferKind::kWorkspace) continue;
    if (b.size_bytes.is_constant()) CHECK(b.offset.constant() == 0);
    else CHECK(b.offset.evaluate({1}) >= 448);
  }
}

TEST_CASE("memory plan: scratch buffers live at their call alone") {
  // A chain of five 4000-byte values; calls 1 and 3 get 8192 bytes of scratch each. Only two values are live at
  // any call, so both scratches fit beside them in one region: the workspace grows by one scratch, not two, and
  // nothing live at calls 1 and 3 overlaps their scratch.
  test::Env env;
  std::optional<LoweredProgram> lp = env.compile_yaml(kChain);
  REQUIRE(lp);
  const size_t before = lp->buffers.size();
  add_scratch_buffers(*lp, {1, 3}, 8192);
  REQUIRE(lp->buffers.size() == before + 2);
  for (uint32_t position : {1u, 3u}) {
    const Buffer* scratch = scratch_buffer(*lp, position);
    REQUIRE(scratch != nullptr);
    CHECK(scratch->values.empty());
    CHECK(scratch->first_call == position);
    CHECK(scratch->last_call == position);
    CHECK(scratch->size_bytes.constant() == 8192);
  }
  CHECK(scratch_buffer(*lp, 2) == nullptr);
  CHECK(lp->plan.workspace_bytes.constant() == 8192 + 2 * 4032);
  CHECK(lp->plan.unshared_bytes.constant() == 2 * 8192 + 4 * 4032);
  CHECK(brute_force_overlap(*lp, {}).empty());
  CHECK(find_overlap(*lp, {}).empty());
  CHECK(lp->dump().find("size 8192 live [1, 1] scratch of call 1\n") != std::string::npos);

  // No bytes: nothing added, the plan unchanged.
  add_scratch_buffers(*lp, {2}, 0);
  CHECK(lp->buffers.size() == before + 2);
  CHECK(scratch_buffer(*lp, 2) == nullptr);
}
