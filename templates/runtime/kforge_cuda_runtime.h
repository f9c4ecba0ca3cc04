// The CUDA part of the kforge runtime: what the host code of `kforge compile --target cuda` (NAME.cu) needs
// beside kforge_runtime.h. kforge copies it beside the outputs. Host code only (nvcc or a host compiler with
// the CUDA runtime headers); C++17.
//   - cuda_error(): a cudaError_t as a kforge::Status with context;
//   - install_cuda_allocator(): Tensor::allocate() on a GPU place through cudaMalloc / cudaFree;
//   - DeviceMemory: one growable device allocation (the workspace, uploaded constants);
//   - GraphCache: --cuda-graph. Captures the launch sequence once per key (the input dims) and replays it.
//     Pointer stability: a graph bakes in the device pointers it was captured with. The cache remembers them
//     with the graph; when a later call has the same dims but other pointers (other input/output tensors, a
//     reallocated output), it captures again and updates the instantiated graph in place
//     (cudaGraphExecUpdate, no re-instantiation), so results are always right and the replay stays cheap
//     as long as the caller passes the same tensors. Nothing is copied into or out of staging buffers.
#ifndef KFORGE_CUDA_RUNTIME_H_
#define KFORGE_CUDA_RUNTIME_H_

#include <cuda_runtime.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "kforge_runtime.h"

#define KFORGE_CUDA_RUNTIME_VERSION 1

namespace kforge {

inline Status cuda_error(cudaError_t error, const char* what) {
  return Status::Error(what, ": ", cudaGetErrorName(error), " (", cudaGetErrorString(error), ")");
}

#define KFORGE_CUDA_RETURN_IF_ERROR(call)                                    \
  do {                                                                       \
    cudaError_t kforge_cuda_error_ = (call);                                 \
    if (kforge_cuda_error_ != cudaSuccess) return ::kforge::cuda_error(kforge_cuda_error_, #call); \
  } while (0)

// Tensor::allocate() on GPUPlace() allocates with cudaMalloc from then on (idempotent).
inline void install_cuda_allocator() {
  DeviceAllocator& allocator = device_allocator();
  if (allocator.allocate != nullptr) return;
  allocator.allocate = [](size_t bytes, Place place) -> void* {
    int current = 0;
    if (cudaGetDevice(&current) != cudaSuccess || current != place.device) {
      if (cudaSetDevice(place.device) != cudaSuccess) return nullptr;
    }
    void* p = nullptr;
    return cudaMalloc(&p, bytes) == cudaSuccess ? p : nullptr;
  };
  allocator.release = [](void* data, Place) { static_cast<void>(cudaFree(data)); };
}

// One device allocation that grows on demand and never shrinks.
class DeviceMemory {
 public:
  DeviceMemory() = default;
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  ~DeviceMemory() {
    if (data_ != nullptr) static_cast<void>(cudaFree(data_));
  }
  Status reserve(size_t bytes) {
    if (bytes <= capacity_) return Status::OK();
    if (data_ != nullptr) KFORGE_CUDA_RETURN_IF_ERROR(cudaFree(data_));
    data_ = nullptr;
    capacity_ = 0;
    KFORGE_CUDA_RETURN_IF_ERROR(cudaMalloc(&data_, bytes));
    capacity_ = bytes;
    return Status::OK();
  }
  unsigned char* data() const { return static_cast<unsigned char*>(data_); }
  size_t capacity() const { return capacity_; }

 private:
  void* data_ = nullptr;
  size_t capacity_ = 0;
};

// Instantiated graphs by key (the program's input dims), each with the pointers it was captured with.
class GraphCache {
 public:
  GraphCache() = default;
  GraphCache(const GraphCache&) = delete;
  GraphCache& operator=(const GraphCache&) = delete;
  ~GraphCache() {
    for (Entry& e : entries_) static_cast<void>(cudaGraphExecDestroy(e.exec));
  }

  // Replays the graph of `key` when its pointers match; otherwise captures `enqueue()` (which launches the
  // program's kernels on `stream` and returns a Status) and instantiates or updates the graph, then launches.
  template <typename Enqueue>
  Status launch(const std::vector<int64_t>& key, const std::vector<const void*>& pointers, cudaStream_t stream,
                Enqueue&& enqueue) {
    Entry* entry = find(key);
    if (entry != nullptr && entry->pointers == pointers) {
      KFORGE_CUDA_RETURN_IF_ERROR(cudaGraphLaunch(entry->exec, stream));
      return Status::OK();
    }
    cudaGraph_t graph = nullptr;
    KFORGE_CUDA_RETURN_IF_ERROR(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    Status enqueued = enqueue();
    cudaError_t ended = cudaStreamEndCapture(stream, &graph);
    if (!enqueued.ok()) {
      if (ended == cudaSuccess && graph != nullptr) static_cast<void>(cudaGraphDestroy(graph));
      return enqueued;
    }
    if (ended != cudaSuccess) return cuda_error(ended, "cudaStreamEndCapture");
    Status status = install(entry, key, graph);
    static_cast<void>(cudaGraphDestroy(graph));
    if (!status.ok()) return status;
    entry = find(key);
    entry->pointers = pointers;
    ++captures_;
    KFORGE_CUDA_RETURN_IF_ERROR(cudaGraphLaunch(entry->exec, stream));
    return Status::OK();
  }

  // Whether launch() with this key and these pointers would capture (rather than replay): callers prepare
  // what must not happen inside a capture (GEMM benchmarks, library plan building) only then.
  bool needs_capture(const std::vector<int64_t>& key, const std::vector<const void*>& pointers) {
    const Entry* entry = find(key);
    return entry == nullptr || entry->pointers != pointers;
  }

  // Captures so far (first sight of a key or changed pointers); for tests and tuning.
  size_t captures() const { return captures_; }

 private:
  struct Entry {
    std::vector<int64_t> key;
    std::vector<const void*> pointers;
    cudaGraphExec_t exec = nullptr;
  };
  static constexpr size_t kMaxEntries = 64;

  Entry* find(const std::vector<int64_t>& key) {
    for (Entry& e : entries_) {
      if (e.key == key) return &e;
    }
    return nullptr;
  }

  Status install(Entry* entry, const std::vector<int64_t>& key, cudaGraph_t graph) {
    if (entry != nullptr) {
      cudaGraphExecUpdateResultInfo info{};
      if (cudaGraphExecUpdate(entry->exec, graph, &info) == cudaSuccess) return Status::OK();
      static_cast<void>(cudaGetLastError());  // the topology changed: instantiate afresh
      static_cast<void>(cudaGraphExecDestroy(entry->exec));
      entry->exec = nullptr;
      KFORGE_CUDA_RETURN_IF_ERROR(cudaGraphInstantiate(&entry->exec, graph, 0));
      return Status::OK();
    }
    if (entries_.size() == kMaxEntries) {  // forget the oldest shape set
      static_cast<void>(cudaGraphExecDestroy(entries_.front().exec));
      entries_.erase(entries_.begin());
    }
    Entry fresh;
    fresh.key = key;
    KFORGE_CUDA_RETURN_IF_ERROR(cudaGraphInstantiate(&fresh.exec, graph, 0));
    entries_.push_back(std::move(fresh));
    return Status::OK();
  }

  std::vector<Entry> entries_;
  size_t captures_ = 0;
};

}  // namespace kforge

#endif  // KFORGE_CUDA_RUNTIME_H_
