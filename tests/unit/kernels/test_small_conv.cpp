// kernels/onednn/small_conv.cc: the direct NHWC convolutions of at most 4 output channels (and the transposed ones
// with stride equal to the kernel) against the reference loops within the summation-order bound, through the public
// kernels (which must take the direct path for these shapes); bitwise the same at 1 and 2 threads; the epilogue of
// conv2d_fused and an output in a slice of a wider tensor. Built only with oneDNN.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "compare_paths.h"
#include "kernel_util.h"
#include "kforge_fused.h"
#include "kforge_kernels.h"
#include "onednn/onednn.h"
#include "onednn/small_conv.h"
#include "reference.h"

using namespace kforge;
using namespace kforge::test;
namespace k = kforge::kernels;
namespace m = kforge::meta;
namespace util = kforge::kernels::util;

namespace {

using Ints = std::vector<int>;

struct SmallCase {
  const char* name;
  std::vector<int64_t> input;   // NHWC
  std::vector<int64_t> filter;  // conv: [out_c, in_c, kh, kw]; transpose: [in_c, out_c, kh, kw]
  Ints strides = {1, 1};
  Ints paddings = {0, 0};
};

const std::vector<SmallCase>& small_conv_cases() {
  static const std::vector<SmallCase> cases = {
      {"3x3 16 -> 4 pad 1 (the detection head's smoothing)", {1, 24, 32, 16}, {4, 16, 3, 3}, {1, 1}, {1, 1}},
      {"3x3 12 -> 4 pad 1, a row of 36 floats (lanes past it)", {1, 7, 9, 12}, {4, 12, 3, 3}, {1, 1}, {1, 1}},
      {"3x3 3 -> 1 stride 2, 4 paddings, odd sizes", {2, 11, 13, 3}, {1, 3, 3, 3}, {2, 2}, {1, 0, 2, 1}},
      {"1x1 17 -> 1 (PP-YOLOE's distribution projection)", {1, 4, 50, 17}, {1, 17, 1, 1}},
      {"5x5 10 -> 3, padding 2, 250 products", {2, 6, 5, 10}, {3, 10, 5, 5}, {1, 1}, {2, 2}},
      {"3x1 kernel 8 -> 2, asymmetric strides, padding wider than the kernel", {1, 9, 10, 8}, {2, 8, 3, 1}, {1, 2},
       {4, 4, 1, 1}},
      {"a single output column", {1, 5, 1, 4}, {4, 4, 3, 3}, {1, 1}, {1, 1}},
      {"3x3 16 -> 4 at 64 x 64: 3 tasks of rows", {1, 64, 64, 16}, {4, 16, 3, 3}, {1, 1}, {1, 1}},
  };
  return cases;
}

const std::vector<SmallCase>& small_transpose_cases() {
  static const std::vector<SmallCase> cases = {
      {"2x2 stride 2, 4 -> 1 (the head's last layer)", {1, 48, 64, 4}, {4, 1, 2, 2}, {2, 2}},
      {"2x2 stride 2, 4 -> 4", {2, 5, 7, 4}, {4, 4, 2, 2}, {2, 2}},
      {"3x3 stride 3, 16 -> 3", {1, 4, 5, 16}, {16, 3, 3, 3}, {3, 3}},
      {"1x2 stride (1, 2), 5 -> 2", {1, 3, 9, 5}, {5, 2, 1, 2}, {1, 2}},
      {"2x2 stride 2, 16 -> 4 at 96 x 128: 3 tasks of rows", {1, 96, 128, 16}, {16, 4, 2, 2}, {2, 2}},
  };
  return cases;
}

Tensor small_conv_out(const SmallCase& c, const Tensor& input, const Tensor& filter) {
  return output_from([&](Tensor* o) {
    return m::ConvInferMeta(input, filter, c.strides, c.paddings, "EXPLICIT", {1, 1}, 1, "NHWC", o);
  });
}

Tensor run_small_conv(const SmallCase& c, const Tensor& input, const Tensor& filter, bool reference) {
  Tensor out = poisoned_like(small_conv_out(c, input, filter));
  const Status s = reference ? k::reference::conv2d(cpu(), input, filter, c.strides, c.paddings, "EXPLICIT", {1, 1},
                                                    1, "NHWC", &out)
                             : k::conv2d(cpu(), input, filter, c.strides, c.paddings, "EXPLICIT", {1, 1}, 1, "NHWC",
                                         &out);
  INFO(s.message());
  REQUIRE(s.ok());
  return out;
}

Tensor small_transpose_out(const SmallCase& c, const Tensor& x, const Tensor& filter) {
  return output_from([&](Tensor* o) {
    return m::Conv2dTransposeInferMeta(x, filter, c.strides, c.paddings, {}, IntArray{}, "EXPLICIT", 1, {1, 1}, "NHWC",
                                       o);
  });
}

Tensor run_small_transpose(const SmallCase& c, const Tensor& x, const Tensor& filter, bool reference) {
  Tensor out = poisoned_like(small_transpose_out(c, x, filter));
  const Status s = reference ? k::reference::conv2d_transpose(cpu(), x, filter, c.strides, c.paddings, {},
                                                              IntArray{}, "EXPLICIT", 1, {1, 1}, "NHWC", &out)
                             : k::conv2d_transpose(cpu(), x, filter, c.strides, c.paddings, {}, IntArray{},
                                                   "EXPLICIT", 1, {1, 1}, "NHWC", &out);
  INFO(s.message());
  REQUIRE(s.ok());
  return out;
}

bool small_conv_cpu() { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }

}  // namespace

