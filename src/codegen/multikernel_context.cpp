#include "codegen/multikernel_context.h"

#include <fmt/format.h>

#include "codegen/cpp_text.h"

namespace kforge::codegen {

namespace {

std::string variant_function(const passes::KernelVariant& v, const std::string& kernel) {
  switch (v.kind) {
    case passes::VariantKind::kLibrary: return "&kforge::kernels::" + kernel;
    case passes::VariantKind::kGemmPlain: return "&kforge_mk_gemm_plain";
    case passes::VariantKind::kGemmBlocked:
      return fmt::format("&kforge_mk_gemm_blocked<{}, {}, {}>", v.mr, v.nr, v.kc);
    case passes::VariantKind::kRowSinglePass: return "&kforge_mk_softmax_single_pass";
    case passes::VariantKind::kRowLooped: return fmt::format("&kforge_mk_softmax_looped<{}>", v.chunk);
    case passes::VariantKind::kCublasLt:
    case passes::VariantKind::kCudaSimt:  // --target cuda: codegen/cuda_gemm.cpp emits these,
    case passes::VariantKind::kCudaTensorCore:
    case passes::VariantKind::kCudaRowAuto:  // and codegen/cuda_row_variants.cpp these
    case passes::VariantKind::kCudaRowRegisters:
    case passes::VariantKind::kCudaRowLooped: break;
  }
  return "";
}

}  // namespace

std::string multi_kernel_callee(const passes::MultiKernelPlan* plan, const passes::KernelCall& call, uint32_t index) {
  if (plan != nullptr) {
    if (const passes::MultiKernelSite* site = plan->site_for_call(index)) return site->name;
  }
  return "kforge::kernels::" + call.kernel;
}

void add_multi_kernel_context(tmpl::Value& ctx, const passes::LoweredProgram& program,
                              const passes::MultiKernelPlan* plan,
                              const std::function<std::string(const passes::KernelCall&)>& where) {
  tmpl::List sites;
  bool has_gemm = false, has_softmax = false;
  if (plan != nullptr) {
    for (const passes::MultiKernelSite& site : plan->sites) {
      const passes::KernelCall& call = program.calls.at(site.call);
      tmpl::Value s = tmpl::Value::map();
      s.set("name", site.name);
      s.set("call", static_cast<int64_t>(site.call));
      s.set("kernel", call.kernel);
      s.set("family", site.family == passes::SiteFamily::kGemm ? "gemm" : "softmax");
      s.set("set_hash", fmt::format("0x{:016x}ull", site.set_hash));
      s.set("where", where(call));
      tmpl::List variants;
      for (const passes::KernelVariant& v : site.variants) {
        tmpl::Value vv = tmpl::Value::map();
        vv.set("name", v.name);
        vv.set("fn", variant_function(v, call.kernel));
        vv.set("rank", static_cast<int64_t>(v.rank));
        vv.set("hint", cpp_int_list(v.hint));
        vv.set("config", v.config);
        variants.push_back(std::move(vv));
      }
      s.set("variants", tmpl::Value(std::move(variants)));
      (site.family == passes::SiteFamily::kGemm ? has_gemm : has_softmax) = true;
      sites.push_back(std::move(s));
    }
  }
  ctx.set("multi_kernel", !sites.empty());
  ctx.set("mk_has_gemm", has_gemm);
  ctx.set("mk_has_softmax", has_softmax);
  if (has_softmax) ctx.set("runtime_math", true);  // the softmax variants' exps are kforge_math.h's
  ctx.set("mk_sites", tmpl::Value(std::move(sites)));
}

}  // namespace kforge::codegen
