// Generation-time shape rules of the issue 11 ops over symbolic dims (src/passes/shape_rules_index.cpp), the
// interpolation sizes of dynamic spatial dims, and their diagnostics.
#include "pass_test_util.h"

#include "passes/analysis.h"
#include "passes/verify.h"

using namespace kforge;
using namespace kforge::passes;

namespace {

using test::Analyzed;  // pass_test_util.h
using test::analyze;
using test::analyze_ok;

}  // namespace

TEST_CASE("shape rules: index and data-movement ops over a dynamic batch") {
  Analyzed r = analyze_ok(
      "[{name: x, dtype: float32, shape: [-1, 5, 6]}, {name: i, dtype: int64, shape: [4]}, "
      "{name: u, dtype: float32, shape: [4, 6]}, {name: x4, dtype: float32, shape: [-1, 2, 3, -1, 5]}]",
      "  - {op: full, out: [ax], attrs: {shape: [1], value: 1, dtype: int32}}\n"
      "  - {op: gather, in: [x, i, ax], out: [g]}\n"
      "  - {op: index_select, in: [x, i], out: [s], attrs: {axis: -1}}\n"
      "  - {op: scatter, in: [u, i, u], out: [sc], attrs: {overwrite: false}}\n"
      "  - {op: full_int_array, out: [rt], attrs: {value: [2, 1, 1, 3], dtype: int64}}\n"
      "  - {op: tile, in: [x, rt], out: [t]}\n"
      "  - {op: full_int_array, out: [sh], attrs: {value: [1, -2], dtype: int64}}\n"
      "  - {op: roll, in: [x, sh], out: [ro], attrs: {axis: [1, 2]}}\n"
      "  - {op: flip, in: [x], out: [f], attrs: {axis: [0, 2]}}\n"
      "  - {op: full_int_array, out: [pd], attrs: {value: [1, 2, 0, 1, 3, 0], dtype: int64}}\n"
      "  - {op: pad3d, in: [x4, pd], out: [p], attrs: {mode: replicate}}\n"
      "  - {op: full_int_array, out: [st], attrs: {value: [0], dtype: int64}}\n"
      "  - {op: set_value_, in: [x, st, st, rt], out: [sv], attrs: {axes: [1], decrease_axes: [], none_axes: [], "
      "shape: [1], values: [0.5]}}\n"
      "  - {op: tril, in: [x], out: [lo], attrs: {diagonal: 0}}\n",
      "[g, s, sc, t, ro, f, p, sv, lo]");
  CHECK(r.shape("g") == "float32[s0, 4, 6]");
  CHECK(r.shape("s") == "float32[s0, 5, 4]");
  CHECK(r.shape("sc") == "float32[4, 6]");
  CHECK(r.shape("t") == "float32[2, s0, 5, 18]");
  CHECK(r.shape("ro") == "float32[s0, 5, 6]");
  CHECK(r.shape("f") == "float32[s0, 5, 6]");
  CHECK(r.shape("p") == "float32[s1, 2, 6, s2 + 1, 8]");
  CHECK(r.shape("sv") == "float32[s0, 5, 6]");
  CHECK(r.shape("lo") == "float32[s0, 5, 6]");
}

TEST_CASE("shape rules: bmm, einsum, the norms and arange") {
  Analyzed r = analyze_ok(
      "[{name: x, dtype: float32, shape: [-1, 3, 5]}, {name: y, dtype: float32, shape: [-1, 5, 4]}, "
      "{name: img, dtype: float32, shape: [-1, 6, 4, 4]}, {name: w, dtype: float32, shape: [5]}]",
      "  - {op: bmm, in: [x, y], out: [mm]}\n"
      "  - {op: builtin.combine, in: [x, y], out: [xy]}\n"
      "  - {op: einsum, in: [xy], out: [e, cache, xshape], attrs: {equation: 'bij,bjk->bik'}}\n"
      "  - {op: builtin.combine, in: [x], out: [xx]}\n"
      "  - {op: einsum, in: [xx], out: [e2, cache2, xshape2], attrs: {equation: 'bij'}}\n"
      "  - {op: group_norm, in: [img, ~, ~], out: [gn, gm, gv], attrs: {epsilon: 1e-5, groups: 3, data_format: NCHW}}\n"
      "  - {op: instance_norm, in: [img, ~, ~], out: [in, im, iv], attrs: {epsilon: 1e-5}}\n"
      "  - {op: rms_norm, in: [x, ~, ~, w, ~], out: [rn, ro, rv], attrs: {epsilon: 1e-6, begin_norm_axis: 2, "
      "quant_scale: -1.0, quant_round_type: 0, quant_max_bound: 0.0, quant_min_bound: 0.0}}\n"
      "  - {op: full, out: [a0], attrs: {shape: [1], value: 0, dtype: float64}}\n"
      "  - {op: full, out: [a1], attrs: {shape: [1], value: 7, dtype: float64}}\n"
      "  - {op: full, out: [a2], attrs: {shape: [1], value: 2, dtype: float64}}\n"
      "  - {op: arange, in: [a0, a1, a2], out: [ar], attrs: {dtype: int64}}\n",
      "[mm, e, e2, gn, gm, im, rn, rv, ar]");
  CHECK(r.shape("mm") == "float32[s0, 3, 4]");
  CHECK(r.shape("e") == "float32[s0, 3, 4]");
  CHECK(r.shape("xshape") == "[[s0, 3, 5], [s1, 5, 4]]");
  CHECK(r.shape("e2") == "float32[s0, 3, 5]");  // implicit output: the labels in increasing order
  CHECK(r.shape("gn") == "float32[s2, 6, 4, 4]");
  CHECK(r.shape("gm") == "float32[s2, 3]");
  CHECK(r.shape("im") == "float32[6 * s2]");
  CHECK(r.shape("rn") == "float32[s0, 3, 5]");
  CHECK(r.shape("rv") == "float32[s0, 3]");
  CHECK(r.shape("ar") == "int64[4]");
}

