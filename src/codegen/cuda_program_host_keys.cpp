// The keys of the CUDA program's host source (cuda_host_emitter.h, templates/program/cuda/program.cu.j2): the
// constants' host tables and device offsets, the steps enqueue() runs per group, and the rest of add_host_keys.
#include "codegen/cuda_host_emitter.h"

namespace kforge::codegen::cuda_program_internal {

void CudaHostEmitter::add_constants(tmpl::Value& ctx, std::vector<size_t>& offsets) {
  tmpl::List tables;
  size_t offset = 0;
  for (size_t i = 0; i < p_.constants.size(); ++i) {
    const passes::ConstantData& c = p_.constants[i];
    // float16 / bfloat16 constants are uploaded as their bits, rounded to nearest even here, at generation
    // time: the host code needs no cuda_fp16.h / cuda_bf16.h conversions, and the bits are what every run uses.
    const bool half = c.dtype == ir::DataType::kFloat16 || c.dtype == ir::DataType::kBFloat16;
    // The plan refused a constant of any other dtype (passes::plan_cuda_tensor_dtypes).
    const std::optional<std::string> t = half ? std::optional<std::string>("uint16_t") : element_type(c.dtype);
    const int64_t numel = c.numel();
    const size_t bytes = static_cast<size_t>(numel) * ir::dtype_size(c.dtype);
    offsets.push_back(offset);
    const bool floating = ir::is_floating(c.dtype);
    tmpl::List values;
    for (int64_t k = 0; k < (c.splat ? 1 : numel); ++k) {
      if (half) values.push_back(fmt::format("0x{:04x}", ir::half_bits_from_double(c.dtype, c.float_at(k))));
      else if (floating) values.push_back(floating_constant(*t, c.float_at(k)));
      else values.push_back(fmt::format("static_cast<{}>({})", *t, c.int_at(k)));
    }
    tmpl::Value table = tmpl::Value::map();
    table.set("index", static_cast<int64_t>(i));
    table.set("type", *t);
    table.set("bits_of", half ? std::string(ir::dtype_name(c.dtype)) : std::string());
    table.set("values", tmpl::Value(std::move(values)));
    table.set("numel", numel);
    table.set("offset", static_cast<int64_t>(offset));
    table.set("splat", c.splat);
    tables.push_back(std::move(table));
    offset += (bytes + 63) / 64 * 64;
  }
  ctx.set("constant_tables", tmpl::Value(std::move(tables)));
  ctx.set("constants_host_bytes", static_cast<int64_t>(std::max<size_t>(offset, 64)));
}

std::string CudaHostEmitter::floating_constant(const std::string& type, double v) {
  if (std::isnan(v)) return fmt::format("std::numeric_limits<{}>::quiet_NaN()", type);
  if (std::isinf(v)) return fmt::format("{}std::numeric_limits<{}>::infinity()", v < 0 ? "-" : "", type);
  return fmt::format("static_cast<{}>({:.17g})", type, v);
}

tmpl::Value CudaHostEmitter::steps() const {
  tmpl::List out;
  int64_t attention_sites = 0;  // the 16-bit attention groups numbered so far
  size_t next_call = 0;  // the next of library_calls_, placed before the first group that comes after it
  std::set<uint32_t> placed_reads;  // calls whose dims read from a tensor's values are bound already
  auto calls_before = [&](uint32_t position) {
    for (; next_call < library_calls_.size() && library_calls_[next_call] < position; ++next_call) {
      place_shape_reads({library_calls_[next_call]}, placed_reads, out);
      auto step = library_step_at_.find(plan_.groups.size() + next_call);
      if (step != library_step_at_.end()) out.push_back(step->second);
    }
  };
  for (size_t k = 0; k < plan_.groups.size(); ++k) {
    const FusedGroup& g = plan_.groups[k];
    calls_before(g.position);
    place_shape_reads(g.calls, placed_reads, out);
    if (g.kind == passes::GroupKind::kConv) {
      auto step = library_step_at_.find(g.index);
      if (step != library_step_at_.end()) out.push_back(step->second);
      continue;
    }
    if (g.kind == passes::GroupKind::kAttention) {
      const bool float32 = g.attention.dtype == ir::DataType::kFloat32;
      out.push_back(cuda_attention_step(p_, g, g.index, float32 ? -1 : attention_sites++, group_description(g),
                                        [this](uint32_t v, const std::string& type, bool is_const) {
                                          return typed_buffer(v, type, is_const);
                                        },
                                        size_));
      continue;
    }
    if (g.kind == passes::GroupKind::kGemm) {
      out.push_back(gemm_.call(g));
      continue;
    }
    tmpl::Value step = tmpl::Value::map();
    // An elementwise or row group: emit() made its kernel and launcher.
    const CudaGroupCode& launcher = launchers_.at(g.index);
    if (rows_.site(g) != nullptr) {
      out.push_back(rows_.step(g));
      continue;
    }
    tmpl::List args;
    for (const passes::GroupInput& in : g.inputs) {
      args.push_back(typed_buffer(in.value, *cuda_scalar_type(in.storage), true));
    }
    for (const passes::GroupStore& st : g.stores) {
      args.push_back(typed_buffer(st.value, *cuda_scalar_type(st.storage), false));
    }
    args.push_back("static_cast<int64_t>(" + size_(g.outer) + ")");
    args.push_back("static_cast<int64_t>(" + size_(g.inner) + ")");
    for (const CudaShapeParam& sp : cuda_group_shape_params(g)) {
      args.push_back("static_cast<int64_t>(" + size_(sp.value) + ")");
    }
    args.push_back("stream_");
    step.set("kind", "launch");
    step.set("description", group_description(g));
    step.set("launcher", launcher.launcher);
    step.set("args", tmpl::Value(std::move(args)));
    step.set("index", static_cast<int64_t>(k));
    out.push_back(std::move(step));
  }
  calls_before(static_cast<uint32_t>(p_.calls.size()));
  place_shape_reads({}, placed_reads, out);
  return tmpl::Value(std::move(out));
}

void CudaHostEmitter::add_host_keys(tmpl::Value& ctx) {
  std::set<std::string> std_headers = {"cstring", "vector"};
  for (const passes::ConstantData& c : p_.constants) {
    for (int64_t k = 0; k < (c.splat ? 1 : c.numel()) && ir::is_floating(c.dtype); ++k) {
      if (!std::isfinite(c.float_at(k))) std_headers.insert("limits");  // floating_constant's infinities
    }
  }
  for (const std::string& h : gemm_.host_std_includes()) std_headers.insert(h);
  ctx.set("std_includes", tmpl::Value(tmpl::List(std_headers.begin(), std_headers.end())));
  // The launchers' declarations name __half / __nv_bfloat16 when a fused group stores them.
  tmpl::List includes;
  for (const std::string& h : gemm_.host_includes()) includes.push_back(h);
  // load_parameters() rounds the parameters --precision converted with upload_rounded().
  if (fused_half() || converted_parameters()) includes.push_back("kforge_half.cuh");
  for (const std::string& h : rows_.host_includes()) includes.push_back(h);
  if (!conv_steps_.empty()) includes.push_back("kforge_cudnn.cuh");
  if (padded_convs_) includes.push_back("kforge_conv_pad.cuh");
  if (conv_steps_.empty() && batch_norms_ > 0) includes.push_back("kforge_channel_epilogue.cuh");
  if (!pool_steps_.empty()) includes.push_back("kforge_pool.cuh");
  if (rnn_steps_) includes.push_back("kforge_rnn.cuh");
  if (fft_steps_ > 0 || complex_parts_) includes.push_back("kforge_cufft.cuh");
  if (select_steps_) includes.push_back(unique_steps_ ? "kforge_unique.cuh" : "kforge_select.cuh");
  if (proposal_steps_) includes.push_back("kforge_proposals.cuh");
  if (has_attention(false)) includes.push_back("kforge_cudnn_attention.cuh");
  if (has_attention(true)) includes.push_back("kforge_attention_f32.cuh");
  if (shape_meta_) includes.push_back("kforge_shape_meta.h");
  if (shape_meta_interp_) includes.push_back("kforge_shape_meta_interp.h");
  ctx.set("includes", tmpl::Value(std::move(includes)));
  ctx.set("conv_steps", tmpl::Value(tmpl::List(conv_steps_.begin(), conv_steps_.end())));
  ctx.set("folded_bytes", folded_bytes_);
  ctx.set("pool_steps", tmpl::Value(tmpl::List(pool_steps_.begin(), pool_steps_.end())));
  ctx.set("fft_plans", fft_steps_);  // the cuFFT plans kept by the class (fft.j2's FftState)
  tmpl::List launchers;  // the group kernels' contexts, whose launchers NAME.cu declares
  for (const auto& [index, l] : launchers_) launchers.push_back(l.kernels);
  ctx.set("launchers", tmpl::Value(std::move(launchers)));
  tmpl::List launch_names;
  for (const FusedGroup& g : plan_.groups) launch_names.push_back(group_description(g));
  for (uint32_t c : library_calls_) launch_names.push_back(call_description(c));
  ctx.set("launch_names", tmpl::Value(std::move(launch_names)));
  std::vector<size_t> const_offsets;
  add_constants(ctx, const_offsets);
  ctx.set("gemm_multi_kernel", gemm_.multi_kernel_state());
  ctx.set("row_sites", rows_.sites());
  ctx.set("gemm_state", gemm_.state());
  ctx.set("gemm_setup", gemm_.setup());
  ctx.set("gemm_checks", gemm_.checks([&](const passes::GemmGroup& g) { return gemm_data_symbol(g) == kNone; }));
  ctx.set("gemm_calls", gemm_.calls());
  ctx.set("gemm_packs", gemm_.packs());
  tmpl::List binding_symbols;  // bindings.j2's locals()
  for (const passes::Symbol& s : p_.symbols) binding_symbols.push_back(static_cast<int64_t>(s.id));
  ctx.set("binding_symbols", tmpl::Value(std::move(binding_symbols)));
  ctx.set("workspace_bytes", size_(p_.plan.workspace_bytes));
  ctx.set("dim_equalities", dim_equalities());
  tmpl::List bindings;
  for (const Buffer& buf : p_.buffers) {
    std::string ptr;
    switch (buf.kind) {
      case BufferKind::kInput: ptr = "const_cast<void*>(" + input_ident(buf.role_index) + ".data)"; break;
      case BufferKind::kParameter: ptr = fmt::format("parameters_[{}].data", buf.role_index); break;
      case BufferKind::kConstant:
        ptr = fmt::format("constants_.data() + {}", const_offsets.at(buf.role_index));
        break;
      case BufferKind::kOutput: ptr = output_ident(buf.role_index) + "->data"; break;
      case BufferKind::kWorkspace:
        ptr = fmt::format("workspace_.data() + static_cast<size_t>({})", size_(buf.offset));
        break;
      case BufferKind::kRuntime: continue;  // bound by bind_s<id>() once its size is known
    }
    tmpl::Value b = tmpl::Value::map();
    b.set("index", static_cast<int64_t>(buf.index));
    b.set("pointer", ptr);
    bindings.push_back(std::move(b));
  }
  for (size_t i = 0; i < p_.outputs.size(); ++i) {
    if (!cuda_eager_copy(p_, i)) continue;  // sized by data: late_output_copies
    tmpl::Value b = tmpl::Value::map();
    b.set("index", static_cast<int64_t>(cuda_copy_slot(p_, i)));
    b.set("pointer", output_ident(i) + "->data");
    bindings.push_back(std::move(b));
  }
  ctx.set("bindings", tmpl::Value(std::move(bindings)));
  // One graph-cache lookup per run() decides whether to prepare (choices made, cuBLASLt plans built).
  // What it prepares: {gemms, rows, convs, attention} (bools), or false for nothing.
  tmpl::Value all_steps = steps();
  tmpl::List attention_sites;  // the 16-bit attention groups' steps (attention.j2's AttentionState)
  for (const tmpl::Value& step : all_steps.as_list()) {
    const tmpl::Value* kind = step.find("kind");
    if (kind == nullptr || !kind->is_string() || kind->as_string() != "attention") continue;
    if (step.find("site")->as_int() >= 0) attention_sites.push_back(step);
  }
  const bool attention_choices = cuda_.cuda_graph && !attention_sites.empty();
  tmpl::Value before_capture = tmpl::Value::map();
  before_capture.set("gemms", gemm_.prepares_before_capture());
  before_capture.set("rows", rows_.prepares_before_capture());
  before_capture.set("convs", !conv_steps_.empty());
  before_capture.set("attention", attention_choices);
  const bool prepares = gemm_.prepares_before_capture() || rows_.prepares_before_capture() || !conv_steps_.empty() ||
                        attention_choices;
  ctx.set("before_capture", prepares ? std::move(before_capture) : tmpl::Value(false));
  ctx.set("attention_sites", tmpl::Value(std::move(attention_sites)));
  ctx.set("steps", std::move(all_steps));
  tmpl::List copies;
  for (size_t i = 0; i < p_.outputs.size(); ++i) {
    if (!cuda_eager_copy(p_, i)) continue;  // sized by data: late_output_copies
    const auto& v = p_.values[p_.outputs[i].value];
    tmpl::Value c = tmpl::Value::map();
    c.set("to", static_cast<int64_t>(cuda_copy_slot(p_, i)));
    c.set("from", static_cast<int64_t>(v.buffer));
    c.set("bytes", size_(v.bytes()));
    copies.push_back(std::move(c));
  }
  ctx.set("output_copies", tmpl::Value(std::move(copies)));
  ctx.set("late_output_copies", tmpl::Value(late_output_copies()));
  tmpl::List data_symbols = data_symbols_value();
  sizes_.add_program_sizes(p_);
  // Last: everything above named the sizes it uses. compute_sizes() computes those of the input dims, each
  // bind_s<id>() those that need its symbol.
  ctx.set("sizes", sizes_.definitions_value([&](uint32_t k) { return data_.late_symbol(sizes_.expression(k)) == kNone; }));
  add_data_dependent_keys(ctx, std::move(data_symbols));
}

}  // namespace kforge::codegen::cuda_program_internal
