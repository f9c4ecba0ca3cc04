// Fuzz target: an op YAML file (Paddle's ops.yaml format plus kforge's extension keys), loaded as a dense op
// file (inputs of even size) or as a sparse one (odd size: one parse per input, mutations cross over), then the
// PIR signatures derived from whatever loaded and printed as JSON.
#include "fuzz_input.h"
#include "opdef/op_loader.h"
#include "opdef/pir_signature.h"

using namespace kforge;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const opdef::OpFileKind kind = size % 2 == 0 ? opdef::OpFileKind::kDense : opdef::OpFileKind::kSparse;
  fuzz::FuzzInput input(data, size, "ops.yaml");
  opdef::OpLoader loader(input.sources(), input.diags());
  loader.add_buffer(input.file(), kind);
  const opdef::OpLibrary library = std::move(loader).finish();
  if (!input.diags().has_errors()) {
    const auto signatures = opdef::derive_pir_signatures(library, nullptr, input.diags());
    if (!input.diags().has_errors()) static_cast<void>(opdef::signatures_to_json(signatures, input.sources()));
  }
  input.require_located_errors();
  return 0;
}
