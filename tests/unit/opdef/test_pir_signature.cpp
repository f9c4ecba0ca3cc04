// PIR signature derivation on small hand-written inputs: each rule of docs/op-yaml.md "How the ops become PIR ops" and the
// op_gen.py special cases, and the exact JSON text.
#include <catch2/catch.hpp>

#include "opdef/pir_signature.h"
#include "opdef_test_util.h"

using namespace kforge;
using namespace kforge::opdef;
using kforge::opdef::testing::Fixture;
using kforge::opdef::testing::find_signature;

namespace {

std::vector<std::string> names(const std::vector<PirOpSignature>& sigs) {
  std::vector<std::string> out;
  for (const PirOpSignature& s : sigs) out.push_back(s.name);
  return out;
}

const char* kOps = R"(- op : scale
  args : (Tensor x, Scalar scale=1.0, Scalar bias=0.0, bool bias_after_scale=true)
  output : Tensor(out)
  infer_meta :
    func : UnchangedInferMeta
    param : [x]
  kernel :
    func : scale {dense -> dense},
           scale_sr {selected_rows -> selected_rows}
    data_type : x
  inplace : (x -> out)
- op : reshape
  args : (Tensor x, IntArray shape)
  output : Tensor(out), Tensor(xshape)
  infer_meta :
    func : ReshapeWithXShapeInferMeta
  kernel :
    func : reshape
  intermediate : xshape
  view : (x -> out)
- op : pow
  args : (Tensor x, Scalar y=1.0f)
  output : Tensor(out)
  infer_meta :
    func : UnchangedInferMeta
  kernel :
    func : pow
- op : one_hot
  args : (Tensor x, Scalar(int) num_classes)
  output : Tensor(out)
  infer_meta :
    func : OneHotInferMeta
  kernel :
    func : one_hot
- op : isclose
  args : (Tensor x, Tensor y, Scalar rtol="1e-5", Scalar atol="1e-8")
  output : Tensor(out)
  infer_meta :
    func : ValueCompareInferMeta
  kernel :
    func : isclose
- op : expand
  args : (Tensor x, IntArray shape = {})
  output : Tensor(out)
  infer_meta :
    func : ExpandInferMeta
  kernel :
    func : expand
- op : full_like
  args : (Tensor x, Scalar value = 0.0, DataType dtype = DataType::UNDEFINED)
  output : Tensor(out)
  invoke : full_like_impl(x, value, dtype)
  inplace : (x -> out)
- op : fft_c2c
  args : (Tensor x, int64_t[] axes, str normalization, bool forward)
  output : Tensor
  infer_meta :
    func : FFTC2CInferMeta
  kernel :
    func : fft_c2c
- op : rmsprop_
  args : (Tensor param, Tensor mean_grad, Tensor[] extra)
  output : Tensor(param_out), Tensor(mean_grad_out), Tensor[](extra_out){extra.size()}
  infer_meta :
    func : RmspropInferMeta
  kernel :
    func : rmsprop
  optional : mean_grad
  inplace : (param -> param_out), (mean_grad -> mean_grad_out)
)";

const char* kCompat = R"(- op : scale
  scalar :
    scale :
      data_type : float
      tensor_name : ScaleTensor
    bias :
      data_type : float
      support_tensor : false
- op : reshape (reshape2)
  int_array :
    shape :
      data_type : int64_t
      tensor_name : Shape
- op : pow
  backward : pow_grad
  scalar :
    y :
      data_type : float
      tensor_name : FactorTensor
- op : one_hot (one_hot_v2)
  scalar :
    depth :
      data_type : int
      tensor_name : depth_tensor
- op : isclose
  scalar :
    rtol :
      data_type : std::string
      tensor_name : Rtol
    atol :
      data_type : std::string
      tensor_name : Atol
)";

}  // namespace

