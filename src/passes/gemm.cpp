#include "passes/gemm.h"

#include <fmt/format.h>

namespace kforge::passes {

namespace {

bool fail(std::string* why, std::string text) {
  if (why != nullptr) *why = std::move(text);
  return false;
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
  if (yv.dims.size() != 2) {
    fail(why, fmt::format("y has rank {} ({}), but the GEMM needs y to be a matrix (rank 2)", yv.dims.size(),
                          to_string(yv.dims)));
    return std::nullopt;
  }
  if (xv.dims.size() < 2) {
    fail(why, fmt::format("x has rank {} ({}), but the GEMM needs a matrix or a batch of matrices (rank >= 2)",
                          xv.dims.size(), to_string(xv.dims)));
    return std::nullopt;
  }
  if (f.transpose_x && xv.dims.size() != 2) {
    fail(why, fmt::format("x is a transposed batch ({}, transpose_x); only an untransposed batch folds into the GEMM's "
                          "M dimension",
                          to_string(xv.dims)));
    return std::nullopt;
  }
  const size_t r = xv.dims.size();
  SymExpr k_of_x;
  if (f.transpose_x) {
    f.m = xv.dims[1];
    k_of_x = xv.dims[0];
  } else {
    f.m = 1;
    for (size_t i = 0; i + 1 < r; ++i) f.m *= xv.dims[i];
    k_of_x = xv.dims[r - 1];
  }
  f.k = f.transpose_y ? yv.dims[1] : yv.dims[0];
  f.n = f.transpose_y ? yv.dims[0] : yv.dims[1];
  if (k_of_x != f.k) {
    fail(why, fmt::format("the contraction dims of x ({}) and y ({}) are not provably equal", k_of_x.to_string(),
                          f.k.to_string()));
    return std::nullopt;
  }
  if (sym_numel(ov.dims) != f.m * f.n || ov.dims.empty() || ov.dims.back() != f.n) {
    fail(why, fmt::format("the output {} is not the [M, N] = [{}, {}] product", to_string(ov.dims), f.m.to_string(),
                          f.n.to_string()));
    return std::nullopt;
  }
  return f;
}

}  // namespace kforge::passes
