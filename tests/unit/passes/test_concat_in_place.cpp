// The concat in place (passes/concat_in_place.h): which inputs of a concat go into their slices of its output, at
// which offsets, what their producers are told, and that the memory plan never lets a value be overwritten while it
// is live (find_overlap by buffers, and by hand: no value of the concat's buffer overlaps another live one).
#include "pass_test_util.h"
#include "passes/concat_in_place.h"
#include "passes/fusion.h"
#include "passes/memory_plan.h"

using namespace kforge;
using namespace kforge::passes;

namespace {

test::Env& cip_env() {
  static test::Env e({"kernels/fusion.yaml"});
  return e;
}

const opdef::Op* library_conv_fused() {
  const opdef::PirOpSignature* sig = cip_env().ops().find("pd_op.conv2d_fused");
  REQUIRE(sig != nullptr);
  return sig->op;
}

struct PlacedProgram {
  LoweredProgram lp;
  FusionPlan plan;
  std::vector<ConcatPlacement> placements;

  uint32_t value(const std::string& name) const {
    for (const LoweredValue& v : lp.values) {
      if (v.name == name) return v.index;
    }
    FAIL("no value " << name);
    return kNone;
  }
  /// The placement of the value called `name`, or null.
  const ConcatPlacement* placement(const std::string& name) const {
    for (const ConcatPlacement& p : placements) {
      if (p.value == value(name)) return &p;
    }
    return nullptr;
  }
  /// conv2d_fused's out_pixel_stride in the group that writes `name`; -1 when no convolution group writes it.
  int64_t pixel_stride_of(const std::string& name) const {
    const uint32_t c = lp.value(value(name)).defined_by;
    if (plan.call_group[c] == kNone || plan.groups[plan.call_group[c]].kind != GroupKind::kConv) return -1;
    return plan.groups[plan.call_group[c]].conv_call.arg("out_pixel_stride")->constant.int_value;
  }
};

/// The compile command's sequence: lower (NHWC regions or NCHW), fuse with the library's conv2d_fused, re-plan, place.
PlacedProgram place_concats(const std::string& yaml, LayoutChoice layout, bool strided = true) {
  ir::Program program = cip_env().read("t.yaml", yaml);
  PipelineOptions options;
  options.layout = layout;
  std::optional<LoweredProgram> lp = cip_env().compile(program, options);
  INFO(cip_env().diagnostics());
  REQUIRE(lp.has_value());
  PlacedProgram p{std::move(*lp), {}, {}};
  FusionOptions fusion;
  fusion.conv_fused = library_conv_fused();
  p.plan = plan_fusion(p.lp, fusion);
  apply_fusion_to_memory_plan(p.lp, p.plan);
  ConcatInPlaceOptions in_place;
  in_place.conv_fused = library_conv_fused();
  in_place.strided = strided;
  p.placements = place_concat_inputs(p.lp, p.plan, in_place);
  return p;
}

/// Every value of every buffer against every value of every other buffer, by the values' own bytes and live
/// ranges: two values that overlap in memory and are live at one call must be a value and a slice of it.
std::string value_overlaps(const PlacedProgram& p) {
  const LoweredProgram& lp = p.lp;
  struct Span {
    uint32_t value;
    int64_t begin, end;
    uint32_t first, last;
  };
  std::vector<Span> spans;
  for (const Buffer& b : lp.buffers) {
    if (b.kind != BufferKind::kWorkspace) continue;
    for (uint32_t v : b.values) {
      if (is_fused_internal(p.plan, v)) continue;
      const int64_t at = *b.offset.constant() + *lp.value(v).buffer_offset.constant();
      // The bytes the value spans: a strided slice spans from its first element to its last pixel's end.
      const ConcatPlacement* placed = nullptr;
      for (const ConcatPlacement& c : p.placements) placed = c.value == v ? &c : placed;
      int64_t bytes = *lp.value(v).bytes().constant();
      if (placed != nullptr && placed->pixel_stride != 0) {
        const SymShape& d = lp.value(v).dims;
        const int64_t pixels = *d[0].constant() * *d[1].constant() * *d[2].constant();
        bytes = ((pixels - 1) * placed->pixel_stride + *d[3].constant()) * 4;
      }
      spans.push_back({v, at, at + bytes, b.first_call, b.last_call});
    }
  }
  for (const Span& a : spans) {
    for (const Span& b : spans) {
      if (a.value >= b.value || a.begin >= b.end || b.begin >= a.end) continue;
      if (lp.value(a.value).buffer == lp.value(b.value).buffer) continue;  // a value and its slice, checked below
      if (a.first <= b.last && b.first <= a.last) {
        return "v" + std::to_string(a.value) + " and v" + std::to_string(b.value) + " overlap while both live";
      }
    }
  }
  return "";
}

const char* const kCipConvAttrs =
    "{strides: [1, 1], paddings: [0, 0], padding_algorithm: EXPLICIT, dilations: [1, 1], groups: 1, data_format: NCHW}";

// An inception-style block: three branches of one image, concatenated along the channels; the first ends in a relu
// (a convolution group), the second is a convolution alone, the third a max pool and a convolution (or, with
// `pool_last`, the pool alone: no strided writer).
std::string inception_yaml(const std::string& extra_ops = "", const std::string& outputs = "[y]",
                           bool pool_last = false) {
  const std::string third = pool_last ? "b3" : "p3";
  std::string yaml = std::string(R"(
program: block
inputs: [{name: x, dtype: float32, shape: [1, 4, 6, 6]}]
params:
  - {name: w1, dtype: float32, shape: [8, 4, 1, 1]}
  - {name: w2, dtype: float32, shape: [16, 4, 1, 1]}
  - {name: w3, dtype: float32, shape: [4, 4, 1, 1]}
ops:
  - {op: conv2d, in: [x, w1], out: [c1], attrs: )") + kCipConvAttrs + R"(}
  - {op: relu, in: [c1], out: [b1]}
  - {op: conv2d, in: [x, w2], out: [b2], attrs: )" + kCipConvAttrs + R"(}
  - {op: pool2d, in: [x], out: [)" + third + R"(], attrs: {kernel_size: [3, 3], strides: [1, 1], paddings: [1, 1], ceil_mode: false, exclusive: true, data_format: NCHW, pooling_type: max, global_pooling: false, adaptive: false, padding_algorithm: EXPLICIT}}
)";
  if (!pool_last) yaml += "  - {op: conv2d, in: [p3, w3], out: [b3], attrs: " + std::string(kCipConvAttrs) + "}\n";
  return yaml + extra_ops + R"(
  - {op: builtin.combine, in: [b1, b2, b3], out: [pieces]}
  - {op: concat, in: [pieces], out: [cat], attrs: {axis: 1}}
  - {op: relu, in: [cat], out: [y]}
outputs: )" + outputs + "\n";
}

}  // namespace

