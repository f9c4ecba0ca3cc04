// What one primitive run costs on a given oneDNN build, apart from its arithmetic: a 64-channel 3 x 3 convolution
// (batch 1, stride 1, padding 1, oneDNN's own layouts, scratchpad passed in) run back to back on one stream, with
// the stream waited on after each run as kernels/onednn does, at 2 x 2, 4 x 4, 14 x 14 and 56 x 56 pixels. The
// smallest sizes are almost all overhead: PyPI's 2026.1 build (SYCL CPU runtime) against the OpenMP builds
// (BENCHMARKS.md, "oneDNN 2026.1 (PyPI) against Debian's 2.6.3"). Median of 15 rounds of wall time per run.
//   g++ -std=c++17 -O2 bench/layouts/exec_overhead.cc -ldnnl -o exec_overhead && OMP_NUM_THREADS=1 ./exec_overhead
// (another oneDNN: -isystem PREFIX/include -LPREFIX/lib -Wl,--disable-new-dtags,-rpath,PREFIX/lib; run the SYCL
// build with OCL_ICD_FILENAMES=PREFIX/lib/libintelocl.so under taskset -c 0, one CPU as the OpenMP builds' one thread)
#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <unordered_map>
#include <vector>

namespace {

using dnnl::memory;

dnnl::convolution_forward::primitive_desc conv_pd(const dnnl::engine& eng, int64_t c, int64_t h) {
  const memory::desc src({1, c, h, h}, memory::data_type::f32, memory::format_tag::any);
  const memory::desc weights({c, c, 3, 3}, memory::data_type::f32, memory::format_tag::any);
  const memory::desc dst({1, c, h, h}, memory::data_type::f32, memory::format_tag::any);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
#if DNNL_VERSION_MAJOR >= 3
  return {eng, dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src, weights, memory::desc(),
          dst, {1, 1}, {0, 0}, {1, 1}, {1, 1}, attr};
#else
  const dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                             src, weights, dst, {1, 1}, {0, 0}, {1, 1}, {1, 1});
  return {desc, attr, eng};
#endif
}

}  // namespace

int main() {
  const dnnl_version_t* v = dnnl_version();
  std::printf("oneDNN %d.%d.%d, CPU runtime %u\n", v->major, v->minor, v->patch, v->cpu_runtime);
  const dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(eng);
  const int64_t c = 64;
  for (int64_t h : {2, 4, 14, 56}) {
    const auto pd = conv_pd(eng, c, h);
    const dnnl::convolution_forward conv(pd);
    memory src(pd.src_desc(), eng), weights(pd.weights_desc(), eng), dst(pd.dst_desc(), eng);
    memory scratchpad(pd.scratchpad_desc(), eng);
    for (memory* m : {&src, &weights}) {  // small normal values: no subnormal slow path
      float* p = static_cast<float*>(m->get_data_handle());
      for (size_t i = 0; i < m->get_desc().get_size() / sizeof(float); ++i) p[i] = 0.01f * static_cast<float>(i % 7);
    }
    const std::unordered_map<int, memory> args{{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights},
                                               {DNNL_ARG_DST, dst}, {DNNL_ARG_SCRATCHPAD, scratchpad}};
    const int per_round = h <= 4 ? 2000 : h <= 14 ? 500 : 50;
    std::vector<double> rounds;
    for (int r = 0; r < 16; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < per_round; ++i) {
        conv.execute(stream, args);
        stream.wait();
      }
      const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
      if (r > 0) rounds.push_back(us / per_round);  // round 0 warms up
    }
    std::sort(rounds.begin(), rounds.end());
    std::printf("%2lld x %-2lld  %-28s %8.2f us per run  (%.1f GFLOP/s)\n", static_cast<long long>(h),
                static_cast<long long>(h), pd.impl_info_str(), rounds[rounds.size() / 2],
                2.0 * c * c * 9 * h * h / rounds[rounds.size() / 2] * 1e-3);
  }
}
