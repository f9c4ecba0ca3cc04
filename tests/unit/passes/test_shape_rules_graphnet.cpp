// Generation-time shape rules of issue 34's GraphNet ops over symbolic dims (src/passes/shape_rules_graphnet.cpp)
// and their diagnostics.
#include "pass_test_util.h"

#include "passes/analysis.h"
#include "passes/verify.h"

using namespace kforge;
using namespace kforge::passes;

namespace {

struct GraphnetResult {
  std::optional<ir::Program> program;
  std::optional<Analysis> analysis;
  std::string diagnostics;

  std::string shape(const std::string& name) const {
    for (size_t i = 0; i < program->value_capacity(); ++i) {
      const ir::Value& v = program->value(ir::ValueId{static_cast<uint32_t>(i)});
      if (v.name != name && v.source_id != name) continue;
      const ValueInfo& info = analysis->values.at(i);
      if (!info.known) return "unknown";
      if (info.is_vector) {
        std::string s = "[";
        for (const ValueInfo& e : info.elements) s += (s.size() > 1 ? ", " : "") + to_string(e.dims);
        return s + "]";
      }
      return std::string(ir::dtype_name(info.dtype)) + to_string(info.dims);
    }
    return "no value " + name;
  }
};

GraphnetResult analyze_graphnet(const std::string& inputs, const std::string& ops, const std::string& outputs) {
  test::Env env;
  GraphnetResult r;
  r.program = env.read("p.yaml", "program: t\ninputs: " + inputs + "\nops:\n" + ops + "outputs: " + outputs + "\n");
  if (verify_program(*r.program, env.ops(), env.diags())) r.analysis = analyze_program(*r.program, env.ops(), env.diags());
  r.diagnostics = env.diagnostics();
  return r;
}

GraphnetResult analyze_graphnet_ok(const std::string& inputs, const std::string& ops, const std::string& outputs) {
  GraphnetResult r = analyze_graphnet(inputs, ops, outputs);
  INFO(r.diagnostics);
  REQUIRE(r.analysis.has_value());
  return r;
}

}  // namespace

TEST_CASE("shape rules: issue 34's index, movement and reduction ops over a dynamic batch") {
  GraphnetResult r = analyze_graphnet_ok(
      "[{name: x, dtype: float32, shape: [-1, 5, 6]}, {name: i, dtype: int64, shape: [-1, 3, 2]}, "
      "{name: a, dtype: float32, shape: [3]}, {name: b, dtype: float32, shape: [-1]}, "
      "{name: t, dtype: int32, shape: [-1, 2, 6]}, {name: m, dtype: bool, shape: [-1, 5, 6]}, "
      "{name: g, dtype: float32, shape: [-1, 4, 7, 2]}, {name: d, dtype: int64, shape: [4, 6]}, "
      "{name: x4, dtype: float32, shape: [-1, 3, 5, 6]}, {name: e, dtype: float32, shape: [5, 1]}]",
      "  - {op: gather_nd, in: [x, i], out: [gn]}\n"
      "  - {op: builtin.combine, in: [a, b], out: [ab]}\n"
      "  - {op: meshgrid, in: [ab], out: [mg]}\n"
      "  - {op: take_along_axis, in: [x, t], out: [ta], attrs: {axis: 1}}\n"
      "  - {op: diag, in: [a], out: [dv], attrs: {offset: -2, padding_value: 0.0}}\n"
      "  - {op: diag, in: [d], out: [dm], attrs: {offset: 3, padding_value: 0.0}}\n"
      "  - {op: expand_as, in: [e, x], out: [ea], attrs: {target_shape: [-1, 5, 6]}}\n"
      "  - {op: full, out: [pv], attrs: {shape: [1], value: 0.5, dtype: float32}}\n"
      "  - {op: pad, in: [x, pv], out: [pd], attrs: {paddings: [1, 0, 0, 2, 3, 1]}}\n"
      "  - {op: any, in: [m], out: [an], attrs: {axis: [1], keepdim: true}}\n"
      "  - {op: all, in: [x], out: [al], attrs: {axis: [], keepdim: false}}\n"
      "  - {op: full_int_array, out: [ax], attrs: {value: [-1], dtype: int64}}\n"
      "  - {op: min, in: [x, ax], out: [mn], attrs: {keepdim: false}}\n"
      "  - {op: p_norm, in: [x], out: [pn], attrs: {porder: 2.0, axis: 1, epsilon: 1e-12, keepdim: true, "
      "asvector: false}}\n"
      "  - {op: p_norm, in: [x], out: [pa], attrs: {porder: 1.0, axis: -1, epsilon: 1e-12, keepdim: false, "
      "asvector: true}}\n"
      "  - {op: grid_sample, in: [x4, g], out: [gs], attrs: {mode: nearest, padding_mode: border, "
      "align_corners: false}}\n"
      "  - {op: share_data_, in: [x], out: [sd]}\n",
      "[gn, mg, ta, dv, dm, ea, pd, an, al, mn, pn, pa, gs, sd]");
  CHECK(r.shape("gn") == "float32[s1, 3, 6]");  // index rows of 2 pick x's last dim
  CHECK(r.shape("mg") == "[[3, s2], [3, s2]]");
  CHECK(r.shape("ta") == "float32[s3, 2, 6]");
  CHECK(r.shape("dv") == "float32[5, 5]");  // 3 + |offset|
  CHECK(r.shape("dm") == "int64[3]");       // min(4, 6 - 3)
  CHECK(r.shape("ea") == "float32[s0, 5, 6]");
  CHECK(r.shape("pd") == "float32[s0 + 1, 7, 10]");
  CHECK(r.shape("an") == "bool[s4, 1, 6]");
  CHECK(r.shape("al") == "bool[]");  // every axis of a float input, a bool result
  CHECK(r.shape("mn") == "float32[s0, 5]");
  CHECK(r.shape("pn") == "float32[s0, 1, 6]");
  CHECK(r.shape("pa") == "float32[]");
  CHECK(r.shape("gs") == "float32[s6, 3, 4, 7]");
  CHECK(r.shape("sd") == "float32[s0, 5, 6]");
}

