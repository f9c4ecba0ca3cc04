// OpLibrary: the op definitions of one or more op YAML files (Paddle's format, schemas/op.schema.json,
// plus the kforge extension keys compute / reduce / pattern), immutable once loaded.
//
// Ops are kept in document order (files in the order given). Every element carries the SourceLoc of
// the text it came from, inside the YAML buffer registered in the SourceManager, so later layers (the
// program verifier, codegen) can report errors against the op definition. Text that is C++ (defaults,
// size expressions, invoke arguments) is kept verbatim; the kforge `compute` / `reduce` expressions are
// kept as raw text and parsed by src/scalar_expr/.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "opdef/types.h"
#include "support/source_manager.h"

namespace kforge::opdef {

/// A name as written in a list (optional, traits, backward, ...), with its location.
struct NameRef {
  std::string name;
  SourceLoc loc;
};

/// Raw text of a value that another layer interprets (compute, reduce parts), with its location.
struct RawText {
  std::string text;
  SourceLoc loc;
};

struct DefaultValue {
  std::string text;  // verbatim C++ text, trimmed (a folded line break reads as one space)
  DefaultKind kind = DefaultKind::kExpression;
  std::vector<DefaultValue> items;  // kList only: the elements, each classified
  SourceLoc loc;
};

/// A tensor argument (`Tensor x`, `Tensor[] xs`).
struct Input {
  std::string name;
  ArgType type = ArgType::kTensor;  // kTensor or kTensorList
  bool optional = false;            // named by `optional`
  bool no_need_buffer = false;      // named by `no_need_buffer`
  bool skip_transform = false;      // named by data_transform.skip_transform
  bool support_trans_dtype = false; // named by data_transform.support_trans_dtype
  SourceLoc loc;                    // the type
  SourceLoc name_loc;

  bool is_list() const { return type == ArgType::kTensorList; }
};

/// A non-tensor argument.
struct Attribute {
  std::string name;
  ArgType type = ArgType::kInt;
  std::optional<DefaultValue> default_value;
  SourceLoc loc;  // the type
  SourceLoc name_loc;
};

struct Output {
  std::string name;          // "out" when the YAML gives none
  bool name_given = false;
  OutputType type = OutputType::kTensor;
  std::optional<std::string> size_expr;  // `{...}` of a vector output, verbatim
  SourceLoc size_loc;
  bool optional = false;      // named by `optional`, or in-place on an optional input (see below)
  bool intermediate = false;  // named by `intermediate`
  SourceLoc loc;
};

/// An item of a `param` list: an argument name, or a literal such as `false` (schemas/op.schema.json).
struct ParamItem {
  std::string text;
  bool is_literal = false;
  SourceLoc loc;
};

struct InferMeta {
  std::string func;
  SourceLoc func_loc;
  std::optional<std::vector<ParamItem>> param;  // absent: Paddle uses the kernel param (see effective_*)
  std::optional<NameRef> spmd_rule;
  std::optional<NameRef> local_shape;   // names an output
  std::optional<NameRef> global_shape;  // names an output
  SourceLoc loc;
};

/// One kernel of `kernel.func`, with its optional `{in kinds -> out kinds}` signature.
struct KernelFunc {
  std::string name;
  bool has_signature = false;
  std::vector<TensorKind> input_kinds;
  std::vector<TensorKind> output_kinds;
  SourceLoc loc;

  /// Whether its signature names a sparse_coo or sparse_csr tensor.
  bool takes_sparse() const;
};

/// One candidate of kernel.data_type / backend / layout.
struct Candidate {
  std::string name;         // an argument name, or the constant (DataType::FLOAT32)
  bool to_complex = false;  // complex(x)
  bool is_constant = false; // a qualified name such as DataType::FLOAT32
  SourceLoc loc;
};

struct Candidates {
  bool ordered = false;  // joined by '>' (priority order) rather than ','
  std::vector<Candidate> items;
  SourceLoc loc;
};

struct Kernel {
  std::vector<KernelFunc> funcs;
  std::optional<std::vector<ParamItem>> param;  // absent: all inputs then all attributes
  std::optional<Candidates> data_type;
  std::optional<Candidates> backend;
  std::optional<Candidates> layout;
  std::optional<NameRef> force_backend;
  SourceLoc loc;

  /// Paddle's `dispatch`: true when the first kernel has a `{... -> ...}` signature.
  bool has_dispatch() const { return !funcs.empty() && funcs.front().has_signature; }
};

/// `(in -> out)` of `inplace` or `view`.
struct InplacePair {
  std::string input;
  std::string output;
  SourceLoc loc;  // the input name
  SourceLoc output_loc;
};

/// `func(arg, ...)` of `invoke` and `composite`; the arguments are C++ expressions, verbatim. An argument
/// may be given by keyword, Python style (`transpose_x=false` in Paddle's static_backward.yaml).
struct Call {
  std::string func;
  std::vector<std::string> args;
  std::vector<std::string> keywords;  // per argument: the keyword, or "" for a positional argument
  std::vector<SourceLoc> arg_locs;
  SourceLoc loc;

