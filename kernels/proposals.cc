// The region proposals of two-stage detectors (Faster / Mask / Cascade R-CNN): Paddle's GenerateProposalsKernel (v2,
// phi/kernels/cpu/generate_proposals_kernel.cc with funcs/detection/nms_util.h) and DistributeFpnProposalsKernel
// (phi/kernels/cpu/distribute_fpn_proposals_kernel.cc), step for step: the same std::sort / std::nth_element over
// the same int index array with the same comparison (so that ties among the scores come out in Paddle's order), the
// same stable sort and pop-from-the-back order in NMS, and the same mix of T, float and double in the box arithmetic.
// Their outputs' first dims depend on the data: the infer-metas give the most they can be, the kernels set dims[0].
#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>
#include <vector>

#include "kernel_util.h"
#include "kforge_kernels.h"

namespace kforge {

namespace {

// Per image: the scores kept before NMS (pre_nms_top_n of M), then at most post_nms_top_n after it, at least the one
// row of zeros Paddle writes when no box survives the size filter.
int64_t proposals_per_image(int64_t m, int pre_nms_top_n, int post_nms_top_n, float nms_thresh) {
  int64_t k = (pre_nms_top_n <= 0 || pre_nms_top_n >= m) ? m : pre_nms_top_n;
  if (nms_thresh > 0 && post_nms_top_n > 0) k = std::min<int64_t>(k, post_nms_top_n);
  return std::max<int64_t>(k, 1);
}

// funcs::BBoxArea of nms_util.h (normalized: no +1) and of distribute_fpn_proposals_functor.h (pixel_offset: +1).
template <typename T>
T box_area(const T* b, bool plus_one) {
  if (b[2] < b[0] || b[3] < b[1]) return static_cast<T>(0.);
  const T w = b[2] - b[0], h = b[3] - b[1];
  return plus_one ? (w + 1) * (h + 1) : w * h;
}

// funcs::JaccardOverlap.
template <typename T>
T jaccard_overlap(const T* a, const T* b, bool normalized) {
  if (b[0] > a[2] || b[2] < a[0] || b[1] > a[3] || b[3] < a[1]) return static_cast<T>(0.);
  const T norm = normalized ? static_cast<T>(0.) : static_cast<T>(1.);
  const T iw = std::min(a[2], b[2]) - std::max(a[0], b[0]) + norm;
  const T ih = std::min(a[3], b[3]) - std::max(a[1], b[1]) + norm;
  const T inter = iw * ih;
  return inter / (box_area(a, !normalized) + box_area(b, !normalized) - inter);
}

// funcs::NMS: the boxes by score ascending (stable), taken from the back, each kept unless it overlaps a kept one by
// more than the threshold (which eta shrinks after each kept box while above 0.5). The kept rows, in that order.
template <typename T>
std::vector<int> nms(const std::vector<T>& boxes, const std::vector<T>& scores, T threshold, float eta,
                     bool pixel_offset) {
  std::vector<std::pair<T, int>> sorted;
  sorted.reserve(scores.size());
  for (size_t i = 0; i < scores.size(); ++i) sorted.emplace_back(scores[i], static_cast<int>(i));
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const std::pair<T, int>& a, const std::pair<T, int>& b) { return a.first < b.first; });
  const bool normalized = !pixel_offset;
  std::vector<int> selected;
  T adaptive = threshold;
  while (!sorted.empty()) {
    const int idx = sorted.back().second;
    bool keep = true;
    for (int kept : selected) {
      if (!keep) break;
      keep = jaccard_overlap(&boxes[4 * static_cast<size_t>(idx)], &boxes[4 * static_cast<size_t>(kept)],
                             normalized) <= adaptive;
    }
    if (keep) selected.push_back(idx);
    sorted.pop_back();
    if (keep && eta < 1 && adaptive > 0.5) adaptive *= eta;
  }
  return selected;
}

