// The .pdiparams reader (templates/runtime/kforge_params.h) on hand-made byte streams: what Paddle writes, each
// way a file can be wrong, and that nothing is returned after an error. Real Paddle files are read by
// tests/e2e/test_params.py and the tests/paddle fixtures.
#include <catch2/catch.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "kforge_params.h"

using kforge::DataType;
using kforge::ParameterSpec;
using kforge::Status;
using kforge::Tensor;

namespace {

// Builds a stream the way SerializeToStream writes one (little-endian), with knobs to break it.
struct StreamBuilder {
  std::string bytes;

  void u32(uint32_t v) {
    for (int i = 0; i < 4; ++i) bytes += static_cast<char>((v >> (8 * i)) & 0xff);
  }
  void u64(uint64_t v) {
    for (int i = 0; i < 8; ++i) bytes += static_cast<char>((v >> (8 * i)) & 0xff);
  }
  static void varint(std::string& out, uint64_t v) {
    do {
      unsigned char b = v & 0x7f;
      v >>= 7;
      if (v) b |= 0x80;
      out += static_cast<char>(b);
    } while (v);
  }
  // A TensorDesc: field 1 data_type, field 2 dims (unpacked as Paddle writes them, or packed).
  static std::string desc(uint64_t code, const std::vector<int64_t>& dims, bool packed = false) {
    std::string d;
    d += '\x08';
    varint(d, code);
    if (packed) {
      std::string body;
      for (int64_t x : dims) varint(body, static_cast<uint64_t>(x));
      d += '\x12';
      varint(d, body.size());
      d += body;
    } else {
      for (int64_t x : dims) {
        d += '\x10';
        varint(d, static_cast<uint64_t>(x));
      }
    }
    return d;
  }
  void header(const std::string& desc_bytes, uint64_t lod_level = 0) {
    u32(0);
    u64(lod_level);
    for (uint64_t l = 0; l < lod_level; ++l) {
      u64(16);
      u64(0);
      u64(3);
    }
    u32(0);
    u32(static_cast<uint32_t>(desc_bytes.size()));
    bytes += desc_bytes;
  }
  template <typename T>
  void tensor(uint64_t code, const std::vector<int64_t>& dims, const std::vector<T>& data, bool packed = false) {
    header(desc(code, dims, packed));
    bytes.append(reinterpret_cast<const char*>(data.data()), data.size() * sizeof(T));
  }
};

constexpr uint64_t kFP32 = 5, kFP64 = 6, kINT64 = 3, kINT32 = 2;

// Three parameters declared in program order c, a, b; the file holds them sorted: a, b, c.
const ParameterSpec kSpecs[] = {
    {"c", DataType::kInt64, 1, {3}, "int64 [3]"},
    {"a", DataType::kFloat32, 2, {2, 3}, "float32 [2, 3]"},
    {"b", DataType::kFloat64, 0, {}, "float64 []"},
};
const uint32_t kOrder[] = {1, 2, 0};

StreamBuilder good_stream() {
  StreamBuilder s;
  s.tensor<float>(kFP32, {2, 3}, {1, 2, 3, 4, 5, 6});
  s.tensor<double>(kFP64, {}, {2.5});
  s.tensor<int64_t>(kINT64, {3}, {7, -8, 9});
  return s;
}

Status load(const std::string& bytes, std::vector<Tensor>* out, const ParameterSpec* specs = kSpecs,
            const uint32_t* order = kOrder, size_t count = 3) {
  std::istringstream in(bytes);
  return kforge::params::load(in, "m.pdiparams", specs, order, count, out);
}

// The error of loading `bytes`, checking that nothing came back.
std::string error_of(const std::string& bytes, const ParameterSpec* specs = kSpecs, const uint32_t* order = kOrder,
                     size_t count = 3) {
  std::vector<Tensor> out(1);
  Status s = load(bytes, &out, specs, order, count);
  CHECK(out.empty());
  REQUIRE_FALSE(s.ok());
  return s.message();
}

}  // namespace

