// Generation-time shape rules of the math, comparison, creation and scan ops (src/passes/shape_rules_math.cpp):
// static and symbolic dims, known operand contents (arange's start/end/step, topk's k), argsort, located errors.
#include "pass_test_util.h"

#include "passes/analysis.h"
#include "passes/verify.h"

using namespace kforge;
using namespace kforge::passes;

namespace {

using test::Analyzed;  // pass_test_util.h
using test::analyze;
using test::analyze_ok;

}  // namespace

TEST_CASE("math shapes: comparisons and logic broadcast to bool, masked_fill to x's dtype") {
  Analyzed a = analyze_ok(
      "[{name: x, dtype: float32, shape: [-1, 3]}, {name: y, dtype: float32, shape: [3]}, "
      "{name: v, dtype: float32, shape: []}]",
      "  - {op: greater_equal, in: [x, y], out: [ge]}\n"
      "  - {op: logical_not, in: [ge], out: [n]}\n"
      "  - {op: logical_or, in: [ge, n], out: [o]}\n"
      "  - {op: masked_fill, in: [y, o, v], out: [m]}\n"
      "  - {op: abs, in: [m], out: [r]}\n",
      "[o, m, r]");
  CHECK(a.shape("ge") == "bool[s0, 3]");
  CHECK(a.shape("o") == "bool[s0, 3]");
  CHECK(a.shape("m") == "float32[s0, 3]");
  CHECK(a.shape("r") == "float32[s0, 3]");
}

TEST_CASE("math shapes: arange from known operands, static and symbolic") {
  Analyzed a = analyze_ok(
      "[{name: x, dtype: float32, shape: [-1]}]",
      "  - {op: full, out: [s], attrs: {shape: [1], value: 0, dtype: float64}}\n"
      "  - {op: full, out: [e], attrs: {shape: [1], value: 1, dtype: float64}}\n"
      "  - {op: full, out: [st], attrs: {shape: [1], value: 0.1, dtype: float64}}\n"
      "  - {op: arange, in: [s, e, st], out: [r], attrs: {dtype: float32}}\n"
      "  - {op: shape64, in: [x], out: [sh]}\n"
      "  - {op: slice, in: [sh], out: [n], attrs: {axes: [0], starts: [0], ends: [1], infer_flags: [1], "
      "decrease_axis: [0]}}\n"
      "  - {op: full, out: [two], attrs: {shape: [1], value: 2, dtype: int64}}\n"
      "  - {op: full, out: [three], attrs: {shape: [1], value: 3, dtype: int64}}\n"
      "  - {op: arange, in: [two, n, three], out: [q], attrs: {dtype: int64}}\n",
      "[r, q]");
  CHECK(a.shape("r") == "float32[10]");  // ceil(1 / 0.1) in double, as Paddle's GetSize
  CHECK(a.shape("q") == "int64[ceil_div(s0 - 2, 3)]");
}

TEST_CASE("math shapes: arange whose end is only known at run time is an error at the op") {
  Analyzed a = analyze("[{name: end, dtype: int64, shape: [1]}]",
                       "  - {op: full, out: [s], attrs: {shape: [1], value: 0, dtype: int64}}\n"
                       "  - {op: full, out: [st], attrs: {shape: [1], value: 1, dtype: int64}}\n"
                       "  - {op: arange, in: [s, end, st], out: [r], attrs: {dtype: int64}}\n",
                       "[r]");
  CHECK_FALSE(a.analysis.has_value());
  CHECK_THAT(a.diagnostics, Catch::Contains("p.yaml:6:") && Catch::Contains("run-time value of 'end'"));
}

