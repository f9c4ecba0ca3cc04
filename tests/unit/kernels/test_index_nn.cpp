// The index, data-movement and normalisation kernels of issue 11. Expected values were computed with Paddle 3.3.1
// on the CPU (paddle.nn.functional / paddle.* on the same inputs), so they check Paddle's semantics, not ours.
#include <catch2/catch.hpp>

#include <numeric>

#include "tensor_builder.h"

using namespace kforge;
using namespace kforge::test;
namespace k = kforge::kernels;
namespace m = kforge::meta;

namespace {

using Dims = std::vector<int64_t>;


Tensor bilinear(const Tensor& x, int out_h, int out_w, std::vector<float> scale, bool align_corners, int align_mode,
                const std::string& format = "NCHW") {
  Tensor out = output_from([&](Tensor* o) {
    return m::InterpolateInferMeta(x, nullptr, {}, nullptr, format, 0, out_h, out_w, scale, "bilinear", align_corners,
                                   align_mode, o);
  });
  Status s = k::bilinear_interp(cpu(), x, nullptr, {}, nullptr, format, 0, out_h, out_w, scale, "bilinear",
                                align_corners, align_mode, &out);
  INFO(s.message());
  REQUIRE(s.ok());
  return out;
}

}  // namespace

TEST_CASE("bicubic_interp: constants stay constant, align_corners keeps the corners, int32 refused") {
  auto bicubic = [](const Tensor& x, int out_h, int out_w, bool align_corners, Tensor* out) {
    *out = output_from([&](Tensor* o) {
      return m::InterpolateInferMeta(x, nullptr, {}, nullptr, "NCHW", 0, out_h, out_w, {}, "bicubic", align_corners, 0,
                                     o);
    });
    return k::bicubic_interp(cpu(), x, nullptr, {}, nullptr, "NCHW", 0, out_h, out_w, {}, "bicubic", align_corners, 0,
                             out);
  };
  Tensor out;
  REQUIRE(bicubic(f32({1, 1, 2, 3}, {2.5f, 2.5f, 2.5f, 2.5f, 2.5f, 2.5f}), 5, 7, false, &out).ok());
  check_close<float>(out, std::vector<float>(35, 2.5f), 1e-5);  // the four weights sum to 1
  const Tensor x = iota({1, 1, 3, 3});
  REQUIRE(bicubic(x, 5, 5, true, &out).ok());
  const std::vector<float> v = values<float>(out);
  CHECK(v[0] == Approx(0));
  CHECK(v[4] == Approx(2));
  CHECK(v[20] == Approx(6));
  CHECK(v[24] == Approx(8));
  CHECK(v[12] == Approx(4));  // the centre of a linear ramp
  Tensor o;
  CHECK(error_of(bicubic(i32({1, 1, 2, 2}, {1, 2, 3, 4}), 3, 3, false, &o)).find("int32") != std::string::npos);
}