TEST_CASE("params: reads the tensors in name order into spec order, one shared allocation") {
  std::vector<Tensor> out;
  Status s = load(good_stream().bytes, &out);
  REQUIRE(s.ok());
  REQUIRE(out.size() == 3);
  CHECK(out[0].dtype == DataType::kInt64);
  CHECK(out[0].dims_string() == "[3]");
  CHECK(out[0].data_as<int64_t>()[1] == -8);
  CHECK(out[1].dtype == DataType::kFloat32);
  CHECK(out[1].dims_string() == "[2, 3]");
  CHECK(out[1].data_as<float>()[5] == 6.0f);
  CHECK(out[2].ndim == 0);
  CHECK(out[2].data_as<double>()[0] == 2.5);
  for (const Tensor& t : out) {
    CHECK(reinterpret_cast<uintptr_t>(t.data) % 64 == 0);
    CHECK(t.holder == out[0].holder);  // one allocation, shared by every tensor
  }
}

TEST_CASE("params: packed dims, unknown desc fields and LoD levels are read as Paddle reads them") {
  StreamBuilder s;
  std::string d = StreamBuilder::desc(kFP32, {2, 3}, /*packed=*/true);
  d += "\x18\x05";                  // field 3, varint: unknown, skipped
  d += "\x22\x02xy";                // field 4, length-delimited: unknown, skipped
  d += "\x2d\x01\x02\x03\x04";      // field 5, fixed32
  s.header(d, /*lod_level=*/1);
  const float a[6] = {1, 2, 3, 4, 5, 6};
  s.bytes.append(reinterpret_cast<const char*>(a), sizeof a);
  s.tensor<double>(kFP64, {}, {2.5});
  s.tensor<int64_t>(kINT64, {3}, {7, -8, 9});
  std::vector<Tensor> out;
  Status st = load(s.bytes, &out);
  REQUIRE(st.ok());
  CHECK(out[1].data_as<float>()[4] == 5.0f);
}

TEST_CASE("params: a dim the program leaves open (-1) takes the file's size") {
  const ParameterSpec specs[] = {{"w", DataType::kInt32, 2, {-1, 2}, "int32 [?, 2]"}};
  const uint32_t order[] = {0};
  StreamBuilder s;
  s.tensor<int32_t>(kINT32, {3, 2}, {1, 2, 3, 4, 5, 6});
  std::vector<Tensor> out;
  REQUIRE(load(s.bytes, &out, specs, order, 1).ok());
  CHECK(out[0].dims_string() == "[3, 2]");
}

TEST_CASE("params: a program without parameters takes an empty file only") {
  std::vector<Tensor> out;
  CHECK(load("", &out, nullptr, nullptr, 0).ok());
  CHECK(out.empty());
  CHECK(error_of(good_stream().bytes, nullptr, nullptr, 0) ==
        "'m.pdiparams': 128 bytes follow the last parameter at byte 0: the file holds more tensors than the "
        "program's 0 parameters");
}

TEST_CASE("params: a missing entry names the parameter and where the file ends") {
  StreamBuilder first;
  first.tensor<float>(kFP32, {2, 3}, {1, 2, 3, 4, 5, 6});
  first.tensor<double>(kFP64, {}, {2.5});
  CHECK(error_of(first.bytes) == "'m.pdiparams': parameter 'c' (entry 3 of 3, at byte " +
                                     std::to_string(first.bytes.size()) +
                                     "): missing: the file ends after 2 tensors (parameters are stored sorted by name)");
  CHECK(error_of("") ==
        "'m.pdiparams': parameter 'a' (entry 1 of 3, at byte 0): missing: the file ends after 0 tensors "
        "(parameters are stored sorted by name)");
}

