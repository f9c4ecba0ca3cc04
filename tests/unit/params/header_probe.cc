// Compiled by check_header.py with g++ and clang++ (C++17, strict warnings) and nvcc (host side): the whole API of
// kforge_params.h is instantiated, then one tensor is read back from a stream written here.
#include "kforge_params.h"

#include <cstdio>
#include <sstream>

int main() {
  // One float32 [2] tensor: versions, no LoD, TensorDesc {data_type: FP32, dims: 2}, data.
  const unsigned char stream[] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0x08, 0x05, 0x10,
                                  0x02, 0, 0, 0x80, 0x3f, 0, 0, 0, 0x40};
  std::istringstream in(std::string(reinterpret_cast<const char*>(stream), sizeof stream));
  const kforge::ParameterSpec specs[] = {{"w", kforge::DataType::kFloat32, 1, {2}, "float32 [2]"}};
  const uint32_t order[] = {0};
  std::vector<kforge::Tensor> out;
  kforge::Status s = kforge::params::load(in, "probe", specs, order, 1, &out);
  kforge::params::TensorHeader header;
  kforge::DataType dtype = kforge::DataType::kUndefined;
  const bool known = kforge::params::dtype_from_paddle_code(5, &dtype);
  std::istringstream again(std::string(reinterpret_cast<const char*>(stream), sizeof stream));
  kforge::Status h = kforge::params::read_tensor_header(again, sizeof stream, 0, &header);
  if (!s.ok() || !h.ok() || !known || out.size() != 1 || out[0].data_as<float>()[1] != 2.0f ||
      header.data_bytes != 8 || kforge::params::paddle_code_name(19)[0] != 'S') {
    std::fprintf(stderr, "probe failed: %s\n", s.message().c_str());
    return 1;
  }
  return kforge::params::load_file("/nonexistent", specs, order, 1, &out).ok() ? 1 : 0;
}
