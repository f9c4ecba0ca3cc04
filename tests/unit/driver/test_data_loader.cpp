#include <catch2/catch.hpp>

#include <sstream>

#include "driver/data_loader.h"

using namespace kforge;
using namespace kforge::driver;
using tmpl::Value;

namespace {

struct Loaded {
  SourceManager sources;
  std::ostringstream diag_text;
  DiagnosticEngine diags{sources, diag_text};
  std::optional<Value> value;
};

std::unique_ptr<Loaded> load(const std::string& path, const std::string& text, DataFormat format) {
  auto l = std::make_unique<Loaded>();
  const uint32_t id = l->sources.add_buffer(path, text);
  l->value = format == DataFormat::kYaml ? parse_yaml_data(id, l->sources, l->diags)
                                         : parse_json_data(id, l->sources, l->diags);
  return l;
}

const Value& at(const Value& map, const std::string& key) {
  const Value* v = map.find(key);
  REQUIRE(v != nullptr);
  return *v;
}

}  // namespace

TEST_CASE("YAML scalars follow the YAML 1.2 core schema") {
  auto l = load("d.yaml",
                "i: 42\nneg: -7\noct: 0o17\nhex: 0x1F\nf: 2.5\ne: 1e3\ninf: -.inf\nt: true\nT: True\nno: false\n"
                "n1: ~\nn2: null\nn3:\nqi: \"42\"\nqb: 'true'\nyes_word: yes\nblock: |\n  a\n  b\nver: 1.10\n"
                "tagged: !!str 12\nfl: !!float 3\n",
                DataFormat::kYaml);
  REQUIRE(l->value);
  const Value& v = *l->value;
  CHECK(at(v, "i").is_int());
  CHECK(at(v, "i").as_int() == 42);
  CHECK(at(v, "neg").as_int() == -7);
  CHECK(at(v, "oct").as_int() == 15);
  CHECK(at(v, "hex").as_int() == 31);
  CHECK(at(v, "f").is_float());
  CHECK(at(v, "f").as_float() == 2.5);
  CHECK(at(v, "e").as_float() == 1000.0);
  CHECK(at(v, "inf").as_float() < -1e308);
  CHECK(at(v, "t").is_bool());
  CHECK(at(v, "t").as_bool());
  CHECK(at(v, "T").as_bool());
  CHECK_FALSE(at(v, "no").as_bool());
  CHECK(at(v, "n1").is_none());
  CHECK(at(v, "n2").is_none());
  CHECK(at(v, "n3").is_none());
  CHECK(at(v, "qi").is_string());
  CHECK(at(v, "qi").as_string() == "42");
  CHECK(at(v, "qb").as_string() == "true");
  CHECK(at(v, "yes_word").as_string() == "yes");  // YAML 1.1 booleans are strings in 1.2
  CHECK(at(v, "block").as_string() == "a\nb\n");
  CHECK(at(v, "ver").as_float() == 1.1);
  CHECK(at(v, "tagged").as_string() == "12");
  CHECK(at(v, "fl").is_float());
}

TEST_CASE("YAML maps keep document order, lists keep theirs") {
  auto l = load("d.yaml", "zeta: 1\nalpha: [c, a, b]\nmid: {y: 1, x: 2}\n", DataFormat::kYaml);
  REQUIRE(l->value);
  CHECK(l->value->as_map().keys() == std::vector<std::string>{"zeta", "alpha", "mid"});
  CHECK(at(*l->value, "mid").as_map().keys() == std::vector<std::string>{"y", "x"});
  const auto& list = at(*l->value, "alpha").as_list();
  REQUIRE(list.size() == 3);
  CHECK(list[0].as_string() == "c");
}

TEST_CASE("malformed YAML is a located diagnostic with a caret") {
  auto l = load("bad.yaml", "a: 1\nb: [1, 2\nc: 3\n", DataFormat::kYaml);
  CHECK_FALSE(l->value);
  const std::string text = l->diag_text.str();
  CHECK(text.rfind("bad.yaml:", 0) == 0);
  CHECK(text.find("error: malformed YAML: ") != std::string::npos);
  CHECK(text.find("^") != std::string::npos);
}

