// Compiled by check_header.py with g++ and clang++ (C++17, strict warnings) and nvcc (host side): the whole
// public API of kforge_multikernel.h is instantiated, then a tiny dispatch runs (no disk: cache off).
#include "kforge_multikernel.h"

#include <cstdio>

namespace {

int add_one(const float* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = in[i] + 1.0f;
  return 1;
}
int add_one_unrolled(const float* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 2 <= n; i += 2) {
    out[i] = in[i] + 1.0f;
    out[i + 1] = in[i + 1] + 1.0f;
  }
  for (; i < n; ++i) out[i] = in[i] + 1.0f;
  return 2;
}

}  // namespace

int main() {
  using Kernel = kforge::mk::MultiKernel<int(const float*, float*, int64_t)>;
  Kernel::Config config;
  config.name = "probe";
  config.env = kforge::mk::EnvOptions{};
  config.env.cache = false;
  Kernel kernel({{"plain", add_one, 0, {8}}, {"unrolled", add_one_unrolled, 1, {1024}}}, config);
  float in[16] = {}, out[16] = {}, scratch[16] = {};
  const kforge::mk::ShapeKey key{16};
  int first = kernel(key, in, out, 16);
  int second = kernel.dispatch(
      key, [&](const Kernel::Variant& v) { static_cast<void>(v.fn(in, scratch, 16)); }, in, out, 16);
  size_t index = kernel.select(key, [](const Kernel::Variant&) {});
  kforge::mk::Pick pick;
  bool ok = first == second && index < kernel.size() && kernel.pick_for(key, &pick) && out[3] == 1.0f &&
            kernel.stats().shapes_benchmarked == 1 && kernel.cache_path(key).empty() &&
            Kernel::nearest_hint({{"a", nullptr, 0, {8}}, {"b", nullptr, 1, {1024}}}, kforge::mk::ShapeKey{900}) == 1 &&
            kforge::mk::hex16(kforge::mk::fnv1a64("")) == "cbf29ce484222325" && !kforge::mk::cpu_device_info().arch.empty();
  std::printf("%s\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
