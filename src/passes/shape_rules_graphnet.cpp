// Shape rules of the ops GraphNet's Paddle models use (issue 34): GatherNdInferMeta, PReluInferMeta, MeshgridInferMeta,
// BroadcastTensorsInferMeta, RnnInferMeta, TakeAlongAxisInferMeta, DiagInferMeta, ExpandAsInferMeta, PadInferMeta,
// MeanAllInferMeta, ReduceInferMeta (any / all), PNormInferMeta, BCELossInferMeta,
// SigmoidCrossEntropyWithLogitsInferMeta, CrossEntropyWithSoftmaxInferMeta and GridSampleBaseInferMeta, mirroring
// kernels/meta_graphnet.cc (and meta_basic.cc for the reductions) over symbolic dims.
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "passes/op_context.h"
#include "passes/shape_rule_helpers.h"

namespace kforge::passes::detail {

namespace {

using ir::DataType;

bool is_index_dtype(DataType d) { return d == DataType::kInt32 || d == DataType::kInt64; }

/// Two dims that must be equal: false only when both are static and differ.
bool dims_may_match(const SymExpr& a, const SymExpr& b) { return a == b || !a.is_constant() || !b.is_constant(); }

bool shapes_may_match(const SymShape& a, const SymShape& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!dims_may_match(a[i], b[i])) return false;
  }
  return true;
}

#define GN_TENSOR(var, index)                                                                                   \
  const ValueInfo* var = c.tensor(c.param(index));                                                              \
  if (!(var)) return fmt::format("input '{}' is required to infer the output shape", c.param(index));           \
  if ((var)->is_vector) return fmt::format("input '{}' must be a tensor, got a list", c.param(index));

std::string gather_nd_rule(OpContext& c) {
  GN_TENSOR(x, 0);
  GN_TENSOR(index, 1);
  if (!is_index_dtype(index->dtype)) {
    return fmt::format("index must be int32 or int64, got {}", ir::dtype_name(index->dtype));
  }
  if (index->dims.empty()) return "index must have rank >= 1, got a 0-D tensor";
  const auto k = index->dims.back().constant();
  if (!k) {
    return fmt::format("the last dim of index {} must be known when kforge generates code", to_string(index->dims));
  }
  if (*k > static_cast<int64_t>(x->dims.size())) {
    return fmt::format("index {} has rows of {} but x {} has rank {}", to_string(index->dims), *k,
                       to_string(x->dims), x->dims.size());
  }
  SymShape dims(index->dims.begin(), index->dims.end() - 1);
  dims.insert(dims.end(), x->dims.begin() + *k, x->dims.end());
  c.set_result(0, x->dtype, dims);
  return "";
}

std::string index_put_rule(OpContext& c) {
  GN_TENSOR(x, 0);
  const std::vector<const ValueInfo*> indices = c.tensors(c.param(1));
  GN_TENSOR(value, 2);
  if (value->dtype != x->dtype) return dtype_conflict("value", value->dtype, "x", x->dtype);
  if (indices.size() > x->dims.size()) {
    return fmt::format("{} index tensors for x {} of rank {}", indices.size(), to_string(x->dims), x->dims.size());
  }
  for (size_t i = 0; i < indices.size(); ++i) {
    if (indices[i]->dtype == ir::DataType::kBool) {
      return fmt::format("index {} is a bool mask, which kforge does not take yet (int32 or int64 index tensors)", i);
    }
    if (!is_index_dtype(indices[i]->dtype)) {
      return fmt::format("index {} must be int32 or int64, got {}", i, ir::dtype_name(indices[i]->dtype));
    }
  }
  c.set_result(0, x->dtype, x->dims);
  return "";
}

