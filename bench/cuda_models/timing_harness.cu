// GPU half of bench/cuda_models/run.sh: times the class that `kforge compile --target cuda` generated for a
// whole vision model. Correctness is checked elsewhere (tests/gpu/check_conv.sh); here the parameters are
// seeded uniform values of realistic scale (PARAMS.txt, written by export_models.py: NAME LOW HIGH DIM... per
// line) filled on the device, and the input is uniform in [-1, 1). A parameter that the program wants 16-bit
// (compiled with --precision: bind_parameter refuses float32) is drawn as float32 and rounded to float16, or to
// bfloat16 when float16 is refused too.
//
// For every batch size: 10 warm-up runs (the first finds the cuDNN algorithms for the batch and, with
// --cuda-graph, captures the graph), then 50 timed runs, each `run()` + `synchronize()` between two host clock
// reads; prints the median and the minimum. TF32 is allowed for the convolutions (the generated default, as
// torch's cudnn.allow_tf32); the GEMMs run in float32 (cuBLASLt, no TF32), as torch's default matmul precision,
// unless KFORGE_GEMM_TF32=1 is in the environment (the class's set_gemm_tf32(true), where it has one);
// KFORGE_CONV_TF32=0 runs the convolutions in strict float32 (set_conv_tf32(false)).
// The input is [BATCH, 3, 224, 224] unless KFORGE_INPUT_DIMS says otherwise: comma-separated dims, B for the
// batch (bench/transformers: "B,128,768"); a program with several inputs takes one such list per input, in its
// kInputNames order, separated by ';' (a GPT decode step: "B,1;B,12,128,64;..."). Float inputs are uniform in
// [-1, 1); integer inputs (token ids) uniform in [0, KFORGE_INT_HIGH) (default 1000). Outputs of any number.
//
// Built per program:
//   nvcc -arch=sm_90 -std=c++17 -O2 -I GEN -DKFORGE_PROGRAM_HEADER='"NAME.h"' -DKFORGE_PROGRAM_CLASS=NAME
//        bench/cuda_models/timing_harness.cu GEN/NAME.cu GEN/NAME_kernels.cu [cuDNN, cuBLASLt]
// Usage: timing_harness PARAMS.txt BATCH...   prints one line per batch: `BATCH median_ms min_ms`
// With KFORGE_PROFILE_RUN=1 in the environment, one more run() after the timed ones lies between
// cudaProfilerStart() and cudaProfilerStop(), for `ncu --profile-from-start off` (bench/cuda_models/profile.sh).
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include KFORGE_PROGRAM_HEADER
#include "kforge_half.cuh"  // beside every generated class with convolutions or GEMMs (all models here)

namespace {

constexpr int kWarmup = 10;
constexpr int kTimed = 50;
constexpr uint64_t kSeed = 1;

int fail(const std::string& message) {
  std::fprintf(stderr, "timing_harness: error: %s\n", message.c_str());
  return 1;
}

#define CHECK_STATUS(expr)                   \
  do {                                       \
    kforge::Status s_ = (expr);              \
    if (!s_.ok()) return fail(s_.message()); \
  } while (0)

// splitmix64 of (seed, stream, index): a counter-based generator, so every element is independent of the launch
// shape and the values are reproducible.
__device__ uint64_t mix(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

template <typename T>
__global__ void fill_uniform(T* out, int64_t n, float low, float high, uint64_t stream) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const uint64_t bits = mix(mix(kSeed ^ (stream * 0x632BE59BD9B4E019ull)) + uint64_t(i));
    const float u = float(bits >> 40) * (1.0f / 16777216.0f);  // [0, 1), 24 bits
    out[i] = kforge::cuda::from_float<T>(low + (high - low) * u);
  }
}

__global__ void fill_int64(int64_t* out, int64_t n, int64_t high, uint64_t stream) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    out[i] = int64_t(mix(mix(kSeed ^ (stream * 0x632BE59BD9B4E019ull)) + uint64_t(i)) % uint64_t(high));
  }
}

