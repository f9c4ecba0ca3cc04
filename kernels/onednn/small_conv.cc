// Direct NHWC convolutions with few output channels (small_conv.h says when and why).
//
// conv2d: an output pixel's window row kh is KW * IC contiguous floats of the input (NHWC, undilated), and its
// filter row, laid out as [kh][output channel][kw][ic] here, KW * IC contiguous floats too: each output element
// is the sum over kh of those two rows' dot product, taken in 8 interleaved partial sums (lane k % 8 of the row),
// one FMA per 8 products, then the 8 lanes added in a fixed tree (hadd). Window positions outside the image are
// zero lanes (masked loads), so every pixel, at a border or not, is summed the same way. Two pixels and 4 output
// channels are computed together (8 accumulators, the filter row loaded once for both).
//
// conv2d_transpose with stride equal to the kernel: every output pixel gets exactly one input pixel's products, so
// an input pixel's KH * KW * OC outputs are a small matrix product, the FMA chain over the input channels in
// order, vectorised over the outputs.
//
// The split into tasks depends on the shapes only (runtime.h): the same bits for any thread count.
#include "onednn/small_conv.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>

#include "activation.h"
#include "onednn/runtime.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define KFORGE_SMALL_CONV 1
#define KFORGE_AVX2_FMA __attribute__((target("avx2,fma")))
#else
#define KFORGE_SMALL_CONV 0
#endif

namespace kforge::kernels::onednn {

namespace {

constexpr int64_t kLanes = 8;
constexpr int64_t kMaxOc = 4;          // output channels computed together (the filter padded with zeros)
constexpr int64_t kMaxProducts = 256;  // longer reductions: oneDNN with issue 34's chunks (conv_plan.cc)
constexpr int64_t kMaxTransposeIc = 16;
constexpr int64_t kMaxTransposeOutputs = 64;  // KH * KW * OC per input pixel
// About this many multiply-adds per task, as conv_plan.cc's kMinChunkMacs: a task's hand-off to another thread costs
// a few microseconds, so the head's layers (0.44 M at most) run whole (tasks of 64 K: 2 threads' CPU time 1.02x
// main's, whose oneDNN plan ran them whole).
constexpr int64_t kTaskProducts = int64_t{1} << 20;

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

bool cpu_fits() {
#if KFORGE_SMALL_CONV
  static const bool fits = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return fits;
#else
  return false;
#endif
}

// NHWC, or NCHW (through NHWC copies: the same bits in either layout, as oneDNN gives them; tools/check-program
// compares a program's NHWC plan with the interpreter's NCHW run bit for bit).
bool plain_float(const Tensor& t, const util::ConvShape& s) {
  return t.dtype == DataType::kFloat32 && !s.nchw8c && !s.plain_input && s.groups == 1 && s.g.dilation_h == 1 &&
         s.g.dilation_w == 1;
}

// [n][c][pixels] <-> [n][pixels][c].
void to_channel_last(const float* from, int64_t n, int64_t c, int64_t pixels, float* to) {
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t ch = 0; ch < c; ++ch) {
      const float* plane = from + (b * c + ch) * pixels;
      float* image = to + b * pixels * c + ch;
      for (int64_t p = 0; p < pixels; ++p) image[p * c] = plane[p];
    }
  }
}
void to_channel_first(const float* from, int64_t n, int64_t c, int64_t pixels, float* to) {
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t ch = 0; ch < c; ++ch) {
      const float* image = from + b * pixels * c + ch;
      float* plane = to + (b * c + ch) * pixels;
      for (int64_t p = 0; p < pixels; ++p) plane[p] = image[p * c];
    }
  }
}

// One reservation of the call arena for the prepared filter and, for NCHW, the NHWC copies of the input, output
// and residual; null when out of memory.
struct Buffers {
  float *wt = nullptr, *in = nullptr, *out = nullptr, *residual = nullptr;
};
bool reserve_buffers(size_t wt_floats, size_t in_floats, size_t out_floats, size_t residual_floats, Buffers* b) {
  const size_t sizes[] = {align_up(wt_floats * sizeof(float)), align_up(in_floats * sizeof(float)),
                          align_up(out_floats * sizeof(float)), align_up(residual_floats * sizeof(float))};
  char* base = call_arena().reserve(sizes[0] + sizes[1] + sizes[2] + sizes[3]);
  if (base == nullptr) return false;
  b->wt = reinterpret_cast<float*>(base);
  b->in = reinterpret_cast<float*>(base + sizes[0]);
  b->out = reinterpret_cast<float*>(base + sizes[0] + sizes[1]);
  b->residual = reinterpret_cast<float*>(base + sizes[0] + sizes[1] + sizes[2]);
  return true;
}