TEST_CASE("shape rules: interpolation and transposed convs over dynamic spatial dims") {
  Analyzed r = analyze_ok(
      "[{name: x, dtype: float32, shape: [-1, 2, -1, -1]}]",
      "  - {op: nearest_interp, in: [x, ~, ~, ~], out: [n2], attrs: {scale: [2.0, 2.0], interp_method: nearest}}\n"
      "  - {op: bilinear_interp, in: [x, ~, ~, ~], out: [b15], attrs: {scale: [1.5, 0.5], align_corners: false, "
      "align_mode: 0}}\n",
      "[n2, b15]");
  CHECK(r.shape("n2") == "float32[s0, 2, 2 * s1, 2 * s2]");
  CHECK(r.shape("b15") == "float32[s0, 2, floor_div(3 * s1, 2), floor_div(s2, 2)]");

  // The DB head's transposed convs over the same dynamic dims.
  Analyzed up = analyze_ok(
      "[{name: x, dtype: float32, shape: [-1, 4, -1, -1]}, {name: w, dtype: float32, shape: [4, 2, 2, 2]}, "
      "{name: w3, dtype: float32, shape: [4, 2, 3, 3]}]",
      "  - {op: conv2d_transpose, in: [x, w], out: [t2], attrs: {strides: [2, 2], paddings: [0, 0]}}\n"
      "  - {op: conv2d_transpose, in: [x, w3], out: [t3], attrs: {strides: [2, 2], paddings: [1, 1], "
      "output_padding: [1, 0]}}\n",
      "[t2, t3]");
  CHECK(up.shape("t2") == "float32[s0, 2, 2 * s1, 2 * s2]");
  CHECK(up.shape("t3") == "float32[s0, 2, 2 * s1, 2 * s2 - 1]");

  // 1/3 is no m / 2^k: float32 rounding of in * scale cannot be written as an expression of in.
  Analyzed third = analyze("[{name: x, dtype: float32, shape: [-1, 2, -1, -1]}]",
                         "  - {op: bilinear_interp, in: [x, ~, ~, ~], out: [b], attrs: {scale: [0.3333333, 0.5]}}\n",
                         "[b]");
  CHECK_FALSE(third.analysis.has_value());
  CHECK(third.diagnostics.find("of a dynamic spatial dim is not supported") != std::string::npos);
}

TEST_CASE("shape rules: bad arguments are errors at the op") {
  auto error = [](const std::string& inputs, const std::string& op) {
    Analyzed r = analyze(inputs, op, "[o]");
    CHECK_FALSE(r.analysis.has_value());
    return r.diagnostics;
  };
  const std::string x = "[{name: x, dtype: float32, shape: [-1, 5, 6]}, {name: i, dtype: float32, shape: [4]}]";
  CHECK(error(x, "  - {op: index_select, in: [x, i], out: [o], attrs: {axis: 1}}\n").find("int32 or int64") !=
        std::string::npos);
  CHECK(error(x, "  - {op: flip, in: [x], out: [o], attrs: {axis: [1, -2]}}\n").find("given twice") !=
        std::string::npos);
  CHECK(error(x, "  - {op: bmm, in: [x, x], out: [o]}\n").find("[B, M, K] and [B, K, N]") != std::string::npos);
  CHECK(error("[{name: x, dtype: float32, shape: [2, 4]}, {name: y, dtype: float32, shape: [3, 4]}]",
              "  - {op: builtin.combine, in: [x, y], out: [xy]}\n"
              "  - {op: einsum, in: [xy], out: [o, c, s], attrs: {equation: 'ij,jk->ik'}}\n")
            .find("label 'j' has sizes 4 and 3") != std::string::npos);
  CHECK(error("[{name: x, dtype: float32, shape: [2, 6, 4]}]",
              "  - {op: group_norm, in: [x, ~, ~], out: [o, m, v], attrs: {groups: 4, epsilon: 1e-5}}\n")
            .find("do not split into 4 groups") != std::string::npos);
}

