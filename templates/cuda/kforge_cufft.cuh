// Paddle's fft_r2c and the complex values after it on the GPU (kforge compile --target cuda; issue 34: GraphNet's
// FNet and TimesNet), computing what kernels/complex.cc computes on the CPU:
//   - fft_r2c: cuFFT's real-to-complex transform (R2C / D2Z) over the transformed axes, the last of `axes` the
//     real-to-complex one. cuFFT wants the transformed axes last and contiguous, so a program whose axes are not
//     the last ones in order first permutes x into the call's scratch (the untransformed axes first, in order, then
//     `axes` in their order). cuFFT writes the one-sided spectrum into the scratch; one kernel then writes `out` in
//     x's axis order: the normalization's factor, the conjugate for an inverse transform (the inverse transform of
//     real data is the conjugate of the forward one), and without `onesided` the other half of the last axis as
//     the conjugates of the mirrored frequencies (Paddle's FFTFillConj). The plan is made by the first call with
//     new dims (the batch and the transformed dims) and kept: none is made per call.
//   - complex_part: real or abs (std::abs of std::complex: hypot) of a complex64 / complex128 tensor, which holds
//     interleaved (re, im) pairs of float / double as Paddle's.
// Links against cuFFT (-lcufft).
#ifndef KFORGE_CUFFT_CUH_
#define KFORGE_CUFFT_CUH_

#include <cuda_runtime.h>
#include <cufft.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "kforge_runtime.h"

namespace kforge::cuda_fft {

constexpr int kMaxRank = 9;  // kforge::kMaxRank of the runtime
constexpr int kThreads = 256;

/// Paddle's normalization: "backward" scales the inverse transform by 1 / n, "forward" the forward one, "ortho"
/// both by 1 / sqrt(n) (n: the product of the transformed dims).
enum class Norm : int { kBackward = 0, kForward = 1, kOrtho = 2 };

/// One fft_r2c call: x's dims, the transformed axes (non-negative, Paddle's order: the last is the real-to-complex
/// one), the normalization and direction, and whether out holds only the n / 2 + 1 non-negative frequencies of the
/// last axis.
struct FftShape {
  int rank = 0;
  int64_t dims[kMaxRank] = {};
  int count = 0;
  int axes[kMaxRank] = {};
  Norm norm = Norm::kBackward;
  bool forward = true;
  bool onesided = true;
};

/// What a shape implies: x's axes in the order cuFFT reads them (perm[p] is x's axis at place p), the batch (the
/// untransformed dims' product), the transformed dims' product, the last axis's one-sided length, the spectrum's
/// complex elements, whether x must be permuted first, and the factor.
struct FftLayout {
  int perm[kMaxRank] = {};
  int64_t batch = 1, signal = 1, half = 1, spectrum = 0, numel = 1;
  bool permuted = false;
  double factor = 1;
};

inline FftLayout fft_layout(const FftShape& s) {
  FftLayout l;
  bool transformed[kMaxRank] = {};
  for (int i = 0; i < s.count; ++i) transformed[s.axes[i]] = true;
  int p = 0;
  for (int a = 0; a < s.rank; ++a) {
    l.numel *= s.dims[a];
    if (!transformed[a]) {
      l.perm[p++] = a;
      l.batch *= s.dims[a];
    }
  }
  for (int i = 0; i < s.count; ++i) {
    l.perm[p++] = s.axes[i];
    l.signal *= s.dims[s.axes[i]];
  }
  for (int a = 0; a < s.rank; ++a) l.permuted = l.permuted || l.perm[a] != a;
  const int64_t last = s.count > 0 ? s.dims[s.axes[s.count - 1]] : 1;
  l.half = last / 2 + 1;
  l.spectrum = last == 0 ? 0 : l.batch * (l.signal / last) * l.half;
  if (s.norm == Norm::kOrtho) {
    l.factor = 1.0 / std::sqrt(static_cast<double>(l.signal));
  } else if (s.forward ? s.norm == Norm::kForward : s.norm != Norm::kForward) {
    l.factor = 1.0 / static_cast<double>(l.signal);
  }
  return l;
}

/// The scratch bytes of a call: the one-sided spectrum (complex of T), then x permuted (T) where it must be.
template <typename T>
size_t fft_scratch_bytes(const FftShape& s) {
  const FftLayout l = fft_layout(s);
  return static_cast<size_t>(l.spectrum) * 2 * sizeof(T) + (l.permuted ? static_cast<size_t>(l.numel) * sizeof(T) : 0);
}

/// A cuFFT plan kept across calls: made again only when the batch or the transformed dims change.
class Plan {
 public:
  Plan() = default;
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
  ~Plan() {
    if (made_) static_cast<void>(cufftDestroy(handle_));
  }