TEST_CASE("bilinear_interp: half-pixel, align_corners, align_mode 1, NHWC and uint8 as Paddle computes them") {
  const Tensor x = iota({1, 1, 2, 3});
  Tensor s2 = bilinear(x, 0, 0, {2, 2}, false, 0);
  CHECK(dims_of(s2) == Dims{1, 1, 4, 6});
  check_close<float>(s2, {0.0, 0.25, 0.75, 1.25, 1.75, 2.0, 0.75, 1.0, 1.5, 2.0, 2.5, 2.75,
                          2.25, 2.5, 3.0, 3.5, 4.0, 4.25, 3.0, 3.25, 3.75, 4.25, 4.75, 5.0}, 0);
  check_close<float>(bilinear(x, 3, 4, {}, true, 0),
                     {0.0f, 0.6666666865348816f, 1.3333333730697632f, 2.0f, 1.5f, 2.1666667461395264f,
                      2.8333332538604736f, 3.5f, 3.0f, 3.6666667461395264f, 4.333333492279053f, 5.0f}, 0);
  check_close<float>(bilinear(x, 3, 5, {}, false, 1),
                     {0.0f, 0.6000000238418579f, 1.2000000476837158f, 1.8000000715255737f, 2.0f, 2.0f,
                      2.6000001430511475f, 3.200000286102295f, 3.8000001907348633f, 4.0f, 3.0f, 3.6000001430511475f,
                      4.199999809265137f, 4.800000190734863f, 5.0f}, 0);
  Tensor nhwc = bilinear(iota({1, 2, 3, 2}), 3, 2, {}, false, 0, "NHWC");
  CHECK(dims_of(nhwc) == Dims{1, 3, 2, 2});
  check_close<float>(nhwc, {0.5, 1.5, 3.5, 4.5, 3.5, 4.5, 6.5, 7.5, 6.5, 7.5, 9.5, 10.500000953674316}, 0);
  Tensor u8 = make<uint8_t>(DataType::kUInt8, {1, 1, 2, 3}, {0, 100, 200, 255, 10, 20});
  CHECK(values<uint8_t>(bilinear(u8, 3, 4, {}, false, 0)) ==
        std::vector<uint8_t>{0, 62, 137, 200, 127, 82, 75, 110, 255, 101, 13, 19});
  // Same size: a copy.
  check_close<float>(bilinear(x, 2, 3, {}, false, 0), values<float>(x), 0);
  // An output of other dims is refused.
  Tensor wrong = empty(DataType::kFloat32, {1, 1, 4, 5});
  CHECK(error_of(k::bilinear_interp(cpu(), x, nullptr, {}, nullptr, "NCHW", 0, 4, 6, {}, "bilinear", false, 0, &wrong))
            .find("dims") != std::string::npos);
  Tensor i32t = i32({1, 1, 1, 2}, {1, 2});
  Tensor o = empty(DataType::kInt32, {1, 1, 2, 2});
  CHECK(error_of(k::bilinear_interp(cpu(), i32t, nullptr, {}, nullptr, "NCHW", 0, 2, 2, {}, "bilinear", false, 0, &o))
            .find("unsupported dtype") != std::string::npos);
}

TEST_CASE("gather and index_select pick slices; bad indices are errors") {
  const Tensor x = iota({3, 2});
  Tensor g0 = output_from([&](Tensor* o) { return m::GatherInferMeta(x, i64({3}, {2, 0, 2}), Scalar(0), o); });
  REQUIRE(k::gather(cpu(), x, i64({3}, {2, 0, 2}), Scalar(0), &g0).ok());
  check_close<float>(g0, {4, 5, 0, 1, 4, 5}, 0);
  const Tensor idx32 = i32({3}, {1, 1, 0});
  Tensor g1 = output_from([&](Tensor* o) { return m::GatherInferMeta(x, idx32, Scalar(-1), o); });
  CHECK(dims_of(g1) == Dims{3, 3});
  REQUIRE(k::gather(cpu(), x, idx32, Scalar(-1), &g1).ok());
  check_close<float>(g1, {1, 1, 0, 3, 3, 2, 5, 5, 4}, 0);
  // A 0-D index drops the axis.
  const Tensor one = i64({}, {1});
  Tensor g2 = output_from([&](Tensor* o) { return m::GatherInferMeta(x, one, Scalar(0), o); });
  CHECK(dims_of(g2) == Dims{2});
  REQUIRE(k::gather(cpu(), x, one, Scalar(0), &g2).ok());
  check_close<float>(g2, {2, 3}, 0);
  Tensor bad = empty(DataType::kFloat32, {1, 2});
  CHECK(error_of(k::gather(cpu(), x, i64({1}, {3}), Scalar(0), &bad)).find("index 3") != std::string::npos);
  CHECK(error_of(k::gather(cpu(), x, i64({1}, {-1}), Scalar(0), &bad)).find("out of range") != std::string::npos);
  Tensor meta_out;
  CHECK(error_of(m::GatherInferMeta(x, f32({1}, {0}), Scalar(0), &meta_out)).find("int32 or int64") !=
        std::string::npos);
  CHECK(error_of(m::GatherInferMeta(x, i64({1}, {0}), Scalar(2), &meta_out)).find("axis 2") != std::string::npos);

  Tensor sel = output_from([&](Tensor* o) { return m::IndexSelectInferMeta(x, i64({2}, {1, 0}), 1, o); });
  REQUIRE(k::index_select(cpu(), x, i64({2}, {1, 0}), 1, &sel).ok());
  check_close<float>(sel, {1, 0, 3, 2, 5, 4}, 0);
  CHECK(error_of(m::IndexSelectInferMeta(x, i64({2, 2}, {0, 0, 0, 0}), 0, &meta_out)).find("1-D") !=
        std::string::npos);
}

