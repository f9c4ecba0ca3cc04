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

std::vector<CudaIndexKernel> ComputeCall::build() {
  const std::string& op = call_.op;
  if (op == "dropout") dropout();
  else if (op == "nearest_interp" || op == "bilinear_interp") interpolate(op == "bilinear_interp");
  else if (op == "triu" || op == "tril") triangle(op == "triu");
  else if (op == "arange") arange();
  else if (op == "full_with_tensor") fill();
  else if (op == "softmax") softmax();
  else if (op == "cumsum") cumsum();
  else if (op == "one_hot") one_hot();
  else if (op == "pow") pow();
  else if (op == "grid_sample") grid_sample();
  else reduce();
  return take();
}

void ComputeCall::dropout() {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  const std::string type = form_type();
  KernelText k = text();
  const std::string in = k.input(x, type);
  k.output(out, type);
  if (form_.upscale) {
    k.line(fmt::format("out[e] = {}[e];", in));
  } else {
    const double factor = 1.0 - form_.probability;
    const std::string f = type == "float" ? cpp_float(static_cast<float>(factor)) : fmt::format("{:.17g}", factor);
    k.line(fmt::format("out[e] = {}[e] * static_cast<{}>({});", in, type, f));
  }
  add(k, value(out).numel());
}

void ComputeCall::interpolate(bool bilinear) {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  const std::string type = form_type();
  const SymShape& xd = value(x).dims;
  const SymShape& od = value(out).dims;
  const size_t h = form_.nhwc ? 1 : 2, w = form_.nhwc ? 2 : 3;
  const double scale_h = form_.scale_h, scale_w = form_.scale_w;
  KernelText k = text();
  const std::string in = k.input(x, type);
  k.output(out, type);
  k.coordinates(od);
  const std::string in_h = k.size(xd[h]), in_w = k.size(xd[w]), out_h = k.size(od[h]), out_w = k.size(od[w]);
  const std::string ac = form_.align_corners ? "true" : "false";
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
    const std::string flag = form_.align_mode == 0 && !form_.align_corners ? "true" : "false";
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
}