TEST_CASE("params: an extra entry after the last parameter is an error at its byte") {
  StreamBuilder s = good_stream();
  const size_t end = s.bytes.size();
  s.tensor<float>(kFP32, {1}, {0});
  CHECK(error_of(s.bytes) == "'m.pdiparams': 28 bytes follow the last parameter at byte " + std::to_string(end) +
                                 ": the file holds more tensors than the program's 3 parameters");
}

TEST_CASE("params: mis-shaped and mis-typed entries name both shapes") {
  StreamBuilder shape;
  shape.tensor<float>(kFP32, {3, 2}, {1, 2, 3, 4, 5, 6});
  CHECK(error_of(shape.bytes) == "'m.pdiparams': parameter 'a' (entry 1 of 3, at byte 0): the program declares "
                                 "float32 [2, 3], the file holds float32 [3, 2]");
  StreamBuilder rank;
  rank.tensor<float>(kFP32, {6}, {1, 2, 3, 4, 5, 6});
  CHECK_THAT(error_of(rank.bytes), Catch::Contains("declares float32 [2, 3], the file holds float32 [6]"));
  StreamBuilder type;
  type.tensor<float>(kFP32, {2, 3}, {1, 2, 3, 4, 5, 6});
  type.tensor<float>(kFP32, {}, {2.5f});  // b is float64
  CHECK(error_of(type.bytes) == "'m.pdiparams': parameter 'b' (entry 2 of 3, at byte 50): the program declares "
                                "float64 [], the file holds float32 []");
}

TEST_CASE("params: truncation anywhere is reported with the byte where the file ends") {
  const std::string full = good_stream().bytes;
  // Inside the first header (after the version), inside the desc, and inside the last tensor's data.
  CHECK(error_of(full.substr(0, 6)) == "'m.pdiparams': parameter 'a' (entry 1 of 3, at byte 0): the file ends at "
                                       "byte 6, inside the tensor header");
  CHECK(error_of(full.substr(0, 22)) == "'m.pdiparams': parameter 'a' (entry 1 of 3, at byte 0): tensor description "
                                        "size 6 at byte 16 is invalid (2 bytes remain)");
  CHECK(error_of(full.substr(0, full.size() - 1)) ==
        "'m.pdiparams': parameter 'c' (entry 3 of 3, at byte 80): the data of int64 [3] from byte 104 runs past "
        "the end of the file (byte 127)");
}

