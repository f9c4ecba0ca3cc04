// Unit tests of kforge compile --target cuda's class model: the context of templates/program/cuda/*
// (codegen/cuda_class_context.h), the GEMM summary it takes (codegen/cuda_gemm.h), and the rendered files
// (codegen/cuda_program.h), including a --template-dir override of the class templates; and the statement text
// both backends spell fused groups with (codegen/group_text.h).
#include <catch2/catch.hpp>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "codegen/cpp_text.h"
#include "codegen/cuda_class_context.h"
#include "codegen/cuda_gemm.h"
#include "codegen/cuda_kernels.h"
#include "codegen/cuda_program.h"
#include "codegen/group_text.h"
#include "opdef/op_loader.h"
#include "passes/pipeline.h"
#include "program/program_reader.h"
#include "template/codegen_filters.h"

namespace kforge::codegen {
namespace {

/// Lowers a program YAML text against the op YAML of a golden case (whose ops carry `compute`) and plans
/// its fusion as `kforge compile --target cuda` does.
struct CudaFixture {
  SourceManager sources;
  std::ostringstream errors;
  DiagnosticEngine diags{sources, errors};
  opdef::OpLibrary library;
  std::unique_ptr<passes::OpSet> ops;
  std::optional<passes::LoweredProgram> lowered;
  passes::FusionPlan plan;
  passes::CudaPlan target;  // the CUDA target plan (passes/cuda_plan.h)
  ProgramFilesOptions options;

  CudaFixture(const std::string& ops_case, const std::string& program_text) {
    opdef::OpLoader loader(sources, diags);
    loader.add_file(std::string(KFORGE_SOURCE_ROOT) + "/tests/golden/" + ops_case + "/ops.yaml");
    library = std::move(loader).finish();
    ops = std::make_unique<passes::OpSet>(library, nullptr, diags);
    const uint32_t file = sources.add_buffer("p.yaml", program_text);
    std::optional<ir::Program> program = ir::read_program(sources, file, diags);
    REQUIRE(program);
    lowered = passes::compile_program(*program, *ops, diags);
    INFO(errors.str());
    REQUIRE(lowered);
    passes::FusionOptions fusion;
    fusion.single_call_groups = true;
    fusion.gemm_groups = true;
    fusion.half_floats = true;
    plan = passes::plan_fusion(*lowered, fusion);
    passes::apply_fusion_to_memory_plan(*lowered, plan);
    target = passes::plan_cuda(*lowered, plan, 0);
    options.codegen.class_name = "net";
    options.codegen.program_path = "p.yaml";
    options.codegen.output_dir = "gen";
    options.banner_inputs = {"p.yaml"};
    options.tool_version = "9.9.9";
  }

