// The C++ side of tests/python/gpu_run.sh's timing: the class that `kforge compile --target cuda` generated,
// called from C++ in the same loops as tests/python/gpu_check.py calls its Python module: CALLS run()s then one
// synchronize(), and run() + synchronize() per call; best of 5 rounds, microseconds per call.
//
// Parameters come from the .pdiparams file (kforge_params.h reads each entry's header and data), bound by the
// names given on the command line in file order (sorted by name: the header's `parameter` lines, sorted). Inputs
// are zeros of the dims given (values do not change the time of these kernels).
//   nvcc -std=c++17 -arch=sm_90 -O2 -I GEN -DKFORGE_PROGRAM_HEADER='"NAME.h"' -DKFORGE_PROGRAM_CLASS=NAME
//        tests/python/gpu_cpp_timing.cu GEN/NAME.cu GEN/NAME_kernels.cu -lcublasLt
// Usage: gpu_cpp_timing PARAMS CALLS INPUT_DIMS... -- PARAMETER_NAMES...   (INPUT_DIMS like 2,4; float32)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "kforge_params.h"
#include KFORGE_PROGRAM_HEADER

namespace {

int fail(const std::string& message) {
  std::fprintf(stderr, "gpu_cpp_timing: error: %s\n", message.c_str());
  return 1;
}

#define CHECK_STATUS(expr)                   \
  do {                                       \
    kforge::Status s_ = (expr);              \
    if (!s_.ok()) return fail(s_.message()); \
  } while (0)

template <typename F>
double best_us(int calls, F&& body, KFORGE_PROGRAM_CLASS& model) {
  double best = 1e30;
  for (int round = 0; round < 5; ++round) {
    static_cast<void>(model.synchronize());
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) body();
    static_cast<void>(model.synchronize());
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() / calls;
    if (us < best) best = us;
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) return fail("usage: gpu_cpp_timing PARAMS CALLS INPUT_DIMS... -- PARAMETER_NAMES...");
  const char* params_path = argv[1];
  const int calls = std::atoi(argv[2]);
  kforge::install_cuda_allocator();
  std::vector<kforge::Tensor> inputs;
  int a = 3;
  for (; a < argc && std::string(argv[a]) != "--"; ++a) {
    kforge::Tensor t;
    t.dtype = kforge::DataType::kFloat32;
    t.place = kforge::GPUPlace();
    std::vector<int64_t> dims;
    for (std::string d = argv[a]; !d.empty();) {
      const size_t comma = d.find(',');
      dims.push_back(std::stoll(d.substr(0, comma)));
      d = comma == std::string::npos ? "" : d.substr(comma + 1);
    }
    CHECK_STATUS(t.set_dims(dims));
    CHECK_STATUS(t.allocate());
    if (cudaMemset(t.data, 0, t.bytes()) != cudaSuccess) return fail("cudaMemset");
    inputs.push_back(t);
  }
  KFORGE_PROGRAM_CLASS model;
  std::ifstream in(params_path, std::ios::binary | std::ios::ate);
  if (!in) return fail(std::string("cannot open ") + params_path);
  const uint64_t size = static_cast<uint64_t>(in.tellg());
  uint64_t offset = 0;
  for (++a; a < argc; ++a) {
    kforge::params::TensorHeader h;
    CHECK_STATUS(kforge::params::read_tensor_header(in, size, offset, &h));
    std::vector<char> host(h.data_bytes);
    in.read(host.data(), static_cast<std::streamsize>(h.data_bytes));
    kforge::Tensor t;
    t.dtype = h.dtype;
    t.place = kforge::GPUPlace();
    CHECK_STATUS(t.set_dims(h.dims, static_cast<size_t>(h.ndim)));
    CHECK_STATUS(t.allocate());
    if (cudaMemcpy(t.data, host.data(), h.data_bytes, cudaMemcpyHostToDevice) != cudaSuccess) return fail("cudaMemcpy");
    CHECK_STATUS(model.bind_parameter(argv[a], t));
    offset = h.data_offset + h.data_bytes;
  }
  std::vector<const kforge::Tensor*> in_ptrs;
  for (const kforge::Tensor& t : inputs) in_ptrs.push_back(&t);
  std::vector<kforge::Tensor> outputs(KFORGE_PROGRAM_CLASS::kNumOutputs);
  std::vector<kforge::Tensor*> out_ptrs;
  for (kforge::Tensor& t : outputs) out_ptrs.push_back(&t);
  const kforge::TensorList in_list{in_ptrs.data(), in_ptrs.size()};
  const kforge::MutableTensorList out_list{out_ptrs.data(), out_ptrs.size()};
  CHECK_STATUS(model.run(in_list, out_list));
  CHECK_STATUS(model.synchronize());
  kforge::Status status;
  const double run_us = best_us(calls, [&] { status = model.run(in_list, out_list); }, model);
  CHECK_STATUS(status);
  const double sync_us = best_us(calls / 4, [&] {
    status = model.run(in_list, out_list);
    if (status.ok()) status = model.synchronize();
  }, model);
  CHECK_STATUS(status);
  std::printf("cpp_run_us %.3f\ncpp_run_sync_us %.3f\n", run_us, sync_us);
  return 0;
}
