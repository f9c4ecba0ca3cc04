// The PIR text reader: both printer eras, every type and attribute form of Paddle's printer (program/pir_text_reader.h),
// control flow, the kernel dialect, and every error path with its exact diagnostic.
#include <cmath>

#include "program/pir_text_reader.h"
#include "test_util.h"

using namespace kforge;
using namespace kforge::ir;
using kforge::ir::test::read_buffer;
using kforge::ir::test::read_errors;
using kforge::ir::test::guessed;

namespace {

struct Buffer {
  SourceManager sources;
  std::ostringstream out;
  DiagnosticEngine diags{sources, out};
  uint32_t file;
  explicit Buffer(const std::string& text) : file(sources.add_buffer("t.txt", text)) {}
};

Type text_type(const std::string& text) {
  Buffer b(text);
  std::optional<Type> t = read_pir_type(b.sources, b.file, b.diags);
  INFO(b.out.str());
  REQUIRE(t);
  return *t;
}

Attribute text_attr(const std::string& text) {
  Buffer b(text);
  std::optional<Attribute> a = read_pir_attribute(b.sources, b.file, b.diags);
  INFO(b.out.str());
  REQUIRE(a);
  return *a;
}

std::string attr_error(const std::string& text) {
  Buffer b(text);
  CHECK_FALSE(read_pir_attribute(b.sources, b.file, b.diags).has_value());
  return b.out.str();
}

std::string type_error(const std::string& text) {
  Buffer b(text);
  CHECK_FALSE(read_pir_type(b.sources, b.file, b.diags).has_value());
  return b.out.str();
}

Program text_program(const std::string& text) {
  test::ReadResult r = read_buffer("p.txt", text);
  INFO(r.diagnostics);
  REQUIRE(r.program);
  CHECK(r.diagnostics.empty());
  CHECK(r.program->check_structure().empty());
  return std::move(*r.program);
}

}  // namespace

TEST_CASE("text: types in both eras and the kernel dialect") {
  CHECK(text_type("f32") == Type::element(DataType::kFloat32));
  for (const char* e : {"f16", "bf16", "f64", "b", "i8", "u8", "i16", "i32", "i64", "index", "c64", "c128",
                        "f8e4m3fn", "f8e5m2", "undefined"}) {
    INFO(e);
    CHECK(to_string(text_type(e)) == e);
  }
  CHECK(text_type("tensor<-1x3x224x224xf32>") == Type::tensor(DataType::kFloat32, {-1, 3, 224, 224}));
  CHECK(text_type("builtin.tensor<256xf32>") == Type::tensor(DataType::kFloat32, {256}));
  CHECK(text_type("pd_op.tensor<1xb>") == Type::tensor(DataType::kBool, {1}));
  CHECK(text_type("tensor<f32>") == Type::tensor(DataType::kFloat32, {}));
  CHECK(text_type(" tensor<-1x-1xf32> ") == Type::tensor(DataType::kFloat32, {-1, -1}));
  const Type gpu = text_type("gpu_tensor<-1x-1xf32>");
  REQUIRE(gpu.place);
  CHECK(gpu.place->type == AllocationType::kGpu);
  CHECK(to_string(gpu) == "gpu_tensor<-1x-1xf32>");
  CHECK(text_type("undefined_tensor<2xf32>").place->type == AllocationType::kUndefined);
  CHECK(to_string(text_type("vec[vec[i8,bf16],vec[],vec[u8]]")) == "vec[vec[i8,bf16],vec[],vec[u8]]");
  CHECK(text_type("vec[]") == Type::vector({}));
  CHECK(text_type("<<NULL TYPE>>") == Type::none());
  const Type array = text_type("pd_op.tensor_array<f32>");
  CHECK(array.kind == TypeKind::kOther);
  CHECK(array.name == "pd_op.tensor_array");
  CHECK(array.dtype == DataType::kFloat32);
  const Type rows = text_type("pd_op.selectedrows<10x4xf32>");
  CHECK(rows.dims == std::vector<int64_t>{10, 4});
  const Type dist = text_type("pd_dist.tensor<4x4xf32, mesh_shape:[2],process_ids:[0,1],dims_mappings:[-1,-1]>");
  CHECK(dist.name == "pd_dist.tensor");
  CHECK(dist.params == "4x4xf32, mesh_shape:[2],process_ids:[0,1],dims_mappings:[-1,-1]");
  CHECK(dist.dims == std::vector<int64_t>{4, 4});
  CHECK(to_string(text_type("gpu_tensor_array<f32>")) == "gpu_tensor_array<f32>");
  CHECK(to_string(text_type("cf.stack")) == "cf.stack");
}

