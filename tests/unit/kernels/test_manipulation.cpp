// Shape-manipulation kernels and Paddle's shape rules for them.
#include <catch2/catch.hpp>

#include <numeric>

#include "tensor_builder.h"

using namespace kforge;
using namespace kforge::test;
namespace k = kforge::kernels;
namespace m = kforge::meta;

namespace {


template <typename Meta>
std::vector<int64_t> meta_dims(Meta meta) {
  Tensor out;
  Status s = meta(&out);
  INFO(s.message());
  REQUIRE(s.ok());
  return out.shape();
}

template <typename Meta>
std::string meta_error(Meta meta) {
  Tensor out;
  return error_of(meta(&out));
}

using Dims = std::vector<int64_t>;

}  // namespace

TEST_CASE("ReshapeInferMeta: 0 copies a dim, -1 is inferred") {
  Tensor x = empty(DataType::kFloat32, {2, 3, 4});
  CHECK(meta_dims([&](Tensor* o) { return m::ReshapeInferMeta(x, {0, -1}, o); }) == Dims{2, 12});
  CHECK(meta_dims([&](Tensor* o) { return m::ReshapeInferMeta(x, {-1}, o); }) == Dims{24});
  CHECK(meta_dims([&](Tensor* o) { return m::ReshapeInferMeta(x, {4, 0, -1}, o); }) == Dims{4, 3, 2});
  CHECK(meta_error([&](Tensor* o) { return m::ReshapeInferMeta(x, {-1, -1}, o); }).find("more than one -1") !=
        std::string::npos);
  CHECK(meta_error([&](Tensor* o) { return m::ReshapeInferMeta(x, {5, 5}, o); }).find("cannot reshape") !=
        std::string::npos);
  CHECK(meta_error([&](Tensor* o) { return m::ReshapeInferMeta(x, {0, 0, 0, 0}, o); }).find("has rank 3") !=
        std::string::npos);
  CHECK(meta_error([&](Tensor* o) { return m::ReshapeInferMeta(x, {-2, 12}, o); }).find("negative") !=
        std::string::npos);
  CHECK(meta_error([&](Tensor* o) { return m::ReshapeInferMeta(x, {-1, 5}, o); }).find("cannot reshape") !=
        std::string::npos);
}

TEST_CASE("reshape-like kernels keep the elements, as views or copies") {
  Tensor x = iota({2, 3});
  Tensor out = output_from([&](Tensor* o) { return m::ReshapeInferMeta(x, {3, 2}, o); });
  REQUIRE(k::reshape(cpu(), x, {3, 2}, &out).ok());
  CHECK(values<float>(out) == values<float>(x));
  Tensor view = x;  // a view output aliases x
  REQUIRE(view.set_dims({6}).ok());
  REQUIRE(k::flatten(cpu(), x, 0, 1, &view).ok());
  Tensor wrong = empty(DataType::kFloat32, {5});
  CHECK(error_of(k::squeeze(cpu(), x, {}, &wrong)).find("element count") != std::string::npos);
  Tensor wrong_type = empty(DataType::kInt32, {6});
  CHECK_FALSE(k::unsqueeze(cpu(), x, {0}, &wrong_type).ok());
}

TEST_CASE("FlattenInferMeta") {
  Tensor x = empty(DataType::kFloat32, {2, 3, 4});
  CHECK(meta_dims([&](Tensor* o) { return m::FlattenInferMeta(x, 1, 2, o); }) == Dims{2, 12});
  CHECK(meta_dims([&](Tensor* o) { return m::FlattenInferMeta(x, 0, -1, o); }) == Dims{24});
  CHECK(meta_dims([&](Tensor* o) { return m::FlattenInferMeta(x, 1, 1, o); }) == Dims{2, 3, 4});
  CHECK(meta_dims([&](Tensor* o) { return m::FlattenInferMeta(f32({}, {1}), 0, -1, o); }) == Dims{1});
  CHECK(meta_error([&](Tensor* o) { return m::FlattenInferMeta(x, 2, 1, o); }).find("before start_axis") !=
        std::string::npos);
  CHECK_FALSE(meta_error([&](Tensor* o) { return m::FlattenInferMeta(x, 0, 3, o); }).empty());
}

