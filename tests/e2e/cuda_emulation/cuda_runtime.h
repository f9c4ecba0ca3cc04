// A host-only stand-in for the CUDA runtime, for tests/e2e/cuda_index_emulated.py: it lets the output of
// `kforge compile --target cuda` (host code, index-mapped and elementwise kernels) and tests/gpu/harness.cu
// compile with g++ and run on the CPU, so that the generated index arithmetic is checked against Paddle's outputs
// where there is no GPU. "Device" memory is host memory; a kernel launch (its <<<...>>> removed by the test) runs
// the kernel once per thread of its grid, one thread after the other (kforge_emulated_launch: the test rewrites each
// `k<<<grid, block, ...>>>(args)`), so grid-stride loops and per-thread tails cover the elements as on a GPU; streams
// and graphs do nothing (programs are compiled without --cuda-graph). Not for warp-level or shared-memory code (row
// kernels): threads do not run together.
#ifndef KFORGE_TEST_FAKE_CUDA_RUNTIME_H_
#define KFORGE_TEST_FAKE_CUDA_RUNTIME_H_

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

// CUDA's math API declares isnan / isinf for float and double at global scope (the generated max / min reductions
// call isnan); the C++ library has them in std.
#include <cmath>
using std::isinf;
using std::isnan;

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
inline void __syncthreads() {}

struct dim3 {
  dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
  unsigned x, y, z;
};
inline dim3 blockIdx{0, 0, 0}, threadIdx{0, 0, 0}, blockDim{1, 1, 1}, gridDim{1, 1, 1};

inline dim3 kforge_emulated_dim3(dim3 d) { return d; }
template <typename N>
dim3 kforge_emulated_dim3(N x) { return dim3{static_cast<unsigned>(x), 1, 1}; }

// Runs `kernel` (a call of the kernel with its arguments) once per thread of grid x block, with blockIdx,
// threadIdx, blockDim and gridDim set as the GPU would for that thread.
template <typename Kernel, typename Grid, typename Block, typename... Rest>
void kforge_emulated_launch(Kernel&& kernel, Grid grid, Block block, Rest...) {
  gridDim = kforge_emulated_dim3(grid);
  blockDim = kforge_emulated_dim3(block);
  for (unsigned y = 0; y < gridDim.y; ++y) {  // a batch of index kernels runs its member k at blockIdx.y == k
    for (unsigned b = 0; b < gridDim.x; ++b) {
      for (unsigned t = 0; t < blockDim.x; ++t) {
        blockIdx = dim3{b, y, 0};
        threadIdx = dim3{t, 0, 0};
        kernel();
      }
    }
  }
  blockIdx = threadIdx = dim3{0, 0, 0};
  blockDim = gridDim = dim3{1, 1, 1};
}

struct uint2 {
  unsigned x, y;
};
struct uint4 {
  unsigned x, y, z, w;
};

enum cudaError_t { cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorMemoryAllocation = 2 };
enum cudaMemcpyKind { cudaMemcpyHostToHost, cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost, cudaMemcpyDeviceToDevice };
enum cudaDeviceAttr { cudaDevAttrMultiProcessorCount = 16 };
enum cudaStreamCaptureMode { cudaStreamCaptureModeThreadLocal = 1 };
constexpr unsigned cudaStreamNonBlocking = 1;
using cudaStream_t = struct FakeStream*;
using cudaGraph_t = struct FakeGraph*;
using cudaGraphExec_t = struct FakeGraphExec*;
struct cudaGraphExecUpdateResultInfo {
  int result;
};
#define cudaStreamLegacy (static_cast<cudaStream_t>(nullptr))

