// The cost of multi-kernel dispatch for a known shape (the fast path of kforge::mk::MultiKernel): a table
// probe plus the variant's std::function call, against calling the same std::function directly.
//
//   g++ -std=c++17 -O2 -I templates/runtime bench/multikernel/dispatch_overhead.cc -o /tmp/mk_dispatch -pthread
//   /tmp/mk_dispatch [iterations]
//
// Prints ns per call for: the direct std::function call, dispatch of one known shape, dispatch cycling over
// 64 known shapes (every call a different key, so no memo helps), and the difference (the dispatch cost).
// No disk access: the cache is off and every shape is picked once before timing.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "kforge_multikernel.h"

namespace {

using Kernel = kforge::mk::MultiKernel<int(int)>;

int variant_a(int x) { return x + 1; }
int variant_b(int x) { return x + 2; }
int variant_c(int x) { return x + 3; }

template <class Body>
double ns_per_call(long iterations, Body&& body) {
  auto start = std::chrono::steady_clock::now();
  long sink = 0;
  for (long i = 0; i < iterations; ++i) sink += body(i);
  auto stop = std::chrono::steady_clock::now();
  if (sink == 42) std::printf(" ");  // keeps the calls from being optimised away
  return std::chrono::duration<double, std::nano>(stop - start).count() / static_cast<double>(iterations);
}

}  // namespace

int main(int argc, char** argv) {
  const long iterations = argc > 1 ? std::atol(argv[1]) : 20000000;
  Kernel::Config config;
  config.env = kforge::mk::EnvOptions{};
  config.env.cache = false;
  config.bench.warmup = 0;
  config.bench.repetitions = 1;
  Kernel kernel({{"a", variant_a, 0, {64, 0, 0}}, {"b", variant_b, 1, {256, 0, 0}}, {"c", variant_c, 2, {4096, 0, 0}}},
                config);
  std::vector<kforge::mk::ShapeKey> keys;
  for (int64_t m = 1; m <= 64; ++m) keys.push_back(kforge::mk::ShapeKey{m * 64, 4096, 4096});
  for (const auto& key : keys) kernel(key, 0);  // pick every shape once (benchmarks here, not below)
  std::function<int(int)> direct = variant_b;
  const kforge::mk::ShapeKey one{256, 4096, 4096};

  double best_direct = 1e30, best_one = 1e30, best_many = 1e30;
  for (int round = 0; round < 5; ++round) {
    best_direct = std::min(best_direct, ns_per_call(iterations, [&](long i) { return direct(static_cast<int>(i)); }));
    best_one = std::min(best_one, ns_per_call(iterations, [&](long i) { return kernel(one, static_cast<int>(i)); }));
    best_many = std::min(best_many, ns_per_call(iterations, [&](long i) {
                           return kernel(keys[static_cast<size_t>(i) & 63], static_cast<int>(i));
                         }));
  }
  std::printf("direct std::function call:          %6.2f ns\n", best_direct);
  std::printf("dispatch, one known shape:          %6.2f ns  (dispatch cost %.2f ns)\n", best_one,
              best_one - best_direct);
  std::printf("dispatch, 64 known shapes in turn:  %6.2f ns  (dispatch cost %.2f ns)\n", best_many,
              best_many - best_direct);
  std::printf("target: dispatch cost <= 50 ns: %s\n", best_many - best_direct <= 50.0 ? "met" : "MISSED");
  return 0;
}
