// The oneDNN paths of conv2d, depthwise_conv2d and conv2d_transpose against the reference loops, across attribute
// variants, both variants (filter declared constant or not), and thread counts (bitwise). Built only with oneDNN.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "compare_paths.h"
#include "kernel_util.h"
#include "kforge_fused.h"
#include "kforge_kernels.h"
#include "onednn/conv_plan.h"
#include "onednn/onednn.h"
#include "reference.h"

using namespace kforge;
using namespace kforge::test;
namespace k = kforge::kernels;
namespace m = kforge::meta;
namespace util = kforge::kernels::util;

namespace {

using Ints = std::vector<int>;

struct ConvCase {
  const char* name;
  std::vector<int64_t> input;   // in data_format
  std::vector<int64_t> filter;  // [out_c, in_c / groups, kh, kw]
  Ints strides = {1, 1};
  Ints paddings = {0, 0};
  std::string padding_algorithm = "EXPLICIT";
  Ints dilations = {1, 1};
  int groups = 1;
  std::string data_format = "NCHW";
  const char* op = "conv2d";  // or depthwise_conv2d
};

const std::vector<ConvCase>& conv_cases() {
  static const std::vector<ConvCase> cases = {
      {"3x3 pad 1", {1, 3, 17, 19}, {8, 3, 3, 3}, {1, 1}, {1, 1}},
      {"few pixels: plain variant", {1, 16, 4, 4}, {64, 16, 3, 3}, {1, 1}, {1, 1}},
      {"2 chunks of 64, 4 paddings, stride 2", {2, 64, 9, 9}, {128, 64, 3, 3}, {2, 2}, {1, 0, 1, 0}},
      {"SAME, dilation ignored", {3, 8, 10, 12}, {16, 8, 3, 3}, {1, 1}, {0, 0}, "SAME", {2, 2}},
      {"dilation 2", {1, 8, 11, 13}, {16, 8, 3, 3}, {1, 1}, {2, 2}, "EXPLICIT", {2, 2}},
      {"VALID stride 2 5x5 NHWC", {2, 13, 14, 6}, {12, 6, 5, 5}, {2, 2}, {3, 3}, "VALID", {1, 1}, 1, "NHWC"},
      {"groups 4", {1, 16, 8, 8}, {32, 4, 3, 3}, {1, 1}, {1, 1}, "EXPLICIT", {1, 1}, 4},
      {"depthwise stride 2", {1, 32, 15, 15}, {32, 1, 3, 3}, {2, 2}, {1, 1}, "EXPLICIT", {1, 1}, 32, "NCHW",
       "depthwise_conv2d"},
      {"depthwise multiplier 2 NHWC", {2, 9, 7, 8}, {16, 1, 3, 3}, {1, 1}, {1, 1}, "EXPLICIT", {1, 1}, 8, "NHWC",
       "depthwise_conv2d"},
      {"1x1 stride 2 on odd input (bottom padding -1)", {1, 32, 15, 15}, {64, 32, 1, 1}, {2, 2}, {0, 0}},
      {"1x1 stride 2 NHWC", {2, 15, 15, 32}, {64, 32, 1, 1}, {2, 2}, {0, 0}, "EXPLICIT", {1, 1}, 1, "NHWC"},
      {"padding wider than the kernel", {1, 4, 5, 5}, {4, 4, 1, 1}, {1, 1}, {2, 2}},
      {"1x3 kernel, asymmetric strides", {1, 6, 9, 10}, {10, 6, 1, 3}, {2, 1}, {0, 1}},
      {"NHWC, 3 chunks of 64", {1, 6, 6, 32}, {192, 32, 3, 3}, {1, 1}, {1, 1}, "EXPLICIT", {1, 1}, 1, "NHWC"},
      {"batch 5, chunks of 48", {5, 16, 6, 6}, {96, 16, 3, 3}, {1, 1}, {1, 1}},
      {"plain variant, 4 images per task, 2 chunks", {4, 32, 3, 3}, {128, 32, 3, 3}, {1, 1}, {1, 1}},
      {"7x7 stride 2 stem", {1, 3, 32, 32}, {64, 3, 7, 7}, {2, 2}, {3, 3}},
      {"512 channels at 2 x 2", {1, 512, 2, 2}, {512, 512, 3, 3}, {1, 1}, {1, 1}},
      {"1x1 NHWC: rows of pixels as tasks", {1, 24, 24, 64}, {256, 64, 1, 1}, {1, 1}, {0, 0}, "EXPLICIT", {1, 1}, 1,
       "NHWC"},
      // NHWC k x k of one image: whole, or in output-channel chunks copied into place.
      {"3x3 NHWC, 64 channels whole", {1, 20, 20, 64}, {64, 64, 3, 3}, {1, 1}, {1, 1}, "EXPLICIT", {1, 1}, 1, "NHWC"},
      {"3x3 stride 2 NHWC, 4 paddings, 2 chunks of 48", {1, 37, 29, 48}, {96, 48, 3, 3}, {2, 2}, {1, 0, 1, 0},
       "EXPLICIT", {1, 1}, 1, "NHWC"},
      {"5x5 dilation 2 NHWC", {1, 30, 18, 32}, {64, 32, 5, 5}, {1, 1}, {4, 4}, "EXPLICIT", {2, 2}, 1, "NHWC"},
      // Long reductions of large outputs, declared: primitive runs over chunks of 16 input channels (conv_plan.cc's
      // choose_ic_chunk), each input chunk copied dense (NHWC) or reordered from the caller's NCHW.
      {"3x3 NHWC 64 -> 32 at 64 x 64: 4 reduction chunks", {1, 64, 64, 64}, {32, 64, 3, 3}, {1, 1}, {1, 1}, "EXPLICIT",
       {1, 1}, 1, "NHWC"},
      {"3x3 NCHW 48 -> 48 at 64 x 64, 2 images: 3 reduction chunks", {2, 48, 64, 64}, {48, 48, 3, 3}, {1, 1}, {1, 1}},
      {"1x1 NHWC, 2 images of 4 x 4: all 8 rows in one task", {2, 4, 4, 64}, {128, 64, 1, 1}, {1, 1}, {0, 0},
       "EXPLICIT", {1, 1}, 1, "NHWC"},
      // A long reduction of a 1 x 1 NHWC convolution over rows of pixels, declared: 2 chunks of 256 channels.
      {"1x1 NHWC 512 -> 256 at 20 x 20: rows in 2 reduction chunks", {1, 20, 20, 512}, {256, 512, 1, 1}, {1, 1},
       {0, 0}, "EXPLICIT", {1, 1}, 1, "NHWC"},
  };
  return cases;
}

Tensor conv_out(const ConvCase& c, const Tensor& input, const Tensor& filter) {
  return output_from([&](Tensor* o) {
    return m::ConvInferMeta(input, filter, c.strides, c.paddings, c.padding_algorithm, c.dilations, c.groups,
                            c.data_format, o);
  });
}

// The public kernel (oneDNN for float32) or the reference loops.
Tensor run_conv(const ConvCase& c, const Tensor& input, const Tensor& filter, bool reference) {
  Tensor out = poisoned_like(conv_out(c, input, filter));
  const bool depthwise = std::string(c.op) == "depthwise_conv2d";
  Status s;
  if (reference) {
    s = depthwise ? k::reference::depthwise_conv2d(cpu(), input, filter, c.strides, c.paddings, c.padding_algorithm,
                                                   c.groups, c.dilations, c.data_format, &out)
                  : k::reference::conv2d(cpu(), input, filter, c.strides, c.paddings, c.padding_algorithm,
                                         c.dilations, c.groups, c.data_format, &out);
  } else {
    s = depthwise ? k::depthwise_conv2d(cpu(), input, filter, c.strides, c.paddings, c.padding_algorithm, c.groups,
                                        c.dilations, c.data_format, &out)
                  : k::conv2d(cpu(), input, filter, c.strides, c.paddings, c.padding_algorithm, c.dilations, c.groups,
                              c.data_format, &out);
  }
  INFO(s.message());
  REQUIRE(s.ok());
  return out;
}

// Runs the oneDNN path directly, so that a case it would hand back to the loops fails the test instead.
Tensor run_onednn(const ConvCase& c, const Tensor& input, const Tensor& filter) {
  util::ConvShape shape;
  REQUIRE(util::conv_shape(c.op, input, filter, c.strides, c.paddings, c.padding_algorithm, c.dilations, c.groups,
                           c.data_format, &shape)
              .ok());
  Tensor out = poisoned_like(conv_out(c, input, filter));
  bool handled = false;
  Status s = k::onednn::conv2d(c.op, input, filter, shape, k::onednn::ConvEpilogue{}, &out, &handled);
  INFO(s.message());
  REQUIRE(s.ok());
  REQUIRE(handled);
  return out;
}

int64_t conv_terms(const ConvCase& c) { return c.filter[1] * c.filter[2] * c.filter[3] + 1; }

}  // namespace

