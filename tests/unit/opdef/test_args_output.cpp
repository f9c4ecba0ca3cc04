// The args and output mini-languages (schemas/op.schema.json, args and output).
#include <catch2/catch.hpp>

#include "opdef/op_syntax.h"
#include "opdef_test_util.h"

using namespace kforge;
using namespace kforge::opdef;
using kforge::opdef::testing::Fixture;

namespace {

std::string args_error(const std::string& text) {
  Fixture f;
  CHECK_FALSE(parse_args(f.value(text), f.diags).has_value());
  CHECK(f.diags.error_count() == 1);
  return f.messages();
}

std::string outputs_error(const std::string& text) {
  Fixture f;
  CHECK_FALSE(parse_outputs(f.value(text), f.diags).has_value());
  CHECK(f.diags.error_count() == 1);
  return f.messages();
}

}  // namespace

TEST_CASE("args: inputs, attributes, types and defaults") {
  Fixture f;
  const LocatedText v = f.value(
      "(Tensor x, Tensor[] xs,  Scalar(int64_t) s, int[] a={1, 2}, int64_t n = INT64_MAX, float beta=1.0,"
      " str mode = \"a, b\", DataType dtype = DataType::FLOAT32, IntArray shape = {}, Place place = CPUPlace())");
  std::optional<ArgList> args = parse_args(v, f.diags);
  INFO(f.messages());
  REQUIRE(args);
  REQUIRE(args->inputs.size() == 2);
  CHECK(args->inputs[0].name == "x");
  CHECK(args->inputs[0].type == ArgType::kTensor);
  CHECK(args->inputs[0].loc.offset == 1);
  CHECK(args->inputs[0].name_loc.offset == 8);
  CHECK(args->inputs[1].is_list());
  REQUIRE(args->attributes.size() == 8);
  CHECK(args->attributes[0].type == ArgType::kScalarInt64);
  CHECK_FALSE(args->attributes[0].default_value);
  CHECK(args->attributes[1].type == ArgType::kIntList);
  CHECK(args->attributes[1].default_value->text == "{1, 2}");
  CHECK(args->attributes[1].default_value->kind == DefaultKind::kList);
  CHECK(args->attributes[2].default_value->text == "INT64_MAX");
  CHECK(args->attributes[3].default_value->kind == DefaultKind::kFloat);
  CHECK(args->attributes[4].default_value->text == "\"a, b\"");
  CHECK(args->attributes[5].default_value->kind == DefaultKind::kEnumConstant);
  CHECK(args->attributes[6].type == ArgType::kIntArray);
  CHECK(args->attributes[7].default_value->text == "CPUPlace()");
  CHECK(args->attributes[7].default_value->kind == DefaultKind::kExpression);
}

TEST_CASE("args: an empty list and every type spelling") {
  Fixture f;
  CHECK(parse_args(f.value("()"), f.diags)->inputs.empty());
  for (const std::string& type : arg_type_spellings()) {
    CHECK(parse_arg_type(type).has_value());
  }
  CHECK(arg_type_info(ArgType::kScalarInt).pir_attribute == "paddle::dialect::ScalarAttribute");
  CHECK(arg_type_info(ArgType::kIntArray).opmaker_type == "std::vector<int64_t>");
  CHECK(f.diags.error_count() == 0);
}

TEST_CASE("args: syntax errors are located") {
  CHECK(args_error("(Tensor x, int axis=)") ==
        "v:1:21: error: expected a default value for 'axis' after '='\n"
        " (Tensor x, int axis=)\n"
        "                     ^\n");
  CHECK(args_error("Tensor x") ==
        "v:1:1: error: expected '(' to start the argument list, found 'T'\n"
        " Tensor x\n"
        " ^\n");
  CHECK(args_error("(Tensor x, int)") ==
        "v:1:15: error: expected an argument name after type 'int', found ')'\n"
        " (Tensor x, int)\n"
        "               ^\n");
  CHECK(args_error("(Tensor x, , int a)") ==
        "v:1:12: error: expected an argument type, found ','\n"
        " (Tensor x, , int a)\n"
        "            ^\n");
  CHECK(args_error("(Tensor x, int a") ==
        "v:1:17: error: expected ')' to close the argument list\n"
        " (Tensor x, int a\n"
        "                 ^\n"
        "v:1:1: note: to match this '('\n"
        " (Tensor x, int a\n"
        " ^\n");
  CHECK(args_error("(Tensor x int a)") ==
        "v:1:11: error: expected ',' or ')' after argument 'x', found 'i'\n"
        " (Tensor x int a)\n"
        "           ^\n");
  CHECK(args_error("(Tensor x) y") ==
        "v:1:12: error: unexpected 'y' after the argument list\n"
        " (Tensor x) y\n"
        "            ^\n");
  CHECK(args_error("(Scalar(int x)") ==
        "v:1:13: error: expected ')' to close the type 'Scalar('\n"
        " (Scalar(int x)\n"
        "             ^\n"
        "v:1:8: note: to match this '('\n"
        " (Scalar(int x)\n"
        "        ^\n");
  CHECK(args_error("(int a = 1 +)") ==
        "v:1:13: error: bad default value for 'a': expected an expression after '+', found ')'\n"
        " (int a = 1 +)\n"
        "             ^\n");
}

