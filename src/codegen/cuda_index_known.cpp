// Calls whose every result the analysis knows as expressions of the dynamic dims (LoweredValue::known: a shape64,
// a slice of it, `length > 1`): a kernel that writes those elements, the expressions computed on the host from the
// program's sizes. No CUDA kernel of the op itself is needed then (the shape64 -> slice -> greater_than chain of
// paddleformers' causal-mask condition), and the values are exactly what the op would compute.
#include <fmt/format.h>

#include "codegen/cuda_index.h"
#include "codegen/cuda_index_text.h"

namespace kforge::codegen {

namespace {

using index_text::IndexBuilder;
using index_text::KernelText;

class KnownCall : public IndexBuilder {
 public:
  using IndexBuilder::IndexBuilder;

  std::optional<std::vector<CudaIndexKernel>> build() {
    if (!passes::cuda_results_known(p_, call_)) return std::nullopt;
    for (const passes::CallOutput& o : call_.outputs) {
      for (uint32_t v : o.values) {
        if (v != passes::kNone) write(v);
      }
    }
    return take();
  }

 private:
  // out[e] = element e, as a chain of selects over the (few) elements. cuda_results_known has checked that the
  // kernels move the dtype.
  void write(uint32_t v) {
    const std::string type = *index_text::move_type(value(v).dtype);
    const std::vector<passes::SymExpr>& elements = value(v).known;
    KernelText k = text();
    k.output(v, type);
    std::string chain = fmt::format("static_cast<{}>({})", type, k.size(elements.back()));
    for (size_t i = elements.size() - 1; i-- > 0;) {
      chain = fmt::format("e == {} ? static_cast<{}>({}) : {}", i, type, k.size(elements[i]), chain);
    }
    add(k, passes::SymExpr(static_cast<int64_t>(elements.size())));
    kernels_.back().form = cuda_index_store_form(chain);
  }
};

}  // namespace

std::optional<std::vector<CudaIndexKernel>> cuda_known_kernels(const passes::LoweredProgram& program,
                                                               const passes::KernelCall& call, const std::string& prefix,
                                                               size_t first, const std::string& description,
                                                               const CudaBufferExpr& buffer, SizeTable& sizes,
                                                               const SizeTable::Spelling& size_argument) {
  return KnownCall(program, call, prefix, first, description, buffer, sizes, size_argument).build();
}

}  // namespace kforge::codegen
