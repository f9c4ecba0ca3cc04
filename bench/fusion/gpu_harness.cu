// GPU half of bench/fusion/gpu_check.sh: runs the class that `kforge compile --target cuda` generated on the
// inputs and parameters of a tensor bundle (kforge-interp --write-inputs) and writes its outputs as a bundle,
// which kforge-interp then compares with its own (unfused, CPU) results.
//
// Every output is poisoned before the run that is written: run 1 allocates the outputs (and, with
// --cuda-graph, captures the graph), then the outputs are filled with 0xFF bytes (NaN for floats) and run 2
// (a graph replay) must overwrite every element. Run 3 uses fresh, poisoned output tensors (other pointers:
// with --cuda-graph a re-capture and in-place graph update) and must give bit-identical results.
//
// Built per program:
//   nvcc -arch=sm_90 -std=c++17 -O2 -I GEN -I tools/interp -DKFORGE_PROGRAM_HEADER='"NAME.h"'
//        -DKFORGE_PROGRAM_CLASS=NAME bench/fusion/gpu_harness.cu GEN/NAME.cu GEN/NAME_kernels.cu
// Usage: gpu_harness INPUTS.bin OUTPUTS.bin
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tensor_bundle.h"
#include KFORGE_PROGRAM_HEADER

namespace {

int fail(const std::string& message) {
  std::fprintf(stderr, "gpu_harness: error: %s\n", message.c_str());
  return 1;
}

#define CHECK_STATUS(expr)                          \
  do {                                              \
    kforge::Status s_ = (expr);                     \
    if (!s_.ok()) return fail(s_.message());        \
  } while (0)
#define CHECK_CUDA(expr)                                                               \
  do {                                                                                 \
    cudaError_t e_ = (expr);                                                           \
    if (e_ != cudaSuccess) return fail(std::string(#expr) + ": " + cudaGetErrorString(e_)); \
  } while (0)

// A device copy of a host tensor.
kforge::Status to_device(const kforge::Tensor& host, kforge::Tensor* dev) {
  *dev = kforge::Tensor();
  dev->dtype = host.dtype;
  KFORGE_RETURN_IF_ERROR(dev->set_dims(host.shape()));
  dev->place = kforge::GPUPlace();
  KFORGE_RETURN_IF_ERROR(dev->allocate());
  if (host.bytes() == 0) return kforge::Status::OK();
  KFORGE_CUDA_RETURN_IF_ERROR(cudaMemcpy(dev->data, host.data, host.bytes(), cudaMemcpyHostToDevice));
  return kforge::Status::OK();
}

kforge::Status to_host(const kforge::Tensor& dev, kforge::Tensor* host) {
  *host = kforge::Tensor();
  host->dtype = dev.dtype;
  KFORGE_RETURN_IF_ERROR(host->set_dims(dev.shape()));
  KFORGE_RETURN_IF_ERROR(host->allocate());
  if (dev.bytes() == 0) return kforge::Status::OK();
  KFORGE_CUDA_RETURN_IF_ERROR(cudaMemcpy(host->data, dev.data, dev.bytes(), cudaMemcpyDeviceToHost));
  return kforge::Status::OK();
}

kforge::Status poison(const kforge::Tensor& dev) {
  if (dev.bytes() > 0) KFORGE_CUDA_RETURN_IF_ERROR(cudaMemset(dev.data, 0xFF, dev.bytes()));
  return kforge::Status::OK();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) return fail("usage: gpu_harness INPUTS.bin OUTPUTS.bin");
  kforge::install_cuda_allocator();
  std::vector<kforge::bundle::NamedTensor> all;
  CHECK_STATUS(kforge::bundle::read(argv[1], &all));

  using Program = KFORGE_PROGRAM_CLASS;
  Program program;
  std::vector<kforge::Tensor> params;
  params.reserve(all.size());
  for (const kforge::bundle::NamedTensor& nt : all) {
    if (nt.name.rfind("param/", 0) != 0) continue;
    params.emplace_back();
    CHECK_STATUS(to_device(nt.tensor, &params.back()));
    CHECK_STATUS(program.bind_parameter(nt.name.substr(6), params.back()));
  }
  std::vector<kforge::Tensor> inputs(Program::kNumInputs);
  std::vector<const kforge::Tensor*> input_ptrs;
  for (size_t i = 0; i < Program::kNumInputs; ++i) {
    const kforge::Tensor* t = kforge::bundle::find(all, std::string("feed/") + Program::kInputNames[i]);
    if (t == nullptr) return fail(std::string("no value for input '") + Program::kInputNames[i] + "'");
    CHECK_STATUS(to_device(*t, &inputs[i]));
    input_ptrs.push_back(&inputs[i]);
  }
  const kforge::TensorList in_list{input_ptrs.data(), input_ptrs.size()};

  auto run = [&](std::vector<kforge::Tensor>& outputs) -> kforge::Status {
    std::vector<kforge::Tensor*> ptrs;
    for (kforge::Tensor& t : outputs) ptrs.push_back(&t);
    KFORGE_RETURN_IF_ERROR(program.run(in_list, kforge::MutableTensorList{ptrs.data(), ptrs.size()}));
    return program.synchronize();
  };

  std::vector<kforge::Tensor> outputs(Program::kNumOutputs);
  CHECK_STATUS(run(outputs));  // allocates the outputs (and captures the graph)
  for (const kforge::Tensor& t : outputs) CHECK_STATUS(poison(t));
  CHECK_STATUS(run(outputs));  // replay: must overwrite every poisoned element

  std::vector<kforge::bundle::NamedTensor> named;
  for (size_t i = 0; i < Program::kNumOutputs; ++i) {
    named.push_back({Program::kOutputNames[i], kforge::Tensor()});
    CHECK_STATUS(to_host(outputs[i], &named.back().tensor));
  }
  CHECK_STATUS(kforge::bundle::write(argv[2], named));

  // Fresh output tensors (other pointers), poisoned: bit-identical results.
  std::vector<kforge::Tensor> fresh(Program::kNumOutputs);
  for (size_t i = 0; i < Program::kNumOutputs; ++i) {
    fresh[i].dtype = outputs[i].dtype;
    fresh[i].place = kforge::GPUPlace();
    CHECK_STATUS(fresh[i].set_dims(outputs[i].shape()));
    CHECK_STATUS(fresh[i].allocate());
    CHECK_STATUS(poison(fresh[i]));
  }
  CHECK_STATUS(run(fresh));
  for (size_t i = 0; i < Program::kNumOutputs; ++i) {
    kforge::Tensor host;
    CHECK_STATUS(to_host(fresh[i], &host));
    if (host.bytes() != named[i].tensor.bytes() || std::memcmp(host.data, named[i].tensor.data, host.bytes()) != 0) {
      return fail(std::string("output '") + Program::kOutputNames[i] + "' differs between two runs");
    }
  }
  std::printf("gpu_harness: %zu launches per run, outputs written and repeatable\n", Program::kNumLaunches);
  return 0;
}