TEST_CASE("small-channel conv2d: the direct path, within the summation-order bound, the same bits at 1 and 2 threads") {
  if (!small_conv_cpu()) return;  // oneDNN runs these (test_onednn_conv.cpp)
  uint32_t seed = 100;
  for (const SmallCase& c : small_conv_cases()) {
    INFO(c.name);
    const Tensor input = random_f32(c.input, seed++), filter = random_f32(c.filter, seed++);
    util::ConvShape s;
    REQUIRE(util::conv_shape("conv2d", input, filter, c.strides, c.paddings, "EXPLICIT", {1, 1}, 1, "NHWC", &s).ok());
    REQUIRE(k::onednn::small_conv2d_fits(input, s, k::onednn::ConvEpilogue{}, small_conv_out(c, input, filter)));
    const Tensor want = run_small_conv(c, input, filter, true);
    const Tensor bound = run_small_conv(c, abs_of(input), abs_of(filter), true);
    const Tensor one = run_small_conv(c, input, filter, false);
    check_within_bound(one, want, bound, c.filter[1] * c.filter[2] * c.filter[3]);
    ThreadsScope two(2);
    CHECK(same_bits(run_small_conv(c, input, filter, false), one));
  }
}

TEST_CASE("small-channel conv2d: what it leaves to oneDNN") {
  const Tensor out = empty(DataType::kFloat32, {1, 8, 8, 4});
  auto fits = [&](std::vector<int64_t> in_dims, std::vector<int64_t> filter_dims, Ints dilations = {1, 1},
                  int groups = 1, const char* format = "NHWC") {
    const Tensor input = random_f32(in_dims, 1), filter = random_f32(filter_dims, 2);
    util::ConvShape s;
    REQUIRE(util::conv_shape("conv2d", input, filter, {1, 1}, {1, 1}, "EXPLICIT", dilations, groups, format, &s).ok());
    return k::onednn::small_conv2d_fits(input, s, k::onednn::ConvEpilogue{}, out);
  };
  CHECK(fits({1, 8, 8, 28}, {4, 28, 3, 3}) == small_conv_cpu());  // 252 products
  CHECK_FALSE(fits({1, 8, 8, 32}, {4, 32, 3, 3}));                    // 288: issue 34's chunks decide
  CHECK_FALSE(fits({1, 8, 8, 16}, {5, 16, 3, 3}));                    // 5 output channels
  CHECK_FALSE(fits({1, 8, 8, 16}, {4, 16, 3, 3}, {2, 2}));            // dilated
  CHECK_FALSE(fits({1, 8, 8, 16}, {4, 8, 3, 3}, {1, 1}, 2));          // grouped
  CHECK(fits({1, 16, 8, 8}, {4, 16, 3, 3}, {1, 1}, 1, "NCHW") == small_conv_cpu());  // through NHWC copies
}

