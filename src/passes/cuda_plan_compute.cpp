// The CUDA target plan's forms of the computing index-mapped ops (cuda_plan_compute.h): the dispatch, the shared
// checks, and the ops that compute one element from its coordinate (dropout, interpolation, grid_sample, triu / tril,
// arange, linspace, full_with_tensor, cast, one_hot, pow, deformable_conv, prior_box) and the binary family
// (uniform, prelu, floor_divide). The reductions, scans, norms and einsum are cuda_plan_reduce.cpp's. Each check
// reads the call as its kernel in codegen/ renders it (codegen/cuda_index_compute.cpp, cuda_index_binary.cpp), with
// the reasons that codegen gave before the plan did.
#include <algorithm>
#include <cmath>

#include "passes/cuda_plan_compute_checks.h"
#include "passes/cuda_plan_index_checks.h"

namespace kforge::passes {

bool has_cuda_compute_form(const KernelCall& call) {
  const std::optional<CudaIndexFamily> family = cuda_index_family(call.op);
  return family == CudaIndexFamily::kCompute || family == CudaIndexFamily::kNorm ||
         family == CudaIndexFamily::kEinsum || family == CudaIndexFamily::kBinary;
}

std::optional<CudaComputeForm> plan_cuda_compute(const LoweredProgram& program, const KernelCall& call,
                                                 std::string* why) {
  why->clear();
  return cuda_plan_internal::ComputeChecks(program, call, why).build();
}

namespace cuda_plan_internal {

std::optional<CudaComputeForm> ComputeChecks::build() {
  const std::string& op = call_.op;
  bool ok = false;
  if (op == "dropout") ok = dropout();
  else if (op == "nearest_interp" || op == "bilinear_interp" || op == "linear_interp" || op == "bicubic_interp") {
    ok = interpolate(op);
  }
  else if (op == "prior_box") ok = prior_box();
  else if (op == "roi_align") ok = roi_align();
  else if (op == "yolo_box") ok = yolo_box();
  else if (op == "triu" || op == "tril") ok = triangle();
  else if (op == "diag") ok = diag();
  else if (op == "arange") ok = arange();
  else if (op == "linspace") ok = linspace();
  else if (op == "full_with_tensor") ok = fill();
  else if (op == "cast") ok = cast();
  else if (op == "softmax" || op == "log_softmax") ok = softmax();
  else if (op == "cumsum") ok = cumsum();
  else if (op == "one_hot") ok = one_hot();
  else if (op == "pow") ok = pow();
  else if (op == "grid_sample") ok = grid_sample();
  else if (op == "deformable_conv") ok = deformable_conv();
  else if (op == "group_norm") ok = group_norm();
  else if (op == "p_norm") ok = p_norm();
  else if (op == "einsum") ok = einsum();
  else if (op == "uniform") ok = uniform();
  else if (op == "randint") ok = randint();
  else if (op == "prelu") ok = prelu();
  else if (op == "floor_divide") ok = floor_divide();
  else ok = reduce();
  if (!ok) return std::nullopt;
  return std::move(form_);
}

bool ComputeChecks::is_read(uint32_t v) const {
  for (const ProgramOutput& o : p_.outputs) {
    if (o.value == v) return true;
  }
  for (const KernelCall& call : p_.calls) {
    for (const KernelArg& a : call.args) {
      if (a.value == v || std::find(a.values.begin(), a.values.end(), v) != a.values.end()) return true;
    }
  }
  return false;
}

bool ComputeChecks::dropout() {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  const std::optional<bool> test = call_.constant_bool("is_test");
  if (!test || !*test) return fail("it is a training dropout (is_test is not true); only inference runs on the GPU");
  const AttrConstant* mode = constant("mode");
  const std::optional<double> prob = constant_float("p");
  if (mode == nullptr || !prob) return false;
  form_.upscale = mode->string_value == "upscale_in_train";
  form_.probability = *prob;
  if (!form_.upscale && mode->string_value != "downgrade_in_infer") {
    return fail("its mode is \"" + mode->string_value + "\" (upscale_in_train or downgrade_in_infer expected)");
  }
  if (call_.outputs.size() > 1) {
    for (uint32_t v : call_.outputs[1].values) {
      if (v != kNone && is_read(v)) return fail("its mask is read, and the CUDA dropout computes out alone");
    }
  }
  return same_type(x, out, !form_.upscale);
}

bool ComputeChecks::interpolate(const std::string& op) {
  const bool nearest = op == "nearest_interp", linear = op == "linear_interp";
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  if (!same_type(x, out, !nearest) || !own_buffer(x, out)) return false;
  // The kernel takes the size from the output's dims, which out_size's or size_tensor's values give at run time
  // (the host runs the shape rule, cuda_plan_shape_read.cpp); a scale_tensor's values would be its ratios too.
  auto given = [&](std::string_view name) {
    const KernelArg* a = call_.arg(name);
    return a != nullptr && a->kind != ArgKind::kAbsentTensor && !(a->kind == ArgKind::kTensorList && a->values.empty());
  };
  if (given("scale_tensor")) {
    return fail("its scale_tensor is a tensor; the CUDA kernel takes the size from the output's dims");
  }
  const bool size_tensor = given("size_tensor");
  const AttrConstant* format = constant("data_format");
  const AttrConstant* scale = format != nullptr ? constant("scale") : nullptr;
  const std::optional<bool> align_corners = call_.constant_bool("align_corners");
  const std::optional<int64_t> align_mode = scale != nullptr ? constant_int("align_mode") : std::nullopt;
  if (scale == nullptr || !align_mode) return false;
  if (!align_corners) return fail("its align_corners is not a constant known at generation time");
  // linear_interp: a 3-D [N, C, W] or [N, W, C] input, an image of height 1 (kernels/resize.cc) whose one scale is
  // the width's; Paddle spells its formats "NCHW" / "NHWC" (the CPU kernel also takes "NCL" / "NLC").
  const size_t rank = linear ? 3 : 4;
  if (value(x).dims.size() != rank || value(out).dims.size() != rank) {
    return fail(linear ? "only 3-D inputs are supported" : "only 4-D inputs are supported");
  }
  const std::string& f = format->string_value;
  form_.nhwc = f == "NHWC" || (linear && f == "NLC");
  if (!form_.nhwc && f != "NCHW" && !(linear && f == "NCL")) return fail("its data_format is \"" + f + "\"");
  form_.align_corners = *align_corners;
  form_.align_mode = *align_mode;
  if (size_tensor) {
    // kernels' interp_shape: the size tensors' values, no scale (out_size keeps the scale attribute's ratios).
  } else if (linear) {
    if (!scale->floats.empty()) form_.scale_w = scale->floats[0];
  } else if (!scale->floats.empty()) {
    form_.scale_h = scale->floats[0];
    form_.scale_w = scale->floats.size() > 1 ? scale->floats[1] : scale->floats[0];
  }
  return true;
}

bool ComputeChecks::prior_box() {
  const uint32_t input = call_.tensor_arg("input"), image = call_.tensor_arg("image"), out = out_value();
  if (!same_type(input, out, true)) return false;
  if (image == kNone || value(input).dims.size() != 4 || value(image).dims.size() != 4) {
    return fail("its input or image is not 4-D");
  }
  const AttrConstant* min_sizes = constant("min_sizes");
  const AttrConstant* max_sizes = min_sizes != nullptr ? constant("max_sizes") : nullptr;
  const AttrConstant* aspect_ratios = max_sizes != nullptr ? constant("aspect_ratios") : nullptr;
  const AttrConstant* variances = aspect_ratios != nullptr ? constant("variances") : nullptr;
  const std::optional<bool> flip = variances != nullptr ? call_.constant_bool("flip") : std::nullopt;
  const std::optional<bool> clip = flip ? call_.constant_bool("clip") : std::nullopt;
  const std::optional<bool> order = clip ? call_.constant_bool("min_max_aspect_ratios_order") : std::nullopt;
  const std::optional<double> offset = order ? constant_float("offset") : std::nullopt;
  const std::optional<double> step_w = offset ? constant_float("step_w") : std::nullopt;
  const std::optional<double> step_h = step_w ? constant_float("step_h") : std::nullopt;
  // fail keeps the first reason: a constant() that is not one has given it already.
  if (!step_h) {
    return fail("its flip, clip or min_max_aspect_ratios_order is not a constant known at generation time");
  }
  if (variances->floats.size() != 4) return fail("its variances are not four");
  if (!max_sizes->floats.empty() && max_sizes->floats.size() != min_sizes->floats.size()) {
    return fail("its max_sizes and min_sizes differ in number");
  }
  // kernels/prior_box.cc's ExpandAspectRatios and boxes, in float as it computes them up to the `/ 2.` in double.
  std::vector<float> ratios{1.0f};
  for (double given : aspect_ratios->floats) {
    const float ar = static_cast<float>(given);
    bool seen = false;
    for (float o : ratios) seen = seen || std::fabs(ar - o) < 1e-6f;
    if (seen) continue;
    ratios.push_back(ar);
    if (*flip) ratios.push_back(1.0f / ar);
  }
  auto box = [&](double half_w, double half_h) {
    form_.prior_half_w.push_back(half_w);
    form_.prior_half_h.push_back(half_h);
  };
  for (size_t s = 0; s < min_sizes->floats.size(); ++s) {
    const float min_size = static_cast<float>(min_sizes->floats[s]);
    auto max_box = [&] {
      if (max_sizes->floats.empty()) return;
      const double side = std::sqrt(min_size * static_cast<float>(max_sizes->floats[s])) / 2.;
      box(side, side);
    };
    if (*order) {
      box(min_size / 2., min_size / 2.);
      max_box();
    }
    for (float ar : ratios) {
      if (*order && std::fabs(ar - 1.) < 1e-6) continue;
      box(min_size * std::sqrt(ar) / 2., min_size / std::sqrt(ar) / 2.);
    }
    if (!*order) max_box();
  }
  form_.variances = variances->floats;
  form_.prior_offset = *offset;
  form_.step_w = *step_w;
  form_.step_h = *step_h;
  form_.clip = *clip;
  return true;
}

// roi_align as kernels/detection.cc: x [n, c, h, w], boxes [r, 4] of x's dtype, boxes_num [n] int32 / int64 or
// none (then the CPU kernel takes one image).
bool ComputeChecks::roi_align() {
  const uint32_t x = call_.tensor_arg("x"), boxes = call_.tensor_arg("boxes"), num = call_.tensor_arg("boxes_num");
  const uint32_t out = out_value();
  const bool typed = same_type(x, out, true);
  const std::optional<int64_t> ph = typed ? constant_int("pooled_height") : std::nullopt;
  const std::optional<int64_t> pw = ph ? constant_int("pooled_width") : std::nullopt;
  const std::optional<int64_t> ratio = pw ? constant_int("sampling_ratio") : std::nullopt;
  const std::optional<double> scale = ratio ? constant_float("spatial_scale") : std::nullopt;
  const std::optional<bool> aligned = scale ? call_.constant_bool("aligned") : std::nullopt;
  if (!aligned) return fail("its aligned is not a constant known at generation time");
  if (!own_buffer(x, out)) return false;
  if (boxes == kNone || value(boxes).dtype != value(x).dtype) return fail("its boxes are not of x's dtype");
  if (value(x).dims.size() != 4 || value(boxes).dims.size() != 2) return fail("its x is not 4-D or its boxes 2-D");
  if (num != kNone && !index_type(num)) return false;
  if (*ph <= 0 || *pw <= 0) return fail("its pooled size is not positive");
  form_.pooled_h = *ph;
  form_.pooled_w = *pw;
  form_.sampling_ratio = *ratio;
  form_.spatial_scale = static_cast<float>(*scale);
  form_.aligned = *aligned;
  return true;
}

// yolo_box as kernels/yolo_box.cc: x [n, an_num * (5 + class_num (+ 1 iou_aware)), h, w], img_size int32 [n, 2],
// boxes and scores of x's dtype, every attribute a constant.
bool ComputeChecks::yolo_box() {
  const uint32_t x = call_.tensor_arg("x"), img = call_.tensor_arg("img_size"), boxes = output(0);
  const uint32_t scores = output(1);
  const bool typed = same_type(x, boxes, true);
  const AttrConstant* anchors = typed ? constant("anchors") : nullptr;
  const std::optional<int64_t> classes = anchors != nullptr ? constant_int("class_num") : std::nullopt;
  const std::optional<int64_t> ratio = classes ? constant_int("downsample_ratio") : std::nullopt;
  const std::optional<double> conf = ratio ? constant_float("conf_thresh") : std::nullopt;
  const std::optional<double> scale = conf ? constant_float("scale_x_y") : std::nullopt;
  const std::optional<double> factor = scale ? constant_float("iou_aware_factor") : std::nullopt;
  const std::optional<bool> clip = factor ? call_.constant_bool("clip_bbox") : std::nullopt;
  const std::optional<bool> aware = clip ? call_.constant_bool("iou_aware") : std::nullopt;
  if (!aware) return fail("its clip_bbox or iou_aware is not a constant known at generation time");
  if (scores == kNone || value(scores).dtype != value(x).dtype) return fail("its scores are not of x's dtype");
  if (img == kNone || value(img).dtype != ir::DataType::kInt32) return fail("its img_size is not int32");
  if (value(x).dims.size() != 4) return fail("its x is not 4-D");
  for (uint32_t v : {boxes, scores}) {
    if (value(v).buffer == value(x).buffer || value(v).buffer == value(img).buffer) {
      return fail("its output shares the buffer of an operand");
    }
  }
  if (anchors->ints.empty() || anchors->ints.size() % 2 != 0 || *classes <= 0) {
    return fail("its anchors are not (width, height) pairs or its class_num is not positive");
  }
  form_.anchors = anchors->ints;
  form_.class_num = *classes;
  form_.downsample_ratio = *ratio;
  form_.conf_thresh = static_cast<float>(*conf);
  form_.scale_x_y = static_cast<float>(*scale);
  form_.iou_aware_factor = static_cast<float>(*factor);
  form_.clip = *clip;
  form_.iou_aware = *aware;
  return true;
}

bool ComputeChecks::grid_sample() {
  const uint32_t x = call_.tensor_arg("x"), grid = call_.tensor_arg("grid"), out = out_value();
  const bool typed = same_type(x, out, true);
  const AttrConstant* mode = typed ? constant("mode") : nullptr;
  const AttrConstant* padding = mode != nullptr ? constant("padding_mode") : nullptr;
  const std::optional<bool> align_corners = call_.constant_bool("align_corners");
  if (padding == nullptr || !own_buffer(x, out)) return false;
  if (!align_corners) return fail("its align_corners is not a constant known at generation time");
  if (grid == kNone || value(grid).dtype != value(x).dtype) return fail("its grid is not of x's dtype");
  const std::string& m = mode->string_value;
  const std::string& pm = padding->string_value;
  if (m != "bilinear" && m != "nearest") return fail("its mode is \"" + m + "\"");
  form_.padding = pm == "zeros" ? 0 : pm == "border" ? 1 : pm == "reflection" ? 2 : -1;
  if (form_.padding < 0) return fail("its padding_mode is \"" + pm + "\"");
  if (value(x).dims.size() != 4 || value(grid).dims.size() != 4) return fail("only 4-D inputs are supported");
  form_.nearest = m == "nearest";
  form_.align_corners = *align_corners;
  return true;
}

bool ComputeChecks::deformable_conv() {
  const uint32_t x = call_.tensor_arg("x"), offset = call_.tensor_arg("offset"), filter = call_.tensor_arg("filter"),
                 mask = call_.tensor_arg("mask"), out = out_value();
  if (!same_type(x, out, true) || !own_buffer(x, out)) return false;
  if (offset == kNone || filter == kNone) return fail("it needs an offset and a filter");
  for (uint32_t v : {offset, filter, mask}) {
    if (v == kNone) continue;
    if (value(v).dtype != form_.dtype) return fail("its offset, filter or mask is not of x's dtype");
    if (value(v).buffer == value(out).buffer) return fail("its output shares the buffer of an operand");
  }
  if (value(x).dims.size() != 4 || value(filter).dims.size() != 4 || value(out).dims.size() != 4) {
    return fail("its x, filter or output is not 4-D");
  }
  // The window as kernels/detection.cc reads it: two strides, paddings and dilations; the group counts.
  std::vector<int64_t> window;
  for (std::string_view name : {"strides", "paddings", "dilations"}) {
    const AttrConstant* c = constant(name);
    if (c == nullptr) return false;
    if (c->ints.size() != 2) return fail(fmt::format("its {} are not two", name));
    window.insert(window.end(), c->ints.begin(), c->ints.end());
  }
  const std::optional<int64_t> deformable_groups = constant_int("deformable_groups");
  const std::optional<int64_t> groups = deformable_groups ? constant_int("groups") : std::nullopt;
  if (!groups) return false;
  if (*groups < 1 || *deformable_groups < 1) return fail("its groups or deformable_groups is not positive");
  form_.window = std::move(window);
  form_.deformable_groups = *deformable_groups;
  form_.groups = *groups;
  return true;
}

bool ComputeChecks::triangle() {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  const bool typed = same_type(x, out, false);
  const std::optional<int64_t> diagonal = typed ? constant_int("diagonal") : std::nullopt;
  if (!diagonal) return false;
  if (value(x).dims.size() < 2) return fail("its input has fewer than 2 dims");
  form_.diagonal = *diagonal;
  return true;
}

bool ComputeChecks::diag() {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  if (!same_type(x, out, false)) return false;
  if (!computable(form_.dtype)) {
    return fail(fmt::format("dtype {} has no CUDA diag", ir::dtype_name(form_.dtype)));
  }
  const std::optional<int64_t> offset = constant_int("offset");
  const std::optional<double> padding = offset ? constant_float("padding_value") : std::nullopt;
  if (!padding) return false;
  if (value(x).dims.size() > 2) return fail("its input has more than 2 dims");
  form_.diagonal = *offset;
  form_.padding_value = *padding;
  return true;
}

bool ComputeChecks::arange() {
  const uint32_t out = out_value();
  const KernelArg* start_arg = call_.arg("start");
  form_.symbolic_start =
      start_arg != nullptr && start_arg->kind == ArgKind::kSymbolic && start_arg->symbolic.size() == 1;
  const std::optional<double> start = form_.symbolic_start ? std::optional<double>(0) : constant_float("start");
  const std::optional<double> step = start ? constant_float("step") : std::nullopt;
  if (!step || out == kNone) return out == kNone ? fail("it needs an output") : false;
  const ir::DataType d = value(out).dtype;
  if (!movable(d) || d == ir::DataType::kBool || d == ir::DataType::kUInt16 || d == ir::DataType::kFloat16 ||
      d == ir::DataType::kBFloat16) {
    return fail(fmt::format("dtype {} has no CUDA arange", ir::dtype_name(d)));
  }
  form_.dtype = d;
  if (form_.symbolic_start) form_.start_dim = start_arg->symbolic[0];
  form_.start = *start;
  form_.step = *step;
  return true;
}

bool ComputeChecks::linspace() {
  const uint32_t start = call_.tensor_arg("start"), stop = call_.tensor_arg("stop"), out = out_value();
  if (start == kNone || stop == kNone || out == kNone) return fail("it needs start, stop and an output");
  // The kernel reads start[0] and stop[0] and takes the number from the output's dim (the shape rule wants it
  // known at generation time), as kernels/detection.cc.
  auto number = [](ir::DataType d) {
    return d == ir::DataType::kFloat32 || d == ir::DataType::kFloat64 || d == ir::DataType::kInt32 ||
           d == ir::DataType::kInt64;
  };
  for (uint32_t v : {start, stop, out}) {
    if (!number(value(v).dtype)) {
      return fail(fmt::format("it reads or writes {} values; the CUDA kernel takes float32, float64, int32 and int64",
                              ir::dtype_name(value(v).dtype)));
    }
  }
  if (value(out).dims.size() != 1) return fail("its output is not 1-D");
  form_.dtype = value(out).dtype;
  return true;
}

bool ComputeChecks::fill() {
  const uint32_t v = call_.tensor_arg("value"), out = out_value();
  if (v != kNone && out != kNone && value(v).dtype != value(out).dtype) {
    // The value converted to the output's dtype, as the CPU kernel's static_cast (paddleformers' masks:
    // `full_with_tensor(1.0, [b, s], bool)`).
    const ir::DataType vd = value(v).dtype;
    const bool half_value = vd == ir::DataType::kFloat16 || vd == ir::DataType::kBFloat16;
    if (half_value && computable(value(out).dtype) && value(v).role == ValueRole::kConstant) {
      form_.converts = true;
      form_.constant_value = p_.constants[value(v).role_index].float_at(0);
      form_.dtype = form_.out_dtype = value(out).dtype;
      return true;
    }
    if (!computable(value(v).dtype) || !computable(value(out).dtype)) {
      return fail(fmt::format("its value is {} and its output {}; the CUDA kernel converts between bool, integers, "
                              "float32 and float64",
                              ir::dtype_name(value(v).dtype), ir::dtype_name(value(out).dtype)));
    }
    form_.converts = true;
    form_.dtype = value(v).dtype;
    form_.out_dtype = value(out).dtype;
    return true;
  }
  return same_type(v, out, false);
}

// A cast no fused group takes: one of a dtype the fused loops have no type for (uint8, int8, int16: SOLOv2's bool
// mask to uint8), from or to any of the others, 16-bit floats included. x converted element by element as the CPU
// kernel's util::convert.
bool ComputeChecks::cast() {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  if (x == kNone || out == kNone) return fail("it needs an input and an output");
  const ir::DataType from = value(x).dtype, to = value(out).dtype;
  auto convertible = [](ir::DataType d) {
    return computable(d) || d == ir::DataType::kFloat16 || d == ir::DataType::kBFloat16;
  };
  if (!convertible(from) || !convertible(to)) {
    return fail(fmt::format("it converts {} to {}; the CUDA kernel converts between bool, the integers and the floats",
                            ir::dtype_name(from), ir::dtype_name(to)));
  }
  form_.dtype = from;
  form_.out_dtype = to;
  form_.converts = true;
  return true;
}

bool ComputeChecks::one_hot() {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  if (x == kNone || out == kNone) return fail("it needs an input and an output");
  if (!index_type(x)) return false;
  if (value(out).dtype != ir::DataType::kFloat32) return fail("its output is not float32");
  if (value(out).dims.empty()) return fail("its output has no class axis");
  return true;
}

bool ComputeChecks::pow() {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  const bool typed = same_type(x, out, false);
  const std::optional<double> y = typed ? constant_float("y") : std::nullopt;
  if (!y) return false;
  form_.exponent = static_cast<float>(*y);
  const ir::DataType d = form_.dtype;
  if (d == ir::DataType::kInt32 || d == ir::DataType::kInt64) {
    const double limit = d == ir::DataType::kInt32 ? 2147483647.0 : 9.2233720368547758e18;
    if (!(form_.exponent >= 0.0f) || !(static_cast<double>(form_.exponent) < limit)) {
      return fail(fmt::format("the exponent {} of an integer tensor is negative or does not fit its type",
                              form_.exponent));
    }
  } else if (d != ir::DataType::kFloat32 && d != ir::DataType::kFloat64) {
    return fail(fmt::format("it raises {} values; the CUDA kernel takes float32, float64, int32 and int64",
                            ir::dtype_name(value(x).dtype)));
  }
  return true;
}

bool ComputeChecks::uniform() {
  const uint32_t out = out_value();
  if (out == kNone) return fail("it needs an output");
  const ir::DataType d = value(out).dtype;
  if (d != ir::DataType::kFloat32 && d != ir::DataType::kFloat64) {
    return fail(fmt::format("it draws {} values; the CUDA kernel draws float32 and float64", ir::dtype_name(d)));
  }
  const std::optional<double> lo = constant_float("min");
  const std::optional<double> hi = lo ? constant_float("max") : std::nullopt;
  const std::optional<int64_t> seed = hi ? constant_int("seed") : std::nullopt;
  if (!seed) return false;
  if (!(std::isfinite(*lo) && std::isfinite(*hi) && *lo <= *hi)) {
    return fail("its min and max are not finite with min <= max");
  }
  form_.dtype = d;
  form_.min = *lo;
  form_.max = *hi;
  form_.seed = *seed;
  return true;
}

bool ComputeChecks::randint() {
  const uint32_t out = out_value();
  if (out == kNone) return fail("it needs an output");
  const ir::DataType d = value(out).dtype;
  if (d != ir::DataType::kInt32 && d != ir::DataType::kInt64) {
    return fail(fmt::format("it draws {} values; the CUDA kernel draws int32 and int64", ir::dtype_name(d)));
  }
  const std::optional<int64_t> low = constant_int("low");
  const std::optional<int64_t> high = low ? constant_int("high") : std::nullopt;
  if (!high) return false;
  if (*low >= *high) return fail("its low is not below its high");
  form_.dtype = d;
  form_.min = static_cast<double>(*low);
  form_.max = static_cast<double>(*high);
  return true;
}

bool ComputeChecks::prelu() {
  const uint32_t x = call_.tensor_arg("x"), alpha = call_.tensor_arg("alpha"), out = out_value();
  const bool typed = same_type(x, out, true);
  if (!typed || alpha == kNone) return typed ? fail("it needs x and alpha") : false;
  if (value(alpha).dtype != value(x).dtype) return fail("its x and alpha differ in dtype");
  const AttrConstant* mode = constant("mode");
  const AttrConstant* format = mode != nullptr ? constant("data_format") : nullptr;
  if (format == nullptr) return false;
  if (mode->string_value == "channel") {
    const std::string& f = format->string_value;
    form_.channel_first = f == "NCHW" || f == "NCDHW" || f == "NCL";
    if (value(out).dims.size() < 2) return fail("its mode is \"channel\" and x has rank < 2");
    form_.slope = CudaSlopeMode::kChannel;
  } else if (mode->string_value == "element") {
    form_.slope = CudaSlopeMode::kElement;
  } else if (mode->string_value != "all") {
    return fail("its mode is \"" + mode->string_value + "\" (all, channel or element expected)");
  }
  return true;
}

bool ComputeChecks::floor_divide() {
  const uint32_t x = call_.tensor_arg("x"), y = call_.tensor_arg("y"), out = out_value();
  const bool typed = same_type(x, out, false);
  if (!typed || y == kNone) return typed ? fail("it needs x and y") : false;
  if (value(y).dtype != value(x).dtype) return fail("its x and y differ in dtype");
  const ir::DataType d = form_.dtype;
  if (d == ir::DataType::kBool || d == ir::DataType::kUInt16 || d == ir::DataType::kFloat16 ||
      d == ir::DataType::kBFloat16) {
    return fail("it divides bool or 16-bit values, which the CUDA kernel does not take");
  }
  const size_t rank = value(out).dims.size();
  if (value(x).dims.size() > rank || value(y).dims.size() > rank) {
    return fail("an operand has a higher rank than the output");
  }
  return true;
}

}  // namespace cuda_plan_internal

}  // namespace kforge::passes
