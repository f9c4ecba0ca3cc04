// Runs one object of a generated class whose sizes depend on data (nonzero, masked_select) many times, with input
// shapes and numbers of selected elements that grow, shrink, reach the most (every element) and the least (none),
// and checks every result against the same computation written here. One object, so that what a run lays out at
// run time (bind_s<id>(), the run-time buffers growing) and what it leaves behind (the data-dependent result's
// dims) are exercised from one run to the next.
//
//   data_dependent_driver gather   net built from tests/paddle/nonzero_gather_nd: out = 2 * x[x > 0] + 1, [count]
//   data_dependent_driver select   net built from tests/paddle/masked_select_dynamic: out = x[x > 0] + mean(x),
//                                  [count, 1]
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "net.h"

namespace {

// Deterministic values: a fraction `positive` of them > 0, the rest < 0, none 0.
std::vector<float> make_input(int64_t n, double positive, unsigned seed) {
  std::vector<float> x(static_cast<size_t>(n));
  unsigned state = seed * 2654435761u + 1;
  for (int64_t i = 0; i < n; ++i) {
    state = state * 1103515245u + 12345u;
    const double u = static_cast<double>((state >> 8) & 0xffff) / 65536.0;
    const float magnitude = 0.1f + static_cast<float>((state >> 4) % 90) / 100.0f;
    x[static_cast<size_t>(i)] = u < positive ? magnitude : -magnitude;
  }
  return x;
}

int run_case(net& model, bool select, int64_t rows, int64_t cols, double positive, unsigned seed) {
  std::vector<float> x = make_input(rows * cols, positive, seed);
  kforge::Tensor in;
  in.dtype = kforge::DataType::kFloat32;
  if (!in.set_dims({rows, cols}).ok()) return 1;
  in.data = x.data();
  kforge::Tensor out;
  const kforge::Status status = model.run(in, &out);
  if (!status.ok()) {
    std::printf("FAIL [%lld, %lld] positive %.2f: %s\n", static_cast<long long>(rows), static_cast<long long>(cols),
                positive, status.message().c_str());
    return 1;
  }
  double mean = 0;
  for (float v : x) mean += v;
  mean = x.empty() ? 0 : mean / static_cast<double>(x.size());
  std::vector<float> want;
  for (float v : x) {
    if (v > 0) want.push_back(select ? static_cast<float>(v + mean) : 2.0f * v + 1.0f);
  }
  const int64_t count = static_cast<int64_t>(want.size());
  const bool dims_ok = select ? out.ndim == 2 && out.dims[0] == count && out.dims[1] == 1
                              : out.ndim == 1 && out.dims[0] == count;
  if (!dims_ok || out.dtype != kforge::DataType::kFloat32) {
    std::printf("FAIL [%lld, %lld] positive %.2f: out is %s, expected %lld rows\n", static_cast<long long>(rows),
                static_cast<long long>(cols), positive, out.dims_string().c_str(), static_cast<long long>(count));
    return 1;
  }
  const float* got = out.data_as<const float>();
  for (int64_t i = 0; i < count; ++i) {
    if (std::fabs(got[i] - want[static_cast<size_t>(i)]) > 1e-5f * (1 + std::fabs(want[static_cast<size_t>(i)]))) {
      std::printf("FAIL [%lld, %lld] positive %.2f: out[%lld] = %g, expected %g\n", static_cast<long long>(rows),
                  static_cast<long long>(cols), positive, static_cast<long long>(i), got[i],
                  want[static_cast<size_t>(i)]);
      return 1;
    }
  }
  std::printf("ok   [%lld, %lld] positive %.2f: %lld selected\n", static_cast<long long>(rows),
              static_cast<long long>(cols), positive, static_cast<long long>(count));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 || (std::strcmp(argv[1], "gather") != 0 && std::strcmp(argv[1], "select") != 0)) {
    std::fprintf(stderr, "usage: data_dependent_driver gather|select\n");
    return 2;
  }
  const bool select = std::strcmp(argv[1], "select") == 0;
  net model;
  struct Case {
    int64_t rows, cols;
    double positive;
  };
  // gather's program fixes 5 columns; select's takes any.
  const Case cases[] = {{3, 5, 0.5}, {6, select ? 7 : 5, 1.0}, {2, 5, 0.0}, {6, select ? 3 : 5, 0.3},
                        {40, select ? 9 : 5, 0.9}, {1, 5, 1.0}, {40, select ? 9 : 5, 0.1}};
  int failed = 0;
  unsigned seed = 1;
  for (const Case& c : cases) failed += run_case(model, select, c.rows, c.cols, c.positive, seed++);
  return failed == 0 ? 0 : 1;
}
