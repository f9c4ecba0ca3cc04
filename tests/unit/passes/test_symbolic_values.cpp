// Shape values from tensors (issue 33): integer tensors computed from a dynamic input's dims (shape64 -> slice ->
// scale / floor_divide / stack / concat / cast) carry their values as expressions of the dims, so the ops that take
// a shape, a start or an end from them get symbolic output dims; where a value comes from data, the error says why.
#include "pass_test_util.h"

#include "passes/analysis.h"
#include "passes/axis.h"
#include "passes/verify.h"

using namespace kforge;
using namespace kforge::passes;

namespace {

using test::Analyzed;  // pass_test_util.h
using test::analyze;
using test::analyze_ok;

// x: [s0, s1, 3]; b = x.shape[0] and n = x.shape[1] as 0-D int64 tensors (Paddle's `paddle.shape(x)[i]`).
const char* const kDynamicX = "[{name: x, dtype: float32, shape: [-1, -1, 3]}]";
const char* const kDims =
    "  - {op: shape64, in: [x], out: [sh]}\n"
    "  - {op: slice, in: [sh], out: [b], attrs: {axes: [0], starts: [0], ends: [1], infer_flags: [1], "
    "decrease_axis: [0]}}\n"
    "  - {op: slice, in: [sh], out: [n], attrs: {axes: [0], starts: [1], ends: [2], infer_flags: [1], "
    "decrease_axis: [0]}}\n";

const SymExpr s0 = SymExpr::symbol(0), s1 = SymExpr::symbol(1), s2 = SymExpr::symbol(2);

}  // namespace

TEST_CASE("symbolic values: int arithmetic of dims stays symbolic") {
  Analyzed a = analyze_ok(
      kDynamicX,
      std::string(kDims) +
          "  - {op: full, out: [two], attrs: {shape: [], value: 2, dtype: int64}}\n"
          "  - {op: floor_divide, in: [n, two], out: [half]}\n"
          "  - {op: remainder, in: [n, two], out: [odd]}\n"
          "  - {op: multiply, in: [b, n], out: [bn]}\n"
          "  - {op: scale, in: [n], out: [m], attrs: {scale: 1, bias: -1}}\n"
          "  - {op: cast, in: [bn], out: [bn32], attrs: {dtype: int32}}\n"
          "  - {op: cast, in: [half], out: [half32], attrs: {dtype: int32}}\n"
          "  - {op: builtin.combine, in: [bn32, half32], out: [l]}\n"
          "  - {op: stack, in: [l], out: [st], attrs: {axis: 0}}\n"
          "  - {op: unsqueeze, in: [m], out: [m1], attrs: {axis: [0]}}\n"
          "  - {op: full_int_array, out: [c], attrs: {value: [7], dtype: int64}}\n"
          "  - {op: builtin.combine, in: [m1, c], out: [l2]}\n"
          "  - {op: concat, in: [l2], out: [cat], attrs: {axis: 0}}\n",
      "[st, cat, odd]");
  CHECK(a.ints("half") == "[floor_div(s1, 2)]");
  CHECK(a.ints("odd") == "[s1 - 2 * floor_div(s1, 2)]");
  CHECK(a.ints("st") == "[s0 * s1, floor_div(s1, 2)]");
  CHECK(a.shape("st") == "int32[2]");
  CHECK(a.ints("cat") == "[s1 - 1, 7]");
}

TEST_CASE("symbolic values: floor_divide and remainder of constants round toward negative infinity") {
  Analyzed a = analyze_ok(
      "[{name: x, dtype: float32, shape: [2]}]",
      "  - {op: full_int_array, out: [p], attrs: {value: [-7, 7, 6], dtype: int64}}\n"
      "  - {op: full, out: [d], attrs: {shape: [3], value: -2, dtype: int64}}\n"
      "  - {op: floor_divide, in: [p, d], out: [q]}\n"
      "  - {op: remainder, in: [p, d], out: [r]}\n",
      "[q, r]");
  CHECK(a.ints("q") == "[3, -4, -3]");
  CHECK(a.ints("r") == "[-1, -1, 0]");
}

