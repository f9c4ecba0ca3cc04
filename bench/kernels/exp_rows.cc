// kforge::math::exp(float) over one softmax-sized row (18384 floats, PP-OCRv5 rec's CTC head) in the blocked,
// vectorised loop form of the fused code and the kernel library (AVX2 clone, no FMA), for rows whose results are
// normal (x near -5 and -80), partly subnormal (x around -87, where n = -126) and subnormal or 0 (below -88).
// The best of 200 runs per row, in microseconds (BENCHMARKS.md, "PP-OCRv5 rec: subnormal exps ...").
//
//   g++ -std=c++17 -O2 -I templates/runtime bench/kernels/exp_rows.cc -o /tmp/exp_rows && /tmp/exp_rows
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "kforge_math.h"

namespace {

constexpr int kRow = 18384;

KFORGE_MATH_CLONES void exp_row(const float* __restrict x, float* __restrict y) {
  for (int j0 = 0; j0 < kRow; j0 += 16) {
    for (int j = j0; j < j0 + 16; ++j) y[j] = kforge::math::exp(x[j]);
  }
}

}  // namespace

int main() {
  std::vector<float> x(kRow), y(kRow);
  for (const float base : {-5.0f, -80.0f, -95.0f, -105.0f, -200.0f}) {
    for (int i = 0; i < kRow; ++i) x[i] = base + static_cast<float>(i % 97) * 0.137f;  // [base, base + 13.2]
    double best = 1e30;
    for (int r = 0; r < 200; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      exp_row(x.data(), y.data());
      const auto t1 = std::chrono::steady_clock::now();
      best = std::min(best, std::chrono::duration<double, std::micro>(t1 - t0).count());
    }
    std::printf("x in [%g, %g]: %.1f us per row of %d (%.2f ns per exp)\n", base, base + 13.2, best, kRow,
                best * 1e3 / kRow);
  }
}