TEST_CASE("PIR signatures: operands, mutable attributes, twins and kernels") {
  Fixture f;
  const OpLibrary lib = f.load(kOps);
  const OpCompat compat = f.load_compat(kCompat);
  INFO(f.messages());
  REQUIRE(f.diags.error_count() == 0);
  const std::vector<PirOpSignature> sigs = derive_pir_signatures(lib, &compat, f.diags);
  REQUIRE(f.diags.error_count() == 0);
  CHECK(names(sigs) == std::vector<std::string>{"pd_op.scale", "pd_op.scale_sr", "pd_op.scale_", "pd_op.scale_sr_",
                                                "pd_op.reshape", "pd_op.reshape_", "pd_op.pow", "pd_op.one_hot",
                                                "pd_op.isclose", "pd_op.full_like", "pd_op.fft_c2c",
                                                "pd_op.rmsprop_"});

  const PirOpSignature& scale = *find_signature(sigs, "pd_op.scale");
  CHECK(scale.class_name == "ScaleOp");
  REQUIRE(scale.operands.size() == 2);
  CHECK(scale.operands[1].name == "scale");
  CHECK(scale.operands[1].mutable_attr);
  CHECK(scale.operands[1].type == "paddle::dialect::ScalarAttribute");
  REQUIRE(scale.attributes.size() == 2);
  CHECK(scale.attributes[0].name == "bias");
  CHECK(scale.attributes[0].type == "paddle::dialect::ScalarAttribute");
  CHECK(scale.attributes[0].data_type == "float");
  CHECK(scale.attributes[1].type == "pir::BoolAttribute");
  CHECK(scale.infer_meta == "UnchangedInferMeta");
  CHECK(scale.kernel == "scale");
  const PirOpSignature& scale_sr_ = *find_signature(sigs, "pd_op.scale_sr_");
  CHECK(scale_sr_.class_name == "ScaleSr_Op");
  CHECK(scale_sr_.inplace);
  CHECK(scale_sr_.operands[0].type == "paddle::dialect::SelectedRowsType");
  CHECK(scale_sr_.results[0].type == "paddle::dialect::SelectedRowsType");
  CHECK(scale_sr_.kernel == "scale_sr");

  const PirOpSignature& reshape_ = *find_signature(sigs, "pd_op.reshape_");
  CHECK(reshape_.class_name == "Reshape_Op");
  REQUIRE(reshape_.operands.size() == 2);
  CHECK(reshape_.operands[1].type == "paddle::dialect::IntArrayAttribute");
  CHECK(reshape_.operands[1].data_type == "int64_t");
  CHECK(reshape_.attributes.empty());
  CHECK(reshape_.results[1].intermediate);
  CHECK(reshape_.results[1].optional);  // intermediate outputs are optional in PIR

  // op_gen.py drops pow's scalar entry, so y stays an attribute.
  const PirOpSignature& pow = *find_signature(sigs, "pd_op.pow");
  CHECK(pow.operands.size() == 1);
  CHECK(pow.attributes[0].name == "y");
  // op_compat names one_hot's attribute `depth`.
  const PirOpSignature& one_hot = *find_signature(sigs, "pd_op.one_hot");
  REQUIRE(one_hot.operands.size() == 2);
  CHECK(one_hot.operands[1].name == "num_classes");
  CHECK(one_hot.operands[1].data_type == "int");
  const PirOpSignature& isclose = *find_signature(sigs, "pd_op.isclose");
  REQUIRE(isclose.operands.size() == 4);
  CHECK(isclose.operands[2].data_type == "double");

  // expand is written by hand in Paddle; invoke ops have no kernel, infer_meta or twin.
  CHECK(find_signature(sigs, "pd_op.expand") == nullptr);
  const PirOpSignature& full_like = *find_signature(sigs, "pd_op.full_like");
  CHECK(full_like.kernel.empty());
  CHECK(full_like.infer_meta.empty());
  CHECK(find_signature(sigs, "pd_op.full_like_") == nullptr);

  const PirOpSignature& fft = *find_signature(sigs, "pd_op.fft_c2c");
  CHECK(fft.class_name == "FftC2cOp");
  CHECK(fft.results[0].name == "out");
  CHECK(fft.attributes[0].type == "pir::ArrayAttribute<pir::Int64Attribute>");
  CHECK(fft.attributes[0].data_type.empty());

  // An op named with '_' has no twin; the output in place of an optional input is optional.
  const PirOpSignature& rms = *find_signature(sigs, "pd_op.rmsprop_");
  CHECK(rms.class_name == "Rmsprop_Op");
  CHECK_FALSE(rms.inplace);
  CHECK(rms.operands[2].type == "pir::VectorType<paddle::dialect::DenseTensorType>");
  CHECK_FALSE(rms.results[0].optional);
  CHECK(rms.results[1].optional);
  CHECK(rms.results[2].type == "pir::VectorType<paddle::dialect::DenseTensorType>");
}

