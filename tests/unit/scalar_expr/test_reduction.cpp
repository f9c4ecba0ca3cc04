#include <catch2/catch.hpp>

#include "harness.h"
#include "scalar_expr/reduction.h"

using namespace kforge;
using namespace kforge::expr;
using namespace kforge::expr::testing;

namespace {

using ST = ScalarType;

RawReduce raw(std::optional<std::string> init, std::optional<std::string> combine,
              std::optional<std::string> finalize = std::nullopt, std::optional<std::string> axis = "axis") {
  RawReduce r;
  if (init) r.init = RawString{*init, {}};
  if (combine) r.combine = RawString{*combine, {}};
  if (finalize) r.finalize = RawString{*finalize, {}};
  if (axis) r.axis = RawString{*axis, {}};
  return r;
}

ExprContext reduce_op(ST dtype, std::string name = "sum") {
  return ExprContext(std::move(name)).input("x", dtype).opaque_attribute("axis", "IntArray").attribute("keepdim", ST::kBool);
}

struct Checked {
  std::optional<TypedReduction> reduction;
  std::string diagnostics;
};

Checked check(const RawReduce& r, const ExprContext& context, std::optional<ST> acc = std::nullopt) {
  Harness h;
  std::optional<Reduction> parsed = parse_reduction(r, nullptr, h.diags);
  if (!parsed) return {std::nullopt, h.take()};
  std::optional<TypedReduction> typed = check_reduction(*parsed, context, h.diags, acc);
  return {std::move(typed), h.take()};
}

}  // namespace

TEST_CASE("reduction: sum, mean, max over float32") {
  const Checked sum = check(raw("0", "acc + x"), reduce_op(ST::kFloat32));
  REQUIRE(sum.reduction);
  CHECK(sum.reduction->input == "x");
  CHECK(sum.reduction->accumulator == ST::kFloat32);
  CHECK(sum.reduction->result == ST::kFloat32);
  CHECK(sum.reduction->axis == "axis");
  CHECK(emit_cpp(sum.reduction->init) == "0.0f");
  CHECK(emit_cpp(sum.reduction->combine) == "acc + x");
  CHECK(!sum.reduction->finalize);

  const Checked mean = check(raw("0", "acc + x", "acc / n"), reduce_op(ST::kFloat32, "mean"));
  REQUIRE(mean.reduction);
  REQUIRE(mean.reduction->finalize);
  EmitNames names;
  names.accumulator = "total";
  names.count = "row_size";
  CHECK(emit_cpp(*mean.reduction->finalize, names) == "total / static_cast<float>(row_size)");
  CHECK(mean.reduction->result == ST::kFloat32);

  const Checked max = check(raw("-inf", "max(acc, x)"), reduce_op(ST::kFloat32, "max"));
  REQUIRE(max.reduction);
  CHECK(emit_cpp(max.reduction->init) == "-std::numeric_limits<float>::infinity()");
  CHECK(emit_cuda(max.reduction->init) == "-HUGE_VALF");
  CHECK(emit_cuda(max.reduction->combine) == "kforge::cuda::std_max(acc, x)");
}

