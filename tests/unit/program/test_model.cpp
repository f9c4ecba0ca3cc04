// The program model: dtypes, types, attributes, building and editing programs, queries, dump().
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <sstream>

#include "program/pir_text_reader.h"
#include "program/program.h"

using namespace kforge;
using namespace kforge::ir;

TEST_CASE("data types have Paddle's and PIR's spellings") {
  CHECK(dtype_name(DataType::kFloat32) == "float32");
  CHECK(dtype_name(DataType::kUndefined) == "Undefined");
  CHECK(dtype_name(DataType::kFloat8E4M3FN) == "float8_e4m3fn");
  CHECK(parse_dtype_name("bfloat16") == DataType::kBFloat16);
  CHECK(parse_dtype_name("Undefined") == DataType::kUndefined);
  CHECK(parse_dtype_name("Undefined(ALL_DTYPE)") == DataType::kUndefined);  // Paddle 3.1+ spelling
  CHECK_FALSE(parse_dtype_name("fp32").has_value());
  CHECK(pir_element_name(DataType::kBool) == "b");
  CHECK(pir_element_name(DataType::kUInt8) == "u8");
  CHECK(pir_element_name(DataType::kUInt16).empty());
  CHECK(parse_pir_element_name("c128") == DataType::kComplex128);
  CHECK(parse_pir_element_name("index") == DataType::kIndex);
  CHECK_FALSE(parse_pir_element_name("f33").has_value());
  CHECK(dtype_size(DataType::kFloat16) == 2);
  CHECK(dtype_size(DataType::kComplex128) == 16);
  CHECK(is_floating(DataType::kBFloat16));
  CHECK_FALSE(is_floating(DataType::kInt32));
  CHECK(is_integer(DataType::kUInt64));
  CHECK_FALSE(is_integer(DataType::kBool));
}

TEST_CASE("float16 and bfloat16 encodings round to nearest even, straight from double") {
  const DataType f16 = DataType::kFloat16, bf16 = DataType::kBFloat16;
  CHECK(half_bits_from_double(f16, 1.0) == 0x3C00);
  CHECK(half_bits_from_double(bf16, 1.0) == 0x3F80);
  CHECK(half_bits_from_double(f16, -2.5) == 0xC100);
  CHECK(half_bits_from_double(bf16, -0.0) == 0x8000);
  CHECK(half_bits_from_double(f16, 65504.0) == 0x7BFF);  // the largest float16
  CHECK(half_bits_from_double(f16, 65520.0) == 0x7C00);  // halfway to 2^16: ties to even, i.e. infinity
  CHECK(half_bits_from_double(f16, 65519.99) == 0x7BFF);
  CHECK(half_bits_from_double(bf16, 1e39) == 0x7F80);
  CHECK(half_bits_from_double(f16, -HUGE_VAL) == 0xFC00);
  CHECK(half_bits_from_double(f16, std::ldexp(1.0, -24)) == 0x0001);  // the smallest subnormal
  CHECK(half_bits_from_double(f16, std::ldexp(1.0, -25)) == 0x0000);  // half of it: ties to even (0)
  CHECK(half_bits_from_double(f16, std::ldexp(3.0, -25)) == 0x0002);  // 1.5 units: ties to even (2)
  CHECK(half_bits_from_double(f16, std::ldexp(1023.5, -24)) == 0x0400);  // rounds up into the smallest normal
  // bfloat16 ties: 1 + 2^-8 is halfway between 1 and 1 + 2^-7: even is 1; 1 + 3 * 2^-8 goes up.
  CHECK(half_bits_from_double(bf16, 1.0 + std::ldexp(1.0, -8)) == 0x3F80);
  CHECK(half_bits_from_double(bf16, 1.0 + std::ldexp(3.0, -8)) == 0x3F82);
  // Just above a tie rounds up: a double that a float32 would round to the tie first must not (double rounding).
  CHECK(half_bits_from_double(bf16, 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40)) == 0x3F81);
  const uint16_t nan = half_bits_from_double(bf16, std::numeric_limits<double>::quiet_NaN());
  CHECK(std::isnan(half_bits_to_double(bf16, nan)));
  CHECK(std::isnan(half_bits_to_double(f16, half_bits_from_double(f16, std::nan("")))));
  // Every encoding but NaN round-trips.
  std::vector<std::string> mismatches;
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    for (DataType t : {f16, bf16}) {
      const double v = half_bits_to_double(t, static_cast<uint16_t>(bits));
      if (!std::isnan(v) && half_bits_from_double(t, v) != bits) {
        mismatches.push_back(std::string(dtype_name(t)) + " " + std::to_string(bits));
      }
    }
  }
  INFO((mismatches.empty() ? std::string() : mismatches.front()));
  CHECK(mismatches.empty());
}

