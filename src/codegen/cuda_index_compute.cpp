// The index-mapped CUDA kernels that compute on the values (codegen/cuda_index.h; the data-movement ones are
// cuda_index.cpp's): inference dropout, nearest / bilinear / linear / bicubic interpolation, triu / tril, arange,
// linspace, full_with_tensor, cast (of the dtypes the fused loops lack), and the ops no fused group takes, each as
// the CPU kernel of kernels/ computes it, in the same order, so that the bits agree (the reductions, softmax and cumsum are built in cuda_index_reduce.cpp):
//   - sum, mean (and mean_all), max, min, prod, any, all over any axes (the fusion pass fuses trailing-axis reductions only): one
//     thread per output element folds its reduced elements in row-major order (kernels/linalg.cc's reduce: double
//     for floats, int64 for sums of integers and bools, uint64 for integer products);
//   - softmax over an axis that is not the last (kernels/linalg.cc): one thread per line;
//   - log_softmax over any axis (kernels/reduce_math.cc): one thread per line, the sum of exponentials in double;
//   - cumsum: one thread per line along the axis (kernels/reduce_math.cc; integers wrap);
//   - one_hot: 1.0f where the class is the id (an id outside [0, num_classes) gives a row of zeros: the CPU kernel's
//     error status has no equivalent in a kernel);
//   - roi_align and yolo_box: cuda_index_detection.cpp;
//   - pow with a constant exponent: powf / pow for floats, exact integer powers by squaring (kernels/math.cc);
//   - grid_sample (4-D, bilinear or nearest, zeros / border / reflection padding: kernels/losses.cc's arithmetic);
//   - deformable_conv (v1 and v2, groups, deformable groups): one thread per output element samples its column and
//     adds the products in the CPU kernel's order (kforge_index.cuh's deformable_conv_at).
// A thread walking a whole line or reduction is slow for long ones and correct for every size.
// The plan's form of each call (passes/cuda_plan_compute.h) is what is rendered: every check is the plan's. The
// statements are templates/program/cuda/index_compute.j2's skeletons; this file supplies their context (names,
// types, sizes, expressions), in the order the sizes become kernel parameters.
#include <cmath>
#include <map>

#include "codegen/cuda_index_compute_call.h"

