// The template context of multi-kernel dispatch (`kforge compile --multi-kernel-hints`,
// templates/program/multikernel.cc.j2, docs/multi-kernel.md): what the dispatchers and variants print.
#pragma once

#include <functional>
#include <string>

#include "passes/lowered_program.h"
#include "passes/variants.h"
#include "template/value.h"

namespace kforge::codegen {

/// Sets `multi_kernel` (bool), `mk_has_gemm`, `mk_has_softmax` and `mk_sites` on `ctx`. `where` gives a
/// call's "file:line:col". With no plan or no sites, `multi_kernel` is false and the output is unchanged.
void add_multi_kernel_context(tmpl::Value& ctx, const passes::LoweredProgram& program,
                              const passes::MultiKernelPlan* plan,
                              const std::function<std::string(const passes::KernelCall&)>& where);

/// What the generated code calls for call `index`: the site's dispatcher, else kforge::kernels::<kernel>.
std::string multi_kernel_callee(const passes::MultiKernelPlan* plan, const passes::KernelCall& call, uint32_t index);

}  // namespace kforge::codegen
