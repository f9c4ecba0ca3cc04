// Internals of the fusion pass shared by its files (fusion_classify.cpp: which calls can fuse and how;
// fusion.cpp: grouping). Not part of the contract: see fusion.h.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "passes/fusion.h"

namespace kforge::passes::fusion_detail {

/// The expression type of a storage dtype the fused loops handle: bool, int32, int64, float16, bfloat16,
/// float32, float64 (the 16-bit ones only where FusionOptions::half_floats allows them).
std::optional<expr::ScalarType> scalar_of(ir::DataType dtype);
bool is_half_float(ir::DataType dtype);  // float16 or bfloat16
/// Product of shape[begin, end).
SymExpr product(const SymShape& shape, size_t begin, size_t end);
/// `shape` right-aligned against `target`, padded with leading 1s; nullopt when it does not broadcast.
std::optional<SymShape> padded_to(const SymShape& shape, const SymShape& target);
/// How a tensor of `shape` is read in the iteration space `target` split at `split` (fusion.h, InputAccess);
/// nullopt when it does not broadcast. Fills `strides` for kStrided.
std::optional<InputAccess> access_of(const SymShape& shape, const SymShape& target, size_t split,
                                     std::vector<SymExpr>* strides);
/// Row-major strides of `dims`, in elements.
std::vector<SymExpr> row_major_strides(const SymShape& dims);
/// The strides, one per dim of `target`, at which a tensor of `dims` broadcast to `target` is read when its dim k
/// lies in memory at stride `memory[k]` (a dim of 1 at stride 0); nullopt when it does not broadcast.
std::optional<std::vector<SymExpr>> broadcast_strides(const SymShape& dims, const std::vector<SymExpr>& memory,
                                                      const SymShape& target);
/// Whether a call strictly between `first` and `last`, not in `skip`, defines a value in one of `buffers`: a group
/// that reads those buffers at `last` would read them after that write. The values of `produced` are not such
/// writes: each is the very value the group reads, defined there (a group input made by a call between its members).
bool written_between(const LoweredProgram& program, const std::set<uint32_t>& buffers, uint32_t first, uint32_t last,
                     const std::set<uint32_t>& skip = {}, const std::set<uint32_t>& produced = {});
/// The count may exceed INT32_MAX (always true when it is not a constant).
bool exceeds_int32(const SymExpr& numel);

enum class CallKind { kOpaque, kElementwise, kReduce, kRowPattern };

struct CallInfo {
  CallKind kind = CallKind::kOpaque;
  std::vector<std::pair<std::string, uint32_t>> inputs;  // op input name -> value (present tensors)
  std::vector<std::string> tensor_attributes;             // attributes read from one-element tensors (in `inputs` too)
  uint32_t out = kNone;                                   // the main output value
  std::optional<expr::Expression> compute;                // attributes bound; names are the op's input names
  std::optional<expr::TypedReduction> reduction;          // attributes bound
  size_t split = 0;                                       // reduce / row pattern: kept leading dims
  RowPatternKind pattern = RowPatternKind::kSoftmax;
  double epsilon = 0;
  std::vector<GroupStmt::ExtraOutput> extras;
  bool expensive = false;
};


/// What each call of `program` is to the fusion pass (kOpaque: it stays a kernel call). `half_floats`:
/// FusionOptions::half_floats; `view_aliases`: an output whose buffer later views share fuses too (v8).
std::vector<CallInfo> classify_calls(const LoweredProgram& program, bool half_floats, bool view_aliases);

/// The kGemm groups of `program` (docs/fusion.md, "GEMM groups"; fusion_gemm.cpp), in call order, `index` unset.
/// `readers[v]`: the calls reading value v, ascending; `is_output[v]`: v is a program output. With
/// `epilogues` false every group is a matmul alone.
std::vector<FusedGroup> plan_gemm_groups(const LoweredProgram& program, const std::vector<CallInfo>& infos,
                                         const std::vector<std::vector<uint32_t>>& readers,
                                         const std::vector<bool>& is_output, bool epilogues);

/// The kAttention groups of `program` (docs/fusion.md, "Attention groups"; fusion_attention.cpp), in call order,
/// `index` unset: softmax(scale * q k^T + mask) v over float16 / bfloat16 values, each with its absorbed transposes.
std::vector<FusedGroup> plan_attention_groups(const LoweredProgram& program,
                                              const std::vector<std::vector<uint32_t>>& readers,
                                              const std::vector<bool>& is_output);

/// The kConv groups of `program` (docs/fusion.md, "Convolution groups"; fusion_conv.cpp), in call order, `index` unset;
/// none when `conv_fused` (the op set's conv2d_fused) is null or not the op the library defines. Float16 / bfloat16
/// convolutions group only with `half_floats` (FusionOptions::half_floats).
std::vector<FusedGroup> plan_conv_groups(const LoweredProgram& program, const opdef::Op* conv_fused,
                                         const std::vector<std::vector<uint32_t>>& readers,
                                         const std::vector<bool>& is_output, bool half_floats);

/// Moves the transposes next to elementwise and row groups into them (docs/fusion.md, "Absorbed transposes";
/// fusion_index.cpp): FusedGroup::absorbed, `plan.call_group`, the groups' inputs, stores, internal values, labels.
void absorb_transposes(const LoweredProgram& program, FusionPlan& plan,
                       const std::vector<std::vector<uint32_t>>& readers, const std::vector<bool>& is_output);

}  // namespace kforge::passes::fusion_detail