TEST_CASE("symbolic values: slice starts and ends from dims") {
  Analyzed a = analyze_ok(
      kDynamicX,
      std::string(kDims) +
          "  - {op: scale, in: [n], out: [m], attrs: {scale: 1, bias: -1}}\n"
          "  - {op: full_int_array, out: [zero], attrs: {value: [0], dtype: int64}}\n"
          "  - {op: builtin.combine, in: [m], out: [ends]}\n"
          "  - {op: slice, in: [x, zero, ends], out: [head], attrs: {axes: [1], infer_flags: [-1], "
          "decrease_axis: []}}\n"
          "  - {op: full, out: [two], attrs: {shape: [], value: 2, dtype: int64}}\n"
          "  - {op: floor_divide, in: [n, two], out: [half]}\n"
          "  - {op: builtin.combine, in: [half], out: [starts]}\n"
          "  - {op: full_int_array, out: [big], attrs: {value: [2147483647], dtype: int64}}\n"
          "  - {op: slice, in: [x, starts, big], out: [tail], attrs: {axes: [1], infer_flags: [-1], "
          "decrease_axis: []}}\n"
          "  - {op: scale, in: [half], out: [neg], attrs: {scale: -1, bias: 0}}\n"
          "  - {op: builtin.combine, in: [neg], out: [negl]}\n"
          "  - {op: slice, in: [x, negl, big], out: [last], attrs: {axes: [1], infer_flags: [-1], "
          "decrease_axis: []}}\n",
      "[head, tail, last]");
  // x[:, : n - 1]: min(s1 - 1, s1) is s1 - 1.
  CHECK(a.shape("head") == "float32[s0, s1 - 1, 3]");
  // x[:, n // 2 :]
  CHECK(a.shape("tail") == "float32[s0, s1 - floor_div(s1, 2), 3]");
  // x[:, -(n // 2) :]: a provably non-positive start counts from the end.
  CHECK(a.shape("last") == "float32[s0, floor_div(s1, 2), 3]");
}

TEST_CASE("symbolic values: reshape, full_with_tensor, expand and tile take shapes from dims") {
  Analyzed a = analyze_ok(
      "[{name: x, dtype: float32, shape: [-1, -1, 16]}, {name: y, dtype: float32, shape: [1, 4]}]",
      "  - {op: shape64, in: [x], out: [sh]}\n"
      "  - {op: slice, in: [sh], out: [b], attrs: {axes: [0], starts: [0], ends: [1], infer_flags: [1], "
      "decrease_axis: [0]}}\n"
      "  - {op: slice, in: [sh], out: [n], attrs: {axes: [0], starts: [1], ends: [2], infer_flags: [1], "
      "decrease_axis: [0]}}\n"
      "  - {op: full, out: [four], attrs: {shape: [], value: 4, dtype: int64}}\n"
      "  - {op: full, out: [m1], attrs: {shape: [], value: -1, dtype: int64}}\n"
      "  - {op: builtin.combine, in: [b, n, four, m1], out: [heads]}\n"
      "  - {op: reshape, in: [x, heads], out: [r]}\n"
      "  - {op: builtin.combine, in: [b, n], out: [bn]}\n"
      "  - {op: stack, in: [bn], out: [bns], attrs: {axis: 0}}\n"
      "  - {op: full, out: [v], attrs: {shape: [1], value: 1.5, dtype: float32}}\n"
      "  - {op: full_with_tensor, in: [v, bns], out: [f], attrs: {dtype: float32}}\n"
      "  - {op: builtin.combine, in: [b, m1], out: [el]}\n"
      "  - {op: expand, in: [y, el], out: [e]}\n"
      "  - {op: full, out: [one], attrs: {shape: [], value: 1, dtype: int64}}\n"
      "  - {op: builtin.combine, in: [n, one], out: [rep]}\n"
      "  - {op: tile, in: [y, rep], out: [t]}\n",
      "[r, f, e, t]");
  CHECK(a.shape("r") == "float32[s0, s1, 4, 4]");
  CHECK(a.shape("f") == "float32[s0, s1]");
  CHECK(a.shape("e") == "float32[s0, 4]");
  CHECK(a.shape("t") == "float32[s1, 4]");
}

