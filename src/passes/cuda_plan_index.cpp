// The CUDA target plan's index part (cuda_plan_index.h): which ops have an index-mapped kernel, by family, and how
// each call outside every group runs (plan_runs, cuda_plan_internal.h). The index maps' forms are read in
// cuda_plan_move.cpp (data movement, batched matmul) and cuda_plan_select.cpp (by an index or a rank).
#include <algorithm>
#include <array>

#include "passes/cuda_plan.h"
#include "passes/cuda_plan_internal.h"
#include "passes/memory_plan.h"

namespace kforge::passes {

namespace {

struct FamilyOps {
  CudaIndexFamily family;
  std::vector<std::string_view> ops;
};

// One row per codegen/cuda_index*.cpp family (its builder dispatches on the op's name).
const std::array<FamilyOps, 7>& family_table() {
  static const std::array<FamilyOps, 7> table = {{
      {CudaIndexFamily::kMovement,
       {"transpose", "concat", "stack", "split", "split_with_num", "slice", "strided_slice", "flip", "pad3d", "expand", "tile",
        "expand_as", "repeat_interleave", "gather", "index_select", "embedding", "meshgrid", "broadcast_tensors"}},
      {CudaIndexFamily::kCompute,
       {"dropout", "nearest_interp", "bilinear_interp", "linear_interp", "bicubic_interp", "triu", "tril", "arange",
        "full_with_tensor", "linspace", "sum", "mean", "max", "min", "prod", "any", "all", "softmax", "log_softmax",
        "cumsum", "one_hot", "pow", "mean_all", "grid_sample", "deformable_conv", "diag", "prior_box", "cast",
        "roi_align", "yolo_box"}},
      {CudaIndexFamily::kSelect,
       {"topk", "argsort", "gather_nd", "index_sample", "take_along_axis", "scatter", "index_put", "roll", "pad",
        "add_n", "set_value", "set_value_with_tensor", "assign"}},
      {CudaIndexFamily::kNorm, {"group_norm", "p_norm"}},
      {CudaIndexFamily::kLoss, {"sigmoid_cross_entropy_with_logits", "cross_entropy_with_softmax"}},
      {CudaIndexFamily::kEinsum, {"einsum"}},
      {CudaIndexFamily::kBinary, {"floor_divide", "uniform", "randint", "prelu"}},
  }};
  return table;
}

// Whether the data-dependent part of the plan (plan_cuda_data_dependent) refuses call c whatever the flags: a dim
// it defines is read from a tensor's values by a shape rule the host does not run, or is counted by an op with no
// counting kernel. (With --cuda-graph that part refuses every call defining such a dim; its run is planned here as
// any other's.)
bool data_dependent_refused(const LoweredProgram& p, uint32_t c) {
  for (const Symbol& s : p.symbols) {
    if (s.is_input_dim() || s.call != c) continue;
    const KernelCall& call = p.calls[c];
    if (s.before_call ? !is_cuda_host_shape_rule(call.infer_meta) : !is_cuda_compaction_op(call.op)) return true;
  }
  return false;
}

// Whether every output of `call` shares the buffer of its first tensor argument (an op written in place): nothing
// to run.
bool writes_in_place(const LoweredProgram& p, const KernelCall& call) {
  bool shares = !call.inplace_twin;
  uint32_t in_buffer = kNone;
  for (const KernelArg& a : call.args) {
    if (a.kind == ArgKind::kTensor && in_buffer == kNone) in_buffer = p.values[a.value].buffer;
  }
  bool any_output = false;
  for (const CallOutput& out : call.outputs) {
    for (uint32_t v : out.values) {
      if (v == kNone) continue;
      any_output = true;
      shares &= p.values[v].buffer == in_buffer;
    }
  }
  return shares && any_output && in_buffer != kNone;
}

}  // namespace

std::optional<CudaIndexFamily> cuda_index_family(std::string_view op) {
  for (const FamilyOps& row : family_table()) {
    if (std::find(row.ops.begin(), row.ops.end(), op) != row.ops.end()) return row.family;
  }
  return std::nullopt;
}

bool is_cuda_batched_matmul(std::string_view op) { return op == "matmul" || op == "bmm"; }

bool has_cuda_index_map(const KernelCall& call) {
  return cuda_index_family(call.op) == CudaIndexFamily::kMovement ||
         cuda_index_family(call.op) == CudaIndexFamily::kSelect ||
         cuda_index_family(call.op) == CudaIndexFamily::kLoss || is_cuda_batched_matmul(call.op);
}

const std::set<std::string>& cuda_float32_index_ops() {
  static const std::set<std::string> ops = {
      "dropout", "bilinear_interp", "linear_interp", "linspace", "cumsum", "prod", "pow", "topk", "add_n", "scatter",
      "index_put", "group_norm", "p_norm", "sigmoid_cross_entropy_with_logits", "cross_entropy_with_softmax", "einsum",
      "grid_sample", "deformable_conv", "floor_divide", "uniform", "argsort", "bicubic_interp",
      "prior_box", "log_softmax", "roi_align", "yolo_box"};
  return ops;
}

int64_t cuda_attr_int(const AttrConstant& c) {
  if (c.type == opdef::ArgType::kScalar || c.type == opdef::ArgType::kScalarInt ||
      c.type == opdef::ArgType::kScalarInt64 || c.type == opdef::ArgType::kScalarFloat ||
      c.type == opdef::ArgType::kScalarDouble) {
    return c.scalar.is_floating ? static_cast<int64_t>(c.scalar.float_value) : c.scalar.int_value;
  }
  return c.int_value;
}

double cuda_attr_float(const AttrConstant& c) {
  if (c.type == opdef::ArgType::kFloat || c.type == opdef::ArgType::kDouble) return c.float_value;
  return c.scalar.is_floating ? c.scalar.float_value : static_cast<double>(c.scalar.int_value);
}

std::optional<std::pair<uint32_t, uint32_t>> cuda_checked_view(const LoweredProgram& p, uint32_t c) {
  const KernelCall& call = p.calls.at(c);
  if (p.view_values(c) || call.def == nullptr || call.def->view.size() != 1 || call.outputs.size() != 1 ||
      call.outputs[0].is_list || call.outputs[0].values.size() != 1) {
    return std::nullopt;
  }
  const KernelArg* in = call.arg(call.def->view[0].input);
  const uint32_t out = call.outputs[0].values[0];
  if (in == nullptr || in->kind != ArgKind::kTensor || out == kNone || call.outputs[0].name != call.def->view[0].output ||
      p.values[in->value].dtype != p.values[out].dtype) {
    return std::nullopt;
  }
  // A dim of the output or of the input counted by an earlier call (known before this one runs), none read by this
  // one: MaskRCNN's reshape of gather_nd's [nonzero count] elements to [rois, 28, 28] as well as the reverse.
  bool counted_before = false;
  for (uint32_t v : {out, in->value}) {
    for (const SymExpr& d : p.values[v].dims) {
      for (uint32_t id : d.symbols()) {
        const Symbol& s = p.symbols.at(id);
        if (s.is_input_dim()) continue;
        if (s.call >= c) return std::nullopt;
        counted_before = true;
      }
    }
  }
  if (!counted_before) return std::nullopt;
  return std::make_pair(in->value, out);
}

bool is_cuda_compaction_op(std::string_view op) {
  return op == "nonzero" || op == "masked_select" || op == "unique" || op == "generate_proposals" ||
         op == "distribute_fpn_proposals";
}

bool is_cuda_host_shape_rule(std::string_view infer_meta) {
  static const std::set<std::string, std::less<>> kRules = {"ReshapeInferMeta",        "ExpandInferMeta",
                                                            "TileInferMeta",           "SliceRawInferMeta",
                                                            "FullWithTensorInferMeta", "ArangeInferMeta"};
  return kRules.contains(infer_meta) || is_cuda_host_values_rule(infer_meta);
}

bool is_cuda_host_values_rule(std::string_view infer_meta) { return infer_meta == "InterpolateInferMeta"; }

bool cuda_host_rule_reads_values(std::string_view infer_meta, const KernelArg& a) {
  return is_cuda_host_values_rule(infer_meta) &&
         ((a.kind == ArgKind::kTensor && a.optional) || a.kind == ArgKind::kTensorList);
}

namespace cuda_plan_internal {

namespace {

std::optional<CudaRun> cuda_call_run(const LoweredProgram& p, uint32_t c, bool no_gemm) {
  const KernelCall& call = p.calls[c];
  if (data_dependent_refused(p, c)) return CudaRun::kDataDependent;
  if (is_cuda_compaction_op(call.op)) return CudaRun::kCompaction;
  if (cuda_results_known(p, call)) return CudaRun::kKnown;
  if (is_cuda_conv_op(call.op) || is_cuda_pool_op(call.op) || is_cuda_batch_norm_op(call.op) ||
      is_cuda_rnn_op(call.op) || is_cuda_fft_op(call.op) || is_cuda_complex_part(p, call)) {
    return CudaRun::kLibrary;
  }
  if (is_cuda_index_op(call.op) && !transpose_moves_no_element(call, p.values)) return CudaRun::kIndex;
  if (std::optional<std::pair<uint32_t, uint32_t>> view = p.view_values(c)) {
    // A view of its input's buffer needs nothing; one with a buffer of its own (its input is memory the caller
    // owns, or is written in place later) is a copy of the same bytes.
    return p.values[view->first].buffer != p.values[view->second].buffer ? CudaRun::kCopy : CudaRun::kNothing;
  }
  if (cuda_checked_view(p, c)) return CudaRun::kCopy;  // the element counts checked when it runs
  if (writes_in_place(p, call)) return CudaRun::kNothing;
  if (is_cuda_batched_matmul(call.op) && no_gemm) return CudaRun::kBatchedMatmul;
  return std::nullopt;
}

// The refusal of a call outside every group that no kernel runs (the whole message, "--target cuda: op ...").
std::string no_kernel_message(const KernelCall& call) {
  return "--target cuda: op '" + call.op + "' (" + call.pir_name +
         ") is not in a fused group and the CUDA backend has no kernel for it; only ops with `compute`, `reduce` or "
         "`row_pattern` that fuse, float32, float16 or bfloat16 matmuls, float32 convolutions, pool2d and the "
         "index-mapped ops (transpose, concat, split, slice, gather, interpolation, ...) run on the GPU "
         "(docs/compile.md)";
}

}  // namespace

void plan_runs(const LoweredProgram& p, const FusionPlan& fusion, CudaPlan& plan,
               std::map<uint32_t, std::string>& call_why, std::map<uint32_t, std::string>& call_refusal) {
  for (uint32_t c = 0; c < p.calls.size(); ++c) {
    if (c < fusion.call_group.size() && fusion.call_group[c] != kNone) continue;
    std::string why;  // this call's reason (plan_cuda_index_map and plan_cuda_compute also start from an empty one)
    const KernelCall& call = p.calls[c];
    const std::optional<CudaRun> run = cuda_call_run(p, c, plan.no_gemm.contains(c));
    if (!run) {
      call_refusal.emplace(c, no_kernel_message(call));
      continue;
    }
    plan.runs.emplace(c, *run);
    if (*run == CudaRun::kIndex && has_cuda_compute_form(call)) {
      if (std::optional<CudaComputeForm> form = plan_cuda_compute(p, call, &why)) {
        plan.compute_forms.emplace(c, std::move(*form));
      } else {
        call_why.emplace(c, why);
      }
      continue;
    }
    if ((*run != CudaRun::kIndex && *run != CudaRun::kBatchedMatmul) || !has_cuda_index_map(call)) continue;
    if (std::optional<CudaIndexMap> form = plan_cuda_index_map(p, call, scratch_buffer(p, c) != nullptr, &why)) {
      plan.index_maps.emplace(c, std::move(*form));
    } else if (*run == CudaRun::kBatchedMatmul) {
      call_refusal.emplace(c, "--target cuda: matmul (" + call.pir_name + ") has no CUDA GEMM: " + plan.no_gemm.at(c) +
                                  "; and no batched kernel: " + why);
    } else {
      call_why.emplace(c, why);
    }
  }
}

}  // namespace cuda_plan_internal

}  // namespace kforge::passes