TEST_CASE("scatter overwrites or accumulates rows (Paddle's ScatterAssign / ScatterAssignAdd)") {
  const Tensor x = iota({4, 2});
  const Tensor index = i64({3}, {1, 3, 1});
  const Tensor updates = f32({3, 2}, {10, 11, 20, 21, 30, 31});
  Tensor a = output_from([&](Tensor* o) { return m::ScatterInferMeta(x, index, updates, true, o); });
  REQUIRE(k::scatter(cpu(), x, index, updates, true, &a).ok());
  check_close<float>(a, {0, 1, 30, 31, 4, 5, 20, 21}, 0);
  Tensor b = output_from([&](Tensor* o) { return m::ScatterInferMeta(x, index, updates, false, o); });
  REQUIRE(k::scatter(cpu(), x, index, updates, false, &b).ok());
  check_close<float>(b, {0, 1, 40, 42, 4, 5, 20, 21}, 0);
  // In place (scatter_): out is x.
  Tensor inplace = iota({4, 2});
  REQUIRE(k::scatter(cpu(), inplace, index, updates, false, &inplace).ok());
  check_close<float>(inplace, {0, 1, 40, 42, 4, 5, 20, 21}, 0);
  Tensor out;
  CHECK(error_of(m::ScatterInferMeta(x, index, f32({2, 2}, {0, 0, 0, 0}), true, &out)).find("updates [2, 2] must be "
                                                                                           "[3, 2]") !=
        std::string::npos);
  CHECK(error_of(k::scatter(cpu(), x, i64({3}, {1, 4, 0}), updates, true, &a)).find("index 4") != std::string::npos);
}

TEST_CASE("repeat_interleave repeats each element along the axis") {
  const Tensor t = iota({2, 3});
  Tensor cols = output_from([&](Tensor* o) { return m::RepeatInterleaveInferMeta(t, 2, -1, -1, o); });
  CHECK(dims_of(cols) == Dims{2, 6});
  REQUIRE(k::repeat_interleave(cpu(), t, 2, -1, -1, &cols).ok());
  check_close<float>(cols, {0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5}, 0);
  Tensor rows = output_from([&](Tensor* o) { return m::RepeatInterleaveInferMeta(t, 2, 0, 4, o); });
  REQUIRE(k::repeat_interleave(cpu(), t, 2, 0, 4, &rows).ok());
  check_close<float>(rows, {0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5}, 0);
  Tensor out;
  CHECK(error_of(m::RepeatInterleaveInferMeta(t, 0, 0, -1, &out)).find("positive") != std::string::npos);
  CHECK(error_of(m::RepeatInterleaveInferMeta(t, 2, 2, -1, &out)).find("axis") != std::string::npos);
  CHECK(error_of(m::RepeatInterleaveInferMeta(t, 2, 0, 5, &out)).find("output_size is 5") != std::string::npos);
}

