// The last kernels of issue 34 (kernels/detection.cc): deformable_conv, roi_align, isnan, linspace, index_sample;
// issue 33's nonzero and masked_select (output sizes that depend on data).
// Values on small inputs worked by hand from Paddle's CPU kernels (tests/paddle/ checks the same ops against Paddle
// itself), and the errors of bad inputs.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "tensor_builder.h"

using namespace kforge;
using namespace kforge::test;
namespace k = kforge::kernels;
namespace m = kforge::meta;

namespace {

using DetDims = std::vector<int64_t>;

}  // namespace

TEST_CASE("deformable_conv: bilinear samples at the offsets, zero outside x, the mask, and bad shapes") {
  const Tensor x = iota({1, 1, 3, 3});  // 0 .. 8
  const Tensor filter = f32({1, 1, 1, 1}, {2});
  std::vector<float> off(18, 0.0f);
  off[0] = 0.5f;        // pixel (0, 0): y + 0.5, x + 0.25 -> (0.5, 0.25), 1.75
  off[9 + 0] = 0.25f;
  off[4] = -1.5f;       // pixel (1, 1): y - 1.5 -> (-0.5, 1): half of x[0, 1], the row above is outside
  off[9 + 8] = 1.0f;    // pixel (2, 2): x + 1 -> column 3, outside: 0
  const Tensor offset = f32({1, 2, 3, 3}, off);
  std::vector<float> mk(9, 1.0f);
  mk[1] = 0.5f;
  const Tensor mask = f32({1, 1, 3, 3}, mk);
  const std::vector<int> one{1, 1}, zero{0, 0};
  Tensor out = output_from([&](Tensor* o) {
    return m::DeformableConvInferMeta(x, offset, filter, &mask, one, zero, one, 1, 1, 64, o);
  });
  CHECK(dims_of(out) == DetDims{1, 1, 3, 3});
  REQUIRE(k::deformable_conv(cpu(), x, offset, filter, &mask, one, zero, one, 1, 1, 64, &out).ok());
  check_close<float>(out, {3.5f, 1, 4, 6, 1, 10, 12, 14, 0});
  // Without the mask (deformable conv v1), pixel (0, 1) is whole again.
  REQUIRE(k::deformable_conv(cpu(), x, offset, filter, nullptr, one, zero, one, 1, 1, 64, &out).ok());
  CHECK(values<float>(out)[1] == 2);

  Tensor e;
  const Tensor small = f32({1, 2, 2, 2}, std::vector<float>(8, 0.0f));
  CHECK(error_of(m::DeformableConvInferMeta(x, small, filter, nullptr, one, zero, one, 1, 1, 64, &e))
            .find("offset must be [1, 2, 3, 3]") != std::string::npos);
  CHECK(error_of(m::DeformableConvInferMeta(x, offset, f32({1, 2, 1, 1}, {1, 1}), nullptr, one, zero, one, 1, 1, 64,
                                            &e))
            .find("does not fit x") != std::string::npos);
  CHECK(error_of(m::DeformableConvInferMeta(x, offset, filter, nullptr, one, zero, one, 1, 0, 64, &e))
            .find("must be positive") != std::string::npos);
}

TEST_CASE("roi_align: the sample grid, aligned boxes, boxes_num, and an empty grid is NaN as in Paddle") {
  const Tensor x = iota({1, 1, 4, 4});  // 0 .. 15
  const Tensor box = f32({1, 4}, {0, 0, 2, 2});
  const Tensor count = i32({1}, {1});
  Tensor out = output_from([&](Tensor* o) { return m::RoiAlignInferMeta(x, box, &count, 1, 1, 1.0f, 2, false, o); });
  CHECK(dims_of(out) == DetDims{1, 1, 1, 1});
  // Samples at (0.5, 0.5), (0.5, 1.5), (1.5, 0.5), (1.5, 1.5): 2.5, 3.5, 6.5, 7.5.
  REQUIRE(k::roi_align(cpu(), x, box, &count, 1, 1, 1.0f, 2, false, &out).ok());
  check_close<float>(out, {5});
  // aligned shifts the box by half a pixel: samples at the pixels 0, 1, 4, 5.
  REQUIRE(k::roi_align(cpu(), x, box, nullptr, 1, 1, 1.0f, 2, true, &out).ok());
  check_close<float>(out, {2.5f});
  // An aligned box of negative size has no samples: 0 * (1 / 0).
  const Tensor flipped = f32({1, 4}, {2, 2, 1.5f, 1.5f});
  REQUIRE(k::roi_align(cpu(), x, flipped, nullptr, 1, 1, 1.0f, -1, true, &out).ok());
  CHECK(std::isnan(values<float>(out)[0]));

  const Tensor two = i32({1}, {2});
  CHECK(error_of(k::roi_align(cpu(), x, box, &two, 1, 1, 1.0f, 2, false, &out)).find("must add up") !=
        std::string::npos);
  Tensor e;
  CHECK(error_of(m::RoiAlignInferMeta(x, f32({1, 3}, {0, 0, 1}), nullptr, 1, 1, 1.0f, 2, false, &e))
            .find("boxes must be [num_rois, 4]") != std::string::npos);
  CHECK(error_of(m::RoiAlignInferMeta(x, box, nullptr, 0, 1, 1.0f, 2, false, &e)).find("must be positive") !=
        std::string::npos);
}

