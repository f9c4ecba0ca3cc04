// Generation-time shape rules of issue 34's GraphNet ops over symbolic dims (src/passes/shape_rules_graphnet.cpp)
// and their diagnostics.
#include "pass_test_util.h"

#include "passes/analysis.h"
#include "passes/verify.h"

#include <fmt/format.h>

using namespace kforge;
using namespace kforge::passes;

namespace {

using test::Analyzed;  // pass_test_util.h
using test::analyze;
using test::analyze_ok;

/// The shape of `out` after the ops, or the diagnostics when the analysis fails.
std::string graphnet_shape(const std::string& inputs, const std::string& ops, const std::string& out) {
  Analyzed r = analyze(inputs, ops, "[" + out + "]");
  return r.analysis ? r.shape(out) : r.diagnostics;
}

/// The diagnostics of ops that must fail, or "" when they do not; a failure is located at its op.
std::string graphnet_error(const std::string& inputs, const std::string& ops) {
  Analyzed r = analyze(inputs, ops, "[o]");
  if (r.analysis) return "";
  CHECK(r.diagnostics.find("p.yaml:") != std::string::npos);
  return r.diagnostics;
}

bool mentions(const std::string& text, const std::string& what) {
  INFO(text);
  return text.find(what) != std::string::npos;
}

// Dynamic dims are the symbols s0, s1, ... in the order of the inputs: x s0, b s1, i s2, t s3, m s4, x4 s5, g s6,
// l s7.
const char* const kGraphnetInputs =
    "[{name: x, dtype: float32, shape: [-1, 5, 6]}, {name: f, dtype: float32, shape: [2, 2]}, "
    "{name: a, dtype: float32, shape: [3]}, {name: b, dtype: float32, shape: [-1]}, "
    "{name: i, dtype: int64, shape: [-1, 3, 2]}, {name: i4, dtype: int64, shape: [2, 4]}, "
    "{name: t, dtype: int32, shape: [-1, 2, 6]}, {name: m, dtype: bool, shape: [-1, 5, 6]}, "
    "{name: d, dtype: int64, shape: [4, 6]}, {name: e, dtype: float32, shape: [5, 1]}, "
    "{name: x4, dtype: float32, shape: [-1, 3, 5, 6]}, {name: g, dtype: float32, shape: [-1, 4, 7, 2]}, "
    "{name: g3, dtype: float32, shape: [2, 3, 3, 3]}, {name: l, dtype: float32, shape: [-1, 5, 6]}]";

}  // namespace

TEST_CASE("shape rules: share_data_ keeps x's dtype and dims") {
  CHECK(graphnet_shape(kGraphnetInputs, "  - {op: share_data_, in: [x], out: [o]}\n", "o") == "float32[s0, 5, 6]");
  CHECK(graphnet_shape(kGraphnetInputs, "  - {op: share_data_, in: [m], out: [o]}\n", "o") == "bool[s4, 5, 6]");
}

TEST_CASE("shape rules: gather_nd over a dynamic batch, and its located errors") {
  // Index rows of 2 pick x's last dim; the index's leading dims lead.
  CHECK(graphnet_shape(kGraphnetInputs, "  - {op: gather_nd, in: [x, i], out: [o]}\n", "o") == "float32[s2, 3, 6]");
  CHECK(mentions(graphnet_error(kGraphnetInputs, "  - {op: gather_nd, in: [x, f], out: [o]}\n"),
                 "index must be int32 or int64"));
  CHECK(mentions(graphnet_error(kGraphnetInputs, "  - {op: gather_nd, in: [x, i4], out: [o]}\n"),
                 "has rows of 4 but x [s0, 5, 6] has rank 3"));
}

TEST_CASE("shape rules: meshgrid of static and dynamic 1-D inputs") {
  CHECK(graphnet_shape(kGraphnetInputs,
                       "  - {op: builtin.combine, in: [a, b], out: [ab]}\n  - {op: meshgrid, in: [ab], out: [o]}\n",
                       "o") == "[[3, s1], [3, s1]]");
  CHECK(mentions(graphnet_error(kGraphnetInputs,
                                "  - {op: builtin.combine, in: [x, a], out: [xa]}\n"
                                "  - {op: meshgrid, in: [xa], out: [o]}\n"),
                 "input 0 must be 1-D"));
}

TEST_CASE("shape rules: min reduces as max does") {
  CHECK(graphnet_shape(kGraphnetInputs,
                       "  - {op: full_int_array, out: [ax], attrs: {value: [-1], dtype: int64}}\n"
                       "  - {op: min, in: [x, ax], out: [o], attrs: {keepdim: false}}\n",
                       "o") == "float32[s0, 5]");
}

