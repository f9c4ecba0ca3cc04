// Attribute conversion to the op YAML's types, YAML defaults, and the C++ literals of lowered constants.
#include <catch2/catch.hpp>

#include "passes/attr_values.h"

using namespace kforge;
using namespace kforge::passes;
using ir::Attribute;
using opdef::ArgType;

namespace {

std::optional<Attribute> convert(const Attribute& a, ArgType t, std::string* why = nullptr) {
  return convert_attribute(a, t, why);
}

Attribute guessed(Attribute a) {
  a.kind_guessed = true;
  return a;
}

opdef::DefaultValue def(std::string text, opdef::DefaultKind kind, std::vector<opdef::DefaultValue> items = {}) {
  opdef::DefaultValue v;
  v.text = std::move(text);
  v.kind = kind;
  v.items = std::move(items);
  return v;
}

}  // namespace

TEST_CASE("attr: conversion to the exact PIR kind of each YAML type") {
  CHECK(*convert(Attribute::int64(3), ArgType::kInt) == Attribute::int32(3));
  CHECK_FALSE(convert(Attribute::int64(int64_t{1} << 40), ArgType::kInt).has_value());
  CHECK(*convert(Attribute::int32(3), ArgType::kInt64) == Attribute::int64(3));
  CHECK(*convert(Attribute::int64(2), ArgType::kFloat) == Attribute::float32(2.0f));
  CHECK(*convert(Attribute::float64(0.1), ArgType::kFloat) == Attribute::float32(0.1f));
  CHECK(*convert(Attribute::array({Attribute::int64(1), Attribute::int64(2)}), ArgType::kIntArray) ==
        Attribute::int_array({1, 2}));
  CHECK(*convert(Attribute::int_array({1, 2}), ArgType::kIntList) ==
        Attribute::array({Attribute::int32(1), Attribute::int32(2)}));
  CHECK(*convert(guessed(Attribute::string("float16")), ArgType::kDataType) == Attribute::data_type(ir::DataType::kFloat16));
  CHECK(*convert(guessed(Attribute::string("NHWC")), ArgType::kDataLayout) == Attribute::data_layout(ir::DataLayout::kNHWC));
  CHECK(convert(guessed(Attribute::string("gpu:1")), ArgType::kPlace)->place.device_id == 1);
  // Scalars: exact kinds stay; guessed numbers take the Scalar's declared C++ type.
  CHECK(*convert(Attribute::float64(1.5), ArgType::kScalarFloat) == Attribute::float64(1.5));
  CHECK(*convert(guessed(Attribute::float64(1.5)), ArgType::kScalarFloat) == Attribute::float32(1.5f));
  CHECK(*convert(guessed(Attribute::int64(2)), ArgType::kScalarInt) == Attribute::int32(2));
  CHECK(*convert(guessed(Attribute::int64(2)), ArgType::kScalar) == Attribute::int64(2));
  CHECK(*convert(guessed(Attribute::float64(2.5)), ArgType::kScalar) == Attribute::float32(2.5f));

  std::string why;
  CHECK_FALSE(convert(Attribute::string("x"), ArgType::kBool, &why));
  CHECK(why == "expected a bool, got str \"x\"");
  CHECK_FALSE(convert(Attribute::array({Attribute::int64(1), Attribute::string("a")}), ArgType::kIntList, &why));
  CHECK(why == "expected a list (int[]): element expected an int32, got str \"a\"");
  CHECK_FALSE(convert(Attribute::float64(1.5), ArgType::kInt, &why));
}

