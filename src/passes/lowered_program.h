// LoweredProgram: a verified Program reduced to what a code generator (or an executor) needs to run it:
// a flat, ordered list of kernel calls over typed values, with the values' shapes, their storage and a
// memory plan. `kforge compile` renders one into C++; the reference interpreter executes one op by op.
//
// Design.
//   - Values. Every tensor the calls touch is a LoweredValue: dtype and a SymShape (static dims, or
//     symbolic dims over the program's dynamic input dims, see sym_expr.h). Vectors (builtin.combine /
//     builtin.split results) never become values: a `Tensor[]` kernel argument lists its element values,
//     and the elements of a `Tensor[]` output are values of their own. Nothing of PIR's value numbering
//     leaks through except `source` (the ir::ValueId) and `source_id` (for messages).
//   - Roles. A value is a program input (pd_op.data / pd_op.feed, by feed name, in program order), a
//     parameter (builtin.parameter, by its PIR parameter_name, bound once), a folded constant (data known
//     at generation time), or computed by exactly one call. Fetches (pd_op.fetch, builtin.shadow_output)
//     become `outputs`, not calls; so do data/feed/parameter ops and the constant ops folded away.
//   - Calls. Each KernelCall is one kernel function of the op YAML (`kernel: func:`) with its arguments in
//     `kernel: param:` order (docs/calling-convention.md), then its outputs in `output` order. Every
//     argument is bound: a tensor value, an absent optional tensor, a tensor list, or a typed constant.
//     Attributes take, in order: the PIR attribute (converted to the YAML type), the value of a mutable
//     attribute's operand when constant folding knew it, or the YAML default. A mutable attribute whose
//     operand is only known at run time is kTensorToAttr: the generated code converts it with
//     int_array_from_tensor / int_array_from_tensors / scalar_from_tensor before the call; one whose contents
//     are expressions over the dynamic input dims (`reshape(x, [shape64(x)[0], 30])`) is kSymbolic, and the
//     ops that computed it are not called. Param items that are literals (`param: [x, false]`) become
//     constants.
//   - Kernel dtype. `kernel_dtype` is what KernelContext::dtype receives: resolved from `kernel:
//     data_type:` (the first candidate that is defined: a DataType attribute's value, else the named tensor's
//     dtype, or the element dtype of a named tensor list); with no `data_type`, the dtype of the first
//     present tensor input (as Paddle's ParseKernelKeyByInputArgs), or of the first output for ops without
//     tensor inputs.
//   - Storage and memory plan. Values live in Buffers. A buffer is a program input, a parameter, a constant,
//     an output (the caller's output tensor: a fetched value computed by a call is written there directly,
//     no copy), or a slice of the one workspace. Aliasing is buffer sharing: the output of an in-place twin
//     (`relu_`, `batch_norm_`'s mean_out, ...) shares its input's buffer, and so does the output of a view
//     op (`view: (x -> out)`: reshape, flatten, squeeze, unsqueeze) unless its input's buffer is written in
//     place later while the view is live; such an output keeps its own buffer, as it does when the input is a
//     program input, a parameter or a constant (kforge never writes memory the caller owns or the constant
//     tables). After fusion the concat in place (concat_in_place.h) moves a concat's inputs into its output's
//     buffer, each at LoweredValue::buffer_offset (a slice of it). Workspace buffers are placed by liveness (see
//     memory_plan.h): at `offset` bytes from the workspace start, 64-byte aligned, never overlapping another buffer
//     live at the same time.
//     `workspace_bytes` is a constant for static programs and a SymExpr over the dynamic input dims otherwise.
//   - Determinism. Same program and op set, same LoweredProgram, field for field.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "opdef/op_library.h"
#include "opdef/pir_signature.h"
#include "passes/sym_expr.h"
#include "program/dtype.h"
#include "program/program.h"
#include "support/source_manager.h"

