// The rules for loading several of Paddle's op files together (docs/op-yaml.md): sparse op files with
// their own name space and `_sp` PIR ops, ops without outputs, keyword arguments in calls, uniform
// kernel signatures, and the op_gen.py special cases (add_n generated, add_n_grad left out). Each rule on
// a small hand-written input, with the exact diagnostic text.
#include <catch2/catch.hpp>

#include "opdef/pir_signature.h"
#include "opdef_test_util.h"

using namespace kforge;
using namespace kforge::opdef;
using kforge::opdef::testing::Fixture;
using kforge::opdef::testing::find_signature;

namespace {

const char* kDense = R"(- op : abs
  args : (Tensor x)
  output : Tensor(out)
  infer_meta :
    func : UnchangedInferMeta
  kernel :
    func : abs
  inplace : (x -> out)
- op : scale
  args : (Tensor x, Scalar scale=1.0, IntArray axes={})
  output : Tensor(out)
  infer_meta :
    func : UnchangedInferMeta
    param : [x]
  kernel :
    func : scale
)";

const char* kSparse = R"(- op : abs
  args : (Tensor x)
  output : Tensor(out)
  infer_meta :
    func : UnchangedInferMeta
  kernel :
    func : abs_coo{sparse_coo -> sparse_coo},
           abs_csr{sparse_csr -> sparse_csr}
- op : coalesce
  args : (Tensor x)
  output : Tensor(out)
  infer_meta :
    func : UnchangedInferMeta
  kernel :
    func : coalesce_coo{sparse_coo -> sparse_coo}
- op : batch_norm_
  args : (Tensor x, Tensor mean)
  output : Tensor(out), Tensor(mean_out)
  infer_meta :
    func : UnchangedInferMeta
    param : [x]
  kernel :
    func : batch_norm_coo {sparse_coo, dense -> sparse_coo, dense}
  inplace : (mean -> mean_out)
- op : relu
  args : (Tensor x)
  output : Tensor(out)
  infer_meta :
    func : UnchangedInferMeta
  kernel :
    func : relu_coo {sparse_coo -> sparse_coo},
           relu_csr {sparse_csr -> sparse_csr}
  inplace : (x -> out)
- op : scale
  args : (Tensor x, Scalar scale=1.0, IntArray axes={})
  output : Tensor(out)
  infer_meta :
    func : UnchangedInferMeta
    param : [x]
  kernel :
    func : scale_coo{sparse_coo -> sparse_coo}
)";

const char* kSparseBackward = R"(- backward_op : scale_grad
  forward : scale(Tensor x, Scalar scale, IntArray axes) -> Tensor(out)
  args : (Tensor out_grad, Scalar scale=1.0, IntArray axes={})
  output : Tensor(x_grad)
  infer_meta :
    func : UnchangedInferMeta
    param : [out_grad]
  kernel :
    func : scale_coo_grad{sparse_coo -> sparse_coo}
)";

const char* kScaleCompat = R"(- op : scale
  backward : scale_grad
  scalar :
    scale :
      data_type : float
      support_tensor : true
  int_array :
    axes :
      data_type : int
      support_tensor : true
)";

std::vector<std::string> names_and_classes(const std::vector<PirOpSignature>& sigs) {
  std::vector<std::string> out;
  for (const PirOpSignature& s : sigs) out.push_back(s.name + " " + s.class_name);
  return out;
}

}  // namespace