TEST_CASE("tile, roll and flip move elements") {
  const Tensor t = iota({2, 3});
  Tensor tiled = output_from([&](Tensor* o) { return m::TileInferMeta(t, IntArray{2, 1, 2}, o); });
  CHECK(dims_of(tiled) == Dims{2, 2, 6});
  REQUIRE(k::tile(cpu(), t, IntArray{2, 1, 2}, &tiled).ok());
  check_close<float>(tiled, {0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5, 0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5}, 0);
  Tensor out;
  CHECK(error_of(m::TileInferMeta(t, IntArray{0, 1}, &out)).find("positive") != std::string::npos);

  Tensor rolled = output_from([&](Tensor* o) { return m::RollInferMeta(t, IntArray{1, -1}, {0, 1}, o); });
  REQUIRE(k::roll(cpu(), t, IntArray{1, -1}, {0, 1}, &rolled).ok());
  check_close<float>(rolled, {4, 5, 3, 1, 2, 0}, 0);
  Tensor flat = output_from([&](Tensor* o) { return m::RollInferMeta(t, IntArray{2}, {}, o); });
  REQUIRE(k::roll(cpu(), t, IntArray{2}, {}, &flat).ok());
  check_close<float>(flat, {4, 5, 0, 1, 2, 3}, 0);
  CHECK(error_of(m::RollInferMeta(t, IntArray{1, 2}, {}, &out)).find("one value") != std::string::npos);

  Tensor flipped = output_from([&](Tensor* o) { return m::FlipInferMeta(t, {1}, o); });
  REQUIRE(k::flip(cpu(), t, {1}, &flipped).ok());
  check_close<float>(flipped, {2, 1, 0, 5, 4, 3}, 0);
  CHECK(error_of(m::FlipInferMeta(t, {1, -1}, &out)).find("twice") != std::string::npos);
  // Any dtype: int64 and bool move as bytes.
  Tensor b = boolean({2}, {1, 0});
  Tensor bf = output_from([&](Tensor* o) { return m::FlipInferMeta(b, {0}, o); });
  REQUIRE(k::flip(cpu(), b, {0}, &bf).ok());
  CHECK(values<bool>(bf) == std::vector<bool>{false, true});
}

TEST_CASE("pad3d: constant, reflect, replicate and circular") {
  const Tensor p = iota({1, 1, 2, 2, 3});
  const IntArray pads{2, 1, 1, 0, 0, 1};
  auto pad = [&](const std::string& mode) {
    Tensor out = output_from([&](Tensor* o) { return m::Pad3dInferMeta(p, pads, mode, -1.f, "NCDHW", o); });
    CHECK(dims_of(out) == Dims{1, 1, 3, 3, 6});
    Status s = k::pad3d(cpu(), p, pads, mode, -1.f, "NCDHW", &out);
    INFO(s.message());
    REQUIRE(s.ok());
    return values<float>(out);
  };
  const std::vector<float> reflect = pad("reflect");
  CHECK(reflect == std::vector<float>{5, 4, 3, 4, 5, 4, 2, 1, 0, 1, 2, 1, 5, 4, 3, 4, 5, 4, 11, 10, 9, 10, 11, 10, 8, 7,
                                      6, 7, 8, 7, 11, 10, 9, 10, 11, 10, 5, 4, 3, 4, 5, 4, 2, 1, 0, 1, 2, 1, 5, 4, 3, 4,
                                      5, 4});
  const std::vector<float> replicate = pad("replicate");
  CHECK(replicate == std::vector<float>{0, 0, 0, 1, 2, 2, 0, 0, 0, 1, 2, 2, 3, 3, 3, 4, 5, 5, 6, 6, 6, 7, 8, 8, 6, 6, 6,
                                        7, 8, 8, 9, 9, 9, 10, 11, 11, 6, 6, 6, 7, 8, 8, 6, 6, 6, 7, 8, 8, 9, 9, 9, 10, 11,
                                        11});
  const std::vector<float> circular = pad("circular");
  CHECK(circular == std::vector<float>{4, 5, 3, 4, 5, 3, 1, 2, 0, 1, 2, 0, 4, 5, 3, 4, 5, 3, 10, 11, 9, 10, 11, 9, 7, 8,
                                       6, 7, 8, 6, 10, 11, 9, 10, 11, 9, 4, 5, 3, 4, 5, 3, 1, 2, 0, 1, 2, 0, 4, 5, 3, 4,
                                       5, 3});
  const std::vector<float> constant = pad("constant");
  CHECK(constant[8] == 0);
  CHECK(constant[0] == -1);
  CHECK(constant[35] == -1);
  CHECK(constant[33] == 10);
  Tensor out;
  CHECK(error_of(m::Pad3dInferMeta(p, IntArray{3, 0, 0, 0, 0, 0}, "reflect", 0.f, "NCDHW", &out))
            .find("smaller than the dim size 3") != std::string::npos);
  CHECK(error_of(m::Pad3dInferMeta(iota({2, 3}), pads, "constant", 0.f, "NCDHW", &out)).find("5-D") !=
        std::string::npos);
}

