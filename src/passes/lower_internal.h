// The Lowerer of lower_program (lower.h), shared by the files that define its members: lower.cpp (which ops are
// lowered and which values are live, the program's values and interface), lower_calls.cpp (each live op to a
// kernel call: its arguments, its kernel dtype, its results; the data-dependent symbols they bind) and
// lower_buffers.cpp (the values' buffers: views and in-place outputs share them, the rest get their own).
// Internal to passes/.
#pragma once

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include <fmt/format.h>

#include "passes/attr_values.h"
#include "passes/lower.h"
#include "passes/transforms.h"

namespace kforge::passes::lower_internal {

using ir::Op;
using ir::ValueId;

/// What one top-level op becomes.
enum class OpClass { kFeed, kParameter, kFetch, kWiring, kConstant, kCall, kOther };

class Lowerer {
 public:
  Lowerer(const ir::Program& program, const OpSet& ops, const Analysis& analysis, DiagnosticEngine& diags,
          const LowerOptions& options)
      : program_(program), ops_(ops), analysis_(analysis), diags_(diags), options_(options) {}

  std::optional<LoweredProgram> run();

 private:
  // ---- classification and liveness -----------------------------------------------------------------------

  const ValueInfo& info(ValueId v) const { return analysis_.values.at(v.index); }

  std::string name_of(const Op& op) const;

  bool is_static_constant(ValueId v) const;

  void classify();

  /// The operands of a call that it reads as tensors (mutable attributes known at generation time are not).
  std::vector<ValueId> tensor_operands(const Op& op) const;

  /// An interpolation size input left out under LowerOptions::sizes_from_output_dims: its integer contents are
  /// known, so the shape rule put them in the output's dims.
  bool size_from_output_dims(const Op& op, const std::string& input, ValueId v) const;

  /// A mutable attribute's operand whose contents are known (statically or as symbol expressions).
  bool attr_known(ValueId v) const;

  void need(ValueId v);

  void mark_needed();
  /// Adds the ops whose data-dependent counts value v's dims (or known contents) mention to counting_ops_.
  void mention_counts(ValueId v);

  // ---- values --------------------------------------------------------------------------------------------

  uint32_t add_value(ValueId source, ValueRole role, ir::DataType dtype, SymShape dims, SourceLoc loc);

  uint32_t lowered(ValueId v) const { return v.valid() ? value_index_.at(v.index) : kNone; }

  void build_interface();

  // ---- calls ---------------------------------------------------------------------------------------------

  /// The program values of a list operand: the operands of the builtin.combine that made it, or the results
  /// of the builtin.split of a kernel's list output.
  std::vector<ValueId> list_elements(ValueId list) const;

  std::optional<size_t> operand_index(const opdef::PirOpSignature& sig, const std::string& name) const;

  AttrConstant constant_from_data(const KnownData& d, opdef::ArgType type) const;

  /// Binds one param item of `op` (an input, an attribute or a literal).
  bool bind(const Op& op, const opdef::PirOpSignature& sig, const std::string& item, bool is_literal, KernelArg* arg);

  void bind_known_ints(const std::vector<SymExpr>& ints, KernelArg* arg);

  ir::DataType resolve_kernel_dtype(const Op& op, const opdef::PirOpSignature& sig, const KernelCall& call);

  /// A computed value for result `i` of `op` (or a scratch value for a result the op leaves out).
  uint32_t result_value(const Op& op, size_t i, const ValueInfo& vi, uint32_t call);

  const ValueInfo* result_info(const Op& op, size_t i) const;

  void build_call(const Op& op);

  void build_calls();

  /// Each data-dependent symbol gets the call and the value whose dim it is; found by the kernel, that value is laid
  /// out for the symbol's bound (LoweredValue::capacity). A symbol of an op that is not called (dead code) binds nothing: no value
  /// that is computed mentions it.
  void bind_data_dependent_symbols();

  /// Whether `e` mentions a data-dependent symbol (known only once its op ran).
  bool data_dependent(const SymExpr& e) const;

  void build_outputs();

  // ---- buffers -------------------------------------------------------------------------------------------

  uint32_t find(std::vector<uint32_t>& parent, uint32_t x);

  void assign_buffers();

  const ir::Program& program_;
  const OpSet& ops_;
  const Analysis& analysis_;
  DiagnosticEngine& diags_;
  const LowerOptions& options_;
  LoweredProgram out_;

  std::vector<ir::OpId> order_;
  std::map<uint32_t, OpClass> class_;
  std::map<uint32_t, const opdef::PirOpSignature*> signature_;
  std::set<uint32_t> needed_;      // program value indices read by a live op or fetched
  // The ops (indices) whose data-dependent counts a live op or a fetched value mentions (in its dims, or in the
  // known contents of an operand it reads as an attribute: a shape taken from the op's result): they run, whether or
  // not anything reads their results' elements.
  std::set<uint32_t> counting_ops_;
  std::set<uint32_t> live_calls_;  // op indices
  std::vector<uint32_t> value_index_;
  std::map<uint32_t, std::vector<ValueId>> split_of_;
};

}  // namespace kforge::passes::lower_internal
