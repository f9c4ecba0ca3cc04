// The ops issue 34 adds last: deformable_conv, roi_align, isnan, linspace and index_sample (kernels/detection.cc);
// yolo_box; nonzero, masked_select, unique, generate_proposals and distribute_fpn_proposals, whose outputs are
// allocated for the most they can write (the infer-meta's dims) and which set their real dims.
// Operands in PIR order: tensor inputs, then mutable attributes (op_compat.yaml).
#include "op_helpers.h"

namespace kforge::interp {

using kforge::DataType;
using kforge::KernelContext;
using kforge::Status;
using kforge::Tensor;
using detail::run_many;
using detail::run_many;
using detail::run_one;

namespace {

namespace k = kforge::kernels;
namespace m = kforge::meta;

Status deformable_conv(const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                       std::vector<RtValue>& out) {
  const Tensor *x, *offset, *filter;
  KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
  KFORGE_RETURN_IF_ERROR(input_tensor(in, 1, "offset", &offset));
  KFORGE_RETURN_IF_ERROR(input_tensor(in, 2, "filter", &filter));
  const Tensor* mask = optional_tensor(in, 3);
  std::vector<int> strides, paddings, dilations;
  KFORGE_RETURN_IF_ERROR(attrs.get_int32s("strides", &strides));
  KFORGE_RETURN_IF_ERROR(attrs.get_int32s("paddings", &paddings));
  KFORGE_RETURN_IF_ERROR(attrs.get_int32s("dilations", &dilations));
  int deformable_groups, groups, im2col_step;
  KFORGE_RETURN_IF_ERROR(attrs.get_int32("deformable_groups", &deformable_groups, 1));
  KFORGE_RETURN_IF_ERROR(attrs.get_int32("groups", &groups, 1));
  KFORGE_RETURN_IF_ERROR(attrs.get_int32("im2col_step", &im2col_step, 64));
  return run_one(
      ctx, x->dtype, out,
      [&](Tensor* o) {
        return m::DeformableConvInferMeta(*x, *offset, *filter, mask, strides, paddings, dilations, deformable_groups,
                                          groups, im2col_step, o);
      },
      [&](const KernelContext& c, Tensor* o) {
        return k::deformable_conv(c, *x, *offset, *filter, mask, strides, paddings, dilations, deformable_groups,
                                  groups, im2col_step, o);
      });
}

Status roi_align(const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                 std::vector<RtValue>& out) {
  const Tensor *x, *boxes;
  KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
  KFORGE_RETURN_IF_ERROR(input_tensor(in, 1, "boxes", &boxes));
  const Tensor* boxes_num = optional_tensor(in, 2);
  int pooled_height, pooled_width, sampling_ratio;
  KFORGE_RETURN_IF_ERROR(attrs.get_int32("pooled_height", &pooled_height, 1));
  KFORGE_RETURN_IF_ERROR(attrs.get_int32("pooled_width", &pooled_width, 1));
  KFORGE_RETURN_IF_ERROR(attrs.get_int32("sampling_ratio", &sampling_ratio, -1));
  double spatial_scale;
  KFORGE_RETURN_IF_ERROR(attrs.get_float("spatial_scale", &spatial_scale, 1.0));
  bool aligned;
  KFORGE_RETURN_IF_ERROR(attrs.get_bool("aligned", &aligned, false));
  const float scale = static_cast<float>(spatial_scale);
  return run_one(
      ctx, x->dtype, out,
      [&](Tensor* o) {
        return m::RoiAlignInferMeta(*x, *boxes, boxes_num, pooled_height, pooled_width, scale, sampling_ratio,
                                    aligned, o);
      },
      [&](const KernelContext& c, Tensor* o) {
        return k::roi_align(c, *x, *boxes, boxes_num, pooled_height, pooled_width, scale, sampling_ratio, aligned,
                            o);
      });
}

Status isnan(const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap&, std::vector<RtValue>& out) {
  const Tensor* x;
  KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
  return run_one(
      ctx, x->dtype, out, [&](Tensor* o) { return m::IsfiniteInferMeta(*x, o); },
      [&](const KernelContext& c, Tensor* o) { return k::isnan(c, *x, o); });
}

Status linspace(const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                std::vector<RtValue>& out) {
  const Tensor *start, *stop, *number;
  KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "start", &start));
  KFORGE_RETURN_IF_ERROR(input_tensor(in, 1, "stop", &stop));
  KFORGE_RETURN_IF_ERROR(input_tensor(in, 2, "number", &number));
  DataType dtype;
  KFORGE_RETURN_IF_ERROR(attrs.get_dtype("dtype", &dtype, DataType::kFloat32));
  return run_one(
      ctx, dtype, out, [&](Tensor* o) { return m::LinspaceInferMeta(*start, *stop, *number, dtype, o); },
      [&](const KernelContext& c, Tensor* o) { return k::linspace(c, *start, *stop, *number, dtype, o); });
}

