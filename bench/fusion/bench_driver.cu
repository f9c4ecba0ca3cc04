// Times one class that `kforge compile --target cuda` generated (bench/fusion/run.sh builds one per case).
// Inputs are float32 device tensors of the dims given on the command line, filled with random values
// (uniform in [-2, 2), never zeros). Prints one line: `kforge <case> median_ms <m> min_ms <m> runs <n>`.
//   --mode events  each run() between two CUDA events on the class's stream (device time of the launches)
//   --mode sync    host wall time of run() + synchronize() (end to end, launch overhead included)
// Built: nvcc -arch=sm_90 -std=c++17 -O2 -I GEN -DKFORGE_PROGRAM_HEADER='"NAME.h"' -DKFORGE_PROGRAM_CLASS=NAME
//        bench/fusion/bench_driver.cu GEN/NAME.cu GEN/NAME_kernels.cu
// Usage: bench_driver CASE --mode events|sync --runs N [--batch B] --input 8192,8192 [--input 8192]...
// With --batch B, each timed sample is B back-to-back runs between the events, divided by B.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include KFORGE_PROGRAM_HEADER

namespace {

int fail(const std::string& message) {
  std::fprintf(stderr, "bench_driver: error: %s\n", message.c_str());
  return 1;
}

std::vector<int64_t> parse_dims(const std::string& text) {
  std::vector<int64_t> dims;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string::npos) end = text.size();
    dims.push_back(std::strtoll(text.substr(start, end - start).c_str(), nullptr, 10));
    start = end + 1;
  }
  return dims;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return fail("usage: bench_driver CASE --mode events|sync --runs N --input D0,D1...");
  const std::string name = argv[1];
  std::string mode = "events";
  int runs = 50;
  int batch = 1;  // events mode: run() calls between two events (back to back, as an application would)
  std::vector<std::vector<int64_t>> input_dims;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string arg = argv[i];
    if (arg == "--mode") mode = argv[i + 1];
    else if (arg == "--runs") runs = std::atoi(argv[i + 1]);
    else if (arg == "--batch") batch = std::atoi(argv[i + 1]);
    else if (arg == "--input") input_dims.push_back(parse_dims(argv[i + 1]));
    else return fail("unknown argument " + arg);
  }
  using Program = KFORGE_PROGRAM_CLASS;
  if (input_dims.size() != Program::kNumInputs) return fail("give one --input per program input");
  kforge::install_cuda_allocator();

  std::mt19937 rng(12345);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<kforge::Tensor> inputs(Program::kNumInputs);
  std::vector<const kforge::Tensor*> input_ptrs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    kforge::Tensor& t = inputs[i];
    t.dtype = kforge::DataType::kFloat32;
    t.place = kforge::GPUPlace();
    if (!t.set_dims(input_dims[i]).ok() || !t.allocate().ok()) return fail("cannot allocate an input");
    std::vector<float> host(static_cast<size_t>(t.numel()));
    for (float& v : host) v = dist(rng);
    if (cudaMemcpy(t.data, host.data(), t.bytes(), cudaMemcpyHostToDevice) != cudaSuccess) return fail("upload");
    input_ptrs.push_back(&t);
  }
  std::vector<kforge::Tensor> outputs(Program::kNumOutputs);
  std::vector<kforge::Tensor*> output_ptrs;
  for (kforge::Tensor& t : outputs) output_ptrs.push_back(&t);
  const kforge::TensorList in{input_ptrs.data(), input_ptrs.size()};
  const kforge::MutableTensorList out{output_ptrs.data(), output_ptrs.size()};

  Program program;
  for (int i = 0; i < 20; ++i) {  // warm-up: allocation, module load, graph capture
    kforge::Status s = program.run(in, out);
    if (s.ok()) s = program.synchronize();
    if (!s.ok()) return fail(s.message());
  }
  std::vector<double> ms;
  if (mode == "sync") {
    for (int i = 0; i < runs; ++i) {
      const auto start = std::chrono::steady_clock::now();
      kforge::Status s = program.run(in, out);
      if (s.ok()) s = program.synchronize();
      const auto end = std::chrono::steady_clock::now();
      if (!s.ok()) return fail(s.message());
      ms.push_back(std::chrono::duration<double, std::milli>(end - start).count());
    }
  } else {
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    for (int i = 0; i < runs; ++i) {
      cudaEventRecord(a, program.stream());
      kforge::Status s;
      for (int k = 0; k < batch && s.ok(); ++k) s = program.run(in, out);
      cudaEventRecord(b, program.stream());
      if (!s.ok()) return fail(s.message());
      if (cudaEventSynchronize(b) != cudaSuccess) return fail("event sync");
      float t = 0;
      cudaEventElapsedTime(&t, a, b);
      ms.push_back(t / batch);
    }
  }
  std::sort(ms.begin(), ms.end());
  std::printf("kforge %s median_ms %.5f min_ms %.5f runs %d\n", name.c_str(), ms[ms.size() / 2], ms.front(), runs);
  return 0;
}
