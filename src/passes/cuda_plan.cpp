// The CUDA target plan (cuda_plan.h): every call's form gathered, the GEMM groups' dims checked, mobilenet_v2's
// relu6 splits, the cuDNN workspaces (and topk's scratch) added to the memory plan and the padded inputs checked against them. The
// forms themselves are read in cuda_plan_conv.cpp and cuda_plan_pool_norm.cpp.
#include "passes/cuda_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <utility>

#include "passes/cuda_index_scratch.h"
#include "passes/cuda_plan_index_checks.h"
#include "passes/cuda_plan_internal.h"
#include "passes/gemm.h"
#include "passes/memory_plan.h"

namespace kforge::passes {

bool is_cuda_conv_op(std::string_view op) {
  return op == "conv2d" || op == "depthwise_conv2d" || op == "conv2d_fused" || op == "conv2d_transpose";
}

bool is_cuda_pool_op(std::string_view op) { return op == "pool2d"; }

bool is_cuda_batch_norm_op(std::string_view op) { return op == "batch_norm"; }

bool cuda_results_known(const LoweredProgram& program, const KernelCall& call) {
  bool any = false;
  for (const CallOutput& o : call.outputs) {
    for (uint32_t v : o.values) {
      if (v == kNone) continue;
      // The kernel writing the elements moves them as their bits: a dtype no index-mapped kernel moves has the
      // op run instead.
      if (program.values[v].known.empty() || !cuda_plan_internal::movable(program.values[v].dtype)) return false;
      any = true;
    }
  }
  return any;
}

const CudaConv* CudaPlan::group_conv(uint32_t g) const {
  const auto it = group_convs.find(g);
  return it != group_convs.end() ? &it->second : nullptr;
}

const CudaConv* CudaPlan::call_conv(uint32_t c) const {
  const auto it = convs.find(c);
  return it != convs.end() ? &it->second : nullptr;
}

bool output_dims_agree(const LoweredProgram& p, const SymExpr& value, const SymExpr& geometry,
                       std::vector<std::pair<SymExpr, SymExpr>>* checked) {
  if (value == geometry) return true;
  if (p.dim_equalities.empty()) return false;
  const EqualDims equal(p.dim_equalities);
  const SymExpr a = equal.resolve(value), b = equal.resolve(geometry);
  if (a == b) return true;
  if ((a - b).constant() || (a.constant() && b.constant())) return false;
  checked->emplace_back(value, geometry);
  return true;
}

namespace {

// How many calls read each value, plus one per program output it is.
std::vector<uint32_t> count_readers(const LoweredProgram& p) {
  const std::vector<std::vector<uint32_t>> calls = p.value_readers();
  std::vector<uint32_t> readers(calls.size(), 0);
  for (size_t v = 0; v < calls.size(); ++v) readers[v] = static_cast<uint32_t>(calls[v].size());
  for (const ProgramOutput& o : p.outputs) {
    if (o.value < readers.size()) ++readers[o.value];
  }
  return readers;
}

CudaRefusal no_kernel(const KernelCall& op, const std::string& why) {
  return {op.loc, "--target cuda: " + op.op + " (" + op.pir_name + ") has no CUDA kernel: " + why};
}

// The GEMM kernels take M, N, K and the batch as int: a dim known at generation time must fit.
void check_gemm_dims(const LoweredProgram& p, const FusionPlan& fusion, CudaPlan& plan) {
  for (const FusedGroup& g : fusion.groups) {
    if (g.kind != GroupKind::kGemm) continue;
    for (const auto& [name, dim] : {std::pair<const char*, const SymExpr*>{"M", &g.gemm.m}, {"N", &g.gemm.n},
                                    {"K", &g.gemm.k}, {"batch", &g.gemm.batch}}) {
      const std::optional<int64_t> value = dim->constant();
      if (value && *value > std::numeric_limits<int>::max()) {
        plan.refusals.push_back({p.calls[g.gemm.matmul].loc,
                                 fmt::format("--target cuda: the GEMM's {} = {} exceeds the int range of the CUDA "
                                             "GEMM kernels",
                                             name, *value)});
      }
    }
  }
}

// mobilenet_v2's pattern: a convolution group ending in relu6 whose output only a direct depthwise convolution
// group reads (NHWC, kforge_depthwise.cuh). Its clamp at 6 moves into the depthwise kernel's loads (input_max), so
// the first convolution's epilogue is a bias and ReLU, which cuDNN can fuse into its call: one pass over the
// tensor fewer.
void add_geometry_checks(const KernelCall& call, const std::vector<std::pair<SymExpr, SymExpr>>& checked,
                         CudaPlan& plan) {
  for (const auto& [value, geometry] : checked) plan.geometry_checks.push_back({call.loc, call.pir_name, value, geometry});
}

void plan_relu6_splits(const std::vector<uint32_t>& readers, CudaPlan& plan) {
  std::map<uint32_t, uint32_t> relu6_out;     // output value -> group that may leave its clamp
  std::map<uint32_t, uint32_t> depthwise_in;  // input value -> direct depthwise group
  for (const auto& [g, s] : plan.group_convs) {
    if (s.direct_depthwise()) {
      depthwise_in.emplace(s.input, g);
    } else if (!s.transposed && s.activation == ConvActivation::kRelu6 && s.residual == kNone &&
               (s.foldable || s.bias != kNone)) {
      relu6_out.emplace(s.out, g);
    }
  }
  for (const auto& [value, producer] : relu6_out) {
    const auto consumer = depthwise_in.find(value);
    if (consumer == depthwise_in.end() || readers[value] != 1) continue;
    CudaConv& first = plan.group_convs.at(producer);
    first.activation = ConvActivation::kRelu;
    first.relu6_as_relu = true;
    plan.group_convs.at(consumer->second).input_max = 6;
  }
}

// The form of call c when it is a matmul outside every GEMM group (why it is no GEMM), a convolution, a pool or a
// lone batch norm; `call_why`: why one of these cannot run.
void plan_library_call(const LoweredProgram& p, uint32_t c, const std::vector<uint32_t>& readers, bool cuda_graph,
                       CudaPlan& plan, std::map<uint32_t, std::string>& call_why) {
  const KernelCall& call = p.calls[c];
  std::string why;
  if (is_cuda_batched_matmul(call.op)) {
    if (!gemm_form(p, call, &why)) plan.no_gemm.emplace(c, why);
  } else if (is_cuda_conv_op(call.op)) {
    if (std::optional<CudaConv> conv = plan_cuda_conv(p, call, &why)) {
      add_geometry_checks(call, conv->checked_dims, plan);
      plan.convs.emplace(c, std::move(*conv));
    } else {
      call_why.emplace(c, why);
    }
  } else if (is_cuda_pool_op(call.op)) {
    if (std::optional<CudaPool> pool = plan_cuda_pool(p, call, &why)) {
      add_geometry_checks(call, pool->checked_dims, plan);
      plan.pools.emplace(c, std::move(*pool));
    } else {
      call_why.emplace(c, why);
    }
  } else if (is_cuda_rnn_op(call.op)) {
    if (std::optional<CudaRnn> rnn = plan_cuda_rnn(p, call, &why)) {
      plan.rnns.emplace(c, std::move(*rnn));
    } else {
      call_why.emplace(c, why);
    }
  } else if (is_cuda_fft_op(call.op)) {
    if (std::optional<CudaFft> fft = plan_cuda_fft(p, call, cuda_graph, &why)) {
      plan.ffts.emplace(c, std::move(*fft));
    } else {
      call_why.emplace(c, why);
    }
  } else if (is_cuda_complex_part(p, call)) {
    if (std::optional<CudaComplexPart> part = plan_cuda_complex_part(p, call, &why)) {
      plan.complex_parts.emplace(c, std::move(*part));
    } else {
      call_why.emplace(c, why);
    }
  } else if (is_cuda_batch_norm_op(call.op)) {
    if (std::optional<CudaBatchNorm> norm = plan_cuda_batch_norm(p, call, readers, &why)) {
      plan.batch_norms.emplace(c, std::move(*norm));
    } else {
      call_why.emplace(c, why);
    }
  }
}

}  // namespace

CudaPlan plan_cuda(LoweredProgram& p, const FusionPlan& fusion, int64_t scratch_bytes,
                   bool cuda_graph) {
  CudaPlan plan;
  const std::vector<uint32_t> readers = count_readers(p);
  check_gemm_dims(p, fusion, plan);
  // The forms, and why the others cannot run (reported below in order, after the padded inputs are checked).
  std::map<uint32_t, std::string> group_why, call_why, call_refusal;  // call_refusal: the whole message
  std::string why;
  for (const FusedGroup& g : fusion.groups) {
    if (g.kind != GroupKind::kConv) continue;
    if (std::optional<CudaConv> conv = plan_cuda_conv(p, g.conv_call, &why)) {
      add_geometry_checks(g.conv_call, conv->checked_dims, plan);
      plan.group_convs.emplace(g.index, std::move(*conv));
    } else {
      group_why.emplace(g.index, why);
    }
  }
  for (uint32_t c = 0; c < p.calls.size(); ++c) {
    if (c < fusion.call_group.size() && fusion.call_group[c] != kNone) continue;
    // A call whose results are known has them written (the backend's known elements), whatever it is.
    if (!cuda_results_known(p, p.calls[c])) plan_library_call(p, c, readers, cuda_graph, plan, call_why);
  }
  plan_relu6_splits(readers, plan);

  // Each convolution cuDNN runs gets its workspace, live while it runs; an asymmetric padding pads its input into
  // the front of it, so that scratch is the padded input's bytes (an expression of the dims) more.
  std::vector<uint32_t> workspaces;
  std::vector<ScratchNeed> padded;
  auto add_scratch = [&](const CudaConv& conv, uint32_t position) {
    if (conv.direct_depthwise()) return;
    plan.scratch_positions.push_back(position);
    if (conv.pads_input()) {
      padded.push_back({position, conv.padded_input_bytes() + scratch_bytes});
    } else {
      workspaces.push_back(position);
    }
  };
  for (const FusedGroup& g : fusion.groups) {
    if (const CudaConv* conv = plan.group_conv(g.index)) add_scratch(*conv, g.position);
  }
  for (const auto& [c, conv] : plan.convs) add_scratch(conv, c);
  std::sort(plan.scratch_positions.begin(), plan.scratch_positions.end());
  std::sort(workspaces.begin(), workspaces.end());
  std::sort(padded.begin(), padded.end(), [](const ScratchNeed& a, const ScratchNeed& b) { return a.position < b.position; });
  add_scratch_buffers(p, workspaces, scratch_bytes);
  add_scratch_buffers(p, padded);
  add_scratch_buffers(p, cuda_index_scratch(p, fusion));  // topk's lines
  // How every other call outside the groups runs, and the index maps' forms (topk's with its scratch, above).
  cuda_plan_internal::plan_runs(p, fusion, plan, call_why, call_refusal);
  cuda_plan_internal::plan_shape_reads(p, fusion, call_refusal);
  for (const FusedGroup& g : fusion.groups) {
    if (g.kind != GroupKind::kConv) continue;
    const KernelCall& op = p.calls[g.calls.front()];
    if (const auto refused = group_why.find(g.index); refused != group_why.end()) {
      plan.refusals.push_back(no_kernel(op, refused->second));
    }
  }
  for (uint32_t c = 0; c < p.calls.size(); ++c) {
    if (const auto refused = call_why.find(c); refused != call_why.end()) {
      plan.refusals.push_back(no_kernel(p.calls[c], refused->second));
    }
    if (const auto refused = call_refusal.find(c); refused != call_refusal.end()) {
      plan.refusals.push_back({p.calls[c].loc, refused->second});
    }
  }
  refuse_cuda_fused_groups(p, fusion, plan.refusals);
  // Last, and only when all else can run (what the backend checked after the plan before it had this part).
  if (plan.refusals.empty()) plan_cuda_data_dependent(p, cuda_graph, plan);
  if (plan.refusals.empty()) plan_cuda_tensor_dtypes(p, plan);
  if (plan.refusals.empty()) plan_cuda_index_batches(p, fusion, plan);
  return plan;
}

}  // namespace kforge::passes
