// The runtime header shared by generated code and kernel libraries (templates/runtime/kforge_runtime.h).
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kforge_kernels.h"
#include "kforge_runtime.h"

using namespace kforge;

TEST_CASE("runtime: version macro is a positive integer") {
  static_assert(KFORGE_RUNTIME_VERSION >= 1, "version");
  CHECK(KFORGE_RUNTIME_VERSION == 4);
}

TEST_CASE("runtime: kernel library hooks are called only when installed and only for tensors with data") {
  static std::vector<std::pair<const void*, size_t>> calls;
  calls.clear();
  const KernelLibraryHooks saved = kernel_library_hooks();
  Tensor t;
  t.dtype = DataType::kFloat32;
  REQUIRE(t.set_dims({4}).ok());
  REQUIRE(t.allocate().ok());
  kernel_library_hooks() = KernelLibraryHooks{};
  declare_constant(t);  // nothing installed
  kernel_library_hooks().declare_constant = [](const void* data, size_t bytes) { calls.emplace_back(data, bytes); };
  kernel_library_hooks().release_constant = [](const void* data) { calls.emplace_back(data, 0); };
  declare_constant(t);
  declare_constant(Tensor{});  // no data: not declared
  release_constant(t);
  release_constant(Tensor{});
  kernel_library_hooks() = saved;
  REQUIRE(calls.size() == 2);
  CHECK(calls[0] == std::make_pair(static_cast<const void*>(t.data), size_t{16}));
  CHECK(calls[1] == std::make_pair(static_cast<const void*>(t.data), size_t{0}));
}

TEST_CASE("runtime: DataType sizes and Paddle names") {
  CHECK(size_of(DataType::kBool) == 1);
  CHECK(size_of(DataType::kUInt8) == 1);
  CHECK(size_of(DataType::kFloat16) == 2);
  CHECK(size_of(DataType::kBFloat16) == 2);
  CHECK(size_of(DataType::kInt32) == 4);
  CHECK(size_of(DataType::kFloat32) == 4);
  CHECK(size_of(DataType::kInt64) == 8);
  CHECK(size_of(DataType::kComplex64) == 8);
  CHECK(size_of(DataType::kComplex128) == 16);
  CHECK(size_of(DataType::kUndefined) == 0);
  CHECK(std::string(name_of(DataType::kFloat32)) == "float32");
  CHECK(std::string(name_of(DataType::kInt64)) == "int64");
  CHECK(std::string(name_of(DataType::kBool)) == "bool");
  CHECK(std::string(name_of(DataType::kBFloat16)) == "bfloat16");
  CHECK(std::string(name_of(DataType::kUndefined)) == "undefined");
  // Paddle's upper-case spellings are aliases, so YAML defaults compile unchanged.
  CHECK(DataType::FLOAT32 == DataType::kFloat32);
  CHECK(DataType::UNDEFINED == DataType::kUndefined);
  CHECK(DataType::INT64 == DataType::kInt64);
}

TEST_CASE("runtime: parse_data_type reads every Paddle spelling") {
  struct Case {
    const char* text;
    DataType want;
  };
  for (Case c : {Case{"float32", DataType::kFloat32}, Case{"FLOAT32", DataType::kFloat32},
                 Case{"DataType::FLOAT32", DataType::kFloat32}, Case{"phi::DataType::INT64", DataType::kInt64},
                 Case{"paddle.float16", DataType::kFloat16}, Case{"f32", DataType::kFloat32},
                 Case{"bf16", DataType::kBFloat16}, Case{"i64", DataType::kInt64}, Case{"ui8", DataType::kUInt8},
                 Case{"b", DataType::kBool}, Case{"bool", DataType::kBool}, Case{"c128", DataType::kComplex128},
                 Case{"Undefined", DataType::kUndefined}}) {
    INFO(c.text);
    DataType got = DataType::kFloat64;
    CHECK(parse_data_type(c.text, &got));
    CHECK(got == c.want);
  }
  DataType untouched = DataType::kInt8;
  CHECK_FALSE(parse_data_type("float33", &untouched));
  CHECK_FALSE(parse_data_type("", &untouched));
  CHECK(untouched == DataType::kInt8);
}

TEST_CASE("runtime: places and layouts") {
  CHECK(Place{}.backend == Backend::kUndefined);
  CHECK(CPUPlace() == Place{Backend::kCPU, 0});
  CHECK(GPUPlace(1) != GPUPlace(0));
  DataLayout layout = DataLayout::kUndefined;
  CHECK(parse_data_layout("NHWC", &layout));
  CHECK(layout == DataLayout::kNHWC);
  CHECK(parse_data_layout("AnyLayout", &layout));
  CHECK(layout == DataLayout::kAnyLayout);
  CHECK_FALSE(parse_data_layout("NWHC", &layout));
  CHECK(std::string(name_of(DataLayout::kNCHW)) == "NCHW");
}