TEST_CASE("shape rules: p_norm along an axis, as a vector, keepdim, and its located errors") {
  auto p_norm = [](const std::string& x, int axis, bool keepdim, bool asvector) {
    return fmt::format("  - {{op: p_norm, in: [{}], out: [o], attrs: {{porder: 2.0, axis: {}, epsilon: 1e-12, "
                       "keepdim: {}, asvector: {}}}}}\n",
                       x, axis, keepdim, asvector);
  };
  CHECK(graphnet_shape(kGraphnetInputs, p_norm("x", 1, true, false), "o") == "float32[s0, 1, 6]");
  CHECK(graphnet_shape(kGraphnetInputs, p_norm("x", -1, false, false), "o") == "float32[s0, 5]");
  CHECK(graphnet_shape(kGraphnetInputs, p_norm("x", -1, false, true), "o") == "float32[]");
  CHECK(graphnet_shape(kGraphnetInputs, p_norm("x", 0, true, true), "o") == "float32[1, 1, 1]");
  CHECK(mentions(graphnet_error(kGraphnetInputs, p_norm("x", -4, false, false)), "axis -4 is out of range"));
  CHECK(mentions(graphnet_error(kGraphnetInputs, p_norm("i4", 0, false, false)), "float32 or float64"));
}

TEST_CASE("shape rules: any and all give bool whatever x's dtype") {
  CHECK(graphnet_shape(kGraphnetInputs, "  - {op: any, in: [m], out: [o], attrs: {axis: [1], keepdim: true}}\n",
                       "o") == "bool[s4, 1, 6]");
  CHECK(graphnet_shape(kGraphnetInputs, "  - {op: all, in: [x], out: [o], attrs: {axis: [], keepdim: false}}\n",
                       "o") == "bool[]");
  CHECK(mentions(graphnet_error(kGraphnetInputs, "  - {op: any, in: [x], out: [o], attrs: {axis: [3], keepdim: false}}\n"),
                 "axis 3 is out of range"));
}

TEST_CASE("shape rules: pad adds its paddings to each dim, and its located errors") {
  const std::string value = "  - {op: full, out: [v], attrs: {shape: [1], value: 0.5, dtype: float32}}\n";
  CHECK(graphnet_shape(kGraphnetInputs, value + "  - {op: pad, in: [x, v], out: [o], attrs: {paddings: [1, 0, 0, 2, 3, 1]}}\n",
                       "o") == "float32[s0 + 1, 7, 10]");
  CHECK(mentions(graphnet_error(kGraphnetInputs, value + "  - {op: pad, in: [f, v], out: [o], attrs: {paddings: [1, 1]}}\n"),
                 "paddings has 2 values"));
  CHECK(mentions(
      graphnet_error(kGraphnetInputs, value + "  - {op: pad, in: [f, v], out: [o], attrs: {paddings: [1, 1, -1, 0]}}\n"),
      "paddings[2] is negative"));
}

TEST_CASE("shape rules: grid_sample's output, and its located errors") {
  auto grid_sample = [](const std::string& grid, const std::string& mode, const std::string& padding) {
    return "  - {op: grid_sample, in: [x4, " + grid + "], out: [o], attrs: {mode: " + mode + ", padding_mode: " +
           padding + ", align_corners: false}}\n";
  };
  CHECK(graphnet_shape(kGraphnetInputs, grid_sample("g", "nearest", "border"), "o") == "float32[s5, 3, 4, 7]");
  CHECK(mentions(graphnet_error(kGraphnetInputs, grid_sample("g3", "bilinear", "zeros")), "grid must be [N, H, W, 2]"));
  CHECK(mentions(graphnet_error(kGraphnetInputs, grid_sample("g", "bicubic", "zeros")),
                 "mode must be \"bilinear\" or \"nearest\""));
  CHECK(mentions(graphnet_error(kGraphnetInputs, grid_sample("g", "nearest", "wrap")), "padding_mode must be"));
}

TEST_CASE("shape rules: sigmoid_cross_entropy_with_logits and mean_all") {
  CHECK(graphnet_shape(kGraphnetInputs,
                       "  - {op: sigmoid_cross_entropy_with_logits, in: [x, l, ~], out: [o], "
                       "attrs: {normalize: false, ignore_index: -100}}\n",
                       "o") == "float32[s0, 5, 6]");
  CHECK(graphnet_shape(kGraphnetInputs, "  - {op: mean_all, in: [x], out: [o]}\n", "o") == "float32[]");
  CHECK(mentions(graphnet_error(kGraphnetInputs,
                                "  - {op: sigmoid_cross_entropy_with_logits, in: [x, f, ~], out: [o], "
                                "attrs: {normalize: false, ignore_index: -100}}\n"),
                 "must have the same dims"));
}