// prelu: alpha holds one value ("all"), one per channel ("channel") or one per element of a batch item
// ("element"); the result is x's.
std::string prelu_rule(OpContext& c) {
  GN_TENSOR(x, 0);
  GN_TENSOR(alpha, 1);
  if (x->dtype != DataType::kFloat32 && x->dtype != DataType::kFloat64) {
    return fmt::format("x must be float32 or float64, got {}", ir::dtype_name(x->dtype));
  }
  if (alpha->dtype != x->dtype) return dtype_conflict("alpha", alpha->dtype, "x", x->dtype);
  const std::string mode = c.string_value("mode").value_or("all");
  const std::string format = c.string_value("data_format").value_or("NCHW");
  SymExpr want(1);
  if (mode == "channel") {
    if (x->dims.size() < 2) return fmt::format("mode \"channel\" needs x of rank >= 2, got {}", to_string(x->dims));
    const bool channel_first = format == "NCHW" || format == "NCDHW" || format == "NCL";
    if (!channel_first && format != "NHWC" && format != "NDHWC" && format != "NLC") {
      return fmt::format("data_format \"{}\" is none of NCHW, NHWC, NCL, NLC, NCDHW, NDHWC", format);
    }
    want = channel_first ? x->dims[1] : x->dims.back();
  } else if (mode == "element") {
    for (size_t d = 1; d < x->dims.size(); ++d) want = want * x->dims[d];
  } else if (mode != "all") {
    return fmt::format("mode must be \"all\", \"channel\" or \"element\", got \"{}\"", mode);
  }
  SymExpr have(1);
  for (const SymExpr& d : alpha->dims) have = have * d;
  if (!dims_may_match(have, want)) {
    return fmt::format("mode \"{}\" needs alpha of {} elements, got {}", mode, to_string(SymShape{want}),
                       to_string(alpha->dims));
  }
  c.set_result(0, x->dtype, x->dims);
  return "";
}

std::string meshgrid_rule(OpContext& c) {
  const std::vector<const ValueInfo*> xs = c.tensors(c.param(0));
  if (xs.empty()) return "meshgrid of no inputs";
  SymShape dims;
  for (size_t i = 0; i < xs.size(); ++i) {
    if (xs[i]->dims.size() > 1) return fmt::format("input {} must be 1-D, got {}", i, to_string(xs[i]->dims));
    if (xs[i]->dtype != xs[0]->dtype) {
      return dtype_conflict(fmt::format("input {}", i), xs[i]->dtype, "input 0", xs[0]->dtype);
    }
    dims.push_back(xs[i]->dims.empty() ? SymExpr(1) : xs[i]->dims[0]);
  }
  std::vector<ValueInfo> outs;
  for (size_t i = 0; i < xs.size(); ++i) {
    ValueInfo e;
    e.known = true;
    e.dtype = xs[0]->dtype;
    e.dims = dims;
    outs.push_back(std::move(e));
  }
  c.set_result_list(0, std::move(outs));
  return "";
}

/// broadcast_tensors: every input broadcast to the shape of all of them (numpy's rules), each keeping its dtype.
std::string broadcast_tensors_rule(OpContext& c) {
  const std::vector<const ValueInfo*> xs = c.tensors(c.param(0));
  if (xs.empty()) return "broadcast_tensors of no inputs";
  SymShape dims = xs[0]->dims;
  for (size_t i = 1; i < xs.size(); ++i) {
    const std::optional<SymShape> joined = c.broadcast(dims, xs[i]->dims);
    if (!joined) {
      return fmt::format("input {} {} does not broadcast with the inputs before it ({})", i, to_string(xs[i]->dims),
                         to_string(dims));
    }
    dims = *joined;
  }
  std::vector<ValueInfo> outs;
  for (const ValueInfo* x : xs) {
    ValueInfo e;
    e.known = true;
    e.dtype = x->dtype;
    e.dims = dims;
    outs.push_back(std::move(e));
  }
  c.set_result_list(0, std::move(outs));
  return "";
}

