// kforge's handle on one descriptor of cuDNN's backend ("graph") API (header-only; cuDNN 9), shared by the
// operation graphs of kforge_cudnn_graph.cuh (a convolution with its epilogue) and kforge_cudnn_attention.cuh
// (fused attention): the descriptor is destroyed with its owner, and each setter reports whether cuDNN took the value.
#ifndef KFORGE_CUDNN_BACKEND_CUH_
#define KFORGE_CUDNN_BACKEND_CUH_

#include <cudnn.h>

#include <cstdint>
#include <utility>

namespace kforge {
namespace cudnn_backend {

struct Descriptor {
  cudnnBackendDescriptor_t d = nullptr;
  explicit Descriptor(cudnnBackendDescriptorType_t type) {
    if (cudnnBackendCreateDescriptor(type, &d) != CUDNN_STATUS_SUCCESS) d = nullptr;
  }
  Descriptor(Descriptor&& o) noexcept : d(std::exchange(o.d, nullptr)) {}
  Descriptor& operator=(Descriptor&& o) noexcept {
    std::swap(d, o.d);
    return *this;
  }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  ~Descriptor() {
    if (d != nullptr) static_cast<void>(cudnnBackendDestroyDescriptor(d));
  }
  bool ok() const { return d != nullptr; }
  template <typename T>
  bool set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, const T* value, int64_t n = 1) {
    return d != nullptr && cudnnBackendSetAttribute(d, name, type, n, value) == CUDNN_STATUS_SUCCESS;
  }
  bool set_descriptor(cudnnBackendAttributeName_t name, cudnnBackendDescriptor_t value) {
    return set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, &value);
  }
  bool finalize() { return d != nullptr && cudnnBackendFinalize(d) == CUDNN_STATUS_SUCCESS; }
};

}  // namespace cudnn_backend
}  // namespace kforge

#endif  // KFORGE_CUDNN_BACKEND_CUH_
