// The index-mapped CUDA kernels of the ops that pick, place or combine elements by an index or a rank
// (codegen/cuda_index.h; the plain data movement is cuda_index.cpp's, the arithmetic cuda_index_compute.cpp's), each
// computing what the CPU kernel of kernels/ computes, in the same order:
//   - topk (kernels/reduce_math.cc): one thread per line runs the CPU kernel's selection step for step
//     (kforge_index.cuh's topk_line: libstdc++'s partial_sort, or nth_element and sort, over the line's indices in
//     the call's scratch), so that equal values come out in the CPU kernel's order, which is Paddle's;
//   - argsort (kernels/reduce_math.cc): likewise one thread per line sorts its indices in the scratch as the CPU
//     kernel's std::sort (kforge_index.cuh's argsort_line), or by value then index when stable;
//   - gather_nd (kernels/index_movement.cc): the slice that each row of the index picks, an index outside its axis
//     (after Paddle's negative wrap) giving zeros where the CPU kernel's status is an error;
//   - index_sample (kernels/detection.cc): out[r, j] = x[r, index[r, j]], an index outside the row giving 0 where
//     the CPU kernel's status is an error;
//   - scatter (kernels/index_ops.cc): out row r is x's, or for overwrite the last update whose index is r, or without
//     it the sum of the updates whose index is r in index order (Paddle's ScatterAssignAdd);
//   - index_put (kernels/index_movement.cc): out[e] is x's, or the value's element of the last position whose indices
//     name e's slice (overwrite), or x's plus those of every such position in position order (accumulate); an
//     index outside its dim (after Paddle's negative wrap) names nothing where the CPU kernel's status is an error;
//   - roll (kernels/movement.cc), pad (constant, any rank: kernels/index_movement.cc), add_n (in input order,
//     kernels/elementwise.cc);
//   - set_value, set_value_with_tensor (built in cuda_index_set_value.cpp; kernels/index_ops.cc, Paddle's slice
//     normalisation): out[e] is x's element outside the strided slice, inside it the value's element at the same
//     place of the slice (the values broadcast to the slice's shape without its decrease axes, with a 1 for each
//     none axis);
//   - assign outside a fused group (a copy that a set_value_ then writes in place: x.clone() before y[...] = v).
// Each kernel's statements are templates/program/cuda/index_select.j2's, spelled from the form built here.
#include "codegen/cuda_index_select_call.h"

