// The index-mapped CUDA kernels of the detection ops no fused group takes (cuda_index_compute_call.h), each an element
// of kforge_index.cuh computed as the CPU kernel computes it, in its order and types:
//   - roi_align (kernels/detection.cc): one thread per output element [r, c, ph, pw], roi_align_at;
//   - yolo_box (kernels/yolo_box.cc): one thread per box coordinate (yolo_box_at) and one per class score
//     (yolo_score_at), each deciding its anchor's confidence again (below conf_thresh: 0, as the CPU kernel's
//     zeroed outputs).
// The plan's form of each call (passes/cuda_plan_compute.h) is what is rendered: every check is the plan's.
#include "codegen/cuda_index_compute_call.h"

namespace kforge::codegen::index_text::compute_internal {

void ComputeCall::roi_align() {
  const uint32_t x = call_.tensor_arg("x"), boxes = call_.tensor_arg("boxes"), num = call_.tensor_arg("boxes_num");
  const uint32_t out = out_value();
  const std::string type = form_type();
  const SymShape& xd = value(x).dims;
  KernelText k = text();
  const std::string in = k.input(x, type), b = k.input(boxes, type);
  const bool counted = num != kNone;
  const std::string count_type = counted ? *move_type(form_.index_dtype) : "int64_t";
  const std::string n = counted ? k.input(num, count_type) : fmt::format("static_cast<const {}*>(nullptr)", count_type);
  k.output(out, type);
  // kforge_index.cuh's RoiGeometry, in its fields' order.
  tmpl::List geometry;
  for (const SymExpr& d : xd) geometry.push_back(k.size(d));
  geometry.push_back(std::to_string(form_.pooled_h));
  geometry.push_back(std::to_string(form_.pooled_w));
  geometry.push_back(cuda_device_constant(form_.spatial_scale, "float"));
  geometry.push_back(std::to_string(form_.sampling_ratio));
  geometry.push_back(form_.aligned ? "true" : "false");
  tmpl::Value s = statements_of("roi_align");
  s.set("type", type);
  s.set("count_type", count_type);
  s.set("x", in);
  s.set("boxes", b);
  s.set("boxes_num", n);
  s.set("geometry", tmpl::Value(std::move(geometry)));
  k.statements(std::move(s));
  add(k, value(out).numel(), true);
}

void ComputeCall::yolo_box() {
  const uint32_t x = call_.tensor_arg("x"), img = call_.tensor_arg("img_size");
  const std::string type = form_type();
  const SymShape& xd = value(x).dims;
  for (size_t part = 0; part < 2; ++part) {
    const uint32_t out = part < call_.outputs.size() && call_.outputs[part].values.size() == 1
                             ? call_.outputs[part].values[0]
                             : kNone;
    if (out == kNone) continue;
    KernelText k = text();
    const std::string in = k.input(x, type);
    const std::string sizes = part == 0 ? k.input(img, "int32_t") : "";
    k.output(out, type);
    // kforge_index.cuh's YoloGeometry, in its fields' order.
    tmpl::List geometry;
    geometry.push_back(k.size(xd[2]));
    geometry.push_back(k.size(xd[3]));
    geometry.push_back(std::to_string(form_.anchors.size() / 2));
    geometry.push_back(std::to_string(form_.class_num));
    geometry.push_back(std::to_string(form_.downsample_ratio));
    geometry.push_back(cuda_device_constant(form_.conf_thresh, "float"));
    geometry.push_back(cuda_device_constant(form_.scale_x_y, "float"));
    geometry.push_back(cuda_device_constant(form_.iou_aware_factor, "float"));
    geometry.push_back(form_.clip ? "true" : "false");
    geometry.push_back(form_.iou_aware ? "true" : "false");
    tmpl::List anchors;
    for (int64_t a : form_.anchors) anchors.push_back(std::to_string(a));
    tmpl::Value s = statements_of("yolo_box");
    s.set("type", type);
    s.set("scores", part == 1);
    s.set("x", in);
    s.set("img_size", sizes);
    s.set("anchors", tmpl::Value(std::move(anchors)));
    s.set("geometry", tmpl::Value(std::move(geometry)));
    k.statements(std::move(s));
    add(k, value(out).numel(), true);
  }
}

}  // namespace kforge::codegen::index_text::compute_internal
