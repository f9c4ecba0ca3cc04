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
// The arithmetic of uniform and floor_divide is kforge_index.cuh's (uniform_draw, floor_divide); the kernels only index.
#include <fmt/format.h>

#include <cmath>

#include "codegen/cpp_text.h"
#include "codegen/cuda_index_text.h"

namespace kforge::codegen::index_text {

namespace {

class BinaryCall : public IndexBuilder {
 public:
  using IndexBuilder::IndexBuilder;

  std::optional<std::vector<CudaIndexKernel>> build() {
    const bool built = call_.op == "uniform" ? uniform() : call_.op == "prelu" ? prelu() : floor_divide();
    if (!built) return std::nullopt;
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

  bool uniform() {
    const uint32_t out = out_value();
    if (out == kNone) return fail("it needs an output");
    const ir::DataType d = value(out).dtype;
    if (d != ir::DataType::kFloat32 && d != ir::DataType::kFloat64) {
      return fail(fmt::format("it draws {} values; the CUDA kernel draws float32 and float64", ir::dtype_name(d)));
    }
    const std::optional<double> lo = constant_float(call_, "min", why_);
    const std::optional<double> hi = lo ? constant_float(call_, "max", why_) : std::nullopt;
    const std::optional<int64_t> seed = hi ? constant_int(call_, "seed", why_) : std::nullopt;
    if (!seed) return false;
    if (!(std::isfinite(*lo) && std::isfinite(*hi) && *lo <= *hi)) return fail("its min and max are not finite with min <= max");
    const std::string type = *element_type(d);  // float or double (checked above)
    KernelText k = text();
    k.output(out, type);
    // The key: the seed's int64 bits as uint64.
    k.line(fmt::format("out[e] = kforge::cuda_index::uniform_draw<{}>({}ull, e, {:.17g}, {:.17g});", type,
                       static_cast<uint64_t>(*seed), *lo, *hi));
    add(k, value(out).numel(), true);
    return true;
  }

  bool prelu() {
    const uint32_t x = call_.tensor_arg("x"), alpha = call_.tensor_arg("alpha"), out = out_value();
    const std::string type = same_type(x, out, true);
    if (type.empty() || alpha == kNone) return type.empty() ? false : fail("it needs x and alpha");
    if (type != "float" && type != "double") return fail("its x is not float32 or float64");
    if (value(alpha).dtype != value(x).dtype) return fail("its x and alpha differ in dtype");
    const passes::AttrConstant* mode = constant(call_, "mode", why_);
    const passes::AttrConstant* format = mode != nullptr ? constant(call_, "data_format", why_) : nullptr;
    if (format == nullptr) return false;
    const SymShape& od = value(out).dims;
    KernelText k = text();
    const std::string a = k.input(alpha, type), in = k.input(x, type);
    k.output(out, type);
    k.coordinates(od);
    std::string slope = "0";
    if (mode->string_value == "channel") {
      const std::string& f = format->string_value;
      const bool channel_first = f == "NCHW" || f == "NCDHW" || f == "NCL";
      if (od.size() < 2) return fail("its mode is \"channel\" and x has rank < 2");
      slope = channel_first ? "c1" : "c" + std::to_string(od.size() - 1);
    } else if (mode->string_value == "element") {
      std::vector<std::string> coords;
      for (size_t d = 1; d < od.size(); ++d) coords.push_back("c" + std::to_string(d));
      slope = coords.empty() ? "0" : k.offset(coords, SymShape(od.begin() + 1, od.end()));
    } else if (mode->string_value != "all") {
      return fail("its mode is \"" + mode->string_value + "\" (all, channel or element expected)");
    }
    k.line(fmt::format("const {} v = {}[e];", type, in));
    k.line(fmt::format("out[e] = v > {}(0) ? v : {}[{}] * v;", type, a, slope));
    add(k, value(out).numel(), true);
    return true;
  }

  bool floor_divide() {
    const uint32_t x = call_.tensor_arg("x"), y = call_.tensor_arg("y"), out = out_value();
    const std::string type = same_type(x, out, false);
    if (type.empty() || y == kNone) return type.empty() ? false : fail("it needs x and y");
    if (value(y).dtype != value(x).dtype) return fail("its x and y differ in dtype");
    if (type == "bool" || type == "uint16_t") return fail("it divides bool or 16-bit values, which the CUDA kernel does not take");
    const SymShape& od = value(out).dims;
    const SymShape& xd = value(x).dims;
    const SymShape& yd = value(y).dims;
    if (xd.size() > od.size() || yd.size() > od.size()) return fail("an operand has a higher rank than the output");
    KernelText k = text();
    const std::string a = k.input(x, type), b = k.input(y, type);
    k.output(out, type);
    k.coordinates(od);
    k.line(fmt::format("out[e] = kforge::cuda_index::floor_divide<{}>({}[{}], {}[{}]);", type, a,
                       broadcast_offset(k, xd, od), b, broadcast_offset(k, yd, od)));
    add(k, value(out).numel(), true);
    return true;
  }
};

}  // namespace

std::optional<std::vector<CudaIndexKernel>> binary_kernels(const LoweredProgram& program, const KernelCall& call,
                                                           const std::string& prefix, size_t first,
                                                           const std::string& description,
                                                           const CudaBufferExpr& buffer, SizeTable& sizes,
                                                           const SizeTable::Spelling& size_argument, std::string* why) {
  BinaryCall builder(program, call, prefix, first, description, buffer, sizes, size_argument, why);
  return builder.build();
}

}  // namespace kforge::codegen::index_text
