// The index-mapped CUDA kernels of three elementwise ops that no fused expression spells (codegen/cuda_index.h):
//   - uniform: kernels/creation_math.cc's counter-based draw, element i from splitmix64(seed * 0x100000001B3 + i)'s top
//     53 bits scaled into [min, max) in double, rounded to the output's type and stepped below max where it rounds to
//     it: the same values as the CPU kernel (Paddle's own generator is another);
//   - floor_divide, whose formula differs for integers and floats (kernels/fusion.yaml says why it has no `compute`). One
// thread per output element reads x and y at their broadcast coordinates (numpy's rules: dims aligned at the end, a
// dim of 1 read at 0) and computes Python's a // b as kernels/math.cc does (kforge_index.cuh's floor_divide: a
// division of integers by 0, the CPU kernel's error, gives 0).
//   - prelu, whose slope is read per channel or per element of a batch item (no broadcast of numpy's rules): out =
//     x > 0 ? x : alpha[j] * x as kernels/math.cc computes it, j from the element's coordinates.
//   - randint: uniform's draw with seed 0 scaled to [low, high), as kernels/creation_math.cc.
// The arithmetic of uniform and floor_divide is kforge_index.cuh's (uniform_draw, floor_divide); the kernels only index.
// The plan's form of each call (passes/cuda_plan_compute.h) is what is rendered: every check is the plan's. The
// statements are templates/program/cuda/index_compute.j2's skeletons; this file supplies their context (names,
// types, sizes, expressions), in the order the sizes become kernel parameters.
#include <fmt/format.h>

#include "codegen/cpp_text.h"
#include "codegen/cuda_index_text.h"
#include "passes/cuda_plan_compute.h"

namespace kforge::codegen::index_text {

namespace {

class BinaryCall : public IndexBuilder {
 public:
  BinaryCall(const passes::CudaComputeForm& form, const passes::LoweredProgram& p, const passes::KernelCall& call,
             const std::string& prefix, size_t first, const std::string& description, const CudaBufferExpr& buffer,
             SizeTable& sizes, const SizeTable::Spelling& size_argument)
      : IndexBuilder(p, call, prefix, first, description, buffer, sizes, size_argument), form_(form) {}

  std::vector<CudaIndexKernel> build() {
    if (call_.op == "uniform") {
      uniform();
    } else if (call_.op == "randint") {
      randint();
    } else if (call_.op == "prelu") {
      prelu();
    } else {
      floor_divide();
    }
    return take();
  }

 private:
  // The offset in an operand of dims `dims` of the output coordinate c0, c1, ... (numpy's broadcast).
  std::string broadcast_offset(KernelText& k, const SymShape& dims, const SymShape& od) {
    std::vector<std::string> coords;
    const size_t lead = od.size() - dims.size();
    for (size_t d = 0; d < dims.size(); ++d) {
      coords.push_back(dims[d].constant() == std::optional<int64_t>(1) ? "0" : "c" + std::to_string(d + lead));
    }
    return k.offset(coords, dims);
  }

  void uniform() {
    const uint32_t out = out_value();
    const std::string type = *element_type(form_.dtype);  // float or double
    KernelText k = text();
    k.output(out, type);
    // The key: the seed's int64 bits as uint64.
    k.statements(store_statements(k.coordinates_context({}),
                                  fmt::format("kforge::cuda_index::uniform_draw<{}>({}ull, e, {}, {})", type,
                                              static_cast<uint64_t>(form_.seed), cuda_device_digits(form_.min, "double"),
                                              cuda_device_digits(form_.max, "double"))));
    add(k, value(out).numel(), true);
  }

  // randint as kernels/creation_math.cc: uniform's draw of seed 0 in [0, 1) scaled to the range and truncated.
  void randint() {
    const uint32_t out = out_value();
    const std::string type = *move_type(form_.dtype);
    KernelText k = text();
    k.output(out, type);
    const auto low = static_cast<long long>(form_.min), range = static_cast<long long>(form_.max) - low;
    k.statements(store_statements(
        k.coordinates_context({}),
        fmt::format("static_cast<{}>({}LL + static_cast<long long>(kforge::cuda_index::uniform_draw<double>(0ull, e, "
                    "0.0, 1.0) * {}.0))",
                    type, low, range)));
    add(k, value(out).numel(), true);
  }

  void prelu() {
    const uint32_t x = call_.tensor_arg("x"), alpha = call_.tensor_arg("alpha"), out = out_value();
    const std::string type = *move_type(form_.dtype);
    const SymShape& od = value(out).dims;
    KernelText k = text();
    const std::string a = k.input(alpha, type), in = k.input(x, type);
    k.output(out, type);
    tmpl::Value coords = k.coordinates_context(od);
    std::string slope = "0";
    if (form_.slope == passes::CudaSlopeMode::kChannel) {
      slope = form_.channel_first ? "c1" : "c" + std::to_string(od.size() - 1);
    } else if (form_.slope == passes::CudaSlopeMode::kElement) {
      std::vector<std::string> coords;
      for (size_t d = 1; d < od.size(); ++d) coords.push_back("c" + std::to_string(d));
      slope = coords.empty() ? "0" : k.offset(coords, SymShape(od.begin() + 1, od.end()));
    }
    k.statements(store_statements(std::move(coords), fmt::format("v > {}(0) ? v : {}[{}] * v", type, a, slope),
                                  {local(type, {{"v", in + "[e]"}})}));
    add(k, value(out).numel(), true);
  }

  void floor_divide() {
    const uint32_t x = call_.tensor_arg("x"), y = call_.tensor_arg("y"), out = out_value();
    const std::string type = *move_type(form_.dtype);
    const SymShape& od = value(out).dims;
    const SymShape& xd = value(x).dims;
    const SymShape& yd = value(y).dims;
    KernelText k = text();
    const std::string a = k.input(x, type), b = k.input(y, type);
    k.output(out, type);
    tmpl::Value coords = k.coordinates_context(od);
    const std::string x_at = broadcast_offset(k, xd, od), y_at = broadcast_offset(k, yd, od);
    k.statements(store_statements(std::move(coords), fmt::format("kforge::cuda_index::floor_divide<{}>({}[{}], {}[{}])",
                                                                 type, a, x_at, b, y_at)));
    add(k, value(out).numel(), true);
  }

  const passes::CudaComputeForm& form_;
};

}  // namespace

std::vector<CudaIndexKernel> binary_kernels(const LoweredProgram& program, const KernelCall& call,
                                            const passes::CudaComputeForm& form, const std::string& prefix,
                                            size_t first, const std::string& description, const CudaBufferExpr& buffer,
                                            SizeTable& sizes, const SizeTable::Spelling& size_argument) {
  return BinaryCall(form, program, call, prefix, first, description, buffer, sizes, size_argument).build();
}

}  // namespace kforge::codegen::index_text