// ProposalForOneImage: boxes [count, 4] and their scores [count] appended to `rois` and `probs`.
template <typename T>
void proposals_for_image(const T* scores, const T* deltas, const T* anchors, const T* variances, const T* im_shape,
                         int64_t a_count, int64_t hw, int pre_nms_top_n, int post_nms_top_n, float nms_thresh,
                         float min_size, float eta, bool pixel_offset, std::vector<T>* rois, std::vector<T>* probs) {
  static const double kBBoxClipDefault = std::log(1000.0 / 16.0);
  const int64_t m = a_count * hw;
  // Row r = (h * W + w) * A + a of the image's [H, W, A] scores and [H, W, 4A] deltas (Paddle transposes NCHW to
  // NHWC first).
  auto score_at = [&](int64_t r) { return scores[(r % a_count) * hw + r / a_count]; };
  auto delta_at = [&](int64_t r, int64_t k) { return deltas[(4 * (r % a_count) + k) * hw + r / a_count]; };
  std::vector<T> flat(static_cast<size_t>(m));
  for (int64_t r = 0; r < m; ++r) flat[static_cast<size_t>(r)] = score_at(r);
  std::vector<int> index(static_cast<size_t>(m));
  for (int i = 0; i < static_cast<int>(m); ++i) index[static_cast<size_t>(i)] = i;
  const T* sd = flat.data();
  auto compare = [sd](const int64_t& i, const int64_t& j) { return sd[i] > sd[j]; };
  int64_t count = m;
  if (pre_nms_top_n <= 0 || pre_nms_top_n >= m) {
    std::sort(index.begin(), index.end(), compare);
  } else {
    std::nth_element(index.begin(), index.begin() + pre_nms_top_n, index.end(), compare);
    count = pre_nms_top_n;
  }
  // BoxCoder, then ClipTiledBoxes (is_scale false), over the selected rows.
  const T offset = pixel_offset ? static_cast<T>(1.0) : 0;
  const T zero(0);
  const T im_h = im_shape[0], im_w = im_shape[1];
  std::vector<T> boxes(static_cast<size_t>(4 * count)), sel_scores(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    const int64_t r = index[static_cast<size_t>(i)];
    sel_scores[static_cast<size_t>(i)] = flat[static_cast<size_t>(r)];
    const T* an = anchors + 4 * r;
    const T* var = variances + 4 * r;
    const T aw = an[2] - an[0] + offset, ah = an[3] - an[1] + offset;
    // The centre in double, rounded to T, as Paddle's.
    const T acx = static_cast<T>(an[0] + 0.5 * aw), acy = static_cast<T>(an[1] + 0.5 * ah);
    const T cx = var[0] * delta_at(r, 0) * aw + acx;
    const T cy = var[1] * delta_at(r, 1) * ah + acy;
    const T bw = std::exp(std::min<T>(var[2] * delta_at(r, 2), kBBoxClipDefault)) * aw;
    const T bh = std::exp(std::min<T>(var[3] * delta_at(r, 3), kBBoxClipDefault)) * ah;
    T* b = &boxes[static_cast<size_t>(4 * i)];
    b[0] = cx - bw / 2;
    b[1] = cy - bh / 2;
    b[2] = cx + bw / 2 - offset;
    b[3] = cy + bh / 2 - offset;
    for (int k = 0; k < 4; ++k) b[k] = std::max(std::min(b[k], (k % 2 == 0 ? im_w : im_h) - offset), zero);
  }
  // FilterBoxes (is_scale false): wide and high enough, and (with pixel_offset) the centre inside the image.
  const float min_side = std::max(min_size, 1.0f);
  std::vector<int> keep;
  for (int64_t i = 0; i < count; ++i) {
    const T* b = &boxes[static_cast<size_t>(4 * i)];
    const T ws = b[2] - b[0] + offset, hs = b[3] - b[1] + offset;
    bool ok = ws >= min_side && hs >= min_side;
    if (pixel_offset) ok = ok && b[0] + ws / 2 <= im_w && b[1] + hs / 2 <= im_h;
    if (ok) keep.push_back(static_cast<int>(i));
  }
  if (keep.empty()) {  // one box of zeros with score 0
    rois->insert(rois->end(), 4, T(0));
    probs->push_back(T(0));
    return;
  }
  std::vector<T> kept_boxes, kept_scores;
  for (int i : keep) {
    kept_boxes.insert(kept_boxes.end(), &boxes[4 * static_cast<size_t>(i)], &boxes[4 * static_cast<size_t>(i)] + 4);
    kept_scores.push_back(sel_scores[static_cast<size_t>(i)]);
  }
  if (nms_thresh <= 0) {
    rois->insert(rois->end(), kept_boxes.begin(), kept_boxes.end());
    probs->insert(probs->end(), kept_scores.begin(), kept_scores.end());
    return;
  }
  std::vector<int> order = nms(kept_boxes, kept_scores, static_cast<T>(nms_thresh), eta, pixel_offset);
  if (post_nms_top_n > 0 && post_nms_top_n < static_cast<int64_t>(order.size())) {
    order.resize(static_cast<size_t>(post_nms_top_n));
  }
  for (int i : order) {
    rois->insert(rois->end(), &kept_boxes[4 * static_cast<size_t>(i)], &kept_boxes[4 * static_cast<size_t>(i)] + 4);
    probs->push_back(kept_scores[static_cast<size_t>(i)]);
  }
}

