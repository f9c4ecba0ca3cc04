#include "passes/cuda_index_scratch.h"

#include "passes/axis.h"
#include "passes/fusion.h"

namespace kforge::passes {

SymExpr topk_line_entries(int64_t k, const SymExpr& len) {
  const std::optional<int64_t> n = len.constant();
  return n && k >= 0 && k * 64 < *n ? SymExpr(k) : len;
}

std::vector<ScratchNeed> cuda_index_scratch(const LoweredProgram& program, const FusionPlan& fusion) {
  std::vector<ScratchNeed> needs;
  for (uint32_t c = 0; c < program.calls.size(); ++c) {
    const KernelCall& call = program.calls[c];
    const bool grouped = c < fusion.call_group.size() && fusion.call_group[c] != kNone;
    const bool topk = call.op == "topk";
    if (grouped || (!topk && call.op != "argsort")) continue;
    const uint32_t x = call.tensor_arg("x");
    const std::optional<double> k = topk ? call.constant_number("k") : std::optional<double>(0);
    const std::optional<double> axis = call.constant_number("axis");
    if (x == kNone || !k || !axis) continue;  // codegen states why it cannot run
    const SymShape& dims = program.values[x].dims;
    SymExpr lines = 1, len = 1;
    if (!dims.empty()) {
      const std::optional<int64_t> a = normalize_axis(static_cast<int64_t>(*axis), static_cast<int64_t>(dims.size()));
      if (!a) continue;
      for (size_t d = 0; d < dims.size(); ++d) {
        if (static_cast<int64_t>(d) == *a) len = dims[d];
        else lines = lines * dims[d];
      }
    }
    // At least one entry, so that an empty x still gets a buffer the kernel's pointer can name. An argsort line
    // sorts all its entries.
    const SymExpr entries = topk ? topk_line_entries(static_cast<int64_t>(*k), len) : len;
    needs.push_back(ScratchNeed{c, SymExpr::max(lines * entries * 4, 4)});
  }
  return needs;
}

}  // namespace kforge::passes