TEST_CASE("shape rules: cross_entropy_with_softmax, hard and soft labels, and its located errors") {
  auto ce = [](const std::string& label, bool soft, int axis, const std::string& out) {
    return fmt::format("  - {{op: cross_entropy_with_softmax, in: [x, {}], out: [{}], attrs: {{soft_label: {}, "
                       "use_softmax: true, numeric_stable_mode: true, ignore_index: -100, axis: {}}}}}\n",
                       label, out, soft ? "true" : "false", axis);
  };
  // A soft label of x's dims; the loss has 1 along the axis (the middle one here).
  CHECK(graphnet_shape(kGraphnetInputs, ce("l", true, 1, "p, o"), "o") == "float32[s0, 1, 6]");
  CHECK(graphnet_shape(kGraphnetInputs, ce("l", true, -1, "p, o"), "p") == "float32[s0, 5, 6]");
  CHECK(mentions(graphnet_error(kGraphnetInputs, ce("i", true, -1, "p, o")), "label"));
  // A hard label must be an index type with x's dims and 1 along the axis.
  CHECK(mentions(graphnet_error(kGraphnetInputs, ce("l", false, -1, "p, o")), "a hard label must be int32 or int64"));
  CHECK(mentions(graphnet_error(kGraphnetInputs, ce("i", false, 1, "p, o")), "with 1 along axis 1"));
  CHECK(mentions(graphnet_error(kGraphnetInputs, ce("l", true, 3, "p, o")), "axis 3 is out of range for rank 3"));
}

TEST_CASE("shape rules: bce_loss keeps its input's dims, and its located errors") {
  CHECK(graphnet_shape(kGraphnetInputs, "  - {op: bce_loss, in: [x, l], out: [o]}\n", "o") == "float32[s0, 5, 6]");
  CHECK(mentions(graphnet_error(kGraphnetInputs, "  - {op: bce_loss, in: [f, g3], out: [o]}\n"),
                 "must have the same dims"));
}

TEST_CASE("shape rules: linear_interp over NCW and NWC, sizes from out_w, scale and a dynamic width") {
  Analyzed r = analyze_ok(
      "[{name: x, dtype: float32, shape: [-1, 3, 5]}, {name: y, dtype: float32, shape: [2, -1, 4]}]",
      "  - {op: linear_interp, in: [x, ~, ~, ~], out: [a], attrs: {data_format: NCHW, out_d: -1, out_h: -1, "
      "out_w: 7, scale: [], interp_method: linear, align_corners: false, align_mode: 0}}\n"
      "  - {op: linear_interp, in: [y, ~, ~, ~], out: [b], attrs: {data_format: NHWC, out_d: -1, out_h: -1, "
      "out_w: -1, scale: [1.5], interp_method: linear, align_corners: false, align_mode: 1}}\n",
      "[a, b]");
  CHECK(r.shape("a") == "float32[s0, 3, 7]");
  CHECK(r.shape("b") == "float32[2, floor_div(3 * s1, 2), 4]");  // Paddle's int(W * 1.5)
  Analyzed bad = analyze(
      "[{name: x, dtype: float32, shape: [2, 3, 5, 5]}]",
      "  - {op: linear_interp, in: [x, ~, ~, ~], out: [o], attrs: {data_format: NCHW, out_d: -1, out_h: -1, "
      "out_w: 7, scale: [], interp_method: linear, align_corners: false, align_mode: 0}}\n",
      "[o]");
  CHECK(bad.diagnostics.find("x must be 3-D") != std::string::npos);
}

TEST_CASE("shape rules: expand_as to y's dims, and its located errors") {
  CHECK(graphnet_shape(kGraphnetInputs, "  - {op: expand_as, in: [e, x], out: [o], attrs: {target_shape: [-1, 5, 6]}}\n",
                       "o") == "float32[s0, 5, 6]");
  CHECK(mentions(graphnet_error(kGraphnetInputs, "  - {op: expand_as, in: [a, x], out: [o], attrs: {target_shape: [-1, 5, 6]}}\n"),
                 "cannot expand x [3] to [s0, 5, 6]"));
}

TEST_CASE("shape rules: take_along_axis takes the indices' dims, and its located errors") {
  CHECK(graphnet_shape(kGraphnetInputs, "  - {op: take_along_axis, in: [x, t], out: [o], attrs: {axis: 1}}\n", "o") ==
        "float32[s3, 2, 6]");
  CHECK(mentions(graphnet_error(kGraphnetInputs, "  - {op: take_along_axis, in: [x, i4], out: [o], attrs: {axis: 0}}\n"),
                 "must have the same rank"));
}

