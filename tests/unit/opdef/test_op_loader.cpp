// Loading op YAML: the model, and the full text of every kind of diagnostic (line:col, source line,
// caret, notes), including positions inside folded multi-line and quoted scalars.
#include <catch2/catch.hpp>

#include "opdef_test_util.h"

using namespace kforge;
using namespace kforge::opdef;
using kforge::opdef::testing::Fixture;

namespace {

const char* kAdam = R"(- op : adam_
  args : (Tensor param, Tensor grad, Tensor master_param, Scalar beta1 = 0.9f,
    float epsilon =
      1.0e-8f, bool multi_precision = false)
  output : Tensor(param_out), Tensor(master_param_out)
  infer_meta :
    func : AdamInferMeta
    spmd_rule : AdamInferSpmdDynamic
  kernel :
    func : adam {dense, dense, dense -> dense, dense},
           adam_dense_param_sparse_grad {dense, selected_rows, dense -> dense, dense}
    data_type : param
    param : [param, grad, master_param, beta1, epsilon, false]
  optional : master_param, master_param_out
  inplace : (param -> param_out), (master_param ->master_param_out)
  traits : pir::SideEffectTrait, paddle::dialect::ForwardOnlyTrait
  backward : adam_grad
)";

}  // namespace

TEST_CASE("an op loads into the model with locations") {
  Fixture f;
  const OpLibrary lib = f.load(kAdam);
  INFO(f.messages());
  REQUIRE(f.diags.error_count() == 0);
  REQUIRE(f.diags.warning_count() == 0);
  REQUIRE(lib.size() == 1);
  const Op* op = lib.find("adam_");
  REQUIRE(op != nullptr);
  CHECK(f.sources.line_col(op->loc).line == 1);
  CHECK(f.sources.line_col(op->loc).col == 8);
  REQUIRE(op->inputs.size() == 3);
  CHECK(op->inputs[2].optional);
  REQUIRE(op->attributes.size() == 3);
  // "1.0e-8f" sits on a continuation line of the folded args scalar.
  const DefaultValue& eps = *op->attributes[1].default_value;
  CHECK(eps.text == "1.0e-8f");
  CHECK(eps.kind == DefaultKind::kFloat);
  CHECK(f.sources.line_col(eps.loc).line == 4);
  CHECK(f.sources.line_col(eps.loc).col == 7);
  CHECK(f.sources.line_col(op->attributes[2].loc).line == 4);
  CHECK(op->outputs[1].optional);
  REQUIRE(op->infer_meta);
  CHECK(op->infer_meta->func == "AdamInferMeta");
  CHECK(op->infer_meta->spmd_rule->name == "AdamInferSpmdDynamic");
  CHECK_FALSE(op->infer_meta->param);
  REQUIRE(op->kernel);
  REQUIRE(op->kernel->funcs.size() == 2);
  CHECK(op->kernel->has_dispatch());
  CHECK(f.sources.line_col(op->kernel->funcs[1].loc).line == 11);
  CHECK(op->kernel->data_type->items[0].name == "param");
  REQUIRE(op->kernel->param);
  CHECK((*op->kernel->param)[5].is_literal);
  CHECK(op->effective_infer_meta_param() ==
        std::vector<std::string>{"param", "grad", "master_param", "beta1", "epsilon", "false"});
  REQUIRE(op->inplace.size() == 2);
  CHECK(op->inplace[1].output == "master_param_out");
  CHECK(op->traits[1].name == "paddle::dialect::ForwardOnlyTrait");
  CHECK(op->backward->name == "adam_grad");
}

TEST_CASE("without param lists Paddle's defaults apply") {
  Fixture f;
  const OpLibrary lib = f.load(
      "- op : scale\n"
      "  args : (Tensor x, Scalar scale=1.0, bool bias_after_scale=true)\n"
      "  output : Tensor(out)\n"
      "  infer_meta :\n"
      "    func : UnchangedInferMeta\n"
      "  kernel :\n"
      "    func : scale\n");
  REQUIRE(lib.size() == 1);
  const Op& op = lib.ops()[0];
  CHECK(op.effective_kernel_param() == std::vector<std::string>{"x", "scale", "bias_after_scale"});
  CHECK(op.effective_infer_meta_param() == op.effective_kernel_param());
}