// What a task of output rows needs (plain values: the AVX2 functions use no library templates).
struct ConvDims {
  int64_t ih, iw, ic, kh, kw, sh, sw, pt, pl, ow, oc;
  int64_t row;         // KW * IC: one window row
  int64_t row_padded;  // rounded up to the lanes: the filter's row stride
  int64_t pixel_stride;
};

#if KFORGE_SMALL_CONV
// Lanes k of chunk `base` with lo <= k < hi.
KFORGE_AVX2_FMA inline __m256i lane_mask(int64_t base, int64_t lo, int64_t hi) {
  const __m256i k =
      _mm256_add_epi32(_mm256_set1_epi32(static_cast<int>(base)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  const __m256i above = _mm256_cmpgt_epi32(k, _mm256_set1_epi32(static_cast<int>(lo - 1)));
  const __m256i below = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(hi)), k);
  return _mm256_and_si256(above, below);
}

// Output row `oh` of one image: raw sums (no epilogue) into out_row's pixels.
KFORGE_AVX2_FMA void conv_row(const ConvDims& d, const float* image, const float* wt, int64_t oh, float* out_row) {
  const int64_t kh_lo = std::max<int64_t>(0, d.pt - oh * d.sh);
  const int64_t kh_hi = std::min<int64_t>(d.kh, d.ih + d.pt - oh * d.sh);
  const int64_t chunks = d.row_padded / kLanes;
  for (int64_t ow = 0; ow < d.ow; ow += 2) {
    const int64_t pixels = std::min<int64_t>(2, d.ow - ow);
    int64_t iw0[2], lo[2] = {0, 0}, hi[2] = {0, 0};
    for (int64_t p = 0; p < pixels; ++p) {
      iw0[p] = (ow + p) * d.sw - d.pl;
      lo[p] = std::max<int64_t>(0, -iw0[p]) * d.ic;
      hi[p] = std::max(lo[p], std::min<int64_t>(d.kw, d.iw - iw0[p]) * d.ic);
    }
    __m256 acc[8];
    for (__m256& a : acc) a = _mm256_setzero_ps();
    for (int64_t kh = kh_lo; kh < kh_hi; ++kh) {
      const float* xrow = image + (oh * d.sh - d.pt + kh) * d.iw * d.ic;
      const float* x0 = xrow + iw0[0] * d.ic;
      const float* x1 = pixels == 2 ? xrow + iw0[1] * d.ic : x0;
      const float* w = wt + kh * kMaxOc * d.row_padded;
      for (int64_t c = 0; c < chunks; ++c) {
        const int64_t base = c * kLanes;
        const bool whole = base + kLanes <= d.row;  // a chunk of the row (not its zero-padded tail)
        const __m256 a = whole && lo[0] == 0 && hi[0] == d.row
                             ? _mm256_loadu_ps(x0 + base)
                             : _mm256_maskload_ps(x0 + base, lane_mask(base, lo[0], hi[0]));
        const __m256 b = whole && lo[1] == 0 && hi[1] == d.row
                             ? _mm256_loadu_ps(x1 + base)
                             : _mm256_maskload_ps(x1 + base, lane_mask(base, lo[1], hi[1]));
        for (int64_t o = 0; o < kMaxOc; ++o) {
          const __m256 wv = _mm256_loadu_ps(w + o * d.row_padded + base);
          acc[o] = _mm256_fmadd_ps(a, wv, acc[o]);
          acc[kMaxOc + o] = _mm256_fmadd_ps(b, wv, acc[kMaxOc + o]);
        }
      }
    }
    // Lanes summed pairwise, then the two halves: r0 = pixel 0's 4 channels, r1 = pixel 1's.
    const __m256 u0 = _mm256_hadd_ps(_mm256_hadd_ps(acc[0], acc[1]), _mm256_hadd_ps(acc[2], acc[3]));
    const __m256 u1 = _mm256_hadd_ps(_mm256_hadd_ps(acc[4], acc[5]), _mm256_hadd_ps(acc[6], acc[7]));
    alignas(16) float r[2][4];
    _mm_store_ps(r[0], _mm_add_ps(_mm256_castps256_ps128(u0), _mm256_extractf128_ps(u0, 1)));
    _mm_store_ps(r[1], _mm_add_ps(_mm256_castps256_ps128(u1), _mm256_extractf128_ps(u1, 1)));
    for (int64_t p = 0; p < pixels; ++p) {
      float* o = out_row + (ow + p) * d.pixel_stride;
      for (int64_t c = 0; c < d.oc; ++c) o[c] = r[p][c];
    }
  }
}

