// The CUDA target plan's forms of the computing index-mapped ops that fold many elements into one
// (cuda_plan_compute.h): the reductions outside a fused group (sum, mean, mean_all, max, min, prod, any, all over
// any axes), softmax off the last axis, log_softmax, cumsum, group_norm, p_norm and einsum. Each check reads the
// call as its kernel in codegen/ renders it (codegen/cuda_index_reduce.cpp, cuda_index_norm.cpp,
// cuda_index_linalg.cpp), with the reasons that codegen gave before the plan did.
#include <array>

#include "passes/axis.h"
#include "passes/cuda_plan_compute_checks.h"

namespace kforge::passes::cuda_plan_internal {

bool ComputeChecks::reduce() {
  const std::string& op = call_.op;
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  if (x == kNone || out == kNone) return fail("it needs an input and an output");
  // mean_all: the mean of every element (kernels/linalg.cc: mean over no axes).
  const bool every = op == "mean_all";
  const AttrConstant* axis = every ? nullptr : constant("axis");
  if (axis == nullptr && !every) return false;
  std::optional<bool> all_axes = op == "prod" ? call_.constant_bool("reduce_all") : std::optional<bool>(every);
  if (!all_axes) return fail("its reduce_all is not a constant known at generation time");
  const ir::DataType in = value(x).dtype, result = value(out).dtype;
  // max / min of 16-bit floats (a --precision float16 program's reduction over leading axes): compared in float, the
  // chosen element stored back as it was (codegen/cuda_index_reduce.cpp).
  const bool half_select = (op == "max" || op == "min") && result == in &&
                           (in == ir::DataType::kFloat16 || in == ir::DataType::kBFloat16);
  if (!half_select && (!computable(in) || !computable(result))) {
    return fail(fmt::format("it reduces {} into {}; the CUDA kernel of a reduction outside a fused group takes bool, "
                            "integers, float32 and float64 (max and min also float16 and bfloat16)",
                            ir::dtype_name(in), ir::dtype_name(result)));
  }
  const bool logical = op == "any" || op == "all";
  if (logical ? result != ir::DataType::kBool : (op != "sum" && result != in)) {
    return fail(fmt::format("its input is {} and its output {}", ir::dtype_name(in), ir::dtype_name(result)));
  }
  if (!logical && op != "sum" && in == ir::DataType::kBool) {
    return fail("it reduces bool values, which " + op + " does not take");
  }
  const SymShape& xd = value(x).dims;
  form_.reduced.assign(xd.size(), every || axis->ints.empty() || *all_axes);
  for (int64_t a : every ? std::vector<int64_t>{} : axis->ints) {
    size_t n = 0;
    if (!normalize_axis(a, static_cast<int64_t>(xd.size()), &n)) {
      if (!xd.empty() || (a != 0 && a != -1)) return fail("its axis names an axis out of range");
      continue;
    }
    form_.reduced[n] = true;
  }
  SymShape kept_dims;
  for (size_t d = 0; d < xd.size(); ++d) {
    if (!form_.reduced[d]) kept_dims.push_back(xd[d]);
  }
  if (sym_numel(kept_dims) != value(out).numel()) return fail("its output's size is not its kept dims'");
  form_.dtype = in;
  form_.out_dtype = result;
  return true;
}

bool ComputeChecks::lines(uint32_t x, int64_t given) {
  const SymShape& xd = value(x).dims;
  form_.outer = 1;
  form_.len = 1;
  form_.inner = 1;
  if (xd.empty()) return true;
  size_t a = 0;
  if (!normalize_axis(given, static_cast<int64_t>(xd.size()), &a)) return fail("its axis is out of range");
  for (size_t d = 0; d < a; ++d) form_.outer = form_.outer * xd[d];
  form_.len = xd[a];
  for (size_t d = a + 1; d < xd.size(); ++d) form_.inner = form_.inner * xd[d];
  return true;
}

bool ComputeChecks::softmax() {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  const bool typed = same_type(x, out, true);
  const std::optional<int64_t> axis = typed ? constant_int("axis") : std::nullopt;
  if (!axis || !own_buffer(x, out)) return false;
  return lines(x, *axis);
}

bool ComputeChecks::cumsum() {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  if (!same_type(x, out, false) || !own_buffer(x, out)) return false;
  if (form_.dtype == ir::DataType::kBool || !computable(form_.dtype)) {
    return fail(fmt::format("it sums {} values, which cumsum does not take", ir::dtype_name(value(x).dtype)));
  }
  const std::optional<bool> flatten = call_.constant_bool("flatten"), exclusive = call_.constant_bool("exclusive"),
                            reverse = call_.constant_bool("reverse");
  if (!flatten || !exclusive || !reverse) return fail("its flatten, exclusive or reverse is not a constant");
  form_.exclusive = *exclusive;
  form_.reverse = *reverse;
  form_.len = value(x).numel();
  if (*flatten) return true;
  const std::optional<int64_t> axis = constant_int("axis");
  return axis && lines(x, *axis);
}

bool ComputeChecks::group_norm() {
  const uint32_t x = call_.tensor_arg("x"), y = output(0), mean = output(1), variance = output(2);
  const bool typed = same_type(x, y, true);
  const std::optional<int64_t> groups = typed ? constant_int("groups") : std::nullopt;
  const std::optional<double> epsilon = groups ? constant_float("epsilon") : std::nullopt;
  const AttrConstant* format = epsilon ? constant("data_format") : nullptr;
  if (format == nullptr || !own_buffer(x, y)) return false;
  // The statistics go to the op's mean and variance when it has them in buffers of their own; without them one
  // kernel per group normalizes its elements too.
  form_.stats = mean != kNone && variance != kNone;
  for (uint32_t v : {mean, variance}) {
    if (v != kNone && (value(v).dtype != value(x).dtype || value(v).buffer == value(x).buffer ||
                       value(v).buffer == value(y).buffer)) {
      form_.stats = false;
    }
  }
  const std::string& f = format->string_value;
  form_.channel_last = f == "NHWC" || f == "NDHWC" || f == "NLC";
  if (!form_.channel_last && f != "NCHW" && f != "NCDHW" && f != "NCL" && f != "NC") {
    return fail("its data_format is \"" + f + "\"");
  }
  const SymShape& xd = value(x).dims;
  if (xd.size() < 2) return fail("its x has fewer than 2 dims");
  const size_t channel_dim = form_.channel_last ? xd.size() - 1 : 1;
  const std::optional<int64_t> channels = xd[channel_dim].constant();
  if (!channels || *groups <= 0 || *channels % *groups != 0) {
    return fail("its channels are not known at generation time, or not a multiple of its groups");
  }
  form_.groups = *groups;
  form_.channels = *channels;
  for (size_t d = 1; d < xd.size(); ++d) {
    if (d != channel_dim) form_.spatial = form_.spatial * xd[d];
  }
  for (uint32_t v : {call_.tensor_arg("scale"), call_.tensor_arg("bias")}) {
    if (v != kNone && value(v).dtype != value(x).dtype) return fail("its scale or bias is not of x's dtype");
  }
  form_.epsilon = static_cast<double>(static_cast<float>(*epsilon));
  return true;
}

bool ComputeChecks::p_norm() {
  const uint32_t x = call_.tensor_arg("x"), out = out_value();
  const bool typed = same_type(x, out, true);
  const std::optional<double> porder = typed ? constant_float("porder") : std::nullopt;
  const std::optional<int64_t> axis = porder ? constant_int("axis") : std::nullopt;
  const std::optional<bool> asvector = call_.constant_bool("asvector");
  if (!axis) return false;
  if (!asvector) return fail("its asvector is not a constant known at generation time");
  const SymShape& xd = value(x).dims;
  form_.len = value(x).numel();
  if (!*asvector && !xd.empty()) {
    size_t a = 0;
    if (!normalize_axis(*axis, static_cast<int64_t>(xd.size()), &a)) return fail("its axis is out of range");
    form_.len = xd[a];
    for (size_t d = a + 1; d < xd.size(); ++d) form_.inner = form_.inner * xd[d];
  }
  // porder is a float attribute: the CPU kernel widens the float to double.
  form_.p = static_cast<double>(static_cast<float>(*porder));
  return true;
}

namespace {

bool is_label(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

}  // namespace

bool ComputeChecks::einsum() {
  const KernelArg* xs = call_.arg("x");
  const uint32_t out = out_value();
  if (xs == nullptr || xs->kind != ArgKind::kTensorList || xs->values.empty() || xs->values.size() > 2 ||
      out == kNone) {
    return fail("it needs one or two operands and an output");
  }
  for (size_t i = 1; i < call_.outputs.size(); ++i) {
    for (uint32_t v : call_.outputs[i].values) {
      if (v != kNone && is_read(v)) return fail("its " + call_.outputs[i].name + " is read");
    }
  }
  const AttrConstant* equation = constant("equation");
  if (equation == nullptr) return false;
  std::string eq;
  for (char c : equation->string_value) {
    if (c != ' ') eq += c;
  }
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> labels;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    labels.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (labels.size() != xs->values.size()) return fail("its equation names another number of operands");
  std::array<int, 128> count{};
  std::array<SymExpr, 128> extent{};
  for (size_t i = 0; i < labels.size(); ++i) {
    const uint32_t x = xs->values[i];
    if (!same_type(x, out, true)) return false;
    if (labels[i].size() != value(x).dims.size()) return fail("an operand's labels do not match its rank");
    for (size_t a = 0; a < labels[i].size(); ++a) {
      const char c = labels[i][a];
      if (!is_label(c)) return fail("its equation has '" + std::string(1, c) + "', which is not a label");
      if (count[static_cast<unsigned char>(c)]++ == 0) extent[static_cast<unsigned char>(c)] = value(x).dims[a];
    }
  }
  std::string output;
  if (arrow == std::string::npos) {
    for (int c = 0; c < 128; ++c) {
      if (count[static_cast<size_t>(c)] == 1) output += static_cast<char>(c);
    }
  } else {
    output = eq.substr(arrow + 2);
  }
  if (output.size() != value(out).dims.size()) return fail("its output labels do not match its output's rank");
  // The loop labels: the output's, then the contracted ones in the order they first appear.
  std::string loops = output;
  for (const std::string& l : labels) {
    for (char c : l) {
      if (loops.find(c) == std::string::npos) loops += c;
    }
  }
  // Each operand's element stride per loop label (a repeated label walks the diagonal).
  form_.strides.assign(labels.size(), std::vector<SymExpr>(loops.size(), SymExpr(0)));
  for (size_t i = 0; i < labels.size(); ++i) {
    const SymShape& d = value(xs->values[i]).dims;
    SymExpr s = 1;
    for (size_t a = d.size(); a-- > 0;) {
      SymExpr& stride = form_.strides[i][loops.find(labels[i][a])];
      stride = stride + s;
      s = s * d[a];
    }
  }
  form_.output_labels = output.size();
  for (size_t l = output.size(); l < loops.size(); ++l) {
    form_.contracted.push_back(extent[static_cast<unsigned char>(loops[l])]);
  }
  return true;
}

}  // namespace kforge::passes::cuda_plan_internal
