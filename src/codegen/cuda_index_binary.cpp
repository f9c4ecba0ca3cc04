// The index-mapped CUDA kernels of two elementwise ops that no fused expression spells (codegen/cuda_index.h):
//   - uniform: kernels/creation_math.cc's counter-based draw, element i from splitmix64(seed * 0x100000001B3 + i)'s top
//     53 bits scaled into [min, max) in double, rounded to the output's type and stepped below max where it rounds to
//     it: the same values as the CPU kernel (Paddle's own generator is another);
//   - floor_divide, whose formula differs for integers and floats (kernels/fusion.yaml says why it has no `compute`). One
// thread per output element reads x and y at their broadcast coordinates (numpy's rules: dims aligned at the end, a
// dim of 1 read at 0) and computes Python's a // b as kernels/math.cc does: for integers the truncated quotient
// moved down when the signs differ and the remainder is not 0 (lowest // -1 wraps; a division by 0, the CPU
// kernel's error, gives 0), for floats fmod, the quotient of a - mod, one less where the signs differ, and Paddle's
// rounding of it.
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
    if (!(call_.op == "uniform" ? uniform() : floor_divide())) return std::nullopt;
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
    const std::string type = d == ir::DataType::kFloat32 ? "float" : "double";
    const std::string f = type == "float" ? "f" : "";
    KernelText k = text();
    k.output(out, type);
    // The key: the seed's int64 bits as uint64.
    const uint64_t key = static_cast<uint64_t>(*seed);
    k.line(fmt::format("uint64_t z = {}ull * 0x100000001B3ull + static_cast<uint64_t>(e);", key));
    k.line("z += 0x9E3779B97F4A7C15ull;");
    k.line("z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;");
    k.line("z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;");
    k.line("z ^= z >> 31;");
    k.line("const double u = static_cast<double>(z >> 11) * (1.0 / 9007199254740992.0);");
    const std::string l = fmt::format("{:.17g}", *lo), h = fmt::format("{:.17g}", *hi);
    k.line(fmt::format("{} v = static_cast<{}>({} + ({} - {}) * u);", type, type, l, h, l));
    k.line(fmt::format("const {0} top = static_cast<{0}>({1}), bottom = static_cast<{0}>({2});", type, h, l));
    k.line(fmt::format("if (v >= top && top > bottom) v = nextafter{}(top, bottom);", f));
    k.line("out[e] = v;");
    add(k, value(out).numel());
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
    const bool floating = type == "float" || type == "double";
    KernelText k = text();
    const std::string a = k.input(x, type), b = k.input(y, type);
    k.output(out, type);
    k.coordinates(od);
    k.line(fmt::format("const {} a = {}[{}], b = {}[{}];", type, a, broadcast_offset(k, xd, od), b,
                       broadcast_offset(k, yd, od)));
    if (!floating) {
      const bool is_signed = type[0] == 'i';
      if (is_signed) {
        k.line(fmt::format("{} q;", type));
        k.line("if (b == 0) {");
        k.line(fmt::format("  q = {}(0);", type));
        k.line(fmt::format("}} else if (b == {}(-1)) {{", type));
        k.line(fmt::format("  q = static_cast<{0}>({1}(0) - static_cast<{1}>(a));", type, "u" + type));
        k.line("} else {");
        k.line(fmt::format("  q = static_cast<{}>(a / b);", type));
        k.line(fmt::format("  if ((a < 0) != (b < 0) && static_cast<{}>(a % b) != 0) q = static_cast<{}>(q - 1);", type,
                           type));
        k.line("}");
        k.line("out[e] = q;");
      } else {
        k.line(fmt::format("out[e] = b == 0 ? {}(0) : static_cast<{}>(a / b);", type, type));
      }
    } else {
      const std::string f = type == "float" ? "f" : "";
      k.line("if (b == 0) {");
      k.line("  out[e] = a / b;");
      k.line("} else {");
      k.line(fmt::format("  const {} mod = fmod{}(a, b);", type, f));
      k.line(fmt::format("  {} div = (a - mod) / b;", type));
      k.line(fmt::format("  if (mod != 0 && (b < 0) != (mod < 0)) div -= {}(1);", type));
      k.line("  if (div == 0) {");
      k.line(fmt::format("    out[e] = copysign{}({}(0), a / b);", f, type));
      k.line("  } else {");
      k.line(fmt::format("    {} floordiv = floor{}(div);", type, f));
      k.line(fmt::format("    if (div - floordiv > {}(0.5)) floordiv += {}(1);", type, type));
      k.line("    out[e] = floordiv;");
      k.line("  }");
      k.line("}");
    }
    add(k, value(out).numel());
    return true;
  }
};

}  // namespace

bool is_binary_op(std::string_view op) { return op == "floor_divide" || op == "uniform"; }

std::optional<std::vector<CudaIndexKernel>> binary_kernels(const LoweredProgram& program, const KernelCall& call,
                                                           const std::string& prefix, size_t first,
                                                           const std::string& description,
                                                           const CudaBufferExpr& buffer, SizeTable& sizes,
                                                           const SizeTable::Spelling& size_argument, std::string* why) {
  BinaryCall builder(program, call, prefix, first, description, buffer, sizes, size_argument, why);
  return builder.build();
}

}  // namespace kforge::codegen::index_text