TEST_CASE("sparse op files have their own name space and derive <kernel>_sp PIR ops") {
  Fixture f;
  const OpLibrary lib = f.load_kinds({{"ops.yaml", kDense, OpFileKind::kDense},
                                      {"sparse_ops.yaml", kSparse, OpFileKind::kSparse},
                                      {"sparse_backward.yaml", kSparseBackward, OpFileKind::kSparse}});
  INFO(f.messages());
  REQUIRE(f.diags.error_count() == 0);
  CHECK(f.diags.warning_count() == 0);
  REQUIRE(lib.find("abs"));
  REQUIRE(lib.find_sparse("abs"));
  CHECK(lib.find("abs") != lib.find_sparse("abs"));
  CHECK(lib.find("coalesce") == nullptr);
  CHECK(lib.find_sparse("coalesce")->display_name() == "coalesce (sparse)");

  const OpCompat compat = f.load_compat(kScaleCompat);
  const std::vector<PirOpSignature> sigs = derive_pir_signatures(lib, &compat, f.diags);
  REQUIRE(f.diags.error_count() == 0);
  CHECK(names_and_classes(sigs) == std::vector<std::string>{
                           "pd_op.abs AbsOp",
                           "pd_op.abs_ Abs_Op",
                           "pd_op.scale ScaleOp",
                           // one op per kernel, `_sp` after the kernel name
                           "pd_op.abs_coo_sp AbsCooSpOp",
                           "pd_op.abs_csr_sp AbsCsrSpOp",
                           // one kernel: the op name
                           "pd_op.coalesce_sp CoalesceSpOp",
                           // in place by name: `sp_` after its '_', `Sp` before it in the class
                           "pd_op.batch_norm_sp_ BatchNorm_SpOp",
                           // a twin of a multi-kernel op: kernel, '_', `sp_`
                           "pd_op.relu_coo_sp ReluCooSpOp",
                           "pd_op.relu_csr_sp ReluCsrSpOp",
                           "pd_op.relu_coo_sp_ ReluCooSp_Op",
                           "pd_op.relu_csr_sp_ ReluCsrSp_Op",
                           "pd_op.scale_sp ScaleSpOp",
                           "pd_op.scale_grad_sp ScaleGradSpOp",
                       });
  // Kernel signatures give the tensor types.
  const PirOpSignature* bn = find_signature(sigs, "pd_op.batch_norm_sp_");
  REQUIRE(bn);
  CHECK(bn->operands[0].type == "paddle::dialect::SparseCooTensorType");
  CHECK(bn->operands[1].type == "paddle::dialect::DenseTensorType");

  // op_compat applies by the bare name. The Scalar is mutable in the dense op and in the sparse backward
  // op, not in the sparse forward op (op_gen.py skips `scalar` for sparse_ops.yaml); IntArray is in all.
  auto operands = [&](const std::string& name) {
    std::vector<std::string> out;
    for (const PirOperand& o : find_signature(sigs, name)->operands) out.push_back(o.name);
    return out;
  };
  CHECK(operands("pd_op.scale") == std::vector<std::string>{"x", "scale", "axes"});
  CHECK(operands("pd_op.scale_sp") == std::vector<std::string>{"x", "axes"});
  CHECK(find_signature(sigs, "pd_op.scale_sp")->attributes.at(0).name == "scale");
  CHECK(operands("pd_op.scale_grad_sp") == std::vector<std::string>{"out_grad", "scale", "axes"});
}

TEST_CASE("a sparse op is redefined only by another sparse op") {
  Fixture f;
  f.load_kinds({{"sparse_ops.yaml", kSparse, OpFileKind::kSparse},
                {"more_sparse.yaml",
                 "- op : coalesce\n"
                 "  args : (Tensor x)\n"
                 "  output : Tensor(out)\n"
                 "  kernel :\n"
                 "    func : coalesce_coo{sparse_coo -> sparse_coo}\n",
                 OpFileKind::kSparse}});
  CHECK(f.messages() ==
        "more_sparse.yaml:1:8: error: redefinition of sparse op 'coalesce'\n"
        " - op : coalesce\n"
        "        ^\n"
        "sparse_ops.yaml:9:8: note: previous definition is here\n"
        " - op : coalesce\n"
        "        ^\n");
}

TEST_CASE("a sparse op file given as a dense one: the redefinition says what to do") {
  Fixture f;
  f.load_kinds({{"ops.yaml", kDense, OpFileKind::kDense}, {"sparse_ops.yaml", kSparse, OpFileKind::kDense}});
  CHECK(f.diags.error_count() == 2);  // abs and scale
  CHECK(f.messages().substr(0, f.messages().find("sparse_ops.yaml:34")) ==
        "sparse_ops.yaml:1:8: error: redefinition of op 'abs'\n"
        " - op : abs\n"
        "        ^\n"
        "ops.yaml:1:8: note: previous definition is here\n"
        " - op : abs\n"
        "        ^\n"
        "sparse_ops.yaml:7:12: note: kernel 'abs_coo' takes sparse tensors: a sparse op file (Paddle's "
        "sparse_ops.yaml, sparse_backward.yaml) is loaded with --sparse-ops, where its ops have their own names\n"
        "     func : abs_coo{sparse_coo -> sparse_coo},\n"
        "            ^\n");
}

TEST_CASE("a dense op file given as a sparse one is a warning") {
  Fixture f;
  const OpLibrary lib = f.load_kinds({{"ops.yaml", kDense, OpFileKind::kSparse}});
  CHECK(lib.size() == 2);
  CHECK(f.diags.error_count() == 0);
  CHECK(f.messages() ==
        "ops.yaml:1:1: warning: no op of this sparse op file has a sparse kernel ({... sparse_coo ...} or "
        "{... sparse_csr ...}); dense op files are loaded with --ops\n"
        " - op : abs\n"
        " ^\n");
}

TEST_CASE("an op without outputs") {
  Fixture f;
  const OpLibrary lib = f.load(
      "- op : send_v2\n"
      "  args : (Tensor x, int peer = 0)\n"
      "  output :\n"
      "  infer_meta :\n"
      "    func : SendV2InferMeta\n"
      "    param : [peer]\n"
      "  kernel :\n"
      "    func : send_v2\n");
  INFO(f.messages());
  REQUIRE(f.diags.error_count() == 0);
  REQUIRE(lib.find("send_v2"));
  CHECK(lib.find("send_v2")->outputs.empty());
  CHECK(f.sources.line_col(lib.find("send_v2")->output_loc).line == 3);
  const std::vector<PirOpSignature> sigs = derive_pir_signatures(lib, nullptr, f.diags);
  REQUIRE(sigs.size() == 1);
  CHECK(sigs[0].results.empty());
  CHECK(sigs[0].operands.size() == 1);

  // PyYAML's spellings of null mean the same.
  for (const char* null_word : {"~", "null", "Null", "NULL"}) {
    Fixture n;
    const OpLibrary l = n.load(std::string("- op : f\n  args : (Tensor x)\n  output : ") + null_word + "\n");
    INFO(null_word << "\n" << n.messages());
    REQUIRE(l.find("f"));
    CHECK(l.find("f")->outputs.empty());
  }

  // An empty quoted string is not "no outputs".
  Fixture g;
  g.load("- op : bad\n  args : (Tensor x)\n  output : ''\n");
  CHECK(g.messages() ==
        "ops.yaml:3:3: error: 'output' has no value\n"
        "   output : ''\n"
        "   ^\n");
}

