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
// The plan's form (passes/cuda_plan_loss.cpp) has the attributes; here each kernel's parameters and the form its
// statements are spelled from (templates/program/cuda/index_loss.j2).
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
           const SizeTable::Spelling& size_argument)
      : IndexBuilder(p, call, prefix, first, description, buffer, sizes, size_argument), form_(map) {}

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
    return cuda_device_constant(v, type);
  }
  // The form's entries both losses use (templates/program/cuda/index_loss.j2): the type, its 0 and 1, its functions.
  static tmpl::Value numbers(const std::string& type) {
    tmpl::Value f = tmpl::Value::map();
    f.set("type", type);
    f.set("zero", literal(type, 0));
    f.set("one", literal(type, 1));
    f.set("log", fn(type, "log"));
    f.set("exp", fn(type, "exp"));
    f.set("fabs", fn(type, "fabs"));
    return f;
  }

  // The plan's form (passes/cuda_plan_loss.cpp) has checked the call: the types, the constants, the axis.
  void sigmoid_ce() {
    const uint32_t x = call_.tensor_arg("x"), label = call_.tensor_arg("label"), weight = call_.tensor_arg("pos_weight"),
                   out = out_value();
    const std::string type = *move_type(form_.dtype);
    KernelText k = text();
    const std::string in = k.input(x, type), y = k.input(label, type);
    const std::string w = weight != kNone ? k.input(weight, type) : "";
    k.output(out, type);
    tmpl::Value f = numbers(type);
    f.set("kind", "sigmoid_cross_entropy");
    f.set("x", in);
    f.set("label", y);
    f.set("weight", w);  // "": none (a weight of 1)
    f.set("n", k.size(value(x).numel()));
    f.set("ignore_index", form_.ignore_index);
    f.set("normalize", form_.normalize);
    // With normalize one thread computes every loss, counts the labels and divides.
    add(k, form_.normalize ? SymExpr(1) : value(out).numel());
    kernels_.back().form = std::move(f);
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
    tmpl::Value f = numbers(type);
    f.set("kind", "softmax_cross_entropy");
    f.set("x", in);
    f.set("label", y);
    f.set("classes", classes);
    f.set("step", step);
    f.set("row", row);
    f.set("floor", literal(type, -64));  // the shifted values' floor before exp
    // log(0) = -inf taken as -1e20 (and +inf as 1e20).
    f.set("huge", type == "float" ? "HUGE_VALF" : "HUGE_VAL");
    f.set("big", literal(type, 1e20));
    f.set("use_softmax", form_.use_softmax);
    f.set("soft_label", form_.soft_label);
    f.set("ignore_index", form_.ignore_index);
    add(k, outer);
    kernels_.back().form = std::move(f);
  }

  const passes::CudaIndexMap& form_;
};

}  // namespace

std::vector<CudaIndexKernel> loss_kernels(const LoweredProgram& program, const KernelCall& call,
                                          const passes::CudaIndexMap& map, const std::string& prefix, size_t first,
                                          const std::string& description, const CudaBufferExpr& buffer,
                                          SizeTable& sizes, const SizeTable::Spelling& size_argument) {
  return LossCall(map, program, call, prefix, first, description, buffer, sizes, size_argument).build();
}

}  // namespace kforge::codegen::index_text