/// rnn: out [time, batch, directions * hidden], the states as pre_state, dropout_state_out empty uint8 [0] (what
/// Paddle's predictor returns: its inference kernel never writes it), reserve float32 0-D as Paddle's programs declare
/// it; the weight list checked against the layout Paddle's RNN layers flatten (kernels/rnn.cc), as RnnInferMeta does.
std::string rnn_rule(OpContext& c) {
  GN_TENSOR(x, 0);
  const std::string mode = c.string_value("mode").value_or("RNN_TANH");
  const int64_t gates = mode == "LSTM" ? 4 : mode == "GRU" ? 3 : 1;
  if (mode != "LSTM" && mode != "GRU" && mode != "RNN_TANH" && mode != "RNN_RELU") {
    return fmt::format("mode must be \"LSTM\", \"GRU\", \"RNN_TANH\" or \"RNN_RELU\", got \"{}\"", mode);
  }
  if (x->dtype != DataType::kFloat32 && x->dtype != DataType::kFloat64) {
    return fmt::format("x must be float32 or float64, got {}", ir::dtype_name(x->dtype));
  }
  if (x->dims.size() != 3) return fmt::format("x must be 3-D [time, batch, input], got {}", to_string(x->dims));
  const std::optional<int64_t> hidden = c.static_int("hidden_size"), layers = c.static_int("num_layers");
  if (!hidden || !layers || *hidden < 1 || *layers < 1) return "hidden_size and num_layers must be positive";
  const bool bidirec = c.bool_value("is_bidirec").value_or(false);
  const bool is_test = c.bool_value("is_test").value_or(false);
  const double dropout = c.float_value("dropout_prob").value_or(0.0);
  if (!is_test && dropout > 0 && *layers > 1) {
    return fmt::format("a training rnn (is_test false) with dropout_prob {} between its {} layers draws Paddle's "
                       "own random mask; only inference is supported",
                       dropout, *layers);
  }
  const int64_t dirs = bidirec ? 2 : 1, cells = *layers * dirs, g = gates * *hidden;
  const std::vector<const ValueInfo*> pre = c.tensors("pre_state");
  const size_t states = mode == "LSTM" ? 2 : 1;
  if (pre.size() != states) return fmt::format("{} takes {} initial states, got {}", mode, states, pre.size());
  const SymShape state_dims = {SymExpr(cells), x->dims[1], SymExpr(*hidden)};
  for (size_t i = 0; i < pre.size(); ++i) {
    if (pre[i]->dtype != x->dtype) return dtype_conflict(fmt::format("pre_state {}", i), pre[i]->dtype, "x", x->dtype);
    if (!shapes_may_match(pre[i]->dims, state_dims)) {
      return fmt::format("pre_state {} must be {}, got {}", i, to_string(state_dims), to_string(pre[i]->dims));
    }
  }
  const std::vector<const ValueInfo*> w = c.tensors("weight_list");
  if (w.size() != static_cast<size_t>(4 * cells)) {
    return fmt::format("weight_list must hold {} tensors (W_ih, W_hh of each layer and direction, then b_ih, b_hh), "
                       "got {}",
                       4 * cells, w.size());
  }
  for (int64_t k = 0; k < cells; ++k) {
    const SymExpr in = k < dirs ? x->dims[2] : SymExpr(dirs * *hidden);
    const size_t at[4] = {static_cast<size_t>(2 * k), static_cast<size_t>(2 * k + 1),
                          static_cast<size_t>(2 * cells + 2 * k), static_cast<size_t>(2 * cells + 2 * k + 1)};
    const SymShape want[4] = {{SymExpr(g), in}, {SymExpr(g), SymExpr(*hidden)}, {SymExpr(g)}, {SymExpr(g)}};
    for (size_t j = 0; j < 4; ++j) {
      if (w[at[j]]->dtype != x->dtype) {
        return dtype_conflict(fmt::format("weight_list[{}]", at[j]), w[at[j]]->dtype, "x", x->dtype);
      }
      if (!shapes_may_match(w[at[j]]->dims, want[j])) {
        return fmt::format("weight_list[{}] (layer {}, direction {}) must be {}, got {}", at[j], k / dirs, k % dirs,
                           to_string(want[j]), to_string(w[at[j]]->dims));
      }
    }
  }
  if (const ValueInfo* len = c.tensor("sequence_length")) {
    if (!is_index_dtype(len->dtype)) {
      return fmt::format("sequence_length must be int32 or int64, got {}", ir::dtype_name(len->dtype));
    }
    if (len->dims.size() != 1 || !dims_may_match(len->dims[0], x->dims[1])) {
      return fmt::format("sequence_length must be [batch] ({}), got {}", to_string(SymShape{x->dims[1]}),
                         to_string(len->dims));
    }
  }
  c.set_result(0, x->dtype, {x->dims[0], x->dims[1], SymExpr(dirs * *hidden)});
  c.set_result(1, DataType::kUInt8, {SymExpr(0)});
  std::vector<ValueInfo> outs;
  for (size_t i = 0; i < states; ++i) {
    ValueInfo e;
    e.known = true;
    e.dtype = x->dtype;
    e.dims = state_dims;
    outs.push_back(std::move(e));
  }
  c.set_result_list(2, std::move(outs));
  c.set_result(3, DataType::kFloat32, {});
  return "";
}