TEST_CASE("reduction: the accumulator type") {
  // float16 input: accumulates in float32.
  const Checked f16 = check(raw("0", "acc + x"), reduce_op(ST::kFloat16));
  REQUIRE(f16.reduction);
  CHECK(f16.reduction->accumulator == ST::kFloat32);
  // int32 max: -inf becomes the lowest int32.
  const Checked imax = check(raw("-inf", "max(acc, x)"), reduce_op(ST::kInt32, "max"));
  REQUIRE(imax.reduction);
  CHECK(imax.reduction->accumulator == ST::kInt32);
  CHECK(emit_cpp(imax.reduction->init) == "INT32_MIN");
  CHECK(emit_cpp(imax.reduction->combine) == "std::max(acc, x)");
  // int64 min: inf becomes the highest int64.
  const Checked kmin = check(raw("inf", "min(acc, x)"), reduce_op(ST::kInt64, "min"));
  REQUIRE(kmin.reduction);
  CHECK(emit_cuda(kmin.reduction->init) == "INT64_MAX");
  // an explicit cast in init chooses the accumulator: float64 sums of float32.
  const Checked wide = check(raw("float64(0)", "acc + x"), reduce_op(ST::kFloat32));
  REQUIRE(wide.reduction);
  CHECK(wide.reduction->accumulator == ST::kFloat64);
  CHECK(emit_cpp(wide.reduction->combine) == "acc + static_cast<double>(x)");
  // a bool init gives a bool accumulator (any / all).
  const Checked any = check(raw("false", "acc || bool(x)"), reduce_op(ST::kFloat32, "any"));
  REQUIRE(any.reduction);
  CHECK(any.reduction->accumulator == ST::kBool);
  CHECK(emit_cpp(any.reduction->combine) == "acc || static_cast<bool>(x)");
  // the caller's choice wins: int32 sums in int64, and mean then divides in int64.
  const Checked isum = check(raw("0", "acc + x", "acc / n"), reduce_op(ST::kInt32), ST::kInt64);
  REQUIRE(isum.reduction);
  CHECK(isum.reduction->accumulator == ST::kInt64);
  CHECK(emit_cpp(isum.reduction->init) == "int64_t{0}");
  CHECK(emit_cpp(isum.reduction->combine) == "acc + static_cast<int64_t>(x)");
  CHECK(isum.reduction->result == ST::kInt64);
}

TEST_CASE("reduction: merge combines two partial accumulators") {
  // int32 input, int64 accumulator: combine converts x, merge reads the partial as int64.
  const Checked isum = check(raw("0", "acc + x"), reduce_op(ST::kInt32), ST::kInt64);
  REQUIRE(isum.reduction);
  EmitNames names;
  names.input = [](std::string_view) { return std::string("other"); };
  CHECK(emit_cpp(isum.reduction->merge, names) == "acc + other");
  const Checked any = check(raw("false", "acc || bool(x)"), reduce_op(ST::kFloat32, "any"));
  REQUIRE(any.reduction);
  CHECK(emit_cpp(any.reduction->merge, names) == "acc || other");
}

TEST_CASE("reduction: evaluation drives a whole reduction") {
  const Checked mean = check(raw("0", "acc + x", "acc / n"), reduce_op(ST::kFloat32, "mean"));
  REQUIRE(mean.reduction);
  const TypedReduction& r = *mean.reduction;
  std::optional<Value> acc = evaluate(*r.init.root, {});
  REQUIRE(acc);
  for (double x : {1.0, 2.0, 4.5}) {
    EvalBindings b = EvalBindings::from_maps({{"x", Value::of_float(x, ST::kFloat32)}}, {});
    b.accumulator = acc;
    acc = evaluate(*r.combine.root, b);
    REQUIRE(acc);
  }
  EvalBindings fin;
  fin.accumulator = acc;
  fin.count = 3;
  const std::optional<Value> result = evaluate(*r.finalize->root, fin);
  REQUIRE(result);
  CHECK(to_string(*result) == "float32 2.5");
}

