// The fast JSON reader against nlohmann's parser, the reference: on every document it accepts it must
// build the same values (same kinds, same order), and it must accept nothing nlohmann rejects.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <sstream>

#include "driver/data_loader.h"
#include "driver/json_reader.h"
#include "template/value_ops.h"

using namespace kforge;
using namespace kforge::driver;
using tmpl::Value;

namespace {

/// A strict text form: kinds (1 vs 1.0 vs "1"), order and every value show.
std::string describe(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kList: {
      std::string out = "[";
      for (const Value& item : v.as_list()) out += describe(item) + ",";
      return out + "]";
    }
    case Value::Kind::kMap: {
      std::string out = "{";
      for (const auto& [k, item] : v.as_map()) out += tmpl::python_repr(Value(k)) + ":" + describe(item) + ",";
      return out + "}";
    }
    case Value::Kind::kInt: return "int " + tmpl::python_repr(v);
    case Value::Kind::kFloat: return "float " + tmpl::python_repr(v);
    default: return tmpl::python_repr(v);
  }
}

/// What nlohmann's parser builds, through the same conversion rules (integers as int64, others double).
std::string reference(std::string_view text) {
  std::function<Value(const nlohmann::ordered_json&)> convert = [&](const nlohmann::ordered_json& j) -> Value {
    if (j.is_null()) return Value();
    if (j.is_boolean()) return Value(j.get<bool>());
    if (j.is_number_integer()) return Value(j.get<int64_t>());
    if (j.is_number_float()) return Value(j.get<double>());
    if (j.is_string()) return Value(j.get<std::string>());
    if (j.is_array()) {
      tmpl::List items;
      for (const auto& item : j) items.push_back(convert(item));
      return Value(std::move(items));
    }
    tmpl::Map map;
    for (const auto& [k, item] : j.items()) map.set(k, convert(item));
    return Value(std::move(map));
  };
  return describe(convert(nlohmann::ordered_json::parse(text)));
}

}  // namespace

TEST_CASE("the fast JSON reader builds what nlohmann's parser builds") {
  const char* const documents[] = {
      R"({})",
      R"([])",
      R"({"a": [], "b": {}, "c": [[]], "d": [{}]})",
      " \t\r\n{ \"k\" :\n[ 1 , 2 ] } \n",
      R"({"z": 1, "y": 2, "x": {"c": 3, "b": [true, false, null]}})",
      R"({"ints": [0, -0, 7, -7, 9223372036854775807, -9223372036854775808, 12345678901234]})",
      R"({"floats": [0.0, -0.0, 1.5, -2.25, 1e3, 1E+3, 2.5e-3, 1e308, 4.9e-324, 0.1, 123456789.123456789]})",
      R"({"s": ["", "plain", "a fifteen chars", "sixteen chars!!!", "a longer string than any inline buffer holds"]})",
      R"({"esc": ["\"", "\\", "\/", "\b\f\n\r\t", "\u0041\u00e9\u4e2d", "\ud83d\ude00", "\u0000x", "a\u0020b"]})",
      "{\"utf8\": [\"\xc3\xa9\", \"\xe4\xb8\xad\xe6\x96\x87\", \"\xf0\x9f\x98\x80\", \"\xef\xbf\xbf\", \"\xf4\x8f\xbf\xbf\"]}",
      R"({"deep": [[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]})",
      R"({"k1": 1, "k2": 2, "k3": 3, "k4": 4, "k5": 5, "k6": 6, "k7": 7, "k8": 8, "k9": 9, "k10": 10, "k11": 11})",
  };
  for (const char* text : documents) {
    INFO(text);
    const std::optional<Value> fast = read_json_fast(text);
    REQUIRE(fast);
    CHECK(describe(*fast) == reference(text));
  }
}

TEST_CASE("the fast JSON reader accepts nothing that is not JSON") {
  const char* const malformed[] = {
      "", " ", "{", "}", "[1,]", "{\"a\":1,}", "[1 2]", "{\"a\" 1}", "{a: 1}", "{'a': 1}", "[01]", "[1.]", "[.5]",
      "[+1]", "[-]", "[1e]", "[1e+]", "[0x10]", "[NaN]", "[Infinity]", "[tru]", "[nul]", "[True]", "{} {}", "[1] x",
      "[\"unterminated]", "[\"tab\there\"]", "[\"\\x41\"]", "[\"\\u12\"]", "[\"\\u12G4\"]", "[\"\\ud800\"]",
      "[\"\\udc00\\ud800\"]", "[\"\\ud800\\u0041\"]", "[\"\xff\"]", "[\"\xc0\x80\"]", "[\"\xe0\x80\x80\"]",
      "[\"\xed\xa0\x80\"]", "[\"\xf4\x90\x80\x80\"]", "[\"\xc3\"]", "[1] // comment", "/* c */ [1]",
  };
  for (const char* text : malformed) {
    INFO(text);
    CHECK_FALSE(read_json_fast(text));
    CHECK_FALSE(nlohmann::ordered_json::accept(text));
  }
}

TEST_CASE("valid JSON the fast reader declines goes to nlohmann's rules") {
  // Integers beyond int64, overflowing or underflowing floats, very deep nesting: the reader leaves them
  // to the reference parser, whose result (or error) parse_json_data returns.
  CHECK_FALSE(read_json_fast(R"({"n": 9223372036854775808})"));
  CHECK_FALSE(read_json_fast(R"({"n": -9223372036854775809})"));
  CHECK_FALSE(read_json_fast(R"({"n": 1e400})"));
  CHECK_FALSE(read_json_fast(R"({"n": 1e-400})"));
  CHECK_FALSE(read_json_fast("{\"d\": " + std::string(300, '[') + std::string(300, ']') + "}"));

  auto load = [](const std::string& text, std::string& diagnostics) {
    SourceManager sources;
    std::ostringstream out;
    DiagnosticEngine diags{sources, out};
    std::optional<Value> value = parse_json_data(sources.add_buffer("d.json", text), sources, diags);
    diagnostics = out.str();
    return value;
  };
  std::string diagnostics;
  CHECK_FALSE(load(R"({"n": 9223372036854775808})", diagnostics));
  CHECK(diagnostics.find("error: integer 9223372036854775808 does not fit in 64 bits") != std::string::npos);
  std::optional<Value> v = load(R"({"n": -9223372036854775809, "tiny": 1e-400})", diagnostics);
  REQUIRE(v);
  CHECK(v->find("n")->is_float());
  CHECK(v->find("tiny")->as_float() == 0.0);
  CHECK_FALSE(load(R"({"n": 1e400})", diagnostics));
  CHECK(diagnostics.find("d.json:1:") == 0);
  v = load("{\"d\": " + std::string(300, '[') + std::string(300, ']') + "}", diagnostics);
  REQUIRE(v);
  CHECK(v->find("d")->is_list());
}
