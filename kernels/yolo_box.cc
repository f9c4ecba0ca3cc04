// yolo_box (YOLOv3's head decoding): Paddle's YoloBoxKernel (phi/kernels/cpu/yolo_box_kernel.cc with
// funcs/yolo_box_util.h) and its YoloBoxInferMeta. The arithmetic is Paddle's, type for type: the sigmoid divides in
// double and rounds to T, the box centres and sizes mix T with float scale and integer grid sizes as Paddle's
// expressions do, so that float32 results agree bit for bit.
#include <cmath>
#include <cstring>
#include <vector>

#include "kernel_util.h"
#include "kforge_kernels.h"

namespace kforge {

namespace {

// funcs::sigmoid: 1.0 / (1.0 + exp(-x)), exp in T, the division in double.
template <typename T>
T yolo_sigmoid(T x) {
  return static_cast<T>(1.0 / (1.0 + std::exp(-x)));
}

// funcs::GetEntryIndex: entry `entry` (0-3 box, 4 objectness, 5.. classes) of anchor an of cell hw.
int64_t entry_index(int64_t batch, int64_t an, int64_t hw, int64_t an_num, int64_t an_stride, int64_t stride,
                    int64_t entry, bool iou_aware) {
  if (iou_aware) return (batch * an_num + an) * an_stride + (batch * an_num + an_num + entry) * stride + hw;
  return (batch * an_num + an) * an_stride + entry * stride + hw;
}

}  // namespace

namespace meta {

Status YoloBoxInferMeta(const Tensor& x, const Tensor& img_size, const std::vector<int>& anchors, int class_num,
                        float conf_thresh, int downsample_ratio, bool clip_bbox, float scale_x_y, bool iou_aware,
                        float iou_aware_factor, Tensor* boxes, Tensor* scores) {
  (void)conf_thresh;
  (void)downsample_ratio;
  (void)clip_bbox;
  (void)scale_x_y;
  static constexpr const char* kOp = "YoloBoxInferMeta";
  if (x.ndim != 4) return Status::Error(kOp, ": x must be 4-D NCHW, got ", x.dims_string());
  if (x.dtype != DataType::kFloat32 && x.dtype != DataType::kFloat64) {
    return Status::Error(kOp, ": x must be float32 or float64, got ", x.dtype);
  }
  if (anchors.empty() || anchors.size() % 2 != 0) {
    return Status::Error(kOp, ": anchors must hold (width, height) pairs, got ", anchors.size(), " values");
  }
  if (class_num <= 0) return Status::Error(kOp, ": class_num must be positive, got ", class_num);
  const int64_t an_num = static_cast<int64_t>(anchors.size() / 2);
  const int64_t want_c = an_num * ((iou_aware ? 6 : 5) + class_num);
  if (x.dims[1] != want_c) {
    return Status::Error(kOp, ": x has ", x.dims[1], " channels, ", an_num, " anchors of ", class_num,
                         " classes need ", want_c);
  }
  if (iou_aware && !(iou_aware_factor >= 0 && iou_aware_factor <= 1)) {
    return Status::Error(kOp, ": iou_aware_factor must be in [0, 1], got ", iou_aware_factor);
  }
  if (img_size.ndim != 2 || img_size.dims[1] != 2 || img_size.dims[0] != x.dims[0]) {
    return Status::Error(kOp, ": img_size must be [", x.dims[0], ", 2], got ", img_size.dims_string());
  }
  if (img_size.dtype != DataType::kInt32) return Status::Error(kOp, ": img_size must be int32, got ", img_size.dtype);
  if (boxes == nullptr || scores == nullptr) return Status::Error(kOp, ": output is null");
  const int64_t box_num = x.dims[2] * x.dims[3] * an_num;
  boxes->dtype = x.dtype;
  KFORGE_RETURN_IF_ERROR(boxes->set_dims({x.dims[0], box_num, 4}));
  scores->dtype = x.dtype;
  return scores->set_dims({x.dims[0], box_num, static_cast<int64_t>(class_num)});
}

}  // namespace meta

namespace kernels {

Status yolo_box(const KernelContext& ctx, const Tensor& x, const Tensor& img_size, const std::vector<int>& anchors,
                int class_num, float conf_thresh, int downsample_ratio, bool clip_bbox, float scale_x_y,
                bool iou_aware, float iou_aware_factor, Tensor* boxes, Tensor* scores) {
  static constexpr const char* kOp = "yolo_box";
  KFORGE_RETURN_IF_ERROR(util::require_output(boxes, kOp, "boxes"));
  KFORGE_RETURN_IF_ERROR(util::require_output(scores, kOp, "scores"));
  Tensor want_boxes, want_scores;
  KFORGE_RETURN_IF_ERROR(meta::YoloBoxInferMeta(x, img_size, anchors, class_num, conf_thresh, downsample_ratio,
                                                clip_bbox, scale_x_y, iou_aware, iou_aware_factor, &want_boxes,
                                                &want_scores));
  KFORGE_RETURN_IF_ERROR(util::require_dims(*boxes, want_boxes, kOp, "boxes"));
  KFORGE_RETURN_IF_ERROR(util::require_dims(*scores, want_scores, kOp, "scores"));
  return util::visit_float(util::kernel_dtype(ctx, x), kOp, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    if (boxes->dtype != x.dtype || scores->dtype != x.dtype) {
      return Status::Error(kOp, ": boxes and scores must be ", x.dtype);
    }
    const int64_t n = x.dims[0], h = x.dims[2], w = x.dims[3];
    const int64_t box_num = want_boxes.dims[1];
    const int64_t an_num = static_cast<int64_t>(anchors.size() / 2);
    const int64_t input_h = downsample_ratio * h, input_w = downsample_ratio * w;
    const int64_t stride = h * w, an_stride = (class_num + 5) * stride;
    const float scale = scale_x_y, bias = -0.5f * (scale - 1.f);
    const T* in = x.data_as<const T>();
    const int* im = img_size.data_as<const int>();
    T* bx = boxes->data_as<T>();
    T* sc = scores->data_as<T>();
    std::memset(bx, 0, boxes->bytes());
    std::memset(sc, 0, scores->bytes());
    for (int64_t i = 0; i < n; ++i) {
      const int64_t img_h = im[2 * i], img_w = im[2 * i + 1];
      for (int64_t j = 0; j < an_num; ++j) {
        for (int64_t k = 0; k < h; ++k) {
          for (int64_t l = 0; l < w; ++l) {
            const int64_t hw = k * w + l;
            T conf = yolo_sigmoid<T>(in[entry_index(i, j, hw, an_num, an_stride, stride, 4, iou_aware)]);
            if (iou_aware) {
              // funcs::GetIoUIndex: the IoU channels come first, one per anchor.
              const T iou = yolo_sigmoid<T>(in[i * an_num * an_stride + (i * an_num + j) * stride + hw]);
              conf = std::pow(conf, static_cast<T>(1. - iou_aware_factor)) *
                     std::pow(iou, static_cast<T>(iou_aware_factor));
            }
            if (conf < conf_thresh) continue;
            const int64_t b = entry_index(i, j, hw, an_num, an_stride, stride, 0, iou_aware);
            // funcs::GetYoloBox (l is the column i there, k the row j).
            const T cx = (l + yolo_sigmoid<T>(in[b]) * scale + bias) * img_w / w;
            const T cy = (k + yolo_sigmoid<T>(in[b + stride]) * scale + bias) * img_h / h;
            const T bw = std::exp(in[b + 2 * stride]) * anchors[static_cast<size_t>(2 * j)] * img_w / input_w;
            const T bh = std::exp(in[b + 3 * stride]) * anchors[static_cast<size_t>(2 * j + 1)] * img_h / input_h;
            // funcs::CalcDetectionBox.
            T* o = bx + (i * box_num + j * stride + hw) * 4;
            o[0] = cx - bw / 2;
            o[1] = cy - bh / 2;
            o[2] = cx + bw / 2;
            o[3] = cy + bh / 2;
            if (clip_bbox) {
              o[0] = o[0] > 0 ? o[0] : static_cast<T>(0);
              o[1] = o[1] > 0 ? o[1] : static_cast<T>(0);
              o[2] = o[2] < img_w - 1 ? o[2] : static_cast<T>(img_w - 1);
              o[3] = o[3] < img_h - 1 ? o[3] : static_cast<T>(img_h - 1);
            }
            // funcs::CalcLabelScore.
            const int64_t label = entry_index(i, j, hw, an_num, an_stride, stride, 5, iou_aware);
            T* s = sc + (i * box_num + j * stride + hw) * class_num;
            for (int64_t c = 0; c < class_num; ++c) s[c] = conf * yolo_sigmoid<T>(in[label + c * stride]);
          }
        }
      }
    }
    return Status::OK();
  });
}

}  // namespace kernels

}  // namespace kforge