  kforge::Status prepare(const FftShape& s, const FftLayout& l, cufftType type) {
    long long key[kMaxRank + 2] = {l.batch, static_cast<long long>(type)};
    for (int i = 0; i < s.count; ++i) key[2 + i] = s.dims[s.axes[i]];
    bool same = made_ && key_count_ == s.count + 2;
    for (int i = 0; same && i < key_count_; ++i) same = key_[i] == key[i];
    if (same) return kforge::Status::OK();
    if (made_) static_cast<void>(cufftDestroy(handle_));
    made_ = false;
    if (cufftResult r = cufftCreate(&handle_); r != CUFFT_SUCCESS) return failed("cufftCreate", r);
    made_ = true;
    // A transformed axis of length 1 (FNet's fftn over its batch of 1) is the identity: left out of the plan, it
    // changes no element's place in x or in the spectrum.
    long long n[kMaxRank] = {};
    int rank = 0;
    for (int i = 0; i < s.count; ++i) {
      const long long d = s.dims[s.axes[i]];
      if (d != 1 || i == s.count - 1) n[rank++] = d;
    }
    size_t work = 0;
    if (cufftResult r = cufftMakePlanMany64(handle_, rank, n, nullptr, 1, 0, nullptr, 1, 0, type, l.batch, &work);
        r != CUFFT_SUCCESS) {
      return failed("cufftMakePlanMany64", r);
    }
    key_count_ = s.count + 2;
    for (int i = 0; i < key_count_; ++i) key_[i] = key[i];
    return kforge::Status::OK();
  }
  cufftHandle handle() const { return handle_; }

  static kforge::Status failed(const char* what, cufftResult r) {
    return kforge::Status::Error("fft_r2c: ", what, " failed (cufftResult ", static_cast<int>(r), ")");
  }

 private:
  cufftHandle handle_ = 0;
  bool made_ = false;
  int key_count_ = 0;
  long long key_[kMaxRank + 2] = {};
};

namespace detail {

inline unsigned blocks_for(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 65535 ? (b > 0 ? b : 1) : 65535);
}

// xt (x's axes in perm's order, row-major) from x.
template <typename T>
__global__ void permute_in(FftShape s, FftLayout l, const T* __restrict__ x, T* __restrict__ xt) {
  int64_t stride[kMaxRank];
  int64_t acc = 1;
  for (int a = s.rank - 1; a >= 0; --a) {
    stride[a] = acc;
    acc *= s.dims[a];
  }
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < l.numel;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t rest = i, from = 0;
    for (int p = s.rank - 1; p >= 0; --p) {
      const int64_t d = s.dims[l.perm[p]];
      from += (rest % d) * stride[l.perm[p]];
      rest /= d;
    }
    xt[i] = x[from];
  }
}

