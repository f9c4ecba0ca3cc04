// The index-mapped CUDA kernels that compute on the values (codegen/cuda_index.h; the data-movement ones are
// cuda_index.cpp's): inference dropout, nearest / bilinear interpolation, triu / tril, arange, full_with_tensor, and
// the ops no fused group takes, each as the CPU kernel of kernels/ computes it, in the same order, so that the bits
// agree (the reductions, softmax and cumsum are built in cuda_index_reduce.cpp):
//   - sum, mean (and mean_all), max, min, prod, any, all over any axes (the fusion pass fuses trailing-axis reductions only): one
//     thread per output element folds its reduced elements in row-major order (kernels/linalg.cc's reduce: double
//     for floats, int64 for sums of integers and bools, uint64 for integer products);
//   - softmax over an axis that is not the last (kernels/linalg.cc): one thread per line;
//   - cumsum: one thread per line along the axis (kernels/reduce_math.cc; integers wrap);
//   - one_hot: 1.0f where the class is the id (an id outside [0, num_classes) gives a row of zeros: the CPU kernel's
//     error status has no equivalent in a kernel);
//   - pow with a constant exponent: powf / pow for floats, exact integer powers by squaring (kernels/math.cc);
//   - grid_sample (4-D, bilinear or nearest, zeros / border / reflection padding: kernels/losses.cc's arithmetic).
// A thread walking a whole line or reduction is slow for long ones and correct for every size.
#include "codegen/cuda_index_compute_call.h"