Status index_sample(const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap&,
                    std::vector<RtValue>& out) {
  const Tensor *x, *index;
  KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
  KFORGE_RETURN_IF_ERROR(input_tensor(in, 1, "index", &index));
  return run_one(
      ctx, x->dtype, out, [&](Tensor* o) { return m::IndexSampleInferMeta(*x, *index, o); },
      [&](const KernelContext& c, Tensor* o) { return k::index_sample(c, *x, *index, o); });
}

Status nonzero(const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap&, std::vector<RtValue>& out) {
  const Tensor* condition;
  KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "condition", &condition));
  return run_one(
      ctx, condition->dtype, out, [&](Tensor* o) { return m::NonZeroInferMeta(*condition, o); },
      [&](const KernelContext& c, Tensor* o) { return k::nonzero(c, *condition, o); });
}

Status masked_select(const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap&,
                     std::vector<RtValue>& out) {
  const Tensor *x, *mask;
  KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
  KFORGE_RETURN_IF_ERROR(input_tensor(in, 1, "mask", &mask));
  return run_one(
      ctx, x->dtype, out, [&](Tensor* o) { return m::MaskedSelectInferMeta(*x, *mask, o); },
      [&](const KernelContext& c, Tensor* o) { return k::masked_select(c, *x, *mask, o); });
}

Status unique(const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs, std::vector<RtValue>& out) {
  const Tensor* x;
  KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
  bool return_index, return_inverse, return_counts, is_sorted;
  KFORGE_RETURN_IF_ERROR(attrs.get_bool("return_index", &return_index, false));
  KFORGE_RETURN_IF_ERROR(attrs.get_bool("return_inverse", &return_inverse, false));
  KFORGE_RETURN_IF_ERROR(attrs.get_bool("return_counts", &return_counts, false));
  KFORGE_RETURN_IF_ERROR(attrs.get_bool("is_sorted", &is_sorted, false));
  std::vector<int64_t> axis64;
  KFORGE_RETURN_IF_ERROR(attrs.get_ints("axis", &axis64, {}));
  const std::vector<int> axis(axis64.begin(), axis64.end());
  DataType dtype;
  KFORGE_RETURN_IF_ERROR(attrs.get_dtype("dtype", &dtype, DataType::kInt64));
  return run_many(
      ctx, x->dtype, 4, out,
      [&](Tensor** o) {
        return m::UniqueRawInferMeta(*x, return_index, return_inverse, return_counts, axis, dtype, is_sorted, o[0], o[1],
                                     o[2], o[3]);
      },
      [&](const KernelContext& c, Tensor** o) {
        return k::unique(c, *x, return_index, return_inverse, return_counts, axis, dtype, is_sorted, o[0], o[1], o[2],
                         o[3]);
      });
}

