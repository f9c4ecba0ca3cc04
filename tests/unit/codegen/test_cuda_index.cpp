// Unit tests of the index-mapped kernels of kforge compile --target cuda (codegen/cuda_index.h): the statements
// built for a lowered call (coordinates, source offsets, a dynamic batch as a symbol parameter), one kernel per
// output of a split, and the reasons a call cannot run.
#include <catch2/catch.hpp>

#include <algorithm>

#include <sstream>

#include "codegen/cuda_index.h"
#include "opdef/op_loader.h"
#include "passes/pipeline.h"
#include "program/program_reader.h"

namespace kforge::codegen {
namespace {

/// Lowers a program YAML text against the ops of golden case compile-cuda-index (or another op file).
struct IndexFixture {
  SourceManager sources;
  std::ostringstream errors;
  DiagnosticEngine diags{sources, errors};
  opdef::OpLibrary library;
  std::unique_ptr<passes::OpSet> ops;
  std::optional<passes::LoweredProgram> lowered;
  mutable SizeTable sizes;  // the sizes the kernels take as parameters

  /// `ops`: the op file under the source root (the kernel library's for the ops that compute).
  explicit IndexFixture(const std::string& program_text,
                        const std::string& ops_file = "tests/golden/compile-cuda-index/ops.yaml") {
    opdef::OpLoader loader(sources, diags);
    loader.add_file(std::string(KFORGE_SOURCE_ROOT) + "/" + ops_file);
    library = std::move(loader).finish();
    ops = std::make_unique<passes::OpSet>(library, nullptr, diags);
    const uint32_t file = sources.add_buffer("p.yaml", program_text);
    std::optional<ir::Program> program = ir::read_program(sources, file, diags);
    REQUIRE(program);
    lowered = passes::compile_program(*program, *ops, diags);
    INFO(errors.str());
    REQUIRE(lowered);
  }

