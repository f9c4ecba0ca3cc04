// matmul, embedding, softmax, layer_norm and the reductions.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "tensor_builder.h"

using namespace kforge;
using namespace kforge::test;
namespace k = kforge::kernels;
namespace m = kforge::meta;

namespace {

using Dims = std::vector<int64_t>;

Tensor matmul_of(const Tensor& x, const Tensor& y, bool tx = false, bool ty = false) {
  Tensor out = output_from([&](Tensor* o) { return m::MatmulInferMeta(x, y, tx, ty, o); });
  Status s = k::matmul(cpu(DataType::kFloat32), x, y, tx, ty, &out);
  INFO(s.message());
  REQUIRE(s.ok());
  return out;
}


}  // namespace

TEST_CASE("matmul of matrices, with either operand transposed") {
  Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor y = f32({3, 2}, {7, 8, 9, 10, 11, 12});
  const std::vector<float> want = {58, 64, 139, 154};
  check_close<float>(matmul_of(x, y), want);
  Tensor yt = f32({2, 3}, {7, 9, 11, 8, 10, 12});
  Tensor xt = f32({3, 2}, {1, 4, 2, 5, 3, 6});
  check_close<float>(matmul_of(x, yt, false, true), want);
  check_close<float>(matmul_of(xt, y, true, false), want);
  check_close<float>(matmul_of(xt, yt, true, true), want);
}