TEST_CASE("bad args syntax, on one line and on a continuation line") {
  Fixture f;
  f.load(
      "- op : foo\n"
      "  args : (Tensor x, int axis=)\n"
      "  output : Tensor(out)\n"
      "- op : bar\n"
      "  args : (Tensor param, Tensor grad,\n"
      "    float rho = 0.95f, float epsilon =\n"
      "    , bool multi_precision = false)\n"
      "  output : Tensor(out)\n");
  CHECK(f.messages() ==
        "ops.yaml:2:30: error: expected a default value for 'axis' after '='\n"
        "   args : (Tensor x, int axis=)\n"
        "                              ^\n"
        "ops.yaml:7:5: error: expected a default value for 'epsilon' after '='\n"
        "     , bool multi_precision = false)\n"
        "     ^\n");
}

TEST_CASE("positions inside quoted scalars") {
  Fixture f;
  f.load(
      "- op : foo\n"
      "  args : \"(Tensor x, int axis=)\"\n"
      "  output : Tensor(out)\n"
      "- op : bar\n"
      "  args : (Tensor x)\n"
      "  output : 'Tensor(out), Tensor(''o'')'\n"
      "- op : baz\n"
      "  args : \"(Tensor x, str s = \\\"a\\\", int n = )\"\n"
      "  output : Tensor(out)\n");
  CHECK(f.messages() ==
        "ops.yaml:2:31: error: expected a default value for 'axis' after '='\n"
        "   args : \"(Tensor x, int axis=)\"\n"
        "                               ^\n"
        "ops.yaml:6:33: error: expected an output name after '(', found '''\n"
        "   output : 'Tensor(out), Tensor(''o'')'\n"
        "                                 ^\n"
        "ops.yaml:8:45: error: expected a default value for 'n' after '='\n"
        "   args : \"(Tensor x, str s = \\\"a\\\", int n = )\"\n"
        "                                             ^\n");
}

TEST_CASE("an output with no name and a bad size expression") {
  Fixture f;
  f.load(
      "- op : split\n"
      "  args : (Tensor x, int num)\n"
      "  output : Tensor[]{x.dims()[0] / }\n");
  CHECK(f.messages() ==
        "ops.yaml:3:35: error: bad size expression for output 'out': expected an expression after '/', found '}'\n"
        "   output : Tensor[]{x.dims()[0] / }\n"
        "                                   ^\n");
}

TEST_CASE("a default that does not parse") {
  Fixture f;
  f.load(
      "- op : foo\n"
      "  args : (Tensor x, float epsilon = 1e-5.f, int[] dims = {1, 2)\n"
      "  output : Tensor(out)\n");
  CHECK(f.messages() ==
        "ops.yaml:2:37: error: bad default value for 'epsilon': invalid number '1e-5.f'\n"
        "   args : (Tensor x, float epsilon = 1e-5.f, int[] dims = {1, 2)\n"
        "                                     ^\n");
}

TEST_CASE("an inplace pair naming a missing output") {
  Fixture f;
  const OpLibrary lib = f.load(
      "- op : relu\n"
      "  args : (Tensor x)\n"
      "  output : Tensor(out)\n"
      "  inplace : (x -> outt)\n");
  CHECK(lib.size() == 0);
  CHECK(f.messages() ==
        "ops.yaml:4:19: error: 'outt' in 'inplace' is not an output of op 'relu'; did you mean 'out'?\n"
        "   inplace : (x -> outt)\n"
        "                   ^\n");
}