TEST_CASE("text: typed (2024) attributes are exact") {
  CHECK(text_attr("(Float)1e-05") == Attribute::float32(1e-05f));
  CHECK(text_attr("(Double)1") == Attribute::float64(1));
  CHECK(text_attr("(Int32)-3") == Attribute::int32(-3));
  CHECK(text_attr("(Int64)0") == Attribute::int64(0));
  CHECK(text_attr("(Index)5") == Attribute::index(5));
  CHECK(text_attr("(Pointer)0x55d0c0") == Attribute::pointer("0x55d0c0"));
  CHECK(text_attr("(Complex64)real:1 imag:-2") == Attribute::complex(AttrKind::kComplex64, 1, -2));
  CHECK(text_attr("(Complex128)real:0.5 imag:2") == Attribute::complex(AttrKind::kComplex128, 0.5, 2));
  CHECK(text_attr("(pd_op.IntArray)[-1,30]") == Attribute::int_array({-1, 30}));
  CHECK(text_attr("(pd_op.IntArray)[]") == Attribute::int_array({}));
  CHECK(text_attr("(pd_op.DataType)bfloat16") == Attribute::data_type(DataType::kBFloat16));
  CHECK(text_attr("(pd_op.DataType)Undefined") == Attribute::data_type(DataType::kUndefined));
  CHECK(text_attr("(pd_op.Place)Place(gpu:0)") == Attribute::place_attr(Place{AllocationType::kGpu, 0, ""}));
  CHECK(text_attr("(pd_op.DataLayout)Undefined(AnyLayout)") == Attribute::data_layout(DataLayout::kUndefined));
  CHECK(text_attr("(pd_op.DataLayout)NCDHW") == Attribute::data_layout(DataLayout::kNCDHW));
  CHECK(text_attr("[(Int32)1,(Int32)1]") == Attribute::array({Attribute::int32(1), Attribute::int32(1)}));
  CHECK(text_attr("[]") == Attribute::array({}));
  CHECK(text_attr("[true]") == Attribute::array({Attribute::boolean(true)}));
  CHECK(text_attr("(pd_op.Scalar)float32:1.5") == Attribute::scalar_float(DataType::kFloat32, 1.5));
  CHECK(text_attr("(pd_op.Scalar)int64:-2") == Attribute::scalar_int(DataType::kInt64, -2));
  CHECK(text_attr("(pd_op.Scalar)bool:false") == Attribute::scalar_bool(false));
  CHECK(text_attr("(pd_op.Scalar)complex128:real:1 imag:2") == Attribute::scalar_complex(DataType::kComplex128, 1, 2));
}

