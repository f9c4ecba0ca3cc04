// The Python functions of `kforge ops --python` (src/codegen/python_ops_model.cpp): parameter kinds, defaults that
// the C++ API had to drop, returned outputs, the C++ call, and the functions Python does not get.
#include <catch2/catch.hpp>

#include <sstream>

#include "codegen/op_api_model.h"
#include "codegen/python_ops_model.h"
#include "opdef/op_loader.h"

namespace kforge::codegen {
namespace {

struct Fixture {
  SourceManager sources;
  std::ostringstream out;
  DiagnosticEngine diags{sources, out};
  std::unique_ptr<opdef::OpLibrary> library;  // the models point into it

  PyOpModule module_of(const std::string& text) {
    opdef::OpLoader loader(sources, diags);
    loader.add_buffer(sources.add_buffer("ops.yaml", text));
    library = std::make_unique<opdef::OpLibrary>(std::move(loader).finish());
    INFO(out.str());
    REQUIRE(out.str().empty());
    api = build_op_api_model(*library, sources, {});
    return build_python_op_module(api);
  }
  OpApiModel api;
};

const PyFunction& function(const PyOpModule& m, const std::string& name) {
  for (const PyFunction& f : m.functions) {
    if (f.name == name) return f;
  }
  FAIL("no Python function " << name);
  throw;
}

TEST_CASE("Python parameters follow the YAML args, with every usable YAML default", "[python]") {
  Fixture f;
  const PyOpModule m = f.module_of(
      "- op : stack\n"
      "  args : (Tensor[] xs, Tensor bias, int axis = -1, str mode = \"sum\", int ring = kRing, "
      "DataType dtype = DataType::FLOAT32)\n"
      "  output : Tensor(out), Tensor(mean)\n"
      "  optional : bias\n"
      "  intermediate : mean\n"
      "  infer_meta :\n    func : StackInferMeta\n"
      "  kernel :\n    func : stack\n");
  const PyFunction& fn = function(m, "stack");
  REQUIRE(fn.params.size() == 6);
  CHECK(fn.params[0].kind == PyParam::Kind::kTensorList);
  CHECK(fn.params[1].kind == PyParam::Kind::kOptionalTensor);
  CHECK_FALSE(fn.params[1].required);
  // The C++ API drops `axis = -1` and `mode = "sum"` (`ring` after them has no usable default); Python matches
  // by name and keeps them.
  CHECK(fn.params[2].cpp_default == "-1");
  CHECK_FALSE(fn.params[2].required);
  CHECK(fn.params[3].cpp_default == "\"sum\"");
  CHECK(fn.params[3].value_type == "std::string");
  CHECK(fn.params[4].required);  // `kRing` is no C++ the module could compile
  CHECK(fn.params[5].cpp_default == "kforge::DataType::FLOAT32");
  // The intermediate output is not computed (null) and not returned.
  REQUIRE(fn.returns.size() == 1);
  CHECK(fn.returns[0].name == "out");
  CHECK(fn.call_args == std::vector<std::string>{"arg_xs.get()", "arg_bias.get_if()", "&out_out", "nullptr",
                                                 "arg_axis", "arg_mode", "arg_ring", "arg_dtype"});
  CHECK(fn.doc.rfind("stack(xs, bias=None, axis=-1, mode=\"sum\", ring, dtype=DataType::FLOAT32) -> Tensor", 0) == 0);
}

TEST_CASE("In-place twins take the module's tensors and return them", "[python]") {
  Fixture f;
  const PyOpModule m = f.module_of(
      "- op : relu\n  args : (Tensor x)\n  output : Tensor(out)\n"
      "  infer_meta :\n    func : UnchangedInferMeta\n  kernel :\n    func : relu\n  inplace : (x -> out)\n"
      "- op : add_n\n  args : (Tensor[] xs)\n  output : Tensor[](outs){xs.size()}\n"
      "  infer_meta :\n    func : AddNInferMeta\n  kernel :\n    func : add_n\n  inplace : (xs -> outs)\n");
  const PyFunction& relu = function(m, "relu");
  CHECK(relu.params[0].kind == PyParam::Kind::kTensor);
  CHECK(relu.returns[0].kind == PyOutput::Kind::kTensor);
  const PyFunction& twin = function(m, "relu_");
  CHECK(twin.params[0].kind == PyParam::Kind::kInplaceTensor);
  REQUIRE(twin.returns.size() == 1);
  CHECK(twin.returns[0].kind == PyOutput::Kind::kInplace);
  CHECK(twin.returns[0].param_index == 0);
  CHECK(twin.call_args == std::vector<std::string>{"*arg_x"});
  CHECK(function(m, "add_n").returns[0].kind == PyOutput::Kind::kTensorList);
  // A Tensor[] updated in place has no Python function, and says why.
  REQUIRE(m.skipped.size() == 1);
  CHECK(m.skipped[0] == "add_n_: its Tensor[] input 'xs' is updated in place");
}

}  // namespace
}  // namespace kforge::codegen
