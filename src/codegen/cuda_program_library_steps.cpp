// The CUDA program's library steps (cuda_host_emitter.h): the calls outside every group (convolutions, pools,
// batch norms, views) are checked, planned (mobilenet's relu6 split) and made steps that call cuDNN or kforge's
// headers, with their scratch and padded inputs.
#include "codegen/cuda_host_emitter.h"

namespace kforge::codegen::cuda_program_internal {

void CudaHostEmitter::check_calls() {
  const std::set<uint32_t> refused = check_data_symbols();
  build_shape_reads(refused);
  for (uint32_t c = 0; c < p_.calls.size(); ++c) {
    if (c < plan_.call_group.size() && plan_.call_group[c] != kNone) continue;
    if (refused.contains(c)) continue;
    const passes::KernelCall& call = p_.calls[c];
    if (is_cuda_select_op(call.op)) {  // a compaction whose count comes back to the host (cuda_data_dependent.cpp)
      library_calls_.push_back(c);
      continue;
    }
    if (is_cuda_conv_op(call.op) || is_cuda_pool_op(call.op) || is_cuda_batch_norm_op(call.op) ||
        is_cuda_index_op(call.op) || cuda_results_known(p_, call)) {
      // cuDNN / the pooling / epilogue / an index-mapped kernel / the known elements written: build_library_steps()
      // says if it can
      library_calls_.push_back(c);
      continue;
    }
    if (std::optional<std::pair<uint32_t, uint32_t>> view = p_.view_values(c)) {
      // A view of its input's buffer needs nothing; one with a buffer of its own (its input is memory the
      // caller owns, or is written in place later) is a copy of the same bytes.
      if (p_.values[view->first].buffer != p_.values[view->second].buffer) library_calls_.push_back(c);
      continue;
    }
    bool shares = !call.inplace_twin;
    uint32_t in_buffer = kNone;
    for (const passes::KernelArg& a : call.args) {
      if (a.kind == passes::ArgKind::kTensor && in_buffer == kNone) in_buffer = p_.values[a.value].buffer;
    }
    bool any_output = false;
    for (const passes::CallOutput& out : call.outputs) {
      for (uint32_t v : out.values) {
        if (v == kNone) continue;
        any_output = true;
        shares &= p_.values[v].buffer == in_buffer;
      }
    }
    if (shares && any_output && in_buffer != kNone) continue;
    if (call.op == "matmul" || call.op == "bmm") {
      // Supported matmuls are GEMM groups; one that is not (a batched y) is a generated batched kernel when it
      // can be (build_library_steps() says why not, with why it is no GEMM).
      std::string why;
      if (!passes::gemm_form(p_, call, &why)) {
        library_calls_.push_back(c);
        no_gemm_why_.emplace(c, why);
        continue;
      }
    }
    diags_.error(call.loc, "--target cuda: op '" + call.op + "' (" + call.pir_name +
                               ") is not in a fused group and the CUDA backend has no kernel for it; only ops "
                               "with `compute`, `reduce` or `row_pattern` that fuse, float32, float16 or "
                               "bfloat16 matmuls, float32 convolutions, pool2d and the index-mapped ops "
                               "(transpose, concat, split, slice, gather, interpolation, ...) run on the GPU "
                               "(docs/compile.md)");
  }
}

void CudaHostEmitter::build_library_steps() {
  const CudaBufferExpr buffer = [this](uint32_t v, const std::string& type, bool is_const) {
    return typed_buffer(v, type, is_const);
  };
  plan_relu6_splits();
  for (const FusedGroup& g : plan_.groups) {
    if (g.kind != passes::GroupKind::kConv) continue;
    add_library_step(g.conv_call, p_.calls[g.calls.front()], g.index, g.position, group_description(g), buffer);
  }
  for (size_t k = 0; k < library_calls_.size(); ++k) {
    const passes::KernelCall& call = p_.calls[library_calls_[k]];
    add_library_step(call, call, plan_.groups.size() + k, library_calls_[k], call_description(library_calls_[k]),
                     buffer);
  }
}

size_t CudaHostEmitter::readers(uint32_t v) const {
  size_t n = 0;
  for (const passes::ProgramOutput& o : p_.outputs) n += o.value == v ? 1 : 0;
  for (const passes::KernelCall& call : p_.calls) {
    for (const passes::KernelArg& a : call.args) {
      if (a.value == v || std::find(a.values.begin(), a.values.end(), v) != a.values.end()) {
        ++n;
        break;
      }
    }
  }
  return n;
}

void CudaHostEmitter::plan_relu6_splits() {
  std::map<uint32_t, uint32_t> relu6_out;  // output value -> launch index of a group that may leave its clamp
  std::map<uint32_t, uint32_t> depthwise_in;  // input value -> launch index of a direct depthwise group
  for (const FusedGroup& g : plan_.groups) {
    if (g.kind != passes::GroupKind::kConv) continue;
    std::string why;
    const std::optional<CudaConvSite> s = cuda_conv_site(p_, g.conv_call, &why);
    if (!s) continue;
    if (s->direct_depthwise()) {
      depthwise_in.emplace(s->input, g.index);
    } else if (!s->transposed && s->activation == "relu6" && s->residual == kNone &&
               (s->foldable || s->bias != kNone)) {
      relu6_out.emplace(s->out, g.index);
    }
  }
  for (const auto& [value, producer] : relu6_out) {
    auto consumer = depthwise_in.find(value);
    if (consumer == depthwise_in.end() || readers(value) != 1) continue;
    relu_for_relu6_.insert(producer);
    clamped_inputs_.insert(consumer->second);
  }
}

void CudaHostEmitter::add_library_step(const passes::KernelCall& call, const passes::KernelCall& op, size_t launch, uint32_t position,
                      const std::string& description, const CudaBufferExpr& buffer) {
  std::string why;
  // A call outside every group runs at its own index: a view there is a copy.
  const bool own_call = &call == &p_.calls[position];
  if (own_call && is_cuda_select_op(call.op)) {
    if (std::optional<tmpl::Value> step = select_step(call, position, launch, description)) {
      library_step_at_.emplace(launch, std::move(*step));
    }
    return;
  }
  if (std::optional<std::pair<uint32_t, uint32_t>> view = own_call ? p_.view_values(position) : std::nullopt) {
    tmpl::Value step = cuda_copy_step(p_, view->first, view->second, static_cast<int64_t>(launch), description, buffer, size_);
    step.set("kind", "copy");
    library_step_at_.emplace(launch, std::move(step));
    return;
  }
  std::optional<std::vector<CudaIndexKernel>> known =
      cuda_known_kernels(p_, call, cls_ + "_index_", index_kernels_.size(), description, buffer, sizes_, run_size);
  if (known || is_cuda_index_op(call.op) || is_cuda_batched_matmul(call.op)) {
    if (std::optional<std::vector<CudaIndexKernel>> kernels =
            known ? std::move(known)
                  : cuda_index_kernels(p_, call, cls_ + "_index_", index_kernels_.size(), description, buffer, sizes_,
                                       run_size, &why)) {
      tmpl::List contexts;
      for (const CudaIndexKernel& k : *kernels) {
        contexts.push_back(cuda_index_kernel_context(k));
        index_kernels_.push_back(contexts.back());
        index_interp_ = index_interp_ || k.interp;
      }
      tmpl::Value step = tmpl::Value::map();
      step.set("kind", "index");
      step.set("launch", static_cast<int64_t>(launch));
      step.set("description", description);
      step.set("kernels", tmpl::Value(std::move(contexts)));
      library_step_at_.emplace(launch, std::move(step));
      return;
    }
  } else if (is_cuda_batch_norm_op(call.op)) {
    if (std::optional<CudaBatchNormSite> site =
            cuda_batch_norm_site(p_, call, [this](uint32_t v) { return is_read(v); }, &why)) {
      tmpl::Value step = cuda_batch_norm_step(*site, static_cast<int64_t>(launch), description, buffer, size_);
      step.set("kind", "batch_norm");
      library_step_at_.emplace(launch, std::move(step));
      ++batch_norms_;
      return;
    }
  } else if (is_cuda_pool_op(call.op)) {
    if (std::optional<CudaPoolSite> site = cuda_pool_site(p_, call, &why)) {
      tmpl::Value step = cuda_pool_step(*site, static_cast<int64_t>(pool_steps_.size()),
                                        static_cast<int64_t>(launch), description, buffer, size_);
      step.set("kind", "pool");
      library_step_at_.emplace(launch, step);
      pool_steps_.push_back(std::move(step));
      return;
    }
  } else if (std::optional<CudaConvSite> site = cuda_conv_site(p_, call, &why)) {
    if (site->pads_input() && !padded_input_fits(*site, position, op)) return;
    // A batch norm of parameters is folded into the filter when they are bound (kforge_cudnn.cuh).
    const int64_t fold_offset = site->foldable ? folded_bytes_ : -1;
    if (site->foldable) folded_bytes_ += cuda_conv_fold_bytes(*site);
    std::string what = description;
    if (relu_for_relu6_.count(static_cast<uint32_t>(launch)) != 0) {
      site->activation = "relu";
      what += "; relu6 as ReLU here, its clamp at 6 in the depthwise convolution that reads the output";
    }
    if (clamped_inputs_.count(static_cast<uint32_t>(launch)) != 0) {
      site->input_max = 6;
      what += "; the input clamped at 6 (the relu6 of the convolution that produced it)";
    }
    tmpl::Value step = cuda_conv_step(*site, static_cast<int64_t>(conv_steps_.size()), static_cast<int64_t>(launch),
                                      what, buffer, size_, fold_offset);
    step.set("kind", "conv");
    step.set("scratch", scratch_value(position));
    library_step_at_.emplace(launch, step);
    conv_steps_.push_back(std::move(step));
    if (site->dtype != ir::DataType::kFloat32) half_convs_ = true;
    return;
  }
  if (is_cuda_batched_matmul(call.op)) {
    const auto no_gemm = no_gemm_why_.find(static_cast<uint32_t>(&op - p_.calls.data()));
    diags_.error(op.loc, "--target cuda: matmul (" + op.pir_name + ") has no CUDA GEMM: " +
                             (no_gemm != no_gemm_why_.end() ? no_gemm->second : std::string()) +
                             "; and no batched kernel: " + why);
    return;
  }
  diags_.error(op.loc, "--target cuda: " + op.op + " (" + op.pir_name + ") has no CUDA kernel: " + why);
}

bool CudaHostEmitter::padded_input_fits(const CudaConvSite& site, uint32_t position, const passes::KernelCall& op) {
  if (std::optional<std::string> why = cuda_conv_padded_input_problem(site, passes::scratch_buffer(p_, position))) {
    diags_.error(op.loc, "--target cuda: " + op.op + " (" + op.pir_name + ") " + *why);
    return false;
  }
  padded_convs_ = true;
  return true;
}

tmpl::Value CudaHostEmitter::scratch_value(uint32_t position) const {
  const passes::Buffer* scratch = passes::scratch_buffer(p_, position);
  if (scratch == nullptr) return tmpl::Value(false);
  tmpl::Value v = tmpl::Value::map();
  v.set("pointer", binding(scratch->index));
  v.set("bytes", size_(scratch->size_bytes));
  return v;
}

}  // namespace kforge::codegen::cuda_program_internal