TEST_CASE("concat in place: NHWC convolutions write their strided slices") {
  const PlacedProgram p = place_concats(inception_yaml(), LayoutChoice::kNhwc);
  INFO(p.lp.dump() << dump_fusion(p.lp, p.plan) << dump_placements(p.placements));
  REQUIRE(p.placements.size() == 3);
  const uint32_t cat = p.value("cat");
  const ConcatPlacement* b1 = p.placement("b1");
  const ConcatPlacement* b2 = p.placement("b2");
  const ConcatPlacement* b3 = p.placement("b3");
  REQUIRE(b1 != nullptr);
  REQUIRE(b2 != nullptr);
  REQUIRE(b3 != nullptr);
  // [1, 6, 6, 28]: b1's 8 channels at 0, b2's 16 at 8 * 4 bytes, b3's 4 at 24 * 4, pixels 28 channels apart.
  CHECK(b1->offset == 0);
  CHECK(b2->offset == 32);
  CHECK(b3->offset == 96);
  CHECK(b1->pixel_stride == 28);
  CHECK(b2->pixel_stride == 28);
  CHECK(p.lp.value(p.value("b1")).buffer == p.lp.value(cat).buffer);
  CHECK(p.lp.value(p.value("b2")).buffer_offset.constant() == 32);
  CHECK(p.lp.value(p.value("b3")).buffer == p.lp.value(cat).buffer);
  // The relu's group and the lone convolutions, made groups of their own, write with the output's pixel stride.
  CHECK(p.pixel_stride_of("b1") == 28);
  CHECK(p.pixel_stride_of("b2") == 28);
  CHECK(p.pixel_stride_of("b3") == 28);
  for (uint32_t i = 0; i < p.plan.groups.size(); ++i) {
    CHECK(p.plan.groups[i].index == i);
    if (i > 0) CHECK(p.plan.groups[i - 1].position < p.plan.groups[i].position);
    for (uint32_t c : p.plan.groups[i].calls) CHECK(p.plan.call_group[c] == i);
  }
  // The concat's buffer is live from the first branch's convolution to the relu that reads it.
  const Buffer& b = p.lp.buffer_of(cat);
  CHECK(b.first_call == p.lp.value(p.value("b1")).defined_by);
  CHECK(find_overlap(p.lp, {}).empty());
  CHECK(value_overlaps(p).empty());
}