TEST_CASE("symbolic values: full_with_tensor of static dims is a known splat") {
  Analyzed a = analyze_ok(
      "[{name: x, dtype: float32, shape: [2]}]",
      "  - {op: full_int_array, out: [s], attrs: {value: [2, 3], dtype: int64}}\n"
      "  - {op: full, out: [v], attrs: {shape: [1], value: 5, dtype: int64}}\n"
      "  - {op: full_with_tensor, in: [v, s], out: [f], attrs: {dtype: int64}}\n",
      "[f]");
  const ValueInfo* f = a.find("f");
  REQUIRE(f->data);
  CHECK(f->data->splat);
  CHECK(f->data->dims == std::vector<int64_t>{2, 3});
  CHECK(f->data->int_at(0) == SymExpr(5));
}

TEST_CASE("symbolic values: arange over expressions of the dims") {
  Analyzed a = analyze_ok(
      kDynamicX,
      std::string(kDims) +
          "  - {op: full, out: [zero], attrs: {shape: [1], value: 0, dtype: int64}}\n"
          "  - {op: full, out: [one], attrs: {shape: [1], value: 1, dtype: int64}}\n"
          "  - {op: arange, in: [zero, n, one], out: [pos], attrs: {dtype: int64}}\n"
          "  - {op: scale, in: [b], out: [start], attrs: {scale: 1, bias: -1}}\n"
          "  - {op: scale, in: [n], out: [n2], attrs: {scale: 2, bias: 0}}\n"
          "  - {op: add, in: [start, n2], out: [end]}\n"
          "  - {op: full, out: [two], attrs: {shape: [1], value: 2, dtype: int64}}\n"
          "  - {op: arange, in: [start, end, two], out: [evens], attrs: {dtype: int64}}\n"
          "  - {op: full, out: [mthree], attrs: {shape: [1], value: -3, dtype: int64}}\n"
          "  - {op: arange, in: [n, zero, mthree], out: [down], attrs: {dtype: int64}}\n",
      "[pos, evens, down]");
  CHECK(a.shape("pos") == "int64[s1]");
  CHECK(a.shape("evens") == "int64[s1]");  // ceil_div(2 * s1, 2)
  CHECK(a.shape("down") == "int64[ceil_div(s1, 3)]");
}

TEST_CASE("symbolic values: a shape read from input data is a located error that says why") {
  Analyzed a = analyze(
      "[{name: x, dtype: float32, shape: [-1, 6]}, {name: y, dtype: float32, shape: [2, 3]}]",
      "  - {op: argmax, in: [y], out: [am], attrs: {axis: 1, keepdims: false, flatten: false, dtype: int64}}\n"
      "  - {op: reshape, in: [x, am], out: [r]}\n",
      "[r]");
  CHECK_FALSE(a.analysis.has_value());
  CHECK_THAT(a.diagnostics, Catch::Contains("p.yaml:5:5: error: 'reshape': the output shape depends on the run-time "
                                            "value of 'shape', which kforge cannot know when it generates code: it is "
                                            "computed from the data of the program input 'y', not only from its dims"));
  CHECK_THAT(a.diagnostics, Catch::Contains("note: 'y' is read here"));
}

