// kforge runtime: the types that generated code and kernel libraries share (docs/calling-convention.md).
// Plain C++17 and the standard library only; kforge copies this file beside every output set.
#ifndef KFORGE_RUNTIME_H_
#define KFORGE_RUNTIME_H_

// Bumped whenever a type below changes layout or meaning; generated files static_assert on it.
#define KFORGE_RUNTIME_VERSION 4

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace kforge {

// ---------------------------------------------------------------------------------------------------------
// DataType
// ---------------------------------------------------------------------------------------------------------

// The upper-case aliases are Paddle's spellings, so that YAML defaults such as `DataType::FLOAT32` are valid
// C++ for a `kforge::DataType` parameter.
enum class DataType : int8_t {
  kUndefined,
  kBool,
  kInt8,
  kUInt8,
  kInt16,
  kInt32,
  kInt64,
  kFloat16,
  kBFloat16,
  kFloat32,
  kFloat64,
  kComplex64,
  kComplex128,
  UNDEFINED = kUndefined,
  BOOL = kBool,
  INT8 = kInt8,
  UINT8 = kUInt8,
  INT16 = kInt16,
  INT32 = kInt32,
  INT64 = kInt64,
  FLOAT16 = kFloat16,
  BFLOAT16 = kBFloat16,
  FLOAT32 = kFloat32,
  FLOAT64 = kFloat64,
  COMPLEX64 = kComplex64,
  COMPLEX128 = kComplex128,
};

// Bytes per element; 0 for kUndefined.
constexpr size_t size_of(DataType dtype) {
  switch (dtype) {
    case DataType::kBool:
    case DataType::kInt8:
    case DataType::kUInt8: return 1;
    case DataType::kInt16:
    case DataType::kFloat16:
    case DataType::kBFloat16: return 2;
    case DataType::kInt32:
    case DataType::kFloat32: return 4;
    case DataType::kInt64:
    case DataType::kFloat64:
    case DataType::kComplex64: return 8;
    case DataType::kComplex128: return 16;
    case DataType::kUndefined: break;
  }
  return 0;
}

// Paddle's spelling (`DataTypeToString`): float32, int64, bool, ...
constexpr const char* name_of(DataType dtype) {
  switch (dtype) {
    case DataType::kBool: return "bool";
    case DataType::kInt8: return "int8";
    case DataType::kUInt8: return "uint8";
    case DataType::kInt16: return "int16";
    case DataType::kInt32: return "int32";
    case DataType::kInt64: return "int64";
    case DataType::kFloat16: return "float16";
    case DataType::kBFloat16: return "bfloat16";
    case DataType::kFloat32: return "float32";
    case DataType::kFloat64: return "float64";
    case DataType::kComplex64: return "complex64";
    case DataType::kComplex128: return "complex128";
    case DataType::kUndefined: break;
  }
  return "undefined";
}

namespace detail {
inline bool equals_ignore_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char ca = a[i] >= 'A' && a[i] <= 'Z' ? static_cast<char>(a[i] - 'A' + 'a') : a[i];
    char cb = b[i] >= 'A' && b[i] <= 'Z' ? static_cast<char>(b[i] - 'A' + 'a') : b[i];
    if (ca != cb) return false;
  }
  return true;
}
}  // namespace detail