  tmpl::Value context(const CudaClassParts& parts = {}) {
    INFO(errors.str());
    REQUIRE(target.refusals.empty());
    return build_cuda_class_context(*lowered, plan, options, parts);
  }
};

const tmpl::Value& at(const tmpl::Value& v, const char* key) {
  const tmpl::Value* found = v.find(key);
  INFO(key);
  REQUIRE(found != nullptr);
  return *found;
}

constexpr const char* kDynamic = R"(program: act
inputs:  [{name: x, dtype: float32, shape: [-1, 16]}]
params:  [{name: b, dtype: float32, shape: [16]}]
ops:
  - {op: add, in: [x, b], out: [h]}
  - {op: relu, in: [h], out: [y]}
outputs: [y]
)";

TEST_CASE("cuda class context: names, checks, symbols and outputs of a dynamic program") {
  CudaFixture f("compile-cuda-fused", kDynamic);
  const tmpl::Value ctx = f.context();
  CHECK(at(ctx, "class_name").as_string() == "net");
  CHECK(at(ctx, "header").as_string() == "net.h");
  CHECK(at(ctx, "guard").as_string() == "KFORGE_GENERATED_net_CUDA_H_");
  CHECK(at(ctx, "source").as_string() == "../p.yaml");
  CHECK(at(ctx, "num_launches").as_int() == static_cast<int64_t>(f.plan.groups.size()));
  CHECK(at(ctx, "gemm").is_bool());
  CHECK_FALSE(at(ctx, "gemm").as_bool());
  CHECK_FALSE(at(ctx, "rows").as_bool());
  CHECK_FALSE(at(ctx, "cuda_graph").as_bool());
  const tmpl::List& inputs = at(ctx, "inputs").as_list();
  REQUIRE(inputs.size() == 1);
  CHECK(at(inputs[0], "shape_text").as_string() == "[?, 16]");
  CHECK(at(inputs[0], "condition").as_string() ==
        "x.dtype != kforge::DataType::kFloat32 || x.ndim != 2 || x.place.backend != kforge::Backend::kGPU || "
        "x.dims[0] < 0 || x.dims[1] != 16");
  const tmpl::List& parameters = at(ctx, "parameters").as_list();
  REQUIRE(parameters.size() == 1);
  CHECK(at(parameters[0], "condition").as_string() ==
        "value.dtype != kforge::DataType::kFloat32 || value.ndim != 1 || "
        "value.place.backend != kforge::Backend::kGPU || value.dims[0] != 16");
  const tmpl::List& symbols = at(ctx, "symbols").as_list();
  REQUIRE(symbols.size() == 1);
  CHECK(at(symbols[0], "init").as_string() == "x.dims[0]");
  const tmpl::List& outputs = at(ctx, "outputs").as_list();
  REQUIRE(outputs.size() == 1);
  CHECK(at(outputs[0], "ident").as_string() == "y_out");
  CHECK(at(outputs[0], "dtype").as_string() == "kforge::DataType::kFloat32");
  CHECK(at(outputs[0], "dims").as_string() == "{s0, 16}");
  const tmpl::List& run_params = at(ctx, "run_params").as_list();
  REQUIRE(run_params.size() == 2);
  CHECK(run_params[0].as_string() == "const kforge::Tensor& x");
  CHECK(run_params[1].as_string() == "kforge::Tensor* y_out");
  const tmpl::List& generic = at(ctx, "run_generic_args").as_list();
  REQUIRE(generic.size() == 2);
  CHECK(generic[0].as_string() == "*inputs.items[0]");
  CHECK(generic[1].as_string() == "outputs.items[0]");
}

TEST_CASE("cuda class context: the parameter table of the Python module, in .pdiparams order") {
  CudaFixture f("compile-cuda-fused", R"(program: act2
inputs:  [{name: x, dtype: float32, shape: [-1, 16]}]
params:  [{name: w_b, dtype: float32, shape: [16]}, {name: W_a, dtype: float32, shape: [1, 16]}]
ops:
  - {op: add, in: [x, w_b], out: [h]}
  - {op: add, in: [h, W_a], out: [h2]}
  - {op: relu, in: [h2], out: [y]}
outputs: [y]
)");
  const tmpl::Value ctx = f.context();
  const tmpl::List& parameters = at(ctx, "parameters").as_list();
  REQUIRE(parameters.size() == 2);
  CHECK(at(parameters[0], "name").as_string() == "w_b");
  CHECK(at(parameters[0], "dtype").as_string() == "kforge::DataType::kFloat32");
  CHECK(at(parameters[0], "rank").as_int() == 1);
  CHECK(at(parameters[0], "dims").as_string() == "{16}");
  CHECK(at(parameters[1], "dims").as_string() == "{1, 16}");
  // Sorted by name in byte order, as Paddle writes them: "W_a" before "w_b".
  const tmpl::List& order = at(ctx, "parameter_file_order").as_list();
  REQUIRE(order.size() == 2);
  CHECK(order[0].as_int() == 1);
  CHECK(order[1].as_int() == 0);
}

TEST_CASE("cuda class context: the GEMM summary and optional parts") {
  CudaFixture f("compile-cuda-gemm", R"(program: mm
inputs:  [{name: x, dtype: float32, shape: [16, 64]}]
params:  [{name: w, dtype: float32, shape: [64, 32]}]
ops:
  - {op: matmul, in: [x, w], out: [y]}
outputs: [y]
)");
  CudaGemmCode gemm(*f.lowered, f.plan, nullptr, false,
                    [](uint32_t, const std::string&, bool) { return std::string("p"); },
                    [](const passes::FusedGroup&) { return std::string("g"); },
                    [](const passes::SymExpr& e) { return cpp_int_expr(e); });
  const CudaGemmSummary summary = gemm.summary();
  CHECK(summary.count == 1);
  CHECK(summary.types == "fp32");
  CHECK(summary.kernels.empty());
  CHECK_FALSE(summary.multi_kernel);
  // The call gemm.j2 renders: one cuBLASLt product, its dims and pointers as C++ text, no batch, no dispatcher.
  const tmpl::Value call = gemm.call(f.plan.groups.at(0));
  CHECK(at(call, "kind").as_string() == "gemm");
  CHECK(at(call, "dims").as_string() == "16, 32, 64");
  CHECK(at(call, "fn").as_string() == "kforge::cuda_gemm::cublaslt_gemm_f32");
  CHECK(at(call, "bias").as_string() == "nullptr");
  CHECK_FALSE(at(call, "batched").as_bool());
  CHECK_FALSE(at(call, "site").as_bool());
  CudaClassParts parts;
  parts.gemm = summary;
  parts.row_dispatchers = true;
  parts.cuda_graph = true;
  parts.size = [](const passes::SymExpr& e) { return cpp_int_expr(e); };
  const tmpl::Value ctx = f.context(parts);
  const tmpl::Value& g = at(ctx, "gemm");
  CHECK(at(g, "count").as_int() == 1);
  CHECK(at(g, "types").as_string() == "fp32");
  CHECK(at(ctx, "rows").as_bool());
  CHECK(at(ctx, "cuda_graph").as_bool());
}

TEST_CASE("cuda plan: a dtype the runtime cannot name is refused at the input") {
  CudaFixture f("compile-cuda-fused", R"(program: u
inputs:  [{name: x, dtype: uint32, shape: [4]}, {name: z, dtype: float32, shape: [4]}]
ops:
  - {op: relu, in: [z], out: [y]}
outputs: [y, x]
)");
  REQUIRE(f.target.refusals.size() == 2);  // once at the input, once at the output
  const passes::CudaRefusal& r = f.target.refusals.front();
  CHECK(f.sources.line_col(r.loc).line == 2);
  CHECK(r.message == "--target cuda: input 'x' has dtype uint32, which the runtime (kforge_runtime.h) has no name for");
  CHECK(f.target.refusals.back().message ==
        "--target cuda: output 'x' has dtype uint32, which the runtime (kforge_runtime.h) has no name for");
}

// The files, rendered by the built-in templates, and by a --template-dir that overrides the class header.
TEST_CASE("cuda program files: the class from templates/program/cuda, overridable") {
  CudaFixture f("compile-cuda-fused", kDynamic);
  const std::filesystem::path override_dir =
      std::filesystem::temp_directory_path() / ("kforge-unit-cuda-" + std::to_string(::getpid()));
  std::filesystem::create_directories(override_dir / "program" / "cuda");
  for (const bool overridden : {false, true}) {
    INFO("overridden: " << overridden);
    tmpl::Environment env(f.sources, f.diags);
    if (overridden) {
      std::ofstream(override_dir / "program" / "cuda" / "program.h.j2") << "// {{ class_name }}: my header\n";
      env.add_search_dir(override_dir.string());
    }
    env.add_search_dir(std::string(KFORGE_SOURCE_ROOT) + "/templates");
    tmpl::register_codegen_filters(env);
    OutputSet outputs;
    REQUIRE(generate_cuda_program_files(*f.lowered, f.plan, f.target, env, f.options, CudaFilesOptions{}, outputs));
    INFO(f.errors.str());
    const OutputFile* header = outputs.find("gen/net.h");
    const OutputFile* host = outputs.find("gen/net.cu");
    const OutputFile* kernels = outputs.find("gen/net_kernels.cu");
    REQUIRE(header != nullptr);
    REQUIRE(host != nullptr);
    REQUIRE(kernels != nullptr);
    CHECK(outputs.find("gen/kforge_runtime.h") != nullptr);
    CHECK(outputs.find("gen/kforge_cuda_runtime.h") != nullptr);
    CHECK(header->bytes.rfind("// Generated by kforge 9.9.9 from:\n//   ../p.yaml\n", 0) == 0);
    if (overridden) {
      CHECK(header->bytes.find("// net: my header\n") != std::string::npos);
      CHECK(header->bytes.find("class net {") == std::string::npos);
    } else {
      CHECK(header->bytes.find("static_assert(KFORGE_RUNTIME_VERSION == 4,") != std::string::npos);
      CHECK(header->bytes.find("class net {") != std::string::npos);
      CHECK(header->bytes.find("kforge::Status run(const kforge::Tensor& x, kforge::Tensor* y_out);") !=
            std::string::npos);
    }
    // The generic run() checks each input pointer before the typed run() dereferences it.
    CHECK(host->bytes.find("if (inputs.items[i] == nullptr) return kforge::Status::Error(\"net: input \", i, "
                           "\" is null\");") != std::string::npos);
    CHECK(host->bytes.find("return run(*inputs.items[0], outputs.items[0]);") != std::string::npos);
    CHECK(host->bytes.find("const int64_t s0 = x.dims[0];") != std::string::npos);
    CHECK(kernels->bytes.find("// The fused kernels of net (kforge compile --target cuda); launched from net.cu.") !=
          std::string::npos);
    CHECK(kernels->bytes.find("__global__") != std::string::npos);
  }
  std::filesystem::remove_all(override_dir);
}

TEST_CASE("group text: statements and reductions in C++ and CUDA") {
  CudaFixture f("compile-cuda-fused", R"(program: txt
inputs:  [{name: x, dtype: float32, shape: [4, 8]}]
ops:
  - {op: relu, in: [x], out: [a]}
  - {op: exp, in: [a], out: [e]}
  - {op: sum, in: [e], out: [s], attrs: {axis: [-1], keepdim: true}}
  - {op: divide, in: [e, s], out: [q]}
outputs: [q]
)");
  const passes::GroupStmt* element = nullptr;
  const passes::GroupStmt* reduce = nullptr;
  for (const passes::FusedGroup& g : f.plan.groups) {
    for (const passes::GroupStmt& st : g.stmts) {
      if (st.kind == passes::StmtKind::kElement && element == nullptr) element = &st;
      if (st.kind == passes::StmtKind::kReduce && reduce == nullptr) reduce = &st;
    }
  }
  REQUIRE(element != nullptr);
  REQUIRE(reduce != nullptr);
  CHECK(group_stmt_text(*element, expr::EmitTarget::kCpp).find("std::max") != std::string::npos);
  CHECK(group_stmt_text(*element, expr::EmitTarget::kCuda).find("kforge::cuda::std_max") != std::string::npos);
  CHECK(group_stmt_text(*element, expr::EmitTarget::kCpp, [](std::string_view n) { return "L_" + std::string(n); })
            .find("L_") != std::string::npos);
  CHECK(group_stmt_text(*reduce, expr::EmitTarget::kCpp).empty());
  const ReductionText text = group_reduction_text(*reduce, expr::EmitTarget::kCuda, "acc", "e", "o", "n");
  CHECK(text.combine.find("acc") != std::string::npos);
  CHECK(text.combine.find("e") != std::string::npos);
  CHECK(text.merge.find("o") != std::string::npos);
  CHECK_FALSE(text.init.empty());
  CHECK(group_reduction_text(*element, expr::EmitTarget::kCpp, "acc", "e", "o", "n").combine.empty());
}

// The kernels' contexts (templates/program/cuda/group_kernels.j2 spells the statements from them).
const tmpl::Value& item(const tmpl::Value& v, const char* key, size_t i) {
  const tmpl::Value& list = at(v, key);
  REQUIRE(list.is_list());
  REQUIRE(i < list.as_list().size());
  return list.as_list()[i];
}

std::string text(const tmpl::Value& v, const char* key) {
  const tmpl::Value& found = at(v, key);
  REQUIRE(found.is_string());
  return found.as_string();
}

TEST_CASE("cuda group kernels: an elementwise group's context") {
  CudaFixture f("compile-cuda-fused", kDynamic);
  REQUIRE(f.plan.groups.size() == 1);
  CHECK(f.target.refusals.empty());
  const CudaGroupCode code = cuda_group_code(f.plan.groups[0], "net_", nullptr);
  CHECK(code.launcher == "net_fused_0");
  CHECK(code.vector_width == 4);
  CHECK(code.variant_launcher.empty());
  const tmpl::Value& k = code.kernels;
  CHECK(text(k, "name") == "net_fused_0");
  CHECK_FALSE(at(k, "rows").as_bool());
  CHECK(text(k, "index_type") == "int64_t");  // the fusion plan's needs_int64: a dim known only at run time
  CHECK(at(k, "vec").as_int() == 4);
  // x [s0, 16] is read whole, b [16] along the row: both vectors, aligned to 16 bytes; the row index j for b.
  CHECK(at(k, "needs_inner").as_bool());
  REQUIRE(at(k, "aligned").as_list().size() == 3);  // x, b and the store
  CHECK(at(item(k, "aligned", 0), "bytes").as_int() == 16);
  CHECK(text(item(k, "inputs", 0), "type") == "float");
  CHECK(text(item(k, "pre", 0), "name") == "j");
  CHECK(text(item(k, "pre", 0), "value") == "idx % ninner");
  CHECK(at(item(k, "pre", 1), "vector").as_bool());
  CHECK(at(k, "stmts").as_list().size() == 2);  // add, relu
  CHECK(text(item(k, "stmts", 0), "kind") == "let");
  CHECK(at(k, "vector_stores").as_list().size() == 1);
  CHECK(text(item(k, "store_stmts", 0), "kind") == "set");
}

TEST_CASE("cuda group kernels: a softmax row group's passes") {
  CudaFixture f("compile-cuda-fused", R"(program: sm
inputs:  [{name: x, dtype: float32, shape: [4, 64]}]
ops:
  - {op: softmax, in: [x], out: [y], attrs: {axis: -1}}
outputs: [y]
)");
  REQUIRE(f.plan.groups.size() == 1);
  CHECK(f.target.refusals.empty());
  const tmpl::Value k = cuda_group_code(f.plan.groups[0], "net_", nullptr).kernels;
  CHECK(at(k, "rows").as_bool());
  CHECK(at(k, "uses_base").as_bool());
  CHECK_FALSE(at(k, "site").as_bool());
  const tmpl::Value& cached = at(k, "cached");
  CHECK(at(cached, "arrays").as_list().size() == 1);  // x, held in registers
  const tmpl::Value& passes = at(cached, "passes");
  REQUIRE(passes.as_list().size() == 3);  // the max, the sum of exponentials, the normalized row
  const tmpl::Value& max_pass = passes.as_list()[0];
  CHECK(text(item(max_pass, "decls", 0), "kind") == "var");
  CHECK(text(item(max_pass, "decls", 0), "value") == "-HUGE_VALF");
  CHECK(text(item(max_pass, "after", 0), "kind") == "reduce");
  CHECK(text(item(max_pass, "after", 0), "value") == "fmaxf(a, b)");
  // The looped body reads x per chunk: one load, at base + j0.
  const tmpl::Value& looped_max = at(at(k, "looped"), "passes").as_list()[0];
  CHECK(text(item(at(looped_max, "loop"), "loads", 0), "at") == "base + j0");
}

}  // namespace
}  // namespace kforge::codegen