TEST_CASE("oneDNN conv2d matches the reference loops within the summation-order bound") {
  REQUIRE(k::has_onednn());
  uint32_t seed = 1;
  for (const ConvCase& c : conv_cases()) {
    for (bool constant : {false, true}) {
      INFO(c.name << (constant ? ", filter declared constant" : ""));
      const Tensor input = random_f32(c.input, seed++), filter = random_f32(c.filter, seed++);
      ConstantScope declared(filter, constant);
      const Tensor want = run_conv(c, input, filter, true);
      const Tensor bound = run_conv(c, abs_of(input), abs_of(filter), true);
      const Tensor got = run_onednn(c, input, filter);
      INFO("implementation " << k::onednn::last_conv_plan().impl << (k::onednn::last_conv_plan().blocked ? " (blocked)"
                                                                                                       : " (plain)"));
      check_within_bound(got, want, bound, conv_terms(c));
      // The public kernel takes the same path: the same bits.
      CHECK(same_bits(run_conv(c, input, filter, false), got));
    }
  }
}

TEST_CASE("oneDNN conv2d: variants, chunks and image groups are what the plan says") {
  struct Expect {
    size_t case_index;
    bool constant;
    bool blocked;
  };
  // 3 x 3 with 16 output pixels: plain unless the filter is declared. 1 x 1 with 64 pixels: plain, a GEMM on the
  // caller's layout, declared or not. Depthwise and NHWC: blocked even when the plain one would read less.
  for (Expect e : {Expect{1, false, false}, Expect{1, true, true}, Expect{9, false, false}, Expect{9, true, false},
                   Expect{7, false, true}, Expect{10, false, true}}) {
    const ConvCase& c = conv_cases()[e.case_index];
    INFO(c.name << (e.constant ? ", filter declared constant" : ""));
    const Tensor input = random_f32(c.input, 7), filter = random_f32(c.filter, 8);
    ConstantScope declared(filter, e.constant);
    run_onednn(c, input, filter);
    CHECK(k::onednn::last_conv_plan().blocked == e.blocked);
  }
  // 2 images of 4 x 4 outputs, 128 channels: one task per (both images, 64 channels).
  const ConvCase& chunked = conv_cases()[2];
  run_onednn(chunked, random_f32(chunked.input, 9), random_f32(chunked.filter, 10));
  CHECK(k::onednn::last_conv_plan().chunks == 2);
  CHECK(k::onednn::last_conv_plan().group_images == 2);
  // An NHWC 1 x 1 convolution (stride 1, no padding) splits its 24 rows of pixels, never its 256 output channels
  // (an NHWC chunk would be copied into place): 8 rows (192 pixels, 3.1 M multiply-adds) per task.
  const ConvCase& rows = conv_cases()[18];
  run_onednn(rows, random_f32(rows.input, 13), random_f32(rows.filter, 14));
  CHECK(k::onednn::last_conv_plan().chunks == 1);
  CHECK(k::onednn::last_conv_plan().group_images == 8);
  // Rows that would all go to one task (here 8 rows of 4 pixels, 0.26 M multiply-adds) run as one row of all 32
  // pixels, one image: oneDNN's 1 x 1 kernel reads the filter once per image.
  const ConvCase& one_task = conv_cases()[24];
  run_onednn(one_task, random_f32(one_task.input, 17), random_f32(one_task.filter, 18));
  CHECK(k::onednn::last_conv_plan().chunks == 1);
  CHECK(k::onednn::last_conv_plan().group_images == 1);
  // A small convolution stays whole: 8 output channels, far below a chunk's worth of work.
  run_onednn(conv_cases()[0], random_f32(conv_cases()[0].input, 11), random_f32(conv_cases()[0].filter, 12));
  CHECK(k::onednn::last_conv_plan().chunks == 1);
  CHECK(k::onednn::last_conv_plan().ic_chunks == 1);
  // Reduction chunks where the filter is declared (prepared once), else one run; none below 20 x 20 pixels.
  for (auto [index, ic_chunks] : {std::pair<size_t, int64_t>{22, 4}, {23, 3}, {19, 4}, {20, 1}, {25, 2}}) {
    const ConvCase& c = conv_cases()[index];
    for (bool constant : {false, true}) {
      INFO(c.name << (constant ? ", filter declared constant" : ""));
      const Tensor input = random_f32(c.input, 15), filter = random_f32(c.filter, 16);
      ConstantScope declared(filter, constant);
      run_onednn(c, input, filter);
      CHECK(k::onednn::last_conv_plan().ic_chunks == (constant ? ic_chunks : 1));
    }
  }
}