TEST_CASE("names in the other keys are checked against the op") {
  Fixture f;
  f.load(
      "- op : foo\n"
      "  args : (Tensor x, Tensor y, int axis = 0)\n"
      "  output : Tensor(out), Tensor(xshape)\n"
      "  infer_meta :\n"
      "    func : FooInferMeta\n"
      "    param : [x, yy, axis]\n"
      "  kernel :\n"
      "    func : foo\n"
      "    data_type : complex(z)\n"
      "    backend : place > x\n"
      "  optional : y, xshape, w\n"
      "  intermediate : x\n"
      "  no_need_buffer : out\n"
      "  view : (y -> xshape)\n"
      "  data_transform :\n"
      "    skip_transform : axis\n");
  // Kernel-key candidates that name no argument are warnings: Paddle passes them through unchecked.
  CHECK(f.diags.error_count() == 5);
  CHECK(f.diags.warning_count() == 2);
  CHECK(f.messages() ==
        "ops.yaml:11:25: error: 'w' in 'optional' is not an input or output of op 'foo'; did you mean 'x'?\n"
        "   optional : y, xshape, w\n"
        "                         ^\n"
        "ops.yaml:12:18: error: 'x' in 'intermediate' is not an output of op 'foo'\n"
        "   intermediate : x\n"
        "                  ^\n"
        "ops.yaml:13:20: error: 'out' in 'no_need_buffer' is not an input of op 'foo'\n"
        "   no_need_buffer : out\n"
        "                    ^\n"
        "ops.yaml:6:17: error: 'yy' in 'infer_meta.param' is not an argument of op 'foo'; did you mean 'y'?\n"
        "     param : [x, yy, axis]\n"
        "                 ^\n"
        "ops.yaml:9:17: warning: 'z' in 'kernel.data_type' is not an argument of op 'foo', so it cannot select "
        "the kernel; did you mean 'x'?\n"
        "     data_type : complex(z)\n"
        "                 ^\n"
        "ops.yaml:10:15: warning: 'place' in 'kernel.backend' is not an argument of op 'foo', so it cannot "
        "select the kernel\n"
        "     backend : place > x\n"
        "               ^\n"
        "ops.yaml:16:22: error: 'axis' in 'data_transform.skip_transform' is not an input of op 'foo'\n"
        "     skip_transform : axis\n"
        "                      ^\n");
}

TEST_CASE("unknown keys are warnings with did-you-mean, duplicate keys keep the last") {
  Fixture f;
  const OpLibrary lib = f.load(
      "- op : relu\n"
      "  args : (Tensor x)\n"
      "  output : Tensor(out)\n"
      "  infer_mta :\n"
      "    func : UnchangedInferMeta\n"
      "  kernel :\n"
      "    fnc : relu\n"
      "    func : relu\n"
      "  interfaces : paddle::dialect::ParseKernelKeyInterface\n"
      "  interfaces : paddle::dialect::InferSymbolicShapeInterface\n"
      "  colour : blue\n");
  CHECK(f.diags.error_count() == 0);
  REQUIRE(lib.size() == 1);
  REQUIRE(lib.ops()[0].interfaces.size() == 1);
  CHECK(lib.ops()[0].interfaces[0].name == "paddle::dialect::InferSymbolicShapeInterface");
  CHECK(f.messages() ==
        "ops.yaml:4:3: warning: unknown key 'infer_mta' in op 'relu'; did you mean 'infer_meta'?\n"
        "   infer_mta :\n"
        "   ^\n"
        "ops.yaml:10:3: warning: duplicate key 'interfaces' in op 'relu'; the last one is used\n"
        "   interfaces : paddle::dialect::InferSymbolicShapeInterface\n"
        "   ^\n"
        "ops.yaml:9:3: note: first given here\n"
        "   interfaces : paddle::dialect::ParseKernelKeyInterface\n"
        "   ^\n"
        "ops.yaml:11:3: warning: unknown key 'colour' in op 'relu'\n"
        "   colour : blue\n"
        "   ^\n"
        "ops.yaml:7:5: warning: unknown key 'kernel.fnc' in op 'relu'; did you mean 'kernel.func'?\n"
        "     fnc : relu\n"
        "     ^\n");
}

