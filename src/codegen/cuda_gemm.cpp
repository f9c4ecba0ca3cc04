#include "codegen/cuda_gemm.h"

#include <fmt/format.h>

#include <map>

#include "codegen/cpp_text.h"
#include "codegen/cuda_class_context.h"
#include "support/text.h"

namespace kforge::codegen {

namespace {

using passes::FusedGroup;
using passes::GemmEpilogue;
using passes::SymExpr;

std::string epilogue_code(GemmEpilogue e) {
  switch (e) {
    case GemmEpilogue::kNone: return "kforge::cuda_gemm::Epilogue::kNone";
    case GemmEpilogue::kBias: return "kforge::cuda_gemm::Epilogue::kBias";
    case GemmEpilogue::kBiasGelu: return "kforge::cuda_gemm::Epilogue::kBiasGelu";
    case GemmEpilogue::kBiasGeluTanh: return "kforge::cuda_gemm::Epilogue::kBiasGeluTanh";
  }
  return "";
}

std::string int_dim(const SymExpr& e, const SizeExpr& size) {
  if (e.is_constant()) return cpp_int_expr(e);
  return "static_cast<int>(" + size(e) + ")";
}

// How generated code spells the GEMM pieces of one element type. The templates (kforge_cublaslt.cuh,
// kforge_gemm_f32.cuh) are generic over the type; float32 keeps the spellings its output always had, which the
// headers keep as thin wrappers, so that float32 programs generate what they did before 16-bit GEMMs existed.
struct GemmElement {
  const char* cpp;           // the element type
  const char* lt;            // the GemmState member: the cuBLASLt instance of this type
  const char* lt_type;       // its cudaDataType_t
  const char* describe;      // for comments
  const char* cublaslt;      // the call without hints
  const char* prepare;       // its plan builder (before a graph capture)
  const char* args;          // the arguments a site's variants take
  const char* dispatcher;    // the site's dispatcher type
  const char* variant;       // GemmState's alias of the dispatcher's Variant
  const char* lt_variant;    // cuBLASLt as a variant
  const char* config;        // the dispatcher's configuration
};

const GemmElement& element_of(ir::DataType dtype) {
  static const GemmElement kF32{"float", "lt", "CUDA_R_32F", "fp32",
                                "kforge::cuda_gemm::cublaslt_gemm_f32", "kforge::cuda_gemm::cublaslt_gemm_f32_prepare",
                                "kforge::cuda_gemm::GemmF32Args", "kforge::cuda_gemm::GemmF32MultiKernel", "Variant",
                                "kforge::cuda_gemm::cublaslt_f32_then_epilogue",
                                "kforge::cuda_gemm::make_gemm_f32_config"};
  static const GemmElement kBF16{"__nv_bfloat16", "lt_bf16", "CUDA_R_16BF", "bfloat16 with fp32 accumulation",
                                 "kforge::cuda_gemm::cublaslt_gemm", "kforge::cuda_gemm::cublaslt_gemm_prepare",
                                 "kforge::cuda_gemm::GemmArgs<__nv_bfloat16>",
                                 "kforge::cuda_gemm::GemmMultiKernel<__nv_bfloat16>", "VariantBf16",
                                 "kforge::cuda_gemm::cublaslt_then_epilogue",
                                 "kforge::cuda_timing::make_cuda_config<kforge::cuda_gemm::GemmMultiKernel<__nv_bfloat16>>"};
  static const GemmElement kF16{"__half", "lt_f16", "CUDA_R_16F", "float16 with fp32 accumulation",
                                "kforge::cuda_gemm::cublaslt_gemm", "kforge::cuda_gemm::cublaslt_gemm_prepare",
                                "kforge::cuda_gemm::GemmArgs<__half>", "kforge::cuda_gemm::GemmMultiKernel<__half>",
                                "VariantF16", "kforge::cuda_gemm::cublaslt_then_epilogue",
                                "kforge::cuda_timing::make_cuda_config<kforge::cuda_gemm::GemmMultiKernel<__half>>"};
  switch (dtype) {
    case ir::DataType::kBFloat16: return kBF16;
    case ir::DataType::kFloat16: return kF16;
    default: return kF32;  // passes::gemm_form admits no other type
  }
}

const GemmElement& element_of(const FusedGroup& g) { return element_of(g.gemm.dtype); }

}  // namespace

CudaGemmCode::CudaGemmCode(const passes::LoweredProgram& program, const passes::FusionPlan& plan,
                           const passes::MultiKernelPlan* multi_kernel, bool cuda_graph,
                           std::function<std::string(uint32_t, const std::string&, bool)> buffer,
                           std::function<std::string(const FusedGroup&)> describe, SizeExpr size)
    : p_(program), plan_(plan), mk_(multi_kernel), cuda_graph_(cuda_graph), buffer_(std::move(buffer)),
      describe_(std::move(describe)), size_(std::move(size)) {
  for (const FusedGroup& g : plan_.groups) {
    if (g.kind == passes::GroupKind::kGemm) groups_.push_back(&g);
  }
  if (mk_ != nullptr && mk_->sites.empty()) mk_ = nullptr;
  for (const passes::ParameterPack& pack : p_.parameter_packs) {
    pack_offsets_.push_back(pack_bytes_);
    const int64_t bytes = pack.member_elements * static_cast<int64_t>(pack.parameters.size()) *
                          static_cast<int64_t>(ir::dtype_size(pack.dtype));
    pack_bytes_ += (bytes + 255) / 256 * 256;
  }
}

std::vector<ir::DataType> CudaGemmCode::dtypes() const {
  std::vector<ir::DataType> out;
  for (ir::DataType t : {ir::DataType::kFloat32, ir::DataType::kBFloat16, ir::DataType::kFloat16}) {
    for (const FusedGroup* g : groups_) {
      if (g->gemm.dtype == t) {
        out.push_back(t);
        break;
      }
    }
  }
  return out;
}

bool CudaGemmCode::has_tensor_core(ir::DataType dtype) const {
  if (mk_ == nullptr) return false;
  for (const passes::MultiKernelSite& site : mk_->sites) {
    if (plan_.groups.at(site.group).gemm.dtype != dtype) continue;
    for (const passes::KernelVariant& v : site.variants) {
      if (v.kind == passes::VariantKind::kCudaTensorCore) return true;
    }
  }
  return false;
}

std::vector<const char*> CudaGemmCode::header_templates() const {
  if (!any()) return {};
  // kforge_gemm.cuh includes kforge_half.cuh (its separate epilogue is one template over the element type).
  std::vector<const char*> headers = {kCudaGemmHeaderTemplate, kCudaCublasLtHeaderTemplate, kCudaHalfHeaderTemplate};
  if (mk_ == nullptr) return headers;
  for (const char* h : {kCudaTimerHeaderTemplate, kCudaGemmF32HeaderTemplate, "runtime/kforge_multikernel.h"}) {
    headers.push_back(h);
  }
  for (ir::DataType t : dtypes()) {
    if (has_tensor_core(t)) {
      headers.push_back(kCudaGemmTensorCoreHeaderTemplate);
      break;
    }
  }
  return headers;
}

CudaGemmSummary CudaGemmCode::summary() const {
  CudaGemmSummary out;
  if (!any()) return out;
  bool simt = false, tensor_core = false;
  std::vector<std::string> types;
  for (ir::DataType t : dtypes()) {
    types.emplace_back(element_of(t).describe);
    simt |= t == ir::DataType::kFloat32;
    out.float32 |= t == ir::DataType::kFloat32;
    tensor_core |= has_tensor_core(t);
  }
  out.types = kforge::join(types, ", ");
  out.count = groups_.size();
  out.multi_kernel = mk_ != nullptr;
  if (out.multi_kernel) {
    out.kernels = std::string(simt ? "SIMT" : "") + (simt && tensor_core ? " or " : "") + (tensor_core ? "tensor-core" : "");
  }
  return out;
}

bool CudaGemmCode::prepares_before_capture() const { return any() && cuda_graph_; }

std::vector<std::string> CudaGemmCode::host_std_includes() const {
  if (!any()) return {};
  return {"limits", "memory"};
}

std::vector<std::string> CudaGemmCode::host_includes() const {
  if (!any()) return {};
  if (mk_ == nullptr) return {"kforge_cublaslt.cuh"};
  for (ir::DataType t : dtypes()) {
    if (has_tensor_core(t)) return {"kforge_gemm_f32.cuh", "kforge_gemm_tc.cuh"};
  }
  return {"kforge_gemm_f32.cuh"};
}

tmpl::Value CudaGemmCode::call(const FusedGroup& g) const {
  const GemmElement& e = element_of(g);
  const passes::GemmGroup& gm = g.gemm;
  const std::string t = e.cpp;
  const passes::MultiKernelSite* site = mk_ != nullptr ? mk_->site_for_group(g.index) : nullptr;
  tmpl::Value c = tmpl::Value::map();
  c.set("kind", "gemm");
  c.set("index", static_cast<int64_t>(g.index));
  c.set("description", describe_(g));
  c.set("lt", e.lt);
  c.set("fn", e.cublaslt);
  c.set("prepare_fn", e.prepare);
  c.set("args_type", e.args);
  c.set("x", buffer_(gm.x, t, true));
  c.set("y", gm.packed() ? pack_pointer(gm.y_pack, t) : buffer_(gm.y, t, true));
  c.set("out", buffer_(gm.out, t, false));
  c.set("bias", gm.bias_pack != passes::kNone ? pack_pointer(gm.bias_pack, t)
                : gm.bias == passes::kNone    ? std::string("nullptr")
                                              : buffer_(gm.bias, t, true));
  c.set("dims", int_dim(gm.m, size_) + ", " + int_dim(gm.n, size_) + ", " + int_dim(gm.k, size_));
  c.set("epilogue", epilogue_code(gm.epilogue));
  c.set("transposes", transposes(g));
  c.set("batched", gm.batched);
  c.set("batch", "kforge::cuda_gemm::Batch{}");  // one product (a site's arguments name it all the same)
  if (gm.batched) {
    std::string outer;  // the second level, when there is one
    if (gm.outer.constant() != std::optional<int64_t>(1)) {
      outer = fmt::format(", {}, {}, {}, {}", size_(gm.outer), size_(gm.outer_stride_x),
                          size_(gm.outer_stride_y), size_(gm.outer_stride_out));
    }
    // A pack's products add their own biases, N apart: Batch::stride_bias, after the (unused) outer level.
    if (gm.packed()) outer = fmt::format(", 1, 0, 0, 0, {}", gm.bias_pack == passes::kNone ? "0" : size_(gm.n));
    c.set("batch", fmt::format("kforge::cuda_gemm::Batch{{{}, {}, {}, {}{}}}", int_dim(gm.batch, size_),
                               size_(gm.stride_x), size_(gm.stride_y),
                               size_(gm.stride_out), outer));
  }
  c.set("packed", gm.packed());
  c.set("site", site != nullptr ? tmpl::Value(site->name) : tmpl::Value(false));
  return c;
}

std::string CudaGemmCode::pack_pointer(uint32_t pack, const std::string& type) const {
  return fmt::format("reinterpret_cast<const {}*>(packed_.data() + {})", type, pack_offsets_.at(pack));
}

tmpl::Value CudaGemmCode::packs() const {
  if (p_.parameter_packs.empty()) return tmpl::Value(false);
  tmpl::Value out = tmpl::Value::map();
  out.set("bytes", pack_bytes_);
  tmpl::List copies;
  for (size_t i = 0; i < p_.parameter_packs.size(); ++i) {
    const passes::ParameterPack& pack = p_.parameter_packs[i];
    const int64_t bytes = pack.member_elements * static_cast<int64_t>(ir::dtype_size(pack.dtype));
    for (size_t m = 0; m < pack.parameters.size(); ++m) {
      tmpl::Value c = tmpl::Value::map();
      c.set("to", fmt::format("packed_.data() + {}", pack_offsets_[i] + static_cast<int64_t>(m) * bytes));
      c.set("from", buffer_(p_.parameters.at(pack.parameters[m]).value, "void", true));
      c.set("bytes", bytes);
      c.set("name", p_.parameters.at(pack.parameters[m]).name);
      copies.push_back(std::move(c));
    }
  }
  out.set("copies", tmpl::Value(std::move(copies)));
  return out;
}

tmpl::Value CudaGemmCode::calls() const {
  tmpl::List out;
  for (const FusedGroup* g : groups_) out.push_back(call(*g));
  return tmpl::Value(std::move(out));
}

std::string CudaGemmCode::transposes(const FusedGroup& g) {
  return std::string(g.gemm.transpose_x ? "true" : "false") + ", " + (g.gemm.transpose_y ? "true" : "false");
}

// The function a tile variant of a site calls.
std::string CudaGemmCode::variant_function(const FusedGroup& g, const passes::KernelVariant& v) const {
  const GemmElement& e = element_of(g);
  switch (v.kind) {
    case passes::VariantKind::kCudaTensorCore:
      // No transposes: the planner offers tensor-core tiles to untransposed sites only.
      return fmt::format("&kforge::cuda_gemm::tensor_core<kforge::cuda_gemm::TensorCoreTile<{}, {}, {}, {}, {}, {}>, {}, {}>",
                         v.bm, v.bn, v.bk, v.warps_m, v.warps_n, v.stages, epilogue_code(g.gemm.epilogue), e.cpp);
    default:
      return fmt::format("&kforge::cuda_gemm::simt_f32<kforge::cuda_gemm::SimtTile<{}, {}, {}, {}, {}>, {}, {}>", v.bm,
                         v.bn, v.bk, v.tm, v.tn, epilogue_code(g.gemm.epilogue), transposes(g));
  }
}

tmpl::Value CudaGemmCode::multi_kernel_state() const {
  if (!any() || mk_ == nullptr) return tmpl::Value(false);
  tmpl::Value mk = tmpl::Value::map();
  mk.set("f32_only", dtypes() == std::vector<ir::DataType>{ir::DataType::kFloat32});
  tmpl::List types;
  for (ir::DataType t : dtypes()) {
    const GemmElement& e = element_of(t);
    tmpl::Value type = tmpl::Value::map();
    type.set("alias", e.variant);
    type.set("dispatcher", e.dispatcher);
    type.set("args", e.args);
    type.set("cpp", e.cpp);
    type.set("lt", e.lt);
    type.set("lt_type", e.lt_type);
    type.set("tensor_core", has_tensor_core(t));
    types.push_back(std::move(type));
  }
  mk.set("types", tmpl::Value(std::move(types)));
  // Sites with the same variant set (every layer of a transformer has the same few) share one function that
  // makes it: `sets`, each named after the first group that has it.
  tmpl::List sites, sets;
  std::map<uint64_t, std::string> set_function;  // set hash -> its function
  for (const passes::MultiKernelSite& site : mk_->sites) {
    const FusedGroup& g = plan_.groups.at(site.group);
    const GemmElement& e = element_of(g);
    auto [known, added] = set_function.emplace(site.set_hash, "gemm_variants_" + std::to_string(site.group));
    if (added) {
      tmpl::Value set = tmpl::Value::map();
      set.set("function", known->second);
      set.set("description", describe_(g));
      set.set("hash", fmt::format("{:#018x}", site.set_hash));
      set.set("dispatcher", e.dispatcher);
      set.set("args", e.args);
      tmpl::List variants;
      for (const passes::KernelVariant& v : site.variants) {
        tmpl::Value variant = tmpl::Value::map();
        variant.set("name", cpp_string(v.name));
        // cuBLASLt: gemm.j2's lambda calls `lt_call` on the GemmState's instance with the heuristic's rank
        // `algo`; a tile: its function.
        const bool lt = v.kind == passes::VariantKind::kCublasLt;
        variant.set("lt_call", lt ? tmpl::Value(e.lt_variant) : tmpl::Value(false));
        variant.set("algo", static_cast<int64_t>(v.algo));
        variant.set("fn", lt ? tmpl::Value(false) : tmpl::Value(variant_function(g, v)));
        variant.set("rank", static_cast<int64_t>(v.rank));
        variant.set("hint", cpp_int_list(v.hint));
        variants.push_back(std::move(variant));
      }
      set.set("variants", tmpl::Value(std::move(variants)));
      sets.push_back(std::move(set));
    }
    tmpl::Value s = tmpl::Value::map();
    s.set("name", site.name);
    s.set("name_literal", cpp_string(site.name));
    s.set("group", static_cast<int64_t>(site.group));
    s.set("hash", fmt::format("{:#018x}", site.set_hash));
    s.set("dispatcher", e.dispatcher);
    s.set("lt", e.lt);
    s.set("config", e.config);
    s.set("variants_function", known->second);
    sites.push_back(std::move(s));
  }
  mk.set("sets", tmpl::Value(std::move(sets)));
  mk.set("sites", tmpl::Value(std::move(sites)));
  return mk;
}

tmpl::Value CudaGemmCode::state() const {
  if (!any() || mk_ != nullptr) return tmpl::Value(false);
  tmpl::Value st = tmpl::Value::map();
  tmpl::List lts;
  for (ir::DataType t : dtypes()) {
    tmpl::Value lt = tmpl::Value::map();
    lt.set("name", element_of(t).lt);
    lt.set("type", element_of(t).lt_type);
    lts.push_back(std::move(lt));
  }
  st.set("lts", tmpl::Value(std::move(lts)));
  st.set("f32_only", dtypes() == std::vector<ir::DataType>{ir::DataType::kFloat32});
  return st;
}

tmpl::Value CudaGemmCode::setup() const {
  if (!any()) return tmpl::Value(false);
  tmpl::Value st = tmpl::Value::map();
  tmpl::List lts;
  for (ir::DataType t : dtypes()) lts.push_back(element_of(t).lt);
  st.set("lts", tmpl::Value(std::move(lts)));
  st.set("multi_kernel", mk_ != nullptr);
  st.set("float32", summary().float32);
  return st;
}

tmpl::Value CudaGemmCode::checks(const std::function<bool(const passes::GemmGroup&)>& include) const {
  tmpl::List out;
  for (const FusedGroup* g : groups_) {
    const passes::GemmGroup& gm = g->gemm;
    if (include && !include(gm)) continue;
    std::vector<std::string> too_large;
    for (const SymExpr* d : {&gm.m, &gm.n, &gm.k, &gm.batch}) {
      if (!d->is_constant()) too_large.push_back(size_(*d) + " > std::numeric_limits<int>::max()");
    }
    if (too_large.empty()) continue;
    const std::string cond = fmt::format("{}", fmt::join(too_large, " || "));
    tmpl::Value c = tmpl::Value::map();
    c.set("index", static_cast<int64_t>(g->index));
    c.set("cond", cond);
    c.set("m", size_(gm.m));
    c.set("n", size_(gm.n));
    c.set("k", size_(gm.k));
    c.set("batch", gm.batched ? tmpl::Value(size_(gm.batch)) : tmpl::Value(false));
    out.push_back(std::move(c));
  }
  return tmpl::Value(std::move(out));
}

}  // namespace kforge::codegen