TEST_CASE("isnan, linspace and index_sample") {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const Tensor fx = f32({3}, {1, nan, inf});
  Tensor isn = output_from([&](Tensor* o) { return m::IsfiniteInferMeta(fx, o); });
  CHECK(isn.dtype == DataType::kBool);
  REQUIRE(k::isnan(cpu(), fx, &isn).ok());
  CHECK(values<uint8_t>(isn) == std::vector<uint8_t>{0, 1, 0});
  const Tensor ix = i64({2}, {0, -1});
  Tensor isi = output_from([&](Tensor* o) { return m::IsfiniteInferMeta(ix, o); });
  REQUIRE(k::isnan(cpu(), ix, &isi).ok());
  CHECK(values<uint8_t>(isi) == std::vector<uint8_t>{0, 0});

  // linspace: the first half from start, the second from stop (int32: each value truncated).
  const Tensor start = f32({1}, {0}), stop = f32({1}, {1}), five = i64({1}, {5});
  Tensor lin = output_from([&](Tensor* o) { return m::LinspaceInferMeta(start, stop, five, DataType::kFloat32, o); });
  CHECK(dims_of(lin) == DetDims{5});
  REQUIRE(k::linspace(cpu(), start, stop, five, DataType::kFloat32, &lin).ok());
  check_close<float>(lin, {0, 0.25f, 0.5f, 0.75f, 1});
  const Tensor ten = f32({1}, {10}), four = i32({1}, {4});
  Tensor li = output_from([&](Tensor* o) { return m::LinspaceInferMeta(start, ten, four, DataType::kInt32, o); });
  REQUIRE(k::linspace(cpu(), start, ten, four, DataType::kInt32, &li).ok());
  CHECK(values<int32_t>(li) == std::vector<int32_t>{0, 3, 6, 10});
  // A float end that no int32 holds is an error, not an undefined conversion.
  CHECK(error_of(k::linspace(cpu(), start, f32({1}, {1e10f}), four, DataType::kInt32, &li)).find("does not fit") !=
        std::string::npos);
  Tensor e;
  CHECK(error_of(m::LinspaceInferMeta(start, stop, i64({1}, {-1}), DataType::kFloat32, &e)).find("negative") !=
        std::string::npos);
  CHECK(error_of(m::LinspaceInferMeta(start, stop, f32({1}, {3}), DataType::kFloat32, &e)).find("int32 or int64") !=
        std::string::npos);
  CHECK(error_of(m::LinspaceInferMeta(boolean({1}, {1}), stop, five, DataType::kFloat32, &e)).find("start and stop") !=
        std::string::npos);

  const Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor index = i64({2, 2}, {2, 0, 1, 1});
  Tensor picked = output_from([&](Tensor* o) { return m::IndexSampleInferMeta(x, index, o); });
  CHECK(dims_of(picked) == DetDims{2, 2});
  REQUIRE(k::index_sample(cpu(), x, index, &picked).ok());
  check_close<float>(picked, {3, 1, 5, 5});
  const Tensor bad = i32({2, 1}, {0, 3});
  Tensor o1 = empty(DataType::kFloat32, {2, 1});
  CHECK(error_of(k::index_sample(cpu(), x, bad, &o1)).find("index[1, 0] is 3, outside [0, 3)") != std::string::npos);
  CHECK(error_of(m::IndexSampleInferMeta(x, i64({3, 1}, {0, 0, 0}), &e)).find("same first dim") != std::string::npos);
}