namespace kforge::codegen::index_text {

namespace compute_internal {

std::optional<std::vector<CudaIndexKernel>> ComputeCall::build() {
  const std::string& op = call_.op;
  bool ok = false;
  if (op == "dropout") ok = dropout();
  else if (op == "nearest_interp" || op == "bilinear_interp") ok = interpolate(op == "bilinear_interp");
  else if (op == "triu" || op == "tril") ok = triangle(op == "triu");
  else if (op == "arange") ok = arange();
  else if (op == "full_with_tensor") ok = fill();
  else if (op == "softmax") ok = softmax();
  else if (op == "cumsum") ok = cumsum();
  else if (op == "one_hot") ok = one_hot();
  else if (op == "pow") ok = pow();
  else if (op == "grid_sample") ok = grid_sample();
  else ok = reduce();
  if (!ok) return std::nullopt;
  return take();
}

bool ComputeCall::dropout() {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  const std::optional<bool> test = call_.constant_bool("is_test");
  if (!test || !*test) return fail("it is a training dropout (is_test is not true); only inference runs on the GPU");
  const passes::AttrConstant* mode = constant(call_, "mode", why_);
  const std::optional<double> prob = constant_float(call_, "p", why_);
  if (mode == nullptr || !prob) return false;
  const bool upscale = mode->string_value == "upscale_in_train";
  if (!upscale && mode->string_value != "downgrade_in_infer") {
    return fail("its mode is \"" + mode->string_value + "\" (upscale_in_train or downgrade_in_infer expected)");
  }
  if (call_.outputs.size() > 1) {
    for (uint32_t v : call_.outputs[1].values) {
      if (v != kNone && is_read(p_, v)) return fail("its mask is read, and the CUDA dropout computes out alone");
    }
  }
  const std::string type = same_type(x, out, !upscale);
  if (type.empty()) return false;
  KernelText k = text();
  const std::string in = k.input(x, type);
  k.output(out, type);
  if (upscale) {
    k.line(fmt::format("out[e] = {}[e];", in));
  } else {
    const double factor = 1.0 - *prob;
    const std::string f = type == "float" ? cpp_float(static_cast<float>(factor)) : fmt::format("{:.17g}", factor);
    k.line(fmt::format("out[e] = {}[e] * static_cast<{}>({});", in, type, f));
  }
  add(k, value(out).numel());
  return true;
}

bool ComputeCall::interpolate(bool bilinear) {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  const std::string type = same_type(x, out, bilinear);
  if (type.empty() || !own_buffer(x, out)) return false;
  for (std::string_view name : {"out_size", "size_tensor", "scale_tensor"}) {
    const KernelArg* a = call_.arg(name);
    if (a != nullptr && a->kind != ArgKind::kAbsentTensor && !(a->kind == ArgKind::kTensorList && a->values.empty())) {
      return fail(fmt::format("its {} is a tensor; the CUDA kernel takes the size from the output's dims", name));
    }
  }
  const passes::AttrConstant* format = constant(call_, "data_format", why_);
  const passes::AttrConstant* scale = format != nullptr ? constant(call_, "scale", why_) : nullptr;
  const std::optional<bool> align_corners = call_.constant_bool("align_corners");
  const std::optional<int64_t> align_mode = scale != nullptr ? constant_int(call_, "align_mode", why_) : std::nullopt;
  if (scale == nullptr || !align_mode) return false;
  if (!align_corners) return fail("its align_corners is not a constant known at generation time");
  const SymShape& xd = value(x).dims;
  const SymShape& od = value(out).dims;
  if (xd.size() != 4 || od.size() != 4) return fail("only 4-D inputs are supported");
  const bool nhwc = format->string_value == "NHWC";
  if (!nhwc && format->string_value != "NCHW") return fail("its data_format is \"" + format->string_value + "\"");
  const size_t h = nhwc ? 1 : 2, w = nhwc ? 2 : 3;
  double scale_h = -1, scale_w = -1;
  if (!scale->floats.empty()) {
    scale_h = scale->floats[0];
    scale_w = scale->floats.size() > 1 ? scale->floats[1] : scale->floats[0];
  }
  KernelText k = text();
  const std::string in = k.input(x, type);
  k.output(out, type);
  k.coordinates(od);
  const std::string in_h = k.size(xd[h]), in_w = k.size(xd[w]), out_h = k.size(od[h]), out_w = k.size(od[w]);
  const std::string ac = *align_corners ? "true" : "false";
  const bool known = xd[h].is_constant() && xd[w].is_constant() && od[h].is_constant() && od[w].is_constant();
  const bool same = known && xd[h] == od[h] && xd[w] == od[w];  // bilinear copies then
  if (!bilinear || !same) {
    k.line(fmt::format("const float rh = kforge::cuda_index::interp_ratio({}, {}, {}, {});", in_h, out_h,
                     cpp_float(static_cast<float>(scale_h)), ac));
    k.line(fmt::format("const float rw = kforge::cuda_index::interp_ratio({}, {}, {}, {});", in_w, out_w,
                       cpp_float(static_cast<float>(scale_w)), ac));
  }
  auto at = [&](const std::string& row, const std::string& col) {
    std::vector<std::string> coords = {"c0", "c1", "c2", "c3"};
    coords[h] = row;
    coords[w] = col;
    return fmt::format("{}[{}]", in, k.offset(coords, xd));
  };
  const std::string oh = "c" + std::to_string(h), ow = "c" + std::to_string(w);
  if (!bilinear) {
    k.line(fmt::format("const int64_t ih = kforge::cuda_index::nearest_source(rh, {}, {}, {});", oh, in_h, ac));
    k.line(fmt::format("const int64_t iw = kforge::cuda_index::nearest_source(rw, {}, {}, {});", ow, in_w, ac));
    k.line(fmt::format("out[e] = {};", at("ih", "iw")));
  } else {
    // Paddle copies when the size does not change (decided here when the sizes are known).
    const std::string flag = *align_mode == 0 && !*align_corners ? "true" : "false";
    const std::string pad = known ? "" : "  ";
    if (same || !known) {
      if (!known) k.line(fmt::format("if ({} == {} && {} == {}) {{", in_h, out_h, in_w, out_w));
      k.line(fmt::format("{}out[e] = {};", pad, at(oh, ow)));
    }
    if (!same) {
      if (!known) k.line("} else {");
      k.line(fmt::format("{}const kforge::cuda_index::Tap th = kforge::cuda_index::bilinear_tap({}, {}, rh, {});", pad,
                         oh, in_h, flag));
      k.line(fmt::format("{}const kforge::cuda_index::Tap tw = kforge::cuda_index::bilinear_tap({}, {}, rw, {});", pad,
                         ow, in_w, flag));
      k.line(fmt::format("{}out[e] = static_cast<{}>({} * th.w_lo * tw.w_lo + {} * th.w_hi * tw.w_lo + {} * th.w_lo * "
                         "tw.w_hi + {} * th.w_hi * tw.w_hi);",
                         pad, type, at("th.lo", "tw.lo"), at("th.hi", "tw.lo"), at("th.lo", "tw.hi"),
                         at("th.hi", "tw.hi")));
    }
    if (!known) k.line("}");
  }
  add(k, value(out).numel(), true);
  return true;
}

bool ComputeCall::grid_sample() {
  const uint32_t x = call_.tensor_arg("x"), grid = call_.tensor_arg("grid"), out = out_value();
  const std::string type = same_type(x, out, true);
  const passes::AttrConstant* mode = type.empty() ? nullptr : constant(call_, "mode", why_);
  const passes::AttrConstant* padding = mode != nullptr ? constant(call_, "padding_mode", why_) : nullptr;
  const std::optional<bool> align_corners = call_.constant_bool("align_corners");
  if (padding == nullptr || !own_buffer(x, out)) return false;
  if (!align_corners) return fail("its align_corners is not a constant known at generation time");
  if (grid == kNone || value(grid).dtype != value(x).dtype) return fail("its grid is not of x's dtype");
  const std::string& m = mode->string_value;
  const std::string& pm = padding->string_value;
  if (m != "bilinear" && m != "nearest") return fail("its mode is \"" + m + "\"");
  const int pad = pm == "zeros" ? 0 : pm == "border" ? 1 : pm == "reflection" ? 2 : -1;
  if (pad < 0) return fail("its padding_mode is \"" + pm + "\"");
  const SymShape& xd = value(x).dims;
  const SymShape& gd = value(grid).dims;
  if (xd.size() != 4 || gd.size() != 4) return fail("only 4-D inputs are supported");
  KernelText k = text();
  const std::string in = k.input(x, type), g = k.input(grid, type);
  k.output(out, type);
  const std::string c = k.size(xd[1]), h = k.size(xd[2]), w = k.size(xd[3]), plane = k.size(gd[1] * gd[2]);
  const std::string ac = *align_corners ? "true" : "false";
  k.line(fmt::format("const int64_t p = e % {0}, ch = (e / {0}) % {1}, b = e / {0} / {1};", plane, c));
  k.line(fmt::format("const {}* gp = {} + (b * {} + p) * 2;", type, g, plane));
  k.line(fmt::format("const {} gx = kforge::cuda_index::grid_coordinate<{}>(gp[0], {}, {}, {});", type, type, w, ac, pad));
  k.line(fmt::format("const {} gy = kforge::cuda_index::grid_coordinate<{}>(gp[1], {}, {}, {});", type, type, h, ac, pad));
  k.line(fmt::format("const {}* src = {} + (b * {} + ch) * {} * {};", type, in, c, h, w));
  const std::string px = "kforge::cuda_index::grid_pixel<" + type + ">";
  if (m == "nearest") {
    k.line(fmt::format("out[e] = {}(src, {}, {}, kforge::cuda_index::grid_round(gx), kforge::cuda_index::grid_round(gy));",
                       px, h, w));
  } else {
    // The four neighbours weighted by the distances to the opposite sides, in Paddle's order.
    k.line(fmt::format("const {0} x_w = kforge::cuda_index::grid_floor(gx), x_e = x_w + {0}(1), "
                       "y_n = kforge::cuda_index::grid_floor(gy), y_s = y_n + {0}(1);", type));
    k.line(fmt::format("const {} d_w = gx - x_w, d_e = x_e - gx, d_n = gy - y_n, d_s = y_s - gy;", type));
    k.line(fmt::format("out[e] = {0}(src, {1}, {2}, x_w, y_n) * d_e * d_s + {0}(src, {1}, {2}, x_e, y_n) * d_w * d_s + "
                       "{0}(src, {1}, {2}, x_w, y_s) * d_e * d_n + {0}(src, {1}, {2}, x_e, y_s) * d_w * d_n;",
                       px, h, w));
  }
  add(k, value(out).numel(), true);
  return true;
}

bool ComputeCall::triangle(bool upper) {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  const std::string type = same_type(x, out, false);
  const std::optional<int64_t> diagonal = type.empty() ? std::nullopt : constant_int(call_, "diagonal", why_);
  if (!diagonal) return false;
  const SymShape& xd = value(x).dims;
  if (xd.size() < 2) return fail("its input has fewer than 2 dims");
  KernelText k = text();
  const std::string in = k.input(x, type);
  k.output(out, type);
  const std::string cols = k.size(xd.back()), rows = k.size(xd[xd.size() - 2]);
  k.line(fmt::format("const int64_t col = e % {}, row = (e / {}) % {};", cols, cols, rows));
  k.line(fmt::format("out[e] = col - row {} {} ? {}[e] : {}(0);", upper ? ">=" : "<=", *diagonal, in, type));
  add(k, value(out).numel());
  return true;
}

bool ComputeCall::arange() {
  const uint32_t out = out_value();
  const KernelArg* start_arg = call_.arg("start");
  const bool symbolic_start =
      start_arg != nullptr && start_arg->kind == ArgKind::kSymbolic && start_arg->symbolic.size() == 1;
  const std::optional<double> start = symbolic_start ? std::optional<double>(0) : constant_float(call_, "start", why_);
  const std::optional<double> step = start ? constant_float(call_, "step", why_) : std::nullopt;
  if (!step || out == kNone) return out == kNone ? fail("it needs an output") : false;
  const ir::DataType d = value(out).dtype;
  const std::optional<std::string> type = move_type(d);
  if (!type || *type == "bool" || *type == "uint16_t") return fail(fmt::format("dtype {} has no CUDA arange", ir::dtype_name(d)));
  KernelText k = text();
  k.output(out, *type);
  const bool floating = ir::is_floating(d);
  auto literal = [&](double v) {
    return floating ? fmt::format("static_cast<{}>({:.17g})", *type, v)
                    : fmt::format("static_cast<{}>({})", *type, static_cast<int64_t>(v));
  };
  const std::string first = symbolic_start ? fmt::format("static_cast<{}>({})", *type, k.size(start_arg->symbolic[0]))
                                           : literal(*start);
  k.line(fmt::format("out[e] = {} + static_cast<{}>(e) * {};", first, *type, literal(*step)));
  add(k, value(out).numel());
  return true;
}

bool ComputeCall::fill() {
  const uint32_t v = call_.tensor_arg("value"), out = out_value();
  if (v != kNone && out != kNone && value(v).dtype != value(out).dtype) {
    // The value converted to the output's dtype, as the CPU kernel's static_cast (paddleformers' masks:
    // `full_with_tensor(1.0, [b, s], bool)`).
    const std::optional<std::string> in_type = value_type(value(v).dtype), out_type = value_type(value(out).dtype);
    if (!in_type || !out_type) {
      return fail(fmt::format("its value is {} and its output {}; the CUDA kernel converts between bool, integers, "
                              "float32 and float64",
                              ir::dtype_name(value(v).dtype), ir::dtype_name(value(out).dtype)));
    }
    KernelText k = text();
    const std::string in = k.input(v, *in_type);
    k.output(out, *out_type);
    k.line(fmt::format("out[e] = static_cast<{}>({}[0]);", *out_type, in));
    add(k, value(out).numel());
    return true;
  }
  const std::string type = same_type(v, out, false);
  if (type.empty()) return false;
  KernelText k = text();
  const std::string in = k.input(v, type);
  k.output(out, type);
  k.line(fmt::format("out[e] = {}[0];", in));
  add(k, value(out).numel());
  return true;
}

bool ComputeCall::one_hot() {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  if (x == kNone || out == kNone) return fail("it needs an input and an output");
  const std::string itype = index_type(x);
  if (itype.empty()) return false;
  if (value(out).dtype != ir::DataType::kFloat32) return fail("its output is not float32");
  const SymShape& od = value(out).dims;
  if (od.empty()) return fail("its output has no class axis");
  KernelText k = text();
  const std::string in = k.input(x, itype);
  k.output(out, "float");
  const std::string depth = k.size(od.back());
  k.line(fmt::format("out[e] = static_cast<int64_t>({}[e / {}]) == e % {} ? 1.0f : 0.0f;", in, depth, depth));
  add(k, value(out).numel());
  return true;
}

bool ComputeCall::pow() {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  const std::string type = same_type(x, out, false);
  const std::optional<double> y = type.empty() ? std::nullopt : constant_float(call_, "y", why_);
  if (!y) return false;
  const float factor = static_cast<float>(*y);
  KernelText k = text();
  const std::string in = k.input(x, type);
  k.output(out, type);
  if (type == "float") {
    k.line(fmt::format("out[e] = powf({}[e], {});", in, cpp_float(factor)));
  } else if (type == "double") {
    k.line(fmt::format("out[e] = pow({}[e], static_cast<double>({}));", in, cpp_float(factor)));
  } else if (type == "int32_t" || type == "int64_t") {
    const double limit = type == "int32_t" ? 2147483647.0 : 9.2233720368547758e18;
    if (!(factor >= 0.0f) || !(static_cast<double>(factor) < limit)) {
      return fail(fmt::format("the exponent {} of an integer tensor is negative or does not fit its type", factor));
    }
    const std::string u = unsigned_of(type);
    k.line(fmt::format("{0} result = 1, base = static_cast<{0}>({1}[e]);", u, in));
    k.line(fmt::format("for ({} j = {}; j != 0; j >>= 1) {{", u, static_cast<int64_t>(factor)));
    k.line(fmt::format("  if (j & 1u) result = static_cast<{}>(result * base);", u));
    k.line(fmt::format("  base = static_cast<{}>(base * base);", u));
    k.line("}");
    k.line(fmt::format("out[e] = static_cast<{}>(result);", type));
  } else {
    return fail(fmt::format("it raises {} values; the CUDA kernel takes float32, float64, int32 and int64",
                            ir::dtype_name(value(x).dtype)));
  }
  add(k, value(out).numel());
  return true;
}

}  // namespace compute_internal

std::optional<std::vector<CudaIndexKernel>> compute_kernels(const LoweredProgram& program, const KernelCall& call,
                                                            const std::string& prefix, size_t first,
                                                            const std::string& description,
                                                            const CudaBufferExpr& buffer, SizeTable& sizes,
                                                            const SizeTable::Spelling& size_argument, std::string* why) {
  compute_internal::ComputeCall builder(program, call, prefix, first, description, buffer, sizes, size_argument, why);
  return builder.build();
}

}  // namespace kforge::codegen::index_text