// The step contexts of fft_r2c and of the complex parts after it (codegen/cuda_fft.h).
#include "codegen/cuda_fft.h"

#include <fmt/format.h>

#include <vector>

#include "codegen/cuda_conv_attrs.h"

namespace kforge::codegen {

using conv_detail::element_type_of;

tmpl::Value cuda_fft_step(const passes::CudaFft& s, int64_t number, int64_t launch, const std::string& description,
                          const CudaBufferExpr& buffer, const SizeExpr& size, const std::string& scratch) {
  const std::string type = element_type_of(s.dtype);
  std::vector<std::string> dims, axes;
  for (const passes::SymExpr& d : s.dims) {
    const std::optional<int64_t> c = d.constant();
    dims.push_back(c ? std::to_string(*c) : size(d));
  }
  for (int64_t a : s.axes) axes.push_back(std::to_string(a));
  const char* norm = s.normalization == "ortho" ? "kOrtho" : s.normalization == "forward" ? "kForward" : "kBackward";
  tmpl::Value v = tmpl::Value::map();
  v.set("number", number);
  v.set("launch", launch);
  v.set("description", description);
  v.set("type", type);
  v.set("shape", fmt::format("{{{}, {{{}}}, {}, {{{}}}, kforge::cuda_fft::Norm::{}, {}, {}}}", s.dims.size(),
                             fmt::join(dims, ", "), s.axes.size(), fmt::join(axes, ", "), norm,
                             s.forward ? "true" : "false", s.onesided ? "true" : "false"));
  v.set("x", buffer(s.x, type, true));
  v.set("out", buffer(s.out, type, false));
  v.set("scratch", scratch);
  return v;
}

tmpl::Value cuda_complex_part_step(const passes::CudaComplexPart& s, int64_t launch, const std::string& description,
                                   const CudaBufferExpr& buffer, const SizeExpr& size) {
  const std::string type = element_type_of(s.dtype);
  tmpl::Value v = tmpl::Value::map();
  v.set("launch", launch);
  v.set("description", description);
  v.set("type", type);
  v.set("part", s.abs ? "kforge::cuda_fft::Part::kAbs" : "kforge::cuda_fft::Part::kReal");
  v.set("z", buffer(s.x, type, true));
  v.set("y", buffer(s.out, type, false));
  v.set("count", size(s.count));
  return v;
}

}  // namespace kforge::codegen