void ComputeCall::grid_sample() {
  const uint32_t x = call_.tensor_arg("x"), grid = call_.tensor_arg("grid"), out = out_value();
  const std::string type = form_type();
  const int pad = form_.padding;
  const SymShape& xd = value(x).dims;
  const SymShape& gd = value(grid).dims;
  KernelText k = text();
  const std::string in = k.input(x, type), g = k.input(grid, type);
  k.output(out, type);
  const std::string c = k.size(xd[1]), h = k.size(xd[2]), w = k.size(xd[3]), plane = k.size(gd[1] * gd[2]);
  const std::string ac = form_.align_corners ? "true" : "false";
  k.line(fmt::format("const int64_t p = e % {0}, ch = (e / {0}) % {1}, b = e / {0} / {1};", plane, c));
  k.line(fmt::format("const {}* gp = {} + (b * {} + p) * 2;", type, g, plane));
  k.line(fmt::format("const {} gx = kforge::cuda_index::grid_coordinate<{}>(gp[0], {}, {}, {});", type, type, w, ac, pad));
  k.line(fmt::format("const {} gy = kforge::cuda_index::grid_coordinate<{}>(gp[1], {}, {}, {});", type, type, h, ac, pad));
  k.line(fmt::format("const {}* src = {} + (b * {} + ch) * {} * {};", type, in, c, h, w));
  const std::string px = "kforge::cuda_index::grid_pixel<" + type + ">";
  if (form_.nearest) {
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
}

void ComputeCall::triangle(bool upper) {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  const std::string type = form_type();
  const SymShape& xd = value(x).dims;
  KernelText k = text();
  const std::string in = k.input(x, type);
  k.output(out, type);
  const std::string cols = k.size(xd.back()), rows = k.size(xd[xd.size() - 2]);
  k.line(fmt::format("const int64_t col = e % {}, row = (e / {}) % {};", cols, cols, rows));
  k.line(fmt::format("out[e] = col - row {} {} ? {}[e] : {}(0);", upper ? ">=" : "<=", form_.diagonal, in, type));
  add(k, value(out).numel());
}

void ComputeCall::arange() {
  const uint32_t out = out_value();
  const std::string type = form_type();
  KernelText k = text();
  k.output(out, type);
  const bool floating = ir::is_floating(form_.dtype);
  auto literal = [&](double v) {
    return floating ? fmt::format("static_cast<{}>({:.17g})", type, v)
                    : fmt::format("static_cast<{}>({})", type, static_cast<int64_t>(v));
  };
  const std::string first = form_.symbolic_start ? fmt::format("static_cast<{}>({})", type, k.size(form_.start_dim))
                                                 : literal(form_.start);
  k.line(fmt::format("out[e] = {} + static_cast<{}>(e) * {};", first, type, literal(form_.step)));
  add(k, value(out).numel());
}

void ComputeCall::fill() {
  const uint32_t v = call_.tensor_arg("value"), out = out_value();
  if (form_.converts) {
    // The value converted to the output's dtype, as the CPU kernel's static_cast (paddleformers' masks:
    // `full_with_tensor(1.0, [b, s], bool)`).
    const std::string in_type = *value_type(form_.dtype), out_type = *value_type(form_.out_dtype);
    KernelText k = text();
    const std::string in = k.input(v, in_type);
    k.output(out, out_type);
    k.line(fmt::format("out[e] = static_cast<{}>({}[0]);", out_type, in));
    add(k, value(out).numel());
    return;
  }
  const std::string type = form_type();
  KernelText k = text();
  const std::string in = k.input(v, type);
  k.output(out, type);
  k.line(fmt::format("out[e] = {}[0];", in));
  add(k, value(out).numel());
}

void ComputeCall::one_hot() {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  const SymShape& od = value(out).dims;
  KernelText k = text();
  const std::string in = k.input(x, *move_type(form_.index_dtype));
  k.output(out, "float");
  const std::string depth = k.size(od.back());
  k.line(fmt::format("out[e] = static_cast<int64_t>({}[e / {}]) == e % {} ? 1.0f : 0.0f;", in, depth, depth));
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
    k.line(fmt::format("out[e] = powf({}[e], {});", in, cpp_float(factor)));
  } else if (type == "double") {
    k.line(fmt::format("out[e] = pow({}[e], static_cast<double>({}));", in, cpp_float(factor)));
  } else {  // int32_t or int64_t, the exponent >= 0 and fitting (the plan checked)
    const std::string u = unsigned_of(type);
    k.line(fmt::format("{0} result = 1, base = static_cast<{0}>({1}[e]);", u, in));
    k.line(fmt::format("for ({} j = {}; j != 0; j >>= 1) {{", u, static_cast<int64_t>(factor)));
    k.line(fmt::format("  if (j & 1u) result = static_cast<{}>(result * base);", u));
    k.line(fmt::format("  base = static_cast<{}>(base * base);", u));
    k.line("}");
    k.line(fmt::format("out[e] = static_cast<{}>(result);", type));
  }
  add(k, value(out).numel());
}

}  // namespace compute_internal

std::optional<std::vector<CudaIndexKernel>> compute_kernels(const LoweredProgram& program, const KernelCall& call,
                                                            const std::string& prefix, size_t first,
                                                            const std::string& description,
                                                            const CudaBufferExpr& buffer, SizeTable& sizes,
                                                            const SizeTable::Spelling& size_argument, std::string* why) {
  // The plan refused the calls without a form (passes/cuda_plan_compute.h); it is read again here.
  const std::optional<passes::CudaComputeForm> form = passes::plan_cuda_compute(program, call, why);
  if (!form) return std::nullopt;
  return compute_internal::ComputeCall(*form, program, call, prefix, first, description, buffer, sizes, size_argument,
                                       why)
      .build();
}

}  // namespace kforge::codegen::index_text