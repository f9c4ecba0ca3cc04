// The index-mapped CUDA kernel of einsum (codegen/cuda_index.h), as kernels/batched.cc computes it: one thread per
// output element walks the contracted labels (in the order they first appear in the operands, the last fastest)
// and sums the products of the operands' elements in the operands' type. One or two operands; a label repeated in
// an operand walks its diagonal; the output labels after "->", or (no arrow) the labels that appear once, in
// increasing order (numpy's rule). The shape rule (passes/shape_rules_index.cpp) has checked the equation.
// The plan's form of each call (passes/cuda_plan_compute.h) is what is rendered: every check is the plan's. The
// statements are templates/program/cuda/index_compute.j2's skeletons; this file supplies their context (names,
// types, sizes, expressions), in the order the sizes become kernel parameters.
#include <fmt/format.h>

#include "codegen/cpp_text.h"
#include "codegen/cuda_index_text.h"
#include "passes/cuda_plan_compute.h"
#include "support/text.h"

namespace kforge::codegen::index_text {

namespace {

class EinsumCall : public IndexBuilder {
 public:
  EinsumCall(const passes::CudaComputeForm& form, const passes::LoweredProgram& p, const passes::KernelCall& call,
             const std::string& prefix, size_t first, const std::string& description, const CudaBufferExpr& buffer,
             SizeTable& sizes, const SizeTable::Spelling& size_argument)
      : IndexBuilder(p, call, prefix, first, description, buffer, sizes, size_argument), form_(form) {}

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
    tmpl::Value st = statements_of("einsum");
    st.set("coords", k.coordinates_context(od));
    auto offset = [&](size_t i, bool of_output) {
      std::vector<std::string> terms;
      for (size_t l = of_output ? 0 : outputs; l < (of_output ? outputs : loops); ++l) {
        if (stride[i][l] == SymExpr(0)) continue;
        const std::string c = of_output ? "c" + std::to_string(l) : "q" + std::to_string(l - outputs);
        terms.push_back(stride[i][l] == SymExpr(1) ? c : c + " * " + k.size(stride[i][l]));
      }
      return terms.empty() ? std::string("0") : join(terms, " + ");
    };
    tmpl::List bases;
    for (size_t i = 0; i < names.size(); ++i) bases.push_back(offset(i, true));
    st.set("bases", tmpl::Value(std::move(bases)));
    st.set("type", type);
    st.set("n", k.size(passes::sym_numel(contracted)));
    st.set("contracted", k.coordinates_context(contracted, "r", "q"));
    st.set("first", fmt::format("{}[base0 + {}]", names[0], offset(0, false)));
    st.set("second", names.size() == 2 ? fmt::format("{}[base1 + {}]", names[1], offset(1, false)) : "");
    k.statements(std::move(st));
    add(k, value(out).numel());
  }

  const passes::CudaComputeForm& form_;
};

}  // namespace

std::vector<CudaIndexKernel> einsum_kernels(const LoweredProgram& program, const KernelCall& call,
                                            const passes::CudaComputeForm& form, const std::string& prefix,
                                            size_t first, const std::string& description, const CudaBufferExpr& buffer,
                                            SizeTable& sizes, const SizeTable::Spelling& size_argument) {
  return EinsumCall(form, program, call, prefix, first, description, buffer, sizes, size_argument).build();
}

}  // namespace kforge::codegen::index_text