TEST_CASE("text: untyped (2025) numbers and lists are guessed; the rest is exact") {
  CHECK(text_attr("3") == guessed(Attribute::int64(3)));
  CHECK(text_attr("-1") == guessed(Attribute::int64(-1)));
  CHECK(text_attr("0.9") == guessed(Attribute::float64(0.9)));
  CHECK(text_attr("1e-05") == guessed(Attribute::float64(1e-05)));
  CHECK(std::isinf(text_attr("-inf").float_value));
  CHECK(text_attr("-inf").float_value < 0);
  CHECK(std::isnan(text_attr("nan").float_value));
  CHECK(text_attr("[2,2]") == guessed(Attribute::array({guessed(Attribute::int64(2)), guessed(Attribute::int64(2))})));
  CHECK(text_attr("[false,true]") == Attribute::array({Attribute::boolean(false), Attribute::boolean(true)}));
  CHECK(text_attr("float32") == Attribute::data_type(DataType::kFloat32));
  CHECK(text_attr("Place(cpu)") == Attribute::place_attr(Place{AllocationType::kCpu, 0, ""}));
  CHECK(text_attr("Place(npu:1)") == Attribute::place_attr(Place{AllocationType::kCustom, 1, "npu"}));
  CHECK(text_attr("NHWC") == Attribute::data_layout(DataLayout::kNHWC));
  CHECK(text_attr("Undefined(AnyLayout)") == Attribute::data_layout(DataLayout::kUndefined));
  CHECK(text_attr("real:1 imag:0") == guessed(Attribute::complex(AttrKind::kComplex128, 1, 0)));
  CHECK(text_attr("0x7f00") == Attribute::pointer("0x7f00"));
  CHECK(text_attr("tensor<2xf32>") == Attribute::type_attr(Type::tensor(DataType::kFloat32, {2})));
  CHECK(text_attr("f32") == Attribute::type_attr(Type::element(DataType::kFloat32)));
  CHECK(text_attr("<<NULL TYPE>>") == Attribute::type_attr(Type::none()));
  CHECK(text_attr("<#AttrNull>") == Attribute::null());
  CHECK(text_attr("<#AttrNotImplemented>") == Attribute::opaque("<#AttrNotImplemented>"));
  CHECK(text_attr("<backend:GPU|layout:NCHW|dtype:float32>") == Attribute::opaque("<backend:GPU|layout:NCHW|dtype:float32>"));
  CHECK(text_attr("{mesh:{shape:[2],process_ids:[0,1]},operand(0):{}}") ==
        Attribute::opaque("{mesh:{shape:[2],process_ids:[0,1]},operand(0):{}}"));
}

TEST_CASE("text: strings unescape only \\\" as Paddle's printer escapes only '\"'") {
  const Attribute a = text_attr(R"(["\"","\\"","\\\"","\t\n\r",""])");
  REQUIRE(a.elements.size() == 5);
  CHECK(a.elements[0].text == "\"");
  CHECK(a.elements[1].text == "\\\"");
  CHECK(a.elements[2].text == "\\\\\"");
  CHECK(a.elements[3].text == "\\t\\n\\r");
  CHECK(a.elements[4].text.empty());
  // And the dump writes them back the same way.
  CHECK(to_string(a) == R"(["\"","\\"","\\\"","\t\n\r",""])");
}

TEST_CASE("text: a typed program, with value gaps, null operands and [id:N]") {
  Program p = text_program(R"({
    (%2) = "builtin.parameter" () {parameter_name:"w"} : () -> builtin.tensor<8x4xbf16>
    (%38) = "pd_op.data" () {dtype:(pd_op.DataType)bfloat16,name:"x",place:(pd_op.Place)Place(gpu:0),shape:(pd_op.IntArray)[2,8],stop_gradient:[false]} : () -> builtin.tensor<2x8xbf16>
    (%50) = "pd_op.matmul" [id:12] (%38, %2) {transpose_x:false,transpose_y:false} : (builtin.tensor<2x8xbf16>, builtin.tensor<8x4xbf16>) -> builtin.tensor<2x4xbf16>
    (%51) = "pd_op.nearest_interp" (%50, <<NULL VALUE>>) {} : (builtin.tensor<2x4xbf16>, <<NULL TYPE>>) -> builtin.tensor<2x4xbf16>
    () = "builtin.shadow_output" (%51) {output_name:"out"} : (builtin.tensor<2x4xbf16>) ->
})");
  const std::vector<OpId> ops = p.top_level_ops();
  REQUIRE(ops.size() == 5);
  const Op& mm = p.op(ops[2]);
  CHECK(mm.full_name() == "pd_op.matmul");
  CHECK(mm.operands[0] == p.op(ops[1]).results[0]);
  CHECK(p.value(mm.results[0]).source_id == "%50");
  CHECK(p.value(p.op(ops[0]).results[0]).name == "w");
  CHECK(p.value(p.op(ops[1]).results[0]).name == "x");
  CHECK(p.op(ops[1]).attr("shape")->kind == AttrKind::kIntArray);
  CHECK_FALSE(p.op(ops[3]).operands[1].valid());
  CHECK(p.op(ops[4]).results.empty());
  CHECK(p.fetches().size() == 1);
  CHECK(p.format == SourceFormat::kPirText);
  CHECK(p.name == "p");
}

