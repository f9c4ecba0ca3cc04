// schemas/op.schema.json documents exactly the keys the loader accepts: every known key has a
// described property in the schema, and every property of the schema is a key the loader knows.
#include <catch2/catch.hpp>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "opdef/op_loader.h"

using namespace kforge::opdef;

namespace {

nlohmann::json load_schema() {
  std::ifstream in(std::string(KFORGE_SOURCE_ROOT) + "/schemas/op.schema.json");
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  return nlohmann::json::parse(ss.str());
}

// The schema of a property, following a local "$ref" such as "#/$defs/name".
const nlohmann::json& resolve(const nlohmann::json& root, const nlohmann::json& node) {
  if (!node.contains("$ref")) return node;
  const std::string ref = node["$ref"];
  const std::string prefix = "#/$defs/";
  REQUIRE(ref.rfind(prefix, 0) == 0);
  return root["$defs"][ref.substr(prefix.size())];
}

// Collects "a" and "a.b" for every property of the op entry.
void collect(const nlohmann::json& root, const nlohmann::json& node, const std::string& prefix,
             std::vector<std::string>& out) {
  const nlohmann::json& n = resolve(root, node);
  if (!n.contains("properties")) return;
  for (auto it = n["properties"].begin(); it != n["properties"].end(); ++it) {
    out.push_back(prefix + it.key());
    collect(root, it.value(), prefix + it.key() + ".", out);
  }
}

}  // namespace

TEST_CASE("every key the loader accepts is in the schema, with a description") {
  const nlohmann::json schema = load_schema();
  CHECK(schema["$schema"] == "https://json-schema.org/draft/2020-12/schema");
  const nlohmann::json& op = schema["$defs"]["op"];
  for (const std::string& key : known_op_keys()) {
    INFO("key " << key);
    const nlohmann::json* node = &op;
    size_t begin = 0;
    for (;;) {
      const size_t dot = key.find('.', begin);
      const std::string part = key.substr(begin, dot == std::string::npos ? std::string::npos : dot - begin);
      const nlohmann::json& container = resolve(schema, *node);
      REQUIRE(container.contains("properties"));
      REQUIRE(container["properties"].contains(part));
      node = &container["properties"][part];
      if (dot == std::string::npos) break;
      begin = dot + 1;
    }
    CHECK(node->contains("description"));
    CHECK_FALSE((*node)["description"].get<std::string>().empty());
  }
}

TEST_CASE("every key of the schema is accepted by the loader") {
  const nlohmann::json schema = load_schema();
  std::vector<std::string> documented;
  collect(schema, schema["$defs"]["op"], "", documented);
  const std::vector<std::string>& known = known_op_keys();
  for (const std::string& key : documented) {
    INFO("schema key " << key);
    CHECK(std::find(known.begin(), known.end(), key) != known.end());
  }
  CHECK(documented.size() == known.size());
}

TEST_CASE("the schema's pattern values are the loader's") {
  const nlohmann::json schema = load_schema();
  const nlohmann::json& values = schema["$defs"]["op"]["properties"]["pattern"]["enum"];
  std::vector<std::string> listed;
  for (const auto& v : values) listed.push_back(v.get<std::string>());
  CHECK(listed == pattern_kind_spellings());
}
