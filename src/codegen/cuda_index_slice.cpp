// The CUDA index kernels of the ops that take part of a tensor or pad it (cuda_index_call.h): slice (with
// decrease_axis), strided_slice (negative steps too, normalised as the CPU kernel) and pad3d (constant, reflect,
// replicate, circular), rendered from their plan forms (passes/cuda_plan_move.cpp resolves the starts and steps)
// into the forms templates/program/cuda/index_slice.j2 spells (a slice's is a store, index_forms.j2).
#include <map>

#include "codegen/cpp_text.h"
#include "codegen/cuda_index_call.h"

namespace kforge::codegen::cuda_index_internal {

void IndexCall::slice() {
  const uint32_t x = call_.tensor_arg("input"), out = out_value();
  const std::string type = type_of(x);
  const SymShape& xd = value(x).dims;
  const SymShape& od = value(out).dims;
  const std::vector<SymExpr>& begin = form_.begin;
  KernelText k = text();
  const std::string in = k.input(x, type);
  k.output(out, type);
  k.coordinates(od);
  std::vector<std::string> coords;
  std::map<uint32_t, std::string> start_values;  // the tensors the starts read from data are in: their parameters
  tmpl::Value starts = tmpl::Value::list();      // the starts read from data, for the store form
  size_t next = 0;
  for (size_t d = 0; d < xd.size(); ++d) {
    std::string b = begin[d].constant() == std::optional<int64_t>(0) ? "" : k.size(begin[d]);
    if (d < form_.begin_from.size() && form_.begin_from[d].first != kNone) {
      // A start read from a tensor's values: normalised as the CPU kernel (from the end when negative, clamped to
      // the dim), and to dim - count so that an unchecked start reads no element outside x.
      const auto [v, element] = form_.begin_from[d];
      if (!start_values.contains(v)) start_values.emplace(v, k.input(v, type_of(v)));
      b = "b" + std::to_string(d);
      tmpl::Value start = tmpl::Value::map();
      start.set("name", b);
      start.set("source", start_values.at(v));
      start.set("element", std::to_string(element));
      start.set("size", k.size(xd[d]));
      start.set("count", form_.dropped.count(d) != 0 ? "1" : k.size(od[next]));
      starts.push_back(start);
    }
    if (form_.dropped.count(d) != 0) {
      coords.push_back(b.empty() ? "0" : b);
      continue;
    }
    const std::string c = "c" + std::to_string(next++);
    coords.push_back(b.empty() ? c : c + " + " + b);
  }
  const std::string load = fmt::format("{}[{}]", in, k.offset(coords, xd));
  add(k, value(out).numel());
  tmpl::Value form = cuda_index_store_form(load);
  if (starts.size() > 0) form.set("starts", starts);
  kernels_.back().form = form;
}

void IndexCall::strided_slice() {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  const std::string type = type_of(x);
  const SymShape& xd = value(x).dims;
  const SymShape& od = value(out).dims;
  const std::vector<SymExpr>& begin = form_.begin;
  const std::vector<int64_t>& step = form_.step;
  KernelText k = text();
  const std::string in = k.input(x, type);
  k.output(out, type);
  k.coordinates(od);
  std::vector<std::string> coords;
  for (size_t d = 0; d < xd.size(); ++d) {
    std::string c = "c" + std::to_string(d);
    if (step[d] != 1) c += " * " + std::to_string(step[d]);
    if (begin[d] != SymExpr(0)) c = k.size(begin[d]) + " + " + c;
    coords.push_back(c);
  }
  const std::string load = fmt::format("{}[{}]", in, k.offset(coords, xd));
  add(k, value(out).numel());
  kernels_.back().form = cuda_index_store_form(load);
}

void IndexCall::pad3d() {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  const std::string type = type_of(x);
  const SymShape& xd = value(x).dims;
  const SymShape& od = value(out).dims;
  const std::vector<SymExpr>& pads = form_.pads;
  using passes::CudaPadMode;
  const CudaPadMode m = form_.mode;
  const bool last = form_.channel_last;
  const double fill = form_.fill;
  KernelText k = text();
  const std::string in = k.input(x, type);
  k.output(out, type);
  k.coordinates(od);
  std::vector<std::string> coords = {"c0", "c1", "c2", "c3", "c4"};
  tmpl::List dims;  // the padded dims' source coordinates i0, i1, i2 (index_slice.j2)
  for (size_t d = 0; d < 3; ++d) {
    const size_t axis = (last ? 1 : 2) + d;
    const std::string before = k.size(pads[2 * (2 - d)]);
    const std::string n = k.size(xd[axis]), i = "i" + std::to_string(d);
    tmpl::Value dim = tmpl::Value::map();
    dim.set("name", i);
    dim.set("coordinate", coords[axis]);
    dim.set("before", before);
    dim.set("n", n);
    dims.push_back(std::move(dim));
    coords[axis] = i;
  }
  static constexpr std::array<const char*, 4> kModes = {"constant", "reflect", "replicate", "circular"};
  tmpl::Value f = tmpl::Value::map();
  f.set("kind", "pad3d");
  f.set("mode", kModes[static_cast<size_t>(m)]);
  f.set("dims", tmpl::Value(std::move(dims)));
  f.set("value", fmt::format("{}[{}]", in, k.offset(coords, xd)));
  if (m == CudaPadMode::kConstant) {
    f.set("fill", type == "bool" ? (fill != 0 ? "true" : "false") : cuda_device_constant(fill, type));
  }
  add(k, value(out).numel());
  kernels_.back().form = std::move(f);
}

}  // namespace kforge::codegen::cuda_index_internal
