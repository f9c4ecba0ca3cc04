// The rnn form of the CUDA target plan (cuda_plan.h): Paddle's LSTM / GRU / RNN_TANH / RNN_RELU as
// templates/cuda/kforge_rnn.cuh runs it (a projection kernel per layer, then a launch per step), and every reason that
// header cannot run a call, in the order it reads them.
#include <fmt/format.h>

#include "passes/cuda_plan.h"
#include "passes/cuda_plan_attrs.h"

namespace kforge::passes {

using namespace cuda_plan_detail;  // Attrs (cuda_plan_attrs.h)

bool is_cuda_rnn_op(std::string_view op) { return op == "rnn"; }

std::optional<CudaRnn> plan_cuda_rnn(const LoweredProgram& p, const KernelCall& call, std::string* why) {
  Attrs a(call, why);
  CudaRnn s;
  s.mode = a.text("mode");
  s.hidden = a.integer("hidden_size");
  s.layers = a.integer("num_layers");
  s.dirs = a.boolean("is_bidirec") ? 2 : 1;
  if (!a.ok()) return std::nullopt;
  s.x = call.tensor_arg("x");
  const KernelArg* pre = call.arg("pre_state");
  const KernelArg* weights = call.arg("weight_list");
  const size_t states = s.mode == "LSTM" ? 2 : 1;
  if (s.x == kNone || pre == nullptr || weights == nullptr || pre->values.size() != states ||
      call.outputs.size() < 3 || call.outputs[0].values.size() != 1 || call.outputs[2].values.size() != states) {
    a.fail("it needs x, its initial states, its weights, out and its final states");
    return std::nullopt;
  }
  s.out = call.outputs[0].values[0];
  s.h0 = pre->values[0];
  s.h = call.outputs[2].values[0];
  if (states == 2) {
    s.c0 = pre->values[1];
    s.c = call.outputs[2].values[1];
  }
  s.weights = weights->values;
  s.lengths = call.tensor_arg("sequence_length");
  s.dtype = p.values[s.x].dtype;
  if (s.dtype != ir::DataType::kFloat32 && s.dtype != ir::DataType::kFloat64) {
    a.fail(fmt::format("x is {}; the CUDA rnn kernels take float32 and float64", ir::dtype_name(s.dtype)));
    return std::nullopt;
  }
  if (s.out == kNone || s.h == kNone || (states == 2 && s.c == kNone)) {
    a.fail("its final states have no buffer (the CUDA rnn kernels keep the running state in them)");
    return std::nullopt;
  }
  const SymShape& xd = p.values[s.x].dims;
  s.steps = xd[0];
  s.batch = xd[1];
  s.input = xd[2];
  if (s.lengths != kNone) s.length_dtype = p.values[s.lengths].dtype;
  return s;
}

}  // namespace kforge::passes
