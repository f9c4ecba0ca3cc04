#include "passes/gemm.h"

#include <fmt/format.h>

#include <algorithm>
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

// How an operand's batch dims d in [from, to) (of the output's batch dims `batch`, the operand's padded with 1s on
// the left) are read: true when they equal the output's (`*per_product`: one matrix each), or are all 1
// (`*per_product` false: one matrix for all); false when they do neither.
bool batch_part(const SymShape& dims, const SymShape& batch, size_t from, size_t to, bool* per_product) {
  const size_t lead = batch.size() - (dims.size() - 2);
  bool all_one = true, equal = true;
  for (size_t d = from; d < to; ++d) {
    const SymExpr dim = d < lead ? SymExpr(1) : dims[d - lead];
    all_one &= dim.constant() == std::optional<int64_t>(1);
    equal &= dim == batch[d];
  }
  *per_product = !all_one;
  return all_one || equal;
}

// The output's batch dims split at `split` into outer [0, split) and inner [split, n) dims, each part of each
// operand read per product or once (batch_part): the strides of both levels, or false.
bool batch_levels(GemmForm& f, const SymShape& x, const SymShape& y, const SymShape& batch, size_t split) {
  const SymShape inner(batch.begin() + split, batch.end());
  const SymExpr inner_count = sym_numel(inner);
  for (const auto& [dims, stride, outer_stride] :
       {std::tuple<const SymShape*, SymExpr*, SymExpr*>{&x, &f.stride_x, &f.outer_stride_x},
        {&y, &f.stride_y, &f.outer_stride_y}}) {
    bool inner_each = false, outer_each = false;
    if (!batch_part(*dims, batch, split, batch.size(), &inner_each) || !batch_part(*dims, batch, 0, split, &outer_each)) {
      return false;
    }
    const SymExpr matrix = dims->end()[-2] * dims->end()[-1];
    *stride = inner_each ? matrix : SymExpr(0);
    *outer_stride = outer_each ? (inner_each ? inner_count * matrix : matrix) : SymExpr(0);
  }
  f.batch = inner_count;
  f.outer = sym_numel(SymShape(batch.begin(), batch.begin() + split));
  return true;
}

bool batch_of_products(GemmForm& f, const LoweredValue& x, const LoweredValue& y, const LoweredValue& out,
                       std::string* why) {
  if (out.dims.size() < 2) return fail(why, fmt::format("the output {} is not a batch of matrices", to_string(out.dims)));
  const SymShape batch(out.dims.begin(), out.dims.end() - 2);
  if (x.dims.size() - 2 > batch.size() || y.dims.size() - 2 > batch.size()) {
    return fail(why, fmt::format("x ({}) or y ({}) has more batch dims than the output ({})", to_string(x.dims),
                                 to_string(y.dims), to_string(out.dims)));
  }
  f.batched = true;
  f.m = f.transpose_x ? x.dims.end()[-1] : x.dims.end()[-2];
  // One level (split 0) where it serves, else the first split into two that does.
  for (size_t split = 0; split < std::max<size_t>(batch.size(), 1); ++split) {
    if (!batch_levels(f, x.dims, y.dims, batch, split)) continue;
    f.stride_out = f.m * (f.transpose_y ? y.dims.end()[-2] : y.dims.end()[-1]);
    f.outer_stride_out = f.batch * f.stride_out;
    return true;
  }
  return fail(why, fmt::format("the batch dims of x ({}) and y ({}) broadcast against the output's ({}) in more than "
                               "two runs of dims; a batch of products reads one matrix per product or one for all, "
                               "within at most two levels",
                               to_string(x.dims), to_string(y.dims), to_string(out.dims)));
}

}  // namespace

bool is_gemm_dtype(ir::DataType dtype) {
  return dtype == ir::DataType::kFloat32 || dtype == ir::DataType::kFloat16 || dtype == ir::DataType::kBFloat16;
}

std::optional<GemmForm> gemm_form(const LoweredProgram& program, const KernelCall& call, std::string* why) {
  if (call.op != "matmul" && call.op != "bmm") {
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
  // bmm is matmul of two [B, M, K] x [B, K, N] batches without transposes (it has no such attributes).
  for (auto [attr, flag] : {std::pair<const char*, bool*>{"transpose_x", &f.transpose_x}, {"transpose_y", &f.transpose_y}}) {
    const std::optional<bool> value = call.op == "bmm" ? std::optional<bool>(false) : call.constant_bool(attr);
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
                                        sym_numel(ov.dims) == f.outer * f.batch * f.m * f.n
                                  : !ov.dims.empty() && ov.dims.back() == f.n && sym_numel(ov.dims) == f.m * f.n;
  if (!shape_ok) {
    fail(why, fmt::format("the output {} is not the {}[M, N] = [{}, {}] product", to_string(ov.dims),
                          f.batched ? "batch of " : "", f.m.to_string(), f.n.to_string()));
    return std::nullopt;
  }
  return f;
}

}  // namespace kforge::passes
