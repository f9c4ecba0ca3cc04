// The kernel.func, candidate, inplace/view, invoke/composite, forward and name-list mini-languages
// (schemas/op.schema.json).
#include <catch2/catch.hpp>

#include "opdef/op_syntax.h"
#include "opdef_test_util.h"

using namespace kforge;
using namespace kforge::opdef;
using kforge::opdef::testing::Fixture;

TEST_CASE("kernel funcs: separators and signatures") {
  Fixture f;
  std::optional<std::vector<KernelFunc>> funcs = parse_kernel_funcs(
      f.value("adam {dense, dense -> dense},\n       adam_sr {dense, selected_rows ->dense}"), f.diags);
  REQUIRE(funcs);
  REQUIRE(funcs->size() == 2);
  CHECK((*funcs)[0].name == "adam");
  CHECK((*funcs)[0].input_kinds == std::vector<TensorKind>{TensorKind::kDense, TensorKind::kDense});
  CHECK((*funcs)[1].name == "adam_sr");
  CHECK((*funcs)[1].loc.offset == 37);
  CHECK((*funcs)[1].input_kinds[1] == TensorKind::kSelectedRows);

  funcs = parse_kernel_funcs(f.value("adagrad {dense -> dense}\nadagrad_sr {dense -> dense}"), f.diags);
  REQUIRE(funcs);
  CHECK(funcs->size() == 2);
  funcs = parse_kernel_funcs(f.value("average_accumulates {dense, dense ,dense -> dense}"), f.diags);
  REQUIRE(funcs);
  CHECK((*funcs)[0].input_kinds.size() == 3);
  funcs = parse_kernel_funcs(f.value("abs_coo{sparse_coo -> sparse_coo},\nabs_csr{sparse_csr -> sparse_csr}"), f.diags);
  REQUIRE(funcs);
  CHECK((*funcs)[1].output_kinds[0] == TensorKind::kSparseCsr);
  funcs = parse_kernel_funcs(f.value("abs"), f.diags);
  REQUIRE(funcs);
  CHECK_FALSE((*funcs)[0].has_signature);
  CHECK(f.diags.error_count() == 0);
}

TEST_CASE("kernel funcs: errors") {
  Fixture f;
  CHECK_FALSE(parse_kernel_funcs(f.value("adam {dens -> dense}"), f.diags));
  CHECK_FALSE(parse_kernel_funcs(f.value("adam {dense dense}"), f.diags));
  CHECK_FALSE(parse_kernel_funcs(f.value("adam {dense -> dense"), f.diags));
  CHECK_FALSE(parse_kernel_funcs(f.value("adam, adam"), f.diags));
  CHECK(f.messages() ==
        "v:1:7: error: unknown tensor kind 'dens' in kernel 'adam'; did you mean 'dense'?\n"
        " adam {dens -> dense}\n"
        "       ^\n"
        "v:1:13: error: expected '->' in the signature of kernel 'adam', found 'd'\n"
        " adam {dense dense}\n"
        "             ^\n"
        "v:1:21: error: expected '}' to close the signature of kernel 'adam', found end of value\n"
        " adam {dense -> dense\n"
        "                     ^\n"
        "v:1:6: note: to match this '{'\n"
        " adam {dense -> dense\n"
        "      ^\n"
        "v:1:7: error: kernel 'adam' is listed twice\n"
        " adam, adam\n"
        "       ^\n"
        "v:1:1: note: first listed here\n"
        " adam, adam\n"
        " ^\n");
}

TEST_CASE("candidates: ordered, unordered, complex, constants, dropped empties") {
  Fixture f;
  std::optional<Candidates> c = parse_candidates(f.value("dtype > x"), f.diags, "data_type");
  REQUIRE(c);
  CHECK(c->ordered);
  REQUIRE(c->items.size() == 2);
  CHECK(c->items[1].name == "x");
  CHECK(c->items[1].loc.offset == 8);
  c = parse_candidates(f.value("x, y"), f.diags, "data_type");
  REQUIRE(c);
  CHECK_FALSE(c->ordered);
  CHECK(c->items.size() == 2);
  c = parse_candidates(f.value("place>"), f.diags, "backend");
  REQUIRE(c);
  CHECK(c->items.size() == 1);
  c = parse_candidates(f.value("complex(out_grad)"), f.diags, "data_type");
  REQUIRE(c);
  CHECK(c->items[0].to_complex);
  CHECK(c->items[0].name == "out_grad");
  c = parse_candidates(f.value("DataType::FLOAT32"), f.diags, "data_type");
  REQUIRE(c);
  CHECK(c->items[0].is_constant);
  CHECK(f.diags.error_count() == 0);
  CHECK_FALSE(parse_candidates(f.value("x y"), f.diags, "kernel.backend"));
  CHECK_FALSE(parse_candidates(f.value(" > "), f.diags, "kernel.backend"));
  CHECK(f.messages() ==
        "v:1:3: error: bad candidate 'x y' in 'kernel.backend': expected an argument name, complex(name) or a "
        "constant such as DataType::FLOAT32\n"
        " x y\n"
        "   ^\n"
        "v:1:1: error: 'kernel.backend' names no candidate\n"
        "  > \n"
        " ^\n");
}

