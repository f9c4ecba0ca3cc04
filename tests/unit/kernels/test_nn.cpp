// conv2d, depthwise_conv2d, conv2d_transpose, pool2d, batch_norm and nearest_interp.
#include <catch2/catch.hpp>

#include <cfloat>
#include <cmath>
#include <numeric>

#include "compare_paths.h"
#include "reference.h"
#include "tensor_builder.h"

using namespace kforge;
using namespace kforge::test;
namespace k = kforge::kernels;
namespace m = kforge::meta;

namespace {

using Dims = std::vector<int64_t>;
using Ints = std::vector<int>;


struct ConvArgs {
  Ints strides = {1, 1};
  Ints paddings = {0, 0};
  std::string padding_algorithm = "EXPLICIT";
  Ints dilations = {1, 1};
  int groups = 1;
  std::string data_format = "NCHW";
};

Tensor conv(const Tensor& input, const Tensor& filter, const ConvArgs& a = {}) {
  Tensor out = output_from([&](Tensor* o) {
    return m::ConvInferMeta(input, filter, a.strides, a.paddings, a.padding_algorithm, a.dilations, a.groups,
                            a.data_format, o);
  });
  Status s = k::conv2d(cpu(DataType::kFloat32), input, filter, a.strides, a.paddings, a.padding_algorithm, a.dilations,
                       a.groups, a.data_format, &out);
  INFO(s.message());
  REQUIRE(s.ok());
  return out;
}

std::string conv_error(const Tensor& input, const Tensor& filter, const ConvArgs& a = {}) {
  Tensor out;
  return error_of(m::ConvInferMeta(input, filter, a.strides, a.paddings, a.padding_algorithm, a.dilations, a.groups,
                                   a.data_format, &out));
}

const Tensor& grid3() {
  static const Tensor t = f32({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  return t;
}
const Tensor& diag2() {
  static const Tensor t = f32({1, 1, 2, 2}, {1, 0, 0, 1});
  return t;
}

}  // namespace

TEST_CASE("conv2d: explicit, SAME and VALID padding, strides and dilation") {
  Tensor plain = conv(grid3(), diag2());
  CHECK(dims_of(plain) == Dims{1, 1, 2, 2});
  check_close<float>(plain, {6, 8, 12, 14});

  ConvArgs padded;
  padded.paddings = {1, 1};
  Tensor p = conv(grid3(), diag2(), padded);
  CHECK(dims_of(p) == Dims{1, 1, 4, 4});
  check_close<float>(p, {1, 2, 3, 0, 4, 6, 8, 3, 7, 12, 14, 6, 0, 7, 8, 9});

  ConvArgs four = padded;
  four.paddings = {1, 0, 1, 0};  // top, bottom, left, right
  Tensor p4 = conv(grid3(), diag2(), four);
  CHECK(dims_of(p4) == Dims{1, 1, 3, 3});
  check_close<float>(p4, {1, 2, 3, 4, 6, 8, 7, 12, 14});

  ConvArgs same;
  same.strides = {2, 2};
  same.paddings = {5, 5};  // ignored by SAME
  same.padding_algorithm = "SAME";
  Tensor s = conv(grid3(), diag2(), same);
  CHECK(dims_of(s) == Dims{1, 1, 2, 2});
  check_close<float>(s, {6, 3, 7, 9});

  ConvArgs valid;
  valid.paddings = {1, 1};
  valid.padding_algorithm = "VALID";
  check_close<float>(conv(grid3(), diag2(), valid), {6, 8, 12, 14});

  ConvArgs dilated;
  dilated.dilations = {2, 2};
  Tensor d = conv(grid3(), diag2(), dilated);
  CHECK(dims_of(d) == Dims{1, 1, 1, 1});
  check_close<float>(d, {10});
}

TEST_CASE("conv2d: channels, groups, NHWC, depthwise") {
  Tensor x = f32({1, 2, 1, 1}, {1, 2});
  Tensor w = f32({3, 2, 1, 1}, {1, 1, 1, -1, 2, 0});
  check_close<float>(conv(x, w), {3, -1, 2});
  ConvArgs nhwc;
  nhwc.data_format = "NHWC";
  Tensor xn = f32({1, 1, 1, 2}, {1, 2});
  Tensor on = conv(xn, w, nhwc);
  CHECK(dims_of(on) == Dims{1, 1, 1, 3});
  check_close<float>(on, {3, -1, 2});
  // NHWC with space: the same numbers as NCHW, laid out channel-last.
  Tensor xs = f32({1, 2, 2, 2}, {1, 10, 2, 20, 3, 30, 4, 40});
  Tensor ws = f32({1, 2, 2, 2}, {1, 0, 0, 1, 0, 1, 0, 0});  // ch0 diag, ch1 picks (0, 1)
  Tensor os = conv(xs, ws, nhwc);
  check_close<float>(os, {1 + 4 + 20});

  Tensor xg = f32({1, 2, 2, 2}, {1, 2, 3, 4, 10, 20, 30, 40});
  Tensor wg = f32({2, 1, 1, 1}, {2, 3});
  ConvArgs grouped;
  grouped.groups = 2;
  check_close<float>(conv(xg, wg, grouped), {2, 4, 6, 8, 30, 60, 90, 120});
  Tensor dw = output_from([&](Tensor* o) {
    return m::DepthwiseConvInferMeta(xg, wg, {1, 1}, {0, 0}, "EXPLICIT", 2, {1, 1}, "NCHW", o);
  });
  REQUIRE(k::depthwise_conv2d(cpu(), xg, wg, {1, 1}, {0, 0}, "EXPLICIT", 2, {1, 1}, "NCHW", &dw).ok());
  check_close<float>(dw, {2, 4, 6, 8, 30, 60, 90, 120});
}

TEST_CASE("ConvInferMeta rejects bad shapes and attributes") {
  CHECK(conv_error(grid3(), f32({1, 2, 2, 2}, std::vector<float>(8))).find("has 1 channels") != std::string::npos);
  CHECK(conv_error(grid3(), f32({1, 1, 4, 4}, std::vector<float>(16))).find("empty output") != std::string::npos);
  ConvArgs bad_algo;
  bad_algo.padding_algorithm = "FULL";
  CHECK(conv_error(grid3(), diag2(), bad_algo).find("padding_algorithm") != std::string::npos);
  ConvArgs bad_pad;
  bad_pad.paddings = {1, 1, 1};
  CHECK(conv_error(grid3(), diag2(), bad_pad).find("2 or 4 values") != std::string::npos);
  ConvArgs bad_format;
  bad_format.data_format = "CHWN";
  CHECK(conv_error(grid3(), diag2(), bad_format).find("data_format") != std::string::npos);
  ConvArgs groups3;
  groups3.groups = 3;
  CHECK_FALSE(conv_error(f32({1, 3, 1, 1}, {1, 2, 3}), f32({2, 1, 1, 1}, {1, 1}), groups3).empty());
  CHECK(conv_error(f32({3, 3}, std::vector<float>(9)), diag2()).find("must be 4-D") != std::string::npos);
  CHECK(conv_error(grid3(), i32({1, 1, 2, 2}, {1, 0, 0, 1})).find("int32") != std::string::npos);
  Tensor wrong = empty(DataType::kFloat32, {1, 1, 3, 3});
  CHECK(error_of(k::conv2d(cpu(), grid3(), diag2(), {1, 1}, {0, 0}, "EXPLICIT", {1, 1}, 1, "NCHW", &wrong))
            .find("expected [1, 1, 2, 2]") != std::string::npos);
}

TEST_CASE("conv2d_transpose scatters each input pixel") {
  Tensor x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
  Tensor ones = f32({1, 1, 2, 2}, {1, 1, 1, 1});
  auto run = [&](const Tensor& in, const Tensor& w, Ints strides, Ints paddings, Ints output_padding,
                 IntArray output_size) {
    Tensor out = output_from([&](Tensor* o) {
      return m::Conv2dTransposeInferMeta(in, w, strides, paddings, output_padding, output_size, "EXPLICIT", 1, {1, 1},
                                         "NCHW", o);
    });
    Status s = k::conv2d_transpose(cpu(), in, w, strides, paddings, output_padding, output_size, "EXPLICIT", 1, {1, 1},
                                   "NCHW", &out);
    INFO(s.message());
    REQUIRE(s.ok());
    return out;
  };
  Tensor s1 = run(x, ones, {1, 1}, {0, 0}, {}, {});
  CHECK(dims_of(s1) == Dims{1, 1, 3, 3});
  check_close<float>(s1, {1, 3, 2, 4, 10, 6, 3, 7, 4});
  Tensor s2 = run(x, ones, {2, 2}, {0, 0}, {}, {});
  check_close<float>(s2, {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});
  Tensor cropped = run(x, ones, {2, 2}, {1, 1}, {}, {});
  CHECK(dims_of(cropped) == Dims{1, 1, 2, 2});
  check_close<float>(cropped, {1, 2, 3, 4});
  Tensor sized = run(x, ones, {2, 2}, {0, 0}, {}, {5, 5});
  CHECK(dims_of(sized) == Dims{1, 1, 5, 5});
  CHECK(values<float>(sized)[24] == 0.0f);
  CHECK(values<float>(sized)[18] == 4.0f);
  Tensor padded_out = run(x, ones, {2, 2}, {0, 0}, {1, 1}, {});
  CHECK(dims_of(padded_out) == Dims{1, 1, 5, 5});
  Tensor xc = f32({1, 2, 1, 1}, {1, 2});
  Tensor wc = f32({2, 3, 1, 1}, {1, 2, 3, 10, 20, 30});
  check_close<float>(run(xc, wc, {1, 1}, {0, 0}, {}, {}), {21, 42, 63});
  Tensor out;
  CHECK(error_of(m::Conv2dTransposeInferMeta(x, ones, {2, 2}, {0, 0}, {}, {6, 6}, "EXPLICIT", 1, {1, 1}, "NCHW", &out))
            .find("must be in [4, 6)") != std::string::npos);
  CHECK(error_of(m::Conv2dTransposeInferMeta(x, ones, {2, 2}, {0, 0}, {2, 2}, {}, "EXPLICIT", 1, {1, 1}, "NCHW", &out))
            .find("output_padding") != std::string::npos);
  CHECK(error_of(m::Conv2dTransposeInferMeta(xc, ones, {1, 1}, {0, 0}, {}, {}, "EXPLICIT", 1, {1, 1}, "NCHW", &out))
            .find("channels") != std::string::npos);
}

namespace {

struct PoolArgs {
  IntArray kernel = {2, 2};
  Ints strides = {2, 2};
  Ints paddings = {0, 0};
  bool ceil_mode = false;
  bool exclusive = true;
  std::string data_format = "NCHW";
  std::string type = "max";
  bool global = false;
  bool adaptive = false;
  std::string algorithm = "EXPLICIT";
};

// Through the public kernel, or the reference loops (reference.h) with `reference`; the output starts as NaN.
Tensor pool(const Tensor& x, const PoolArgs& a, bool reference = false) {
  Tensor out = poisoned_like(output_from([&](Tensor* o) {
    return m::Pool2DInferMeta(x, a.kernel, a.strides, a.paddings, a.ceil_mode, a.exclusive, a.data_format, a.type,
                              a.global, a.adaptive, a.algorithm, o);
  }));
  auto kernel = reference ? k::reference::pool2d : k::pool2d;
  Status s = kernel(cpu(), x, a.kernel, a.strides, a.paddings, a.ceil_mode, a.exclusive, a.data_format, a.type,
                    a.global, a.adaptive, a.algorithm, &out);
  INFO(s.message());
  REQUIRE(s.ok());
  return out;
}

std::string pool_error(const Tensor& x, const PoolArgs& a) {
  Tensor out;
  return error_of(m::Pool2DInferMeta(x, a.kernel, a.strides, a.paddings, a.ceil_mode, a.exclusive, a.data_format,
                                     a.type, a.global, a.adaptive, a.algorithm, &out));
}

}  // namespace

TEST_CASE("pool2d max and avg") {
  Tensor x = iota({1, 1, 4, 4});
  PoolArgs a;
  check_close<float>(pool(x, a), {5, 7, 13, 15});
  a.type = "avg";
  check_close<float>(pool(x, a), {2.5f, 4.5f, 10.5f, 12.5f});
  PoolArgs padded;
  padded.type = "avg";
  padded.kernel = {3, 3};
  padded.paddings = {1, 1};
  Tensor ex = pool(x, padded);
  CHECK(dims_of(ex) == Dims{1, 1, 2, 2});
  check_close<float>(ex, {2.5f, 4, 8.5f, 10}, 1e-5);
  padded.exclusive = false;  // padding counts in the divisor
  check_close<float>(pool(x, padded), {10.f / 9, 24.f / 9, 51.f / 9, 10}, 1e-5);
  padded.type = "max";
  check_close<float>(pool(x, padded), {5, 7, 13, 15});
}

TEST_CASE("pool2d global, adaptive, ceil_mode, NHWC") {
  Tensor x = iota({1, 1, 4, 4});
  PoolArgs g;
  g.global = true;
  g.kernel = {1, 1};
  g.type = "avg";
  Tensor ga = pool(x, g);
  CHECK(dims_of(ga) == Dims{1, 1, 1, 1});
  check_close<float>(ga, {7.5f});
  PoolArgs ad;
  ad.adaptive = true;
  ad.type = "avg";
  ad.kernel = {3, 3};
  Tensor a3 = pool(x, ad);
  CHECK(dims_of(a3) == Dims{1, 1, 3, 3});
  // windows [0, 2), [1, 3), [2, 4) in each direction
  check_close<float>(a3, {2.5f, 3.5f, 4.5f, 6.5f, 7.5f, 8.5f, 10.5f, 11.5f, 12.5f});
  Tensor five = iota({1, 1, 5, 5});
  PoolArgs floor_mode;
  CHECK(dims_of(pool(five, floor_mode)) == Dims{1, 1, 2, 2});
  PoolArgs ceil_mode;
  ceil_mode.ceil_mode = true;
  Tensor c = pool(five, ceil_mode);
  CHECK(dims_of(c) == Dims{1, 1, 3, 3});
  CHECK(values<float>(c)[8] == 24.0f);  // the last window holds one element
  PoolArgs same;
  same.algorithm = "SAME";
  same.kernel = {3, 3};
  same.strides = {1, 1};
  CHECK(dims_of(pool(x, same)) == Dims{1, 1, 4, 4});
  Tensor xn = f32({1, 2, 2, 2}, {1, 10, 2, 20, 3, 30, 4, 40});
  PoolArgs nhwc;
  nhwc.data_format = "NHWC";
  Tensor pn = pool(xn, nhwc);
  CHECK(dims_of(pn) == Dims{1, 1, 1, 2});
  check_close<float>(pn, {4, 40});
}

// NHWC pooling runs the kernel library's channel-last loop (nn.cc), with or without oneDNN; it must compute what the
// reference loops compute, bit for bit: blocks of 8 channels and the channels after the last block, windows clipped
// by the padding, uneven adaptive windows, a window wholly in the padding (-FLT_MAX, as the loops give).
TEST_CASE("pool2d NHWC: the channel-last loop gives the reference loops' results bit for bit") {
  auto nhwc = [](IntArray kernel, Ints strides, Ints paddings, std::string type) {
    PoolArgs a;
    a.kernel = kernel;
    a.strides = strides;
    a.paddings = paddings;
    a.type = type;
    a.data_format = "NHWC";
    return a;
  };
  struct Case {
    const char* name;
    Dims x;
    PoolArgs args;
  };
  std::vector<Case> cases = {
      {"max 3x3 s2 p1, 64 channels", {1, 14, 14, 64}, nhwc({3, 3}, {2, 2}, {1, 1}, "max")},
      {"max 2x3, 13 channels (a block and 5 alone)", {2, 7, 6, 13}, nhwc({2, 3}, {1, 2}, {1, 0, 0, 1}, "max")},
      {"avg exclusive, 20 channels", {1, 9, 9, 20}, nhwc({3, 3}, {2, 2}, {1, 1}, "avg")},
      {"avg inclusive ceil_mode, 3 channels", {1, 8, 8, 3}, nhwc({3, 3}, {2, 2}, {1, 1}, "avg")},
      {"global avg, 24 channels", {2, 7, 7, 24}, nhwc({1, 1}, {1, 1}, {0, 0}, "avg")},
      {"adaptive avg 7 to 3, 9 channels", {1, 7, 7, 9}, nhwc({3, 3}, {1, 1}, {0, 0}, "avg")},
      {"max, a window wholly in the padding", {1, 4, 4, 8}, nhwc({2, 2}, {1, 1}, {2, 2}, "max")},
  };
  cases[3].args.exclusive = false;
  cases[3].args.ceil_mode = true;
  cases[4].args.global = true;
  cases[5].args.adaptive = true;
  uint32_t seed = 350;
  for (const Case& c : cases) {
    INFO(c.name);
    const Tensor x = random_f32(c.x, seed++);
    const Tensor want = pool(x, c.args, true);
    CHECK(same_bits(pool(x, c.args), want));
    ThreadsScope threads(2);
    CHECK(same_bits(pool(x, c.args), want));
  }
  // The window in the padding gives -FLT_MAX, not a NaN left from the poisoned output or a read outside the input.
  CHECK(values<float>(pool(random_f32({1, 4, 4, 8}, 1), cases[6].args))[0] == -FLT_MAX);
}

TEST_CASE("Pool2DInferMeta errors") {
  Tensor x = iota({1, 1, 4, 4});
  PoolArgs bad_type;
  bad_type.type = "sum";
  CHECK(pool_error(x, bad_type).find("pooling_type") != std::string::npos);
  PoolArgs too_big;  // (4 - 6) / 1 + 1 < 1; a 5 x 5 window with stride 2 would still give 1, as in Paddle
  too_big.kernel = {6, 6};
  too_big.strides = {1, 1};
  CHECK(pool_error(x, too_big).find("empty output") != std::string::npos);
  PoolArgs three;
  three.kernel = {2, 2, 2};
  CHECK(pool_error(x, three).find("kernel_size") != std::string::npos);
  CHECK(pool_error(iota({4, 4}), PoolArgs{}).find("4-D") != std::string::npos);
}

TEST_CASE("batch_norm at inference uses the running statistics") {
  Tensor x = f32({1, 2, 1, 2}, {1, 3, 2, 4});
  Tensor mean = f32({2}, {2, 3});
  Tensor var = f32({2}, {1, 4});
  Tensor scale = f32({2}, {1, 2});
  Tensor bias = f32({2}, {0, 1});
  Tensor out, mean_out, var_out, saved_mean, saved_var, reserve;
  REQUIRE(m::BatchNormInferMeta(x, mean, var, &scale, &bias, true, 0.9f, 0.0f, "NCHW", false, false, &out, &mean_out,
                                &var_out, &saved_mean, &saved_var, &reserve)
              .ok());
  CHECK(dims_of(out) == Dims{1, 2, 1, 2});
  CHECK(dims_of(mean_out) == Dims{2});
  REQUIRE(out.allocate().ok());
  // mean_out and variance_out alias the running statistics, as batch_norm_ declares.
  mean_out = mean;
  var_out = var;
  REQUIRE(saved_mean.allocate().ok());
  REQUIRE(saved_var.allocate().ok());
  REQUIRE(k::batch_norm(cpu(), x, mean, var, &scale, &bias, true, 0.9f, 0.0f, "NCHW", false, false, &out, &mean_out,
                        &var_out, &saved_mean, &saved_var, nullptr)
              .ok());
  check_close<float>(out, {-1, 1, 0, 2});
  check_close<float>(mean_out, {2, 3});
  check_close<float>(var_out, {1, 4});

  Tensor xn = f32({1, 1, 2, 2}, {1, 2, 3, 4});  // NHWC: channel pairs (1, 2), (3, 4)
  Tensor on = empty(DataType::kFloat32, {1, 1, 2, 2});
  REQUIRE(k::batch_norm(cpu(), xn, mean, var, &scale, &bias, true, 0.9f, 0.0f, "NHWC", false, false, &on, nullptr,
                        nullptr, nullptr, nullptr, nullptr)
              .ok());
  check_close<float>(on, {-1, 0, 1, 2});
  Tensor o;
  CHECK(error_of(m::BatchNormInferMeta(x, f32({3}, {0, 0, 0}), var, nullptr, nullptr, true, 0.9f, 1e-5f, "NCHW", false,
                                       false, &o, nullptr, nullptr, nullptr, nullptr, nullptr))
            .find("mean [3] must be [2]") != std::string::npos);
  CHECK(error_of(m::BatchNormInferMeta(f32({2}, {1, 2}), mean, var, nullptr, nullptr, true, 0.9f, 1e-5f, "NCHW", false,
                                       false, &o, nullptr, nullptr, nullptr, nullptr, nullptr))
            .find("rank 2 to 5") != std::string::npos);
}

TEST_CASE("batch_norm in training uses batch statistics and updates the running ones") {
  Tensor x = f32({4, 1}, {1, 2, 3, 4});
  Tensor mean = f32({1}, {0});
  Tensor var = f32({1}, {1});
  Tensor out = empty(DataType::kFloat32, {4, 1});
  Tensor mean_out = empty(DataType::kFloat32, {1}), var_out = empty(DataType::kFloat32, {1});
  Tensor saved_mean = empty(DataType::kFloat32, {1}), saved_var = empty(DataType::kFloat32, {1});
  REQUIRE(k::batch_norm(cpu(), x, mean, var, nullptr, nullptr, false, 0.9f, 0.0f, "NCHW", false, false, &out,
                        &mean_out, &var_out, &saved_mean, &saved_var, nullptr)
              .ok());
  const float inv = 1.0f / std::sqrt(1.25f);
  check_close<float>(out, {-1.5f * inv, -0.5f * inv, 0.5f * inv, 1.5f * inv}, 1e-5);
  check_close<float>(mean_out, {0.25f}, 1e-6);
  check_close<float>(var_out, {1.025f}, 1e-6);
  check_close<float>(saved_mean, {2.5f});
  check_close<float>(saved_var, {inv}, 1e-6);
}

namespace {

Tensor interp(const Tensor& x, const Tensor* out_size, TensorList size_tensor, const Tensor* scale_tensor, int out_h,
              int out_w, std::vector<float> scale, bool align_corners, std::string format = "NCHW") {
  Tensor out = output_from([&](Tensor* o) {
    return m::InterpolateInferMeta(x, out_size, size_tensor, scale_tensor, format, 0, out_h, out_w, scale, "nearest",
                                   align_corners, 1, o);
  });
  Status s = k::nearest_interp(cpu(), x, out_size, size_tensor, scale_tensor, format, 0, out_h, out_w, scale,
                               "nearest", align_corners, 1, &out);
  INFO(s.message());
  REQUIRE(s.ok());
  return out;
}

}  // namespace

TEST_CASE("nearest_interp from a scale, sizes and size tensors") {
  Tensor x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
  const std::vector<float> doubled = {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4};
  Tensor up = interp(x, nullptr, {}, nullptr, 0, 0, {2.f, 2.f}, false);
  CHECK(dims_of(up) == Dims{1, 1, 4, 4});
  check_close<float>(up, doubled);
  check_close<float>(interp(x, nullptr, {}, nullptr, 3, 3, {}, false), {1, 1, 2, 1, 1, 2, 3, 3, 4});
  check_close<float>(interp(x, nullptr, {}, nullptr, 3, 3, {}, true), {1, 2, 2, 3, 4, 4, 3, 4, 4});
  Tensor size = i32({2}, {4, 4});
  check_close<float>(interp(x, &size, {}, nullptr, 3, 3, {}, false), doubled);
  Tensor h = i64({1}, {4}), w = i64({1}, {4});
  const Tensor* parts[] = {&h, &w};
  check_close<float>(interp(x, nullptr, TensorList{parts, 2}, nullptr, 1, 1, {}, false), doubled);
  Tensor factor = f32({1}, {2});
  check_close<float>(interp(x, nullptr, {}, &factor, 0, 0, {}, false), doubled);
  Tensor xn = f32({1, 2, 2, 1}, {1, 2, 3, 4});
  Tensor un = interp(xn, nullptr, {}, nullptr, 0, 0, {2.f}, false, "NHWC");
  CHECK(dims_of(un) == Dims{1, 4, 4, 1});
  check_close<float>(un, doubled);
}

TEST_CASE("InterpolateInferMeta: unknown sizes and errors") {
  Tensor x = f32({1, 1, 2, 2}, {1, 2, 3, 4});
  Tensor no_data;
  no_data.dtype = DataType::kInt32;
  REQUIRE(no_data.set_dims({2}).ok());
  Tensor out;
  REQUIRE(m::InterpolateInferMeta(x, &no_data, {}, nullptr, "NCHW", 0, 0, 0, {}, "nearest", false, 1, &out).ok());
  CHECK(dims_of(out) == Dims{1, 1, -1, -1});
  CHECK(error_of(m::InterpolateInferMeta(x, nullptr, {}, nullptr, "NCHW", 0, 0, 0, {}, "nearest", false, 1, &out))
            .find("must be positive") != std::string::npos);
  CHECK(error_of(m::InterpolateInferMeta(f32({2, 2}, {1, 2, 3, 4}), nullptr, {}, nullptr, "NCHW", 0, 2, 2, {},
                                         "nearest", false, 1, &out))
            .find("must be 4-D (3-D for linear interpolation)") != std::string::npos);
  // 3-D (linear_interp): one width, NCW or NWC.
  REQUIRE(m::InterpolateInferMeta(f32({1, 2, 2}, {1, 2, 3, 4}), nullptr, {}, nullptr, "NHWC", 0, 0, 5, {}, "linear",
                                  false, 1, &out)
              .ok());
  CHECK(dims_of(out) == Dims{1, 5, 2});
  CHECK(error_of(m::InterpolateInferMeta(x, nullptr, {}, nullptr, "NCHW", 0, 0, 0, {-1.f}, "nearest", false, 1, &out))
            .find("scale must be positive") != std::string::npos);
}

namespace {

// One convolution through the reference loops, in data_format.
Tensor reference_conv(const char* op, const Tensor& input, const Tensor& filter, const ConvArgs& a) {
  Tensor out = poisoned_like(output_from([&](Tensor* o) {
    return m::ConvInferMeta(input, filter, a.strides, a.paddings, a.padding_algorithm, a.dilations, a.groups,
                            a.data_format, o);
  }));
  Status s = std::string(op) == "depthwise_conv2d"
                 ? k::reference::depthwise_conv2d(cpu(), input, filter, a.strides, a.paddings, a.padding_algorithm,
                                                  a.groups, a.dilations, a.data_format, &out)
                 : k::reference::conv2d(cpu(), input, filter, a.strides, a.paddings, a.padding_algorithm, a.dilations,
                                        a.groups, a.data_format, &out);
  INFO(s.message());
  REQUIRE(s.ok());
  return out;
}

ConvArgs conv_args(Ints strides, Ints paddings, int groups, std::string data_format = "NCHW") {
  ConvArgs a;
  a.strides = strides;
  a.paddings = paddings;
  a.groups = groups;
  a.data_format = data_format;
  return a;
}

}  // namespace

TEST_CASE("conv2d NCHW8c: the reference loops give the NCHW results re-blocked, bit for bit") {
  struct Case {
    const char* name;
    const char* op;
    Dims input, filter;  // NCHW input, OIHW filter
    ConvArgs args;
  };
  const std::vector<Case> cases = {
      {"3x3 stride 1 pad 1", "conv2d", {2, 16, 7, 6}, {16, 16, 3, 3}, conv_args({1, 1}, {1, 1}, 1)},
      {"3x3 stride 2 pad 1, 8 to 24 channels", "conv2d", {1, 8, 9, 9}, {24, 8, 3, 3}, conv_args({2, 2}, {1, 1}, 1)},
      {"1x1", "conv2d", {2, 24, 5, 5}, {16, 24, 1, 1}, conv_args({1, 1}, {0, 0}, 1)},
      {"depthwise (groups = C)", "depthwise_conv2d", {1, 16, 8, 7}, {16, 1, 3, 3}, conv_args({1, 1}, {1, 1}, 16)},
      {"grouped, 8 channels per group", "conv2d", {1, 24, 6, 6}, {24, 8, 3, 3}, conv_args({1, 1}, {1, 1}, 3)},
      // A stem: 3 channels make no block, so the input stays 4-D NCHW (ConvShape::plain_input).
      {"stem 3x3 stride 2, NCHW in", "conv2d", {2, 3, 9, 8}, {8, 3, 3, 3}, conv_args({2, 2}, {1, 1}, 1)},
  };
  uint32_t seed = 800;
  for (const Case& c : cases) {
    INFO(c.name);
    const Tensor input = random_f32(c.input, seed++), filter = random_f32(c.filter, seed++);
    const Tensor want = reference_conv(c.op, input, filter, c.args);
    ConvArgs blocked = c.args;
    blocked.data_format = "NCHW8c";
    const Tensor got = reference_conv(c.op, c.input[1] % 8 == 0 ? to_nchw8c(input) : input, filter, blocked);
    CHECK(same_bits(got, to_nchw8c(want)));
  }
}

TEST_CASE("pool2d NCHW8c: the reference loops and the channel-last loop give the NCHW results re-blocked") {
  auto args = [](IntArray kernel, Ints strides, Ints paddings, std::string type) {
    PoolArgs a;
    a.kernel = kernel;
    a.strides = strides;
    a.paddings = paddings;
    a.type = type;
    return a;
  };
  struct Case {
    const char* name;
    Dims x;  // NCHW
    PoolArgs args;
  };
  std::vector<Case> cases = {
      {"max 3x3 s2 p1", {2, 16, 9, 10}, args({3, 3}, {2, 2}, {1, 1}, "max")},
      {"global avg", {2, 24, 7, 7}, args({1, 1}, {1, 1}, {0, 0}, "avg")},
      {"adaptive avg 7 to 3", {1, 16, 7, 7}, args({3, 3}, {1, 1}, {0, 0}, "avg")},
      {"avg inclusive ceil_mode", {1, 8, 8, 8}, args({3, 3}, {2, 2}, {1, 1}, "avg")},
      {"max SAME", {1, 8, 7, 5}, args({3, 3}, {2, 2}, {0, 0}, "max")},
  };
  cases[1].args.global = true;
  cases[2].args.adaptive = true;
  cases[3].args.exclusive = false;
  cases[3].args.ceil_mode = true;
  cases[4].args.algorithm = "SAME";
  uint32_t seed = 850;
  for (const Case& c : cases) {
    INFO(c.name);
    const Tensor x = random_f32(c.x, seed++);
    const Tensor want = to_nchw8c(pool(x, c.args, true));
    PoolArgs blocked = c.args;
    blocked.data_format = "NCHW8c";
    CHECK(same_bits(pool(to_nchw8c(x), blocked, true), want));
    CHECK(same_bits(pool(to_nchw8c(x), blocked), want));
  }
}

namespace {

// A float32 NCHW tensor in NHWC.
Tensor nhwc(const Tensor& t) {
  const int64_t n = t.dims[0], c = t.dims[1], hw = t.dims[2] * t.dims[3];
  Tensor o = empty(t.dtype, {n, t.dims[2], t.dims[3], c});
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t ch = 0; ch < c; ++ch) {
      for (int64_t p = 0; p < hw; ++p) {
        o.data_as<float>()[(i * hw + p) * c + ch] = t.data_as<const float>()[(i * c + ch) * hw + p];
      }
    }
  }
  return o;
}

}  // namespace