Status prior_box(const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                 std::vector<RtValue>& out) {
  const Tensor *input, *image;
  KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "input", &input));
  KFORGE_RETURN_IF_ERROR(input_tensor(in, 1, "image", &image));
  std::vector<float> min_sizes, max_sizes, aspect_ratios, variances;
  KFORGE_RETURN_IF_ERROR(attrs.get_floats("min_sizes", &min_sizes, {}));
  KFORGE_RETURN_IF_ERROR(attrs.get_floats("max_sizes", &max_sizes, {}));
  KFORGE_RETURN_IF_ERROR(attrs.get_floats("aspect_ratios", &aspect_ratios, {}));
  KFORGE_RETURN_IF_ERROR(attrs.get_floats("variances", &variances, {}));
  bool flip, clip, order;
  KFORGE_RETURN_IF_ERROR(attrs.get_bool("flip", &flip, true));
  KFORGE_RETURN_IF_ERROR(attrs.get_bool("clip", &clip, true));
  KFORGE_RETURN_IF_ERROR(attrs.get_bool("min_max_aspect_ratios_order", &order, false));
  double step_w, step_h, offset;
  KFORGE_RETURN_IF_ERROR(attrs.get_float("step_w", &step_w, 0.0));
  KFORGE_RETURN_IF_ERROR(attrs.get_float("step_h", &step_h, 0.0));
  KFORGE_RETURN_IF_ERROR(attrs.get_float("offset", &offset, 0.5));
  const auto sw = static_cast<float>(step_w), sh = static_cast<float>(step_h), off = static_cast<float>(offset);
  return run_many(
      ctx, input->dtype, 2, out,
      [&](Tensor** o) {
        return m::PriorBoxInferMeta(*input, *image, min_sizes, max_sizes, aspect_ratios, variances, flip, clip, sw,
                                    sh, off, order, o[0], o[1]);
      },
      [&](const KernelContext& c, Tensor** o) {
        return k::prior_box(c, *input, *image, min_sizes, max_sizes, aspect_ratios, variances, flip, clip, sw, sh,
                            off, order, o[0], o[1]);
      });
}

Status yolo_box(const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                std::vector<RtValue>& out) {
  const Tensor *x, *img_size;
  KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "x", &x));
  KFORGE_RETURN_IF_ERROR(input_tensor(in, 1, "img_size", &img_size));
  std::vector<int> anchors;
  KFORGE_RETURN_IF_ERROR(attrs.get_int32s("anchors", &anchors));
  int class_num, downsample_ratio;
  KFORGE_RETURN_IF_ERROR(attrs.get_int32("class_num", &class_num, 1));
  KFORGE_RETURN_IF_ERROR(attrs.get_int32("downsample_ratio", &downsample_ratio, 32));
  double conf_thresh, scale_x_y, iou_aware_factor;
  KFORGE_RETURN_IF_ERROR(attrs.get_float("conf_thresh", &conf_thresh, 0.01));
  KFORGE_RETURN_IF_ERROR(attrs.get_float("scale_x_y", &scale_x_y, 1.0));
  KFORGE_RETURN_IF_ERROR(attrs.get_float("iou_aware_factor", &iou_aware_factor, 0.5));
  bool clip_bbox, iou_aware;
  KFORGE_RETURN_IF_ERROR(attrs.get_bool("clip_bbox", &clip_bbox, true));
  KFORGE_RETURN_IF_ERROR(attrs.get_bool("iou_aware", &iou_aware, false));
  const auto conf = static_cast<float>(conf_thresh), scale = static_cast<float>(scale_x_y),
             factor = static_cast<float>(iou_aware_factor);
  return run_many(
      ctx, x->dtype, 2, out,
      [&](Tensor** o) {
        return m::YoloBoxInferMeta(*x, *img_size, anchors, class_num, conf, downsample_ratio, clip_bbox, scale,
                                   iou_aware, factor, o[0], o[1]);
      },
      [&](const KernelContext& c, Tensor** o) {
        return k::yolo_box(c, *x, *img_size, anchors, class_num, conf, downsample_ratio, clip_bbox, scale, iou_aware,
                           factor, o[0], o[1]);
      });
}

