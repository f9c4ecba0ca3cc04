// A tensor bundle: named dense tensors in one binary file, the format in which the reference interpreter and
// the harness of generated code exchange inputs, parameters, outputs and per-op traces
// (tools/check-program, tests/e2e). Plain C++17 over kforge_runtime.h so generated-code harnesses can use it.
//
// Layout (host byte order): "KFTB", u32 version (1), u32 count, then per tensor: u32 name length, the name,
// i32 dtype (kforge::DataType), i32 ndim, i64 dims[ndim], u64 byte count, the bytes (row-major).
#ifndef KFORGE_TOOLS_INTERP_TENSOR_BUNDLE_H_
#define KFORGE_TOOLS_INTERP_TENSOR_BUNDLE_H_

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "kforge_runtime.h"

namespace kforge::bundle {

struct NamedTensor {
  std::string name;
  kforge::Tensor tensor;  // owns its bytes after read(); any CPU tensor for write()
};

/// A copy of `t` that owns its bytes.
inline kforge::Status deep_copy(const kforge::Tensor& t, kforge::Tensor* out) {
  kforge::Tensor copy;
  copy.dtype = t.dtype;
  KFORGE_RETURN_IF_ERROR(copy.set_dims(t.dims, static_cast<size_t>(t.ndim)));
  KFORGE_RETURN_IF_ERROR(copy.allocate());
  if (t.bytes() > 0) std::memcpy(copy.data, t.data, t.bytes());
  *out = std::move(copy);
  return kforge::Status::OK();
}

inline kforge::Status write(const std::string& path, const std::vector<NamedTensor>& tensors) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return kforge::Status::Error("cannot write '", path, "'");
  auto put = [&out](const void* p, size_t n) { out.write(static_cast<const char*>(p), static_cast<std::streamsize>(n)); };
  const uint32_t version = 1, count = static_cast<uint32_t>(tensors.size());
  put("KFTB", 4);
  put(&version, 4);
  put(&count, 4);
  for (const NamedTensor& nt : tensors) {
    const uint32_t name_len = static_cast<uint32_t>(nt.name.size());
    const int32_t dtype = static_cast<int32_t>(nt.tensor.dtype), ndim = nt.tensor.ndim;
    const uint64_t bytes = nt.tensor.bytes();
    put(&name_len, 4);
    put(nt.name.data(), name_len);
    put(&dtype, 4);
    put(&ndim, 4);
    put(nt.tensor.dims, sizeof(int64_t) * static_cast<size_t>(ndim));
    put(&bytes, 8);
    if (bytes > 0) put(nt.tensor.data, bytes);
  }
  out.flush();
  if (!out) return kforge::Status::Error("error writing '", path, "'");
  return kforge::Status::OK();
}

inline kforge::Status read(const std::string& path, std::vector<NamedTensor>* tensors) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return kforge::Status::Error("cannot open '", path, "'");
  auto get = [&in](void* p, size_t n) {
    in.read(static_cast<char*>(p), static_cast<std::streamsize>(n));
    return static_cast<bool>(in);
  };
  char magic[4];
  uint32_t version = 0, count = 0;
  if (!get(magic, 4) || std::memcmp(magic, "KFTB", 4) != 0 || !get(&version, 4) || version != 1 || !get(&count, 4)) {
    return kforge::Status::Error("'", path, "' is not a tensor bundle");
  }
  tensors->clear();
  for (uint32_t i = 0; i < count; ++i) {
    NamedTensor nt;
    uint32_t name_len = 0;
    int32_t dtype = 0, ndim = 0;
    if (!get(&name_len, 4) || name_len > (1u << 20)) return kforge::Status::Error("'", path, "' is truncated");
    nt.name.resize(name_len);
    if (!get(&nt.name[0], name_len) || !get(&dtype, 4) || !get(&ndim, 4) || ndim < 0 || ndim > kforge::kMaxRank) {
      return kforge::Status::Error("'", path, "' is truncated or corrupt");
    }
    int64_t dims[kforge::kMaxRank] = {};
    uint64_t bytes = 0;
    if (!get(dims, sizeof(int64_t) * static_cast<size_t>(ndim)) || !get(&bytes, 8)) {
      return kforge::Status::Error("'", path, "' is truncated");
    }
    nt.tensor.dtype = static_cast<kforge::DataType>(dtype);
    KFORGE_RETURN_IF_ERROR(nt.tensor.set_dims(dims, static_cast<size_t>(ndim)));
    if (bytes != nt.tensor.bytes()) return kforge::Status::Error("'", path, "': size mismatch for '", nt.name, "'");
    KFORGE_RETURN_IF_ERROR(nt.tensor.allocate());
    if (bytes > 0 && !get(nt.tensor.data, bytes)) return kforge::Status::Error("'", path, "' is truncated");
    tensors->push_back(std::move(nt));
  }
  return kforge::Status::OK();
}

/// The tensor named `name`, or null.
inline const kforge::Tensor* find(const std::vector<NamedTensor>& tensors, const std::string& name) {
  for (const NamedTensor& nt : tensors) {
    if (nt.name == name) return &nt.tensor;
  }
  return nullptr;
}

}  // namespace kforge::bundle

#endif  // KFORGE_TOOLS_INTERP_TENSOR_BUNDLE_H_
