#include "passes/cuda_index_scratch.h"

#include <optional>

#include "passes/axis.h"
#include "passes/cuda_plan.h"
#include "passes/fusion.h"

namespace kforge::passes {

SymExpr topk_line_entries(int64_t k, const SymExpr& len) {
  const std::optional<int64_t> n = len.constant();
  return n && k >= 0 && k * 64 < *n ? SymExpr(k) : len;
}

namespace {

// rnn: the gates of every step of one layer and a spare h of every row and direction (kforge_rnn.cuh's
// rnn_scratch_elements), in x's element type.
std::optional<ScratchNeed> rnn_scratch(const LoweredProgram& program, uint32_t c) {
  const KernelCall& call = program.calls[c];
  const uint32_t x = call.tensor_arg("x");
  const KernelArg* mode = call.arg("mode");
  const std::optional<double> hidden = call.constant_number("hidden_size");
  const KernelArg* bidirec = call.arg("is_bidirec");
  if (x == kNone || mode == nullptr || bidirec == nullptr || !hidden || program.values[x].dims.size() != 3) {
    return std::nullopt;  // the plan states why it cannot run
  }
  const std::string& m = mode->constant.string_value;
  const int64_t gates = m == "LSTM" ? 4 : m == "GRU" ? 3 : 1, dirs = bidirec->constant.bool_value ? 2 : 1;
  const SymShape& dims = program.values[x].dims;
  const auto elem = static_cast<int64_t>(ir::dtype_size(program.values[x].dtype));
  const int64_t h = static_cast<int64_t>(*hidden);
  const SymExpr bytes = (dims[0] * dims[1] * SymExpr(dirs * gates * h) + dims[1] * SymExpr(dirs * h)) * SymExpr(elem);
  return ScratchNeed{c, SymExpr::max(bytes, 4)};
}

}  // namespace

std::vector<ScratchNeed> cuda_index_scratch(const LoweredProgram& program, const FusionPlan& fusion) {
  std::vector<ScratchNeed> needs;
  for (uint32_t c = 0; c < program.calls.size(); ++c) {
    const KernelCall& call = program.calls[c];
    const bool grouped = c < fusion.call_group.size() && fusion.call_group[c] != kNone;
    const bool topk = call.op == "topk";
    if (!grouped && call.op == "rnn") {
      if (std::optional<ScratchNeed> need = rnn_scratch(program, c)) needs.push_back(*need);
      continue;
    }
    if (!grouped && call.op == "fft_r2c") {
      // The plan states why it cannot run one with no form (its scratch is sized by the form it would have).
      if (std::optional<CudaFft> fft = plan_cuda_fft(program, call, false, nullptr)) {
        needs.push_back(ScratchNeed{c, fft->scratch_bytes()});
      }
      continue;
    }
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