TEST_CASE("concat in place: a dynamic batch: the slices' offsets are static, the buffers' sizes are not") {
  std::string dynamic = inception_yaml();
  dynamic.replace(dynamic.find("[1, 4, 6, 6]"), 12, "[-1, 4, 6, 6]");
  const PlacedProgram p = place_concats(dynamic, LayoutChoice::kNhwc);
  INFO(p.lp.dump() << dump_placements(p.placements));
  REQUIRE(p.placements.size() == 3);
  CHECK(p.placement("b2")->offset == 32);
  CHECK(p.placement("b2")->pixel_stride == 28);
  CHECK(p.lp.value(p.value("b2")).buffer == p.lp.value(p.value("cat")).buffer);
  CHECK_FALSE(p.lp.plan.is_static());
  for (int64_t batch : {1, 2, 7}) CHECK(find_overlap(p.lp, {batch}).empty());
}

TEST_CASE("concat in place: strided slices only when every input goes in place") {
  // Where one input must be copied anyway, the others' copies would only move into their convolutions.
  SECTION("a pool's output (no strided writer)") {
    const PlacedProgram p = place_concats(inception_yaml("", "[y]", true), LayoutChoice::kNhwc);
    CHECK(p.placements.empty());
    CHECK(p.pixel_stride_of("b1") == 0);
    CHECK(p.pixel_stride_of("b2") == -1);  // the lone convolution stays conv2d
  }
  SECTION("read by another op") {
    const PlacedProgram p =
        place_concats(inception_yaml("  - {op: relu, in: [b2], out: [z]}", "[y, z]"), LayoutChoice::kNhwc);
    CHECK(p.placements.empty());
    CHECK(p.pixel_stride_of("b1") == 0);
    CHECK(p.pixel_stride_of("b2") == -1);
    CHECK(value_overlaps(p).empty());
  }
  SECTION("a program output") {
    const PlacedProgram p = place_concats(inception_yaml("", "[y, b1]"), LayoutChoice::kNhwc);
    CHECK(p.placements.empty());
    CHECK(p.pixel_stride_of("b1") == 0);
  }
  SECTION("given twice") {
    std::string twice = inception_yaml();
    twice.replace(twice.find("[b1, b2, b3]"), 12, "[b1, b2, b1]");
    const PlacedProgram p = place_concats(twice, LayoutChoice::kNhwc);
    CHECK(p.placements.empty());
  }
  SECTION("no strided slices (--trace-hooks)") {
    const PlacedProgram p = place_concats(inception_yaml(), LayoutChoice::kNhwc, false);
    CHECK(p.placements.empty());
    CHECK(p.pixel_stride_of("b1") == 0);
  }
  SECTION("NCHW, but two images: strided, and convolutions write strided slices in NHWC only") {
    std::string two = inception_yaml();
    two.replace(two.find("[1, 4, 6, 6]"), 12, "[2, 4, 6, 6]");
    const PlacedProgram p = place_concats(two, LayoutChoice::kNchw);
    CHECK(p.placements.empty());
  }
}

