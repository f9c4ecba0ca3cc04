// conv2d_fused (kforge_fused.h): its reference loops against the separate kernels (bit for bit), and, built with
// oneDNN, the oneDNN path (batch norm folded into the filter, the rest as post-ops) against the reference loops.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "compare_paths.h"
#include "activation.h"
#include "kernel_util.h"
#include "kforge_fused.h"
#include "kforge_kernels.h"
#include "reference.h"
#if KFORGE_KERNELS_ONEDNN
#include "onednn/onednn.h"
#endif

using namespace kforge;
using namespace kforge::test;
namespace k = kforge::kernels;
namespace m = kforge::meta;
namespace util = kforge::kernels::util;

namespace {

using Ints = std::vector<int>;

struct FusedCase {
  const char* name;
  std::vector<int64_t> input;   // in data_format
  std::vector<int64_t> filter;  // [out_c, in_c / groups, kh, kw]
  Ints strides = {1, 1};
  Ints paddings = {1, 1};
  int groups = 1;
  std::string data_format = "NCHW";
  bool bias = false, bn = true, residual = false;
  std::string activation = "relu";
  bool after_residual = false;
  float alpha = 0, beta = 0;
};

// Every tensor of one case, seeded.
struct Operands {
  Tensor input, filter, bias, mean, variance, scale, shift, residual;
  Tensor* out_like = nullptr;
};

Tensor channel_tensor(int64_t c, uint32_t seed, float lo, float hi) {
  Tensor t = random_f32({c}, seed);
  for (int64_t i = 0; i < c; ++i) t.data_as<float>()[i] = lo + (hi - lo) * (t.data_as<float>()[i] + 1.f) / 2.f;
  return t;
}

Tensor out_dims(const FusedCase& c, const Tensor& input, const Tensor& filter) {
  return output_from([&](Tensor* o) {
    return m::ConvInferMeta(input, filter, c.strides, c.paddings, "EXPLICIT", {1, 1}, c.groups, c.data_format, o);
  });
}

Operands operands(const FusedCase& c, uint32_t seed) {
  Operands o;
  o.input = random_f32(c.input, seed);
  o.filter = random_f32(c.filter, seed + 1);
  const int64_t oc = c.filter[0];
  o.bias = channel_tensor(oc, seed + 2, -0.5f, 0.5f);
  o.mean = channel_tensor(oc, seed + 3, -0.25f, 0.25f);
  o.variance = channel_tensor(oc, seed + 4, 0.5f, 1.5f);
  o.scale = channel_tensor(oc, seed + 5, 0.5f, 1.5f);
  o.shift = channel_tensor(oc, seed + 6, -0.25f, 0.25f);
  o.residual = random_f32(out_dims(c, o.input, o.filter).shape(), seed + 7);
  return o;
}

enum class Path { kReference, kPublic };

Tensor run_fused(const FusedCase& c, const Operands& o, Path path, Tensor* out_in = nullptr, int pixel_stride = 0) {
  Tensor out = out_in != nullptr ? *out_in : poisoned_like(out_dims(c, o.input, o.filter));
  auto fn = path == Path::kReference ? k::reference::conv2d_fused : k::conv2d_fused;
  Status s = fn(cpu(), o.input, o.filter, c.bias ? &o.bias : nullptr, c.bn ? &o.mean : nullptr,
                c.bn ? &o.variance : nullptr, c.bn ? &o.scale : nullptr, c.bn ? &o.shift : nullptr,
                c.residual ? (out_in != nullptr ? out_in : &o.residual) : nullptr, c.strides, c.paddings, "EXPLICIT",
                {1, 1}, c.groups, c.data_format, 1e-5f, c.activation, c.alpha, c.beta, c.after_residual, pixel_stride, &out);
  INFO(s.message());
  REQUIRE(s.ok());
  return out;
}

// The activation kernel of the library with that name, on `x` into a fresh tensor.
Tensor activate(const std::string& name, const Tensor& x) {
  Tensor out = empty(x.dtype, x.shape());
  Status s;
  if (name == "relu") s = k::relu(cpu(), x, &out);
  if (name == "sigmoid") s = k::sigmoid(cpu(), x, &out);
  if (name == "tanh") s = k::tanh(cpu(), x, &out);
  if (name == "hardswish") s = k::hardswish(cpu(), x, &out);
  if (name == "swish") s = k::swish(cpu(), x, &out);
  if (name == "gelu") s = k::gelu(cpu(), x, false, &out);
  if (name == "gelu_tanh") s = k::gelu(cpu(), x, true, &out);
  REQUIRE(s.ok());
  return out;
}

// The same through the separate kernels: conv2d, add (bias as [1, C, 1, 1] or [C]), batch_norm, activation, add.
Tensor run_unfused(const FusedCase& c, const Operands& o) {
  Tensor v = out_dims(c, o.input, o.filter);
  REQUIRE(k::reference::conv2d(cpu(), o.input, o.filter, c.strides, c.paddings, "EXPLICIT", {1, 1}, c.groups,
                               c.data_format, &v)
              .ok());
  const int64_t oc = c.filter[0];
  if (c.bias) {
    Tensor b = o.bias;
    REQUIRE(b.set_dims(c.data_format == "NHWC" ? std::vector<int64_t>{oc} : std::vector<int64_t>{1, oc, 1, 1}).ok());
    Tensor sum = empty(DataType::kFloat32, v.shape());
    REQUIRE(k::add(cpu(), v, b, &sum).ok());
    v = sum;
  }
  if (c.bn) {
    Tensor normed = empty(DataType::kFloat32, v.shape());
    REQUIRE(k::batch_norm(cpu(), v, o.mean, o.variance, &o.scale, &o.shift, true, 0.9f, 1e-5f, c.data_format, false,
                          false, &normed, nullptr, nullptr, nullptr, nullptr, nullptr)
                .ok());
    v = normed;
  }
  if (!c.after_residual && !c.activation.empty()) v = activate(c.activation, v);
  if (c.residual) {
    Tensor sum = empty(DataType::kFloat32, v.shape());
    REQUIRE(k::add(cpu(), v, o.residual, &sum).ok());
    v = sum;
  }
  if (c.after_residual && !c.activation.empty()) v = activate(c.activation, v);
  return v;
}

const std::vector<FusedCase>& cases() {
  static const std::vector<FusedCase> all = {
      {"bn relu", {1, 8, 9, 9}, {16, 8, 3, 3}},
      {"bias only, no activation", {2, 6, 7, 8}, {12, 6, 3, 3}, {2, 2}, {1, 1}, 1, "NCHW", true, false, false, ""},
      {"bias + bn + sigmoid", {1, 5, 6, 6}, {10, 5, 3, 3}, {1, 1}, {0, 0}, 1, "NCHW", true, true, false, "sigmoid"},
      {"bn + residual, relu after", {1, 16, 8, 8}, {16, 16, 3, 3}, {1, 1}, {1, 1}, 1, "NCHW", false, true, true, "relu",
       true},
      {"bn + relu + residual", {1, 16, 8, 8}, {16, 16, 3, 3}, {1, 1}, {1, 1}, 1, "NCHW", false, true, true, "relu"},
      {"bn + residual, no activation, NHWC", {2, 6, 6, 16}, {16, 16, 1, 1}, {1, 1}, {0, 0}, 1, "NHWC", false, true,
       true, ""},
      {"depthwise bn hardswish", {1, 24, 10, 10}, {24, 1, 3, 3}, {2, 2}, {1, 1}, 24, "NCHW", false, true, false,
       "hardswish"},
      {"1x1 bn tanh (plain variant)", {1, 32, 8, 8}, {64, 32, 1, 1}, {1, 1}, {0, 0}, 1, "NCHW", false, true, false,
       "tanh"},
      {"2 chunks, bn swish NHWC", {1, 10, 10, 64}, {128, 64, 3, 3}, {1, 1}, {1, 1}, 1, "NHWC", false, true, false,
       "swish"},
      {"gelu after residual", {1, 8, 5, 5}, {8, 8, 3, 3}, {1, 1}, {1, 1}, 1, "NCHW", true, true, true, "gelu", true},
      {"gelu_tanh", {1, 8, 5, 5}, {8, 8, 3, 3}, {1, 1}, {1, 1}, 1, "NCHW", false, true, false, "gelu_tanh"},
      {"1x1 bias + bn + residual, relu after (plain variant)", {2, 32, 8, 8}, {64, 32, 1, 1}, {1, 1}, {0, 0}, 1, "NCHW",
       true, true, true, "relu", true},
      {"3x3 NHWC in 2 chunks, bias + bn + residual, relu after", {1, 12, 12, 128}, {128, 128, 3, 3}, {1, 1}, {1, 1},
       1, "NHWC", true, true, true, "relu", true},
      {"3x3 NHWC 64 -> 32 at 64 x 64 in reduction chunks, bias + bn + residual, relu after", {1, 64, 64, 64},
       {32, 64, 3, 3}, {1, 1}, {1, 1}, 1, "NHWC", true, true, true, "relu", true},
      {"3x3 NCHW 32 -> 32 at 64 x 64 in reduction chunks, bn + hardswish", {1, 32, 64, 64}, {32, 32, 3, 3}, {1, 1},
       {1, 1}, 1, "NCHW", false, true, false, "hardswish"},
  };
  return all;
}

}  // namespace