TEST_CASE("matmul broadcasts batch dims") {
  Tensor x = f32({2, 2, 3}, {1, 2, 3, 4, 5, 6, 2, 4, 6, 8, 10, 12});
  Tensor y = f32({3, 2}, {7, 8, 9, 10, 11, 12});
  Tensor out = matmul_of(x, y);
  CHECK(dims_of(out) == Dims{2, 2, 2});
  check_close<float>(out, {58, 64, 139, 154, 116, 128, 278, 308});
  Tensor x1 = f32({1, 2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor y2 = f32({2, 3, 2}, {7, 8, 9, 10, 11, 12, 1, 0, 0, 1, 0, 0});
  Tensor b = matmul_of(x1, y2);
  CHECK(dims_of(b) == Dims{2, 2, 2});
  check_close<float>(b, {58, 64, 139, 154, 1, 2, 4, 5});
  Tensor x4 = iota({2, 1, 2, 3});
  Tensor y3 = iota({3, 3, 1});
  Tensor c = matmul_of(x4, y3);
  CHECK(dims_of(c) == Dims{2, 3, 2, 1});
  // c[a][b] = x4[a][0] @ y3[b]; spot-check one element: a = 1, b = 2, row 1.
  // x4[1][0][1] = {9, 10, 11}; y3[2] = {6, 7, 8}: 54 + 70 + 88 = 212
  CHECK(values<float>(c)[static_cast<size_t>(((1 * 3 + 2) * 2 + 1))] == 212.0f);
}

TEST_CASE("matmul with vectors drops their unit dims") {
  Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor y = f32({3, 2}, {7, 8, 9, 10, 11, 12});
  Tensor v = f32({3}, {1, 2, 3});
  Tensor ones = f32({3}, {1, 1, 1});
  Tensor vm = matmul_of(v, y);
  CHECK(dims_of(vm) == Dims{2});
  check_close<float>(vm, {58, 64});
  Tensor mv = matmul_of(x, ones);
  CHECK(dims_of(mv) == Dims{2});
  check_close<float>(mv, {6, 15});
  Tensor vv = matmul_of(v, v);
  CHECK(vv.ndim == 0);
  check_close<float>(vv, {14});
}

TEST_CASE("MatmulInferMeta rejects mismatched operands") {
  Tensor out;
  Tensor x = empty(DataType::kFloat32, {2, 3});
  CHECK(error_of(m::MatmulInferMeta(x, empty(DataType::kFloat32, {2, 2}), false, false, &out))
            .find("inner dims 3 and 2") != std::string::npos);
  CHECK(m::MatmulInferMeta(x, empty(DataType::kFloat32, {2, 2}), true, false, &out).ok());
  CHECK(dims_of(out) == Dims{3, 2});
  CHECK(error_of(m::MatmulInferMeta(empty(DataType::kFloat32, {2, 2, 3}), empty(DataType::kFloat32, {3, 3, 2}), false,
                                    false, &out))
            .find("cannot be broadcast") != std::string::npos);
  CHECK(error_of(m::MatmulInferMeta(f32({}, {1}), x, false, false, &out)).find("rank >= 1") != std::string::npos);
  Tensor wrong = empty(DataType::kFloat32, {2, 3});
  CHECK(error_of(k::matmul(cpu(), x, empty(DataType::kFloat32, {3, 2}), false, false, &wrong)).find("expected [2, 2]") !=
        std::string::npos);
}

TEST_CASE("embedding looks up rows and zeroes the padding row") {
  Tensor w = f32({4, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  Tensor ids = i64({2, 2}, {3, 0, 1, 3});
  Tensor out = output_from([&](Tensor* o) { return m::EmbeddingInferMeta(ids, w, -1, o); });
  CHECK(dims_of(out) == Dims{2, 2, 2});
  REQUIRE(k::embedding(cpu(DataType::kFloat32), ids, w, -1, &out).ok());
  check_close<float>(out, {6, 7, 0, 1, 2, 3, 6, 7});
  REQUIRE(k::embedding(cpu(), ids, w, 3, &out).ok());
  check_close<float>(out, {0, 0, 0, 1, 2, 3, 0, 0});
  Tensor ids32 = i32({2}, {2, 1});
  Tensor o2 = output_from([&](Tensor* o) { return m::EmbeddingInferMeta(ids32, w, -1, o); });
  REQUIRE(k::embedding(cpu(), ids32, w, -3, &o2).ok());  // -3 is row 1
  check_close<float>(o2, {4, 5, 0, 0});
  Tensor bad = i64({1}, {4});
  Tensor o3 = output_from([&](Tensor* o) { return m::EmbeddingInferMeta(bad, w, -1, o); });
  CHECK(error_of(k::embedding(cpu(), bad, w, -1, &o3)).find("id 4 at position 0 is out of range") != std::string::npos);
  CHECK(error_of(m::EmbeddingInferMeta(f32({1}, {0}), w, -1, &o3)).find("int32 or int64") != std::string::npos);
  CHECK(error_of(m::EmbeddingInferMeta(ids, f32({4}, {0, 0, 0, 0}), -1, &o3)).find("2-D") != std::string::npos);
  CHECK(error_of(m::EmbeddingInferMeta(ids, w, 4, &o3)).find("padding_idx") != std::string::npos);
}

TEST_CASE("softmax along any axis") {
  Tensor x = f32({3}, {1, 2, 3});
  Tensor out = output_from([&](Tensor* o) { return m::SoftmaxInferMeta(x, -1, o); });
  REQUIRE(k::softmax(cpu(), x, -1, &out).ok());
  check_close<float>(out, {0.09003057f, 0.24472847f, 0.66524096f});
  Tensor g = f32({2, 2}, {1, 2, 3, 4});
  Tensor cols = output_from([&](Tensor* o) { return m::SoftmaxInferMeta(g, 0, o); });
  REQUIRE(k::softmax(cpu(), g, 0, &cols).ok());
  check_close<float>(cols, {0.11920292f, 0.11920292f, 0.88079708f, 0.88079708f});
  Tensor big = f64({2}, {1000, 1000});  // shifted by the max: no overflow
  REQUIRE(k::softmax(cpu(), big, 0, &big).ok());  // in place
  check_close<double>(big, {0.5, 0.5});
  Tensor s = f32({}, {5});
  Tensor so = output_from([&](Tensor* o) { return m::SoftmaxInferMeta(s, -1, o); });
  REQUIRE(k::softmax(cpu(), s, -1, &so).ok());
  check_close<float>(so, {1});
  Tensor o;
  CHECK(error_of(m::SoftmaxInferMeta(g, 2, &o)).find("out of range") != std::string::npos);
}

TEST_CASE("softmax along a strided axis: rows in blocks, in place too") {
  // [2, 5, 70] along axis 1: 140 strided rows of 5, more than one block of neighbouring rows, the last one partial.
  std::vector<float> v(2 * 5 * 70);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * 37) % 23) * 0.25f - 2.5f;
  Tensor x = f32({2, 5, 70}, v);
  Tensor out = output_from([&](Tensor* o) { return m::SoftmaxInferMeta(x, 1, o); });
  REQUIRE(k::softmax(cpu(), x, 1, &out).ok());
  std::vector<float> expected(v.size());
  for (int o = 0; o < 2; ++o) {
    for (int i = 0; i < 70; ++i) {
      double max = -1e30, total = 0;
      for (int j = 0; j < 5; ++j) max = std::max<double>(max, v[(o * 5 + j) * 70 + i]);
      for (int j = 0; j < 5; ++j) total += std::exp(v[(o * 5 + j) * 70 + i] - max);
      for (int j = 0; j < 5; ++j) expected[(o * 5 + j) * 70 + i] = std::exp(v[(o * 5 + j) * 70 + i] - max) / total;
    }
  }
  check_close<float>(out, expected, 1e-6);
  Tensor same = f32({2, 5, 70}, v);
  REQUIRE(k::softmax(cpu(), same, 1, &same).ok());  // in place: the same bits
  CHECK(std::memcmp(same.data, out.data, v.size() * sizeof(float)) == 0);
}

TEST_CASE("layer_norm normalises the trailing dims") {
  Tensor x = f32({2, 2}, {1, 3, 2, 2});
  Tensor scale = f32({2}, {2, 1});
  Tensor bias = f32({2}, {0.5f, 0});
  Tensor out, mean, var;
  REQUIRE(m::LayerNormInferMeta(x, &scale, &bias, 1e-5f, 1, &out, &mean, &var).ok());
  CHECK(dims_of(mean) == Dims{2});
  CHECK(mean.dtype == DataType::kFloat32);
  REQUIRE(out.allocate().ok());
  REQUIRE(mean.allocate().ok());
  REQUIRE(var.allocate().ok());
  REQUIRE(k::layer_norm(cpu(), x, &scale, &bias, 1e-5f, 1, &out, &mean, &var).ok());
  check_close<float>(out, {-1.5f, 1, 0.5f, 0}, 1e-4);
  check_close<float>(mean, {2, 2});
  check_close<float>(var, {1, 0});
  // No scale, no bias, all dims, statistics not requested.
  Tensor all = empty(DataType::kFloat32, {2, 2});
  REQUIRE(k::layer_norm(cpu(), x, nullptr, nullptr, 0.0f, 0, &all, nullptr, nullptr).ok());
  // mean 2, variance 0.5
  check_close<float>(all, {-1.41421356f, 1.41421356f, 0, 0}, 1e-5);
  CHECK(error_of(m::LayerNormInferMeta(x, &bias, nullptr, 1e-5f, 0, &out, nullptr, nullptr)).find("4 elements") !=
        std::string::npos);
  CHECK(error_of(m::LayerNormInferMeta(x, nullptr, nullptr, 1e-5f, 2, &out, nullptr, nullptr))
            .find("begin_norm_axis 2") != std::string::npos);
}

TEST_CASE("layer_norm over several trailing axes keeps the leading dims of mean and variance") {
  // x [2, 1, 2, 2] normalised from axis 2 (4 elements per row); Paddle 3.x gives mean [2, 1], not [2].
  Tensor x = f32({2, 1, 2, 2}, {1, 2, 3, 4, -1, -1, 1, 1});
  Tensor scale = f32({2, 2}, {1, 1, 1, 2});
  Tensor out, mean, var;
  REQUIRE(m::LayerNormInferMeta(x, &scale, nullptr, 0.0f, 2, &out, &mean, &var).ok());
  CHECK(dims_of(mean) == Dims{2, 1});
  CHECK(dims_of(var) == Dims{2, 1});
  REQUIRE(out.allocate().ok());
  REQUIRE(mean.allocate().ok());
  REQUIRE(var.allocate().ok());
  REQUIRE(k::layer_norm(cpu(), x, &scale, nullptr, 0.0f, -2, &out, &mean, &var).ok());
  check_close<float>(mean, {2.5f, 0});
  check_close<float>(var, {1.25f, 1});
  const float r = 1 / std::sqrt(1.25f);
  check_close<float>(out, {-1.5f * r, -0.5f * r, 0.5f * r, 3.0f * r, -1, -1, 1, 2}, 1e-5);
  // An output allocated with the flattened Paddle 2 shape is refused, not overrun.
  Tensor flat = empty(DataType::kFloat32, {2});
  CHECK(error_of(k::layer_norm(cpu(), x, &scale, nullptr, 0.0f, 2, &out, &flat, nullptr)).find("mean") !=
        std::string::npos);
}

TEST_CASE("sum, mean and max reduce over axes") {
  Tensor x = iota({2, 3});
  auto reduce = [&](auto meta, auto kernel) {
    Tensor out = output_from(meta);
    Status s = kernel(&out);
    INFO(s.message());
    REQUIRE(s.ok());
    return out;
  };
  Tensor all = reduce([&](Tensor* o) { return m::SumInferMeta(x, {}, DataType::kUndefined, false, o); },
                      [&](Tensor* o) { return k::sum(cpu(), x, {}, DataType::kUndefined, false, o); });
  CHECK(all.ndim == 0);
  check_close<float>(all, {15});
  Tensor cols = reduce([&](Tensor* o) { return m::SumInferMeta(x, {0}, DataType::kUndefined, false, o); },
                       [&](Tensor* o) { return k::sum(cpu(), x, {0}, DataType::kUndefined, false, o); });
  check_close<float>(cols, {3, 5, 7});
  Tensor rows = reduce([&](Tensor* o) { return m::SumInferMeta(x, {-1}, DataType::kUndefined, true, o); },
                       [&](Tensor* o) { return k::sum(cpu(), x, {-1}, DataType::kUndefined, true, o); });
  CHECK(dims_of(rows) == Dims{2, 1});
  check_close<float>(rows, {3, 12});
  Tensor keep_all = reduce([&](Tensor* o) { return m::SumInferMeta(x, {0, 1}, DataType::kUndefined, true, o); },
                           [&](Tensor* o) { return k::sum(cpu(), x, {0, 1}, DataType::kUndefined, true, o); });
  CHECK(dims_of(keep_all) == Dims{1, 1});

  Tensor ints = i32({2, 2}, {1, 2, 3, 5});
  Tensor isum = reduce([&](Tensor* o) { return m::SumInferMeta(ints, {1}, DataType::kUndefined, false, o); },
                       [&](Tensor* o) { return k::sum(cpu(), ints, {1}, DataType::kUndefined, false, o); });
  CHECK(isum.dtype == DataType::kInt64);  // Paddle sums int32 into int64
  CHECK(values<int64_t>(isum) == std::vector<int64_t>{3, 8});
  Tensor as_double = reduce([&](Tensor* o) { return m::SumInferMeta(ints, {}, DataType::kFloat64, false, o); },
                            [&](Tensor* o) { return k::sum(cpu(), ints, {}, DataType::kFloat64, false, o); });
  check_close<double>(as_double, {11});
  Tensor flags = boolean({3}, {1, 0, 1});
  Tensor count = reduce([&](Tensor* o) { return m::SumInferMeta(flags, {}, DataType::kUndefined, false, o); },
                        [&](Tensor* o) { return k::sum(cpu(), flags, {}, DataType::kUndefined, false, o); });
  CHECK(values<int64_t>(count) == std::vector<int64_t>{2});

  Tensor mean = reduce([&](Tensor* o) { return m::ReduceIntArrayAxisInferMeta(x, {1}, false, o); },
                       [&](Tensor* o) { return k::mean(cpu(), x, {1}, false, o); });
  check_close<float>(mean, {1, 4});
  Tensor imean = reduce([&](Tensor* o) { return m::ReduceIntArrayAxisInferMeta(ints, {1}, false, o); },
                        [&](Tensor* o) { return k::mean(cpu(), ints, {1}, false, o); });
  CHECK(values<int32_t>(imean) == std::vector<int32_t>{1, 4});  // truncated

  Tensor neg = f32({2, 3}, {-5, -1, -3, -2, -4, -6});
  Tensor mx = reduce([&](Tensor* o) { return m::ReduceIntArrayAxisInferMeta(neg, {0}, false, o); },
                     [&](Tensor* o) { return k::max(cpu(), neg, {0}, false, o); });
  check_close<float>(mx, {-2, -1, -3});
  Tensor mx_all = reduce([&](Tensor* o) { return m::ReduceIntArrayAxisInferMeta(neg, {}, true, o); },
                         [&](Tensor* o) { return k::max(cpu(), neg, {}, true, o); });
  CHECK(dims_of(mx_all) == Dims{1, 1});
  check_close<float>(mx_all, {-1});

  Tensor o;
  CHECK(error_of(m::ReduceIntArrayAxisInferMeta(x, {2}, false, &o)).find("out of range") != std::string::npos);
  Tensor empty_rows = empty(DataType::kFloat32, {2, 0});
  Tensor mo = output_from([&](Tensor* t) { return m::ReduceIntArrayAxisInferMeta(empty_rows, {1}, false, t); });
  CHECK(error_of(k::max(cpu(), empty_rows, {1}, false, &mo)).find("no elements") != std::string::npos);
  Tensor wrong = empty(DataType::kFloat32, {3});
  CHECK(error_of(k::sum(cpu(), x, {1}, DataType::kUndefined, false, &wrong)).find("expected [2]") != std::string::npos);
}

TEST_CASE("reductions over trailing dims: outputs side by side, each summed in order") {
  // 19 outputs (two blocks of 8 and a tail of 3) of 7 x 5 elements each, NCHW's global pool; mean and max.
  Tensor x = empty(DataType::kFloat32, {1, 19, 7, 5});
  for (int64_t i = 0; i < x.numel(); ++i) x.data_as<float>()[i] = std::sin(0.37f * static_cast<float>(i)) * 3.f;
  Tensor mean = output_from([&](Tensor* o) { return m::ReduceIntArrayAxisInferMeta(x, {2, 3}, true, o); });
  REQUIRE(k::mean(cpu(), x, {2, 3}, true, &mean).ok());
  Tensor mx = output_from([&](Tensor* o) { return m::ReduceIntArrayAxisInferMeta(x, {2, 3}, false, o); });
  REQUIRE(k::max(cpu(), x, {2, 3}, false, &mx).ok());
  CHECK(dims_of(mean) == Dims{1, 19, 1, 1});
  for (int64_t c = 0; c < 19; ++c) {
    double sum = 0.0;
    float top = -INFINITY;
    for (int64_t j = 0; j < 35; ++j) {
      sum += static_cast<double>(x.data_as<float>()[c * 35 + j]);
      top = std::max(top, x.data_as<float>()[c * 35 + j]);
    }
    CHECK(mean.data_as<float>()[c] == static_cast<float>(sum / 35.0));  // bit for bit: the same order
    CHECK(mx.data_as<float>()[c] == top);
  }
}

TEST_CASE("reductions use the scratch workspace when given one") {
  alignas(64) unsigned char buffer[1024];
  Workspace ws(buffer, sizeof buffer);
  KernelContext ctx;
  ctx.scratch = &ws;
  Tensor x = iota({4, 5});
  Tensor out = output_from([&](Tensor* o) { return m::SumInferMeta(x, {0}, DataType::kUndefined, false, o); });
  REQUIRE(k::sum(ctx, x, {0}, DataType::kUndefined, false, &out).ok());
  check_close<float>(out, {30, 34, 38, 42, 46});
  CHECK(ws.peak() >= 5 * sizeof(double));
  CHECK(ws.used() == 0);  // given back
}
