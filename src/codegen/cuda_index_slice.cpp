// The CUDA index kernels of the ops that take part of a tensor or pad it (cuda_index_call.h): slice (with
// decrease_axis), strided_slice (negative steps too, normalised as the CPU kernel) and pad3d (constant, reflect,
// replicate, circular), rendered from their plan forms (passes/cuda_plan_move.cpp resolves the starts and steps).
#include <map>

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
  size_t next = 0;
  for (size_t d = 0; d < xd.size(); ++d) {
    std::string b = begin[d].constant() == std::optional<int64_t>(0) ? "" : k.size(begin[d]);
    if (d < form_.begin_from.size() && form_.begin_from[d].first != kNone) {
      // A start read from a tensor's values: normalised as the CPU kernel (from the end when negative, clamped to
      // the dim), and to dim - count so that an unchecked start reads no element outside x.
      const auto [v, element] = form_.begin_from[d];
      if (!start_values.contains(v)) start_values.emplace(v, k.input(v, type_of(v)));
      const std::string n = k.size(xd[d]);
      const std::string count = form_.dropped.count(d) != 0 ? "1" : k.size(od[next]);
      b = "b" + std::to_string(d);
      k.line(fmt::format("int64_t {} = static_cast<int64_t>({}[{}]);", b, start_values.at(v), element));
      k.line(fmt::format("if ({} < 0) {} += {};", b, b, n));
      k.line(fmt::format("{} = {} < 0 ? 0 : ({} > {} - {} ? {} - {} : {});", b, b, b, n, count, n, count, b));
    }
    if (form_.dropped.count(d) != 0) {
      coords.push_back(b.empty() ? "0" : b);
      continue;
    }
    const std::string c = "c" + std::to_string(next++);
    coords.push_back(b.empty() ? c : c + " + " + b);
  }
  k.line(fmt::format("out[e] = {}[{}];", in, k.offset(coords, xd)));
  add(k, value(out).numel());
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
  k.line(fmt::format("out[e] = {}[{}];", in, k.offset(coords, xd)));
  add(k, value(out).numel());
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
  std::vector<std::string> inside;
  for (size_t d = 0; d < 3; ++d) {
    const size_t axis = (last ? 1 : 2) + d;
    const std::string before = k.size(pads[2 * (2 - d)]);
    const std::string n = k.size(xd[axis]), i = "i" + std::to_string(d);
    k.line(fmt::format("const int64_t {}_ = c{} - {};", i, axis, before));
    if (m == CudaPadMode::kConstant) {
      k.line(fmt::format("const int64_t {0} = {0}_;", i));
      inside.push_back(fmt::format("{0} >= 0 && {0} < {1}", i, n));
    } else if (m == CudaPadMode::kReflect) {
      k.line(fmt::format("const int64_t {0} = {0}_ < 0 ? -{0}_ : ({0}_ >= {1} ? 2 * ({1} - 1) - {0}_ : {0}_);", i, n));
    } else if (m == CudaPadMode::kReplicate) {
      k.line(fmt::format("const int64_t {0} = {0}_ < 0 ? 0 : ({0}_ >= {1} ? {1} - 1 : {0}_);", i, n));
    } else {
      k.line(fmt::format("const int64_t {0} = (({0}_ % {1}) + {1}) % {1};", i, n));
    }
    coords[axis] = i;
  }
  const std::string load = fmt::format("{}[{}]", in, k.offset(coords, xd));
  if (m == CudaPadMode::kConstant) {
    const std::string value = type == "bool" ? (fill != 0 ? "true" : "false")
                                             : fmt::format("static_cast<{}>({:.17g})", type, fill);
    k.line(fmt::format("out[e] = {} && {} && {} ? {} : {};", inside[0], inside[1], inside[2], load, value));
  } else {
    k.line(fmt::format("out[e] = {};", load));
  }
  add(k, value(out).numel());
}

}  // namespace kforge::codegen::cuda_index_internal