TEST_CASE("args: Paddle's rules on types, order and defaults") {
  CHECK(args_error("(Tensr x)") ==
        "v:1:2: error: unknown argument type 'Tensr'; did you mean 'Tensor'?\n"
        " (Tensr x)\n"
        "  ^\n");
  CHECK(args_error("(int a, Tensor x)") ==
        "v:1:9: error: tensor argument 'x' must come before the attributes\n"
        " (int a, Tensor x)\n"
        "         ^\n"
        "v:1:2: note: first attribute 'a' is here\n"
        " (int a, Tensor x)\n"
        "  ^\n");
  CHECK(args_error("(int a = 1, int b)") ==
        "v:1:17: error: attribute 'b' needs a default value because an earlier attribute has one\n"
        " (int a = 1, int b)\n"
        "                 ^\n"
        "v:1:10: note: 'a' has a default value here\n"
        " (int a = 1, int b)\n"
        "          ^\n");
  CHECK(args_error("(Tensor x, int x)") ==
        "v:1:16: error: duplicate argument 'x'\n"
        " (Tensor x, int x)\n"
        "                ^\n"
        "v:1:9: note: 'x' was first declared here\n"
        " (Tensor x, int x)\n"
        "         ^\n");
  CHECK(args_error("(DataType t = FLOAT32)") ==
        "v:1:15: error: default of DataType attribute 't' must be a DataType constant such as DataType::FLOAT32\n"
        " (DataType t = FLOAT32)\n"
        "               ^\n");
}

TEST_CASE("outputs: every form of §2.4") {
  Fixture f;
  const LocatedText v = f.value(
      "Tensor(out), Tensor (mean), Tensor, Tensor[](xs){x.size()}, Tensor[](ys),"
      " Tensor[] (zs) {axis<0 ? input.dims()[input.dims().size()+axis]:input.dims()[axis]},"
      " Tensor(s@StringTensor), SelectedRows(sr)");
  // Bare `Tensor` is named `out`, which clashes with the first output: rename the first.
  std::optional<std::vector<Output>> outs = parse_outputs(v, f.diags);
  INFO(f.messages());
  REQUIRE_FALSE(outs);
  Fixture g;
  const LocatedText w = g.value(
      "Tensor(a), Tensor (mean), Tensor, Tensor[](xs){x.size()}, Tensor[](ys),"
      " Tensor[] (zs) {axis<0 ? input.dims()[input.dims().size()+axis]:input.dims()[axis]},"
      " Tensor(s@StringTensor), SelectedRows(sr)");
  outs = parse_outputs(w, g.diags);
  INFO(g.messages());
  REQUIRE(outs);
  REQUIRE(outs->size() == 8);
  CHECK((*outs)[1].name == "mean");
  CHECK((*outs)[2].name == "out");
  CHECK_FALSE((*outs)[2].name_given);
  CHECK((*outs)[3].type == OutputType::kTensorList);
  CHECK((*outs)[3].size_expr == "x.size()");
  CHECK_FALSE((*outs)[4].size_expr);
  CHECK((*outs)[5].size_expr == "axis<0 ? input.dims()[input.dims().size()+axis]:input.dims()[axis]");
  CHECK((*outs)[6].name == "s@StringTensor");
  CHECK((*outs)[7].type == OutputType::kSelectedRows);
  Fixture h;
  outs = parse_outputs(h.value("Tensor[]{input.size()}"), h.diags);
  REQUIRE(outs);
  CHECK((*outs)[0].name == "out");
  CHECK((*outs)[0].size_expr == "input.size()");
}

TEST_CASE("outputs: errors are located") {
  CHECK(outputs_error("Tensor[]{x.size(}") ==
        "v:1:17: error: bad size expression for output 'out': expected ')' to close '(', found '}'\n"
        " Tensor[]{x.size(}\n"
        "                 ^\n"
        "v:1:16: note: to match this '('\n"
        " Tensor[]{x.size(}\n"
        "                ^\n");
  CHECK(outputs_error("Tensor[](x){}") ==
        "v:1:13: error: empty size expression for output 'x'\n"
        " Tensor[](x){}\n"
        "             ^\n");
  CHECK(outputs_error("Tensor(x){n}") ==
        "v:1:10: error: output 'x' has a size expression but is not a vector (Tensor[])\n"
        " Tensor(x){n}\n"
        "          ^\n");
  CHECK(outputs_error("Tensr(x)") ==
        "v:1:1: error: unknown output type 'Tensr'; did you mean 'Tensor'?\n"
        " Tensr(x)\n"
        " ^\n");
  CHECK(outputs_error("Tensor(x") ==
        "v:1:9: error: expected ')' after output name 'x', found end of value\n"
        " Tensor(x\n"
        "         ^\n"
        "v:1:7: note: to match this '('\n"
        " Tensor(x\n"
        "       ^\n");
  CHECK(outputs_error("Tensor(), Tensor(y)") ==
        "v:1:8: error: expected an output name after '(', found ')'\n"
        " Tensor(), Tensor(y)\n"
        "        ^\n");
  CHECK(outputs_error("Tensor(x) Tensor(y)") ==
        "v:1:11: error: expected ',' between outputs, found 'T'\n"
        " Tensor(x) Tensor(y)\n"
        "           ^\n");
  CHECK(outputs_error("Tensor, Tensor[]{n}") ==
        "v:1:9: error: duplicate output 'out' (an output without a name is called 'out')\n"
        " Tensor, Tensor[]{n}\n"
        "         ^\n"
        "v:1:1: note: 'out' was first declared here\n"
        " Tensor, Tensor[]{n}\n"
        " ^\n");
}
