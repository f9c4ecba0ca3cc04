// Split views (passes/split_views.h): which pieces of a split become views of its input, at which offsets, that the
// memory plan never lets a value be overwritten while it is live, and which pieces stay copies.
#include "pass_test_util.h"
#include "passes/concat_in_place.h"
#include "passes/fusion.h"
#include "passes/memory_plan.h"
#include "passes/split_views.h"

using namespace kforge;
using namespace kforge::passes;

namespace {

test::Env& sv_env() {
  static test::Env e({"kernels/fusion.yaml"});
  return e;
}

struct ViewedProgram {
  LoweredProgram lp;
  FusionPlan plan;
  std::vector<ConcatPlacement> placements;
  std::vector<SplitView> views;

  uint32_t value(const std::string& name) const {
    for (const LoweredValue& v : lp.values) {
      if (v.name == name) return v.index;
    }
    FAIL("no value " << name);
    return kNone;
  }
  /// The view made of the value called `name`, or null.
  const SplitView* view(const std::string& name) const {
    for (const SplitView& v : views) {
      if (v.value == value(name)) return &v;
    }
    return nullptr;
  }
  bool shares_buffer(const std::string& a, const std::string& b) const {
    return lp.value(value(a)).buffer == lp.value(value(b)).buffer;
  }
};

/// The compile command's sequence: lower, fuse with the library's conv2d_fused, re-plan, concat in place, views.
ViewedProgram view_splits(const std::string& yaml, LayoutChoice layout) {
  ir::Program program = sv_env().read("t.yaml", yaml);
  PipelineOptions options;
  options.layout = layout;
  std::optional<LoweredProgram> lp = sv_env().compile(program, options);
  INFO(sv_env().diagnostics());
  REQUIRE(lp.has_value());
  ViewedProgram p{std::move(*lp), {}, {}, {}};
  const opdef::PirOpSignature* conv_fused = sv_env().ops().find("pd_op.conv2d_fused");
  REQUIRE(conv_fused != nullptr);
  FusionOptions fusion;
  fusion.conv_fused = conv_fused->op;
  p.plan = plan_fusion(p.lp, fusion);
  apply_fusion_to_memory_plan(p.lp, p.plan);
  ConcatInPlaceOptions in_place;
  in_place.conv_fused = conv_fused->op;
  p.placements = place_concat_inputs(p.lp, p.plan, in_place);
  p.views = make_split_views(p.lp, p.plan.call_group);
  return p;
}

/// Two values whose bytes overlap and that are live at one call, in different buffers; "" when there are none.
/// Within a buffer every value is the input or a piece of it, disjoint pieces of one input (checked by the tests).
std::string view_overlaps(const ViewedProgram& p) {
  for (const LoweredValue& a : p.lp.values) {
    for (const LoweredValue& b : p.lp.values) {
      if (a.index >= b.index || a.buffer == kNone || b.buffer == kNone || a.buffer == b.buffer) continue;
      const Buffer& ba = p.lp.buffers[a.buffer];
      const Buffer& bb = p.lp.buffers[b.buffer];
      if (ba.kind != BufferKind::kWorkspace || bb.kind != BufferKind::kWorkspace ||
          is_fused_internal(p.plan, a.index) || is_fused_internal(p.plan, b.index)) {
        continue;
      }
      const int64_t a0 = *ba.offset.constant() + *a.buffer_offset.constant(),
                    b0 = *bb.offset.constant() + *b.buffer_offset.constant();
      const int64_t a1 = a0 + *a.bytes().constant(), b1 = b0 + *b.bytes().constant();
      if (a0 < b1 && b0 < a1 && ba.first_call <= bb.last_call && bb.first_call <= ba.last_call) {
        return "v" + std::to_string(a.index) + " and v" + std::to_string(b.index) + " overlap while both live";
      }
    }
  }
  return "";
}

const char* const kSvConvAttrs =
    "{strides: [1, 1], paddings: [0, 0], padding_algorithm: EXPLICIT, dilations: [1, 1], groups: 1, data_format: NCHW}";

const char* const kSvSections = "split, in: [r], out: [parts], attrs: {sections: [3, 5], axis: 1}";

// shufflenet_v2's block, smaller: a 1 x 1 convolution and a relu, whose channels `split` cuts in two; the left half
// goes to a concat and an add, the right half through a 1 x 1 convolution and a relu to the concat. `extra` adds ops,
// `outputs` names the results.
std::string block_yaml(const std::string& shape = "[1, 8, 4, 4]",
                       const std::string& split = kSvSections,
                       const std::string& extra = "", const std::string& outputs = "[y, s]",
                       const std::string& w_shape = "[5, 5, 1, 1]") {
  return std::string(R"(
program: block
inputs: [{name: x, dtype: float32, shape: )") + shape + R"(}]
params:
  - {name: w0, dtype: float32, shape: [8, 8, 1, 1]}
  - {name: w, dtype: float32, shape: )" + w_shape + R"(}
ops:
  - {op: conv2d, in: [x, w0], out: [c0], attrs: )" + kSvConvAttrs + R"(}
  - {op: relu, in: [c0], out: [r]}
  - {op: )" + split + R"(}
  - {op: builtin.split, in: [parts], out: [a, b]}
  - {op: conv2d, in: [b, w], out: [c], attrs: )" + kSvConvAttrs + R"(}
  - {op: relu, in: [c], out: [d]}
  - {op: builtin.combine, in: [a, d], out: [l]}
  - {op: concat, in: [l], out: [y], attrs: {axis: 1}}
  - {op: add, in: [a, a], out: [s]}
)" + extra + "outputs: " + outputs + "\n";
}

}  // namespace