// The rows of each image of fpn_rois: rois_num's running sums (funcs::GetLodFromRoisNum).
Status rois_lod(const char* op, const Tensor& rois_num, std::vector<int64_t>* lod) {
  lod->assign(1, 0);
  for (int64_t i = 0, n = rois_num.numel(); i < n; ++i) {
    const int64_t v = rois_num.dtype == DataType::kInt64 ? rois_num.data_as<const int64_t>()[i]
                                                          : rois_num.data_as<const int32_t>()[i];
    if (v < 0) return Status::Error(op, ": rois_num[", i, "] is negative (", v, ")");
    lod->push_back(lod->back() + v);
  }
  return Status::OK();
}

// out has room for `capacity` rows (and the same trailing dims) of its dtype.
Status check_rows(const char* op, const char* name, const Tensor* out, const Tensor& capacity) {
  KFORGE_RETURN_IF_ERROR(kernels::util::require_output(out, op, name));
  bool fits = out->dtype == capacity.dtype && out->ndim == capacity.ndim && out->dims[0] >= capacity.dims[0];
  for (int32_t a = 1; fits && a < out->ndim; ++a) fits = out->dims[a] == capacity.dims[a];
  if (!fits) {
    return Status::Error(op, ": ", name, " ", out->dtype, " ", out->dims_string(), " has no room for ", capacity.dtype,
                         " ", capacity.dims_string(), " (its size depends on the data: lay it out for the most)");
  }
  return Status::OK();
}

}  // namespace