// Input pixels [0, pixels) of one input row: each pixel's KH * KW * OC outputs (V vectors, zero-padded), the FMA
// chain over the input channels in order, in registers; then its KW * OC outputs of each kernel row h into output
// row h (out_rows[h], at the pixel's columns).
template <int V>
KFORGE_AVX2_FMA void transpose_pixels(const float* x, int64_t pixels, int64_t ic, const float* wt, int64_t kh,
                                      int64_t run, float* const* out_rows) {
  // Up to 4 pixels at once: their chains are independent (one pixel's alone waits on the FMA latency).
  constexpr int64_t kGroup = V <= 2 ? 4 : 1;
  for (int64_t p0 = 0; p0 < pixels; p0 += kGroup) {
    const int64_t group = std::min(kGroup, pixels - p0);
    __m256 acc[kGroup][V];
    for (int64_t q = 0; q < kGroup; ++q) {
      for (int j = 0; j < V; ++j) acc[q][j] = _mm256_setzero_ps();
    }
    for (int64_t c = 0; c < ic; ++c) {
      for (int64_t q = 0; q < kGroup; ++q) {
        // A group cut short by the row's end repeats its last pixel (computed, not stored).
        const __m256 xv = _mm256_broadcast_ss(x + (p0 + std::min(q, group - 1)) * ic + c);
        for (int j = 0; j < V; ++j) {
          acc[q][j] = _mm256_fmadd_ps(xv, _mm256_loadu_ps(wt + (c * V + j) * kLanes), acc[q][j]);
        }
      }
    }
    for (int64_t q = 0; q < group; ++q) {
      alignas(32) float buf[V * kLanes];
      for (int j = 0; j < V; ++j) _mm256_store_ps(buf + j * kLanes, acc[q][j]);
      for (int64_t h = 0; h < kh; ++h) {  // fixed-size copies inline (a loop of `run` becomes a memmove call)
        float* o = out_rows[h] + (p0 + q) * run;
        const float* from = buf + h * run;
        switch (run) {
          case 1: *o = *from; break;
          case 2: std::memcpy(o, from, 2 * sizeof(float)); break;
          case 4: std::memcpy(o, from, 4 * sizeof(float)); break;
          case 8: std::memcpy(o, from, 8 * sizeof(float)); break;
          default: std::memcpy(o, from, static_cast<size_t>(run) * sizeof(float));
        }
      }
    }
  }
}

using TransposePixels = void (*)(const float*, int64_t, int64_t, const float*, int64_t, int64_t, float* const*);
constexpr TransposePixels kTransposePixels[] = {transpose_pixels<1>, transpose_pixels<2>, transpose_pixels<3>,
                                                transpose_pixels<4>, transpose_pixels<5>, transpose_pixels<6>,
                                                transpose_pixels<7>, transpose_pixels<8>};
static_assert(sizeof kTransposePixels / sizeof kTransposePixels[0] == kMaxTransposeOutputs / kLanes);
#endif

// The per-channel epilogue as conv_fused.cc's apply_epilogue computes it.
struct Epilogue {
  bool any = false, bias = false, batch_norm = false;
  std::array<float, kMaxOc> b{}, s{}, t{};
  util::Activation activation = util::Activation::kNone;
  float alpha = 0, beta = 0;
  bool after_residual = false;
  const float* residual = nullptr;  // dense NHWC, out's shape
};

Epilogue epilogue_of(const ConvEpilogue& e, int64_t oc) {
  Epilogue ep;
  ep.bias = e.bias != nullptr;
  ep.batch_norm = e.mean != nullptr;
  for (int64_t c = 0; c < oc; ++c) {
    if (ep.bias) ep.b[c] = e.bias->data_as<const float>()[c];
    if (ep.batch_norm) {
      const float m = e.mean->data_as<const float>()[c], v = e.variance->data_as<const float>()[c];
      const float inv_std = 1.f / std::sqrt(v + e.epsilon);
      ep.s[c] = (e.scale != nullptr ? e.scale->data_as<const float>()[c] : 1.f) * inv_std;
      ep.t[c] = (e.shift != nullptr ? e.shift->data_as<const float>()[c] : 0.f) - m * ep.s[c];
    }
  }
  ep.activation = e.activation, ep.alpha = e.alpha, ep.beta = e.beta;
  ep.after_residual = e.activation_after_residual;
  ep.residual = e.residual != nullptr ? e.residual->data_as<const float>() : nullptr;
  ep.any = ep.bias || ep.batch_norm || ep.activation != util::Activation::kNone || ep.residual != nullptr;
  return ep;
}