TEST_CASE("text: if/else, the 2024 unquoted if, and generic regions") {
  Program p = text_program(R"({
    (%0) = "pd_op.data" () {name:"c"} : () -> tensor<1xb>
    (%1) = "pd_op.if" (%0) {stop_gradient:[true]} -> tensor<1xb> {
        () = "cf.yield" (%0) {} : (tensor<1xb>) ->
    } else {
        (%2) = "pd_op.logical_not" (%0) {} : (tensor<1xb>) -> tensor<1xb>
        () = "cf.yield" (%2) {} : (tensor<1xb>) ->
    }
    (%3) = pd_op.if (%1) {stop_gradient:[true]} -> pd_op.tensor<1xb>
    {
        () = "cf.yield" (%1) {} : (tensor<1xb>) ->
    } else {
        () = "cf.yield" (%0) {} : (tensor<1xb>) ->
    }
    (%4) = pd_op.if (%3) -> tensor<1xb>{
        () = "cf.yield" (%3) {} : (tensor<1xb>) ->
    } else {
        () = "cf.yield" (%3) {} : (tensor<1xb>) ->
    }
    () = "test.two_regions" (%4) {} : (tensor<1xb>) ->
    {
    }
    {
        () = "test.inner" () {} : () ->
    }
})");
  const std::vector<OpId> ops = p.top_level_ops();
  REQUIRE(ops.size() == 5);
  for (size_t i : {1u, 2u, 3u}) {
    const Op& if_op = p.op(ops[i]);
    CHECK(if_op.full_name() == "pd_op.if");
    REQUIRE(if_op.regions.size() == 2);
    CHECK(p.type_of(if_op.results[0]) == Type::tensor(DataType::kBool, {1}));
  }
  const Block& else_block = p.block(p.op(ops[1]).regions[1].blocks[0]);
  REQUIRE(else_block.ops.size() == 2);
  CHECK(p.op(else_block.ops[1]).operands[0] == p.op(else_block.ops[0]).results[0]);
  CHECK(p.op(ops[4]).regions.size() == 2);
  CHECK(p.block(p.op(ops[4]).regions[1].blocks[0]).ops.size() == 1);
}

TEST_CASE("text: the current while form infers argument and result types") {
  Program p = text_program(R"({
    (%0) = "pd_op.data" () {name:"c"} : () -> tensor<b>
    (%1) = "pd_op.data" () {name:"x"} : () -> tensor<4xf32>
    (%2) = "pd_op.while" (cond=%0, inputs=%1) { 
    ^%arg_0 {stop_gradient:true}
        (%3) = "pd_op.relu" (%arg_0) {} : (tensor<4xf32>) -> tensor<4xf32>
        () = "cf.yield" (%0, %3) {} : (tensor<b>, tensor<4xf32>) ->
    }
    (%4) = "pd_op.relu" (%2) {} : (tensor<4xf32>) -> tensor<4xf32>
})");
  const Op& w = p.op(p.top_level_ops()[2]);
  REQUIRE(w.operands.size() == 2);
  CHECK(p.type_of(w.results[0]) == Type::tensor(DataType::kFloat32, {4}));
  const Block& body = p.block(w.regions.at(0).blocks.at(0));
  REQUIRE(body.args.size() == 1);
  CHECK(p.type_of(body.args[0]) == Type::tensor(DataType::kFloat32, {4}));
  CHECK(p.value(body.args[0]).attributes.at(0).name == "stop_gradient");
  CHECK(p.op(body.ops[0]).operands[0] == body.args[0]);
}