TEST_CASE("conv2d_fused's reference loops give the separate kernels' bits") {
  uint32_t seed = 500;
  for (const FusedCase& c : cases()) {
    INFO(c.name);
    const Operands o = operands(c, seed += 10);
    CHECK(same_bits(run_fused(c, o, Path::kReference), run_unfused(c, o)));
  }
}

namespace {

// A case's operands with the input and residual re-blocked into NCHW8c (the per-channel vectors stay [C]).
FusedCase blocked_case(FusedCase c) {
  c.input = {c.input[0], c.input[1] / 8, c.input[2], c.input[3], 8};
  c.data_format = "NCHW8c";
  return c;
}
Operands blocked_operands(Operands o) {
  o.input = to_nchw8c(o.input);
  o.residual = to_nchw8c(o.residual);
  return o;
}

const FusedCase& nchw8c_case(bool bn) {
  // relu after the residual (ResNet's order): oneDNN 2.6's AVX2 kernels take no activation before a sum post-op,
  // which NCHW8c, having no plain variant, leaves to the reference loops.
  static const FusedCase with_bn{"3x3, 16 to 24 channels, bias + bn + residual + relu", {2, 16, 6, 7}, {24, 16, 3, 3},
                                 {1, 1}, {1, 1}, 1, "NCHW", true, true, true, "relu", true};
  static const FusedCase without{"3x3, 16 to 24 channels, bias + residual + relu", {2, 16, 6, 7}, {24, 16, 3, 3},
                                 {1, 1}, {1, 1}, 1, "NCHW", true, false, true, "relu", true};
  return bn ? with_bn : without;
}

}  // namespace

