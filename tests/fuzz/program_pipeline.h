// The back half of the program fuzz targets: a program that reads without error is compiled (verify, shape
// inference, constant folding, fusion, lowering, memory plan) against Paddle's op set, as `kforge compile` does,
// so hostile shapes, attributes and op graphs reach the passes too.
//
// The op set is read once per process from the refdata (ops.yaml, static_ops.yaml, op_compat.yaml, at
// KFORGE_PADDLE_REFDATA or $KFORGE_PADDLE_REFDATA) and kforge's overlays; without refdata the targets only read.
#pragma once

#include <memory>
#include <optional>

#include "fuzz_input.h"
#include "opdef/op_compat.h"
#include "opdef/op_library.h"
#include "passes/op_set.h"
#include "program/program.h"

namespace kforge::fuzz {

class ProgramPipeline {
 public:
  /// The process-wide op set (built by LLVMFuzzerInitialize, before libFuzzer times the first input).
  static const ProgramPipeline& instance();

  /// The op files' buffers, which every run's SourceManager starts from (FuzzInput's prelude); empty without
  /// refdata.
  const SourceManager& prelude() const { return sources_; }
  /// Compiles `program` (read from `input`) against the op set, when there is one.
  void compile(ir::Program& program, FuzzInput& input) const;

 private:
  ProgramPipeline();

  SourceManager sources_;
  std::optional<opdef::OpLibrary> library_;
  opdef::OpCompat compat_;
  std::unique_ptr<passes::OpSet> op_set_;
};

}  // namespace kforge::fuzz
