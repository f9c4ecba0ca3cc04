// The CUDA index kernels of the ops that take part of a tensor or pad it (cuda_index_call.h): slice (with
// decrease_axis), strided_slice (negative steps too, normalised as the CPU kernel) and pad3d (constant, reflect,
// replicate, circular).
#include "codegen/cuda_index_call.h"

namespace kforge::codegen::cuda_index_internal {

bool IndexCall::slice() {
  const uint32_t x = call_.tensor_arg("input"), out = out_value();
  const std::string type = same_type(x, out, false);
  const passes::AttrConstant* axes = constant(call_, "axes", why_);
  // Starts that are expressions of the dims (`x[:, x.shape[1] // 2 :]`) start where the shape rule put them.
  const KernelArg* symbolic_starts = call_.arg("starts");
  if (symbolic_starts != nullptr && symbolic_starts->kind != ArgKind::kSymbolic) symbolic_starts = nullptr;
  const passes::AttrConstant* starts =
      axes != nullptr && symbolic_starts == nullptr ? constant(call_, "starts", why_) : nullptr;
  const passes::AttrConstant* decrease =
      starts != nullptr || (axes != nullptr && symbolic_starts != nullptr) ? constant(call_, "decrease_axis", why_)
                                                                           : nullptr;
  if (type.empty() || decrease == nullptr || !own_buffer(x, out)) return false;
  const SymShape& xd = value(x).dims;
  const SymShape& od = value(out).dims;
  const size_t start_count = symbolic_starts != nullptr ? symbolic_starts->symbolic.size() : starts->ints.size();
  if (axes->ints.size() != start_count) return fail("its axes and starts differ in length");
  std::vector<SymExpr> begin(xd.size(), SymExpr(0));
  for (size_t i = 0; i < axes->ints.size(); ++i) {
    size_t a = 0;
    if (!passes::normalize_axis(axes->ints[i], static_cast<int64_t>(xd.size()), &a)) return fail("its axes name an axis out of range");
    if (symbolic_starts != nullptr) {
      begin[a] = passes::slice_bound(xd[a], symbolic_starts->symbolic[i], false);
      continue;
    }
    int64_t s = starts->ints[i];
    const std::optional<int64_t> dim = xd[a].constant();
    if (dim) {
      if (s < 0) s += *dim;
      s = std::clamp<int64_t>(s, 0, *dim);
    } else if (s < 0) {
      return fail("it starts from the end of a dim known only at run time");
    }
    begin[a] = s;
  }
  std::set<size_t> dropped;
  for (int64_t d : decrease->ints) {
    size_t a = 0;
    if (!passes::normalize_axis(d, static_cast<int64_t>(xd.size()), &a)) return fail("its decrease_axis names an axis out of range");
    dropped.insert(a);
  }
  const bool decreased = od.size() + dropped.size() == xd.size();
  if (!decreased && od.size() != xd.size()) return fail("its output's rank does not follow from its input's");
  KernelText k = text();
  const std::string in = k.input(x, type);
  k.output(out, type);
  k.coordinates(od);
  std::vector<std::string> coords;
  size_t next = 0;
  for (size_t d = 0; d < xd.size(); ++d) {
    const std::string b = begin[d].constant() == std::optional<int64_t>(0) ? "" : k.size(begin[d]);
    if (decreased && dropped.count(d) != 0) {
      coords.push_back(b.empty() ? "0" : b);
      continue;
    }
    const std::string c = "c" + std::to_string(next++);
    coords.push_back(b.empty() ? c : c + " + " + b);
  }
  k.line(fmt::format("out[e] = {}[{}];", in, k.offset(coords, xd)));
  add(k, value(out).numel());
  return true;
}

bool IndexCall::strided_slice() {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  const std::string type = same_type(x, out, false);
  const passes::AttrConstant* axes = constant(call_, "axes", why_);
  // Starts: constants, or expressions of the dims (the ends only shape the output, whose dims the kernel walks).
  std::vector<SymExpr> starts;
  bool have_starts = false;
  if (const KernelArg* sa = call_.arg("starts"); sa != nullptr && sa->kind == ArgKind::kSymbolic) {
    starts = sa->symbolic;
    have_starts = true;
  } else if (const passes::AttrConstant* c = axes != nullptr ? constant(call_, "starts", why_) : nullptr) {
    starts.assign(c->ints.begin(), c->ints.end());
    have_starts = true;
  }
  const passes::AttrConstant* strides = axes != nullptr && have_starts ? constant(call_, "strides", why_) : nullptr;
  if (type.empty() || strides == nullptr || !own_buffer(x, out)) return false;
  const SymShape& xd = value(x).dims;
  const SymShape& od = value(out).dims;
  const size_t n_axes = axes->ints.size();
  if (starts.size() != n_axes || strides->ints.size() != n_axes || od.size() != xd.size()) {
    return fail("its axes, starts and strides differ in length, or its output in rank");
  }
  std::vector<SymExpr> begin(xd.size(), SymExpr(0));
  std::vector<int64_t> step(xd.size(), 1);
  for (size_t i = 0; i < n_axes; ++i) {
    size_t a = 0;
    if (!passes::normalize_axis(axes->ints[i], static_cast<int64_t>(xd.size()), &a)) return fail("its axes name an axis out of range");
    const std::optional<int64_t> dim = xd[a].constant(), first = starts[i].constant();
    const int64_t st = strides->ints[i];
    if (st == 0) return fail("a stride is 0");
    step[a] = st;
    if (!dim || !first) {
      // A dynamic axis or a start from the dims: forward strides only, as the shape rule (passes/axis.h).
      if (st < 0) return fail("it steps backward through a dim known only at run time");
      begin[a] = passes::slice_bound(xd[a], starts[i], false);
      continue;
    }
    const int64_t n = *dim;
    int64_t start = *first;
    if (start < 0) start = std::max<int64_t>(start + n, 0);
    begin[a] = st > 0 ? std::min(start, n) : std::min(start + 1, n) - 1;
  }
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
  return true;
}

bool IndexCall::pad3d() {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  const std::string type = same_type(x, out, false);
  // Paddings are constants, or expressions of the dims (padding up to a multiple: `4 * ceil_div(h, 4) - h`).
  std::vector<SymExpr> pads;
  bool have_pads = false;
  const KernelArg* pad_arg = call_.arg("paddings");
  if (pad_arg != nullptr && pad_arg->kind == ArgKind::kSymbolic) {
    pads = pad_arg->symbolic;
    have_pads = true;
  } else if (const passes::AttrConstant* c = constant(call_, "paddings", why_)) {
    pads.assign(c->ints.begin(), c->ints.end());
    have_pads = true;
  }
  const passes::AttrConstant* mode = have_pads ? constant(call_, "mode", why_) : nullptr;
  const passes::AttrConstant* format = mode != nullptr ? constant(call_, "data_format", why_) : nullptr;
  const std::optional<double> fill = format != nullptr ? constant_float(call_, "pad_value", why_) : std::nullopt;
  if (type.empty() || !fill || !own_buffer(x, out)) return false;
  const std::string& m = mode->string_value;
  if (m != "constant" && m != "reflect" && m != "replicate" && m != "circular") {
    return fail("its mode is \"" + m + "\"");
  }
  const SymShape& xd = value(x).dims;
  const SymShape& od = value(out).dims;
  if (xd.size() != 5 || od.size() != 5 || pads.size() != 6) return fail("it needs a 5-D x and 6 paddings");
  if (m == "constant" && type == "uint16_t" && *fill != 0) return fail("a 16-bit float pad value is not supported");
  const bool last = format->string_value == "NDHWC";
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
    if (m == "constant") {
      k.line(fmt::format("const int64_t {0} = {0}_;", i));
      inside.push_back(fmt::format("{0} >= 0 && {0} < {1}", i, n));
    } else if (m == "reflect") {
      k.line(fmt::format("const int64_t {0} = {0}_ < 0 ? -{0}_ : ({0}_ >= {1} ? 2 * ({1} - 1) - {0}_ : {0}_);", i, n));
    } else if (m == "replicate") {
      k.line(fmt::format("const int64_t {0} = {0}_ < 0 ? 0 : ({0}_ >= {1} ? {1} - 1 : {0}_);", i, n));
    } else {
      k.line(fmt::format("const int64_t {0} = (({0}_ % {1}) + {1}) % {1};", i, n));
    }
    coords[axis] = i;
  }
  const std::string load = fmt::format("{}[{}]", in, k.offset(coords, xd));
  if (m == "constant") {
    const std::string value = type == "bool" ? (*fill != 0 ? "true" : "false")
                                             : fmt::format("static_cast<{}>({:.17g})", type, *fill);
    k.line(fmt::format("out[e] = {} && {} && {} ? {} : {};", inside[0], inside[1], inside[2], load, value));
  } else {
    k.line(fmt::format("out[e] = {};", load));
  }
  add(k, value(out).numel());
  return true;
}

}  // namespace kforge::codegen::cuda_index_internal
