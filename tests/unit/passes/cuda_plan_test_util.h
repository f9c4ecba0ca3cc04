// Shared by the unit tests of the CUDA target plan (tests/unit/passes/test_cuda_plan.cpp) and of the steps codegen
// spells from it (tests/unit/codegen/test_cuda_conv.cpp): a program YAML lowered against the ops of golden case
// compile-cuda-conv, its fusion and its CUDA target plan as --target cuda makes them, and the programs both read.
#pragma once

#include <catch2/catch.hpp>

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "opdef/op_loader.h"
#include "passes/cuda_plan.h"
#include "passes/fusion.h"
#include "passes/pipeline.h"
#include "program/program_reader.h"

namespace kforge::passes::test {

/// The op files of golden case compile-cuda-conv (kernels/ops.yaml's conv2d, pool2d, batch_norm, matmul, ... and
/// fusion.yaml's conv2d_fused), relative to the source root.
inline const std::vector<std::string> kConvOps = {"tests/golden/compile-cuda-conv/ops.yaml",
                                                  "tests/golden/compile-cuda-conv/fusion.yaml"};
/// The kernel library's ops (the index-mapped ops, nonzero, flip, ...).
inline const std::vector<std::string> kLibraryOps = {"kernels/ops.yaml"};

/// Lowers a program YAML text against `op_files` (kConvOps unless told), plans its fusion as --target cuda does,
/// and makes its CUDA target plan with cuDNN workspaces of `scratch_bytes` (`cuda_graph`: as --cuda-graph).
struct PlanFixture {
  SourceManager sources;
  std::ostringstream errors;
  DiagnosticEngine diags{sources, errors};
  opdef::OpLibrary library;
  std::unique_ptr<OpSet> ops;
  std::optional<LoweredProgram> lowered;
  FusionPlan fusion;
  CudaPlan plan;

  explicit PlanFixture(const std::string& program_text, int64_t scratch_bytes = 64 << 20,
                       const std::vector<std::string>& op_files = kConvOps, bool cuda_graph = false) {
    opdef::OpLoader loader(sources, diags);
    for (const std::string& file : op_files) loader.add_file(std::string(KFORGE_SOURCE_ROOT) + "/" + file);
    library = std::move(loader).finish();
    ops = std::make_unique<OpSet>(library, nullptr, diags);
    const uint32_t file = sources.add_buffer("p.yaml", program_text);
    std::optional<ir::Program> program = ir::read_program(sources, file, diags);
    REQUIRE(program);
    lowered = compile_program(*program, *ops, diags);
    INFO(errors.str());
    REQUIRE(lowered);
    FusionOptions options;
    options.single_call_groups = true;
    options.gemm_groups = true;
    options.conv_fused = library.find("conv2d_fused");
    options.half_floats = true;  // as --target cuda: 16-bit values in groups
    fusion = plan_fusion(*lowered, options);
    apply_fusion_to_memory_plan(*lowered, fusion);
    plan = plan_cuda(*lowered, fusion, scratch_bytes, cuda_graph);
  }