TEST_CASE("set_value and set_value_with_tensor write a broadcast value into a strided slice") {
  const Tensor v = iota({3, 4});
  // v[1:, ::2] = [100, 200]
  Tensor a = output_from([&](Tensor* o) { return m::SetValueInferMeta(v, o); });
  REQUIRE(k::set_value_with_tensor(cpu(), v, f32({2}, {100, 200}), IntArray{1, 0}, IntArray{3, 2147483647},
                                   IntArray{1, 2}, {0, 1}, {}, {}, &a)
              .ok());
  check_close<float>(a, {0, 1, 2, 3, 100, 5, 200, 7, 100, 9, 200, 11}, 0);
  // v[:, 1] = 7.0 (a Scalar value, axis 1 decreased)
  Tensor b = output_from([&](Tensor* o) { return m::SetValueInferMeta(v, o); });
  REQUIRE(k::set_value(cpu(), v, IntArray{1}, IntArray{2}, IntArray{1}, {1}, {1}, {}, {1}, {Scalar(7.0)}, &b).ok());
  check_close<float>(b, {0, 7, 2, 3, 4, 7, 6, 7, 8, 7, 10, 11}, 0);
  // v[::-1, 3] = [1, 2, 3] in place: a negative step, axis 1 decreased.
  Tensor c = iota({3, 4});
  REQUIRE(k::set_value_with_tensor(cpu(), c, f32({3}, {1, 2, 3}), IntArray{2147483647, 3}, IntArray{-2147483648LL, 4},
                                   IntArray{-1, 1},
                                   {0, 1}, {1}, {}, &c)
              .ok());
  check_close<float>(c, {0, 1, 2, 3, 4, 5, 6, 2, 8, 9, 10, 1}, 0);
  // A value that does not broadcast, and a wrong number of Scalar values, are errors.
  CHECK(error_of(k::set_value_with_tensor(cpu(), v, f32({3}, {1, 2, 3}), IntArray{1, 0}, IntArray{3, 4},
                                          IntArray{1, 2}, {0, 1}, {}, {}, &a))
            .find("cannot be broadcast") != std::string::npos);
  CHECK(error_of(k::set_value(cpu(), v, IntArray{1}, IntArray{2}, IntArray{1}, {1}, {}, {}, {2}, {Scalar(1.0)}, &b))
            .find("holds 2 values") != std::string::npos);
  // int64 x with a float Scalar converts it.
  Tensor iv = i64({2}, {5, 6});
  Tensor io = output_from([&](Tensor* o) { return m::SetValueInferMeta(iv, o); });
  REQUIRE(k::set_value(cpu(), iv, IntArray{0}, IntArray{1}, IntArray{1}, {0}, {}, {}, {1}, {Scalar(3.0)}, &io).ok());
  CHECK(values<int64_t>(io) == std::vector<int64_t>{3, 6});
}