TEST_CASE("shape rules: convolution, pooling and batch norm in NCHW8c ([N, C / 8, H, W, 8])") {
  const std::string inputs =
      "[{name: x, dtype: float32, shape: [-1, 2, 6, 6, 8]}, {name: w, dtype: float32, shape: [24, 16, 3, 3]}, "
      "{name: dw, dtype: float32, shape: [16, 1, 3, 3]}, {name: m, dtype: float32, shape: [16]}]";
  Analyzed r = analyze_ok(
      inputs,
      "  - {op: conv2d, in: [x, w], out: [c], attrs: {strides: [2, 2], paddings: [1, 1], data_format: NCHW8c}}\n"
      "  - {op: depthwise_conv2d, in: [x, dw], out: [d], attrs: {strides: [1, 1], paddings: [1, 1], groups: 16, "
      "data_format: NCHW8c}}\n"
      "  - {op: pool2d, in: [x], out: [p], attrs: {kernel_size: [2, 2], strides: [2, 2], paddings: [0, 0], "
      "ceil_mode: false, exclusive: true, data_format: NCHW8c, pooling_type: max, global_pooling: false, adaptive: false, "
      "padding_algorithm: EXPLICIT}}\n"
      "  - {op: pool2d, in: [x], out: [g], attrs: {kernel_size: [1, 1], strides: [1, 1], paddings: [0, 0], "
      "ceil_mode: false, exclusive: true, data_format: NCHW8c, pooling_type: avg, global_pooling: true, adaptive: false, "
      "padding_algorithm: EXPLICIT}}\n"
      "  - {op: batch_norm, in: [x, m, m, m, m], out: [n, nm, nv, ns, nt, nr], attrs: {is_test: true, "
      "momentum: 0.9, epsilon: 1.0e-5, use_global_stats: false, trainable_statistics: false, data_format: NCHW8c}}\n",
      "[c, d, p, g, n, nm]");
  CHECK(r.shape("c") == "float32[s0, 3, 3, 3, 8]");
  CHECK(r.shape("d") == "float32[s0, 2, 6, 6, 8]");
  CHECK(r.shape("p") == "float32[s0, 2, 3, 3, 8]");
  CHECK(r.shape("g") == "float32[s0, 2, 1, 1, 8]");
  CHECK(r.shape("n") == "float32[s0, 2, 6, 6, 8]");
  CHECK(r.shape("nm") == "float32[16]");

  auto error = [](const std::string& in, const std::string& op) {
    Analyzed bad = analyze(in, op, "[o]");
    CHECK_FALSE(bad.analysis.has_value());
    return bad.diagnostics;
  };
  // A 4-D input, a last dim other than 8, an output channel count that is no multiple of 8, a transposed conv.
  CHECK(error("[{name: x, dtype: float32, shape: [1, 16, 6, 6]}]",
              "  - {op: pool2d, in: [x], out: [o], attrs: {kernel_size: [2, 2], strides: [2, 2], paddings: [0, 0], "
              "ceil_mode: false, exclusive: true, data_format: NCHW8c, pooling_type: max, global_pooling: false, "
              "adaptive: false, padding_algorithm: EXPLICIT}}\n")
            .find("x must be 5-D [N, C / 8, H, W, 8] for data_format \"NCHW8c\", got [1, 16, 6, 6]") != std::string::npos);
  CHECK(error("[{name: x, dtype: float32, shape: [1, 2, 6, 6, 7]}, {name: m, dtype: float32, shape: [14]}]",
              "  - {op: batch_norm, in: [x, m, m, m, m], out: [o, a, b, c, d, e], attrs: {is_test: true, "
              "momentum: 0.9, epsilon: 1.0e-5, use_global_stats: false, trainable_statistics: false, data_format: NCHW8c}}\n")
            .find("got [1, 2, 6, 6, 7]") != std::string::npos);
  CHECK(error("[{name: x, dtype: float32, shape: [1, 2, 6, 6, 8]}, {name: w, dtype: float32, shape: [12, 16, 1, 1]}]",
              "  - {op: conv2d, in: [x, w], out: [o], attrs: {data_format: NCHW8c}}\n")
            .find("needs the output channels to be a static multiple of 8, got 12") != std::string::npos);
  CHECK(error("[{name: x, dtype: float32, shape: [1, 2, 6, 6, 8]}, {name: w, dtype: float32, shape: [16, 8, 2, 2]}]",
              "  - {op: conv2d_transpose, in: [x, w], out: [o], attrs: {strides: [2, 2], data_format: NCHW8c}}\n")
            .find("conv2d_transpose does not take data_format \"NCHW8c\"") != std::string::npos);
}
