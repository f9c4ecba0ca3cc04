// Shape rules of the index, data-movement and normalisation ops of issue 11 (SetValueInferMeta, GatherInferMeta,
// IndexSelectInferMeta, ScatterInferMeta, TileInferMeta, RollInferMeta, FlipInferMeta, Pad3dInferMeta,
// BmmInferMeta, EinsumRawInferMeta, GroupNormInferMeta, InstanceNormInferMeta, RmsNormInferMeta), mirroring
// kernels/meta_index.cc and kernels/meta_norm.cc over symbolic dims.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "passes/op_context.h"
#include "passes/shape_rule_helpers.h"

namespace kforge::passes::detail {

namespace {

using ir::DataType;

bool is_int_index(DataType d) { return d == DataType::kInt32 || d == DataType::kInt64; }

/// Two dims that must be equal: false only when both are static and differ.
bool may_equal(const SymExpr& a, const SymExpr& b) { return a == b || !a.is_constant() || !b.is_constant(); }

#define TENSOR(var, index)                                                                                      \
  const ValueInfo* var = c.tensor(c.param(index));                                                              \
  if (!(var)) return fmt::format("input '{}' is required to infer the output shape", c.param(index));           \
  if ((var)->is_vector) return fmt::format("input '{}' must be a tensor, got a list", c.param(index));

#define STATIC_INTS(var, index)                                                                                 \
  auto var##_opt = c.static_ints(c.param(index));                                                               \
  if (!var##_opt) {                                                                                             \
    return c.runtime_value(c.param(index));                                                                     \
  }                                                                                                             \
  const std::vector<int64_t>& var = *var##_opt;

#define STATIC_INT(var, index, fallback) const int64_t var = c.static_int(c.param(index)).value_or(fallback);

/// The length of a 1-D (or [N, 1]) int index.
std::string index_length(const ValueInfo& index, SymExpr* n) {
  if (!is_int_index(index.dtype)) return fmt::format("index must be int32 or int64, got {}", ir::dtype_name(index.dtype));
  const auto one = index.dims.size() == 2 ? index.dims[1].constant() : std::nullopt;
  if (index.dims.size() == 1 || (one && *one == 1)) {
    *n = index.dims[0];
    return "";
  }
  return fmt::format("index must be 1-D (or [N, 1]), got {}", to_string(index.dims));
}

std::string set_value(OpContext& c) {
  TENSOR(x, 0);
  c.set_result(0, x->dtype, x->dims);
  return "";
}

std::string gather(OpContext& c) {
  TENSOR(x, 0);
  TENSOR(index, 1);
  auto axis = c.static_int(c.param(2));
  if (!axis) return "the gather axis must be known when kforge generates code";
  const int64_t rank = static_cast<int64_t>(x->dims.size());
  int64_t a = 0;
  if (!normalize_axis(*axis, rank, &a)) return bad_axis(*axis, rank);
  SymShape dims = x->dims;
  if (index->dims.empty()) {
    if (!is_int_index(index->dtype)) return fmt::format("index must be int32 or int64, got {}", ir::dtype_name(index->dtype));
    dims.erase(dims.begin() + a);
  } else if (std::string e = index_length(*index, &dims[static_cast<size_t>(a)]); !e.empty()) {
    return e;
  }
  c.set_result(0, x->dtype, dims);
  return "";
}

std::string index_select(OpContext& c) {
  TENSOR(x, 0);
  TENSOR(index, 1);
  STATIC_INT(axis, 2, 0);
  const int64_t rank = static_cast<int64_t>(x->dims.size());
  int64_t a = 0;
  if (!normalize_axis(axis, rank, &a)) return bad_axis(axis, rank);
  SymShape dims = x->dims;
  if (std::string e = index_length(*index, &dims[static_cast<size_t>(a)]); !e.empty()) return e;
  c.set_result(0, x->dtype, dims);
  return "";
}

std::string scatter(OpContext& c) {
  TENSOR(x, 0);
  TENSOR(index, 1);
  TENSOR(updates, 2);
  if (x->dims.empty()) return "x must have rank >= 1";
  if (x->dtype != updates->dtype) {
    return fmt::format("dtype conflict: x is {}, updates is {}", ir::dtype_name(x->dtype), ir::dtype_name(updates->dtype));
  }
  SymShape want(x->dims.begin() + 1, x->dims.end());
  if (!index->dims.empty()) {
    SymExpr n;
    if (std::string e = index_length(*index, &n); !e.empty()) return e;
    want.insert(want.begin(), n);
  } else if (!is_int_index(index->dtype)) {
    return fmt::format("index must be int32 or int64, got {}", ir::dtype_name(index->dtype));
  }
  bool match = updates->dims.size() == want.size();
  for (size_t i = 0; match && i < want.size(); ++i) match = may_equal(updates->dims[i], want[i]);
  if (!match) {
    return fmt::format("updates {} must be {} for x {} and index {}", to_string(updates->dims), to_string(want),
                       to_string(x->dims), to_string(index->dims));
  }
  c.set_result(0, x->dtype, x->dims);
  return "";
}

std::string tile(OpContext& c) {
  TENSOR(x, 0);
  auto repeat = c.ints(c.param(1));
  if (!repeat) return c.runtime_value(c.param(1));
  const size_t rank = std::max(x->dims.size(), repeat->size());
  if (rank > 9) return fmt::format("tiling to rank {} exceeds 9", rank);
  SymShape dims(rank);
  for (size_t i = 0; i < rank; ++i) {
    const size_t xo = rank - x->dims.size(), ro = rank - repeat->size();
    const SymExpr d = i >= xo ? x->dims[i - xo] : SymExpr(1);
    const SymExpr r = i >= ro ? (*repeat)[i - ro] : SymExpr(1);
    if (auto v = r.constant(); v && *v <= 0) return fmt::format("repeat_times must be positive, got {}", *v);
    dims[i] = d * r;
  }
  c.set_result(0, x->dtype, dims);
  return "";
}

// repeat_interleave (an int repeats): x's dims with the axis dim `repeats` times as long.
std::string repeat_interleave(OpContext& c) {
  TENSOR(x, 0);
  STATIC_INT(repeats, 1, 0);
  STATIC_INT(axis, 2, 0);
  STATIC_INT(output_size, 3, -1);
  const int64_t rank = static_cast<int64_t>(x->dims.size());
  int64_t a = 0;
  if (!normalize_axis(axis, rank, &a)) return bad_axis(axis, rank);
  if (repeats <= 0) return fmt::format("repeats must be positive, got {}", repeats);
  SymShape dims = x->dims;
  dims[static_cast<size_t>(a)] = dims[static_cast<size_t>(a)] * SymExpr(repeats);
  if (auto n = dims[static_cast<size_t>(a)].constant(); n && output_size > 0 && *n != output_size) {
    return fmt::format("output_size is {} but dim {} of x repeated {} times is {}", output_size, a, repeats, *n);
  }
  c.set_result(0, x->dtype, dims);
  return "";
}

std::string roll(OpContext& c) {
  TENSOR(x, 0);
  STATIC_INTS(axis, 2);
  const int64_t rank = static_cast<int64_t>(x->dims.size());
  for (int64_t a : axis) {
    int64_t d = 0;
    if (!normalize_axis(a, rank, &d)) return bad_axis(a, rank);
  }
  if (auto shifts = c.ints(c.param(1))) {
    if (axis.empty() ? shifts->size() != 1 : shifts->size() != axis.size()) {
      return fmt::format("shifts has {} values for {} axes (one value without axis)", shifts->size(), axis.size());
    }
  }
  c.set_result(0, x->dtype, x->dims);
  return "";
}

std::string flip(OpContext& c) {
  TENSOR(x, 0);
  STATIC_INTS(axis, 1);
  const int64_t rank = static_cast<int64_t>(x->dims.size());
  std::vector<bool> seen(x->dims.size(), false);
  for (int64_t a : axis) {
    int64_t d = 0;
    if (!normalize_axis(a, rank, &d)) return bad_axis(a, rank);
    if (seen[static_cast<size_t>(d)]) return fmt::format("axis {} is given twice", a);
    seen[static_cast<size_t>(d)] = true;
  }
  c.set_result(0, x->dtype, x->dims);
  return "";
}

std::string pad3d(OpContext& c) {
  TENSOR(x, 0);
  // Paddings may be expressions of the dims (padding up to a multiple: `(32 - h % 32) % 32`), taken as >= 0; the
  // kernel checks them against these dims at run time.
  auto paddings_opt = c.ints(c.param(1));
  if (!paddings_opt) return c.runtime_value(c.param(1));
  const std::vector<SymExpr>& paddings = *paddings_opt;
  const std::string mode = c.string_value(c.param(2)).value_or("constant");
  const std::string format = c.string_value(c.param(4)).value_or("NCDHW");
  if (x->dims.size() != 5) return fmt::format("x must be 5-D, got {}", to_string(x->dims));
  if (format != "NCDHW" && format != "NDHWC") return fmt::format("data_format must be NCDHW or NDHWC, got \"{}\"", format);
  if (mode != "constant" && mode != "reflect" && mode != "replicate" && mode != "circular") {
    return fmt::format("mode must be constant, reflect, replicate or circular, got \"{}\"", mode);
  }
  if (paddings.size() != 6) return fmt::format("paddings must have 6 values, got {}", paddings.size());
  SymShape dims = x->dims;
  const size_t spatial0 = format == "NDHWC" ? 1 : 2;
  for (size_t d = 0; d < 3; ++d) {
    // paddings run from the last spatial dim: [left, right, top, bottom, front, back].
    const SymExpr& before = paddings[2 * (2 - d)];
    const SymExpr& after = paddings[2 * (2 - d) + 1];
    const std::optional<int64_t> b = before.constant(), a = after.constant();
    if ((b && *b < 0) || (a && *a < 0)) return "paddings must not be negative";
    const SymExpr& in = x->dims[spatial0 + d];
    if (auto n = in.constant(); n && b && a && mode == "reflect" && (*b >= *n || *a >= *n)) {
      return fmt::format("reflect padding ({}, {}) must be smaller than the dim size {}", *b, *a, *n);
    }
    dims[spatial0 + d] = in + before + after;
  }
  c.set_result(0, x->dtype, dims);
  return "";
}

std::string bmm(OpContext& c) {
  TENSOR(x, 0);
  TENSOR(y, 1);
  if (x->dims.size() != 3 || y->dims.size() != 3) {
    return fmt::format("x and y must be 3-D, got {} and {}", to_string(x->dims), to_string(y->dims));
  }
  if (x->dtype != y->dtype) {
    return fmt::format("dtype conflict: x is {}, y is {}", ir::dtype_name(x->dtype), ir::dtype_name(y->dtype));
  }
  if (!may_equal(x->dims[0], y->dims[0]) || !may_equal(x->dims[2], y->dims[1])) {
    return fmt::format("x {} and y {} must be [B, M, K] and [B, K, N]", to_string(x->dims), to_string(y->dims));
  }
  // Two symbolic batches ([s0, M, K] and [s1, K, N]) are one: taken equal where the analysis takes broadcast dims
  // so (checked at run time), so that later passes see one batch (the CUDA GEMM's strided batch).
  if (x->dims[0] != y->dims[0]) static_cast<void>(c.take_equal(x->dims[0], y->dims[0]));
  c.set_result(0, x->dtype, {x->dims[0], x->dims[1], y->dims[2]});
  return "";
}

std::string einsum(OpContext& c) {
  const std::vector<const ValueInfo*> xs = c.tensors(c.param(0));
  auto equation_opt = c.string_value(c.param(1));
  if (!equation_opt) return "the einsum equation is missing";
  if (xs.empty() || xs.size() > 2) return fmt::format("one or two operands are supported, got {}", xs.size());
  std::string eq;
  for (char ch : *equation_opt) {
    if (ch != ' ') eq += ch;
  }
  if (eq.find('.') != std::string::npos) return fmt::format("\"{}\": broadcasting with '...' is not supported", eq);
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> inputs;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    inputs.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (inputs.size() != xs.size()) return fmt::format("\"{}\" names {} operands, got {}", eq, inputs.size(), xs.size());
  if (xs.size() == 2 && xs[0]->dtype != xs[1]->dtype) {
    return fmt::format("dtype conflict: operands are {} and {}", ir::dtype_name(xs[0]->dtype), ir::dtype_name(xs[1]->dtype));
  }
  std::map<char, SymExpr> size;
  std::map<char, int> count;
  for (size_t i = 0; i < xs.size(); ++i) {
    if (inputs[i].size() != xs[i]->dims.size()) {
      return fmt::format("\"{}\": operand {} has {} labels but rank {}", eq, i, inputs[i].size(), xs[i]->dims.size());
    }
    for (size_t a = 0; a < inputs[i].size(); ++a) {
      const char l = inputs[i][a];
      if (!std::isalpha(static_cast<unsigned char>(l))) return fmt::format("\"{}\": '{}' is not a label", eq, l);
      auto [it, fresh] = size.emplace(l, xs[i]->dims[a]);
      if (!fresh && !may_equal(it->second, xs[i]->dims[a])) {
        return fmt::format("\"{}\": label '{}' has sizes {} and {}", eq, l, it->second.to_string(),
                           xs[i]->dims[a].to_string());
      }
      // The first size, unless a later one is static (more precise).
      if (!fresh && !it->second.is_constant() && xs[i]->dims[a].is_constant()) it->second = xs[i]->dims[a];
      ++count[l];
    }
  }
  std::string output;
  if (arrow == std::string::npos) {
    for (const auto& [l, n] : count) {
      if (n == 1) output += l;  // std::map: increasing order, as numpy's implicit output
    }
  } else {
    output = eq.substr(arrow + 2);
    for (size_t i = 0; i < output.size(); ++i) {
      if (!count.contains(output[i])) return fmt::format("\"{}\": output label '{}' is not in the inputs", eq, output[i]);
      if (output.find(output[i], i + 1) != std::string::npos) {
        return fmt::format("\"{}\": output label '{}' repeats", eq, output[i]);
      }
    }
  }
  SymShape dims;
  for (char l : output) dims.push_back(size.at(l));
  c.set_result(0, xs[0]->dtype, dims);
  // inner_cache (0-D per operand) and xshape (each operand's dims) exist for Paddle's backward pass.
  for (size_t r = 1; r < std::min<size_t>(3, c.result_count()); ++r) {
    std::vector<ValueInfo> elements;
    for (const ValueInfo* x : xs) {
      ValueInfo e;
      e.known = true;
      e.dtype = x->dtype;
      if (r == 2) e.dims = x->dims;
      elements.push_back(std::move(e));
    }
    c.set_result_list(r, std::move(elements));
  }
  return "";
}

DataType stat_dtype(DataType x) { return x == DataType::kFloat16 || x == DataType::kBFloat16 ? DataType::kFloat32 : x; }

/// scale / bias / weight of a norm: absent, or a vector of `channels` elements.
std::string check_affine(OpContext& c, size_t index, const SymExpr& channels) {
  const ValueInfo* t = c.tensor(c.param(index));
  if (!t || t->is_vector) return "";
  if (t->dims.size() != 1 || !may_equal(t->dims[0], channels)) {
    return fmt::format("{} {} must be [{}]", c.param(index), to_string(t->dims), channels.to_string());
  }
  return "";
}

std::string group_norm(OpContext& c) {
  TENSOR(x, 0);
  STATIC_INT(groups, 4, -1);
  const std::string format = c.string_value(c.param(5)).value_or("NCHW");
  if (x->dims.size() < 2 || x->dims.size() > 5) return fmt::format("x must have rank 2 to 5, got {}", to_string(x->dims));
  const bool last = format == "NHWC" || format == "NDHWC" || format == "NLC";
  if (!last && format != "NCHW" && format != "NCDHW" && format != "NCL" && format != "NC" && format != "AnyLayout") {
    return fmt::format("unknown data_format \"{}\"", format);
  }
  const SymExpr channels = x->dims[last ? x->dims.size() - 1 : 1];
  if (groups <= 0) return fmt::format("groups must be positive, got {}", groups);
  if (auto n = channels.constant(); n && (groups > *n || *n % groups != 0)) {
    return fmt::format("{} channels of x {} do not split into {} groups", *n, to_string(x->dims), groups);
  }
  for (size_t i : {size_t{1}, size_t{2}}) {
    if (std::string e = check_affine(c, i, channels); !e.empty()) return e;
  }
  c.set_result(0, x->dtype, x->dims);
  for (size_t r = 1; r < std::min<size_t>(3, c.result_count()); ++r) c.set_result(r, stat_dtype(x->dtype), {x->dims[0], groups});
  return "";
}

std::string instance_norm(OpContext& c) {
  TENSOR(x, 0);
  if (x->dims.size() < 2 || x->dims.size() > 5) return fmt::format("x must have rank 2 to 5, got {}", to_string(x->dims));
  for (size_t i : {size_t{1}, size_t{2}}) {
    if (std::string e = check_affine(c, i, x->dims[1]); !e.empty()) return e;
  }
  c.set_result(0, x->dtype, x->dims);
  for (size_t r = 1; r < std::min<size_t>(3, c.result_count()); ++r) {
    c.set_result(r, stat_dtype(x->dtype), {x->dims[0] * x->dims[1]});
  }
  return "";
}

std::string rms_norm(OpContext& c) {
  // (x, bias, residual, norm_weight, norm_bias, epsilon, begin_norm_axis, quant_scale, ...)
  TENSOR(x, 0);
  auto begin = c.static_int(c.param(6));
  if (!begin) return "begin_norm_axis must be known when kforge generates code";
  const int64_t rank = static_cast<int64_t>(x->dims.size());
  int64_t axis = 0;
  if (!normalize_axis(*begin, rank, &axis)) {
    return fmt::format("begin_norm_axis {} is out of range for x {}", *begin, to_string(x->dims));
  }
  SymExpr cols = 1;
  for (int64_t i = axis; i < rank; ++i) cols *= x->dims[static_cast<size_t>(i)];
  for (size_t i : {size_t{1}, size_t{3}, size_t{4}}) {
    if (std::string e = check_affine(c, i, cols); !e.empty()) return e;
  }
  if (const ValueInfo* residual = c.tensor(c.param(2)); residual && !residual->is_vector) {
    bool match = residual->dims.size() == x->dims.size();
    for (size_t i = 0; match && i < x->dims.size(); ++i) match = may_equal(residual->dims[i], x->dims[i]);
    if (!match) return fmt::format("residual {} must have the dims of x {}", to_string(residual->dims), to_string(x->dims));
  }
  const double quant_scale = c.float_value(c.param(7)).value_or(-1.0);
  c.set_result(0, quant_scale > 0 ? DataType::kInt8 : x->dtype, x->dims);
  if (c.result_count() > 1) c.set_result(1, x->dtype, x->dims);
  if (c.result_count() > 2) c.set_result(2, DataType::kFloat32, SymShape(x->dims.begin(), x->dims.begin() + axis));
  return "";
}

std::string triangle(OpContext& c) {
  TENSOR(x, 0);
  if (x->dims.size() < 2) return fmt::format("x must have rank >= 2, got {}", to_string(x->dims));
  c.set_result(0, x->dtype, x->dims);
  return "";
}

}  // namespace

// The rules of this file by infer_meta name; shape_rules.cpp looks here after its own table.
const std::map<std::string, std::string (*)(OpContext&)>& index_nn_shape_rules() {
  static const std::map<std::string, std::string (*)(OpContext&)> kRules = {
      {"SetValueInferMeta", set_value},       {"GatherInferMeta", gather},
      {"IndexSelectInferMeta", index_select}, {"ScatterInferMeta", scatter},
      {"TileInferMeta", tile},                {"RollInferMeta", roll},
      {"FlipInferMeta", flip},                {"Pad3dInferMeta", pad3d},
      {"BmmInferMeta", bmm},                  {"EinsumRawInferMeta", einsum},
      {"GroupNormInferMeta", group_norm},     {"InstanceNormInferMeta", instance_norm},
      {"RmsNormInferMeta", rms_norm},         {"TrilInferMeta", triangle},
      {"TriuInferMeta", triangle},            {"RepeatInterleaveInferMeta", repeat_interleave},
  };
  return kRules;
}

}  // namespace kforge::passes::detail
