// kforge parameter files: reads Paddle's combined `.pdiparams` format without Paddle (docs/parameters.md).
// Plain C++17 over kforge_runtime.h; `kforge compile --target cpu` copies it beside the generated class, whose
// load_parameters() calls load_file() below.
//
// The format, as paddle.jit.save / paddle.static.save_inference_model write it with PIR on (Paddle 3.x:
// save_vars_pir -> save_combine_func -> SerializeToStream per tensor). There is no file header and no name: the
// persistable parameters of the program follow one another SORTED BY NAME (Python's sorted(), i.e. byte order of
// the UTF-8 names), not in program order. Each tensor is
//   u32  0                      DenseTensor version
//   u64  lod_level              0 for weights; else per level: u64 byte count, then that many bytes
//   u32  0                      Tensor version
//   i32  desc_size              then desc_size bytes of protobuf VarType.TensorDesc (framework.proto):
//                                 field 1 data_type (varint, VarType.Type), field 2 dims (int64, repeated;
//                                 Paddle writes them unpacked, packed is accepted too)
//   numel * sizeof(dtype) bytes of row-major data (numel of no dims is 1: a rank-0 tensor)
// Integers are the writer's byte order, little-endian on every platform Paddle ships for. The file ends right
// after the last tensor (Paddle's load_combine rejects trailing bytes too).
#ifndef KFORGE_PARAMS_H_
#define KFORGE_PARAMS_H_

#include <sys/stat.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <istream>
#include <limits>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "kforge_runtime.h"

namespace kforge {

// What a generated class declares about one parameter (its kParameterSpecs table).
struct ParameterSpec {
  const char* name;        // the program's parameter name ("linear_0.w_0")
  DataType dtype;
  int32_t rank;
  int64_t dims[kMaxRank];  // -1: any size
  const char* shape;       // "float32 [4, 3]", for messages
};

namespace params {

// Paddle's VarType.Type code of a dtype kforge has, or false (framework.proto: BOOL 0, INT16 1, INT32 2,
// INT64 3, FP16 4, FP32 5, FP64 6, UINT8 20, INT8 21, BF16 22, COMPLEX64 23, COMPLEX128 24).
inline bool dtype_from_paddle_code(uint64_t code, DataType* out) {
  switch (code) {
    case 0: *out = DataType::kBool; return true;
    case 1: *out = DataType::kInt16; return true;
    case 2: *out = DataType::kInt32; return true;
    case 3: *out = DataType::kInt64; return true;
    case 4: *out = DataType::kFloat16; return true;
    case 5: *out = DataType::kFloat32; return true;
    case 6: *out = DataType::kFloat64; return true;
    case 20: *out = DataType::kUInt8; return true;
    case 21: *out = DataType::kInt8; return true;
    case 22: *out = DataType::kBFloat16; return true;
    case 23: *out = DataType::kComplex64; return true;
    case 24: *out = DataType::kComplex128; return true;
    default: return false;
  }
}

// Paddle's name of the codes kforge has no dtype for, for messages ("" when the code is no POD type at all).
inline const char* paddle_code_name(uint64_t code) {
  switch (code) {
    case 19: return "SIZE_T";
    case 32: return "FP8_E4M3FN";
    case 33: return "FP8_E5M2";
    case 37: return "UINT32";
    case 38: return "UINT64";
    default: return "";
  }
}

// The header of one serialized tensor.
struct TensorHeader {
  uint64_t offset = 0;       // where the tensor starts in the stream
  uint64_t data_offset = 0;  // where its data starts
  uint64_t data_bytes = 0;
  DataType dtype = DataType::kUndefined;
  int32_t ndim = 0;
  int64_t dims[kMaxRank] = {};
};

namespace detail {

// Sequential little-endian reads with the position known, so every error can say where it happened.
class Reader {
 public:
  Reader(std::istream& in, uint64_t size, uint64_t pos) : in_(in), size_(size), pos_(pos) {}
  uint64_t pos() const { return pos_; }
  uint64_t left() const { return size_ - pos_; }
  bool bytes(unsigned char* out, uint64_t n) {
    if (n > left()) return false;
    in_.read(reinterpret_cast<char*>(out), static_cast<std::streamsize>(n));
    if (!in_) return false;
    pos_ += n;
    return true;
  }
  bool skip(uint64_t n) {
    if (n > left()) return false;
    in_.seekg(static_cast<std::streamoff>(pos_ + n));
    if (!in_) return false;
    pos_ += n;
    return true;
  }
  bool u32(uint32_t* v) {
    unsigned char b[4];
    if (!bytes(b, 4)) return false;
    *v = static_cast<uint32_t>(b[0]) | static_cast<uint32_t>(b[1]) << 8 | static_cast<uint32_t>(b[2]) << 16 |
         static_cast<uint32_t>(b[3]) << 24;
    return true;
  }
  bool u64(uint64_t* v) {
    uint32_t lo = 0, hi = 0;
    if (!u32(&lo) || !u32(&hi)) return false;
    *v = static_cast<uint64_t>(hi) << 32 | lo;
    return true;
  }