TEST_CASE("SqueezeInferMeta drops named unit axes and keeps the others") {
  Tensor x = empty(DataType::kFloat32, {1, 3, 1, 2});
  CHECK(meta_dims([&](Tensor* o) { return m::SqueezeInferMeta(x, {}, o); }) == Dims{3, 2});
  CHECK(meta_dims([&](Tensor* o) { return m::SqueezeInferMeta(x, {0}, o); }) == Dims{3, 1, 2});
  CHECK(meta_dims([&](Tensor* o) { return m::SqueezeInferMeta(x, {1}, o); }) == Dims{1, 3, 1, 2});
  CHECK(meta_dims([&](Tensor* o) { return m::SqueezeInferMeta(x, {-2}, o); }) == Dims{1, 3, 2});
  CHECK(meta_error([&](Tensor* o) { return m::SqueezeInferMeta(x, {4}, o); }).find("out of range") !=
        std::string::npos);
}

TEST_CASE("UnsqueezeInferMeta follows Paddle's insertion order") {
  Tensor x = empty(DataType::kFloat32, {2, 3});
  CHECK(meta_dims([&](Tensor* o) { return m::UnsqueezeInferMeta(x, {0}, o); }) == Dims{1, 2, 3});
  CHECK(meta_dims([&](Tensor* o) { return m::UnsqueezeInferMeta(x, {-1}, o); }) == Dims{2, 3, 1});
  CHECK(meta_dims([&](Tensor* o) { return m::UnsqueezeInferMeta(x, {0, 3}, o); }) == Dims{1, 2, 3, 1});
  CHECK(meta_dims([&](Tensor* o) { return m::UnsqueezeInferMeta(x, {1, 1}, o); }) == Dims{2, 1, 1, 3});
  CHECK(meta_dims([&](Tensor* o) { return m::UnsqueezeInferMeta(f32({}, {1}), {0}, o); }) == Dims{1});
  CHECK_FALSE(meta_error([&](Tensor* o) { return m::UnsqueezeInferMeta(x, {4}, o); }).empty());
  Tensor deep = empty(DataType::kFloat32, {1, 1, 1, 1, 1, 1, 1, 1});
  CHECK(meta_error([&](Tensor* o) { return m::UnsqueezeInferMeta(deep, {0, 0}, o); }).find("exceeds rank 9") !=
        std::string::npos);
}

TEST_CASE("transpose") {
  Tensor x = iota({2, 3});
  Tensor out = output_from([&](Tensor* o) { return m::TransposeInferMeta(x, {1, 0}, o); });
  CHECK(dims_of(out) == Dims{3, 2});
  REQUIRE(k::transpose(cpu(), x, {1, 0}, &out).ok());
  check_close<float>(out, {0, 3, 1, 4, 2, 5});
  Tensor y = iota({2, 3, 4});
  Tensor p = output_from([&](Tensor* o) { return m::TransposeInferMeta(y, {2, 0, -2}, o); });
  CHECK(dims_of(p) == Dims{4, 2, 3});
  REQUIRE(k::transpose(cpu(), y, {2, 0, 1}, &p).ok());
  // p[a][b][c] = y[b][c][a] = b * 12 + c * 4 + a
  std::vector<float> want;
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 2; ++b)
      for (int c = 0; c < 3; ++c) want.push_back(static_cast<float>(b * 12 + c * 4 + a));
  check_close<float>(p, want);
  // In place (the op declares x -> out): the result lands in x's buffer with the new dims.
  Tensor in_place = x;
  REQUIRE(in_place.set_dims({3, 2}).ok());
  REQUIRE(k::transpose(cpu(), x, {1, 0}, &in_place).ok());
  check_close<float>(in_place, {0, 3, 1, 4, 2, 5});
  CHECK(meta_error([&](Tensor* o) { return m::TransposeInferMeta(y, {0, 0, 1}, o); }).find("not a permutation") !=
        std::string::npos);
  CHECK(meta_error([&](Tensor* o) { return m::TransposeInferMeta(y, {0, 1}, o); }).find("2 entries") !=
        std::string::npos);
}