// out (x's axis order, the last transformed axis n / 2 + 1 long when onesided, else n) from the one-sided spectrum
// (perm's order, the last axis n / 2 + 1 long): the factor, the conjugate of an inverse transform, and the mirrored
// conjugates of the other half.
template <typename T, typename C>
__global__ void finish(FftShape s, FftLayout l, const C* __restrict__ spectrum, T* __restrict__ out, int64_t count) {
  const int last = s.axes[s.count - 1];
  bool transformed[kMaxRank] = {};
  for (int i = 0; i < s.count; ++i) transformed[s.axes[i]] = true;
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < count;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t coord[kMaxRank];
    int64_t rest = e;
    for (int a = s.rank - 1; a >= 0; --a) {
      const int64_t d = a == last && s.onesided ? l.half : s.dims[a];
      coord[a] = rest % d;
      rest /= d;
    }
    const bool mirror = coord[last] >= l.half;
    if (mirror) {
      for (int a = 0; a < s.rank; ++a) {
        if (transformed[a]) coord[a] = (s.dims[a] - coord[a]) % s.dims[a];
      }
    }
    int64_t at = 0;
    for (int p = 0; p < s.rank; ++p) {
      const int a = l.perm[p];
      at = at * (a == last ? l.half : s.dims[a]) + coord[a];
    }
    const C v = spectrum[at];
    const T sign = mirror != !s.forward ? T(-1) : T(1);
    out[2 * e] = static_cast<T>(v.x * l.factor);
    out[2 * e + 1] = static_cast<T>(sign * v.y * l.factor);
  }
}

template <typename T>
__global__ void complex_part_kernel(int part, const T* __restrict__ z, T* __restrict__ y, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const T re = z[2 * i], im = z[2 * i + 1];
    y[i] = part == 0 ? re : hypot(re, im);
  }
}

}  // namespace detail

/// fft_r2c of x (float or double) into out (interleaved complex of T), through `scratch` (fft_scratch_bytes<T>).
template <typename T>
kforge::Status fft_r2c(Plan& plan, const FftShape& s, const T* x, T* out, void* scratch, cudaStream_t stream) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "fft_r2c takes float or double");
  using C = std::conditional_t<std::is_same_v<T, float>, cufftComplex, cufftDoubleComplex>;
  const FftLayout l = fft_layout(s);
  if (s.count < 1 || s.count > 3) return kforge::Status::Error("fft_r2c: cuFFT transforms 1 to 3 axes, not ", s.count);
  if (l.signal == 0) return kforge::Status::Error("fft_r2c: the transformed axes must not be empty");
  if (l.batch == 0) return kforge::Status::OK();
  C* spectrum = static_cast<C*>(scratch);
  T* in = const_cast<T*>(x);  // cuFFT's out-of-place real-to-complex transform does not write its input
  if (l.permuted) {
    in = reinterpret_cast<T*>(spectrum + l.spectrum);
    detail::permute_in<T><<<detail::blocks_for(l.numel), kThreads, 0, stream>>>(s, l, x, in);
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) {
      return kforge::Status::Error("fft_r2c: ", cudaGetErrorString(e));
    }
  }
  constexpr bool kDouble = std::is_same_v<T, double>;
  KFORGE_RETURN_IF_ERROR(plan.prepare(s, l, kDouble ? CUFFT_D2Z : CUFFT_R2C));
  if (cufftResult r = cufftSetStream(plan.handle(), stream); r != CUFFT_SUCCESS) return Plan::failed("cufftSetStream", r);
  cufftResult r;
  if constexpr (kDouble) {
    r = cufftExecD2Z(plan.handle(), in, spectrum);
  } else {
    r = cufftExecR2C(plan.handle(), in, spectrum);
  }
  if (r != CUFFT_SUCCESS) return Plan::failed(kDouble ? "cufftExecD2Z" : "cufftExecR2C", r);
  const int64_t last = s.dims[s.axes[s.count - 1]];
  const int64_t count = l.numel / last * (s.onesided ? l.half : last);
  detail::finish<T, C><<<detail::blocks_for(count), kThreads, 0, stream>>>(s, l, spectrum, out, count);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return kforge::Status::Error("fft_r2c: ", cudaGetErrorString(e));
  return kforge::Status::OK();
}

/// Which part of a complex tensor complex_part writes.
enum class Part : int { kReal = 0, kAbs = 1 };

/// y[i] = the real part or the magnitude of z's i-th (re, im) pair, for n pairs.
template <typename T>
cudaError_t complex_part(Part part, const T* z, T* y, int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  detail::complex_part_kernel<T><<<detail::blocks_for(n), kThreads, 0, stream>>>(static_cast<int>(part), z, y, n);
  return cudaGetLastError();
}

}  // namespace kforge::cuda_fft

#endif  // KFORGE_CUFFT_CUH_