TEST_CASE("attr: YAML defaults evaluate to attributes") {
  using opdef::DefaultKind;
  std::string why;
  CHECK(*default_attribute(def("-1", DefaultKind::kInteger), ArgType::kInt, &why) == Attribute::int32(-1));
  CHECK(*default_attribute(def("10000L", DefaultKind::kInteger), ArgType::kInt64, &why) == Attribute::int64(10000));
  CHECK(*default_attribute(def("0x10", DefaultKind::kInteger), ArgType::kInt, &why) == Attribute::int32(16));
  CHECK(*default_attribute(def("1e-5", DefaultKind::kFloat), ArgType::kFloat, &why) == Attribute::float32(1e-5f));
  CHECK(*default_attribute(def("1.0f", DefaultKind::kFloat), ArgType::kScalar, &why) == Attribute::float32(1.0f));
  CHECK(*default_attribute(def("(2 << 12) - 1", DefaultKind::kExpression), ArgType::kInt, &why) ==
        Attribute::int32(8191));
  CHECK(*default_attribute(def("1.0f/8", DefaultKind::kExpression), ArgType::kFloat, &why) == Attribute::float32(0.125f));
  CHECK(*default_attribute(def("INT64_MAX", DefaultKind::kEnumConstant), ArgType::kInt64, &why) ==
        Attribute::int64(INT64_MAX));
  CHECK(*default_attribute(def("true", DefaultKind::kBool), ArgType::kBool, &why) == Attribute::boolean(true));
  CHECK(*default_attribute(def("\"NCHW\"", DefaultKind::kString), ArgType::kStr, &why) == Attribute::string("NCHW"));
  CHECK(*default_attribute(def("DataType::UNDEFINED", DefaultKind::kEnumConstant), ArgType::kDataType, &why) ==
        Attribute::data_type(ir::DataType::kUndefined));
  CHECK(default_attribute(def("CPUPlace()", DefaultKind::kExpression), ArgType::kPlace, &why)->place.type ==
        ir::AllocationType::kCpu);
  CHECK(default_attribute(def("{}", DefaultKind::kList), ArgType::kPlace, &why)->place.type ==
        ir::AllocationType::kUndefined);
  CHECK(*default_attribute(def("{}", DefaultKind::kList), ArgType::kIntArray, &why) == Attribute::int_array({}));
  CHECK(*default_attribute(def("{1, 1}", DefaultKind::kList,
                               {def("1", DefaultKind::kInteger), def("1", DefaultKind::kInteger)}),
                           ArgType::kIntList, &why) == Attribute::array({Attribute::int32(1), Attribute::int32(1)}));
  CHECK_FALSE(default_attribute(def("phi::Foo()", DefaultKind::kExpression), ArgType::kInt, &why));
  CHECK(why == "kforge cannot evaluate the default 'phi::Foo()'");
}

TEST_CASE("attr: constants convert to the calling convention's types (shown in the dump's notation)") {
  auto lit = [](const Attribute& a, ArgType t) { return constant_text(to_constant(*convert_attribute(a, t, nullptr), t)); };
  CHECK(lit(Attribute::boolean(true), ArgType::kBool) == "true");
  CHECK(lit(Attribute::int32(-3), ArgType::kInt) == "-3");
  CHECK(lit(Attribute::int64(-1), ArgType::kInt64) == "-1");
  CHECK(lit(Attribute::float32(1e-5f), ArgType::kFloat) == "9.999999747378752e-06");  // the float32 value, widened
  CHECK(lit(Attribute::float32(2.0f), ArgType::kFloat) == "2.0");
  CHECK(lit(Attribute::float64(0.5), ArgType::kDouble) == "0.5");
  CHECK(lit(Attribute::string("a\"b"), ArgType::kStr) == "\"a\\\"b\"");
  CHECK(lit(Attribute::int_array({1, -2}), ArgType::kIntList) == "[1, -2]");
  CHECK(lit(Attribute::int_array({}), ArgType::kInt64List) == "[]");
  CHECK(lit(Attribute::int_array({2, 3}), ArgType::kIntArray) == "[2, 3]");
  CHECK(lit(Attribute::array({Attribute::float32(0.5f)}), ArgType::kFloatList) == "[0.5]");
  CHECK(lit(Attribute::array({Attribute::boolean(false)}), ArgType::kBoolList) == "[false]");
  CHECK(lit(Attribute::array({Attribute::string("x")}), ArgType::kStrList) == "[\"x\"]");
  CHECK(lit(Attribute::float32(1.5f), ArgType::kScalar) == "1.5:float32");
  CHECK(lit(Attribute::float64(1.5), ArgType::kScalarDouble) == "1.5:float64");
  CHECK(lit(Attribute::int32(7), ArgType::kScalarInt) == "7:int32");
  CHECK(lit(Attribute::boolean(true), ArgType::kScalarBool) == "true:bool");
  CHECK(lit(Attribute::scalar_int(ir::DataType::kInt8, 4), ArgType::kScalar) == "4:int8");
  CHECK(lit(Attribute::array({Attribute::int64(1), Attribute::float64(2.5)}), ArgType::kScalarList) ==
        "[1:int64, 2.5:float64]");
  CHECK(lit(Attribute::data_type(ir::DataType::kFloat32), ArgType::kDataType) == "float32");
  CHECK(lit(Attribute::data_layout(ir::DataLayout::kNHWC), ArgType::kDataLayout) == "NHWC");
  CHECK(lit(Attribute::place_attr({ir::AllocationType::kCpu, 0, {}}), ArgType::kPlace) == "cpu");
  CHECK(lit(Attribute::place_attr({ir::AllocationType::kGpu, 1, {}}), ArgType::kPlace) == "gpu:1");
  CHECK(lit(Attribute::place_attr({}), ArgType::kPlace) == "undefined");
}
