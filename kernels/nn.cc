// batch_norm, pool2d and nearest_interp over NCHW or NHWC tensors (batch_norm and pool2d also NCHW8c).
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernel_util.h"
#include "kforge_kernels.h"
#include "reference.h"
#if KFORGE_KERNELS_ONEDNN
#include "onednn/onednn.h"
#endif

namespace kforge::kernels {

namespace {

using util::Strides4;

Status check_out4(const char* op, const Tensor& out, DataType dtype, bool channel_last, bool nchw8c, int64_t n,
                  int64_t c, int64_t h, int64_t w) {
  if (out.dtype != dtype) return Status::Error(op, ": out is ", out.dtype, ", expected ", dtype);
  Tensor expected;
  KFORGE_RETURN_IF_ERROR(expected.set_dims(util::activation_dims(channel_last, nchw8c, n, c, h, w)));
  return util::require_dims(out, expected, op);
}

// Paddle's pooling window along one axis: [o * stride - pad, + k) clipped to the input; adaptive windows split
// the input evenly.
void pool_window(int64_t o, int64_t in, int64_t out_size, int64_t k, int64_t stride, int64_t pad, bool adaptive,
                 int64_t* start, int64_t* end) {
  if (adaptive) {
    *start = o * in / out_size;
    *end = ((o + 1) * in + out_size - 1) / out_size;
    return;
  }
  *start = o * stride - pad;
  *end = std::min(*start + k, in);
  *start = std::max<int64_t>(*start, 0);
}

// Channel-last pooling: each output pixel's channels are contiguous in the input's pixels of its window, so the
// output pixel's row of channels is the accumulator, updated by one pass over each window pixel's channels: a
// loop over contiguous floats without a carried dependence, which GCC vectorises (blocks of 8 channels held in an
// array across the window, as before, compiled to scalar maxss with shuffles: squeezenet1_0 224²'s pools took 7.8 %
// of its inference). Per output element the arithmetic is the reference loops', in the same order (start from
// -FLT_MAX or 0, take the window row by row), so the results are identical. It reads the input about once where
// oneDNN 2.6's NHWC max pooling on AVX2 took 2.1 ms for resnet18 224²'s 3 x 3 / 2 pool (64 channels, 112² -> 56²;
// 0.53 ms alone with the input in cache) against 0.47 ms here (BENCHMARKS.md).
template <bool kMax, typename T>
inline __attribute__((always_inline)) void pool_channel_last(const util::PoolShape& s, bool exclusive, const T* in,
                                                             T* out) {
  const T init = kMax ? static_cast<T>(-FLT_MAX) : T(0);
  const int64_t c = s.c;
  for (int64_t b = 0; b < s.n; ++b) {
    const T* image = in + b * s.in_h * s.in_w * c;
    for (int64_t oh = 0; oh < s.out_h; ++oh) {
      int64_t h0, h1;
      pool_window(oh, s.in_h, s.out_h, s.k_h, s.g.stride_h, s.g.pad_top, s.adaptive, &h0, &h1);
      for (int64_t ow = 0; ow < s.out_w; ++ow, out += c) {
        int64_t w0, w1;
        pool_window(ow, s.in_w, s.out_w, s.k_w, s.g.stride_w, s.g.pad_left, s.adaptive, &w0, &w1);
        T* __restrict acc = out;
        for (int64_t j = 0; j < c; ++j) acc[j] = init;
        for (int64_t h = h0; h < h1; ++h) {
          for (int64_t w = w0; w < w1; ++w) {
            const T* __restrict v = image + (h * s.in_w + w) * c;
            for (int64_t j = 0; j < c; ++j) acc[j] = kMax ? (acc[j] > v[j] ? acc[j] : v[j]) : acc[j] + v[j];
          }
        }
        if (!kMax) {
          const T count = static_cast<T>((exclusive || s.adaptive) ? (h1 - h0) * (w1 - w0) : s.k_h * s.k_w);
          for (int64_t j = 0; j < c; ++j) acc[j] = acc[j] / count;
        }
      }
    }
  }
}

// The same for float32 with 8 channels (an NCHW8c block, as_channel_last): the accumulator one 8-float vector held
// across the window (GCC's vector extensions; the select and the add act per lane as the scalar formula does, so the
// bits are the loops'). The loop above with c read at run time compiled to 8 scalar maxss with shuffles per window
// pixel there: squeezenet1_0 224²'s NCHW8c max pools (--layout auto on AVX2) took 8.7 % of its inference.
typedef float Float8 __attribute__((vector_size(8 * sizeof(float))));
template <bool kMax>
inline __attribute__((always_inline)) void pool_block8_f32(const util::PoolShape& s, bool exclusive, const float* in,
                                                           float* out) {
  static_assert(util::kChannelBlock == 8, "one vector is one NCHW8c block");
  const Float8 init = kMax ? Float8{} - FLT_MAX : Float8{};
  for (int64_t b = 0; b < s.n; ++b) {
    const float* image = in + b * s.in_h * s.in_w * 8;
    for (int64_t oh = 0; oh < s.out_h; ++oh) {
      int64_t h0, h1;
      pool_window(oh, s.in_h, s.out_h, s.k_h, s.g.stride_h, s.g.pad_top, s.adaptive, &h0, &h1);
      for (int64_t ow = 0; ow < s.out_w; ++ow, out += 8) {
        int64_t w0, w1;
        pool_window(ow, s.in_w, s.out_w, s.k_w, s.g.stride_w, s.g.pad_left, s.adaptive, &w0, &w1);
        Float8 acc = init;
        for (int64_t h = h0; h < h1; ++h) {
          for (int64_t w = w0; w < w1; ++w) {
            Float8 v;
            std::memcpy(&v, image + (h * s.in_w + w) * 8, sizeof v);
            if constexpr (kMax) {
              acc = acc > v ? acc : v;
            } else {
              acc = acc + v;
            }
          }
        }
        if (!kMax) {
          const float count = static_cast<float>((exclusive || s.adaptive) ? (h1 - h0) * (w1 - w0) : s.k_h * s.k_w);
          acc = acc / count;
        }
        std::memcpy(out, &acc, sizeof acc);
      }
    }
  }
}

// float32 compiled once more for AVX2 and AVX-512, picked at load time by the CPU (GCC's and Clang's function
// multiversioning): the library is built for the baseline x86-64 ISA, where the channel loop runs 4 floats per
// instruction. Max and sum are taken per channel, the window in the same order, so every ISA gives the same bits.
#if defined(__x86_64__) && defined(__GNUC__) && defined(__ELF__)
#define KFORGE_POOL_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define KFORGE_POOL_CLONES
#endif
KFORGE_POOL_CLONES void pool_channel_last_f32(bool is_max, const util::PoolShape& s, bool exclusive, const float* in,
                                              float* out) {
  if (s.c == 8) {
    is_max ? pool_block8_f32<true>(s, exclusive, in, out) : pool_block8_f32<false>(s, exclusive, in, out);
  } else {
    is_max ? pool_channel_last<true>(s, exclusive, in, out) : pool_channel_last<false>(s, exclusive, in, out);
  }
}

// An NCHW8c pooling as pool_channel_last runs it: for each image and block of 8 channels, an H x W image of 8
// channels in channel-last order (NHWC with N * C/8 images of 8 channels).
util::PoolShape as_channel_last(util::PoolShape s) {
  if (!s.nchw8c) return s;
  s.n *= s.c / util::kChannelBlock;
  s.c = util::kChannelBlock;
  s.nchw8c = false;
  s.channel_last = true;
  return s;
}

}  // namespace

Status batch_norm(const KernelContext& ctx, const Tensor& x, const Tensor& mean, const Tensor& variance,
                  const Tensor* scale, const Tensor* bias, bool is_test, float momentum, float epsilon,
                  const std::string& data_format, bool use_global_stats, bool trainable_statistics, Tensor* out,
                  Tensor* mean_out, Tensor* variance_out, Tensor* saved_mean, Tensor* saved_variance,
                  Tensor* reserve_space) {
  static constexpr const char* kOp = "batch_norm";
  KFORGE_RETURN_IF_ERROR(util::require_cpu(ctx, kOp));
  const DataType dtype = util::kernel_dtype(ctx, x);
  if (x.dtype != dtype) return Status::Error(kOp, ": x is ", x.dtype, ", kernel dtype ", dtype);
  Tensor expected[6];
  KFORGE_RETURN_IF_ERROR(meta::BatchNormInferMeta(x, mean, variance, scale, bias, is_test, momentum, epsilon,
                                                  data_format, use_global_stats, trainable_statistics, &expected[0],
                                                  &expected[1], &expected[2], &expected[3], &expected[4],
                                                  &expected[5]));
  Tensor* outs[6] = {out, mean_out, variance_out, saved_mean, saved_variance, reserve_space};
  const char* names[6] = {"out", "mean_out", "variance_out", "saved_mean", "saved_variance", "reserve_space"};
  for (int i = 0; i < 6; ++i) {
    if (outs[i] == nullptr) {
      if (i == 0) return Status::Error(kOp, ": output out is null");
      continue;
    }
    KFORGE_RETURN_IF_ERROR(util::require_output(outs[i], kOp, names[i]));
    if (outs[i]->dtype != expected[i].dtype) {
      return Status::Error(kOp, ": ", names[i], " is ", outs[i]->dtype, ", expected ", expected[i].dtype);
    }
    KFORGE_RETURN_IF_ERROR(util::require_dims(*outs[i], expected[i], kOp, names[i]));
  }
  for (const Tensor* t : {&mean, &variance, scale, bias}) {
    if (t != nullptr && t->dtype != dtype) {
      return Status::Error(kOp, ": statistics, scale and bias must be ", dtype, ", got ", t->dtype);
    }
  }
  bool last = false, nchw8c = false;
  KFORGE_RETURN_IF_ERROR(util::activation_layout(kOp, data_format, &last, &nchw8c));
  const int64_t n = x.dims[0], c = util::channel_count(x, last, nchw8c);
  const int64_t spatial = n * c == 0 ? 0 : x.numel() / (n * c);
  // Element (b, ch, s) lives at b * c * spatial + st.channel(ch) + s * ss (Strides4 with the spatial dims as one).
  const Strides4 st = util::strides4(last, nchw8c, c, 1, spatial);
  const int64_t ss = st.w;
  const bool global = is_test || use_global_stats;
  return util::visit_float(dtype, kOp, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* xd = x.data_as<const T>();
    T* od = out->data_as<T>();
    // Per-channel statistics first: mean_out / variance_out may alias mean / variance. The tensors' data pointers
    // are read once: per channel through the Tensors (which the stores below may alias, for all the compiler
    // knows) the few operations of a channel cost 60 cycles, most of densenet121 64²'s batch norms (2 x 2 to
    // 16 x 16 pixels a channel, up to 1,024 channels).
    const T* run_mean = mean.data_as<const T>();
    const T* run_var = variance.data_as<const T>();
    const T* scale_d = scale != nullptr ? scale->data_as<const T>() : nullptr;
    const T* bias_d = bias != nullptr ? bias->data_as<const T>() : nullptr;
    T* mean_out_d = mean_out != nullptr ? mean_out->data_as<T>() : nullptr;
    T* variance_out_d = variance_out != nullptr ? variance_out->data_as<T>() : nullptr;
    T* saved_mean_d = saved_mean != nullptr ? saved_mean->data_as<T>() : nullptr;
    T* saved_variance_d = saved_variance != nullptr ? saved_variance->data_as<T>() : nullptr;
    util::Scratch<T> stat_mean(ctx, static_cast<size_t>(c)), stat_var(ctx, static_cast<size_t>(c));
    T* sm = stat_mean.data();
    T* sv = stat_var.data();
    for (int64_t ch = 0; ch < c; ++ch) {
      if (global) {
        sm[ch] = run_mean[ch];
        sv[ch] = run_var[ch];
        continue;
      }
      double sum = 0.0, sq = 0.0;
      for (int64_t b = 0; b < n; ++b)
        for (int64_t s = 0; s < spatial; ++s) sum += static_cast<double>(xd[b * c * spatial + st.channel(ch) + s * ss]);
      const double count = static_cast<double>(n * spatial);
      const double mu = count > 0 ? sum / count : 0.0;
      for (int64_t b = 0; b < n; ++b) {
        for (int64_t s = 0; s < spatial; ++s) {
          const double d = static_cast<double>(xd[b * c * spatial + st.channel(ch) + s * ss]) - mu;
          sq += d * d;
        }
      }
      sm[ch] = static_cast<T>(mu);
      sv[ch] = static_cast<T>(count > 0 ? sq / count : 0.0);
    }
    util::Scratch<T> new_scale(ctx, static_cast<size_t>(c)), new_bias(ctx, static_cast<size_t>(c));
    T* ns = new_scale.data();
    T* nb = new_bias.data();
    const T eps = static_cast<T>(epsilon), mom = static_cast<T>(momentum);
    for (int64_t ch = 0; ch < c; ++ch) {
      const T m = sm[ch], v = sv[ch];
      const T inv_std = T(1) / std::sqrt(v + eps);
      const T channel_scale = (scale_d != nullptr ? scale_d[ch] : T(1)) * inv_std;
      ns[ch] = channel_scale;
      nb[ch] = (bias_d != nullptr ? bias_d[ch] : T(0)) - m * channel_scale;
      if (!last && !nchw8c) {
        for (int64_t b = 0; b < n; ++b) {
          for (int64_t s = 0; s < spatial; ++s) {
            const int64_t i = b * c * spatial + st.channel(ch) + s * ss;
            od[i] = xd[i] * channel_scale + nb[ch];
          }
        }
      }
      const T running_mean = run_mean[ch], running_var = run_var[ch];
      if (mean_out_d != nullptr) mean_out_d[ch] = global ? running_mean : running_mean * mom + m * (T(1) - mom);
      if (variance_out_d != nullptr) variance_out_d[ch] = global ? running_var : running_var * mom + v * (T(1) - mom);
      if (saved_mean_d != nullptr) saved_mean_d[ch] = global ? T(0) : m;
      if (saved_variance_d != nullptr) saved_variance_d[ch] = global ? T(0) : inv_std;
    }
    // NHWC: a pixel's channels are contiguous, so pixel by pixel (the same formula per element): walking one channel
    // through every pixel, c elements apart, touched a cache line per element (densenet121 64²: 29 % of the
    // inference in this kernel).
    // Few channels (4 in PP-OCR's det head): the scale and shift repeated over a block of pixels, so that the
    // inner loop is a block's 64 elements, not a pixel's c.
    if (last) {
      constexpr int64_t kBlock = 64;
      const int64_t pixels = n * spatial, per_block = c > 0 && c < kBlock ? kBlock / c : 1;
      int64_t p = 0;
      if (per_block > 1 && pixels >= per_block) {
        const size_t span = static_cast<size_t>(per_block * c);
        util::Scratch<T> block_scale(ctx, span), block_bias(ctx, span);
        for (size_t i = 0; i < span; ++i) {
          block_scale[i] = new_scale[i % static_cast<size_t>(c)];
          block_bias[i] = new_bias[i % static_cast<size_t>(c)];
        }
        for (; p + per_block <= pixels; p += per_block) {
          const T* xp = xd + p * c;
          T* op = od + p * c;
          for (size_t k = 0; k < span; ++k) op[k] = xp[k] * block_scale[k] + block_bias[k];
        }
      }
      for (; p < pixels; ++p) {
        const T* xp = xd + p * c;
        T* op = od + p * c;
        for (size_t k = 0; k < static_cast<size_t>(c); ++k) op[k] = xp[k] * new_scale[k] + new_bias[k];
      }
    }
    // NCHW8c: each image's block of 8 channels is a channel-last run of `spatial` pixels of 8, taken pixel by pixel
    // with the block's 8 scales and shifts (the same formula per element). Walking one channel through the block,
    // 8 elements apart, touched every cache line 8 times and ran no vector lanes (densenet121 64² on an AVX2
    // machine, where --layout auto picks NCHW8c: 13 % of the inference in this kernel).
    if (nchw8c) {
      constexpr int64_t kB = util::kChannelBlock;
      for (int64_t b = 0; b < n; ++b) {
        for (int64_t cb = 0; cb < c / kB; ++cb) {
          const T* __restrict bs = ns + cb * kB;
          const T* __restrict bb = nb + cb * kB;
          const int64_t base = b * c * spatial + cb * spatial * kB;
          const T* xp = xd + base;
          T* op = od + base;
          for (int64_t p = 0; p < spatial; ++p, xp += kB, op += kB) {
            for (int64_t j = 0; j < kB; ++j) op[j] = xp[j] * bs[j] + bb[j];
          }
        }
      }
    }
    return Status::OK();
  });
}