TEST_CASE("conv2d_fused NCHW8c: the reference loops give the NCHW results re-blocked, bit for bit") {
  uint32_t seed = 600;
  for (bool bn : {false, true}) {
    const FusedCase& c = nchw8c_case(bn);
    INFO(c.name);
    const Operands o = operands(c, seed += 10);
    const Tensor want = to_nchw8c(run_fused(c, o, Path::kReference));
    CHECK(same_bits(run_fused(blocked_case(c), blocked_operands(o), Path::kReference), want));
  }
}

TEST_CASE("conv2d_fused writes an NHWC output into its slice of a wider tensor, the dense result's bits") {
  // Case 8 (2 chunks of output channels) and case 5, 1 x 1 (rows of pixels as images) without its residual.
  FusedCase one_by_one = cases()[5];
  one_by_one.residual = false;
  for (const FusedCase& c : {cases()[8], one_by_one}) {
    for (Path path : {Path::kReference, Path::kPublic}) {
      INFO(c.name << (path == Path::kPublic ? ", public kernel" : ", reference loops"));
      const Operands o = operands(c, 800);
      const Tensor dense = run_fused(c, o, path);
      // out: channels [5, 5 + oc) of a [N, H, W, oc + 9] tensor, whose other channels must stay as they were.
      const int64_t oc = dense.dim(3), wide_c = oc + 9, pixels = dense.numel() / oc;
      Tensor wide = poisoned_like(random_f32({dense.dim(0), dense.dim(1), dense.dim(2), wide_c}, 1));
      Tensor slice = dense;
      slice.holder.reset();
      slice.data = wide.data_as<float>() + 5;
      run_fused(c, o, path, &slice, static_cast<int>(wide_c));
      check_slice_write(wide, dense, pixels, wide_c, oc, 5);
    }
  }
  // Not NHWC, narrower than the output, or with a residual: an error.
  const FusedCase& nchw = cases()[0];
  const Operands o = operands(nchw, 810);
  Tensor out = out_dims(nchw, o.input, o.filter);
  Status s = k::conv2d_fused(cpu(), o.input, o.filter, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                             nchw.strides, nchw.paddings, "EXPLICIT", {1, 1}, 1, "NCHW", 1e-5f, "", 0.f, 0.f, false, 99,
                             &out);
  CHECK(error_of(s).find("out_pixel_stride") != std::string::npos);
}