namespace kforge::passes {

constexpr uint32_t kNone = UINT32_MAX;

/// A symbol of the dims' expressions: a dynamic dim of a program input (`symbol` i is dim `axis` of
/// `inputs[input]`), or a data-dependent dim (dim `axis` of the value an op computes): the size an op like nonzero or
/// masked_select finds in its input's data, or a dim an op reads from a tensor's values (reshape to a shape read from
/// an input). The generated code reads an input dim before the first call; a data-dependent one after its op ran
/// (nonzero), or from the op's infer-meta run just before it (`before_call`: reshape), so that everything sized by it
/// is laid out then, in memory allocated at run time (BufferKind::kRuntime).
enum class SymbolKind : uint8_t { kInputDim, kDataDependent };

struct Symbol {
  uint32_t id = 0;
  SymbolKind kind = SymbolKind::kInputDim;
  uint32_t input = 0;  // kInputDim: index into LoweredProgram::inputs
  uint32_t axis = 0;   // the dim of the input, or of the data-dependent op's result
  std::string name;    // for messages and comments: "x.dims[0]", "nonzero's rows"
  // kDataDependent: the op and result whose dim it is (the analysis), its value and call (set by lowering), and the
  // most it can be, an expression over the input dims: the op's output is laid out for that many (its kernel
  // writes the real count into the output's dims).
  ir::OpId op;
  uint32_t result = 0;
  uint32_t value = UINT32_MAX;
  uint32_t call = UINT32_MAX;
  uint32_t element = UINT32_MAX;  // of a list result (distribute_fpn_proposals' rois of each level): the element
  SymExpr bound;       // after the call: the most it can be, which the result is laid out for
  bool before_call = false;

  bool is_input_dim() const { return kind == SymbolKind::kInputDim; }
};

/// Two dims that met in a broadcast and were taken as equal (AnalysisOptions::equal_broadcast_dims, analysis.h):
/// the result has `a`, and the generated code checks a == b at run time.
struct DimEquality {
  SourceLoc loc;   // the op
  std::string op;  // its full name, "pd_op.add"
  SymExpr a, b;
};

/// The pairs taken as equal as one map: each dim to the dim that stands for it (the first of its pairs). The analysis
/// rewrites every value's dims through it; the CUDA target plan compares the dims it derives (a convolution's output
/// from its geometry) through it too, since a value's dims may stand for an equal but differently spelled size.
class EqualDims {
 public:
  explicit EqualDims(const std::vector<DimEquality>& equalities);
  SymExpr resolve(SymExpr d) const;

 private:
  std::map<SymExpr, SymExpr> canonical_;  // dim -> the dim it was taken equal to
};

/// One element of a Scalar constant.
struct ScalarConstant {
  ir::DataType dtype = ir::DataType::kFloat64;  // the Scalar's dtype (kBool, kInt32/kInt64, kFloat32/kFloat64, ...)
  bool is_floating = true;                      // the payload is float_value; else int_value (bools: 0/1)
  double float_value = 0;
  int64_t int_value = 0;
  friend bool operator==(const ScalarConstant&, const ScalarConstant&) = default;
};

/// An attribute value, typed by the op YAML argument type it is passed as (`type`); only the fields for
/// that type are meaningful:
///   kBool: bool_value; kInt/kInt32/kInt64/kLong/kSizeT: int_value; kFloat/kDouble: float_value;
///   kStr: string_value; kIntList/kInt64List/kIntArray: ints; kFloatList/kDoubleList: floats;
///   kBoolList: bools; kStrList: strings; kScalar*: scalar; kScalarList: scalars; kDataType: dtype;
///   kDataLayout: layout; kPlace: place.
struct AttrConstant {
  opdef::ArgType type = opdef::ArgType::kInt;
  bool bool_value = false;
  int64_t int_value = 0;
  double float_value = 0;
  std::string string_value;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  std::vector<bool> bools;
  std::vector<std::string> strings;
  ScalarConstant scalar;
  std::vector<ScalarConstant> scalars;
  ir::DataType dtype = ir::DataType::kUndefined;
  ir::DataLayout layout = ir::DataLayout::kUndefined;
  ir::Place place;
  friend bool operator==(const AttrConstant&, const AttrConstant&) = default;
};


/// A constant in the notation of `LoweredProgram::dump()`: what the value is, not how a backend spells it
/// (codegen::constant_literal owns the C++): `true`, `-3`, `1e-05`, `"NCHW"`, `[1, -2]`, `float32`, `NHWC`,
/// `cpu`, `gpu:1`; Scalars carry their dtype: `2.5:float32`, `4:int8`.
std::string constant_text(const AttrConstant& constant);

enum class ValueRole : uint8_t {
  kInput,     // a program input (feed)
  kParameter, // bound once by name
  kConstant,  // data known at generation time (LoweredProgram::constants)
  kComputed,  // an output of a call
};

struct LoweredValue {
  uint32_t index = 0;       // position in LoweredProgram::values
  ir::ValueId source;       // the program value it comes from
  std::string name;         // user-visible name (feed, parameter, fetch or YAML name), or ""
  std::string source_id;    // how the source writes it ("%3", "3", the YAML name), for messages
  ir::DataType dtype = ir::DataType::kUndefined;
  SymShape dims;
  ValueRole role = ValueRole::kComputed;
  uint32_t role_index = kNone;  // kInput: index in inputs; kParameter: in parameters; kConstant: in constants
  uint32_t defined_by = kNone;  // kComputed: index of the call
  uint32_t buffer = kNone;      // index in buffers (every value has one; an output nobody reads gets a scratch
                                // buffer unless it is optional, then it is no value at all: kNone in CallOutput)
  /// Bytes from its buffer's start to its first element: 0, except for a value the concat in place put in its slice
  /// of a concat's output (concat_in_place.h), which may also lie strided there (its producer writes it so), and the
  /// outputs of packed sibling GEMMs (gemm_siblings.h), side by side in one buffer (symbolic where M is).
  SymExpr buffer_offset = 0;
  /// Every element, where the analysis knows them as expressions of the dynamic dims (a small integer or bool value
  /// computed from shapes: `shape64(x)`, a slice of it, `length > 1`), row-major; empty otherwise. A target without
  /// a kernel for the op computing it writes these (--target cuda: codegen/cuda_index_known.cpp).
  std::vector<SymExpr> known;
  /// A result whose dims are data-dependent (Symbol::kDataDependent, the op that finds them): the most they can be, in
  /// input dims only, which its buffer is laid out for; its kernel receives the value with these dims and writes the
  /// real ones. Empty for every other value.
  SymShape capacity;
  SourceLoc loc;

