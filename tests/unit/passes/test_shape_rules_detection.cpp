// Generation-time shape rules of the last ops of issue 34 (src/passes/shape_rules_detection.cpp): deformable_conv,
// roi_align, isnan, linspace, index_sample over symbolic dims, and their located diagnostics.
#include "pass_test_util.h"

#include "passes/analysis.h"

#include <fmt/format.h>

using namespace kforge;
using namespace kforge::passes;

namespace {

using test::Analyzed;  // pass_test_util.h
using test::analyze;

std::string det_shape(const std::string& inputs, const std::string& ops, const std::string& out) {
  Analyzed r = analyze(inputs, ops, "[" + out + "]");
  return r.analysis ? r.shape(out) : r.diagnostics;
}

std::string det_error(const std::string& inputs, const std::string& ops) {
  Analyzed r = analyze(inputs, ops, "[o]");
  if (r.analysis) return "";
  CHECK(r.diagnostics.find("p.yaml:") != std::string::npos);
  return r.diagnostics;
}

bool det_mentions(const std::string& text, const std::string& what) {
  INFO(text);
  return text.find(what) != std::string::npos;
}

// Symbols: x s0, off s1, mk s2, b s3.
const char* const kDetInputs =
    "[{name: x, dtype: float32, shape: [-1, 4, 9, 8]}, {name: off, dtype: float32, shape: [-1, 36, 4, 3]}, "
    "{name: w, dtype: float32, shape: [6, 2, 3, 3]}, {name: mk, dtype: float32, shape: [-1, 18, 4, 3]}, "
    "{name: b, dtype: float32, shape: [-1, 4]}, {name: bn, dtype: int32, shape: [2]}, "
    "{name: n, dtype: int64, shape: [1]}, {name: s, dtype: float32, shape: [1]}, "
    "{name: i, dtype: int64, shape: [3, 5]}, {name: t, dtype: float32, shape: [3, 8]}, "
    "{name: wd, dtype: float64, shape: [6, 2, 3, 3]}]";

std::string deform(const std::string& in, int dg, int groups) {
  return fmt::format("  - {{op: deformable_conv, in: [{}], out: [o], attrs: {{strides: [2, 2], paddings: [1, 1], "
                     "dilations: [2, 2], deformable_groups: {}, groups: {}, im2col_step: 64}}}}\n",
                     in, dg, groups);
}

}  // namespace

TEST_CASE("shape rules: deformable_conv's output, offset and mask dims, and its errors") {
  // (9 + 2 - 5) / 2 + 1 = 4, (8 + 2 - 5) / 2 + 1 = 3.
  CHECK(det_shape(kDetInputs, deform("x, off, w, mk", 2, 2), "o") == "float32[s0, 6, 4, 3]");
  CHECK(det_shape(kDetInputs, deform("x, off, w, ~", 2, 2), "o") == "float32[s0, 6, 4, 3]");
  CHECK(det_mentions(det_error(kDetInputs, deform("x, off, w, mk", 1, 2)), "offset must be [s0, 18, 4, 3]"));
  CHECK(det_mentions(det_error(kDetInputs, deform("x, off, w, mk", 2, 1)), "does not fit x"));
  CHECK(det_mentions(det_error(kDetInputs, deform("x, off, wd, mk", 2, 2)), "dtype conflict"));
  CHECK(det_mentions(det_error(kDetInputs, deform("x, off, w, mk", 4, 2)), "do not split into 4"));
}

TEST_CASE("shape rules: roi_align, index_sample and isnan") {
  const std::string roi = "  - {op: roi_align, in: [x, b, bn], out: [o], attrs: {pooled_height: 7, pooled_width: 5, "
                          "spatial_scale: 0.25, sampling_ratio: -1, aligned: true}}\n";
  CHECK(det_shape(kDetInputs, roi, "o") == "float32[s3, 4, 7, 5]");
  CHECK(det_mentions(det_error(kDetInputs, "  - {op: roi_align, in: [x, i, bn], out: [o], attrs: {pooled_height: 1, "
                                           "pooled_width: 1, spatial_scale: 1.0, sampling_ratio: -1, aligned: false}}\n"),
                     "dtype conflict"));
  CHECK(det_mentions(det_error(kDetInputs, "  - {op: roi_align, in: [x, b, s], out: [o], attrs: {pooled_height: 1, "
                                           "pooled_width: 1, spatial_scale: 1.0, sampling_ratio: -1, aligned: false}}\n"),
                     "boxes_num must be a 1-D int32 or int64"));
  CHECK(det_shape(kDetInputs, "  - {op: index_sample, in: [t, i], out: [o]}\n", "o") == "float32[3, 5]");
  CHECK(det_mentions(det_error(kDetInputs, "  - {op: index_sample, in: [t, t], out: [o]}\n"), "int32 or int64"));
  CHECK(det_shape(kDetInputs, "  - {op: isnan, in: [x], out: [o]}\n", "o") == "bool[s0, 4, 9, 8]");
}