TEST_CASE("layouts and places parse and print as Paddle does") {
  CHECK(layout_name(DataLayout::kUndefined) == "Undefined(AnyLayout)");
  CHECK(parse_layout_name("Undefined(AnyLayout)") == DataLayout::kUndefined);
  CHECK(parse_layout_name("ANYLAYOUT") == DataLayout::kUndefined);
  CHECK(parse_layout_name("nchw") == DataLayout::kNCHW);
  CHECK(parse_layout_name("MKLDNNLAYOUT") == DataLayout::kOneDNN);
  CHECK_FALSE(parse_layout_name("NCWH").has_value());

  const std::optional<Place> gpu = parse_place_body("gpu:1");
  REQUIRE(gpu);
  CHECK(gpu->type == AllocationType::kGpu);
  CHECK(gpu->device_id == 1);
  CHECK(place_to_string(*gpu) == "Place(gpu:1)");
  CHECK(place_to_string(*parse_place_body("cpu")) == "Place(cpu)");
  CHECK(place_to_string(*parse_place_body("gpu_pinned")) == "Place(gpu_pinned)");
  CHECK(place_to_string(*parse_place_body("undefined:0")) == "Place(undefined:0)");
  const std::optional<Place> custom = parse_place_body("npu:3");
  REQUIRE(custom);
  CHECK(custom->type == AllocationType::kCustom);
  CHECK(custom->custom_type == "npu");
  CHECK(place_to_string(*custom) == "Place(npu:3)");
  CHECK(place_to_string(*parse_place_body(":0")) == "Place(:0)");
  CHECK_FALSE(parse_place_body("gpu:x").has_value());
  CHECK(allocation_type_from_code(9) == AllocationType::kCustom);
  CHECK_FALSE(allocation_type_from_code(5).has_value());
}

TEST_CASE("types print as the current PIR printer prints them") {
  CHECK(to_string(Type::none()) == "<<NULL TYPE>>");
  CHECK(to_string(Type::element(DataType::kFloat32)) == "f32");
  CHECK(to_string(Type::tensor(DataType::kFloat32, {-1, 3, 224, 224})) == "tensor<-1x3x224x224xf32>");
  CHECK(to_string(Type::tensor(DataType::kInt64, {})) == "tensor<i64>");
  CHECK(to_string(Type::vector({Type::tensor(DataType::kFloat32, {2}), Type::vector({})})) ==
        "vec[tensor<2xf32>,vec[]]");
  Type gpu = Type::tensor(DataType::kFloat32, {-1, -1});
  gpu.place = Place{AllocationType::kGpu, 0, ""};
  CHECK(to_string(gpu) == "gpu_tensor<-1x-1xf32>");
  CHECK(to_string(Type::other("pd_op.tensor_array", "f32")) == "pd_op.tensor_array<f32>");
  CHECK(to_string(Type::other("cf.stack")) == "cf.stack");
  // uint16 has no PIR element spelling; it prints its DataType name rather than nothing.
  CHECK(to_string(Type::tensor(DataType::kUInt16, {2})) == "tensor<2xuint16>");

  const Type t = Type::tensor(DataType::kFloat32, {2, 3});
  CHECK(t.has_static_shape());
  CHECK(t.static_numel() == 6);
  CHECK(Type::tensor(DataType::kFloat32, {}).static_numel() == 1);
  CHECK_FALSE(Type::tensor(DataType::kFloat32, {-1, 3}).static_numel().has_value());
  CHECK_FALSE(Type::element(DataType::kFloat32).has_static_shape());
}

