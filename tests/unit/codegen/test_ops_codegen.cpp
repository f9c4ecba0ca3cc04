// Unit tests of `kforge ops` code generation: YAML defaults as C++ defaults, Tensor[] size expressions,
// the per-op API decisions (functions, twins, aliasing, kernel key, skip reasons), sharding and the
// rendered files (through the built-in templates).
#include <catch2/catch.hpp>

#include <deque>
#include <sstream>

#include "codegen/op_api_defaults.h"
#include "codegen/op_api_model.h"
#include "codegen/op_api_size_expr.h"
#include "codegen/ops_codegen.h"
#include "opdef/op_loader.h"
#include "template/codegen_filters.h"
#include "template/environment.h"

namespace kforge::codegen {
namespace {

struct Fixture {
  SourceManager sources;
  std::ostringstream out;
  DiagnosticEngine diags{sources, out};
  std::deque<opdef::OpLibrary> libraries;  // what models built by model_of() point into, alive as long as the fixture

  opdef::OpLibrary load(const std::string& text) {
    opdef::OpLoader loader(sources, diags);
    loader.add_buffer(sources.add_buffer("ops.yaml", text));
    return std::move(loader).finish();
  }
};

opdef::DefaultValue default_of(const std::string& yaml_type, const std::string& text) {
  static Fixture* fixture = nullptr;
  delete fixture;
  fixture = new Fixture;
  const opdef::OpLibrary lib =
      fixture->load("- op : t\n  args : (Tensor x, " + yaml_type + " a = " + text + ")\n  output : Tensor(out)\n");
  REQUIRE(fixture->out.str().empty());
  return *lib.ops().front().attributes.front().default_value;
}

std::string cpp_default(const std::string& yaml_type, const std::string& text) {
  const opdef::DefaultValue value = default_of(yaml_type, text);
  std::string why;
  const std::optional<opdef::ArgType> type = opdef::parse_arg_type(yaml_type);
  REQUIRE(type);
  std::optional<std::string> out = cpp_default_value(*type, value, &why);
  return out ? *out : "<none: " + why + ">";
}

TEST_CASE("YAML defaults that are valid C++ for the parameter type are kept", "[ops][defaults]") {
  CHECK(cpp_default("int", "-1") == "-1");
  CHECK(cpp_default("int", "(2 << 12) - 1") == "(2 << 12) - 1");
  CHECK(cpp_default("int", "true") == "true");
  CHECK(cpp_default("int64_t", "INT64_MAX") == "INT64_MAX");
  CHECK(cpp_default("int64_t", "10000L") == "10000L");
  CHECK(cpp_default("float", "1.0f/8") == "1.0f/8");
  CHECK(cpp_default("float", ".5f") == ".5f");
  CHECK(cpp_default("float", "2.") == "2.");
  CHECK(cpp_default("float", "1e-5") == "1e-5");
  CHECK(cpp_default("Scalar", "false") == "false");
  CHECK(cpp_default("Scalar(double)", "1e-8") == "1e-8");
  CHECK(cpp_default("str", "\"NCHW\"") == "\"NCHW\"");
  CHECK(cpp_default("int[]", "{1, 1}") == "{1, 1}");
  CHECK(cpp_default("int[]", "{}") == "{}");
  CHECK(cpp_default("float[]", "{16.0, 16.0}") == "{16.0, 16.0}");
  CHECK(cpp_default("str[]", "{\"127.0.0.1:6164\"}") == "{\"127.0.0.1:6164\"}");
  CHECK(cpp_default("IntArray", "{0,0}") == "{0, 0}");
  CHECK(cpp_default("DataType", "DataType::FLOAT32") == "kforge::DataType::FLOAT32");
  CHECK(cpp_default("DataType", "phi::DataType::INT64") == "kforge::DataType::INT64");
  CHECK(cpp_default("Place", "{}") == "{}");
  CHECK(cpp_default("Place", "CPUPlace()") == "kforge::CPUPlace()");
  CHECK(cpp_default("Place", "phi::GPUPlace(1)") == "kforge::GPUPlace(1)");
}

TEST_CASE("YAML defaults that are not valid C++ for the type are refused with the reason", "[ops][defaults]") {
  CHECK(cpp_default("int", "1.5") == "<none: a float default does not fit type 'int'>");
  CHECK(cpp_default("int", "\"a\"") == "<none: a string default does not fit type 'int'>");
  CHECK(cpp_default("int", "kMaxSize") == "<none: it uses the name 'kMaxSize'>");
  CHECK(cpp_default("float", "std::sqrt(2.0f)") == "<none: it uses the name 'std'>");
  CHECK(cpp_default("str", "0") == "<none: an integer default does not fit type 'str'>");
  CHECK(cpp_default("IntArray", "{1.5}") == "<none: element 1: a float default does not fit type 'int64_t'>");
  CHECK(cpp_default("DataType", "DataType::FLOAT8") == "<none: it is not a kforge::DataType enumerator>");
  CHECK(cpp_default("Place", "XPUPlace()") == "<none: it is not {}, CPUPlace() or GPUPlace(n)>");
}

TEST_CASE("Tensor[] size expressions are translated to the runtime's types", "[ops][size]") {
  Fixture f;
  const opdef::OpLibrary lib = f.load(
      "- op : t\n  args : (Tensor input, Tensor[] xs, IntArray sections, int num, int axis)\n"
      "  output : Tensor[](out){num}\n");
  REQUIRE(f.out.str().empty());
  const opdef::Op& op = lib.ops().front();
  std::string why;
  CHECK(translate_size_expression("num", op, &why) == "num");
  CHECK(translate_size_expression("xs.size()", op, &why) == "xs.size");
  CHECK(translate_size_expression("sections.size()", op, &why) == "sections.size()");
  CHECK(translate_size_expression("axis<0 ? input.dims()[input.dims().size()+axis]:input.dims()[axis]", op, &why) ==
        "axis<0 ? kforge_dims(input)[kforge_dims(input).size()+axis]:kforge_dims(input)[axis]");
  CHECK_FALSE(translate_size_expression("other.size()", op, &why));
  CHECK(why == "'other' is not an argument of the op");
  CHECK_FALSE(translate_size_expression("input.numel()", op, &why));
  CHECK(why == "'input.numel()' cannot be translated (only LIST.size() and TENSOR.dims() can)");
  CHECK_FALSE(translate_size_expression("num; x", op, &why));
}

OpApiModel model_of(Fixture& f, const std::string& yaml) {
  const opdef::OpLibrary& lib = f.libraries.emplace_back(f.load(yaml));  // the model points into it
  REQUIRE(f.out.str().empty());
  return build_op_api_model(lib, f.sources, {});
}

const OpApi& op_named(const OpApiModel& m, const std::string& name) {
  for (const OpApi& op : m.ops) {
    if (op.name == name) return op;
  }
  FAIL("no op " << name);
  return m.ops.front();
}

std::string signature(const ApiFunction& fn) {
  std::string s = fn.name + "(";
  for (size_t i = 0; i < fn.params.size(); ++i) {
    const ApiParam& p = fn.params[i];
    s += (i ? ", " : "") + p.type + " " + p.name + (p.default_value.empty() ? "" : " = " + p.default_value);
  }
  return s + ")";
}

TEST_CASE("an op gets its function and, with inplace pairs, the in-place twin", "[ops][model]") {
  Fixture f;
  const OpApiModel m = model_of(f, R"(
- op : scale
  args : (Tensor x, Scalar scale=1.0, Scalar bias=0.0, bool bias_after_scale=true)
  output : Tensor(out)
  infer_meta :
    func : UnchangedInferMeta
    param : [x]
  kernel :
    func : scale
    data_type : x
  inplace : (x -> out)
)");
  const OpApi& op = op_named(m, "scale");
  REQUIRE(op.generated);
  REQUIRE(op.functions.size() == 2);
  CHECK(signature(op.functions[0]) ==
        "scale(const kforge::Tensor& x, kforge::Tensor* out, const kforge::Scalar& scale = 1.0, "
        "const kforge::Scalar& bias = 0.0, bool bias_after_scale = true)");
  CHECK(signature(op.functions[1]) ==
        "scale_(kforge::Tensor& x, const kforge::Scalar& scale = 1.0, const kforge::Scalar& bias = 0.0, "
        "bool bias_after_scale = true)");
  const ApiOutput& twin_out = op.functions[1].outputs.front();
  CHECK(twin_out.alias_input == "x");
  CHECK(twin_out.write_back);
  CHECK_FALSE(twin_out.is_param);
  CHECK(op.functions[0].outputs.front().alias_input.empty());
  CHECK(op.functions[0].infer_meta.func == "kforge::meta::UnchangedInferMeta");
  CHECK(op.functions[0].infer_meta.args == std::vector<std::string>{"x", "&kforge_out"});
  CHECK(op.functions[0].kernel.args ==
        std::vector<std::string>{"kforge_ctx", "x", "scale", "bias", "bias_after_scale", "&kforge_out"});
  CHECK(op.functions[0].dtype_candidates == std::vector<std::string>{"kforge_dtype_of(x)"});
  CHECK(m.kernels.size() == 1);
  REQUIRE(m.metas.size() == 1);
  CHECK(m.metas[0].params == std::vector<std::string>{"const kforge::Tensor& x", "kforge::Tensor* out"});
}

TEST_CASE("views alias, optional and intermediate outputs are nullable, lists get sizes", "[ops][model]") {
  Fixture f;
  const OpApiModel m = model_of(f, R"(
- op : reshape
  args : (Tensor x, IntArray shape)
  output : Tensor(out)
  infer_meta :
    func : ReshapeInferMeta
  kernel :
    func : reshape
  view: (x -> out)
- op : layer_norm
  args : (Tensor x, Tensor scale, Tensor bias, float epsilon = 1e-5, int begin_norm_axis = 1)
  output : Tensor(out), Tensor(mean), Tensor(variance)
  infer_meta :
    func : LayerNormInferMeta
  kernel :
    func : layer_norm
    data_type : x
  intermediate : mean, variance
  optional : scale, bias
- op : split
  args : (Tensor x, IntArray sections, Scalar(int) axis)
  output : Tensor[]{sections.size()}
  infer_meta :
    func : SplitInferMeta
  kernel :
    func : split
)");
  const ApiFunction& reshape = op_named(m, "reshape").functions.at(0);
  CHECK(op_named(m, "reshape").functions.size() == 1);
  CHECK(reshape.outputs.front().alias_input == "x");
  CHECK(reshape.outputs.front().is_param);
  CHECK_FALSE(reshape.outputs.front().write_back);

  const ApiFunction& ln = op_named(m, "layer_norm").functions.at(0);
  CHECK(signature(ln) ==
        "layer_norm(const kforge::Tensor& x, const kforge::Tensor* scale, const kforge::Tensor* bias, "
        "kforge::Tensor* out, kforge::Tensor* mean, kforge::Tensor* variance, float epsilon = 1e-5, "
        "int begin_norm_axis = 1)");
  CHECK_FALSE(ln.outputs[0].nullable);
  CHECK(ln.outputs[1].nullable);
  CHECK(ln.kernel.args.back() == "(variance != nullptr ? &kforge_variance : nullptr)");

  const ApiFunction& split = op_named(m, "split").functions.at(0);
  CHECK(split.outputs.front().is_list);
  CHECK(split.outputs.front().size == "sections.size()");
  CHECK(split.params[1].type == "std::vector<kforge::Tensor>*");
  CHECK(split.kernel.args.back() == "kforge_out.list()");
  // No data_type: Paddle's rule over every tensor input.
  CHECK(split.dtype_from_inputs);
}

TEST_CASE("defaults must trail: an unusable default drops the ones before it", "[ops][model]") {
  Fixture f;
  const OpApiModel m = model_of(f, R"(
- op : t
  args : (Tensor x, int a = 1, str b = "s", int c = kSomething, bool d = false)
  output : Tensor(out)
  infer_meta :
    func : UnchangedInferMeta
    param : [x]
  kernel :
    func : t
)");
  const ApiFunction& fn = op_named(m, "t").functions.at(0);
  CHECK(signature(fn) ==
        "t(const kforge::Tensor& x, kforge::Tensor* out, int a, const std::string& b, int c, bool d = false)");
  CHECK(fn.notes == std::vector<std::string>{
                        "'a': YAML default '1' is not used: a later parameter has none",
                        "'b': YAML default '\"s\"' is not used: a later parameter has none",
                        "'c': YAML default 'kSomething' is not used: it uses the name 'kSomething'"});
}

TEST_CASE("ops that cannot be expressed are skipped with the reason", "[ops][model]") {
  Fixture f;
  const OpApiModel m = model_of(f, R"(
- op : merge_selected_rows
  args : (Tensor x)
  output : Tensor(out)
  infer_meta :
    func : UnchangedInferMeta
  kernel :
    func : merge_selected_rows {selected_rows -> selected_rows}
- op : sqrt
  args : (Tensor x)
  output : Tensor(out)
  infer_meta :
    func : UnchangedInferMeta
  kernel :
    func : sqrt {dense -> dense}, sqrt_sr {selected_rows -> selected_rows}
- op : rows
  args : (Tensor x)
  output : SelectedRows(out)
  infer_meta :
    func : UnchangedInferMeta
  kernel :
    func : rows
- op : copy_to
  args : (Tensor x, Place place, bool blocking)
  output : Tensor(out)
  invoke : copy_to_impl(x, place, blocking)
- op : ones
  args : (IntArray shape, DataType dtype=DataType::FLOAT32, Place place=CPUPlace())
  output : Tensor(out)
  invoke : full(shape, 1, dtype, place)
- op : full
  args : (IntArray shape, Scalar(double) value, DataType dtype=DataType::FLOAT32, Place place=CPUPlace())
  output: Tensor(out)
  infer_meta :
    func : CreateInferMeta
    param : [shape, dtype]
  kernel :
    func : full
    param : [shape, value, dtype]
    data_type : dtype
    backend : place
- op : unbind
  args : (Tensor input, int axis = 0)
  output : Tensor[] {input.numel()}
  infer_meta :
    func : UnbindInferMeta
  kernel :
    func : unbind
- op : kforge_x
  args : (Tensor x)
  output : Tensor(out)
  infer_meta :
    func : UnchangedInferMeta
  kernel :
    func : kforge_x
- op : std_op
  args : (Tensor x, int std)
  output : Tensor(out)
  infer_meta :
    func : UnchangedInferMeta
  kernel :
    func : std_op
- op : int_named
  args : (Tensor x, int int64_t)
  output : Tensor(out)
  infer_meta :
    func : UnchangedInferMeta
  kernel :
    func : int_named
)");
  CHECK(op_named(m, "merge_selected_rows").skip_reason ==
        "it has no dense kernel (merge_selected_rows take sparse or selected-rows tensors)");
  CHECK(op_named(m, "sqrt").generated);
  CHECK(op_named(m, "sqrt").functions.at(0).kernel.func == "kforge::kernels::sqrt");
  CHECK(op_named(m, "rows").skip_reason == "output 'out' is SelectedRows");
  CHECK(op_named(m, "copy_to").skip_reason == "it invokes 'copy_to_impl', which is not a generated op");
  REQUIRE(op_named(m, "ones").generated);
  const ApiFunction& ones = op_named(m, "ones").functions.at(0);
  CHECK(ones.is_invoke);
  CHECK(ones.invoke.func == "full");
  CHECK(ones.invoke.args == std::vector<std::string>{"out", "shape", "1", "dtype", "place"});
  CHECK(op_named(m, "unbind").skip_reason ==
        "size of output 'out': 'input.numel()' cannot be translated (only LIST.size() and TENSOR.dims() can)");
  CHECK(op_named(m, "kforge_x").skip_reason == "the name 'kforge_x' is a name generated code reserves");
  // `std` as a parameter leaves `std::` meaning the namespace (Paddle's gaussian has such an attribute); a
  // parameter named after a type the generated code spells unqualified would hide that type.
  CHECK(op_named(m, "std_op").generated);
  CHECK(op_named(m, "int_named").skip_reason == "attribute 'int64_t' is a name generated code reserves");
  CHECK(m.generated_count() == 4);  // sqrt, ones, full, std_op
}

TEST_CASE("kernel keys follow data_type and backend candidates", "[ops][model]") {
  Fixture f;
  const OpApiModel m = model_of(f, R"(
- op : full_like
  args : (Tensor x, Scalar value, DataType dtype = DataType::UNDEFINED, Place place = {})
  output: Tensor(out)
  infer_meta :
    func : CreateLikeInferMeta
    param : [x, dtype]
  kernel :
    func : full_like
    param : [x, value, dtype]
    data_type : dtype > x
    backend : place > x
- op : real_grad
  args : (Tensor out_grad)
  output : Tensor(x_grad)
  infer_meta :
    func : RealAndImagGradInferMeta
  kernel :
    func : real_grad
    data_type : complex(out_grad)
- op : edit_distance
  args : (Tensor hyps, Tensor refs)
  output : Tensor(out)
  infer_meta :
    func : EditDistanceInferMeta
  kernel :
    func : edit_distance
    data_type : DataType::FLOAT32
)");
  const ApiFunction& fl = op_named(m, "full_like").functions.at(0);
  CHECK(fl.dtype_candidates == std::vector<std::string>{"dtype", "kforge_dtype_of(x)"});
  CHECK(fl.place_candidates == std::vector<std::string>{"place", "kforge_place_of(x)"});
  CHECK(op_named(m, "real_grad").functions.at(0).dtype_candidates ==
        std::vector<std::string>{"kforge_complex_of(kforge_dtype_of(out_grad))"});
  CHECK(op_named(m, "edit_distance").functions.at(0).dtype_candidates ==
        std::vector<std::string>{"kforge::DataType::FLOAT32"});
}

TEST_CASE("shards and file names depend on the options alone", "[ops][files]") {
  OpsCodegenOptions options;
  options.output_dir = "gen";
  options.prefix = "paddle";
  CHECK(op_library_file_names(options) ==
        std::vector<std::string>{"gen/paddle_api.h", "gen/paddle_decls.h", "gen/paddle_api.cc",
                                 "gen/paddle_args_info.cc", "gen/kforge_runtime.h"});
  options.shards = 2;
  CHECK(op_library_file_names(options) ==
        std::vector<std::string>{"gen/paddle_api.h", "gen/paddle_decls.h", "gen/paddle_api_0.cc",
                                 "gen/paddle_api_1.cc", "gen/paddle_args_info_0.cc", "gen/paddle_args_info_1.cc",
                                 "gen/kforge_runtime.h"});
  // FNV-1a, fixed forever: a changed hash would move every op to another file.
  CHECK(op_shard("add", 1) == 0);
  CHECK(op_shard("add", 8) == op_shard("add", 8));
  CHECK(op_shard("", 7) == 2166136261u % 7);
  std::string why;
  CHECK(is_valid_namespace("a::b_c", &why));
  CHECK_FALSE(is_valid_namespace("a::", &why));
  CHECK_FALSE(is_valid_namespace("class", &why));
  CHECK_FALSE(is_valid_namespace("a-b", &why));
}

TEST_CASE("the built-in templates render a library whose calls match its declarations", "[ops][render]") {
  Fixture f;
  const opdef::OpLibrary lib = f.load(R"(
- op : add
  args : (Tensor x, Tensor y)
  output : Tensor(out)
  infer_meta :
    func : ElementwiseInferMeta
  kernel :
    func : add
  inplace : (x -> out)
- op : split_with_num
  args : (Tensor x, int num, Scalar(int) axis)
  output : Tensor[]{num}
  infer_meta :
    func : SplitWithNumInferMeta
  kernel :
    func : split_with_num
)");
  REQUIRE(f.out.str().empty());
  tmpl::Environment env(f.sources, f.diags);
  env.add_search_dir(KFORGE_SOURCE_ROOT "/templates");
  tmpl::register_codegen_filters(env);
  OpsCodegenOptions options;
  options.output_dir = "out";
  options.name_space = "my::ops";
  options.shards = 3;
  options.tool_version = "0.0.0";
  OutputSet outputs;
  REQUIRE(generate_op_library_files(lib, nullptr, env, options, outputs));
  INFO(f.out.str());
  const std::vector<std::string> names = op_library_file_names(options);
  REQUIRE(outputs.size() == names.size());
  for (size_t i = 0; i < names.size(); ++i) CHECK(outputs.files()[i].path == names[i]);
  const std::string& api_h = outputs.find("out/ops_api.h")->bytes;
  CHECK(api_h.find("namespace my::ops {") != std::string::npos);
  CHECK(api_h.find("kforge::Status add(const kforge::Tensor& x, const kforge::Tensor& y, kforge::Tensor* out);") !=
        std::string::npos);
  CHECK(api_h.find("kforge::Status add_(kforge::Tensor& x, const kforge::Tensor& y);") != std::string::npos);
  const std::string& decls = outputs.find("out/ops_decls.h")->bytes;
  CHECK(decls.find("kforge::Status split_with_num(const kforge::KernelContext& ctx, const kforge::Tensor& x, int num, "
                   "const kforge::Scalar& axis, kforge::MutableTensorList out);") != std::string::npos);
  // Each op is defined in exactly the shard its name hashes to.
  for (const char* op : {"add", "split_with_num"}) {
    const std::string shard = "out/ops_api_" + std::to_string(op_shard(op, 3)) + ".cc";
    CHECK(outputs.find(shard)->bytes.find(std::string("kforge::Status ") + op + "(") != std::string::npos);
  }
  CHECK(outputs.find("out/kforge_runtime.h")->bytes.find("#define KFORGE_RUNTIME_VERSION") != std::string::npos);
}

}  // namespace
}  // namespace kforge::codegen
