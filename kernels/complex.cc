// The complex ops GraphNet's models use (issue 34): fft_r2c (FNet's fftn, TimesNet's rfft), real and abs of its
// complex result. complex64 / complex128 tensors hold interleaved (re, im) pairs of float / double, as Paddle's.
//
// fft_r2c computes what Paddle's CPU kernel (pocketfft's r2c) does: a real-to-complex transform of x along the last
// of `axes` (its n / 2 + 1 non-negative frequencies), then a complex transform along each other axis, e^(-2 pi i j k
// / n) for `forward` (e^(+...) otherwise), times the normalization's factor; without `onesided`, the other half of
// the last axis is filled with the conjugates of the mirrored frequencies (Paddle's FFTFillConj). Each line is a
// direct DFT summed in double over a twiddle table of exact angles (O(n^2) a line: the models' lines are short), so
// the result is at least as close to the exact transform as pocketfft's float arithmetic.
#include <cmath>
#include <complex>
#include <vector>

#include "kernel_util.h"
#include "kforge_kernels.h"
#include "math_util.h"

namespace kforge::kernels {

namespace {

using Cd = std::complex<double>;

// The DFT of every line along the middle axis of a [outer, n, inner] array, in place; twiddle[t] = e^(-2 pi i t / n),
// conjugated for sign -1.
void dft_lines(std::vector<Cd>& buf, int64_t outer, int64_t n, int64_t inner, double sign,
               const std::vector<Cd>& twiddle) {
  std::vector<Cd> line(static_cast<size_t>(n)), result(static_cast<size_t>(n));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      Cd* base = buf.data() + o * n * inner + i;
      for (int64_t j = 0; j < n; ++j) line[static_cast<size_t>(j)] = base[j * inner];
      for (int64_t k = 0; k < n; ++k) {
        Cd sum = 0;
        int64_t step = 0;  // (j * k) mod n, the twiddle's index
        for (int64_t j = 0; j < n; ++j) {
          const Cd w = twiddle[static_cast<size_t>(step)];
          sum += line[static_cast<size_t>(j)] * Cd(w.real(), sign * w.imag());
          step += k;
          if (step >= n) step -= n;
        }
        result[static_cast<size_t>(k)] = sum;
      }
      for (int64_t k = 0; k < n; ++k) base[k * inner] = result[static_cast<size_t>(k)];
    }
  }
}

// e^(-2 pi i t / n) for t in [0, n).
std::vector<Cd> twiddles(int64_t n) {
  std::vector<Cd> t(static_cast<size_t>(n));
  const double pi = std::acos(-1.0);
  for (int64_t k = 0; k < n; ++k) {
    const double a = 2.0 * pi * static_cast<double>(k) / static_cast<double>(n);
    t[static_cast<size_t>(k)] = Cd(std::cos(a), -std::sin(a));
  }
  return t;
}

KFORGE_COLD Status fft_error(const char* what, const Tensor& x) {
  return Status::Error("fft_r2c: ", what, " (x ", x.dims_string(), ")");
}

}  // namespace