std::string take_along_axis_rule(OpContext& c) {
  GN_TENSOR(arr, 0);
  GN_TENSOR(indices, 1);
  if (!is_index_dtype(indices->dtype)) {
    return fmt::format("indices must be int32 or int64, got {}", ir::dtype_name(indices->dtype));
  }
  const auto axis = c.static_int(c.param(2));
  if (!axis) return "the axis must be known when kforge generates code";
  const int64_t rank = static_cast<int64_t>(arr->dims.size());
  if (static_cast<int64_t>(indices->dims.size()) != rank) {
    return fmt::format("indices {} and arr {} must have the same rank", to_string(indices->dims), to_string(arr->dims));
  }
  int64_t a = 0;
  if (!normalize_axis(*axis, rank, &a)) return fmt::format("axis {} is out of range for rank {}", *axis, rank);
  for (int64_t d = 0; d < rank; ++d) {
    const auto i = indices->dims[d].constant(), n = arr->dims[d].constant();
    if (d != a && i && n && *i > *n) {
      return fmt::format("indices {} is larger than arr {} on dim {}", to_string(indices->dims), to_string(arr->dims),
                         d);
    }
  }
  c.set_result(0, arr->dtype, indices->dims);
  return "";
}

std::string diag_rule(OpContext& c) {
  GN_TENSOR(x, 0);
  const int64_t offset = c.static_int(c.param(1)).value_or(0);
  if (x->dims.size() <= 1) {
    const SymExpr n = (x->dims.empty() ? SymExpr(1) : x->dims[0]) + SymExpr(offset < 0 ? -offset : offset);
    c.set_result(0, x->dtype, {n, n});
    return "";
  }
  if (x->dims.size() != 2) return fmt::format("x must be 0-D, 1-D or 2-D, got {}", to_string(x->dims));
  const auto rows = x->dims[0].constant(), cols = x->dims[1].constant();
  if (!rows || !cols) {
    return fmt::format("the dims of x {} must be known when kforge generates code", to_string(x->dims));
  }
  const int64_t len = offset >= 0 ? std::min(*rows, *cols - offset) : std::min(*rows + offset, *cols);
  if (len <= 0) return fmt::format("offset {} leaves no diagonal in x {}", offset, to_string(x->dims));
  c.set_result(0, x->dtype, {SymExpr(len)});
  return "";
}

std::string expand_as_rule(OpContext& c) {
  GN_TENSOR(x, 0);
  const ValueInfo* y = c.tensor(c.param(1));
  SymShape target;
  if (y) {
    target = y->dims;
  } else {
    auto shape = c.static_ints(c.param(2));
    if (!shape) return "target_shape must be known when kforge generates code";
    for (int64_t d : *shape) {
      if (d < 0) return "without y, every dim of target_shape must be known";
      target.push_back(SymExpr(d));
    }
  }
  if (target.size() < x->dims.size()) {
    return fmt::format("the target {} has fewer dims than x {}", to_string(target), to_string(x->dims));
  }
  const size_t diff = target.size() - x->dims.size();
  for (size_t i = diff; i < target.size(); ++i) {
    const auto xd = x->dims[i - diff].constant();
    if (!(xd && *xd == 1) && !dims_may_match(x->dims[i - diff], target[i])) {
      return fmt::format("cannot expand x {} to {}", to_string(x->dims), to_string(target));
    }
  }
  c.set_result(0, x->dtype, target);
  return "";
}

std::string pad_rule(OpContext& c) {
  GN_TENSOR(x, 0);
  auto paddings = c.static_ints(c.param(1));
  if (!paddings) return "paddings must be known when kforge generates code";
  if (paddings->size() != 2 * x->dims.size()) {
    return fmt::format("paddings has {} values; x {} needs {} (a before and an after for each dim)", paddings->size(),
                       to_string(x->dims), 2 * x->dims.size());
  }
  SymShape dims = x->dims;
  for (size_t i = 0; i < paddings->size(); ++i) {
    if ((*paddings)[i] < 0) return fmt::format("paddings[{}] is negative ({})", i, (*paddings)[i]);
    dims[i / 2] += SymExpr((*paddings)[i]);
  }
  c.set_result(0, x->dtype, dims);
  return "";
}

