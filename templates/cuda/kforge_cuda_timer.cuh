// kforge CUDA timing for the multi-kernel dispatcher (templates/runtime/kforge_multikernel.h): a
// mk::Timer that times GPU execution with CUDA events, and the DeviceInfo a CUDA cache entry is keyed by.
//
// Why the lead-in spin: an event recorded on an idle stream completes at once, so "record start; launch;
// record stop" on an idle GPU also times the host's launch latency (~3-5 us), which would swamp the
// difference between kernels that take 10-20 us. A short spin kernel queued first keeps the GPU busy while
// the host records the start event and launches the body, so the two events bracket GPU execution alone.
#ifndef KFORGE_CUDA_TIMER_CUH_
#define KFORGE_CUDA_TIMER_CUH_

#include <cuda_runtime.h>

#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <utility>

#include "kforge_multikernel.h"

namespace kforge {
namespace cuda_timing {

// The lead for timing cuDNN calls by GPU time alone: their host side is long. With the 30 us lead of the GEMM sites,
// resnet50's 1x1 convolutions measured 30-100 us at batch 1 on an H200 (the host's cuDNN call, not the GPU's work: the
// whole model runs in 0.59 ms as a graph), and the picks made the graph 2x slower (BENCHMARKS.md). The convolution
// and attention sites (kforge_cudnn.cuh, kforge_cudnn_attention.cuh) use it.
constexpr double kCudnnCallLeadUs = 250.0;

static __global__ void spin_kernel(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

// {device name, "sm_<major><minor>", "cuda-<runtime major>.<minor>"} for the current device.
inline mk::DeviceInfo cuda_device_info() {
  mk::DeviceInfo info{"unknown-cuda-device", "sm_unknown", "cuda-unknown"};
  int device = 0;
  cudaDeviceProp props{};
  if (cudaGetDevice(&device) == cudaSuccess && cudaGetDeviceProperties(&props, device) == cudaSuccess) {
    info.name = props.name;
    info.arch = "sm_" + std::to_string(props.major) + std::to_string(props.minor);
  }
  int runtime = 0;
  if (cudaRuntimeGetVersion(&runtime) == cudaSuccess)
    info.runtime = "cuda-" + std::to_string(runtime / 1000) + "." + std::to_string((runtime % 1000) / 10);
  return info;
}

class CudaEventTimer : public mk::Timer {
 public:
  // Times work that body() enqueues on `stream`. lead_us: length of the spin kernel queued before the start
  // event (0 turns it off).
  explicit CudaEventTimer(cudaStream_t stream, double lead_us = 30.0) : stream_(stream) {
    ok_ = cudaEventCreate(&start_) == cudaSuccess && cudaEventCreate(&stop_) == cudaSuccess;
    int device = 0, clock_khz = 0;
    if (cudaGetDevice(&device) == cudaSuccess &&
        cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device) == cudaSuccess && clock_khz > 0)
      lead_cycles_ = static_cast<long long>(lead_us * 1e-3 * clock_khz);
    else
      lead_cycles_ = static_cast<long long>(lead_us * 2000.0);  // assume 2 GHz
  }
  ~CudaEventTimer() override {
    if (start_ != nullptr) cudaEventDestroy(start_);
    if (stop_ != nullptr) cudaEventDestroy(stop_);
  }
  CudaEventTimer(const CudaEventTimer&) = delete;
  CudaEventTimer& operator=(const CudaEventTimer&) = delete;

  // The stream later measurements time (generated code: the object's stream, which set_stream() may change).
  void set_stream(cudaStream_t stream) { stream_ = stream; }
  cudaStream_t stream() const { return stream_; }

  // Called from inside body() when the variant reported a failure that CUDA's error state does not show (a
  // cuBLASLt status, an argument it refused): that measurement is +infinity.
  void mark_failed() { failed_ = true; }

  // Returns +infinity when CUDA reports an error or body() called mark_failed(), so a failing variant can
  // never win.
  double measure_us(const std::function<void()>& body) override {
    if (!ok_) return std::numeric_limits<double>::infinity();
    failed_ = false;
    if (lead_cycles_ > 0) spin_kernel<<<1, 1, 0, stream_>>>(lead_cycles_);
    cudaEventRecord(start_, stream_);
    body();
    cudaEventRecord(stop_, stream_);
    if (cudaEventSynchronize(stop_) != cudaSuccess || failed_) return std::numeric_limits<double>::infinity();
    float ms = 0.0f;
    if (cudaEventElapsedTime(&ms, start_, stop_) != cudaSuccess || cudaGetLastError() != cudaSuccess)
      return std::numeric_limits<double>::infinity();
    return static_cast<double>(ms) * 1000.0;
  }

 private:
  cudaStream_t stream_;
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
  long long lead_cycles_ = 0;
  bool ok_ = false;
  bool failed_ = false;
};

// Benchmark settings of every CUDA dispatcher (GEMM and row sites): GPU runs are short and event timing is
// cheap, so more repetitions than the CPU default; 2 % tie margin (run-to-run noise of one GEMM on an H100 is
// 1-3 %).
inline void set_cuda_bench_options(mk::BenchmarkOptions& bench) {
  bench.warmup = 3;
  bench.repetitions = 15;
  bench.tie_margin = 0.02;
}

// A CUDA dispatcher's configuration: the site's name (logs, cache entries), the timer (an event timer; generated
// code shares one per object and points it at the object's stream before every run), the device in the cache
// key and the variant-set hash.
template <class MultiKernel>
inline typename MultiKernel::Config make_cuda_config(const std::string& site, std::shared_ptr<CudaEventTimer> timer,
                                                     uint64_t variant_set_hash) {
  typename MultiKernel::Config config;
  config.name = site;
  config.device = cuda_device_info();
  config.timer = std::move(timer);
  set_cuda_bench_options(config.bench);
  config.variant_set_hash = variant_set_hash;
  return config;
}

}  // namespace cuda_timing
}  // namespace kforge

#endif  // KFORGE_CUDA_TIMER_CUH_
