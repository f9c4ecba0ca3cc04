// The CUDA kernels of set_value and set_value_with_tensor (cuda_index_select_call.h), as kernels/index_ops.cc with
// Paddle's slice normalisation: out[e] is x's element outside the strided slice, inside it the value's element at
// the same place of the slice (the values broadcast to the slice's shape without its decrease axes), rendered from
// the plan's form (passes/cuda_plan_set_value.cpp resolves the slice and the values' strides) into the form that
// templates/program/cuda/index_slice.j2's set_value spells.
#include <map>

#include "codegen/cpp_text.h"
#include "codegen/cuda_index_select_call.h"
#include "support/text.h"

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
  tmpl::List list;  // set_value's constants, as the element type
  if (!with_tensor) {
    for (const passes::ScalarConstant& c : constants) {
      list.push_back(type == "bool" ? ((c.is_floating ? c.float_value != 0 : c.int_value != 0) ? "true" : "false")
                     : c.is_floating ? cuda_device_constant(c.float_value, type)
                                     : fmt::format("static_cast<{}>({}LL)", type, c.int_value));
    }
  }
  std::map<uint32_t, std::string> bound_values;  // the tensors bounds are read from: their parameters
  tmpl::List dims;  // each dim's coordinate t<d> in the slice (index_slice.j2)
  std::vector<std::string> inside, offset;
  for (size_t d = 0; d < rank; ++d) {
    const passes::CudaSliceRange& r = ranges[d];
    const std::string t = "t" + std::to_string(d);
    tmpl::Value dim = tmpl::Value::map();
    dim.set("name", t);
    dim.set("coordinate", "c" + std::to_string(d));
    dim.set("sliced", r.sliced);
    dim.set("at_run_time", r.at_run_time);
    if (r.at_run_time) {
      // Bounds read from tensors' values, normalised in the kernel (index_slice.j2): t<d>_start, _step, _count.
      auto bound = [&](const std::pair<uint32_t, size_t>& from, const std::string& given) {
        if (from.first == kNone) return given;
        if (!bound_values.contains(from.first)) bound_values.emplace(from.first, k.input(from.first, type_of(from.first)));
        return fmt::format("static_cast<int64_t>({}[{}])", bound_values.at(from.first), from.second);
      };
      dim.set("dim", k.size(xd[d]));
      dim.set("start_given", bound(r.start_from, k.size(r.start)));
      dim.set("end_given", bound(r.end_from, k.size(r.end)));
      dim.set("step_given", bound(r.step_from, std::to_string(r.step)));
      dim.set("start", t + "_start");
      dim.set("step", t + "_step");
      inside.push_back(fmt::format("{0}_ % {0}_step == 0 && {0} >= 0 && {0} < {0}_count", t));
    } else if (r.sliced) {
      dim.set("start", k.size(r.start));
      dim.set("step", r.step);
      inside.push_back(fmt::format("{0}_ % {1} == 0 && {0} >= 0 && {0} < {2}", t, r.step, k.size(r.count)));
    }
    if (form().value_strides[d] != SymExpr(0)) offset.push_back(fmt::format("{} * {}", t, k.size(form().value_strides[d])));
    dims.push_back(std::move(dim));
  }
  tmpl::Value f = tmpl::Value::map();
  f.set("kind", "set_value");
  f.set("type", type);
  f.set("x", in);
  f.set("constants", tmpl::Value(std::move(list)));
  f.set("dims", tmpl::Value(std::move(dims)));
  f.set("inside", inside.empty() ? "true" : kforge::join(inside, " && "));
  f.set("value", fmt::format("{}[{}]", vals, offset.empty() ? "0" : kforge::join(offset, " + ")));
  add(k, value(out).numel());
  kernels_.back().form = std::move(f);
}

}  // namespace kforge::codegen::index_text::select_internal