// The epilogue over `pixels` output pixels; residual: theirs (dense), or null.
void apply_epilogue(const Epilogue& ep, int64_t pixels, int64_t oc, int64_t pixel_stride, const float* residual,
                    float* out) {
  const bool relu = ep.activation == util::Activation::kRelu;  // inline: the common case
  for (int64_t p = 0; p < pixels; ++p) {
    float* o = out + p * pixel_stride;
    for (int64_t c = 0; c < oc; ++c) {
      float v = o[c];
      if (ep.bias) v = v + ep.b[c];
      if (ep.batch_norm) v = v * ep.s[c] + ep.t[c];
      if (!ep.after_residual) v = relu ? (v > 0.f ? v : 0.f) : util::activate(ep.activation, v, ep.alpha, ep.beta);
      if (residual != nullptr) v = v + residual[p * oc + c];
      if (ep.after_residual) v = util::activate(ep.activation, v, ep.alpha, ep.beta);
      o[c] = v;
    }
  }
}

}  // namespace

bool small_conv2d_fits(const Tensor& input, const util::ConvShape& s, const ConvEpilogue& e, const Tensor& out) {
  if (!cpu_fits() || !plain_float(input, s) || s.out_c > kMaxOc || s.k_h * s.k_w * s.in_c > kMaxProducts) {
    return false;
  }
  if (e.residual != nullptr && e.residual->data == out.data) return false;
  return s.n > 0 && s.out_h > 0 && s.out_w > 0 && s.in_c > 0;
}

Status small_conv2d(const Tensor& input, const Tensor& filter, const util::ConvShape& s, const ConvEpilogue& e,
                    Tensor* out) {
#if KFORGE_SMALL_CONV
  ConvDims d{s.in_h, s.in_w, s.in_c, s.k_h, s.k_w, s.g.stride_h, s.g.stride_w, s.g.pad_top, s.g.pad_left,
             s.out_w, s.out_c, s.k_w * s.in_c, round_up(s.k_w * s.in_c, kLanes),
             e.out_pixel_stride > 0 ? e.out_pixel_stride : s.out_c};
  const bool nchw = !s.channel_last;
  const int64_t in_pixels = s.in_h * s.in_w, out_pixels = s.out_h * s.out_w;
  // The filter as [kh][output channel (4, zero-padded)][kw][ic], rows padded with zeros to the lanes.
  const size_t wt_floats = static_cast<size_t>(d.kh * kMaxOc * d.row_padded);
  Buffers buf;
  if (!reserve_buffers(wt_floats, nchw ? static_cast<size_t>(input.numel()) : 0,
                       nchw ? static_cast<size_t>(out->numel()) : 0,
                       nchw && e.residual != nullptr ? static_cast<size_t>(out->numel()) : 0, &buf)) {
    return Status::Error("conv2d: out of memory");
  }
  float* wt = buf.wt;
  std::fill(wt, wt + wt_floats, 0.f);
  const float* w = filter.data_as<const float>();
  for (int64_t o = 0; o < d.oc; ++o) {
    for (int64_t c = 0; c < d.ic; ++c) {
      for (int64_t kh = 0; kh < d.kh; ++kh) {
        for (int64_t kw = 0; kw < d.kw; ++kw) {
          wt[(kh * kMaxOc + o) * d.row_padded + kw * d.ic + c] = w[((o * d.ic + c) * d.kh + kh) * d.kw + kw];
        }
      }
    }
  }
  Epilogue ep = epilogue_of(e, s.out_c);
  const float* in = input.data_as<const float>();
  float* o = out->data_as<float>();
  if (nchw) {
    to_channel_last(in, s.n, s.in_c, in_pixels, buf.in);
    in = buf.in, o = buf.out;
    if (ep.residual != nullptr) {
      to_channel_last(ep.residual, s.n, s.out_c, out_pixels, buf.residual);
      ep.residual = buf.residual;
    }
  }
  const int64_t row_products = s.out_w * kMaxOc * s.k_h * d.row_padded;
  const int64_t rows_per_task = std::max<int64_t>(1, kTaskProducts / std::max<int64_t>(1, row_products));
  const int64_t tasks_per_image = (s.out_h + rows_per_task - 1) / rows_per_task;
  KFORGE_RETURN_IF_ERROR(run_tasks(s.n * tasks_per_image, [&](int64_t task) -> Status {
    const int64_t b = task / tasks_per_image, first = task % tasks_per_image * rows_per_task;
    const float* image = in + b * s.in_h * s.in_w * s.in_c;
    for (int64_t oh = first; oh < std::min(s.out_h, first + rows_per_task); ++oh) {
      const int64_t pixel = (b * s.out_h + oh) * s.out_w;
      float* row = o + pixel * d.pixel_stride;
      conv_row(d, image, wt, oh, row);
      if (ep.any) {
        apply_epilogue(ep, s.out_w, s.out_c, d.pixel_stride,
                       ep.residual != nullptr ? ep.residual + pixel * s.out_c : nullptr, row);
      }
    }
    return Status::OK();
  }));
  if (nchw) to_channel_first(o, s.n, s.out_c, out_pixels, out->data_as<float>());
  return Status::OK();
#else
  (void)input, (void)filter, (void)s, (void)e, (void)out;
  return Status::Error("conv2d: no direct small-channel path on this CPU");
#endif
}