namespace {

// `fast`: float32 may run on oneDNN (onednn/pool.cc); false keeps the loops (reference.h).
Status pool2d_kernel(bool fast, const KernelContext& ctx, const Tensor& x, const IntArray& kernel_size,
                     const std::vector<int>& strides, const std::vector<int>& paddings, bool ceil_mode, bool exclusive,
                     const std::string& data_format, const std::string& pooling_type, bool global_pooling,
                     bool adaptive, const std::string& padding_algorithm, Tensor* out) {
  static constexpr const char* kOp = "pool2d";
  KFORGE_RETURN_IF_ERROR(util::require_cpu(ctx, kOp));
  KFORGE_RETURN_IF_ERROR(util::require_output(out, kOp));
  const DataType dtype = util::kernel_dtype(ctx, x);
  if (x.dtype != dtype) return Status::Error(kOp, ": x is ", x.dtype, ", kernel dtype ", dtype);
  util::PoolShape s;
  KFORGE_RETURN_IF_ERROR(util::pool_shape(kOp, x, kernel_size, strides, paddings, ceil_mode, data_format, pooling_type,
                                          global_pooling, adaptive, padding_algorithm, &s));
  KFORGE_RETURN_IF_ERROR(check_out4(kOp, *out, dtype, s.channel_last, s.nchw8c, s.n, s.c, s.out_h, s.out_w));
#if KFORGE_KERNELS_ONEDNN
  if (fast && dtype == DataType::kFloat32 && !s.channel_last && !s.nchw8c) {
    bool handled = false;
    Status status = onednn::pool2d(x, s, exclusive, out, &handled);
    if (handled) return status;
  }
#endif
  const Strides4 is = util::strides4(s.channel_last, s.nchw8c, s.c, s.in_h, s.in_w);
  const Strides4 os = util::strides4(s.channel_last, s.nchw8c, s.c, s.out_h, s.out_w);
  return util::visit_float(dtype, kOp, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* xd = x.data_as<const T>();
    T* od = out->data_as<T>();
    if (fast && (s.channel_last || s.nchw8c)) {
      const util::PoolShape hwc = as_channel_last(s);
      if constexpr (std::is_same_v<T, float>) {
        pool_channel_last_f32(s.is_max, hwc, exclusive, xd, od);
      } else {
        s.is_max ? pool_channel_last<true>(hwc, exclusive, xd, od) : pool_channel_last<false>(hwc, exclusive, xd, od);
      }
      return Status::OK();
    }
    for (int64_t b = 0; b < s.n; ++b) {
      for (int64_t ch = 0; ch < s.c; ++ch) {
        const T* plane = xd + b * is.n + is.channel(ch);
        for (int64_t oh = 0; oh < s.out_h; ++oh) {
          int64_t h0, h1;
          pool_window(oh, s.in_h, s.out_h, s.k_h, s.g.stride_h, s.g.pad_top, s.adaptive, &h0, &h1);
          for (int64_t ow = 0; ow < s.out_w; ++ow) {
            int64_t w0, w1;
            pool_window(ow, s.in_w, s.out_w, s.k_w, s.g.stride_w, s.g.pad_left, s.adaptive, &w0, &w1);
            T acc = s.is_max ? static_cast<T>(-FLT_MAX) : T(0);
            for (int64_t h = h0; h < h1; ++h) {
              for (int64_t w = w0; w < w1; ++w) {
                const T v = plane[h * is.h + w * is.w];
                acc = s.is_max ? (acc > v ? acc : v) : acc + v;
              }
            }
            if (!s.is_max) {
              const int64_t count = (exclusive || s.adaptive) ? (h1 - h0) * (w1 - w0) : s.k_h * s.k_w;
              acc /= static_cast<T>(count);
            }
            od[b * os.n + os.channel(ch) + oh * os.h + ow * os.w] = acc;
          }
        }
      }
    }
    return Status::OK();
  });
}

}  // namespace

