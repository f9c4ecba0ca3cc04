// The PIR JSON reader: every key, type and attribute encoding of Paddle's PIR JSON (program/pir_json_reader.h), source
// locations, and every error path with its exact diagnostic.
#include <fmt/format.h>

#include <cmath>

#include "test_util.h"

using namespace kforge;
using namespace kforge::ir;
using kforge::ir::test::read_buffer;
using kforge::ir::test::read_errors;

namespace {

// A version-`version` program whose top-level ops are `ops`; the ops start on line 4.
std::string json_program(const std::string& ops, const std::string& version = "1") {
  return "{\n"
         "  \"base_code\": {\"magic\": \"pir\", \"version\": " + version + ", \"trainable\": true},\n"
         "  \"program\": {\"regions\": [{\"#\": \"region_0\", \"blocks\": [{\"#\": \"block_0\", \"args\": [], \"ops\": [\n" +
         ops + "\n  ]}]}]}\n}\n";
}

Program read_json_ok(const std::string& text) {
  test::ReadResult r = read_buffer("p.json", text);
  INFO(r.diagnostics);
  REQUIRE(r.program);
  CHECK(r.diagnostics.empty());
  return std::move(*r.program);
}

// The attribute `at` (an "AT" object) read from an op.
Attribute attr(const std::string& at) {
  Program p = read_json_ok(json_program(R"(    {"#": "1.foo", "I": [], "O": [], "A": [{"N": "a", "AT": )" + at + "}]}"));
  const Op& op = p.op(p.top_level_ops().at(0));
  REQUIRE(op.attributes.size() == 1);
  return op.attributes[0].value;
}

// The type `tt` (a "TT" object) read as an op result type.
Type type(const std::string& tt) {
  Program p = read_json_ok(json_program(R"(    {"#": "1.foo", "I": [], "O": [{"%": 1, "TT": )" + tt + "}], \"A\": []}"));
  return p.type_of(p.op(p.top_level_ops().at(0)).results.at(0));
}

std::string errors(const std::string& ops, const std::string& version = "1") {
  return read_errors("p.json", json_program(ops, version));
}

}  // namespace

TEST_CASE("json: builtin attribute kinds, both int and float widths") {
  CHECK(attr(R"({"#": "0.a_bool", "D": true})") == Attribute::boolean(true));
  CHECK(attr(R"({"#": "0.a_i32", "D": -7})") == Attribute::int32(-7));
  CHECK(attr(R"({"#": "0.a_i64", "D": 8589934592})") == Attribute::int64(8589934592));
  CHECK(attr(R"({"#": "0.a_index", "D": 3})") == Attribute::index(3));
  CHECK(attr(R"({"#": "0.a_f32", "D": 0.1})") == Attribute::float32(0.1f));
  CHECK(attr(R"({"#": "0.a_f32", "D": 2})") == Attribute::float32(2));  // an integer is a valid float
  CHECK(attr(R"({"#": "0.a_f64", "D": 0.1})") == Attribute::float64(0.1));
  CHECK(attr(R"({"#": "0.a_str", "D": "NCHW"})") == Attribute::string("NCHW"));
  CHECK(attr(R"({"#": "0.a_tensorname", "D": "x@GRAD"})") == Attribute::tensor_name("x@GRAD"));
  CHECK(attr(R"({"#": "0.a_type", "D": {"#": "0.t_f16"}})") == Attribute::type_attr(Type::element(DataType::kFloat16)));
  CHECK(attr(R"({"#": "0.a_pointer", "D": 1234})") == Attribute::pointer("1234"));
  CHECK(attr(R"({"#": "0.a_c64", "D": [1.5, -2]})") == Attribute::complex(AttrKind::kComplex64, 1.5, -2));
  CHECK(attr(R"({"#": "0.a_c128", "D": [0.1, 0.2]})") == Attribute::complex(AttrKind::kComplex128, 0.1, 0.2));
  CHECK(attr(R"({"#": "0.a_array", "D": [{"#": "0.a_i32", "D": 2}, {"#": "0.a_i64", "D": 3}]})") ==
        Attribute::array({Attribute::int32(2), Attribute::int64(3)}));
  CHECK(attr(R"({"#": "0.a_array", "D": []})") == Attribute::array({}));
  CHECK(attr(R"({"#": "NULL"})") == Attribute::null());
}

TEST_CASE("json: VD encodes NaN and infinities for both float widths") {
  CHECK(std::isnan(attr(R"({"#": "0.a_f32", "VD": "NaN"})").float_value));
  CHECK(std::isnan(attr(R"({"#": "0.a_f64", "VD": "NAN"})").float_value));  // what Paddle's reader expects
  const Attribute inf = attr(R"({"#": "0.a_f32", "VD": "INF"})");
  CHECK(inf.kind == AttrKind::kFloat);
  CHECK(std::isinf(inf.float_value));
  CHECK(inf.float_value > 0);
  const Attribute minus_inf = attr(R"({"#": "0.a_f64", "VD": "-INF"})");
  CHECK(minus_inf.kind == AttrKind::kDouble);
  CHECK(std::isinf(minus_inf.float_value));
  CHECK(minus_inf.float_value < 0);
}

TEST_CASE("json: pd_op attribute kinds") {
  CHECK(attr(R"({"#": "1.a_intarray", "D": [-1, 30]})") == Attribute::int_array({-1, 30}));
  CHECK(attr(R"({"#": "1.a_dtype", "D": "bfloat16"})") == Attribute::data_type(DataType::kBFloat16));
  CHECK(attr(R"({"#": "1.a_dtype", "D": "Undefined"})") == Attribute::data_type(DataType::kUndefined));
  CHECK(attr(R"({"#": "1.a_layout", "D": "NHWC"})") == Attribute::data_layout(DataLayout::kNHWC));
  CHECK(attr(R"({"#": "1.a_place", "D": [0, 0, ""]})") == Attribute::place_attr(Place{AllocationType::kUndefined, 0, ""}));
  CHECK(attr(R"({"#": "1.a_place", "D": [1, 0, ""]})") == Attribute::place_attr(Place{AllocationType::kCpu, 0, ""}));
  CHECK(attr(R"({"#": "1.a_place", "D": [2, 1, ""]})") == Attribute::place_attr(Place{AllocationType::kGpu, 1, ""}));
  CHECK(attr(R"({"#": "1.a_place", "D": [9, 0, "npu"]})") ==
        Attribute::place_attr(Place{AllocationType::kCustom, 0, "npu"}));
  CHECK(attr(R"({"#": "1.a_scalar", "D": ["float32", 1.5]})") == Attribute::scalar_float(DataType::kFloat32, 1.5));
  CHECK(attr(R"({"#": "1.a_scalar", "D": ["float64", 0.1]})") == Attribute::scalar_float(DataType::kFloat64, 0.1));
  CHECK(attr(R"({"#": "1.a_scalar", "D": ["int64", -3]})") == Attribute::scalar_int(DataType::kInt64, -3));
  CHECK(attr(R"({"#": "1.a_scalar", "D": ["bool", true]})") == Attribute::scalar_bool(true));
  CHECK(attr(R"({"#": "1.a_scalar", "D": ["complex64", 1, 2]})") ==
        Attribute::scalar_complex(DataType::kComplex64, 1, 2));
  // float16 and bfloat16 scalars are written as their raw 16 bits.
  CHECK(attr(R"({"#": "1.a_scalar", "D": ["float16", 15360]})") == Attribute::scalar_float(DataType::kFloat16, 1.0));
  CHECK(attr(R"({"#": "1.a_scalar", "D": ["bfloat16", 16320]})") == Attribute::scalar_float(DataType::kBFloat16, 1.5));
}

TEST_CASE("json: dist attributes are kept as their JSON text") {
  const Attribute mesh = attr(R"({"#": "4.a_process_mesh", "D": [[2], [0, 1], ["x"]]})");
  CHECK(mesh.kind == AttrKind::kOpaque);
  CHECK(mesh.text == R"({"#":"4.a_process_mesh","D":[[2],[0,1],["x"]]})");
}

TEST_CASE("json: types") {
  CHECK(type(R"({"#": "0.t_f32"})") == Type::element(DataType::kFloat32));
  const std::pair<const char*, DataType> elements[] = {
      {"0.t_bool", DataType::kBool},     {"0.t_bf16", DataType::kBFloat16},       {"0.t_f16", DataType::kFloat16},
      {"0.t_f64", DataType::kFloat64},   {"0.t_i8", DataType::kInt8},             {"0.t_ui8", DataType::kUInt8},
      {"0.t_i16", DataType::kInt16},     {"0.t_i32", DataType::kInt32},           {"0.t_i64", DataType::kInt64},
      {"0.t_index", DataType::kIndex},   {"0.t_c64", DataType::kComplex64},       {"0.t_c128", DataType::kComplex128},
      {"0.t_f8e4m3fn", DataType::kFloat8E4M3FN}, {"0.t_f8e5m2", DataType::kFloat8E5M2}};
  for (const auto& [id, dtype] : elements) {
    INFO(id);
    CHECK(type(std::string(R"({"#": ")") + id + "\"}") == Type::element(dtype));
  }
  CHECK(type(R"({"#": "NULL"})") == Type::none());

  const Type t = type(R"({"#": "0.t_dtensor", "D": [{"#": "0.t_f32"}, [-1, 3, 224, 224], "NHWC", [[0, 2, 5]], 4]})");
  CHECK(t.kind == TypeKind::kDenseTensor);
  CHECK(t.dtype == DataType::kFloat32);
  CHECK(t.dims == std::vector<int64_t>{-1, 3, 224, 224});
  CHECK(t.layout == DataLayout::kNHWC);
  CHECK(t.lod == std::vector<std::vector<uint64_t>>{{0, 2, 5}});
  CHECK(t.offset == 4);
  // Paddle multiplies a dynamic -1 like any dim (instance_norm's saved_mean [N * C] is written [-3]): dynamic.
  CHECK(type(R"({"#": "0.t_dtensor", "D": [{"#": "0.t_f32"}, [-3, 2], "NCHW", [], 0]})").dims ==
        std::vector<int64_t>{-1, 2});

  const Type v = type(R"({"#": "0.t_vec", "D": [{"#": "0.t_dtensor", "D": [{"#": "0.t_f32"}, [2], "NCHW", [], 0]},
                                              {"#": "0.t_vec", "D": []}]})");
  CHECK(to_string(v) == "vec[tensor<2xf32>,vec[]]");

  const Type array = type(R"({"#": "1.t_dense_tensor_array", "D": [{"#": "0.t_f32"}, [-1, 4], "NCHW"]})");
  CHECK(to_string(array) == "pd_op.tensor_array<f32>");
  CHECK(array.dtype == DataType::kFloat32);
  CHECK(array.dims == std::vector<int64_t>{-1, 4});
  const Type rows = type(R"({"#": "1.t_selected_rows", "D": [{"#": "0.t_f32"}, [10, 4], "NCHW", [], 0]})");
  CHECK(to_string(rows) == "pd_op.selectedrows<10x4xf32>");
  const Type coo = type(R"({"#": "1.t_sparse_coo_tensor", "D": [{"#": "0.t_f32"}, [3, 3], [1], "NCHW",
                                                               {"#": "0.t_dtensor", "D": [{"#": "0.t_i64"}, [2, 1], "NCHW", [], 0]},
                                                               {"#": "0.t_dtensor", "D": [{"#": "0.t_f32"}, [1], "NCHW", [], 0]}]})");
  CHECK(to_string(coo) == "pd_op.sparsecootensor<3x3xf32>");
  const Type dist = type(R"({"#": "4.t_dist_dtensor", "D": [{"#": "0.t_dtensor", "D": [{"#": "0.t_f32"}, [4, 4], "NCHW", [], 0]},
                                                           {"#": "4.a_tensor_dist", "D": []}, [2, 4]]})");
  CHECK(to_string(dist) == "pd_dist.tensor<4x4xf32>");
  CHECK(to_string(type(R"({"#": "2.t_stack"})")) == "cf.stack");
  CHECK(to_string(type(R"({"#": "2.t_inlet"})")) == "cf.inlet");
  CHECK(to_string(type(R"({"#": "2.t_outlet"})")) == "cf.outlet");
}

TEST_CASE("json: op names decompress their dialect id") {
  Program p = read_json_ok(json_program(R"(    {"#": "0.combine", "I": [], "O": [], "A": []},
    {"#": "1.relu", "I": [], "O": [], "A": []},
    {"#": "2.yield", "I": [], "O": [], "A": []},
    {"#": "3.my_op", "I": [], "O": [], "A": []},
    {"#": "4.reshard", "I": [], "O": [], "A": []},
    {"#": "-1.op", "I": [], "O": [], "A": []},
    {"#": "pd_kernel.phi_kernel", "I": [], "O": [], "A": []})"));
  std::vector<std::string> names;
  for (OpId id : p.top_level_ops()) names.push_back(p.op(id).dialect + "|" + p.op(id).name);
  CHECK(names == std::vector<std::string>{"builtin|combine", "pd_op|relu", "cf|yield", "custom_op|my_op",
                                          "pd_dist|reshard", "test|op", "pd_kernel|phi_kernel"});
}

TEST_CASE("json: the parameter op, null operands, OA/DA/QA") {
  Program p = read_json_ok(json_program(
      R"(    {"#": "p", "A": [0, 1, 1, "fc_0.w_0"], "DA": [{"N": "op_role", "AT": {"#": "0.a_i32", "D": 0}}],
     "O": {"%": 1, "TT": {"#": "0.t_dtensor", "D": [{"#": "0.t_f32"}, [30, 30], "NCHW", [], 0]}},
     "OA": [1, 0, 1], "QA": [{"N": "struct_name", "AT": {"#": "0.a_str", "D": "/Linear/"}}]},
    {"#": "p", "A": [false, true, false, "b"], "O": {"%": 2, "TT": {"#": "0.t_f32"}}},
    {"#": "1.nearest_interp", "I": [{"%": 1}, {"%": 0}, {"%": 0}],
     "O": [{"%": 3, "TT": {"#": "0.t_f32"}}],
     "A": [{"N": "scale", "AT": {"#": "0.a_array", "D": [{"#": "0.a_f64", "D": 2.0}]}},
           {"N": "struct_name", "AT": {"#": "0.a_str", "D": "/Interp/"}}],
     "OA": [{"N": "stop_gradient", "AT": {"#": "0.a_array", "D": [{"#": "0.a_bool", "D": false}]}}]})"));
  const std::vector<OpId> ops = p.top_level_ops();
  const Op& param = p.op(ops[0]);
  CHECK(param.full_name() == "builtin.parameter");
  std::vector<std::string> names;
  for (const NamedAttribute& a : param.attributes) names.push_back(a.name + "=" + to_string(a.value));
  CHECK(names == std::vector<std::string>{"is_distributed=[false]", "is_parameter=[true]", "need_clip=[true]",
                                          "parameter_name=\"fc_0.w_0\"", "op_role=(Int32)0",
                                          "struct_name=\"/Linear/\"", "persistable=[true]", "stop_gradient=[false]",
                                          "trainable=[true]"});
  CHECK(p.value(param.results[0]).name == "fc_0.w_0");
  CHECK(p.value(param.results[0]).source_id == "1");
  CHECK(p.type_of(param.results[0]) == Type::tensor(DataType::kFloat32, {30, 30}));
  // A parameter op without OA (trainable=false files) has no result attributes; flags may be booleans.
  const Op& b = p.op(ops[1]);
  CHECK(b.attributes.size() == 4);
  CHECK(b.attr("need_clip")->as_bool_flag(true) == false);

  const Op& interp = p.op(ops[2]);
  REQUIRE(interp.operands.size() == 3);
  CHECK(interp.operands[0] == param.results[0]);
  CHECK_FALSE(interp.operands[1].valid());
  CHECK_FALSE(interp.operands[2].valid());
  CHECK(interp.attr("scale")->elements.at(0).kind == AttrKind::kDouble);
  CHECK(interp.attr("struct_name")->text == "/Interp/");
  CHECK(interp.attr("stop_gradient")->as_bool_flag(true) == false);
  CHECK(p.check_structure().empty());
}

TEST_CASE("json: block arguments, keyword arguments and regions") {
  Program p = read_json_ok(json_program(R"(    {"#": "1.data", "I": [], "O": [{"%": 1, "TT": {"#": "0.t_bool"}}], "A": []},
    {"#": "1.while", "I": [{"%": 1}, {"%": 1}], "O": [{"%": 2, "TT": {"#": "0.t_bool"}}], "A": [],
     "regions": [{"#": "region_1", "blocks": [{"#": "block_1",
        "args": [{"#": -1, "TT": {"#": "0.t_bool"}}],
        "kwargs": [{"#": -2, "TT": {"#": "0.t_f32"}, "key": "lr"}],
        "ops": [{"#": "1.logical_not", "I": [{"%": -1}], "O": [{"%": 3, "TT": {"#": "0.t_bool"}}], "A": []},
                {"#": "2.yield", "I": [{"%": 3}, {"%": -2}], "O": [], "A": []}]}]}]},
    {"#": "1.fetch", "I": [{"%": 2}], "O": [{"%": 4, "TT": {"#": "0.t_bool"}}], "A": []})"));
  CHECK(p.check_structure().empty());
  const Op& w = p.op(p.top_level_ops()[1]);
  REQUIRE(w.regions.size() == 1);
  const Block& body = p.block(w.regions[0].blocks.at(0));
  REQUIRE(body.args.size() == 2);
  CHECK(p.value(body.args[0]).kind == ValueKind::kBlockArgument);
  CHECK(p.value(body.args[0]).source_id == "-1");
  CHECK(p.value(body.args[1]).keyword == "lr");
  CHECK(p.type_of(body.args[1]) == Type::element(DataType::kFloat32));
  REQUIRE(body.ops.size() == 2);
  CHECK(p.op(body.ops[0]).operands[0] == body.args[0]);
  CHECK(p.op(body.ops[1]).operands[1] == body.args[1]);
  CHECK(p.ops_in_order().size() == 5);
}

TEST_CASE("json: a kwargs list that repeats args is Paddle's writer bug, skipped with a warning") {
  test::ReadResult r = read_buffer("p.json", json_program(R"(    {"#": "1.while", "I": [], "O": [], "A": [],
     "regions": [{"#": "region_1", "blocks": [{"#": "block_1",
        "args": [{"#": -1, "TT": {"#": "0.t_bool"}}, {"#": -2, "TT": {"#": "0.t_bool"}}],
        "kwargs": [{"#": -1, "TT": {"#": "0.t_bool"}}, {"#": -2, "TT": {"#": "0.t_bool"}}],
        "ops": []}]}]})"));
  REQUIRE(r.program);
  CHECK(r.diagnostics ==
        "p.json:7:20: warning: 'kwargs' repeats 'args' (a known Paddle writer bug); keyword arguments are lost\n"
        "         \"kwargs\": [{\"#\": -1, \"TT\": {\"#\": \"0.t_bool\"}}, {\"#\": -2, \"TT\": {\"#\": \"0.t_bool\"}}],\n"
        "                    ^\n"
        "1 warning generated.\n");
  const Op& w = r.program->op(r.program->top_level_ops()[0]);
  CHECK(r.program->block(w.regions[0].blocks[0]).args.size() == 2);
}

TEST_CASE("json: versions 0 to 4 read; newer versions warn") {
  for (const char* v : {"0", "1", "2", "3", "4"}) {
    INFO(v);
    Program p = read_json_ok(json_program(R"(    {"#": "1.relu", "I": [], "O": [], "A": []})", v));
    CHECK(p.pir_version == std::stoi(v));
    CHECK(p.trainable);
    CHECK(p.format == SourceFormat::kPirJson);
  }
  test::ReadResult r = read_buffer("p.json", json_program(R"(    {"#": "1.relu", "I": [], "O": [], "A": []})", "7"));
  REQUIRE(r.program);
  CHECK(r.diagnostics ==
        "p.json:2:44: warning: PIR version 7 is newer than the newest kforge knows (4); reading it as version 4\n"
        "   \"base_code\": {\"magic\": \"pir\", \"version\": 7, \"trainable\": true},\n"
        "                                            ^\n"
        "1 warning generated.\n");
}

TEST_CASE("json: ops, values and attributes know where they are in the file") {
  const std::string text = json_program(R"(    {"#": "1.data", "I": [], "O": [{"%": 1, "TT": {"#": "0.t_f32"}}],
     "A": [{"N": "name", "AT": {"#": "0.a_str", "D": "x"}}]},
      {"#": "1.relu", "I": [{"%": 1}], "O": [{"%": 2, "TT": {"#": "0.t_f32"}}], "A": []})");
  SourceManager sources;
  std::ostringstream out;
  DiagnosticEngine diags(sources, out);
  const uint32_t f = sources.add_buffer("p.json", text);
  std::optional<Program> p = read_program(sources, f, diags);
  REQUIRE(p);
  const Op& data = p->op(p->top_level_ops()[0]);
  const Op& relu = p->op(p->top_level_ops()[1]);
  auto lc = [&](SourceLoc l) { return fmt::format("{}:{}", sources.line_col(l).line, sources.line_col(l).col); };
  CHECK(lc(data.loc) == "4:5");
  CHECK(lc(data.name_loc) == "4:11");
  CHECK(lc(relu.loc) == "6:7");
  CHECK(lc(relu.operand_locs.at(0)) == "6:29");
  CHECK(lc(data.named_attr("name")->name_loc) == "5:18");
  CHECK(lc(data.attr("name")->loc) == "5:32");
  CHECK(lc(p->value(data.results[0]).loc) == "4:36");
  CHECK(p->value(data.results[0]).name == "x");
}

// ---------------------------------------------------------------------------------------------- errors

TEST_CASE("json errors: malformed files") {
  CHECK(read_errors("p.json", "  \n") == "p.json:1:1: error: empty JSON file: expected a PIR program object\n"
                                          "   \n"
                                          " ^\n"
                                          "1 error generated.\n");
  // Truncated in the middle of an op: the error is at the end, the note at the op's unclosed '{'.
  const std::string full = json_program(R"(    {"#": "1.relu", "I": [], "O": [], "A": []})");
  CHECK(read_errors("p.json", full.substr(0, full.find("\"O\""))) ==
        "p.json:4:29: error: truncated JSON: syntax error while parsing object key - unexpected end of input; "
        "expected string literal\n"
        "     {\"#\": \"1.relu\", \"I\": [], \n"
        "                             ^\n"
        "p.json:4:5: note: this '{' is never closed\n"
        "     {\"#\": \"1.relu\", \"I\": [], \n"
        "     ^\n"
        "1 error generated.\n");
  // nlohmann reports the character where the literal went wrong.
  CHECK(read_errors("p.json", "{\"base_code\": tru}") ==
        "p.json:1:18: error: invalid JSON: syntax error while parsing value - invalid literal; last read: "
        "'\"base_code\": tru}'\n"
        " {\"base_code\": tru}\n"
        "                  ^\n"
        "1 error generated.\n");
  CHECK(read_errors("p.json", "{\"base_code\": 1, \"base_code\": 2}") ==
        "p.json:1:18: error: duplicate key 'base_code' in JSON object\n"
        " {\"base_code\": 1, \"base_code\": 2}\n"
        "                  ^\n"
        "p.json:1:2: note: first given here\n"
        " {\"base_code\": 1, \"base_code\": 2}\n"
        "  ^\n"
        "1 error generated.\n");
  CHECK(read_errors("p.json", "[1]") == "p.json:1:1: error: expected a PIR program object at the top level, got an array\n"
                                        " [1]\n"
                                        " ^\n"
                                        "1 error generated.\n");
}

TEST_CASE("json errors: the program envelope") {
  CHECK(read_errors("p.json", R"({"program": {"regions": []}})") ==
        "p.json:1:1: error: missing key 'base_code' in PIR program file\n"
        " {\"program\": {\"regions\": []}}\n"
        " ^\n"
        "1 error generated.\n");
  CHECK(read_errors("p.json", R"({"base_code": {"magic": "onnx", "version": 1}, "program": {}})") ==
        "p.json:1:25: error: not a PIR program: 'magic' is \"onnx\", expected \"pir\"\n"
        " {\"base_code\": {\"magic\": \"onnx\", \"version\": 1}, \"program\": {}}\n"
        "                         ^\n"
        "1 error generated.\n");
  CHECK(read_errors("p.json", R"({"base_code": {"magic": "pir", "version": "1"}, "program": {}})") ==
        "p.json:1:43: error: expected an integer for 'version', got a string\n"
        " {\"base_code\": {\"magic\": \"pir\", \"version\": \"1\"}, \"program\": {}}\n"
        "                                           ^\n"
        "1 error generated.\n");
  CHECK(read_errors("p.json", R"({"base_code": {"magic": "pir", "version": -1}, "program": {}})") ==
        "p.json:1:43: error: invalid PIR version -1\n"
        " {\"base_code\": {\"magic\": \"pir\", \"version\": -1}, \"program\": {}}\n"
        "                                           ^\n"
        "1 error generated.\n");
  CHECK(read_errors("p.json", R"({"base_code": {"magic": "pir", "version": 1}, "program": {"regions": [{}, {}]}})") ==
        "p.json:1:70: error: a PIR program has exactly one top-level region, got 2\n"
        " {\"base_code\": {\"magic\": \"pir\", \"version\": 1}, \"program\": {\"regions\": [{}, {}]}}\n"
        "                                                                      ^\n"
        "1 error generated.\n");
}

TEST_CASE("json errors: ops") {
  CHECK(errors(R"(    {"#": "relu", "I": [], "O": [], "A": []})") ==
        "p.json:4:11: error: op name 'relu' is not '<dialect>.<op>' (e.g. '1.conv2d')\n"
        "     {\"#\": \"relu\", \"I\": [], \"O\": [], \"A\": []}\n"
        "           ^\n"
        "1 error generated.\n");
  CHECK(errors(R"(    {"#": "9.relu", "I": [], "O": [], "A": []})") ==
        "p.json:4:11: error: unknown dialect id '9' in op name '9.relu' (known: 0 builtin, 1 pd_op, 2 cf, 3 "
        "custom_op, 4 pd_dist)\n"
        "     {\"#\": \"9.relu\", \"I\": [], \"O\": [], \"A\": []}\n"
        "           ^\n"
        "1 error generated.\n");
  CHECK(errors(R"(    {"#": "1.relu", "O": [], "A": []})") ==
        "p.json:4:5: error: missing key 'I' (operands) in op '1.relu'\n"
        "     {\"#\": \"1.relu\", \"O\": [], \"A\": []}\n"
        "     ^\n"
        "1 error generated.\n");
  CHECK(errors(R"(    {"#": "1.relu", "I": {}, "O": [], "A": []})") ==
        "p.json:4:26: error: expected an array for 'I' (operands), got an object\n"
        "     {\"#\": \"1.relu\", \"I\": {}, \"O\": [], \"A\": []}\n"
        "                          ^\n"
        "1 error generated.\n");
  // Use before definition: value 2 is defined by the op after.
  CHECK(errors(R"(    {"#": "1.relu", "I": [{"%": 2}], "O": [{"%": 1, "TT": {"#": "0.t_f32"}}], "A": []},
    {"#": "1.data", "I": [], "O": [{"%": 2, "TT": {"#": "0.t_f32"}}], "A": []})") ==
        "p.json:4:27: error: operand 0 of 'pd_op.relu' refers to value 2, which is not defined before it\n"
        "     {\"#\": \"1.relu\", \"I\": [{\"%\": 2}], \"O\": [{\"%\": 1, \"TT\": {\"#\": \"0.t_f32\"}}], \"A\": []},\n"
        "                           ^\n"
        "1 error generated.\n");
  CHECK(errors(R"(    {"#": "1.data", "I": [], "O": [{"%": 1, "TT": {"#": "0.t_f32"}}], "A": []},
    {"#": "1.data", "I": [], "O": [{"%": 1, "TT": {"#": "0.t_f32"}}], "A": []})") ==
        "p.json:5:36: error: value id 1 is defined twice\n"
        "     {\"#\": \"1.data\", \"I\": [], \"O\": [{\"%\": 1, \"TT\": {\"#\": \"0.t_f32\"}}], \"A\": []}\n"
        "                                    ^\n"
        "p.json:4:36: note: first defined here\n"
        "     {\"#\": \"1.data\", \"I\": [], \"O\": [{\"%\": 1, \"TT\": {\"#\": \"0.t_f32\"}}], \"A\": []},\n"
        "                                    ^\n"
        "1 error generated.\n");
  CHECK(errors(R"(    {"#": "1.data", "I": [], "O": [{"%": -3, "TT": {"#": "0.t_f32"}}], "A": []})") ==
        "p.json:4:42: error: op result ids are positive (negative ids are block arguments), got -3\n"
        "     {\"#\": \"1.data\", \"I\": [], \"O\": [{\"%\": -3, \"TT\": {\"#\": \"0.t_f32\"}}], \"A\": []}\n"
        "                                          ^\n"
        "1 error generated.\n");
}

TEST_CASE("json errors: a value used outside the region that defines it") {
  CHECK(errors(R"(    {"#": "1.data", "I": [], "O": [{"%": 1, "TT": {"#": "0.t_bool"}}], "A": []},
    {"#": "1.if", "I": [{"%": 1}], "O": [], "A": [], "regions": [
      {"#": "region_1", "blocks": [{"#": "block_1", "args": [], "ops": [
        {"#": "1.logical_not", "I": [{"%": 1}], "O": [{"%": 2, "TT": {"#": "0.t_bool"}}], "A": []}]}]},
      {"#": "region_2", "blocks": [{"#": "block_2", "args": [], "ops": [
        {"#": "2.yield", "I": [{"%": 2}], "O": [], "A": []}]}]}]})") ==
        "p.json:9:32: error: operand 0 of 'cf.yield' refers to value 2, which is defined in another region\n"
        "         {\"#\": \"2.yield\", \"I\": [{\"%\": 2}], \"O\": [], \"A\": []}]}]}]}\n"
        "                                ^\n"
        "p.json:7:55: note: defined here\n"
        "         {\"#\": \"1.logical_not\", \"I\": [{\"%\": 1}], \"O\": [{\"%\": 2, \"TT\": {\"#\": \"0.t_bool\"}}], "
        "\"A\": []}]}]},\n"
        "                                                       ^\n"
        "1 error generated.\n");
}

TEST_CASE("json: unknown keys and repeated attributes are warnings") {
  test::ReadResult r = read_buffer("p.json", json_program(R"(    {"#": "1.relu", "I": [], "O": [], "A": [
       {"N": "x", "AT": {"#": "0.a_i32", "D": 1}}, {"N": "x", "AT": {"#": "0.a_i32", "D": 2}}], "Z": 0})"));
  REQUIRE(r.program);
  CHECK(r.diagnostics ==
        "p.json:5:97: warning: unknown key 'Z' in op '1.relu'; ignored\n"
        "        {\"N\": \"x\", \"AT\": {\"#\": \"0.a_i32\", \"D\": 1}}, {\"N\": \"x\", \"AT\": {\"#\": \"0.a_i32\", \"D\": 2}}], "
        "\"Z\": 0}\n"
        "                                                                                                 ^\n"
        "p.json:5:58: warning: attribute 'x' is given twice; the first one is used\n"
        "        {\"N\": \"x\", \"AT\": {\"#\": \"0.a_i32\", \"D\": 1}}, {\"N\": \"x\", \"AT\": {\"#\": \"0.a_i32\", \"D\": 2}}], "
        "\"Z\": 0}\n"
        "                                                          ^\n"
        "p.json:5:14: note: first given here\n"
        "        {\"N\": \"x\", \"AT\": {\"#\": \"0.a_i32\", \"D\": 1}}, {\"N\": \"x\", \"AT\": {\"#\": \"0.a_i32\", \"D\": 2}}], "
        "\"Z\": 0}\n"
        "              ^\n"
        "2 warnings generated.\n");
  CHECK(r.program->op(r.program->top_level_ops()[0]).attr("x")->int_value == 1);
}

TEST_CASE("json errors: types") {
  auto type_error = [](const std::string& tt) {
    return errors(R"(    {"#": "1.foo", "I": [], "O": [{"%": 1, "TT": )" + tt + "}], \"A\": []}");
  };
  CHECK(type_error(R"({"#": "0.t_f33"})") ==
        "p.json:4:56: error: unknown type '0.t_f33'; did you mean '0.t_f32'?\n"
        "     {\"#\": \"1.foo\", \"I\": [], \"O\": [{\"%\": 1, \"TT\": {\"#\": \"0.t_f33\"}}], \"A\": []}\n"
        "                                                        ^\n"
        "1 error generated.\n");
  CHECK(type_error(R"({"#": "0.t_dtensor", "D": [{"#": "0.t_f32"}, [2]]})") ==
        "p.json:4:76: error: expected 5 entries [element type, dims, layout, lod, offset] in the data of "
        "'0.t_dtensor', got 2\n"
        "     {\"#\": \"1.foo\", \"I\": [], \"O\": [{\"%\": 1, \"TT\": {\"#\": \"0.t_dtensor\", \"D\": [{\"#\": \"0.t_f32\"}, "
        "[2]]}}], \"A\": []}\n"
        "                                                                            ^\n"
        "1 error generated.\n");
  CHECK(type_error(R"({"#": "0.t_dtensor", "D": [{"#": "0.t_f32"}, [2], "NCWH", [], 0]})") ==
        "p.json:4:100: error: unknown data layout 'NCWH' in '0.t_dtensor'\n"
        " ...\"1.foo\", \"I\": [], \"O\": [{\"%\": 1, \"TT\": {\"#\": \"0.t_dtensor\", \"D\": [{\"#\": \"0.t_f32\"}, "
        "[2], \"NCWH\", [], 0]}}], \"A\": []}\n"
        "                                                                                             ^\n"
        "1 error generated.\n");
  CHECK(type_error(R"({"D": []})") ==
        "p.json:4:50: error: missing key '#' (type name) in type\n"
        "     {\"#\": \"1.foo\", \"I\": [], \"O\": [{\"%\": 1, \"TT\": {\"D\": []}}], \"A\": []}\n"
        "                                                  ^\n"
        "1 error generated.\n");
}

TEST_CASE("json errors: attributes") {
  auto attr_error = [](const std::string& at) {
    return errors(R"(    {"#": "1.foo", "I": [], "O": [], "A": [{"N": "a", "AT": )" + at + "}]}");
  };
  auto first_line = [](const std::string& s) { return s.substr(0, s.find('\n')); };
  CHECK(first_line(attr_error(R"({"#": "0.a_i33", "D": 1})")) ==
        "p.json:4:67: error: unknown attribute kind '0.a_i33'; did you mean '0.a_i32'?");
  CHECK(first_line(attr_error(R"({"#": "0.a_i32", "D": 3000000000})")) ==
        "p.json:4:83: error: value 3000000000 does not fit in an int32 attribute");
  CHECK(first_line(attr_error(R"({"#": "0.a_i64", "D": 9223372036854775808})")) ==
        "p.json:4:83: error: integer 9223372036854775808 for the data of '0.a_i64' is too large");
  CHECK(first_line(attr_error(R"({"#": "0.a_i32", "D": 1.5})")) ==
        "p.json:4:83: error: expected an integer for the data of '0.a_i32', got a number");
  CHECK(first_line(attr_error(R"({"#": "0.a_f32", "VD": "Infinity"})")) ==
        "p.json:4:84: error: unknown special float \"Infinity\" in 'VD' (expected \"NaN\", \"INF\" or \"-INF\")");
  CHECK(first_line(attr_error(R"({"#": "0.a_bool"})")) ==
        "p.json:4:61: error: missing key 'D' (data) in attribute '0.a_bool'");
  CHECK(first_line(attr_error(R"({"#": "1.a_dtype", "D": "float3"})")) ==
        "p.json:4:85: error: unknown data type 'float3'; did you mean 'float32'?");
  CHECK(first_line(attr_error(R"({"#": "1.a_place", "D": [5, 0, ""]})")) ==
        "p.json:4:86: error: unknown allocation type 5 in a place (known: 0 undefined, 1 cpu, 2 gpu, 3 gpu_pinned, "
        "4 xpu, 7 ipu, 9 custom)");
  CHECK(first_line(attr_error(R"({"#": "1.a_scalar", "D": ["float32"]})")) ==
        "p.json:4:86: error: expected [data type, value] for the data of '1.a_scalar', got [\"float32\"]");
  CHECK(first_line(attr_error(R"(7)")) ==
        "p.json:4:61: error: expected an attribute object {\"#\": kind, \"D\": data}, got an integer");
}

TEST_CASE("json errors: the parameter op") {
  auto first_line = [](const std::string& s) { return s.substr(0, s.find('\n')); };
  CHECK(first_line(errors(R"(    {"#": "p", "A": [0, 1, "w"], "O": {"%": 1, "TT": {"#": "0.t_f32"}}})")) ==
        "p.json:4:21: error: the 'A' of a parameter op has 3 entries, expected 4 (is_distributed, is_parameter, "
        "need_clip, parameter_name)");
  CHECK(first_line(errors(R"(    {"#": "p", "A": [0, 2, 1, "w"], "O": {"%": 1, "TT": {"#": "0.t_f32"}}})")) ==
        "p.json:4:25: error: expected 0 or 1 for 'is_parameter' in 'A' of a parameter op, got 2");
  CHECK(first_line(errors(R"(    {"#": "p", "A": [0, 1, 1, "w"], "O": [{"%": 1, "TT": {"#": "0.t_f32"}}]})")) ==
        "p.json:4:42: error: expected an object for 'O' of a parameter op (its single result), got an array");
  CHECK(first_line(errors(R"(    {"#": "p", "A": [0, 1, 1, "w"], "O": {"%": 1, "TT": {"#": "0.t_f32"}}, "OA": [1]})")) ==
        "p.json:4:82: error: the 'OA' of a parameter op has 1 entries, expected 3 (persistable, stop_gradient, "
        "trainable)");
}