  bool has_keywords() const;
};

/// `forward : name (args) -> outputs` of a backward op.
struct Forward {
  std::string op;
  std::vector<Input> inputs;
  std::vector<Attribute> attributes;
  std::vector<Output> outputs;
  SourceLoc loc;
};

struct DataTransform {
  std::vector<NameRef> skip_transform;
  std::vector<NameRef> support_trans_dtype;
  SourceLoc loc;
};

/// kforge extension `reduce`: how a reduction combines values.
struct Reduce {
  RawText init;
  RawText combine;
  std::optional<RawText> finalize;
  NameRef axis;  // the attribute that lists the reduced axes
  SourceLoc loc;
};

struct Pattern {
  PatternKind kind = PatternKind::kOpaque;
  SourceLoc loc;
};

/// kforge extension `row_pattern`: softmax | layer_norm | rms_norm (types.h).
struct RowPattern {
  RowPatternKind kind = RowPatternKind::kSoftmax;
  SourceLoc loc;
};

struct Op {
  std::string name;
  bool is_backward = false;  // written as `backward_op :`
  // From a sparse op file (Paddle's sparse_ops.yaml, sparse_backward.yaml; `--sparse-ops`): a separate
  // op with its own name space, so `abs` here and the dense `abs` are different ops. Paddle derives one
  // PIR op per kernel from it, suffixed `_sp` (pd_op.abs_coo_sp, pd_op.abs_csr_sp).
  bool sparse = false;
  SourceLoc loc;             // the op name
  uint32_t file = SourceLoc::kNoFile;

  std::vector<Input> inputs;          // in argument order; all tensor arguments come first
  std::vector<Attribute> attributes;  // in argument order
  std::vector<Output> outputs;
  SourceLoc args_loc;
  SourceLoc output_loc;

  std::optional<InferMeta> infer_meta;
  std::optional<Kernel> kernel;
  std::vector<InplacePair> inplace;  // empty when the key is absent
  bool has_inplace_key = false;
  std::vector<InplacePair> view;
  bool has_view_key = false;
  std::vector<NameRef> optional_names;
  std::vector<NameRef> intermediate_names;
  std::vector<NameRef> no_need_buffer_names;
  std::optional<DataTransform> data_transform;
  std::optional<Call> invoke;
  std::optional<Call> composite;
  std::optional<Forward> forward;
  std::optional<NameRef> backward;
  std::vector<NameRef> traits;
  std::vector<NameRef> interfaces;
  std::optional<bool> support_dygraph_mode;
  std::vector<NameRef> support_tensor;

  // kforge extensions (possibly added by a later overlay entry).
  std::optional<RawText> compute;
  std::optional<Reduce> reduce;
  std::optional<Pattern> pattern;
  std::optional<RowPattern> row_pattern;

  const Input* find_input(std::string_view n) const;
  const Attribute* find_attribute(std::string_view n) const;
  const Output* find_output(std::string_view n) const;

  /// The name shown to users: `abs`, or `abs (sparse)` for a sparse op.
  std::string display_name() const { return sparse ? name + " (sparse)" : name; }

  /// Paddle's "base op": neither `invoke` nor composite-only. Only base ops have kernel, infer_meta,
  /// inplace and view in Paddle's parsed form, and so in the PIR signature.
  bool is_base_op() const { return !invoke && !(composite && !kernel); }

  /// kernel.param, or every input then every attribute when it is absent.
  std::vector<std::string> effective_kernel_param() const;
  /// infer_meta.param, or the effective kernel param when it is absent.
  std::vector<std::string> effective_infer_meta_param() const;
};

/// The loaded op definitions. Built by OpLoader (op_loader.h); read-only afterwards.
class OpLibrary {
 public:
  OpLibrary() = default;
  // The name index holds views into the ops, so a copy rebuilds it (a move keeps the ops' storage).
  OpLibrary(const OpLibrary& other) : ops_(other.ops_), files_(other.files_) { index(); }
  OpLibrary& operator=(const OpLibrary& other);
  OpLibrary(OpLibrary&&) = default;
  OpLibrary& operator=(OpLibrary&&) = default;

  const std::vector<Op>& ops() const { return ops_; }
  size_t size() const { return ops_.size(); }
  /// The dense op called `name` (ops of sparse op files are not found here: see find_sparse).
  const Op* find(std::string_view name) const;
  /// The op of a sparse op file called `name`.
  const Op* find_sparse(std::string_view name) const;
  /// The files that were loaded, in order (SourceManager ids).
  const std::vector<uint32_t>& files() const { return files_; }

 private:
  friend class OpLoader;
  void index();

  std::vector<Op> ops_;
  std::vector<uint32_t> files_;
  std::unordered_map<std::string_view, size_t> by_name_;         // dense ops; views into ops_[i].name
  std::unordered_map<std::string_view, size_t> by_sparse_name_;  // sparse ops
};

}  // namespace kforge::opdef
