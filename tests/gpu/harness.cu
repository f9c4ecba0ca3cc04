// GPU half of tests/gpu/check_fusion.sh: runs the class that `kforge compile --target cuda` generated on the
// inputs and parameters of a tensor bundle (kforge-interp --write-inputs) and writes its outputs as a bundle,
// which kforge-interp then compares with its own (unfused, CPU) results.
//
// Every output is poisoned before the run that is written: run 1 allocates the outputs (and, with
// --cuda-graph, captures the graph), then the outputs are filled with 0xFF bytes (NaN for floats) and run 2
// (a graph replay) must overwrite every element. Run 3 uses fresh, poisoned output tensors (other pointers:
// with --cuda-graph a re-capture and in-place graph update) and must give bit-identical results.
//
// 16-bit programs (float16 / bfloat16) are checked against a float32 twin, since kforge-interp computes in
// float32 only: the bundle then holds float32 values, and `--narrow feed/x=bfloat16` (one per 16-bit input or
// parameter) rounds that tensor to the 16-bit type, to nearest even (cuda_fp16.h / cuda_bf16.h host
// conversions), before it goes to the GPU; `--rounded-inputs FILE` writes every input and parameter back as
// float32 after that rounding (exact), so that kforge-interp runs the twin on exactly the values the GPU saw.
// 16-bit outputs are written as float32 (exact as well); the repeatability check compares their raw bits.
// An input the class declares 16-bit (--io-precision compute) while the bundle holds float32 is rounded the same way.
// `--load-parameters FILE.pdiparams` reads the parameters with the class's load_parameters() instead of binding the
// bundle's (a program compiled with --precision rounds the file's float32 to its 16-bit parameters there).
//
// Built per program:
//   nvcc -arch=sm_90 -std=c++17 -O2 -I GEN -I tools/interp -DKFORGE_PROGRAM_HEADER='"NAME.h"'
//        -DKFORGE_PROGRAM_CLASS=NAME tests/gpu/harness.cu GEN/NAME.cu GEN/NAME_kernels.cu
// With -DKFORGE_STRICT_FP32 (a program with convolutions, tests/gpu/check_conv.sh) TF32 is turned off first.
// Usage: gpu_harness INPUTS.bin OUTPUTS.bin [--narrow NAME=float16|bfloat16]... [--rounded-inputs FILE]
// Several classes in one harness (tests/e2e/cuda_index_emulated.py): compile with -DKFORGE_HARNESS_BATCH and no
// KFORGE_PROGRAM_HEADER, after a file that includes the classes' headers, then define main() to pick one and call
// kforge_harness::run<NS::NAME>(argc, argv) with the harness's own arguments.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tensor_bundle.h"
#ifndef KFORGE_HARNESS_BATCH
#include KFORGE_PROGRAM_HEADER
#endif