TEST_CASE("params: broken headers are errors, never crashes") {
  SECTION("a version other than 0") {
    StreamBuilder s;
    s.u32(7);
    s.bytes += std::string(40, '\0');
    CHECK_THAT(error_of(s.bytes), Catch::Contains("(entry 1 of 3, at byte 0): tensor version 7 at byte 0, expected 0"));
  }
  SECTION("the second version field") {
    StreamBuilder s;
    s.u32(0);
    s.u64(0);
    s.u32(2);
    s.bytes += std::string(40, '\0');
    CHECK_THAT(error_of(s.bytes), Catch::Contains("tensor version 2 at byte 12, expected 0"));
  }
  SECTION("a negative description size") {
    StreamBuilder s;
    s.u32(0);
    s.u64(0);
    s.u32(0);
    s.u32(0xffffffffu);
    s.bytes += std::string(40, '\0');
    CHECK_THAT(error_of(s.bytes), Catch::Contains("tensor description size -1 at byte 16 is invalid"));
  }
  SECTION("a LoD level longer than the file") {
    StreamBuilder s;
    s.u32(0);
    s.u64(1);
    s.u64(1u << 30);
    CHECK_THAT(error_of(s.bytes), Catch::Contains("LoD level 0 at byte 12 claims 1073741824 bytes, but 0 remain"));
  }
  SECTION("a description without data_type") {
    StreamBuilder s;
    s.header(std::string("\x10\x02", 2));
    CHECK_THAT(error_of(s.bytes), Catch::Contains("the tensor description at byte 20 has no data_type"));
  }
  SECTION("a description with a cut varint") {
    StreamBuilder s;
    s.header(std::string("\x08\x85", 2));
    CHECK_THAT(error_of(s.bytes), Catch::Contains("is not a valid protobuf message (bad varint)"));
  }
  SECTION("a group wire type") {
    StreamBuilder s;
    s.header(std::string("\x08\x05\x1b", 3));
    CHECK_THAT(error_of(s.bytes), Catch::Contains("is not a valid protobuf message (wire type 3)"));
  }
  SECTION("a dtype kforge lacks, and a code that is no dtype") {
    StreamBuilder fp8;
    fp8.header(StreamBuilder::desc(32, {2}));
    CHECK_THAT(error_of(fp8.bytes), Catch::Contains("has data_type 32 (FP8_E4M3FN), which kforge has no dtype for"));
    StreamBuilder other;
    other.header(StreamBuilder::desc(7, {2}));
    CHECK_THAT(error_of(other.bytes), Catch::Contains("has data_type 7, which is no tensor element type"));
  }
  SECTION("rank above 9 and a negative dim") {
    StreamBuilder rank;
    rank.header(StreamBuilder::desc(kFP32, {1, 1, 1, 1, 1, 1, 1, 1, 1, 1}));
    CHECK_THAT(error_of(rank.bytes), Catch::Contains("has more than 9 dims"));
    StreamBuilder neg;
    neg.header(StreamBuilder::desc(kFP32, {-1, 3}));
    CHECK_THAT(error_of(neg.bytes), Catch::Contains("has a negative dim (-1)"));
  }
  SECTION("dims whose product overflows") {
    StreamBuilder s;
    s.header(StreamBuilder::desc(kFP32, {int64_t{1} << 40, int64_t{1} << 40, 16}));
    CHECK_THAT(error_of(s.bytes), Catch::Contains("the data of float32 [1099511627776, 1099511627776, 16] from byte "
                                                  "38 runs past the end of the file (byte 38)"));
  }
}

TEST_CASE("params: load_file names a file it cannot open") {
  std::vector<Tensor> out;
  Status s = kforge::params::load_file("/nonexistent/dir/x.pdiparams", kSpecs, kOrder, 3, &out);
  REQUIRE_FALSE(s.ok());
  CHECK(s.message() == "cannot open '/nonexistent/dir/x.pdiparams'");
}

TEST_CASE("params: load_file refuses a null path and a directory with a message") {
  std::vector<Tensor> out;
  Status s = kforge::params::load_file(nullptr, kSpecs, kOrder, 3, &out);
  REQUIRE_FALSE(s.ok());
  CHECK(s.message() == "the parameter file's path is null");
  // A directory, and files that are not regular (a FIFO without a writer would block the open; a device never
  // ends): refused before they are opened.
  s = kforge::params::load_file("/", kSpecs, kOrder, 3, &out);
  REQUIRE_FALSE(s.ok());
  CHECK(s.message() == "'/': it is a directory");
  CHECK(out.empty());
  s = kforge::params::load_file("/dev/zero", kSpecs, kOrder, 3, &out);
  REQUIRE_FALSE(s.ok());
  CHECK(s.message() == "'/dev/zero': it is not a regular file");
  const std::string fifo = "kforge-test-params-" + std::to_string(::getpid()) + ".fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  s = kforge::params::load_file(fifo.c_str(), kSpecs, kOrder, 3, &out);
  ::unlink(fifo.c_str());
  REQUIRE_FALSE(s.ok());
  CHECK(s.message() == "'" + fifo + "': it is not a regular file");
}

