// The YAML tree and the character locations of scalar values (folded, quoted, escaped, block).
#include <catch2/catch.hpp>

#include "opdef/yaml_tree.h"
#include "opdef_test_util.h"

using namespace kforge;
using namespace kforge::opdef;
using kforge::opdef::testing::Fixture;

namespace {

struct Parsed {
  Fixture f;
  uint32_t file = 0;
  std::vector<YamlNode> docs;

  explicit Parsed(const std::string& text) {
    file = f.sources.add_buffer("t.yaml", text);
    REQUIRE(parse_yaml(f.sources, file, f.diags, docs));
  }
  // "line:col" of character `i` of scalar `node`'s value.
  std::string at(const YamlNode& node, size_t i) {
    const LocatedText t = LocatedText::from_scalar(node, f.sources.contents(file), file);
    const LineCol lc = f.sources.line_col(t.loc(i));
    return std::to_string(lc.line) + ":" + std::to_string(lc.col);
  }
};

}  // namespace

TEST_CASE("the tree keeps document order, duplicate keys, flow style and offsets") {
  Parsed p("- op : a\n  k : 1\n  k : 2\n  param : [x, 'y']\n  m : {a : b}\n  n :\n");
  REQUIRE(p.docs.size() == 1);
  const YamlNode& entry = p.docs[0].children[0];
  REQUIRE(entry.is_map());
  REQUIRE(entry.map_size() == 6);
  CHECK(entry.key(1).value == "k");
  CHECK(entry.key(2).value == "k");
  CHECK(entry.value_at(2).value == "2");
  CHECK(entry.value_at(3).is_sequence());
  CHECK(entry.value_at(3).flow);
  CHECK(entry.value_at(3).children[1].style == YamlNode::Style::kSingleQuoted);
  CHECK(entry.value_at(4).is_map());
  CHECK(entry.value_at(5).is_null());
  CHECK(entry.key(1).offset == 11);
}

TEST_CASE("characters of a folded plain scalar map to their lines") {
  Parsed p(
      "args : (Tensor a,\n"
      "    float eps =\n"
      "\n"
      "      1.0e-6f)\n");
  const YamlNode& v = p.docs[0].value_at(0);
  // Folding: "(Tensor a, float eps =\n1.0e-6f)" (the blank line keeps one line break).
  CHECK(v.value == "(Tensor a, float eps =\n1.0e-6f)");
  CHECK(p.at(v, 0) == "1:8");
  CHECK(p.at(v, 10) == "1:18");  // the folded line break
  CHECK(p.at(v, 11) == "2:5");   // 'f' of float
  CHECK(p.at(v, 23) == "4:7");   // '1' of 1.0e-6f
  CHECK(p.at(v, v.value.size()) == "4:15");
}

TEST_CASE("characters of quoted scalars skip quotes and escapes") {
  Parsed p("a : \"x\\\"y\\tz\"\nb : 'it''s'\nc : \"\\u00e9t\\u00e9!\"\n");
  const YamlNode& a = p.docs[0].value_at(0);
  CHECK(a.value == "x\"y\tz");
  CHECK(p.at(a, 0) == "1:6");
  CHECK(p.at(a, 1) == "1:7");
  CHECK(p.at(a, 2) == "1:9");
  CHECK(p.at(a, 4) == "1:12");
  const YamlNode& b = p.docs[0].value_at(1);
  CHECK(b.value == "it's");
  CHECK(p.at(b, 3) == "2:10");
  const YamlNode& c = p.docs[0].value_at(2);
  CHECK(c.value == "\xC3\xA9t\xC3\xA9!");
  CHECK(p.at(c, 2) == "3:12");  // 't' after a two-byte escape
  CHECK(p.at(c, 5) == "3:19");  // '!'
}

TEST_CASE("block scalars start on the next line") {
  Parsed p("compute : |\n  max(x, 0)\n");
  const YamlNode& v = p.docs[0].value_at(0);
  CHECK(v.style == YamlNode::Style::kBlock);
  CHECK(p.at(v, 0) == "2:3");
}

TEST_CASE("syntax errors and aliases are located errors") {
  Fixture f;
  std::vector<YamlNode> docs;
  const uint32_t a = f.sources.add_buffer("a.yaml", "- op: [x\n");
  CHECK_FALSE(parse_yaml(f.sources, a, f.diags, docs));
  const uint32_t b = f.sources.add_buffer("b.yaml", "- &a op: x\n- *a\n");
  CHECK_FALSE(parse_yaml(f.sources, b, f.diags, docs));
  CHECK(f.messages() ==
        "a.yaml:2:1: error: invalid YAML: end of sequence flow not found\n"
        " \n"
        " ^\n"
        "b.yaml:2:3: error: YAML aliases are not supported in op files\n"
        " - *a\n"
        "   ^\n");
}

TEST_CASE("input on which yaml-cpp repeats an empty document ends with an error") {
  // Found by fuzzing: yaml-cpp 0.7 returned the same empty document forever here.
  Fixture f;
  std::vector<YamlNode> docs;
  const uint32_t file = f.sources.add_buffer("c.yaml", "    func: ftrl {dense -> dense}\n,  kernel :");
  CHECK_FALSE(parse_yaml(f.sources, file, f.diags, docs));
  CHECK(f.messages() ==
        "c.yaml:2:1: error: invalid YAML: unexpected ','\n"
        " ,  kernel :\n"
        " ^\n");
}