TEST_CASE("symbolic values: a value kforge does not evaluate names the op") {
  Analyzed a = analyze(
      kDynamicX,
      "  - {op: shape64, in: [x], out: [sh]}\n"
      "  - {op: cumsum, in: [sh], out: [cs], attrs: {axis: 0, flatten: false, exclusive: false, reverse: false}}\n"
      "  - {op: reshape, in: [x, cs], out: [r]}\n",
      "[r]");
  CHECK_FALSE(a.analysis.has_value());
  CHECK_THAT(a.diagnostics, Catch::Contains("'cumsum' computes it from values kforge knows, but kforge does not "
                                            "evaluate 'cumsum' at generation time"));
}

TEST_CASE("symbolic values: slice bounds from dims lower to symbolic kernel arguments") {
  test::Env env;
  ir::Program p = env.read("p.yaml", std::string("program: t\ninputs: ") + kDynamicX + "\nops:\n" + kDims +
                                         "  - {op: scale, in: [n], out: [m], attrs: {scale: 1, bias: -1}}\n"
                                         "  - {op: full_int_array, out: [zero], attrs: {value: [0], dtype: int64}}\n"
                                         "  - {op: builtin.combine, in: [m], out: [ends]}\n"
                                         "  - {op: slice, in: [x, zero, ends], out: [r], attrs: {axes: [1], "
                                         "infer_flags: [-1], decrease_axis: []}}\n"
                                         "outputs: [r]\n");
  std::optional<LoweredProgram> lp = env.compile(p);
  INFO(env.diagnostics());
  REQUIRE(lp);
  const KernelCall* slice = nullptr;
  for (const KernelCall& c : lp->calls) {
    if (c.op == "slice" && lp->value(c.outputs[0].values[0]).dims.size() == 3) slice = &c;
  }
  REQUIRE(slice != nullptr);
  const KernelArg* ends = slice->arg("ends");
  REQUIRE(ends != nullptr);
  CHECK(ends->kind == ArgKind::kSymbolic);
  CHECK(ends->symbolic == std::vector<SymExpr>{s1 - 1});
  CHECK(lp->value(lp->outputs[0].value).dims == SymShape{s0, s1 - 1, 3});
}

TEST_CASE("symbolic values: split and reductions of a shape tensor") {
  Analyzed a = analyze_ok(
      "[{name: x, dtype: float32, shape: [-1, 2, -1, -1]}]",
      "  - {op: shape64, in: [x], out: [sh]}\n"
      "  - {op: slice, in: [sh], out: [hw], attrs: {axes: [0], starts: [2], ends: [4], infer_flags: [1], "
      "decrease_axis: []}}\n"
      "  - {op: split_with_num, in: [hw], out: [parts], attrs: {num: 2, axis: 0}}\n"
      "  - {op: builtin.split, in: [parts], out: [h, w]}\n"
      "  - {op: prod, in: [hw], out: [area], attrs: {axis: [0], keepdim: false, reduce_all: false}}\n"
      "  - {op: sum, in: [hw], out: [perimeter], attrs: {axis: [], dtype: int64, keepdim: false}}\n"
      "  - {op: max, in: [sh], out: [largest], attrs: {axis: [], keepdim: false}}\n",
      "[h, w, area, perimeter, largest]");
  CHECK(a.ints("h") == "[s1]");
  CHECK(a.ints("w") == "[s2]");
  CHECK(a.ints("area") == "[s1 * s2]");
  CHECK(a.ints("perimeter") == "[s1 + s2]");
  CHECK(a.ints("largest") == "[max(s2, max(s1, max(2, s0)))]");
}