TEST_CASE("bmm and einsum") {
  const Tensor a = iota({2, 2, 3});
  const Tensor b = iota({2, 3, 2}, -5);
  Tensor mm = output_from([&](Tensor* o) { return m::BmmInferMeta(a, b, o); });
  REQUIRE(k::bmm(cpu(), a, b, &mm).ok());
  check_close<float>(mm, {-5, -2, -32, -20, 67, 88, 94, 124}, 0);
  Tensor out;
  CHECK(error_of(m::BmmInferMeta(a, a, &out)).find("[B, M, K] and [B, K, N]") != std::string::npos);

  auto einsum = [](const std::string& eq, std::vector<const Tensor*> xs) {
    const TensorList x{xs.data(), xs.size()};
    std::vector<Tensor> cache(xs.size()), shapes(xs.size());
    std::vector<Tensor*> cp, sp;
    for (size_t i = 0; i < xs.size(); ++i) {
      cp.push_back(&cache[i]);
      sp.push_back(&shapes[i]);
    }
    const MutableTensorList cl{cp.data(), cp.size()}, sl{sp.data(), sp.size()};
    Tensor result = output_from([&](Tensor* o) { return m::EinsumRawInferMeta(x, eq, o, cl, sl); });
    for (size_t i = 0; i < xs.size(); ++i) {
      REQUIRE(cache[i].allocate().ok());
      REQUIRE(shapes[i].allocate().ok());
    }
    Status s = k::einsum(cpu(), x, eq, &result, cl, sl);
    INFO(s.message());
    REQUIRE(s.ok());
    for (const Tensor& t : shapes) CHECK(values<float>(t) == std::vector<float>(static_cast<size_t>(t.numel()), 0.f));
    return result;
  };
  const Tensor sq = iota({3, 3});
  check_close<float>(einsum("ii->i", {&sq}), {0, 4, 8}, 0);
  Tensor trace = einsum("ii", {&sq});
  CHECK(trace.ndim == 0);
  check_close<float>(trace, {12}, 0);
  check_close<float>(einsum("bij,bkj->bik", {&a, &a}), {5, 14, 14, 50, 149, 212, 212, 302}, 0);
  check_close<float>(einsum("ij,jk", {&sq, &sq}), {15, 18, 21, 42, 54, 66, 69, 90, 111}, 0);
  const Tensor u = f32({2}, {1, 2}), w = f32({3}, {3, 4, 5});
  check_close<float>(einsum("i,j->ij", {&u, &w}), {3, 4, 5, 6, 8, 10}, 0);
  const Tensor* pair[2] = {&sq, &a};
  Tensor r;
  CHECK(error_of(m::EinsumRawInferMeta(TensorList{pair, 2}, "ij,jk->ik", &r, {}, {})).find("rank 3") !=
        std::string::npos);
  CHECK(error_of(m::EinsumRawInferMeta(TensorList{pair, 1}, "...ij->ij", &r, {}, {})).find("'...'") !=
        std::string::npos);
  CHECK(error_of(m::EinsumRawInferMeta(TensorList{pair, 1}, "ij->iz", &r, {}, {})).find("'z'") != std::string::npos);
  const Tensor other = iota({2, 3});
  const Tensor* mismatch[2] = {&sq, &other};
  CHECK(error_of(m::EinsumRawInferMeta(TensorList{mismatch, 2}, "ij,jk->ik", &r, {}, {})).find("sizes 3 and 2") !=
        std::string::npos);
}

