// The forms of the data-movement ops and the batched matmul (cuda_plan_index.h: plan_cuda_index_map): their
// attributes read and resolved, and every reason the index-mapped kernels (codegen/cuda_index.cpp,
// cuda_index_slice.cpp) cannot run a call, checked in the order those kernels read them, so that a call with
// several problems is refused for the first.
#include <fmt/format.h>

#include <algorithm>

#include "passes/cuda_plan_index_checks.h"
#include "scalar_expr/scalar_type.h"

namespace kforge::passes {

namespace cuda_plan_internal {

// Whether the index-mapped kernels move elements of `dtype`: a C++ scalar type, or the unsigned type of the same
// width (float16 and bfloat16 move as their bits).
bool movable(ir::DataType dtype) {
  switch (dtype) {
    case ir::DataType::kUInt16:
    case ir::DataType::kFloat16:
    case ir::DataType::kBFloat16:
    case ir::DataType::kUInt32:
    case ir::DataType::kUInt64: return true;
    default: break;
  }
  const std::optional<expr::ScalarType> s = expr::scalar_type_from_name(ir::dtype_name(dtype));
  return s && expr::cpp_scalar_name(*s);
}

std::optional<CudaIndexMap> IndexChecks::build() {
  why_->clear();
  const std::string& op = call_.op;
  bool ok = false;
  if (op == "transpose") ok = transpose();
  else if (op == "concat" || op == "stack") ok = join(op == "stack");
  else if (op == "split" || op == "split_with_num") ok = split();
  else if (op == "slice") ok = slice();
  else if (op == "strided_slice") ok = strided_slice();
  else if (op == "flip") ok = flip();
  else if (op == "pad3d") ok = pad3d();
  else if (op == "expand" || op == "tile" || op == "expand_as") ok = broadcast();
  else if (op == "repeat_interleave") ok = repeat_interleave();
  else if (op == "gather" || op == "index_select") ok = gather();
  else if (op == "embedding") ok = embedding();
  else if (op == "meshgrid") ok = meshgrid();
  else if (op == "broadcast_tensors") ok = broadcast_tensors();
  else if (is_cuda_batched_matmul(op)) ok = batched_matmul();
  else if (op == "topk") ok = topk();
  else if (op == "argsort") ok = argsort();
  else if (op == "gather_nd") ok = gather_nd();
  else if (op == "index_sample") ok = index_sample();
  else if (op == "take_along_axis") ok = take_along_axis();
  else if (op == "scatter") ok = scatter();
  else if (op == "index_put") ok = index_put();
  else if (op == "roll") ok = roll();
  else if (op == "pad") ok = pad();
  else if (op == "assign") ok = assign();
  else if (op == "add_n") ok = add_n();
  else if (op == "set_value" || op == "set_value_with_tensor") ok = set_value(op == "set_value_with_tensor");
  else if (op == "sigmoid_cross_entropy_with_logits") ok = sigmoid_cross_entropy();
  else if (op == "cross_entropy_with_softmax") ok = softmax_cross_entropy();
  else fail("it is not an index-mapped op");
  if (!ok) return std::nullopt;
  return form_;
}

bool IndexChecks::axis_of(int64_t given, size_t rank, size_t* axis, const char* reason) {
  return normalize_axis(given, static_cast<int64_t>(rank), axis) || fail(reason);
}

bool IndexChecks::transpose() {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  const bool typed = same_type(x, out, false);
  const AttrConstant* perm = constant("perm");
  if (!typed || perm == nullptr || !own_buffer(x, out)) return false;
  const size_t rank = value(x).dims.size();
  if (perm->ints.size() != rank || value(out).dims.size() != rank) {
    return fail("its perm does not match the rank of its input");
  }
  for (int64_t given : perm->ints) {
    size_t axis = 0;
    if (!axis_of(given, rank, &axis, "its perm names an axis out of range")) return false;
    form_.perm.push_back(axis);
  }
  return true;
}

bool IndexChecks::join(bool stacked) {
  const KernelArg* xs = call_.arg("x");
  const uint32_t out = out_value();
  if (xs == nullptr || xs->kind != ArgKind::kTensorList || xs->values.empty() || out == kNone) {
    return fail("it needs a list of inputs and one output");
  }
  const std::optional<int64_t> given = constant_int("axis");
  if (!given) return false;
  const size_t rank = value(out).dims.size();
  if (!axis_of(*given, rank, &form_.axis, "its axis is out of range")) return false;
  for (uint32_t v : xs->values) {
    if (!same_type(v, out, false) || !own_buffer(v, out)) return false;
    if (value(v).dims.size() + (stacked ? 1 : 0) != rank) {
      return fail(stacked ? "its output's rank is not its inputs' plus one" : "its inputs and output differ in rank");
    }
  }
  return true;
}

bool IndexChecks::split() {
  const uint32_t x = call_.tensor_arg("x");
  const std::optional<int64_t> given = constant_int("axis");
  if (x == kNone || !given || call_.outputs.empty()) return fail("it needs an input, a constant axis and outputs");
  const size_t rank = value(x).dims.size();
  if (!axis_of(*given, rank, &form_.axis, "its axis is out of range")) return false;
  for (uint32_t out : call_.outputs[0].values) {
    if (out == kNone) return fail("one of its outputs is absent");
    if (!same_type(x, out, false) || !own_buffer(x, out)) return false;
    if (value(out).dims.size() != rank) return fail("its outputs differ from its input in rank");
  }
  return true;
}

bool IndexChecks::broadcast() {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  if (!same_type(x, out, false) || !own_buffer(x, out)) return false;
  if (value(x).dims.size() > value(out).dims.size()) return fail("its input has a higher rank than its output");
  return true;
}

bool IndexChecks::repeat_interleave() {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  const bool typed = same_type(x, out, false);
  const std::optional<int64_t> repeats = typed ? constant_int("repeats") : std::nullopt;
  const std::optional<int64_t> axis = repeats ? constant_int("axis") : std::nullopt;
  if (!axis || !own_buffer(x, out)) return false;
  if (*repeats <= 0) return fail("its repeats is not positive");
  form_.k = *repeats;
  return axis_of(*axis, value(x).dims.size(), &form_.axis, "its axis is out of range");
}

bool IndexChecks::gather() {
  const uint32_t x = call_.tensor_arg("x"), index = call_.tensor_arg("index"), out = out_value();
  const bool typed = same_type(x, out, false);
  const std::optional<int64_t> given = typed ? constant_int("axis") : std::nullopt;
  if (!given || index == kNone || !own_buffer(x, out)) return index == kNone ? fail("it needs an index") : false;
  if (!index_type(index)) return false;
  return axis_of(*given, value(x).dims.size(), &form_.axis, "its axis is out of range");
}

bool IndexChecks::embedding() {
  const uint32_t ids = call_.tensor_arg("x"), weight = call_.tensor_arg("weight"), out = out_value();
  const bool typed = same_type(weight, out, false);
  const std::optional<int64_t> padding = typed ? constant_int("padding_idx") : std::nullopt;
  if (!padding || ids == kNone) return ids == kNone ? fail("it needs ids") : false;
  if (!index_type(ids)) return false;
  const SymShape& wd = value(weight).dims;
  if (wd.size() != 2 || !wd[0].constant()) {
    return fail("its weight must be 2-D with a vocabulary known at generation time");
  }
  form_.rows = *wd[0].constant();
  form_.padding_row = *padding == -1 ? -1 : (*padding < 0 ? *padding + form_.rows : *padding);
  return true;
}

bool IndexChecks::list_to_list(const char* arg, bool (*ranks_fit)(size_t, size_t, size_t), const char* rank_reason) {
  const KernelArg* xs = call_.arg(arg);
  if (xs == nullptr || xs->kind != ArgKind::kTensorList || call_.outputs.empty() ||
      call_.outputs[0].values.size() != xs->values.size()) {
    return fail("it needs a list of inputs and as many outputs");
  }
  for (size_t i = 0; i < xs->values.size(); ++i) {
    const uint32_t x = xs->values[i], out = call_.outputs[0].values[i];
    if (out == kNone) continue;
    if (!same_type(x, out, false) || !own_buffer(x, out)) return false;
    if (!ranks_fit(value(x).dims.size(), value(out).dims.size(), xs->values.size())) return fail(rank_reason);
  }
  return true;
}

bool IndexChecks::meshgrid() {
  return list_to_list(
      "inputs", [](size_t in, size_t out, size_t inputs) { return in <= 1 && out == inputs; },
      "its inputs are not 1-D, or its outputs' rank is not the number of inputs");
}

// broadcast_tensors: expand's kernel per input (each to the joint shape the shape rule gave its output).
bool IndexChecks::broadcast_tensors() {
  return list_to_list(
      "input", [](size_t in, size_t out, size_t) { return in <= out; }, "an input has a higher rank than its output");
}

bool IndexChecks::batched_matmul() {
  const uint32_t x = call_.tensor_arg("x"), y = call_.tensor_arg("y"), out = out_value();
  if (!same_type(x, out, true) || y == kNone) return y == kNone ? fail("it needs x and y") : false;
  if (value(y).dtype != value(x).dtype) return fail("its x and y differ in dtype");
  // bmm: a matmul without transposes (it has no such attributes).
  const bool bmm = call_.op == "bmm";
  const std::optional<bool> tx = bmm ? std::optional<bool>(false) : call_.constant_bool("transpose_x");
  const std::optional<bool> ty = bmm ? std::optional<bool>(false) : call_.constant_bool("transpose_y");
  if (!tx || !ty) return fail("its transposes are not constants known at generation time");
  const SymShape& xd = value(x).dims;
  const SymShape& yd = value(y).dims;
  if (xd.empty() || yd.empty()) return fail("a scalar operand has no CUDA matmul");
  const bool x_vec = xd.size() == 1, y_vec = yd.size() == 1;
  form_.transpose_x = *tx && !x_vec;
  form_.transpose_y = *ty && !y_vec;
  // The output's matrix dims: 2, less one per vector operand; the rest are batch dims.
  const size_t matrix_dims = (x_vec ? 0 : 1) + (y_vec ? 0 : 1);
  const size_t x_batch = x_vec ? 0 : xd.size() - 2, y_batch = y_vec ? 0 : yd.size() - 2;
  const size_t rank = value(out).dims.size();
  if (rank < matrix_dims || rank - matrix_dims < std::max(x_batch, y_batch)) {
    return fail("its operands have more batch dims than its output");
  }
  return true;
}

bool IndexChecks::slice() {
  const uint32_t x = call_.tensor_arg("input"), out = out_value();
  const bool typed = same_type(x, out, false);
  const AttrConstant* axes = constant("axes");
  // Starts that are expressions of the dims (`x[:, x.shape[1] // 2 :]`) start where the shape rule put them;
  // starts read from a tensor's values (`x[:, n:]`) are read by the kernel, element i of one integer tensor or
  // the one element of the list's tensor i.
  const KernelArg* symbolic_starts = call_.arg("starts");
  const KernelArg* data_starts = symbolic_starts;
  if (symbolic_starts != nullptr && symbolic_starts->kind != ArgKind::kSymbolic) symbolic_starts = nullptr;
  if (data_starts != nullptr && data_starts->kind != ArgKind::kTensorToAttr &&
      data_starts->kind != ArgKind::kTensorListToAttr) {
    data_starts = nullptr;
  }
  const bool computed = symbolic_starts != nullptr || data_starts != nullptr;
  const AttrConstant* starts = axes != nullptr && !computed ? constant("starts") : nullptr;
  const AttrConstant* decrease = starts != nullptr || (axes != nullptr && computed) ? constant("decrease_axis") : nullptr;
  if (!typed || decrease == nullptr || !own_buffer(x, out)) return false;
  const SymShape& xd = value(x).dims;
  std::vector<std::pair<uint32_t, size_t>> from_data;
  if (data_starts != nullptr && !slice_starts_from_data(*data_starts, &from_data)) return false;
  const size_t start_count = symbolic_starts != nullptr ? symbolic_starts->symbolic.size()
                             : data_starts != nullptr   ? from_data.size()
                                                        : starts->ints.size();
  if (axes->ints.size() != start_count) return fail("its axes and starts differ in length");
  form_.begin.assign(xd.size(), SymExpr(0));
  form_.step.assign(xd.size(), 1);
  if (data_starts != nullptr) form_.begin_from.assign(xd.size(), {kNone, 0});
  for (size_t i = 0; i < axes->ints.size(); ++i) {
    size_t a = 0;
    if (!axis_of(axes->ints[i], xd.size(), &a, "its axes name an axis out of range")) return false;
    if (symbolic_starts != nullptr) {
      form_.begin[a] = slice_bound(xd[a], symbolic_starts->symbolic[i], false);
      continue;
    }
    if (data_starts != nullptr) {
      form_.begin_from[a] = from_data[i];
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
    form_.begin[a] = s;
  }
  std::set<size_t> dropped;
  for (int64_t d : decrease->ints) {
    size_t a = 0;
    if (!axis_of(d, xd.size(), &a, "its decrease_axis names an axis out of range")) return false;
    dropped.insert(a);
  }
  const size_t out_rank = value(out).dims.size();
  const bool decreased = out_rank + dropped.size() == xd.size();
  if (!decreased && out_rank != xd.size()) return fail("its output's rank does not follow from its input's");
  if (decreased) form_.dropped = std::move(dropped);
  return true;
}

bool IndexChecks::slice_starts_from_data(const KernelArg& arg, std::vector<std::pair<uint32_t, size_t>>* starts,
                                         std::string_view what) {
  const std::vector<uint32_t> values = arg.kind == ArgKind::kTensorToAttr ? std::vector<uint32_t>{arg.value} : arg.values;
  for (uint32_t v : values) {
    const ir::DataType d = value(v).dtype;
    if (d != ir::DataType::kInt32 && d != ir::DataType::kInt64) {
      return fail(fmt::format("its {} are {} (int32 or int64 expected)", what, ir::dtype_name(d)));
    }
    const std::optional<int64_t> n = value(v).numel().constant();
    if (!n || (arg.kind == ArgKind::kTensorListToAttr && *n != 1)) {
      return fail(fmt::format("its {} come from a tensor whose element count is known only at run time, or not 1 "
                              "in a list",
                              what));
    }
    for (int64_t e = 0; e < *n; ++e) starts->emplace_back(v, static_cast<size_t>(e));
  }
  return true;
}

bool IndexChecks::strided_slice() {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  const bool typed = same_type(x, out, false);
  const AttrConstant* axes = constant("axes");
  // Starts: constants, or expressions of the dims (the ends only shape the output, whose dims the kernel walks).
  std::vector<SymExpr> starts;
  bool have_starts = false;
  if (const KernelArg* sa = call_.arg("starts"); sa != nullptr && sa->kind == ArgKind::kSymbolic) {
    starts = sa->symbolic;
    have_starts = true;
  } else if (const AttrConstant* c = axes != nullptr ? constant("starts") : nullptr) {
    starts.assign(c->ints.begin(), c->ints.end());
    have_starts = true;
  }
  const AttrConstant* strides = axes != nullptr && have_starts ? constant("strides") : nullptr;
  if (!typed || strides == nullptr || !own_buffer(x, out)) return false;
  const SymShape& xd = value(x).dims;
  const size_t n_axes = axes->ints.size();
  if (starts.size() != n_axes || strides->ints.size() != n_axes || value(out).dims.size() != xd.size()) {
    return fail("its axes, starts and strides differ in length, or its output in rank");
  }
  form_.begin.assign(xd.size(), SymExpr(0));
  form_.step.assign(xd.size(), 1);
  for (size_t i = 0; i < n_axes; ++i) {
    size_t a = 0;
    if (!axis_of(axes->ints[i], xd.size(), &a, "its axes name an axis out of range")) return false;
    const std::optional<int64_t> dim = xd[a].constant(), first = starts[i].constant();
    const int64_t st = strides->ints[i];
    if (st == 0) return fail("a stride is 0");
    form_.step[a] = st;
    if (!dim || !first) {
      // A dynamic axis or a start from the dims: forward strides only, as the shape rule (passes/axis.h).
      if (st < 0) return fail("it steps backward through a dim known only at run time");
      form_.begin[a] = slice_bound(xd[a], starts[i], false);
      continue;
    }
    const int64_t n = *dim;
    int64_t start = *first;
    if (start < 0) start = std::max<int64_t>(start + n, 0);
    form_.begin[a] = st > 0 ? std::min(start, n) : std::min(start + 1, n) - 1;
  }
  return true;
}

// flip: x read backward along each named axis, as a strided slice from the axis's last element with step -1 (rendered
// by strided_slice's kernel; a dynamic dim is an expression of the sizes).
bool IndexChecks::flip() {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  const AttrConstant* axes = same_type(x, out, false) ? constant("axis") : nullptr;
  if (axes == nullptr || !own_buffer(x, out)) return false;
  const SymShape& xd = value(x).dims;
  if (value(out).dims.size() != xd.size()) return fail("its output differs from x in rank");
  form_.begin.assign(xd.size(), SymExpr(0));
  form_.step.assign(xd.size(), 1);
  for (int64_t given : axes->ints) {
    size_t a = 0;
    if (!axis_of(given, xd.size(), &a, "its axis names an axis out of range")) return false;
    if (form_.step[a] == -1) return fail("it names an axis twice");
    form_.step[a] = -1;
    form_.begin[a] = xd[a] - SymExpr(1);
  }
  return true;
}

bool IndexChecks::pad3d() {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  const bool typed = same_type(x, out, false);
  // Paddings are constants, or expressions of the dims (padding up to a multiple: `4 * ceil_div(h, 4) - h`).
  bool have_pads = false;
  const KernelArg* pad_arg = call_.arg("paddings");
  if (pad_arg != nullptr && pad_arg->kind == ArgKind::kSymbolic) {
    form_.pads = pad_arg->symbolic;
    have_pads = true;
  } else if (const AttrConstant* c = constant("paddings")) {
    form_.pads.assign(c->ints.begin(), c->ints.end());
    have_pads = true;
  }
  const AttrConstant* mode = have_pads ? constant("mode") : nullptr;
  const AttrConstant* format = mode != nullptr ? constant("data_format") : nullptr;
  const std::optional<double> fill = format != nullptr ? constant_float("pad_value") : std::nullopt;
  if (!typed || !fill || !own_buffer(x, out)) return false;
  const std::string& m = mode->string_value;
  if (m == "constant") form_.mode = CudaPadMode::kConstant;
  else if (m == "reflect") form_.mode = CudaPadMode::kReflect;
  else if (m == "replicate") form_.mode = CudaPadMode::kReplicate;
  else if (m == "circular") form_.mode = CudaPadMode::kCircular;
  else return fail("its mode is \"" + m + "\"");
  if (value(x).dims.size() != 5 || value(out).dims.size() != 5 || form_.pads.size() != 6) {
    return fail("it needs a 5-D x and 6 paddings");
  }
  if (form_.mode == CudaPadMode::kConstant && moved_as_16_bits(form_.dtype) && *fill != 0) {
    return fail("a 16-bit float pad value is not supported");
  }
  form_.channel_last = format->string_value == "NDHWC";
  form_.fill = *fill;
  return true;
}

}  // namespace cuda_plan_internal

std::optional<CudaIndexMap> plan_cuda_index_map(const LoweredProgram& program, const KernelCall& call,
                                                bool scratch, std::string* why) {
  return cuda_plan_internal::IndexChecks(program, call, scratch, why).build();
}

}  // namespace kforge::passes
