// op_compat.yaml: its own schema (docs/op-yaml.md), lookup by op and backward names.
#include <catch2/catch.hpp>

#include "opdef_test_util.h"

using namespace kforge;
using namespace kforge::opdef;
using kforge::opdef::testing::Fixture;

TEST_CASE("op_compat entries: names, renames, mutable attributes, extras") {
  Fixture f;
  const OpCompat compat = f.load_compat(R"(# comment
- op : add (elementwise_add)
  backward : add_grad (elementwise_add_grad), add_double_grad
  inputs :
    {x : X, y : Y}
  outputs :
    out : Out
  attrs :
    axis : axis
  scalar :
    beta :
      data_type : float
      support_tensor : false
    alpha :
      data_type : float
      tensor_name : AlphaTensor
  int_array :
    shape :
      data_type : int64_t
      tensors_name : ShapeTensorList
  extra :
    attrs : [bool use_mkldnn = false, 'int[] slots = {}', "float[] Scale_weights = {1.0f}",
             int workspace_size_MB = phi::backends::gpu::GetDefaultConvWorkspaceSizeLimitMB()]
    outputs : [XShape]
  manual_signature : [add]
  complex_promote : [X, Y]
  drop_empty_grad : [x_grad]
  get_expected_kernel_type :
    add : GetAddExpectedKernelType
)");
  INFO(f.messages());
  REQUIRE(f.diags.error_count() == 0);
  REQUIRE(f.diags.warning_count() == 0);
  REQUIRE(compat.entries().size() == 1);
  const CompatEntry& e = compat.entries()[0];
  CHECK(e.op.name == "add");
  CHECK(e.op.legacy == "elementwise_add");
  REQUIRE(e.backward.size() == 2);
  CHECK(e.backward[0].legacy == "elementwise_add_grad");
  CHECK(e.backward[1].name == "add_double_grad");
  CHECK(e.backward[1].legacy.empty());
  REQUIRE(e.inputs.size() == 2);
  CHECK(e.inputs[1].legacy == "Y");
  CHECK(e.attrs[0].name == "axis");
  REQUIRE(e.scalar.size() == 2);
  CHECK_FALSE(e.find_scalar("beta")->is_mutable());
  CHECK(e.find_scalar("alpha")->is_mutable());
  CHECK(e.find_int_array("shape")->is_mutable());
  CHECK(*e.find_int_array("shape")->data_type == "int64_t");
  REQUIRE(e.extra);
  REQUIRE(e.extra->attrs.size() == 4);
  CHECK(e.extra->attrs[1].type == ArgType::kIntList);
  CHECK(e.extra->attrs[2].default_value->text == "{1.0f}");
  CHECK(e.extra->attrs[3].default_value->kind == DefaultKind::kExpression);
  CHECK(e.extra->outputs[0].name == "XShape");
  CHECK(e.manual_signature[0].name == "add");
  CHECK(e.complex_promote.size() == 2);
  CHECK(e.get_expected_kernel_type[0].second.name == "GetAddExpectedKernelType");
  CHECK(compat.lookup("add") == &e);
  CHECK(compat.lookup("add_double_grad") == &e);
  CHECK(compat.lookup("elementwise_add") == nullptr);
}

TEST_CASE("op_compat: a name claimed twice warns and the first entry wins") {
  Fixture f;
  const OpCompat compat = f.load_compat(
      "- op : shape\n"
      "  inputs :\n"
      "    input : Input\n"
      "- op : array_to_tensor(tensor_array_to_tensor)\n"
      "  backward : tanh_shrink_grad\n"
      "- op : shape\n"
      "  backward : shape_grad\n"
      "- op : tanh_shrink\n"
      "  backward : tanh_shrink_grad\n");
  CHECK(f.diags.error_count() == 0);
  CHECK(compat.entries().size() == 4);
  CHECK(compat.lookup("shape")->inputs.size() == 1);
  CHECK(compat.lookup("shape_grad") == &compat.entries()[2]);
  CHECK(compat.lookup("tanh_shrink_grad")->op.name == "array_to_tensor");
  CHECK(compat.lookup("tanh_shrink_grad")->op.legacy == "tensor_array_to_tensor");
  CHECK(f.messages() ==
        "op_compat.yaml:6:8: warning: duplicate op_compat entry for op 'shape'; only the first one is used, as in "
        "Paddle\n"
        " - op : shape\n"
        "        ^\n"
        "op_compat.yaml:1:8: note: the first entry is here\n"
        " - op : shape\n"
        "        ^\n"
        "op_compat.yaml:9:14: warning: backward op 'tanh_shrink_grad' is already listed by the op_compat entry of "
        "'array_to_tensor'; that entry is used for it, as in Paddle\n"
        "   backward : tanh_shrink_grad\n"
        "              ^\n"
        "op_compat.yaml:5:14: note: first listed here\n"
        "   backward : tanh_shrink_grad\n"
        "              ^\n");
}

TEST_CASE("op_compat: errors are located") {
  Fixture f;
  f.load_compat(
      "- op : foo (bar\n"
      "- op : baz\n"
      "  scalar :\n"
      "    axis :\n"
      "      support_tensor : maybe\n"
      "- op : qux\n"
      "  extra :\n"
      "    attrs : [bool flag = ]\n"
      "  inputs : x\n"
      "  outputz : {out : Out}\n");
  CHECK(f.messages() ==
        "op_compat.yaml:1:16: error: bad name 'foo (bar' in 'op': expected 'name' or 'name (legacy_name)'\n"
        " - op : foo (bar\n"
        "                ^\n"
        "op_compat.yaml:5:24: error: 'scalar.axis.support_tensor' must be true or false, not 'maybe'\n"
        "       support_tensor : maybe\n"
        "                        ^\n"
        "op_compat.yaml:10:3: warning: unknown key 'outputz' in op_compat entry 'qux'; did you mean 'outputs'?\n"
        "   outputz : {out : Out}\n"
        "   ^\n"
        "op_compat.yaml:8:25: error: expected a default value for 'flag' after '='\n"
        "     attrs : [bool flag = ]\n"
        "                         ^\n"
        "op_compat.yaml:9:12: error: 'inputs' must be a mapping, not a string\n"
        "   inputs : x\n"
        "            ^\n");
}

TEST_CASE("op_compat: an entry listing its own name as a backward op warns") {
  // Found by fuzzing: the claim belongs to the entry being added.
  Fixture f;
  const OpCompat compat = f.load_compat(
      "- op : foo\n"
      "  backward : foo_grad, foo_grad, foo\n");
  CHECK(compat.entries().size() == 1);
  CHECK(f.diags.warning_count() == 2);
  CHECK(f.messages().find("warning: backward op 'foo' is already listed by the op_compat entry of 'foo'") !=
        std::string::npos);
}