namespace kforge::codegen::index_text {

namespace select_internal {

std::vector<CudaIndexKernel> SelectCall::build() {
  const std::string& op = call_.op;
  if (op == "topk") topk();
  else if (op == "argsort") argsort();
  else if (op == "gather_nd") gather_nd();
  else if (op == "index_sample") index_sample();
  else if (op == "take_along_axis") take_along_axis();
  else if (op == "scatter") scatter();
  else if (op == "index_put") index_put();
  else if (op == "roll") roll();
  else if (op == "pad") pad();
  else if (op == "add_n") add_n();
  else if (op == "assign") assign();
  else set_value(op == "set_value_with_tensor");
  return take();
}

uint32_t SelectCall::output(size_t i) const {
  return i < call_.outputs.size() && call_.outputs[i].values.size() == 1 ? call_.outputs[i].values[0] : kNone;
}

SelectCall::Lines SelectCall::lines_along_axis(uint32_t v) const {
  const SymShape& dims = value(v).dims;
  Lines l;
  if (dims.empty()) return l;
  const size_t a = form().axis;
  for (size_t d = 0; d < a; ++d) l.outer = l.outer * dims[d];
  l.len = dims[a];
  for (size_t d = a + 1; d < dims.size(); ++d) l.inner = l.inner * dims[d];
  return l;
}

void SelectCall::topk() {
  const uint32_t x = call_.tensor_arg("x"), out = output(0), indices = output(1);
  const std::string type = type_of(x);
  const auto [outer, len, inner] = lines_along_axis(x);
  const int64_t k = form().k;
  const bool largest = form().largest, sorted = form().sorted;
  KernelText t = text();
  const std::string in = t.input(x, type);
  const std::string o = out != kNone ? t.output(out, type, "out") : "";
  const std::string oi = indices != kNone ? t.output(indices, "int64_t", "out_indices") : "";
  const std::string a = t.scratch(scratch_);
  const std::string n = t.size(len), step = t.size(inner);
  auto at = [&](const std::string& p, const std::string& count) {
    return p.empty() ? std::string("nullptr") : fmt::format("{} + o * {} * {} + i", p, count, step);
  };
  tmpl::Value f = tmpl::Value::map();
  f.set("kind", "topk");
  f.set("type", type);
  f.set("step", step);
  f.set("n", n);
  f.set("k", k);
  f.set("largest", largest);
  f.set("sorted", sorted);
  f.set("line", at(in, n));
  f.set("scratch", a);
  f.set("entries", t.size(passes::topk_line_entries(k, len)));  // the scratch's stride per line
  f.set("values", at(o, std::to_string(k)));
  f.set("indices", at(oi, std::to_string(k)));
  add(t, outer * inner, true);
  kernels_.back().form = std::move(f);
}

void SelectCall::argsort() {
  const uint32_t x = call_.tensor_arg("x"), out = output(0), indices = output(1);
  const std::string type = type_of(x);
  const auto [outer, len, inner] = lines_along_axis(x);
  KernelText t = text();
  const std::string in = t.input(x, type);
  const std::string o = out != kNone ? t.output(out, type, "out") : "";
  const std::string oi = indices != kNone ? t.output(indices, "int64_t", "out_indices") : "";
  const std::string a = t.scratch(scratch_);
  const std::string n = t.size(len), step = t.size(inner);
  auto at = [&](const std::string& p) {
    return p.empty() ? std::string("nullptr") : fmt::format("{} + o * {} * {} + i", p, n, step);
  };
  tmpl::Value f = tmpl::Value::map();
  f.set("kind", "argsort");
  f.set("type", type);
  f.set("step", step);
  f.set("n", n);
  f.set("descending", form().largest);
  f.set("stable", form().stable);
  f.set("line", at(in));
  f.set("scratch", a);
  f.set("values", at(o));
  f.set("indices", at(oi));
  add(t, outer * inner, true);
  kernels_.back().form = std::move(f);
}

void SelectCall::gather_nd() {
  const uint32_t x = call_.tensor_arg("x"), index = call_.tensor_arg("index"), out = out_value();
  const std::string type = type_of(x), itype = type_of(index);
  const SymShape& xd = value(x).dims;
  const size_t k = form().depth;
  SymExpr slice = 1;
  for (size_t d = k; d < xd.size(); ++d) slice = slice * xd[d];
  KernelText t = text();
  const std::string in = t.input(x, type), idx = t.input(index, itype);
  t.output(out, type);
  const std::string s = t.size(slice);
  tmpl::List dims;  // the index's entries, innermost first (index_select.j2)
  SymExpr stride = slice;
  for (size_t j = k; j-- > 0;) {
    tmpl::Value dim = tmpl::Value::map();
    dim.set("j", static_cast<int64_t>(j));
    dim.set("size", t.size(xd[j]));
    dim.set("stride", t.size(stride));
    dims.push_back(std::move(dim));
    stride = stride * xd[j];
  }
  tmpl::Value f = tmpl::Value::map();
  f.set("kind", "gather_nd");
  f.set("type", type);
  f.set("x", in);
  f.set("index", idx);
  f.set("slice", s);
  f.set("depth", static_cast<int64_t>(k));
  f.set("dims", tmpl::Value(std::move(dims)));
  add(t, value(out).numel());
  kernels_.back().form = std::move(f);
}

void SelectCall::scatter() {
  const uint32_t x = call_.tensor_arg("x"), index = call_.tensor_arg("index"), updates = call_.tensor_arg("updates"),
                 out = out_value();
  const std::string type = type_of(x), itype = type_of(index);
  const bool overwrite = form().overwrite;
  const SymShape& xd = value(x).dims;
  SymExpr row = 1;
  for (size_t d = 1; d < xd.size(); ++d) row = row * xd[d];
  KernelText t = text();
  const std::string in = t.input(x, type), idx = t.input(index, itype), up = t.input(updates, type);
  t.output(out, type);
  const std::string w = t.size(row), count = t.size(value(index).numel());
  tmpl::Value f = tmpl::Value::map();
  f.set("kind", "scatter");
  f.set("type", type);
  f.set("x", in);
  f.set("index", idx);
  f.set("updates", up);
  f.set("width", w);
  f.set("count", count);
  f.set("overwrite", overwrite);
  add(t, value(out).numel());
  kernels_.back().form = std::move(f);
}

void SelectCall::index_put() {
  const uint32_t x = call_.tensor_arg("x"), v = call_.tensor_arg("value"), out = out_value();
  const std::vector<uint32_t>& indices = call_.arg("indices")->values;
  const std::string type = type_of(x);
  const SymShape& xd = value(x).dims;
  const SymShape& at = form().positions;
  const size_t m = form().depth, b = at.size();
  KernelText t = text();
  const std::string in = t.input(x, type);
  std::vector<std::string> names;
  for (uint32_t i : indices) names.push_back(t.input(i, type_of(i)));
  const std::string val = t.input(v, type);
  t.output(out, type);
  // The offset, in a tensor whose strides along `dims` are `strides`, of element `index` of `dims` (row-major).
  auto offset = [&](const std::string& index, const SymShape& dims, const std::vector<SymExpr>& strides) {
    std::string sum;
    SymExpr inner = 1;
    for (size_t d = dims.size(); d-- > 0;) {
      if (strides[d].constant() != std::optional<int64_t>(0)) {
        const std::string coordinate =
            d == 0 ? fmt::format("{} / {}", index, t.size(inner))
                   : fmt::format("{} / {} % {}", index, t.size(inner), t.size(dims[d]));
        sum += fmt::format("{}({}) * {}", sum.empty() ? "" : " + ", coordinate, t.size(strides[d]));
      }
      inner = inner * dims[d];
    }
    return sum.empty() ? std::string("0") : sum;
  };
  const SymShape slice_dims(xd.begin() + static_cast<std::ptrdiff_t>(m), xd.end());
  const std::vector<SymExpr> slice_strides(form().value_strides.begin() + static_cast<std::ptrdiff_t>(b),
                                           form().value_strides.end());
  const std::vector<SymExpr> position_strides(form().value_strides.begin(),
                                              form().value_strides.begin() + static_cast<std::ptrdiff_t>(b));
  SymExpr slice = 1, positions = 1;
  for (const SymExpr& d : slice_dims) slice = slice * d;
  for (const SymExpr& d : at) positions = positions * d;
  tmpl::List entries;
  for (size_t j = 0; j < m; ++j) {
    tmpl::Value d = tmpl::Value::map();
    d.set("index", names[j]);
    d.set("offset", offset("p", at, form().index_strides[j]));
    d.set("size", t.size(xd[j]));
    entries.push_back(std::move(d));
  }
  tmpl::Value f = tmpl::Value::map();
  f.set("kind", "index_put");
  f.set("type", type);
  f.set("bool", value(x).dtype == ir::DataType::kBool);
  f.set("x", in);
  f.set("value", val);
  f.set("slice", t.size(slice));
  f.set("positions", t.size(positions));
  f.set("indices", tmpl::Value(std::move(entries)));
  f.set("value_offset", offset("p", at, position_strides) + " + " + offset("s", slice_dims, slice_strides));
  f.set("overwrite", form().overwrite);
  add(t, value(out).numel());
  kernels_.back().form = std::move(f);
}

void SelectCall::roll() {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  const std::string type = type_of(x);
  const SymShape dims = form().flattened ? SymShape{value(x).numel()} : value(x).dims;
  const std::vector<int64_t>& shift = form().shift;
  KernelText t = text();
  const std::string in = t.input(x, type);
  t.output(out, type);
  t.coordinates(dims);
  std::vector<std::string> coords;
  tmpl::List shifted;  // the shifted dims' source coordinates (index_select.j2)
  for (size_t d = 0; d < dims.size(); ++d) {
    const std::string c = "c" + std::to_string(d);
    if (shift[d] == 0) {
      coords.push_back(c);
      continue;
    }
    tmpl::Value dim = tmpl::Value::map();
    dim.set("n", t.size(dims[d]));
    dim.set("shift", shift[d]);
    dim.set("coordinate", c);
    dim.set("shifted", "s" + std::to_string(d));
    dim.set("source", "i" + std::to_string(d));
    shifted.push_back(std::move(dim));
    coords.push_back("i" + std::to_string(d));
  }
  tmpl::Value f = tmpl::Value::map();
  f.set("kind", "roll");
  f.set("dims", tmpl::Value(std::move(shifted)));
  f.set("value", fmt::format("{}[{}]", in, t.offset(coords, dims)));
  add(t, value(out).numel());
  kernels_.back().form = std::move(f);
}

void SelectCall::pad() {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  const std::string type = type_of(x);
  const SymShape& xd = value(x).dims;
  const SymShape& od = value(out).dims;
  const std::vector<int64_t>& widths = form().widths;
  const double fill = form().fill;
  KernelText t = text();
  const std::string in = t.input(x, type);
  t.output(out, type);
  t.coordinates(od);
  std::vector<std::string> coords;
  tmpl::List padded;  // the padded dims' source coordinates (index_select.j2)
  for (size_t d = 0; d < xd.size(); ++d) {
    const int64_t before = widths[2 * d];
    if (before == 0 && widths[2 * d + 1] == 0) {
      coords.push_back("c" + std::to_string(d));
      continue;
    }
    tmpl::Value dim = tmpl::Value::map();
    dim.set("name", "i" + std::to_string(d));
    dim.set("coordinate", "c" + std::to_string(d));
    dim.set("before", before);
    dim.set("n", t.size(xd[d]));
    padded.push_back(std::move(dim));
    coords.push_back("i" + std::to_string(d));
  }
  tmpl::Value f = tmpl::Value::map();
  f.set("kind", "pad");
  f.set("dims", tmpl::Value(std::move(padded)));
  f.set("value", fmt::format("{}[{}]", in, t.offset(coords, xd)));
  f.set("fill", type == "bool"    ? (fill != 0 ? "true" : "false")
                                  : cuda_device_constant(fill, type));
  add(t, value(out).numel());
  kernels_.back().form = std::move(f);
}

void SelectCall::assign() {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  const std::string type = type_of(x);
  KernelText k = text();
  const std::string in = k.input(x, type);
  k.output(out, type);
  add(k, value(out).numel());
  kernels_.back().form = cuda_index_store_form(in + "[e]");
}

void SelectCall::add_n() {
  const KernelArg* xs = call_.arg("inputs");
  const uint32_t out = out_value();
  KernelText t = text();
  std::vector<std::string> names;
  for (uint32_t v : xs->values) names.push_back(t.input(v, type_of(v)));
  const std::string type = type_of(out);
  t.output(out, type);
  tmpl::Value f = tmpl::Value::map();
  f.set("kind", "add_n");
  f.set("type", type);
  f.set("inputs", tmpl::Value(tmpl::List(names.begin(), names.end())));
  add(t, value(out).numel());
  kernels_.back().form = std::move(f);
}

void SelectCall::index_sample() {
  const uint32_t x = call_.tensor_arg("x"), index = call_.tensor_arg("index"), out = out_value();
  const std::string type = type_of(x), itype = type_of(index);
  const SymShape& xd = value(x).dims;
  const SymShape& id = value(index).dims;
  KernelText t = text();
  const std::string in = t.input(x, type), idx = t.input(index, itype);
  t.output(out, type);
  const std::string len = t.size(xd[1]);
  tmpl::Value f = tmpl::Value::map();
  f.set("kind", "index_sample");
  f.set("type", type);
  f.set("x", in);
  f.set("index", idx);
  f.set("len", len);
  f.set("row", t.size(id[1]));
  add(t, value(out).numel());
  kernels_.back().form = std::move(f);
}

void SelectCall::take_along_axis() {
  const uint32_t x = call_.tensor_arg("arr"), index = call_.tensor_arg("indices"), out = out_value();
  const std::string type = type_of(x), itype = type_of(index);
  const SymShape& xd = value(x).dims;
  const SymShape& id = value(index).dims;
  const size_t axis = form().axis;
  KernelText t = text();
  const std::string in = t.input(x, type), idx = t.input(index, itype);
  t.output(out, type);
  tmpl::List dims;  // the output's (the index's) dims, innermost first, each with arr's size and stride there
  SymExpr stride = 1;
  for (size_t d = xd.size(); d-- > 0;) {
    tmpl::Value dim = tmpl::Value::map();
    const std::string size = t.size(id[d]), arr_size = t.size(xd[d]);
    dim.set("size", size);
    dim.set("stride", t.size(stride));
    dim.set("axis", d == axis);
    // Where the indices' dim is not spelled as arr's, it may be larger at run time (the shape rule checks only
    // constants): the coordinate is then checked against arr's.
    dim.set("bound", d != axis && size != arr_size ? arr_size : std::string());
    dims.push_back(std::move(dim));
    stride = stride * xd[d];
  }
  tmpl::Value f = tmpl::Value::map();
  f.set("kind", "take_along_axis");
  f.set("type", type);
  f.set("x", in);
  f.set("index", idx);
  f.set("len", t.size(xd[axis]));
  f.set("dims", tmpl::Value(std::move(dims)));
  add(t, value(out).numel());
  kernels_.back().form = std::move(f);
}

}  // namespace select_internal

std::vector<CudaIndexKernel> select_kernels(const LoweredProgram& program, const KernelCall& call,
                                            const passes::CudaIndexMap& map, const std::string& prefix, size_t first,
                                            const std::string& description, const CudaBufferExpr& buffer,
                                            SizeTable& sizes, const SizeTable::Spelling& size_argument,
                                            const std::string& scratch) {
  select_internal::SelectCall builder(map, program, call, prefix, first, description, buffer, sizes, size_argument);
  builder.set_scratch(scratch);
  return builder.build();
}

}  // namespace kforge::codegen::index_text