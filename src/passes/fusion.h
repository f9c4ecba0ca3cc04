// Fusion: groups the calls of a LoweredProgram into fused kernels and describes each group completely enough
// that a backend (the CPU loops of templates/program/fused_cpu.j2, the CUDA kernels of codegen/cuda_kernels.cpp)
// emits it without re-deriving anything. This header is the contract between the pass and the backends; what
// fuses, the GEMM, convolution and absorbed-transpose groups and the index model are specified in docs/fusion.md.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scalar_expr/expr_check.h"
#include "scalar_expr/reduction.h"
#include "passes/gemm.h"
#include "passes/lowered_program.h"

namespace kforge::passes {

enum class GroupKind : uint8_t {
  kElementwise,  // one loop over outer x inner; every statement is per element (kElement)
  kRow,          // for each of `outer` rows: `num_passes` loops over the row's `inner` elements
  kGemm,         // one GEMM with an optional bias / bias+gelu epilogue: FusedGroup::gemm
  kConv,         // one conv2d_fused kernel call: FusedGroup::conv_call
  kAttention,    // softmax(scale * q k^T + mask) v in one kernel: FusedGroup::attention
};

/// What a GEMM group applies to each accumulated element before storing it.
enum class GemmEpilogue : uint8_t {
  kNone,      // C = op(x) op(y)
  kBias,      // C = op(x) op(y) + bias[n]
  kBiasGelu,  // C = gelu_erf(op(x) op(y) + bias[n])
  /// C = gelu_tanh(op(x) op(y) + bias[n]): a 16-bit GEMM followed by Paddle's erf gelu, which cuBLASLt then
  /// computes in its GELU_BIAS epilogue (the tanh form; within 4.73e-4 of erf: docs/compile.md, "The gelu's
  /// form").
  kBiasGeluTanh,
};

/// kGemm groups: row-major C[M, N] = epilogue(op(x)[M, K] * op(y)[K, N]) (passes/gemm.h: the batch dims of an
/// untransposed x fold into M). The group's inputs are x, y and the bias (GroupInput, kContiguous / kInner),
/// its one store is `out`; the matmul's output (and the add's, when the gelu joins) are internal values.
/// The matmul's form (x, y, transposes, M, N, K), except that `out` is the stored value: the matmul's, the
/// add's or the gelu's output.
struct GemmGroup : GemmForm {
  uint32_t matmul = kNone;        // the matmul call
  uint32_t bias = kNone;          // kNone for GemmEpilogue::kNone
  GemmEpilogue epilogue = GemmEpilogue::kNone;
  /// Sibling GEMMs packed into one batch of products (gemm_siblings.h): `batch` products of x (stride_x 0) by the
  /// weights of parameter pack y_pack (stride_y K x N), adding the biases of bias_pack (N apart), writing `outs`
  /// (outs[0] == out; stride_out M x N). Empty for every other group.
  std::vector<uint32_t> outs;
  uint32_t y_pack = kNone, bias_pack = kNone;  // LoweredProgram::parameter_packs
  bool packed() const { return !outs.empty(); }
};

/// An operand of an attention group: `value`, a 16-bit or float32 tensor whose element (batch b, head h, position
/// s, d) lies at b * batch_stride + h * head_stride + s * seq_stride + d (the head dim contiguous): a [B, S, H, D] value whose
/// transpose to [B, H, S, D] the group absorbed, or a [B, H, S, D] value itself.
struct AttentionOperand {
  uint32_t value = kNone;
  SymExpr batch_stride = 0, head_stride = 0, seq_stride = 0;
};

/// kAttention groups (docs/fusion.md, "Attention groups"): out = softmax(scale * q k^T + mask) v per (batch, head),
/// the pattern of Paddle's MultiHeadAttention (transposes of q, k, v to [B, H, S, D], a scale of q or of the
/// scores, matmul(q, k, transpose_y), an optional additive mask, softmax over the keys, matmul(p, v), the
/// transpose back). Every intermediate value is internal; the group reads q, k, v and the mask, stores out.
struct AttentionGroup {
  AttentionOperand q, k, v, out;
  SymExpr batch = 1, heads = 1, seq_q = 1, seq_k = 1;
  int64_t head_dim = 0;
  double scale = 1;             // the product of the absorbed scales
  ir::DataType dtype = ir::DataType::kFloat16;  // of q, k, v and out: float16, bfloat16 or float32
  uint32_t mask = kNone;        // the additive mask, or kNone
  // The mask's strides over [batch, head, query, key] (0 along a broadcast dim).
  SymExpr mask_batch_stride = 0, mask_head_stride = 0, mask_row_stride = 0, mask_col_stride = 0;
  /// A causal mask (triu of -inf, `diagonal` d: key j masked for query i where j - i >= d), which the kernel applies
  /// by position, skipping the key tiles it masks whole; `mask` is then kNone.
  bool causal = false;
  int64_t causal_diagonal = 1;
};

/// How a group input is indexed at element (i, j).
enum class InputAccess : uint8_t {
  kContiguous,  // the input has the group's shape: element i * inner + j
  kOuter,       // one element per row: element i (a [M, 1] value broadcast along the rows of [M, N])
  kInner,       // one row shared by every row: element j (a bias [N] over [M, N])
  kScalar,      // a single element: element 0
  kStrided,     // general broadcast: element sum_d coord_d * strides[d], where coord is the row-major
                // coordinate of flat element i * inner + j in `Group::shape`
};

/// The named row-reduction compositions of the `row_pattern` key (opdef/types.h: kSoftmax, kLayerNorm, kRmsNorm).
using RowPatternKind = opdef::RowPatternKind;

/// A tensor the group reads from memory (a program input, parameter, constant, or a value stored by an
/// earlier group or kernel call).
struct GroupInput {
  uint32_t value = kNone;             // LoweredValue index: its buffer is where the data is
  std::string name;                   // the local name the statements use: "in0", "in1", ... (unique in group)
  ir::DataType dtype = ir::DataType::kUndefined;        // storage dtype
  expr::ScalarType storage = expr::ScalarType::kFloat32;  // the same, as an expression type (float16, int8...)
  expr::ScalarType type = expr::ScalarType::kFloat32;     // compute type it is loaded as (compute_type(storage))
  InputAccess access = InputAccess::kContiguous;
  std::vector<SymExpr> strides;       // kStrided only: one per dim of Group::shape, in elements (0 = broadcast)
  bool needs_int64 = false;           // its element count may exceed INT32_MAX (index it with int64)
};

enum class StmtKind : uint8_t {
  kElement,     // one value per element (i, j): `expr`
  kRowValue,    // row groups: one value per row, from row values, kOuter/kScalar inputs and literals: `expr`
  kReduce,      // row groups: one value per row, the reduction of element value `source` over the row
  kRowPattern,  // row groups: a softmax / layer_norm / rms_norm of the op's operands, one per group at most
};

/// Operands of a row pattern, by the op's argument names, each the name of a group input or an element
/// statement (kElement) or "" when the op's optional tensor is absent.
///   softmax:    x                       -> out (element)
///   layer_norm: x, scale, bias          -> out (element); mean, variance (row values)
///   rms_norm:   x, bias, residual, norm_weight, norm_bias -> out (element); residual_out (element)
/// scale/bias/norm_weight/norm_bias are kInner inputs (one row's worth).
struct RowPatternOperand {
  std::string arg;   // "x", "scale", ...
  std::string name;  // local name, or "" when absent
};

struct GroupStmt {
  StmtKind kind = StmtKind::kElement;
  /// The local variable this statement defines: "v<value index>" for the value it computes (unique in the
  /// group); for a row pattern, the name of its main (element) output.
  std::string name;
  uint32_t call = kNone;    // the KernelCall it comes from
  uint32_t value = kNone;   // the LoweredValue it computes (kRowPattern: the main output `out`)
  /// Compute type of the local (compute_type(storage)); `expr`'s result is converted to it.
  expr::ScalarType type = expr::ScalarType::kFloat32;
  /// The value's storage type: a stored value is converted to it on store.
  expr::ScalarType storage = expr::ScalarType::kFloat32;