TEST_CASE("runtime: Scalar keeps its dtype and converts") {
  Scalar f = 2.5;
  CHECK(f.dtype() == DataType::kFloat64);
  CHECK(f.is_floating());
  CHECK(f.to<int>() == 2);
  CHECK(f.to<float>() == 2.5f);
  Scalar i = int64_t{-7};
  CHECK(i.dtype() == DataType::kInt64);
  CHECK(i.to<double>() == -7.0);
  Scalar small = 3;
  CHECK(small.dtype() == DataType::kInt32);
  Scalar b = false;
  CHECK(b.is_bool());
  CHECK(b.to<float>() == 0.0f);
  CHECK(Scalar(true).to<int>() == 1);
  CHECK(Scalar(1.0f).dtype() == DataType::kFloat32);
  CHECK(Scalar(3).with_dtype(DataType::kInt8).dtype() == DataType::kInt8);
  CHECK(Scalar(3).with_dtype(DataType::kInt8).to<int>() == 3);
  CHECK(Scalar(1) == Scalar(1));
  CHECK(Scalar(1) != Scalar(1.0));  // an int and a float are different attribute values
  Scalar big = int64_t{1} << 62;
  CHECK(big.to<int64_t>() == (int64_t{1} << 62));  // no detour through double
}

TEST_CASE("runtime: IntArray") {
  IntArray a = {2, -1, 3};
  CHECK(a.size() == 3);
  CHECK(a[1] == -1);
  IntArray from32(std::vector<int32_t>{4, 5});
  CHECK(from32.values() == std::vector<int64_t>{4, 5});
  CHECK(IntArray{} .empty());
  CHECK(IntArray({1, 2}) == IntArray(std::vector<int64_t>{1, 2}));
}

namespace {

Status fails_with(const std::string& what) { return Status::Error("failed: ", what, " code ", 42); }
Status propagate(bool fail) {
  KFORGE_RETURN_IF_ERROR(fail ? fails_with("inner") : Status::OK());
  return Status::Error("reached the end");
}

}  // namespace

TEST_CASE("runtime: Status is one pointer, OK is null") {
  static_assert(sizeof(Status) == sizeof(void*), "Status must stay one pointer");
  Status ok = Status::OK();
  CHECK(ok.ok());
  CHECK(ok.message().empty());
  Status err = fails_with("x");
  CHECK_FALSE(err.ok());
  CHECK(err.message() == "failed: x code 42");
  Status copy = err;
  CHECK(copy.message() == err.message());
  Status moved = std::move(copy);
  CHECK(moved.message() == "failed: x code 42");
  copy = moved;
  CHECK(copy.message() == "failed: x code 42");
  copy = Status::OK();
  CHECK(copy.ok());
  CHECK(propagate(true).message() == "failed: inner code 42");
  CHECK(propagate(false).message() == "reached the end");
  CHECK(Status::Error("dtype ", DataType::kInt32, ", flag ", true).message() == "dtype int32, flag true");
}

TEST_CASE("runtime: Tensor dims, numel and allocation") {
  Tensor t;
  CHECK(t.ndim == 0);
  CHECK(t.numel() == 1);  // rank 0 holds one element
  t.dtype = DataType::kFloat32;
  REQUIRE(t.set_dims({2, 3, 4}).ok());
  CHECK(t.numel() == 24);
  CHECK(t.bytes() == 96);
  CHECK(t.dim(-1) == 4);
  CHECK(t.dims_string() == "[2, 3, 4]");
  CHECK(t.shape() == std::vector<int64_t>{2, 3, 4});
  REQUIRE(t.allocate().ok());
  CHECK(t.holder != nullptr);
  CHECK(reinterpret_cast<uintptr_t>(t.data) % 64 == 0);
  t.data_as<float>()[23] = 1.5f;
  Tensor view = t;  // copies share the bytes
  CHECK(view.data_as<float>()[23] == 1.5f);

  std::vector<int64_t> ten(10, 1);
  Status too_deep = t.set_dims(ten);
  CHECK_FALSE(too_deep.ok());
  CHECK(too_deep.message().find("exceeds the maximum rank 9") != std::string::npos);

  Tensor undefined;
  CHECK_FALSE(undefined.allocate().ok());
  Tensor dynamic;
  dynamic.dtype = DataType::kFloat32;
  REQUIRE(dynamic.set_dims({-1, 3}).ok());
  CHECK(dynamic.allocate().message().find("dynamic dims [-1, 3]") != std::string::npos);
  Tensor gpu;
  gpu.dtype = DataType::kFloat32;
  gpu.place = GPUPlace();
  CHECK(gpu.allocate().message().find("no device allocator") != std::string::npos);
}

