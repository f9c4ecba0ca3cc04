// The pool2d and lone inference batch-norm forms of the CUDA target plan (cuda_plan.h; the convolutions are
// cuda_plan_conv.cpp's).
#include <fmt/format.h>

#include "passes/cuda_plan.h"
#include "passes/cuda_plan_attrs.h"

namespace kforge::passes {

using namespace cuda_plan_detail;  // Attrs, nchw, paddings, ... (cuda_plan_attrs.h)

std::optional<CudaPool> plan_cuda_pool(const LoweredProgram& p, const KernelCall& call, std::string* why) {
  Attrs a(call, why);
  CudaPool s;
  s.x = call.tensor_arg("x");
  s.out = single_output(call);
  if (s.x == kNone || s.out == kNone) {
    a.fail("it needs an input and one output");
    return std::nullopt;
  }
  s.dtype = p.values[s.x].dtype;
  if ((!activation_dtype(s.dtype) && s.dtype != ir::DataType::kFloat64) || p.values[s.out].dtype != s.dtype) {
    a.fail(fmt::format("x is {}; the CUDA pooling kernel takes float32, float64, float16 and bfloat16",
                       ir::dtype_name(s.dtype)));
    return std::nullopt;
  }
  const std::vector<int64_t> kernel = a.ints("kernel_size");
  std::vector<int64_t> strides = a.ints("strides");
  const std::vector<int64_t> given_pads = a.ints("paddings");
  const bool ceil_mode = a.boolean("ceil_mode");
  s.exclusive = a.boolean("exclusive");
  const std::string format = a.text("data_format");
  const std::string type = a.text("pooling_type");
  const bool global = a.boolean("global_pooling");
  s.adaptive = a.boolean("adaptive");
  const std::string algorithm = a.text("padding_algorithm");
  if (!a.ok()) return std::nullopt;
  s.nhwc = format == "NHWC";
  SymExpr out_n;
  int64_t out_c = 0;
  if (!nchw(p.values[s.x].dims, s.nhwc, &s.batch, &s.c, &s.h, &s.w) ||
      !nchw(p.values[s.out].dims, s.nhwc, &out_n, &out_c, &s.out_h, &s.out_w) || out_c != s.c || out_n != s.batch) {
    a.fail("its input and output must be 4-D with channels known at generation time");
    return std::nullopt;
  }
  if (type != "max" && type != "avg") {
    a.fail("pooling_type is \"" + type + "\" (max or avg expected)");
    return std::nullopt;
  }
  s.is_max = type == "max";
  if (kernel.size() != 1 && kernel.size() != 2) {
    a.fail(fmt::format("kernel_size has {} values (1 or 2 expected)", kernel.size()));
    return std::nullopt;
  }
  // A global pool is the adaptive pool to 1 x 1 (one window over the whole map, whatever its size).
  s.adaptive = s.adaptive || global;
  s.k_h = global ? 1 : kernel.front();
  s.k_w = global ? 1 : kernel.back();
  if (strides.size() == 1) strides.push_back(strides[0]);
  if (strides.size() != 2 || strides[0] <= 0 || strides[1] <= 0 || s.k_h <= 0 || s.k_w <= 0) {
    a.fail("its kernel_size and strides must be positive pairs");
    return std::nullopt;
  }
  s.stride_h = strides[0];
  s.stride_w = strides[1];
  Pads pads;  // none for an adaptive pool
  if (!s.adaptive &&
      !paddings(a, given_pads, algorithm, s.h, s.w, s.k_h, s.k_w, s.stride_h, s.stride_w, &pads)) {
    return std::nullopt;
  }
  s.pad_top = pads.top;
  s.pad_left = pads.left;
  SymExpr out_h = s.k_h, out_w = s.k_w;  // adaptive: the kernel size is the output size
  if (!s.adaptive) {
    auto out_size = [ceil_mode](const SymExpr& in, int64_t k, int64_t p0, int64_t p1, int64_t stride) {
      return SymExpr::floor_div(in - k + p0 + p1 + (ceil_mode ? stride - 1 : 0), stride) + 1;
    };
    out_h = out_size(s.h, s.k_h, pads.top, pads.bottom, s.stride_h);
    out_w = out_size(s.w, s.k_w, pads.left, pads.right, s.stride_w);
  }
  if (!output_dims_agree(p, s.out_h, out_h, &s.checked_dims) || !output_dims_agree(p, s.out_w, out_w, &s.checked_dims)) {
    a.fail(fmt::format("its output is {} x {} but the geometry gives {} x {}", s.out_h.to_string(),
                       s.out_w.to_string(), out_h.to_string(), out_w.to_string()));
    return std::nullopt;
  }
  return s;
}

std::optional<CudaBatchNorm> plan_cuda_batch_norm(const LoweredProgram& p, const KernelCall& call,
                                                  const std::vector<uint32_t>& readers, std::string* why) {
  Attrs a(call, why);
  CudaBatchNorm s;
  s.x = call.tensor_arg("x");
  s.mean = call.tensor_arg("mean");
  s.variance = call.tensor_arg("variance");
  s.scale = call.tensor_arg("scale");
  s.shift = call.tensor_arg("bias");
  s.out = call.outputs.empty() || call.outputs[0].values.size() != 1 ? kNone : call.outputs[0].values[0];
  const bool test = call.constant_bool("is_test").value_or(false) || call.constant_bool("use_global_stats").value_or(false);
  const std::string format = a.text("data_format");
  s.epsilon = a.floating("epsilon");
  if (!a.ok()) return std::nullopt;
  if (!test) {
    a.fail("it is a training batch norm (batch statistics); only inference (is_test or use_global_stats) runs");
    return std::nullopt;
  }
  if (s.x == kNone || s.out == kNone || s.mean == kNone || s.variance == kNone) {
    a.fail("it needs x, mean, variance and an output");
    return std::nullopt;
  }
  for (size_t i = 1; i < call.outputs.size(); ++i) {
    for (uint32_t v : call.outputs[i].values) {
      if (v != kNone && readers[v] > 0) {
        a.fail("its output " + call.outputs[i].name + " is read, and the CUDA batch norm computes out alone");
        return std::nullopt;
      }
    }
  }
  // Any rank from 2: [n, c, ...] or channel-last [n, ..., c] (NHWC, NLC, NDHWC), the dims but n and c the spatial.
  s.nhwc = format == "NHWC" || format == "NLC" || format == "NDHWC";
  const SymShape& dims = p.values[s.x].dims;
  const std::optional<int64_t> channels = dims.size() >= 2 ? dims[s.nhwc ? dims.size() - 1 : 1].constant() : std::nullopt;
  if (!channels) {
    a.fail("x must have at least 2 dims, its channels known at generation time");
    return std::nullopt;
  }
  s.batch = dims[0];
  s.c = *channels;
  s.spatial = 1;
  for (size_t d = 1; d < dims.size(); ++d) {
    if (d != (s.nhwc ? dims.size() - 1 : 1)) s.spatial = s.spatial * dims[d];
  }
  s.dtype = p.values[s.x].dtype;
  for (uint32_t v : {s.x, s.out, s.mean, s.variance, s.scale, s.shift}) {
    const ir::DataType want = v == s.x || v == s.out ? s.dtype : ir::DataType::kFloat32;
    if (v != kNone && (p.values[v].dtype != want || !activation_dtype(s.dtype))) {
      a.fail(fmt::format("{} is {}; the CUDA batch norm takes float32, float16 or bfloat16 x and y and float32 "
                         "statistics",
                         p.values[v].label(), ir::dtype_name(p.values[v].dtype)));
      return std::nullopt;
    }
  }
  return s;
}

}  // namespace kforge::passes
