// The index-mapped CUDA kernels of the ops that pick, place or combine elements by an index or a rank
// (codegen/cuda_index.h; the plain data movement is cuda_index.cpp's, the arithmetic cuda_index_compute.cpp's), each
// computing what the CPU kernel of kernels/ computes, in the same order:
//   - topk (kernels/reduce_math.cc): one thread per line runs the CPU kernel's selection step for step
//     (kforge_index.cuh's topk_line: libstdc++'s partial_sort, or nth_element and sort, over the line's indices in
//     the call's scratch), so that equal values come out in the CPU kernel's order, which is Paddle's;
//   - gather_nd (kernels/index_movement.cc): the slice that each row of the index picks, an index outside its axis
//     (after Paddle's negative wrap) giving zeros where the CPU kernel's status is an error;
//   - index_sample (kernels/detection.cc): out[r, j] = x[r, index[r, j]], an index outside the row giving 0 where
//     the CPU kernel's status is an error;
//   - scatter (kernels/index_ops.cc): out row r is x's, or for overwrite the last update whose index is r, or without
//     it the sum of the updates whose index is r in index order (Paddle's ScatterAssignAdd);
//   - roll (kernels/movement.cc), pad (constant, any rank: kernels/index_movement.cc), add_n (in input order,
//     kernels/elementwise.cc);
//   - set_value, set_value_with_tensor (built in cuda_index_set_value.cpp; kernels/index_ops.cc, Paddle's slice
//     normalisation): out[e] is x's element outside the strided slice, inside it the value's element at the same
//     place of the slice (the values broadcast to the slice's shape without its decrease axes, with a 1 for each
//     none axis);
//   - assign outside a fused group (a copy that a set_value_ then writes in place: x.clone() before y[...] = v).
#include "codegen/cuda_index_select_call.h"