TEST_CASE("oneDNN conv2d: the reduction-chunk rule") {
  // 3 x 3, 64 -> 64 at 80 x 80, blocked NHWC, filter kept: chunks of 16 channels (144 products each).
  k::onednn::ConvGeometry g;
  g.channel_last = true;
  g.ic = 64, g.oc = 64, g.chunk_oc = 64, g.kh = 3, g.kw = 3, g.ih = g.iw = g.oh = g.ow = 80;
  CHECK(k::onednn::choose_ic_chunk(g, true) == 16);
  CHECK(k::onednn::choose_ic_chunk(g, false) == 0);  // a filter prepared per call: one run
  auto with = [&](auto change) {
    k::onednn::ConvGeometry h = g;
    change(h);
    return k::onednn::choose_ic_chunk(h, true);
  };
  CHECK(with([](auto& h) { h.oh = h.ow = 19; }) == 0);          // below 20 x 20 output pixels
  CHECK(with([](auto& h) { h.oh = 20, h.ow = 20; }) == 16);     // from 20 x 20 on (RT-DETR's encoder at 320²)
  CHECK(with([](auto& h) { h.oc = h.chunk_oc = 24; }) == 0);    // 9 x 24 uses per copied element: copies too dear
  CHECK(with([](auto& h) { h.ic = 24; }) == 0);                 // 216 products: short enough
  CHECK(with([](auto& h) { h.ic = 32; }) == 16);                // 288: two chunks of 144
  CHECK(with([](auto& h) { h.ic = 40; }) == 0);                 // no multiple of 16 divides 40
  CHECK(with([](auto& h) { h.ic = 256, h.kh = h.kw = 9; }) == 16);  // 9 x 9: the smallest chunk, 1296 products
  CHECK(with([](auto& h) { h.ic = 512, h.oc = h.chunk_oc = 256, h.kh = h.kw = 1; }) == 256);  // 1 x 1: 256 channels
  CHECK(with([](auto& h) { h.groups = 2; }) == 0);
  CHECK(with([](auto& h) { h.blocked = false; }) == 0);
  CHECK(with([](auto& h) { h.nchw8c = true; }) == 0);
  CHECK(with([](auto& h) { h.kind = k::onednn::ConvKind::kDeconv; }) == 0);
  CHECK(with([](auto& h) { h.batch_norm_post_ops = true; }) == 0);  // the batch norm must follow the whole sum
  // An activation before the residual must follow the whole sum too; after it, the last chunk applies it.
  CHECK(with([](auto& h) { h.residual = true, h.activation = util::Activation::kRelu; }) == 0);
  CHECK(with([](auto& h) {
          h.residual = true, h.activation = util::Activation::kRelu, h.activation_after_residual = true;
        }) == 16);
  CHECK(with([](auto& h) { h.ih = h.oh = 1, h.kh = h.kw = 1, h.ic = 512, h.iw = h.ow = 8192; }) == 0);  // 64 uses
  // A 1 x 1 NHWC convolution over rows of pixels (conv.cc's conv2d): the pixels of one of the caller's images, not of
  // a row (PP-DocLayout-M's 512 -> 512 layers at 40 x 40: 1.7x-2.0x Paddle's local error in one accumulator).
  auto rows = [&](int64_t ow, int64_t image_pixels) {
    k::onednn::ConvGeometry h = g;
    h.ih = h.oh = 1, h.kh = h.kw = 1, h.ic = 512, h.oc = h.chunk_oc = 512, h.iw = h.ow = ow;
    h.image_pixels = image_pixels;
    return k::onednn::choose_ic_chunk(h, true);
  };
  CHECK(rows(40, 40 * 40) == 256);
  CHECK(rows(1600, 40 * 40) == 256);  // the rows of one task made one row
  CHECK(rows(19, 19 * 19) == 0);      // below 20 x 20 output pixels per image, whatever the batch
}