Status pool2d(const KernelContext& ctx, const Tensor& x, const IntArray& kernel_size, const std::vector<int>& strides,
              const std::vector<int>& paddings, bool ceil_mode, bool exclusive, const std::string& data_format,
              const std::string& pooling_type, bool global_pooling, bool adaptive,
              const std::string& padding_algorithm, Tensor* out) {
  return pool2d_kernel(true, ctx, x, kernel_size, strides, paddings, ceil_mode, exclusive, data_format, pooling_type,
                       global_pooling, adaptive, padding_algorithm, out);
}

Status reference::pool2d(const KernelContext& ctx, const Tensor& x, const IntArray& kernel_size,
                         const std::vector<int>& strides, const std::vector<int>& paddings, bool ceil_mode,
                         bool exclusive, const std::string& data_format, const std::string& pooling_type,
                         bool global_pooling, bool adaptive, const std::string& padding_algorithm, Tensor* out) {
  return pool2d_kernel(false, ctx, x, kernel_size, strides, paddings, ceil_mode, exclusive, data_format, pooling_type,
                       global_pooling, adaptive, padding_algorithm, out);
}

Status nearest_interp(const KernelContext& ctx, const Tensor& x, const Tensor* out_size, TensorList size_tensor,
                      const Tensor* scale_tensor, const std::string& data_format, int out_d, int out_h, int out_w,
                      const std::vector<float>& scale, const std::string& interp_method, bool align_corners,
                      int align_mode, Tensor* output) {
  (void)out_d;
  (void)interp_method;  // the op is nearest whatever the attribute says, as in Paddle
  (void)align_mode;
  static constexpr const char* kOp = "nearest_interp";
  KFORGE_RETURN_IF_ERROR(util::require_cpu(ctx, kOp));
  if (x.ndim != 4) return Status::Error(kOp, ": x must be 4-D, got ", x.dims_string());
  KFORGE_RETURN_IF_ERROR(util::require_output(output, kOp, "output"));
  const DataType dtype = util::kernel_dtype(ctx, x);
  if (x.dtype != dtype) return Status::Error(kOp, ": x is ", x.dtype, ", kernel dtype ", dtype);
  util::InterpShape s;
  KFORGE_RETURN_IF_ERROR(
      util::interp_shape(kOp, x, out_size, size_tensor, scale_tensor, data_format, out_h, out_w, scale, &s));
  if (s.out_h < 0) return Status::Error(kOp, ": the output size tensors have no data");
  KFORGE_RETURN_IF_ERROR(check_out4(kOp, *output, dtype, s.channel_last, false, s.n, s.c, s.out_h, s.out_w));
  // Paddle's ratios: (in - 1) / (out - 1) with align_corners, else 1 / scale when a scale was given, else in / out.
  auto ratio = [align_corners](int64_t in, int64_t out, float scale_value) {
    if (out <= 1) return 0.f;
    if (align_corners) return static_cast<float>(in - 1) / static_cast<float>(out - 1);
    return scale_value > 0.f ? static_cast<float>(1. / scale_value) : static_cast<float>(in) / static_cast<float>(out);
  };
  const float ratio_h = ratio(s.in_h, s.out_h, s.scale_h), ratio_w = ratio(s.in_w, s.out_w, s.scale_w);
  auto source = [align_corners](float r, int64_t o, int64_t in) {
    int64_t i = align_corners ? static_cast<int64_t>(r * static_cast<float>(o) + 0.5f)
                              : static_cast<int64_t>(r * static_cast<float>(o));
    return i < in ? i : in - 1;
  };
  const Strides4 is = util::strides4(s.channel_last, false, s.c, s.in_h, s.in_w);
  const Strides4 os = util::strides4(s.channel_last, false, s.c, s.out_h, s.out_w);
  return util::visit_plain(dtype, kOp, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* xd = x.data_as<const T>();
    T* od = output->data_as<T>();
    // Each output column's source column, once; an output row whose source row is the previous one's (every
    // second row of a 2x upsample) is a copy of that row.
    util::Scratch<int64_t> source_w(ctx, static_cast<size_t>(s.out_w));
    for (int64_t ow = 0; ow < s.out_w; ++ow) source_w[static_cast<size_t>(ow)] = source(ratio_w, ow, s.in_w);
    const int64_t planes = s.channel_last ? 1 : s.c;  // NCHW: each channel's plane on its own; NHWC: pixels of c
    const int64_t pixel = s.channel_last ? s.c : 1;
    for (int64_t b = 0; b < s.n; ++b) {
      for (int64_t p = 0; p < planes; ++p) {
        const T* in = xd + b * is.n + p * is.c;
        T* out = od + b * os.n + p * os.c;
        for (int64_t oh = 0; oh < s.out_h; ++oh) {
          const int64_t ih = source(ratio_h, oh, s.in_h);
          T* row = out + oh * os.h;
          if (oh > 0 && ih == source(ratio_h, oh - 1, s.in_h)) {
            std::memcpy(row, row - os.h, static_cast<size_t>(s.out_w * pixel) * sizeof(T));
            continue;
          }
          const T* in_row = in + ih * is.h;
          for (int64_t ow = 0; ow < s.out_w; ++ow) {
            const T* from = in_row + source_w[static_cast<size_t>(ow)] * is.w;
            for (int64_t ch = 0; ch < pixel; ++ch) row[ow * pixel + ch] = from[ch];
          }
        }
      }
    }
    return Status::OK();
  });
}

}  // namespace kforge::kernels