TEST_CASE("split views: NCHW pieces of one image are contiguous slices of the input, read by any op") {
  const ViewedProgram p = view_splits(block_yaml(), LayoutChoice::kNchw);
  INFO(p.lp.dump() << dump_split_views(p.views));
  REQUIRE(p.views.size() == 2);
  const int64_t plane = 4 * 4 * 4;  // bytes of one channel
  REQUIRE(p.view("a") != nullptr);
  REQUIRE(p.view("b") != nullptr);
  CHECK(p.view("a")->offset == 0);
  CHECK(p.view("b")->offset == 3 * plane);
  CHECK(p.view("a")->split == p.lp.value(p.value("a")).defined_by);
  CHECK(p.shares_buffer("a", "r"));
  CHECK(p.shares_buffer("b", "r"));
  CHECK(p.lp.value(p.value("b")).buffer_offset.constant() == 3 * plane);
  // r's buffer is live from the relu to the last read of a piece (the concat, then the add).
  const Buffer& buf = p.lp.buffer_of(p.value("r"));
  CHECK(buf.first_call == p.lp.value(p.value("r")).defined_by);
  CHECK(buf.last_call >= p.lp.value(p.value("s")).defined_by);
  CHECK(find_overlap(p.lp, {}).empty());
  CHECK(view_overlaps(p).empty());
  const std::string split = std::to_string(p.lp.value(p.value("a")).defined_by);
  CHECK(dump_split_views(p.views) == "split call " + split + ": v" + std::to_string(p.value("a")) +
                                         " at +0\nsplit call " + split + ": v" + std::to_string(p.value("b")) +
                                         " at +192\n");
}

TEST_CASE("split views: split_with_num along axis 0 of a batch, in the default NHWC layout") {
  const ViewedProgram p = view_splits(
      block_yaml("[2, 8, 4, 4]", "split_with_num, in: [r], out: [parts], attrs: {num: 2, axis: 0}", "", "[y, s]",
                 "[8, 8, 1, 1]"),
      LayoutChoice::kNhwc);
  INFO(p.lp.dump() << dump_split_views(p.views));
  // b is read by the convolution's transpose into NHWC (or by the convolution itself): either way a dense tensor.
  REQUIRE(p.views.size() == 2);
  CHECK(p.view("a")->offset == 0);
  CHECK(p.view("b")->offset == 8 * 4 * 4 * 4);
  CHECK(find_overlap(p.lp, {}).empty());
  CHECK(view_overlaps(p).empty());
}