TEST_CASE("transpose: layout transposes in tiles, merged dims and unit dims, against the index formula") {
  // NCHW <-> NHWC (tiled, edges of partial tiles), channel shuffles, unit dims, rank 5 and 1, int64 elements.
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int>>> cases = {
      {{1, 3, 37, 21}, {0, 2, 3, 1}}, {{2, 19, 5, 40}, {0, 3, 1, 2}}, {{1, 2, 58, 8, 8}, {0, 2, 1, 3, 4}},
      {{1, 16, 16, 1}, {0, 3, 1, 2}}, {{3, 1, 17}, {2, 1, 0}},        {{33, 70}, {1, 0}},
      {{2, 3, 4, 5, 6}, {4, 2, 0, 3, 1}}, {{7}, {0}},                {{1, 1, 1}, {2, 0, 1}},
      {{1, 8, 8, 2, 58}, {0, 1, 2, 4, 3}}, {{3, 5, 2, 7}, {0, 1, 3, 2}},  // NHWC channel shuffles: 2-row interleaves
      {{2, 3, 5, 7}, {0, 2, 3, 1}},       {{1, 4, 9, 11}, {0, 2, 3, 1}},  // RGB / RGBA planes to NHWC: 3, 4 rows
      {{1, 20, 20, 48}, {0, 3, 1, 2}},    {{2, 40, 9, 7}, {0, 2, 3, 1}},  // full 16 x 16 tiles (4 x 4 blocks), edges
  };
  for (const auto& test_case : cases) {
    // Named references, not a structured binding: clang 14 cannot capture bindings in the lambda below.
    const auto& dims = test_case.first;
    const auto& perm = test_case.second;
    for (DataType dtype : {DataType::kFloat32, DataType::kInt64}) {
      INFO(dims.size() << "-d, " << kforge::name_of(dtype));
      Tensor x = empty(dtype, dims);
      for (int64_t i = 0; i < x.numel(); ++i) {
        if (dtype == DataType::kFloat32) x.data_as<float>()[i] = static_cast<float>(i);
        if (dtype == DataType::kInt64) x.data_as<int64_t>()[i] = i * 3 + 1;
      }
      Tensor out = output_from([&](Tensor* o) { return m::TransposeInferMeta(x, perm, o); });
      REQUIRE(k::transpose(cpu(), x, perm, &out).ok());
      // out[i] = x[sum_d idx_d * x_stride[perm[d]]] for out's multi-index idx of i.
      std::vector<int64_t> x_strides(dims.size(), 1);
      for (size_t d = dims.size(); d-- > 1;) x_strides[d - 1] = x_strides[d] * dims[d];
      int64_t mismatches = 0;
      for (int64_t i = 0; i < out.numel(); ++i) {
        int64_t rest = i, source = 0;
        for (size_t d = dims.size(); d-- > 0;) {
          const int64_t extent = dims[static_cast<size_t>(perm[d])];
          source += (rest % extent) * x_strides[static_cast<size_t>(perm[d])];
          rest /= extent;
        }
        const bool same = dtype == DataType::kFloat32 ? out.data_as<float>()[i] == x.data_as<float>()[source]
                                                       : out.data_as<int64_t>()[i] == x.data_as<int64_t>()[source];
        if (!same) ++mismatches;
      }
      CHECK(mismatches == 0);
    }
  }
}

TEST_CASE("expand broadcasts to a target shape") {
  Tensor x = f32({3, 1}, {1, 2, 3});
  Tensor out = output_from([&](Tensor* o) { return m::ExpandInferMeta(x, {2, 3, 4}, o); });
  CHECK(dims_of(out) == Dims{2, 3, 4});
  REQUIRE(k::expand(cpu(), x, {2, 3, 4}, &out).ok());
  std::vector<float> want;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int c = 0; c < 4; ++c) want.push_back(static_cast<float>(j + 1));
  check_close<float>(out, want);
  CHECK(meta_dims([&](Tensor* o) { return m::ExpandInferMeta(x, {-1, 2}, o); }) == Dims{3, 2});
  CHECK(meta_error([&](Tensor* o) { return m::ExpandInferMeta(x, {2}, o); }).find("fewer dims") != std::string::npos);
  CHECK(meta_error([&](Tensor* o) { return m::ExpandInferMeta(x, {4, 2}, o); }).find("cannot expand") !=
        std::string::npos);
  CHECK(meta_error([&](Tensor* o) { return m::ExpandInferMeta(x, {-1, 3, 2}, o); }).find("new dim") !=
        std::string::npos);
  Tensor wrong = empty(DataType::kFloat32, {2, 3, 5});
  CHECK(error_of(k::expand(cpu(), x, {2, 3, 4}, &wrong)).find("expected [2, 3, 4]") != std::string::npos);
}

