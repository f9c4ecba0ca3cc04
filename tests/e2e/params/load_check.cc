// load_parameters() of a generated class, end to end (tests/e2e/test_run_model.py, params-* tests):
//   load_check GOOD.pdiparams INPUT.npy OUT_DIR [BAD.pdiparams ...]
// Loads GOOD; then for each BAD, after a good load, expects load_parameters to fail and run() to report an
// unbound parameter (nothing half-bound stays usable), printing both messages; finally loads GOOD again, runs on
// INPUT and writes output i as OUT_DIR/<i>.npy. Exit 0 when every expectation held.
// Throughout, it checks through kforge_runtime.h's kernel library hooks that exactly the memory of the bound
// parameters is declared constant: all of it after a good load, none after a failed one or the object's end.
#include <cstdio>
#include <map>
#include <memory>
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

// The declared ranges (start -> bytes), recorded by hooks that then call the library's own.
std::map<const void*, size_t> g_declared;
kforge::KernelLibraryHooks g_library;
std::string g_hook_error;

void record_declare(const void* data, size_t bytes) {
  if (!g_declared.emplace(data, bytes).second) g_hook_error = "a range was declared twice without a release";
  if (g_library.declare_constant != nullptr) g_library.declare_constant(data, bytes);
}
void record_release(const void* data) {
  if (g_declared.erase(data) == 0) g_hook_error = "a range was released that was not declared";
  if (g_library.release_constant != nullptr) g_library.release_constant(data);
}

// Exactly `expected` ranges are declared, and nothing went wrong in the hooks.
bool declared_ok(size_t expected, const char* when, std::string* why) {
  if (!g_hook_error.empty()) {
    *why = g_hook_error + " (" + when + ")";
    return false;
  }
  if (g_declared.size() != expected) {
    *why = std::string(when) + ": " + std::to_string(g_declared.size()) + " ranges declared constant, expected " +
           std::to_string(expected);
    return false;
  }
  return true;
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
  g_library = kforge::kernel_library_hooks();
  kforge::kernel_library_hooks().declare_constant = &record_declare;
  kforge::kernel_library_hooks().release_constant = &record_release;
  std::string why;
  static Program program;
  std::vector<kforge::Tensor> outputs;
  // Declared while bound, released when the object ends.
  {
    auto scoped = std::make_unique<Program>();
    if (kforge::Status s = scoped->load_parameters(argv[1]); !s.ok()) return fail("good file: " + s.message());
    if (!declared_ok(Program::kNumParameters, "after a good load", &why)) return fail(why);
    if (kforge::Status s = scoped->load_parameters(argv[1]); !s.ok()) return fail("good file: " + s.message());
    if (!declared_ok(Program::kNumParameters, "after loading again", &why)) return fail(why);
    if (kforge::Status s = scoped->set_num_threads(0); s.ok()) return fail("set_num_threads(0) succeeded");
    if (kforge::Status s = scoped->set_num_threads(2); !s.ok()) return fail(s.message());
    if (kforge::Status s = run(*scoped, x, &outputs); !s.ok()) return fail("run with 2 threads: " + s.message());
    if (kforge::Status s = scoped->set_num_threads(1); !s.ok()) return fail(s.message());
  }
  if (!declared_ok(0, "after the object's end", &why)) return fail(why);
  for (int i = 4; i < argc; ++i) {
    if (kforge::Status s = program.load_parameters(argv[1]); !s.ok()) return fail("good file: " + s.message());
    if (kforge::Status s = run(program, x, &outputs); !s.ok()) return fail("run after a good load: " + s.message());
    kforge::Status bad = program.load_parameters(argv[i]);
    if (bad.ok()) return fail(std::string("'") + argv[i] + "' loaded without error");
    std::printf("load %s: %s\n", argv[i], bad.message().c_str());
    kforge::Status after = run(program, x, &outputs);
    if (after.ok()) return fail(std::string("run() succeeded after the failed load of '") + argv[i] + "'");
    if (!declared_ok(0, "after a failed load", &why)) return fail(why);
    std::printf("run: %s\n", after.message().c_str());
  }
  if (kforge::Status s = program.load_parameters(argv[1]); !s.ok()) return fail("good file: " + s.message());
  if (kforge::Status s = run(program, x, &outputs); !s.ok()) return fail(s.message());
  if (!declared_ok(Program::kNumParameters, "after the last load", &why)) return fail(why);
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string path = std::string(argv[3]) + "/" + std::to_string(i) + ".npy";
    if (kforge::Status s = kforge::npy::write_file(path, outputs[i]); !s.ok()) return fail(s.message());
  }
  return 0;
}