TEST_CASE("attributes print in the typed form and compare by value") {
  CHECK(to_string(Attribute::boolean(true)) == "true");
  CHECK(to_string(Attribute::int32(-3)) == "(Int32)-3");
  CHECK(to_string(Attribute::int64(7)) == "(Int64)7");
  CHECK(to_string(Attribute::index(1)) == "(Index)1");
  CHECK(to_string(Attribute::float32(1e-05f)) == "(Float)1e-05");
  CHECK(to_string(Attribute::float32(0.9f)) == "(Float)0.9");
  CHECK(to_string(Attribute::float64(-1.1e30)) == "(Double)-1.1e+30");
  CHECK(to_string(Attribute::float32(-std::numeric_limits<float>::infinity())) == "(Float)-inf");
  CHECK(to_string(Attribute::complex(AttrKind::kComplex64, 1, -2)) == "(Complex64)real:1 imag:-2");
  CHECK(to_string(Attribute::string("say \"hi\"")) == "\"say \\\"hi\\\"\"");
  CHECK(to_string(Attribute::array({Attribute::boolean(false), Attribute::int32(1)})) == "[false,(Int32)1]");
  CHECK(to_string(Attribute::type_attr(Type::element(DataType::kFloat16))) == "f16");
  CHECK(to_string(Attribute::pointer("0x1234")) == "(Pointer)0x1234");
  CHECK(to_string(Attribute::data_type(DataType::kFloat32)) == "(pd_op.DataType)float32");
  CHECK(to_string(Attribute::place_attr(Place{AllocationType::kCpu, 0, ""})) == "(pd_op.Place)Place(cpu)");
  CHECK(to_string(Attribute::data_layout(DataLayout::kNHWC)) == "(pd_op.DataLayout)NHWC");
  CHECK(to_string(Attribute::int_array({-1, 30})) == "(pd_op.IntArray)[-1,30]");
  CHECK(to_string(Attribute::scalar_float(DataType::kFloat32, 1.5)) == "(pd_op.Scalar)float32:1.5");
  CHECK(to_string(Attribute::scalar_int(DataType::kInt64, -2)) == "(pd_op.Scalar)int64:-2");
  CHECK(to_string(Attribute::scalar_bool(true)) == "(pd_op.Scalar)bool:true");
  CHECK(to_string(Attribute::null()) == "<#AttrNull>");
  CHECK(to_string(Attribute::opaque("<backend:GPU|layout:NCHW|dtype:float32>")) ==
        "<backend:GPU|layout:NCHW|dtype:float32>");
  // Guessed kinds print as untyped text, and a guessed double keeps a decimal point so it reads back as one.
  CHECK(to_string(Attribute::int64(3).guessed()) == "3");
  CHECK(to_string(Attribute::float64(1).guessed()) == "1.0");
  CHECK(to_string(Attribute::float64(1e-05).guessed()) == "1e-05");

  CHECK(Attribute::int32(1) == Attribute::int32(1).at({0, 5}));  // locations do not count
  CHECK_FALSE(Attribute::int32(1) == Attribute::int64(1));
  CHECK_FALSE(Attribute::int64(1) == Attribute::int64(1).guessed());
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK(Attribute::float64(nan) == Attribute::float64(nan));
  // Float attributes hold the float value, as Paddle does.
  CHECK(Attribute::float32(0.1f).float_value == static_cast<double>(0.1f));

  const Attribute ints = Attribute::array({Attribute::int32(2), Attribute::int64(3)});
  CHECK(ints.is_int_list());
  CHECK(ints.as_int_list() == std::vector<int64_t>{2, 3});
  CHECK(Attribute::int_array({4}).as_int_list() == std::vector<int64_t>{4});
  CHECK_FALSE(Attribute::array({Attribute::boolean(true)}).is_int_list());
  CHECK(Attribute::array({Attribute::boolean(true)}).as_bool_flag());
  CHECK_FALSE(Attribute::string("x").as_bool_flag(false));
}

namespace {

// x, w -> matmul -> relu -> fetch, built through the API.
Program mlp() {
  Program p;
  const BlockId top = p.top_block();
  OpSpec w{"builtin", "parameter", {}, {Type::tensor(DataType::kFloat32, {4, 8})},
           {{"parameter_name", Attribute::string("w"), {}}}, {}, {}};
  const OpId param = p.append_op(top, w);
  OpSpec x{"pd_op", "data", {}, {Type::tensor(DataType::kFloat32, {-1, 4})},
           {{"name", Attribute::string("x"), {}}}, {}, {}};
  const OpId data = p.append_op(top, x);
  OpSpec mm{"pd_op", "matmul", {p.op(data).results[0], p.op(param).results[0]},
            {Type::tensor(DataType::kFloat32, {-1, 8})},
            {{"transpose_x", Attribute::boolean(false), {}}, {"transpose_y", Attribute::boolean(false), {}}}, {}, {}};
  const OpId matmul = p.append_op(top, mm);
  const OpId relu = p.append_op(top, OpSpec{"pd_op", "relu", {p.op(matmul).results[0]},
                                           {Type::tensor(DataType::kFloat32, {-1, 8})}, {}, {}, {}});
  p.append_op(top, OpSpec{"pd_op", "fetch", {p.op(relu).results[0]}, {Type::tensor(DataType::kFloat32, {-1, 8})},
                          {{"name", Attribute::string("y"), {}}, {"col", Attribute::int32(0), {}}}, {}, {}});
  assign_value_names(p);
  return p;
}

}  // namespace