  std::optional<std::vector<CudaIndexKernel>> kernels(size_t call, std::string* why) const {
    const CudaBufferExpr buffer = [](uint32_t v, const std::string& type, bool is_const) {
      return (is_const ? "(const " : "(") + type + "*)b" + std::to_string(v);
    };
    // The kernels render the CUDA target plan's form of the call (passes/cuda_plan_index.h, cuda_plan_compute.h),
    // which says why not.
    const passes::KernelCall& c = lowered->calls.at(call);
    const auto size_argument = [](uint32_t k) { return "sizes[" + std::to_string(k) + "]"; };
    if (passes::has_cuda_index_map(c)) {
      const std::optional<passes::CudaIndexMap> map = passes::plan_cuda_index_map(*lowered, c, false, why);
      if (!map) return std::nullopt;
      return cuda_index_kernels(*lowered, c, *map, "k_", 0, "call", buffer, sizes, size_argument);
    }
    const std::optional<passes::CudaComputeForm> form = passes::plan_cuda_compute(*lowered, c, why);
    if (!form) return std::nullopt;
    return cuda_index_kernels(*lowered, c, *form, "k_", 0, "call", buffer, sizes, size_argument);
  }
};

// An entry of a kernel's form (CudaIndexKernel::form: what templates/program/cuda/index_*.j2 spell the
// statements from).
std::string entry(const tmpl::Value& form, const char* key) {
  const tmpl::Value* v = form.find(key);
  return v != nullptr && v->is_string() ? v->as_string() : "";
}

std::string program(const std::string& inputs, const std::string& ops, const std::string& outputs) {
  return "program: p\ninputs: [" + inputs + "]\nops:\n" + ops + "outputs: [" + outputs + "]\n";
}

/// A string entry of a computing kernel's statements context ("" where absent).
std::string field(const CudaIndexKernel& k, std::string_view key) {
  const tmpl::Value* v = k.statements.find(key);
  return v != nullptr && v->is_string() ? v->as_string() : "";
}

TEST_CASE("cuda index: a transpose reads its input at the permuted coordinate; the sizes are parameters") {
  IndexFixture f(program("{name: x, dtype: float32, shape: [-1, 4, 6, 6]}",
                         "  - {op: transpose, in: [x], out: [t], attrs: {perm: [0, 2, 3, 1]}}\n", "t"));
  std::string why;
  auto k = f.kernels(0, &why);
  INFO(why);
  REQUIRE(k);
  REQUIRE(k->size() == 1);
  const CudaIndexKernel& kernel = k->front();
  CHECK(kernel.name == "k_0");
  // The element count is an entry of the program's size table, passed as a parameter.
  CHECK(kernel.numel == "z0");
  REQUIRE(f.sizes.size() >= 1);
  CHECK(f.sizes.checked_definition(0, [](uint32_t k) { return "z[" + std::to_string(k) + "]"; }) == "144 * s0");
  CHECK(std::find(kernel.params.begin(), kernel.params.end(), "int64_t z0") != kernel.params.end());
  CHECK(std::find(kernel.args.begin(), kernel.args.end(), "sizes[0]") != kernel.args.end());
  // out [s0, 6, 6, 4]: c1, c2 walk x's H and W, c3 its channels.
  CHECK(entry(kernel.form, "kind") == "move");
  CHECK(kernel.form.find("vec")->as_int() == 1);
  CHECK(entry(kernel.form, "from") == "c0 * 144 + c3 * 36 + c1 * 6 + c2");
}

TEST_CASE("cuda index: a transpose that keeps the last axis last moves 16-byte units where its rows allow") {
  // Heads split: [s0, S, 4, 64] float16 -> [s0, 4, S, 64]; a row of 64 elements is 8 units of 8.
  IndexFixture f(program("{name: x, dtype: float16, shape: [-1, 10, 4, 64]}",
                         "  - {op: transpose, in: [x], out: [t], attrs: {perm: [0, 2, 1, 3]}}\n", "t"));
  std::string why;
  auto k = f.kernels(0, &why);
  INFO(why);
  REQUIRE(k);
  // The kernel tests out's and in0's alignment first (index.j2 spells the test).
  REQUIRE(k->front().aligned.is_list());
  REQUIRE(k->front().aligned.size() == 1);
  CHECK(k->front().aligned.as_list().front().as_string() == "in0");
  CHECK(k->front().form.find("vec")->as_int() == 8);  // kforge::cuda::move_unit<8>
  CHECK(entry(k->front().form, "from") == "c0 * 320 + c2 * 32 + c1 * 8 + c3");
  // The count is of units: s0 * 4 * 10 * 8.
  CHECK(f.sizes.checked_definition(0, [](uint32_t k) { return "z[" + std::to_string(k) + "]"; }) == "320 * s0");

  // A last axis that moves, or rows that are not whole units (12 float16 = 24 bytes), go element by element.
  for (const char* text : {"{name: x, dtype: float16, shape: [2, 4, 64]}|[0, 2, 1]",
                           "{name: x, dtype: float16, shape: [2, 4, 12]}|[1, 0, 2]"}) {
    const std::string spec(text);
    const size_t bar = spec.find('|');
    IndexFixture g(program(spec.substr(0, bar),
                           "  - {op: transpose, in: [x], out: [t], attrs: {perm: " + spec.substr(bar + 1) + "}}\n", "t"));
    auto plain = g.kernels(0, &why);
    REQUIRE(plain);
    CHECK(plain->front().form.find("vec")->as_int() == 1);
  }
}

TEST_CASE("cuda index: split gives one kernel per output, each offset along the axis") {
  IndexFixture f(program("{name: x, dtype: float32, shape: [2, 4, 3]}",
                         "  - {op: split, in: [x], out: [parts], attrs: {sections: [1, 3], axis: 1}}\n"
                         "  - {op: builtin.split, in: [parts], out: [a, b]}\n",
                         "a, b"));
  std::string why;
  auto k = f.kernels(0, &why);
  INFO(why);
  REQUIRE(k);
  REQUIRE(k->size() == 2);
  CHECK(entry((*k)[0].form, "value") == "in0[c0 * 12 + c1 * 3 + c2]");
  CHECK(entry((*k)[1].form, "value") == "in0[c0 * 12 + (c1 + 1) * 3 + c2]");
  CHECK((*k)[1].name == "k_1");
}

TEST_CASE("cuda index: concat selects its input by the coordinate along the axis") {
  IndexFixture f(program("{name: x, dtype: int64, shape: [2, 1]}, {name: y, dtype: int64, shape: [2, 3]}",
                         "  - {op: builtin.combine, in: [x, y], out: [xy]}\n"
                         "  - {op: concat, in: [xy], out: [c], attrs: {axis: -1}}\n",
                         "c"));
  std::string why;
  auto k = f.kernels(0, &why);
  INFO(why);
  REQUIRE(k);
  const tmpl::List& parts = k->front().form.find("parts")->as_list();
  REQUIRE(parts.size() == 2);
  CHECK(entry(parts[0], "when") == "c1 < 1");
  CHECK(entry(parts[1], "input") == "in1");
  CHECK(entry(parts[1], "from") == "c0 * 3 + c1 - 1");
  CHECK(k->front().params.front() == "const int64_t* __restrict__ in0");
}

TEST_CASE("cuda index: what cannot run says why") {
  SECTION("a training dropout") {
    IndexFixture f(program("{name: x, dtype: float32, shape: [4]}",
                           "  - {op: dropout, in: [x, ~], out: [y, m], attrs: {p: 0.5, is_test: false, mode: "
                           "upscale_in_train, seed: 0, fix_seed: false}}\n",
                           "y"));
    std::string why;
    CHECK_FALSE(f.kernels(0, &why));
    CHECK(why.find("training dropout") != std::string::npos);
  }
  SECTION("an int32 matmul") {
    IndexFixture f(program("{name: x, dtype: int32, shape: [2, 3, 4]}, {name: v, dtype: int32, shape: [4]}",
                           "  - {op: matmul, in: [x, v], out: [y]}\n", "y"));
    std::string why;
    CHECK_FALSE(f.kernels(0, &why));
    CHECK(why == "it computes on int32 values; the CUDA kernel computes float32 and float64 only");
  }
  SECTION("a bilinear interpolation of integers") {
    IndexFixture f(program("{name: x, dtype: int32, shape: [1, 1, 4, 4]}",
                           "  - {op: bilinear_interp, in: [x, ~, ~, ~], out: [y], attrs: {data_format: NCHW, out_d: "
                           "-1, out_h: 8, out_w: 8, scale: [], interp_method: bilinear, align_corners: false, "
                           "align_mode: 0}}\n",
                           "y"));
    std::string why;
    CHECK_FALSE(f.kernels(0, &why));
    CHECK(why.find("float32 and float64 only") != std::string::npos);
  }
}

TEST_CASE("cuda index: downgrade_in_infer dropout scales by 1 - p; a batched matmul accumulates in float") {
  IndexFixture f(program("{name: x, dtype: float32, shape: [2, 3, 4]}, {name: w, dtype: float32, shape: [2, 4, 5]}",
                         "  - {op: dropout, in: [x, ~], out: [d, m], attrs: {p: 0.25, is_test: true, mode: "
                         "downgrade_in_infer, seed: 0, fix_seed: false}}\n"
                         "  - {op: matmul, in: [d, w], out: [y]}\n",
                         "y"));
  std::string why;
  auto dropout = f.kernels(0, &why);
  REQUIRE(dropout);
  // The computing kernels' statements are a typed context of templates/program/cuda/index_compute.j2.
  CHECK(dropout->front().coords.is_none());
  CHECK(field(dropout->front(), "shape") == "store");
  CHECK(field(dropout->front(), "value") == "in0[e] * static_cast<float>(0.75f)");
  auto matmul = f.kernels(1, &why);
  INFO(why);
  REQUIRE(matmul);
  const tmpl::Value& form = matmul->front().form;
  CHECK(entry(form, "x_base") == "c0 * 12");
  CHECK(entry(form, "x_at") == "c1 * 4 + k");
  CHECK(entry(form, "y_at") == "k * 5 + c2");
  CHECK(entry(form, "acc") == "float");
}

constexpr const char* kLibraryOps = "kernels/ops.yaml";


TEST_CASE("cuda index: a reduction over a leading axis folds its column in row-major order, as the CPU kernel") {
  IndexFixture f(program("{name: x, dtype: float32, shape: [3, 4]}, {name: i, dtype: int32, shape: [2, 3, 4]}",
                         "  - {op: sum, in: [x], out: [s], attrs: {axis: [0], dtype: float32, keepdim: false}}\n"
                         "  - {op: prod, in: [i], out: [p], attrs: {axis: [0, 2], keepdim: true, reduce_all: false}}\n"
                         "  - {op: max, in: [i], out: [m], attrs: {axis: [1], keepdim: false}}\n",
                         "s, p, m"),
                 kLibraryOps);
  std::string why;
  auto sum = f.kernels(0, &why);
  INFO(why);
  REQUIRE(sum);
  const CudaIndexKernel& s = sum->front();
  CHECK(field(s, "shape") == "reduce");
  CHECK(field(s, "acc") == "double");
  CHECK(field(s, "init") == "0");
  CHECK(field(s, "n") == "3");
  CHECK(field(s, "offset") == "q0 * 4 + c0");
  CHECK(field(s, "result") == "acc");
  CHECK(field(s, "out_type") == "float");
  // int32 products wrap in uint64; the kept dim (1) is the output's only coordinate.
  auto prod = f.kernels(1, &why);
  REQUIRE(prod);
  CHECK(field(prod->front(), "acc") == "uint64_t");
  CHECK(field(prod->front(), "init") == "1");
  CHECK(field(prod->front(), "offset") == "q0 * 12 + c0 * 4 + q1");
  CHECK(field(prod->front(), "fold") == "static_cast<uint64_t>(acc * static_cast<uint64_t>(v))");
  auto max = f.kernels(2, &why);
  REQUIRE(max);
  CHECK(field(max->front(), "acc") == "int32_t");
  CHECK(field(max->front(), "init") == "static_cast<int32_t>((-2147483647 - 1))");
  CHECK(field(max->front(), "fold") == "v > acc ? v : acc");
}

TEST_CASE("cuda index: cumsum walks a line per thread; reverse and exclusive, integers wrapping") {
  IndexFixture f(program("{name: x, dtype: int32, shape: [2, 5, 3]}",
                         "  - {op: cumsum, in: [x], out: [y], attrs: {axis: 1, flatten: false, exclusive: true, "
                         "reverse: true}}\n",
                         "y"),
                 kLibraryOps);
  std::string why;
  auto k = f.kernels(0, &why);
  INFO(why);
  REQUIRE(k);
  CHECK(k->front().numel == "6");  // 2 x 3 lines of 5
  const CudaIndexKernel& c = k->front();
  CHECK(field(c, "shape") == "cumsum");
  CHECK(field(c, "inner") == "3");
  CHECK(field(c, "line") == "15");
  CHECK(field(c, "n") == "5");
  CHECK(field(c, "position") == "(5 - 1 - j)");
  CHECK(field(c, "step") == "3");
  REQUIRE(c.statements.find("exclusive") != nullptr);
  CHECK(c.statements.find("exclusive")->as_bool());
  CHECK(field(c, "sum") == "static_cast<int32_t>(static_cast<uint32_t>(acc) + static_cast<uint32_t>(v))");
}

TEST_CASE("cuda index: one_hot compares the class with the id; pow of integers squares") {
  IndexFixture f(program("{name: x, dtype: int64, shape: [4]}",
                         "  - {op: one_hot, in: [x], out: [y], attrs: {num_classes: 5}}\n"
                         "  - {op: pow, in: [x], out: [p], attrs: {y: 3.0}}\n",
                         "y, p"),
                 kLibraryOps);
  std::string why;
  auto one_hot = f.kernels(0, &why);
  INFO(why);
  REQUIRE(one_hot);
  CHECK(field(one_hot->front(), "value") == "static_cast<int64_t>(in0[e / 5]) == e % 5 ? 1.0f : 0.0f");
  auto pow = f.kernels(1, &why);
  REQUIRE(pow);
  CHECK(field(pow->front(), "shape") == "integer_pow");
  CHECK(field(pow->front(), "unsigned") == "uint64_t");
  REQUIRE(pow->front().statements.find("exponent") != nullptr);
  CHECK(pow->front().statements.find("exponent")->as_int() == 3);
}

TEST_CASE("cuda index: the computing kernels say why they cannot run") {
  SECTION("an integer raised to a negative power") {
    IndexFixture f(program("{name: x, dtype: int32, shape: [4]}", "  - {op: pow, in: [x], out: [p], attrs: {y: -1.0}}\n",
                           "p"),
                   kLibraryOps);
    std::string why;
    CHECK_FALSE(f.kernels(0, &why));
    CHECK(why.find("negative") != std::string::npos);
  }
  SECTION("a float16 sum (max and min compare 16-bit elements as float)") {
    IndexFixture f(program("{name: x, dtype: float16, shape: [3, 4]}",
                           "  - {op: sum, in: [x], out: [m], attrs: {axis: [0], keepdim: false}}\n", "m"),
                   kLibraryOps);
    std::string why;
    CHECK_FALSE(f.kernels(0, &why));
    CHECK(why.find("takes bool, integers, float32 and float64") != std::string::npos);
  }
  SECTION("a float16 and a bfloat16 max / min outside a group: compared as float, NaN kept") {
    for (const char* dtype : {"float16", "bfloat16"}) {
      for (const char* op : {"max", "min"}) {
        IndexFixture f(program(std::string("{name: x, dtype: ") + dtype + ", shape: [3, 4]}",
                               std::string("  - {op: ") + op +
                                   ", in: [x], out: [m], attrs: {axis: [0], keepdim: false}}\n",
                               "m"),
                       kLibraryOps);
        std::string why;
        auto k = f.kernels(0, &why);
        INFO(dtype << " " << op << ": " << why);
        REQUIRE(k);
        const bool half = std::string(dtype) == "float16";
        const std::string v = half ? "__half2float(v)" : "__bfloat162float(v)";
        CHECK(field(k->front(), "acc") == "float");
        const std::string compare = std::string(op) == "max" ? " > " : " < ";
        CHECK(field(k->front(), "fold") ==
              v + compare + "acc || isnan(static_cast<float>(" + v + ")) ? " + v + " : acc");
        CHECK(field(k->front(), "result") == (half ? "__float2half_rn(acc)" : "__float2bfloat16_rn(acc)"));
      }
    }
  }
  SECTION("a cumsum of bools") {
    IndexFixture f(program("{name: x, dtype: bool, shape: [3]}",
                           "  - {op: cumsum, in: [x], out: [y], attrs: {axis: 0, flatten: false, exclusive: false, "
                           "reverse: false}}\n",
                           "y"),
                   kLibraryOps);
    std::string why;
    CHECK_FALSE(f.kernels(0, &why));
    CHECK(why.find("which cumsum does not take") != std::string::npos);
  }
}

}  // namespace
}  // namespace kforge::codegen
