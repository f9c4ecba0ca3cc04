// schemas/program.schema.json documents what the program YAML reader accepts: its example reads, every key
// and attribute kind it names is accepted, and keys it does not name are rejected.
#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <set>

#include "test_util.h"

using namespace kforge;
using namespace kforge::ir;

namespace {

nlohmann::json load_schema() {
  std::ifstream in(std::string(KFORGE_SOURCE_ROOT) + "/schemas/program.schema.json");
  REQUIRE(in);
  return nlohmann::json::parse(in);
}

std::set<std::string> keys(const nlohmann::json& properties) {
  std::set<std::string> out;
  for (auto it = properties.begin(); it != properties.end(); ++it) out.insert(it.key());
  return out;
}

}  // namespace

TEST_CASE("schema: its example is a valid program") {
  const nlohmann::json schema = load_schema();
  const std::string description = schema.at("description").get<std::string>();
  const size_t start = description.find("program: mlp");
  REQUIRE(start != std::string::npos);
  test::ReadResult r = test::read_buffer("example.yaml", description.substr(start) + "\n");
  INFO(r.diagnostics);
  REQUIRE(r.program);
  CHECK(r.program->top_level_ops().size() == 5);
}

TEST_CASE("schema: the keys it names are the keys the reader accepts") {
  const nlohmann::json schema = load_schema();
  CHECK(keys(schema.at("properties")) == std::set<std::string>{"program", "inputs", "params", "ops", "outputs"});
  CHECK(schema.at("required") == nlohmann::json::array({"program", "ops"}));
  const nlohmann::json& defs = schema.at("$defs");
  CHECK(keys(defs.at("op").at("properties")) == std::set<std::string>{"op", "in", "out", "attrs"});
  CHECK(keys(defs.at("tensor_declaration").at("properties")) == std::set<std::string>{"name", "dtype", "shape"});

  // Each typed attribute kind of the schema, with a value the reader must accept.
  const std::map<std::string, std::string> samples = {
      {"i32", "3"},     {"i64", "3"},         {"index", "3"},     {"f32", "0.5"},          {"f64", "0.5"},
      {"bool", "true"}, {"str", "x"},         {"dtype", "int64"}, {"layout", "NCHW"},      {"place", "cpu"},
      {"int_array", "[1, 2]"},                {"scalar", "[float32, 1.5]"}};
  std::set<std::string> sample_kinds;
  for (const auto& [kind, value] : samples) sample_kinds.insert(kind);
  CHECK(keys(defs.at("typed_attribute").at("properties")) == sample_kinds);
  for (const auto& [kind, value] : samples) {
    INFO(kind);
    test::ReadResult r = test::read_buffer("t.yaml", "program: t\nops:\n  - {op: a, attrs: {k: {" + kind + ": " + value + "}}}\n");
    INFO(r.diagnostics);
    CHECK(r.program.has_value());
  }
  CHECK_FALSE(test::read_buffer("t.yaml", "program: t\nops:\n  - {op: a, attrs: {k: {u8: 1}}}\n").program.has_value());

  // Every dtype the schema lists reads.
  for (const nlohmann::json& d : defs.at("dtype").at("enum")) {
    INFO(d);
    test::ReadResult r = test::read_buffer(
        "t.yaml", "program: t\ninputs: [{name: x, dtype: " + d.get<std::string>() + ", shape: [1]}]\nops: []\n");
    CHECK(r.program.has_value());
  }
  CHECK(defs.at("dtype").at("enum").size() == dtype_names().size());
}