TEST_CASE("math shapes: creation from a dynamic shape, one_hot, swiglu halves") {
  Analyzed a = analyze_ok(
      "[{name: x, dtype: float32, shape: [-1, 4]}, {name: v, dtype: float32, shape: [1]}, "
      "{name: ids, dtype: int64, shape: [-1]}]",
      "  - {op: shape64, in: [x], out: [sh]}\n"
      "  - {op: full_with_tensor, in: [v, sh], out: [f], attrs: {dtype: float64}}\n"
      "  - {op: uniform, in: [sh], out: [u], attrs: {dtype: float32, min: -1.0, max: 1.0, seed: 3}}\n"
      "  - {op: one_hot, in: [ids], out: [oh], attrs: {num_classes: 7}}\n"
      "  - {op: swiglu, in: [x], out: [g]}\n",
      "[f, u, oh, g]");
  CHECK(a.shape("f") == "float64[s0, 4]");
  CHECK(a.shape("u") == "float32[s0, 4]");
  CHECK(a.shape("oh") == "float32[s1, 7]");
  CHECK(a.shape("g") == "float32[s0, 2]");
}

TEST_CASE("math shapes: randint over a dynamic shape, int64 by default; its located errors") {
  const char* inputs = "[{name: x, dtype: float32, shape: [-1, 4]}]";
  Analyzed a = analyze_ok(inputs,
                          "  - {op: shape64, in: [x], out: [sh]}\n"
                          "  - {op: randint, in: [sh], out: [r], attrs: {low: 0, high: 2}}\n"
                          "  - {op: randint, in: [sh], out: [r32], attrs: {low: -5, high: 5, dtype: int32}}\n",
                          "[r, r32]");
  CHECK(a.shape("r") == "int64[s0, 4]");
  CHECK(a.shape("r32") == "int32[s0, 4]");
  Analyzed e = analyze(inputs,
                       "  - {op: shape64, in: [x], out: [sh]}\n"
                       "  - {op: randint, in: [sh], out: [r], attrs: {low: 3, high: 3}}\n",
                       "[r]");
  CHECK_FALSE(e.analysis.has_value());
  CHECK_THAT(e.diagnostics, Catch::Contains("p.yaml:") && Catch::Contains("low (3) must be less than high (3)"));
  Analyzed f = analyze(inputs,
                       "  - {op: shape64, in: [x], out: [sh]}\n"
                       "  - {op: randint, in: [sh], out: [r], attrs: {low: 0, high: 3, dtype: float32}}\n",
                       "[r]");
  CHECK_THAT(f.diagnostics, Catch::Contains("dtype must be int32 or int64, got float32"));
}

TEST_CASE("math shapes: scans, reductions and selection") {
  Analyzed a = analyze_ok(
      "[{name: x, dtype: float32, shape: [-1, 5, 6]}]",
      "  - {op: cumsum, in: [x], out: [c], attrs: {axis: 1}}\n"
      "  - {op: cumsum, in: [x], out: [cf], attrs: {axis: -1, flatten: true}}\n"
      "  - {op: prod, in: [x], out: [p], attrs: {axis: [1], keepdim: true, reduce_all: false}}\n"
      "  - {op: prod, in: [x], out: [pa], attrs: {axis: [1], keepdim: false, reduce_all: true}}\n"
      "  - {op: argmax, in: [x], out: [am], attrs: {axis: -1, keepdims: false, flatten: false, dtype: int32}}\n"
      "  - {op: argmax, in: [x], out: [af], attrs: {axis: 0, keepdims: true, flatten: true}}\n"
      "  - {op: topk, in: [x], out: [tv, ti], attrs: {k: 2, axis: 1}}\n"
      "  - {op: argsort, in: [x], out: [sv, si], attrs: {axis: 0, descending: true}}\n"
      "  - {op: log_softmax, in: [x], out: [ls], attrs: {axis: 0}}\n",
      "[c, cf, p, pa, am, af, tv, ti, sv, si, ls]");
  CHECK(a.shape("c") == "float32[s0, 5, 6]");
  CHECK(a.shape("cf") == "float32[30 * s0]");
  CHECK(a.shape("p") == "float32[s0, 1, 6]");
  CHECK(a.shape("pa") == "float32[]");
  CHECK(a.shape("am") == "int32[s0, 5]");
  CHECK(a.shape("af") == "int64[1, 1, 1]");
  CHECK(a.shape("tv") == "float32[s0, 2, 6]");
  CHECK(a.shape("ti") == "int64[s0, 2, 6]");
  CHECK(a.shape("sv") == "float32[s0, 5, 6]");
  CHECK(a.shape("si") == "int64[s0, 5, 6]");
  CHECK(a.shape("ls") == "float32[s0, 5, 6]");
}