TEST_CASE("shape rules: linspace takes its size from a constant number, else says where the value comes from") {
  const std::string consts = "  - {op: full, out: [a], attrs: {shape: [1], value: 0.0, dtype: float32}}\n"
                             "  - {op: full, out: [c], attrs: {shape: [1], value: 7, dtype: int64}}\n";
  CHECK(det_shape(kDetInputs, consts + "  - {op: linspace, in: [a, s, c], out: [o], attrs: {dtype: float64}}\n", "o") ==
        "float64[7]");
  const std::string from_input = det_error(kDetInputs, consts + "  - {op: linspace, in: [a, s, n], out: [o], "
                                                                "attrs: {dtype: float32}}\n");
  CHECK(det_mentions(from_input, "run-time value of 'number'"));
  CHECK(det_mentions(det_error(kDetInputs, consts + "  - {op: linspace, in: [a, s, s], out: [o], "
                                                    "attrs: {dtype: float32}}\n"),
                     "number must be int32 or int64"));
}

TEST_CASE("shape rules: repeat_interleave's repeated axis over a symbolic batch, and its errors") {
  auto rep = [](int repeats, int axis, int output_size) {
    return fmt::format("  - {{op: repeat_interleave, in: [b], out: [o], attrs: {{repeats: {}, axis: {}, "
                       "output_size: {}}}}}\n",
                       repeats, axis, output_size);
  };
  CHECK(det_shape(kDetInputs, rep(3, 1, -1), "o") == "float32[s3, 12]");
  CHECK(det_shape(kDetInputs, rep(2, 0, -1), "o") == "float32[2 * s3, 4]");
  CHECK(det_shape(kDetInputs, rep(2, -1, 8), "o") == "float32[s3, 8]");
  CHECK(det_mentions(det_error(kDetInputs, rep(0, 1, -1)), "repeats must be positive"));
  CHECK(det_mentions(det_error(kDetInputs, rep(2, 2, -1)), "axis"));
  CHECK(det_mentions(det_error(kDetInputs, rep(2, 1, 9)), "output_size is 9"));
}

TEST_CASE("shape rules: prior_box's [H, W, priors, 4] over a symbolic feature map, and its errors") {
  const char* inputs =
      "[{name: f, dtype: float32, shape: [1, 8, -1, -1]}, {name: im, dtype: float32, shape: [1, 3, -1, -1]}]";
  auto prior = [](const std::string& attrs) {
    return "  - {op: prior_box, in: [f, im], out: [o, v], attrs: {" + attrs + "}}\n";
  };
  // Ratios 1, 2, 1/2 (flip; the repeated 2 once) for two min sizes, plus two max-size squares: 8 priors.
  Analyzed a = analyze(inputs,
                       prior("min_sizes: [10.0, 30.0], max_sizes: [20.0, 45.0], aspect_ratios: [2.0, 2.0], "
                             "variances: [0.1, 0.1, 0.2, 0.2], flip: true"),
                       "[o, v]");
  REQUIRE(a.analysis);
  CHECK(a.shape("o") == "float32[s0, s1, 8, 4]");
  CHECK(a.shape("v") == "float32[s0, s1, 8, 4]");
  CHECK(det_mentions(det_error(inputs, prior("min_sizes: [], variances: [0.1, 0.1, 0.2, 0.2]")),
                     "min_sizes must not be empty"));
  CHECK(det_mentions(det_error(inputs, prior("min_sizes: [10.0], max_sizes: [5.0], variances: [0.1, 0.1, 0.2, 0.2]")),
                     "must exceed min_sizes[0]"));
  CHECK(det_mentions(det_error(inputs, prior("min_sizes: [10.0], variances: [0.1]")), "variances must have 4 values"));
}

TEST_CASE("shape rules: yolo_box's boxes and scores over a symbolic map, and its errors") {
  const char* inputs =
      "[{name: x, dtype: float32, shape: [-1, 27, -1, -1]}, {name: im, dtype: int32, shape: [-1, 2]}, "
      "{name: imf, dtype: float32, shape: [-1, 2]}]";
  auto yolo = [](const std::string& in, const std::string& attrs) {
    return "  - {op: yolo_box, in: [" + in + "], out: [o, s], attrs: {" + attrs + "}}\n";
  };
  Analyzed a = analyze(inputs, yolo("x, im", "anchors: [10, 13, 16, 30, 33, 23], class_num: 4"), "[o, s]");
  REQUIRE(a.analysis);
  CHECK(a.shape("o") == "float32[s0, 3 * s1 * s2, 4]");
  CHECK(a.shape("s") == "float32[s0, 3 * s1 * s2, 4]");
  CHECK(det_mentions(det_error(inputs, yolo("x, im", "anchors: [10, 13, 16, 30, 33, 23], class_num: 5")),
                     "must have 30 channels: 3 anchors of 5 classes"));
  CHECK(det_mentions(det_error(inputs, yolo("x, im", "anchors: [10, 13, 16], class_num: 4")),
                     "anchors must hold (width, height) pairs"));
  CHECK(det_mentions(det_error(inputs, yolo("x, imf", "anchors: [10, 13, 16, 30, 33, 23], class_num: 4")),
                     "img_size must be int32"));
}

