// Unit tests of the index-mapped kernels of issue 34's second batch (codegen/cuda_index_select.cpp,
// cuda_index_norm.cpp, a matmul with a vector operand): the statements that decide the result (topk's and
// argsort's order among equal values and NaNs, a set_value's slice and broadcast, the vector's row or column), and
// the reasons a call cannot run. The kernels' results are checked against Paddle by e2e-cuda-index-emulated.
#include <catch2/catch.hpp>

#include <algorithm>
#include <sstream>

#include "codegen/cuda_index.h"
#include "opdef/op_loader.h"
#include "passes/cuda_index_scratch.h"
#include "passes/fusion.h"
#include "passes/pipeline.h"
#include "program/program_reader.h"

namespace kforge::codegen {
namespace {

/// Lowers a program YAML text against kernels/ops.yaml.
struct SelectFixture {
  SourceManager sources;
  std::ostringstream errors;
  DiagnosticEngine diags{sources, errors};
  opdef::OpLibrary library;
  std::unique_ptr<passes::OpSet> ops;
  std::optional<passes::LoweredProgram> lowered;
  mutable SizeTable sizes;

  explicit SelectFixture(const std::string& program_text) {
    opdef::OpLoader loader(sources, diags);
    loader.add_file(std::string(KFORGE_SOURCE_ROOT) + "/kernels/ops.yaml");
    library = std::move(loader).finish();
    ops = std::make_unique<passes::OpSet>(library, nullptr, diags);
    const uint32_t file = sources.add_buffer("p.yaml", program_text);
    std::optional<ir::Program> program = ir::read_program(sources, file, diags);
    REQUIRE(program);
    lowered = passes::compile_program(*program, *ops, diags);
    INFO(errors.str());
    REQUIRE(lowered);
  }