  /// kElement / kRowValue: the typed expression. Its input names are GroupInput::name or the `name` of an
  /// earlier statement; the op's attributes are bound to the program's constants and folded, so it names no
  /// attribute. The backends spell it (codegen/group_text.h).
  std::optional<expr::Expression> expr;

  /// kReduce: the reduced element value (an element statement's name or a kContiguous input's name) and the
  /// typed reduction with every attribute bound: `init` (of type `reduction.accumulator`), `combine` over
  /// `acc` and the element (named `reduction.input`, which is `source`), `merge` (two partial accumulators:
  /// `acc` and `reduction.input`), optional `finalize` over `acc` and `n` (the row length, int64). The
  /// statement's local holds the finalized value (type `type`). The reduction axes are the row.
  std::string source;
  std::optional<expr::TypedReduction> reduction;

  /// kRowPattern: which pattern, its operands, epsilon (layer_norm / rms_norm; 0 otherwise) and its extra
  /// outputs: (output name, value index, local name) for mean / variance (row values) or residual_out
  /// (element); value kNone when nothing reads it (then it is not stored).
  RowPatternKind pattern = RowPatternKind::kSoftmax;
  std::vector<RowPatternOperand> operands;
  double epsilon = 0;
  /// softmax with FusionOptions::keep_softmax_exps: the first pass stores x in a row buffer, the second turns it
  /// into the exps in place, the third divides them, so x is evaluated in the first pass only.
  bool exps_kept = false;
  struct ExtraOutput {
    std::string output;  // "mean", "variance", "residual_out"
    uint32_t value = kNone;
    std::string name;    // local name
    bool per_row = true; // row value (mean, variance) or element value
  };
  std::vector<ExtraOutput> extra_outputs;