Status generate_proposals(const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                          std::vector<RtValue>& out) {
  const Tensor *scores, *deltas, *im_shape, *anchors, *variances;
  KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "scores", &scores));
  KFORGE_RETURN_IF_ERROR(input_tensor(in, 1, "bbox_deltas", &deltas));
  KFORGE_RETURN_IF_ERROR(input_tensor(in, 2, "im_shape", &im_shape));
  KFORGE_RETURN_IF_ERROR(input_tensor(in, 3, "anchors", &anchors));
  KFORGE_RETURN_IF_ERROR(input_tensor(in, 4, "variances", &variances));
  int pre, post;
  KFORGE_RETURN_IF_ERROR(attrs.get_int32("pre_nms_top_n", &pre));
  KFORGE_RETURN_IF_ERROR(attrs.get_int32("post_nms_top_n", &post));
  double nms_thresh, min_size, eta;
  KFORGE_RETURN_IF_ERROR(attrs.get_float("nms_thresh", &nms_thresh));
  KFORGE_RETURN_IF_ERROR(attrs.get_float("min_size", &min_size));
  KFORGE_RETURN_IF_ERROR(attrs.get_float("eta", &eta));
  bool pixel_offset;
  KFORGE_RETURN_IF_ERROR(attrs.get_bool("pixel_offset", &pixel_offset, true));
  const auto nms = static_cast<float>(nms_thresh), min_sz = static_cast<float>(min_size), e = static_cast<float>(eta);
  return run_many(
      ctx, anchors->dtype, 3, out,
      [&](Tensor** o) {
        return m::GenerateProposalsV2InferMeta(*scores, *deltas, *im_shape, *anchors, *variances, pre, post, nms,
                                               min_sz, e, pixel_offset, o[0], o[1], o[2]);
      },
      [&](const KernelContext& c, Tensor** o) {
        return k::generate_proposals(c, *scores, *deltas, *im_shape, *anchors, *variances, pre, post, nms, min_sz, e,
                                     pixel_offset, o[0], o[1], o[2]);
      });
}

Status distribute_fpn_proposals(const KernelContext& ctx, const std::vector<RtValue>& in, const AttrMap& attrs,
                                std::vector<RtValue>& out) {
  const Tensor* rois;
  KFORGE_RETURN_IF_ERROR(input_tensor(in, 0, "fpn_rois", &rois));
  const Tensor* rois_num = optional_tensor(in, 1);
  int min_level, max_level, refer_level, refer_scale;
  KFORGE_RETURN_IF_ERROR(attrs.get_int32("min_level", &min_level));
  KFORGE_RETURN_IF_ERROR(attrs.get_int32("max_level", &max_level));
  KFORGE_RETURN_IF_ERROR(attrs.get_int32("refer_level", &refer_level));
  KFORGE_RETURN_IF_ERROR(attrs.get_int32("refer_scale", &refer_scale));
  bool pixel_offset;
  KFORGE_RETURN_IF_ERROR(attrs.get_bool("pixel_offset", &pixel_offset));
  const size_t levels = max_level >= min_level ? static_cast<size_t>(max_level - min_level + 1) : 0;
  std::vector<Tensor> level_rois(levels), level_nums(levels);
  Tensor restore;
  std::vector<Tensor*> p_rois, p_nums;
  for (Tensor& t : level_rois) p_rois.push_back(&t);
  for (Tensor& t : level_nums) p_nums.push_back(&t);
  const kforge::MutableTensorList l_rois{p_rois.data(), p_rois.size()}, l_nums{p_nums.data(), p_nums.size()};
  KFORGE_RETURN_IF_ERROR(m::DistributeFpnProposalsInferMeta(*rois, rois_num, min_level, max_level, refer_level,
                                                            refer_scale, pixel_offset, l_rois, l_nums, &restore));
  for (Tensor* t : p_rois) KFORGE_RETURN_IF_ERROR(allocate(t));
  for (Tensor* t : p_nums) KFORGE_RETURN_IF_ERROR(allocate(t));
  KFORGE_RETURN_IF_ERROR(allocate(&restore));
  KFORGE_RETURN_IF_ERROR(k::distribute_fpn_proposals(context_for(ctx, rois->dtype), *rois, rois_num, min_level,
                                                     max_level, refer_level, refer_scale, pixel_offset, l_rois,
                                                     l_nums, &restore));
  out.clear();
  out.push_back(RtValue::of_list(std::move(level_rois)));
  out.push_back(RtValue::of_list(std::move(level_nums)));
  out.push_back(RtValue::of(std::move(restore)));
  return Status::OK();
}

}  // namespace

void register_detection_ops(OpRegistry& r) {
  r.add("yolo_box", yolo_box);
  r.add("generate_proposals", generate_proposals);
  r.add("distribute_fpn_proposals", distribute_fpn_proposals);
  r.add("prior_box", prior_box);
  r.add("deformable_conv", deformable_conv);
  r.add("roi_align", roi_align);
  r.add("isnan", isnan);
  r.add("linspace", linspace);
  r.add("index_sample", index_sample);
  r.add("nonzero", nonzero);
  r.add("masked_select", masked_select);
  r.add("unique", unique);
}

}  // namespace kforge::interp
