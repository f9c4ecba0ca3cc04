// Shape rules of the ops issue 34 adds last: IsfiniteInferMeta (isnan), LinspaceInferMeta, IndexSampleInferMeta,
// RoiAlignInferMeta and DeformableConvInferMeta, mirroring kernels/meta_detection.cc over symbolic dims; and the
// ops of detection post-processing whose output size depends on their input's data (NonZeroInferMeta,
// MaskedSelectInferMeta, UniqueRawInferMeta, and the region proposals' GenerateProposalsV2InferMeta and
// DistributeFpnProposalsInferMeta): that size is a new data-dependent symbol (OpContext::data_dependent_dim); and
// YoloBoxInferMeta.
#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "passes/op_context.h"
#include "passes/shape_rule_helpers.h"

namespace kforge::passes::detail {

namespace {

using ir::DataType;

bool det_is_index(DataType d) { return d == DataType::kInt32 || d == DataType::kInt64; }
bool det_is_float(DataType d) { return d == DataType::kFloat32 || d == DataType::kFloat64; }

/// Two dims that must be equal: false only when both are static and differ.
bool det_may_match(const SymExpr& a, const SymExpr& b) { return a == b || !a.is_constant() || !b.is_constant(); }

#define DET_TENSOR(var, index)                                                                                  \
  const ValueInfo* var = c.tensor(c.param(index));                                                              \
  if (!(var)) return fmt::format("input '{}' is required to infer the output shape", c.param(index));           \
  if ((var)->is_vector) return fmt::format("input '{}' must be a tensor, got a list", c.param(index));

std::string isfinite_rule(OpContext& c) {
  DET_TENSOR(x, 0);
  c.set_result(0, DataType::kBool, x->dims);
  return "";
}

/// linspace: [number]; number must be known when kforge generates code (a constant of the program).
std::string linspace_rule(OpContext& c) {
  DET_TENSOR(start, 0);
  DET_TENSOR(stop, 1);
  DET_TENSOR(number, 2);
  if (!det_is_index(number->dtype)) {
    return fmt::format("{} must be int32 or int64, got {}", c.param(2), ir::dtype_name(number->dtype));
  }
  const DataType dtype = c.dtype_value(c.param(3)).value_or(DataType::kFloat32);
  if (!det_is_float(dtype) && !det_is_index(dtype)) {
    return fmt::format("dtype must be float32, float64, int32 or int64, got {}", ir::dtype_name(dtype));
  }
  (void)start;
  (void)stop;
  if (!number->data || number->data->numel() != 1) return c.runtime_value(c.param(2));
  const SymExpr n = number->data->int_at(0);
  if (auto v = n.constant(); v && *v < 0) return fmt::format("{} must not be negative, got {}", c.param(2), *v);
  c.set_result(0, dtype, {n});
  return "";
}

/// prior_box: [H, W, priors, 4] of input's feature map for both outputs; priors from the sizes and ratios as
/// kernels/prior_box.cc counts them.
std::string prior_box_rule(OpContext& c) {
  DET_TENSOR(input, 0);
  DET_TENSOR(image, 1);
  if (input->dims.size() != 4) return fmt::format("input must be 4-D NCHW, got {}", to_string(input->dims));
  if (image->dims.size() != 4) return fmt::format("image must be 4-D NCHW, got {}", to_string(image->dims));
  if (!det_is_float(input->dtype)) return fmt::format("input must be float32 or float64, got {}", ir::dtype_name(input->dtype));
  const std::vector<double> min_sizes = c.floats("min_sizes"), max_sizes = c.floats("max_sizes");
  if (min_sizes.empty()) return "min_sizes must not be empty";
  for (double s : min_sizes) {
    if (!(s > 0)) return fmt::format("min_sizes must be positive, got {}", s);
  }
  if (!max_sizes.empty() && max_sizes.size() != min_sizes.size()) {
    return fmt::format("max_sizes has {} values, min_sizes {}", max_sizes.size(), min_sizes.size());
  }
  for (size_t i = 0; i < max_sizes.size(); ++i) {
    if (!(max_sizes[i] > min_sizes[i])) return fmt::format("max_sizes[{}] ({}) must exceed min_sizes[{}]", i, max_sizes[i], i);
  }
  if (c.floats("variances").size() != 4) return fmt::format("variances must have 4 values, got {}", c.floats("variances").size());
  // Paddle's ExpandAspectRatios: 1, then each new ratio (and its inverse with flip).
  const bool flip = c.bool_value("flip").value_or(true);
  std::vector<double> ratios = {1.0};
  for (double ar : c.floats("aspect_ratios")) {
    const auto f = static_cast<float>(ar);
    if (std::any_of(ratios.begin(), ratios.end(), [&](double o) { return std::fabs(f - static_cast<float>(o)) < 1e-6f; })) continue;
    ratios.push_back(f);
    if (flip) ratios.push_back(1.0f / f);
  }
  const auto priors = static_cast<int64_t>(ratios.size() * min_sizes.size() + max_sizes.size());
  const SymShape dims = {input->dims[2], input->dims[3], SymExpr(priors), SymExpr(4)};
  c.set_result(0, input->dtype, dims);
  c.set_result(1, input->dtype, dims);
  return "";
}

std::string index_sample_rule(OpContext& c) {
  DET_TENSOR(x, 0);
  DET_TENSOR(index, 1);
  if (x->dims.size() != 2) return fmt::format("x must be 2-D, got {}", to_string(x->dims));
  if (index->dims.size() != 2) return fmt::format("index must be 2-D, got {}", to_string(index->dims));
  if (!det_is_index(index->dtype)) return fmt::format("index must be int32 or int64, got {}", ir::dtype_name(index->dtype));
  if (!det_may_match(x->dims[0], index->dims[0])) {
    return fmt::format("index {} and x {} must have the same first dim", to_string(index->dims), to_string(x->dims));
  }
  c.set_result(0, x->dtype, index->dims);
  return "";
}

std::string roi_align_rule(OpContext& c) {
  DET_TENSOR(x, 0);
  DET_TENSOR(boxes, 1);
  if (x->dims.size() != 4) return fmt::format("x must be 4-D NCHW, got {}", to_string(x->dims));
  if (!det_is_float(x->dtype)) return fmt::format("x must be float32 or float64, got {}", ir::dtype_name(x->dtype));
  if (boxes->dtype != x->dtype) return dtype_conflict("x", x->dtype, "boxes", boxes->dtype);
  if (boxes->dims.size() != 2 || !det_may_match(boxes->dims[1], SymExpr(4))) {
    return fmt::format("boxes must be [num_rois, 4], got {}", to_string(boxes->dims));
  }
  if (const ValueInfo* num = c.tensor(c.param(2))) {
    if (num->is_vector || num->dims.size() != 1 || !det_is_index(num->dtype)) {
      return fmt::format("boxes_num must be a 1-D int32 or int64 tensor, got {} {}", ir::dtype_name(num->dtype),
                         to_string(num->dims));
    }
  }
  const int64_t ph = c.static_int(c.param(3)).value_or(1), pw = c.static_int(c.param(4)).value_or(1);
  if (ph <= 0 || pw <= 0) return fmt::format("pooled_height and pooled_width must be positive, got {} and {}", ph, pw);
  c.set_result(0, x->dtype, {boxes->dims[0], x->dims[1], SymExpr(ph), SymExpr(pw)});
  return "";
}

std::string deformable_conv_rule(OpContext& c) {
  DET_TENSOR(x, 0);
  DET_TENSOR(offset, 1);
  DET_TENSOR(filter, 2);
  if (x->dims.size() != 4) return fmt::format("x must be 4-D NCHW, got {}", to_string(x->dims));
  if (!det_is_float(x->dtype)) return fmt::format("x must be float32 or float64, got {}", ir::dtype_name(x->dtype));
  if (filter->dtype != x->dtype) return dtype_conflict("x", x->dtype, "filter", filter->dtype);
  if (offset->dtype != x->dtype) return dtype_conflict("x", x->dtype, "offset", offset->dtype);
  if (filter->dims.size() != 4 || offset->dims.size() != 4) {
    return fmt::format("filter {} and offset {} must be 4-D", to_string(filter->dims), to_string(offset->dims));
  }
  auto strides = c.static_ints(c.param(4)), paddings = c.static_ints(c.param(5)), dilations = c.static_ints(c.param(6));
  if (!strides || !paddings || !dilations) return "strides, paddings and dilations must be constants";
  if (strides->size() != 2 || paddings->size() != 2 || dilations->size() != 2) {
    return "strides, paddings and dilations must have 2 values each";
  }
  if ((*strides)[0] <= 0 || (*strides)[1] <= 0 || (*dilations)[0] <= 0 || (*dilations)[1] <= 0 ||
      (*paddings)[0] < 0 || (*paddings)[1] < 0) {
    return "strides and dilations must be positive, paddings not negative";
  }
  const int64_t dg = c.static_int(c.param(7)).value_or(1), groups = c.static_int(c.param(8)).value_or(1);
  if (dg <= 0 || groups <= 0) return "deformable_groups and groups must be positive";
  auto kh = filter->dims[2].constant(), kw = filter->dims[3].constant();
  if (!kh || !kw) return "the filter's spatial dims must be static";
  if (!det_may_match(x->dims[1], filter->dims[1] * groups)) {
    return fmt::format("filter {} does not fit x {} in {} groups", to_string(filter->dims), to_string(x->dims), groups);
  }
  if (auto o = filter->dims[0].constant(); o && *o % dg != 0) {
    return fmt::format("filter's {} output channels do not split into {} deformable groups", *o, dg);
  }
  const SymExpr oh = SymExpr::floor_div(x->dims[2] + (2 * (*paddings)[0] - ((*dilations)[0] * (*kh - 1) + 1)),
                                        (*strides)[0]) + 1;
  const SymExpr ow = SymExpr::floor_div(x->dims[3] + (2 * (*paddings)[1] - ((*dilations)[1] * (*kw - 1) + 1)),
                                        (*strides)[1]) + 1;
  for (const SymExpr* o : {&oh, &ow}) {
    if (auto v = o->constant(); v && *v <= 0) {
      return fmt::format("x {} with filter {} gives an empty output", to_string(x->dims), to_string(filter->dims));
    }
  }
  const SymShape want_offset = {x->dims[0], SymExpr(2 * dg * *kh * *kw), oh, ow};
  for (size_t i = 0; i < 4; ++i) {
    if (!det_may_match(offset->dims[i], want_offset[i])) {
      return fmt::format("offset must be {}, got {}", to_string(want_offset), to_string(offset->dims));
    }
  }
  if (const ValueInfo* mask = c.tensor(c.param(3))) {
    const SymShape want_mask = {x->dims[0], SymExpr(dg * *kh * *kw), oh, ow};
    if (mask->is_vector || mask->dims.size() != 4) return fmt::format("mask must be {}", to_string(want_mask));
    if (mask->dtype != x->dtype) return dtype_conflict("x", x->dtype, "mask", mask->dtype);
    for (size_t i = 0; i < 4; ++i) {
      if (!det_may_match(mask->dims[i], want_mask[i])) {
        return fmt::format("mask must be {}, got {}", to_string(want_mask), to_string(mask->dims));
      }
    }
  }
  c.set_result(0, x->dtype, {x->dims[0], filter->dims[0], oh, ow});
  return "";
}

/// nonzero: [count, rank] int64, the coordinates of the nonzero elements; count is known once the op ran.
std::string nonzero_rule(OpContext& c) {
  DET_TENSOR(condition, 0);
  const SymExpr rows = c.data_dependent_dim(0, 0, sym_numel(condition->dims), "the number of nonzero elements");
  c.set_result(0, DataType::kInt64, {rows, SymExpr(static_cast<int64_t>(condition->dims.size()))});
  return "";
}

/// masked_select: the elements of x where mask (broadcast with x) is true, in row-major order: [count].
std::string masked_select_rule(OpContext& c) {
  DET_TENSOR(x, 0);
  DET_TENSOR(mask, 1);
  if (mask->dtype != DataType::kBool) return fmt::format("mask must be bool, got {}", ir::dtype_name(mask->dtype));
  std::optional<SymShape> both = c.broadcast(x->dims, mask->dims);
  if (!both) return fmt::format("x {} and mask {} do not broadcast", to_string(x->dims), to_string(mask->dims));
  const SymExpr count = c.data_dependent_dim(0, 0, sym_numel(*both), "the number of selected elements");
  c.set_result(0, x->dtype, {count});
  return "";
}

/// unique over the flattened x (axis empty), sorted: out [count], indices [count], inverse [numel], counts [count];
/// along an axis a: the distinct slices along it, out x's dims with count at a, inverse [x.dims[a]]; one
/// data-dependent count for out, indices and counts.
std::string unique_rule(OpContext& c) {
  DET_TENSOR(x, 0);
  const std::optional<std::vector<int64_t>> axis = c.static_ints(c.param(4));
  if (!axis) return "axis must be a constant";
  if (axis->size() > 1) return fmt::format("unique along more than one axis is not supported, got {}", axis->size());
  if (c.bool_value(c.param(6)) == false) {
    return "is_sorted false (the legacy unique, in first-occurrence order) is not supported";
  }
  const DataType index = c.dtype_value(c.param(5)).value_or(DataType::kInt64);
  if (!det_is_index(index)) return fmt::format("dtype must be int32 or int64, got {}", ir::dtype_name(index));
  if (axis->size() == 1) {
    const int64_t rank = static_cast<int64_t>(x->dims.size());
    const int64_t a = (*axis)[0] < 0 ? (*axis)[0] + rank : (*axis)[0];
    if (a < 0 || a >= rank) return fmt::format("axis {} is out of range for {}", (*axis)[0], to_string(x->dims));
    const SymExpr length = x->dims[static_cast<size_t>(a)];
    const SymExpr count =
        c.data_dependent_dim(0, static_cast<uint32_t>(a), length, fmt::format("the number of unique slices along axis {}", a));
    SymShape dims = x->dims;
    dims[static_cast<size_t>(a)] = count;
    c.set_result(0, x->dtype, dims);
    if (c.result_count() > 1) c.set_result(1, index, {count});
    if (c.result_count() > 2) c.set_result(2, index, {length});
    if (c.result_count() > 3) c.set_result(3, index, {count});
    return "";
  }
  const SymExpr numel = sym_numel(x->dims);
  const SymExpr count = c.data_dependent_dim(0, 0, numel, "the number of unique elements");
  c.set_result(0, x->dtype, {count});
  if (c.result_count() > 1) c.set_result(1, index, {count});
  if (c.result_count() > 2) c.set_result(2, index, {numel});
  if (c.result_count() > 3) c.set_result(3, index, {count});
  return "";
}

/// yolo_box: boxes [N, A * H * W, 4] and scores [N, A * H * W, class_num] of x [N, A * (5 + class_num), H, W]
/// (6 with iou_aware), A the anchors' pairs; img_size [N, 2] int32.
std::string yolo_box_rule(OpContext& c) {
  DET_TENSOR(x, 0);
  DET_TENSOR(img_size, 1);
  if (x->dims.size() != 4) return fmt::format("x must be 4-D NCHW, got {}", to_string(x->dims));
  if (!det_is_float(x->dtype)) return fmt::format("x must be float32 or float64, got {}", ir::dtype_name(x->dtype));
  if (img_size->dtype != DataType::kInt32) {
    return fmt::format("img_size must be int32, got {}", ir::dtype_name(img_size->dtype));
  }
  if (img_size->dims.size() != 2 || !det_may_match(img_size->dims[1], SymExpr(2)) ||
      !det_may_match(img_size->dims[0], x->dims[0])) {
    return fmt::format("img_size must be [N, 2] for x {}, got {}", to_string(x->dims), to_string(img_size->dims));
  }
  const std::optional<std::vector<int64_t>> anchors = c.static_ints("anchors");
  if (!anchors) return "anchors must be a constant";
  if (anchors->empty() || anchors->size() % 2 != 0) {
    return fmt::format("anchors must hold (width, height) pairs, got {} values", anchors->size());
  }
  const int64_t classes = c.static_int("class_num").value_or(1);
  if (classes <= 0) return fmt::format("class_num must be positive, got {}", classes);
  const bool iou_aware = c.bool_value("iou_aware").value_or(false);
  const auto an = static_cast<int64_t>(anchors->size() / 2);
  if (!det_may_match(x->dims[1], SymExpr(an * ((iou_aware ? 6 : 5) + classes)))) {
    return fmt::format("x {} must have {} channels: {} anchors of {} classes{}", to_string(x->dims),
                       an * ((iou_aware ? 6 : 5) + classes), an, classes, iou_aware ? " with iou_aware" : "");
  }
  if (iou_aware) {
    const double factor = c.float_value("iou_aware_factor").value_or(0.5);
    if (!(factor >= 0 && factor <= 1)) return fmt::format("iou_aware_factor must be in [0, 1], got {}", factor);
  }
  const SymExpr boxes = x->dims[2] * x->dims[3] * an;
  c.set_result(0, x->dtype, {x->dims[0], boxes, SymExpr(4)});
  c.set_result(1, x->dtype, {x->dims[0], boxes, SymExpr(classes)});
  return "";
}

/// generate_proposals: rpn_rois [R, 4] and rpn_roi_probs [R, 1], R known once the kernel ran (at most N times the
/// proposals one image keeps: pre_nms_top_n of its A * H * W anchors, post_nms_top_n after NMS); rpn_rois_num [N]
/// int32 (Paddle's PIR declares it float32: its kernel writes int32, as the predictor returns it).
std::string generate_proposals_rule(OpContext& c) {
  DET_TENSOR(scores, 0);
  DET_TENSOR(deltas, 1);
  DET_TENSOR(im_shape, 2);
  DET_TENSOR(anchors, 3);
  DET_TENSOR(variances, 4);
  if (scores->dims.size() != 4) return fmt::format("scores must be 4-D NCHW, got {}", to_string(scores->dims));
  if (!det_is_float(anchors->dtype)) {
    return fmt::format("anchors must be float32 or float64, got {}", ir::dtype_name(anchors->dtype));
  }
  const std::pair<const char*, const ValueInfo*> others[] = {
      {"scores", scores}, {"bbox_deltas", deltas}, {"im_shape", im_shape}, {"variances", variances}};
  for (const auto& [name, v] : others) {
    if (v->dtype != anchors->dtype) return dtype_conflict("anchors", anchors->dtype, name, v->dtype);
  }
  const SymExpr n = scores->dims[0], a = scores->dims[1];
  const SymShape want_deltas = {n, a * 4, scores->dims[2], scores->dims[3]};
  bool deltas_fit = deltas->dims.size() == 4;
  for (size_t i = 0; deltas_fit && i < 4; ++i) deltas_fit = det_may_match(deltas->dims[i], want_deltas[i]);
  if (!deltas_fit) {
    return fmt::format("bbox_deltas must be {} for scores {}, got {}", to_string(want_deltas), to_string(scores->dims),
                       to_string(deltas->dims));
  }
  const SymExpr m = a * scores->dims[2] * scores->dims[3];
  const std::pair<const char*, const ValueInfo*> boxes[] = {{"anchors", anchors}, {"variances", variances}};
  for (const auto& [name, v] : boxes) {
    if (!det_may_match(sym_numel(v->dims), m * 4)) {
      return fmt::format("{} {} must hold 4 values for each of the {} anchors of scores {}", name, to_string(v->dims),
                         m.to_string(), to_string(scores->dims));
    }
  }
  if (im_shape->dims.size() != 2 || !det_may_match(im_shape->dims[1], SymExpr(2))) {
    return fmt::format("im_shape must be [N, 2], got {}", to_string(im_shape->dims));
  }
  const std::optional<int64_t> pre = c.static_int("pre_nms_top_n"), post = c.static_int("post_nms_top_n");
  const std::optional<double> nms = c.float_value("nms_thresh");
  if (!pre || !post || !nms) return "pre_nms_top_n, post_nms_top_n and nms_thresh must be constants";
  // As kernels/proposals.cc counts them (at least one row per image: Paddle's zeros when no box is kept).
  SymExpr per_image = *pre > 0 ? SymExpr::min(m, SymExpr(*pre)) : m;
  if (*nms > 0 && *post > 0) per_image = SymExpr::min(per_image, SymExpr(*post));
  if (per_image.constant()) per_image = SymExpr(std::max<int64_t>(*per_image.constant(), 1));
  const SymExpr rows = c.data_dependent_dim(0, 0, n * per_image, "the number of proposals");
  c.set_result(0, anchors->dtype, {rows, SymExpr(4)});
  c.set_result(1, anchors->dtype, {rows, SymExpr(1)});
  if (c.result_count() > 2) c.set_result(2, DataType::kInt32, {n});
  return "";
}

/// distribute_fpn_proposals: for each level of min_level..max_level, its rois [R_l, 4] and (optional) each image's
/// count [N] int32; restore_index [R, 1] int32. R_l is known once the kernel ran, at most fpn_rois' R. Paddle's
/// restore_index has rois_num's sum of rows: a permutation of the rois rois_num counts, which are all of fpn_rois'
/// rows wherever fpn_rois is what generate_proposals made (Paddle's programs record R, 1000 for Cascade R-CNN's
/// rois); the kernels check that the sum is R at run time (an error otherwise). So a program's restore_index
/// meets fpn_rois-sized tensors in broadcasts as the same rows. rois_num is required: kforge's tensors carry no LoD.
std::string distribute_fpn_proposals_rule(OpContext& c) {
  DET_TENSOR(rois, 0);
  if (rois->dims.size() != 2 || !det_may_match(rois->dims[1], SymExpr(4))) {
    return fmt::format("fpn_rois must be [R, 4], got {}", to_string(rois->dims));
  }
  if (!det_is_float(rois->dtype)) {
    return fmt::format("fpn_rois must be float32 or float64, got {}", ir::dtype_name(rois->dtype));
  }
  const ValueInfo* num = c.tensor(c.param(1));
  if (!num) return "rois_num is required: kforge's tensors carry no LoD to count each image's rois";
  if (num->is_vector || num->dims.size() != 1 || !det_is_index(num->dtype)) {
    return fmt::format("rois_num must be a 1-D int32 or int64 tensor, got {} {}", ir::dtype_name(num->dtype),
                       to_string(num->dims));
  }
  const std::optional<int64_t> lo = c.static_int("min_level"), hi = c.static_int("max_level");
  const std::optional<int64_t> scale = c.static_int("refer_scale");
  if (!lo || !hi || !scale) return "min_level, max_level and refer_scale must be constants";
  if (*hi < *lo) return fmt::format("max_level ({}) must not be below min_level ({})", *hi, *lo);
  if (*scale <= 0) return fmt::format("refer_scale must be positive, got {}", *scale);
  const auto levels = static_cast<uint32_t>(*hi - *lo + 1);
  std::vector<ValueInfo> level_rois, level_nums;
  for (uint32_t l = 0; l < levels; ++l) {
    ValueInfo r;
    r.known = true;
    r.dtype = rois->dtype;
    r.dims = {c.data_dependent_element_dim(0, l, 0, rois->dims[0], fmt::format("the rois of level {}", *lo + l)),
              SymExpr(4)};
    level_rois.push_back(std::move(r));
    ValueInfo k;
    k.known = true;
    k.dtype = DataType::kInt32;
    k.dims = {num->dims[0]};
    level_nums.push_back(std::move(k));
  }
  c.set_result_list(0, std::move(level_rois));
  if (c.result_count() > 1) c.set_result_list(1, std::move(level_nums));
  if (c.result_count() > 2) {
    c.set_result(2, DataType::kInt32, {rois->dims[0], SymExpr(1)});
  }
  return "";
}

}  // namespace

const std::map<std::string, std::string (*)(OpContext&)>& detection_shape_rules() {
  static const std::map<std::string, std::string (*)(OpContext&)> kRules = {
      {"IsfiniteInferMeta", isfinite_rule},
      {"LinspaceInferMeta", linspace_rule},
      {"IndexSampleInferMeta", index_sample_rule},
      {"RoiAlignInferMeta", roi_align_rule},
      {"PriorBoxInferMeta", prior_box_rule},
      {"YoloBoxInferMeta", yolo_box_rule},
      {"GenerateProposalsV2InferMeta", generate_proposals_rule},
      {"DistributeFpnProposalsInferMeta", distribute_fpn_proposals_rule},
      {"DeformableConvInferMeta", deformable_conv_rule},
      {"NonZeroInferMeta", nonzero_rule},
      {"MaskedSelectInferMeta", masked_select_rule},
      {"UniqueRawInferMeta", unique_rule},
  };
  return kRules;
}

}  // namespace kforge::passes::detail