 private:
  std::istream& in_;
  uint64_t size_;
  uint64_t pos_;
};

// One protobuf varint of `p[*i .. n)`; false when it runs past the end or past 10 bytes.
inline bool varint(const unsigned char* p, size_t n, size_t* i, uint64_t* out) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64 && *i < n; shift += 7) {
    const unsigned char b = p[(*i)++];
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) {
      *out = v;
      return true;
    }
  }
  return false;
}

// Parses a VarType.TensorDesc message: data_type (field 1) and dims (field 2); skips unknown fields as protobuf
// does. Returns "" or what is wrong.
inline std::string parse_tensor_desc(const unsigned char* p, size_t n, uint64_t* dtype_code, int32_t* ndim,
                                     int64_t* dims) {
  bool has_dtype = false;
  *ndim = 0;
  auto add_dim = [&](uint64_t raw) -> std::string {
    if (*ndim == kMaxRank) return "has more than " + std::to_string(kMaxRank) + " dims";
    const int64_t d = static_cast<int64_t>(raw);  // int64 varints are two's complement
    if (d < 0) return "has a negative dim (" + std::to_string(d) + ")";
    dims[(*ndim)++] = d;
    return "";
  };
  size_t i = 0;
  while (i < n) {
    uint64_t key = 0, v = 0;
    if (!varint(p, n, &i, &key)) return "is not a valid protobuf message (bad field key)";
    const uint64_t field = key >> 3, wire = key & 7;
    if (wire == 0) {
      if (!varint(p, n, &i, &v)) return "is not a valid protobuf message (bad varint)";
      if (field == 1) {
        *dtype_code = v;
        has_dtype = true;
      } else if (field == 2) {
        std::string e = add_dim(v);
        if (!e.empty()) return e;
      }
    } else if (wire == 2) {
      if (!varint(p, n, &i, &v) || v > n - i) return "is not a valid protobuf message (bad length)";
      const size_t end = i + static_cast<size_t>(v);
      if (field == 2) {  // packed dims
        while (i < end) {
          uint64_t d = 0;
          if (!varint(p, end, &i, &d)) return "is not a valid protobuf message (bad packed dims)";
          std::string e = add_dim(d);
          if (!e.empty()) return e;
        }
      }
      i = end;
    } else if (wire == 1 || wire == 5) {
      const size_t width = wire == 1 ? 8 : 4;
      if (width > n - i) return "is not a valid protobuf message (truncated field)";
      i += width;
    } else {
      return "is not a valid protobuf message (wire type " + std::to_string(wire) + ")";
    }
  }
  if (!has_dtype) return "has no data_type";
  return "";
}

inline bool little_endian_host() {
  const uint16_t one = 1;
  unsigned char first = 0;
  std::memcpy(&first, &one, 1);
  return first == 1;
}

}  // namespace detail

