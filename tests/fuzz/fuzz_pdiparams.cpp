// Fuzz target: the `.pdiparams` reader that generated classes use (templates/runtime/kforge_params.h). The
// input's own tensor headers are read first to build parameter specs that match them (so that loading goes past
// the spec checks into the data), then the whole stream is loaded against those specs and against fixed ones.
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "kforge_params.h"

using namespace kforge;

namespace {

constexpr size_t kMaxParameters = 16;

void load(const std::string& bytes, const std::vector<ParameterSpec>& specs) {
  std::vector<uint32_t> order(specs.size());
  for (uint32_t k = 0; k < order.size(); ++k) order[k] = k;
  std::istringstream in(bytes);
  std::vector<Tensor> tensors;
  const Status status = params::load(in, "fuzz.pdiparams", specs.data(), order.data(), specs.size(), &tensors);
  // The reader's promise: either every parameter, or none.
  if (status.ok() ? tensors.size() != specs.size() : !tensors.empty()) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  std::vector<ParameterSpec> matching;
  {
    std::istringstream in(bytes);
    uint64_t offset = 0;
    params::TensorHeader header;
    while (matching.size() < kMaxParameters && offset < size &&
           params::read_tensor_header(in, size, offset, &header).ok()) {
      ParameterSpec spec{"p", header.dtype, header.ndim, {}, "fuzzed"};
      for (int32_t a = 0; a < kMaxRank; ++a) spec.dims[a] = -1;
      matching.push_back(spec);
      offset = header.data_offset + header.data_bytes;
    }
  }
  load(bytes, matching);
  load(bytes, {ParameterSpec{"w", DataType::kFloat32, 2, {4, 3}, "float32 [4, 3]"}});
  load(bytes, {});
  return 0;
}
