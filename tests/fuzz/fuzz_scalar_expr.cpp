// Fuzz target: the scalar expression language of `compute:` and `reduce:`. The whole input is parsed as one
// compute expression, type-checked against an op with inputs and attributes of several types, emitted as C++ and
// CUDA, and evaluated; its first three lines are also read as a reduction's init, combine and finalize.
#include <string>

#include "fuzz_input.h"
#include "scalar_expr/expr_check.h"
#include "scalar_expr/expr_emit.h"
#include "scalar_expr/expr_eval.h"
#include "scalar_expr/reduction.h"

using namespace kforge;
using expr::ScalarType;

namespace {

expr::ExprContext op_context() {
  expr::ExprContext context("fuzzed_op");
  context.input("x", ScalarType::kFloat32)
      .input("h", ScalarType::kFloat16)
      .input("i", ScalarType::kInt32)
      .input("flag", ScalarType::kBool)
      .attribute("alpha", ScalarType::kFloat32)
      .attribute("k", ScalarType::kInt64)
      .attribute("d", ScalarType::kFloat64)
      .opaque_attribute("axis", "IntArray");
  return context;
}

// Values chosen to reach the edges of every type: a negative float, the lowest int32, true.
expr::EvalBindings bindings() {
  return expr::EvalBindings::from_maps(
      {{"x", expr::Value::of_float(-2.5, ScalarType::kFloat32)},
       {"h", expr::Value::of_float(65504.0, ScalarType::kFloat16)},
       {"i", expr::Value::of_int(-2147483647 - 1, ScalarType::kInt32)},
       {"flag", expr::Value::of_bool(true)}},
      {{"alpha", expr::Value::of_float(0.5, ScalarType::kFloat32)},
       {"k", expr::Value::of_int(INT64_MAX)},
       {"d", expr::Value::of_float(1e308)}});
}

void compute(fuzz::FuzzInput& input, const expr::ExprContext& context) {
  const std::string_view text = input.text();
  std::optional<expr::Expression> parsed =
      expr::parse_expression(text, input.sources().loc_of_offset(input.file(), 0), &input.sources(), input.diags());
  if (!parsed) return;
  std::optional<expr::Expression> typed = expr::check_expression(*parsed, context, input.diags());
  if (!typed) return;
  static_cast<void>(expr::emit_cpp(*typed));
  static_cast<void>(expr::emit_cuda(*typed));
  std::string error;
  static_cast<void>(expr::evaluate(*typed->root, bindings(), &error));
}

void reduction(fuzz::FuzzInput& input, const expr::ExprContext& context) {
  const std::string_view text = input.text();
  expr::RawReduce raw;
  raw.loc = input.sources().loc_of_offset(input.file(), 0);
  std::optional<expr::RawString>* parts[] = {&raw.init, &raw.combine, &raw.finalize};
  size_t begin = 0;
  for (std::optional<expr::RawString>* part : parts) {
    if (begin > text.size()) break;
    const size_t end = std::min(text.find('\n', begin), text.size());
    *part = expr::RawString{std::string(text.substr(begin, end - begin)), input.sources().loc_of_offset(input.file(), begin)};
    begin = end + 1;
  }
  raw.axis = expr::RawString{"axis", raw.loc};
  std::optional<expr::Reduction> parsed = expr::parse_reduction(raw, &input.sources(), input.diags());
  if (!parsed) return;
  std::optional<expr::TypedReduction> typed = expr::check_reduction(*parsed, context, input.diags());
  if (!typed) return;
  static_cast<void>(expr::emit_cpp(typed->combine));
  static_cast<void>(expr::emit_cuda(typed->merge));
  if (typed->finalize) static_cast<void>(expr::emit_cpp(*typed->finalize));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const expr::ExprContext context = op_context();
  {
    fuzz::FuzzInput input(data, size, "compute");
    compute(input, context);
    input.require_located_errors();
  }
  {
    fuzz::FuzzInput input(data, size, "reduce");
    reduction(input, context);
    input.require_located_errors();
  }
  return 0;
}
