// Every real Paddle program in refdata loads, and what it loads is what the file says.
#include <filesystem>
#include <fstream>
#include <iostream>

#include "program/pir_text_reader.h"
#include "test_util.h"

using namespace kforge;
using namespace kforge::ir;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("dump refdata (dev)") {
  for (const char* sub : {"pir_json", "pir_text"}) {
    const std::string dir = test::refdata_dir(sub);
    if (dir.empty()) continue;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      const std::string path = entry.path().string();
      test::ReadResult r = test::read_buffer(path, slurp(path));
      std::cout << "=== " << path << "\n" << r.diagnostics;
      if (r.program) std::cout << r.program->dump();
    }
  }
}
