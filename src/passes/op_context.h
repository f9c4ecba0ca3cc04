// Internal to shape inference and constant propagation: one op seen through its op definition, with
// arguments addressed by name or by infer_meta param position, attribute values resolved from the op's
// attributes or from the known contents of a mutable attribute's operand, and the results to fill.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "passes/analysis.h"
#include "passes/op_set.h"
#include "program/program.h"
#include "support/diagnostics.h"

namespace kforge::passes::detail {

class OpContext {
 public:
  OpContext(const ir::Program& program, const ir::Op& op, const opdef::PirOpSignature& sig, Analysis& analysis);

  const ir::Op& op() const { return op_; }
  const opdef::Op& def() const { return *sig_.op; }
  const opdef::PirOpSignature& sig() const { return sig_; }
  /// The op YAML name ("relu" for pd_op.relu_).
  const std::string& base_name() const { return sig_.op->name; }

  // ---- arguments by name (inputs and attributes of the op YAML)
  /// The operand of input `name`; invalid when absent (a null operand or one left out).
  ir::ValueId operand(const std::string& name) const;
  /// The info of tensor input `name`, or null when the input is absent.
  const ValueInfo* tensor(const std::string& name) const;
  /// The element infos of a Tensor[] input (empty when absent).
  std::vector<const ValueInfo*> tensors(const std::string& name) const;

  /// Integer list attribute (IntArray, int[], int64_t[]): from the attribute, or the known contents of its
  /// operand (a tensor, or a list of one-element tensors). nullopt when only known at run time.
  std::optional<std::vector<SymExpr>> ints(const std::string& name) const;
  /// ints() when every element is a constant.
  std::optional<std::vector<int64_t>> static_ints(const std::string& name) const;
  /// An integer (int, int64_t, or a Scalar given as an integer or a whole number).
  std::optional<SymExpr> int_value(const std::string& name) const;
  std::optional<int64_t> static_int(const std::string& name) const;
  std::optional<double> float_value(const std::string& name) const;  // float, double, Scalar
  std::optional<bool> bool_value(const std::string& name) const;
  std::optional<std::string> string_value(const std::string& name) const;
  std::optional<ir::DataType> dtype_value(const std::string& name) const;
  std::vector<double> floats(const std::string& name) const;                   // float[] / double[]
  /// The attribute itself (converted by the verifier), or null.
  const ir::Attribute* attribute(const std::string& name) const;

  // ---- infer_meta params by position
  const std::vector<std::string>& params() const { return params_; }
  const std::string& param(size_t i) const;  // "" past the end

  // ---- results, in signature order
  size_t result_count() const { return sig_.results.size(); }
  /// The program value of result `i`, or invalid when the op has fewer results (hand-written programs).
  ir::ValueId result(size_t i) const;
  void set_result(size_t i, ir::DataType dtype, SymShape dims);
  void set_result_list(size_t i, std::vector<ValueInfo> elements);
  ValueInfo* result_info(size_t i);

  /// detail::broadcast_shapes of x and y; where the analysis takes broadcast dims as equal
  /// (AnalysisOptions::equal_broadcast_dims), records each such pair at this op (Analysis::dim_equalities).
  std::optional<SymShape> broadcast(const SymShape& x, const SymShape& y);
  /// Records a == b (two dims the op requires equal, as bmm's batches) where the analysis takes broadcast dims as
  /// equal, so that later passes see one dim (checked at run time); false where it does not.
  bool take_equal(const SymExpr& a, const SymExpr& b);

  /// A new data-dependent symbol (SymbolKind::kDataDependent) for dim `axis` of result `result`: a size the op finds
  /// in its input's data (nonzero's rows), at most `bound` (an expression over the input dims).
  SymExpr data_dependent_dim(size_t result, uint32_t axis, const SymExpr& bound, const std::string& meaning);
  /// The same for dim `axis` of element `element` of list result `result` (set_result_list).
  SymExpr data_dependent_element_dim(size_t result, uint32_t element, uint32_t axis, const SymExpr& bound,
                                     const std::string& meaning);

  /// The problem of a rule that needs the contents of argument `name` (a shape, start, end, ...) where they are not
  /// known at generation time: the message says why, traced back through the ops that computed the value to where
  /// the trail ends (the data of a program input, an op whose output size depends on data, an op kforge does not
  /// evaluate), and a note at that op is added to notes() for the caller to attach to the error.
  std::string runtime_value(const std::string& name);
  /// Notes for the error the rule returns (runtime_value's).
  const std::vector<DiagNote>& notes() const { return notes_; }
  /// Whether the rule failed because a shape argument's values are known only at run time (runtime_value's second
  /// case): the analysis can still give the results dims that the op's infer-meta computes then.
  bool read_at_run_time() const { return read_at_run_time_; }

  /// The analysis being filled.
  Analysis& analysis() { return analysis_; }
  const ir::Program& program() const { return program_; }

 private:
  std::optional<size_t> operand_index(const std::string& name) const;

  const ir::Program& program_;
  const ir::Op& op_;
  const opdef::PirOpSignature& sig_;
  Analysis& analysis_;
  std::vector<std::string> params_;
  std::vector<DiagNote> notes_;
  bool read_at_run_time_ = false;
};

/// The shape rule for infer_meta function `func`; sets every result's dtype and dims. Returns "" on
/// success, else the problem (reported at the op by the caller). "unknown-rule" when kforge has no rule.
std::string run_shape_rule(const std::string& func, OpContext& ctx);
/// True when kforge has a rule for `func`.
bool has_shape_rule(const std::string& func);

/// Constant propagation for the op (by op YAML name): sets ValueInfo::data of results whose contents are
/// known at generation time. Runs after the shape rule.
void propagate_constants(OpContext& ctx, int64_t max_elements);

}  // namespace kforge::passes::detail