// Reads any of Paddle's spellings of a dtype: `float32` (PIR attributes, Python), `FLOAT32` or
// `DataType::FLOAT32` / `phi::DataType::FLOAT32` (YAML defaults, any namespace prefix), `paddle.float32`, and the
// PIR element types `f32`, `bf16`, `i64`, `ui8`, `b`, `c64`, ... Returns false (and leaves `out`) when unknown.
inline bool parse_data_type(std::string_view text, DataType* out) {
  size_t colon = text.rfind("::");
  if (colon != std::string_view::npos) text.remove_prefix(colon + 2);
  if (text.substr(0, 7) == "paddle.") text.remove_prefix(7);
  struct Spelling {
    const char* name;
    DataType dtype;
  };
  static constexpr Spelling kSpellings[] = {
      {"bool", DataType::kBool},        {"b", DataType::kBool},
      {"int8", DataType::kInt8},        {"i8", DataType::kInt8},
      {"uint8", DataType::kUInt8},      {"u8", DataType::kUInt8},
      {"ui8", DataType::kUInt8},        {"int16", DataType::kInt16},
      {"i16", DataType::kInt16},        {"int32", DataType::kInt32},
      {"i32", DataType::kInt32},        {"int64", DataType::kInt64},
      {"i64", DataType::kInt64},        {"float16", DataType::kFloat16},
      {"f16", DataType::kFloat16},      {"bfloat16", DataType::kBFloat16},
      {"bf16", DataType::kBFloat16},    {"float32", DataType::kFloat32},
      {"f32", DataType::kFloat32},      {"float64", DataType::kFloat64},
      {"f64", DataType::kFloat64},      {"complex64", DataType::kComplex64},
      {"c64", DataType::kComplex64},    {"complex128", DataType::kComplex128},
      {"c128", DataType::kComplex128},  {"undefined", DataType::kUndefined},
  };
  for (const Spelling& s : kSpellings) {
    if (detail::equals_ignore_case(text, s.name)) {
      *out = s.dtype;
      return true;
    }
  }
  return false;
}

// ---------------------------------------------------------------------------------------------------------
// Place and layout
// ---------------------------------------------------------------------------------------------------------

enum class Backend : int8_t { kUndefined, kCPU, kGPU };

// `Place{}` is undefined (Paddle's `Place place = {}`: "decide from the inputs"); CPUPlace() is the CPU.
struct Place {
  Backend backend = Backend::kUndefined;
  int8_t device = 0;

  constexpr bool operator==(const Place& other) const {
    return backend == other.backend && device == other.device;
  }
  constexpr bool operator!=(const Place& other) const { return !(*this == other); }
};

// Spelled as in Paddle so that YAML defaults such as `CPUPlace()` compile unchanged.
constexpr Place CPUPlace() { return Place{Backend::kCPU, 0}; }
constexpr Place GPUPlace(int8_t device = 0) { return Place{Backend::kGPU, device}; }

enum class DataLayout : int8_t {
  kUndefined,
  kNCHW,
  kNHWC,
  kAnyLayout,
  UNDEFINED = kUndefined,
  NCHW = kNCHW,
  NHWC = kNHWC,
  ANY = kAnyLayout,
};

constexpr const char* name_of(DataLayout layout) {
  switch (layout) {
    case DataLayout::kNCHW: return "NCHW";
    case DataLayout::kNHWC: return "NHWC";
    case DataLayout::kAnyLayout: return "AnyLayout";
    case DataLayout::kUndefined: break;
  }
  return "Undefined";
}