TEST_CASE("nonzero and masked_select: laid out for the most, the real count written into out's dims") {
  // nonzero: [numel, rank] capacity; the coordinates of the nonzero elements, row-major.
  const Tensor c = f32({2, 3}, {0, 1.5f, 0, -2, 0, 3});
  Tensor nz = output_from([&](Tensor* o) { return m::NonZeroInferMeta(c, o); });
  CHECK(nz.dtype == DataType::kInt64);
  CHECK(dims_of(nz) == DetDims{6, 2});
  REQUIRE(k::nonzero(cpu(), c, &nz).ok());
  CHECK(dims_of(nz) == DetDims{3, 2});
  CHECK(values<int64_t>(nz) == std::vector<int64_t>{0, 1, 1, 0, 1, 2});
  // Called again on the same out, whose dims the first call shrank: it must be laid out for the most again first
  // (the generated code does that before every call).
  CHECK(error_of(k::nonzero(cpu(), c, &nz)).find("has no room for [6, 2]") != std::string::npos);
  // Nothing nonzero: no rows.
  const Tensor none = boolean({4}, {0, 0, 0, 0});
  Tensor nz0 = output_from([&](Tensor* o) { return m::NonZeroInferMeta(none, o); });
  REQUIRE(k::nonzero(cpu(), none, &nz0).ok());
  CHECK(dims_of(nz0) == DetDims{0, 1});
  // An out laid out for fewer rows than the most: an error, not a write past its end.
  Tensor small = empty(DataType::kInt64, {2, 2});
  CHECK(error_of(k::nonzero(cpu(), c, &small)).find("has no room for [6, 2]") != std::string::npos);

  // masked_select: x's elements where the broadcast mask is true, row-major.
  const Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor mask = boolean({3}, {1, 0, 1});
  Tensor sel = output_from([&](Tensor* o) { return m::MaskedSelectInferMeta(x, mask, o); });
  CHECK(dims_of(sel) == DetDims{6});
  REQUIRE(k::masked_select(cpu(), x, mask, &sel).ok());
  check_close<float>(sel, {1, 3, 4, 6});
  // The mask may be the larger one: x broadcast along its rows.
  const Tensor row = i64({3}, {7, 8, 9});
  const Tensor full_mask = boolean({2, 3}, {0, 1, 0, 1, 1, 0});
  Tensor sel2 = output_from([&](Tensor* o) { return m::MaskedSelectInferMeta(row, full_mask, o); });
  REQUIRE(k::masked_select(cpu(), row, full_mask, &sel2).ok());
  CHECK(values<int64_t>(sel2) == std::vector<int64_t>{8, 7, 8});
  Tensor e;
  CHECK(error_of(m::MaskedSelectInferMeta(x, f32({3}, {1, 0, 1}), &e)).find("mask must be bool") != std::string::npos);
  CHECK(error_of(m::MaskedSelectInferMeta(x, boolean({2}, {1, 0}), &e)).find("cannot be broadcast") !=
        std::string::npos);
}

