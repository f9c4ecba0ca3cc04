// The table of compile targets (driver/compile_target.h): every target found by its name, and the names of the
// targets that state a fact, as the compile command's "FLAG needs --target ..." errors print them.
#include <catch2/catch.hpp>

#include "driver/compile_target.h"

using kforge::driver::compile_target_names;
using kforge::driver::find_compile_target;
using kforge::passes::CompileBackend;
using kforge::passes::CompileTarget;

TEST_CASE("compile targets: found by name, each rendered by its backend") {
  const CompileTarget* cpu = find_compile_target("cpu");
  const CompileTarget* cuda = find_compile_target("cuda");
  REQUIRE(cpu != nullptr);
  REQUIRE(cuda != nullptr);
  CHECK(cpu->backend == CompileBackend::kCpu);
  CHECK(cuda->backend == CompileBackend::kCuda);
  CHECK(find_compile_target("rocm") == nullptr);
  CHECK(compile_target_names() == "cpu or cuda");
}

TEST_CASE("compile targets: the names of the targets that take a flag") {
  CHECK(compile_target_names([](const CompileTarget& t) { return t.cuda_graph; }) == "cuda");
  CHECK(compile_target_names([](const CompileTarget& t) { return t.blocked_layout; }) == "cpu");
  CHECK(compile_target_names([](const CompileTarget& t) { return t.half_precision; }) == "cuda");
  CHECK(compile_target_names([](const CompileTarget& t) { return t.cuda_plan; }) == "cuda");
}

TEST_CASE("compile targets: the CUDA backend's own facts reach the target") {
  const CompileTarget& cuda = *find_compile_target("cuda");
  REQUIRE(cuda.float32_ops != nullptr);
  CHECK(cuda.float32_ops().count("cumsum") == 1);
  CHECK(find_compile_target("cpu")->float32_ops == nullptr);
}