  /// Row groups: the row passes (0-based, ascending) that evaluate this statement. A kElement statement is
  /// evaluated in every pass that needs it (cheap ones may repeat; see the file comment); a kReduce
  /// accumulates in exactly one pass (its finalized value is usable from the next pass on); a kRowValue has
  /// passes = {p}: it is evaluated once per row before the element loop of pass p, once every reduction of
  /// the earlier passes is finalized (p is always < num_passes; pass p's loop may have an empty body);
  /// a kRowPattern occupies passes [passes.front(), passes.back()] (softmax 3 loops: max, sum of exp,
  /// normalise; layer_norm 3: mean, variance, normalise) and its element output and its row outputs (mean,
  /// variance) are usable in its last pass. Elementwise groups: {0}.
  std::vector<uint32_t> passes;
};

/// A value the group writes to memory: the statement whose local is stored, to the value's buffer, at
/// element (i, j) (kContiguous) or at element i (a per-row value: a reduction result, mean/variance).
struct GroupStore {
  uint32_t value = kNone;  // LoweredValue index
  std::string name;        // the statement local stored
  bool per_row = false;    // stored once per row (index i) instead of per element
  ir::DataType dtype = ir::DataType::kUndefined;
  expr::ScalarType storage = expr::ScalarType::kFloat32;
  uint32_t pass = 0;       // row groups: the pass in which it is stored (per-row stores: after that pass)
  /// Empty: stored at its flat element (i * inner + j, or i per row). Otherwise (elementwise groups, a
  /// stored-through transpose): stored at sum_d coord_d * strides[d], one stride per dim of Group::shape,
  /// where coord is the row-major coordinate of flat element i * inner + j in the shape.
  std::vector<SymExpr> strides;
};

struct FusedGroup {
  uint32_t index = 0;            // position in FusionPlan::groups (also the function suffix: fused_<index>)
  GroupKind kind = GroupKind::kElementwise;
  std::vector<uint32_t> calls;   // member calls, ascending (execution order)
  uint32_t position = 0;         // the group runs where its last call was (calls.back()); packed GEMMs: where the
                                 // first sibling's last call was (gemm_siblings.h)
  SymShape shape;                // the iteration space (row groups: the reduced input's shape)
  SymExpr outer = 1;             // number of rows (elementwise: the leading part of `shape`)
  SymExpr inner = 1;             // row length (elementwise: the trailing part of `shape`)
  SymExpr numel = 1;             // outer * inner
  bool needs_int64 = false;      // numel may exceed INT32_MAX (static: known; dynamic: always true)
  uint32_t num_passes = 1;       // row groups: loops over each row; elementwise: 1
  std::vector<GroupInput> inputs;   // in order of first use
  std::vector<GroupStmt> stmts;     // in dependency order (an operand is defined before its use)
  std::vector<GroupStore> stores;   // values that escape, in value order
  std::vector<uint32_t> internal_values;  // values computed and consumed inside: no buffer needed
  std::vector<uint32_t> absorbed;  // transposes run as the group's input or store map, ascending
  bool has_expensive = false;    // contains exp/tanh/erf/pow/log/... or a reduction (for cost reports)
  std::string label;             // "relu+add+gelu" (op names, execution order), for comments and --dump-groups
  GemmGroup gemm;                // kGemm only; stmts is empty and stores has the one output
  KernelCall conv_call;          // kConv only: the call that replaces the group; stores has its output
  AttentionGroup attention;      // kAttention only; stmts is empty and stores has the one output
};

/// The result of the pass. `call_group[c]` is the group of call c or kNone (a kernel call).
struct FusionPlan {
  std::vector<FusedGroup> groups;     // in execution order (by position)
  std::vector<uint32_t> call_group;   // one per call
  bool empty() const { return groups.empty(); }
};

struct FusionOptions {
  /// --no-fuse sets false: an empty plan, or with single_call_groups one group per fusible call (and per GEMM
  /// with gemm_groups, without epilogue), since that target has no per-op kernels.
  bool enabled = true;
  /// Largest number of calls in one group (keeps generated functions readable).
  uint32_t max_group_calls = 64;
  /// Keep a lone elementwise call as a one-call kElementwise group. Off for the CPU, where the kernel
  /// library's own loop is as good; on for --target cuda, which has no per-op kernels, so every op with a
  /// `compute` key becomes a generated kernel even when nothing fuses with it.
  bool single_call_groups = false;
  /// Make kGemm groups of the matmuls a generated GEMM computes, with their bias / gelu epilogue
  /// (docs/fusion.md, "GEMM groups"). On for --target cuda; off for the CPU, whose matmul is the library's kernel
  /// (or the multi-kernel variants) and whose bias + gelu fuse as an elementwise group.
  bool gemm_groups = false;
  /// Fuse float16 and bfloat16 values: loaded and converted to float32, computed in float32 (their
  /// compute type), rounded back to nearest even when stored. On for --target cuda, whose kernels convert
  /// (cuda_fp16.h / cuda_bf16.h); off for the CPU, whose fused loops have no 16-bit type: there such calls
  /// stay kernel calls.
  bool half_floats = false;
  /// The op set's conv2d_fused (kernels/fusion.yaml), which makes convolution groups (docs/fusion.md); null: none.
  /// The CPU and the CUDA target set it.
  const opdef::Op* conv_fused = nullptr;
  /// Absorb transposes into the elementwise and row groups next to them (docs/fusion.md, "Absorbed transposes"). On
  /// for --target cuda, whose transpose is a kernel of its own; off for the CPU, whose tiled transpose kernel
  /// moves the data faster than a fused loop's strided reads.
  bool absorb_transposes = false;
  /// Make kAttention groups of the attention pattern over float16 / bfloat16 values, and over float32 values where
  /// the float32 kernel pays (docs/fusion.md, "Attention groups"). On for --target cuda (its fused attention
  /// kernels); off for the CPU.
  bool attention_groups = false;
  /// A softmax row group keeps its exps between the sum and the normalising pass (GroupStmt::exps_kept) instead of
  /// computing each twice. On for the CPU, whose loops call libm's scalar expf (BERT-style encoders spent 11 % of
  /// their time there, BENCHMARKS.md); off for --target cuda, whose row kernels compute them again from the row.
  bool keep_softmax_exps = false;
};

/// "none", "bias", "bias_gelu".
std::string_view gemm_epilogue_name(GemmEpilogue epilogue);

/// Groups the calls. Never fails: what cannot be fused stays a kernel call. An expression that does not
/// type-check against the call is left unfused (the op YAML linter reports it).
FusionPlan plan_fusion(const LoweredProgram& program, const FusionOptions& options = {});

/// Puts the groups back in execution order (by position, stably) after a pass added or removed some: indices and
/// call_group (members and absorbed transposes) follow.
void renumber_groups(FusionPlan& plan);

/// Re-plans the workspace after fusion: values internal to a group get no workspace slot (their buffer
/// keeps size 0, no live range), and every other buffer's live range is recomputed with each group's
/// calls counted at its position. Calls plan_memory. A program with an empty plan is left as it was.
void apply_fusion_to_memory_plan(LoweredProgram& program, const FusionPlan& plan);

/// The kConv group of the conv2d / depthwise_conv2d call `c` alone (a conv2d_fused with no epilogue), as the concat in
/// place (concat_in_place.h) makes it for a convolution that writes into its slice of a concat's output; nullopt
/// when `c` is no such convolution or `conv_fused` is not the library's op with out_pixel_stride.
std::optional<FusedGroup> lone_conv_group(const LoweredProgram& program, const opdef::Op* conv_fused, uint32_t c);

/// True when `value` is internal to a group (no buffer; the generated code never names it).
bool is_fused_internal(const FusionPlan& plan, uint32_t value);

/// Whether a dim of `g` after the first, or a stride of a strided input or store, is known only at run time: a
/// CUDA launcher then takes it as a shape parameter (codegen::cuda_group_shape_params).
bool has_dynamic_strides(const FusedGroup& g);

/// True when a typed expression calls an expensive function, which the fusion pass never recomputes:
/// exp, expm1, log, log1p, log2, log10, pow, erf, sigmoid, the trigonometric and hyperbolic functions.
/// Cheap (may be evaluated in more than one row pass): arithmetic, comparisons, select, casts, min, max,
/// abs, floor, ceil, trunc, sqrt, rsqrt, isnan/isinf/isfinite.
bool is_expensive(const expr::Node& typed);

/// Graphviz text of the plan: one cluster per group, ops as nodes, values as edges (--dump-groups).
std::string fusion_dot(const LoweredProgram& program, const FusionPlan& plan);

/// One line per group, for tests and --dump-lowered: "group 0 elementwise [2, 3] calls 1,2,3 stores v5".
std::string dump_fusion(const LoweredProgram& program, const FusionPlan& plan);

}  // namespace kforge::passes
