// The index-mapped CUDA kernels of the losses no fused group takes (codegen/cuda_index.h), each computing as the CPU
// kernel of kernels/losses.cc does, in the same order and the same type:
//   - sigmoid_cross_entropy_with_logits: one thread per element, Paddle 3.3's form (1 - label) * x + weight *
//     (log(1 + exp(-|x|)) + max(-x, 0)), 0 where the label truncated to int is ignore_index; with normalize, one
//     thread walks every element and divides by the count of labels that are not ignore_index (slow, and rare);
//   - cross_entropy_with_softmax: one thread per row of [outer, classes * inner] around the axis: Paddle's CPU
//     softmax (the max over the whole row, exp of the shifted values clipped at -64, each line's sum and a multiply
//     by its inverse) into the softmax output, then each line's loss: -log of the label's probability (a hard label,
//     0 for ignore_index and for a label outside [0, classes), where the CPU kernel returns an error status) or
//     -sum(label * log p) (soft labels), log(0) taken as -1e20 as Paddle's TolerableValue.
#include <fmt/format.h>

#include <array>

#include "codegen/cpp_text.h"
#include "codegen/cuda_index_text.h"

namespace kforge::codegen::index_text {

namespace {

class LossCall : public IndexBuilder {
 public:
  LossCall(const passes::CudaIndexMap& map, const LoweredProgram& p, const KernelCall& call, const std::string& prefix,
           size_t first, const std::string& description, const CudaBufferExpr& buffer, SizeTable& sizes,
           const SizeTable::Spelling& size_argument, std::string* why)
      : IndexBuilder(p, call, prefix, first, description, buffer, sizes, size_argument, why), form_(map) {}

  std::vector<CudaIndexKernel> build() {
    if (call_.op == "sigmoid_cross_entropy_with_logits") {
      sigmoid_ce();
    } else {
      softmax_ce();
    }
    return take();
  }

 private:
  uint32_t output(size_t i) const {
    return i < call_.outputs.size() && call_.outputs[i].values.size() == 1 ? call_.outputs[i].values[0] : kNone;
  }

  // The float functions of type T (float: the f-suffixed ones, as std::log(float) and friends on the CPU).
  static std::string fn(const std::string& type, const std::string& name) {
    return type == "float" ? name + "f" : name;
  }
  static std::string literal(const std::string& type, double v) {
    return type == "float" ? cpp_float(static_cast<float>(v)) : fmt::format("{:.17g}", v);
  }

  // The plan's form (passes/cuda_plan_loss.cpp) has checked the call: the types, the constants, the axis.
  void sigmoid_ce() {
    const uint32_t x = call_.tensor_arg("x"), label = call_.tensor_arg("label"), weight = call_.tensor_arg("pos_weight"),
                   out = out_value();
    const std::string type = *move_type(form_.dtype);
    const int64_t ignore = form_.ignore_index;
    KernelText k = text();
    const std::string in = k.input(x, type), y = k.input(label, type);
    const std::string w = weight != kNone ? k.input(weight, type) : "";
    k.output(out, type);
    const std::string one = literal(type, 1), zero = literal(type, 0), n = k.size(value(x).numel());
    // Paddle compares the label truncated to int with ignore_index (a label outside int's range is never it).
    auto loss = [&](const std::string& i, const std::string& indent) {
      k.line(fmt::format("{}{{ const {} v = {}[{}], y = {}[{}];", indent, type, in, i, y, i));
      k.line(fmt::format("{}  const bool ignored = y == y && {}(static_cast<double>(y)) < 2147483647.0 && "
                         "static_cast<int>(y) == {};",
                         indent, "fabs", ignore));
      k.line(fmt::format("{}  const {} weight = {};", indent, type, w.empty() ? one : w + "[" + i + "]"));
      k.line(fmt::format("{}  out[{}] = ignored ? {} : ({} - y) * v + weight * ({}({} + {}(-{}(v))) + (v < {} ? -v : {})); }}",
                         indent, i, zero, one, fn(type, "log"), one, fn(type, "exp"), fn(type, "fabs"), zero, zero));
    };
    if (!form_.normalize) {
      loss("e", "");
      add(k, value(out).numel());
      return;
    }
    // One thread: every loss, the count of labels that are not ignore_index (by more than 1e-6), the division.
    k.line(fmt::format("for (int64_t i = 0; i < {}; ++i)", n));
    loss("i", "  ");
    k.line("int64_t count = 0;");
    k.line(fmt::format("const {} eps = static_cast<{}>(1e-6);", type, type));
    k.line(fmt::format("for (int64_t i = 0; i < {}; ++i) {{", n));
    k.line(fmt::format("  const {} diff = {}[i] - static_cast<{}>({});", type, y, type, ignore));
    k.line("  if (diff < -eps || diff > eps) ++count;");
    k.line("}");
    k.line(fmt::format("const {0} norm = static_cast<{0}>(count);", type));
    k.line(fmt::format("for (int64_t i = 0; i < {}; ++i) out[i] = out[i] / norm;", n));
    add(k, SymExpr(1));
  }