bool small_conv2d_transpose_fits(const Tensor& x, const util::ConvShape& s) {
  return cpu_fits() && plain_float(x, s) && s.out_c <= kMaxOc && s.in_c > 0 && s.in_c <= kMaxTransposeIc &&
         s.k_h * s.k_w * s.out_c <= kMaxTransposeOutputs && s.g.stride_h == s.k_h && s.g.stride_w == s.k_w &&
         s.g.pad_top == 0 && s.g.pad_left == 0 && s.out_h == s.in_h * s.k_h && s.out_w == s.in_w * s.k_w &&
         s.n > 0 && s.in_h > 0 && s.in_w > 0;
}

Status small_conv2d_transpose(const Tensor& x, const Tensor& filter, const util::ConvShape& s, Tensor* out) {
#if KFORGE_SMALL_CONV
  const int64_t ic = s.in_c, oc = s.out_c, kh = s.k_h, kw = s.k_w;
  const int64_t outputs = kh * kw * oc, outputs_padded = round_up(outputs, kLanes);
  // The filter [ic][oc][kh][kw] as [ic][kh][kw][oc]: an input pixel's outputs in the output's order per kh.
  const size_t wt_floats = static_cast<size_t>(ic * outputs_padded);
  const bool nchw = !s.channel_last;
  Buffers buf;
  if (!reserve_buffers(wt_floats, nchw ? static_cast<size_t>(x.numel()) : 0,
                       nchw ? static_cast<size_t>(out->numel()) : 0, 0, &buf)) {
    return Status::Error("conv2d_transpose: out of memory");
  }
  float* wt = buf.wt;
  std::fill(wt, wt + wt_floats, 0.f);
  const float* w = filter.data_as<const float>();
  for (int64_t c = 0; c < ic; ++c) {
    for (int64_t o = 0; o < oc; ++o) {
      for (int64_t h = 0; h < kh; ++h) {
        for (int64_t v = 0; v < kw; ++v) {
          wt[c * outputs_padded + (h * kw + v) * oc + o] = w[((c * oc + o) * kh + h) * kw + v];
        }
      }
    }
  }
  const int64_t row_products = s.in_w * ic * outputs_padded;
  const int64_t rows_per_task = std::max<int64_t>(1, kTaskProducts / std::max<int64_t>(1, row_products));
  const int64_t tasks_per_image = (s.in_h + rows_per_task - 1) / rows_per_task;
  const float* in = x.data_as<const float>();
  float* o = out->data_as<float>();
  if (nchw) {
    to_channel_last(in, s.n, ic, s.in_h * s.in_w, buf.in);
    in = buf.in, o = buf.out;
  }
  const TransposePixels pixels_of = kTransposePixels[outputs_padded / kLanes - 1];
  KFORGE_RETURN_IF_ERROR(run_tasks(s.n * tasks_per_image, [&](int64_t task) -> Status {
    const int64_t b = task / tasks_per_image, first = task % tasks_per_image * rows_per_task;
    float* out_rows[kMaxTransposeOutputs];
    for (int64_t ih = first; ih < std::min(s.in_h, first + rows_per_task); ++ih) {
      for (int64_t h = 0; h < kh; ++h) out_rows[h] = o + ((b * s.out_h + ih * kh + h) * s.out_w) * oc;
      pixels_of(in + ((b * s.in_h + ih) * s.in_w) * ic, s.in_w, ic, wt, kh, kw * oc, out_rows);
    }
    return Status::OK();
  }));
  if (nchw) to_channel_first(o, s.n, oc, s.out_h * s.out_w, out->data_as<float>());
  return Status::OK();
#else
  (void)x, (void)filter, (void)s, (void)out;
  return Status::Error("conv2d_transpose: no direct small-channel path on this CPU");
#endif
}

}  // namespace kforge::kernels::onednn