TEST_CASE("shape rules: diag of a vector and of a matrix, and its located errors") {
  auto diag = [](const std::string& x, int offset) {
    return fmt::format("  - {{op: diag, in: [{}], out: [o], attrs: {{offset: {}, padding_value: 0.0}}}}\n", x, offset);
  };
  CHECK(graphnet_shape(kGraphnetInputs, diag("a", -2), "o") == "float32[5, 5]");  // 3 + |offset|
  CHECK(graphnet_shape(kGraphnetInputs, diag("d", 3), "o") == "int64[3]");        // min(4, 6 - 3)
  CHECK(mentions(graphnet_error(kGraphnetInputs, diag("f", 2)), "leaves no diagonal"));
  CHECK(mentions(graphnet_error(kGraphnetInputs, diag("x", 0)), "0-D, 1-D or 2-D"));
}

TEST_CASE("shape rules: broadcast_tensors to the joint shape of a dynamic batch, and inputs that do not broadcast") {
  CHECK(graphnet_shape(kGraphnetInputs,
                       "  - {op: builtin.combine, in: [x, e], out: [xs]}\n"
                       "  - {op: broadcast_tensors, in: [xs], out: [o]}\n",
                       "o") == "[[s0, 5, 6], [s0, 5, 6]]");
  CHECK(mentions(graphnet_error(kGraphnetInputs,
                                "  - {op: builtin.combine, in: [x, a], out: [xs]}\n"
                                "  - {op: broadcast_tensors, in: [xs], out: [o]}\n"),
                 "input 1 [3] does not broadcast"));
}

namespace {

// An LSTM over x [time s0, batch s1, 4], hidden 8: the states [layers * directions, s1, 8] and Paddle's weight list
// (every W_ih, W_hh, then every b_ih, b_hh).
const char* const kRnnInputs =
    "[{name: x, dtype: float32, shape: [-1, -1, 4]}, {name: h, dtype: float32, shape: [2, -1, 8]}, "
    "{name: wi, dtype: float32, shape: [32, 4]}, {name: wh, dtype: float32, shape: [32, 8]}, "
    "{name: b, dtype: float32, shape: [32]}, {name: n, dtype: int32, shape: [-1]}, "
    "{name: ds, dtype: uint8, shape: []}, {name: w16, dtype: float32, shape: [32, 16]}]";

std::string lstm(const std::string& weights, const std::string& attrs, const std::string& length = "~",
                 const std::string& mode = "LSTM") {
  return "  - {op: builtin.combine, in: [h, h], out: [hc]}\n"
         "  - {op: builtin.combine, in: [" + weights + "], out: [ws]}\n"
         "  - {op: rnn, in: [x, hc, ws, " + length + ", ds], out: [o, d, s, r], attrs: {mode: " + mode +
         ", input_size: 4, hidden_size: 8, " + attrs + "}}\n";
}

}  // namespace

TEST_CASE("shape rules: rnn's output and states over a dynamic time and batch, and its located errors") {
  const std::string one_layer_bidirec = "wi, wh, wi, wh, b, b, b, b";
  const std::string bidirec = "num_layers: 1, is_bidirec: true, is_test: true";
  CHECK(graphnet_shape(kRnnInputs, lstm(one_layer_bidirec, bidirec), "o") == "float32[s0, s1, 16]");
  CHECK(graphnet_shape(kRnnInputs, lstm(one_layer_bidirec, bidirec, "n"), "s") == "[[2, s1, 8], [2, s1, 8]]");
  // Two layers, one direction: layer 1 reads layer 0's 8 outputs.
  CHECK(graphnet_shape(kRnnInputs, lstm("wi, wh, wh, wh, b, b, b, b", "num_layers: 2, is_test: true"), "o") ==
        "float32[s0, s1, 8]");
  CHECK(mentions(graphnet_error(kRnnInputs, lstm("wi, wh, wi, wh, b, b, b, b", "num_layers: 2, is_test: true")),
                 "weight_list[2] (layer 1, direction 0) must be [32, 8], got [32, 4]"));
  CHECK(mentions(graphnet_error(kRnnInputs, lstm("wi, wh, b, b", bidirec)), "weight_list must hold 8 tensors"));
  CHECK(mentions(graphnet_error(kRnnInputs, lstm("w16, wh, w16, wh, b, b, b, b", bidirec)),
                 "weight_list[0] (layer 0, direction 0) must be [32, 4], got [32, 16]"));
  CHECK(mentions(graphnet_error(kRnnInputs, lstm("wi, wh, wh, wh, b, b, b, b",
                                                 "num_layers: 2, dropout_prob: 0.1, is_test: false")),
                 "only inference is supported"));
  CHECK(mentions(graphnet_error(kRnnInputs, lstm(one_layer_bidirec, bidirec, "~", "CELL")),
                 "mode must be"));
}
