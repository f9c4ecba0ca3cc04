#include "codegen/cuda_gemm.h"

#include <fmt/format.h>

#include <limits>

#include "codegen/cpp_text.h"

namespace kforge::codegen {

namespace {

using passes::FusedGroup;
using passes::GemmEpilogue;
using passes::SymExpr;

// cuBLASLt's workspace per object: enough for its split-K fp32 algorithms on large problems; allocated once.
constexpr const char* kWorkspaceBytes = "size_t(32) << 20";

std::string epilogue_code(GemmEpilogue e) {
  switch (e) {
    case GemmEpilogue::kNone: return "kforge::cuda_gemm::Epilogue::kNone";
    case GemmEpilogue::kBias: return "kforge::cuda_gemm::Epilogue::kBias";
    case GemmEpilogue::kBiasGelu: return "kforge::cuda_gemm::Epilogue::kBiasGelu";
  }
  return "";
}

std::string int_dim(const SymExpr& e) {
  if (e.is_constant()) return e.to_string();
  return "static_cast<int>(" + e.to_string() + ")";
}

}  // namespace

CudaGemmCode::CudaGemmCode(const passes::LoweredProgram& program, const passes::FusionPlan& plan,
                           const passes::MultiKernelPlan* multi_kernel, bool cuda_graph, std::string cls,
                           std::function<std::string(uint32_t, bool)> buffer,
                           std::function<std::string(const FusedGroup&)> describe)
    : p_(program), plan_(plan), mk_(multi_kernel), cuda_graph_(cuda_graph), cls_(std::move(cls)), buffer_(std::move(buffer)),
      describe_(std::move(describe)) {
  for (const FusedGroup& g : plan_.groups) {
    if (g.kind == passes::GroupKind::kGemm) groups_.push_back(&g);
  }
  if (mk_ != nullptr && mk_->sites.empty()) mk_ = nullptr;
}

void CudaGemmCode::check(DiagnosticEngine& diags) const {
  for (const FusedGroup* g : groups_) {
    for (const auto& [name, dim] : {std::pair<const char*, const SymExpr*>{"M", &g->gemm.m}, {"N", &g->gemm.n},
                                    {"K", &g->gemm.k}}) {
      std::optional<int64_t> value = dim->constant();
      if (value && *value > std::numeric_limits<int>::max()) {
        diags.error(p_.calls[g->gemm.matmul].loc,
                    fmt::format("--target cuda: the GEMM's {} = {} exceeds the int range of the CUDA GEMM kernels", name,
                                *value));
      }
    }
  }
}

std::vector<const char*> CudaGemmCode::header_templates() const {
  if (!any()) return {};
  if (mk_ == nullptr) return {kCudaGemmHeaderTemplate, kCudaCublasLtHeaderTemplate};
  return {kCudaGemmHeaderTemplate, kCudaCublasLtHeaderTemplate, kCudaTimerHeaderTemplate, kCudaGemmF32HeaderTemplate,
          "runtime/kforge_multikernel.h"};
}


std::string CudaGemmCode::header_members() const {
  if (!any()) return "";
  std::string h = "  // The GEMM groups' state (" + cls_ + ".cu), made by the first run(): the cuBLASLt handle and its\n"
                  "  // preallocated workspace";
  h += mk_ != nullptr ? ", the multi-kernel dispatchers, their event timer and scratch output.\n" : ".\n";
  h += "  struct GemmState;\n  std::unique_ptr<GemmState> gemm_;\n";
  if (cuda_graph_) {
    h += "  // Before a capture: every GEMM's choice made (new shapes benchmarked) and cuBLASLt plan built.\n"
         "  void prepare_gemms(const Bindings& b);\n";
  }
  return h;
}

std::string CudaGemmCode::before_capture(const std::string& key, const std::string& pointers) const {
  if (!any() || !cuda_graph_) return "";
  return "  // A capture must not benchmark (it synchronises) nor build cuBLASLt plans: prepare the GEMMs first.\n"
         "  if (graphs_.needs_capture(" + key + ", " + pointers + ")) prepare_gemms(kforge_b);\n";
}

std::string CudaGemmCode::prepare_function() const {
  std::string c = "void " + cls_ + "::prepare_gemms(const Bindings& b) {\n";
  for (const passes::Symbol& s : p_.symbols) c += fmt::format("  [[maybe_unused]] const int64_t s{} = b.symbols[{}];\n", s.id, s.id);
  for (const FusedGroup* g : groups_) {
    c += "  // " + describe_(*g) + "\n";
    const passes::MultiKernelSite* site = mk_ != nullptr ? mk_->site_for_group(g->index) : nullptr;
    if (site != nullptr) {
      c += args_struct(*g) + fmt::format("    gemm_->select(gemm_->{}, kforge_gemm);\n  }}\n", site->name);
    }
    c += "  kforge::cuda_gemm::cublaslt_gemm_f32_prepare(\n      gemm_->lt,\n" + args_code(*g, "      ") + ", " +
         transposes(*g) + ");\n";
  }
  c += "}\n\n";
  return c;
}

std::vector<std::string> CudaGemmCode::host_std_includes() const {
  if (!any()) return {};
  return {"limits", "memory"};
}

std::string CudaGemmCode::host_includes() const {
  if (!any()) return "";
  return mk_ != nullptr ? "#include \"kforge_gemm_f32.cuh\"\n" : "#include \"kforge_cublaslt.cuh\"\n";
}

std::string CudaGemmCode::failure_helper() const {
  if (!any()) return "";
  return "// A GEMM group's failure: cuBLASLt's status when it refused the call, else the CUDA error.\n"
         "[[maybe_unused]] kforge::Status gemm_failed(size_t index, cudaError_t error,\n"
         "                                            const kforge::cuda_gemm::CublasLtGemm& lt) {\n"
         "  if (error == cudaErrorNotSupported && lt.last_status() != CUBLAS_STATUS_SUCCESS) {\n"
         "    return kforge::Status::Error(\"" + cls_ + ": \", kLaunchNames[index], \": cuBLASLt: \",\n"
         "                                 kforge::cuda_gemm::cublas_status_name(lt.last_status()));\n"
         "  }\n  return launch_failed(index, error);\n}\n\n";
}

std::string CudaGemmCode::variants_function(const passes::MultiKernelSite& site) const {
  const FusedGroup& g = plan_.groups.at(site.group);
  std::string c = fmt::format("// The variants of {} ({}), ranked: the set whose hash is {:#018x}.\n", site.name,
                              describe_(g), site.set_hash);
  c += fmt::format("std::vector<kforge::cuda_gemm::GemmF32MultiKernel::Variant> gemm_variants_{}(\n"
                   "    kforge::cuda_gemm::CublasLtGemm& lt) {{\n  return {{\n",
                   g.index);
  for (const passes::KernelVariant& v : site.variants) {
    std::string fn;
    if (v.kind == passes::VariantKind::kCublasLt) {
      fn = "[&lt](const kforge::cuda_gemm::GemmF32Args& a) { return kforge::cuda_gemm::cublaslt_f32_then_epilogue(lt, a); }";
    } else {
      fn = fmt::format("&kforge::cuda_gemm::simt_f32<kforge::cuda_gemm::SimtTile<{}, {}, {}, {}, {}>, {}, {}>", v.bm,
                       v.bn, v.bk, v.tm, v.tn, epilogue_code(g.gemm.epilogue), transposes(g));
    }
    c += fmt::format("      {{{},\n       {},\n       {}, {}}},\n", cpp_string(v.name), fn, v.rank, cpp_int_list(v.hint));
  }
  c += "  };\n}\n\n";
  return c;
}

std::string CudaGemmCode::args_code(const FusedGroup& g, const std::string& indent) const {
  const passes::GemmGroup& gm = g.gemm;
  std::string bias = gm.bias == passes::kNone ? "nullptr" : buffer_(gm.bias, true);
  return fmt::format("{}{},\n{}{},\n{}{},\n{}{},\n{}{}, {}, {}, {}", indent, buffer_(gm.x, true), indent,
                     buffer_(gm.y, true), indent, buffer_(gm.out, false), indent, bias, indent, int_dim(gm.m),
                     int_dim(gm.n), int_dim(gm.k), epilogue_code(gm.epilogue));
}

std::string CudaGemmCode::transposes(const FusedGroup& g) {
  return std::string(g.gemm.transpose_x ? "true" : "false") + ", " + (g.gemm.transpose_y ? "true" : "false");
}

std::string CudaGemmCode::args_struct(const FusedGroup& g) const {
  return "  {\n    const kforge::cuda_gemm::GemmF32Args kforge_gemm{\n" + args_code(g, "        ") + ", stream_, " +
         transposes(g) + "};\n";
}

std::string CudaGemmCode::definitions() const {
  if (!any()) return "";
  std::string c;
  if (mk_ == nullptr) {
    c += "// The GEMM groups run cuBLASLt (fp32 compute, no TF32) with one handle and workspace per object.\n";
    c += "struct " + cls_ + "::GemmState {\n";
    c += fmt::format("  kforge::cuda_gemm::CublasLtGemm lt{{{}, CUDA_R_32F}};\n}};\n\n", kWorkspaceBytes);
    if (cuda_graph_) c += prepare_function();
    return c;
  }
  c += "namespace {\n\n";
  for (const passes::MultiKernelSite& site : mk_->sites) c += variants_function(site);
  c += "}  // namespace\n\n";
  c += "// Per object: cuBLASLt (one handle and workspace, shared by the cuBLASLt variants), one dispatcher per GEMM\n"
       "// group, the event timer they benchmark with (on the object's stream) and the scratch output they\n"
       "// benchmark into, so that benchmarking never writes a real output.\n";
  c += "struct " + cls_ + "::GemmState {\n";
  c += "  using Variant = kforge::cuda_gemm::GemmF32MultiKernel::Variant;\n";
  c += "  explicit GemmState(cudaStream_t stream);\n\n";
  c += "  // Runs the pick of `site` for a's {M, N, K}; a new shape is first benchmarked on the scratch output.\n"
       "  cudaError_t run(kforge::cuda_gemm::GemmF32MultiKernel& site, const kforge::cuda_gemm::GemmF32Args& a) {\n"
       "    if (a.M == 0 || a.N == 0) return cudaSuccess;  // nothing to compute, no shape worth benchmarking\n"
       "    return site.dispatch({a.M, a.N, a.K}, [&](const Variant& v) { run_on_scratch(v, a); }, a);\n  }\n";
  c += "  // The choice alone (--cuda-graph: made before a capture, so that no benchmark runs inside one).\n"
       "  void select(kforge::cuda_gemm::GemmF32MultiKernel& site, const kforge::cuda_gemm::GemmF32Args& a) {\n"
       "    if (a.M == 0 || a.N == 0) return;\n"
       "    static_cast<void>(site.select({a.M, a.N, a.K}, [&](const Variant& v) { run_on_scratch(v, a); }));\n  }\n";
  c += "  // One benchmark run of a variant, into the scratch output placed at the real output's offset modulo 256\n"
       "  // bytes (cuBLASLt plans by alignment). A variant that fails never wins (the timer reports +inf).\n"
       "  void run_on_scratch(const Variant& v, kforge::cuda_gemm::GemmF32Args a) {\n"
       "    const size_t offset = reinterpret_cast<uintptr_t>(a.C) & 255u;\n"
       "    if (!scratch.reserve(size_t(a.M) * size_t(a.N) * sizeof(float) + offset).ok()) {\n"
       "      timer->mark_failed();\n      return;\n    }\n"
       "    a.C = reinterpret_cast<float*>(scratch.data() + offset);\n"
       "    if (v.fn(a) != cudaSuccess) timer->mark_failed();\n  }\n\n";
  c += fmt::format("  kforge::cuda_gemm::CublasLtGemm lt{{{}, CUDA_R_32F}};\n", kWorkspaceBytes);
  c += "  std::shared_ptr<kforge::cuda_timing::CudaEventTimer> timer;\n  kforge::DeviceMemory scratch;\n";
  for (const passes::MultiKernelSite& site : mk_->sites) {
    c += fmt::format("  kforge::cuda_gemm::GemmF32MultiKernel {};  // group {}\n", site.name, site.group);
  }
  c += "};\n\n";
  c += cls_ + "::GemmState::GemmState(cudaStream_t stream)\n    : timer(std::make_shared<kforge::cuda_timing::CudaEventTimer>(stream))";
  for (const passes::MultiKernelSite& site : mk_->sites) {
    c += fmt::format(",\n      {}(gemm_variants_{}(lt),\n          kforge::cuda_gemm::make_gemm_f32_config({}, timer, {:#018x}ull))",
                     site.name, site.group, cpp_string(site.name), site.set_hash);
  }
  c += " {}\n\n";
  if (cuda_graph_) c += prepare_function();
  return c;
}

std::string CudaGemmCode::run_setup() const {
  if (!any()) return "";
  std::string c = "  if (gemm_ == nullptr) {\n";
  c += mk_ != nullptr ? "    gemm_ = std::make_unique<GemmState>(stream_);\n" : "    gemm_ = std::make_unique<GemmState>();\n";
  c += "    if (!gemm_->lt.ok()) {\n      const cublasStatus_t status = gemm_->lt.last_status();\n      gemm_.reset();\n"
       "      return kforge::Status::Error(\"" + cls_ + ": cannot create the cuBLASLt handle: \",\n"
       "                                   kforge::cuda_gemm::cublas_status_name(status));\n    }\n  }\n";
  if (mk_ != nullptr) c += "  gemm_->timer->set_stream(stream_);  // benchmarks time the stream the GEMMs run on\n";
  return c;
}

std::string CudaGemmCode::run_checks() const {
  std::string c;
  for (const FusedGroup* g : groups_) {
    const passes::GemmGroup& gm = g->gemm;
    std::string cond;
    for (const SymExpr* d : {&gm.m, &gm.n, &gm.k}) {
      if (d->is_constant()) continue;
      cond += (cond.empty() ? "" : " || ") + d->to_string() + " > std::numeric_limits<int>::max()";
    }
    if (cond.empty()) continue;
    c += fmt::format("  if ({}) {{\n    return kforge::Status::Error(\"{}: \", kLaunchNames[{}], \": M x N x K = \", {}, \" x \", {}, \" x \", {},\n"
                     "                                 \" exceeds the int range of the CUDA GEMM kernels\");\n  }}\n",
                     cond, cls_, g->index, gm.m.to_string(), gm.n.to_string(), gm.k.to_string());
  }
  return c;
}

std::string CudaGemmCode::enqueue(const FusedGroup& g) const {
  std::string c = "  // " + describe_(g) + "\n";
  const passes::MultiKernelSite* site = mk_ != nullptr ? mk_->site_for_group(g.index) : nullptr;
  if (site == nullptr) {
    c += "  if (cudaError_t e = kforge::cuda_gemm::cublaslt_gemm_f32(\n      gemm_->lt,\n" + args_code(g, "      ") + ", " +
         transposes(g) +
         fmt::format(", stream_);\n      e != cudaSuccess) {{\n    return gemm_failed({}, e, gemm_->lt);\n  }}\n", g.index);
    return c;
  }
  c += args_struct(g);
  c += fmt::format("    if (cudaError_t e = gemm_->run(gemm_->{}, kforge_gemm); e != cudaSuccess) {{\n"
                   "      return gemm_failed({}, e, gemm_->lt);\n    }}\n  }}\n",
                   site->name, g.index);
  return c;
}

}  // namespace kforge::codegen