TEST_CASE("batch_norm NCHW8c and NHWC give the NCHW results re-laid out, at inference and in training") {
  const Tensor x = random_f32({2, 16, 3, 5}, 900);
  const Tensor mean = random_f32({16}, 901), scale = random_f32({16}, 902), bias = random_f32({16}, 903);
  Tensor var = random_f32({16}, 904);
  for (int64_t i = 0; i < 16; ++i) var.data_as<float>()[i] += 1.5f;
  for (bool is_test : {true, false}) {
    INFO((is_test ? "inference" : "training"));
    auto run = [&](const Tensor& in, const char* format, Tensor* saved_mean, Tensor* saved_var) {
      Tensor out = poisoned_like(in);
      Status s = k::batch_norm(cpu(), in, mean, var, &scale, &bias, is_test, 0.9f, 1e-5f, format, false, false, &out,
                               nullptr, nullptr, saved_mean, saved_var, nullptr);
      INFO(s.message());
      REQUIRE(s.ok());
      return out;
    };
    Tensor mean_a = empty(DataType::kFloat32, {16}), var_a = empty(DataType::kFloat32, {16});
    Tensor mean_b = empty(DataType::kFloat32, {16}), var_b = empty(DataType::kFloat32, {16});
    const Tensor want = run(x, "NCHW", &mean_a, &var_a);
    CHECK(same_bits(run(to_nchw8c(x), "NCHW8c", &mean_b, &var_b), to_nchw8c(want)));
    CHECK(same_bits(mean_b, mean_a));
    CHECK(same_bits(var_b, var_a));
    // NHWC (a pixel's channels at a time): the NCHW results transposed, bit for bit.
    CHECK(same_bits(run(nhwc(x), "NHWC", &mean_b, &var_b), nhwc(want)));
    CHECK(same_bits(mean_b, mean_a));
    CHECK(same_bits(var_b, var_a));
  }
}

