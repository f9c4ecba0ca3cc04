// The kforge side of bench/models/compare.py: a generated model class (built with -DKFORGE_MODEL_HEADER and
// -DKFORGE_MODEL_CLASS) kept in its own process and driven over stdin/stdout, so that the engines compared never
// share a process (Paddle and ONNX Runtime bring their own oneDNN and OpenMP runtimes).
//
//   worker BUNDLE [--threads N] [--no-declare]
// BUNDLE: a tensor bundle (tools/interp/tensor_bundle.h) with param/<name> for every parameter and feed/<input>.
// Parameters are bound once and, unless --no-declare, declared constant to the kernel library (what a generated
// class will do when it binds them), so the oneDNN convolutions reorder each filter once.
// Commands, one per line: "out PATH" runs once and writes the first output as raw float32, answering its dims;
// "time N" runs N times, answering N process CPU times in ms; "quit".
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "kforge_kernels.h"
#include "tensor_bundle.h"
#include KFORGE_MODEL_HEADER

namespace {

double process_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

int fail(const std::string& message) {
  std::fprintf(stderr, "worker: error: %s\n", message.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return fail("usage: worker BUNDLE [--threads N] [--no-declare]");
  bool declare = true;
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
      kforge::kernels::set_num_threads(std::atoi(argv[++i]));
    } else if (std::strcmp(argv[i], "--no-declare") == 0) {
      declare = false;
    } else {
      return fail(std::string("unknown argument ") + argv[i]);
    }
  }
  std::vector<kforge::bundle::NamedTensor> all;
  if (kforge::Status s = kforge::bundle::read(argv[1], &all); !s.ok()) return fail(s.message());
  using Model = KFORGE_MODEL_CLASS;
  static Model model;  // static: the workspace may be large
  for (const kforge::bundle::NamedTensor& nt : all) {
    if (nt.name.rfind("param/", 0) != 0) continue;
    // The bundle may hold parameters the program does not read: a re-parameterised PaddleOCR block keeps the ones
    // it replaced (export.py writes every parameter of the layer).
    const std::string name = nt.name.substr(6);
    if (std::find(Model::kParameterNames.begin(), Model::kParameterNames.end(), name) ==
        Model::kParameterNames.end()) {
      continue;
    }
    if (kforge::Status s = model.bind_parameter(name, nt.tensor); !s.ok()) return fail(s.message());
    if (declare) kforge::kernels::declare_constant(nt.tensor.data, nt.tensor.bytes());
  }
  std::vector<const kforge::Tensor*> inputs;
  for (const char* name : Model::kInputNames) {
    const kforge::Tensor* t = kforge::bundle::find(all, std::string("feed/") + name);
    if (t == nullptr) return fail(std::string("no feed/") + name + " in the bundle");
    inputs.push_back(t);
  }
  std::vector<kforge::Tensor> outputs(Model::kNumOutputs);
  std::vector<kforge::Tensor*> output_ptrs;
  for (kforge::Tensor& t : outputs) output_ptrs.push_back(&t);
  const kforge::TensorList in_list{inputs.data(), inputs.size()};
  const kforge::MutableTensorList out_list{output_ptrs.data(), output_ptrs.size()};
  if (kforge::Status s = model.run(in_list, out_list); !s.ok()) return fail(s.message());
  std::printf("ready\n");
  std::fflush(stdout);

  std::string command;
  while (std::cin >> command) {
    if (command == "quit") break;
    if (command == "out") {
      std::string path;
      std::cin >> path;
      if (kforge::Status s = model.run(in_list, out_list); !s.ok()) return fail(s.message());
      const kforge::Tensor& out = outputs[0];
      if (out.dtype != kforge::DataType::kFloat32) return fail("the first output is not float32");
      FILE* f = std::fopen(path.c_str(), "wb");
      if (f == nullptr || std::fwrite(out.data, 1, out.bytes(), f) != out.bytes()) return fail("cannot write " + path);
      std::fclose(f);
      std::printf("%s\n", out.dims_string().c_str());
    } else if (command == "time") {
      long n = 0;
      std::cin >> n;
      std::string line;
      for (long i = 0; i < n; ++i) {
        const double t0 = process_cpu_ms();
        if (kforge::Status s = model.run(in_list, out_list); !s.ok()) return fail(s.message());
        line += (i ? " " : "") + std::to_string(process_cpu_ms() - t0);
      }
      std::printf("%s\n", line.c_str());
    } else {
      return fail("unknown command " + command);
    }
    std::fflush(stdout);
  }
  return 0;
}