TEST_CASE("a duplicate op names both places") {
  Fixture f;
  const OpLibrary lib = f.load({{"a.yaml",
                                 "- op : relu\n"
                                 "  args : (Tensor x)\n"
                                 "  output : Tensor(out)\n"},
                                {"b.yaml",
                                 "- op: relu\n"
                                 "  args : (Tensor x)\n"
                                 "  output : Tensor(out)\n"
                                 "  compute : max(x, 0)\n"}});
  CHECK(lib.size() == 1);
  CHECK_FALSE(lib.ops()[0].compute);
  CHECK(f.messages() ==
        "b.yaml:1:7: error: redefinition of op 'relu'\n"
        " - op: relu\n"
        "       ^\n"
        "a.yaml:1:8: note: previous definition is here\n"
        " - op : relu\n"
        "        ^\n");
}

TEST_CASE("an overlay file adds the extension keys to an earlier op") {
  Fixture f;
  const OpLibrary lib = f.load({{"ops.yaml",
                                 "- op : relu\n"
                                 "  args : (Tensor x)\n"
                                 "  output : Tensor(out)\n"
                                 "- op : sum\n"
                                 "  args : (Tensor x, IntArray axis={}, bool keepdim=false)\n"
                                 "  output : Tensor(out)\n"},
                                {"overlay.yaml",
                                 "- op : relu\n"
                                 "  compute : max(x, 0)\n"
                                 "  pattern : elementwise\n"
                                 "- op : sum\n"
                                 "  pattern : reduction\n"
                                 "  reduce :\n"
                                 "    init : 0\n"
                                 "    combine : a + b\n"
                                 "    axis : axis\n"}});
  INFO(f.messages());
  CHECK(f.diags.error_count() == 0);
  REQUIRE(lib.size() == 2);
  const Op& relu = *lib.find("relu");
  REQUIRE(relu.compute);
  CHECK(relu.compute->text == "max(x, 0)");
  CHECK(f.sources.path(relu.compute->loc.file) == "overlay.yaml");
  CHECK(f.sources.line_col(relu.compute->loc).col == 13);
  CHECK(relu.pattern->kind == PatternKind::kElementwise);
  const Op& sum = *lib.find("sum");
  REQUIRE(sum.reduce);
  CHECK(sum.reduce->combine.text == "a + b");
  CHECK_FALSE(sum.reduce->finalize);
  CHECK(sum.reduce->axis.name == "axis");
}

TEST_CASE("overlay errors") {
  Fixture f;
  f.load({{"ops.yaml",
           "- op : relu\n"
           "  args : (Tensor x)\n"
           "  output : Tensor(out)\n"
           "  compute : max(x, 0)\n"},
          {"overlay.yaml",
           "- op : rellu\n"
           "  compute : max(x, 0)\n"
           "- op : relu\n"
           "  compute : x\n"
           "  pattern : elementwse\n"
           "  reduce :\n"
           "    init : 0\n"
           "    axis : dim\n"}});
  CHECK(f.messages() ==
        "overlay.yaml:1:8: error: extension keys for op 'rellu', which no earlier entry defines; did you mean "
        "'relu'?\n"
        " - op : rellu\n"
        "        ^\n"
        "overlay.yaml:4:3: error: 'compute' of op 'relu' is already set\n"
        "   compute : x\n"
        "   ^\n"
        "ops.yaml:4:13: note: previously set here\n"
        "   compute : max(x, 0)\n"
        "             ^\n"
        "overlay.yaml:5:13: error: unknown pattern 'elementwse'; did you mean 'elementwise'?; expected one of "
        "elementwise, broadcast, injective, reduction, out_fusible, opaque\n"
        "   pattern : elementwse\n"
        "             ^\n"
        "overlay.yaml:6:3: error: 'reduce' of op 'relu' has no 'combine'\n"
        "   reduce :\n"
        "   ^\n"
        "overlay.yaml:8:12: error: 'reduce.axis' must name an attribute of op 'relu', and 'dim' is not one\n"
        "     axis : dim\n"
        "            ^\n");
}