TEST_CASE("a built program answers queries") {
  Program p = mlp();
  CHECK(p.check_structure().empty());
  const std::vector<OpId> order = p.ops_in_order();
  REQUIRE(order.size() == 5);
  CHECK(p.op(order[2]).full_name() == "pd_op.matmul");
  CHECK(p.op(order[2]).is("pd_op", "matmul"));
  REQUIRE(p.parameters().size() == 1);
  CHECK(p.value(p.op(p.parameters()[0]).results[0]).name == "w");
  REQUIRE(p.feeds().size() == 1);
  CHECK(p.value(p.op(p.feeds()[0]).results[0]).name == "x");
  REQUIRE(p.fetches().size() == 1);
  CHECK(p.value(p.op(p.fetches()[0]).results[0]).name == "y");
  CHECK(p.find_ops("pd_op.relu").size() == 1);

  const ValueId x = p.op(order[1]).results[0];
  const std::vector<Use> uses = p.uses(x);
  REQUIRE(uses.size() == 1);
  CHECK(uses[0] == Use{order[2], 0});
  CHECK(p.use_lists()[x.index] == uses);
  CHECK(p.defining_op(x) == order[1]);
  CHECK(p.op(order[2]).attr("transpose_y")->kind == AttrKind::kBool);
  CHECK(p.op(order[2]).attr("missing") == nullptr);
  CHECK(p.op(order[4]).string_attr("name") == "y");
}

TEST_CASE("editing a program keeps ids and order consistent") {
  Program p = mlp();
  std::vector<OpId> order = p.ops_in_order();
  const OpId matmul = order[2], relu = order[3], fetch = order[4];
  // Insert a scale before relu, route relu through it.
  const ValueId mm_out = p.op(matmul).results[0];
  const OpId scale = p.insert_op_before(relu, OpSpec{"pd_op", "scale", {mm_out}, {p.type_of(mm_out)},
                                                     {{"scale", Attribute::float32(2), {}}}, {}, {}});
  p.set_operand(relu, 0, p.op(scale).results[0]);
  CHECK(p.check_structure().empty());
  order = p.ops_in_order();
  CHECK(p.op(order[3]).name == "scale");
  CHECK(p.uses(mm_out).size() == 1);

  // Bypass relu and erase it.
  p.replace_all_uses(p.op(relu).results[0], p.op(scale).results[0]);
  CHECK(p.uses(p.op(relu).results[0]).empty());
  p.erase_op(relu);
  CHECK(p.op(relu).erased);
  CHECK(p.ops_in_order().size() == 5);
  CHECK(p.op(fetch).operands[0] == p.op(scale).results[0]);
  CHECK(p.check_structure().empty());

  p.op(scale).set_attr("bias", Attribute::float32(1));
  p.op(scale).set_attr("scale", Attribute::float32(3));
  CHECK(p.op(scale).attributes.size() == 2);
  CHECK(p.op(scale).attr("scale")->float_value == 3);
  CHECK(p.op(scale).erase_attr("bias"));
  CHECK_FALSE(p.op(scale).erase_attr("bias"));
}

TEST_CASE("check_structure finds a use before definition") {
  Program p = mlp();
  const std::vector<OpId> order = p.ops_in_order();
  // Make the data op use the relu result, which comes later.
  p.op(order[1]).operands.push_back(p.op(order[3]).results[0]);
  CHECK(p.check_structure() == "op #1 'pd_op.data' operand 0 uses value 3 before its definition or outside its scope");
}

