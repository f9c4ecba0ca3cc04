// The CUDA target plan's forms of the computing index-mapped ops (passes/cuda_plan_compute.h; and index_put's index
// map, added with them): the attributes resolved, and the reasons a call is refused at its op with the text codegen
// gave before the plan checked them.
#include <catch2/catch.hpp>

#include <cmath>

#include "cuda_plan_test_util.h"
#include "passes/cuda_plan_index.h"

namespace kforge::passes::test {

namespace {

/// A program of the kernel library's ops: the inputs, the ops (one a line from line 4, column 5), the outputs.
std::string compute_program(const std::string& inputs, const std::string& ops, const std::string& outputs = "y") {
  return "program: p\ninputs: [" + inputs + "]\nops:\n" + ops + "outputs: [" + outputs + "]\n";
}

const CudaComputeForm& compute_form(const PlanFixture& f, uint32_t c) {
  INFO(f.refusals());
  REQUIRE(f.plan.compute_forms.count(c) == 1);
  return f.plan.compute_forms.at(c);
}

}  // namespace

TEST_CASE("cuda plan: the computing ops' forms: lines around a normalised axis, reduced dims, flags") {
  PlanFixture f(compute_program("{name: x, dtype: float32, shape: [2, 3, 4]}",
                                "  - {op: cumsum, in: [x], out: [c], attrs: {axis: -2, flatten: false, "
                                "exclusive: true, reverse: false}}\n"
                                "  - {op: softmax, in: [c], out: [s], attrs: {axis: 0}}\n"
                                "  - {op: sum, in: [s], out: [y], attrs: {axis: [1], dtype: float32, "
                                "keepdim: false}}\n"),
                64 << 20, kLibraryOps);
  INFO(f.refusals());
  CHECK(f.plan.refusals.empty());
  const CudaComputeForm& cumsum = compute_form(f, f.call("cumsum"));
  CHECK(cumsum.dtype == ir::DataType::kFloat32);
  CHECK(cumsum.outer == SymExpr(2));
  CHECK(cumsum.len == SymExpr(3));
  CHECK(cumsum.inner == SymExpr(4));
  CHECK(cumsum.exclusive);
  CHECK_FALSE(cumsum.reverse);
  const CudaComputeForm& softmax = compute_form(f, f.call("softmax"));
  CHECK(softmax.outer == SymExpr(1));
  CHECK(softmax.len == SymExpr(2));
  CHECK(softmax.inner == SymExpr(12));
  const CudaComputeForm& sum = compute_form(f, f.call("sum"));
  CHECK(sum.reduced == std::vector<bool>{false, true, false});
  CHECK(sum.out_dtype == ir::DataType::kFloat32);
}

TEST_CASE("cuda plan: linear_interp, linspace, deformable_conv and index_put (issue 34's GraphNet ops): forms") {
  SECTION("linear_interp of NWC with a scale: its one scale is the width's") {
    PlanFixture f(compute_program("{name: x, dtype: float32, shape: [2, 5, 3]}",
                                  "  - {op: linear_interp, in: [x, ~, ~, ~], out: [y], attrs: {data_format: NHWC, "
                                  "out_d: -1, out_h: -1, out_w: -1, scale: [2.0], interp_method: linear, "
                                  "align_corners: false, align_mode: 1}}\n"),
                  64 << 20, kLibraryOps);
    const CudaComputeForm& interp = compute_form(f, f.call("linear_interp"));
    CHECK(interp.nhwc);
    CHECK(interp.align_mode == 1);
    CHECK(interp.scale_w == 2.0);
    CHECK(interp.scale_h == -1);
  }
  SECTION("linspace of float32 from tensor ends") {
    PlanFixture f(compute_program("{name: a, dtype: float32, shape: [1]}, {name: b, dtype: int64, shape: []}, "
                                  "{name: n, dtype: int32, shape: [1]}",
                                  "  - {op: full, out: [n7], attrs: {shape: [1], value: 7, dtype: int32}}\n"
                                  "  - {op: linspace, in: [a, b, n7], out: [y], attrs: {dtype: float32}}\n"),
                  64 << 20, kLibraryOps);
    CHECK(compute_form(f, f.call("linspace")).dtype == ir::DataType::kFloat32);
  }
  SECTION("deformable_conv's window and groups") {
    PlanFixture f(compute_program("{name: x, dtype: float32, shape: [1, 4, 9, 8]}, {name: o, dtype: float32, "
                                  "shape: [1, 36, 4, 3]}, {name: w, dtype: float32, shape: [6, 2, 3, 3]}",
                                  "  - {op: deformable_conv, in: [x, o, w, ~], out: [y], attrs: {strides: [2, 2], "
                                  "paddings: [1, 1], dilations: [2, 2], deformable_groups: 2, groups: 2, "
                                  "im2col_step: 1}}\n"),
                  64 << 20, kLibraryOps);
    const CudaComputeForm& conv = compute_form(f, f.call("deformable_conv"));
    CHECK(conv.window == std::vector<int64_t>{2, 2, 1, 1, 2, 2});
    CHECK(conv.deformable_groups == 2);
    CHECK(conv.groups == 2);
  }
  SECTION("index_put: the positions two index tensors broadcast to, their strides and the value's") {
    PlanFixture f(compute_program("{name: x, dtype: float32, shape: [4, 5, 2]}, {name: i, dtype: int64, "
                                  "shape: [3, 1]}, {name: j, dtype: int32, shape: [2]}, {name: v, dtype: float32, "
                                  "shape: [2, 1]}",
                                  "  - {op: builtin.combine, in: [i, j], out: [l]}\n"
                                  "  - {op: index_put, in: [x, l, v], out: [y], attrs: {accumulate: true}}\n"),
                  64 << 20, kLibraryOps);
    INFO(f.refusals());
    const CudaIndexMap& put = f.index_map(f.call("index_put"));
    CHECK_FALSE(put.overwrite);
    CHECK(put.depth == 2);
    CHECK(put.positions == SymShape{3, 2});
    CHECK(put.index_strides == std::vector<std::vector<SymExpr>>{{1, 0}, {0, 1}});
    CHECK(put.value_strides == std::vector<SymExpr>{0, 1, 0});
  }
}

TEST_CASE("cuda plan: diag's offset and padding value; a 16-bit input refused") {
  SECTION("a vector's matrix") {
    PlanFixture f(compute_program("{name: x, dtype: float32, shape: [3]}",
                                  "  - {op: diag, in: [x], out: [y], attrs: {offset: -1, padding_value: 2.5}}\n"),
                  64 << 20, kLibraryOps);
    const CudaComputeForm& diag = compute_form(f, f.call("diag"));
    CHECK(diag.diagonal == -1);
    CHECK(diag.padding_value == 2.5);
    CHECK(diag.dtype == ir::DataType::kFloat32);
  }
  SECTION("a float16 matrix: the kernel computes no 16-bit float") {
    PlanFixture f(compute_program("{name: x, dtype: float16, shape: [3, 4]}",
                                  "  - {op: diag, in: [x], out: [y], attrs: {offset: 1, padding_value: 0.0}}\n"),
                  64 << 20, kLibraryOps);
    CHECK(f.plan.compute_forms.count(f.call("diag")) == 0);
    CHECK_THAT(f.refusals(), Catch::Contains("dtype float16 has no CUDA diag"));
  }
}

TEST_CASE("cuda plan: a computing op its kernel cannot run is refused at the op for its first problem") {
  SECTION("a training dropout") {
    PlanFixture f(compute_program("{name: x, dtype: float32, shape: [4]}",
                                  "  - {op: dropout, in: [x, ~], out: [y, m], attrs: {p: 0.5, is_test: false, mode: "
                                  "upscale_in_train, seed: 0, fix_seed: false}}\n"),
                  64 << 20, kLibraryOps);
    CHECK(f.refusals() == "4:5: --target cuda: dropout (pd_op.dropout) has no CUDA kernel: it is a training dropout "
                          "(is_test is not true); only inference runs on the GPU\n");
  }
  SECTION("an integer pow of a negative exponent") {
    PlanFixture f(compute_program("{name: x, dtype: int32, shape: [4]}",
                                  "  - {op: pow, in: [x], out: [y], attrs: {y: -2.0}}\n"),
                  64 << 20, kLibraryOps);
    CHECK(f.refusals() == "4:5: --target cuda: pow (pd_op.pow) has no CUDA kernel: the exponent -2 of an integer "
                          "tensor is negative or does not fit its type\n");
  }
  SECTION("a floor_divide of bools") {
    PlanFixture f(compute_program("{name: x, dtype: bool, shape: [4]}, {name: z, dtype: bool, shape: [4]}",
                                  "  - {op: floor_divide, in: [x, z], out: [y]}\n"),
                  64 << 20, kLibraryOps);
    CHECK(f.refusals() == "4:5: --target cuda: floor_divide (pd_op.floor_divide) has no CUDA kernel: it divides bool "
                          "or 16-bit values, which the CUDA kernel does not take\n");
  }
}

TEST_CASE("cuda plan: bicubic_interp and prior_box (issue 34's BlazeFace and CLIP ops): forms") {
  SECTION("bicubic_interp reads align_corners and the layout as bilinear does") {
    PlanFixture f(compute_program("{name: x, dtype: float64, shape: [1, 4, 5, 2]}",
                                  "  - {op: bicubic_interp, in: [x, ~, ~, ~], out: [y], attrs: {data_format: NHWC, "
                                  "out_d: -1, out_h: 6, out_w: 9, scale: [], interp_method: bicubic, "
                                  "align_corners: true, align_mode: 0}}\n"),
                  64 << 20, kLibraryOps);
    INFO(f.refusals());
    const CudaComputeForm& interp = compute_form(f, f.call("bicubic_interp"));
    CHECK(interp.dtype == ir::DataType::kFloat64);
    CHECK(interp.nhwc);
    CHECK(interp.align_corners);
    CHECK(interp.scale_h == -1);
    CHECK(cuda_float32_index_ops().contains("bicubic_interp"));
  }
  SECTION("prior_box's half sizes in the CPU kernel's order and arithmetic") {
    PlanFixture f(compute_program("{name: x, dtype: float32, shape: [1, 8, 4, 5]}, "
                                  "{name: img, dtype: float32, shape: [1, 3, 32, 40]}",
                                  "  - {op: prior_box, in: [x, img], out: [b, v], attrs: {min_sizes: [16.0], "
                                  "max_sizes: [36.0], aspect_ratios: [2.0], variances: [0.1, 0.1, 0.2, 0.2], "
                                  "flip: true, clip: true, step_w: 0.0, step_h: 0.0, offset: 0.5, "
                                  "min_max_aspect_ratios_order: false}}\n",
                                  "b, v"),
                  64 << 20, kLibraryOps);
    INFO(f.refusals());
    const CudaComputeForm& prior = compute_form(f, f.call("prior_box"));
    // The ratios 1, 2, 1 / 2 (flip), then the square of side sqrt(16 * 36) = 24.
    const double r2 = 16.0f * std::sqrt(2.0f) / 2., h2 = 16.0f / std::sqrt(2.0f) / 2.;
    const double r_half = 16.0f * std::sqrt(1.0f / 2.0f) / 2., h_half = 16.0f / std::sqrt(1.0f / 2.0f) / 2.;
    CHECK(prior.prior_half_w == std::vector<double>{8.0, r2, r_half, 12.0});
    CHECK(prior.prior_half_h == std::vector<double>{8.0, h2, h_half, 12.0});
    CHECK(prior.variances == std::vector<double>{0.1f, 0.1f, 0.2f, 0.2f});
    CHECK(prior.clip);
    CHECK(prior.prior_offset == 0.5);
    CHECK(prior.step_w == 0.0);
  }
}

TEST_CASE("cuda plan: an interpolation's size from its size tensors' values runs its shape rule on the host") {
  SECTION("SizeTensor: no refusal, no scale") {
    PlanFixture f(compute_program("{name: x, dtype: float32, shape: [1, 2, 4, 5]}, "
                                  "{name: h, dtype: int64, shape: [1]}, {name: w, dtype: int64, shape: [1]}",
                                  "  - {op: builtin.combine, in: [h, w], out: [hw]}\n"
                                  // The result's declared type (as PIR's): its dims read at run time.
                                  "  - {op: bilinear_interp, in: [x, ~, hw, ~], out: [{name: y, dtype: float32, "
                                  "shape: [1, 2, -1, -1]}], attrs: {data_format: NCHW, "
                                  "out_d: -1, out_h: -1, out_w: -1, scale: [], interp_method: bilinear, "
                                  "align_corners: false, align_mode: 0}}\n"),
                  64 << 20, kLibraryOps);
    INFO(f.refusals());
    CHECK(f.plan.refusals.empty());
    const CudaComputeForm& interp = compute_form(f, f.call("bilinear_interp"));
    CHECK(interp.scale_h == -1);
    CHECK(is_cuda_host_shape_rule("InterpolateInferMeta"));
  }
  SECTION("a scale_tensor is refused at the op") {
    PlanFixture f(compute_program("{name: x, dtype: float32, shape: [1, 2, 4, 5]}, {name: s, dtype: float32, "
                                  "shape: [2]}",
                                  "  - {op: bilinear_interp, in: [x, ~, ~, s], out: [{name: y, dtype: float32, "
                                  "shape: [1, 2, -1, -1]}], attrs: {data_format: NCHW, "
                                  "out_d: -1, out_h: -1, out_w: -1, scale: [], interp_method: bilinear, "
                                  "align_corners: false, align_mode: 0}}\n"),
                  64 << 20, kLibraryOps);
    CHECK_THAT(f.refusals(), Catch::Contains("its scale_tensor is a tensor"));
  }
}

}  // namespace kforge::passes::test

