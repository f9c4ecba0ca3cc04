// The per-model half of tools/run-model's runner for --target cuda: the class that `kforge compile --target cuda`
// generated, behind runner_model.h. The runner's tensors live on the host; this adapter keeps device twins:
//   - load_parameters(): the class's own load_parameters(), which reads the .pdiparams once into device memory;
//   - run(): copies each input to the device when its host tensor (pointer, dtype, dims) is not the one uploaded
//     last (the runner passes the same tensors to every run, so --bench uploads once), runs the class on its
//     stream, waits for it, and copies every output back into the runner's host tensor.
// Compiled with nvcc: -DKFORGE_PROGRAM_HEADER='"NAME.h"' -DKFORGE_PROGRAM_CLASS=NAME -I GEN, linked with GEN/NAME.cu,
// GEN/NAME_kernels.cu and the runner (tools/run_model/model.py, build_cuda_runner).
#include <cuda_runtime.h>

#include <array>
#include <cstring>
#include <memory>

#include "model_adapter.h"
#include KFORGE_PROGRAM_HEADER

namespace {

using Program = KFORGE_PROGRAM_CLASS;

// A tensor's metadata on another place, with memory allocated there.
kforge::Status allocate_like(const kforge::Tensor& from, kforge::Place place, kforge::Tensor* to) {
  *to = kforge::Tensor{};
  to->dtype = from.dtype;
  KFORGE_RETURN_IF_ERROR(to->set_dims(from.dims, static_cast<size_t>(from.ndim)));
  to->place = place;
  return to->allocate();
}

// A clear error where there is no GPU (the allocator would report out of memory instead).
kforge::Status require_device() {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) return kforge::Status::Error("no CUDA device: ", cudaGetErrorString(e));
  if (count == 0) return kforge::Status::Error("no CUDA device");
  return kforge::Status::OK();
}

class CudaAdapter final : public kforge::runner::ProgramShape<Program> {
 public:
  kforge::Status load_parameters(const char* path) override {
    KFORGE_RETURN_IF_ERROR(require_device());
    return program_.load_parameters(path);
  }
  kforge::Status set_num_threads(int threads) override {
    return threads >= 1 ? kforge::Status::OK() : kforge::Status::Error("set_num_threads(", threads, "): at least 1");
  }

  kforge::Status run(kforge::TensorList inputs, kforge::MutableTensorList outputs) override {
    if (inputs.size != Program::kNumInputs || outputs.size != Program::kNumOutputs) {
      return kforge::Status::Error("the runner passed ", inputs.size, " inputs and ", outputs.size, " outputs");
    }
    KFORGE_RETURN_IF_ERROR(require_device());
    kforge::install_cuda_allocator();
    std::array<const kforge::Tensor*, Program::kNumInputs + 1> in{};
    std::array<kforge::Tensor*, Program::kNumOutputs + 1> out{};
    for (size_t i = 0; i < Program::kNumInputs; ++i) {
      const kforge::Tensor& host = inputs[i];
      if (uploaded_[i] != host.data || !device_in_[i].same_dims(host) || device_in_[i].dtype != host.dtype) {
        KFORGE_RETURN_IF_ERROR(allocate_like(host, kforge::GPUPlace(), &device_in_[i]));
        if (host.bytes() > 0) {
          KFORGE_CUDA_RETURN_IF_ERROR(cudaMemcpy(device_in_[i].data, host.data, host.bytes(), cudaMemcpyHostToDevice));
        }
        uploaded_[i] = host.data;
      }
      in[i] = &device_in_[i];
    }
    for (size_t i = 0; i < Program::kNumOutputs; ++i) out[i] = &device_out_[i];
    KFORGE_RETURN_IF_ERROR(program_.run(kforge::TensorList{in.data(), Program::kNumInputs},
                                        kforge::MutableTensorList{out.data(), Program::kNumOutputs}));
    KFORGE_RETURN_IF_ERROR(program_.synchronize());
    for (size_t i = 0; i < Program::kNumOutputs; ++i) {
      kforge::Tensor& host = outputs[i];
      const kforge::Tensor& device = device_out_[i];
      if (host.data == nullptr || !host.same_dims(device) || host.dtype != device.dtype) {
        KFORGE_RETURN_IF_ERROR(allocate_like(device, kforge::CPUPlace(), &host));
      }
      if (device.bytes() > 0) {
        KFORGE_CUDA_RETURN_IF_ERROR(cudaMemcpy(host.data, device.data, device.bytes(), cudaMemcpyDeviceToHost));
      }
    }
    return kforge::Status::OK();
  }

 private:
  Program program_;
  std::array<kforge::Tensor, Program::kNumInputs + 1> device_in_;
  std::array<const void*, Program::kNumInputs + 1> uploaded_{};  // the host data each device input was copied from
  std::array<kforge::Tensor, Program::kNumOutputs + 1> device_out_;
};

}  // namespace

std::unique_ptr<kforge::runner::Model> kforge::runner::make_model(const char* name) {
  if (name != nullptr && name[0] != '\0') return nullptr;  // one class: no --model
  return std::make_unique<CudaAdapter>();
}