TEST_CASE("oneDNN conv2d: a reduction in chunks over row bands gives each row the bits of the whole") {
  // 3 x 3 NHWC 64 -> 64 at 80 x 80, declared: 4 chunks of 16 input channels, 2 tasks of 32 output channels whose
  // 200 KB outputs run in bands of rows. A window of output rows computed alone, from the input rows it reads with
  // the padding of the whole where it has one (too few rows for bands), has the bits of the same rows of the whole.
  const int64_t side = 80, channels = 64;
  const ConvCase whole{"whole", {1, side, side, channels}, {channels, channels, 3, 3}, {1, 1}, {1, 1}, "EXPLICIT",
                       {1, 1}, 1, "NHWC"};
  const Tensor input = random_f32(whole.input, 31), filter = random_f32(whole.filter, 32);
  ConstantScope declared(filter, true);
  for (int threads : {1, 2}) {
    ThreadsScope scope(threads);
    const Tensor all = run_onednn(whole, input, filter);
    REQUIRE(k::onednn::last_conv_plan().ic_chunks == 4);
    if (k::onednn::last_conv_plan().bands == 0) {  // AVX2: oneDNN's primitives do not read and write NHWC rows
      WARN("no row bands on this CPU (they need the NHWC primitives of AVX-512's brgconv): nothing to compare");
      return;
    }
    CHECK(k::onednn::last_conv_plan().bands > 1);
    const int64_t pixel_row = side * channels;  // floats per row, input and output alike
    for (int64_t first : {0, 20, 37, 70}) {
      const int64_t rows = 10, in0 = std::max<int64_t>(first - 1, 0), in1 = std::min(first + rows + 1, side);
      INFO("output rows " << first << " to " << first + rows << (threads == 2 ? ", 2 threads" : ""));
      const ConvCase part{"window", {1, in1 - in0, side, channels}, whole.filter, {1, 1},
                          {static_cast<int>(in0 - (first - 1)), static_cast<int>(first + rows + 1 - in1), 1, 1},
                          "EXPLICIT", {1, 1}, 1, "NHWC"};
      const float* from = input.data_as<const float>() + in0 * pixel_row;
      const Tensor window = f32(part.input, std::vector<float>(from, from + (in1 - in0) * pixel_row));
      const Tensor got = run_onednn(part, window, filter);
      REQUIRE(k::onednn::last_conv_plan().ic_chunks == 4);
      CHECK(k::onednn::last_conv_plan().bands == 0);
      const float* want = all.data_as<const float>() + first * pixel_row;
      CHECK(std::memcmp(got.data, want, static_cast<size_t>(rows * pixel_row) * sizeof(float)) == 0);
    }
  }
}

