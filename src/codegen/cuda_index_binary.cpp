// The index-mapped CUDA kernel of the broadcasting binary ops that no fused expression spells (codegen/cuda_index.h):
// floor_divide, whose formula differs for integers and floats (kernels/fusion.yaml says why it has no `compute`). One
// thread per output element reads x and y at their broadcast coordinates (numpy's rules: dims aligned at the end, a
// dim of 1 read at 0) and computes Python's a // b as kernels/math.cc does: for integers the truncated quotient
// moved down when the signs differ and the remainder is not 0 (lowest // -1 wraps; a division by 0, the CPU
// kernel's error, gives 0), for floats fmod, the quotient of a - mod, one less where the signs differ, and Paddle's
// rounding of it.
#include <fmt/format.h>

#include "codegen/cpp_text.h"
#include "codegen/cuda_index_text.h"

namespace kforge::codegen::index_text {

namespace {

class BinaryCall : public IndexBuilder {
 public:
  using IndexBuilder::IndexBuilder;

  std::optional<std::vector<CudaIndexKernel>> build() {
    if (!floor_divide()) return std::nullopt;
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

bool is_binary_op(std::string_view op) { return op == "floor_divide"; }

std::optional<std::vector<CudaIndexKernel>> binary_kernels(const LoweredProgram& program, const KernelCall& call,
                                                           const std::string& prefix, size_t first,
                                                           const std::string& description,
                                                           const CudaBufferExpr& buffer, SizeTable& sizes,
                                                           const SizeTable::Spelling& size_argument, std::string* why) {
  BinaryCall builder(program, call, prefix, first, description, buffer, sizes, size_argument, why);
  return builder.build();
}

}  // namespace kforge::codegen::index_text