TEST_CASE("row_pattern extension") {
  Fixture f;
  const OpLibrary lib = f.load({{"ops.yaml",
                                 "- op : softmax\n"
                                 "  args : (Tensor x, int axis = -1)\n"
                                 "  output : Tensor(out)\n"
                                 "- op : layer_norm\n"
                                 "  args : (Tensor x, Tensor scale, Tensor bias, float epsilon, int begin_norm_axis)\n"
                                 "  output : Tensor(out), Tensor(mean), Tensor(variance)\n"},
                                {"overlay.yaml",
                                 "- op : softmax\n"
                                 "  pattern : reduction\n"
                                 "  row_pattern : softmax\n"
                                 "- op : layer_norm\n"
                                 "  row_pattern : layernorm\n"}});
  REQUIRE(lib.find("softmax"));
  REQUIRE(lib.find("softmax")->row_pattern);
  CHECK(lib.find("softmax")->row_pattern->kind == RowPatternKind::kSoftmax);
  REQUIRE(lib.find("layer_norm"));
  CHECK_FALSE(lib.find("layer_norm")->row_pattern);
  CHECK(f.messages().find("unknown row_pattern 'layernorm'; did you mean 'layer_norm'?; expected one of softmax, "
                          "layer_norm, rms_norm") != std::string::npos);
}

TEST_CASE("structural errors are located") {
  Fixture f;
  f.load(
      "- op : foo\n"
      "  output : Tensor(out)\n"
      "- op : bar\n"
      "  args : (Tensor x)\n"
      "  output : [Tensor]\n"
      "- op : baz\n"
      "  args : (Tensor x)\n"
      "  output : Tensor(out)\n"
      "  kernel : baz\n"
      "  infer_meta :\n"
      "    param : x\n"
      "- just a string\n"
      "- op : foo bar\n");
  CHECK(f.messages() ==
        "ops.yaml:1:8: error: op 'foo' has no 'args'\n"
        " - op : foo\n"
        "        ^\n"
        "ops.yaml:5:12: error: 'output' must be a string, not a list\n"
        "   output : [Tensor]\n"
        "            ^\n"
        "ops.yaml:10:3: error: 'infer_meta' of op 'baz' has no 'func'\n"
        "   infer_meta :\n"
        "   ^\n"
        "ops.yaml:11:13: error: 'infer_meta.param' must be a list like [a, b], not a string\n"
        "     param : x\n"
        "             ^\n"
        "ops.yaml:9:12: error: 'kernel' must be a mapping, not a string\n"
        "   kernel : baz\n"
        "            ^\n"
        "ops.yaml:12:3: error: expected an op entry (a mapping that starts with 'op :'), found a string\n"
        " - just a string\n"
        "   ^\n"
        "ops.yaml:13:12: error: bad op name 'foo bar': expected a name like 'relu'\n"
        " - op : foo bar\n"
        "            ^\n");
}

TEST_CASE("YAML syntax errors are located diagnostics") {
  Fixture f;
  const OpLibrary lib = f.load(
      "- op : foo\n"
      "  args : (Tensor x)\n"
      "  output : Tensor(out)\n"
      "  infer_meta : {func : FooInferMeta\n"
      "- op : bar\n");
  CHECK(lib.size() == 0);
  CHECK(f.diags.error_count() == 1);
  CHECK(f.messages() ==
        "ops.yaml:5:6: error: invalid YAML: end of map flow not found\n"
        " - op : bar\n"
        "      ^\n");
}

TEST_CASE("the known keys are the accepted ones") {
  const std::vector<std::string>& keys = known_op_keys();
  CHECK(std::find(keys.begin(), keys.end(), "kernel.force_backend") != keys.end());
  CHECK(std::find(keys.begin(), keys.end(), "reduce.finalize") != keys.end());
  CHECK(std::find(keys.begin(), keys.end(), "support_tensor") != keys.end());
  // A key outside the list is a warning, one inside it is not.
  Fixture f;
  f.load(
      "- op : foo\n"
      "  args : (Tensor x)\n"
      "  output : Tensor(out)\n"
      "  support_dygraph_mode : true\n"
      "  support_tensor : []\n"
      "  composite : foo_grad(x, out)\n");
  CHECK(f.messages().empty());
}