TEST_CASE("conv2d_fused checks its operands") {
  const FusedCase& c = cases()[0];
  Operands o = operands(c, 600);
  Tensor out = out_dims(c, o.input, o.filter);
  auto call = [&](const Tensor* mean, const Tensor* variance, const Tensor* residual, const std::string& act) {
    return k::conv2d_fused(cpu(), o.input, o.filter, nullptr, mean, variance, nullptr, nullptr, residual, c.strides,
                           c.paddings, "EXPLICIT", {1, 1}, 1, "NCHW", 1e-5f, act, 0.f, 0.f, false, 0, &out);
  };
  CHECK(error_of(call(&o.mean, nullptr, nullptr, "relu")).find("mean and variance") != std::string::npos);
  CHECK(error_of(call(&o.mean, &o.variance, nullptr, "mish")).find("unknown activation") != std::string::npos);
  Tensor short_mean = random_f32({3}, 1);
  CHECK(error_of(call(&short_mean, &o.variance, nullptr, "")).find("one per output channel") != std::string::npos);
  Tensor wrong_residual = random_f32({1, 16, 9, 8}, 2);
  CHECK(error_of(call(nullptr, nullptr, &wrong_residual, "")).find("residual") != std::string::npos);
}

#if KFORGE_KERNELS_ONEDNN

namespace {

// |oneDNN - reference| <= L * (2 gamma(K + 4) * |s| * S + 4 u * (|folded bias| + |residual| + |pre-activation|))
// + the activation's own approximation (oneDNN's exp / tanh / erf: a few units in the last place, relative).
// S: the convolution of |input| and |filter| (reference loops); s: the batch norm's per-channel scale; L = 1.5 bounds
// the slope of every activation (hardswish's largest). Folding rounds each filter element and the bias once more.
void check_fused_bound(const FusedCase& c, const Operands& o, const Tensor& got, const Tensor& want) {
  Tensor bound = out_dims(c, o.input, o.filter);
  REQUIRE(k::reference::conv2d(cpu(), abs_of(o.input), abs_of(o.filter), c.strides, c.paddings, "EXPLICIT", {1, 1},
                               c.groups, c.data_format, &bound)
              .ok());
  const int64_t oc = c.filter[0], plane = bound.numel() / (bound.dim(0) * oc);
  const int64_t terms = c.filter[1] * c.filter[2] * c.filter[3] + 4;
  const double u = std::ldexp(1.0, -24);
  const bool smooth = c.activation == "sigmoid" || c.activation == "tanh" || c.activation == "swish" ||
                      c.activation == "gelu" || c.activation == "gelu_tanh" || c.activation == "hardswish";
  int64_t bad = 0;
  for (int64_t i = 0; i < got.numel(); ++i) {
    const int64_t ch = c.data_format == "NHWC" ? i % oc : (i / plane) % oc;
    double s = 1, t = 0;
    if (c.bn) {
      s = o.scale.data_as<float>()[ch] / std::sqrt(o.variance.data_as<float>()[ch] + 1e-5);
      t = o.shift.data_as<float>()[ch] - o.mean.data_as<float>()[ch] * s;
    }
    const double b = c.bias ? o.bias.data_as<float>()[ch] * s : 0.0;
    const double r = c.residual ? std::fabs(o.residual.data_as<float>()[i]) : 0.0;
    const double w = want.data_as<float>()[i];
    double limit = 1.5 * (2 * gamma_of(terms) * std::fabs(s) * bound.data_as<float>()[i] +
                          4 * u * (std::fabs(b) + std::fabs(t) + r + std::fabs(w)));
    if (smooth) limit += 16 * u * std::fabs(w) + 1e-6;
    if (!(std::fabs(got.data_as<float>()[i] - w) <= limit)) {
      if (bad++ == 0) {
        INFO("element " << i << ": got " << got.data_as<float>()[i] << ", reference " << w << ", limit " << limit);
        CHECK(false);
      }
    }
  }
  CHECK(bad == 0);
}

// The oneDNN path directly: it must take the case (a fallback to the loops would make the comparisons vacuous).
Tensor run_onednn(const FusedCase& c, const Operands& o) {
  util::ConvShape shape;
  REQUIRE(util::conv_shape("conv2d_fused", o.input, o.filter, c.strides, c.paddings, "EXPLICIT", {1, 1}, c.groups,
                           c.data_format, &shape)
              .ok());
  k::onednn::ConvEpilogue e;
  if (c.bias) e.bias = &o.bias;
  if (c.bn) e.mean = &o.mean, e.variance = &o.variance, e.scale = &o.scale, e.shift = &o.shift;
  e.epsilon = 1e-5f;
  REQUIRE(util::parse_activation(c.activation, &e.activation));
  e.alpha = c.alpha, e.beta = c.beta, e.activation_after_residual = c.after_residual;
  if (c.residual) e.residual = &o.residual;
  Tensor out = poisoned_like(out_dims(c, o.input, o.filter));
  bool handled = false;
  Status s = k::onednn::conv2d("conv2d_fused", o.input, o.filter, shape, e, &out, &handled);
  INFO(s.message());
  REQUIRE(s.ok());
  REQUIRE(handled);
  return out;
}

}  // namespace