// Paddle's layout strings: "NCHW", "NHWC", "AnyLayout" (also "ANY"), "Undefined".
inline bool parse_data_layout(std::string_view text, DataLayout* out) {
  size_t colon = text.rfind("::");
  if (colon != std::string_view::npos) text.remove_prefix(colon + 2);
  if (detail::equals_ignore_case(text, "NCHW")) {
    *out = DataLayout::kNCHW;
  } else if (detail::equals_ignore_case(text, "NHWC")) {
    *out = DataLayout::kNHWC;
  } else if (detail::equals_ignore_case(text, "AnyLayout") || detail::equals_ignore_case(text, "ANY")) {
    *out = DataLayout::kAnyLayout;
  } else if (detail::equals_ignore_case(text, "Undefined")) {
    *out = DataLayout::kUndefined;
  } else {
    return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------------------
// Scalar and IntArray: Paddle's attribute value types
// ---------------------------------------------------------------------------------------------------------

// One number and the dtype it was given with. Implicit from any arithmetic value, so that YAML defaults such as
// `Scalar scale=1.0` or `Scalar stop_update=false` are valid C++.
class Scalar {
 public:
  constexpr Scalar() = default;

  template <typename T, typename std::enable_if<std::is_arithmetic<T>::value, int>::type = 0>
  constexpr Scalar(T value)  // NOLINT: implicit on purpose
      : dtype_(dtype_for<T>()),
        kind_(kind_for<T>()),
        f_(std::is_floating_point<T>::value ? static_cast<double>(value) : 0.0),
        i_(std::is_floating_point<T>::value ? 0 : static_cast<int64_t>(value)) {}

  // The same value labelled with another dtype (a PIR `a_scalar` of dtype int8 holding 3, say).
  constexpr Scalar with_dtype(DataType dtype) const {
    Scalar s = *this;
    s.dtype_ = dtype;
    return s;
  }

  constexpr DataType dtype() const { return dtype_; }
  constexpr bool is_floating() const { return kind_ == Kind::kFloat; }
  constexpr bool is_integer() const { return kind_ == Kind::kInt; }
  constexpr bool is_bool() const { return kind_ == Kind::kBool; }

  template <typename T>
  constexpr T to() const {
    return kind_ == Kind::kFloat ? static_cast<T>(f_) : static_cast<T>(i_);
  }

  constexpr bool operator==(const Scalar& other) const {
    return kind_ == other.kind_ && f_ == other.f_ && i_ == other.i_;
  }
  constexpr bool operator!=(const Scalar& other) const { return !(*this == other); }

 private:
  enum class Kind : int8_t { kFloat, kInt, kBool };  // a bool is kept in i_ as 0 or 1

  template <typename T>
  static constexpr DataType dtype_for() {
    if (std::is_same<T, bool>::value) return DataType::kBool;
    if (std::is_same<T, float>::value) return DataType::kFloat32;
    if (std::is_floating_point<T>::value) return DataType::kFloat64;
    if (sizeof(T) <= 4 && std::is_signed<T>::value) return DataType::kInt32;
    return DataType::kInt64;
  }
  template <typename T>
  static constexpr Kind kind_for() {
    if (std::is_same<T, bool>::value) return Kind::kBool;
    if (std::is_floating_point<T>::value) return Kind::kFloat;
    return Kind::kInt;
  }

  DataType dtype_ = DataType::kFloat64;
  Kind kind_ = Kind::kFloat;
  double f_ = 0.0;
  int64_t i_ = 0;
};

// Paddle's IntArray: a list of int64 values (shapes, axes, sections).
class IntArray {
 public:
  IntArray() = default;
  IntArray(std::initializer_list<int64_t> values) : values_(values) {}
  IntArray(std::vector<int64_t> values) : values_(std::move(values)) {}  // NOLINT: implicit
  IntArray(const std::vector<int32_t>& values) : values_(values.begin(), values.end()) {}  // NOLINT: implicit
  IntArray(const int64_t* values, size_t size) : values_(values, values + size) {}

  size_t size() const { return values_.size(); }
  bool empty() const { return values_.empty(); }
  int64_t operator[](size_t i) const { return values_[i]; }
  const int64_t* data() const { return values_.data(); }
  std::vector<int64_t>::const_iterator begin() const { return values_.begin(); }
  std::vector<int64_t>::const_iterator end() const { return values_.end(); }
  const std::vector<int64_t>& values() const { return values_; }
  std::vector<int64_t>& values() { return values_; }

  bool operator==(const IntArray& other) const { return values_ == other.values_; }
  bool operator!=(const IntArray& other) const { return values_ != other.values_; }

 private:
  std::vector<int64_t> values_;
};

// ---------------------------------------------------------------------------------------------------------
// Status
// ---------------------------------------------------------------------------------------------------------

// nvcc's front end flags every `a = b` of a [[nodiscard]] class (operator= returns Status&), so only host
// compilers get the attribute.
#if defined(__CUDACC__)
#define KFORGE_NODISCARD
#else
#define KFORGE_NODISCARD [[nodiscard]]
#endif

// Success is a null pointer: returning OK stores one null pointer and testing it is one compare; only an error
// allocates (its message).
class KFORGE_NODISCARD Status {
 public:
  Status() noexcept = default;
  static Status OK() noexcept { return Status(); }

  static Status Error(std::string message) {
    Status s;
    s.message_ = new std::string(std::move(message));
    return s;
  }
  // Concatenates strings, characters and numbers: Status::Error("x has rank ", 3, ", expected 2").
  template <typename First, typename Second, typename... Rest>
  static Status Error(const First& first, const Second& second, const Rest&... rest) {
    std::string message;
    append(message, first);
    append(message, second);
    (append(message, rest), ...);
    return Error(std::move(message));
  }

  Status(const Status& other) : message_(other.message_ ? new std::string(*other.message_) : nullptr) {}
  Status(Status&& other) noexcept : message_(other.message_) { other.message_ = nullptr; }
  Status& operator=(const Status& other) {
    if (this != &other) {
      std::string* copy = other.message_ ? new std::string(*other.message_) : nullptr;
      delete message_;
      message_ = copy;
    }
    return *this;
  }
  Status& operator=(Status&& other) noexcept {
    std::swap(message_, other.message_);
    return *this;
  }
  ~Status() { delete message_; }

  bool ok() const noexcept { return message_ == nullptr; }
  // Empty for OK.
  const std::string& message() const {
    static const std::string kEmpty;
    return message_ ? *message_ : kEmpty;
  }

  // Appends one value to a message; exposed for callers that build messages piece by piece.
  static void append(std::string& out, const std::string& v) { out += v; }
  static void append(std::string& out, std::string_view v) { out.append(v.data(), v.size()); }
  static void append(std::string& out, const char* v) { out += v ? v : "(null)"; }
  static void append(std::string& out, char v) { out += v; }
  static void append(std::string& out, bool v) { out += v ? "true" : "false"; }
  static void append(std::string& out, DataType v) { out += name_of(v); }
  template <typename T, typename std::enable_if<std::is_arithmetic<T>::value, int>::type = 0>
  static void append(std::string& out, T v) {
    out += std::to_string(v);
  }

 private:
  std::string* message_ = nullptr;
};

}  // namespace kforge

// Returns the status of `expr` from the enclosing function when it is an error.
#define KFORGE_RETURN_IF_ERROR(expr)                         \
  do {                                                       \
    ::kforge::Status kforge_status_ = (expr);                \
    if (!kforge_status_.ok()) return kforge_status_;         \
  } while (0)

namespace kforge {

// ---------------------------------------------------------------------------------------------------------
// Tensor
// ---------------------------------------------------------------------------------------------------------

constexpr int kMaxRank = 9;
constexpr size_t kTensorAlignment = 64;

// Device memory hooks for Tensor::allocate() on a GPU place. The runtime does not depend on any device API; the
// generated CUDA code (or the user) installs them once, e.g. with cudaMalloc/cudaFree.
struct DeviceAllocator {
  void* (*allocate)(size_t bytes, Place place) = nullptr;
  void (*release)(void* data, Place place) = nullptr;
};
inline DeviceAllocator& device_allocator() {
  static DeviceAllocator allocator;
  return allocator;
}

// A dense, row-major, contiguous tensor. Usually a non-owning view (`data` points into a workspace or at the
// caller's memory); `holder` owns the bytes when the tensor was allocated by allocate(). Copies share the bytes.
struct Tensor {
  DataType dtype = DataType::kUndefined;
  Place place = CPUPlace();
  int32_t ndim = 0;  // 0 is a scalar: one element
  int64_t dims[kMaxRank] = {};
  void* data = nullptr;
  std::shared_ptr<void> holder;

  int64_t numel() const {
    int64_t n = 1;
    for (int32_t i = 0; i < ndim; ++i) n *= dims[i];
    return n;
  }
  size_t bytes() const { return static_cast<size_t>(numel()) * size_of(dtype); }

  // Typed access to the elements (the field `data` is the untyped pointer).
  template <typename T>
  T* data_as() const {
    return static_cast<T*>(data);
  }

  // The size of dimension `axis`; negative axes count from the back.
  int64_t dim(int axis) const { return dims[axis < 0 ? axis + ndim : axis]; }
  std::vector<int64_t> shape() const { return std::vector<int64_t>(dims, dims + ndim); }
  bool same_dims(const Tensor& other) const {
    if (ndim != other.ndim) return false;
    for (int32_t i = 0; i < ndim; ++i) {
      if (dims[i] != other.dims[i]) return false;
    }
    return true;
  }

  Status set_dims(const int64_t* new_dims, size_t rank) {
    if (rank > static_cast<size_t>(kMaxRank)) {
      return Status::Error("tensor rank ", rank, " exceeds the maximum rank ", kMaxRank);
    }
    ndim = static_cast<int32_t>(rank);
    for (size_t i = 0; i < rank; ++i) dims[i] = new_dims[i];
    for (size_t i = rank; i < static_cast<size_t>(kMaxRank); ++i) dims[i] = 0;
    return Status::OK();
  }
  Status set_dims(std::initializer_list<int64_t> new_dims) { return set_dims(new_dims.begin(), new_dims.size()); }
  Status set_dims(const std::vector<int64_t>& new_dims) { return set_dims(new_dims.data(), new_dims.size()); }

  // Owns fresh, uninitialised memory for `bytes()` (at least one cache line, aligned to 64 bytes). CPU always;
  // GPU through device_allocator().
  Status allocate() {
    if (dtype == DataType::kUndefined) return Status::Error("cannot allocate a tensor of undefined dtype");
    for (int32_t i = 0; i < ndim; ++i) {
      if (dims[i] < 0) return Status::Error("cannot allocate a tensor with dynamic dims ", dims_string());
    }
    size_t size = bytes() < kTensorAlignment ? kTensorAlignment : bytes();
    if (place.backend == Backend::kGPU) {
      DeviceAllocator allocator = device_allocator();
      if (allocator.allocate == nullptr || allocator.release == nullptr) {
        return Status::Error("no device allocator installed for GPU tensors (kforge::device_allocator())");
      }
      void* p = allocator.allocate(size, place);
      if (p == nullptr) return Status::Error("out of device memory allocating ", size, " bytes");
      Place where = place;
      holder = std::shared_ptr<void>(p, [allocator, where](void* q) { allocator.release(q, where); });
      data = p;
      return Status::OK();
    }
    if (place.backend != Backend::kCPU) return Status::Error("cannot allocate a tensor on an undefined place");
    size = (size + kTensorAlignment - 1) / kTensorAlignment * kTensorAlignment;
    void* p = ::operator new(size, std::align_val_t(kTensorAlignment), std::nothrow);
    if (p == nullptr) return Status::Error("out of memory allocating ", size, " bytes");
    holder = std::shared_ptr<void>(p, [](void* q) { ::operator delete(q, std::align_val_t(kTensorAlignment)); });
    data = p;
    return Status::OK();
  }

  // "[2, 3, 4]"; for messages. A rank outside [0, kMaxRank] (a caller's corrupt tensor) reads no dims: "[rank 12?]".
  std::string dims_string() const {
    if (ndim < 0 || ndim > kMaxRank) return "[rank " + std::to_string(ndim) + "?]";
    std::string s = "[";
    for (int32_t i = 0; i < ndim; ++i) {
      if (i) s += ", ";
      s += std::to_string(dims[i]);
    }
    return s + "]";
  }
};

// The bytes of `t`'s elements in `*bytes`, or false when its rank is outside [0, kMaxRank], a dim is negative, or
// the byte count overflows int64: what generated code checks on a caller's tensor before trusting numel().
inline bool checked_bytes(const Tensor& t, size_t* bytes) {
  if (t.ndim < 0 || t.ndim > kMaxRank) return false;
  const uint64_t limit = static_cast<uint64_t>(INT64_MAX);
  uint64_t n = size_of(t.dtype);
  for (int32_t i = 0; i < t.ndim; ++i) {
    if (t.dims[i] < 0) return false;
    const uint64_t d = static_cast<uint64_t>(t.dims[i]);
    if (d != 0 && n > limit / d) return false;
    n *= d;
  }
  *bytes = static_cast<size_t>(n);
  return true;
}

// A size generated code derives from a caller's dims (a workspace's bytes, a value's dims): int64 arithmetic
// that remembers an overflow instead of wrapping, so that absurd or hostile dims are refused before they size a
// workspace (codegen/size_table.h: the generated compute_sizes()). Implicit from int64_t so that the constants
// of an expression mix in; 0 by default, so that a table of them is an array.
class CheckedInt {
 public:
  constexpr CheckedInt() = default;
  constexpr CheckedInt(int64_t value) : value_(value) {}  // NOLINT: implicit on purpose
  constexpr int64_t value() const { return value_; }
  constexpr bool ok() const { return ok_; }

  friend CheckedInt operator+(CheckedInt a, CheckedInt b) {
    CheckedInt r(0);
    r.ok_ = a.ok_ && b.ok_ && !__builtin_add_overflow(a.value_, b.value_, &r.value_);
    return r;
  }
  friend CheckedInt operator-(CheckedInt a, CheckedInt b) {
    CheckedInt r(0);
    r.ok_ = a.ok_ && b.ok_ && !__builtin_sub_overflow(a.value_, b.value_, &r.value_);
    return r;
  }
  friend CheckedInt operator*(CheckedInt a, CheckedInt b) {
    CheckedInt r(0);
    r.ok_ = a.ok_ && b.ok_ && !__builtin_mul_overflow(a.value_, b.value_, &r.value_);
    return r;
  }
  friend CheckedInt operator-(CheckedInt a) { return CheckedInt(0) - a; }
  // The result of an operation that overflowed (or divided by zero).
  static CheckedInt overflow() {
    CheckedInt r(0);
    r.ok_ = false;
    return r;
  }

 private:
  int64_t value_ = 0;
  bool ok_ = true;
};

// Python's //, as kforge_floor_div; a zero divisor or INT64_MIN / -1 is an overflow.
inline CheckedInt checked_floor_div(CheckedInt a, CheckedInt b) {
  if (!a.ok() || !b.ok() || b.value() == 0 || (a.value() == INT64_MIN && b.value() == -1)) {
    return CheckedInt::overflow();
  }
  const int64_t q = a.value() / b.value();
  return (a.value() % b.value() != 0 && ((a.value() < 0) != (b.value() < 0))) ? CheckedInt(q - 1) : CheckedInt(q);
}
inline CheckedInt checked_ceil_div(CheckedInt a, CheckedInt b) { return -checked_floor_div(-a, b); }
inline CheckedInt checked_max(CheckedInt a, CheckedInt b) {
  if (!a.ok() || !b.ok()) return CheckedInt::overflow();
  return a.value() >= b.value() ? a : b;
}
inline CheckedInt checked_min(CheckedInt a, CheckedInt b) {
  if (!a.ok() || !b.ok()) return CheckedInt::overflow();
  return a.value() <= b.value() ? a : b;
}

// Whether the element bytes of `a` and `b` overlap (in one address space: both CPU or both on one GPU). A tensor
// without data or without elements shares nothing. Dims must be valid (checked_bytes).
inline bool shares_memory(const Tensor& a, const Tensor& b) {
  if (a.data == nullptr || b.data == nullptr || a.place != b.place) return false;
  const uintptr_t a0 = reinterpret_cast<uintptr_t>(a.data), b0 = reinterpret_cast<uintptr_t>(b.data);
  const size_t a_bytes = a.bytes(), b_bytes = b.bytes();
  if (a_bytes == 0 || b_bytes == 0) return false;
  return a0 < b0 + b_bytes && b0 < a0 + a_bytes;
}

// The smallest address range that holds the element bytes of every tensor added: a cheap first test before
// comparing a tensor with each of many (a generated class keeps one over its bound parameters, so that checking an
// output against hundreds of them costs one compare when it lies elsewhere).
struct MemoryHull {
  uintptr_t lo = UINTPTR_MAX;
  uintptr_t hi = 0;

  void add(const Tensor& t) {
    const size_t bytes = t.bytes();
    if (t.data == nullptr || bytes == 0) return;
    const uintptr_t begin = reinterpret_cast<uintptr_t>(t.data);
    lo = begin < lo ? begin : lo;
    hi = begin + bytes > hi ? begin + bytes : hi;
  }
  bool may_overlap(const Tensor& t) const {
    const size_t bytes = t.bytes();
    const uintptr_t begin = reinterpret_cast<uintptr_t>(t.data);
    return t.data != nullptr && bytes != 0 && begin < hi && lo < begin + bytes;
  }
  void clear() { *this = MemoryHull{}; }
};

// `Tensor[]` inputs: a span of pointers, built by the caller without allocating. An absent optional `Tensor[]`
// is an empty list.
struct TensorList {
  const Tensor* const* items = nullptr;
  size_t size = 0;

  const Tensor& operator[](size_t i) const { return *items[i]; }
  const Tensor* const* begin() const { return items; }
  const Tensor* const* end() const { return items + size; }
  bool empty() const { return size == 0; }
};

// `Tensor[]` outputs.
struct MutableTensorList {
  Tensor* const* items = nullptr;
  size_t size = 0;

  Tensor& operator[](size_t i) const { return *items[i]; }
  Tensor* const* begin() const { return items; }
  Tensor* const* end() const { return items + size; }
  bool empty() const { return size == 0; }
};

// The values of an int32 or int64 CPU tensor (a mutable IntArray attribute that arrives as a tensor).
inline Status int_array_from_tensor(const Tensor& t, IntArray* out) {
  if (t.place.backend != Backend::kCPU) return Status::Error("IntArray tensor must be on the CPU");
  const int64_t numel = t.numel();
  const size_t n = static_cast<size_t>(numel < 0 ? 0 : numel);
  std::vector<int64_t> values(n);
  if (t.dtype == DataType::kInt64) {
    for (size_t i = 0; i < n; ++i) values[i] = t.data_as<const int64_t>()[i];
  } else if (t.dtype == DataType::kInt32) {
    for (size_t i = 0; i < n; ++i) values[i] = t.data_as<const int32_t>()[i];
  } else {
    return Status::Error("IntArray tensor must be int32 or int64, got ", t.dtype);
  }
  *out = IntArray(std::move(values));
  return Status::OK();
}

// The IntArray made of one-element int32/int64 tensors (Paddle's `tensors_name` form).
inline Status int_array_from_tensors(TensorList ts, IntArray* out) {
  std::vector<int64_t> values;
  values.reserve(ts.size);
  for (const Tensor* t : ts) {
    IntArray one;
    KFORGE_RETURN_IF_ERROR(int_array_from_tensor(*t, &one));
    if (one.size() != 1) return Status::Error("IntArray element tensor must have one element, got ", one.size());
    values.push_back(one[0]);
  }
  *out = IntArray(std::move(values));
  return Status::OK();
}

// The value of a one-element CPU tensor (a mutable Scalar attribute that arrives as a tensor).
inline Status scalar_from_tensor(const Tensor& t, Scalar* out) {
  if (t.place.backend != Backend::kCPU) return Status::Error("Scalar tensor must be on the CPU");
  if (t.numel() != 1) return Status::Error("Scalar tensor must have one element, got ", t.numel());
  switch (t.dtype) {
    case DataType::kBool: *out = Scalar(*t.data_as<const bool>()); break;
    case DataType::kInt8: *out = Scalar(*t.data_as<const int8_t>()).with_dtype(t.dtype); break;
    case DataType::kUInt8: *out = Scalar(*t.data_as<const uint8_t>()).with_dtype(t.dtype); break;
    case DataType::kInt16: *out = Scalar(*t.data_as<const int16_t>()).with_dtype(t.dtype); break;
    case DataType::kInt32: *out = Scalar(*t.data_as<const int32_t>()); break;
    case DataType::kInt64: *out = Scalar(*t.data_as<const int64_t>()); break;
    case DataType::kFloat32: *out = Scalar(*t.data_as<const float>()); break;
    case DataType::kFloat64: *out = Scalar(*t.data_as<const double>()); break;
    default: return Status::Error("Scalar tensor of dtype ", t.dtype, " is not supported");
  }
  return Status::OK();
}

// ---------------------------------------------------------------------------------------------------------
// Workspace and KernelContext
// ---------------------------------------------------------------------------------------------------------

// A bump allocator over a buffer the caller owns: kernels take temporary memory from it and give it back with
// release(mark). Never allocates and never frees on its own.
class Workspace {
 public:
  Workspace() = default;
  Workspace(void* buffer, size_t capacity) : base_(static_cast<unsigned char*>(buffer)), capacity_(capacity) {}

  // `bytes` bytes aligned to `alignment` (a power of two); null when the buffer is exhausted.
  void* allocate(size_t bytes, size_t alignment = kTensorAlignment) {
    uintptr_t start = reinterpret_cast<uintptr_t>(base_) + used_;
    uintptr_t aligned = (start + alignment - 1) & ~(static_cast<uintptr_t>(alignment) - 1);
    size_t offset = used_ + static_cast<size_t>(aligned - start);
    if (base_ == nullptr || offset > capacity_ || bytes > capacity_ - offset) return nullptr;
    used_ = offset + bytes;
    if (used_ > peak_) peak_ = used_;
    return base_ + offset;
  }
  template <typename T>
  T* allocate_array(size_t count) {
    return static_cast<T*>(allocate(count * sizeof(T), alignof(T) > kTensorAlignment ? alignof(T) : kTensorAlignment));
  }

  size_t mark() const { return used_; }
  void release(size_t mark) { used_ = mark < used_ ? mark : used_; }
  void reset() { used_ = 0; }

  size_t used() const { return used_; }
  size_t capacity() const { return capacity_; }
  size_t peak() const { return peak_; }  // the most ever in use: what a caller should provision

 private:
  unsigned char* base_ = nullptr;
  size_t capacity_ = 0;
  size_t used_ = 0;
  size_t peak_ = 0;
};

// What every kernel receives first.
struct KernelContext {
  Place place = CPUPlace();
  DataType dtype = DataType::kUndefined;  // the selected kernel data type
  void* stream = nullptr;                 // a cudaStream_t on GPU
  Workspace* scratch = nullptr;           // temporary memory; may be null
};

// ---------------------------------------------------------------------------------------------------------
// Kernel library hooks
// ---------------------------------------------------------------------------------------------------------

// What a kernel library may want to hear from generated classes beyond kernel calls. Generated classes declare
// the memory of every bound parameter constant (and release it before it is rebound, unbound or freed), so that
// a library can prepare a filter once (reorder it into its preferred layout) instead of on every call; and their
// set_num_threads() passes the thread count on. A library installs the hooks once, at start-up (kforge's own does
// when built with oneDNN); with none installed, both do nothing. Process-wide, like the library's own settings.
struct KernelLibraryHooks {
  void (*declare_constant)(const void* data, size_t bytes) = nullptr;
  void (*release_constant)(const void* data) = nullptr;
  void (*set_num_threads)(int threads) = nullptr;
};

inline KernelLibraryHooks& kernel_library_hooks() {
  static KernelLibraryHooks hooks;
  return hooks;
}

// What generated classes call: a no-op without hooks or without data.
inline void declare_constant(const Tensor& t) {
  if (kernel_library_hooks().declare_constant != nullptr && t.data != nullptr && t.bytes() > 0) {
    kernel_library_hooks().declare_constant(t.data, t.bytes());
  }
}
inline void release_constant(const Tensor& t) {
  if (kernel_library_hooks().release_constant != nullptr && t.data != nullptr) kernel_library_hooks().release_constant(t.data);
}

}  // namespace kforge

#endif  // KFORGE_RUNTIME_H_