TEST_CASE("reduction: diagnostics") {
  CHECK(check(raw(std::nullopt, "acc + x", std::nullopt, std::nullopt), reduce_op(ST::kFloat32)).diagnostics ==
        "kforge: error: 'reduce' is missing 'init'\n"
        "kforge: error: 'reduce' is missing 'axis'\n");
  CHECK(check(raw("0", std::nullopt), reduce_op(ST::kFloat32)).diagnostics == "kforge: error: 'reduce' is missing 'combine'\n");
  CHECK(check(raw("0", "acc + x", std::nullopt, "axis[0]"), reduce_op(ST::kFloat32)).diagnostics ==
        "kforge: error: 'axis' must name an attribute, got 'axis[0]'\n");
  CHECK(check(raw("0", "acc + x", std::nullopt, "axes"), reduce_op(ST::kFloat32)).diagnostics ==
        "kforge: error: 'axis' names 'axes', which is not an attribute of op 'sum'\n"
        "kforge: note: did you mean 'axis'?\n");
  CHECK(check(raw("0", "acc + x", std::nullopt, "x"), reduce_op(ST::kFloat32)).diagnostics ==
        "kforge: error: 'axis' names input 'x'; it must name an attribute\n");
  CHECK(check(raw("x", "acc + x"), reduce_op(ST::kFloat32)).diagnostics ==
        "kforge: error: input 'x' cannot be used in 'init'\n"
        "kforge: note: 'init' sees only the attributes\n");
  CHECK(check(raw("0", "acc + x", "acc / n + x"), reduce_op(ST::kFloat32)).diagnostics ==
        "kforge: error: input 'x' cannot be used in 'finalize'\n"
        "kforge: note: 'finalize' sees 'acc', 'n' and the attributes\n");
  CHECK(check(raw("0", "ac + x"), reduce_op(ST::kFloat32)).diagnostics ==
        "kforge: error: unknown identifier 'ac'\n"
        "kforge: note: did you mean 'acc'?\n"
        "kforge: note: op 'sum' has input 'x' and attributes 'axis', 'keepdim'\n"
        "kforge: note: in 'combine', 'acc' is the accumulator\n");
  CHECK(check(raw("0", "acc + x", "acc / m"), reduce_op(ST::kFloat32)).diagnostics ==
        "kforge: error: unknown identifier 'm'\n"
        "kforge: note: did you mean 'n'?\n"
        "kforge: note: op 'sum' has input 'x' and attributes 'axis', 'keepdim'\n"
        "kforge: note: in 'finalize', 'acc' is the accumulated value and 'n' the number of reduced elements\n");
  CHECK(check(raw("0", "acc > x"), reduce_op(ST::kFloat32)).diagnostics ==
        "kforge: error: 'combine' gives bool but the accumulator is float32\n");
  CHECK(check(raw("0.5", "acc + x"), reduce_op(ST::kInt32)).diagnostics ==
        "kforge: error: literal 0.5 is not an integer and cannot become int32\n");
  const ExprContext two = ExprContext("dot").input("x", ST::kFloat32).input("y", ST::kFloat32).opaque_attribute("axis", "int[]");
  CHECK(check(raw("0", "acc + x * y"), two).diagnostics ==
        "kforge: error: 'combine' may read only one input, but it reads 'x' and 'y'\n");
  CHECK(check(raw("0", "acc +"), reduce_op(ST::kFloat32)).diagnostics ==
        "kforge: error: expected an expression, got end of input\n");
}

TEST_CASE("reduction: located diagnostics in a flow mapping") {
  Harness h;
  const std::string yaml = "- op: sum\n  reduce: {init: \"0\", combine: \"acc + y\", axis: axes}\n";
  RawReduce r;
  r.loc = h.place(yaml, "reduce");
  const uint32_t file = r.loc.file;
  const std::string_view text = h.sources.contents(file);
  r.init = RawString{"0", {file, static_cast<uint32_t>(text.find("\"0\""))}};
  r.combine = RawString{"acc + y", {file, static_cast<uint32_t>(text.find("\"acc"))}};
  r.axis = RawString{"axes", {file, static_cast<uint32_t>(text.find("axes"))}};
  std::optional<Reduction> parsed = parse_reduction(r, &h.sources, h.diags);
  REQUIRE(parsed);
  CHECK(!check_reduction(*parsed, reduce_op(ST::kFloat32), h.diags));
  CHECK(h.take() ==
        "ops.yaml:2:49: error: 'axis' names 'axes', which is not an attribute of op 'sum'\n"
        "   reduce: {init: \"0\", combine: \"acc + y\", axis: axes}\n"
        "                                                 ^\n"
        "kforge: note: did you mean 'axis'?\n"
        "ops.yaml:2:39: error: unknown identifier 'y'\n"
        "   reduce: {init: \"0\", combine: \"acc + y\", axis: axes}\n"
        "                                       ^\n"
        "kforge: note: did you mean 'x'?\n"
        "kforge: note: op 'sum' has input 'x' and attributes 'axis', 'keepdim'\n"
        "kforge: note: in 'combine', 'acc' is the accumulator\n");
}