TEST_CASE("text: a while with no inputs") {
  Program p = text_program(R"({
    (%0) = "pd_op.data" () {name:"c"} : () -> tensor<b>
    () = "pd_op.while" (cond=%0, inputs=) { 
    ^
        () = "cf.yield" (%0) {} : (tensor<b>) ->
    }
})");
  const Op& w = p.op(p.top_level_ops()[1]);
  CHECK(w.operands.size() == 1);
  CHECK(w.results.empty());
  CHECK(p.block(w.regions.at(0).blocks.at(0)).ops.size() == 1);
  // An empty body still reads as a body, not as an attribute map.
  CHECK(text_program(p.dump()).dump() == p.dump());
  CHECK(p.dump() ==
        "{\n"
        "    (%0) = \"pd_op.data\" () {name:\"c\"} : () -> tensor<b>\n"
        "    () = \"pd_op.while\" (cond=%0, inputs=) {\n"
        "        ^\n"
        "        () = \"cf.yield\" (%0) {} : (tensor<b>) -> \n"
        "    }\n"
        "}\n");
}

TEST_CASE("text: block arguments first printed where used, and ^kw keyword arguments") {
  Program p = text_program(R"({
    () = "test.region" () {} : () ->
    {
        ^kw:
            %kwarg_lr {}
        (%0) = "pd_op.scale" (%arg_0 {stop_gradient:false}, %kwarg_lr) {} : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
        (%1) = "pd_op.relu" (%arg_0) {} : (tensor<2xf32>) -> tensor<2xf32>
    }
})");
  const Op& region_op = p.op(p.top_level_ops()[0]);
  const Block& b = p.block(region_op.regions.at(0).blocks.at(0));
  REQUIRE(b.args.size() == 2);
  CHECK(p.value(b.args[0]).keyword.empty());
  CHECK(p.value(b.args[1]).keyword == "lr");
  // Types the text never printed for the arguments come from the operand types where they are used.
  CHECK(p.type_of(b.args[0]) == Type::tensor(DataType::kFloat32, {2}));
  CHECK(p.type_of(b.args[1]) == Type::tensor(DataType::kFloat32, {}));
  CHECK(p.op(b.ops[1]).operands[0] == b.args[0]);
}

TEST_CASE("text: printed operand types never override known value types") {
  // Paddle's own auto_layout test program prints conv2d operand types that disagree with their values.
  Program p = text_program(R"({
    (%0) = "pd_op.data" () {} : () -> tensor<2x8xf32>
    (%1) = "pd_op.relu" (%0) {} : (tensor<2x3xf32>) -> tensor<2x8xf32>
})");
  CHECK(p.type_of(p.op(p.top_level_ops()[0]).results[0]) == Type::tensor(DataType::kFloat32, {2, 8}));
}