TEST_CASE("oneDNN conv2d builds its plan once per shape and attribute set") {
  const ConvCase& c = conv_cases()[0];
  const Tensor input = random_f32(c.input, 11), filter = random_f32(c.filter, 12);
  const Tensor first = run_conv(c, input, filter, false);
  const uint64_t built = k::onednn::plans_built();
  for (int i = 0; i < 3; ++i) CHECK(same_bits(run_conv(c, input, filter, false), first));
  CHECK(k::onednn::plans_built() == built);
  ConvCase other = c;
  other.strides = {2, 2};
  run_conv(other, input, filter, false);
  CHECK(k::onednn::plans_built() == built + 1);
}

TEST_CASE("oneDNN conv2d: a repeated call from one call site resolves nothing, and sees a re-declared filter") {
  // A call site is its filter and output addresses: the state it keeps (plan, prepared filter, oneDNN arguments)
  // serves every later call with the same shapes, until a constant is declared or released.
  for (const ConvCase& c : {conv_cases()[13], conv_cases()[18], conv_cases()[1], conv_cases()[21]}) {
    INFO(c.name);
    const Tensor input = random_f32(c.input, 41);
    Tensor filter = random_f32(c.filter, 42);
    k::declare_constant(filter.data, filter.bytes());
    Tensor out = poisoned_like(conv_out(c, input, filter));
    auto call = [&] {
      Status s = k::conv2d(cpu(), input, filter, c.strides, c.paddings, c.padding_algorithm, c.dilations, c.groups,
                           c.data_format, &out);
      INFO(s.message());
      REQUIRE(s.ok());
    };
    call();
    const Tensor first = run_conv(c, input, filter, false);
    CHECK(same_bits(out, first));
    const uint64_t sites = k::onednn::sites_filled(), plans = k::onednn::plans_built();
    for (int i = 0; i < 3; ++i) {
      call();
      CHECK(same_bits(out, first));
    }
    CHECK(k::onednn::sites_filled() == sites);
    CHECK(k::onednn::plans_built() == plans);
    // New values at the same address, declared again: the same call site reads them.
    k::release_constant(filter.data);
    const Tensor fresh = random_f32(c.filter, 43);
    std::memcpy(filter.data, fresh.data, filter.bytes());
    k::declare_constant(filter.data, filter.bytes());
    call();
    check_within_bound(out, run_conv(c, input, filter, true), run_conv(c, abs_of(input), abs_of(filter), true),
                       conv_terms(c));
    k::release_constant(filter.data);
    // Not declared: every call reads the filter as it is now.
    const Tensor third = random_f32(c.filter, 44);
    std::memcpy(filter.data, third.data, filter.bytes());
    call();
    check_within_bound(out, run_conv(c, input, filter, true), run_conv(c, abs_of(input), abs_of(filter), true),
                       conv_terms(c));
  }
}