// Reads the header of the tensor at byte `offset` of `in` (`size` bytes long) and checks that its data lies
// inside the stream; leaves the stream at the data. An error names the byte where the problem is.
inline Status read_tensor_header(std::istream& in, uint64_t size, uint64_t offset, TensorHeader* out) {
  in.clear();
  in.seekg(static_cast<std::streamoff>(offset));
  detail::Reader r(in, size, offset);
  auto truncated = [&r]() {
    return Status::Error("the file ends at byte ", r.pos() + r.left(), ", inside the tensor header");
  };
  out->offset = offset;
  uint32_t version = 0;
  if (!r.u32(&version)) return truncated();
  if (version != 0) {
    return Status::Error("tensor version ", version, " at byte ", offset,
                         ", expected 0: not a Paddle tensor stream (or not this entry's start)");
  }
  uint64_t lod_level = 0;
  if (!r.u64(&lod_level)) return truncated();
  for (uint64_t level = 0; level < lod_level; ++level) {  // LoD offsets mean nothing to a weight: skipped
    const uint64_t at = r.pos();
    uint64_t bytes = 0;
    if (!r.u64(&bytes)) return truncated();
    if (bytes % 8 != 0 || !r.skip(bytes)) {
      return Status::Error("LoD level ", level, " at byte ", at, " claims ", bytes, " bytes, but ", r.left(),
                           " remain");
    }
  }
  const uint64_t at_version = r.pos();
  if (!r.u32(&version)) return truncated();
  if (version != 0) return Status::Error("tensor version ", version, " at byte ", at_version, ", expected 0");
  const uint64_t at_desc = r.pos();
  uint32_t desc_size = 0;
  if (!r.u32(&desc_size)) return truncated();
  // A TensorDesc is a dtype and at most 9 dims: 100 bytes at most; anything near 2^31 is a corrupt size.
  if (desc_size > 4096 || desc_size > r.left()) {
    return Status::Error("tensor description size ", static_cast<int32_t>(desc_size), " at byte ", at_desc,
                         " is invalid (", r.left(), " bytes remain)");
  }
  unsigned char desc[4096];
  if (!r.bytes(desc, desc_size)) return truncated();
  uint64_t code = 0;
  const std::string bad = detail::parse_tensor_desc(desc, desc_size, &code, &out->ndim, out->dims);
  if (!bad.empty()) return Status::Error("the tensor description at byte ", at_desc + 4, " ", bad);
  if (!dtype_from_paddle_code(code, &out->dtype)) {
    const std::string name = paddle_code_name(code);
    return Status::Error("the tensor description at byte ", at_desc + 4, " has data_type ", code,
                         name.empty() ? std::string(", which is no tensor element type")
                                      : " (" + name + "), which kforge has no dtype for");
  }
  // numel * element size, refusing anything larger than what is left (which also rules out overflow).
  const uint64_t element = size_of(out->dtype);
  uint64_t limit = r.left() / element, numel = 1;
  bool fits = true;
  for (int32_t a = 0; a < out->ndim; ++a) {
    const uint64_t d = static_cast<uint64_t>(out->dims[a]);
    if (d == 0) {
      numel = 0;
      fits = true;
      break;
    }
    if (numel > limit / d) fits = false;
    numel = fits ? numel * d : numel;
  }
  out->data_offset = r.pos();
  if (!fits) {
    Tensor shape;
    static_cast<void>(shape.set_dims(out->dims, static_cast<size_t>(out->ndim)));
    return Status::Error("the data of ", name_of(out->dtype), " ", shape.dims_string(), " from byte ",
                         out->data_offset, " runs past the end of the file (byte ", size, ")");
  }
  out->data_bytes = numel * element;
  return Status::OK();
}