inline const char* cudaGetErrorName(cudaError_t e) { return e == cudaSuccess ? "cudaSuccess" : "cudaError"; }
inline const char* cudaGetErrorString(cudaError_t e) { return e == cudaSuccess ? "no error" : "emulated error"; }
inline cudaError_t cudaGetLastError() { return cudaSuccess; }
inline cudaError_t cudaGetDevice(int* d) { *d = 0; return cudaSuccess; }
inline cudaError_t cudaSetDevice(int) { return cudaSuccess; }
inline cudaError_t cudaGetDeviceCount(int* n) { *n = 1; return cudaSuccess; }
inline cudaError_t cudaDeviceGetAttribute(int* v, cudaDeviceAttr, int) { *v = 1; return cudaSuccess; }
inline cudaError_t cudaMalloc(void** p, size_t bytes) {
  *p = std::aligned_alloc(256, (bytes + 255) / 256 * 256 + 256);
  return *p != nullptr ? cudaSuccess : cudaErrorMemoryAllocation;
}
template <typename T>
cudaError_t cudaMalloc(T** p, size_t bytes) { return cudaMalloc(reinterpret_cast<void**>(p), bytes); }
inline cudaError_t cudaFree(void* p) { std::free(p); return cudaSuccess; }
inline cudaError_t cudaMemcpy(void* to, const void* from, size_t bytes, cudaMemcpyKind) {
  if (bytes > 0) std::memmove(to, from, bytes);
  return cudaSuccess;
}
inline cudaError_t cudaMemcpyAsync(void* to, const void* from, size_t bytes, cudaMemcpyKind kind, cudaStream_t = nullptr) {
  return cudaMemcpy(to, from, bytes, kind);
}
inline cudaError_t cudaMemset(void* p, int value, size_t bytes) { std::memset(p, value, bytes); return cudaSuccess; }
inline cudaError_t cudaMemsetAsync(void* p, int value, size_t bytes, cudaStream_t = nullptr) {
  return cudaMemset(p, value, bytes);
}
inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned) {
  static int stream;
  *s = reinterpret_cast<cudaStream_t>(&stream);
  return cudaSuccess;
}
inline cudaError_t cudaStreamDestroy(cudaStream_t) { return cudaSuccess; }
inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }
// Events: everything runs at once on the host, so an event is always complete.
using cudaEvent_t = struct FakeEvent*;
constexpr unsigned cudaEventDisableTiming = 2;
inline cudaError_t cudaEventCreateWithFlags(cudaEvent_t* e, unsigned) {
  static int event = 0;
  *e = reinterpret_cast<cudaEvent_t>(&event);
  return cudaSuccess;
}
inline cudaError_t cudaEventRecord(cudaEvent_t, cudaStream_t = nullptr) { return cudaSuccess; }
inline cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t, unsigned = 0) { return cudaSuccess; }
inline cudaError_t cudaEventDestroy(cudaEvent_t) { return cudaSuccess; }
inline cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }
// Graphs: never used (the test compiles without --cuda-graph), declared for kforge_cuda_runtime.h's GraphCache.
inline cudaError_t cudaStreamBeginCapture(cudaStream_t, cudaStreamCaptureMode) { return cudaErrorMemoryAllocation; }
inline cudaError_t cudaStreamEndCapture(cudaStream_t, cudaGraph_t*) { return cudaErrorMemoryAllocation; }
inline cudaError_t cudaGraphInstantiate(cudaGraphExec_t*, cudaGraph_t, unsigned long long = 0) {
  return cudaErrorMemoryAllocation;
}
inline cudaError_t cudaGraphExecUpdate(cudaGraphExec_t, cudaGraph_t, cudaGraphExecUpdateResultInfo*) {
  return cudaErrorMemoryAllocation;
}
inline cudaError_t cudaGraphLaunch(cudaGraphExec_t, cudaStream_t) { return cudaErrorMemoryAllocation; }
inline cudaError_t cudaGraphDestroy(cudaGraph_t) { return cudaSuccess; }
inline cudaError_t cudaGraphExecDestroy(cudaGraphExec_t) { return cudaSuccess; }

// Warp intrinsics of kforge_fused.cuh: declared so that the header compiles; row kernels are not emulated.
template <typename T>
T __shfl_xor_sync(unsigned, T v, int) { return v; }
template <typename P, typename V>
void __stcs(P* p, V v) { *p = v; }

#endif  // KFORGE_TEST_FAKE_CUDA_RUNTIME_H_
