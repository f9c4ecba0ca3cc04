// NumPy .npy files (format versions 1.0 to 3.0) as kforge tensors, for tools/run-model's runner. Plain C++17 over
// kforge_runtime.h. Only what numpy.save writes for a C-contiguous little-endian array of a dtype kforge has;
// anything else is an error that says what the file holds.
#ifndef KFORGE_TOOLS_RUN_MODEL_NPY_H_
#define KFORGE_TOOLS_RUN_MODEL_NPY_H_

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "kforge_runtime.h"

namespace kforge::npy {

struct Descr {
  const char* text;  // numpy's dtype.str
  DataType dtype;
};
// bfloat16 has no numpy dtype: read_file refuses it, write_file widens it to float32.
constexpr Descr kDescrs[] = {
    {"|b1", DataType::kBool},     {"|i1", DataType::kInt8},      {"|u1", DataType::kUInt8},
    {"<i2", DataType::kInt16},    {"<i4", DataType::kInt32},     {"<i8", DataType::kInt64},
    {"<f2", DataType::kFloat16},  {"<f4", DataType::kFloat32},   {"<f8", DataType::kFloat64},
    {"<c8", DataType::kComplex64}, {"<c16", DataType::kComplex128},
};

namespace detail {

// The quoted value after `'key':` in a .npy header dict, or "".
inline std::string dict_value(const std::string& header, const std::string& key) {
  const size_t k = header.find("'" + key + "'");
  if (k == std::string::npos) return "";
  size_t v = header.find(':', k);
  if (v == std::string::npos) return "";
  ++v;
  while (v < header.size() && header[v] == ' ') ++v;
  if (v >= header.size()) return "";
  if (header[v] == '\'') {
    const size_t end = header.find('\'', v + 1);
    return end == std::string::npos ? "" : header.substr(v + 1, end - v - 1);
  }
  if (header[v] == '(') {
    const size_t end = header.find(')', v);
    return end == std::string::npos ? "" : header.substr(v, end - v + 1);
  }
  size_t end = v;
  while (end < header.size() && header[end] != ',' && header[end] != '}') ++end;
  return header.substr(v, end - v);
}

inline bool parse_shape(const std::string& text, std::vector<int64_t>* dims) {
  if (text.size() < 2 || text.front() != '(' || text.back() != ')') return false;
  dims->clear();
  size_t i = 1;
  while (i < text.size() - 1) {
    while (text[i] == ' ' || text[i] == ',') ++i;
    if (i >= text.size() - 1) break;
    if (text[i] < '0' || text[i] > '9') return false;
    int64_t d = 0;
    while (text[i] >= '0' && text[i] <= '9') {
      if (d > (INT64_C(1) << 40)) return false;
      d = d * 10 + (text[i++] - '0');
    }
    if (text[i] == 'L') ++i;  // Python 2 longs
    dims->push_back(d);
  }
  return true;
}

inline float bfloat16_to_float(uint16_t v) {
  const uint32_t bits = static_cast<uint32_t>(v) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

}  // namespace detail

/// Reads `path` into `*out` (which owns its bytes).
inline Status read_file(const std::string& path, Tensor* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::Error("cannot open '", path, "'");
  const std::string what = "'" + path + "'";
  char magic[8];
  if (!in.read(magic, 8) || std::memcmp(magic, "\x93NUMPY", 6) != 0) return Status::Error(what, " is not a .npy file");
  const int major = static_cast<unsigned char>(magic[6]);
  if (major < 1 || major > 3) return Status::Error(what, ": .npy format version ", major, " is not supported");
  unsigned char len_bytes[4] = {0, 0, 0, 0};
  const int len_size = major == 1 ? 2 : 4;
  if (!in.read(reinterpret_cast<char*>(len_bytes), len_size)) return Status::Error(what, " is truncated");
  const uint32_t header_len = static_cast<uint32_t>(len_bytes[0]) | static_cast<uint32_t>(len_bytes[1]) << 8 |
                              static_cast<uint32_t>(len_bytes[2]) << 16 | static_cast<uint32_t>(len_bytes[3]) << 24;
  if (header_len > (1u << 20)) return Status::Error(what, ": the .npy header claims ", header_len, " bytes");
  std::string header(header_len, '\0');
  if (!in.read(&header[0], header_len)) return Status::Error(what, " is truncated");

  const std::string descr = detail::dict_value(header, "descr");
  const std::string fortran = detail::dict_value(header, "fortran_order");
  std::vector<int64_t> dims;
  if (descr.empty() || fortran.empty() || !detail::parse_shape(detail::dict_value(header, "shape"), &dims)) {
    return Status::Error(what, ": cannot read the .npy header ", header);
  }
  if (fortran != "False") return Status::Error(what, " is in Fortran order; save a C-contiguous array");
  DataType dtype = DataType::kUndefined;
  for (const Descr& d : kDescrs) {
    // numpy writes '<' for little-endian and '|' for one byte; '=' (native) only from hand-made headers.
    if (descr == d.text || (descr.size() > 1 && descr[0] == '=' && descr.substr(1) == d.text + 1)) dtype = d.dtype;
  }
  if (dtype == DataType::kUndefined) {
    return Status::Error(what, " holds numpy dtype '", descr, "', which kforge cannot take (little-endian ",
                         "bool, int8/16/32/64, uint8, float16/32/64, complex64/128)");
  }
  Tensor t;
  t.dtype = dtype;
  KFORGE_RETURN_IF_ERROR(t.set_dims(dims));
  KFORGE_RETURN_IF_ERROR(t.allocate());
  const size_t bytes = t.bytes();
  if (bytes > 0 && !in.read(static_cast<char*>(t.data), static_cast<std::streamsize>(bytes))) {
    return Status::Error(what, " is truncated: ", name_of(dtype), " ", t.dims_string(), " needs ", bytes,
                         " bytes of data");
  }
  if (in.peek() != std::char_traits<char>::eof()) {
    return Status::Error(what, " has data after its ", name_of(dtype), " ", t.dims_string(), " array");
  }
  *out = std::move(t);
  return Status::OK();
}

/// Writes `t` (a CPU tensor) to `path` as format version 1.0; bfloat16 is widened to float32 exactly.
inline Status write_file(const std::string& path, const Tensor& t) {
  const Tensor* src = &t;
  Tensor widened;
  if (t.dtype == DataType::kBFloat16) {
    widened.dtype = DataType::kFloat32;
    KFORGE_RETURN_IF_ERROR(widened.set_dims(t.dims, static_cast<size_t>(t.ndim)));
    KFORGE_RETURN_IF_ERROR(widened.allocate());
    for (int64_t i = 0; i < t.numel(); ++i) {
      widened.data_as<float>()[i] = detail::bfloat16_to_float(t.data_as<uint16_t>()[i]);
    }
    src = &widened;
  }
  const char* descr = nullptr;
  for (const Descr& d : kDescrs) {
    if (d.dtype == src->dtype) descr = d.text;
  }
  if (descr == nullptr) return Status::Error("cannot write ", name_of(src->dtype), " as .npy");
  std::string shape = "(";
  for (int32_t i = 0; i < src->ndim; ++i) shape += (i ? ", " : "") + std::to_string(src->dims[i]);
  shape += src->ndim == 1 ? ",)" : ")";  // Python's tuple spelling
  std::string header = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  // numpy pads the header with spaces and a newline so that the data starts at a multiple of 64 bytes.
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return Status::Error("cannot write '", path, "'");
  const uint16_t len = static_cast<uint16_t>(header.size());
  const char preamble[10] = {'\x93', 'N', 'U', 'M', 'P', 'Y', 1, 0, static_cast<char>(len & 0xff),
                             static_cast<char>(len >> 8)};
  out.write(preamble, 10);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  if (src->bytes() > 0) out.write(static_cast<const char*>(src->data), static_cast<std::streamsize>(src->bytes()));
  out.flush();
  if (!out) return Status::Error("error writing '", path, "'");
  return Status::OK();
}

}  // namespace kforge::npy

#endif  // KFORGE_TOOLS_RUN_MODEL_NPY_H_
