// kforge's reference interpreter: runs a Program op by op, as an executor does. Every op is looked up by
// name in an OpRegistry on every run, reads its attributes from a map by name, runs infer_meta and allocates
// its outputs on every call. It is the oracle of the end-to-end tests and tools/check-program, and the
// baseline of the dispatch benchmark, so it shares nothing with code generation except the kernels.
//
// Supported: builtin.parameter, pd_op.data / pd_op.feed, pd_op.fetch / builtin.shadow_output,
// builtin.combine / builtin.split / builtin.slice, and every pd_op of the registry (in-place twins included).
// Anything else (control flow, kernel-dialect ops, ops with no reference kernel) is reported by prepare().
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "attr_map.h"
#include "program/program.h"
#include "registry.h"
#include "support/diagnostics.h"
#include "tensor_bundle.h"

namespace kforge::interp {

/// A feed or parameter the program reads: its name and declared type (-1 for dynamic dims).
struct TensorSlot {
  std::string name;
  kforge::DataType dtype = kforge::DataType::kUndefined;
  std::vector<int64_t> dims;
  bool positive = false;  // feeds batch_norm's variance: random values must be positive
};

/// One op result recorded by a traced run.
struct TraceEntry {
  size_t op_index = 0;    // position among the executed ops
  std::string op_name;    // "pd_op.matmul"
  SourceLoc loc;          // the op
  std::string value_key;  // value_key() of the result
  kforge::Tensor tensor;  // a copy that owns its bytes
};

/// The key under which traces name a value: its source id ("%4", "4", the YAML name), else "v<id>". The
/// generated code's trace hooks use the same key.
std::string value_key(const ir::Program& program, ir::ValueId id);

class Interpreter {
 public:
  /// Checks that every op can run and caches the per-op attribute maps. Unsupported ops are reported to
  /// `diags` at their location (all of them, then one summary error naming each unsupported op once);
  /// returns nullopt then.
  /// The program and `sources` must outlive the interpreter.
  static std::optional<Interpreter> prepare(const ir::Program& program, const SourceManager& sources,
                                            DiagnosticEngine& diags,
                                            const OpRegistry& registry = OpRegistry::builtin());

  const std::vector<TensorSlot>& feeds() const { return feeds_; }
  const std::vector<TensorSlot>& parameters() const { return parameters_; }
  /// Fetch names, in program order.
  const std::vector<std::string>& output_names() const { return output_names_; }
  /// Ops executed per run (feeds, parameters, fetches and builtin ops excluded).
  size_t kernel_op_count() const;

  /// Runs the program. `feeds` and `params` are looked up by name; outputs come back in output_names()
  /// order. With `trace`, every op result is copied into it. Errors name the op and its location.
  kforge::Status run(const std::vector<bundle::NamedTensor>& feeds, const std::vector<bundle::NamedTensor>& params,
                     std::vector<bundle::NamedTensor>* outputs, std::vector<TraceEntry>* trace = nullptr) const;

 private:
  struct Instr {
    // kIf: pd_op.if, run as written (the one branch its condition picks), unlike the generated code, which
    // computes both and selects (passes/if_conversion.h): an oracle for that rewrite.
    enum class Kind { kParameter, kFeed, kFetch, kCombine, kSplit, kSlice, kOp, kIf };
    Kind kind = Kind::kOp;
    std::string name;  // registry name ("add"), feed/parameter/fetch name
    std::string full_name;
    SourceLoc loc;
    AttrMap attrs;
    std::vector<int64_t> operands;  // value indices; -1 for a null operand
    std::vector<uint32_t> results;
    int64_t slice_index = 0;
    std::vector<Instr> branches[2];       // kIf: the then and else blocks' instructions
    std::vector<int64_t> yields[2];       // kIf: the values each block yields, one per result
  };
  struct RunState;

  /// Instructions for `ops` (a block's, in order), recursing into pd_op.if's blocks; what cannot run is reported
  /// and listed in `unsupported`.
  void compile_ops(const std::vector<ir::OpId>& ops, const std::set<uint32_t>& positive, DiagnosticEngine& diags,
                   std::vector<Instr>* out, std::vector<std::string>* unsupported);
  kforge::Status run_instrs(const std::vector<Instr>& instrs, RunState& s) const;

  const ir::Program* program_ = nullptr;
  const SourceManager* sources_ = nullptr;
  const OpRegistry* registry_ = nullptr;
  std::vector<Instr> instrs_;
  std::vector<TensorSlot> feeds_;
  std::vector<TensorSlot> parameters_;
  std::vector<std::string> output_names_;
  std::vector<std::string> keys_;  // value_key per value index
  size_t value_count_ = 0;
};

/// Deterministic random tensors for the slots: float dtypes uniform in [-1, 1) ([0.5, 1.5) for `positive`
/// slots), integers in [0, 4), bools 0/1; one stream per tensor, seeded by `seed` and the slot's name, so a
/// tensor's values do not depend on which other tensors exist. Dynamic dims come from `shapes` (by slot
/// name), else 1.
kforge::Status random_tensors(const std::vector<TensorSlot>& slots, uint64_t seed,
                              const std::map<std::string, std::vector<int64_t>>& shapes,
                              std::vector<bundle::NamedTensor>* out);

}  // namespace kforge::interp