// A device tensor of `dims` and `dtype` (float32, float16 or bfloat16), uniform in [low, high) (then rounded);
// int64: integers uniform in [low, high).
kforge::Status random_tensor(const std::vector<int64_t>& dims, float low, float high, uint64_t stream,
                             kforge::DataType dtype, kforge::Tensor* t) {
  *t = kforge::Tensor();
  t->dtype = dtype;
  t->place = kforge::GPUPlace();
  KFORGE_RETURN_IF_ERROR(t->set_dims(dims));
  KFORGE_RETURN_IF_ERROR(t->allocate());
  const int64_t n = t->numel();
  if (n == 0) return kforge::Status::OK();
  const int blocks = int(std::min<int64_t>((n + 255) / 256, 4096));
  if (dtype == kforge::DataType::kFloat16) {
    fill_uniform<<<blocks, 256>>>(static_cast<__half*>(t->data), n, low, high, stream);
  } else if (dtype == kforge::DataType::kBFloat16) {
    fill_uniform<<<blocks, 256>>>(static_cast<__nv_bfloat16*>(t->data), n, low, high, stream);
  } else if (dtype == kforge::DataType::kInt64) {
    fill_int64<<<blocks, 256>>>(t->data_as<int64_t>(), n, int64_t(high), stream);
  } else {
    fill_uniform<<<blocks, 256>>>(t->data_as<float>(), n, low, high, stream);
  }
  KFORGE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  return kforge::Status::OK();
}

// The inputs' dims for `batch`: KFORGE_INPUT_DIMS (one comma-separated list per input, ';' between inputs) with B
// replaced, else one image batch.
bool input_dims(int64_t batch, std::vector<std::vector<int64_t>>* inputs) {
  const char* spec = std::getenv("KFORGE_INPUT_DIMS");
  inputs->clear();
  if (spec == nullptr || spec[0] == '\0') {
    inputs->push_back({batch, 3, 224, 224});
    return true;
  }
  std::istringstream lists(spec);
  for (std::string list; std::getline(lists, list, ';');) {
    std::vector<int64_t>& dims = inputs->emplace_back();
    std::istringstream fields(list);
    for (std::string field; std::getline(fields, field, ',');) {
      if (field == "B") {
        dims.push_back(batch);
        continue;
      }
      char* end = nullptr;
      const long long d = std::strtoll(field.c_str(), &end, 10);
      if (field.empty() || *end != '\0' || d < 0) return false;
      dims.push_back(d);
    }
    if (dims.empty()) return false;
  }
  return !inputs->empty();
}

// set_gemm_tf32(true) where the class has it (float32 GEMMs); false where it has none.
template <typename P>
auto allow_gemm_tf32(P& program, int) -> decltype(program.set_gemm_tf32(true), bool()) {
  program.set_gemm_tf32(true);
  return true;
}
template <typename P>
bool allow_gemm_tf32(P&, long) {
  return false;
}