namespace meta {

Status GenerateProposalsV2InferMeta(const Tensor& scores, const Tensor& bbox_deltas, const Tensor& im_shape,
                                    const Tensor& anchors, const Tensor& variances, int pre_nms_top_n,
                                    int post_nms_top_n, float nms_thresh, float min_size, float eta, bool pixel_offset,
                                    Tensor* rpn_rois, Tensor* rpn_roi_probs, Tensor* rpn_rois_num) {
  (void)min_size;
  (void)eta;
  (void)pixel_offset;
  static constexpr const char* kOp = "GenerateProposalsV2InferMeta";
  if (scores.ndim != 4 || bbox_deltas.ndim != 4) {
    return Status::Error(kOp, ": scores ", scores.dims_string(), " and bbox_deltas ", bbox_deltas.dims_string(),
                         " must be 4-D NCHW");
  }
  if (anchors.dtype != DataType::kFloat32 && anchors.dtype != DataType::kFloat64) {
    return Status::Error(kOp, ": anchors must be float32 or float64, got ", anchors.dtype);
  }
  for (const Tensor* t : {&scores, &bbox_deltas, &im_shape, &variances}) {
    if (t->dtype != anchors.dtype) {
      return Status::Error(kOp, ": every input must be ", anchors.dtype, ", got ", t->dtype);
    }
  }
  const int64_t n = scores.dims[0], a = scores.dims[1], hw = scores.dims[2] * scores.dims[3];
  if (bbox_deltas.dims[0] != n || bbox_deltas.dims[1] != 4 * a || bbox_deltas.dims[2] != scores.dims[2] ||
      bbox_deltas.dims[3] != scores.dims[3]) {
    return Status::Error(kOp, ": bbox_deltas ", bbox_deltas.dims_string(), " must be [N, 4A, H, W] for scores ",
                         scores.dims_string());
  }
  if (anchors.numel() != 4 * a * hw || variances.numel() != 4 * a * hw) {
    return Status::Error(kOp, ": anchors ", anchors.dims_string(), " and variances ", variances.dims_string(),
                         " must hold 4 values for each of the ", a * hw, " anchors of scores ", scores.dims_string());
  }
  if (im_shape.numel() < 2 * n) return Status::Error(kOp, ": im_shape ", im_shape.dims_string(), " must be [N, 2]");
  if (rpn_rois == nullptr || rpn_roi_probs == nullptr) return Status::Error(kOp, ": output is null");
  const int64_t rows = n * proposals_per_image(a * hw, pre_nms_top_n, post_nms_top_n, nms_thresh);
  rpn_rois->dtype = anchors.dtype;
  KFORGE_RETURN_IF_ERROR(rpn_rois->set_dims({rows, 4}));
  rpn_roi_probs->dtype = anchors.dtype;
  KFORGE_RETURN_IF_ERROR(rpn_roi_probs->set_dims({rows, 1}));
  if (rpn_rois_num != nullptr) {
    rpn_rois_num->dtype = DataType::kInt32;
    KFORGE_RETURN_IF_ERROR(rpn_rois_num->set_dims({n}));
  }
  return Status::OK();
}

Status DistributeFpnProposalsInferMeta(const Tensor& fpn_rois, const Tensor* rois_num, int min_level, int max_level,
                                       int refer_level, int refer_scale, bool pixel_offset,
                                       MutableTensorList multi_fpn_rois, MutableTensorList multi_level_rois_num,
                                       Tensor* restore_index) {
  (void)refer_level;
  (void)pixel_offset;
  static constexpr const char* kOp = "DistributeFpnProposalsInferMeta";
  if (fpn_rois.ndim != 2 || fpn_rois.dims[1] != 4) {
    return Status::Error(kOp, ": fpn_rois must be [R, 4], got ", fpn_rois.dims_string());
  }
  if (fpn_rois.dtype != DataType::kFloat32 && fpn_rois.dtype != DataType::kFloat64) {
    return Status::Error(kOp, ": fpn_rois must be float32 or float64, got ", fpn_rois.dtype);
  }
  if (rois_num == nullptr) {
    return Status::Error(kOp, ": rois_num is required (kforge's tensors carry no LoD to count each image's rois)");
  }
  if (rois_num->ndim != 1 || (rois_num->dtype != DataType::kInt32 && rois_num->dtype != DataType::kInt64)) {
    return Status::Error(kOp, ": rois_num must be a 1-D int32 or int64 tensor, got ", rois_num->dtype, " ",
                         rois_num->dims_string());
  }
  if (max_level < min_level) return Status::Error(kOp, ": max_level ", max_level, " is below min_level ", min_level);
  if (refer_scale <= 0) return Status::Error(kOp, ": refer_scale must be positive, got ", refer_scale);
  const size_t levels = static_cast<size_t>(max_level - min_level + 1);
  if (multi_fpn_rois.size != levels) {
    return Status::Error(kOp, ": multi_fpn_rois has ", multi_fpn_rois.size, " tensors, levels ", min_level, " to ",
                         max_level, " need ", levels);
  }
  if (!multi_level_rois_num.empty() && multi_level_rois_num.size != levels) {
    return Status::Error(kOp, ": multi_level_rois_num has ", multi_level_rois_num.size, " tensors, not ", levels);
  }
  if (restore_index == nullptr) return Status::Error(kOp, ": restore_index is null");
  const int64_t r = fpn_rois.dims[0];
  for (Tensor* t : multi_fpn_rois) {
    t->dtype = fpn_rois.dtype;
    KFORGE_RETURN_IF_ERROR(t->set_dims({r, 4}));
  }
  for (Tensor* t : multi_level_rois_num) {
    t->dtype = DataType::kInt32;
    KFORGE_RETURN_IF_ERROR(t->set_dims({rois_num->dims[0]}));
  }
  restore_index->dtype = DataType::kInt32;
  return restore_index->set_dims({r, 1});
}

}  // namespace meta

