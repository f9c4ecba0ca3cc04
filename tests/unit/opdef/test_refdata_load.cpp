// Paddle's real ops.yaml and op_compat.yaml load with no error, and the only warnings are the known
// problems of op_compat.yaml (names claimed by two entries), each checked here by name.
#include <catch2/catch.hpp>

#include <regex>
#include <sstream>

#include "opdef_test_util.h"
#include "refdata.h"

using namespace kforge;
using namespace kforge::opdef;

TEST_CASE("Paddle's ops.yaml and op_compat.yaml load without errors") {
  if (!testing::have_paddle_refdata()) {
    WARN("SKIPPED: Paddle refdata not found at " << testing::paddle_refdata_dir()
                                                 << " (set KFORGE_PADDLE_REFDATA); the refdata load test did not run");
    return;
  }
  const std::string dir = testing::paddle_refdata_dir();
  SourceManager sources;
  std::ostringstream out;
  DiagnosticEngine diags(sources, out);
  const OpLibrary lib = load_op_library({dir + "/ops.yaml"}, sources, diags);
  INFO(out.str());
  CHECK(diags.error_count() == 0);
  CHECK(diags.warning_count() == 0);  // ops.yaml itself is clean
  CHECK(lib.size() == 474);
  const OpCompat compat = load_op_compat(dir + "/op_compat.yaml", sources, diags);
  CHECK(diags.error_count() == 0);
  CHECK(compat.entries().size() == 545);

  // Every warning, by its first line.
  std::vector<std::string> warnings;
  const std::regex warning_line(R"(op_compat\.yaml:(\d+):\d+: warning: (.*))");
  std::istringstream lines(out.str());
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_search(line, m, warning_line)) warnings.push_back(m[1].str() + ": " + m[2].str());
  }
  const std::vector<std::string> expected = {
      "3159: duplicate op_compat entry for op 'repeat_interleave'; only the first one is used, as in Paddle",
      "3430: duplicate op_compat entry for op 'shape'; only the first one is used, as in Paddle",
      "3818: backward op 'tanh_shrink_grad' is already listed by the op_compat entry of 'array_to_tensor'; that "
      "entry is used for it, as in Paddle",
      "4183: duplicate op_compat entry for op 'dgc'; only the first one is used, as in Paddle",
      "4252: duplicate op_compat entry for op 'fused_elemwise_add_activation'; only the first one is used, as in "
      "Paddle",
      "4394: duplicate op_compat entry for op 'match_matrix_tensor'; only the first one is used, as in Paddle",
      "4473: duplicate op_compat entry for op 'rank_attention'; only the first one is used, as in Paddle",
      "4547: backward op 'set_value_grad' is already listed by the op_compat entry of 'set_value'; that entry is "
      "used for it, as in Paddle",
  };
  CHECK(warnings == expected);
  CHECK(diags.warning_count() == expected.size());
}

TEST_CASE("spot checks of the real ops.yaml model") {
  if (!testing::have_paddle_refdata()) {
    WARN("SKIPPED: Paddle refdata not found at " << testing::paddle_refdata_dir());
    return;
  }
  SourceManager sources;
  std::ostringstream out;
  DiagnosticEngine diags(sources, out);
  const OpLibrary lib = load_op_library({testing::paddle_refdata_dir() + "/ops.yaml"}, sources, diags);
  REQUIRE(diags.error_count() == 0);

  // adadelta_: a default broken across lines, "float epsilon =⏎ 1.0e-6f".
  const Op* adadelta = lib.find("adadelta_");
  REQUIRE(adadelta);
  const Attribute* eps = adadelta->find_attribute("epsilon");
  REQUIRE(eps);
  CHECK(eps->default_value->text == "1.0e-6f");
  CHECK(sources.line_col(eps->default_value->loc).line == sources.line_col(eps->loc).line + 1);

  // unbind: a full C++ size expression.
  const Op* unbind = lib.find("unbind");
  REQUIRE(unbind);
  CHECK(unbind->outputs[0].size_expr == "axis<0 ? input.dims()[input.dims().size()+axis]:input.dims()[axis]");

  // adam_: two kernels with signatures, the second on its own line.
  const Op* adam = lib.find("adam_");
  REQUIRE(adam);
  REQUIRE(adam->kernel->funcs.size() == 2);
  CHECK(adam->kernel->funcs[1].name == "adam_dense_param_sparse_grad");
  CHECK(adam->kernel->funcs[1].input_kinds[1] == TensorKind::kSelectedRows);
  CHECK(sources.line_col(adam->kernel->funcs[1].loc).line == sources.line_col(adam->kernel->funcs[0].loc).line + 1);

  // Default kinds that occur in the file.
  size_t kinds[7] = {};
  for (const Op& op : lib.ops()) {
    for (const Attribute& a : op.attributes) {
      if (a.default_value) ++kinds[static_cast<int>(a.default_value->kind)];
    }
  }
  for (int k = 0; k < 7; ++k) {
    INFO("default kind " << default_kind_name(static_cast<DefaultKind>(k)));
    CHECK(kinds[k] > 0);
  }
}