TEST_CASE("concat along an axis") {
  Tensor a = f32({2, 2}, {1, 2, 3, 4});
  Tensor b = f32({2, 1}, {5, 6});
  const Tensor* items[] = {&a, &b};
  TensorList list{items, 2};
  Tensor out = output_from([&](Tensor* o) { return m::ConcatInferMeta(list, -1, o); });
  CHECK(dims_of(out) == Dims{2, 3});
  REQUIRE(k::concat(cpu(), list, 1, &out).ok());
  check_close<float>(out, {1, 2, 5, 3, 4, 6});
  Tensor c = f32({1, 2}, {7, 8});
  const Tensor* rows[] = {&a, &c};
  Tensor tall = output_from([&](Tensor* o) { return m::ConcatInferMeta(TensorList{rows, 2}, 0, o); });
  REQUIRE(k::concat(cpu(), TensorList{rows, 2}, 0, &tall).ok());
  check_close<float>(tall, {1, 2, 3, 4, 7, 8});
  CHECK(meta_error([&](Tensor* o) { return m::ConcatInferMeta(list, 0, o); }).find("outside axis 0") !=
        std::string::npos);
  CHECK(meta_error([&](Tensor* o) { return m::ConcatInferMeta(TensorList{}, 0, o); }).find("no inputs") !=
        std::string::npos);
  CHECK_FALSE(meta_error([&](Tensor* o) { return m::ConcatInferMeta(list, 2, o); }).empty());
}

TEST_CASE("concat skips an input that already lies in its slice of the output (kforge compile's concat in place)") {
  // out [2, 3]: a [2, 2] copied, b [2, 1] already in column 2 (a strided slice: rows 3 apart), which the concat must
  // neither read as a dense tensor nor overwrite.
  Tensor out = f32({2, 3}, {-1, -1, 50, -1, -1, 60});
  Tensor a = f32({2, 2}, {1, 2, 3, 4});
  Tensor b = f32({2, 1}, {0, 0});
  b.holder.reset();
  b.data = out.data_as<float>() + 2;
  const Tensor* items[] = {&a, &b};
  REQUIRE(k::concat(cpu(), TensorList{items, 2}, 1, &out).ok());
  check_close<float>(out, {1, 2, 50, 3, 4, 60});
  // The same input somewhere else is copied.
  Tensor elsewhere = f32({2, 1}, {7, 8});
  const Tensor* copied[] = {&a, &elsewhere};
  REQUIRE(k::concat(cpu(), TensorList{copied, 2}, 1, &out).ok());
  check_close<float>(out, {1, 2, 7, 3, 4, 8});
}

TEST_CASE("split with sections (one may be -1) and split_with_num") {
  Tensor x = iota({2, 5});
  Tensor p0, p1;
  Tensor* outs[] = {&p0, &p1};
  MutableTensorList list{outs, 2};
  REQUIRE(m::SplitInferMeta(x, {2, -1}, 1, list).ok());
  CHECK(dims_of(p0) == Dims{2, 2});
  CHECK(dims_of(p1) == Dims{2, 3});
  REQUIRE(p0.allocate().ok());
  REQUIRE(p1.allocate().ok());
  REQUIRE(k::split(cpu(), x, {2, -1}, 1, list).ok());
  check_close<float>(p0, {0, 1, 5, 6});
  check_close<float>(p1, {2, 3, 4, 7, 8, 9});
  CHECK(error_of(m::SplitInferMeta(x, {2, 2}, 1, list)).find("do not add up to 5") != std::string::npos);
  CHECK(error_of(m::SplitInferMeta(x, {1, 1, 3}, 1, list)).find("3 pieces but 2 outputs") != std::string::npos);

  Tensor y = iota({6});
  Tensor q0, q1, q2;
  Tensor* qs[] = {&q0, &q1, &q2};
  MutableTensorList three{qs, 3};
  REQUIRE(m::SplitWithNumInferMeta(y, 3, 0, three).ok());
  for (Tensor* q : qs) REQUIRE(q->allocate().ok());
  REQUIRE(k::split_with_num(cpu(), y, 3, 0, three).ok());
  check_close<float>(q2, {4, 5});
  CHECK(error_of(m::SplitWithNumInferMeta(iota({5}), 3, 0, three)).find("equal parts") != std::string::npos);
}

TEST_CASE("stack inserts a new axis") {
  Tensor a = f32({2}, {1, 2});
  Tensor b = f32({2}, {3, 4});
  const Tensor* items[] = {&a, &b};
  TensorList list{items, 2};
  Tensor rows = output_from([&](Tensor* o) { return m::StackInferMeta(list, 0, o); });
  CHECK(dims_of(rows) == Dims{2, 2});
  REQUIRE(k::stack(cpu(), list, 0, &rows).ok());
  check_close<float>(rows, {1, 2, 3, 4});
  Tensor cols = output_from([&](Tensor* o) { return m::StackInferMeta(list, -1, o); });
  REQUIRE(k::stack(cpu(), list, -1, &cols).ok());
  check_close<float>(cols, {1, 3, 2, 4});
  CHECK_FALSE(meta_error([&](Tensor* o) { return m::StackInferMeta(list, 2, o); }).empty());
  Tensor c = f32({3}, {1, 2, 3});
  const Tensor* mixed[] = {&a, &c};
  CHECK(meta_error([&](Tensor* o) { return m::StackInferMeta(TensorList{mixed, 2}, 0, o); }).find("differs") !=
        std::string::npos);
}

