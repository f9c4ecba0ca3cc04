// The NHWC layout plan (src/passes/layout.h): which ops convert, where the transposes go, concat's axis, regions
// broken by ops that need NCHW, and that the rewritten program still verifies, analyses and lowers.
#include <algorithm>

#include "pass_test_util.h"
#include "passes/layout.h"

namespace kforge::passes {
namespace {

const char* const kConv = "{strides: [1, 1], paddings: [1, 1], padding_algorithm: EXPLICIT, dilations: [1, 1], "
                          "groups: 1, data_format: NCHW}";
const char* const kBn = "{is_test: true, momentum: 0.9, epsilon: 1.0e-5, data_format: NCHW, use_global_stats: false, "
                        "trainable_statistics: false}";
const char* const kPool = "{kernel_size: [2, 2], strides: [2, 2], paddings: [0, 0], ceil_mode: false, exclusive: true, "
                          "data_format: NCHW, pooling_type: max, global_pooling: false, adaptive: false, "
                          "padding_algorithm: EXPLICIT}";

struct LayoutPlanned {
  ir::Program program;
  LayoutReport report;
  std::optional<LoweredProgram> lowered;
};

LayoutPlanned plan(test::Env& env, const std::string& yaml, LayoutChoice choice = LayoutChoice::kNhwc,
             const LayoutOptions& layout_options = {}) {
  LayoutPlanned p{env.read("t.yaml", yaml), {}, std::nullopt};
  PipelineOptions options;
  options.layout = choice;
  options.layout_options = layout_options;
  options.layout_report = &p.report;
  p.lowered = env.compile(p.program, options);
  INFO(env.printed());
  REQUIRE(p.lowered.has_value());
  REQUIRE(p.program.check_structure().empty());
  return p;
}

// The op defining the value named `name` (program YAML names every value).
const ir::Op& producer_of(const ir::Program& p, const std::string& name) {
  for (ir::OpId id : p.top_level_ops()) {
    for (ir::ValueId r : p.op(id).results) {
      if (p.value(r).name == name) return p.op(id);
    }
  }
  FAIL("no value " << name);
  return p.op(p.top_level_ops().front());
}

const ir::Op& only(const ir::Program& p, const std::string& full_name, size_t k = 0) {
  const std::vector<ir::OpId> ops = p.find_ops(full_name);
  REQUIRE(ops.size() > k);
  return p.op(ops[k]);
}

std::vector<int64_t> perm_of(const ir::Op& transpose) {
  std::vector<int64_t> out;
  const ir::Attribute* perm = transpose.attr("perm");
  REQUIRE(perm != nullptr);
  if (perm->kind == ir::AttrKind::kIntArray) return perm->ints;
  for (const ir::Attribute& e : perm->elements) out.push_back(e.int_value);
  return out;
}

// The op reading operand `k` of op, when that operand is computed.
const ir::Op& operand_producer(const ir::Program& p, const ir::Op& op, size_t k) {
  REQUIRE(op.operands.size() > k);
  const ir::OpId d = p.defining_op(op.operands[k]);
  REQUIRE(d.valid());
  return p.op(d);
}

const std::vector<int64_t> kToNhwc = {0, 2, 3, 1}, kToNchw = {0, 3, 1, 2};

}  // namespace

TEST_CASE("layout: a conv region goes NHWC between one transpose in and one out, before the flatten") {
  test::Env env;
  LayoutPlanned p = plan(env, std::string(R"(program: net
inputs: [{name: x, dtype: float32, shape: [1, 3, 8, 8]}]
params:
  - {name: w1, dtype: float32, shape: [8, 3, 3, 3]}
  - {name: b1, dtype: float32, shape: [1, 8, 1, 1]}
  - {name: m, dtype: float32, shape: [8]}
  - {name: w2, dtype: float32, shape: [8, 8, 3, 3]}
ops:
  - {op: conv2d, in: [x, w1], out: [c1], attrs: )") + kConv + R"(}
  - {op: add, in: [c1, b1], out: [a1]}
  - {op: batch_norm, in: [a1, m, m, m, m], out: [n1, n1m, n1v, n1s, n1t, n1r], attrs: )" + kBn + R"(}
  - {op: relu, in: [n1], out: [r1]}
  - {op: pool2d, in: [r1], out: [p1], attrs: )" + kPool + R"(}
  - {op: conv2d, in: [p1, w2], out: [c2], attrs: )" + kConv + R"(}
  - {op: scale, in: [c2], out: [s2], attrs: {scale: 2.0, bias: 0.0, bias_after_scale: true}}
  - {op: flatten, in: [s2], out: [f], attrs: {start_axis: 1, stop_axis: -1}}
  - {op: relu, in: [f], out: [y]}
outputs: [y, r1]
)");
  const ir::Program& g = p.program;
  std::vector<std::string> converted;
  for (const LayoutReport::Converted& c : p.report.converted) converted.push_back(c.name);
  CHECK(converted == std::vector<std::string>{"pd_op.conv2d", "pd_op.add", "pd_op.batch_norm", "pd_op.relu",
                                              "pd_op.pool2d", "pd_op.conv2d", "pd_op.scale"});
  CHECK(only(g, "pd_op.conv2d", 0).string_attr("data_format") == "NHWC");
  CHECK(only(g, "pd_op.conv2d", 1).string_attr("data_format") == "NHWC");
  CHECK(only(g, "pd_op.batch_norm").string_attr("data_format") == "NHWC");
  CHECK(only(g, "pd_op.pool2d").string_attr("data_format") == "NHWC");
  // Dims follow: the convolutions' results are [N, H, W, C].
  CHECK(g.type_of(producer_of(g, "c1").results[0]).dims == std::vector<int64_t>{1, 8, 8, 8});
  CHECK(g.type_of(producer_of(g, "p1").results[0]).dims == std::vector<int64_t>{1, 4, 4, 8});
  CHECK(g.type_of(producer_of(g, "n1m").results[1]).dims == std::vector<int64_t>{8});  // statistics: no layout

  // Four transposes: x in (after its data op), the bias in, r1 out (a program output), s2 out.
  REQUIRE(p.report.transposes.size() == 4);
  const ir::Op& x_in = operand_producer(g, only(g, "pd_op.conv2d", 0), 0);
  CHECK(x_in.is("pd_op", "transpose"));
  CHECK(perm_of(x_in) == kToNhwc);
  // [1, 8, 1, 1] -> [1, 1, 1, 8] moves no element: a reshape (a view of the parameter), not a transpose.
  const ir::Op& bias_in = operand_producer(g, only(g, "pd_op.add"), 1);
  CHECK(bias_in.is("pd_op", "reshape"));
  CHECK(p.report.transposes[1].view);
  CHECK(g.type_of(bias_in.results[0]).dims == std::vector<int64_t>{1, 1, 1, 8});
  const ir::Op& flat = only(g, "pd_op.flatten");
  const ir::Op& out = operand_producer(g, flat, 0);
  CHECK(out.is("pd_op", "transpose"));
  CHECK(perm_of(out) == kToNchw);
  CHECK(g.type_of(out.results[0]).dims == std::vector<int64_t>{1, 8, 4, 4});
  // The flatten and what follows it are untouched; the program's outputs keep their NCHW dims.
  CHECK(g.type_of(flat.results[0]).dims == std::vector<int64_t>{1, 128});
  REQUIRE(p.lowered->outputs.size() == 2);
  CHECK(p.lowered->value(p.lowered->outputs[1].value).dims == SymShape{SymExpr(1), SymExpr(8), SymExpr(8), SymExpr(8)});
  // The transpose out of the region follows the op that wrote its value last: the scale, right before the flatten.
  const std::vector<ir::OpId>& order = g.top_level_ops();
  const auto at = [&](const ir::Op& op) { return std::find(order.begin(), order.end(), op.id) - order.begin(); };
  CHECK(at(out) == at(operand_producer(g, out, 0)) + 1);
  CHECK(p.report.dump(g).find("layout: NHWC, 7 ops converted, 4 transposes") == 0);
  CHECK(p.report.dump(g).find("pd_op.transpose NHWC -> NCHW after pd_op.scale") != std::string::npos);
  CHECK(p.report.dump(g).find("pd_op.reshape NCHW -> NHWC after builtin.parameter") != std::string::npos);
}

TEST_CASE("layout: concat along channels moves its axis to 3; NCHW pieces get a transpose") {
  test::Env env;
  LayoutPlanned p = plan(env, std::string(R"(program: cat
inputs: [{name: x, dtype: float32, shape: [2, 4, 6, 6]}, {name: z, dtype: float32, shape: [2, 3, 6, 6]}]
params:
  - {name: w, dtype: float32, shape: [8, 4, 3, 3]}
ops:
  - {op: conv2d, in: [x, w], out: [c], attrs: )") + kConv + R"(}
  - {op: builtin.combine, in: [c, z], out: [l]}
  - {op: concat, in: [l], out: [k], attrs: {axis: 1}}
  - {op: relu, in: [k], out: [y]}
outputs: [y]
)");
  const ir::Program& g = p.program;
  const ir::Op& concat = only(g, "pd_op.concat");
  const ir::Attribute* axis = concat.attr("axis");
  REQUIRE(axis != nullptr);
  CHECK(axis->int_value == 3);
  CHECK(g.type_of(concat.results[0]).dims == std::vector<int64_t>{2, 6, 6, 11});
  const ir::Op& combine = only(g, "builtin.combine");
  CHECK(operand_producer(g, combine, 1).is("pd_op", "transpose"));  // z, NCHW, goes in
  CHECK(g.type_of(combine.results[0]).elements[1].dims == std::vector<int64_t>{2, 6, 6, 3});
  // The relu joins; the fetch reads it back in NCHW.
  CHECK(p.report.converted.size() == 3);
  CHECK(p.lowered->value(p.lowered->outputs[0].value).dims ==
        SymShape{SymExpr(2), SymExpr(11), SymExpr(6), SymExpr(6)});
}

TEST_CASE("layout: a rank-3 broadcast and a lone pool stay NCHW; concat along H moves to axis 1") {
  test::Env env;
  LayoutPlanned p = plan(env, std::string(R"(program: keep
inputs: [{name: x, dtype: float32, shape: [1, 4, 6, 6]}, {name: u, dtype: float32, shape: [4, 1, 1]}]
params:
  - {name: w, dtype: float32, shape: [4, 4, 3, 3]}
ops:
  - {op: pool2d, in: [x], out: [q], attrs: )") + kPool + R"(}
  - {op: conv2d, in: [x, w], out: [c], attrs: )" + kConv + R"(}
  - {op: add, in: [c, u], out: [a]}
  - {op: conv2d, in: [a, w], out: [d], attrs: )" + kConv + R"(}
  - {op: builtin.combine, in: [d, d], out: [l]}
  - {op: concat, in: [l], out: [k], attrs: {axis: -2}}
outputs: [q, k]
)");
  const ir::Program& g = p.program;
  CHECK(only(g, "pd_op.pool2d").string_attr("data_format") == "NCHW");  // no convolution before it
  CHECK(g.type_of(only(g, "pd_op.add").results[0]).dims == std::vector<int64_t>{1, 4, 6, 6});  // u is [4, 1, 1]
  CHECK(operand_producer(g, only(g, "pd_op.add"), 0).is("pd_op", "transpose"));
  CHECK(only(g, "pd_op.concat").attr("axis")->int_value == 1);
  std::vector<std::string> converted;
  for (const LayoutReport::Converted& c : p.report.converted) converted.push_back(c.name);
  CHECK(converted == std::vector<std::string>{"pd_op.conv2d", "pd_op.conv2d", "pd_op.concat"});
  CHECK(p.report.transposes.size() == 4);  // x in, c out (to the add), a in, k out (to the fetch)
}

TEST_CASE("layout: a region broken by a reshape starts again at the next convolution") {
  test::Env env;
  LayoutPlanned p = plan(env, std::string(R"(program: two
inputs: [{name: x, dtype: float32, shape: [1, 4, 6, 6]}]
params:
  - {name: w, dtype: float32, shape: [4, 4, 3, 3]}
ops:
  - {op: conv2d, in: [x, w], out: [c], attrs: )") + kConv + R"(}
  - {op: relu_, in: [c], out: [r]}
  - {op: reshape, in: [r], out: [s], attrs: {shape: [1, 4, 6, 6]}}
  - {op: conv2d, in: [s, w], out: [d], attrs: )" + kConv + R"(}
outputs: [d]
)");
  const ir::Program& g = p.program;
  CHECK(p.report.converted.size() == 3);  // conv, relu_ (in place, on the NHWC value), conv
  CHECK(p.report.transposes.size() == 4);
  const ir::Op& reshape = only(g, "pd_op.reshape");
  const ir::Op& out = operand_producer(g, reshape, 0);
  CHECK(out.is("pd_op", "transpose"));
  CHECK(perm_of(out) == kToNchw);
  CHECK(operand_producer(g, out, 0).is("pd_op", "relu_"));  // after the in-place write
  CHECK(operand_producer(g, only(g, "pd_op.conv2d", 1), 0).is("pd_op", "transpose"));
}

TEST_CASE("layout: nchw changes nothing") {
  test::Env env;
  LayoutPlanned p = plan(env, std::string(R"(program: same
inputs: [{name: x, dtype: float32, shape: [1, 4, 6, 6]}]
params:
  - {name: w, dtype: float32, shape: [4, 4, 3, 3]}
ops:
  - {op: conv2d, in: [x, w], out: [c], attrs: )") + kConv + R"(}
outputs: [c]
)", LayoutChoice::kNchw);
  CHECK(p.report.empty());
  CHECK(p.program.find_ops("pd_op.transpose").empty());
  CHECK(only(p.program, "pd_op.conv2d").string_attr("data_format") == "NCHW");
}

TEST_CASE("layout: without transposed convolutions a conv2d_transpose stays NCHW between two transposes") {
  const std::string program = std::string(R"(program: up
inputs: [{name: x, dtype: float32, shape: [1, 4, 6, 6]}]
params:
  - {name: w, dtype: float32, shape: [4, 4, 3, 3]}
  - {name: wt, dtype: float32, shape: [4, 2, 2, 2]}
  - {name: w2, dtype: float32, shape: [4, 2, 3, 3]}
ops:
  - {op: conv2d, in: [x, w], out: [c], attrs: )") + kConv + R"(}
  - {op: conv2d_transpose, in: [c, wt], out: [u], attrs: {strides: [2, 2], paddings: [0, 0], data_format: NCHW}}
  - {op: relu, in: [u], out: [r]}
  - {op: conv2d, in: [r, w2], out: [y], attrs: )" + kConv + R"(}
outputs: [y]
)";
  {
    test::Env env;
    LayoutPlanned p = plan(env, program);  // by default it converts
    CHECK(only(p.program, "pd_op.conv2d_transpose").string_attr("data_format") == "NHWC");
  }
  test::Env env;
  LayoutOptions options;
  options.transposed_convolutions = false;
  LayoutPlanned p = plan(env, program, LayoutChoice::kNhwc, options);
  const ir::Program& g = p.program;
  CHECK(only(g, "pd_op.conv2d", 0).string_attr("data_format") == "NHWC");
  const ir::Op& up = only(g, "pd_op.conv2d_transpose");
  CHECK(up.string_attr("data_format") == "NCHW");
  const ir::Op& out_of_region = operand_producer(g, up, 0);  // c leaves the first region
  CHECK(out_of_region.is("pd_op", "transpose"));
  CHECK(perm_of(out_of_region) == kToNchw);
  // The relu reads an NCHW value, so it stays NCHW; the second region starts at the second convolution.
  CHECK(only(g, "pd_op.conv2d", 1).string_attr("data_format") == "NHWC");
  CHECK(perm_of(operand_producer(g, only(g, "pd_op.conv2d", 1), 0)) == kToNhwc);
}

}  // namespace kforge::passes

namespace kforge::passes {

TEST_CASE("layout: a globally pooled [N, 1, 1, C] leaves the region through a reshape, dynamic batch included") {
  test::Env env;
  LayoutPlanned p = plan(env, std::string(R"(program: gap
inputs: [{name: x, dtype: float32, shape: [-1, 4, 6, 6]}]
params:
  - {name: w, dtype: float32, shape: [8, 4, 3, 3]}
ops:
  - {op: conv2d, in: [x, w], out: [c], attrs: )") + kConv + R"(}
  - op: pool2d
    in: [c]
    out: [g]
    attrs: {kernel_size: [1, 1], strides: [1, 1], paddings: [0, 0], ceil_mode: false, exclusive: true, data_format: NCHW,
            pooling_type: avg, global_pooling: false, adaptive: true, padding_algorithm: EXPLICIT}
  - {op: flatten, in: [g], out: [y], attrs: {start_axis: 1, stop_axis: 3}}
outputs: [y]
)");
  const ir::Program& g = p.program;
  const ir::Op& out = operand_producer(g, only(g, "pd_op.flatten"), 0);
  CHECK(out.is("pd_op", "reshape"));
  const ir::Attribute* shape = out.attr("shape");
  REQUIRE(shape != nullptr);
  CHECK(shape->ints == std::vector<int64_t>{0, 8, 1, 1});  // 0: the batch, copied
  CHECK(g.type_of(out.results[0]).dims == std::vector<int64_t>{-1, 8, 1, 1});
  CHECK(p.lowered->value(p.lowered->outputs[0].value).dims.size() == 2);
}

}  // namespace kforge::passes

namespace kforge::passes {

TEST_CASE("layout: an in-place op that stays NCHW writes the twin, and later readers read the twin") {
  test::Env env;
  LayoutPlanned p = plan(env, std::string(R"(program: moved
inputs: [{name: x, dtype: float32, shape: [1, 4, 6, 6]}, {name: u, dtype: float32, shape: [4, 1, 1]}]
params:
  - {name: w, dtype: float32, shape: [4, 4, 3, 3]}
ops:
  - {op: conv2d, in: [x, w], out: [c], attrs: )") + kConv + R"(}
  - {op: add_, in: [c, u], out: [a]}
  - {op: relu, in: [c], out: [y]}
outputs: [y, a]
)");
  const ir::Program& g = p.program;
  const ir::Op& add = only(g, "pd_op.add_");
  const ir::Op& twin = operand_producer(g, add, 0);
  REQUIRE(twin.is("pd_op", "transpose"));  // u [4, 1, 1] keeps the add in NCHW: it writes c's twin
  // The relu reads c after the add wrote it: it must read the twin the add wrote, not c's NHWC original.
  const ir::Op& relu = only(g, "pd_op.relu");
  CHECK(relu.operands[0] == add.operands[0]);
  CHECK(g.type_of(relu.results[0]).dims == std::vector<int64_t>{1, 4, 6, 6});
}

}  // namespace kforge::passes

namespace kforge::passes {

TEST_CASE("layout: a channel shuffle and a split along the channels stay NHWC") {
  test::Env env;
  LayoutPlanned p = plan(env, std::string(R"(program: shuffle
inputs: [{name: x, dtype: float32, shape: [1, 4, 6, 5]}]
params:
  - {name: w, dtype: float32, shape: [8, 4, 3, 3]}
  - {name: w2, dtype: float32, shape: [4, 4, 3, 3]}
ops:
  - {op: conv2d, in: [x, w], out: [c], attrs: )") + kConv + R"(}
  - {op: reshape, in: [c], out: [g], attrs: {shape: [1, 2, 4, 6, 5]}}
  - {op: transpose, in: [g], out: [t], attrs: {perm: [0, 2, 1, 3, 4]}}
  - {op: reshape, in: [t], out: [s], attrs: {shape: [1, 8, 6, 5]}}
  - {op: split, in: [s], out: [parts], attrs: {sections: [4, 4], axis: 1}}
  - {op: builtin.split, in: [parts], out: [p0, p1]}
  - {op: conv2d, in: [p1, w2], out: [d], attrs: )" + kConv + R"(}
  - {op: builtin.combine, in: [p0, d], out: [l]}
  - {op: concat, in: [l], out: [k], attrs: {axis: 1}}
outputs: [k]
)");
  const ir::Program& g = p.program;
  CHECK(p.report.transposes.size() == 2);  // x in, k out: none around the shuffle or the split
  const ir::Op& first = producer_of(g, "g");
  REQUIRE(first.attr("shape") != nullptr);
  CHECK(first.attr("shape")->ints == std::vector<int64_t>{1, 6, 5, 2, 4});
  CHECK(perm_of(producer_of(g, "t")) == std::vector<int64_t>{0, 1, 2, 4, 3});
  CHECK(g.type_of(producer_of(g, "t").results[0]).dims == std::vector<int64_t>{1, 6, 5, 4, 2});
  CHECK(producer_of(g, "s").attr("shape")->ints == std::vector<int64_t>{1, 6, 5, 8});
  CHECK(only(g, "pd_op.split").attr("axis")->int_value == 3);
  CHECK(g.type_of(producer_of(g, "p1").results[1]).dims == std::vector<int64_t>{1, 6, 5, 4});
  CHECK(operand_producer(g, only(g, "pd_op.conv2d", 1), 0).is("builtin", "split"));  // p1 read as it is
  CHECK(p.lowered->value(p.lowered->outputs[0].value).dims ==
        SymShape{SymExpr(1), SymExpr(8), SymExpr(6), SymExpr(5)});
}

TEST_CASE("layout: a reshape to 5-D that is no channel shuffle leaves the region") {
  test::Env env;
  LayoutPlanned p = plan(env, std::string(R"(program: noshuffle
inputs: [{name: x, dtype: float32, shape: [1, 4, 6, 5]}]
params:
  - {name: w, dtype: float32, shape: [8, 4, 3, 3]}
ops:
  - {op: conv2d, in: [x, w], out: [c], attrs: )") + kConv + R"(}
  - {op: reshape, in: [c], out: [g], attrs: {shape: [1, 2, 4, 6, 5]}}
  - {op: transpose, in: [g], out: [t], attrs: {perm: [0, 1, 2, 4, 3]}}
outputs: [t]
)");
  const ir::Program& g = p.program;
  CHECK(producer_of(g, "g").attr("shape")->ints == std::vector<int64_t>{1, 2, 4, 6, 5});
  CHECK(operand_producer(g, producer_of(g, "g"), 0).is("pd_op", "transpose"));  // c leaves NHWC first
  CHECK(perm_of(producer_of(g, "t")) == std::vector<int64_t>{0, 1, 2, 4, 3});
}

}  // namespace kforge::passes

namespace kforge::passes {

TEST_CASE("layout: nchw8c regions hold [N, C / 8, H, W, 8] values where every channel count is a multiple of 8") {
  test::Env env;
  LayoutPlanned p = plan(env, std::string(R"(program: blocked
inputs: [{name: x, dtype: float32, shape: [1, 3, 8, 8]}]
params:
  - {name: w0, dtype: float32, shape: [8, 3, 3, 3]}
  - {name: w1, dtype: float32, shape: [8, 8, 3, 3]}
  - {name: b1, dtype: float32, shape: [1, 8, 1, 1]}
  - {name: m, dtype: float32, shape: [8]}
  - {name: w2, dtype: float32, shape: [16, 16, 3, 3]}
  - {name: w3, dtype: float32, shape: [12, 16, 3, 3]}
ops:
  - {op: conv2d, in: [x, w0], out: [c0], attrs: )") + kConv + R"(}
  - {op: conv2d, in: [c0, w1], out: [c1], attrs: )" + kConv + R"(}
  - {op: add, in: [c1, b1], out: [a1]}
  - {op: batch_norm, in: [a1, m, m, m, m], out: [n1, n1m, n1v, n1s, n1t, n1r], attrs: )" + kBn + R"(}
  - {op: relu, in: [n1], out: [r1]}
  - {op: builtin.combine, in: [r1, r1], out: [l]}
  - {op: concat, in: [l], out: [k], attrs: {axis: 1}}
  - {op: conv2d, in: [k, w2], out: [c2], attrs: )" + kConv + R"(}
  - {op: pool2d, in: [c2], out: [p2], attrs: )" + kPool + R"(}
  - {op: conv2d, in: [p2, w3], out: [c3], attrs: )" + kConv + R"(}
  - {op: relu, in: [c3], out: [y]}
outputs: [y]
)", LayoutChoice::kNchw8c);
  const ir::Program& g = p.program;
  std::vector<std::string> converted;
  for (const LayoutReport::Converted& c : p.report.converted) converted.push_back(c.name);
  // The first conv reads 3 channels: a stem, it reads x as it is and writes NCHW8c. The last writes 12 channels: it
  // stays NCHW, and so does the relu after it.
  CHECK(converted == std::vector<std::string>{"pd_op.conv2d", "pd_op.conv2d", "pd_op.add", "pd_op.batch_norm",
                                              "pd_op.relu", "pd_op.concat", "pd_op.conv2d", "pd_op.pool2d"});
  CHECK(only(g, "pd_op.conv2d", 0).string_attr("data_format") == "NCHW8c");
  CHECK(operand_producer(g, only(g, "pd_op.conv2d", 0), 0).is("pd_op", "data"));
  CHECK(g.type_of(producer_of(g, "c0").results[0]).dims == std::vector<int64_t>{1, 1, 8, 8, 8});
  CHECK(only(g, "pd_op.conv2d", 1).string_attr("data_format") == "NCHW8c");
  CHECK(only(g, "pd_op.batch_norm").string_attr("data_format") == "NCHW8c");
  CHECK(only(g, "pd_op.pool2d").string_attr("data_format") == "NCHW8c");
  CHECK(only(g, "pd_op.conv2d", 3).string_attr("data_format") == "NCHW");
  CHECK(g.type_of(producer_of(g, "c1").results[0]).dims == std::vector<int64_t>{1, 1, 8, 8, 8});
  CHECK(g.type_of(producer_of(g, "n1m").results[1]).dims == std::vector<int64_t>{8});
  // Concat along the channels stays on axis 1, which holds the blocks.
  CHECK(only(g, "pd_op.concat").attr("axis")->int_value == 1);
  CHECK(g.type_of(only(g, "pd_op.concat").results[0]).dims == std::vector<int64_t>{1, 2, 8, 8, 8});
  CHECK(g.type_of(producer_of(g, "p2").results[0]).dims == std::vector<int64_t>{1, 2, 4, 4, 8});

  // The bias [1, 8, 1, 1] enters through one reshape: its elements keep their order.
  const ir::Op& bias_in = operand_producer(g, only(g, "pd_op.add"), 1);
  CHECK(bias_in.is("pd_op", "reshape"));
  CHECK(g.type_of(bias_in.results[0]).dims == std::vector<int64_t>{1, 1, 1, 1, 8});
  // p2 leaves: transpose [0, 1, 4, 2, 3], reshape to [N, C, H, W].
  const ir::Op& p2_out = operand_producer(g, only(g, "pd_op.conv2d", 3), 0);
  CHECK(p2_out.is("pd_op", "reshape"));
  CHECK(g.type_of(p2_out.results[0]).dims == std::vector<int64_t>{1, 16, 4, 4});
  const ir::Op& p2_t = operand_producer(g, p2_out, 0);
  CHECK(p2_t.is("pd_op", "transpose"));
  CHECK(perm_of(p2_t) == std::vector<int64_t>{0, 1, 4, 2, 3});
  CHECK(p.report.transposes.size() == 3);
  CHECK(p.report.dump(g).find("layout: NCHW8c, 8 ops converted, 3 transposes") == 0);
  CHECK(p.report.dump(g).find("pd_op.transpose NCHW8c -> NCHW after pd_op.pool2d") != std::string::npos);
  REQUIRE(p.lowered->outputs.size() == 1);
  CHECK(p.lowered->value(p.lowered->outputs[0].value).dims == SymShape{SymExpr(1), SymExpr(12), SymExpr(4), SymExpr(4)});
}

TEST_CASE("layout: nchw8c splits along the channels in blocks: split's sections count them") {
  test::Env env;
  LayoutPlanned p = plan(env, std::string(R"(program: halves
inputs: [{name: x, dtype: float32, shape: [1, 8, 6, 6]}]
params:
  - {name: w, dtype: float32, shape: [24, 8, 3, 3]}
  - {name: w2, dtype: float32, shape: [8, 8, 3, 3]}
ops:
  - {op: conv2d, in: [x, w], out: [c], attrs: )") + kConv + R"(}
  - {op: split, in: [c], out: [parts], attrs: {sections: [16, -1], axis: 1}}
  - {op: builtin.split, in: [parts], out: [p0, p1]}
  - {op: conv2d, in: [p1, w2], out: [d], attrs: )" + kConv + R"(}
  - {op: relu, in: [p0], out: [r]}
outputs: [r, d]
)", LayoutChoice::kNchw8c);
  const ir::Program& g = p.program;
  const ir::Op& split = only(g, "pd_op.split");
  CHECK(split.attr("axis")->int_value == 1);
  std::vector<int64_t> sections;
  const ir::Attribute* s = split.attr("sections");
  REQUIRE(s != nullptr);
  if (s->kind == ir::AttrKind::kIntArray) sections = s->ints;
  CHECK(sections == std::vector<int64_t>{2, -1});
  CHECK(g.type_of(producer_of(g, "p0").results[0]).dims == std::vector<int64_t>{1, 2, 6, 6, 8});
  CHECK(g.type_of(producer_of(g, "p1").results[1]).dims == std::vector<int64_t>{1, 1, 6, 6, 8});
  CHECK(operand_producer(g, only(g, "pd_op.conv2d", 1), 0).is("builtin", "split"));  // p1 read as it is
  CHECK(only(g, "pd_op.conv2d", 1).string_attr("data_format") == "NCHW8c");
  REQUIRE(p.lowered->outputs.size() == 2);
  CHECK(p.lowered->value(p.lowered->outputs[0].value).dims == SymShape{SymExpr(1), SymExpr(16), SymExpr(6), SymExpr(6)});
}

TEST_CASE("layout: nchw8c leaves dynamic spatial dims, transposed convolutions and channel shuffles NCHW") {
  test::Env env;
  LayoutPlanned p = plan(env, std::string(R"(program: dyn
inputs: [{name: x, dtype: float32, shape: [1, 8, -1, 6]}, {name: z, dtype: float32, shape: [1, 8, 6, 6]}]
params:
  - {name: w, dtype: float32, shape: [8, 8, 3, 3]}
  - {name: wt, dtype: float32, shape: [8, 8, 2, 2]}
ops:
  - {op: conv2d, in: [x, w], out: [c], attrs: )") + kConv + R"(}
  - {op: conv2d, in: [z, w], out: [d], attrs: )" + kConv + R"(}
  - {op: conv2d_transpose, in: [d, wt], out: [u], attrs: {strides: [2, 2], paddings: [0, 0], data_format: NCHW}}
outputs: [c, u]
)", LayoutChoice::kNchw8c);
  const ir::Program& g = p.program;
  CHECK(only(g, "pd_op.conv2d", 0).string_attr("data_format") == "NCHW");  // H is dynamic
  CHECK(only(g, "pd_op.conv2d", 1).string_attr("data_format") == "NCHW8c");
  // z [1, 8, 6, 6] enters: reshape to [N, C / 8, 8, H, W], transpose [0, 1, 3, 4, 2].
  const ir::Op& z_in = operand_producer(g, only(g, "pd_op.conv2d", 1), 0);
  CHECK(z_in.is("pd_op", "transpose"));
  CHECK(perm_of(z_in) == std::vector<int64_t>{0, 1, 3, 4, 2});
  const ir::Op& z_split = operand_producer(g, z_in, 0);
  CHECK(z_split.is("pd_op", "reshape"));
  CHECK(g.type_of(z_split.results[0]).dims == std::vector<int64_t>{1, 1, 8, 6, 6});
  CHECK(only(g, "pd_op.conv2d_transpose").string_attr("data_format") == "NCHW");
  CHECK(p.report.converted.size() == 1);
}

}  // namespace kforge::passes
