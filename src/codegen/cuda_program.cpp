// `kforge compile --target cuda` (cuda_program.h): the CudaHostEmitter's headers, class parts and emit, and
// generate_cuda_program_files, which renders NAME.h, NAME.cu and NAME_kernels.cu. The library steps are made in
// cuda_program_library_steps.cpp, the keys of the host source in cuda_program_host_keys.cpp.
#include "codegen/cuda_program.h"

#include "codegen/cuda_fft.h"
#include "codegen/cuda_host_emitter.h"

namespace kforge::codegen {

namespace cuda_program_internal {

std::vector<const char*> CudaHostEmitter::extra_headers() const {
  std::vector<const char*> out;
  std::vector<const char*> half;
  // The convolution, batch-norm and pooling headers template their kernels over 16-bit element types too.
  if (fused_half() || converted_parameters() || !conv_steps_.empty() || batch_norms_ > 0 || !pool_steps_.empty()) {
    half.push_back(kCudaHalfHeaderTemplate);
  }
  std::vector<const char*> library;
  if (!conv_steps_.empty() || batch_norms_ > 0) library.push_back(kCudaEpilogueHeaderTemplate);
  if (!conv_steps_.empty()) {
    // Each convolution's method is a multi-kernel pick, timed with CUDA events (kforge_cudnn.cuh).
    library.push_back(kMultiKernelHeaderTemplate);
    library.push_back(kCudaTimerHeaderTemplate);
    library.push_back(kCudaDepthwiseHeaderTemplate);
    library.push_back(kCudaCudnnBackendHeaderTemplate);
    library.push_back(kCudaCudnnGraphHeaderTemplate);
    library.push_back(kCudaCudnnHeaderTemplate);
    if (padded_convs_) library.push_back(kCudaConvPadHeaderTemplate);
  }
  if (!pool_steps_.empty()) library.push_back(kCudaPoolHeaderTemplate);
  if (rnn_steps_) library.push_back(kCudaRnnHeaderTemplate);
  if (fft_steps_ > 0 || complex_parts_) library.push_back(kCudaFftHeaderTemplate);
  if (index_interp_) {
    library.push_back(kCudaIndexHeaderTemplate);
    library.push_back(kSamplingHeaderTemplate);  // which kforge_index.cuh includes
  }
  if (select_steps_) library.push_back(kCudaSelectHeaderTemplate);
  if (unique_steps_) library.push_back(kCudaUniqueHeaderTemplate);
  if (proposal_steps_) {
    library.push_back(kCudaIndexHeaderTemplate);  // its sorts (TopkLine)
    library.push_back(kSamplingHeaderTemplate);   // which kforge_index.cuh includes
    library.push_back(kCudaProposalsHeaderTemplate);
  }
  if (shape_meta_) library.push_back(kShapeMetaHeaderTemplate);
  if (shape_meta_interp_) library.push_back(kShapeMetaInterpHeaderTemplate);
  if (has_attention(false) || has_attention(true)) {
    half.push_back(kCudaHalfHeaderTemplate);  // kforge_attention_tile.cuh converts through it
    library.push_back(kCudaAttentionTileHeaderTemplate);
  }
  if (has_attention(false)) {
    // Each 16-bit group's method (kforge's kernel or cuDNN's) is a multi-kernel pick, timed with CUDA events.
    library.push_back(kMultiKernelHeaderTemplate);
    library.push_back(kCudaTimerHeaderTemplate);
    library.push_back(kCudaAttentionHeaderTemplate);
    library.push_back(kCudaCudnnBackendHeaderTemplate);
    library.push_back(kCudaCudnnAttentionHeaderTemplate);
  }
  if (has_attention(true)) library.push_back(kCudaAttentionF32HeaderTemplate);
  for (const std::vector<const char*>& list : {gemm_.header_templates(), half, rows_.header_templates(), library}) {
    for (const char* h : list) {
      if (std::find_if(out.begin(), out.end(), [&](const char* o) { return std::string_view(o) == h; }) == out.end()) {
        out.push_back(h);
      }
    }
  }
  return out;
}

CudaClassParts CudaHostEmitter::class_parts() const {
  return {gemm_.summary(), rows_.any(), cuda_.cuda_graph, conv_steps_.size(), pool_steps_.size(),
          library_calls_.size(), half_convs_, size_};
}

bool CudaHostEmitter::emit(tmpl::Value& ctx) {
  check_calls();
  build_library_steps();
  tmpl::List group_kernels;
  for (const FusedGroup& g : plan_.groups) {
    // GEMM, convolution and attention groups are library / header calls from NAME.cu.
    if (!is_generated_kernel(g)) continue;
    CudaGroupCode code = cuda_group_code(g, cls_ + "_", rows_.site(g));
    group_kernels.push_back(code.kernels);
    launchers_.emplace(g.index, std::move(code));
  }
  if (diags_.has_errors()) return false;
  ctx = build_cuda_class_context(p_, plan_, o_, class_parts());
  ctx.set("half", fused_half());
  ctx.set("index_kernels", tmpl::Value(tmpl::List(index_kernels_.begin(), index_kernels_.end())));
  ctx.set("index_interp", index_interp_);
  ctx.set("group_kernels", tmpl::Value(std::move(group_kernels)));
  add_host_keys(ctx);
  return !diags_.has_errors();
}

bool CudaHostEmitter::is_generated_kernel(const FusedGroup& g) {
  return g.kind == passes::GroupKind::kElementwise || g.kind == passes::GroupKind::kRow;
}

bool CudaHostEmitter::has_attention(bool float32) const {
  return std::any_of(plan_.groups.begin(), plan_.groups.end(), [&](const FusedGroup& g) {
    return g.kind == passes::GroupKind::kAttention && (g.attention.dtype == ir::DataType::kFloat32) == float32;
  });
}

bool CudaHostEmitter::fused_half() const {
  for (const FusedGroup& g : plan_.groups) {
    if (is_generated_kernel(g) && group_uses_half(g)) return true;
  }
  return false;
}

bool CudaHostEmitter::converted_parameters() const {
  return std::any_of(p_.parameters.begin(), p_.parameters.end(), [&](const passes::ProgramParameter& pa) {
    return pa.stored_dtype != ir::DataType::kUndefined;
  });
}

std::string CudaHostEmitter::where(SourceLoc loc) const {
  const std::string program =
      banner_input_path(o_.codegen.program_path, o_.codegen.output_dir + "/" + o_.codegen.class_name + ".h");
  if (!loc.valid()) return program;
  const LineCol lc = sources_.line_col(loc);
  return program + ":" + std::to_string(lc.line) + ":" + std::to_string(lc.col);
}

tmpl::Value CudaHostEmitter::dim_equalities() const {
  passes::SymExpr::PrintOptions named;
  named.symbol_name = [this](uint32_t id) { return id < p_.symbols.size() ? p_.symbols[id].name : "?"; };
  std::set<std::pair<passes::SymExpr, passes::SymExpr>> seen;
  tmpl::List out;
  // `what` says why the pair is taken as equal, with {} for the two dims.
  auto add = [&](const std::vector<passes::DimEquality>& pairs, std::string_view what) {
    for (const passes::DimEquality& e : pairs) {
      if (!seen.emplace(e.a, e.b).second) continue;
      tmpl::Value v = tmpl::Value::map();
      v.set("a", size_(e.a));
      v.set("b", size_(e.b));
      v.set("message", fmt::format("{}: {} at {}: {}; with these inputs they are", o_.codegen.class_name, e.op,
                                   where(e.loc),
                                   fmt::format(fmt::runtime(what), e.a.to_string(named), e.b.to_string(named))));
      out.push_back(std::move(v));
    }
  };
  add(p_.dim_equalities, "dims {} and {} meet in a broadcast, which --target cuda takes as equal dims (Paddle "
                         "broadcasts a dim of 1 there)");
  add(target_.geometry_checks, "its output dim {} and the dim {} its geometry gives are equal only through the "
                               "broadcasts --target cuda takes as equal dims");
  return tmpl::Value(std::move(out));
}

std::string CudaHostEmitter::call_description(uint32_t c) const {
  const passes::KernelCall& call = p_.calls[c];
  return "call " + std::to_string(c) + " (" + call.pir_name + " at " + where(call.loc) + ")";
}

std::string CudaHostEmitter::group_description(const FusedGroup& g) const {
  std::vector<uint32_t> calls = g.calls;  // with the absorbed transposes, in program order
  calls.insert(calls.end(), g.absorbed.begin(), g.absorbed.end());
  std::sort(calls.begin(), calls.end());
  std::vector<std::string> placed;
  for (uint32_t c : calls) placed.push_back(p_.calls[c].pir_name + " at " + where(p_.calls[c].loc));
  return fmt::format("group {} ({}: {})", g.index, g.label, fmt::join(placed, ", "));
}

std::string CudaHostEmitter::typed_buffer(uint32_t value, const std::string& type, bool is_const) const {
  const passes::LoweredValue& v = p_.values[value];
  if (v.buffer_offset.constant() == std::optional<int64_t>(0)) {
    return fmt::format("static_cast<{}{}*>({})", is_const ? "const " : "", type, binding(v.buffer));
  }
  return fmt::format("reinterpret_cast<{}{}*>(static_cast<char*>({}) + {})", is_const ? "const " : "", type,
                     binding(v.buffer), size_(v.buffer_offset));
}

std::string CudaHostEmitter::value_binding(uint32_t value) const {
  const passes::LoweredValue& v = p_.values[value];
  if (v.buffer_offset.constant() == std::optional<int64_t>(0)) return binding(v.buffer);
  return fmt::format("static_cast<void*>(static_cast<char*>({}) + {})", binding(v.buffer), size_(v.buffer_offset));
}

}  // namespace cuda_program_internal

bool generate_cuda_program_files(const passes::LoweredProgram& program, const passes::FusionPlan& plan,
                                 const passes::CudaPlan& target_plan, tmpl::Environment& env, const ProgramFilesOptions& options,
                                 const CudaFilesOptions& cuda, OutputSet& outputs) {
  DiagnosticEngine& diags = env.diags();
  std::string header, host, kernels;
  tmpl::Value ctx;
  // Twice, as the CPU context (program_context.cpp): the second numbers the sizes canonically.
  cuda_program_internal::CudaHostEmitter first(program, plan, target_plan, env.sources(), options, cuda, diags);
  if (!first.emit(ctx)) return false;
  cuda_program_internal::CudaHostEmitter emitter(program, plan, target_plan, env.sources(), options, cuda, diags,
                                                 first.size_table().canonical());
  if (!emitter.emit(ctx)) return false;
  const std::optional<int64_t> version = runtime_header_version(env);
  if (!version) return false;
  ctx.set("runtime_version", *version);
  const tmpl::Template* header_template = env.load(kCudaClassHeaderTemplate);
  const tmpl::Template* host_template = env.load(kCudaClassSourceTemplate);
  const tmpl::Template* kernels_template = env.load(kCudaKernelsTemplate);
  if (header_template == nullptr || host_template == nullptr || kernels_template == nullptr) return false;
  if (!env.render(*header_template, ctx, header) || !env.render(*host_template, ctx, host) ||
      !env.render(*kernels_template, ctx, kernels)) {
    return false;
  }
  const std::string& dir = options.codegen.output_dir;
  const std::string& name = options.codegen.class_name;
  std::vector<std::pair<std::string, std::string>> files = {
      {name + ".h", header}, {name + ".cu", host}, {name + "_kernels.cu", kernels}};
  std::vector<const char*> headers = {kRuntimeHeaderTemplate, kParamsHeaderTemplate, kCudaRuntimeHeaderTemplate,
                                      kCudaFusedHeaderTemplate};
  for (const char* h : emitter.extra_headers()) headers.push_back(h);
  for (const char* tmpl_path : headers) {
    const std::optional<std::string_view> text = env.read_verbatim(tmpl_path);
    if (!text) return false;
    files.emplace_back(copied_file_name(tmpl_path), *text);
  }
  bool ok = true;
  for (const auto& [file, text] : files) {
    const std::string path = join_output_path(dir, file);
    ok = outputs.add(path, generated_banner(options, path) + text) && ok;
  }
  if (ok && !options.python_module.empty()) {
    // NAME_python.cc: the class as a CPython extension module on the device (docs/python.md).
    bool clash = false;
    if (!add_python_program_module(env, ctx, PythonModuleTarget::kCuda, options, outputs, &clash)) return false;
    ok = !clash;
  }
  return check_outputs_placed(ok, name, diags);
}

}  // namespace kforge::codegen