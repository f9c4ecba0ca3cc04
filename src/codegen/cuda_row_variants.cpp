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

CudaRowVariantCode::CudaRowVariantCode(const passes::LoweredProgram& program, const passes::FusionPlan& fusion,
                                       const passes::MultiKernelPlan* plan,
                                       const std::map<uint32_t, CudaGroupCode>& launchers, bool cuda_graph,
                                       std::string cls, std::function<std::string(uint32_t)> buffer,
                                       std::function<std::string(const FusedGroup&)> describe, SizeExpr size)
    : p_(program), fusion_(fusion), plan_(plan != nullptr && !plan->sites.empty() ? plan : nullptr),
      launchers_(launchers), cuda_graph_(cuda_graph), cls_(std::move(cls)), buffer_(std::move(buffer)),
      describe_(std::move(describe)), size_(std::move(size)) {}

const passes::MultiKernelSite* CudaRowVariantCode::site(const FusedGroup& g) const {
  return plan_ != nullptr ? plan_->site_for_group(g.index) : nullptr;
}

std::vector<const char*> CudaRowVariantCode::header_templates() const {
  if (!any()) return {};
  return {kCudaTimerHeaderTemplate, kCudaRowVariantsHeaderTemplate, "runtime/kforge_multikernel.h"};
}

std::string CudaRowVariantCode::before_capture() const {
  return any() && cuda_graph_ ? "prepare_rows(kforge_b);" : "";
}

std::vector<std::string> CudaRowVariantCode::host_includes() const {
  if (!any()) return {};
  return {"kforge_row_variants.cuh"};
}

std::string CudaRowVariantCode::variants_function(const passes::MultiKernelSite& site) const {
  const FusedGroup& g = fusion_.groups.at(site.group);
  const CudaGroupCode& code = launchers_.at(g.index);
  std::string c = fmt::format("// {}: the RowArgs pointers back to their types, then variant `variant` of {}.\n",
                              describe_(g), site.name);
  c += fmt::format("cudaError_t launch_rows_{}(int variant, const kforge::cuda_rows::RowArgs& a) {{\n  return {}(variant",
                   g.index, code.variant_launcher);
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    c += fmt::format(",\n      static_cast<const {}*>(a.inputs[{}])", cuda_scalar_type(g.inputs[i].storage).value_or("float"), i);
  }
  for (size_t i = 0; i < g.stores.size(); ++i) {
    c += fmt::format(",\n      static_cast<{}*>(a.stores[{}])", cuda_scalar_type(g.stores[i].storage).value_or("float"), i);
  }
  c += ", a.outer, a.inner, a.stream);\n}\n\n";
  c += fmt::format("// The stores of {} (scratch copies while benchmarking): element size, one per row?\n", site.name);
  c += fmt::format("const std::vector<kforge::cuda_rows::RowStore> kRowStores{} = {{", g.index);
  for (size_t i = 0; i < g.stores.size(); ++i) {
    c += fmt::format("{}{{{}, {}}}", i ? ", " : "", element_bytes(g.stores[i].storage), g.stores[i].per_row ? "true" : "false");
  }
  c += "};\n\n";
  c += fmt::format("// The variants of {}, ranked: the set whose hash is {:#018x}. Register variants run rows up to\n"
                   "// team x regs x {} elements.\n",
                   site.name, site.set_hash, code.vector_width);
  c += fmt::format("std::vector<kforge::cuda_rows::RowMultiKernel::Variant> row_variants_{}() {{\n", g.index);
  c += "  using kforge::cuda_rows::RowArgs;\n  return {\n";
  for (size_t i = 0; i < site.variants.size(); ++i) {
    const passes::KernelVariant& v = site.variants[i];
    c += fmt::format("      {{{}, [](const RowArgs& a) {{ return launch_rows_{}({}, a); }}, {}, {}", cpp_string(v.name),
                     g.index, i, v.rank, cpp_int_list(v.hint));
    if (v.kind == passes::VariantKind::kCudaRowRegisters) {
      c += fmt::format(",\n       kforge::cuda_rows::rows_up_to({})", int64_t{v.team} * v.regs * code.vector_width);
    }
    c += "},\n";
  }
  c += "  };\n}\n\n";
  return c;
}

