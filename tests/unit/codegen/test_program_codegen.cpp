// Unit tests of kforge compile's code generation: C++ spellings (cpp_text.h), the template context built from a
// lowered program (program_context.h), and the rendered files (program_codegen.h).
#include <catch2/catch.hpp>

#include <sstream>

#include "codegen/cpp_text.h"
#include "codegen/program_codegen.h"
#include "opdef/op_compat.h"
#include "opdef/op_loader.h"
#include "passes/pipeline.h"
#include "program/program_reader.h"
#include "template/codegen_filters.h"

namespace kforge::codegen {
namespace {

TEST_CASE("cpp_text: cpp_int_expr spells dim expressions as the generated classes' int64 C++") {
  using kforge::passes::SymExpr;
  const SymExpr s0 = SymExpr::symbol(0), s1 = SymExpr::symbol(1);
  CHECK(kforge::codegen::cpp_int_expr(SymExpr::floor_div(s0 + 2, 3) * 4 + s1) ==
        "s1 + 4 * kforge_floor_div(s0 + 2, 3)");
  CHECK(kforge::codegen::cpp_int_expr(SymExpr::ceil_div(s0, 4)) == "kforge_ceil_div(s0, 4)");
  CHECK(kforge::codegen::cpp_int_expr(SymExpr::max(s0, 4)) == "std::max<int64_t>(4, s0)");
  CHECK(kforge::codegen::cpp_int_expr(SymExpr::min(s0, s1)) == "std::min<int64_t>(s0, s1)");
  // passes/ itself prints the neutral notation (dumps, messages).
  CHECK(SymExpr::ceil_div(s0, 4).to_string() == "ceil_div(s0, 4)");
}

TEST_CASE("cpp_text: identifiers are valid and unique within a scope") {
  CHECK(cpp_identifier("fc_0.w_0") == "fc_0_w_0");
  CHECK(cpp_identifier("3x") == "_3x");
  CHECK(cpp_identifier("class") == "class_");
  CHECK(cpp_identifier("") == "_");
  IdentifierScope scope({"inputs"});
  CHECK(scope.take("x") == "x");
  CHECK(scope.take("x") == "x_2");
  CHECK(scope.take("x.") == "x_");
  CHECK(scope.take("inputs") == "inputs_2");
}

TEST_CASE("cpp_text: namespace_problem accepts a or a::b and points at the part at fault") {
  CHECK_FALSE(namespace_problem("zoo"));
  CHECK_FALSE(namespace_problem("zoo::vision::v2"));
  CHECK_FALSE(namespace_problem("_zoo"));
  const auto at = [](std::string_view text) { return namespace_problem(text).value_or(NamespaceProblem{999, ""}); };
  CHECK(at("").offset == 0);
  CHECK(at("1x").offset == 0);
  CHECK(at("a::1x").offset == 3);
  CHECK(at("a::b-c").offset == 4);  // the character, not the part
  CHECK(at("a::class").why == "'class' is a C++ keyword");
  CHECK(at("::a").why == "a namespace name cannot start with '::'");
  CHECK(at("a::").offset == 3);
  CHECK(at("a::::b").why == "empty name between '::'");
  CHECK(at("a:b").offset == 1);
  CHECK(at("a::__b").offset == 3);
  CHECK(at("a::_B").offset == 3);
  CHECK(at("kforge").offset == 0);
  CHECK(at("a::int64_t").offset == 3);
}

TEST_CASE("cpp_text: numbers print the shortest text that reads back") {
  CHECK(cpp_double(1.0) == "1.0");
  CHECK(cpp_double(0.5) == "0.5");
  CHECK(cpp_double(1e-05) == "1e-05");
  CHECK(cpp_float(0.1f) == "0.1f");
  CHECK(cpp_float(2.0f) == "2.0f");
  CHECK(cpp_double(-std::numeric_limits<double>::infinity()) == "-std::numeric_limits<double>::infinity()");
  CHECK(cpp_string("a\"b\n") == "\"a\\\"b\\n\"");
}

TEST_CASE("cpp_text: constants inside CUDA kernels spell no host-only std::numeric_limits") {
  // GraphNet's PP-OCRv3_mobile_rec/subgraph_3 sets a slice to -inf: its kernel read {static_cast<float>(-inf)}.
  CHECK(cuda_device_constant(-std::numeric_limits<double>::infinity(), "float") == "static_cast<float>(-HUGE_VAL)");
  CHECK(cuda_device_constant(std::numeric_limits<double>::infinity(), "__half") == "static_cast<__half>(HUGE_VAL)");
  CHECK(cuda_device_constant(std::numeric_limits<double>::quiet_NaN(), "double") == "static_cast<double>(nan(\"\"))");
  CHECK(cuda_device_constant(0.1, "float") == "0.1f");
  CHECK(cuda_device_constant(0.1, "double") == "static_cast<double>(0.10000000000000001)");
  // A double beyond float's range is float's infinity (issue 34's audit: a conv epilogue's clip bound).
  CHECK(cuda_device_constant(1e300, "float") == "static_cast<float>(HUGE_VAL)");
  // The sites that spell finite doubles as 17 digits keep those digits; an infinity or NaN, never "inf" / "nan".
  CHECK(cuda_device_digits(1e-05, "double") == "1.0000000000000001e-05");
  CHECK(cuda_device_digits(-std::numeric_limits<double>::infinity(), "double") == "static_cast<double>(-HUGE_VAL)");
  CHECK(cuda_device_digits(std::numeric_limits<double>::quiet_NaN(), "float") == "static_cast<float>(nan(\"\"))");
}

TEST_CASE("cpp_text: attribute constants in the calling convention's types") {
  std::string why;
  passes::AttrConstant c;
  c.type = opdef::ArgType::kIntArray;
  c.ints = {2, -1};
  CHECK(constant_literal(c, &why) == "{2, -1}");
  CHECK_FALSE(is_inline_constant(c.type));
  CHECK(constant_type(c.type) == "kforge::IntArray");

  c = {};
  c.type = opdef::ArgType::kScalarFloat;
  c.scalar.dtype = ir::DataType::kFloat32;
  c.scalar.is_floating = true;
  c.scalar.float_value = 1.5;
  CHECK(constant_literal(c, &why) == "kforge::Scalar(1.5).with_dtype(kforge::DataType::kFloat32)");

  c = {};
  c.type = opdef::ArgType::kInt64;
  c.int_value = -1;
  CHECK(constant_literal(c, &why) == "int64_t{-1}");
  CHECK(is_inline_constant(c.type));

  c = {};
  c.type = opdef::ArgType::kPlace;
  c.place.type = ir::AllocationType::kCpu;
  CHECK(constant_literal(c, &why) == "kforge::CPUPlace()");

  c = {};
  c.type = opdef::ArgType::kDataType;
  c.dtype = ir::DataType::kUInt16;
  CHECK_FALSE(constant_literal(c, &why).has_value());
  CHECK(why == "the data type uint16");

  CHECK(param_type(opdef::ArgType::kTensor, true) == "const kforge::Tensor*");
  CHECK(param_type(opdef::ArgType::kIntList, false) == "const std::vector<int>&");
  CHECK(param_type(opdef::ArgType::kStr, false) == "const std::string&");
}

/// Reads a program YAML text, lowers it against kernels/ops.yaml and builds the context (or renders).
struct Fixture {
  SourceManager sources;
  std::ostringstream errors;
  DiagnosticEngine diags{sources, errors};
  opdef::OpLibrary library;
  opdef::OpCompat compat;
  std::unique_ptr<passes::OpSet> ops;
  std::optional<passes::LoweredProgram> lowered;