TEST_CASE("call arguments may be given by keyword") {
  Fixture f;
  const OpLibrary lib = f.load(
      "- backward_op : matmul_double_grad\n"
      "  forward : matmul_grad (Tensor x, Tensor y, Tensor grad_out) -> Tensor(x_grad), Tensor(y_grad)\n"
      "  args : (Tensor x, Tensor y, Tensor grad_out, bool transpose_x=false)\n"
      "  output : Tensor(x_grad)\n"
      "  composite : matmul_double_grad(x, y, grad_out, transpose_x=false, c = a == b)\n"
      "  invoke : foo(x, k=x.dims()[0] <= 2)\n");
  INFO(f.messages());
  REQUIRE(f.diags.error_count() == 0);
  const Op* op = lib.find("matmul_double_grad");
  REQUIRE(op);
  CHECK(op->composite->args == std::vector<std::string>{"x", "y", "grad_out", "false", "a == b"});
  CHECK(op->composite->keywords == std::vector<std::string>{"", "", "", "transpose_x", "c"});
  CHECK(op->composite->has_keywords());
  CHECK(op->invoke->args == std::vector<std::string>{"x", "x.dims()[0] <= 2"});
  CHECK(op->invoke->keywords == std::vector<std::string>{"", "k"});

  // `a == b` alone is an expression, not a keyword; a keyword needs a value.
  Fixture g;
  const OpLibrary lib2 = g.load(
      "- op : f\n  args : (Tensor x)\n  output : Tensor(out)\n  invoke : foo(x == x)\n"
      "- op : g\n  args : (Tensor x)\n  output : Tensor(out)\n  invoke : foo(k=)\n");
  REQUIRE(lib2.find("f"));
  CHECK(lib2.find("f")->invoke->keywords == std::vector<std::string>{""});
  CHECK(g.messages() ==
        "ops.yaml:8:18: error: bad argument 1 of 'foo' in 'invoke': expected an expression, found ')'\n"
        "   invoke : foo(k=)\n"
        "                  ^\n");
}

TEST_CASE("every kernel of an op has a signature, or none has") {
  Fixture f;
  const OpLibrary lib = f.load(
      "- op : scale\n"
      "  args : (Tensor x)\n"
      "  output : Tensor(out)\n"
      "  kernel :\n"
      "    func : scale {dense -> dense}, scale_sr\n");
  CHECK(lib.size() == 0);
  CHECK(f.messages() ==
        "ops.yaml:5:36: error: kernel 'scale_sr' of op 'scale' has no {... -> ...} signature but kernel 'scale' "
        "has one: give every kernel a signature or none\n"
        "     func : scale {dense -> dense}, scale_sr\n"
        "                                    ^\n"
        "ops.yaml:5:12: note: kernel 'scale' is here\n"
        "     func : scale {dense -> dense}, scale_sr\n"
        "            ^\n");
}

TEST_CASE("op_gen.py generates add_n but not add_n_grad") {
  Fixture f;
  const OpLibrary lib = f.load(
      "- op : add_n\n"
      "  args : (Tensor[] inputs)\n"
      "  output : Tensor(out)\n"
      "  infer_meta :\n"
      "    func : AddNInferMeta\n"
      "  kernel :\n"
      "    func : add_n\n"
      "  backward : add_n_grad\n"
      "- backward_op : add_n_grad\n"
      "  forward : add_n (Tensor[] inputs) -> Tensor(out)\n"
      "  args : (Tensor[] inputs, Tensor out_grad)\n"
      "  output : Tensor[](inputs_grad)\n");
  REQUIRE(f.diags.error_count() == 0);
  std::vector<PirOpSignature> sigs = derive_pir_signatures(lib, nullptr, f.diags);
  CHECK(names_and_classes(sigs) == std::vector<std::string>{"pd_op.add_n AddNOp"});
  // A program may still use every op (passes::OpSet derives with empty lists).
  PirSignatureOptions all;
  all.manual_ops.clear();
  all.vjp_only_ops.clear();
  sigs = derive_pir_signatures(lib, nullptr, f.diags, all);
  CHECK(names_and_classes(sigs) == std::vector<std::string>{"pd_op.add_n AddNOp", "pd_op.add_n_grad AddNGradOp"});
}