  /// The form of convolution group g, of the convolution call c, of the pool call c.
  const CudaConv& group_conv(uint32_t g) const {
    INFO(refusals());
    REQUIRE(g < fusion.groups.size());
    REQUIRE(fusion.groups[g].kind == GroupKind::kConv);
    REQUIRE(plan.group_conv(g) != nullptr);
    return *plan.group_conv(g);
  }
  const CudaConv& conv(uint32_t c) const {
    INFO(refusals());
    REQUIRE(plan.call_conv(c) != nullptr);
    return *plan.call_conv(c);
  }
  const CudaPool& pool(uint32_t c) const {
    INFO(refusals());
    REQUIRE(plan.pools.count(c) == 1);
    return plan.pools.at(c);
  }
  /// The form of the data-movement call (or batched matmul) c.
  const CudaIndexMap& index_map(uint32_t c) const {
    INFO(refusals());
    REQUIRE(plan.index_maps.count(c) == 1);
    return plan.index_maps.at(c);
  }
  /// The index of the first call of op `op`.
  uint32_t call(const std::string& op) const {
    for (uint32_t c = 0; c < lowered->calls.size(); ++c) {
      if (lowered->calls[c].op == op) return c;
    }
    FAIL("no call of " << op);
    return kNone;
  }
  uint32_t value(const std::string& name) const {
    for (const LoweredValue& v : lowered->values) {
      if (v.name == name) return v.index;
    }
    FAIL("no value " << name);
    return kNone;
  }
  /// The refusals as the pipeline reports them: "LINE:COL: MESSAGE", one a line.
  std::string refusals() const {
    std::string out;
    for (const CudaRefusal& r : plan.refusals) {
      const LineCol lc = sources.line_col(r.loc);
      out += std::to_string(lc.line) + ":" + std::to_string(lc.col) + ": " + r.message + "\n";
    }
    return out;
  }
};

/// One conv2d of the input x by the parameter w into the output y, its op on line 5, column 5.
inline std::string lone_conv(const std::string& x_shape, const std::string& w_shape, const std::string& attrs,
                             const std::string& dtype = "float32") {
  return "program: conv\ninputs:  [{name: x, dtype: " + dtype + ", shape: " + x_shape + "}]\nparams:  [{name: w, " +
         "dtype: " + dtype + ", shape: " + w_shape + "}]\nops:\n  - op: conv2d\n    in: [x, w]\n    out: [y]\n" +
         "    attrs: {" + attrs + "}\noutputs: [y]\n";
}

/// conv2d's attributes.
inline std::string conv_attrs(const std::string& strides, const std::string& paddings, const std::string& algorithm,
                              const std::string& dilations, int groups, const std::string& format) {
  return "strides: " + strides + ", paddings: " + paddings + ", padding_algorithm: " + algorithm +
         ", dilations: " + dilations + ", groups: " + std::to_string(groups) + ", data_format: " + format;
}

/// An NHWC convolution of a SAME padding, stride 2 (the dilations become 1).
inline std::string nhwc_same_conv() {
  return lone_conv("[2, 7, 7, 3]", "[5, 3, 3, 3]", conv_attrs("[2, 2]", "[0, 0]", "SAME", "[2, 2]", 1, "NHWC"));
}
/// A SAME padding of stride 2 over an even size: top 0, bottom 1 (asymmetric).
inline std::string same_stride2_conv() {
  return lone_conv("[1, 2, 6, 6]", "[4, 2, 3, 3]", conv_attrs("[2, 2]", "[0, 0]", "SAME", "[1, 1]", 1, "NCHW"));
}
/// An explicit [top, bottom, left, right] padding, the bottom smaller than the top, over a dynamic batch.
inline std::string explicit_asymmetric_conv() {
  return lone_conv("[-1, 2, 7, 6]", "[3, 2, 3, 3]",
                   conv_attrs("[2, 2]", "[2, 0, 1, 2]", "EXPLICIT", "[1, 1]", 1, "NCHW"));
}
/// An NHWC depthwise convolution with an asymmetric padding (the direct depthwise kernel's).
inline std::string depthwise_asymmetric_conv() {
  return lone_conv("[1, 5, 6, 4]", "[4, 1, 2, 2]", conv_attrs("[1, 1]", "[0, 1, 1, 0]", "EXPLICIT", "[1, 1]", 4, "NHWC"));
}
/// A convolution of stride 2 over a dynamic batch, height and width.
inline std::string dynamic_conv() {
  return lone_conv("[-1, 3, -1, -1]", "[8, 3, 3, 3]", conv_attrs("[2, 2]", "[1, 1]", "EXPLICIT", "[1, 1]", 1, "NCHW"));
}

/// One pool2d of the input x into y.
inline std::string pool_program(const std::string& dims, const std::string& attrs) {
  return "program: pool\ninputs:  [{name: x, dtype: float32, shape: " + dims +
         "}]\nops:\n  - op: pool2d\n    in: [x]\n    out: [y]\n    attrs: {" + attrs + "}\noutputs: [y]\n";
}
/// pool2d's attributes.
inline std::string pool_attrs(const std::string& kernel, const std::string& strides, const std::string& paddings,
                              bool ceil_mode, bool exclusive, const std::string& format, const std::string& type,
                              bool global, bool adaptive) {
  auto b = [](bool v) { return std::string(v ? "true" : "false"); };
  return "kernel_size: " + kernel + ", strides: " + strides + ", paddings: " + paddings + ", ceil_mode: " +
         b(ceil_mode) + ", exclusive: " + b(exclusive) + ", data_format: " + format + ", pooling_type: " + type +
         ", global_pooling: " + b(global) + ", adaptive: " + b(adaptive) + ", padding_algorithm: EXPLICIT";
}

/// A grouped convolution, a bias, an inference batch norm and a relu6 (one convolution group), and a residual add
/// whose [1, 6, 5, 5] operand has not the dynamic batch's shape (an elementwise group).
constexpr const char* kConvBlock = R"(program: block
inputs:  [{name: x, dtype: float32, shape: [-1, 4, 9, 9]}]
params:
  - {name: w, dtype: float32, shape: [6, 2, 3, 3]}
  - {name: b, dtype: float32, shape: [1, 6, 1, 1]}
  - {name: m, dtype: float32, shape: [6]}
  - {name: v, dtype: float32, shape: [6]}
  - {name: s, dtype: float32, shape: [6]}
  - {name: t, dtype: float32, shape: [6]}
  - {name: r, dtype: float32, shape: [1, 6, 5, 5]}
ops:
  - op: conv2d
    in: [x, w]
    out: [c]
    attrs: {strides: [2, 2], paddings: [1, 1], padding_algorithm: EXPLICIT, dilations: [1, 1], groups: 2, data_format: NCHW}
  - {op: add, in: [c, b], out: [cb]}
  - op: batch_norm
    in: [cb, m, v, s, t]
    out: [n, n_mean, n_var, n_saved_mean, n_saved_var, n_reserve]
    attrs: {is_test: true, momentum: 0.9, epsilon: 1.0e-3, data_format: NCHW, use_global_stats: false, trainable_statistics: false}
  - {op: relu6, in: [n], out: [a]}
  - {op: add, in: [a, r], out: [y]}
outputs: [y]
)";

/// kConvBlock as --precision float16 leaves it: activations, the filter, the bias and the residual 16-bit; with
/// `half_mean` the batch norm's mean too.
inline std::string half_conv_block(bool half_mean = false) {
  std::string text = kConvBlock;
  for (const char* name : {"x", "w", "b", "r", "m"}) {
    if (name[0] == 'm' && !half_mean) continue;
    const std::string from = std::string("{name: ") + name + ", dtype: float32";
    text.replace(text.find(from), from.size(), std::string("{name: ") + name + ", dtype: float16");
  }
  return text;
}

/// A program of the kernel library's ops: x and the other inputs, the ops (one a line from line 4, column 5), y.
inline std::string library_program(const std::string& inputs, const std::string& ops,
                                   const std::string& outputs = "y") {
  return "program: p\ninputs: [" + inputs + "]\nops:\n" + ops + "outputs: [" + outputs + "]\n";
}

}  // namespace kforge::passes::test