std::string mean_all_rule(OpContext& c) {
  GN_TENSOR(x, 0);
  c.set_result(0, x->dtype, {});
  return "";
}

std::string logic_reduce_rule(OpContext& c) {
  GN_TENSOR(x, 0);
  auto axis = c.static_ints(c.param(1));
  if (!axis) return "axis must be known when kforge generates code";
  std::string why;
  auto dims = reduce_dims(x->dims, *axis, c.bool_value(c.param(2)).value_or(false), &why);
  if (!dims) return why;
  // any / all write bool whatever x's dtype (Paddle's PIR declares x's, its kernels write bool).
  c.set_result(0, DataType::kBool, *dims);
  return "";
}

std::string p_norm_rule(OpContext& c) {
  GN_TENSOR(x, 0);
  if (x->dtype != DataType::kFloat32 && x->dtype != DataType::kFloat64) {
    return fmt::format("x must be float32 or float64, got {}", ir::dtype_name(x->dtype));
  }
  // params: x, porder, axis, epsilon, keepdim, asvector
  const bool keepdim = c.bool_value(c.param(4)).value_or(false);
  const bool asvector = c.bool_value(c.param(5)).value_or(false);
  const int64_t rank = static_cast<int64_t>(x->dims.size());
  if (asvector || rank == 0) {
    c.set_result(0, x->dtype, keepdim ? SymShape(x->dims.size(), SymExpr(1)) : SymShape{});
    return "";
  }
  const int64_t axis = c.static_int(c.param(2)).value_or(-1);
  int64_t a = 0;
  if (!normalize_axis(axis, rank, &a)) return fmt::format("axis {} is out of range for rank {}", axis, rank);
  SymShape dims;
  for (int64_t d = 0; d < rank; ++d) {
    if (d != a) {
      dims.push_back(x->dims[d]);
    } else if (keepdim) {
      dims.push_back(SymExpr(1));
    }
  }
  c.set_result(0, x->dtype, dims);
  return "";
}

/// bce_loss and sigmoid_cross_entropy_with_logits: x, label (and an optional third input) of one float dtype and
/// the same dims; out like x.
std::string loss_rule(OpContext& c) {
  GN_TENSOR(x, 0);
  GN_TENSOR(label, 1);
  if (x->dtype != DataType::kFloat32 && x->dtype != DataType::kFloat64) {
    return fmt::format("{} must be float32 or float64, got {}", c.param(0), ir::dtype_name(x->dtype));
  }
  if (label->dtype != x->dtype) return dtype_conflict(c.param(0), x->dtype, c.param(1), label->dtype);
  if (!shapes_may_match(x->dims, label->dims)) {
    return fmt::format("{} {} and {} {} must have the same dims", c.param(0), to_string(x->dims), c.param(1),
                       to_string(label->dims));
  }
  if (const ValueInfo* w = c.tensor(c.param(2)); w && !w->is_vector) {
    if (w->dtype != x->dtype) return dtype_conflict(c.param(0), x->dtype, c.param(2), w->dtype);
    if (!shapes_may_match(x->dims, w->dims)) {
      return fmt::format("{} {} must have the dims of {} {}", c.param(2), to_string(w->dims), c.param(0),
                         to_string(x->dims));
    }
  }
  c.set_result(0, x->dtype, x->dims);
  return "";
}

