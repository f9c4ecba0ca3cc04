// The index-mapped CUDA kernel of einsum (codegen/cuda_index.h), as kernels/batched.cc computes it: one thread per
// output element walks the contracted labels (in the order they first appear in the operands, the last fastest)
// and sums the products of the operands' elements in the operands' type. One or two operands; a label repeated in
// an operand walks its diagonal; the output labels after "->", or (no arrow) the labels that appear once, in
// increasing order (numpy's rule). The shape rule (passes/shape_rules_index.cpp) has checked the equation.
#include <fmt/format.h>

#include <array>

#include "codegen/cpp_text.h"
#include "codegen/cuda_index_text.h"

namespace kforge::codegen::index_text {

namespace {

bool is_label(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

class EinsumCall : public IndexBuilder {
 public:
  using IndexBuilder::IndexBuilder;

  std::optional<std::vector<CudaIndexKernel>> build() {
    if (!einsum()) return std::nullopt;
    return take();
  }

 private:
  bool einsum() {
    const KernelArg* xs = call_.arg("x");
    const uint32_t out = out_value();
    if (xs == nullptr || xs->kind != ArgKind::kTensorList || xs->values.empty() || xs->values.size() > 2 ||
        out == kNone) {
      return fail("it needs one or two operands and an output");
    }
    for (size_t i = 1; i < call_.outputs.size(); ++i) {
      for (uint32_t v : call_.outputs[i].values) {
        if (v != kNone && is_read(p_, v)) return fail("its " + call_.outputs[i].name + " is read");
      }
    }
    const passes::AttrConstant* equation = constant(call_, "equation", why_);
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
    std::string type;
    std::array<int, 128> count{};
    std::array<SymExpr, 128> extent{};
    for (size_t i = 0; i < labels.size(); ++i) {
      const uint32_t x = xs->values[i];
      type = same_type(x, out, true);
      if (type.empty()) return false;
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
    const SymShape& od = value(out).dims;
    if (output.size() != od.size()) return fail("its output labels do not match its output's rank");
    // The loop labels: the output's, then the contracted ones in the order they first appear.
    std::string loops = output;
    for (const std::string& l : labels) {
      for (char c : l) {
        if (loops.find(c) == std::string::npos) loops += c;
      }
    }
    // Each operand's element stride per loop label (a repeated label walks the diagonal).
    std::vector<std::vector<SymExpr>> stride(labels.size(), std::vector<SymExpr>(loops.size(), SymExpr(0)));
    for (size_t i = 0; i < labels.size(); ++i) {
      const SymShape& d = value(xs->values[i]).dims;
      SymExpr s = 1;
      for (size_t a = d.size(); a-- > 0;) {
        stride[i][loops.find(labels[i][a])] = stride[i][loops.find(labels[i][a])] + s;
        s = s * d[a];
      }
    }
    SymShape contracted;
    for (size_t l = output.size(); l < loops.size(); ++l) contracted.push_back(extent[static_cast<unsigned char>(loops[l])]);
    KernelText k = text();
    std::vector<std::string> names;
    for (uint32_t v : xs->values) names.push_back(k.input(v, type));
    k.output(out, type);
    k.coordinates(od);
    auto offset = [&](size_t i, bool outputs) {
      std::string s;
      for (size_t l = outputs ? 0 : output.size(); l < (outputs ? output.size() : loops.size()); ++l) {
        if (stride[i][l] == SymExpr(0)) continue;
        const std::string c = outputs ? "c" + std::to_string(l) : "q" + std::to_string(l - output.size());
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
    return true;
  }
};

}  // namespace

std::optional<std::vector<CudaIndexKernel>> einsum_kernels(const LoweredProgram& program, const KernelCall& call,
                                                           const std::string& prefix, size_t first,
                                                           const std::string& description,
                                                           const CudaBufferExpr& buffer, SizeTable& sizes,
                                                           const SizeTable::Spelling& size_argument, std::string* why) {
  EinsumCall builder(program, call, prefix, first, description, buffer, sizes, size_argument, why);
  return builder.build();
}

}  // namespace kforge::codegen::index_text
