// The kernels' paths for activations of few channels or many, against the index formulas, bit for bit:
// nearest_interp (each column's source once, repeated rows copied whole) and the NHWC batch norm over blocks of
// pixels (issue 36's detection head: 4 channels).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "tensor_builder.h"

using namespace kforge;
using namespace kforge::test;
namespace k = kforge::kernels;
namespace m = kforge::meta;

namespace {

// x resized to out_h x out_w (no scale, no align_corners) in `format`.
Tensor nearest_to(const Tensor& x, int out_h, int out_w, const std::string& format) {
  Tensor out = output_from([&](Tensor* o) {
    return m::InterpolateInferMeta(x, nullptr, {}, nullptr, format, 0, out_h, out_w, {}, "nearest", false, 1, o);
  });
  Status s = k::nearest_interp(cpu(), x, nullptr, {}, nullptr, format, 0, out_h, out_w, {}, "nearest", false, 1, &out);
  INFO(s.message());
  REQUIRE(s.ok());
  return out;
}

}  // namespace

TEST_CASE("nearest_interp of several channels, NCHW and NHWC, against the index formula") {
  // 2x (repeated rows copied), 3x and a shrink; 5 channels.
  const int64_t c = 5, h = 3, w = 4;
  for (const std::string format : {"NCHW", "NHWC"}) {
    const bool last = format == "NHWC";
    const std::vector<int64_t> dims = last ? std::vector<int64_t>{2, h, w, c} : std::vector<int64_t>{2, c, h, w};
    Tensor x = empty(DataType::kFloat32, dims);
    for (int64_t i = 0; i < x.numel(); ++i) x.data_as<float>()[i] = static_cast<float>(i);
    for (const auto& size : std::vector<std::pair<int, int>>{{6, 8}, {9, 12}, {2, 3}}) {
      INFO(format << " " << size.first << "x" << size.second);
      Tensor out = nearest_to(x, size.first, size.second, format);
      int64_t mismatches = 0;
      for (int64_t b = 0; b < 2; ++b)
        for (int64_t ch = 0; ch < c; ++ch)
          for (int64_t oh = 0; oh < size.first; ++oh)
            for (int64_t ow = 0; ow < size.second; ++ow) {
              const int64_t ih = std::min<int64_t>(h - 1, static_cast<int64_t>(static_cast<float>(h) / size.first * oh));
              const int64_t iw = std::min<int64_t>(w - 1, static_cast<int64_t>(static_cast<float>(w) / size.second * ow));
              const int64_t from = last ? ((b * h + ih) * w + iw) * c + ch : ((b * c + ch) * h + ih) * w + iw;
              const int64_t to = last ? ((b * size.first + oh) * size.second + ow) * c + ch
                                      : ((b * c + ch) * size.first + oh) * size.second + ow;
              if (out.data_as<float>()[to] != x.data_as<float>()[from]) ++mismatches;
            }
      CHECK(mismatches == 0);
    }
  }
}

TEST_CASE("batch_norm over NHWC with few channels, in blocks of pixels and a tail") {
  // NHWC with 3 channels over 47 pixels: blocks of 21 pixels with the scale and shift repeated, then a tail of 5;
  // each element's x * s + t as the pixel loop computes it.
  const int64_t c = 3, pixels = 47;
  Tensor xb = empty(DataType::kFloat32, {1, 1, pixels, c}), ob = empty(DataType::kFloat32, {1, 1, pixels, c});
  for (int64_t i = 0; i < xb.numel(); ++i) xb.data_as<float>()[i] = std::cos(0.7f * static_cast<float>(i));
  Tensor m3 = f32({3}, {0.5f, -1, 2}), v3 = f32({3}, {1, 3, 0.25f}), s3 = f32({3}, {1.5f, -2, 1}),
         b3 = f32({3}, {0, 0.5f, -1});
  REQUIRE(k::batch_norm(cpu(), xb, m3, v3, &s3, &b3, true, 0.9f, 1e-5f, "NHWC", false, false, &ob, nullptr,
                        nullptr, nullptr, nullptr, nullptr)
              .ok());
  int64_t mismatches = 0;
  for (int64_t i = 0; i < xb.numel(); ++i) {
    const int64_t ch = i % c;
    const float inv = 1.f / std::sqrt(v3.data_as<float>()[ch] + 1e-5f);
    const float scale_ch = s3.data_as<float>()[ch] * inv;
    const float shift_ch = b3.data_as<float>()[ch] - m3.data_as<float>()[ch] * scale_ch;
    if (ob.data_as<float>()[i] != xb.data_as<float>()[i] * scale_ch + shift_ch) ++mismatches;
  }
  CHECK(mismatches == 0);
}