TEST_CASE("text: the kernel dialect") {
  test::ReadResult r = read_buffer("k.txt", R"PIR({ // Kernel Dialect
    (%0) = "data(phi_kernel)" () {dtype:(pd_op.DataType)float32,kernel_key:<backend:Undefined|layout:Undefined(AnyLayout)|dtype:float32>,kernel_name:"data",name:"x",op_name:"pd_op.data",place:(pd_op.Place)Place(undefined:0),shape:(pd_op.IntArray)[-1,-1],stop_gradient:[true]} : () -> undefined_tensor<-1x-1xf32>
    (%1) = "shadow_feed(phi_kernel)" (%0) {kernel_key:<backend:GPU|layout:Undefined(AnyLayout)|dtype:float32>,kernel_name:"shadow_feed",op_name:"pd_op.shadow_feed"} : (undefined_tensor<-1x-1xf32>) -> gpu_tensor<-1x-1xf32>
    (%2) = "relu_(legacy_kernel)" (%1) {op_name:"pd_op.relu_"} : (gpu_tensor<-1x-1xf32>) -> gpu_tensor<-1x-1xf32>
})PIR");
  INFO(r.diagnostics);
  REQUIRE(r.program);
  const std::vector<OpId> ops = r.program->top_level_ops();
  const Op& feed = r.program->op(ops[1]);
  CHECK(feed.full_name() == "pd_kernel.phi_kernel");
  CHECK(feed.string_attr("kernel_name") == "shadow_feed");
  CHECK(feed.string_attr("op_name") == "pd_op.shadow_feed");
  CHECK(feed.attr("kernel_key")->text == "<backend:GPU|layout:Undefined(AnyLayout)|dtype:float32>");
  CHECK(r.program->type_of(feed.results[0]).place->type == AllocationType::kGpu);
  const Op& relu = r.program->op(ops[2]);
  CHECK(relu.full_name() == "pd_kernel.legacy_kernel");
  CHECK(relu.string_attr("kernel_name") == "relu_");  // taken from the printed name when the map lacks it
}

TEST_CASE("text: a file with several programs") {
  const std::string text = "{\n    () = \"test.a\" () {} : () ->\n}\n// after lowering\n{\n    () = \"test.b\" () {} : () ->\n}\n";
  SourceManager sources;
  std::ostringstream out;
  DiagnosticEngine diags(sources, out);
  const uint32_t f = sources.add_buffer("two.txt", text);
  std::vector<Program> all = read_pir_text_programs(sources, f, diags);
  REQUIRE(all.size() == 2);
  CHECK(all[0].name == "two");
  CHECK(all[1].name == "two.2");
  CHECK(all[1].op(all[1].top_level_ops()[0]).name == "b");
  CHECK(out.str().empty());
  test::ReadResult r = read_buffer("two.txt", text);
  REQUIRE(r.program);
  CHECK(r.diagnostics == "two.txt:5:1: warning: the file holds 2 programs; only the first is used\n"
                         " {\n"
                         " ^\n"
                         "two.txt:1:1: note: the first program starts here\n"
                         " {\n"
                         " ^\n"
                         "1 warning generated.\n");
}

// ---------------------------------------------------------------------------------------------- errors

TEST_CASE("text errors: values") {
  CHECK(read_errors("p.txt", "{\n    (%1) = \"pd_op.relu\" (%7) {} : (tensor<f32>) -> tensor<f32>\n}\n") ==
        "p.txt:2:26: error: use of undefined value '%7'\n"
        "     (%1) = \"pd_op.relu\" (%7) {} : (tensor<f32>) -> tensor<f32>\n"
        "                          ^\n"
        "1 error generated.\n");
  CHECK(read_errors("p.txt", "{\n    (%0) = \"pd_op.a\" () {} : () -> f32\n    (%0) = \"pd_op.b\" () {} : () -> f32\n}\n") ==
        "p.txt:3:6: error: value '%0' is defined twice\n"
        "     (%0) = \"pd_op.b\" () {} : () -> f32\n"
        "      ^\n"
        "p.txt:2:6: note: first defined here\n"
        "     (%0) = \"pd_op.a\" () {} : () -> f32\n"
        "      ^\n"
        "1 error generated.\n");
  CHECK(read_errors("p.txt", "{\n    (%0) = \"pd_op.relu\" (%arg_0 {}) {} : (f32) -> f32\n}\n") ==
        "p.txt:2:26: error: block argument '%arg_0' is used outside any region\n"
        "     (%0) = \"pd_op.relu\" (%arg_0 {}) {} : (f32) -> f32\n"
        "                          ^\n"
        "1 error generated.\n");
}

