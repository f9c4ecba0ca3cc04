// The CUDA index kernels (cuda_index.h): cuda_index_kernels (each op family's builder; which ops are index-mapped
// is the CUDA target plan's, passes/cuda_plan_index.h), and the IndexCall's data-movement ops rendered from their
// plan forms (their statements are templates/program/cuda/index_move.j2's, spelled from the kernels' forms); slice,
// strided_slice and pad3d are in cuda_index_slice.cpp.
#include "codegen/cuda_index.h"

#include "codegen/cuda_index_call.h"

namespace kforge::codegen {

namespace cuda_index_internal {

std::vector<CudaIndexKernel> IndexCall::build() {
  const std::string& op = call_.op;
  if (op == "transpose") transpose();
  else if (op == "concat" || op == "stack") join(op == "stack");
  else if (op == "split" || op == "split_with_num") split();
  else if (op == "slice") slice();
  else if (op == "strided_slice" || op == "flip") strided_slice();  // flip: the plan's step -1 from the last element
  else if (op == "pad3d") pad3d();
  else if (op == "expand" || op == "tile" || op == "expand_as") broadcast();
  else if (op == "repeat_interleave") repeat_interleave();
  else if (op == "gather" || op == "index_select") gather();
  else if (op == "embedding") embedding();
  else if (op == "meshgrid") meshgrid();
  else if (op == "broadcast_tensors") broadcast_tensors();
  else batched_matmul();  // the plan gives a form to these ops and matmul / bmm only
  return take();
}

void IndexCall::transpose() {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  const std::string type = type_of(x);
  const SymShape& xd = value(x).dims;
  std::vector<std::string> coords(xd.size());
  for (size_t i = 0; i < form_.perm.size(); ++i) coords[form_.perm[i]] = "c" + std::to_string(i);
  KernelText k = text();
  const std::string in = k.input(x, type);
  k.output(out, type);
  // The last axis kept last (heads split or merged: [B, S, H, D] <-> [B, H, S, D]): its rows are whole runs of
  // both tensors, moved in 16-byte units as concat's.
  const size_t last = xd.size() - 1;
  const int64_t vec = !xd.empty() && coords[last] == "c" + std::to_string(last) ? unit_elements(xd, value(x).dtype) : 1;
  auto units = [&](SymShape dims) {
    if (vec > 1) dims.back() = *dims.back().constant() / vec;
    return dims;
  };
  if (vec > 1) k.aligned({in});
  k.coordinates(units(value(out).dims));
  tmpl::Value f = tmpl::Value::map();  // index_move.j2's move: unit e from unit `from` of `in`
  f.set("kind", "move");
  f.set("vec", vec);
  f.set("input", in);
  f.set("from", k.offset(coords, units(xd)));
  add(k, passes::sym_numel(units(value(out).dims)));
  kernels_.back().form = std::move(f);
}

void IndexCall::join(bool stacked) {
  const KernelArg* xs = call_.arg("x");
  const uint32_t out = out_value();
  const SymShape& od = value(out).dims;
  const size_t axis = form_.axis;
  KernelText k = text();
  const std::string type = type_of(out);
  std::vector<std::string> names;
  for (uint32_t v : xs->values) names.push_back(k.input(v, type));
  k.output(out, type);
  // Along any axis but the last, every input's rows of the last dim are whole runs of the output's: moved in
  // 16-byte units (a KV cache grown by one token moves at the copy rate, not one 2-byte element per thread).
  const int64_t vec = axis + 1 < od.size() ? unit_elements(od, value(out).dtype) : 1;
  auto units = [&](SymShape dims) {
    if (vec > 1) dims.back() = *dims.back().constant() / vec;
    return dims;
  };
  if (vec > 1) k.aligned(names);
  k.coordinates(units(od));
  SymExpr start = 0;
  const std::string ca = "c" + std::to_string(axis);
  tmpl::List parts;  // per input: where it is read from, and the test of the coordinate that picks it
  for (size_t j = 0; j < names.size(); ++j) {
    const SymShape xd = units(value(xs->values[j]).dims);
    std::vector<std::string> coords;
    for (size_t d = 0; d < od.size(); ++d) {
      if (!stacked || d != axis) coords.push_back("c" + std::to_string(d));
    }
    std::string when = fmt::format("{} == {}", ca, j);
    if (!stacked) {
      if (start.constant() != std::optional<int64_t>(0)) coords[axis] = ca + " - " + k.size(start);
      const SymExpr end = start + xd[axis];
      when = fmt::format("{} < {}", ca, k.size(end));
      start = end;
    }
    tmpl::Value part = tmpl::Value::map();
    part.set("input", names[j]);
    part.set("from", k.offset(coords, xd));
    part.set("when", when);
    parts.push_back(std::move(part));
  }
  tmpl::Value f = tmpl::Value::map();
  f.set("kind", "join");
  f.set("vec", vec);
  f.set("parts", tmpl::Value(std::move(parts)));
  add(k, passes::sym_numel(units(od)));
  kernels_.back().form = std::move(f);
}

void IndexCall::split() {
  const uint32_t x = call_.tensor_arg("x");
  const SymShape& xd = value(x).dims;
  const size_t axis = form_.axis;
  const std::string type = type_of(x);
  SymExpr start = 0;
  for (uint32_t out : call_.outputs[0].values) {
    const SymShape& od = value(out).dims;
    KernelText k = text();
    const std::string in = k.input(x, type);
    k.output(out, type);
    k.coordinates(od);
    std::vector<std::string> coords;
    for (size_t d = 0; d < od.size(); ++d) coords.push_back("c" + std::to_string(d));
    if (start.constant() != std::optional<int64_t>(0)) coords[axis] += " + " + k.size(start);
    const std::string load = fmt::format("{}[{}]", in, k.offset(coords, xd));
    add(k, value(out).numel());
    kernels_.back().form = cuda_index_store_form(load);
    start = start + od[axis];
  }
}

void IndexCall::broadcast() { broadcast_to(call_.tensor_arg("x"), out_value()); }

void IndexCall::broadcast_tensors() {
  const KernelArg* xs = call_.arg("input");
  for (size_t i = 0; i < xs->values.size(); ++i) {
    if (call_.outputs[0].values[i] != kNone) broadcast_to(xs->values[i], call_.outputs[0].values[i]);
  }
}

void IndexCall::broadcast_to(uint32_t x, uint32_t out) {
  const std::string type = type_of(x);
  const SymShape& xd = value(x).dims;
  const SymShape& od = value(out).dims;
  KernelText k = text();
  const std::string in = k.input(x, type);
  k.output(out, type);
  k.coordinates(od);
  std::vector<std::string> coords;
  const size_t lead = od.size() - xd.size();
  for (size_t d = 0; d < xd.size(); ++d) {
    const std::string c = "c" + std::to_string(d + lead);
    if (xd[d].constant() == std::optional<int64_t>(1)) coords.push_back("0");
    else if (xd[d] == od[d + lead]) coords.push_back(c);
    else coords.push_back(c + " % " + k.size(xd[d]));
  }
  const std::string load = fmt::format("{}[{}]", in, k.offset(coords, xd));
  add(k, value(out).numel());
  kernels_.back().form = cuda_index_store_form(load);
}

void IndexCall::repeat_interleave() {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  const std::string type = type_of(x);
  const SymShape& xd = value(x).dims;
  KernelText k = text();
  const std::string in = k.input(x, type);
  k.output(out, type);
  k.coordinates(value(out).dims);
  std::vector<std::string> coords;
  for (size_t d = 0; d < xd.size(); ++d) {
    const std::string c = "c" + std::to_string(d);
    coords.push_back(d == form_.axis ? fmt::format("{} / {}", c, form_.k) : c);
  }
  const std::string load = fmt::format("{}[{}]", in, k.offset(coords, xd));
  add(k, value(out).numel());
  kernels_.back().form = cuda_index_store_form(load);
}

void IndexCall::gather() {
  const uint32_t x = call_.tensor_arg("x"), index = call_.tensor_arg("index"), out = out_value();
  const std::string type = type_of(x), itype = type_of(index);
  const SymShape& xd = value(x).dims;
  const size_t axis = form_.axis;
  SymExpr inner = 1;
  for (size_t d = axis + 1; d < xd.size(); ++d) inner = inner * xd[d];
  KernelText k = text();
  const std::string in = k.input(x, type);
  const std::string idx = k.input(index, itype);
  k.output(out, type);
  const std::string n = k.size(xd[axis]), count = k.size(value(index).numel()), in_size = k.size(inner);
  tmpl::Value f = tmpl::Value::map();
  f.set("kind", "gather");
  f.set("type", type);
  f.set("x", in);
  f.set("index", idx);
  f.set("n", n);
  f.set("count", count);
  f.set("inner", in_size);
  add(k, value(out).numel());
  kernels_.back().form = std::move(f);
}

void IndexCall::embedding() {
  const uint32_t ids = call_.tensor_arg("x"), weight = call_.tensor_arg("weight"), out = out_value();
  const std::string type = type_of(weight), itype = type_of(ids);
  const SymShape& wd = value(weight).dims;
  const int64_t rows = form_.rows, pad = form_.padding_row;
  KernelText k = text();
  const std::string id = k.input(ids, itype);
  const std::string w = k.input(weight, type);
  k.output(out, type);
  const std::string width = k.size(wd[1]);
  tmpl::Value f = tmpl::Value::map();
  f.set("kind", "embedding");
  f.set("type", type);
  f.set("ids", id);
  f.set("weight", w);
  f.set("width", width);
  f.set("rows", rows);
  f.set("padding_row", pad);  // -1: none
  add(k, value(out).numel());
  kernels_.back().form = std::move(f);
}

void IndexCall::meshgrid() {
  const KernelArg* xs = call_.arg("inputs");
  for (size_t i = 0; i < xs->values.size(); ++i) {
    const uint32_t x = xs->values[i], out = call_.outputs[0].values[i];
    if (out == kNone) continue;
    const std::string type = type_of(x);
    KernelText k = text();
    const std::string in = k.input(x, type);
    k.output(out, type);
    const SymShape& od = value(out).dims;
    SymExpr inner = 1;
    for (size_t d = i + 1; d < od.size(); ++d) inner = inner * od[d];
    const std::string at = inner.constant() == std::optional<int64_t>(1) ? "e" : "e / " + k.size(inner);
    const std::string load = fmt::format("{}[{} % {}]", in, at, k.size(od[i]));
    add(k, value(out).numel());
    kernels_.back().form = cuda_index_store_form(load);
  }
}

void IndexCall::batched_matmul() {
  const uint32_t x = call_.tensor_arg("x"), y = call_.tensor_arg("y"), out = out_value();
  const std::string type = type_of(x);
  const SymShape& xd = value(x).dims;
  const SymShape& yd = value(y).dims;
  const SymShape& od = value(out).dims;
  const bool x_vec = xd.size() == 1, y_vec = yd.size() == 1;
  const bool tx = form_.transpose_x, ty = form_.transpose_y;
  // The output's matrix dims: 2, less one per vector operand; the rest are batch dims.
  const size_t matrix_dims = (x_vec ? 0 : 1) + (y_vec ? 0 : 1);
  const size_t x_batch = x_vec ? 0 : xd.size() - 2, y_batch = y_vec ? 0 : yd.size() - 2;
  const size_t batch = od.size() - matrix_dims;
  KernelText k = text();
  const std::string xs = k.input(x, type), ys = k.input(y, type);
  k.output(out, type);
  k.coordinates(od);
  const SymExpr one = 1;
  const SymExpr& m_dim = x_vec ? one : (tx ? xd.back() : xd[xd.size() - 2]);
  const SymExpr& k_dim = x_vec ? xd[0] : (tx ? xd[xd.size() - 2] : xd.back());
  const SymExpr& n_dim = y_vec ? one : (ty ? yd[yd.size() - 2] : yd.back());
  const std::string m = k.size(m_dim), depth = k.size(k_dim), n = k.size(n_dim);
  // The offset of an operand's matrix: its batch dims aligned with the output's last batch dims.
  auto base = [&](const SymShape& dims, size_t batch_rank) {
    if (batch_rank == 0) return std::string("0");
    std::vector<std::string> coords;
    SymShape batch_dims(dims.begin(), dims.begin() + static_cast<std::ptrdiff_t>(batch_rank));
    const size_t lead = batch - batch_rank;
    for (size_t d = 0; d < batch_rank; ++d) {
      coords.push_back(batch_dims[d].constant() == std::optional<int64_t>(1) ? "0" : "c" + std::to_string(d + lead));
    }
    const SymExpr matrix = dims[dims.size() - 2] * dims.back();
    const std::string off = k.offset(coords, batch_dims);
    if (off == "0") return std::string("0");
    return (off.find(' ') == std::string::npos ? off : "(" + off + ")") + " * " + k.size(matrix);
  };
  const std::string i = x_vec ? "0" : "c" + std::to_string(batch), j = y_vec ? "0" : "c" + std::to_string(od.size() - 1);
  const std::string acc = type == "double" ? "double" : "float";
  tmpl::Value f = tmpl::Value::map();
  f.set("kind", "batched_matmul");
  f.set("type", type);
  f.set("acc", acc);
  f.set("x", xs);
  f.set("y", ys);
  f.set("x_base", base(xd, x_batch));
  f.set("y_base", base(yd, y_batch));
  f.set("depth", depth);
  f.set("x_at", tx ? fmt::format("k * {} + {}", m, i) : fmt::format("{} * {} + k", i, depth));
  f.set("y_at", ty ? fmt::format("{} * {} + k", j, depth) : fmt::format("k * {} + {}", n, j));
  add(k, value(out).numel());
  kernels_.back().form = std::move(f);
}

}  // namespace cuda_index_internal

std::vector<CudaIndexKernel> cuda_index_kernels(const passes::LoweredProgram& program, const passes::KernelCall& call,
                                                const passes::CudaIndexMap& map, const std::string& prefix,
                                                size_t first, const std::string& description,
                                                const CudaBufferExpr& buffer, SizeTable& sizes,
                                                const SizeTable::Spelling& size_argument, const std::string& scratch) {
  using passes::CudaIndexFamily;
  const std::optional<CudaIndexFamily> family = passes::cuda_index_family(call.op);
  if (family == CudaIndexFamily::kLoss) {
    return index_text::loss_kernels(program, call, map, prefix, first, description, buffer, sizes, size_argument);
  }
  if (family == CudaIndexFamily::kSelect) {
    return index_text::select_kernels(program, call, map, prefix, first, description, buffer, sizes, size_argument,
                                      scratch);
  }
  return cuda_index_internal::IndexCall(map, program, call, prefix, first, description, buffer, sizes, size_argument)
      .build();
}

std::vector<CudaIndexKernel> cuda_index_kernels(const passes::LoweredProgram& program, const passes::KernelCall& call,
                                                const passes::CudaComputeForm& form, const std::string& prefix,
                                                size_t first, const std::string& description,
                                                const CudaBufferExpr& buffer, SizeTable& sizes,
                                                const SizeTable::Spelling& size_argument) {
  using passes::CudaIndexFamily;
  const std::optional<CudaIndexFamily> family = passes::cuda_index_family(call.op);
  if (family == CudaIndexFamily::kBinary) {
    return index_text::binary_kernels(program, call, form, prefix, first, description, buffer, sizes, size_argument);
  }
  if (family == CudaIndexFamily::kEinsum) {
    return index_text::einsum_kernels(program, call, form, prefix, first, description, buffer, sizes, size_argument);
  }
  if (family == CudaIndexFamily::kNorm) {
    return index_text::norm_kernels(program, call, form, prefix, first, description, buffer, sizes, size_argument);
  }
  return index_text::compute_kernels(program, call, form, prefix, first, description, buffer, sizes, size_argument);
}

tmpl::Value cuda_index_store_form(const std::string& value) {
  tmpl::Value form = tmpl::Value::map();
  form.set("kind", "store");
  form.set("value", value);
  return form;
}

tmpl::Value cuda_index_kernel_context(const CudaIndexKernel& kernel) {
  tmpl::Value v = tmpl::Value::map();
  v.set("name", kernel.name);
  v.set("description", kernel.description);
  v.set("params", tmpl::Value(tmpl::List(kernel.params.begin(), kernel.params.end())));
  tmpl::List names;
  for (const std::string& p : kernel.params) names.push_back(p.substr(p.find_last_of(' ') + 1));
  v.set("param_names", tmpl::Value(std::move(names)));
  v.set("args", tmpl::Value(tmpl::List(kernel.args.begin(), kernel.args.end())));
  v.set("numel", kernel.numel);
  if (kernel.aligned.is_list()) v.set("aligned", kernel.aligned);
  if (kernel.coords.is_map()) v.set("coords", kernel.coords);
  if (!kernel.form.is_none()) v.set("form", kernel.form);
  if (kernel.statements.is_map()) v.set("statements", kernel.statements);
  return v;
}

tmpl::Value cuda_index_batch_context(const std::string& name, const std::string& description,
                                     const std::vector<CudaIndexKernel>& members) {
  tmpl::List params, param_names, args, contexts;
  for (size_t k = 0; k < members.size(); ++k) {
    tmpl::Value member = cuda_index_kernel_context(members[k]);
    tmpl::List batch_names;
    for (const std::string& p : members[k].params) {
      const size_t at = p.find_last_of(' ') + 1;
      const std::string renamed = fmt::format("m{}_{}", k, p.substr(at));
      params.push_back(p.substr(0, at) + renamed);
      param_names.push_back(renamed);
      batch_names.push_back(renamed);
    }
    for (const std::string& a : members[k].args) args.push_back(a);
    member.set("batch_names", tmpl::Value(std::move(batch_names)));
    contexts.push_back(std::move(member));
  }
  tmpl::Value v = tmpl::Value::map();
  v.set("name", name);
  v.set("description", description);
  v.set("params", tmpl::Value(std::move(params)));
  v.set("param_names", tmpl::Value(std::move(param_names)));
  v.set("args", tmpl::Value(std::move(args)));
  v.set("members", tmpl::Value(std::move(contexts)));
  return v;
}

}  // namespace kforge::codegen
