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

inline bool have_paddle_refdata() {
  return std::filesystem::exists(paddle_refdata_dir() + "/ops.yaml") &&
         std::filesystem::exists(paddle_refdata_dir() + "/op_compat.yaml");
}

}  // namespace kforge::opdef::testing