  std::optional<std::vector<CudaIndexKernel>> kernels(size_t call, std::string* why,
                                                      const std::string& scratch = "") const {
    const CudaBufferExpr buffer = [](uint32_t v, const std::string& type, bool is_const) {
      return (is_const ? "(const " : "(") + type + "*)b" + std::to_string(v);
    };
    // The kernels render the CUDA target plan's form of the call (passes/cuda_plan_index.h, cuda_plan_compute.h),
    // which says why not.
    const passes::KernelCall& c = lowered->calls.at(call);
    const auto size_argument = [](uint32_t k) { return "sizes[" + std::to_string(k) + "]"; };
    if (passes::has_cuda_index_map(c)) {
      const std::optional<passes::CudaIndexMap> map = passes::plan_cuda_index_map(*lowered, c, !scratch.empty(), why);
      if (!map) return std::nullopt;
      return cuda_index_kernels(*lowered, c, *map, "k_", 0, "call", buffer, sizes, size_argument, scratch);
    }
    const std::optional<passes::CudaComputeForm> form = passes::plan_cuda_compute(*lowered, c, why);
    if (!form) return std::nullopt;
    return cuda_index_kernels(*lowered, c, *form, "k_", 0, "call", buffer, sizes, size_argument);
  }
};

std::string select_program(const std::string& inputs, const std::string& ops, const std::string& outputs) {
  return "program: p\ninputs: [" + inputs + "]\nops:\n" + ops + "outputs: [" + outputs + "]\n";
}

// topk_line's arguments in a topk kernel's form (templates/program/cuda/index_select.j2 spells the call).
std::string topk_args(const tmpl::Value& f) {
  auto text = [&](const char* key) { return f.find(key)->as_string(); };
  auto flag = [&](const char* key) { return std::string(f.find(key)->as_bool() ? "true" : "false"); };
  return text("type") + ": " + text("line") + ", " + text("n") + ", " + text("step") + ", " +
         std::to_string(f.find("k")->as_int()) + ", " + flag("largest") + ", " + flag("sorted") + ", " +
         text("scratch") + " + e * " + text("entries") + ", " + text("values") + ", " + text("indices");
}

TEST_CASE("cuda index select: topk selects each line as the CPU kernel does, in the call's scratch") {
  SECTION("largest floats along the last axis: a thread per line") {
    SelectFixture f(select_program("{name: x, dtype: float32, shape: [3, 6]}",
                                   "  - {op: topk, in: [x], out: [v, i], attrs: {k: 2, axis: -1, largest: true, "
                                   "sorted: true}}\n",
                                   "v, i"));
    std::string why;
    const auto k = f.kernels(0, &why, "b.buffers[9]");
    INFO(why);
    REQUIRE(k);
    REQUIRE(k->size() == 1);
    CHECK(topk_args(k->front().form) == "float: in0 + o * 6 * 1 + i, 6, 1, 2, true, true, scratch + e * 6, "
                                        "out + o * 2 * 1 + i, out_indices + o * 2 * 1 + i");
    CHECK(k->front().interp);  // kforge_index.cuh's topk_line
    CHECK(k->front().numel == "3");  // one thread per line
    CHECK(k->front().args.back() == "static_cast<int32_t*>(b.buffers[9])");
  }
  SECTION("smallest integers along the first axis, unsorted") {
    SelectFixture f(select_program("{name: x, dtype: int64, shape: [5, 4]}",
                                   "  - {op: topk, in: [x], out: [v, i], attrs: {k: 3, axis: 0, largest: false, "
                                   "sorted: false}}\n",
                                   "i"));
    std::string why;
    const auto k = f.kernels(0, &why, "b.buffers[2]");
    INFO(why);
    REQUIRE(k);
    CHECK(topk_args(k->front().form) == "int64_t: in0 + o * 5 * 4 + i, 5, 4, 3, false, false, scratch + e * 5, "
                                        "out + o * 3 * 4 + i, out_indices + o * 3 * 4 + i");
    CHECK(k->front().numel == "4");
  }
  SECTION("the CUDA target plan gives it a scratch of one int32 per element of x, live while it runs") {
    SelectFixture f(select_program("{name: x, dtype: float32, shape: [-1, 6]}",
                                   "  - {op: topk, in: [x], out: [v, i], attrs: {k: 2, axis: -1, largest: true, "
                                   "sorted: true}}\n",
                                   "v, i"));
    const std::vector<passes::ScratchNeed> needs = passes::cuda_index_scratch(*f.lowered, passes::FusionPlan{});
    REQUIRE(needs.size() == 1);
    CHECK(needs[0].position == 0);
    CHECK(needs[0].bytes.to_string() == "max(4, 24 * s0)");
    passes::add_scratch_buffers(*f.lowered, needs);
    const passes::Buffer* scratch = passes::scratch_buffer(*f.lowered, 0);
    REQUIRE(scratch != nullptr);
    CHECK((scratch->first_call == 0 && scratch->last_call == 0));
  }
  SECTION("a line known to take partial_sort's path (k * 64 < len) keeps k entries, not the whole line") {
    SelectFixture f(select_program("{name: x, dtype: float32, shape: [-1, 700]}",
                                   "  - {op: topk, in: [x], out: [v, i], attrs: {k: 5, axis: 1, largest: false, "
                                   "sorted: true}}\n",
                                   "v, i"));
    const std::vector<passes::ScratchNeed> needs = passes::cuda_index_scratch(*f.lowered, passes::FusionPlan{});
    REQUIRE(needs.size() == 1);
    CHECK(needs[0].bytes.to_string() == "max(4, 20 * s0)");
    std::string why;
    const auto k = f.kernels(0, &why, "b.buffers[3]");
    INFO(why);
    REQUIRE(k);
    CHECK(topk_args(k->front().form) == "float: in0 + o * 700 * 1 + i, 700, 1, 5, false, true, scratch + e * 5, "
                                        "out + o * 5 * 1 + i, out_indices + o * 5 * 1 + i");
  }
  SECTION("without a scratch from the memory plan it cannot run, and says so") {
    SelectFixture f(select_program("{name: x, dtype: float32, shape: [3, 6]}",
                                   "  - {op: topk, in: [x], out: [v, i], attrs: {k: 2, axis: -1, largest: true, "
                                   "sorted: true}}\n",
                                   "v, i"));
    std::string why;
    CHECK_FALSE(f.kernels(0, &why));
    CHECK(why == "the memory plan gave it no scratch for its lines");
  }
}

// argsort_line's arguments in an argsort kernel's form (templates/program/cuda/index_select.j2 spells the call).
std::string argsort_args(const tmpl::Value& f) {
  auto text = [&](const char* key) { return f.find(key)->as_string(); };
  auto flag = [&](const char* key) { return std::string(f.find(key)->as_bool() ? "true" : "false"); };
  return text("type") + ": " + text("line") + ", " + text("n") + ", " + text("step") + ", " + flag("descending") +
         ", " + flag("stable") + ", " + text("scratch") + " + e * " + text("n") + ", " + text("values") + ", " +
         text("indices");
}

TEST_CASE("cuda index select: argsort sorts each line as the CPU kernel does, in a scratch of the whole line") {
  SECTION("descending floats along the last axis of a dynamic batch") {
    SelectFixture f(select_program("{name: x, dtype: float32, shape: [-1, 6]}",
                                   "  - {op: argsort, in: [x], out: [v, i], attrs: {axis: -1, descending: true, "
                                   "stable: false}}\n",
                                   "i"));
    const std::vector<passes::ScratchNeed> needs = passes::cuda_index_scratch(*f.lowered, passes::FusionPlan{});
    REQUIRE(needs.size() == 1);
    CHECK(needs[0].bytes.to_string() == "max(4, 24 * s0)");
    std::string why;
    const auto k = f.kernels(0, &why, "b.buffers[4]");
    INFO(why);
    REQUIRE(k);
    REQUIRE(k->size() == 1);
    CHECK(argsort_args(k->front().form) ==
          "float: in0 + o * 6 * 1 + i, 6, 1, true, false, scratch + e * 6, out + o * 6 * 1 + i, "
          "out_indices + o * 6 * 1 + i");
    CHECK(k->front().interp);  // kforge_index.cuh's argsort_line
    CHECK(k->front().numel == "s0");  // one thread per line
  }
  SECTION("stable int64 along the first axis: values and indices") {
    SelectFixture f(select_program("{name: x, dtype: int64, shape: [5, 4]}",
                                   "  - {op: argsort, in: [x], out: [v, i], attrs: {axis: 0, descending: false, "
                                   "stable: true}}\n",
                                   "v, i"));
    std::string why;
    const auto k = f.kernels(0, &why, "b.buffers[2]");
    INFO(why);
    REQUIRE(k);
    CHECK(argsort_args(k->front().form) == "int64_t: in0 + o * 5 * 4 + i, 5, 4, false, true, scratch + e * 5, "
                                           "out + o * 5 * 4 + i, out_indices + o * 5 * 4 + i");
    CHECK(k->front().numel == "4");
  }
  SECTION("without a scratch from the memory plan it cannot run, and says so") {
    SelectFixture f(select_program("{name: x, dtype: float32, shape: [3, 6]}",
                                   "  - {op: argsort, in: [x], out: [v, i], attrs: {axis: -1}}\n", "v, i"));
    std::string why;
    CHECK_FALSE(f.kernels(0, &why));
    CHECK(why == "the memory plan gave it no scratch for its lines");
  }
}

TEST_CASE("cuda index: expand_as runs expand's kernel to the output's dims (CenterNet)") {
  SelectFixture f(select_program("{name: x, dtype: float32, shape: [3, 1]}, {name: y, dtype: float32, shape: [2, 3, 4]}",
                                 "  - {op: expand_as, in: [x, y], out: [z], attrs: {target_shape: [2, 3, 4]}}\n",
                                 "z"));
  std::string why;
  const auto k = f.kernels(0, &why);
  INFO(why);
  REQUIRE(k);
  REQUIRE(k->size() == 1);
  CHECK(k->front().numel == "24");
  const std::string load = k->front().form.find("value")->as_string();
  INFO(load);
  CHECK(load.find("c1") != std::string::npos);  // x's rows follow the output's dim 1; its one column is read at 0
}

TEST_CASE("cuda index select: set_value writes the slice from the values, x elsewhere") {
  SelectFixture f(select_program(
      "{name: x, dtype: float32, shape: [2, 4, 3]}, {name: v, dtype: float32, shape: [4]}",
      "  - op: set_value_with_tensor\n    in: [x, v]\n    out: [y]\n"
      "    attrs: {starts: [2147483647, 2], ends: [-2147483648, 3], steps: [-1, 1], axes: [1, 2], decrease_axes: [2], "
      "none_axes: []}\n",
      "y"));
  std::string why;
  const auto k = f.kernels(0, &why);
  INFO(why);
  REQUIRE(k);
  // The statements are templates/program/cuda/index_slice.j2's; the form gives each dim's slice and the values'
  // element.
  const tmpl::Value& form = k->front().form;
  REQUIRE(form.find("kind") != nullptr);
  CHECK(form.find("kind")->as_string() == "set_value");
  const tmpl::List& dims = form.find("dims")->as_list();
  REQUIRE(dims.size() == 3);
  CHECK_FALSE(dims[0].find("sliced")->as_bool());
  // Axis 1 backwards from 3 through 0 (4 elements); axis 2 the element 2, dropped from the values' shape.
  CHECK(dims[1].find("start")->as_string() == "3");
  CHECK(dims[1].find("step")->as_int() == -1);
  CHECK(form.find("inside")->as_string() ==
        "t1_ % -1 == 0 && t1 >= 0 && t1 < 4 && t2_ % 1 == 0 && t2 >= 0 && t2 < 1");
  CHECK(form.find("value")->as_string() == "in1[t1 * 1]");
  CHECK(form.find("x")->as_string() == "in0");
}

TEST_CASE("cuda index select: a matmul with a vector operand is a row or a column") {
  SelectFixture f(select_program(
      "{name: x, dtype: float32, shape: [4]}, {name: y, dtype: float32, shape: [2, 3, 4]}",
      "  - {op: matmul, in: [x, y], out: [o], attrs: {transpose_x: true, transpose_y: true}}\n", "o"));
  std::string why;
  const auto k = f.kernels(0, &why);
  INFO(why);
  REQUIRE(k);
  const tmpl::Value& form = k->front().form;
  // x [4] is the row [1, 4] whatever transpose_x says; y's matrices [3, 4] transposed; o [2, 3].
  CHECK(form.find("y_base")->as_string() == "c0 * 12");
  CHECK(form.find("x_at")->as_string() == "0 * 4 + k");
  CHECK(form.find("y_at")->as_string() == "c1 * 4 + k");
}

TEST_CASE("cuda index select: what cannot run says why") {
  SECTION("set_value_with_tensor whose values are its output's buffer") {
    SelectFixture f(select_program(
        "{name: x, dtype: float32, shape: [5]}",
        "  - {op: set_value_with_tensor_, in: [x, x], out: [y], attrs: {starts: [0], ends: [5], steps: [1], "
        "axes: [0], decrease_axes: [], none_axes: []}}\n",
        "y"));
    std::string why;
    const auto k = f.kernels(0, &why);
    if (f.lowered->values[f.lowered->calls[0].tensor_arg("values")].buffer ==
        f.lowered->values[f.lowered->calls[0].outputs[0].values[0]].buffer) {
      CHECK_FALSE(k);
      CHECK(why.find("share its output's buffer") != std::string::npos);
    } else {
      CHECK(k);  // the memory plan gave the output a buffer of its own
    }
  }
  SECTION("a float16 group_norm") {
    SelectFixture f(select_program(
        "{name: x, dtype: float16, shape: [1, 6, 2, 2]}",
        "  - {op: group_norm, in: [x, ~, ~], out: [y, m, v], attrs: {epsilon: 1.0e-5, groups: 3, data_format: NCHW}}\n",
        "y"));
    std::string why;
    CHECK_FALSE(f.kernels(0, &why));
    CHECK(why.find("computes on float16 values") != std::string::npos);
  }
  SECTION("a topk of float16 values") {
    SelectFixture f(select_program("{name: x, dtype: float16, shape: [3, 6]}",
                                   "  - {op: topk, in: [x], out: [v, i], attrs: {k: 2, axis: -1, largest: true, "
                                   "sorted: true}}\n",
                                   "v, i"));
    std::string why;
    CHECK_FALSE(f.kernels(0, &why));
    CHECK(why.find("16-bit float") != std::string::npos);
  }
}

}  // namespace
}  // namespace kforge::codegen
