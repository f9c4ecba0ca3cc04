// The CUDA index kernels (cuda_index.h): which ops are index-mapped, cuda_index_kernels (each op family's
// builder), and the IndexCall's data-movement ops; slice, strided_slice and pad3d are in cuda_index_slice.cpp.
#include "codegen/cuda_index.h"

#include "codegen/cuda_index_call.h"

namespace kforge::codegen {

namespace cuda_index_internal {

namespace {

// The data-movement ops built here; the ones that compute are cuda_index_compute.cpp's (index_text::is_compute_op).
constexpr std::array<std::string_view, 14> kMovementOps = {
    "transpose", "concat", "stack",        "split",     "split_with_num", "slice",   "strided_slice",
    "pad3d",     "expand", "tile",         "gather",    "index_select",   "embedding", "meshgrid"};

}  // namespace

std::optional<std::vector<CudaIndexKernel>> IndexCall::build() {
  const std::string& op = call_.op;
  bool ok = false;
  if (op == "transpose") ok = transpose();
  else if (op == "concat" || op == "stack") ok = join(op == "stack");
  else if (op == "split" || op == "split_with_num") ok = split();
  else if (op == "slice") ok = slice();
  else if (op == "strided_slice") ok = strided_slice();
  else if (op == "pad3d") ok = pad3d();
  else if (op == "expand" || op == "tile") ok = broadcast();
  else if (op == "gather" || op == "index_select") ok = gather();
  else if (op == "embedding") ok = embedding();
  else if (op == "meshgrid") ok = meshgrid();
  else if (op == "matmul" || op == "bmm") ok = batched_matmul();
  else fail("it is not an index-mapped op");
  if (!ok) return std::nullopt;
  return take();
}

bool IndexCall::transpose() {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  const std::string type = same_type(x, out, false);
  const passes::AttrConstant* perm = constant(call_, "perm", why_);
  if (type.empty() || perm == nullptr || !own_buffer(x, out)) return false;
  const SymShape& xd = value(x).dims;
  if (perm->ints.size() != xd.size() || value(out).dims.size() != xd.size()) {
    return fail("its perm does not match the rank of its input");
  }
  std::vector<std::string> coords(xd.size());
  for (size_t i = 0; i < perm->ints.size(); ++i) {
    size_t axis = 0;
    if (!passes::normalize_axis(perm->ints[i], static_cast<int64_t>(xd.size()), &axis)) return fail("its perm names an axis out of range");
    coords[axis] = "c" + std::to_string(i);
  }
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
  if (vec > 1) k.line(aligned_flag({in}));
  k.coordinates(units(value(out).dims));
  k.line(move(vec, in, k.offset(coords, units(xd))));
  add(k, passes::sym_numel(units(value(out).dims)));
  return true;
}

bool IndexCall::join(bool stacked) {
  const KernelArg* xs = call_.arg("x");
  const uint32_t out = out_value();
  if (xs == nullptr || xs->kind != ArgKind::kTensorList || xs->values.empty() || out == kNone) {
    return fail("it needs a list of inputs and one output");
  }
  const std::optional<int64_t> given = constant_int(call_, "axis", why_);
  if (!given) return false;
  const SymShape& od = value(out).dims;
  size_t axis = 0;
  if (!passes::normalize_axis(*given, static_cast<int64_t>(od.size()), &axis)) return fail("its axis is out of range");
  KernelText k = text();
  std::string type;
  std::vector<std::string> names;
  for (uint32_t v : xs->values) {
    type = same_type(v, out, false);
    if (type.empty() || !own_buffer(v, out)) return false;
    if (value(v).dims.size() + (stacked ? 1 : 0) != od.size()) {
      return fail(stacked ? "its output's rank is not its inputs' plus one" : "its inputs and output differ in rank");
    }
    names.push_back(k.input(v, type));
  }
  k.output(out, type);
  // Along any axis but the last, every input's rows of the last dim are whole runs of the output's: moved in
  // 16-byte units (a KV cache grown by one token moves at the copy rate, not one 2-byte element per thread).
  const int64_t vec = axis + 1 < od.size() ? unit_elements(od, value(out).dtype) : 1;
  auto units = [&](SymShape dims) {
    if (vec > 1) dims.back() = *dims.back().constant() / vec;
    return dims;
  };
  if (vec > 1) k.line(aligned_flag(names));
  k.coordinates(units(od));
  SymExpr start = 0;
  const std::string ca = "c" + std::to_string(axis);
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
    const std::string from = k.offset(coords, xd);
    const std::string load = move(vec, names[j], from);
    if (j + 1 == names.size()) {
      k.line(j == 0 ? load : "} else {");
      if (j > 0) k.line("  " + load);
    } else {
      k.line(fmt::format("{}if ({}) {{", j == 0 ? "" : "} else ", when));
      k.line("  " + load);
    }
  }
  if (names.size() > 1) k.line("}");
  add(k, passes::sym_numel(units(od)));
  return true;
}

bool IndexCall::split() {
  const uint32_t x = call_.tensor_arg("x");
  const std::optional<int64_t> given = constant_int(call_, "axis", why_);
  if (x == kNone || !given || call_.outputs.empty()) return fail("it needs an input, a constant axis and outputs");
  const SymShape& xd = value(x).dims;
  size_t axis = 0;
  if (!passes::normalize_axis(*given, static_cast<int64_t>(xd.size()), &axis)) return fail("its axis is out of range");
  SymExpr start = 0;
  for (uint32_t out : call_.outputs[0].values) {
    if (out == kNone) return fail("one of its outputs is absent");
    const SymShape& od = value(out).dims;
    const std::string type = same_type(x, out, false);
    if (type.empty() || !own_buffer(x, out)) return false;
    if (od.size() != xd.size()) return fail("its outputs differ from its input in rank");
    KernelText k = text();
    const std::string in = k.input(x, type);
    k.output(out, type);
    k.coordinates(od);
    std::vector<std::string> coords;
    for (size_t d = 0; d < od.size(); ++d) coords.push_back("c" + std::to_string(d));
    if (start.constant() != std::optional<int64_t>(0)) coords[axis] += " + " + k.size(start);
    k.line(fmt::format("out[e] = {}[{}];", in, k.offset(coords, xd)));
    add(k, value(out).numel());
    start = start + od[axis];
  }
  return true;
}

bool IndexCall::broadcast() {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  const std::string type = same_type(x, out, false);
  if (type.empty() || !own_buffer(x, out)) return false;
  const SymShape& xd = value(x).dims;
  const SymShape& od = value(out).dims;
  if (xd.size() > od.size()) return fail("its input has a higher rank than its output");
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
  k.line(fmt::format("out[e] = {}[{}];", in, k.offset(coords, xd)));
  add(k, value(out).numel());
  return true;
}

bool IndexCall::gather() {
  const uint32_t x = call_.tensor_arg("x"), index = call_.tensor_arg("index"), out = out_value();
  const std::string type = same_type(x, out, false);
  const std::optional<int64_t> given = type.empty() ? std::nullopt : constant_int(call_, "axis", why_);
  if (!given || index == kNone || !own_buffer(x, out)) return index == kNone ? fail("it needs an index") : false;
  const std::string itype = index_type(index);
  if (itype.empty()) return false;
  const SymShape& xd = value(x).dims;
  size_t axis = 0;
  if (!passes::normalize_axis(*given, static_cast<int64_t>(xd.size()), &axis)) return fail("its axis is out of range");
  SymExpr inner = 1;
  for (size_t d = axis + 1; d < xd.size(); ++d) inner = inner * xd[d];
  KernelText k = text();
  const std::string in = k.input(x, type);
  const std::string idx = k.input(index, itype);
  k.output(out, type);
  const std::string n = k.size(xd[axis]), count = k.size(value(index).numel()), in_size = k.size(inner);
  k.line(fmt::format("const int64_t i = e % {};", in_size));
  k.line(fmt::format("const int64_t j = (e / {}) % {};", in_size, count));
  k.line(fmt::format("const int64_t o = e / {} / {};", in_size, count));
  k.line(fmt::format("const int64_t id = static_cast<int64_t>({}[j]);", idx));
  k.line(fmt::format("out[e] = id >= 0 && id < {0} ? {1}[(o * {0} + id) * {2} + i] : {3}(0);", n, in, in_size, type));
  add(k, value(out).numel());
  return true;
}

bool IndexCall::embedding() {
  const uint32_t ids = call_.tensor_arg("x"), weight = call_.tensor_arg("weight"), out = out_value();
  const std::string type = same_type(weight, out, false);
  const std::optional<int64_t> padding = type.empty() ? std::nullopt : constant_int(call_, "padding_idx", why_);
  if (!padding || ids == kNone) return ids == kNone ? fail("it needs ids") : false;
  const std::string itype = index_type(ids);
  if (itype.empty()) return false;
  const SymShape& wd = value(weight).dims;
  if (wd.size() != 2 || !wd[0].constant()) return fail("its weight must be 2-D with a vocabulary known at generation time");
  const int64_t rows = *wd[0].constant();
  const int64_t pad = *padding == -1 ? -1 : (*padding < 0 ? *padding + rows : *padding);
  KernelText k = text();
  const std::string id = k.input(ids, itype);
  const std::string w = k.input(weight, type);
  k.output(out, type);
  const std::string width = k.size(wd[1]);
  k.line(fmt::format("const int64_t row = static_cast<int64_t>({}[e / {}]);", id, width));
  std::string keep = fmt::format("row >= 0 && row < {}", rows);
  if (pad >= 0) keep += fmt::format(" && row != {}", pad);
  k.line(fmt::format("out[e] = {} ? {}[row * {} + e % {}] : {}(0);", keep, w, width, width, type));
  add(k, value(out).numel());
  return true;
}

bool IndexCall::meshgrid() {
  const KernelArg* xs = call_.arg("inputs");
  if (xs == nullptr || xs->kind != ArgKind::kTensorList || call_.outputs.empty() ||
      call_.outputs[0].values.size() != xs->values.size()) {
    return fail("it needs a list of inputs and as many outputs");
  }
  for (size_t i = 0; i < xs->values.size(); ++i) {
    const uint32_t x = xs->values[i], out = call_.outputs[0].values[i];
    if (out == kNone) continue;
    const std::string type = same_type(x, out, false);
    if (type.empty() || !own_buffer(x, out)) return false;
    if (value(x).dims.size() > 1 || value(out).dims.size() != xs->values.size()) {
      return fail("its inputs are not 1-D, or its outputs' rank is not the number of inputs");
    }
    KernelText k = text();
    const std::string in = k.input(x, type);
    k.output(out, type);
    const SymShape& od = value(out).dims;
    SymExpr inner = 1;
    for (size_t d = i + 1; d < od.size(); ++d) inner = inner * od[d];
    const std::string at = inner.constant() == std::optional<int64_t>(1) ? "e" : "e / " + k.size(inner);
    k.line(fmt::format("out[e] = {}[{} % {}];", in, at, k.size(od[i])));
    add(k, value(out).numel());
  }
  return true;
}

bool IndexCall::batched_matmul() {
  const uint32_t x = call_.tensor_arg("x"), y = call_.tensor_arg("y"), out = out_value();
  const std::string type = same_type(x, out, true);
  if (type.empty() || y == kNone) return y == kNone ? fail("it needs x and y") : false;
  if (value(y).dtype != value(x).dtype) return fail("its x and y differ in dtype");
  // bmm: a matmul without transposes (it has no such attributes).
  const bool bmm = call_.op == "bmm";
  const std::optional<bool> tx_given = bmm ? std::optional<bool>(false) : call_.constant_bool("transpose_x");
  const std::optional<bool> ty_given = bmm ? std::optional<bool>(false) : call_.constant_bool("transpose_y");
  if (!tx_given || !ty_given) return fail("its transposes are not constants known at generation time");
  const SymShape& xd = value(x).dims;
  const SymShape& yd = value(y).dims;
  const SymShape& od = value(out).dims;
  if (xd.empty() || yd.empty()) return fail("a scalar operand has no CUDA matmul");
  const bool x_vec = xd.size() == 1, y_vec = yd.size() == 1;
  const bool tx = *tx_given && !x_vec, ty = *ty_given && !y_vec;
  // The output's matrix dims: 2, less one per vector operand; the rest are batch dims.
  const size_t matrix_dims = (x_vec ? 0 : 1) + (y_vec ? 0 : 1);
  const size_t x_batch = x_vec ? 0 : xd.size() - 2, y_batch = y_vec ? 0 : yd.size() - 2;
  if (od.size() < matrix_dims || od.size() - matrix_dims < std::max(x_batch, y_batch)) {
    return fail("its operands have more batch dims than its output");
  }
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
  k.line(fmt::format("const {}* xm = {} + {};", type, xs, base(xd, x_batch)));
  k.line(fmt::format("const {}* ym = {} + {};", type, ys, base(yd, y_batch)));
  k.line(fmt::format("{} acc = 0;", acc));
  k.line(fmt::format("for (int64_t k = 0; k < {}; ++k) {{", depth));
  k.line(fmt::format("  acc += static_cast<{}>(xm[{}]) * static_cast<{}>(ym[{}]);", acc,
                     tx ? fmt::format("k * {} + {}", m, i) : fmt::format("{} * {} + k", i, depth), acc,
                     ty ? fmt::format("{} * {} + k", j, depth) : fmt::format("k * {} + {}", n, j)));
  k.line("}");
  k.line(fmt::format("out[e] = static_cast<{}>(acc);", type));
  add(k, value(out).numel());
  return true;
}

}  // namespace cuda_index_internal