TEST_CASE("NCHW8c infer-meta: 5-D output dims, malformed inputs, and the kernels that do not take it") {
  const Tensor x = random_f32({2, 2, 9, 9, 8}, 950);  // 16 channels
  ConvArgs strided = conv_args({2, 2}, {1, 1}, 1, "NCHW8c");
  CHECK(dims_of(output_from([&](Tensor* o) {
          return m::ConvInferMeta(x, random_f32({24, 16, 3, 3}, 951), strided.strides, strided.paddings, "EXPLICIT",
                                  {1, 1}, 1, "NCHW8c", o);
        })) == Dims{2, 3, 5, 5, 8});
  PoolArgs pool_args;
  pool_args.data_format = "NCHW8c";
  CHECK(dims_of(output_from([&](Tensor* o) {
          return m::Pool2DInferMeta(x, {3, 3}, {2, 2}, {1, 1}, true, true, "NCHW8c", "max", false, false, "EXPLICIT",
                                    o);
        })) == Dims{2, 2, 5, 5, 8});
  const Tensor c16 = random_f32({16}, 952);
  Tensor bn_out, bn_mean;
  REQUIRE(m::BatchNormInferMeta(x, c16, c16, nullptr, nullptr, true, 0.9f, 1e-5f, "NCHW8c", false, false, &bn_out,
                                &bn_mean, nullptr, nullptr, nullptr, nullptr)
              .ok());
  CHECK(dims_of(bn_out) == Dims{2, 2, 9, 9, 8});
  CHECK(dims_of(bn_mean) == Dims{16});

  // A 4-D input is a stem's (NCHW in, NCHW8c out); pooling takes none.
  CHECK(dims_of(output_from([&](Tensor* o) {
          return m::ConvInferMeta(random_f32({2, 3, 9, 9}, 959), random_f32({8, 3, 3, 3}, 960), strided.strides,
                                  strided.paddings, "EXPLICIT", {1, 1}, 1, "NCHW8c", o);
        })) == Dims{2, 1, 5, 5, 8});
  CHECK(pool_error(random_f32({1, 16, 4, 4}, 955), pool_args) ==
        "Pool2DInferMeta: x must be 5-D [N, C/8, H, W, 8] for data_format \"NCHW8c\", got [1, 16, 4, 4]");

  // A last dim of 7, and 12 output channels.
  const Tensor seven = random_f32({1, 2, 4, 4, 7}, 953);
  const std::string want5 = "must be 5-D [N, C/8, H, W, 8] for data_format \"NCHW8c\"";
  CHECK(conv_error(seven, random_f32({8, 14, 3, 3}, 954), conv_args({1, 1}, {1, 1}, 1, "NCHW8c")) ==
        "ConvInferMeta: input " + want5 + ", got [1, 2, 4, 4, 7]");
  CHECK(conv_error(x, random_f32({12, 16, 3, 3}, 957), conv_args({1, 1}, {1, 1}, 1, "NCHW8c"))
            .find("12 output channels, not a multiple of 8") != std::string::npos);
  CHECK(pool_error(seven, pool_args) == "Pool2DInferMeta: x " + want5 + ", got [1, 2, 4, 4, 7]");
  Tensor o;
  CHECK(error_of(m::BatchNormInferMeta(seven, c16, c16, nullptr, nullptr, true, 0.9f, 1e-5f, "NCHW8c", false, false,
                                       &o, nullptr, nullptr, nullptr, nullptr, nullptr)) ==
        "BatchNormInferMeta: x " + want5 + ", got [1, 2, 4, 4, 7]");

  // conv2d_transpose and the other layout-taking kernels say so.
  Tensor out = empty(DataType::kFloat32, {2, 2, 9, 9, 8});
  CHECK(error_of(k::conv2d_transpose(cpu(), x, random_f32({16, 16, 1, 1}, 958), {1, 1}, {0, 0}, {}, {}, "EXPLICIT",
                                     1, {1, 1}, "NCHW8c", &out)) ==
        "conv2d_transpose: data_format \"NCHW8c\" is not supported");
  CHECK(error_of(m::InterpolateInferMeta(x, nullptr, {}, nullptr, "NCHW8c", 0, 4, 4, {}, "nearest", false, 1, &o)) ==
        "InterpolateInferMeta: data_format \"NCHW8c\" is not supported");
}