TEST_CASE("oneDNN conv2d_fused matches its reference loops (folded batch norm, post-ops, declared or not)") {
  uint32_t seed = 700;
  for (const FusedCase& c : cases()) {
    for (bool constant : {false, true}) {
      INFO(c.name << (constant ? ", operands declared constant" : ""));
      const Operands o = operands(c, seed += 10);
      ConstantScope f(o.filter, constant), b(o.bias, constant), m1(o.mean, constant), v(o.variance, constant),
          sc(o.scale, constant), sh(o.shift, constant);
      const Tensor want = run_fused(c, o, Path::kReference);
      const Tensor got = run_onednn(c, o);
      check_fused_bound(c, o, got, want);
      CHECK(same_bits(run_fused(c, o, Path::kPublic), got));  // the public kernel; a kept folded filter: same bits
      ThreadsScope threads(3);
      CHECK(same_bits(run_fused(c, o, Path::kPublic), got));
    }
  }
}

TEST_CASE("oneDNN conv2d_fused NCHW8c matches the NCHW reference loops re-blocked") {
  uint32_t seed = 650;
  for (bool bn : {false, true}) {
    for (bool constant : {false, true}) {
      const FusedCase& c = nchw8c_case(bn);
      INFO(c.name << (constant ? ", operands declared constant" : ""));
      const Operands o = operands(c, seed += 10);
      const Operands b = blocked_operands(o);
      ConstantScope f(b.filter, constant), bi(b.bias, constant), m1(b.mean, constant), v(b.variance, constant),
          sc(b.scale, constant), sh(b.shift, constant);
      const Tensor got = run_onednn(blocked_case(c), b);
      check_fused_bound(c, o, from_nchw8c(got), run_fused(c, o, Path::kReference));
      CHECK(same_bits(run_fused(blocked_case(c), b, Path::kPublic), got));
    }
  }
}

TEST_CASE("oneDNN conv2d_fused NCHW8c, an activation before the residual (a binary post-op where no sum is taken)") {
  // PP-YOLOE+-s's CSPResNet block: swish, then the shortcut. oneDNN 2.6's AVX2 kernels take no sum after an
  // activation; the residual is then a binary add of the caller's tensor (saved first when it is the output's own
  // memory, as the kernel may keep partial sums there over its 96 input channels). run_onednn requires a jit path.
  uint32_t seed = 680;
  for (bool bn : {false, true}) {
    for (bool constant : {false, true}) {
      const FusedCase c{"3x3, 96 to 48 channels at 20 x 20, bias (+ bn) + swish + residual", {1, 96, 20, 20},
                        {48, 96, 3, 3}, {1, 1}, {1, 1}, 1, "NCHW", true, bn, true, "swish"};
      INFO(c.name << (bn ? ", bn" : "") << (constant ? ", operands declared constant" : ""));
      const Operands o = operands(c, seed += 10);
      const Operands b = blocked_operands(o);
      ConstantScope f(b.filter, constant), bi(b.bias, constant), m1(b.mean, constant), v(b.variance, constant),
          sc(b.scale, constant), sh(b.shift, constant);
      const Tensor got = run_onednn(blocked_case(c), b);
      check_fused_bound(c, o, from_nchw8c(got), run_fused(c, o, Path::kReference));
      CHECK(same_bits(run_fused(blocked_case(c), b, Path::kPublic), got));
      Tensor in_place = empty(DataType::kFloat32, b.residual.shape());
      std::memcpy(in_place.data, b.residual.data, b.residual.bytes());
      CHECK(same_bits(run_fused(blocked_case(c), b, Path::kPublic, &in_place), got));
      ThreadsScope threads(3);
      CHECK(same_bits(run_fused(blocked_case(c), b, Path::kPublic), got));
    }
  }
}

