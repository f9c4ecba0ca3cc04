// Bad input never crashes a reader: every prefix of the real programs and seeded random corruptions of them
// end in diagnostics (or in a program that passes its own structure check), and absurd nesting is refused.
#include <filesystem>
#include <fstream>
#include <random>

#include "test_util.h"

using namespace kforge;
using namespace kforge::ir;
using kforge::ir::test::slurp;

namespace {

// Reads `text` as `path`; the reader must either fail with an error or give a sound program.
void read_safely(const std::string& path, const std::string& text) {
  test::ReadResult r = test::read_buffer(path, text);
  if (r.program) {
    INFO(r.diagnostics);
    CHECK(r.program->check_structure() == "");
    (void)r.program->dump();
  } else {
    CHECK(r.diagnostics.find("error") != std::string::npos);
  }
}

std::vector<std::string> real_files() {
  std::vector<std::string> out;
  for (const char* sub : {"pir_json", "pir_text"}) {
    const std::string dir = test::refdata_dir(sub);
    if (dir.empty()) continue;
    for (const auto& e : std::filesystem::directory_iterator(dir)) out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("robustness: every prefix of every real program") {
  const std::vector<std::string> files = real_files();
  if (files.empty()) {
    WARN("SKIPPED: refdata is absent");
    return;
  }
  for (const std::string& path : files) {
    const std::string text = slurp(path);
    INFO(path);
    // Every byte for the first 2 KB (where the structure is), then every 7th.
    for (size_t n = 0; n < text.size(); n += n < 2048 ? 1 : 7) {
      INFO("prefix of " << n << " bytes");
      read_safely(path, text.substr(0, n));
    }
  }
}

TEST_CASE("robustness: seeded random corruptions of every real program") {
  const std::vector<std::string> files = real_files();
  if (files.empty()) {
    WARN("SKIPPED: refdata is absent");
    return;
  }
  std::mt19937 rng(20250101);
  const std::string alphabet = "{}[]()<>:,=%\"\\-0123456789.xefinab_ \n^#";
  for (const std::string& path : files) {
    const std::string text = slurp(path);
    INFO(path);
    for (int round = 0; round < 300; ++round) {
      std::string mutated = text;
      const int edits = 1 + static_cast<int>(rng() % 4);
      for (int e = 0; e < edits && !mutated.empty(); ++e) {
        const size_t at = rng() % mutated.size();
        switch (rng() % 3) {
          case 0: mutated[at] = alphabet[rng() % alphabet.size()]; break;
          case 1: mutated.erase(at, 1 + rng() % 8); break;
          default: mutated.insert(at, 1, alphabet[rng() % alphabet.size()]); break;
        }
      }
      INFO("round " << round << ":\n" << mutated);
      read_safely(path, mutated);
    }
  }
}

TEST_CASE("robustness: absurd nesting is refused, not recursed into") {
  const std::string deep_vec = std::string(5000, '[');
  // PIR text: a vector type nested 5000 deep.
  std::string text = "{\n    (%0) = \"pd_op.a\" () {} : () -> ";
  for (int i = 0; i < 5000; ++i) text += "vec[";
  text += "\n}\n";
  CHECK(test::read_errors("deep.txt", text).find("types nested more than 64 deep") != std::string::npos);
  // PIR text: an attribute array nested 5000 deep.
  CHECK(test::read_errors("deep.txt", "{\n    (%0) = \"pd_op.a\" () {a:" + deep_vec + "} : () -> f32\n}\n")
            .find("attributes nested more than 64 deep") != std::string::npos);
  // PIR JSON: arrays nested 5000 deep inside an attribute.
  const std::string json = R"({"base_code": {"magic": "pir", "version": 1}, "program": {"regions": [{"blocks": [
    {"args": [], "ops": [{"#": "1.a", "I": [], "O": [], "A": [{"N": "a", "AT": )" + deep_vec +
                           std::string(5000, ']') + "}]}]}]}]}}";
  CHECK(test::read_errors("deep.json", json).find("expected an attribute object") != std::string::npos);
  // Program YAML: a flow list nested 5000 deep.
  test::ReadResult r = test::read_buffer("deep.yaml", "program: t\nops:\n  - {op: a, attrs: {a: " + deep_vec +
                                                          std::string(5000, ']') + "}}\n");
  CHECK_FALSE(r.program.has_value());
  CHECK(r.diagnostics.find("error") != std::string::npos);
}