TEST_CASE("regions, block arguments and the dump of control flow") {
  Program p;
  const BlockId top = p.top_block();
  const OpId cond = p.append_op(top, OpSpec{"pd_op", "data", {}, {Type::tensor(DataType::kBool, {1})},
                                            {{"name", Attribute::string("c"), {}}}, {}, {}});
  const OpId x = p.append_op(top, OpSpec{"pd_op", "data", {}, {Type::tensor(DataType::kFloat32, {2})},
                                         {{"name", Attribute::string("x"), {}}}, {}, {}});
  const ValueId c = p.op(cond).results[0], xv = p.op(x).results[0];
  const Type f2 = Type::tensor(DataType::kFloat32, {2});

  const OpId if_op = p.append_op(top, OpSpec{"pd_op", "if", {c}, {f2}, {}, {}, {}});
  const BlockId then_block = p.add_region(if_op);
  const BlockId else_block = p.add_region(if_op);
  const OpId add = p.append_op(then_block, OpSpec{"pd_op", "add", {xv, xv}, {f2}, {}, {}, {}});
  p.append_op(then_block, OpSpec{"cf", "yield", {p.op(add).results[0]}, {}, {}, {}, {}});
  p.append_op(else_block, OpSpec{"cf", "yield", {xv}, {}, {}, {}, {}});

  const OpId while_op = p.append_op(top, OpSpec{"pd_op", "while", {c, xv}, {f2}, {}, {}, {}});
  const BlockId body = p.add_region(while_op);
  const ValueId arg = p.add_block_argument(body, f2);
  p.value(arg).attributes.push_back({"stop_gradient", Attribute::boolean(true), {}});
  const OpId relu = p.append_op(body, OpSpec{"pd_op", "relu", {arg}, {f2}, {}, {}, {}});
  p.append_op(body, OpSpec{"cf", "yield", {c, p.op(relu).results[0]}, {}, {}, {}, {}});

  const OpId generic = p.append_op(top, OpSpec{"test", "region_op", {ValueId{}}, {}, {}, {}, {}});
  const BlockId g = p.add_region(generic);
  p.add_block_kwarg(g, "key", f2);
  CHECK(p.check_structure().empty());
  CHECK(p.ops_in_order().size() == 10);
  CHECK(p.op(p.ops_in_order()[3]).name == "add");  // pre-order: the if's regions come right after it

  const std::string expected =
      "{\n"
      "    (%0) = \"pd_op.data\" () {name:\"c\"} : () -> tensor<1xb>\n"
      "    (%1) = \"pd_op.data\" () {name:\"x\"} : () -> tensor<2xf32>\n"
      "    (%2) = \"pd_op.if\" (%0) {} -> tensor<2xf32> {\n"
      "        (%3) = \"pd_op.add\" (%1, %1) {} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\n"
      "        () = \"cf.yield\" (%3) {} : (tensor<2xf32>) -> \n"
      "    } else {\n"
      "        () = \"cf.yield\" (%1) {} : (tensor<2xf32>) -> \n"
      "    }\n"
      "    (%4) = \"pd_op.while\" (cond=%0, inputs=%1) {\n"
      "        ^%arg_0 {stop_gradient:true} : tensor<2xf32>\n"
      "        (%5) = \"pd_op.relu\" (%arg_0) {} : (tensor<2xf32>) -> tensor<2xf32>\n"
      "        () = \"cf.yield\" (%0, %5) {} : (tensor<1xb>, tensor<2xf32>) -> \n"
      "    }\n"
      "    () = \"test.region_op\" (<<NULL VALUE>>) {} : (<<NULL TYPE>>) -> \n"
      "    {\n"
      "        ^kw:\n"
      "            %kwarg_key {} : tensor<2xf32>\n"
      "    }\n"
      "}\n";
  CHECK(p.dump() == expected);

  // The dump reads back to a program with the same dump.
  SourceManager sources;
  std::ostringstream out;
  DiagnosticEngine diags(sources, out);
  const uint32_t file = sources.add_buffer("dump.txt", expected);
  std::optional<Program> again = read_pir_text(sources, file, diags);
  INFO(out.str());
  REQUIRE(again);
  CHECK(again->dump() == expected);
  CHECK(again->check_structure().empty());

  // Erasing the if erases its regions' ops too.
  p.erase_op(if_op);
  CHECK(p.ops_in_order().size() == 6);
  CHECK(p.op(add).erased);
}

TEST_CASE("kernel ops dump under their kernel name") {
  Program p;
  const OpId k = p.append_op(p.top_block(),
                             OpSpec{"pd_kernel", "phi_kernel", {}, {Type::tensor(DataType::kFloat32, {})},
                                    {{"kernel_name", Attribute::string("relu"), {}},
                                     {"is_inplace", Attribute::boolean(true), {}}},
                                    {}, {}});
  (void)k;
  CHECK(p.dump() ==
        "{\n    (%0) = \"relu_(phi_kernel)\" () {is_inplace:true,kernel_name:\"relu\"} : () -> tensor<f32>\n}\n");
}
