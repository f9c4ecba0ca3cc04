// Fuzz target: a PIR text program read by ir::read_pir_text and, when it reads without error, compiled against Paddle's op
// set (program_pipeline.h).
#include "fuzz_input.h"
#include "program/pir_text_reader.h"
#include "program_pipeline.h"

using namespace kforge;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const fuzz::ProgramPipeline& pipeline = fuzz::ProgramPipeline::instance();
  fuzz::FuzzInput input(data, size, "program.txt", pipeline.prelude());
  std::optional<ir::Program> program = ir::read_pir_text(input.sources(), input.file(), input.diags());
  if (program && !input.diags().has_errors()) pipeline.compile(*program, input);
  input.require_located_errors();
  return 0;
}