TEST_CASE("shape rules: linear_interp over NCW and NWC, sizes from out_w, scale and a dynamic width") {
  GraphnetResult r = analyze_graphnet_ok(
      "[{name: x, dtype: float32, shape: [-1, 3, 5]}, {name: y, dtype: float32, shape: [2, -1, 4]}]",
      "  - {op: linear_interp, in: [x, ~, ~, ~], out: [a], attrs: {data_format: NCHW, out_d: -1, out_h: -1, "
      "out_w: 7, scale: [], interp_method: linear, align_corners: false, align_mode: 0}}\n"
      "  - {op: linear_interp, in: [y, ~, ~, ~], out: [b], attrs: {data_format: NHWC, out_d: -1, out_h: -1, "
      "out_w: -1, scale: [1.5], interp_method: linear, align_corners: false, align_mode: 1}}\n",
      "[a, b]");
  CHECK(r.shape("a") == "float32[s0, 3, 7]");
  CHECK(r.shape("b") == "float32[2, floor_div(3 * s1, 2), 4]");  // Paddle's int(W * 1.5)
  GraphnetResult bad = analyze_graphnet(
      "[{name: x, dtype: float32, shape: [2, 3, 5, 5]}]",
      "  - {op: linear_interp, in: [x, ~, ~, ~], out: [o], attrs: {data_format: NCHW, out_d: -1, out_h: -1, "
      "out_w: 7, scale: [], interp_method: linear, align_corners: false, align_mode: 0}}\n",
      "[o]");
  CHECK(bad.diagnostics.find("x must be 3-D") != std::string::npos);
}

TEST_CASE("shape rules: issue 34's ops with bad arguments are errors at the op") {
  auto error = [](const std::string& inputs, const std::string& op) {
    GraphnetResult r = analyze_graphnet(inputs, op, "[o]");
    CHECK_FALSE(r.analysis.has_value());
    return r.diagnostics;
  };
  const std::string x = "[{name: x, dtype: float32, shape: [-1, 5, 6]}, {name: f, dtype: float32, shape: [2, 2]}, "
                        "{name: i, dtype: int64, shape: [2, 4]}, {name: g, dtype: float32, shape: [2, 3, 3, 3]}, "
                        "{name: gr, dtype: float32, shape: [2, 4, 4, 2]}]";
  auto has = [&](const std::string& op, const std::string& what) {
    const std::string d = error(x, op);
    INFO(d);
    CHECK(d.find(what) != std::string::npos);
    CHECK(d.find("p.yaml:") != std::string::npos);  // located at the op
  };
  has("  - {op: gather_nd, in: [x, f], out: [o]}\n", "index must be int32 or int64");
  has("  - {op: gather_nd, in: [x, i], out: [o]}\n", "has rows of 4 but x [s0, 5, 6] has rank 3");
  has("  - {op: take_along_axis, in: [x, i], out: [o], attrs: {axis: 0}}\n", "must have the same rank");
  has("  - {op: diag, in: [f], out: [o], attrs: {offset: 2, padding_value: 0.0}}\n", "leaves no diagonal");
  has("  - {op: diag, in: [x], out: [o], attrs: {offset: 0, padding_value: 0.0}}\n", "0-D, 1-D or 2-D");
  has("  - {op: full, out: [v], attrs: {shape: [1], value: 0, dtype: float32}}\n"
      "  - {op: pad, in: [f, v], out: [o], attrs: {paddings: [1, 1]}}\n",
      "paddings has 2 values");
  has("  - {op: full, out: [v], attrs: {shape: [1], value: 0, dtype: float32}}\n"
      "  - {op: pad, in: [f, v], out: [o], attrs: {paddings: [1, 1, -1, 0]}}\n",
      "paddings[2] is negative");
  has("  - {op: any, in: [x], out: [o], attrs: {axis: [3], keepdim: false}}\n", "axis 3 is out of range");
  has("  - {op: p_norm, in: [x], out: [o], attrs: {porder: 2.0, axis: -4, epsilon: 1e-12, keepdim: false, "
      "asvector: false}}\n",
      "axis -4 is out of range");
  has("  - {op: p_norm, in: [i], out: [o], attrs: {porder: 2.0, axis: 0, epsilon: 1e-12, keepdim: false, "
      "asvector: false}}\n",
      "float32 or float64");
  has("  - {op: grid_sample, in: [g, g], out: [o], attrs: {mode: bilinear, padding_mode: zeros, "
      "align_corners: true}}\n",
      "grid must be [N, H, W, 2]");
  has("  - {op: grid_sample, in: [g, gr], out: [o], attrs: {mode: bicubic, padding_mode: zeros, "
      "align_corners: true}}\n",
      "mode must be \"bilinear\" or \"nearest\"");
  has("  - {op: grid_sample, in: [g, gr], out: [o], attrs: {mode: nearest, padding_mode: wrap, "
      "align_corners: true}}\n",
      "padding_mode must be");
  has("  - {op: bce_loss, in: [f, g], out: [o]}\n", "must have the same dims");
  has("  - {op: builtin.combine, in: [x, f], out: [xf]}\n  - {op: meshgrid, in: [xf], out: [o]}\n",
      "input 0 must be 1-D");
}