// set_conv_tf32(false) where the class has it (strict float32 convolutions); false where it has none.
template <typename P>
auto forbid_conv_tf32(P& program, int) -> decltype(program.set_conv_tf32(false), bool()) {
  program.set_conv_tf32(false);
  return true;
}
template <typename P>
bool forbid_conv_tf32(P&, long) {
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return fail("usage: timing_harness PARAMS.txt BATCH...");
  kforge::install_cuda_allocator();
  using Program = KFORGE_PROGRAM_CLASS;
  Program program;

  std::ifstream specs(argv[1]);
  if (!specs) return fail(std::string("cannot read ") + argv[1]);
  std::vector<kforge::Tensor> params;
  params.reserve(Program::kNumParameters);
  std::string line;
  for (uint64_t stream = 1; std::getline(specs, line); ++stream) {
    std::istringstream fields(line);
    std::string name;
    float low = 0, high = 0;
    std::vector<int64_t> dims;
    if (!(fields >> name >> low >> high)) return fail(std::string(argv[1]) + ": bad line '" + line + "'");
    for (int64_t d; fields >> d;) dims.push_back(d);
    params.emplace_back();
    kforge::Status bound = kforge::Status::Error("unbound");
    for (kforge::DataType dtype : {kforge::DataType::kFloat32, kforge::DataType::kFloat16, kforge::DataType::kBFloat16}) {
      CHECK_STATUS(random_tensor(dims, low, high, stream, dtype, &params.back()));
      bound = program.bind_parameter(name, params.back());
      if (bound.ok()) break;
    }
    CHECK_STATUS(bound);
  }
  if (params.size() != Program::kNumParameters) {
    return fail(std::string(argv[1]) + " lists " + std::to_string(params.size()) + " parameters, the program has " +
                std::to_string(Program::kNumParameters));
  }
  if (const char* tf32 = std::getenv("KFORGE_GEMM_TF32"); tf32 != nullptr && tf32[0] == '1' &&
      !allow_gemm_tf32(program, 0)) {
    return fail("KFORGE_GEMM_TF32=1, but the class has no float32 GEMM (no set_gemm_tf32)");
  }
  if (const char* tf32 = std::getenv("KFORGE_CONV_TF32"); tf32 != nullptr && tf32[0] == '0' &&
      !forbid_conv_tf32(program, 0)) {
    return fail("KFORGE_CONV_TF32=0, but the class has no convolution (no set_conv_tf32)");
  }

  for (int a = 2; a < argc; ++a) {
    const int64_t batch = std::atoll(argv[a]);
    if (batch <= 0) return fail(std::string("bad batch '") + argv[a] + "'");
    std::vector<std::vector<int64_t>> dims;
    if (!input_dims(batch, &dims) || dims.size() != Program::kNumInputs) {
      return fail("KFORGE_INPUT_DIMS must give the dims of " + std::to_string(Program::kNumInputs) + " input(s)");
    }
    std::vector<kforge::Tensor> xs(Program::kNumInputs), ys(Program::kNumOutputs);
    std::vector<const kforge::Tensor*> in;
    std::vector<kforge::Tensor*> out;
    const char* int_high = std::getenv("KFORGE_INT_HIGH");
    for (size_t i = 0; i < xs.size(); ++i) {
      // The class's dtype: float32, or 16-bit under --io-precision compute; int64 token ids.
      const kforge::DataType dtype = Program::kInputSpecs[i].dtype;
      const bool ids = dtype == kforge::DataType::kInt64;
      const float high = ids ? float(int_high != nullptr ? std::atoll(int_high) : 1000) : 1.0f;
      const uint64_t stream = i == 0 ? 0 : (uint64_t(1) << 32) + i;  // input 0: the stream it always had
      CHECK_STATUS(random_tensor(dims[i], ids ? 0.0f : -1.0f, high, stream, dtype, &xs[i]));
      in.push_back(&xs[i]);
    }
    for (kforge::Tensor& y : ys) out.push_back(&y);
    if (cudaDeviceSynchronize() != cudaSuccess) return fail("filling the inputs failed");
    auto once = [&]() -> kforge::Status {
      KFORGE_RETURN_IF_ERROR(program.run(kforge::TensorList{in.data(), in.size()},
                                         kforge::MutableTensorList{out.data(), out.size()}));
      return program.synchronize();
    };
    for (int i = 0; i < kWarmup; ++i) CHECK_STATUS(once());
    std::vector<double> ms;
    for (int i = 0; i < kTimed; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      CHECK_STATUS(once());
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    if (const char* profile = std::getenv("KFORGE_PROFILE_RUN"); profile != nullptr && profile[0] == '1') {
      if (cudaProfilerStart() != cudaSuccess) return fail("cudaProfilerStart failed");
      CHECK_STATUS(once());
      if (cudaProfilerStop() != cudaSuccess) return fail("cudaProfilerStop failed");
    }
    std::sort(ms.begin(), ms.end());
    std::printf("%lld %.4f %.4f\n", static_cast<long long>(batch), ms[ms.size() / 2], ms.front());
  }
  return 0;
}