Status fft_r2c(const KernelContext& ctx, const Tensor& x, const std::vector<int64_t>& axes,
               const std::string& normalization, bool forward, bool onesided, Tensor* out) {
  KFORGE_RETURN_IF_ERROR(util::require_output(out, "fft_r2c"));
  Tensor expected;
  KFORGE_RETURN_IF_ERROR(meta::FFTR2CInferMeta(x, axes, normalization, forward, onesided, &expected));
  if (out->dtype != expected.dtype) return Status::Error("fft_r2c: out must be ", expected.dtype, ", got ", out->dtype);
  KFORGE_RETURN_IF_ERROR(util::require_dims(*out, expected, "fft_r2c"));
  const int32_t rank = x.ndim;
  std::vector<int64_t> ax;
  for (int64_t a : axes) ax.push_back(a < 0 ? a + rank : a);
  const int64_t last = ax.back();
  // The one-sided result [.., n / 2 + 1, ..] in double; the last axis first (real to complex), then the others.
  std::vector<int64_t> dims(x.dims, x.dims + rank);
  const int64_t n_last = dims[static_cast<size_t>(last)];
  std::vector<int64_t> half = dims;
  half[static_cast<size_t>(last)] = n_last / 2 + 1;
  auto span = [&](const std::vector<int64_t>& d, int64_t axis, int64_t* outer, int64_t* inner) {
    *outer = 1;
    *inner = 1;
    for (int64_t i = 0; i < axis; ++i) *outer *= d[static_cast<size_t>(i)];
    for (int64_t i = axis + 1; i < rank; ++i) *inner *= d[static_cast<size_t>(i)];
  };
  int64_t signal = 1;
  for (int64_t a : ax) signal *= dims[static_cast<size_t>(a)];
  if (signal == 0) return fft_error("the transformed axes must not be empty", x);
  // Paddle's get_norm_from_string: "backward" scales the inverse transform by 1 / n, "forward" the forward one,
  // "ortho" both by 1 / sqrt(n).
  double factor = 1.0;
  if (normalization == "ortho") {
    factor = 1.0 / std::sqrt(static_cast<double>(signal));
  } else if (forward ? normalization == "forward" : normalization != "forward") {
    factor = 1.0 / static_cast<double>(signal);
  }
  const double sign = forward ? 1.0 : -1.0;  // twiddles() holds e^(-...): the inverse conjugates them
  const DataType real_dtype = util::kernel_dtype(ctx, x);
  return util::visit_float(real_dtype, "fft_r2c", [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    int64_t outer = 0, inner = 0;
    span(dims, last, &outer, &inner);
    const int64_t h = half[static_cast<size_t>(last)];
    std::vector<Cd> buf(static_cast<size_t>(outer * h * inner));
    // The real-to-complex step: each line of n real values to its h first frequencies.
    {
      const T* xs = x.data_as<const T>();
      std::vector<Cd> line(static_cast<size_t>(n_last)), result(static_cast<size_t>(h));
      const std::vector<Cd> tw = twiddles(n_last);
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
          for (int64_t j = 0; j < n_last; ++j) {
            line[static_cast<size_t>(j)] = static_cast<double>(xs[(o * n_last + j) * inner + i]);
          }
          for (int64_t k = 0; k < h; ++k) {
            Cd sum = 0;
            int64_t step = 0;
            for (int64_t j = 0; j < n_last; ++j) {
              const Cd w = tw[static_cast<size_t>(step)];
              sum += line[static_cast<size_t>(j)] * Cd(w.real(), sign * w.imag());
              step += k;
              if (step >= n_last) step -= n_last;
            }
            buf[static_cast<size_t>((o * h + k) * inner + i)] = sum;
          }
        }
      }
    }
    for (size_t a = 0; a + 1 < ax.size(); ++a) {
      const int64_t n = half[static_cast<size_t>(ax[a])];
      span(half, ax[a], &outer, &inner);
      dft_lines(buf, outer, n, inner, sign, twiddles(n));
    }
    T* o = out->data_as<T>();  // (re, im) pairs
    if (onesided) {
      for (size_t e = 0; e < buf.size(); ++e) {
        o[2 * e] = static_cast<T>(buf[e].real() * factor);
        o[2 * e + 1] = static_cast<T>(buf[e].imag() * factor);
      }
      return Status::OK();
    }
    // The full last axis: index k < h from the one-sided result, k >= h the conjugate of the frequency mirrored
    // along every transformed axis ((n - i) mod n), as FFTFillConj.
    std::vector<bool> transformed(static_cast<size_t>(rank), false);
    for (int64_t a : ax) transformed[static_cast<size_t>(a)] = true;
    std::vector<int64_t> idx(static_cast<size_t>(rank), 0);
    const int64_t total = out->numel();
    for (int64_t e = 0; e < total; ++e) {
      const bool mirror = idx[static_cast<size_t>(last)] >= h;
      int64_t src = 0;
      for (int32_t d = 0; d < rank; ++d) {
        int64_t i = idx[static_cast<size_t>(d)];
        if (mirror && transformed[static_cast<size_t>(d)]) {
          const int64_t n = dims[static_cast<size_t>(d)];
          i = (n - i) % n;
        }
        src = src * half[static_cast<size_t>(d)] + i;
      }
      const Cd v = buf[static_cast<size_t>(src)];
      o[2 * e] = static_cast<T>(v.real() * factor);
      o[2 * e + 1] = static_cast<T>((mirror ? -v.imag() : v.imag()) * factor);
      for (int32_t d = rank - 1; d >= 0; --d) {
        if (++idx[static_cast<size_t>(d)] < dims[static_cast<size_t>(d)]) break;
        idx[static_cast<size_t>(d)] = 0;
      }
    }
    return Status::OK();
  });
}

namespace {

// The real dtype of a complex one's parts.
DataType part_dtype(DataType complex) {
  return complex == DataType::kComplex64 ? DataType::kFloat32 : DataType::kFloat64;
}

template <typename F>
Status complex_to_real(const Tensor& x, Tensor* out, const char* op, F&& part) {
  KFORGE_RETURN_IF_ERROR(util::require_output(out, op));
  if (x.dtype != DataType::kComplex64 && x.dtype != DataType::kComplex128) {
    return Status::Error(op, ": x must be complex64 or complex128, got ", x.dtype);
  }
  if (out->dtype != part_dtype(x.dtype)) {
    return Status::Error(op, ": out must be ", part_dtype(x.dtype), " for x ", x.dtype, ", got ", out->dtype);
  }
  KFORGE_RETURN_IF_ERROR(util::require_dims(*out, x, op));
  return util::visit_float(out->dtype, op, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* xs = x.data_as<const T>();
    T* o = out->data_as<T>();
    for (int64_t i = 0, n = x.numel(); i < n; ++i) o[i] = part(xs[2 * i], xs[2 * i + 1]);
    return Status::OK();
  });
}

}  // namespace

Status real(const KernelContext& ctx, const Tensor& x, Tensor* out) {
  (void)ctx;
  return complex_to_real(x, out, "real", [](auto re, auto) { return re; });
}

namespace util {

Status complex_abs(const Tensor& x, Tensor* out) {
  // Paddle's CPU abs of complex<T>: std::abs(std::complex<T>), hypot in T.
  return complex_to_real(x, out, "abs", [](auto re, auto im) { return std::abs(std::complex<decltype(re)>(re, im)); });
}

}  // namespace util

}  // namespace kforge::kernels