TEST_CASE("small-channel conv2d_fused: bias, batch norm, activation and residual as the reference loops have them") {
  if (!small_conv_cpu()) return;  // oneDNN runs these (test_onednn_conv.cpp)
  const SmallCase& c = small_conv_cases()[0];
  const int64_t oc = c.filter[0];
  const Tensor input = random_f32(c.input, 7), filter = random_f32(c.filter, 8);
  const Tensor bias = random_f32({oc}, 9), mean = random_f32({oc}, 10), scale = random_f32({oc}, 11);
  const Tensor shift = random_f32({oc}, 12);
  Tensor variance = abs_of(random_f32({oc}, 13));
  const Tensor out_like = small_conv_out(c, input, filter), residual = random_f32(out_like.shape(), 14);
  for (const char* activation : {"relu", "hardswish", ""}) {
    for (bool after_residual : {false, true}) {
      INFO(activation << (after_residual ? ", after the residual" : ""));
      auto run = [&](bool reference, const Tensor& in, const Tensor& f) {
        Tensor out = poisoned_like(out_like);
        const auto fn = reference ? k::reference::conv2d_fused : k::conv2d_fused;
        const Status s = fn(cpu(), in, f, &bias, &mean, &variance, &scale, &shift, &residual, c.strides, c.paddings,
                            "EXPLICIT", {1, 1}, 1, "NHWC", 1e-5f, activation, 0.f, 0.f, after_residual, 0, &out);
        INFO(s.message());
        REQUIRE(s.ok());
        return out;
      };
      const Tensor want = run(true, input, filter), got = run(false, input, filter);
      // The epilogue is the reference's, element by element, after a sum in another order: compare loosely.
      for (int64_t i = 0; i < got.numel(); ++i) {
        INFO("element " << i);
        CHECK(got.data_as<const float>()[i] == Approx(want.data_as<const float>()[i]).margin(1e-4).epsilon(1e-4));
      }
      ThreadsScope two(2);
      CHECK(same_bits(run(false, input, filter), got));
    }
  }
}

TEST_CASE("small-channel conv2d_fused writes an NHWC output into its slice of a wider tensor, the dense bits") {
  if (!small_conv_cpu()) return;  // oneDNN runs these (test_onednn_conv.cpp)
  const SmallCase& c = small_conv_cases()[1];
  const int64_t oc = c.filter[0], wide = 10;
  const Tensor input = random_f32(c.input, 21), filter = random_f32(c.filter, 22), bias = random_f32({oc}, 23);
  const Tensor dense_like = small_conv_out(c, input, filter);
  auto run = [&](int pixel_stride, Tensor* out) {
    const Status s = k::conv2d_fused(cpu(), input, filter, &bias, nullptr, nullptr, nullptr, nullptr, nullptr,
                                     c.strides, c.paddings, "EXPLICIT", {1, 1}, 1, "NHWC", 1e-5f, "relu", 0.f, 0.f,
                                     false, pixel_stride, out);
    INFO(s.message());
    REQUIRE(s.ok());
  };
  Tensor dense = poisoned_like(dense_like);
  run(0, &dense);
  const int64_t pixels = dense.numel() / oc;
  std::vector<float> buffer(static_cast<size_t>(pixels * wide), -7.f);
  Tensor slice = dense_like;
  slice.holder.reset();
  slice.data = buffer.data() + 3;  // channels 3 to 6 of 10
  run(static_cast<int>(wide), &slice);
  for (int64_t p = 0; p < pixels; ++p) {
    INFO("pixel " << p);
    CHECK(std::memcmp(buffer.data() + p * wide + 3, dense.data_as<const float>() + p * oc, oc * sizeof(float)) == 0);
    CHECK(buffer[static_cast<size_t>(p * wide + 2)] == -7.f);
    CHECK(buffer[static_cast<size_t>(p * wide + 7)] == -7.f);
  }
}