TEST_CASE("shape rules: generate_proposals' rows are data-dependent, bounded by the proposals kept per image") {
  const char* inputs =
      "[{name: sc, dtype: float32, shape: [2, 3, 8, 10]}, {name: d, dtype: float32, shape: [2, 12, 8, 10]}, "
      "{name: im, dtype: float32, shape: [2, 2]}, {name: an, dtype: float32, shape: [-1, 4]}, "
      "{name: dd, dtype: float64, shape: [2, 12, 8, 10]}, {name: d5, dtype: float32, shape: [2, 12, 8, 9]}]";
  auto gp = [](const std::string& in, int pre, int post, double nms) {
    return fmt::format("  - {{op: generate_proposals, in: [{}], out: [o, p, n], attrs: {{pre_nms_top_n: {}, "
                       "post_nms_top_n: {}, nms_thresh: {}, min_size: 0.0, eta: 1.0, pixel_offset: false}}}}\n",
                       in, pre, post, nms);
  };
  Analyzed a = analyze(inputs, gp("sc, d, im, an, an", 100, 30, 0.7), "[o, p, n]");
  REQUIRE(a.analysis);
  CHECK(a.shape("o") == "float32[s1, 4]");  // s0: an's rows; s1 at most 2 * 30
  CHECK(a.shape("p") == "float32[s1, 1]");
  CHECK(a.shape("n") == "int32[2]");
  REQUIRE(a.analysis->symbols.size() == 2);
  CHECK(a.analysis->symbols[1].bound == SymExpr(60));
  // Without NMS post_nms_top_n does not cut; pre_nms_top_n beyond the 240 anchors keeps them all.
  Analyzed b = analyze(inputs, gp("sc, d, im, an, an", 1000, 30, 0.0), "[o, p, n]");
  REQUIRE(b.analysis);
  CHECK(b.analysis->symbols[1].bound == SymExpr(480));
  CHECK(det_mentions(det_error(inputs, gp("sc, dd, im, an, an", 100, 30, 0.7)), "dtype conflict"));
  CHECK(det_mentions(det_error(inputs, gp("sc, d5, im, an, an", 100, 30, 0.7)), "bbox_deltas must be [2, 12, 8, 10]"));
}

TEST_CASE("shape rules: distribute_fpn_proposals' restore_index has fpn_rois' rows") {
  // Paddle's has rois_num's sum of rows, which is fpn_rois' R wherever rois_num counts every roi (the kernels check
  // it): Cascade R-CNN's gather by it meets [1000, 1] tensors as the same rows.
  const char* inputs = "[{name: b, dtype: float32, shape: [1000, 4]}, {name: bn, dtype: int32, shape: [1]}]";
  const std::string op =
      "  - {op: distribute_fpn_proposals, in: [b, bn], out: [levels, nums, r], attrs: {min_level: 2, max_level: 3, "
      "refer_level: 4, refer_scale: 224, pixel_offset: true}}\n";
  CHECK(det_shape(inputs, op, "r") == "int32[1000, 1]");
  const char* dynamic = "[{name: b, dtype: float64, shape: [-1, 4]}, {name: bn, dtype: int64, shape: [-1]}]";
  CHECK(det_shape(dynamic, op, "r") == "int32[s0, 1]");
}

TEST_CASE("shape rules: distribute_fpn_proposals needs rois_num") {
  const char* inputs = "[{name: b, dtype: float32, shape: [-1, 4]}, {name: bn, dtype: float32, shape: [2]}]";
  const std::string attrs =
      "attrs: {min_level: 2, max_level: 5, refer_level: 4, refer_scale: 224, pixel_offset: false}";
  CHECK(det_mentions(det_error(inputs, "  - {op: distribute_fpn_proposals, in: [b, ~], out: [o], " + attrs + "}\n"),
                     "rois_num is required"));
  CHECK(det_mentions(det_error(inputs, "  - {op: distribute_fpn_proposals, in: [b, bn], out: [o], " + attrs + "}\n"),
                     "rois_num must be a 1-D int32 or int64 tensor"));
}