TEST_CASE("text errors: a value used outside the region that defines it") {
  CHECK(read_errors("p.txt", R"({
    (%0) = "pd_op.data" () {} : () -> tensor<b>
    (%1) = "pd_op.if" (%0) {} -> tensor<b> {
        (%2) = "pd_op.logical_not" (%0) {} : (tensor<b>) -> tensor<b>
        () = "cf.yield" (%2) {} : (tensor<b>) ->
    } else {
        () = "cf.yield" (%2) {} : (tensor<b>) ->
    }
})") == "p.txt:7:26: error: use of value '%2' outside the region that defines it\n"
        "         () = \"cf.yield\" (%2) {} : (tensor<b>) ->\n"
        "                          ^\n"
        "p.txt:4:10: note: defined here\n"
        "         (%2) = \"pd_op.logical_not\" (%0) {} : (tensor<b>) -> tensor<b>\n"
        "          ^\n"
        "1 error generated.\n");
}

TEST_CASE("text errors: op syntax") {
  CHECK(read_errors("p.txt", "{\n    (%0) \"pd_op.relu\" () {} : () -> f32\n}\n") ==
        "p.txt:2:10: error: expected '=' after the results of an op, got '\"pd_op.relu\"'\n"
        "     (%0) \"pd_op.relu\" () {} : () -> f32\n"
        "          ^\n"
        "1 error generated.\n");
  CHECK(read_errors("p.txt", "{\n    (%0) = \"relu\" () {} : () -> f32\n}\n") ==
        "p.txt:2:12: error: op name 'relu' is not '<dialect>.<op>' (e.g. \"pd_op.add\")\n"
        "     (%0) = \"relu\" () {} : () -> f32\n"
        "            ^\n"
        "1 error generated.\n");
  CHECK(read_errors("p.txt", "{\n    (%0) = \"pd_op.relu\" () {} : () -> f32, f32\n}\n") ==
        "p.txt:2:5: error: op 'pd_op.relu' has 1 result but 2 result types\n"
        "     (%0) = \"pd_op.relu\" () {} : () -> f32, f32\n"
        "     ^\n"
        "1 error generated.\n");
  CHECK(read_errors("p.txt", "{\n    (%0) = \"pd_op.a\" () {} : () -> f32\n    (%1) = \"pd_op.b\" (%0) {} : () -> f32\n}\n") ==
        "p.txt:3:5: error: op 'pd_op.b' has 1 operand but 0 operand types\n"
        "     (%1) = \"pd_op.b\" (%0) {} : () -> f32\n"
        "     ^\n"
        "1 error generated.\n");
  CHECK(read_errors("p.txt", "{\n    (%0) = \"pd_op.a\" () {x:1,x:2} : () -> f32\n}\n") ==
        "p.txt:2:30: error: attribute 'x' is given twice\n"
        "     (%0) = \"pd_op.a\" () {x:1,x:2} : () -> f32\n"
        "                              ^\n"
        "p.txt:2:26: note: first given here\n"
        "     (%0) = \"pd_op.a\" () {x:1,x:2} : () -> f32\n"
        "                          ^\n"
        "1 error generated.\n");
  CHECK(read_errors("p.txt", "{\n    (%0) = \"pd_op.a\" () {name:\"x} : () -> f32\n}\n") ==
        "p.txt:2:31: error: unterminated string\n"
        "     (%0) = \"pd_op.a\" () {name:\"x} : () -> f32\n"
        "                               ^\n"
        "1 error generated.\n");
  CHECK(read_errors("p.txt", "{\n    (%0) = \"pd_op.a\" () {} : () -> f32\n") ==
        "p.txt:3:1: error: unexpected end of file: expected '}' to close the block\n"
        " \n"
        " ^\n"
        "p.txt:1:1: note: the block starts here\n"
        " {\n"
        " ^\n"
        "1 error generated.\n");
  // The first '}' closes the program, so 'else' is where the next program should start.
  CHECK(read_errors("p.txt", "{\n    } else {\n}\n") ==
        "p.txt:2:7: error: expected '{' to start a program, got 'else'\n"
        "     } else {\n"
        "       ^\n"
        "1 error generated.\n");
  CHECK(read_errors("p.txt", "") == "p.txt:1:1: error: no program in the file: expected '{'\n"
                                    " \n"
                                    " ^\n"
                                    "1 error generated.\n");
  CHECK(read_errors("p.txt", "{\n    (%0) = \"pd_op.a\" () {} : () -> f32 ?\n}\n") ==
        "p.txt:2:40: error: unexpected character '?'\n"
        "     (%0) = \"pd_op.a\" () {} : () -> f32 ?\n"
        "                                        ^\n"
        "1 error generated.\n");
}

