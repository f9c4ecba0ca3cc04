// The forms of the ops that pick, place or combine elements by an index or a rank (cuda_plan_index.h:
// plan_cuda_index_map): topk, argsort, gather_nd, index_sample, scatter, index_put, roll, pad, assign and add_n,
// checked in the order their kernels (codegen/cuda_index_select.cpp) read them.
#include "passes/cuda_plan_index_checks.h"

namespace kforge::passes::cuda_plan_internal {

bool IndexChecks::topk() {
  const uint32_t x = call_.tensor_arg("x"), out = output(0), indices = output(1);
  if (x == kNone || (out == kNone && indices == kNone)) return fail("it needs an input and an output");
  if (out != kNone ? !same_type(x, out, false) : !number_type(x)) return false;
  form_.dtype = value(x).dtype;
  if (form_.dtype == ir::DataType::kBool || moved_as_16_bits(form_.dtype)) {
    return fail("it ranks bool or 16-bit float values, which the CUDA kernel does not take");
  }
  const std::optional<int64_t> k = constant_int("k");
  const std::optional<int64_t> given = k ? constant_int("axis") : std::nullopt;
  const std::optional<bool> largest = call_.constant_bool("largest");
  if (!given) return false;
  if (!largest) return fail("its largest is not a constant known at generation time");
  if (indices != kNone && value(indices).dtype != ir::DataType::kInt64) return fail("its indices are not int64");
  for (uint32_t v : {out, indices}) {
    if (v != kNone && value(v).buffer == value(x).buffer) return fail("an output shares its input's buffer");
  }
  const size_t rank = value(x).dims.size();
  if (rank > 0 && !axis_of(*given, rank, &form_.axis, "its axis is out of range")) return false;
  if (*k < 0) return fail("its k is negative");
  const std::optional<bool> sorted = call_.constant_bool("sorted");
  if (!sorted) return fail("its sorted is not a constant known at generation time");
  if (!scratch_) return fail("the memory plan gave it no scratch for its lines");
  form_.k = *k;
  form_.largest = *largest;
  form_.sorted = *sorted;
  return true;
}

bool IndexChecks::argsort() {
  const uint32_t x = call_.tensor_arg("x"), out = output(0), indices = output(1);
  if (x == kNone || (out == kNone && indices == kNone)) return fail("it needs an input and an output");
  if (out != kNone ? !same_type(x, out, false) : !number_type(x)) return false;
  form_.dtype = value(x).dtype;
  if (form_.dtype == ir::DataType::kBool || moved_as_16_bits(form_.dtype)) {
    return fail("it sorts bool or 16-bit float values, which the CUDA kernel does not take");
  }
  const std::optional<int64_t> given = constant_int("axis");
  const std::optional<bool> descending = call_.constant_bool("descending"), stable = call_.constant_bool("stable");
  if (!given) return false;
  if (!descending || !stable) return fail("its descending or stable is not a constant known at generation time");
  if (indices != kNone && value(indices).dtype != ir::DataType::kInt64) return fail("its indices are not int64");
  for (uint32_t v : {out, indices}) {
    if (v != kNone && value(v).buffer == value(x).buffer) return fail("an output shares its input's buffer");
  }
  const size_t rank = value(x).dims.size();
  if (rank > 0 && !axis_of(*given, rank, &form_.axis, "its axis is out of range")) return false;
  if (!scratch_) return fail("the memory plan gave it no scratch for its lines");
  form_.largest = *descending;
  form_.stable = *stable;
  return true;
}

bool IndexChecks::gather_nd() {
  const uint32_t x = call_.tensor_arg("x"), index = call_.tensor_arg("index"), out = out_value();
  const bool typed = same_type(x, out, false);
  if (!typed || index == kNone || !own_buffer(x, out)) return index == kNone ? fail("it needs an index") : false;
  if (!index_type(index)) return false;
  const SymShape& id = value(index).dims;
  const std::optional<int64_t> depth = id.empty() ? std::optional<int64_t>(0) : id.back().constant();
  if (!depth || *depth < 0 || static_cast<size_t>(*depth) > value(x).dims.size()) {
    return fail("its index's last dim is not known at generation time, or exceeds x's rank");
  }
  form_.depth = static_cast<size_t>(*depth);
  return true;
}

bool IndexChecks::index_sample() {
  const uint32_t x = call_.tensor_arg("x"), index = call_.tensor_arg("index"), out = out_value();
  const bool typed = same_type(x, out, false);
  if (!typed || index == kNone || !own_buffer(x, out)) return index == kNone ? fail("it needs an index") : false;
  if (!index_type(index)) return false;
  if (value(x).dims.size() != 2 || value(index).dims.size() != 2) return fail("its x or index is not 2-D");
  return true;
}

// take_along_axis: arr and out of one type, an int32 / int64 index of arr's rank, the axis a constant. (The shape rule
// checks the indices' dims against arr's where both are constants; the kernel bounds the others.)
bool IndexChecks::take_along_axis() {
  const uint32_t x = call_.tensor_arg("arr"), index = call_.tensor_arg("indices"), out = out_value();
  const bool typed = same_type(x, out, false);
  const std::optional<int64_t> given = typed ? constant_int("axis") : std::nullopt;
  if (!given || index == kNone || !own_buffer(x, out)) return index == kNone ? fail("it needs indices") : false;
  if (!index_type(index)) return false;
  if (value(index).dims.size() != value(x).dims.size()) return fail("its indices and arr differ in rank");
  return axis_of(*given, value(x).dims.size(), &form_.axis, "its axis is out of range");
}

bool IndexChecks::scatter() {
  const uint32_t x = call_.tensor_arg("x"), index = call_.tensor_arg("index"), updates = call_.tensor_arg("updates"),
                 out = out_value();
  const bool typed = same_type(x, out, false);
  const std::optional<bool> overwrite = call_.constant_bool("overwrite");
  if (!typed || index == kNone || updates == kNone) return typed ? fail("it needs an index and updates") : false;
  if (!overwrite) return fail("its overwrite is not a constant known at generation time");
  if (!*overwrite && !number_type(x)) return false;
  if (!index_type(index)) return false;
  if (value(updates).dtype != value(x).dtype) return fail("its updates and x differ in dtype");
  if (value(updates).buffer == value(out).buffer) return fail("its updates share its output's buffer");
  if (value(x).dims.empty()) return fail("its x has no rows");
  form_.overwrite = *overwrite;
  return true;
}

namespace {

// Row-major strides of dims `d` placed at the right of `rank` dims, 0 where a dim is absent or 1 (broadcast).
std::vector<SymExpr> broadcast_strides(const SymShape& d, size_t rank) {
  std::vector<SymExpr> strides(rank, SymExpr(0));
  SymExpr stride = 1;
  for (size_t k = d.size(); k-- > 0;) {
    if (!is_one(d[k])) strides[rank - d.size() + k] = stride;
    stride = stride * d[k];
  }
  return strides;
}

}  // namespace

bool IndexChecks::index_put() {
  const uint32_t x = call_.tensor_arg("x"), v = call_.tensor_arg("value"), out = out_value();
  const KernelArg* indices = call_.arg("indices");
  if (!same_type(x, out, false)) return false;
  if (indices == nullptr || indices->kind != ArgKind::kTensorList || indices->values.empty() || v == kNone) {
    return fail("it needs index tensors and a value");
  }
  const std::optional<bool> accumulate = call_.constant_bool("accumulate");
  if (!accumulate) return fail("its accumulate is not a constant known at generation time");
  if (*accumulate && form_.dtype != ir::DataType::kBool && !number_type(x)) return false;
  if (value(v).dtype != form_.dtype) return fail("its value and x differ in dtype");
  const SymShape& xd = value(x).dims;
  const size_t m = indices->values.size();
  if (m > xd.size()) return fail("it has more index tensors than x has dims");
  // The index tensors broadcast together to `at`; each position of `at` names a slice of x (its dims past the m
  // indexed ones), which the value, broadcast to at's dims and the slice's, fills (kernels/index_movement.cc).
  size_t b = 0;
  for (uint32_t i : indices->values) {
    if (!index_type(i)) return false;
    if (value(i).buffer == value(out).buffer) return fail("an index tensor shares its output's buffer");
    b = std::max(b, value(i).dims.size());
  }
  SymShape at(b, SymExpr(1));
  for (uint32_t i : indices->values) {
    const SymShape& id = value(i).dims;
    for (size_t k = 0; k < id.size(); ++k) {
      SymExpr& d = at[b - id.size() + k];
      if (id[k] == d || is_one(id[k])) continue;
      if (!is_one(d)) return fail("its index tensors' dims do not broadcast together at generation time");
      d = id[k];
    }
  }
  SymShape target = at;
  target.insert(target.end(), xd.begin() + static_cast<std::ptrdiff_t>(m), xd.end());
  const SymShape& vd = value(v).dims;
  if (vd.size() > target.size()) return fail("its value has more dims than the positions and slices it fills");
  for (size_t k = 0; k < vd.size(); ++k) {
    if (!is_one(vd[k]) && vd[k] != target[target.size() - vd.size() + k]) {
      return fail("its value does not broadcast to the positions and slices it fills at generation time");
    }
  }
  if (value(v).buffer == value(out).buffer) return fail("its value shares its output's buffer");
  form_.overwrite = !*accumulate;
  form_.depth = m;
  form_.positions = at;
  for (uint32_t i : indices->values) form_.index_strides.push_back(broadcast_strides(value(i).dims, b));
  form_.value_strides = broadcast_strides(vd, target.size());
  return true;
}

bool IndexChecks::roll() {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  const bool typed = same_type(x, out, false);
  const AttrConstant* shifts = typed ? constant("shifts") : nullptr;
  const AttrConstant* axes = shifts != nullptr ? constant("axis") : nullptr;
  if (axes == nullptr || !own_buffer(x, out)) return false;
  const size_t rank = value(x).dims.size();
  form_.flattened = axes->ints.empty();
  if (form_.flattened ? shifts->ints.size() != 1 : shifts->ints.size() != axes->ints.size()) {
    return fail("its shifts and axes differ in length");
  }
  form_.shift.assign(form_.flattened ? 1 : rank, 0);
  for (size_t i = 0; i < shifts->ints.size(); ++i) {
    size_t a = 0;
    if (!form_.flattened && !axis_of(axes->ints[i], rank, &a, "its axis names an axis out of range")) return false;
    form_.shift[a] += shifts->ints[i];  // Paddle adds the shifts of an axis named twice
  }
  return true;
}

bool IndexChecks::pad() {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  const bool typed = same_type(x, out, false);
  const AttrConstant* pads = typed ? constant("paddings") : nullptr;
  const std::optional<double> fill = pads != nullptr ? constant_float("pad_value") : std::nullopt;
  if (!fill || !own_buffer(x, out)) return false;
  const size_t rank = value(x).dims.size();
  if (pads->ints.size() != 2 * rank || value(out).dims.size() != rank) {
    return fail("its paddings are not two per dim of x");
  }
  if (moved_as_16_bits(form_.dtype) && *fill != 0) return fail("a 16-bit float pad value is not supported");
  form_.widths = pads->ints;
  form_.fill = *fill;
  return true;
}

bool IndexChecks::assign() {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  return same_type(x, out, false) && own_buffer(x, out);
}

bool IndexChecks::add_n() {
  const KernelArg* xs = call_.arg("inputs");
  const uint32_t out = out_value();
  if (xs == nullptr || xs->kind != ArgKind::kTensorList || xs->values.empty() || out == kNone) {
    return fail("it needs a list of inputs and one output");
  }
  for (uint32_t v : xs->values) {
    if (!same_type(v, out, false) || !number_type(v)) return false;
    if (value(v).dims != value(out).dims) return fail("its inputs and output differ in dims");
  }
  return true;
}

}  // namespace kforge::passes::cuda_plan_internal