TEST_CASE("math shapes: bad attributes are errors at the op") {
  struct Case {
    std::string op, expected;
  };
  const std::vector<Case> cases = {
      {"{op: topk, in: [x], out: [v, vi], attrs: {k: 7, axis: 1}}", "k 7 must be in [1, 5]"},
      {"{op: cumsum, in: [x], out: [c], attrs: {axis: 3}}", "axis 3 is out of range"},
      {"{op: argsort, in: [x], out: [s, si], attrs: {axis: 3}}", "axis 3 is out of range"},
      {"{op: argmax, in: [x], out: [a], attrs: {axis: 0, dtype: float32}}", "dtype must be int32 or int64"},
      {"{op: log_softmax, in: [x], out: [l], attrs: {axis: -4}}", "axis -4 is out of range"},
      {"{op: equal, in: [x, i], out: [e]}", "dtype conflict"},
      {"{op: one_hot, in: [x], out: [o], attrs: {num_classes: 3}}", "x must be int32 or int64"},
  };
  for (const Case& c : cases) {
    Analyzed a = analyze("[{name: x, dtype: float32, shape: [2, 5, 6]}, {name: i, dtype: int32, shape: [6]}]",
                         "  - " + c.op + "\n", "[x]");
    INFO(c.op << "\n" << a.diagnostics);
    CHECK_FALSE(a.analysis.has_value());
    CHECK_THAT(a.diagnostics, Catch::Contains("p.yaml:4:") && Catch::Contains(c.expected));
  }
}

TEST_CASE("math shapes: fft_r2c's one-sided last axis over a symbolic dim, real and abs of its complex result") {
  const char* ops =
      "  - {op: fft_r2c, in: [x], out: [f], attrs: {axes: [0, 1], normalization: backward, forward: true, "
      "onesided: true}}\n"
      "  - {op: fft_r2c, in: [x], out: [g], attrs: {axes: [2], normalization: ortho, forward: true, "
      "onesided: false}}\n"
      "  - {op: abs, in: [f], out: [fa]}\n"
      "  - {op: real, in: [g], out: [gr]}\n";
  Analyzed a = analyze("[{name: x, dtype: float32, shape: [-1, 5, 6]}]", ops, "[fa, gr]");
  INFO(a.diagnostics);
  REQUIRE(a.analysis);
  CHECK(a.shape("f") == "complex64[s0, 3, 6]");
  CHECK(a.shape("fa") == "float32[s0, 3, 6]");
  CHECK(a.shape("g") == "complex64[s0, 5, 6]");
  CHECK(a.shape("gr") == "float32[s0, 5, 6]");
}

TEST_CASE("math shapes: fft_r2c's errors, and a complex operand read by another op than real and abs") {
  struct Case {
    std::string ops, expected;
  };
  const std::string fft = "  - {op: fft_r2c, in: [x], out: [f], attrs: {normalization: backward, forward: true, ";
  const std::vector<Case> cases = {
      {fft + "onesided: true, axes: [3]}}\n", "axis 3 is out of range"},
      {fft + "onesided: true, axes: [1, -2]}}\n", "axis -2 is repeated in axes"},
      {"  - {op: fft_r2c, in: [x], out: [f], attrs: {axes: [1], normalization: by_n, forward: true, "
       "onesided: true}}\n",
       "normalization must be backward, forward or ortho"},
      {fft + "onesided: true, axes: [1]}}\n  - {op: add, in: [f, f], out: [s]}\n",
       "operand 0 is complex64; kforge reads complex tensors only with real and abs"},
  };
  for (const Case& c : cases) {
    Analyzed a = analyze("[{name: x, dtype: float32, shape: [2, 5, 6]}]", c.ops, "[x]");
    INFO(c.ops << "\n" << a.diagnostics);
    CHECK_FALSE(a.analysis.has_value());
    CHECK_THAT(a.diagnostics, Catch::Contains(c.expected));
  }
}
