// The CUDA program's library steps (cuda_host_emitter.h): the calls outside every group (convolutions, pools,
// batch norms, ffts, index-mapped ops, views) are collected and made steps that call cuDNN or kforge's headers, with
// their scratch and padded inputs; the convolutions, pools and batch norms as the CUDA target plan
// (passes/cuda_plan.h) chose them.
#include "codegen/cuda_fft.h"
#include "codegen/cuda_host_emitter.h"

namespace kforge::codegen::cuda_program_internal {

void CudaHostEmitter::check_calls() {
  build_shape_reads({});  // the plan refused the dims the target cannot size (plan_cuda_data_dependent)
  for (const auto& [c, run] : target_.runs) {
    // The plan says how every call outside the groups runs (it refused the others).
    if (run == passes::CudaRun::kNothing || run == passes::CudaRun::kDataDependent) continue;
    library_calls_.push_back(c);
  }
}

void CudaHostEmitter::build_library_steps() {
  const CudaBufferExpr buffer = [this](uint32_t v, const std::string& type, bool is_const) {
    return typed_buffer(v, type, is_const);
  };
  for (const FusedGroup& g : plan_.groups) {
    // Every convolution group has its form: the pipeline stops at a refused one.
    const CudaConv* conv = g.kind == passes::GroupKind::kConv ? target_.group_conv(g.index) : nullptr;
    if (conv != nullptr) add_conv_step(*conv, g.index, g.position, group_description(g), buffer);
  }
  // An index batch is one step where its last call runs; its other calls have none.
  std::map<uint32_t, const std::vector<uint32_t>*> batch_of;
  for (const std::vector<uint32_t>& batch : target_.index_batches) {
    for (uint32_t c : batch) batch_of.emplace(c, &batch);
  }
  for (size_t k = 0; k < library_calls_.size(); ++k) {
    const uint32_t c = library_calls_[k];
    if (const auto batch = batch_of.find(c); batch != batch_of.end()) {
      if (c == batch->second->back()) add_index_batch_step(*batch->second, plan_.groups.size() + k, buffer);
      continue;
    }
    add_library_step(c, plan_.groups.size() + k, call_description(c), buffer);
  }
}

void CudaHostEmitter::add_index_batch_step(const std::vector<uint32_t>& batch, size_t launch,
                                           const CudaBufferExpr& buffer) {
  // Each call's one kernel (the plan batches only calls with an index map, one output and no scratch), named as
  // the batch's: only the batch's kernel is emitted.
  std::vector<CudaIndexKernel> members;
  std::vector<std::string> what;
  for (uint32_t c : batch) {
    std::vector<CudaIndexKernel> kernels =
        cuda_index_kernels(p_, p_.calls[c], target_.index_maps.at(c), cls_ + "_index_", index_kernels_.size(),
                           call_description(c), buffer, sizes_, run_size);
    members.push_back(std::move(kernels.at(0)));
    what.push_back(call_description(c));
  }
  const std::string description = fmt::format("{}", fmt::join(what, "; "));
  tmpl::Value kernel =
      cuda_index_batch_context(fmt::format("{}_index_{}", cls_, index_kernels_.size()), description, members);
  index_kernels_.push_back(kernel);
  tmpl::Value step = tmpl::Value::map();
  step.set("kind", "index");
  step.set("launch", static_cast<int64_t>(launch));
  step.set("description", description);
  step.set("kernels", tmpl::Value(tmpl::List{kernel}));
  library_step_at_.emplace(launch, std::move(step));
}

void CudaHostEmitter::add_library_step(uint32_t c, size_t launch, const std::string& description,
                                       const CudaBufferExpr& buffer) {
  const passes::KernelCall& call = p_.calls[c];
  if (const CudaConv* conv = target_.call_conv(c)) {
    add_conv_step(*conv, launch, c, description, buffer);
    return;
  }
  if (const auto pool = target_.pools.find(c); pool != target_.pools.end()) {
    tmpl::Value step = cuda_pool_step(pool->second, static_cast<int64_t>(pool_steps_.size()),
                                      static_cast<int64_t>(launch), description, buffer, size_);
    step.set("kind", "pool");
    library_step_at_.emplace(launch, step);
    pool_steps_.push_back(std::move(step));
    return;
  }
  if (const auto rnn = target_.rnns.find(c); rnn != target_.rnns.end()) {
    tmpl::Value step = cuda_rnn_step(rnn->second, static_cast<int64_t>(launch), description, buffer, size_,
                                     scratch_pointer(c));
    step.set("kind", "rnn");
    library_step_at_.emplace(launch, std::move(step));
    rnn_steps_ = true;
    return;
  }
  if (const auto fft = target_.ffts.find(c); fft != target_.ffts.end()) {
    tmpl::Value step = cuda_fft_step(fft->second, fft_steps_++, static_cast<int64_t>(launch), description, buffer, size_,
                                     scratch_pointer(c));
    step.set("kind", "fft");
    library_step_at_.emplace(launch, std::move(step));
    return;
  }
  if (const auto part = target_.complex_parts.find(c); part != target_.complex_parts.end()) {
    tmpl::Value step = cuda_complex_part_step(part->second, static_cast<int64_t>(launch), description, buffer, size_);
    step.set("kind", "complex_part");
    library_step_at_.emplace(launch, std::move(step));
    complex_parts_ = true;
    return;
  }
  if (const auto norm = target_.batch_norms.find(c); norm != target_.batch_norms.end()) {
    tmpl::Value step = cuda_batch_norm_step(norm->second, static_cast<int64_t>(launch), description, buffer, size_);
    step.set("kind", "batch_norm");
    library_step_at_.emplace(launch, std::move(step));
    ++batch_norms_;
    return;
  }
  if (const auto compaction = target_.compactions.find(c); compaction != target_.compactions.end()) {
    library_step_at_.emplace(launch, select_step(call, compaction->second, launch, description));
    return;
  }
  if (std::optional<std::pair<uint32_t, uint32_t>> view = p_.view_values(c)) {
    tmpl::Value step = cuda_copy_step(p_, view->first, view->second, static_cast<int64_t>(launch), description, buffer, size_);
    step.set("kind", "copy");
    library_step_at_.emplace(launch, std::move(step));
    return;
  }
  if (std::optional<std::pair<uint32_t, uint32_t>> view = passes::cuda_checked_view(p_, c)) {
    tmpl::Value step = cuda_copy_step(p_, view->first, view->second, static_cast<int64_t>(launch), description, buffer, size_);
    step.set("kind", "copy");
    // The input's bytes, which must be the output's (a reshape's infer-meta checks it on the CPU).
    step.set("checked_bytes", size_(p_.values[view->first].bytes()));
    library_step_at_.emplace(launch, std::move(step));
    return;
  }
  // What is left is index-mapped: the known elements written, or the kernels of the plan's form. The plan gave
  // every other call it accepted an index map or a computing form (passes/cuda_plan_index.cpp refuses the rest).
  std::optional<std::vector<CudaIndexKernel>> kernels =
      cuda_known_kernels(p_, call, cls_ + "_index_", index_kernels_.size(), description, buffer, sizes_, run_size);
  if (!kernels) {
    if (const auto map = target_.index_maps.find(c); map != target_.index_maps.end()) {
      kernels = cuda_index_kernels(p_, call, map->second, cls_ + "_index_", index_kernels_.size(), description, buffer,
                                   sizes_, run_size, scratch_pointer(c));
    } else {
      kernels = cuda_index_kernels(p_, call, target_.compute_forms.at(c), cls_ + "_index_", index_kernels_.size(),
                                   description, buffer, sizes_, run_size);
    }
  }
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
}

void CudaHostEmitter::add_conv_step(const CudaConv& conv, size_t launch, uint32_t position,
                                    const std::string& description, const CudaBufferExpr& buffer) {
  padded_convs_ = padded_convs_ || conv.pads_input();
  // A batch norm of parameters is folded into the filter when they are bound (kforge_cudnn.cuh).
  const int64_t fold_offset = conv.foldable ? folded_bytes_ : -1;
  if (conv.foldable) folded_bytes_ += cuda_conv_fold_bytes(conv);
  std::vector<std::string> what = {description};
  if (conv.relu6_as_relu) what.push_back("relu6 as ReLU here, its clamp at 6 in the depthwise convolution that reads the output");
  if (conv.input_max > 0) {
    what.push_back(fmt::format("the input clamped at {} (the relu6 of the convolution that produced it)", conv.input_max));
  }
  tmpl::Value step = cuda_conv_step(conv, static_cast<int64_t>(conv_steps_.size()), static_cast<int64_t>(launch), fmt::format("{}", fmt::join(what, "; ")),
                                    buffer, size_, fold_offset);
  step.set("kind", "conv");
  step.set("scratch", scratch_value(position));
  library_step_at_.emplace(launch, step);
  conv_steps_.push_back(std::move(step));
  if (conv.dtype != ir::DataType::kFloat32) half_convs_ = true;
}

std::string CudaHostEmitter::scratch_pointer(uint32_t position) const {
  const passes::Buffer* scratch = passes::scratch_buffer(p_, position);
  return scratch == nullptr ? "" : binding(scratch->index);
}

tmpl::Value CudaHostEmitter::scratch_value(uint32_t position) const {
  const passes::Buffer* scratch = passes::scratch_buffer(p_, position);
  if (scratch == nullptr) return tmpl::Value(false);
  tmpl::Value v = tmpl::Value::map();
  v.set("pointer", binding(scratch->index));
  // A size computed at run time is an int64_t: Scratch's size_t takes it by a cast (no narrowing in braces).
  v.set("bytes", scratch->size_bytes.is_constant() ? size_(scratch->size_bytes)
                                                   : fmt::format("static_cast<size_t>({})", size_(scratch->size_bytes)));
  return v;
}

}  // namespace kforge::codegen::cuda_program_internal