TEST_CASE("symbolic values: slice_bound, the one rule for a slice's start or end") {
  const SymExpr n = s1;
  // Constants over a static axis: Paddle's clamping.
  CHECK(slice_bound(5, -2, false) == SymExpr(3));
  CHECK(slice_bound(5, -9, false) == SymExpr(0));
  CHECK(slice_bound(5, 7, true) == SymExpr(5));
  // Constants over a dynamic axis: taken as within it; a huge end is the axis' end.
  CHECK(slice_bound(n, 1, false) == SymExpr(1));
  CHECK(slice_bound(n, -1, true) == n - 1);
  CHECK(slice_bound(n, int64_t{1} << 40, true) == n);
  // Expressions: >= 0 and clamped to n, or counted from the end when provably <= 0.
  CHECK(slice_bound(n, n - 1, true) == n - 1);
  CHECK(slice_bound(n, SymExpr::floor_div(n, 2), false) == SymExpr::floor_div(n, 2));
  CHECK(slice_bound(n, -SymExpr::floor_div(n, 2), false) == n - SymExpr::floor_div(n, 2));
  CHECK(slice_bound(n, s0, true) == SymExpr::min(s0, n));  // another dim: clamped at run time
  CHECK(slice_bound(4, s0, true).to_string() == "min(4, s0)");
}

TEST_CASE("symbolic values: strided_slice of a dynamic axis, bounds from dims") {
  Analyzed a = analyze_ok(
      kDynamicX,
      std::string(kDims) +
          "  - {op: strided_slice, in: [x], out: [odd], attrs: {axes: [1], starts: [1], ends: [2147483647], "
          "strides: [2]}}\n"
          "  - {op: scale, in: [n], out: [m], attrs: {scale: 1, bias: -1}}\n"
          "  - {op: full_int_array, out: [one], attrs: {value: [1], dtype: int64}}\n"
          "  - {op: builtin.combine, in: [m], out: [ends]}\n"
          "  - {op: full_int_array, out: [three], attrs: {value: [3], dtype: int64}}\n"
          "  - {op: strided_slice, in: [x, one, ends, three], out: [inner], attrs: {axes: [1]}}\n",
      "[odd, inner]");
  CHECK(a.shape("odd") == "float32[s0, ceil_div(s1 - 1, 2), 3]");
  CHECK(a.shape("inner") == "float32[s0, ceil_div(s1 - 2, 3), 3]");
}

TEST_CASE("symbolic values: a backward strided_slice of a dynamic axis is refused with the reason") {
  Analyzed a = analyze(
      kDynamicX,
      "  - {op: strided_slice, in: [x], out: [back], attrs: {axes: [1], starts: [-1], ends: [-2147483647], "
      "strides: [-1]}}\n",
      "[back]");
  CHECK_FALSE(a.analysis.has_value());
  CHECK_THAT(a.diagnostics, Catch::Contains("strided_slice with stride -1 of the axis 1, whose size or bounds are "
                                            "known only at run time, is not supported"));
}

TEST_CASE("symbolic values: size tensors known from dims are left out for kernels that read the output's dims") {
  // F.interpolate(x, size=[h * 2, w * 2]) with h, w from paddle.shape(x): a Paddle export (tests/paddle).
  for (const bool from_dims : {false, true}) {
    test::Env env;
    ir::Program p = env.read_file(test::source_path("tests/paddle/interpolate_size_dynamic/inference.json"));
    PipelineOptions options;
    options.lower.sizes_from_output_dims = from_dims;
    std::optional<LoweredProgram> lp = env.compile(p, options);
    INFO(env.diagnostics());
    REQUIRE(lp);
    const KernelCall* interp = nullptr;
    for (const KernelCall& c : lp->calls) {
      if (c.op == "nearest_interp") interp = &c;
    }
    REQUIRE(interp != nullptr);
    const KernelArg* size = interp->arg("size_tensor");
    REQUIRE(size != nullptr);
    // The output's dims hold the sizes either way; only with the option are shape64 and slice not called.
    CHECK(lp->value(lp->outputs[0].value).dims == SymShape{s0, 2, s1 * 2, s2 * 2});
    CHECK((size->kind == ArgKind::kAbsentTensor) == from_dims);
    CHECK((lp->calls.size() == 1) == from_dims);
  }
}