  void softmax_ce() {
    const uint32_t x = call_.tensor_arg("input"), label = call_.tensor_arg("label"), prob = output(0), loss = output(1);
    const std::string type = *move_type(form_.dtype);
    const std::string ltype = form_.soft_label ? type : *move_type(form_.index_dtype);
    const SymShape& xd = value(x).dims;
    const size_t a = form_.axis;
    SymExpr inner = 1;
    for (size_t d = a + 1; d < xd.size(); ++d) inner = inner * xd[d];
    SymExpr outer = 1;
    for (size_t d = 0; d < a; ++d) outer = outer * xd[d];
    KernelText k = text();
    const std::string in = k.input(x, type), y = k.input(label, ltype);
    k.output(prob, type, "out_softmax");
    k.output(loss, type);
    const std::string classes = k.size(xd[a]), step = k.size(inner), row = k.size(xd[a] * inner);
    const std::string zero = literal(type, 0), one = literal(type, 1);
    k.line(fmt::format("const {}* x = {} + e * {};", type, in, row));
    k.line(fmt::format("{}* p = out_softmax + e * {};", type, row));
    if (!form_.use_softmax) {
      k.line(fmt::format("for (int64_t j = 0; j < {}; ++j) p[j] = x[j];", row));
    } else {
      k.line(fmt::format("{} top = x[0];", type));
      k.line(fmt::format("for (int64_t j = 1; j < {}; ++j) top = x[j] > top ? x[j] : top;", row));
      k.line(fmt::format("for (int64_t j = 0; j < {}; ++j) {{", row));
      k.line(fmt::format("  {} shifted = x[j] - top;", type));
      k.line(fmt::format("  if (shifted < {0}) shifted = {0};", literal(type, -64)));
      k.line(fmt::format("  p[j] = {}(shifted);", fn(type, "exp")));
      k.line("}");
      k.line(fmt::format("for (int64_t i = 0; i < {}; ++i) {{", step));
      k.line(fmt::format("  {} sum = {};", type, zero));
      k.line(fmt::format("  for (int64_t c = 0; c < {}; ++c) sum += p[c * {} + i];", classes, step));
      k.line(fmt::format("  const {} scale = {} / sum;", type, one));
      k.line(fmt::format("  for (int64_t c = 0; c < {}; ++c) p[c * {} + i] *= scale;", classes, step));
      k.line("}");
    }
    // -log(v), log(0) = -inf taken as -1e20 (and +inf as 1e20).
    const std::string huge = type == "float" ? "HUGE_VALF" : "HUGE_VAL", big = literal(type, 1e20);
    // log(v) with an infinite result taken as -+1e20 (the loss is its negation).
    auto clamped_log = [&](const std::string& v) {
      const std::string lg = fn(type, "log") + "(" + v + ")";
      return fmt::format("({0} == {1} || {0} == -{1} ? ({0} < {2} ? -{3} : {3}) : {0})", lg, huge, zero, big);
    };
    k.line(fmt::format("for (int64_t i = 0; i < {}; ++i) {{", step));
    if (form_.soft_label) {
      k.line(fmt::format("  {} total = {};", type, zero));
      k.line(fmt::format("  for (int64_t c = 0; c < {0}; ++c) total += {1}[e * {2} + c * {3} + i] * {4};", classes, y,
                         row, step, clamped_log(fmt::format("p[c * {} + i]", step))));
      k.line(fmt::format("  out[e * {} + i] = -total;", step));
    } else {
      k.line(fmt::format("  const int64_t c = static_cast<int64_t>({}[e * {} + i]);", y, step));
      k.line(fmt::format("  out[e * {} + i] = c == {} || c < 0 || c >= {} ? {} : -{};", step, form_.ignore_index, classes, zero,
                         clamped_log(fmt::format("p[c * {} + i]", step))));
    }
    k.line("}");
    add(k, outer);
  }

  const passes::CudaIndexMap& form_;
};

}  // namespace

std::vector<CudaIndexKernel> loss_kernels(const LoweredProgram& program, const KernelCall& call,
                                          const passes::CudaIndexMap& map, const std::string& prefix, size_t first,
                                          const std::string& description, const CudaBufferExpr& buffer,
                                          SizeTable& sizes, const SizeTable::Spelling& size_argument,
                                          std::string* why) {
  return LossCall(map, program, call, prefix, first, description, buffer, sizes, size_argument, why).build();
}

}  // namespace kforge::codegen::index_text
