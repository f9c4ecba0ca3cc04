// Shape inference and constant propagation, in one forward walk over a verified program (one needs the
// other: `shape64(x)` of a static x is a constant, and `reshape(x, that)` has a static shape).
//
// Shapes follow the ops' infer_meta rules, implemented here by infer_meta function name (shape_rules.h):
// kforge must know them at generation time. A program input's `-1` dims become symbols (sym_expr.h); shapes
// derived from them are expressions over the symbols. Each rule computes the dtype and dims of the op's
// results; where the program declares result types (PIR JSON and text always do), they are cross-checked:
// a different dtype, rank or static dim is an error at the op; a declared -1 where kforge infers a static
// dim, or the reverse, is fine (kforge keeps what it inferred). An op whose output shape depends on
// run-time data kforge cannot see (e.g. reshape by a computed tensor) is an error at the op.
//
// Constant propagation records the contents of values known at generation time: the results of full,
// full_int_array, assign_value_, full_like and full_with_tensor of a static shape, shape/shape64 (contents: the
// input dims, which may be symbolic), and of arithmetic, cast, reshape/slice/concat/stack/split/combine and
// whole reductions (sum, prod, max, min) on known small integer or floating tensors (add, subtract, multiply,
// divide, floor_divide, remainder, floor, scale, maximum, minimum). Integer contents are SymExprs, so
// `shape64(x)[0] * 4` of a dynamic x is known as `s0 * 4`, and the ops that take a shape, start or end from such
// a tensor get symbolic dims. Where a needed value is not known, the error traces it back to its origin
// (OpContext::runtime_value).
#pragma once

#include <map>
#include <optional>
#include <vector>

#include "passes/lowered_program.h"
#include "passes/op_set.h"
#include "passes/sym_expr.h"
#include "program/program.h"
#include "support/diagnostics.h"

namespace kforge::passes {

/// Contents of a value known at generation time. Floating dtypes use `floats`, the others `ints` (bools
/// 0/1). `splat`: every element equals the single stored one (a `full` of any size).
struct KnownData {
  ir::DataType dtype = ir::DataType::kUndefined;
  std::vector<int64_t> dims;  // always static
  bool splat = false;
  std::vector<double> floats;
  std::vector<SymExpr> ints;

  int64_t numel() const;
  /// True when no element depends on a symbol.
  bool is_static() const;
  double float_at(int64_t i) const;        // floats, or ints converted (constant ints only)
  SymExpr int_at(int64_t i) const;         // ints, or floats truncated toward zero
};

/// What the passes know about one value (tensor values; vectors list their element infos).
struct ValueInfo {
  bool known = false;  // set once shape inference reached the value
  bool is_vector = false;
  ir::DataType dtype = ir::DataType::kUndefined;
  SymShape dims;
  std::vector<ValueInfo> elements;  // is_vector
  std::optional<KnownData> data;
};

struct Analysis {
  std::vector<ValueInfo> values;  // indexed by ir::ValueId::index
  std::vector<Symbol> symbols;    // one per dynamic dim of a program input (Symbol::input: index in feeds())
  /// Results a hand-written program leaves out (program YAML may omit trailing results): by op index, the
  /// infos of every result in signature order (entries for results the op has are unused).
  std::map<uint32_t, std::vector<ValueInfo>> omitted_results;
  /// AnalysisOptions::equal_broadcast_dims as the analysis was made, and the pairs it took as equal.
  bool equal_broadcast_dims = false;
  std::vector<DimEquality> dim_equalities;

  const ValueInfo& info(ir::ValueId id) const { return values.at(id.index); }
};

/// Adds a data-dependent symbol (SymbolKind::kDataDependent, lowered_program.h) for dim `axis` of result `result` of
/// `op`: found by its kernel (at most `bound`, an expression over the input dims), or `before_call`, read from its
/// infer-meta just before it runs. Returns the symbol as an expression.
/// `element`: the element of a list result whose dim it is (UINT32_MAX: the result is a tensor).
SymExpr add_data_dependent_symbol(Analysis& analysis, ir::OpId op, uint32_t result, uint32_t axis, std::string name,
                                  SymExpr bound, bool before_call, uint32_t element = UINT32_MAX);

/// A program input's dim: (input index among the feeds, axis).
using InputDim = std::pair<uint32_t, uint32_t>;

struct AnalysisOptions {
  /// Largest element count whose contents constant propagation keeps (splats are always kept).
  int64_t max_known_elements = 4096;
  /// Dynamic input dims that take another input dim's symbol instead of one of their own (the generated code then
  /// checks at run time that the two are equal): dim -> the dim whose symbol it shares, an earlier one. Made by
  /// broadcast_symbol_aliases().
  std::map<InputDim, InputDim> symbol_aliases;
  /// Two symbolic dims that meet in a broadcast and are not both plain symbols (say `2 * floor_div(h, 2)`, an
  /// upsampled map, against `h`, the map it is added to) give the first operand's dim instead of their max, and
  /// are listed in Analysis::dim_equalities for the generated code to check: Paddle broadcasts them only when one
  /// is 1, which such a backend refuses. For backends whose kernels index every dim by an expression
  /// (--target cuda), as symbol_aliases.
  bool equal_broadcast_dims = false;
};

/// Infers shapes and known contents of every value of the top-level block. Returns nullopt when an error
/// was reported (an unknown infer_meta rule is an error at the op naming it).
std::optional<Analysis> analyze_program(const ir::Program& program, const OpSet& ops, DiagnosticEngine& diags,
                                        const AnalysisOptions& options = {});

/// Where two dynamic input dims meet in a broadcast (a dim max(a, b) of two symbols, which Paddle allows when one
/// of them is 1 at run time), the aliases that make them one symbol: every symbol of such a group maps to the
/// group's first. For backends whose kernels need every dim as an expression they can index by (--target cuda):
/// they take the two dims as equal and check it at run time, so a broadcast of a batch of 1 against another batch
/// is refused there. Empty when no dim is such a max.
std::map<InputDim, InputDim> broadcast_symbol_aliases(const Analysis& analysis);

/// Writes the inferred types back into the program: values whose type is unknown (program YAML results
/// with no declared type) or less precise (-1 where a dim is static) get the inferred dtype and dims
/// (symbolic dims print as -1). Returns the number of values changed.
size_t apply_inferred_types(ir::Program& program, const Analysis& analysis);

}  // namespace kforge::passes