  explicit Fixture(const std::string& program_text) {
    opdef::OpLoader loader(sources, diags);
    loader.add_file(std::string(KFORGE_SOURCE_ROOT) + "/kernels/ops.yaml");
    library = std::move(loader).finish();
    compat = opdef::load_op_compat(std::string(KFORGE_SOURCE_ROOT) + "/kernels/op_compat.yaml", sources, diags);
    ops = std::make_unique<passes::OpSet>(library, &compat, diags);
    const uint32_t file = sources.add_buffer("p.yaml", program_text);
    std::optional<ir::Program> program = ir::read_program(sources, file, diags);
    REQUIRE(program);
    lowered = passes::compile_program(*program, *ops, diags);
    INFO(errors.str());
    REQUIRE(lowered);
  }

  tmpl::Value context(bool trace = false, std::string cpp_namespace = "") {
    ProgramCodegenOptions options;
    options.class_name = "net";
    options.program_path = "p.yaml";
    options.output_dir = ".";
    options.trace_hooks = trace;
    options.cpp_namespace = std::move(cpp_namespace);
    std::optional<tmpl::Value> ctx = build_program_context(*lowered, sources, options, diags);
    INFO(errors.str());
    REQUIRE(ctx);
    return *ctx;
  }
};

const tmpl::Value& at(const tmpl::Value& v, const char* key) {
  const tmpl::Value* found = v.find(key);
  REQUIRE(found != nullptr);
  return *found;
}

constexpr const char* kStatic = R"(program: net
inputs:  [{name: x, dtype: float32, shape: [2, 3]}]
params:  [{name: fc.w, dtype: float32, shape: [3, 4]}]
ops:
  - {op: matmul, in: [x, fc.w], out: [h]}
  - {op: relu, in: [h], out: [y]}
  - {op: softmax, in: [y], out: [p], attrs: {axis: -1}}
outputs: [p]
)";

TEST_CASE("program context: a static program's calls, arguments and memory") {
  Fixture f(kStatic);
  const tmpl::Value ctx = f.context();
  CHECK(at(ctx, "is_static").as_bool());
  const tmpl::List& calls = at(ctx, "calls").as_list();
  REQUIRE(calls.size() == 3);
  CHECK(at(calls[0], "kernel").as_string() == "matmul");
  CHECK(at(calls[0], "where").as_string() == "p.yaml:5:5");
  CHECK(at(calls[0], "ctx").as_string() == "kCtxFloat32");
  const tmpl::List& args = at(calls[0], "args").as_list();
  REQUIRE(args.size() == 5);
  CHECK(args[0].as_string() == "x");
  CHECK(args[1].as_string() == "parameters_[0]");
  CHECK(args[2].as_string() == "false");
  CHECK(args[4].as_string() == "&values_[0]");
  // softmax writes the output directly; its axis is an inline constant.
  const tmpl::List& softmax_args = at(calls[2], "args").as_list();
  CHECK(softmax_args[1].as_string() == "-1");
  const tmpl::List& outputs = at(ctx, "outputs").as_list();
  REQUIRE(outputs.size() == 1);
  CHECK_FALSE(at(outputs[0], "copy").as_bool());
  REQUIRE(at(outputs[0], "aliases").as_list().size() == 1);
  CHECK(at(outputs[0], "aliases").as_list()[0].as_string() == softmax_args[2].as_string().substr(1));
  // Three kernels declared once each, sorted.
  const tmpl::List& decls = at(ctx, "kernel_decls").as_list();
  REQUIRE(decls.size() == 3);
  CHECK(at(decls[0], "name").as_string() == "matmul");
  CHECK(at(decls[0], "params").as_list()[3].as_string() == "bool transpose_x");
  const tmpl::List& inputs = at(ctx, "inputs").as_list();
  CHECK(at(inputs[0], "condition").as_string() ==
        "x.dtype != kforge::DataType::kFloat32 || x.ndim != 2 || x.place.backend != kforge::Backend::kCPU || "
        "x.dims[0] != 2 || x.dims[1] != 3");
  CHECK_FALSE(at(ctx, "trace_hooks").as_bool());
}

TEST_CASE("program context: trace hooks name each result by its program value") {
  Fixture f(kStatic);
  const tmpl::Value traced = f.context(true);
  const tmpl::List& calls = at(traced, "calls").as_list();
  const tmpl::List& traces = at(calls[1], "traces").as_list();
  REQUIRE(traces.size() == 1);
  CHECK(at(traces[0], "key").as_string() == "y");
  CHECK(at(traces[0], "expr").as_string() == "values_[1]");
  const tmpl::Value plain = f.context(false);
  CHECK(at(at(plain, "calls").as_list()[1], "traces").as_list().empty());
}

TEST_CASE("program context: --namespace gives the qualified class name and a guard of its own") {
  Fixture f(kStatic);
  const tmpl::Value plain = f.context();
  CHECK(at(plain, "namespace").as_string().empty());
  CHECK(at(plain, "qualified_class_name").as_string() == "net");
  CHECK(at(plain, "guard").as_string() == "KFORGE_GENERATED_NET_H_");
  const tmpl::Value nested = f.context(false, "zoo::v2");
  CHECK(at(nested, "namespace").as_string() == "zoo::v2");
  CHECK(at(nested, "qualified_class_name").as_string() == "zoo::v2::net");
  CHECK(at(nested, "guard").as_string() == "KFORGE_GENERATED_ZOO_V2_NET_H_");
}

TEST_CASE("program context: dynamic dims become symbols and size expressions") {
  Fixture f(R"(program: dyn
inputs:  [{name: x, dtype: float32, shape: [-1, 4]}]
ops:
  - {op: relu, in: [x], out: [a]}
  - {op: exp, in: [a], out: [y]}
outputs: [y]
)");
  const tmpl::Value ctx = f.context();
  CHECK_FALSE(at(ctx, "is_static").as_bool());
  const tmpl::List& symbols = at(ctx, "symbols").as_list();
  REQUIRE(symbols.size() == 1);
  CHECK(at(symbols[0], "name").as_string() == "s0");
  CHECK(at(symbols[0], "init").as_string() == "x.dims[0]");
  // The workspace's bytes are an entry of the size table, computed from s0.
  const std::string workspace = at(ctx, "workspace_bytes").as_string();
  REQUIRE(workspace.rfind("sizes[", 0) == 0);
  const size_t entry = std::stoul(workspace.substr(6));
  REQUIRE(entry < at(ctx, "sizes").as_list().size());
  bool from_s0 = false;  // the entry or one it builds on (the table defines entries over earlier ones)
  for (size_t k = 0; k <= entry; ++k) {
    from_s0 |= at(at(ctx, "sizes").as_list()[k], "definition").as_string().find("s0") != std::string::npos;
  }
  CHECK(from_s0);
  CHECK(at(at(ctx, "outputs").as_list()[0], "dims").as_string() == "{s0, 4}");
  CHECK(at(at(ctx, "inputs").as_list()[0], "shape_text").as_string() == "[?, 4]");
  CHECK(at(at(ctx, "inputs").as_list()[0], "dims").as_string() == "{-1, 4}");
  // A dynamic dim is checked too: a negative one would reach the workspace size arithmetic.
  CHECK(at(at(ctx, "inputs").as_list()[0], "condition").as_string() ==
        "x.dtype != kforge::DataType::kFloat32 || x.ndim != 2 || x.place.backend != kforge::Backend::kCPU || "
        "x.dims[0] < 0 || x.dims[1] != 4");
}

TEST_CASE("program context: the .pdiparams order is the parameters sorted by name, bytewise") {
  // Program order w_2, W_big, a_b, w_10, a.b; Python's sorted(): W_big, a.b, a_b, w_10, w_2.
  Fixture f(R"(program: order
inputs:  [{name: x, dtype: float32, shape: [2]}]
params:  [{name: w_2, dtype: float32, shape: [2]}, {name: W_big, dtype: float32, shape: [2]},
          {name: a_b, dtype: float32, shape: [2]}, {name: w_10, dtype: float32, shape: [2]},
          {name: a.b, dtype: float32, shape: [2]}]
ops:
  - {op: add, in: [x, w_2], out: [a]}
  - {op: add, in: [a, W_big], out: [b]}
  - {op: add, in: [b, a_b], out: [c]}
  - {op: add, in: [c, w_10], out: [d]}
  - {op: add, in: [d, a.b], out: [y]}
outputs: [y]
)");
  const tmpl::Value ctx = f.context();
  std::vector<int64_t> order;
  for (const tmpl::Value& v : at(ctx, "parameter_file_order").as_list()) order.push_back(v.as_int());
  CHECK(order == std::vector<int64_t>{1, 4, 2, 3, 0});
}

TEST_CASE("program files: four outputs with the banner, rendered by the built-in templates") {
  Fixture f(kStatic);
  tmpl::Environment env(f.sources, f.diags);
  env.add_search_dir(std::string(KFORGE_SOURCE_ROOT) + "/templates");
  tmpl::register_codegen_filters(env);
  ProgramFilesOptions options;
  options.codegen.class_name = "net";
  options.codegen.program_path = "p.yaml";
  options.codegen.output_dir = "gen";
  options.banner_inputs = {"p.yaml"};
  options.tool_version = "9.9.9";
  OutputSet outputs;
  REQUIRE(generate_program_files(*f.lowered, env, options, outputs));
  INFO(f.errors.str());
  REQUIRE(outputs.size() == 4);
  const OutputFile* header = outputs.find("gen/net.h");
  const OutputFile* source = outputs.find("gen/net.cc");
  const OutputFile* runtime = outputs.find("gen/kforge_runtime.h");
  const OutputFile* params = outputs.find("gen/kforge_params.h");
  REQUIRE(header != nullptr);
  REQUIRE(source != nullptr);
  REQUIRE(runtime != nullptr);
  REQUIRE(params != nullptr);
  CHECK(params->bytes.find("inline Status load_file(") != std::string::npos);
  CHECK(header->bytes.find("kforge::Status load_parameters(const char* path);") != std::string::npos);
  CHECK(header->bytes.rfind("// Generated by kforge 9.9.9 from:\n//   ../p.yaml\n", 0) == 0);
  CHECK(header->bytes.find("class net {") != std::string::npos);
  CHECK(header->bytes.find("kforge::Status run(const kforge::Tensor& x, kforge::Tensor* p);") != std::string::npos);
  CHECK(source->bytes.find("KFORGE_CALL(0, kforge::kernels::matmul(kCtxFloat32, x, parameters_[0], false, false, "
                           "&values_[0]));") != std::string::npos);
  CHECK(source->bytes.find("KFORGE_TRACE_VALUE") == std::string::npos);
  CHECK(runtime->bytes.find("#define KFORGE_RUNTIME_VERSION") != std::string::npos);
}

}  // namespace
}  // namespace kforge::codegen