TEST_CASE("text errors: types") {
  CHECK(type_error("tensor<2xf33>") == "t.txt:1:10: error: unknown element type 'f33' in a tensor type; did you mean "
                                       "'f32'?\n"
                                       " tensor<2xf33>\n"
                                       "          ^\n");
  CHECK(type_error("tensor<2x3f32>") == "t.txt:1:11: error: expected 'x' after a dimension in a tensor type\n"
                                        " tensor<2x3f32>\n"
                                        "           ^\n");
  CHECK(type_error("tensor<2xf32") == "t.txt:1:13: error: expected '>' to close 'tensor<'\n"
                                      " tensor<2xf32\n"
                                      "             ^\n");
  CHECK(type_error("tensor<-2xf32>") == "t.txt:1:8: error: invalid dimension -2 in a tensor type (dims are >= 0, or "
                                        "-1)\n"
                                        " tensor<-2xf32>\n"
                                        "        ^\n");
  CHECK(type_error("f33") == "t.txt:1:1: error: unknown type 'f33'; did you mean 'f32'?\n"
                             " f33\n"
                             " ^\n");
  CHECK(type_error("vec[f32 f64]") == "t.txt:1:9: error: expected ',' or ']' in a vector type, got 'f64'\n"
                                      " vec[f32 f64]\n"
                                      "         ^\n");
  CHECK(type_error("f32 f64") == "t.txt:1:5: error: unexpected 'f64' after the type\n"
                                 " f32 f64\n"
                                 "     ^\n");
}

TEST_CASE("text errors: attributes") {
  auto first_line = [](const std::string& s) { return s.substr(0, s.find('\n')); };
  CHECK(first_line(attr_error("(Flot)1")) ==
        "t.txt:1:2: error: unknown attribute type tag '(Flot)'; did you mean '(Float)'?");
  CHECK(first_line(attr_error("(Int32)3000000000")) == "t.txt:1:8: error: value 3000000000 does not fit in an Int32 attribute");
  CHECK(first_line(attr_error("(Int32)1.5")) == "t.txt:1:8: error: expected an integer, got '1.5'");
  CHECK(first_line(attr_error("(Float)x")) == "t.txt:1:8: error: expected a number after (Float), got 'x'");
  CHECK(first_line(attr_error("(pd_op.DataType)float33")) ==
        "t.txt:1:17: error: unknown data type 'float33'; did you mean 'float32'?");
  CHECK(first_line(attr_error("(pd_op.Place)Place(gpu:x)")) == "t.txt:1:14: error: invalid place 'Place(gpu:x)'");
  CHECK(first_line(attr_error("(pd_op.DataLayout)NCWH")) == "t.txt:1:19: error: unknown data layout 'NCWH'");
  CHECK(first_line(attr_error("bogus")) == "t.txt:1:1: error: unknown attribute value 'bogus'");
  CHECK(first_line(attr_error("[1,2")) == "t.txt:1:5: error: expected ',' or ']' in an array, got end of file");
  CHECK(first_line(attr_error("<backend:GPU")) == "t.txt:1:1: error: '<' is never closed by '>'");
  CHECK(first_line(attr_error("99999999999999999999")) == "t.txt:1:1: error: integer '99999999999999999999' is out of range");
}