  bool has_static_shape() const { return static_dims(dims).has_value(); }
  SymExpr numel() const { return sym_numel(dims); }
  SymExpr bytes() const;  // numel * dtype size
  /// The bytes its buffer must hold: bytes(), or those of `capacity` where it has one.
  SymExpr buffer_bytes() const;
  /// How messages and comments name it: source_id, or "v" and its index where the source gave it no name (a value
  /// a pass made).
  std::string label() const { return source_id.empty() ? "v" + std::to_string(index) : source_id; }
};

struct ProgramInput {
  std::string name;           // the feed name (pd_op.data `name`)
  uint32_t value = kNone;
  ir::DataType dtype = ir::DataType::kUndefined;
  std::vector<int64_t> declared_dims;  // as declared; -1 where dynamic (each such dim is a Symbol)
  SourceLoc loc;
};

/// Parameters the generated code keeps side by side in memory of its own, copied there whenever they are bound
/// (gemm_siblings.h: the weights, or the biases, of sibling GEMMs that run as one batched product). Member i starts
/// i * member_elements elements in.
struct ParameterPack {
  std::vector<uint32_t> parameters;  // indices in LoweredProgram::parameters, in pack order
  ir::DataType dtype = ir::DataType::kUndefined;  // of every member (on the device)
  int64_t member_elements = 0;
};

struct ProgramParameter {
  std::string name;  // the PIR parameter_name ("fc_0.w_0"); YAML params: their name
  uint32_t value = kNone;
  /// Set where the precision plan converted it (precision.h): the dtype a parameter file holds it in (the program's
  /// float32), which the generated loader rounds to the value's dtype when it reads the file. kUndefined: the value's.
  ir::DataType stored_dtype = ir::DataType::kUndefined;
  SourceLoc loc;
};

/// Data of a folded constant: element i is floats[i] for floating dtypes, ints[i] otherwise (bools 0/1).
/// `splat`: every element equals element 0, and only that one is stored (a folded `full`).
struct ConstantData {
  uint32_t value = kNone;
  ir::DataType dtype = ir::DataType::kUndefined;
  std::vector<int64_t> dims;
  bool splat = false;
  std::vector<double> floats;
  std::vector<int64_t> ints;
  SourceLoc loc;  // the op it was folded from