namespace kforge::passes::test {

TEST_CASE("cuda plan: rnn's form (kforge_rnn.cuh): its values, dims and attributes, float32 and float64") {
  // A 2-layer bidirectional GRU over x [time 5, batch s0, 4], hidden 3, with int64 lengths: 16 weights (W_ih, W_hh
  // of each layer and direction, then the biases); layer 1 reads both directions' 3 outputs.
  const std::string inputs =
      "{name: x, dtype: DT, shape: [5, -1, 4]}, {name: h, dtype: DT, shape: [4, -1, 3]}, "
      "{name: n, dtype: int64, shape: [-1]}, {name: ds, dtype: uint8, shape: []}, "
      "{name: a, dtype: DT, shape: [9, 4]}, {name: w, dtype: DT, shape: [9, 3]}, "
      "{name: c, dtype: DT, shape: [9, 6]}, {name: b, dtype: DT, shape: [9]}";
  const std::string ops =
      "  - {op: builtin.combine, in: [h], out: [hs]}\n"
      "  - {op: builtin.combine, in: [a, w, a, w, c, w, c, w, b, b, b, b, b, b, b, b], out: [ws]}\n"
      "  - {op: rnn, in: [x, hs, ws, n, ds], out: [y, d, s, r], attrs: {mode: GRU, input_size: 4, hidden_size: 3, "
      "num_layers: 2, is_bidirec: true, is_test: true, dropout_prob: 0.0, seed: 0}}\n"
      "  - {op: builtin.split, in: [s], out: [hn]}\n";
  auto program = [&](const std::string& dtype) {
    std::string text = inputs;
    for (size_t at = text.find("DT"); at != std::string::npos; at = text.find("DT")) text.replace(at, 2, dtype);
    return compute_program(text, ops, "y, hn");
  };
  SECTION("float32") {
    PlanFixture f(program("float32"), 64 << 20, kLibraryOps);
    INFO(f.refusals());
    CHECK(f.plan.refusals.empty());
    const uint32_t c = f.call("rnn");
    REQUIRE(f.plan.rnns.count(c) == 1);
    const CudaRnn& rnn = f.plan.rnns.at(c);
    CHECK(rnn.mode == "GRU");
    CHECK(rnn.hidden == 3);
    CHECK(rnn.layers == 2);
    CHECK(rnn.dirs == 2);
    CHECK(rnn.weights.size() == 16);
    CHECK(rnn.c == kNone);
    CHECK(rnn.lengths != kNone);
    CHECK(rnn.length_dtype == ir::DataType::kInt64);
    CHECK(rnn.steps == SymExpr(5));
    CHECK(rnn.input == SymExpr(4));
    CHECK(f.plan.runs.at(c) == CudaRun::kLibrary);
  }
  SECTION("float64") {
    PlanFixture f(program("float64"), 64 << 20, kLibraryOps);
    INFO(f.refusals());
    CHECK(f.plan.refusals.empty());
    REQUIRE(f.plan.rnns.count(f.call("rnn")) == 1);
    CHECK(f.plan.rnns.at(f.call("rnn")).dtype == ir::DataType::kFloat64);
  }
}

}  // namespace kforge::passes::test