TEST_CASE("oneDNN conv2d: a reordered constant filter is never used after its memory changes") {
  const ConvCase& c = conv_cases()[6];  // groups 4
  const Tensor input = random_f32(c.input, 13);
  Tensor filter = random_f32(c.filter, 14);
  k::declare_constant(filter.data, filter.bytes());
  run_conv(c, input, filter, false);
  CHECK(k::onednn::last_conv_plan().blocked);
  // New values at the same address: release, write, declare again.
  k::release_constant(filter.data);
  const Tensor fresh = random_f32(c.filter, 15);
  std::memcpy(filter.data, fresh.data, filter.bytes());
  k::declare_constant(filter.data, filter.bytes());
  check_within_bound(run_conv(c, input, filter, false), run_conv(c, input, filter, true),
                     run_conv(c, abs_of(input), abs_of(filter), true), conv_terms(c));
  k::release_constant(filter.data);
  // Not declared: every call reads the filter as it is now.
  const Tensor third = random_f32(c.filter, 16);
  std::memcpy(filter.data, third.data, filter.bytes());
  check_within_bound(run_conv(c, input, filter, false), run_conv(c, input, filter, true),
                     run_conv(c, abs_of(input), abs_of(filter), true), conv_terms(c));
  // A filter inside a larger declared block (all of a model's parameters in one buffer) is found too.
  Tensor block = empty(DataType::kFloat32, {2 * filter.numel()});
  Tensor inside = filter;
  inside.holder.reset();
  inside.data = block.data_as<float>() + filter.numel();
  std::memcpy(inside.data, third.data, filter.bytes());
  k::declare_constant(block.data, block.bytes());
  CHECK(same_bits(run_conv(c, input, inside, false), run_conv(c, input, filter, false)));
  CHECK(k::onednn::last_conv_plan().blocked);
  k::release_constant(block.data);
}

TEST_CASE("oneDNN conv2d results are bitwise identical for every thread count") {
  // Shapes where oneDNN's own threading changes the bits (512 channels at 2 x 2, 256 at 14 x 14), with chunks,
  // image groups and both variants.
  const std::vector<ConvCase> cases = {
      conv_cases()[17],
      {"256 at 14 x 14", {1, 256, 14, 14}, {256, 256, 3, 3}, {1, 1}, {1, 1}},
      conv_cases()[2],
      conv_cases()[15],
      conv_cases()[13],
      conv_cases()[7],
      conv_cases()[19],
      conv_cases()[20],
      conv_cases()[22],
      conv_cases()[23],
  };
  for (const ConvCase& c : cases) {
    for (bool constant : {false, true}) {
      INFO(c.name << (constant ? ", filter declared constant" : ""));
      const Tensor input = random_f32(c.input, 21), filter = random_f32(c.filter, 22);
      ConstantScope declared(filter, constant);
      const Tensor one = run_conv(c, input, filter, false);
      for (int threads : {2, 3, 4, 7}) {
        INFO(threads << " threads");
        ThreadsScope scope(threads);
        CHECK(same_bits(run_conv(c, input, filter, false), one));
      }
    }
  }
}

TEST_CASE("oneDNN conv2d may be called from several threads at once") {
  // Four callers share one plan and one declared filter; each asks for two threads, so one of them gets the pool
  // at a time and the others run their tasks themselves. Every result must equal the single-threaded one.
  const ConvCase& c = conv_cases()[2];
  const Tensor input = random_f32(c.input, 31), filter = random_f32(c.filter, 32);
  ConstantScope declared(filter, true);
  const Tensor want = run_conv(c, input, filter, false);
  ThreadsScope threads(2);
  constexpr int kCallers = 4, kCalls = 20;
  std::vector<Tensor> outs;
  for (int i = 0; i < kCallers; ++i) outs.push_back(poisoned_like(want));
  std::vector<int> good(kCallers, 0);
  std::vector<std::thread> callers;
  for (int i = 0; i < kCallers; ++i) {
    callers.emplace_back([&, i] {  // no Catch2 assertion in these threads: they only count
      for (int call = 0; call < kCalls; ++call) {
        Status s = k::conv2d(cpu(), input, filter, c.strides, c.paddings, c.padding_algorithm, c.dilations, c.groups,
                             c.data_format, &outs[static_cast<size_t>(i)]);
        if (s.ok() && same_bits(outs[static_cast<size_t>(i)], want)) ++good[static_cast<size_t>(i)];
      }
    });
  }
  for (std::thread& t : callers) t.join();
  for (int i = 0; i < kCallers; ++i) CHECK(good[static_cast<size_t>(i)] == kCalls);
}