namespace kernels {

Status generate_proposals(const KernelContext& ctx, const Tensor& scores, const Tensor& bbox_deltas,
                          const Tensor& im_shape, const Tensor& anchors, const Tensor& variances, int pre_nms_top_n,
                          int post_nms_top_n, float nms_thresh, float min_size, float eta, bool pixel_offset,
                          Tensor* rpn_rois, Tensor* rpn_roi_probs, Tensor* rpn_rois_num) {
  static constexpr const char* kOp = "generate_proposals";
  Tensor c_rois, c_probs, c_num;
  KFORGE_RETURN_IF_ERROR(meta::GenerateProposalsV2InferMeta(scores, bbox_deltas, im_shape, anchors, variances,
                                                            pre_nms_top_n, post_nms_top_n, nms_thresh, min_size, eta,
                                                            pixel_offset, &c_rois, &c_probs, &c_num));
  KFORGE_RETURN_IF_ERROR(check_rows(kOp, "rpn_rois", rpn_rois, c_rois));
  KFORGE_RETURN_IF_ERROR(check_rows(kOp, "rpn_roi_probs", rpn_roi_probs, c_probs));
  if (rpn_rois_num != nullptr) KFORGE_RETURN_IF_ERROR(util::require_dims(*rpn_rois_num, c_num, kOp, "rpn_rois_num"));
  if (rpn_rois_num != nullptr && rpn_rois_num->dtype != DataType::kInt32) {
    return Status::Error(kOp, ": rpn_rois_num must be int32, got ", rpn_rois_num->dtype);
  }
  return util::visit_float(util::kernel_dtype(ctx, anchors), kOp, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const int64_t n = scores.dims[0], a = scores.dims[1], hw = scores.dims[2] * scores.dims[3];
    std::vector<T> rois, probs;
    int64_t total = 0;
    for (int64_t i = 0; i < n; ++i) {
      proposals_for_image<T>(scores.data_as<const T>() + i * a * hw, bbox_deltas.data_as<const T>() + i * 4 * a * hw,
                             anchors.data_as<const T>(), variances.data_as<const T>(),
                             im_shape.data_as<const T>() + 2 * i, a, hw, pre_nms_top_n, post_nms_top_n, nms_thresh,
                             min_size, eta, pixel_offset, &rois, &probs);
      const int64_t count = static_cast<int64_t>(probs.size()) - total;
      if (rpn_rois_num != nullptr) rpn_rois_num->data_as<int32_t>()[i] = static_cast<int32_t>(count);
      total += count;
    }
    std::memcpy(rpn_rois->data, rois.data(), rois.size() * sizeof(T));
    std::memcpy(rpn_roi_probs->data, probs.data(), probs.size() * sizeof(T));
    rpn_rois->dims[0] = total;
    rpn_roi_probs->dims[0] = total;
    return Status::OK();
  });
}