namespace kforge::passes::test {

TEST_CASE("cuda plan: a cast to or from a dtype the fused loops lack runs as a kernel of its own, 16-bit floats too") {
  SECTION("bool to uint8 (SOLOv2's mask) and uint8 to float32: converting forms; float32 to int32 stays fused") {
    PlanFixture f(compute_program("{name: x, dtype: bool, shape: [2, 3]}, {name: z, dtype: float32, shape: [2, 3]}",
                                  "  - {op: cast, in: [x], out: [u], attrs: {dtype: uint8}}\n"
                                  "  - {op: cast, in: [u], out: [y], attrs: {dtype: float32}}\n"
                                  "  - {op: cast, in: [z], out: [i], attrs: {dtype: int32}}\n",
                                  "y, i"),
                  64 << 20, {"kernels/ops.yaml", "kernels/fusion.yaml"});
    INFO(f.refusals());
    CHECK(f.plan.refusals.empty());
    const CudaComputeForm& to_u8 = compute_form(f, f.call("cast"));
    CHECK(to_u8.converts);
    CHECK(to_u8.dtype == ir::DataType::kBool);
    CHECK(to_u8.out_dtype == ir::DataType::kUInt8);
    CHECK(f.plan.compute_forms.size() == 2);
  }
  SECTION("float16 to uint8 and uint8 to bfloat16 (a --precision float16 program's cast): converting forms") {
    PlanFixture f(compute_program("{name: x, dtype: float16, shape: [2, 3]}",
                                  "  - {op: cast, in: [x], out: [u], attrs: {dtype: uint8}}\n"
                                  "  - {op: cast, in: [u], out: [y], attrs: {dtype: bfloat16}}\n"),
                  64 << 20, kLibraryOps);
    INFO(f.refusals());
    CHECK(f.plan.refusals.empty());
    const CudaComputeForm& to_u8 = compute_form(f, f.call("cast"));
    CHECK(to_u8.converts);
    CHECK(to_u8.dtype == ir::DataType::kFloat16);
    CHECK(to_u8.out_dtype == ir::DataType::kUInt8);
  }
  SECTION("uint32 to uint8: refused at the op") {
    PlanFixture f(compute_program("{name: x, dtype: uint32, shape: [2, 3]}",
                                  "  - {op: cast, in: [x], out: [y], attrs: {dtype: uint8}}\n"),
                  64 << 20, kLibraryOps);
    CHECK_THAT(f.refusals(), Catch::Contains("cast (pd_op.cast) has no CUDA kernel: it converts uint32 to uint8"));
  }
}

}  // namespace kforge::passes::test