namespace kforge::codegen::index_text {

namespace select_internal {

std::optional<std::vector<CudaIndexKernel>> SelectCall::build() {
  const std::string& op = call_.op;
  bool ok = false;
  if (op == "topk") ok = topk();
  else if (op == "gather_nd") ok = gather_nd();
  else if (op == "index_sample") ok = index_sample();
  else if (op == "scatter") ok = scatter();
  else if (op == "roll") ok = roll();
  else if (op == "pad") ok = pad();
  else if (op == "add_n") ok = add_n();
  else if (op == "assign") ok = assign();
  else ok = set_value(op == "set_value_with_tensor");
  if (!ok) return std::nullopt;
  return take();
}

std::string SelectCall::number_type(uint32_t v) {
  const ir::DataType d = value(v).dtype;
  if (d == ir::DataType::kFloat16 || d == ir::DataType::kBFloat16 || d == ir::DataType::kBool ||
      !move_type(d)) {
    fail(fmt::format("it computes on {} values; the CUDA kernel takes integers, float32 and float64",
                     ir::dtype_name(d)));
    return "";
  }
  return *move_type(d);
}

uint32_t SelectCall::output(size_t i) const {
  return i < call_.outputs.size() && call_.outputs[i].values.size() == 1 ? call_.outputs[i].values[0] : kNone;
}

bool SelectCall::topk() {
  const uint32_t x = call_.tensor_arg("x"), out = output(0), indices = output(1);
  if (x == kNone || (out == kNone && indices == kNone)) return fail("it needs an input and an output");
  const std::string type = out != kNone ? same_type(x, out, false) : number_type(x);
  if (type.empty()) return false;
  if (type == "bool" || type == "uint16_t") return fail("it ranks bool or 16-bit float values, which the CUDA kernel does not take");
  const std::optional<int64_t> k = constant_int(call_, "k", why_);
  const std::optional<int64_t> given = k ? constant_int(call_, "axis", why_) : std::nullopt;
  const std::optional<bool> largest = call_.constant_bool("largest");
  if (!given) return false;
  if (!largest) return fail("its largest is not a constant known at generation time");
  if (indices != kNone && value(indices).dtype != ir::DataType::kInt64) return fail("its indices are not int64");
  for (uint32_t v : {out, indices}) {
    if (v != kNone && value(v).buffer == value(x).buffer) return fail("an output shares its input's buffer");
  }
  const SymShape& xd = value(x).dims;
  SymExpr outer = 1, len = 1, inner = 1;
  if (!xd.empty()) {
    size_t a = 0;
    if (!passes::normalize_axis(*given, static_cast<int64_t>(xd.size()), &a)) return fail("its axis is out of range");
    for (size_t d = 0; d < a; ++d) outer = outer * xd[d];
    len = xd[a];
    for (size_t d = a + 1; d < xd.size(); ++d) inner = inner * xd[d];
  }
  if (*k < 0) return fail("its k is negative");
  const std::optional<bool> sorted = call_.constant_bool("sorted");
  if (!sorted) return fail("its sorted is not a constant known at generation time");
  if (scratch_.empty()) return fail("the memory plan gave it no scratch for its lines");
  KernelText t = text();
  const std::string in = t.input(x, type);
  const std::string o = out != kNone ? t.output(out, type, "out") : "";
  const std::string oi = indices != kNone ? t.output(indices, "int64_t", "out_indices") : "";
  const std::string a = t.scratch(scratch_);
  const std::string n = t.size(len), step = t.size(inner);
  t.line(fmt::format("const int64_t i = e % {0}, o = e / {0};", step));
  auto at = [&](const std::string& p, const std::string& count) {
    return p.empty() ? std::string("nullptr") : fmt::format("{} + o * {} * {} + i", p, count, step);
  };
  const std::string entries = t.size(passes::topk_line_entries(*k, len));  // the scratch's stride per line
  t.line(fmt::format("kforge::cuda_index::topk_line<{}>({}, {}, {}, {}, {}, {}, {} + e * {}, {}, {});", type,
                     at(in, n), n, step, *k, *largest ? "true" : "false", *sorted ? "true" : "false", a, entries,
                     at(o, std::to_string(*k)), at(oi, std::to_string(*k))));
  add(t, outer * inner, true);
  return true;
}

bool SelectCall::gathered_operands(uint32_t* x, uint32_t* index, uint32_t* out, std::string* type,
                                   std::string* itype) {
  *x = call_.tensor_arg("x");
  *index = call_.tensor_arg("index");
  *out = out_value();
  *type = same_type(*x, *out, false);
  if (type->empty() || *index == kNone || !own_buffer(*x, *out)) {
    return *index == kNone ? fail("it needs an index") : false;
  }
  *itype = index_type(*index);
  return !itype->empty();
}

bool SelectCall::gather_nd() {
  uint32_t x, index, out;
  std::string type, itype;
  if (!gathered_operands(&x, &index, &out, &type, &itype)) return false;
  const SymShape& xd = value(x).dims;
  const SymShape& id = value(index).dims;
  const std::optional<int64_t> depth = id.empty() ? std::optional<int64_t>(0) : id.back().constant();
  if (!depth || *depth < 0 || static_cast<size_t>(*depth) > xd.size()) {
    return fail("its index's last dim is not known at generation time, or exceeds x's rank");
  }
  const size_t k = static_cast<size_t>(*depth);
  SymExpr slice = 1;
  for (size_t d = k; d < xd.size(); ++d) slice = slice * xd[d];
  KernelText t = text();
  const std::string in = t.input(x, type), idx = t.input(index, itype);
  t.output(out, type);
  const std::string s = t.size(slice);
  t.line(fmt::format("const int64_t r = e / {};", s));
  t.line("int64_t at = 0;");
  t.line("bool inside = true;");
  SymExpr stride = slice;
  for (size_t j = k; j-- > 0;) {
    const std::string dim = t.size(xd[j]);
    t.line(fmt::format("{{ int64_t p = static_cast<int64_t>({}[r * {} + {}]);", idx, k, j));
    t.line(fmt::format("  if (p < 0) p += {};", dim));
    t.line(fmt::format("  inside = inside && p >= 0 && p < {};", dim));
    t.line(fmt::format("  at += p * {}; }}", t.size(stride)));
    stride = stride * xd[j];
  }
  t.line(fmt::format("out[e] = inside ? {}[at + e % {}] : {}(0);", in, s, type));
  add(t, value(out).numel());
  return true;
}

bool SelectCall::scatter() {
  const uint32_t x = call_.tensor_arg("x"), index = call_.tensor_arg("index"), updates = call_.tensor_arg("updates"),
                 out = out_value();
  const std::string type = same_type(x, out, false);
  const std::optional<bool> overwrite = call_.constant_bool("overwrite");
  if (type.empty() || index == kNone || updates == kNone) return type.empty() ? false : fail("it needs an index and updates");
  if (!overwrite) return fail("its overwrite is not a constant known at generation time");
  if (!*overwrite && number_type(x).empty()) return false;
  const std::string itype = index_type(index);
  if (itype.empty()) return false;
  if (value(updates).dtype != value(x).dtype) return fail("its updates and x differ in dtype");
  if (value(updates).buffer == value(out).buffer) return fail("its updates share its output's buffer");
  const SymShape& xd = value(x).dims;
  if (xd.empty()) return fail("its x has no rows");
  SymExpr row = 1;
  for (size_t d = 1; d < xd.size(); ++d) row = row * xd[d];
  KernelText t = text();
  const std::string in = t.input(x, type), idx = t.input(index, itype), up = t.input(updates, type);
  t.output(out, type);
  const std::string w = t.size(row), count = t.size(value(index).numel());
  t.line(fmt::format("const int64_t r = e / {}, c = e % {};", w, w));
  if (*overwrite) {
    t.line("int64_t last = -1;");
    t.line(fmt::format("for (int64_t q = 0; q < {}; ++q) if (static_cast<int64_t>({}[q]) == r) last = q;", count, idx));
    t.line(fmt::format("out[e] = last < 0 ? {}[e] : {}[last * {} + c];", in, up, w));
  } else {
    t.line("bool hit = false;");
    t.line(fmt::format("{} acc = 0;", type));
    t.line(fmt::format("for (int64_t q = 0; q < {}; ++q) {{", count));
    t.line(fmt::format("  if (static_cast<int64_t>({}[q]) != r) continue;", idx));
    t.line("  hit = true;");
    t.line(fmt::format("  acc += {}[q * {} + c];", up, w));
    t.line("}");
    t.line(fmt::format("out[e] = hit ? acc : {}[e];", in));
  }
  add(t, value(out).numel());
  return true;
}

bool SelectCall::roll() {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  const std::string type = same_type(x, out, false);
  const passes::AttrConstant* shifts = type.empty() ? nullptr : constant(call_, "shifts", why_);
  const passes::AttrConstant* axes = shifts != nullptr ? constant(call_, "axis", why_) : nullptr;
  if (axes == nullptr || !own_buffer(x, out)) return false;
  const SymShape& xd = value(x).dims;
  const bool flat = axes->ints.empty();
  if (flat ? shifts->ints.size() != 1 : shifts->ints.size() != axes->ints.size()) {
    return fail("its shifts and axes differ in length");
  }
  const SymShape dims = flat ? SymShape{value(x).numel()} : xd;
  std::vector<int64_t> shift(dims.size(), 0);
  for (size_t i = 0; i < shifts->ints.size(); ++i) {
    size_t a = 0;
    if (!flat && !passes::normalize_axis(axes->ints[i], static_cast<int64_t>(xd.size()), &a)) {
      return fail("its axis names an axis out of range");
    }
    shift[a] += shifts->ints[i];  // Paddle adds the shifts of an axis named twice
  }
  KernelText t = text();
  const std::string in = t.input(x, type);
  t.output(out, type);
  t.coordinates(dims);
  std::vector<std::string> coords;
  for (size_t d = 0; d < dims.size(); ++d) {
    const std::string c = "c" + std::to_string(d);
    if (shift[d] == 0) {
      coords.push_back(c);
      continue;
    }
    const std::string n = t.size(dims[d]);
    t.line(fmt::format("const int64_t s{0} = (({1} % {2}) + {2}) % {2};", d, shift[d], n));
    t.line(fmt::format("const int64_t i{0} = (c{0} - s{0} + {1}) % {1};", d, n));
    coords.push_back("i" + std::to_string(d));
  }
  t.line(fmt::format("out[e] = {}[{}];", in, t.offset(coords, dims)));
  add(t, value(out).numel());
  return true;
}

bool SelectCall::pad() {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  const std::string type = same_type(x, out, false);
  const passes::AttrConstant* pads = type.empty() ? nullptr : constant(call_, "paddings", why_);
  const std::optional<double> fill = pads != nullptr ? constant_float(call_, "pad_value", why_) : std::nullopt;
  if (!fill || !own_buffer(x, out)) return false;
  const SymShape& xd = value(x).dims;
  const SymShape& od = value(out).dims;
  if (pads->ints.size() != 2 * xd.size() || od.size() != xd.size()) {
    return fail("its paddings are not two per dim of x");
  }
  if (type == "uint16_t" && *fill != 0) return fail("a 16-bit float pad value is not supported");
  KernelText t = text();
  const std::string in = t.input(x, type);
  t.output(out, type);
  t.coordinates(od);
  std::vector<std::string> coords, inside;
  for (size_t d = 0; d < xd.size(); ++d) {
    const int64_t before = pads->ints[2 * d];
    if (before == 0 && pads->ints[2 * d + 1] == 0) {
      coords.push_back("c" + std::to_string(d));
      continue;
    }
    t.line(fmt::format("const int64_t i{0} = c{0} - {1};", d, before));
    inside.push_back(fmt::format("i{0} >= 0 && i{0} < {1}", d, t.size(xd[d])));
    coords.push_back("i" + std::to_string(d));
  }
  const std::string load = fmt::format("{}[{}]", in, t.offset(coords, xd));
  if (inside.empty()) {
    t.line(fmt::format("out[e] = {};", load));
  } else {
    const std::string v = type == "bool" ? (*fill != 0 ? "true" : "false")
                          : type == "float" ? cpp_float(static_cast<float>(*fill))
                                            : fmt::format("static_cast<{}>({:.17g})", type, *fill);
    std::string when = inside[0];
    for (size_t i = 1; i < inside.size(); ++i) when += " && " + inside[i];
    t.line(fmt::format("out[e] = {} ? {} : {};", when, load, v));
  }
  add(t, value(out).numel());
  return true;
}

bool SelectCall::assign() {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  const std::string type = same_type(x, out, false);
  if (type.empty() || !own_buffer(x, out)) return false;
  KernelText k = text();
  const std::string in = k.input(x, type);
  k.output(out, type);
  k.line(fmt::format("out[e] = {}[e];", in));
  add(k, value(out).numel());
  return true;
}

bool SelectCall::add_n() {
  const KernelArg* xs = call_.arg("inputs");
  const uint32_t out = out_value();
  if (xs == nullptr || xs->kind != ArgKind::kTensorList || xs->values.empty() || out == kNone) {
    return fail("it needs a list of inputs and one output");
  }
  KernelText t = text();
  std::vector<std::string> names;
  for (uint32_t v : xs->values) {
    if (same_type(v, out, false).empty() || number_type(v).empty()) return false;
    if (value(v).dims != value(out).dims) return fail("its inputs and output differ in dims");
    names.push_back(t.input(v, number_type(v)));
  }
  const std::string type = number_type(out);
  t.output(out, type);
  t.line(fmt::format("{} acc = {}[e];", type, names[0]));
  for (size_t i = 1; i < names.size(); ++i) t.line(fmt::format("acc += {}[e];", names[i]));
  t.line("out[e] = acc;");
  add(t, value(out).numel());
  return true;
}

bool SelectCall::index_sample() {
  uint32_t x, index, out;
  std::string type, itype;
  if (!gathered_operands(&x, &index, &out, &type, &itype)) return false;
  const SymShape& xd = value(x).dims;
  const SymShape& id = value(index).dims;
  if (xd.size() != 2 || id.size() != 2) return fail("its x or index is not 2-D");
  KernelText t = text();
  const std::string in = t.input(x, type), idx = t.input(index, itype);
  t.output(out, type);
  const std::string len = t.size(xd[1]);
  t.line(fmt::format("const int64_t k = static_cast<int64_t>({}[e]);", idx));
  t.line(fmt::format("out[e] = k >= 0 && k < {} ? {}[e / {} * {} + k] : {}(0);", len, in, t.size(id[1]), len, type));
  add(t, value(out).numel());
  return true;
}

}  // namespace select_internal

namespace {

constexpr std::array<std::string_view, 10> kSelectOps = {"topk",      "gather_nd", "index_sample", "scatter",
                                                         "roll",      "pad",       "add_n",        "set_value",
                                                         "set_value_with_tensor", "assign"};

}  // namespace

bool is_select_op(std::string_view op) {
  return std::find(kSelectOps.begin(), kSelectOps.end(), op) != kSelectOps.end();
}

std::optional<std::vector<CudaIndexKernel>> select_kernels(const LoweredProgram& program, const KernelCall& call,
                                                           const std::string& prefix, size_t first,
                                                           const std::string& description,
                                                           const CudaBufferExpr& buffer, SizeTable& sizes,
                                                           const SizeTable::Spelling& size_argument, std::string* why,
                                                           const std::string& scratch) {
  select_internal::SelectCall builder(program, call, prefix, first, description, buffer, sizes, size_argument, why);
  builder.set_scratch(scratch);
  return builder.build();
}

}  // namespace kforge::codegen::index_text