TEST_CASE("oneDNN conv2d_fused: the plain variant applies its epilogue itself") {
  for (bool constant : {false, true}) {
    const FusedCase& c = cases()[11];
    const Operands o = operands(c, 750);
    ConstantScope f(o.filter, constant), m1(o.mean, constant), v(o.variance, constant);
    run_onednn(c, o);
    CHECK_FALSE(k::onednn::last_conv_plan().blocked);
  }
}

TEST_CASE("oneDNN conv2d_fused: relu6, leaky_relu and clip, which the library has no kernel for") {
  uint32_t seed = 800;
  for (const char* act : {"relu6", "leaky_relu", "clip"}) {
    FusedCase c = cases()[6];  // depthwise
    c.activation = act;
    c.alpha = std::string(act) == "clip" ? -0.5f : 0.1f;
    c.beta = 0.75f;
    INFO(act);
    const Operands o = operands(c, seed += 10);
    check_fused_bound(c, o, run_onednn(c, o), run_fused(c, o, Path::kReference));
  }
}

TEST_CASE("oneDNN conv2d_fused: a residual in the output's memory (in place)") {
  // A reordered output, NHWC, the plain variant in place, NHWC chunks, reduction chunks.
  for (size_t index : {3, 5, 11, 12, 13}) {
    const FusedCase& c = cases()[index];
    INFO(c.name);
    const Operands o = operands(c, 900);
    const Tensor want = run_fused(c, o, Path::kReference);
    Tensor in_place = empty(DataType::kFloat32, o.residual.shape());
    std::memcpy(in_place.data, o.residual.data, o.residual.bytes());
    const Tensor got = run_fused(c, o, Path::kPublic, &in_place);
    check_fused_bound(c, o, got, want);
    Tensor ref_in_place = empty(DataType::kFloat32, o.residual.shape());
    std::memcpy(ref_in_place.data, o.residual.data, o.residual.bytes());
    CHECK(same_bits(run_fused(c, o, Path::kReference, &ref_in_place), want));
  }
}

TEST_CASE("oneDNN conv2d_fused: a folded filter is dropped when a batch norm operand is re-declared") {
  const FusedCase& c = cases()[0];
  Operands o = operands(c, 1000);
  for (Tensor* t : {&o.filter, &o.mean, &o.variance, &o.scale, &o.shift}) k::declare_constant(t->data, t->bytes());
  run_fused(c, o, Path::kPublic);
  k::release_constant(o.mean.data);
  for (int64_t i = 0; i < o.mean.numel(); ++i) o.mean.data_as<float>()[i] += 1.f;
  k::declare_constant(o.mean.data, o.mean.bytes());
  check_fused_bound(c, o, run_fused(c, o, Path::kPublic), run_fused(c, o, Path::kReference));
  for (Tensor* t : {&o.filter, &o.mean, &o.variance, &o.scale, &o.shift}) k::release_constant(t->data);
}

#endif

TEST_CASE("oneDNN conv2d_fused: a 1 x 1 output gets each channel's own bias (the plain variant's epilogue)") {
  // [n, c, 1, 1] has NCHW's and NHWC's strides alike; oneDNN 2.6's binary then took the per-channel operand per block
  // of 8 channels (channel c got bias[8 * (c / 8)]): GraphNet's MobileNetV3 squeeze-excitation convolutions, seed 10.
  uint32_t seed = 900;
  for (int64_t oc : {10, 60}) {
    for (bool bn : {false, true}) {
      FusedCase c{"squeeze-excitation 1 x 1", {128, 40, 1, 1}, {oc, 40, 1, 1}, {1, 1}, {0, 0}};
      c.bias = true, c.bn = bn;
      INFO(oc << " output channels" << (bn ? ", batch norm" : ""));
      const Operands o = operands(c, seed += 10);
      check_fused_bound(c, o, run_onednn(c, o), run_fused(c, o, Path::kReference));
    }
  }
}