TEST_CASE("split views: which pieces stay copies") {
  SECTION("NHWC channels: strided pieces") {
    // The layout plan keeps the split in NHWC (axis 3): each pixel's channels are a run, no reader takes a stride.
    const ViewedProgram p = view_splits(block_yaml(), LayoutChoice::kNhwc);
    INFO(p.lp.dump());
    CHECK(p.views.empty());
  }
  SECTION("NCHW with two images: strided pieces") {
    const ViewedProgram p = view_splits(block_yaml("[2, 8, 4, 4]"), LayoutChoice::kNchw);
    CHECK(p.views.empty());
  }
  // The block in NCHW with `extra` ops after it and `outputs`.
  auto block_with = [](const std::string& extra, const std::string& outputs) {
    return view_splits(block_yaml("[1, 8, 4, 4]", kSvSections, extra, outputs), LayoutChoice::kNchw);
  };
  SECTION("a piece that is a program output, or written in place later: the other piece is a view") {
    for (const auto& [extra, outputs] : {std::pair<std::string, std::string>{"", "[y, s, a]"},
                                         {"  - {op: relu_, in: [a], out: [a2]}\n", "[y, s, a2]"}}) {
      const ViewedProgram p = block_with(extra, outputs);
      INFO(p.lp.dump());
      CHECK(p.view("a") == nullptr);
      CHECK(p.view("b") != nullptr);
      CHECK(view_overlaps(p).empty());
    }
  }
  SECTION("the input written in place after the split") {
    CHECK(block_with("  - {op: relu_, in: [r], out: [r2]}\n", "[y, s, r2]").views.empty());
  }
  SECTION("the input is the program's input") {
    const ViewedProgram p = view_splits(R"(
program: from_input
inputs: [{name: x, dtype: float32, shape: [1, 4, 2, 2]}]
ops:
  - {op: split_with_num, in: [x], out: [halves], attrs: {num: 2, axis: 1}}
  - {op: builtin.split, in: [halves], out: [h0, h1]}
  - {op: add, in: [h0, h1], out: [y]}
outputs: [y]
)", LayoutChoice::kNchw);
    CHECK(p.views.empty());
  }
}

TEST_CASE("split views: a view of a piece shares it, and a piece split again lies in the first input") {
  const ViewedProgram p = view_splits(R"(
program: nested
inputs: [{name: x, dtype: float32, shape: [1, 6, 2, 2]}]
ops:
  - {op: relu, in: [x], out: [r]}
  - {op: split_with_num, in: [r], out: [halves], attrs: {num: 2, axis: 1}}
  - {op: builtin.split, in: [halves], out: [h0, h1]}
  - {op: reshape, in: [h0], out: [f], attrs: {shape: [12]}}
  - {op: split, in: [h1], out: [parts], attrs: {sections: [1, 2], axis: 1}}
  - {op: builtin.split, in: [parts], out: [q0, q1]}
  - {op: sigmoid, in: [f], out: [y0]}
  - {op: add, in: [q0, q0], out: [y1]}
  - {op: exp, in: [q1], out: [y2]}
outputs: [y0, y1, y2]
)", LayoutChoice::kNchw);
  INFO(p.lp.dump() << dump_split_views(p.views));
  REQUIRE(p.views.size() == 4);
  const int64_t plane = 2 * 2 * 4;
  CHECK(p.shares_buffer("f", "r"));
  CHECK(p.lp.value(p.value("f")).buffer_offset.constant() == 0);
  CHECK(p.shares_buffer("q1", "r"));
  CHECK(p.lp.value(p.value("h1")).buffer_offset.constant() == 3 * plane);
  CHECK(p.lp.value(p.value("q0")).buffer_offset.constant() == 3 * plane);
  CHECK(p.lp.value(p.value("q1")).buffer_offset.constant() == 4 * plane);
  CHECK(p.view("q1")->offset == plane);  // from its own split's input, h1
  CHECK(find_overlap(p.lp, {}).empty());
  CHECK(view_overlaps(p).empty());
}
