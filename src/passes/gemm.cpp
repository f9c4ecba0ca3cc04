#include "passes/gemm.h"

#include <fmt/format.h>

#include <tuple>

namespace kforge::passes {

namespace {

bool fail(std::string* why, std::string text) {
  if (why != nullptr) *why = std::move(text);
  return false;
}

// y a matrix: x's rows, all batch dims included, are M.
void fold_into_m(GemmForm& f, const LoweredValue& x) {
  if (f.transpose_x) {
    f.m = x.dims[1];
  } else {
    f.m = 1;
    for (size_t i = 0; i + 1 < x.dims.size(); ++i) f.m *= x.dims[i];
  }
}

// The stride between an operand's matrices in a batch of products over `batch` (the output's batch dims):
// one matrix when its batch dims, padded with 1s on the left, equal the output's; 0 when they are all 1.
std::optional<SymExpr> batch_stride(const SymShape& dims, const SymShape& batch) {
  const size_t own = dims.size() - 2;
  if (own > batch.size()) return std::nullopt;
  const size_t lead = batch.size() - own;
  bool all_one = true, equal = true;
  for (size_t d = 0; d < batch.size(); ++d) {
    const SymExpr dim = d < lead ? SymExpr(1) : dims[d - lead];
    all_one &= dim.constant() == std::optional<int64_t>(1);
    equal &= dim == batch[d];
  }
  if (all_one) return SymExpr(0);
  if (equal) return dims.end()[-2] * dims.end()[-1];
  return std::nullopt;
}

bool batch_of_products(GemmForm& f, const LoweredValue& x, const LoweredValue& y, const LoweredValue& out,
                       std::string* why) {
  if (out.dims.size() < 2) return fail(why, fmt::format("the output {} is not a batch of matrices", to_string(out.dims)));
  const SymShape batch(out.dims.begin(), out.dims.end() - 2);
  f.batched = true;
  f.m = f.transpose_x ? x.dims.end()[-1] : x.dims.end()[-2];
  f.batch = sym_numel(batch);
  for (const auto& [name, v, stride] : {std::tuple<const char*, const LoweredValue*, SymExpr*>{"x", &x, &f.stride_x},
                                        {"y", &y, &f.stride_y}}) {
    std::optional<SymExpr> s = batch_stride(v->dims, batch);
    if (!s) {
      return fail(why, fmt::format("the batch dims of {} ({}) neither equal the output's ({}) nor are all 1; a batch "
                                   "of products reads one matrix per product or one for all",
                                   name, to_string(v->dims), to_string(out.dims)));
    }
    *stride = *s;
  }
  return true;
}

}  // namespace

bool is_gemm_dtype(ir::DataType dtype) {
  return dtype == ir::DataType::kFloat32 || dtype == ir::DataType::kFloat16 || dtype == ir::DataType::kBFloat16;
}

std::optional<GemmForm> gemm_form(const LoweredProgram& program, const KernelCall& call, std::string* why) {
  if (call.op != "matmul") {
    fail(why, "not a matmul");
    return std::nullopt;
  }
  const KernelArg* x = call.arg("x");
  const KernelArg* y = call.arg("y");
  if (x == nullptr || y == nullptr || x->kind != ArgKind::kTensor || y->kind != ArgKind::kTensor) {
    fail(why, "its operands x and y are not plain tensors");
    return std::nullopt;
  }
  if (call.outputs.size() != 1 || call.outputs[0].values.size() != 1 || call.outputs[0].values[0] == kNone) {
    fail(why, "its output is not one tensor that is used");
    return std::nullopt;
  }
  GemmForm f;
  f.x = x->value;
  f.y = y->value;
  f.out = call.outputs[0].values[0];
  const LoweredValue& xv = program.value(f.x);
  const LoweredValue& yv = program.value(f.y);
  const LoweredValue& ov = program.value(f.out);
  if (!is_gemm_dtype(xv.dtype)) {
    fail(why, fmt::format("x is {}; the CUDA GEMM computes float32, float16 or bfloat16 only", ir::dtype_name(xv.dtype)));
    return std::nullopt;
  }
  f.dtype = xv.dtype;
  // The verifier already refuses a matmul of two dtypes; this also covers programs whose declared output
  // type differs, so that no kernel ever reads or writes memory as the wrong type.
  for (const auto& [name, v] : {std::pair<const char*, const LoweredValue*>{"y", &yv}, {"the output", &ov}}) {
    if (v->dtype != f.dtype) {
      fail(why, fmt::format("{} is {} but x is {}; the CUDA GEMM needs x, y and the output in one dtype", name,
                            ir::dtype_name(v->dtype), ir::dtype_name(f.dtype)));
      return std::nullopt;
    }
  }
  for (auto [attr, flag] : {std::pair<const char*, bool*>{"transpose_x", &f.transpose_x}, {"transpose_y", &f.transpose_y}}) {
    const std::optional<bool> value = call.constant_bool(attr);
    if (!value) {
      fail(why, fmt::format("{} is not known at generation time", attr));
      return std::nullopt;
    }
    *flag = *value;
  }
  if (xv.dims.size() < 2 || yv.dims.size() < 2) {
    const bool x_vector = xv.dims.size() < 2;
    const LoweredValue& v = x_vector ? xv : yv;
    fail(why, fmt::format("{} has rank {} ({}), but the GEMM needs a matrix or a batch of matrices (rank >= 2)",
                          x_vector ? "x" : "y", v.dims.size(), to_string(v.dims)));
    return std::nullopt;
  }
  const bool folds = yv.dims.size() == 2 && (!f.transpose_x || xv.dims.size() == 2);
  if (folds) {
    fold_into_m(f, xv);
  } else if (!batch_of_products(f, xv, yv, ov, why)) {
    return std::nullopt;
  }
  f.k = f.transpose_y ? yv.dims.end()[-1] : yv.dims.end()[-2];
  f.n = f.transpose_y ? yv.dims.end()[-2] : yv.dims.end()[-1];
  const SymExpr k_of_x = f.transpose_x ? xv.dims.end()[-2] : xv.dims.end()[-1];
  if (k_of_x != f.k) {
    fail(why, fmt::format("the contraction dims of x ({}) and y ({}) are not provably equal", k_of_x.to_string(),
                          f.k.to_string()));
    return std::nullopt;
  }
  const bool shape_ok = f.batched ? ov.dims.size() >= 2 && ov.dims.end()[-2] == f.m && ov.dims.end()[-1] == f.n &&
                                        sym_numel(ov.dims) == f.batch * f.m * f.n
                                  : !ov.dims.empty() && ov.dims.back() == f.n && sym_numel(ov.dims) == f.m * f.n;
  if (!shape_ok) {
    fail(why, fmt::format("the output {} is not the {}[M, N] = [{}, {}] product", to_string(ov.dims),
                          f.batched ? "batch of " : "", f.m.to_string(), f.n.to_string()));
    return std::nullopt;
  }
  if (f.batched) f.stride_out = f.m * f.n;
  return f;
}

}  // namespace kforge::passes
