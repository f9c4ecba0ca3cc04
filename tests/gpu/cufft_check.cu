// GPU check of templates/cuda/kforge_cufft.cuh's fft_r2c against a direct DFT in double on the host, real and
// imaginary parts (Paddle's fixtures read the complex result through real and abs only, which hide the inverse
// transform's conjugate): axes last or not (x permuted first), 1 to 3 axes, every normalization, forward and
// inverse, one- and two-sided, float and double, a second call of a plan with new dims. Prints the largest error of
// each case relative to the largest magnitude; exit 1 when one exceeds 1e-5 (float) or 1e-12 (double).
//   nvcc -arch=sm_90 -std=c++17 -O2 -I templates/cuda -I templates/runtime tests/gpu/cufft_check.cu -lcufft
//        -o cufft_check && ./cufft_check      (one command line)
#include <cmath>
#include <complex>
#include <cstdio>
#include <random>
#include <vector>

#include "kforge_cufft.cuh"

namespace {

using kforge::cuda_fft::FftShape;
using kforge::cuda_fft::Norm;
using Cd = std::complex<double>;

// The exact transform: the full complex DFT of x over the transformed axes (every frequency), then the factor and,
// one-sided, the last axis cut to n / 2 + 1. Out in x's axis order.
std::vector<Cd> reference(const FftShape& s, const std::vector<double>& x) {
  std::vector<Cd> a(x.begin(), x.end());
  const double pi = std::acos(-1.0);
  for (int i = 0; i < s.count; ++i) {
    const int axis = s.axes[i];
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; ++d) outer *= s.dims[d];
    for (int d = axis + 1; d < s.rank; ++d) inner *= s.dims[d];
    const int64_t n = s.dims[axis];
    std::vector<Cd> b(a.size());
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t in = 0; in < inner; ++in) {
        for (int64_t k = 0; k < n; ++k) {
          Cd sum = 0;
          for (int64_t j = 0; j < n; ++j) {
            const double angle = (s.forward ? -2 : 2) * pi * static_cast<double>((j * k) % n) / static_cast<double>(n);
            sum += a[(o * n + j) * inner + in] * Cd(std::cos(angle), std::sin(angle));
          }
          b[(o * n + k) * inner + in] = sum;
        }
      }
    }
    a.swap(b);
  }
  const kforge::cuda_fft::FftLayout l = kforge::cuda_fft::fft_layout(s);
  const int last = s.axes[s.count - 1];
  std::vector<Cd> out;
  std::vector<int64_t> c(static_cast<size_t>(s.rank), 0);
  for (size_t e = 0; e < a.size(); ++e) {
    int64_t rest = static_cast<int64_t>(e);
    for (int d = s.rank - 1; d >= 0; --d) {
      c[static_cast<size_t>(d)] = rest % s.dims[d];
      rest /= s.dims[d];
    }
    if (!s.onesided || c[static_cast<size_t>(last)] < l.half) out.push_back(a[e] * l.factor);
  }
  return out;
}

template <typename T>
bool check(const char* name, FftShape s, kforge::cuda_fft::Plan& plan, double bound) {
  const kforge::cuda_fft::FftLayout l = kforge::cuda_fft::fft_layout(s);
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<T> x(static_cast<size_t>(l.numel));
  std::vector<double> xd(x.size());
  for (size_t i = 0; i < x.size(); ++i) xd[i] = static_cast<double>(x[i] = static_cast<T>(u(rng)));
  const std::vector<Cd> want = reference(s, xd);
  T *dx = nullptr, *dout = nullptr;
  void* scratch = nullptr;
  cudaMalloc(&dx, x.size() * sizeof(T));
  cudaMalloc(&dout, want.size() * 2 * sizeof(T));
  cudaMalloc(&scratch, kforge::cuda_fft::fft_scratch_bytes<T>(s));
  cudaMemcpy(dx, x.data(), x.size() * sizeof(T), cudaMemcpyHostToDevice);
  const kforge::Status status = kforge::cuda_fft::fft_r2c<T>(plan, s, dx, dout, scratch, nullptr);
  std::vector<T> got(want.size() * 2);
  cudaMemcpy(got.data(), dout, got.size() * sizeof(T), cudaMemcpyDeviceToHost);
  cudaFree(dx);
  cudaFree(dout);
  cudaFree(scratch);
  if (!status.ok()) {
    std::printf("FAIL %s: %s\n", name, status.message().c_str());
    return false;
  }
  double err = 0, scale = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    err = std::max(err, std::abs(Cd(got[2 * i], got[2 * i + 1]) - want[i]));
    scale = std::max(scale, std::abs(want[i]));
  }
  const bool ok = err <= bound * scale;
  std::printf("%s %s: max error %.3g of %.3g\n", ok ? "PASS" : "FAIL", name, err / scale, scale);
  return ok;
}

}  // namespace

int main() {
  bool ok = true;
  kforge::cuda_fft::Plan p1, p2, p3, p4, p5, p6;
  // TimesNet's rfft along axis 1 of [batch, 12, 4] (x permuted), then the same plan with a new batch.
  ok &= check<float>("rfft axis 1 [3,12,4]", {3, {3, 12, 4}, 1, {1}, Norm::kBackward, true, true}, p1, 1e-5);
  ok &= check<float>("rfft axis 1 [5,12,4] (new dims)", {3, {5, 12, 4}, 1, {1}, Norm::kBackward, true, true}, p1, 1e-5);
  // FNet's fftn over every axis, two-sided.
  ok &= check<float>("fftn [2,5,6] two-sided", {3, {2, 5, 6}, 3, {0, 1, 2}, Norm::kBackward, true, false}, p2, 1e-5);
  // FNet's shape: a transformed axis of length 1 (left out of the plan).
  ok &= check<float>("fftn [1,21,768] two-sided", {3, {1, 21, 768}, 3, {0, 1, 2}, Norm::kBackward, true, false}, p2,
                     1e-5);
  ok &= check<double>("rfft2 ortho float64 [2,5,7]", {3, {2, 5, 7}, 2, {1, 2}, Norm::kOrtho, true, true}, p3, 1e-12);
  ok &= check<float>("ihfft backward [3,9]", {2, {3, 9}, 1, {1}, Norm::kBackward, false, true}, p4, 1e-5);
  ok &= check<float>("ihfft forward [3,9]", {2, {3, 9}, 1, {1}, Norm::kForward, false, true}, p5, 1e-5);
  // Axes out of order, two-sided inverse, odd lengths.
  ok &= check<double>("axes [2,0] inverse two-sided [3,4,7]", {3, {3, 4, 7}, 2, {2, 0}, Norm::kForward, false, false},
                      p6, 1e-12);
  std::printf("%s\n", ok ? "all passed" : "FAILED");
  return ok ? 0 : 1;
}