TEST_CASE("slice clamps like Paddle and decreases axes") {
  Tensor x = iota({3, 4});
  Tensor out = output_from(
      [&](Tensor* o) { return m::SliceRawInferMeta(x, {0, 1}, {1, -3}, {3, 100}, {1, 1}, {}, o); });
  CHECK(dims_of(out) == Dims{2, 3});
  REQUIRE(k::slice(cpu(), x, {0, 1}, {1, -3}, {3, 100}, {1, 1}, {}, &out).ok());
  check_close<float>(out, {5, 6, 7, 9, 10, 11});
  Tensor row = output_from([&](Tensor* o) { return m::SliceRawInferMeta(x, {0}, {1}, {2}, {1}, {0}, o); });
  CHECK(dims_of(row) == Dims{4});
  REQUIRE(k::slice(cpu(), x, {0}, {1}, {2}, {1}, {0}, &row).ok());
  check_close<float>(row, {4, 5, 6, 7});
  Tensor one = output_from([&](Tensor* o) { return m::SliceRawInferMeta(x, {0, 1}, {2, 3}, {3, 4}, {}, {0, 1}, o); });
  CHECK(one.ndim == 0);
  REQUIRE(k::slice(cpu(), x, {0, 1}, {2, 3}, {3, 4}, {}, {0, 1}, &one).ok());
  check_close<float>(one, {11});
  CHECK(meta_dims([&](Tensor* o) { return m::SliceRawInferMeta(x, {1}, {5}, {9}, {}, {}, o); }) == Dims{3, 0});
  CHECK(meta_error([&](Tensor* o) { return m::SliceRawInferMeta(x, {0}, {2}, {1}, {}, {}, o); }).find("comes before") !=
        std::string::npos);
  CHECK(meta_error([&](Tensor* o) { return m::SliceRawInferMeta(x, {0}, {0}, {2}, {}, {0}, o); }).find("expected 1") !=
        std::string::npos);
  CHECK(meta_error([&](Tensor* o) { return m::SliceRawInferMeta(x, {0, 1}, {0}, {1}, {}, {}, o); }).find("must match") !=
        std::string::npos);
}

TEST_CASE("strided_slice with positive and negative strides") {
  Tensor x = iota({6});
  auto run = [&](std::vector<int> axes, IntArray starts, IntArray ends, IntArray strides) {
    Tensor out = output_from([&](Tensor* o) { return m::StridedSliceInferMeta(x, axes, starts, ends, strides, o); });
    Status s = k::strided_slice(cpu(), x, axes, starts, ends, strides, &out);
    INFO(s.message());
    REQUIRE(s.ok());
    return values<float>(out);
  };
  CHECK(run({0}, {0}, {6}, {2}) == std::vector<float>{0, 2, 4});
  CHECK(run({0}, {1}, {100}, {2}) == std::vector<float>{1, 3, 5});
  CHECK(run({0}, {5}, {-1}, {-1}) == std::vector<float>{5, 4, 3, 2, 1, 0});  // end -1 runs to the front
  CHECK(run({0}, {4}, {0}, {-2}) == std::vector<float>{4, 2});
  CHECK(run({0}, {-2}, {-6}, {-1}) == std::vector<float>{4, 3, 2, 1});
  CHECK(run({0}, {10}, {-1}, {-2}) == std::vector<float>{5, 3, 1});
  Tensor grid = iota({3, 4});
  Tensor cols = output_from(
      [&](Tensor* o) { return m::StridedSliceInferMeta(grid, {1, 0}, {3, 0}, {-1, 3}, {-2, 2}, o); });
  CHECK(dims_of(cols) == Dims{2, 2});
  REQUIRE(k::strided_slice(cpu(), grid, {1, 0}, {3, 0}, {-1, 3}, {-2, 2}, &cols).ok());
  check_close<float>(cols, {3, 1, 11, 9});
  Tensor out;
  CHECK(error_of(m::StridedSliceInferMeta(x, {0}, {0}, {6}, {0}, &out)).find("stride on axis 0 is 0") !=
        std::string::npos);
  CHECK(error_of(m::StridedSliceInferMeta(x, {0}, {4}, {1}, {1}, &out)).find("positive stride") != std::string::npos);
}