namespace {

struct TransposeCase {
  const char* name;
  std::vector<int64_t> x;       // in data_format
  std::vector<int64_t> filter;  // [in_c, out_c / groups, kh, kw]
  Ints strides = {1, 1};
  Ints paddings = {0, 0};
  Ints output_padding = {};
  std::vector<int64_t> output_size = {};
  std::string padding_algorithm = "EXPLICIT";
  int groups = 1;
  Ints dilations = {1, 1};
  std::string data_format = "NCHW";
};

Tensor run_transpose(const TransposeCase& c, const Tensor& x, const Tensor& filter, bool reference) {
  const IntArray output_size(c.output_size);
  Tensor out = poisoned_like(output_from([&](Tensor* o) {
    return m::Conv2dTransposeInferMeta(x, filter, c.strides, c.paddings, c.output_padding, output_size,
                                       c.padding_algorithm, c.groups, c.dilations, c.data_format, o);
  }));
  Status s = reference ? k::reference::conv2d_transpose(cpu(), x, filter, c.strides, c.paddings, c.output_padding,
                                                        output_size, c.padding_algorithm, c.groups, c.dilations,
                                                        c.data_format, &out)
                       : k::conv2d_transpose(cpu(), x, filter, c.strides, c.paddings, c.output_padding, output_size,
                                             c.padding_algorithm, c.groups, c.dilations, c.data_format, &out);
  INFO(s.message());
  REQUIRE(s.ok());
  return out;
}

}  // namespace

TEST_CASE("oneDNN conv2d_transpose matches the reference loops within the summation-order bound") {
  const std::vector<TransposeCase> cases = {
      {"stride 2 pad 1 output_padding 1", {1, 8, 5, 5}, {8, 4, 3, 3}, {2, 2}, {1, 1}, {1, 1}},
      {"output_size", {2, 6, 4, 5}, {6, 3, 4, 4}, {2, 2}, {1, 1}, {}, {9, 11}},
      {"groups 2, dilation 2, NHWC", {1, 6, 7, 4}, {4, 3, 3, 3}, {1, 1}, {1, 1}, {}, {}, "EXPLICIT", 2, {2, 2},
       "NHWC"},
      {"SAME stride 2", {1, 4, 6, 6}, {4, 5, 3, 3}, {2, 2}, {0, 0}, {}, {}, "SAME"},
      {"VALID 4 paddings ignored", {3, 5, 3, 4}, {5, 2, 2, 3}, {1, 2}, {1, 0, 2, 1}, {}, {}, "VALID"},
      {"4 paddings", {1, 3, 6, 6}, {3, 7, 3, 3}, {2, 1}, {0, 1, 2, 0}},
  };
  uint32_t seed = 100;
  for (const TransposeCase& c : cases) {
    for (bool constant : {false, true}) {
      INFO(c.name << (constant ? ", filter declared constant" : ""));
      const Tensor x = random_f32(c.x, seed++), filter = random_f32(c.filter, seed++);
      ConstantScope declared(filter, constant);
      util::ConvShape shape;
      REQUIRE(util::conv_transpose_shape("conv2d_transpose", x, filter, c.strides, c.paddings, c.output_padding,
                                         IntArray(c.output_size), c.padding_algorithm, c.groups, c.dilations,
                                         c.data_format, &shape)
                  .ok());
      Tensor got = poisoned_like(run_transpose(c, x, filter, true));
      bool handled = false;
      Status s = k::onednn::conv2d_transpose(x, filter, shape, &got, &handled);
      INFO(s.message());
      REQUIRE(s.ok());
      REQUIRE(handled);
      // Each output sums at most in_c / groups * kh * kw products.
      const int64_t terms = c.x[c.data_format == "NHWC" ? 3 : 1] / c.groups * c.filter[2] * c.filter[3] + 1;
      check_within_bound(got, run_transpose(c, x, filter, true), run_transpose(c, abs_of(x), abs_of(filter), true),
                         terms);
      CHECK(same_bits(run_transpose(c, x, filter, false), got));
      ThreadsScope threads(3);
      CHECK(same_bits(run_transpose(c, x, filter, false), got));
    }
  }
}

