// load_parameters() of a generated class, end to end (tests/e2e/test_run_model.py, params-* tests):
//   load_check GOOD.pdiparams INPUT.npy OUT_DIR [BAD.pdiparams ...]
// Loads GOOD; then for each BAD, after a good load, expects load_parameters to fail and run() to report an
// unbound parameter (nothing half-bound stays usable), printing both messages; finally loads GOOD again, runs on
// INPUT and writes output i as OUT_DIR/<i>.npy. Exit 0 when every expectation held.
#include <cstdio>
#include <string>
#include <vector>

#include "npy.h"
#include KFORGE_PROGRAM_HEADER

namespace {

using Program = KFORGE_PROGRAM_CLASS;

int fail(const std::string& message) {
  std::fprintf(stderr, "load_check: %s\n", message.c_str());
  return 1;
}

kforge::Status run(Program& program, const kforge::Tensor& x, std::vector<kforge::Tensor>* outputs) {
  outputs->assign(Program::kNumOutputs, kforge::Tensor{});
  std::vector<kforge::Tensor*> ptrs;
  for (kforge::Tensor& t : *outputs) ptrs.push_back(&t);
  const kforge::Tensor* in[] = {&x};
  return program.run(kforge::TensorList{in, 1}, kforge::MutableTensorList{ptrs.data(), ptrs.size()});
}

}  // namespace

int main(int argc, char** argv) {
  static_assert(Program::kNumInputs == 1, "load_check drives programs with one input");
  if (argc < 4) return fail("usage: load_check GOOD.pdiparams INPUT.npy OUT_DIR [BAD.pdiparams ...]");
  kforge::Tensor x;
  if (kforge::Status s = kforge::npy::read_file(argv[2], &x); !s.ok()) return fail(s.message());
  static Program program;
  std::vector<kforge::Tensor> outputs;
  for (int i = 4; i < argc; ++i) {
    if (kforge::Status s = program.load_parameters(argv[1]); !s.ok()) return fail("good file: " + s.message());
    if (kforge::Status s = run(program, x, &outputs); !s.ok()) return fail("run after a good load: " + s.message());
    kforge::Status bad = program.load_parameters(argv[i]);
    if (bad.ok()) return fail(std::string("'") + argv[i] + "' loaded without error");
    std::printf("load %s: %s\n", argv[i], bad.message().c_str());
    kforge::Status after = run(program, x, &outputs);
    if (after.ok()) return fail(std::string("run() succeeded after the failed load of '") + argv[i] + "'");
    std::printf("run: %s\n", after.message().c_str());
  }
  if (kforge::Status s = program.load_parameters(argv[1]); !s.ok()) return fail("good file: " + s.message());
  if (kforge::Status s = run(program, x, &outputs); !s.ok()) return fail(s.message());
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string path = std::string(argv[3]) + "/" + std::to_string(i) + ".npy";
    if (kforge::Status s = kforge::npy::write_file(path, outputs[i]); !s.ok()) return fail(s.message());
  }
  return 0;
}