  int64_t numel() const;
  double float_at(int64_t i) const;
  int64_t int_at(int64_t i) const;
};

/// A fetched value. `copy`: the value does not live in the caller's output tensor (it is an input, a
/// parameter, a constant, an alias of one, or fetched twice), so the generated code copies it there after
/// the last call.
struct ProgramOutput {
  std::string name;  // fetch name ("fetch_name_0"; YAML outputs: the value name)
  uint32_t col = 0;  // pd_op.fetch `col`, else the position
  uint32_t value = kNone;
  bool copy = false;
  SourceLoc loc;
};

enum class ArgKind : uint8_t {
  kTensor,            // `value`: const Tensor& (or const Tensor* for an optional input)
  kAbsentTensor,      // an optional input left out: nullptr (TensorList{} for a Tensor[] param)
  kTensorList,        // `values`: TensorList
  kConstant,          // `constant`
  kTensorToAttr,      // mutable attribute from one tensor `value` (int_array_from_tensor / scalar_from_tensor)
  kTensorListToAttr,  // mutable IntArray from one-element tensors `values` (int_array_from_tensors)
  kSymbolic,          // an IntArray / int list / Scalar / int attribute known as expressions over the symbols
                      // (`reshape(x, shape(x)[0], 30)` with a dynamic x): `symbolic`, one entry per element
                      // (one for a Scalar or an int); the generated code evaluates them from the input dims
};

struct KernelArg {
  std::string name;  // the YAML argument name ("x", "shape"), or the literal text of a literal param item
  opdef::ArgType type = opdef::ArgType::kTensor;  // the YAML argument type
  bool optional = false;                          // an optional tensor input (`const Tensor*`)
  ArgKind kind = ArgKind::kConstant;
  uint32_t value = kNone;
  std::vector<uint32_t> values;
  AttrConstant constant;
  std::vector<SymExpr> symbolic;
};

/// One output of a call, in `output` order. A Tensor output has one entry in `values` (kNone when the
/// output is optional or intermediate and nothing reads it: pass nullptr). A Tensor[] output lists its
/// elements (MutableTensorList).
struct CallOutput {
  std::string name;
  bool is_list = false;
  bool optional = false;  // the kernel accepts nullptr
  std::vector<uint32_t> values;
};

struct KernelCall {
  std::string op;                                // op YAML name: "relu" (also for "pd_op.relu_")
  std::string pir_name;                          // "pd_op.relu_"
  bool inplace_twin = false;                     // the `name_` twin
  const opdef::Op* def = nullptr;                // its definition (owned by the OpLibrary)
  const opdef::PirOpSignature* signature = nullptr;  // owned by the OpSet
  std::string kernel;                            // `kernel: func:` ("assign_raw" for op assign)
  std::string infer_meta;                        // `infer_meta: func:`, or ""
  ir::DataType kernel_dtype = ir::DataType::kUndefined;
  std::vector<KernelArg> args;                   // `kernel: param:` order
  std::vector<KernelArg> infer_meta_args;        // `infer_meta: param:` order (same binding rules)
  std::vector<CallOutput> outputs;               // `output` order
  ir::OpId source;
  SourceLoc loc;                                 // the op in the program file