// The runtime helpers generated classes check callers' tensors with (kforge_runtime.h; tests/e2e/test_hostile.py
// drives them through generated code).
TEST_CASE("runtime: checked_bytes, shares_memory and dims_string on hostile tensors") {
  Tensor t;
  t.dtype = DataType::kFloat32;
  REQUIRE(t.set_dims({4, 16}).ok());
  size_t bytes = 0;
  CHECK(kforge::checked_bytes(t, &bytes));
  CHECK(bytes == 256);
  t.dims[0] = int64_t{1} << 60;  // 2^60 * 16 * 4 bytes
  CHECK_FALSE(kforge::checked_bytes(t, &bytes));
  t.dims[0] = int64_t{1} << 57;  // 2^57 * 16 * 4 = 2^63: one past INT64_MAX
  CHECK_FALSE(kforge::checked_bytes(t, &bytes));
  t.dims[0] = (int64_t{1} << 57) - 1;
  CHECK(kforge::checked_bytes(t, &bytes));
  t.dims[0] = -1;
  CHECK_FALSE(kforge::checked_bytes(t, &bytes));
  t.dims[0] = 0;
  t.dims[1] = INT64_MAX;
  CHECK(kforge::checked_bytes(t, &bytes));
  CHECK(bytes == 0);
  t.ndim = 10;
  CHECK_FALSE(kforge::checked_bytes(t, &bytes));
  CHECK(t.dims_string() == "[rank 10?]");
  t.ndim = -1;
  CHECK_FALSE(kforge::checked_bytes(t, &bytes));
  CHECK(t.dims_string() == "[rank -1?]");

  float storage[64] = {};
  Tensor a, b;
  a.dtype = b.dtype = DataType::kFloat32;
  REQUIRE(a.set_dims({8}).ok());
  REQUIRE(b.set_dims({8}).ok());
  a.data = storage;
  b.data = storage + 8;  // adjacent, not overlapping
  CHECK_FALSE(kforge::shares_memory(a, b));
  b.data = storage + 7;
  CHECK(kforge::shares_memory(a, b));
  CHECK(kforge::shares_memory(b, a));
  b.data = storage;
  CHECK(kforge::shares_memory(a, b));
  b.place = kforge::GPUPlace();  // another address space
  CHECK_FALSE(kforge::shares_memory(a, b));
  b.place = kforge::CPUPlace();
  REQUIRE(b.set_dims({0}).ok());  // no elements: nothing to share
  CHECK_FALSE(kforge::shares_memory(a, b));
  b.data = nullptr;
  CHECK_FALSE(kforge::shares_memory(a, b));

  // MemoryHull: the first, cheap test of an output against every bound parameter.
  kforge::MemoryHull hull;
  CHECK_FALSE(hull.may_overlap(a));
  Tensor p1 = a, p2 = a;
  p1.data = storage + 16;
  p2.data = storage + 40;
  hull.add(p1);
  hull.add(p2);
  a.data = storage + 24;  // between the two: inside the hull, though it overlaps neither
  CHECK(hull.may_overlap(a));
  a.data = storage + 48;  // just past p2
  CHECK_FALSE(hull.may_overlap(a));
  a.data = storage + 8;  // just before p1
  CHECK_FALSE(hull.may_overlap(a));
  a.data = storage + 9;
  CHECK(hull.may_overlap(a));
  hull.clear();
  CHECK_FALSE(hull.may_overlap(a));
}

TEST_CASE("params: Paddle's dtype codes") {
  DataType d = DataType::kUndefined;
  const std::pair<uint64_t, DataType> codes[] = {
      {0, DataType::kBool},     {1, DataType::kInt16},     {2, DataType::kInt32},       {3, DataType::kInt64},
      {4, DataType::kFloat16},  {5, DataType::kFloat32},   {6, DataType::kFloat64},     {20, DataType::kUInt8},
      {21, DataType::kInt8},    {22, DataType::kBFloat16}, {23, DataType::kComplex64},  {24, DataType::kComplex128}};
  for (const auto& [code, dtype] : codes) {
    CHECK(kforge::params::dtype_from_paddle_code(code, &d));
    CHECK(d == dtype);
  }
  CHECK_FALSE(kforge::params::dtype_from_paddle_code(19, &d));
  CHECK_FALSE(kforge::params::dtype_from_paddle_code(7, &d));
}
