#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>

#include "support/yaml_scalar.h"

using kforge::yaml::CoreKind;
using kforge::yaml::CoreScalar;
using kforge::yaml::resolve_core_scalar;

TEST_CASE("yaml core scalars: null") {
  for (const char* s : {"", "~", "null", "Null", "NULL"}) {
    INFO(s);
    CHECK(resolve_core_scalar(s).kind == CoreKind::kNull);
  }
  for (const char* s : {"nULL", "nil", "None", "~~", "null "}) {
    INFO(s);
    CHECK(resolve_core_scalar(s).kind == CoreKind::kString);
  }
}

TEST_CASE("yaml core scalars: bool (YAML 1.2, not 1.1: yes/no/on/off are strings)") {
  for (const char* s : {"true", "True", "TRUE"}) {
    INFO(s);
    const CoreScalar r = resolve_core_scalar(s);
    CHECK(r.kind == CoreKind::kBool);
    CHECK(r.bool_value);
  }
  for (const char* s : {"false", "False", "FALSE"}) {
    INFO(s);
    const CoreScalar r = resolve_core_scalar(s);
    CHECK(r.kind == CoreKind::kBool);
    CHECK_FALSE(r.bool_value);
  }
  for (const char* s : {"tRUE", "yes", "Yes", "no", "on", "off", "y", "n"}) {
    INFO(s);
    CHECK(resolve_core_scalar(s).kind == CoreKind::kString);
  }
}

TEST_CASE("yaml core scalars: decimal ints, with a sign, and their double") {
  const struct {
    const char* text;
    int64_t value;
  } cases[] = {{"0", 0}, {"7", 7}, {"-7", -7}, {"+7", 7}, {"007", 7}, {"-0", 0},
               {"9223372036854775807", std::numeric_limits<int64_t>::max()},
               {"-9223372036854775808", std::numeric_limits<int64_t>::min()}};
  for (const auto& c : cases) {
    INFO(c.text);
    const CoreScalar r = resolve_core_scalar(c.text);
    CHECK(r.kind == CoreKind::kInt);
    CHECK_FALSE(r.out_of_range);
    CHECK(r.int_value == c.value);
    CHECK(r.float_value == static_cast<double>(c.value));
  }
}

TEST_CASE("yaml core scalars: octal 0o and hex 0x ints") {
  CHECK(resolve_core_scalar("0o17").kind == CoreKind::kInt);
  CHECK(resolve_core_scalar("0o17").int_value == 15);
  CHECK(resolve_core_scalar("0o0").int_value == 0);
  CHECK(resolve_core_scalar("0o777").float_value == 511.0);
  CHECK(resolve_core_scalar("0x1F").kind == CoreKind::kInt);
  CHECK(resolve_core_scalar("0x1F").int_value == 31);
  CHECK(resolve_core_scalar("0x1f").int_value == 31);
  CHECK(resolve_core_scalar("0xff").float_value == 255.0);
  CHECK(resolve_core_scalar("0x7FFFFFFFFFFFFFFF").int_value == std::numeric_limits<int64_t>::max());
  // Not ints of the core schema: no sign before 0o / 0x, lower-case prefixes only, digits of the base, no 0b,
  // no underscores, something after the prefix.
  for (const char* s : {"-0x1F", "+0x1F", "0X1F", "0O17", "0o8", "0o", "0x", "0xG", "0b101", "1_000", "0x1F ",
                        "12a", "1,000"}) {
    INFO(s);
    CHECK(resolve_core_scalar(s).kind == CoreKind::kString);
  }
}

TEST_CASE("yaml core scalars: ints out of int64 range") {
  for (const char* s : {"9223372036854775808", "-9223372036854775809", "0x8000000000000000", "0o1000000000000000000000",
                        "123456789012345678901234567890"}) {
    INFO(s);
    const CoreScalar r = resolve_core_scalar(s);
    CHECK(r.kind == CoreKind::kInt);
    CHECK(r.out_of_range);
  }
  CHECK(resolve_core_scalar("9223372036854775808").float_value == 9223372036854775808.0);
  CHECK(resolve_core_scalar("0x8000000000000000").float_value == 9223372036854775808.0);
  CHECK(resolve_core_scalar("0o1000000000000000000000").float_value == 9223372036854775808.0);  // 8^21 = 2^63
  CHECK(resolve_core_scalar("-123456789012345678901234567890").float_value == -123456789012345678901234567890.0);
}

TEST_CASE("yaml core scalars: floats") {
  const struct {
    const char* text;
    double value;
  } cases[] = {{"1.5", 1.5},   {"-1.5", -1.5}, {"+1.5", 1.5},   {"1.", 1.0},       {".5", 0.5},
               {"-.5", -0.5},  {"1e3", 1e3},   {"1E3", 1e3},    {"1e+3", 1e3},     {"2.5e-3", 2.5e-3},
               {".5e1", 5.0},  {"1.e2", 100.0}, {"0.0", 0.0},   {"-0.0", -0.0},    {"1e400", HUGE_VAL}};
  for (const auto& c : cases) {
    INFO(c.text);
    const CoreScalar r = resolve_core_scalar(c.text);
    CHECK(r.kind == CoreKind::kFloat);
    CHECK(r.float_value == c.value);
  }
  CHECK(std::signbit(resolve_core_scalar("-0.0").float_value));
  for (const char* s : {".", "-.", "e3", "1e", "1e+", "1.5.", "1.5e3.0", "1.5f", "0x1.8p1", "1..5", ". 5"}) {
    INFO(s);
    CHECK(resolve_core_scalar(s).kind == CoreKind::kString);
  }
}

TEST_CASE("yaml core scalars: infinities and NaN") {
  for (const char* s : {".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"}) {
    INFO(s);
    const CoreScalar r = resolve_core_scalar(s);
    CHECK(r.kind == CoreKind::kFloat);
    CHECK(r.float_value == std::numeric_limits<double>::infinity());
  }
  for (const char* s : {"-.inf", "-.Inf", "-.INF"}) {
    INFO(s);
    const CoreScalar r = resolve_core_scalar(s);
    CHECK(r.kind == CoreKind::kFloat);
    CHECK(r.float_value == -std::numeric_limits<double>::infinity());
  }
  for (const char* s : {".nan", ".NaN", ".NAN"}) {
    INFO(s);
    const CoreScalar r = resolve_core_scalar(s);
    CHECK(r.kind == CoreKind::kFloat);
    CHECK(std::isnan(r.float_value));
  }
  // The core schema's NaN has no sign; inf and nan need the dot; mixed case is not a spelling of either.
  for (const char* s : {"-.nan", "+.nan", "inf", "-inf", "nan", "NaN", ".iNf", ".Nan", ".infinity"}) {
    INFO(s);
    CHECK(resolve_core_scalar(s).kind == CoreKind::kString);
  }
}

TEST_CASE("yaml core scalars: strings") {
  for (const char* s : {"relu", "float32", "a b", "-", "+", "0x", "1.2.3", "3 4", " 1", "1 "}) {
    INFO(s);
    CHECK(resolve_core_scalar(s).kind == CoreKind::kString);
  }
}