namespace kforge::passes::test {

TEST_CASE("cuda plan: fft_r2c's form (kforge_cufft.cuh) and the complex parts after it") {
  // TimesNet's abs(rfft(x, axis=1)) over a dynamic batch: axis 1 is not x's last, so x is permuted into the scratch
  // after the spectrum [s0, 7, 4] complex64; FNet's real(fftn(x)) over every axis is not.
  SECTION("one middle axis, abs") {
    PlanFixture f(compute_program("{name: x, dtype: float32, shape: [-1, 12, 4]}",
                                  "  - {op: fft_r2c, in: [x], out: [z], attrs: {axes: [-2], normalization: backward, "
                                  "forward: true, onesided: true}}\n"
                                  "  - {op: abs, in: [z], out: [y]}\n"),
                  64 << 20, kLibraryOps);
    INFO(f.refusals());
    CHECK(f.plan.refusals.empty());
    const uint32_t c = f.call("fft_r2c");
    REQUIRE(f.plan.ffts.count(c) == 1);
    const CudaFft& fft = f.plan.ffts.at(c);
    CHECK(fft.axes == std::vector<int64_t>{1});
    CHECK(fft.dtype == ir::DataType::kFloat32);
    CHECK(fft.permuted());
    const SymExpr s0 = fft.dims[0];
    CHECK(fft.scratch_bytes() == SymExpr::max(s0 * 7 * 4 * 8 + s0 * 12 * 4 * 4, 4));
    CHECK(f.plan.runs.at(c) == CudaRun::kLibrary);
    const uint32_t a = f.call("abs");
    REQUIRE(f.plan.complex_parts.count(a) == 1);
    CHECK(f.plan.complex_parts.at(a).abs);
    CHECK(f.plan.complex_parts.at(a).dtype == ir::DataType::kFloat32);
    CHECK(f.plan.complex_parts.at(a).count == s0 * 28);
  }
  SECTION("every axis, two-sided, float64, real") {
    PlanFixture f(compute_program("{name: x, dtype: float64, shape: [2, 5, 6]}",
                                  "  - {op: fft_r2c, in: [x], out: [z], attrs: {axes: [0, 1, 2], normalization: ortho, "
                                  "forward: true, onesided: false}}\n"
                                  "  - {op: real, in: [z], out: [y]}\n"),
                  64 << 20, kLibraryOps);
    INFO(f.refusals());
    CHECK(f.plan.refusals.empty());
    const CudaFft& fft = f.plan.ffts.at(f.call("fft_r2c"));
    CHECK_FALSE(fft.permuted());
    CHECK_FALSE(fft.onesided);
    CHECK(fft.normalization == "ortho");
    CHECK(fft.scratch_bytes() == SymExpr(2 * 5 * 4 * 16));
    CHECK_FALSE(f.plan.complex_parts.at(f.call("real")).abs);
    CHECK(f.plan.complex_parts.at(f.call("real")).dtype == ir::DataType::kFloat64);
  }
  SECTION("four axes, and --cuda-graph: refused at the op, saying why") {
    PlanFixture f(compute_program("{name: x, dtype: float32, shape: [2, 3, 4, 5]}",
                                  "  - {op: fft_r2c, in: [x], out: [z], attrs: {axes: [0, 1, 2, 3], "
                                  "normalization: backward, forward: true, onesided: true}}\n"
                                  "  - {op: real, in: [z], out: [y]}\n"),
                  64 << 20, kLibraryOps);
    CHECK_THAT(f.refusals(), Catch::Contains("it transforms 4 axes; cuFFT plans transform 1 to 3"));
    PlanFixture g(compute_program("{name: x, dtype: float32, shape: [2, 8]}",
                                  "  - {op: fft_r2c, in: [x], out: [z], attrs: {axes: [1], normalization: backward, "
                                  "forward: true, onesided: true}}\n"
                                  "  - {op: real, in: [z], out: [y]}\n"),
                  64 << 20, kLibraryOps, true);
    CHECK_THAT(g.refusals(), Catch::Contains("--cuda-graph: its cuFFT plan is made by the first run with new dims"));
  }
}

}  // namespace kforge::passes::test
