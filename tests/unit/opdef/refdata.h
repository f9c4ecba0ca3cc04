// Where the tests find Paddle's real files, and whether they are there.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

namespace kforge::opdef::testing {

/// $KFORGE_PADDLE_REFDATA, else ../shared/refdata/paddle beside the checkout.
inline std::string paddle_refdata_dir() {
  if (const char* env = std::getenv("KFORGE_PADDLE_REFDATA"); env && *env) return env;
  return KFORGE_PADDLE_REFDATA;
}

/// Paddle's 9 op files in the order its PIR generator reads them (paddle/fluid/pir/dialect/CMakeLists.txt,
/// op_yaml_files), relative to paddle_refdata_dir(), and whether each is a sparse op file.
struct PaddleOpFile {
  const char* path;
  bool sparse;
};
inline const PaddleOpFile kPaddleOpFiles[] = {
    {"ops.yaml", false},           {"yaml/backward.yaml", false},       {"yaml/fused_ops.yaml", false},
    {"yaml/fused_backward.yaml", false}, {"yaml/static_ops.yaml", false}, {"yaml/static_backward.yaml", false},
    {"yaml/update_ops.yaml", false},     {"yaml/sparse_ops.yaml", true},  {"yaml/sparse_backward.yaml", true},
};

/// Whether the 9 op files, op_compat.yaml and the signature oracle are all there.
inline bool have_paddle_op_files() {
  for (const PaddleOpFile& f : kPaddleOpFiles) {
    if (!std::filesystem::exists(paddle_refdata_dir() + "/" + f.path)) return false;
  }
  return std::filesystem::exists(paddle_refdata_dir() + "/op_compat.yaml") &&
         std::filesystem::exists(paddle_refdata_dir() + "/pir_op_signatures.json");
}

inline bool have_paddle_refdata() {
  return std::filesystem::exists(paddle_refdata_dir() + "/ops.yaml") &&
         std::filesystem::exists(paddle_refdata_dir() + "/op_compat.yaml");
}

}  // namespace kforge::opdef::testing