TEST_CASE("group_norm, instance_norm and rms_norm against Paddle") {
  const Tensor x = f32({1, 4, 2, 2}, {1, 2, 3, 4, -1, 0, 2, 5, 3, 3, 1, 0, 2, 2, 2, 9});
  const Tensor scale = f32({4}, {1, 2, 0.5f, -1}), bias = f32({4}, {0, 1, 0, 0.5f});
  Tensor y, mean, var;
  REQUIRE(m::GroupNormInferMeta(x, &scale, &bias, 1e-5f, 2, "NCHW", &y, &mean, &var).ok());
  CHECK(dims_of(mean) == Dims{1, 2});
  for (Tensor* t : {&y, &mean, &var}) REQUIRE(t->allocate().ok());
  REQUIRE(k::group_norm(cpu(), x, &scale, &bias, 1e-5f, 2, "NCHW", &y, &mean, &var).ok());
  const std::vector<float> gn = {-0.5345216989517212f, 0.0f, 0.5345216989517212f, 1.0690433979034424f,
                                 -2.207130193710327f, -1.1380867958068848f, 1.0f, 4.207130432128906f,
                                 0.049266424030065536f, 0.049266424030065536f, -0.34486496448516846f,
                                 -0.5419306755065918f, 0.7955985069274902f, 0.7955985069274902f, 0.7955985069274902f,
                                 -1.9633212089538574f};
  check_close<float>(y, gn, 1e-5);
  check_close<float>(mean, {2, 2.75f});
  const Tensor xl = f32({1, 2, 2, 4}, {1, -1, 3, 2, 2, 0, 3, 2, 3, 2, 1, 2, 4, 5, 0, 9});
  Tensor yl = output_from([&](Tensor* o) {
    return m::GroupNormInferMeta(xl, &scale, &bias, 1e-5f, 2, "NHWC", o, nullptr, nullptr);
  });
  REQUIRE(k::group_norm(cpu(), xl, &scale, &bias, 1e-5f, 2, "NHWC", &yl, nullptr, nullptr).ok());
  check_close<float>(yl, {-0.5345216989517212f, -2.207130193710327f, 0.049266424030065536f, 0.7955985069274902f, 0.0f,
                          -1.1380867958068848f, 0.049266424030065536f, 0.7955985069274902f, 0.5345216989517212f, 1.0f,
                          -0.34486496448516846f, 0.7955985069274902f, 1.0690433979034424f, 4.207130432128906f,
                          -0.5419306755065918f, -1.9633212089538574f},
                     1e-5);
  CHECK(error_of(m::GroupNormInferMeta(x, nullptr, nullptr, 1e-5f, 3, "NCHW", &y, nullptr, nullptr))
            .find("do not split into 3 groups") != std::string::npos);

  Tensor iy, im, iv;
  REQUIRE(m::InstanceNormInferMeta(x, &scale, &bias, 1e-5f, &iy, &im, &iv).ok());
  CHECK(dims_of(im) == Dims{4});
  for (Tensor* t : {&iy, &im, &iv}) REQUIRE(t->allocate().ok());
  REQUIRE(k::instance_norm(cpu(), x, &scale, &bias, 1e-5f, &iy, &im, &iv).ok());
  check_close<float>(iy, {-1.3416354656219482f, -0.4472118318080902f, 0.4472118318080902f, 1.3416354656219482f,
                          -1.1821768283843994f, -0.30930614471435547f, 1.436435341835022f, 4.055047512054443f,
                          0.48112377524375916f, 0.48112377524375916f, -0.2886742651462555f, -0.6735732555389404f,
                          1.0773499011993408f, 1.0773499011993408f, 1.0773499011993408f, -1.2320499420166016f},
                     1e-5);
  check_close<float>(im, {2.5f, 1.5f, 1.75f, 3.75f});

  const Tensor rx = f32({2, 4}, {1, 2, 3, 4, -1, 0, 2, 5}), rw = f32({4}, {1, 0.5f, 2, -1});
  const Tensor rr = f32({2, 4}, {0.5f, 0.5f, 0, 0, 1, 1, 1, 1}), rb = f32({4}, {0.1f, 0.2f, 0.3f, 0.4f});
  Tensor ro, rres, rinv;
  REQUIRE(m::RmsNormInferMeta(rx, nullptr, nullptr, rw, nullptr, 1e-6f, 1, -1.f, 0, 0.f, 0.f, &ro, nullptr, &rinv)
              .ok());
  CHECK(rinv.dtype == DataType::kFloat32);
  CHECK(dims_of(rinv) == Dims{2});
  REQUIRE(ro.allocate().ok());
  REQUIRE(rinv.allocate().ok());
  REQUIRE(k::rms_norm(cpu(), rx, nullptr, nullptr, rw, nullptr, 1e-6f, 1, -1.f, 0, 0.f, 0.f, &ro, nullptr, &rinv).ok());
  check_close<float>(ro, {0.3651483654975891f, 0.3651483654975891f, 2.190890312194824f, -1.4605934619903564f,
                          -0.3651483654975891f, 0.0f, 1.4605934619903564f, -1.8257417678833008f},
                     1e-6);
  // With residual and bias: h = x + residual + bias; out = rms(h) * w + norm_bias; residual_out = h.
  REQUIRE(m::RmsNormInferMeta(rx, &rb, &rr, rw, &rb, 1e-6f, 1, -1.f, 0, 0.f, 0.f, &ro, &rres, &rinv).ok());
  REQUIRE(rres.allocate().ok());
  REQUIRE(k::rms_norm(cpu(), rx, &rb, &rr, rw, &rb, 1e-6f, 1, -1.f, 0, 0.f, 0.f, &ro, &rres, &rinv).ok());
  check_close<float>(ro, {0.605333149433136f, 0.6263747811317444f, 2.3844988346099854f, -0.9896661043167114f,
                          0.1273946911096573f, 0.36436814069747925f, 2.1080493927001953f, -1.3532600402832031f},
                     1e-6);
  check_close<float>(rres, {1.6f, 2.7f, 3.3f, 4.4f, 0.1f, 1.2f, 3.3f, 6.4f}, 1e-6);
  CHECK(error_of(k::rms_norm(cpu(), rx, nullptr, nullptr, rw, nullptr, 1e-6f, 1, 2.f, 0, 0.f, 0.f, &ro, nullptr,
                             nullptr))
            .find("quant") != std::string::npos);
}

