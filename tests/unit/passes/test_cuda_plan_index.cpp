// Unit tests of the CUDA target plan's runs and index maps (passes/cuda_plan_index.h): how each call outside the
// fused groups runs (CudaRun: a library call, index-mapped kernels, a copy, nothing, ...), the data-movement ops'
// forms and those of the ops that pick or place by an index or a rank, set_value's and the losses' (CudaIndexMap),
// the families of index-mapped ops, and the located reasons a call of them cannot run. The library calls' forms
// (convolutions, pools, batch norms, GEMMs) are test_cuda_plan.cpp's.
#include "cuda_plan_test_util.h"

namespace kforge::passes {
namespace {

using test::kLibraryOps;
using test::library_program;
using test::PlanFixture;

TEST_CASE("cuda plan: how each call outside the groups runs; a call no kernel runs is refused at the op") {
  SECTION("an index map, a view, a compaction") {
    PlanFixture f(library_program("{name: x, dtype: float32, shape: [2, 3, 4]}, {name: c, dtype: bool, shape: [5]}",
                                  "  - {op: transpose, in: [x], out: [t], attrs: {perm: [2, 0, 1]}}\n"
                                  "  - {op: reshape, in: [t], out: [y], attrs: {shape: [4, 6]}}\n"
                                  "  - {op: nonzero, in: [c], out: [n]}\n",
                                  "y, n"),
                  64 << 20, kLibraryOps);
    INFO(f.refusals());
    CHECK(f.plan.refusals.empty());
    REQUIRE(f.plan.runs.size() == 3);
    CHECK(f.plan.runs.at(0) == CudaRun::kIndex);
    CHECK((f.plan.runs.at(1) == CudaRun::kNothing || f.plan.runs.at(1) == CudaRun::kCopy));
    CHECK(f.plan.runs.at(2) == CudaRun::kCompaction);
    CHECK(f.index_map(0).perm == std::vector<size_t>{2, 0, 1});
    CHECK(f.index_map(0).dtype == ir::DataType::kFloat32);
  }
  SECTION("an op with no CUDA kernel") {
    // `real` of a real tensor (Paddle's copy): the CUDA target runs `real` of complex tensors alone.
    PlanFixture f(library_program("{name: x, dtype: float32, shape: [2, 3]}",
                                  "  - {op: transpose, in: [x], out: [t], attrs: {perm: [1, 0]}}\n"
                                  "  - {op: real, in: [t], out: [y]}\n"),
                  64 << 20, kLibraryOps);
    CHECK(f.refusals() == "5:5: --target cuda: op 'real' (pd_op.real) is not in a fused group and the "
                          "CUDA backend "
                          "has no kernel for it; only ops with `compute`, `reduce` or `row_pattern` that fuse, "
                          "float32, float16 or bfloat16 matmuls, float32 convolutions, pool2d and the index-mapped "
                          "ops (transpose, concat, split, slice, gather, interpolation, ...) run on the GPU "
                          "(docs/compile.md)\n");
    CHECK(f.plan.runs.count(1) == 0);
    CHECK(f.plan.runs.at(0) == CudaRun::kIndex);
  }
}

TEST_CASE("cuda plan: the data-movement ops' attributes resolved") {
  SECTION("gather along a negative axis by an int64 index; concat's axis") {
    PlanFixture f(library_program("{name: x, dtype: float16, shape: [4, 5]}, {name: i, dtype: int64, shape: [3]}",
                                  "  - {op: gather, in: [x, i], out: [g], attrs: {axis: -1}}\n"
                                  "  - {op: builtin.combine, in: [g, g], out: [pair]}\n"
                                  "  - {op: concat, in: [pair], out: [y], attrs: {axis: -2}}\n"),
                  64 << 20, kLibraryOps);
    CHECK(f.index_map(0).axis == 1);
    CHECK(f.index_map(0).index_dtype == ir::DataType::kInt64);
    CHECK(f.index_map(0).dtype == ir::DataType::kFloat16);
    CHECK(f.index_map(f.call("concat")).axis == 0);
  }
  SECTION("slice: a start from the end, the decreased axis dropped") {
    PlanFixture f(library_program("{name: x, dtype: float32, shape: [-1, 6, 8]}",
                                  "  - {op: slice, in: [x], out: [y], attrs: {axes: [1, 2], starts: [-2, 3], "
                                  "ends: [5, 12], infer_flags: [1, 1], decrease_axis: [1]}}\n"),
                  64 << 20, kLibraryOps);
    const CudaIndexMap& m = f.index_map(0);
    REQUIRE(m.begin.size() == 3);
    CHECK(m.begin[0] == SymExpr(0));
    CHECK(m.begin[1] == SymExpr(4));
    CHECK(m.begin[2] == SymExpr(3));
    CHECK(m.dropped == std::set<size_t>{1});
  }
  SECTION("strided_slice backward; pad3d's mode and layout") {
    PlanFixture f(library_program("{name: x, dtype: float32, shape: [7]}, {name: v, dtype: float32, shape: [1, 2, 2, "
                                  "3, 4]}",
                                  "  - {op: strided_slice, in: [x], out: [s], attrs: {axes: [0], starts: [-1], "
                                  "ends: [-8], strides: [-2]}}\n"
                                  "  - {op: pad3d, in: [v], out: [y], attrs: {paddings: [1, 1, 0, 0, 2, 0], mode: "
                                  "replicate, pad_value: 0.0, data_format: NDHWC}}\n",
                                  "s, y"),
                  64 << 20, kLibraryOps);
    CHECK(f.index_map(0).begin == std::vector<SymExpr>{SymExpr(6)});
    CHECK(f.index_map(0).step == std::vector<int64_t>{-2});
    CHECK(f.index_map(1).mode == CudaPadMode::kReplicate);
    CHECK(f.index_map(1).channel_last);
    CHECK(f.index_map(1).pads.size() == 6);
  }
  SECTION("flip: each named axis read from its last element backward, a dynamic one by an expression of its size") {
    PlanFixture f(library_program("{name: x, dtype: float32, shape: [-1, 3, 4]}",
                                  "  - {op: flip, in: [x], out: [y], attrs: {axis: [0, -1]}}\n"),
                  64 << 20, kLibraryOps);
    INFO(f.refusals());
    const CudaIndexMap& m = f.index_map(0);
    REQUIRE(m.begin.size() == 3);
    CHECK(m.step == std::vector<int64_t>{-1, 1, -1});
    const uint32_t x = f.lowered->calls[f.call("flip")].tensor_arg("x");
    CHECK(m.begin[0] == f.lowered->values[x].dims[0] - SymExpr(1));
    CHECK_FALSE(m.begin[0].constant().has_value());
    CHECK(m.begin[1] == SymExpr(0));
    CHECK(m.begin[2] == SymExpr(3));
  }
  SECTION("embedding's padding row counted from the end") {
    PlanFixture f(library_program("{name: ids, dtype: int32, shape: [2, 3]}, {name: w, dtype: float32, shape: [10, 4]}",
                                  "  - {op: embedding, in: [ids, w], out: [y], attrs: {padding_idx: -1, sparse: "
                                  "false}}\n"
                                  "  - {op: embedding, in: [ids, w], out: [z], attrs: {padding_idx: -3, sparse: "
                                  "false}}\n",
                                  "y, z"),
                  64 << 20, kLibraryOps);
    CHECK(f.index_map(0).rows == 10);
    CHECK(f.index_map(0).padding_row == -1);
    CHECK(f.index_map(1).padding_row == 7);
    CHECK(f.index_map(1).index_dtype == ir::DataType::kInt32);
  }
}

TEST_CASE("cuda plan: a data-movement op or batched matmul its kernel cannot run is refused for its first problem") {
  SECTION("an embedding of a vocabulary known only at run time") {
    PlanFixture f(library_program("{name: ids, dtype: int64, shape: [3]}, {name: w, dtype: float32, shape: [-1, 4]}",
                                  "  - {op: embedding, in: [ids, w], out: [y], attrs: {padding_idx: -1, sparse: "
                                  "false}}\n"),
                  64 << 20, kLibraryOps);
    CHECK(f.refusals() == "4:5: --target cuda: embedding (pd_op.embedding) has no CUDA kernel: its weight must be 2-D "
                          "with a vocabulary known at generation time\n");
    CHECK(f.plan.index_maps.empty());
    CHECK(f.plan.runs.at(0) == CudaRun::kIndex);  // a kernel runs the op, not this call
  }
  SECTION("a slice from the end of a dim known only at run time") {
    PlanFixture f(library_program("{name: x, dtype: float32, shape: [-1, 6]}",
                                  "  - {op: slice, in: [x], out: [y], attrs: {axes: [0], starts: [-1], ends: "
                                  "[100], infer_flags: [1], decrease_axis: []}}\n"),
                  64 << 20, kLibraryOps);
    CHECK(f.refusals() == "4:5: --target cuda: slice (pd_op.slice) has no CUDA kernel: it starts from the end of a "
                          "dim known only at run time\n");
  }
  SECTION("two refused calls: each is reported with its own reason") {
    PlanFixture f(library_program("{name: ids, dtype: int64, shape: [3]}, {name: w, dtype: float32, shape: [-1, 4]}, "
                                  "{name: x, dtype: float32, shape: [-1, 6]}",
                                  "  - {op: embedding, in: [ids, w], out: [e], attrs: {padding_idx: -1, sparse: "
                                  "false}}\n"
                                  "  - {op: slice, in: [x], out: [y], attrs: {axes: [0], starts: [-1], ends: "
                                  "[100], infer_flags: [1], decrease_axis: []}}\n",
                                  "e, y"),
                  64 << 20, kLibraryOps);
    CHECK(f.refusals() == "4:5: --target cuda: embedding (pd_op.embedding) has no CUDA kernel: its weight must be 2-D "
                          "with a vocabulary known at generation time\n"
                          "5:5: --target cuda: slice (pd_op.slice) has no CUDA kernel: it starts from the end of a "
                          "dim known only at run time\n");
  }
  SECTION("an int32 batched matmul: why no GEMM, and why no batched kernel") {
    PlanFixture f(library_program("{name: x, dtype: int32, shape: [2, 3, 4]}, {name: v, dtype: int32, shape: [2, 4, "
                                  "5]}",
                                  "  - {op: matmul, in: [x, v], out: [y], attrs: {transpose_x: false, transpose_y: "
                                  "false}}\n"),
                  64 << 20, kLibraryOps);
    REQUIRE(f.plan.no_gemm.count(0) == 1);
    CHECK(f.refusals() == "4:5: --target cuda: matmul (pd_op.matmul) has no CUDA GEMM: " + f.plan.no_gemm.at(0) +
                              "; and no batched kernel: it computes on int32 values; the CUDA kernel computes "
                              "float32 and float64 only\n");
  }
  SECTION("a float32 batched matmul runs, transposes resolved") {
    PlanFixture f(library_program("{name: x, dtype: float32, shape: [2, 4, 3]}, {name: v, dtype: float32, shape: "
                                  "[2, 4, 5]}",
                                  "  - {op: matmul, in: [x, v], out: [y], attrs: {transpose_x: true, transpose_y: "
                                  "false}}\n"),
                  64 << 20, kLibraryOps);
    INFO(f.refusals());
    if (f.fusion.call_group.at(0) == kNone) {  // no GEMM group took it
      CHECK(f.plan.runs.at(0) == CudaRun::kBatchedMatmul);
      CHECK(f.index_map(0).transpose_x);
      CHECK_FALSE(f.index_map(0).transpose_y);
    } else {
      CHECK(f.plan.runs.count(0) == 0);  // the groups' calls have no run of their own
    }
  }
}

TEST_CASE("cuda plan: the ops that pick or place by an index or a rank have their forms, or their first problem") {
  SECTION("topk along a negative axis, in its scratch; roll's shifts added per axis; pad's widths") {
    PlanFixture f(library_program("{name: x, dtype: float32, shape: [3, 6]}",
                                  "  - {op: topk, in: [x], out: [v, i], attrs: {k: 2, axis: -1, largest: false, sorted: "
                                  "true}}\n"
                                  "  - {op: roll, in: [v], out: [r], attrs: {shifts: [1, 2], axis: [1, -1]}}\n"
                                  "  - {op: pad, in: [r], out: [y], attrs: {paddings: [0, 0, 1, 2], pad_value: 1.5}}\n",
                                  "y, i"),
                  64 << 20, kLibraryOps);
    const CudaIndexMap& topk = f.index_map(0);
    CHECK(topk.axis == 1);
    CHECK(topk.k == 2);
    CHECK_FALSE(topk.largest);
    CHECK(topk.sorted);
    CHECK(scratch_buffer(*f.lowered, 0) != nullptr);
    CHECK(f.index_map(1).shift == std::vector<int64_t>{0, 3});
    CHECK_FALSE(f.index_map(1).flattened);
    CHECK(f.index_map(2).widths == std::vector<int64_t>{0, 0, 1, 2});
    CHECK(f.index_map(2).fill == 1.5);
  }
  SECTION("a topk of float16 values") {
    PlanFixture f(library_program("{name: x, dtype: float16, shape: [3, 6]}",
                                  "  - {op: topk, in: [x], out: [v, y], attrs: {k: 2, axis: -1, largest: true, sorted: "
                                  "true}}\n",
                                  "v, y"),
                  64 << 20, kLibraryOps);
    CHECK(f.refusals() == "4:5: --target cuda: topk (pd_op.topk) has no CUDA kernel: it ranks bool or 16-bit float "
                          "values, which the CUDA kernel does not take\n");
  }
  SECTION("a float16 pad of a fill other than 0") {
    PlanFixture f(library_program("{name: x, dtype: float16, shape: [3, 6]}",
                                  "  - {op: pad, in: [x], out: [y], attrs: {paddings: [0, 0, 1, 2], pad_value: 1.5}}\n"),
                  64 << 20, kLibraryOps);
    CHECK(f.refusals() == "4:5: --target cuda: pad (pd_op.pad) has no CUDA kernel: a 16-bit float pad value is not "
                          "supported\n");
  }
}

TEST_CASE("cuda plan: set_value's slice and where its values are read; what its kernel cannot take") {
  SECTION("a strided slice of one axis, the values broadcast along the other") {
    PlanFixture f(library_program("{name: x, dtype: float32, shape: [4, 6]}, {name: v, dtype: float32, shape: [1, 2]}",
                                  "  - {op: set_value_with_tensor, in: [x, v], out: [y], attrs: {starts: [1], ends: "
                                  "[-1], steps: [2], axes: [1], decrease_axes: [], none_axes: []}}\n"),
                  64 << 20, kLibraryOps);
    const CudaIndexMap& m = f.index_map(0);
    REQUIRE(m.ranges.size() == 2);
    CHECK_FALSE(m.ranges[0].sliced);
    CHECK(m.ranges[0].count == SymExpr(4));
    CHECK(m.ranges[1].sliced);
    CHECK(m.ranges[1].start == SymExpr(1));
    CHECK(m.ranges[1].step == 2);
    CHECK(m.ranges[1].count == SymExpr(2));  // 1 and 3 (the end -1 is 5)
    CHECK(m.value_strides == std::vector<SymExpr>{SymExpr(0), SymExpr(1)});
  }
  SECTION("float16 constants") {
    PlanFixture f(library_program("{name: x, dtype: float16, shape: [4]}",
                                  "  - {op: set_value, in: [x], out: [y], attrs: {starts: [0], ends: [2], steps: [1], "
                                  "axes: [0], decrease_axes: [], none_axes: [], shape: [1], values: [1.0]}}\n"),
                  64 << 20, kLibraryOps);
    CHECK(f.refusals() == "4:5: --target cuda: set_value (pd_op.set_value) has no CUDA kernel: it sets 16-bit float "
                          "values, which the CUDA kernel does not take\n");
  }
}

TEST_CASE("cuda plan: the losses' constants and class axis; what their kernels cannot take, at the op") {
  const std::string inputs =
      "{name: x, dtype: float32, shape: [2, 5, 6]}, {name: l, dtype: float32, shape: [2, 5, 6]}, "
      "{name: i, dtype: int64, shape: [2, 1, 6]}";
  SECTION("sigmoid_cross_entropy_with_logits: normalize and ignore_index") {
    PlanFixture f(library_program(inputs,
                                  "  - {op: sigmoid_cross_entropy_with_logits, in: [x, l, ~], out: [y], "
                                  "attrs: {normalize: true, ignore_index: -1}}\n"),
                  64 << 20, kLibraryOps);
    const CudaIndexMap& m = f.index_map(0);
    CHECK(m.dtype == ir::DataType::kFloat32);
    CHECK(m.normalize);
    CHECK(m.ignore_index == -1);
  }
  SECTION("cross_entropy_with_softmax: a hard label's index type, the axis normalised") {
    PlanFixture f(library_program(inputs,
                                  "  - {op: cross_entropy_with_softmax, in: [x, i], out: [p, y], attrs: {soft_label: "
                                  "false, use_softmax: true, numeric_stable_mode: true, ignore_index: -100, axis: "
                                  "-2}}\n",
                                  "p, y"),
                  64 << 20, kLibraryOps);
    const CudaIndexMap& m = f.index_map(0);
    CHECK(m.axis == 1);
    CHECK(m.index_dtype == ir::DataType::kInt64);
    CHECK_FALSE(m.soft_label);
    CHECK(m.use_softmax);
    CHECK(m.ignore_index == -100);
  }
  SECTION("what the kernels cannot take, for the first problem (the shape rules let none of these through)") {
    PlanFixture f(library_program(inputs,
                                  "  - {op: cross_entropy_with_softmax, in: [x, i], out: [p, y], attrs: {soft_label: "
                                  "false, use_softmax: true, numeric_stable_mode: true, ignore_index: -100, axis: "
                                  "1}}\n",
                                  "p, y"),
                  64 << 20, kLibraryOps);
    LoweredProgram p = *f.lowered;
    std::string why;
    p.values[p.calls[0].tensor_arg("label")].dtype = ir::DataType::kFloat32;
    CHECK_FALSE(plan_cuda_index_map(p, p.calls[0], false, &why));
    CHECK(why == "its index is float32 (int32 or int64 expected)");
    for (LoweredValue& v : p.values) v.dtype = ir::DataType::kFloat16;
    CHECK_FALSE(plan_cuda_index_map(p, p.calls[0], false, &why));
    CHECK(why == "it computes on float16 values; the CUDA kernel computes float32 and float64 only");
  }
}

TEST_CASE("cuda plan: the index-mapped ops by family; the float32-only ones; the host's shape rules") {
  CHECK(cuda_index_family("transpose") == CudaIndexFamily::kMovement);
  CHECK(cuda_index_family("topk") == CudaIndexFamily::kSelect);
  CHECK(cuda_index_family("bilinear_interp") == CudaIndexFamily::kCompute);
  CHECK(cuda_index_family("einsum") == CudaIndexFamily::kEinsum);
  CHECK(cuda_index_family("flip") == CudaIndexFamily::kMovement);
  CHECK(cuda_index_family("log_softmax") == CudaIndexFamily::kCompute);
  CHECK(cuda_index_family("roi_align") == CudaIndexFamily::kCompute);
  CHECK_FALSE(cuda_index_family("fft_r2c"));  // a library call (cuda_plan_fft.cpp)
  CHECK(is_cuda_fft_op("fft_r2c"));
  CHECK_FALSE(is_cuda_index_op("matmul"));
  CHECK(is_cuda_batched_matmul("bmm"));
  CHECK(cuda_float32_index_ops().count("cumsum") == 1);
  CHECK(cuda_float32_index_ops().count("transpose") == 0);
  CHECK(is_cuda_compaction_op("masked_select"));
  CHECK(is_cuda_host_shape_rule("ReshapeInferMeta"));
  CHECK_FALSE(is_cuda_host_shape_rule("TopKInferMeta"));
}

}  // namespace
}  // namespace kforge::passes