TEST_CASE("inplace and view pairs: both layouts and tight arrows") {
  Fixture f;
  auto pairs = parse_inplace_pairs(f.value("(x -> out)"), f.diags, "inplace");
  REQUIRE(pairs);
  CHECK(pairs->size() == 1);
  pairs = parse_inplace_pairs(f.value("(a -> b), (c -> d)"), f.diags, "inplace");
  REQUIRE(pairs);
  CHECK((*pairs)[1].input == "c");
  CHECK((*pairs)[1].output_loc.offset == 16);
  pairs = parse_inplace_pairs(f.value("(scale -> out_scale, in_accum -> out_accum, in_state -> out_state)"), f.diags,
                              "inplace");
  REQUIRE(pairs);
  CHECK(pairs->size() == 3);
  CHECK((*pairs)[2].output == "out_state");
  pairs = parse_inplace_pairs(f.value("(master_param ->master_param_out), (N->N)"), f.diags, "inplace");
  REQUIRE(pairs);
  CHECK((*pairs)[1].input == "N");
  CHECK((*pairs)[1].output == "N");
  CHECK(f.diags.error_count() == 0);
  CHECK_FALSE(parse_inplace_pairs(f.value("(x > out)"), f.diags, "inplace"));
  CHECK_FALSE(parse_inplace_pairs(f.value("(x -> out"), f.diags, "view"));
  CHECK(f.messages() ==
        "v:1:4: error: expected '->' after 'x' in 'inplace', found '>'\n"
        " (x > out)\n"
        "    ^\n"
        "v:1:10: error: expected ')' to close '(' in 'view', found end of value\n"
        " (x -> out\n"
        "          ^\n"
        "v:1:1: note: to match this '('\n"
        " (x -> out\n"
        " ^\n");
}

TEST_CASE("invoke and composite calls keep their arguments verbatim") {
  Fixture f;
  std::optional<Call> call = parse_call(f.value("full(shape, 1, dtype, place)"), f.diags, "invoke");
  REQUIRE(call);
  CHECK(call->func == "full");
  CHECK(call->args == std::vector<std::string>{"shape", "1", "dtype", "place"});
  call = parse_call(f.value("cast (out_grad, x.dtype())"), f.diags, "invoke");
  REQUIRE(call);
  CHECK(call->args[1] == "x.dtype()");
  call = parse_call(f.value("concat( out_grad, axis)"), f.diags, "invoke");
  REQUIRE(call);
  CHECK(call->args[0] == "out_grad");
  CHECK(call->arg_locs[0].offset == 8);
  call = parse_call(f.value("scale(out_grad, scale, 0.0f, true)"), f.diags, "invoke");
  REQUIRE(call);
  CHECK(call->args[2] == "0.0f");
  CHECK(f.diags.error_count() == 0);
  CHECK_FALSE(parse_call(f.value("full(shape, )"), f.diags, "invoke"));
  CHECK_FALSE(parse_call(f.value("full shape"), f.diags, "composite"));
  CHECK(f.messages() ==
        "v:1:13: error: bad argument 2 of 'full' in 'invoke': expected an expression, found ')'\n"
        " full(shape, )\n"
        "             ^\n"
        "v:1:6: error: expected '(' after 'full' in 'composite', found 's'\n"
        " full shape\n"
        "      ^\n");
}

TEST_CASE("forward: name, args and outputs, over several lines") {
  Fixture f;
  std::optional<Forward> fwd =
      parse_forward(f.value("abs_double_grad (Tensor x, Tensor grad_x_grad) -> Tensor(grad_out_grad)"), f.diags);
  REQUIRE(fwd);
  CHECK(fwd->op == "abs_double_grad");
  CHECK(fwd->inputs.size() == 2);
  CHECK(fwd->outputs[0].name == "grad_out_grad");
  fwd = parse_forward(f.value("conv2d (Tensor input, Tensor filter, int[] strides={1, 1}) -> Tensor(out)"), f.diags);
  REQUIRE(fwd);
  CHECK(fwd->attributes[0].default_value->text == "{1, 1}");
  CHECK(f.diags.error_count() == 0);
  CHECK_FALSE(parse_forward(f.value("abs (Tensor x) Tensor(out)"), f.diags));
  CHECK(f.messages() ==
        "v:1:16: error: expected '->' after the arguments of 'abs', found 'T'\n"
        " abs (Tensor x) Tensor(out)\n"
        "                ^\n");
}

TEST_CASE("name lists: plain and qualified") {
  Fixture f;
  auto names = parse_name_list(f.value("optional :  fixed_seed_offset , attn_mask"), f.diags, "x", false);
  CHECK_FALSE(names);  // ':' is not part of a name
  names = parse_name_list(f.value(" fixed_seed_offset , attn_mask"), f.diags, "optional", false);
  REQUIRE(names);
  CHECK((*names)[1].name == "attn_mask");
  CHECK((*names)[1].loc.offset == 21);
  names = parse_name_list(f.value("pir::SideEffectTrait, paddle::dialect::ForwardOnlyTrait"), f.diags, "traits", true);
  REQUIRE(names);
  CHECK((*names)[1].name == "paddle::dialect::ForwardOnlyTrait");
  CHECK_FALSE(parse_name_list(f.value("a, , b"), f.diags, "optional", false));
  CHECK_FALSE(parse_name_list(f.value("pir::"), f.diags, "traits", true));
  CHECK(f.diags.error_count() == 3);
  CHECK(f.messages().find("v:1:4: error: empty item in 'optional'") != std::string::npos);
  CHECK(f.messages().find("v:1:4: error: expected ',' between names in 'traits', found ':'") != std::string::npos);
}
