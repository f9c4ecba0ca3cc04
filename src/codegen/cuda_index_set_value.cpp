// The CUDA kernels of set_value and set_value_with_tensor (cuda_index_select_call.h), as kernels/index_ops.cc with
// Paddle's slice normalisation: out[e] is x's element outside the strided slice, inside it the value's element at
// the same place of the slice (the values broadcast to the slice's shape without its decrease axes), rendered from
// the plan's form (passes/cuda_plan_set_value.cpp resolves the slice and the values' strides).
#include "codegen/cuda_index_select_call.h"

namespace kforge::codegen::index_text::select_internal {

void SelectCall::set_value(bool with_tensor) {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  const uint32_t values = with_tensor ? call_.tensor_arg("values") : kNone;
  const std::string type = type_of(x);
  const SymShape& xd = value(x).dims;
  const size_t rank = xd.size();
  const std::vector<passes::CudaSliceRange>& ranges = form().ranges;
  const std::vector<passes::ScalarConstant>& constants = form().constants;
  KernelText k = text();
  const std::string in = k.input(x, type);
  const std::string vals = with_tensor ? k.input(values, type) : "vals";
  k.output(out, type);
  k.coordinates(xd);
  if (!with_tensor) {
    std::string list;
    for (const passes::ScalarConstant& c : constants) {
      const std::string one =
          type == "bool" ? ((c.is_floating ? c.float_value != 0 : c.int_value != 0) ? "true" : "false")
          : c.is_floating ? fmt::format("static_cast<{}>({:.17g})", type, c.float_value)
                          : fmt::format("static_cast<{}>({}LL)", type, c.int_value);
      list += (list.empty() ? "" : ", ") + one;
    }
    k.line(fmt::format("const {} vals[{}] = {{{}}};", type, constants.size(), list));
  }
  std::vector<std::string> inside;
  std::string voff;
  for (size_t d = 0; d < rank; ++d) {
    const passes::CudaSliceRange& r = ranges[d];
    const std::string t = "t" + std::to_string(d);
    if (!r.sliced) {
      k.line(fmt::format("[[maybe_unused]] const int64_t {} = c{};", t, d));
    } else {
      k.line(fmt::format("const int64_t {}_ = c{} - {};", t, d, k.size(r.start)));
      k.line(fmt::format("const int64_t {0} = {0}_ / {1};", t, r.step));
      inside.push_back(fmt::format("{0}_ % {1} == 0 && {0} >= 0 && {0} < {2}", t, r.step, k.size(r.count)));
    }
    if (form().value_strides[d] != SymExpr(0)) {
      voff += (voff.empty() ? "" : " + ") + fmt::format("{} * {}", t, k.size(form().value_strides[d]));
    }
  }
  std::string when;
  for (const std::string& c : inside) when += (when.empty() ? "" : " && ") + c;
  const std::string load = fmt::format("{}[{}]", vals, voff.empty() ? "0" : voff);
  k.line(fmt::format("out[e] = {} ? {} : {}[e];", when.empty() ? "true" : when, load, in));
  add(k, value(out).numel());
}

}  // namespace kforge::codegen::index_text::select_internal