namespace kforge_harness {

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

// `f32` rounded to `dtype` (float16 or bfloat16) into `narrow`, and those values back as float32 into `rounded`.
kforge::Status round_to_half(const kforge::Tensor& f32, kforge::DataType dtype, kforge::Tensor* narrow,
                             kforge::Tensor* rounded) {
  if (f32.dtype != kforge::DataType::kFloat32) {
    return kforge::Status::Error("--narrow: the bundle value is ", f32.dtype, ", not float32");
  }
  if (dtype != kforge::DataType::kFloat16 && dtype != kforge::DataType::kBFloat16) {
    return kforge::Status::Error("--narrow: ", dtype, " is not float16 or bfloat16");
  }
  for (kforge::Tensor* t : {narrow, rounded}) {
    *t = kforge::Tensor();
    t->dtype = t == narrow ? dtype : kforge::DataType::kFloat32;
    KFORGE_RETURN_IF_ERROR(t->set_dims(f32.shape()));
    KFORGE_RETURN_IF_ERROR(t->allocate());
  }
  for (int64_t i = 0; i < f32.numel(); ++i) {
    const float v = f32.data_as<const float>()[i];
    if (dtype == kforge::DataType::kBFloat16) {
      const __nv_bfloat16 b = __float2bfloat16_rn(v);
      narrow->data_as<__nv_bfloat16>()[i] = b;
      rounded->data_as<float>()[i] = __bfloat162float(b);
    } else {
      const __half h = __float2half_rn(v);
      narrow->data_as<__half>()[i] = h;
      rounded->data_as<float>()[i] = __half2float(h);
    }
  }
  return kforge::Status::OK();
}

// A 16-bit host tensor as float32 (exact); other tensors are copied as they are.
kforge::Status widen(const kforge::Tensor& t, kforge::Tensor* out) {
  if (t.dtype != kforge::DataType::kFloat16 && t.dtype != kforge::DataType::kBFloat16) {
    return kforge::bundle::deep_copy(t, out);
  }
  *out = kforge::Tensor();
  out->dtype = kforge::DataType::kFloat32;
  KFORGE_RETURN_IF_ERROR(out->set_dims(t.shape()));
  KFORGE_RETURN_IF_ERROR(out->allocate());
  for (int64_t i = 0; i < t.numel(); ++i) {
    out->data_as<float>()[i] = t.dtype == kforge::DataType::kBFloat16
                                   ? __bfloat162float(t.data_as<const __nv_bfloat16>()[i])
                                   : __half2float(t.data_as<const __half>()[i]);
  }
  return kforge::Status::OK();
}

kforge::Status poison(const kforge::Tensor& dev) {
  if (dev.bytes() > 0) KFORGE_CUDA_RETURN_IF_ERROR(cudaMemset(dev.data, 0xFF, dev.bytes()));
  return kforge::Status::OK();
}

// The whole check for one class (main's arguments).
template <typename Program>
int run(int argc, char** argv) {
  const char* usage =
      "usage: gpu_harness INPUTS.bin OUTPUTS.bin [--narrow NAME=float16|bfloat16]... [--rounded-inputs FILE] "
      "[--load-parameters FILE.pdiparams]";
  if (argc < 3) return fail(usage);
  kforge::install_cuda_allocator();
  std::vector<kforge::bundle::NamedTensor> all;
  CHECK_STATUS(kforge::bundle::read(argv[1], &all));
  std::vector<kforge::bundle::NamedTensor> rounded;  // --rounded-inputs: `all` as float32 after the narrowing
  for (const kforge::bundle::NamedTensor& nt : all) {
    rounded.push_back({nt.name, kforge::Tensor()});
    CHECK_STATUS(kforge::bundle::deep_copy(nt.tensor, &rounded.back().tensor));
  }
  std::string rounded_path, parameters_path;
  for (int a = 3; a < argc; ++a) {
    const std::string arg = argv[a];
    if (a + 1 >= argc) return fail(usage);
    const std::string value = argv[++a];
    if (arg == "--rounded-inputs") {
      rounded_path = value;
      continue;
    }
    if (arg == "--load-parameters") {
      parameters_path = value;
      continue;
    }
    const size_t eq = value.find('=');
    kforge::DataType dtype{};
    if (arg != "--narrow" || eq == std::string::npos || !kforge::parse_data_type(value.substr(eq + 1), &dtype)) {
      return fail(usage);
    }
    size_t i = 0;
    while (i < all.size() && all[i].name != value.substr(0, eq)) ++i;
    if (i == all.size()) return fail("--narrow: no tensor '" + value.substr(0, eq) + "' in " + argv[1]);
    kforge::Tensor narrow;
    CHECK_STATUS(round_to_half(all[i].tensor, dtype, &narrow, &rounded[i].tensor));
    all[i].tensor = std::move(narrow);
  }
  if (!rounded_path.empty()) CHECK_STATUS(kforge::bundle::write(rounded_path, rounded));

  Program program;
#ifdef KFORGE_STRICT_FP32
  program.set_conv_tf32(false);  // tests/gpu/check_conv.sh: float32 convolutions, no TF32
#endif
  std::vector<kforge::Tensor> params;
  params.reserve(all.size());
  if (!parameters_path.empty()) CHECK_STATUS(program.load_parameters(parameters_path.c_str()));
  for (const kforge::bundle::NamedTensor& nt : all) {
    if (nt.name.rfind("param/", 0) != 0 || !parameters_path.empty()) continue;
    params.emplace_back();
    CHECK_STATUS(to_device(nt.tensor, &params.back()));
    CHECK_STATUS(program.bind_parameter(nt.name.substr(6), params.back()));
  }
  std::vector<kforge::Tensor> inputs(Program::kNumInputs);
  std::vector<const kforge::Tensor*> input_ptrs;
  // inputs.size(), not kNumInputs: nvcc warns of an unsigned compared with zero for a program without inputs (a
  // GraphNet subgraph that computes from its parameters alone), and warnings are errors here.
  for (size_t i = 0; i < inputs.size(); ++i) {
    const kforge::Tensor* t = kforge::bundle::find(all, std::string("feed/") + Program::kInputNames[i]);
    if (t == nullptr) return fail(std::string("no value for input '") + Program::kInputNames[i] + "'");
    const kforge::DataType wants = Program::kInputSpecs[i].dtype;
    if (t->dtype == kforge::DataType::kFloat32 &&
        (wants == kforge::DataType::kFloat16 || wants == kforge::DataType::kBFloat16)) {
      // A class compiled with --io-precision compute takes the 16-bit type: the bundle's float32, rounded.
      kforge::Tensor narrow, rounded_input;
      CHECK_STATUS(round_to_half(*t, wants, &narrow, &rounded_input));
      CHECK_STATUS(to_device(narrow, &inputs[i]));
      input_ptrs.push_back(&inputs[i]);
      continue;
    }
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

  std::vector<kforge::Tensor> raw(Program::kNumOutputs);  // as the GPU wrote them
  std::vector<kforge::bundle::NamedTensor> named;           // 16-bit ones widened to float32
  for (size_t i = 0; i < Program::kNumOutputs; ++i) {
    CHECK_STATUS(to_host(outputs[i], &raw[i]));
    named.push_back({Program::kOutputNames[i], kforge::Tensor()});
    CHECK_STATUS(widen(raw[i], &named.back().tensor));
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
    if (host.bytes() != raw[i].bytes() || std::memcmp(host.data, raw[i].data, host.bytes()) != 0) {
      return fail(std::string("output '") + Program::kOutputNames[i] + "' differs between two runs");
    }
  }
  std::printf("gpu_harness: %zu launches per run, outputs written and repeatable\n", Program::kNumLaunches);
  return 0;
}

}  // namespace kforge_harness

#ifndef KFORGE_HARNESS_BATCH
int main(int argc, char** argv) { return kforge_harness::run<KFORGE_PROGRAM_CLASS>(argc, argv); }
#endif