namespace kforge::codegen::index_text {

namespace compute_internal {

std::vector<CudaIndexKernel> ComputeCall::build() {
  const std::string& op = call_.op;
  if (op == "dropout") dropout();
  else if (op == "nearest_interp" || op == "bilinear_interp") interpolate(op == "bilinear_interp");
  else if (op == "linear_interp") interpolate(true);
  else if (op == "bicubic_interp") bicubic();
  else if (op == "prior_box") prior_box();
  else if (op == "triu" || op == "tril") triangle(op == "triu");
  else if (op == "diag") diag();
  else if (op == "arange") arange();
  else if (op == "linspace") linspace();
  else if (op == "full_with_tensor") fill();
  else if (op == "cast") cast();
  else if (op == "softmax") softmax();
  else if (op == "log_softmax") log_softmax();
  else if (op == "cumsum") cumsum();
  else if (op == "one_hot") one_hot();
  else if (op == "pow") pow();
  else if (op == "grid_sample") grid_sample();
  else if (op == "deformable_conv") deformable_conv();
  else if (op == "roi_align") roi_align();
  else if (op == "yolo_box") yolo_box();
  else reduce();
  return take();
}

void ComputeCall::dropout() {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  const std::string type = form_type();
  KernelText k = text();
  const std::string in = k.input(x, type);
  k.output(out, type);
  std::string stored = in + "[e]";
  if (!form_.upscale) {
    const double factor = 1.0 - form_.probability;
    const std::string f = type == "float" ? cuda_device_constant(factor, "float") : cuda_device_digits(factor, "double");
    stored = fmt::format("{}[e] * static_cast<{}>({})", in, type, f);
  }
  k.statements(store_statements(k.coordinates_context({}), stored));
  add(k, value(out).numel());
}

void ComputeCall::interpolate(bool bilinear) {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  const std::string type = form_type();
  const SymShape& xd = value(x).dims;
  const SymShape& od = value(out).dims;
  // linear_interp's 3-D [N, C, W] or [N, W, C] is an image of height 1 (kernels/resize.cc): its row is 0 of 1,
  // whose taps (0 and 0, weights 1 and 0) leave the CPU kernel's four products as they are.
  const bool rows = xd.size() == 4;
  const size_t h = form_.nhwc ? 1 : 2, w = rows ? (form_.nhwc ? 2 : 3) : (form_.nhwc ? 1 : 2);
  const SymExpr one = 1;
  const SymExpr& x_h = rows ? xd[h] : one;
  const SymExpr& o_h = rows ? od[h] : one;
  KernelText k = text();
  const std::string in = k.input(x, type);
  k.output(out, type);
  tmpl::Value s = statements_of("interpolate");
  s.set("coords", k.coordinates_context(od));
  const std::string in_h = k.size(x_h), in_w = k.size(xd[w]), out_h = k.size(o_h), out_w = k.size(od[w]);
  const bool known = x_h.is_constant() && xd[w].is_constant() && o_h.is_constant() && od[w].is_constant();
  const bool same = known && x_h == o_h && xd[w] == od[w];  // bilinear copies then
  s.set("in_h", in_h);
  s.set("in_w", in_w);
  s.set("out_h", out_h);
  s.set("out_w", out_w);
  s.set("align_corners", form_.align_corners ? "true" : "false");
  s.set("ratios", !bilinear || !same);
  s.set("scale_h", cuda_device_constant(form_.scale_h, "float"));
  s.set("scale_w", cuda_device_constant(form_.scale_w, "float"));
  auto at = [&](const std::string& row, const std::string& col) {
    std::vector<std::string> coords = {"c0", "c1", "c2", "c3"};
    coords.resize(xd.size());
    if (rows) coords[h] = row;
    coords[w] = col;
    return fmt::format("{}[{}]", in, k.offset(coords, xd));
  };
  const std::string oh = rows ? "c" + std::to_string(h) : "0", ow = "c" + std::to_string(w);
  s.set("oh", oh);
  s.set("ow", ow);
  s.set("nearest", !bilinear);
  s.set("type", type);
  if (!bilinear) {
    s.set("source", at("ih", "iw"));
  } else {
    // Paddle copies when the size does not change (decided here when the sizes are known).
    s.set("flag", form_.align_mode == 0 && !form_.align_corners ? "true" : "false");
    s.set("known", known);
    s.set("pad", known ? "" : "  ");
    s.set("copy", same || !known ? at(oh, ow) : "");
    tmpl::List taps;
    if (!same) {
      for (const auto& [row, col] :
           {std::pair{"th.lo", "tw.lo"}, {"th.hi", "tw.lo"}, {"th.lo", "tw.hi"}, {"th.hi", "tw.hi"}}) {
        taps.push_back(at(row, col));
      }
    }
    s.set("taps", tmpl::Value(std::move(taps)));
  }
  k.statements(std::move(s));
  add(k, value(out).numel(), true);
}

void ComputeCall::bicubic() {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  const std::string type = form_type();
  const SymShape& xd = value(x).dims;
  const SymShape& od = value(out).dims;
  const size_t h = form_.nhwc ? 1 : 2, w = form_.nhwc ? 2 : 3;
  KernelText k = text();
  const std::string in = k.input(x, type);
  k.output(out, type);
  tmpl::Value s = statements_of("bicubic");
  s.set("coords", k.coordinates_context(od));
  const std::string in_h = k.size(xd[h]), in_w = k.size(xd[w]), out_h = k.size(od[h]), out_w = k.size(od[w]);
  const bool known = xd[h].is_constant() && xd[w].is_constant() && od[h].is_constant() && od[w].is_constant();
  const bool same = known && xd[h] == od[h] && xd[w] == od[w];  // Paddle copies then
  s.set("in_h", in_h);
  s.set("in_w", in_w);
  s.set("out_h", out_h);
  s.set("out_w", out_w);
  s.set("known", known);
  s.set("same", same);
  s.set("pad", known ? "" : "  ");
  s.set("type", type);
  s.set("align_corners", form_.align_corners ? "true" : "false");
  s.set("scale_h", cuda_device_constant(form_.scale_h, "float"));
  s.set("scale_w", cuda_device_constant(form_.scale_w, "float"));
  const std::vector<std::string> coords = {"c0", "c1", "c2", "c3"};
  s.set("copy", same || !known ? fmt::format("{}[{}]", in, k.offset(coords, xd)) : "");
  std::vector<std::string> plane = coords;  // the output element's plane of x: its row and column 0
  plane[h] = "0";
  plane[w] = "0";
  s.set("plane", fmt::format("{} + {}", in, k.offset(plane, xd)));
  // The plane's strides along h and w: NCHW [.., W] rows of 1; NHWC rows of W * C, columns of C.
  s.set("stride_h", k.size(form_.nhwc ? xd[2] * xd[3] : xd[3]));
  s.set("stride_w", form_.nhwc ? k.size(xd[3]) : "1");
  s.set("oh", "c" + std::to_string(h));
  s.set("ow", "c" + std::to_string(w));
  k.statements(std::move(s));
  add(k, value(out).numel(), true);
}

void ComputeCall::prior_box() {
  const uint32_t input = call_.tensor_arg("input"), image = call_.tensor_arg("image"), out = out_value();
  const uint32_t var = call_.outputs.size() > 1 && call_.outputs[1].values.size() == 1 ? call_.outputs[1].values[0]
                                                                                       : kNone;
  const std::string type = form_type();
  const SymShape& fd = value(input).dims;
  const SymShape& id = value(image).dims;
  // A constant of the CPU kernel's static_cast<T>: a float value (an attribute, or a double the plan computed).
  auto literal = [&](double d) {
    return cuda_device_constant(d, type);
  };
  auto literals = [&](const std::vector<double>& values) {
    tmpl::List list;
    for (double d : values) list.push_back(literal(d));
    return tmpl::Value(std::move(list));
  };
  KernelText k = text();
  k.output(out, type);
  if (var != kNone) k.output(var, type, "var");
  tmpl::Value s = statements_of("prior_box");
  s.set("type", type);
  s.set("priors", static_cast<int64_t>(form_.prior_half_w.size()));
  s.set("fh", k.size(fd[2]));
  s.set("fw", k.size(fd[3]));
  s.set("img_h", k.size(id[2]));
  s.set("img_w", k.size(id[3]));
  s.set("half_w", literals(form_.prior_half_w));
  s.set("half_h", literals(form_.prior_half_h));
  // The CPU kernel's steps: the attributes, or the image's size over the feature map's when either is 0.
  s.set("fixed_step", static_cast<float>(form_.step_w) != 0 && static_cast<float>(form_.step_h) != 0);
  s.set("step_w", literal(form_.step_w));
  s.set("step_h", literal(form_.step_h));
  s.set("offset", literal(form_.prior_offset));
  s.set("clip", form_.clip);
  s.set("var", var != kNone);
  s.set("variances", literals(form_.variances));
  k.statements(std::move(s));
  add(k, value(out).numel());
}

void ComputeCall::grid_sample() {
  const uint32_t x = call_.tensor_arg("x"), grid = call_.tensor_arg("grid"), out = out_value();
  const std::string type = form_type();
  const SymShape& xd = value(x).dims;
  const SymShape& gd = value(grid).dims;
  KernelText k = text();
  const std::string in = k.input(x, type), g = k.input(grid, type);
  k.output(out, type);
  tmpl::Value s = statements_of("grid_sample");
  s.set("type", type);
  s.set("x", in);
  s.set("grid", g);
  s.set("c", k.size(xd[1]));
  s.set("h", k.size(xd[2]));
  s.set("w", k.size(xd[3]));
  s.set("plane", k.size(gd[1] * gd[2]));
  s.set("align_corners", form_.align_corners ? "true" : "false");
  s.set("padding", static_cast<int64_t>(form_.padding));
  s.set("nearest", form_.nearest);
  k.statements(std::move(s));
  add(k, value(out).numel(), true);
}

void ComputeCall::deformable_conv() {
  const uint32_t x = call_.tensor_arg("x"), offset = call_.tensor_arg("offset"), filter = call_.tensor_arg("filter"),
                 mask = call_.tensor_arg("mask"), out = out_value();
  const std::string type = form_type();
  const SymShape& xd = value(x).dims;
  const SymShape& fd = value(filter).dims;
  const SymShape& od = value(out).dims;
  KernelText k = text();
  const std::string in = k.input(x, type), off = k.input(offset, type), f = k.input(filter, type);
  const std::string m = mask != kNone ? k.input(mask, type) : "nullptr";
  k.output(out, type);
  // kforge_index.cuh's DeformGeometry, in its fields' order.
  tmpl::List geometry;
  for (const SymExpr& d : {xd[1], xd[2], xd[3], fd[0], fd[2], fd[3], od[2], od[3]}) geometry.push_back(k.size(d));
  for (int64_t v : form_.window) geometry.push_back(std::to_string(v));
  geometry.push_back(std::to_string(form_.deformable_groups));
  geometry.push_back(std::to_string(form_.groups));
  tmpl::Value s = statements_of("deformable_conv");
  s.set("type", type);
  s.set("x", in);
  s.set("offset", off);
  s.set("mask", m);
  s.set("filter", f);
  s.set("geometry", tmpl::Value(std::move(geometry)));
  k.statements(std::move(s));
  add(k, value(out).numel(), true);
}

void ComputeCall::triangle(bool upper) {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  const std::string type = form_type();
  const SymShape& xd = value(x).dims;
  KernelText k = text();
  const std::string in = k.input(x, type);
  k.output(out, type);
  const std::string cols = k.size(xd.back()), rows = k.size(xd[xd.size() - 2]);
  k.statements(store_statements(
      k.coordinates_context({}),
      fmt::format("col - row {} {} ? {}[e] : {}(0)", upper ? ">=" : "<=", form_.diagonal, in, type),
      {local("int64_t", {{"col", "e % " + cols}, {"row", fmt::format("(e / {}) % {}", cols, rows)}})}));
  add(k, value(out).numel());
}

// As kernels/index_movement.cc's diag: a vector's matrix [n, n] (n its length plus |offset|) holds it on the
// diagonal col - row == offset and padding_value elsewhere; a matrix's diagonal from row -offset or column offset.
void ComputeCall::diag() {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  const std::string type = form_type();
  const SymShape& xd = value(x).dims;
  KernelText k = text();
  const std::string in = k.input(x, type);
  k.output(out, type);
  const int64_t offset = form_.diagonal, row0 = offset < 0 ? -offset : 0, col0 = offset > 0 ? offset : 0;
  if (xd.size() <= 1) {
    const std::string n = k.size(value(out).dims[0]);
    k.statements(store_statements(
        k.coordinates_context({}),
        fmt::format("col - row == {} ? {}[{}] : {}", offset, in, offset < 0 ? "col" : "row",
                    cuda_device_constant(form_.padding_value, type)),
        {local("int64_t", {{"col", "e % " + n}, {"row", "e / " + n}})}));
  } else {
    const std::string cols = k.size(xd[1]);
    k.statements(store_statements(k.coordinates_context({}),
                                  fmt::format("{}[(e + {}) * {} + e + {}]", in, row0, cols, col0)));
  }
  add(k, value(out).numel());
}

void ComputeCall::arange() {
  const uint32_t out = out_value();
  const std::string type = form_type();
  KernelText k = text();
  k.output(out, type);
  const bool floating = ir::is_floating(form_.dtype);
  auto literal = [&](double v) {
    if (!floating) return fmt::format("static_cast<{}>({})", type, static_cast<int64_t>(v));
    return std::isfinite(v) ? fmt::format("static_cast<{}>({:.17g})", type, v) : cuda_device_constant(v, type);
  };
  const std::string first = form_.symbolic_start ? fmt::format("static_cast<{}>({})", type, k.size(form_.start_dim))
                                                 : literal(form_.start);
  k.statements(store_statements(k.coordinates_context({}),
                                fmt::format("{} + static_cast<{}>(e) * {}", first, type, literal(form_.step))));
  add(k, value(out).numel());
}

void ComputeCall::linspace() {
  const uint32_t start = call_.tensor_arg("start"), stop = call_.tensor_arg("stop"), out = out_value();
  const std::string type = form_type();
  KernelText k = text();
  const std::string a = k.input(start, *move_type(value(start).dtype));
  const std::string b = k.input(stop, *move_type(value(stop).dtype));
  k.output(out, type);
  const std::string num = k.size(value(out).dims[0]);
  // kernels/detection.cc: start and stop converted to the dtype through double; the step is the difference (in
  // the dtype for floats, in double for integers) over num - 1; the first half counted from start, the rest back
  // from stop; one element is start.
  const bool floating = ir::is_floating(form_.dtype);
  const std::string span = floating ? "static_cast<double>(last - first)"
                                    : "static_cast<double>(last) - static_cast<double>(first)";
  k.statements(store_statements(
      k.coordinates_context({}),
      fmt::format("{0} == 1 ? first : e < {0} / 2 ? static_cast<{1}>(first + step * static_cast<double>(e)) : "
                  "static_cast<{1}>(last - step * static_cast<double>({0} - e - 1))",
                  num, type),
      {local(type, {{"first", fmt::format("static_cast<{}>(static_cast<double>({}[0]))", type, a)},
                    {"last", fmt::format("static_cast<{}>(static_cast<double>({}[0]))", type, b)}}),
       local("double", {{"step", fmt::format("({}) / static_cast<double>({} - 1)", span, num)}})}));
  add(k, value(out).numel());
}

void ComputeCall::fill() {
  const uint32_t v = call_.tensor_arg("value"), out = out_value();
  // The value converted to the output's dtype where it differs, as the CPU kernel's static_cast (paddleformers'
  // masks: `full_with_tensor(1.0, [b, s], bool)`).
  if (form_.constant_value) {  // a 16-bit constant: its value as a literal of the output's type
    const std::string out_type = *value_type(form_.out_dtype);
    KernelText k = text();
    k.output(out, out_type);
    k.statements(store_statements(k.coordinates_context({}),
                                  cuda_device_constant(*form_.constant_value, out_type)));
    add(k, value(out).numel());
    return;
  }
  const std::string in_type = form_.converts ? *value_type(form_.dtype) : form_type();
  const std::string out_type = form_.converts ? *value_type(form_.out_dtype) : in_type;
  KernelText k = text();
  const std::string in = k.input(v, in_type);
  k.output(out, out_type);
  k.statements(store_statements(k.coordinates_context({}), form_.converts
                                                               ? fmt::format("static_cast<{}>({}[0])", out_type, in)
                                                               : in + "[0]"));
  add(k, value(out).numel());
}

void ComputeCall::cast() {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  const ir::DataType from = form_.dtype, to = form_.out_dtype;
  const std::string in_type = *cuda_element_type(from), out_type = *cuda_element_type(to);
  KernelText k = text();
  const std::string in = k.input(x, in_type);
  k.output(out, out_type);
  // A 16-bit float is read as float (and an output one written from float) with cuda_fp16.h's / cuda_bf16.h's
  // conversions, rounding to nearest even as the CPU kernel's.
  std::string source = in + "[e]";
  if (from == ir::DataType::kFloat16) source = "__half2float(" + source + ")";
  if (from == ir::DataType::kBFloat16) source = "__bfloat162float(" + source + ")";
  // A float to an integer other than bool as kernels/kernel_util.h's convert: truncated, and the integer's lowest
  // where that is outside [lowest, 2^digits) or NaN; everything else a static_cast.
  static const std::map<ir::DataType, std::pair<const char*, const char*>> kRange = {
      {ir::DataType::kInt8, {"-128.0", "128.0"}},
      {ir::DataType::kUInt8, {"0.0", "256.0"}},
      {ir::DataType::kInt16, {"-32768.0", "32768.0"}},
      {ir::DataType::kInt32, {"-2147483648.0", "2147483648.0"}},
      {ir::DataType::kInt64, {"-9223372036854775808.0", "9223372036854775808.0"}}};
  const bool from_float = ir::is_floating(from);
  const auto range = kRange.find(to);
  std::string stored = fmt::format("static_cast<{}>({})", out_type, source);
  if (from_float && range != kRange.end()) {
    const std::string f = from == ir::DataType::kFloat64 ? "" : "f";
    const std::string t = fmt::format("trunc{}({})", f, source);
    const std::string lo = range->second.first + f, hi = range->second.second + f;
    stored = fmt::format("({} >= {} && {} < {}) ? static_cast<{}>({}) : static_cast<{}>({})", t, lo, t, hi, out_type,
                         t, out_type, lo);
  }
  if (to == ir::DataType::kFloat16) stored = fmt::format("__float2half_rn(static_cast<float>({}))", source);
  if (to == ir::DataType::kBFloat16) stored = fmt::format("__float2bfloat16_rn(static_cast<float>({}))", source);
  k.statements(store_statements(k.coordinates_context({}), stored));
  add(k, value(out).numel());
}

void ComputeCall::one_hot() {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  const SymShape& od = value(out).dims;
  KernelText k = text();
  const std::string in = k.input(x, *move_type(form_.index_dtype));
  k.output(out, "float");
  const std::string depth = k.size(od.back());
  k.statements(store_statements(k.coordinates_context({}),
                                fmt::format("static_cast<int64_t>({}[e / {}]) == e % {} ? 1.0f : 0.0f", in, depth,
                                            depth)));
  add(k, value(out).numel());
}

void ComputeCall::pow() {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  const std::string type = form_type();
  const float factor = form_.exponent;
  KernelText k = text();
  const std::string in = k.input(x, type);
  k.output(out, type);
  if (type == "float") {
    k.statements(store_statements(k.coordinates_context({}), fmt::format("powf({}[e], {})", in, cuda_device_constant(factor, "float"))));
  } else if (type == "double") {
    k.statements(store_statements(k.coordinates_context({}),
                                  fmt::format("pow({}[e], static_cast<double>({}))", in, cuda_device_constant(factor, "float"))));
  } else {  // int32_t or int64_t, the exponent >= 0 and fitting (the plan checked): x**e by squaring, wrapping
    tmpl::Value s = statements_of("integer_pow");
    s.set("type", type);
    s.set("unsigned", unsigned_of(type));
    s.set("x", in);
    s.set("exponent", static_cast<int64_t>(factor));
    k.statements(std::move(s));
  }
  add(k, value(out).numel());
}

}  // namespace compute_internal

std::vector<CudaIndexKernel> compute_kernels(const LoweredProgram& program, const KernelCall& call,
                                             const passes::CudaComputeForm& form, const std::string& prefix,
                                             size_t first, const std::string& description,
                                             const CudaBufferExpr& buffer, SizeTable& sizes,
                                             const SizeTable::Spelling& size_argument) {
  return compute_internal::ComputeCall(form, program, call, prefix, first, description, buffer, sizes, size_argument)
      .build();
}

}  // namespace kforge::codegen::index_text