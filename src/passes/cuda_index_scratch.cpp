#include "passes/cuda_index_scratch.h"

#include "passes/fusion.h"

namespace kforge::passes {

std::vector<ScratchNeed> cuda_index_scratch(const LoweredProgram& program, const FusionPlan& fusion) {
  std::vector<ScratchNeed> needs;
  for (uint32_t c = 0; c < program.calls.size(); ++c) {
    const KernelCall& call = program.calls[c];
    const bool grouped = c < fusion.call_group.size() && fusion.call_group[c] != kNone;
    if (grouped || call.op != "topk") continue;
    const uint32_t x = call.tensor_arg("x");
    if (x == kNone) continue;  // codegen states why it cannot run
    // At least one entry, so that an empty x still gets a buffer the kernel's pointer can name.
    needs.push_back(ScratchNeed{c, SymExpr::max(program.values[x].numel() * 4, 4)});
  }
  return needs;
}

}  // namespace kforge::passes
