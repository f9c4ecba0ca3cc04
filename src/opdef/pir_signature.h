// PIR op signatures derived from op YAML and op_compat.yaml exactly as Paddle's op_gen.py derives
// them (docs/op-yaml.md, "How the ops become PIR ops"):
//   - operands: the tensor inputs in order, then the mutable attributes (a Scalar* or IntArray attribute
//     that op_compat marks with support_tensor / tensor_name / tensors_name), in attribute order;
//   - attributes: the other attributes, with their PIR attribute class and Paddle's data_type;
//   - results: the outputs; an intermediate output is also optional;
//   - one op per name, plus the in-place twin `name_` when the op has inplace or view pairs, and one op
//     per kernel when `kernel.func` lists several (named after the kernel);
//   - infer_meta and kernel function names (empty for invoke and composite-only ops).
// Checked against Paddle's own output (refdata/paddle/pir_op_signatures.json) by
// tests/unit/opdef/test_pir_signature_oracle.cpp.
#pragma once

#include <string>
#include <vector>

#include "opdef/op_compat.h"
#include "opdef/op_library.h"
#include "support/diagnostics.h"

namespace kforge::opdef {

struct PirOperand {
  std::string name;
  std::string type;  // paddle::dialect::DenseTensorType, pir::VectorType<...>, paddle::dialect::ScalarAttribute...
  bool optional = false;
  bool no_need_buffer = false;
  bool mutable_attr = false;
  std::string data_type;  // mutable attributes: the C++ type of the value (op_compat data_type)
  SourceLoc loc;
};

struct PirAttribute {
  std::string name;
  std::string type;       // pir::Int32Attribute, paddle::dialect::ScalarAttribute, ...
  std::string data_type;  // Scalar*/IntArray: Paddle's opmaker type ("float", "std::vector<int64_t>"); else ""
  SourceLoc loc;
};

struct PirResult {
  std::string name;
  std::string type;
  bool optional = false;
  bool intermediate = false;
  SourceLoc loc;
};

struct PirOpSignature {
  std::string name;        // "pd_op.abs_"
  std::string class_name;  // "Abs_Op", as op_gen.py names the C++ class
  const Op* op = nullptr;  // the YAML op it comes from
  bool inplace = false;    // the in-place twin
  std::vector<PirOperand> operands;
  std::vector<PirAttribute> attributes;
  std::vector<PirResult> results;
  std::string infer_meta;  // function name, or ""
  std::string kernel;      // kernel function name, or ""
};

struct PirSignatureOptions {
  std::string dialect = "pd_op";
  /// Ops Paddle writes by hand instead of generating (op_gen.py PD_MANUAL_OP_LIST): no signature is
  /// derived for these names.
  std::vector<std::string> manual_ops = {"add_n_",    "split_grad", "expand",
                                         "increment", "increment_", "assign_out_"};
  /// Dense ops op_gen.py AutoCodeGen leaves out whole, twins included: static_backward.yaml's add_n_grad
  /// exists only so that AddNOp gets its Vjp.
  std::vector<std::string> vjp_only_ops = {"add_n_grad"};
};

/// Signatures of every op of `library` in document order (each op, then its twin, each expanded per
/// kernel). `compat` may be null (then no attribute is mutable). Two ops deriving the same PIR name
/// is an error reported to `diags` at the second op.
std::vector<PirOpSignature> derive_pir_signatures(const OpLibrary& library, const OpCompat* compat,
                                                  DiagnosticEngine& diags, const PirSignatureOptions& options = {});

/// Paddle's to_pascal_case + "Op": "abs" -> "AbsOp", "abs_" -> "Abs_Op", "fft_c2c" -> "FftC2cOp"; with
/// `inplace_suffix` an extra '_' ("adam_dense_param_sparse_grad" -> "AdamDenseParamSparseGrad_Op"); for a
/// sparse op "Sp" comes before that '_' ("abs_coo" -> "AbsCooSpOp", "batch_norm_" -> "BatchNorm_SpOp").
std::string pir_class_name(std::string_view name, bool inplace_suffix, bool sparse = false);

/// The signatures as JSON text in the structure of refdata/paddle/pir_op_signatures.json:
///   {"pd_op.abs": {"class", "file", "inputs": [{name, type, optional, no_need_buffer, mutable_attr}],
///                  "attrs": [{name, type, data_type}], "outputs": [{name, type, optional, intermediate}],
///                  "infer_meta", "kernel"}, ...}
/// with one key or value per line like Paddle's dump. "file" is where the op is defined
/// ("ops.yaml:8"), not the name of the .cc file Paddle's build would generate it into.
std::string signatures_to_json(const std::vector<PirOpSignature>& signatures, const SourceManager& sources);

}  // namespace kforge::opdef
