// The fft form of the CUDA target plan (cuda_plan.h): fft_r2c as templates/cuda/kforge_cufft.cuh runs it (cuFFT over
// the transformed axes, then one kernel that writes out), `real` and `abs` of its complex result, their scratch,
// and every reason the header cannot run a call.
#include <fmt/format.h>

#include <algorithm>

#include "passes/axis.h"
#include "passes/cuda_plan.h"
#include "passes/cuda_plan_attrs.h"

namespace kforge::passes {

using namespace cuda_plan_detail;  // Attrs (cuda_plan_attrs.h)

bool is_cuda_fft_op(std::string_view op) { return op == "fft_r2c"; }

bool is_cuda_complex_part(const LoweredProgram& p, const KernelCall& call) {
  if (call.op != "real" && call.op != "abs") return false;
  const uint32_t x = call.tensor_arg("x");
  return x != kNone && ir::is_complex(p.values[x].dtype);
}

std::optional<CudaFft> plan_cuda_fft(const LoweredProgram& p, const KernelCall& call, bool cuda_graph,
                                     std::string* why) {
  Attrs a(call, why);
  CudaFft f;
  const std::vector<int64_t> axes = a.ints("axes");
  f.normalization = a.text("normalization");
  f.forward = a.boolean("forward");
  f.onesided = a.boolean("onesided");
  if (!a.ok()) return std::nullopt;
  f.x = call.tensor_arg("x");
  f.out = single_output(call);
  if (f.x == kNone || f.out == kNone) {
    a.fail("it needs x and out");
    return std::nullopt;
  }
  f.dtype = p.values[f.x].dtype;
  if (f.dtype != ir::DataType::kFloat32 && f.dtype != ir::DataType::kFloat64) {
    a.fail(fmt::format("x is {}; cuFFT's real-to-complex transforms take float32 and float64",
                       ir::dtype_name(f.dtype)));
    return std::nullopt;
  }
  f.dims = p.values[f.x].dims;
  const auto rank = static_cast<int64_t>(f.dims.size());
  if (axes.empty() || axes.size() > 3) {
    a.fail(fmt::format("it transforms {} axes; cuFFT plans transform 1 to 3", axes.size()));
    return std::nullopt;
  }
  if (rank > 9) {
    a.fail(fmt::format("x has rank {}; kforge_cufft.cuh takes up to 9", rank));
    return std::nullopt;
  }
  for (int64_t axis : axes) {
    const std::optional<int64_t> n = normalize_axis(axis, rank);
    if (!n) {
      a.fail(fmt::format("axis {} is out of range for x of rank {}", axis, rank));
      return std::nullopt;
    }
    f.axes.push_back(*n);
  }
  if (f.normalization != "backward" && f.normalization != "forward" && f.normalization != "ortho") {
    a.fail(fmt::format("its normalization '{}' is none of backward, forward and ortho", f.normalization));
    return std::nullopt;
  }
  if (cuda_graph) {
    // The plan (and cuFFT's work area) is made by the first run with new dims, which a graph capture cannot do.
    a.fail("--cuda-graph: its cuFFT plan is made by the first run with new dims, which a graph capture cannot do");
    return std::nullopt;
  }
  return f;
}

bool CudaFft::permuted() const {
  std::vector<int64_t> order;
  for (int64_t d = 0; d < static_cast<int64_t>(dims.size()); ++d) {
    if (std::find(axes.begin(), axes.end(), d) == axes.end()) order.push_back(d);
  }
  order.insert(order.end(), axes.begin(), axes.end());
  for (size_t d = 0; d < order.size(); ++d) {
    if (order[d] != static_cast<int64_t>(d)) return true;
  }
  return false;
}

SymExpr CudaFft::scratch_bytes() const {
  // kforge_cufft.cuh's fft_scratch_bytes: the one-sided spectrum (complex), then x permuted where it must be.
  const auto elem = static_cast<int64_t>(ir::dtype_size(dtype));
  SymExpr spectrum = 1, numel = 1;
  const int64_t last = axes.back();
  for (int64_t d = 0; d < static_cast<int64_t>(dims.size()); ++d) {
    numel = numel * dims[static_cast<size_t>(d)];
    spectrum = spectrum * (d == last ? SymExpr::floor_div(dims[static_cast<size_t>(d)], 2) + 1 : dims[static_cast<size_t>(d)]);
  }
  const SymExpr bytes = spectrum * SymExpr(2 * elem) + (permuted() ? numel * SymExpr(elem) : SymExpr(0));
  return SymExpr::max(bytes, 4);
}

std::optional<CudaComplexPart> plan_cuda_complex_part(const LoweredProgram& p, const KernelCall& call,
                                                      std::string* why) {
  CudaComplexPart part;
  part.x = call.tensor_arg("x");
  part.out = single_output(call);
  part.abs = call.op == "abs";
  if (part.x == kNone || part.out == kNone) {
    *why = "it needs x and out";
    return std::nullopt;
  }
  const ir::DataType z = p.values[part.x].dtype;
  part.dtype = z == ir::DataType::kComplex64 ? ir::DataType::kFloat32 : ir::DataType::kFloat64;
  if (p.values[part.out].dtype != part.dtype) {
    *why = fmt::format("its output is {}, not the {} of x's {} parts", ir::dtype_name(p.values[part.out].dtype),
                       ir::dtype_name(part.dtype), ir::dtype_name(z));
    return std::nullopt;
  }
  part.count = sym_numel(p.values[part.x].dims);
  return part;
}

}  // namespace kforge::passes