bool is_cuda_batched_matmul(std::string_view op) { return op == "matmul" || op == "bmm"; }

const std::set<std::string>& cuda_float32_index_ops() {
  static const std::set<std::string> ops = {"dropout", "bilinear_interp", "cumsum", "prod", "pow",
                                               "topk",    "add_n",           "scatter", "group_norm",
                                               "p_norm", "sigmoid_cross_entropy_with_logits",
                                               "cross_entropy_with_softmax", "einsum",
                                               "grid_sample", "floor_divide", "uniform"};
  return ops;
}

bool is_cuda_index_op(std::string_view op) {
  return std::find(cuda_index_internal::kMovementOps.begin(), cuda_index_internal::kMovementOps.end(), op) != cuda_index_internal::kMovementOps.end() ||
         index_text::is_compute_op(op) || index_text::is_select_op(op) || index_text::is_norm_op(op) ||
         index_text::is_loss_op(op) || index_text::is_einsum_op(op) || index_text::is_binary_op(op);
}

std::optional<std::vector<CudaIndexKernel>> cuda_index_kernels(const passes::LoweredProgram& program,
                                                               const passes::KernelCall& call,
                                                               const std::string& prefix, size_t first,
                                                               const std::string& description,
                                                               const CudaBufferExpr& buffer, SizeTable& sizes,
                                                               const SizeTable::Spelling& size_argument,
                                                               std::string* why, const std::string& scratch) {
  std::string reason;
  std::optional<std::vector<CudaIndexKernel>> kernels;
  if (index_text::is_compute_op(call.op)) {
    kernels = index_text::compute_kernels(program, call, prefix, first, description, buffer, sizes, size_argument,
                                          &reason);
  } else if (index_text::is_binary_op(call.op)) {
    kernels = index_text::binary_kernels(program, call, prefix, first, description, buffer, sizes, size_argument,
                                         &reason);
  } else if (index_text::is_einsum_op(call.op)) {
    kernels = index_text::einsum_kernels(program, call, prefix, first, description, buffer, sizes, size_argument,
                                         &reason);
  } else if (index_text::is_loss_op(call.op)) {
    kernels = index_text::loss_kernels(program, call, prefix, first, description, buffer, sizes, size_argument,
                                       &reason);
  } else if (index_text::is_norm_op(call.op)) {
    kernels = index_text::norm_kernels(program, call, prefix, first, description, buffer, sizes, size_argument,
                                       &reason);
  } else if (index_text::is_select_op(call.op)) {
    kernels = index_text::select_kernels(program, call, prefix, first, description, buffer, sizes, size_argument,
                                         &reason, scratch);
  } else {
    cuda_index_internal::IndexCall builder(program, call, prefix, first, description, buffer, sizes, size_argument, &reason);
    kernels = builder.build();
  }
  if (!kernels && why != nullptr) *why = reason;
  return kernels;
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
  v.set("body", tmpl::Value(tmpl::List(kernel.body.begin(), kernel.body.end())));
  return v;
}

}  // namespace kforge::codegen