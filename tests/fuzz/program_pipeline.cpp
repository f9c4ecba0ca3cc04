#include "program_pipeline.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "opdef/op_loader.h"
#include "passes/pipeline.h"

namespace kforge::fuzz {

namespace {

std::optional<std::string> read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string refdata_dir() {
  if (const char* dir = std::getenv("KFORGE_PADDLE_REFDATA")) return dir;
  return KFORGE_PADDLE_REFDATA;
}

}  // namespace

const ProgramPipeline& ProgramPipeline::instance() {
  static const ProgramPipeline pipeline;
  return pipeline;
}

ProgramPipeline::ProgramPipeline() {
  const std::string refdata = refdata_dir();
  const std::vector<std::string> op_paths = {refdata + "/ops.yaml", refdata + "/yaml/static_ops.yaml",
                                             std::string(KFORGE_SOURCE_ROOT) + "/ops/paddle_overlay.yaml",
                                             std::string(KFORGE_SOURCE_ROOT) + "/ops/paddle_overlay_static.yaml"};
  const std::string compat_path = refdata + "/op_compat.yaml";
  std::vector<std::string> op_texts;
  for (const std::string& path : op_paths) {
    std::optional<std::string> text = read_text(path);
    if (!text) {
      std::fprintf(stderr, "fuzz: %s is missing: programs are only read, not compiled\n", path.c_str());
      return;
    }
    op_texts.push_back(std::move(*text));
  }
  std::optional<std::string> compat_text = read_text(compat_path);

  // Every run's SourceManager starts as a copy of sources_, so the op set's locations resolve there too.
  DiagnosticEngine diags(sources_, std::cerr);
  opdef::OpLoader loader(sources_, diags);
  for (size_t i = 0; i < op_paths.size(); ++i) loader.add_buffer(sources_.add_buffer(op_paths[i], std::move(op_texts[i])));
  library_.emplace(std::move(loader).finish());
  if (compat_text) {
    compat_ = opdef::read_op_compat(sources_, sources_.add_buffer(compat_path, std::move(*compat_text)), diags);
  }
  op_set_ = std::make_unique<passes::OpSet>(*library_, compat_text ? &compat_ : nullptr, diags);
  if (diags.has_errors()) {
    std::fprintf(stderr, "fuzz: the op set does not load without errors\n");
    std::abort();
  }
}

void ProgramPipeline::compile(ir::Program& program, FuzzInput& input) const {
  if (!op_set_) return;
  // The program passes `kforge compile` runs by default (passes/pipeline.h, with the targets of
  // src/driver/compile_target.cpp): the NHWC layout plan, and for --target cuda also conv2d_transpose left NCHW and
  // broadcast symbols unified. Inputs of odd size take the CUDA
  // target's options, so that both halves of the corpus reach both; half of the CPU ones plan NCHW8c regions
  // (--layout nchw8c) instead of NHWC.
  passes::PipelineOptions options;
  const bool cuda = input.text().size() % 2 == 1;
  const bool blocked = input.text().size() % 4 == 2;
  options.layout = blocked ? passes::LayoutChoice::kNchw8c : passes::LayoutChoice::kNhwc;
  options.layout_options.transposed_convolutions = !cuda;
  options.unify_broadcast_symbols = cuda;
  static_cast<void>(passes::compile_program(program, *op_set_, input.diags(), options));
}

}  // namespace kforge::fuzz

// libFuzzer calls this once before the first input: the op set (several seconds under ASan for Paddle's ops.yaml) is
// read here rather than in the first input's call, whose time counts against the hang limit (-timeout, wall time):
// on a loaded machine that first call was reported as a 10 s hang (a fuzz finding with an empty input). Defined
// beside ProgramPipeline::instance, which every program target uses, so the linker keeps it for each of them.
extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  static_cast<void>(kforge::fuzz::ProgramPipeline::instance());
  return 0;
}