/// cross_entropy_with_softmax: softmax like input, loss with the axis dim 1; a hard label int32 / int64 of input's
/// dims with 1 along the axis, a soft one of input's dtype and dims.
std::string cross_entropy_rule(OpContext& c) {
  GN_TENSOR(input, 0);
  GN_TENSOR(label, 1);
  if (input->dtype != DataType::kFloat32 && input->dtype != DataType::kFloat64) {
    return fmt::format("{} must be float32 or float64, got {}", c.param(0), ir::dtype_name(input->dtype));
  }
  const int64_t rank = static_cast<int64_t>(input->dims.size());
  const int64_t axis = c.static_int(c.param(6)).value_or(-1);
  int64_t a = 0;
  if (rank == 0 || !normalize_axis(axis, rank, &a)) return fmt::format("axis {} is out of range for rank {}", axis, rank);
  const std::optional<bool> soft = c.bool_value(c.param(2));
  if (!soft) return fmt::format("{} must be a constant", c.param(2));
  SymShape label_dims = input->dims;
  if (*soft) {
    if (label->dtype != input->dtype) return dtype_conflict(c.param(0), input->dtype, c.param(1), label->dtype);
  } else {
    if (!is_index_dtype(label->dtype)) {
      return fmt::format("a hard {} must be int32 or int64, got {}", c.param(1), ir::dtype_name(label->dtype));
    }
    label_dims[a] = SymExpr(1);
  }
  if (!shapes_may_match(label->dims, label_dims)) {
    return fmt::format("{} {} must have the dims {} ({} {}{})", c.param(1), to_string(label->dims),
                       to_string(label_dims), c.param(0), to_string(input->dims),
                       *soft ? "" : fmt::format(" with 1 along axis {}", a));
  }
  c.set_result(0, input->dtype, input->dims);
  SymShape loss = input->dims;
  loss[a] = SymExpr(1);
  c.set_result(1, input->dtype, loss);
  return "";
}

std::string grid_sample_rule(OpContext& c) {
  GN_TENSOR(x, 0);
  GN_TENSOR(grid, 1);
  if (x->dims.size() != 4) return fmt::format("x must be 4-D NCHW, got {}", to_string(x->dims));
  if (x->dtype != DataType::kFloat32 && x->dtype != DataType::kFloat64) {
    return fmt::format("x must be float32 or float64, got {}", ir::dtype_name(x->dtype));
  }
  const auto last = grid->dims.size() == 4 ? grid->dims[3].constant() : std::nullopt;
  if (!last || *last != 2) return fmt::format("grid must be [N, H, W, 2], got {}", to_string(grid->dims));
  if (!dims_may_match(grid->dims[0], x->dims[0])) {
    return fmt::format("grid {} and x {} differ in batch", to_string(grid->dims), to_string(x->dims));
  }
  if (grid->dtype != x->dtype) return dtype_conflict("x", x->dtype, "grid", grid->dtype);
  // mode and padding_mode are not infer_meta params: read by name.
  const std::string mode = c.string_value("mode").value_or("bilinear");
  if (mode != "bilinear" && mode != "nearest") {
    return fmt::format("mode must be \"bilinear\" or \"nearest\", got \"{}\"", mode);
  }
  const std::string padding = c.string_value("padding_mode").value_or("zeros");
  if (padding != "zeros" && padding != "border" && padding != "reflection") {
    return fmt::format("padding_mode must be \"zeros\", \"border\" or \"reflection\", got \"{}\"", padding);
  }
  c.set_result(0, x->dtype, {x->dims[0], x->dims[1], grid->dims[1], grid->dims[2]});
  return "";
}

#undef GN_TENSOR

}  // namespace

// The rules of this file by infer_meta name; shape_rules.cpp looks here after its own tables.
const std::map<std::string, std::string (*)(OpContext&)>& graphnet_shape_rules() {
  static const std::map<std::string, std::string (*)(OpContext&)> kRules = {
      {"GatherNdInferMeta", gather_nd_rule},
      {"IndexPutInferMeta", index_put_rule},
      {"PReluInferMeta", prelu_rule},
      {"MeshgridInferMeta", meshgrid_rule},
      {"BroadcastTensorsInferMeta", broadcast_tensors_rule},
      {"RnnInferMeta", rnn_rule},
      {"TakeAlongAxisInferMeta", take_along_axis_rule},
      {"DiagInferMeta", diag_rule},
      {"ExpandAsInferMeta", expand_as_rule},
      {"PadInferMeta", pad_rule},
      {"MeanAllInferMeta", mean_all_rule},
      {"ReduceInferMeta", logic_reduce_rule},
      {"PNormInferMeta", p_norm_rule},
      {"BCELossInferMeta", loss_rule},
      {"SigmoidCrossEntropyWithLogitsInferMeta", loss_rule},
      {"CrossEntropyWithSoftmaxInferMeta", cross_entropy_rule},
      {"GridSampleBaseInferMeta", grid_sample_rule},
  };
  return kRules;
}

}  // namespace kforge::passes::detail