TEST_CASE("small-channel conv2d_transpose, stride = kernel: the reference within the bound, threads bitwise") {
  if (!small_conv_cpu()) return;  // oneDNN runs these (test_onednn_conv.cpp)
  uint32_t seed = 200;
  for (const SmallCase& c : small_transpose_cases()) {
    INFO(c.name);
    const Tensor x = random_f32(c.input, seed++), filter = random_f32(c.filter, seed++);
    util::ConvShape s;
    REQUIRE(util::conv_transpose_shape("conv2d_transpose", x, filter, c.strides, c.paddings, {}, IntArray{},
                                       "EXPLICIT", 1, {1, 1}, "NHWC", &s)
                .ok());
    REQUIRE(k::onednn::small_conv2d_transpose_fits(x, s));
    const Tensor want = run_small_transpose(c, x, filter, true);
    const Tensor bound = run_small_transpose(c, abs_of(x), abs_of(filter), true);
    const Tensor one = run_small_transpose(c, x, filter, false);
    check_within_bound(one, want, bound, c.filter[0]);
    ThreadsScope two(2);
    CHECK(same_bits(run_small_transpose(c, x, filter, false), one));
  }
}

namespace {

// An NHWC tensor as NCHW, or back (to_nchw false).
Tensor relayout(const Tensor& t, bool to_nchw) {
  const int64_t n = t.dims[0], a = t.dims[1], b = t.dims[2], c = t.dims[3];  // NHWC: a = H, b = W, c = C
  Tensor r = empty(DataType::kFloat32, to_nchw ? std::vector<int64_t>{n, c, a, b} : std::vector<int64_t>{n, b, c, a});
  for (int64_t i = 0; i < n; ++i)
    for (int64_t x = 0; x < a; ++x)
      for (int64_t y = 0; y < b; ++y)
        for (int64_t z = 0; z < c; ++z) {
          // to_nchw: [i][x][y][z] -> [i][z][x][y]; back: NCHW [i][x = C][y = H][z = W] -> NHWC [i][y][z][x]
          const int64_t from = ((i * a + x) * b + y) * c + z;
          const int64_t to = to_nchw ? ((i * c + z) * a + x) * b + y : ((i * b + y) * c + z) * a + x;
          r.data_as<float>()[to] = t.data_as<const float>()[from];
        }
  return r;
}

}  // namespace

TEST_CASE("small-channel conv2d and conv2d_transpose in NCHW: the NHWC results' bits, transposed") {
  if (!small_conv_cpu()) return;
  for (size_t i : {0u, 2u, 4u}) {
    const SmallCase& c = small_conv_cases()[i];
    INFO(c.name);
    const Tensor input = random_f32(c.input, 300 + static_cast<uint32_t>(i)), filter = random_f32(c.filter, 7);
    const Tensor nhwc = run_small_conv(c, input, filter, false);
    const Tensor nchw_in = relayout(input, true);
    Tensor out = poisoned_like(relayout(nhwc, true));
    REQUIRE(k::conv2d(cpu(), nchw_in, filter, c.strides, c.paddings, "EXPLICIT", {1, 1}, 1, "NCHW", &out).ok());
    CHECK(same_bits(relayout(out, false), nhwc));
  }
  for (size_t i : {0u, 1u}) {
    const SmallCase& c = small_transpose_cases()[i];
    INFO(c.name);
    const Tensor x = random_f32(c.input, 310 + static_cast<uint32_t>(i)), filter = random_f32(c.filter, 8);
    const Tensor nhwc = run_small_transpose(c, x, filter, false);
    Tensor out = poisoned_like(relayout(nhwc, true));
    REQUIRE(k::conv2d_transpose(cpu(), relayout(x, true), filter, c.strides, c.paddings, {}, IntArray{}, "EXPLICIT", 1,
                                {1, 1}, "NCHW", &out)
                .ok());
    CHECK(same_bits(relayout(out, false), nhwc));
  }
}