TEST_CASE("Paddle's 9 op files load together, as its PIR generator reads them") {
  if (!testing::have_paddle_op_files()) {
    WARN("SKIPPED: Paddle's 9 op files not found under "
         << testing::paddle_refdata_dir() << " (set KFORGE_PADDLE_REFDATA); the 9-file load test did not run");
    return;
  }
  const std::string dir = testing::paddle_refdata_dir();
  SourceManager sources;
  std::ostringstream out;
  DiagnosticEngine diags(sources, out);
  std::vector<OpFile> files;
  for (const testing::PaddleOpFile& f : testing::kPaddleOpFiles) {
    files.push_back({dir + "/" + f.path, f.sparse ? OpFileKind::kSparse : OpFileKind::kDense});
  }
  const OpLibrary lib = load_op_library(files, sources, diags);
  INFO(out.str());
  CHECK(diags.error_count() == 0);
  // The two warnings are problems of the data, each checked by its message.
  std::vector<std::string> warnings;
  const std::regex warning_line(R"(/yaml/(\w+\.yaml:\d+):\d+: warning: (.*))");
  std::istringstream lines(out.str());
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_search(line, m, warning_line)) warnings.push_back(m[1].str() + ": " + m[2].str());
  }
  CHECK(warnings == std::vector<std::string>{
                        "static_ops.yaml:649: 'PullGpupsSparseKernelKey' in 'kernel.data_type' is not an argument "
                        "of op 'pull_gpups_sparse', so it cannot select the kernel",
                        "static_ops.yaml:935: duplicate key 'interfaces' in op 'unique'; the last one is used",
                    });
  // Every entry of every file is an op: 474 + 347 + 80 + 10 + 86 + 49 + 1 dense, 51 + 45 sparse.
  size_t dense = 0, sparse = 0;
  for (const Op& op : lib.ops()) ++(op.sparse ? sparse : dense);
  CHECK(dense == 1047);
  CHECK(sparse == 96);

  // The sparse abs is an op of its own beside the dense one.
  const Op* abs = lib.find("abs");
  const Op* abs_sp = lib.find_sparse("abs");
  REQUIRE(abs);
  REQUIRE(abs_sp);
  CHECK(!abs->sparse);
  CHECK(abs_sp->sparse);
  CHECK(abs_sp->kernel->funcs.size() == 2);
  CHECK(lib.find_sparse("conv2d") == nullptr);

  // Ops without outputs.
  const Op* send = lib.find("send_v2");
  REQUIRE(send);
  CHECK(send->outputs.empty());
  CHECK(lib.find("push_dense")->outputs.empty());

  // A composite with keyword arguments (static_backward.yaml).
  const Op* mdg = lib.find("matmul_double_grad");
  REQUIRE(mdg);
  REQUIRE(mdg->composite);
  CHECK(mdg->composite->args.size() == 7);
  CHECK(mdg->composite->keywords[5] == "transpose_x");
  CHECK(mdg->composite->args[5] == "false");
  CHECK(mdg->composite->keywords[0].empty());
}