TEST_CASE("tril, triu and arange") {
  const Tensor x = iota({2, 2, 3});
  Tensor up = output_from([&](Tensor* o) { return m::TriuInferMeta(x, 1, o); });
  REQUIRE(k::triu(cpu(), x, 1, &up).ok());
  check_close<float>(up, {0, 1, 2, 0, 0, 5, 0, 7, 8, 0, 0, 11}, 0);
  Tensor low = output_from([&](Tensor* o) { return m::TrilInferMeta(x, -1, o); });
  REQUIRE(k::tril(cpu(), x, -1, &low).ok());
  check_close<float>(low, {0, 0, 0, 3, 0, 0, 0, 0, 0, 9, 0, 0}, 0);
  // In place, and on int64.
  Tensor ints = i64({2, 2}, {1, 2, 3, 4});
  REQUIRE(k::tril(cpu(), ints, 0, &ints).ok());
  CHECK(values<int64_t>(ints) == std::vector<int64_t>{1, 0, 3, 4});
  Tensor out;
  CHECK(error_of(m::TriuInferMeta(f32({3}, {1, 2, 3}), 0, &out)).find("rank >= 2") != std::string::npos);

  Tensor ids = output_from([&](Tensor* o) { return m::ArangeInferMeta(Scalar(0.0), Scalar(5.0), Scalar(1.0),
                                                                      DataType::kInt64, o); });
  REQUIRE(k::arange(cpu(DataType::kInt64), Scalar(0.0), Scalar(5.0), Scalar(1.0), &ids).ok());
  CHECK(values<int64_t>(ids) == std::vector<int64_t>{0, 1, 2, 3, 4});
  Tensor f = output_from([&](Tensor* o) { return m::ArangeInferMeta(Scalar(1.0), Scalar(2.0), Scalar(0.3),
                                                                    DataType::kFloat32, o); });
  CHECK(dims_of(f) == Dims{4});  // ceil(1 / 0.3)
  REQUIRE(k::arange(cpu(DataType::kFloat32), Scalar(1.0), Scalar(2.0), Scalar(0.3), &f).ok());
  check_close<float>(f, {1.0f, 1.3f, 1.6f, 1.9f}, 1e-6);
  Tensor down = output_from([&](Tensor* o) { return m::ArangeInferMeta(Scalar(int64_t{5}), Scalar(int64_t{0}),
                                                                       Scalar(int64_t{-2}), DataType::kInt32, o); });
  REQUIRE(k::arange(cpu(DataType::kInt32), Scalar(int64_t{5}), Scalar(int64_t{0}), Scalar(int64_t{-2}), &down).ok());
  CHECK(values<int32_t>(down) == std::vector<int32_t>{5, 3, 1});
  CHECK(error_of(m::ArangeInferMeta(Scalar(0.0), Scalar(5.0), Scalar(-1.0), DataType::kFloat32, &out))
            .find("points away") != std::string::npos);
  CHECK(error_of(m::ArangeInferMeta(Scalar(0.0), Scalar(5.0), Scalar(0.0), DataType::kFloat32, &out))
            .find("0") != std::string::npos);
}