Status distribute_fpn_proposals(const KernelContext& ctx, const Tensor& fpn_rois, const Tensor* rois_num,
                                int min_level, int max_level, int refer_level, int refer_scale, bool pixel_offset,
                                MutableTensorList multi_fpn_rois, MutableTensorList multi_level_rois_num,
                                Tensor* restore_index) {
  static constexpr const char* kOp = "distribute_fpn_proposals";
  const size_t levels = multi_fpn_rois.size;
  std::vector<Tensor> c_rois(levels), c_nums(multi_level_rois_num.size);
  std::vector<Tensor*> p_rois, p_nums;
  for (Tensor& t : c_rois) p_rois.push_back(&t);
  for (Tensor& t : c_nums) p_nums.push_back(&t);
  Tensor c_restore;
  KFORGE_RETURN_IF_ERROR(meta::DistributeFpnProposalsInferMeta(
      fpn_rois, rois_num, min_level, max_level, refer_level, refer_scale, pixel_offset,
      MutableTensorList{p_rois.data(), p_rois.size()}, MutableTensorList{p_nums.data(), p_nums.size()}, &c_restore));
  for (size_t l = 0; l < levels; ++l) {
    KFORGE_RETURN_IF_ERROR(check_rows(kOp, "multi_fpn_rois", &multi_fpn_rois[l], c_rois[l]));
  }
  for (size_t l = 0; l < c_nums.size(); ++l) {
    KFORGE_RETURN_IF_ERROR(util::require_dims(multi_level_rois_num[l], c_nums[l], kOp, "multi_level_rois_num"));
  }
  KFORGE_RETURN_IF_ERROR(check_rows(kOp, "restore_index", restore_index, c_restore));
  std::vector<int64_t> lod;
  KFORGE_RETURN_IF_ERROR(rois_lod(kOp, *rois_num, &lod));
  const int64_t total = lod.back();
  if (total != fpn_rois.dims[0]) {
    // restore_index has fpn_rois' rows (the shape rule's R; Paddle's has rois_num's sum, the same count whenever
    // rois_num counts every roi).
    return Status::Error(kOp, ": rois_num counts ", total, " rois, fpn_rois has ", fpn_rois.dims[0],
                         " (restore_index is laid out for every row of fpn_rois)");
  }
  return util::visit_float(util::kernel_dtype(ctx, fpn_rois), kOp, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* rois = fpn_rois.data_as<const T>();
    std::vector<int> target(static_cast<size_t>(total));
    std::vector<int64_t> per_level(levels, 0);
    for (int64_t i = 0; i < total; ++i) {
      const T scale = std::sqrt(box_area(rois + 4 * i, pixel_offset));
      int lvl = static_cast<int>(std::floor(std::log2(scale / refer_scale + static_cast<T>(1e-6)) + refer_level));
      lvl = std::min(max_level, std::max(lvl, min_level));
      target[static_cast<size_t>(i)] = lvl;
      ++per_level[static_cast<size_t>(lvl - min_level)];
    }
    // Level l's rows start at the sum of the levels before it in the concatenation restore_index refers to.
    std::vector<int64_t> start(levels + 1, 0), filled(levels, 0);
    for (size_t l = 0; l < levels; ++l) start[l + 1] = start[l] + per_level[l];
    int32_t* restore = restore_index->data_as<int32_t>();
    for (size_t img = 0; img + 1 < lod.size(); ++img) {
      std::vector<int32_t> in_image(levels, 0);
      for (int64_t i = lod[img]; i < lod[img + 1]; ++i) {
        const size_t l = static_cast<size_t>(target[static_cast<size_t>(i)] - min_level);
        std::memcpy(multi_fpn_rois[l].data_as<T>() + 4 * filled[l], rois + 4 * i, 4 * sizeof(T));
        restore[i] = static_cast<int32_t>(start[l] + filled[l]);
        ++filled[l];
        ++in_image[l];
      }
      for (size_t l = 0; l < multi_level_rois_num.size; ++l) {
        multi_level_rois_num[l].data_as<int32_t>()[img] = in_image[l];
      }
    }
    for (size_t l = 0; l < levels; ++l) multi_fpn_rois[l].dims[0] = per_level[l];
    restore_index->dims[0] = total;
    return Status::OK();
  });
}

}  // namespace kernels

}  // namespace kforge