std::string CudaRowVariantCode::args_block(const FusedGroup& g) const {
  std::string inputs, stores;
  for (const passes::GroupInput& in : g.inputs) inputs += (inputs.empty() ? "" : ", ") + buffer_(in.value);
  for (const passes::GroupStore& st : g.stores) stores += (stores.empty() ? "" : ", ") + buffer_(st.value);
  std::string c = "  {\n";
  c += "    const void* const kforge_in[] = {" + inputs + "};\n";
  c += "    void* const kforge_st[] = {" + stores + "};\n";
  c += fmt::format("    const kforge::cuda_rows::RowArgs kforge_rows{{kforge_in, kforge_st, static_cast<int64_t>({}),\n"
                   "                                              static_cast<int64_t>({}), stream_}};\n",
                   size_(g.outer), size_(g.inner));
  return c;
}

std::string CudaRowVariantCode::prepare_function() const {
  std::string c = "void " + cls_ + "::prepare_rows(const Bindings& b) {\n";
  c += cuda_binding_locals(p_);
  for (const passes::MultiKernelSite& site : plan_->sites) {
    const FusedGroup& g = fusion_.groups.at(site.group);
    c += "  // " + describe_(g) + "\n" + args_block(g);
    c += fmt::format("    rows_->bench.select(rows_->{}, kRowStores{}, kforge_rows);\n  }}\n", site.name, g.index);
  }
  return c + "}\n\n";
}

std::string CudaRowVariantCode::definitions() const {
  if (!any()) return "";
  std::string c = "namespace {\n\n";
  for (const passes::MultiKernelSite& site : plan_->sites) c += variants_function(site);
  c += "}  // namespace\n\n";
  c += "// Per object: one dispatcher per row group and the RowBench they share (event timer, scratch stores).\n";
  c += "struct " + cls_ + "::RowState {\n  explicit RowState(cudaStream_t stream);\n\n";
  c += "  kforge::cuda_rows::RowBench bench;\n";
  for (const passes::MultiKernelSite& site : plan_->sites) {
    c += fmt::format("  kforge::cuda_rows::RowMultiKernel {};  // group {}\n", site.name, site.group);
  }
  c += "};\n\n";
  c += cls_ + "::RowState::RowState(cudaStream_t stream)\n    : bench(stream)";
  for (const passes::MultiKernelSite& site : plan_->sites) {
    c += fmt::format(",\n      {}(row_variants_{}(),\n          kforge::cuda_timing::make_cuda_config<kforge::cuda_rows::RowMultiKernel>(\n"
                     "              {}, bench.timer(), {:#018x}ull))",
                     site.name, site.group, cpp_string(site.name), site.set_hash);
  }
  c += " {}\n\n";
  if (cuda_graph_) c += prepare_function();
  return c;
}

std::string CudaRowVariantCode::run_setup() const {
  if (!any()) return "";
  return "  if (rows_ == nullptr) rows_ = std::make_unique<RowState>(stream_);\n"
         "  rows_->bench.set_stream(stream_);  // benchmarks time the stream the row kernels run on\n";
}

std::string CudaRowVariantCode::enqueue(const FusedGroup& g) const {
  const passes::MultiKernelSite* s = site(g);
  std::string c = "  // " + describe_(g) + "\n" + args_block(g);
  c += fmt::format("    if (cudaError_t e = rows_->bench.run(rows_->{}, kRowStores{}, kforge_rows); e != cudaSuccess) {{\n"
                   "      return launch_failed({}, e);\n    }}\n  }}\n",
                   s->name, g.index, g.index);
  return c;
}

}  // namespace kforge::codegen