  /// The kernel argument called `name` (its YAML name), or null.
  const KernelArg* arg(std::string_view name) const;
  /// The value of tensor argument `name`, or kNone when there is none or it is not a tensor.
  uint32_t tensor_arg(std::string_view name) const;
  /// The value of bool attribute `name` when it is a constant known at generation time; nullopt otherwise.
  std::optional<bool> constant_bool(std::string_view name) const;
  /// The value of a numeric attribute `name` (int, float, Scalar) known at generation time; nullopt otherwise.
  std::optional<double> constant_number(std::string_view name) const;
};

/// kRuntime: a computed value whose size depends on a data-dependent dim (Symbol): its memory cannot be planned at
/// generation time nor at resize(), so the generated code allocates it in run(), once the dim is known.
enum class BufferKind : uint8_t { kInput, kParameter, kConstant, kOutput, kWorkspace, kRuntime };

struct Buffer {
  uint32_t index = 0;
  BufferKind kind = BufferKind::kWorkspace;
  uint32_t role_index = kNone;  // kInput/kParameter/kConstant: that index; kOutput: index in outputs
  /// Bytes it must hold: the largest of its values' bytes() (values of one buffer may differ in shape
  /// only by a view, so they normally agree).
  SymExpr size_bytes;
  /// kWorkspace: byte offset in the workspace, a multiple of MemoryPlan::alignment.
  SymExpr offset;
  /// Live range in call indices, inclusive: from the call defining its first value to the last call that
  /// reads or writes any of its values. Inputs, parameters and constants: [0, calls.size()); outputs live
  /// to the end.
  uint32_t first_call = 0;
  uint32_t last_call = 0;
  std::vector<uint32_t> values;  // the values stored in it (more than one when aliased), in definition order
  /// kWorkspace with no values: a library kernel's scratch memory (cuDNN's workspace of one convolution), live
  /// only while the call at this position runs (a call index; a fused group's position). kNone: a value's buffer.
  uint32_t scratch_at = kNone;
};

struct MemoryPlan {
  uint32_t alignment = 64;
  /// The whole workspace: a constant when every workspace buffer is static.
  SymExpr workspace_bytes;
  /// Sum of the aligned workspace buffer sizes (what it would take without reuse), for reports and tests.
  SymExpr unshared_bytes;
  bool is_static() const { return workspace_bytes.is_constant(); }
};

struct LoweredProgram {
  std::string name;                 // the program's name
  ir::SourceFormat format = ir::SourceFormat::kBuilt;
  std::vector<Symbol> symbols;      // dynamic input dims, in input then axis order
  std::vector<DimEquality> dim_equalities;  // broadcast dims taken as equal, to check at run time
  std::vector<LoweredValue> values;
  std::vector<ProgramInput> inputs;          // feed order
  std::vector<ProgramParameter> parameters;  // program order
  std::vector<ParameterPack> parameter_packs;
  std::vector<ConstantData> constants;
  std::vector<ProgramOutput> outputs;        // fetch order
  std::vector<KernelCall> calls;             // execution order
  std::vector<Buffer> buffers;
  MemoryPlan plan;

  const LoweredValue& value(uint32_t i) const { return values.at(i); }
  const Buffer& buffer_of(uint32_t value_index) const { return buffers.at(values.at(value_index).buffer); }
  /// Text of the whole lowered program, one line per item, for tests and `--dump-lowered`:
  ///   input x: float32[s0, 64] buffer 0
  ///   call 0 matmul (pd_op.matmul) dtype float32: x=%v0, y=%v1, transpose_x=false, ... -> out=%v2
  ///   buffer 3 workspace offset 0 size 256 live [0, 1] values v2
  std::string dump() const;
  /// The (input, output) values of call `c` when it is a view op (`view:` in its YAML: reshape, flatten, ...) of
  /// one tensor into one tensor of the same dtype and element count (or dims read before the call from a tensor's
  /// values, which its infer-meta checks hold that count); nullopt otherwise.
  /// Also a transpose that moves no element (transpose_moves_no_element).
  std::optional<std::pair<uint32_t, uint32_t>> view_values(uint32_t c) const;
  /// The calls that read each value (indexed by value), ascending, each call once; program outputs are not calls.
  std::vector<std::vector<uint32_t>> value_readers() const;
  /// Moves the values of buffer `from` (and their offsets) into buffer `to`, `offset` bytes further in; `from` is left
  /// empty (no values, size 0) and `to`'s live range covers both. Values stay sorted by their defining call.
  void move_values_into(uint32_t from, uint32_t to, const SymExpr& offset);
  /// The dtype a parameter file holds parameter `p` in (ProgramParameter::stored_dtype, else its value's).
  ir::DataType file_dtype(const ProgramParameter& p) const {
    return p.stored_dtype != ir::DataType::kUndefined ? p.stored_dtype : values.at(p.value).dtype;
  }
};

/// Whether `call` is a transpose that moves no element: every axis it moves past another is of size 1, so the other
/// dims keep their order ([b, 1, 12, 64] -> [b, 12, 1, 64], a decode step's new key). Its output is then a view of its
/// input, as a reshape's is: lowering gives both one buffer (unless the input is written in place later) and no
/// kernel runs (LoweredProgram::view_values). A dynamic dim counts as one that may exceed 1.
bool transpose_moves_no_element(const KernelCall& call, const std::vector<LoweredValue>& values);

/// The (input, output) argument pairs through which `call` is a view, writing nothing: its YAML's `view:` (reshape,
/// flatten, ...) and x -> out for a transpose that moves no element; none for an in-place twin. The one test of
/// "is a view" that buffer assignment, fusion and split views share.
std::vector<opdef::InplacePair> view_pairs(const KernelCall& call, const std::vector<LoweredValue>& values);

}  // namespace kforge::passes