// Reads `count` parameters from `in` into one allocation that every tensor of `*out` (in spec order) points
// into and shares (Tensor::holder). `file_order` lists the spec indices in the order of the stream (sorted by
// name). `source` names the stream in messages. Either every parameter is read and matches its spec, or an error
// names the parameter, its entry and the byte where the problem is, and `*out` is left empty.
inline Status load(std::istream& in, const char* source, const ParameterSpec* specs, const uint32_t* file_order,
                   size_t count, std::vector<Tensor>* out) {
  out->clear();
  const std::string where = std::string("'") + (source != nullptr ? source : "(stream)") + "': ";
  if (!detail::little_endian_host()) return Status::Error(where, "reading .pdiparams needs a little-endian host");
  in.clear();
  in.seekg(0, std::ios::end);
  const std::streamoff end = in.tellg();
  if (!in || end < 0) return Status::Error(where, "cannot determine the size of the stream");
  const uint64_t size = static_cast<uint64_t>(end);
  // A directory opens and claims a size on Linux, but nothing can be read from it.
  in.seekg(0);
  if (size != 0 && in.peek() == std::char_traits<char>::eof()) {
    return Status::Error(where, "cannot read the stream (not a regular file?)");
  }

  // Pass 1: every header, checked against its spec, so that the storage is planned whole before any data is read.
  std::vector<TensorHeader> headers(count);
  uint64_t offset = 0, total = 0;
  for (size_t k = 0; k < count; ++k) {
    const ParameterSpec& spec = specs[file_order[k]];
    const std::string entry = where + "parameter '" + spec.name + "' (entry " + std::to_string(k + 1) + " of " +
                              std::to_string(count) + ", at byte " + std::to_string(offset) + "): ";
    if (offset == size) {
      return Status::Error(entry, "missing: the file ends after ", k, " tensor", k == 1 ? "" : "s",
                           " (parameters are stored sorted by name)");
    }
    TensorHeader& h = headers[k];
    Status s = read_tensor_header(in, size, offset, &h);
    if (!s.ok()) return Status::Error(entry, s.message());
    bool matches = h.dtype == spec.dtype && h.ndim == spec.rank;
    for (int32_t a = 0; matches && a < spec.rank; ++a) matches = spec.dims[a] < 0 || h.dims[a] == spec.dims[a];
    if (!matches) {
      Tensor got;
      got.dtype = h.dtype;
      static_cast<void>(got.set_dims(h.dims, static_cast<size_t>(h.ndim)));
      return Status::Error(entry, "the program declares ", spec.shape, ", the file holds ", name_of(got.dtype), " ",
                           got.dims_string());
    }
    offset = h.data_offset + h.data_bytes;
    total += (h.data_bytes + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
  }
  if (offset != size) {
    return Status::Error(where, size - offset, " bytes follow the last parameter at byte ", offset,
                         ": the file holds more tensors than the program's ", count, " parameter",
                         count == 1 ? "" : "s");
  }
  if (count == 0) return Status::OK();

  // Pass 2: the data, straight into one 64-byte-aligned allocation.
  const size_t bytes = total == 0 ? kTensorAlignment : static_cast<size_t>(total);
  void* raw = ::operator new(bytes, std::align_val_t(kTensorAlignment), std::nothrow);
  if (raw == nullptr) return Status::Error(where, "out of memory allocating ", bytes, " bytes for the parameters");
  std::shared_ptr<void> storage(raw, [](void* p) { ::operator delete(p, std::align_val_t(kTensorAlignment)); });
  std::vector<Tensor> tensors(count);
  unsigned char* next = static_cast<unsigned char*>(raw);
  for (size_t k = 0; k < count; ++k) {
    const TensorHeader& h = headers[k];
    Tensor& t = tensors[file_order[k]];
    t.dtype = h.dtype;
    static_cast<void>(t.set_dims(h.dims, static_cast<size_t>(h.ndim)));
    t.data = next;
    t.holder = storage;
    in.clear();
    in.seekg(static_cast<std::streamoff>(h.data_offset));
    in.read(reinterpret_cast<char*>(next), static_cast<std::streamsize>(h.data_bytes));
    if (!in) {
      return Status::Error(where, "parameter '", specs[file_order[k]].name, "' (entry ", k + 1, " of ", count,
                           "): cannot read ", h.data_bytes, " bytes of data at byte ", h.data_offset);
    }
    next += (h.data_bytes + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
  }
  *out = std::move(tensors);
  return Status::OK();
}

// load() over the file at `path`.
inline Status load_file(const char* path, const ParameterSpec* specs, const uint32_t* file_order, size_t count,
                        std::vector<Tensor>* out) {
  out->clear();
  if (path == nullptr) return Status::Error("the parameter file's path is null");
  // Regular files only: opening a FIFO without a writer would block, and a device such as /dev/zero never ends.
  // stat(2) before opening, so that neither is ever opened.
  struct stat st {};
  if (::stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
    return Status::Error("'", path, "': ", S_ISDIR(st.st_mode) ? "it is a directory" : "it is not a regular file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::Error("cannot open '", path, "'");
  return load(in, path, specs, file_order, count, out);
}

}  // namespace params
}  // namespace kforge

#endif  // KFORGE_PARAMS_H_