TEST_CASE("YAML data problems are reported at their location") {
  auto dup = load("d.yaml", "a: 1\nb: 2\na: 3\n", DataFormat::kYaml);
  CHECK_FALSE(dup->value);
  CHECK(dup->diag_text.str().rfind("d.yaml:3:1: error: duplicate key 'a'", 0) == 0);
  CHECK(dup->diag_text.str().find("d.yaml:1:1: note: first defined here") != std::string::npos);

  auto list_root = load("d.yaml", "- 1\n- 2\n", DataFormat::kYaml);
  CHECK_FALSE(list_root->value);
  CHECK(list_root->diag_text.str().find("error: template data must be a mapping") != std::string::npos);

  auto big = load("d.yaml", "x: 99999999999999999999\n", DataFormat::kYaml);
  CHECK_FALSE(big->value);
  CHECK(big->diag_text.str().rfind("d.yaml:1:4: error: integer '99999999999999999999' does not fit", 0) == 0);

  auto empty = load("d.yaml", "", DataFormat::kYaml);
  REQUIRE(empty->value);
  CHECK(empty->value->is_map());
  CHECK(empty->value->size() == 0);
}

TEST_CASE("JSON data keeps document order and types") {
  auto l = load("d.json", R"({"z": 1, "a": [true, null, 2.5, "s"], "m": {"k": -3}})", DataFormat::kJson);
  REQUIRE(l->value);
  CHECK(l->value->as_map().keys() == std::vector<std::string>{"z", "a", "m"});
  const auto& list = at(*l->value, "a").as_list();
  CHECK(list[0].as_bool());
  CHECK(list[1].is_none());
  CHECK(list[2].as_float() == 2.5);
  CHECK(list[3].as_string() == "s");
  CHECK(at(at(*l->value, "m"), "k").as_int() == -3);
}

TEST_CASE("malformed JSON points at the offending character") {
  auto l = load("bad.json", "{\n  \"a\": 1,\n  \"b\": ]\n}\n", DataFormat::kJson);
  CHECK_FALSE(l->value);
  const std::string text = l->diag_text.str();
  CHECK(text.rfind("bad.json:3:8: error: malformed JSON: ", 0) == 0);
  CHECK(text.find("  \"b\": ]\n") != std::string::npos);
}

TEST_CASE("merging data: maps merge deeply, later values win, key order is kept") {
  auto base = load("a.yaml", "m: {x: 1, y: {p: 1, q: 2}}\nl: [1, 2]\ns: a\n", DataFormat::kYaml);
  auto over = load("b.json", R"({"m": {"y": {"q": 20, "r": 30}, "z": 3}, "l": [9], "t": true})", DataFormat::kJson);
  REQUIRE(base->value);
  REQUIRE(over->value);
  const Value merged = merge_data(*base->value, *over->value);
  CHECK(merged.as_map().keys() == std::vector<std::string>{"m", "l", "s", "t"});
  const Value& m = at(merged, "m");
  CHECK(m.as_map().keys() == std::vector<std::string>{"x", "y", "z"});
  CHECK(at(at(m, "y"), "p").as_int() == 1);
  CHECK(at(at(m, "y"), "q").as_int() == 20);
  CHECK(at(at(m, "y"), "r").as_int() == 30);
  CHECK(at(merged, "l").as_list().size() == 1);
  // The inputs are unchanged (values are shared copy-on-write).
  CHECK(at(at(at(*base->value, "m"), "y"), "q").as_int() == 2);
}

TEST_CASE("data formats from extensions and names") {
  CHECK(data_format_from_extension("a/b.yaml") == DataFormat::kYaml);
  CHECK(data_format_from_extension("b.YML") == DataFormat::kYaml);
  CHECK(data_format_from_extension("b.json") == DataFormat::kJson);
  CHECK(data_format_from_extension("b.txt") == DataFormat::kAuto);
  CHECK(parse_data_format("json") == DataFormat::kJson);
  CHECK_FALSE(parse_data_format("xml").has_value());
}

TEST_CASE("JSON edge cases: later duplicate keys win in place, huge integers are errors") {
  auto dup = load("d.json", R"({"a": 1, "b": 2, "a": 3})", DataFormat::kJson);
  REQUIRE(dup->value);
  CHECK(dup->value->as_map().keys() == std::vector<std::string>{"a", "b"});
  CHECK(at(*dup->value, "a").as_int() == 3);

  auto big = load("d.json", R"({"n": 18446744073709551615})", DataFormat::kJson);
  CHECK_FALSE(big->value);
  CHECK(big->diag_text.str().find("error: integer 18446744073709551615 does not fit in 64 bits") != std::string::npos);

  auto array_root = load("d.json", "[1, 2]", DataFormat::kJson);
  CHECK_FALSE(array_root->value);
  CHECK(array_root->diag_text.str().find("must be an object at the top level") != std::string::npos);

  auto truncated = load("d.json", "{\"a\": [1, 2", DataFormat::kJson);
  CHECK_FALSE(truncated->value);
  CHECK(truncated->diag_text.str().find("d.json:1:") == 0);
}