TEST_CASE("oneDNN conv2d NCHW8c matches the NCHW reference loops re-blocked, and builds its plan once") {
  const std::vector<ConvCase> cases = {
      {"3x3 stride 1 pad 1", {2, 16, 9, 8}, {32, 16, 3, 3}, {1, 1}, {1, 1}},
      {"3x3 stride 2 pad 1", {1, 24, 11, 11}, {16, 24, 3, 3}, {2, 2}, {1, 1}},
      {"1x1", {2, 32, 7, 7}, {64, 32, 1, 1}, {1, 1}, {0, 0}},
      {"depthwise (groups = C)", {1, 32, 10, 9}, {32, 1, 3, 3}, {1, 1}, {1, 1}, "EXPLICIT", {1, 1}, 32, "NCHW",
       "depthwise_conv2d"},
      {"grouped, 8 channels per group", {1, 32, 8, 8}, {32, 8, 3, 3}, {1, 1}, {1, 1}, "EXPLICIT", {1, 1}, 4},
      {"2 chunks of 64 in one image", {1, 64, 12, 12}, {128, 64, 3, 3}, {1, 1}, {1, 1}},
      // A stem: 3 channels make no block, so the input stays 4-D NCHW (ConvShape::plain_input).
      {"stem 7x7 stride 2, NCHW in", {2, 3, 20, 20}, {16, 3, 7, 7}, {2, 2}, {3, 3}},
  };
  uint32_t seed = 500;
  for (const ConvCase& c : cases) {
    for (bool constant : {false, true}) {
      INFO(c.name << (constant ? ", filter declared constant" : ""));
      const Tensor input = random_f32(c.input, seed++), filter = random_f32(c.filter, seed++);
      ConstantScope declared(filter, constant);
      const Tensor want = run_conv(c, input, filter, true);
      const Tensor bound = run_conv(c, abs_of(input), abs_of(filter), true);
      ConvCase blocked = c;
      blocked.data_format = "NCHW8c";
      const Tensor blocked_input = c.input[1] % 8 == 0 ? to_nchw8c(input) : input;
      const Tensor got = run_onednn(blocked, blocked_input, filter);
      INFO("implementation " << k::onednn::last_conv_plan().impl);
      check_within_bound(from_nchw8c(got), want, bound, conv_terms(c));
      const uint64_t built = k::onednn::plans_built();
      CHECK(same_bits(run_conv(blocked, blocked_input, filter, false), got));  // the public kernel: same path
      CHECK(k::onednn::plans_built() == built);
    }
  }
}

TEST_CASE("oneDNN conv2d_fused: a 1 x 1 NHWC convolution over rows in reduction chunks, dense and into a slice") {
  // 512 -> 256 at 20 x 20 with a batch norm folded into the kept filter and hardswish (PP-DocLayout-M's 1 x 1
  // groups): 2 chunks of 256 input channels. Written into channels [5, 261) of a 270-channel tensor (a concat in
  // place), the same bits as the dense output, the other channels untouched.
  const int64_t side = 20, ic = 512, oc = 256, wide_c = oc + 14;
  const Tensor input = random_f32({1, side, side, ic}, 41), filter = random_f32({oc, ic, 1, 1}, 42);
  Tensor mean = random_f32({oc}, 43), variance = random_f32({oc}, 44), scale = random_f32({oc}, 45),
         shift = random_f32({oc}, 46);
  for (int64_t i = 0; i < oc; ++i) variance.data_as<float>()[i] = 1.5f + variance.data_as<float>()[i];
  ConstantScope f(filter, true), a(mean, true), b(variance, true), c(scale, true), d(shift, true);
  auto run = [&](Tensor* out, int pixel_stride) {
    const Status s = k::conv2d_fused(cpu(), input, filter, nullptr, &mean, &variance, &scale, &shift, nullptr, {1, 1},
                                     {0, 0}, "EXPLICIT", {1, 1}, 1, "NHWC", 1e-5f, "hardswish", 0.f, 0.f, false,
                                     pixel_stride, out);
    INFO(s.message());
    REQUIRE(s.ok());
  };
  Tensor dense = poisoned_like(random_f32({1, side, side, oc}, 47));
  run(&dense, 0);
  CHECK(k::onednn::last_conv_plan().ic_chunks == 2);
  Tensor wide = poisoned_like(random_f32({1, side, side, wide_c}, 48));
  Tensor slice = dense;
  slice.holder.reset();
  slice.data = wide.data_as<float>() + 5;
  run(&slice, static_cast<int>(wide_c));
  CHECK(k::onednn::last_conv_plan().ic_chunks == 2);
  check_slice_write(wide, dense, side * side, wide_c, oc, 5);
}
