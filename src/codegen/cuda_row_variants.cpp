#include "codegen/cuda_row_variants.h"

#include <fmt/format.h>

#include "codegen/cpp_text.h"
#include "codegen/cuda_class_context.h"
#include "codegen/cuda_gemm.h"

namespace kforge::codegen {

namespace {

using passes::FusedGroup;

std::string element_bytes(expr::ScalarType t) { return "sizeof(" + cuda_scalar_type(t).value_or("float") + ")"; }

}  // namespace

CudaRowVariantCode::CudaRowVariantCode(const passes::FusionPlan& fusion, const passes::MultiKernelPlan* plan,
                                       const std::map<uint32_t, CudaGroupCode>& launchers, bool cuda_graph,
                                       std::function<std::string(uint32_t)> buffer,
                                       std::function<std::string(const FusedGroup&)> describe, SizeExpr size)
    : fusion_(fusion), plan_(plan != nullptr && !plan->sites.empty() ? plan : nullptr),
      launchers_(launchers), cuda_graph_(cuda_graph), buffer_(std::move(buffer)),
      describe_(std::move(describe)), size_(std::move(size)) {}

const passes::MultiKernelSite* CudaRowVariantCode::site(const FusedGroup& g) const {
  return plan_ != nullptr ? plan_->site_for_group(g.index) : nullptr;
}

std::vector<const char*> CudaRowVariantCode::header_templates() const {
  if (!any()) return {};
  return {kCudaTimerHeaderTemplate, kCudaRowVariantsHeaderTemplate, "runtime/kforge_multikernel.h"};
}

bool CudaRowVariantCode::prepares_before_capture() const { return any() && cuda_graph_; }

std::vector<std::string> CudaRowVariantCode::host_includes() const {
  if (!any()) return {};
  return {"kforge_row_variants.cuh"};
}

tmpl::Value CudaRowVariantCode::site_context(const passes::MultiKernelSite& site) const {
  const FusedGroup& g = fusion_.groups.at(site.group);
  const CudaGroupCode& code = launchers_.at(g.index);
  tmpl::Value c = tmpl::Value::map();
  c.set("kind", "rows");
  c.set("group", static_cast<int64_t>(g.index));
  c.set("name", site.name);
  c.set("name_literal", cpp_string(site.name));
  c.set("description", describe_(g));
  c.set("launcher", code.variant_launcher);
  tmpl::List input_types, inputs, store_types, stores, outputs;
  for (const passes::GroupInput& in : g.inputs) {
    input_types.push_back(cuda_scalar_type(in.storage).value_or("float"));
    inputs.push_back(buffer_(in.value));
  }
  for (const passes::GroupStore& st : g.stores) {
    store_types.push_back(cuda_scalar_type(st.storage).value_or("float"));
    outputs.push_back(buffer_(st.value));
    tmpl::Value store = tmpl::Value::map();
    store.set("bytes", element_bytes(st.storage));
    store.set("per_row", st.per_row ? "true" : "false");
    stores.push_back(std::move(store));
  }
  c.set("input_types", tmpl::Value(std::move(input_types)));
  c.set("inputs", tmpl::Value(std::move(inputs)));
  c.set("store_types", tmpl::Value(std::move(store_types)));
  c.set("outputs", tmpl::Value(std::move(outputs)));
  c.set("stores", tmpl::Value(std::move(stores)));
  c.set("hash", fmt::format("{:#018x}", site.set_hash));
  c.set("width", static_cast<int64_t>(code.vector_width));
  tmpl::List variants;
  for (size_t i = 0; i < site.variants.size(); ++i) {
    const passes::KernelVariant& v = site.variants[i];
    tmpl::Value variant = tmpl::Value::map();
    variant.set("name", cpp_string(v.name));
    variant.set("index", static_cast<int64_t>(i));
    variant.set("rank", static_cast<int64_t>(v.rank));
    variant.set("hint", cpp_int_list(v.hint));
    variant.set("rows_up_to", v.kind == passes::VariantKind::kCudaRowRegisters
                                  ? tmpl::Value(int64_t{v.team} * v.regs * code.vector_width)
                                  : tmpl::Value(false));
    variants.push_back(std::move(variant));
  }
  c.set("variants", tmpl::Value(std::move(variants)));
  c.set("outer", size_(g.outer));
  c.set("inner", size_(g.inner));
  return c;
}

tmpl::Value CudaRowVariantCode::sites() const {
  tmpl::List out;
  if (plan_ != nullptr) {
    for (const passes::MultiKernelSite& site : plan_->sites) out.push_back(site_context(site));
  }
  return tmpl::Value(std::move(out));
}

tmpl::Value CudaRowVariantCode::step(const FusedGroup& g) const { return site_context(*site(g)); }

}  // namespace kforge::codegen