TEST_CASE("concat in place: NCHW slices of one image are contiguous: any producer, nested concats in one buffer") {
  // densenet's dense block: each layer concatenates the previous concat with a new feature map, and the previous
  // concat is read again by the layer's own relu.
  const PlacedProgram p = place_concats(R"(
program: dense
inputs: [{name: x, dtype: float32, shape: [1, 4, 5, 5]}]
params:
  - {name: w1, dtype: float32, shape: [2, 4, 3, 3]}
  - {name: w2, dtype: float32, shape: [2, 6, 3, 3]}
ops:
  - {op: relu, in: [x], out: [y0]}
  - {op: conv2d, in: [y0, w1], out: [n1], attrs: {strides: [1, 1], paddings: [1, 1], padding_algorithm: EXPLICIT, dilations: [1, 1], groups: 1, data_format: NCHW}}
  - {op: builtin.combine, in: [y0, n1], out: [l1]}
  - {op: concat, in: [l1], out: [y1], attrs: {axis: 1}}
  - {op: relu, in: [y1], out: [r1]}
  - {op: conv2d, in: [r1, w2], out: [n2], attrs: {strides: [1, 1], paddings: [1, 1], padding_algorithm: EXPLICIT, dilations: [1, 1], groups: 1, data_format: NCHW}}
  - {op: builtin.combine, in: [y1, n2], out: [l2]}
  - {op: concat, in: [l2], out: [y2], attrs: {axis: 1}}
  - {op: builtin.combine, in: [n1, y0], out: [l3]}
  - {op: concat, in: [l3], out: [y3], attrs: {axis: 1}}
  - {op: add, in: [y2, y2], out: [z]}
outputs: [z, y3]
)", LayoutChoice::kNchw);
  INFO(p.lp.dump() << dump_placements(p.placements));
  const uint32_t y2 = p.value("y2");
  // y0 and n1 in y1; y1 (with them) and n2 in y2: one buffer, y2's; the offsets count from y2's first element.
  for (const char* name : {"y0", "n1", "y1", "n2"}) {
    INFO(name);
    CHECK(p.lp.value(p.value(name)).buffer == p.lp.value(y2).buffer);
    REQUIRE(p.placement(name) != nullptr);
    CHECK(p.placement(name)->pixel_stride == 0);
  }
  const int64_t plane = 5 * 5 * 4;  // bytes of one channel
  CHECK(p.lp.value(p.value("y0")).buffer_offset.constant() == 0);
  CHECK(p.lp.value(p.value("n1")).buffer_offset.constant() == 4 * plane);
  CHECK(p.lp.value(p.value("y1")).buffer_offset.constant() == 0);
  CHECK(p.lp.value(p.value("n2")).buffer_offset.constant() == 6 * plane);
  // y0 and n1 live in y1's concat already: y3 copies them (a value lives in one concat).
  const uint32_t y3 = p.value("y3");
  CHECK(p.lp.value(p.value("n1")).buffer != p.lp.value(y3).buffer);
  CHECK(p.lp.buffer_of(y2).values.size() == 5);
  CHECK(find_overlap(p.lp, {}).empty());
  CHECK(value_overlaps(p).empty());
  // Every value is live, in its buffer, from its definition to its last read: y0's buffer (y2's) from the relu on.
  const Buffer& b = p.lp.buffer_of(y2);
  CHECK(b.first_call == p.lp.value(p.value("y0")).defined_by);
  CHECK(b.last_call >= p.lp.value(p.value("z")).defined_by);
}