TEST_CASE("unique: sorted distinct values, first occurrences, inverse and counts; laid out for every element") {
  const Tensor x = i64({2, 3}, {3, 1, 3, 2, 1, 3});
  Tensor out, indices, inverse, counts;
  REQUIRE(m::UniqueRawInferMeta(x, true, true, true, {}, DataType::kInt32, true, &out, &indices, &inverse, &counts)
              .ok());
  CHECK(dims_of(out) == DetDims{6});
  CHECK(dims_of(inverse) == DetDims{6});
  for (Tensor* t : {&out, &indices, &inverse, &counts}) REQUIRE(t->allocate().ok());
  REQUIRE(k::unique(cpu(), x, true, true, true, {}, DataType::kInt32, true, &out, &indices, &inverse, &counts).ok());
  CHECK(values<int64_t>(out) == std::vector<int64_t>{1, 2, 3});
  CHECK(values<int32_t>(indices) == std::vector<int32_t>{1, 3, 0});
  CHECK(values<int32_t>(inverse) == std::vector<int32_t>{2, 0, 2, 1, 0, 2});
  CHECK(values<int32_t>(counts) == std::vector<int32_t>{2, 1, 3});
  // indices and counts may be left out.
  Tensor out2, inverse2;
  REQUIRE(m::UniqueRawInferMeta(x, false, true, false, {}, DataType::kInt64, true, &out2, nullptr, &inverse2, nullptr)
              .ok());
  REQUIRE(out2.allocate().ok());
  REQUIRE(inverse2.allocate().ok());
  REQUIRE(k::unique(cpu(), x, false, true, false, {}, DataType::kInt64, true, &out2, nullptr, &inverse2, nullptr).ok());
  CHECK(values<int64_t>(inverse2) == std::vector<int64_t>{2, 0, 2, 1, 0, 2});
  // NaNs sort last, as one value (a strict weak order: no undefined behaviour on them).
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor fx = f32({4}, {nan, 1, nan, 0});
  Tensor fo, fi, fc;
  REQUIRE(m::UniqueRawInferMeta(fx, false, true, true, {}, DataType::kInt64, true, &fo, nullptr, &fi, &fc).ok());
  for (Tensor* t : {&fo, &fi, &fc}) REQUIRE(t->allocate().ok());
  REQUIRE(k::unique(cpu(), fx, false, true, true, {}, DataType::kInt64, true, &fo, nullptr, &fi, &fc).ok());
  CHECK(dims_of(fo) == DetDims{3});
  CHECK(values<float>(fo)[0] == 0.0f);
  CHECK(values<float>(fo)[1] == 1.0f);
  CHECK(std::isnan(values<float>(fo)[2]));
  CHECK(values<int64_t>(fi) == std::vector<int64_t>{2, 1, 2, 0});
  CHECK(values<int64_t>(fc) == std::vector<int64_t>{1, 1, 2});
  Tensor e1, e2, e3, e4;
  CHECK(error_of(m::UniqueRawInferMeta(x, false, false, false, {0, 1}, DataType::kInt64, true, &e1, &e2, &e3, &e4))
            .find("more than one axis") != std::string::npos);
  CHECK(error_of(m::UniqueRawInferMeta(x, false, false, false, {2}, DataType::kInt64, true, &e1, &e2, &e3, &e4))
            .find("out of range") != std::string::npos);
  CHECK(error_of(m::UniqueRawInferMeta(x, false, false, false, {}, DataType::kInt64, false, &e1, &e2, &e3, &e4))
            .find("is_sorted false") != std::string::npos);
}

TEST_CASE("unique along an axis: the distinct slices sorted, out written compact with the count at the axis") {
  // Columns (1, 2), (0, 5), (1, 2) of x along axis 1 (and -1): two distinct, (0, 5) first.
  const Tensor x = i64({2, 3}, {1, 0, 1, 2, 5, 2});
  for (int axis : {1, -1}) {
    Tensor out, indices, inverse, counts;
    REQUIRE(m::UniqueRawInferMeta(x, true, true, true, {axis}, DataType::kInt64, true, &out, &indices, &inverse,
                                  &counts)
                .ok());
    CHECK(dims_of(out) == DetDims{2, 3});  // laid out for every column distinct
    CHECK(dims_of(inverse) == DetDims{3});
    for (Tensor* t : {&out, &indices, &inverse, &counts}) REQUIRE(t->allocate().ok());
    REQUIRE(k::unique(cpu(), x, true, true, true, {axis}, DataType::kInt64, true, &out, &indices, &inverse, &counts)
                .ok());
    CHECK(dims_of(out) == DetDims{2, 2});
    CHECK(values<int64_t>(out) == std::vector<int64_t>{0, 1, 5, 2});  // [[0, 1], [5, 2]], compact
    CHECK(values<int64_t>(indices) == std::vector<int64_t>{1, 0});
    CHECK(values<int64_t>(inverse) == std::vector<int64_t>{1, 0, 1});
    CHECK(values<int64_t>(counts) == std::vector<int64_t>{1, 2});
  }
  // Rows along axis 0, int32 indices, counts left out; every row the same: one.
  const Tensor same = i64({3, 2}, {4, 4, 4, 4, 4, 4});
  Tensor out, inverse;
  REQUIRE(m::UniqueRawInferMeta(same, false, true, false, {0}, DataType::kInt32, true, &out, nullptr, &inverse, nullptr)
              .ok());
  REQUIRE(out.allocate().ok());
  REQUIRE(inverse.allocate().ok());
  REQUIRE(k::unique(cpu(), same, false, true, false, {0}, DataType::kInt32, true, &out, nullptr, &inverse, nullptr).ok());
  CHECK(dims_of(out) == DetDims{1, 2});
  CHECK(values<int32_t>(inverse) == std::vector<int32_t>{0, 0, 0});
}