TEST_CASE("PIR signatures without op_compat: nothing is mutable") {
  Fixture f;
  const OpLibrary lib = f.load(kOps);
  const std::vector<PirOpSignature> sigs = derive_pir_signatures(lib, nullptr, f.diags);
  const PirOpSignature& scale = *find_signature(sigs, "pd_op.scale");
  CHECK(scale.operands.size() == 1);
  CHECK(scale.attributes.size() == 3);
  CHECK(scale.attributes[0].data_type == "float");
}

TEST_CASE("two ops deriving one PIR op is an error") {
  Fixture f;
  const OpLibrary lib = f.load(
      "- op : relu\n"
      "  args : (Tensor x)\n"
      "  output : Tensor(out)\n"
      "  inplace : (x -> out)\n"
      "- op : relu_\n"
      "  args : (Tensor x)\n"
      "  output : Tensor(out)\n");
  REQUIRE(lib.size() == 2);
  const std::vector<PirOpSignature> sigs = derive_pir_signatures(lib, nullptr, f.diags);
  CHECK(sigs.size() == 2);
  CHECK(f.messages() ==
        "ops.yaml:5:8: error: op 'relu_' derives the PIR op 'pd_op.relu_', which op 'relu' already derives\n"
        " - op : relu_\n"
        "        ^\n"
        "ops.yaml:1:8: note: 'relu' is defined here\n"
        " - op : relu\n"
        "        ^\n");
}

TEST_CASE("class names follow Paddle's to_pascal_case") {
  CHECK(pir_class_name("abs", false) == "AbsOp");
  CHECK(pir_class_name("abs_", false) == "Abs_Op");
  CHECK(pir_class_name("conv2d_transpose", false) == "Conv2dTransposeOp");
  CHECK(pir_class_name("adam_dense_param_sparse_grad", true) == "AdamDenseParamSparseGrad_Op");
  CHECK(pir_class_name("fft_c2c", false) == "FftC2cOp");
}

TEST_CASE("signatures_to_json writes Paddle's structure, one item per line") {
  Fixture f;
  const OpLibrary lib = f.load(
      "- op : relu\n"
      "  args : (Tensor x, float alpha = 0.0f)\n"
      "  output : Tensor(out)\n"
      "  infer_meta :\n"
      "    func : UnchangedInferMeta\n"
      "  kernel :\n"
      "    func : relu\n");
  const std::string json = signatures_to_json(derive_pir_signatures(lib, nullptr, f.diags), f.sources);
  CHECK(json ==
        "{\n"
        "\"pd_op.relu\": {\n"
        "\"class\": \"ReluOp\",\n"
        "\"file\": \"ops.yaml:1\",\n"
        "\"inputs\": [\n"
        "{\n"
        "\"name\": \"x\",\n"
        "\"type\": \"paddle::dialect::DenseTensorType\",\n"
        "\"optional\": false,\n"
        "\"no_need_buffer\": false,\n"
        "\"mutable_attr\": false\n"
        "}\n"
        "],\n"
        "\"attrs\": [\n"
        "{\n"
        "\"name\": \"alpha\",\n"
        "\"type\": \"pir::FloatAttribute\",\n"
        "\"data_type\": \"\"\n"
        "}\n"
        "],\n"
        "\"outputs\": [\n"
        "{\n"
        "\"name\": \"out\",\n"
        "\"type\": \"paddle::dialect::DenseTensorType\",\n"
        "\"optional\": false,\n"
        "\"intermediate\": false\n"
        "}\n"
        "],\n"
        "\"infer_meta\": \"UnchangedInferMeta\",\n"
        "\"kernel\": \"relu\"\n"
        "}\n"
        "}\n");
}
