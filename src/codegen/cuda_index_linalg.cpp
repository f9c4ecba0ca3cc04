// The index-mapped CUDA kernel of einsum (codegen/cuda_index.h), as kernels/batched.cc computes it: one thread per
// output element walks the contracted labels (in the order they first appear in the operands, the last fastest)
// and sums the products of the operands' elements in the operands' type. One or two operands; a label repeated in
// an operand walks its diagonal; the output labels after "->", or (no arrow) the labels that appear once, in
// increasing order (numpy's rule). The shape rule (passes/shape_rules_index.cpp) has checked the equation.
#include <fmt/format.h>

#include <array>

#include "codegen/cpp_text.h"
#include "codegen/cuda_index_text.h"
#include "passes/cuda_plan_compute.h"

namespace kforge::codegen::index_text {

namespace {

class EinsumCall : public IndexBuilder {
 public:
  EinsumCall(const passes::CudaComputeForm& form, const passes::LoweredProgram& p, const passes::KernelCall& call,
             const std::string& prefix, size_t first, const std::string& description, const CudaBufferExpr& buffer,
             SizeTable& sizes, const SizeTable::Spelling& size_argument, std::string* why)
      : IndexBuilder(p, call, prefix, first, description, buffer, sizes, size_argument, why), form_(form) {}

  std::vector<CudaIndexKernel> build() {
    einsum();
    return take();
  }

 private:
  void einsum() {
    const KernelArg* xs = call_.arg("x");
    const uint32_t out = out_value();
    const std::string type = *move_type(form_.dtype);
    const SymShape& od = value(out).dims;
    const std::vector<std::vector<SymExpr>>& stride = form_.strides;
    const size_t outputs = form_.output_labels, loops = outputs + form_.contracted.size();
    const SymShape& contracted = form_.contracted;
    KernelText k = text();
    std::vector<std::string> names;
    for (uint32_t v : xs->values) names.push_back(k.input(v, type));
    k.output(out, type);
    k.coordinates(od);
    auto offset = [&](size_t i, bool of_output) {
      std::string s;
      for (size_t l = of_output ? 0 : outputs; l < (of_output ? outputs : loops); ++l) {
        if (stride[i][l] == SymExpr(0)) continue;
        const std::string c = of_output ? "c" + std::to_string(l) : "q" + std::to_string(l - outputs);
        s += (s.empty() ? "" : " + ") + (stride[i][l] == SymExpr(1) ? c : c + " * " + k.size(stride[i][l]));
      }
      return s.empty() ? std::string("0") : s;
    };
    for (size_t i = 0; i < names.size(); ++i) k.line(fmt::format("const int64_t base{} = {};", i, offset(i, true)));
    k.line(fmt::format("{} acc = 0;", type));
    const std::string total = k.size(passes::sym_numel(contracted));
    k.line(fmt::format("for (int64_t r = 0; r < {}; ++r) {{", total));
    k.indent(2);
    k.coordinates(contracted, "r", "q");
    std::string prod = fmt::format("{}[base0 + {}]", names[0], offset(0, false));
    if (names.size() == 2) {
      k.line(fmt::format("{} prod = {};", type, prod));
      k.line(fmt::format("prod *= {}[base1 + {}];", names[1], offset(1, false)));
      prod = "prod";
    }
    k.line(fmt::format("acc += {};", prod));
    k.indent(-2);
    k.line("}");
    k.line("out[e] = acc;");
    add(k, value(out).numel());
  }

  const passes::CudaComputeForm& form_;
};

}  // namespace

std::optional<std::vector<CudaIndexKernel>> einsum_kernels(const LoweredProgram& program, const KernelCall& call,
                                                           const std::string& prefix, size_t first,
                                                           const std::string& description,
                                                           const CudaBufferExpr& buffer, SizeTable& sizes,
                                                           const SizeTable::Spelling& size_argument, std::string* why) {
  // The plan refused the calls without a form (passes/cuda_plan_compute.h); it is read again here.
  const std::optional<passes::CudaComputeForm> form = passes::plan_cuda_compute(program, call, why);
  if (!form) return std::nullopt;
  return EinsumCall(*form, program, call, prefix, first, description, buffer, sizes, size_argument, why).build();
}

}  // namespace kforge::codegen::index_text