TEST_CASE("runtime: tensor lists") {
  Tensor a, b;
  const Tensor* items[] = {&a, &b};
  TensorList list{items, 2};
  CHECK(list.size == 2);
  CHECK(&list[1] == &b);
  int count = 0;
  for (const Tensor* t : list) count += t != nullptr;
  CHECK(count == 2);
  CHECK(TensorList{}.empty());
}

TEST_CASE("runtime: tensors as IntArray and Scalar values") {
  Tensor t;
  t.dtype = DataType::kInt32;
  REQUIRE(t.set_dims({3}).ok());
  REQUIRE(t.allocate().ok());
  int32_t* p = t.data_as<int32_t>();
  p[0] = 4;
  p[1] = -1;
  p[2] = 0;
  IntArray a;
  REQUIRE(int_array_from_tensor(t, &a).ok());
  CHECK(a.values() == std::vector<int64_t>{4, -1, 0});
  Scalar s;
  CHECK_FALSE(scalar_from_tensor(t, &s).ok());  // three elements
  Tensor one;
  one.dtype = DataType::kFloat32;
  REQUIRE(one.set_dims({1}).ok());
  REQUIRE(one.allocate().ok());
  *one.data_as<float>() = 0.25f;
  REQUIRE(scalar_from_tensor(one, &s).ok());
  CHECK(s.to<double>() == 0.25);
  CHECK_FALSE(int_array_from_tensor(one, &a).ok());  // float is not an IntArray
  const Tensor* parts[] = {&one};
  CHECK_FALSE(int_array_from_tensors(TensorList{parts, 1}, &a).ok());
}

TEST_CASE("runtime: Workspace is a bump allocator") {
  alignas(64) unsigned char buffer[512];
  Workspace ws(buffer, sizeof buffer);
  void* a = ws.allocate(10);
  REQUIRE(a == buffer);
  void* b = ws.allocate(10);
  CHECK(b == buffer + 64);  // aligned to 64
  size_t mark = ws.mark();
  CHECK(ws.allocate(1000) == nullptr);  // too big: nothing taken
  CHECK(ws.mark() == mark);
  float* f = ws.allocate_array<float>(16);
  CHECK(reinterpret_cast<unsigned char*>(f) == buffer + 128);
  ws.release(mark);
  CHECK(ws.used() == mark);
  CHECK(ws.peak() == 128 + 64);
  ws.reset();
  CHECK(ws.used() == 0);
  CHECK(Workspace().allocate(1) == nullptr);
}

TEST_CASE("runtime: KernelContext defaults to the CPU") {
  KernelContext ctx;
  CHECK(ctx.place == CPUPlace());
  CHECK(ctx.dtype == DataType::kUndefined);
  CHECK(ctx.stream == nullptr);
  CHECK(ctx.scratch == nullptr);
}

TEST_CASE("runtime: kforge's kernel library installs its hooks at start-up") {
  // kernels/settings.cc fills them during static initialisation; generated classes reach the settings only so.
  CHECK(kernel_library_hooks().set_num_threads == &kforge::kernels::set_num_threads);
  CHECK(kernel_library_hooks().declare_constant == &kforge::kernels::declare_constant);
  CHECK(kernel_library_hooks().release_constant == &kforge::kernels::release_constant);
}

// What generated classes compute the sizes derived from a caller's dims with (codegen/size_table.h, the generated compute_sizes()).
TEST_CASE("runtime: CheckedInt finds int64 overflow instead of wrapping") {
  using kforge::CheckedInt;
  const CheckedInt big = int64_t{1} << 62;
  CHECK((3 * CheckedInt(4) + 5).value() == 17);
  CHECK((CheckedInt(7) - 9).value() == -2);
  CHECK((big + big - 1).ok() == false);  // 2^63 overflows before the - 1
  CHECK((big - 1 + big).ok());
  CHECK((big - 1 + big).value() == INT64_MAX);
  CHECK_FALSE((2 * big).ok());
  CHECK_FALSE((big * 2 - big).ok());  // an overflow stays, whatever follows
  CHECK_FALSE((-CheckedInt(INT64_MIN)).ok());
  CHECK(kforge::checked_floor_div(CheckedInt(-7), 2).value() == -4);  // Python's //
  CHECK(kforge::checked_ceil_div(CheckedInt(7), 2).value() == 4);
  CHECK(kforge::checked_ceil_div(CheckedInt(-7), 2).value() == -3);
  CHECK_FALSE(kforge::checked_floor_div(CheckedInt(1), 0).ok());
  CHECK_FALSE(kforge::checked_floor_div(CheckedInt(INT64_MIN), -1).ok());
  CHECK(kforge::checked_max(CheckedInt(3), 9).value() == 9);
  CHECK(kforge::checked_min(CheckedInt(3), 9).value() == 3);
  CHECK_FALSE(kforge::checked_max(2 * big, 1).ok());
  CHECK_FALSE(kforge::checked_min(1, 2 * big).ok());
}
