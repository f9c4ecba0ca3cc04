// The generated-code half of tools/check-program, the end-to-end tests and the dispatch benchmark: runs the
// class that `kforge compile` generated on inputs and parameters read from a tensor bundle (written by
// kforge-interp --write-inputs), and writes its outputs (and, with trace hooks, every op result) as bundles.
//
// Built per program (C++17, no kforge library):
//   g++ -std=c++17 -O2 -Wall -Wextra -Werror -I GEN -I tools/interp
//       -DKFORGE_PROGRAM_HEADER='"NAME.h"' -DKFORGE_PROGRAM_CLASS=NAME [-DKFORGE_TRACE_HOOK=kforge_harness_trace]
//       tools/check_program/harness.cc GEN/NAME.cc libkforge_kernels.a
// Usage: harness INPUTS.bin OUTPUTS.bin [--trace TRACE.bin] [--bench RUNS] [--also INPUTS OUTPUTS]...
// Parameters are bound once from the first INPUTS; each --also runs the same object on more inputs.
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "tensor_bundle.h"
#include KFORGE_PROGRAM_HEADER

namespace {

std::vector<kforge::bundle::NamedTensor>& trace_store() {
  static std::vector<kforge::bundle::NamedTensor> store;
  return store;
}
bool g_tracing = false;

double thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

int fail(const std::string& message) {
  std::fprintf(stderr, "harness: error: %s\n", message.c_str());
  return 1;
}

}  // namespace

// The trace hook the generated code calls after each kernel when built with -DKFORGE_TRACE_HOOK.
void kforge_harness_trace(const char* value, const kforge::Tensor& tensor) {
  if (!g_tracing) return;
  kforge::bundle::NamedTensor entry;
  entry.name = value;
  if (kforge::bundle::deep_copy(tensor, &entry.tensor).ok()) trace_store().push_back(std::move(entry));
}

/// Runs `program` (parameters bound) on the feeds of `inputs_path`; writes the outputs to `outputs_path`.
template <typename Program>
int run_once(Program& program, const std::vector<kforge::bundle::NamedTensor>& all, const std::string& inputs_path,
             const std::string& outputs_path, const std::string& trace_path, long bench_runs) {
  std::vector<const kforge::Tensor*> inputs;
  for (const char* name : Program::kInputNames) {
    const kforge::Tensor* t = kforge::bundle::find(all, std::string("feed/") + name);
    if (t == nullptr) return fail(std::string("no value for input '") + name + "' in " + inputs_path);
    inputs.push_back(t);
  }
  std::vector<kforge::Tensor> outputs(Program::kNumOutputs);
  std::vector<kforge::Tensor*> output_ptrs;
  for (kforge::Tensor& t : outputs) output_ptrs.push_back(&t);
  const kforge::TensorList in_list{inputs.data(), inputs.size()};
  const kforge::MutableTensorList out_list{output_ptrs.data(), output_ptrs.size()};

  trace_store().clear();
  g_tracing = !trace_path.empty();
  kforge::Status status = program.run(in_list, out_list);
  g_tracing = false;
  if (!status.ok()) return fail(status.message());

  std::vector<kforge::bundle::NamedTensor> named;
  for (size_t i = 0; i < Program::kNumOutputs; ++i) named.push_back({Program::kOutputNames[i], outputs[i]});
  if (kforge::Status s = kforge::bundle::write(outputs_path, named); !s.ok()) return fail(s.message());
  if (!trace_path.empty()) {
    if (kforge::Status s = kforge::bundle::write(trace_path, trace_store()); !s.ok()) return fail(s.message());
  }

  if (bench_runs > 0) {
    kforge::Status s;
    for (int i = 0; i < 100 && s.ok(); ++i) s = program.run(in_list, out_list);  // warm up
    // CPU time of this thread: on a shared machine, time spent descheduled does not count.
    const double start = thread_cpu_ns();
    for (long i = 0; i < bench_runs && s.ok(); ++i) s = program.run(in_list, out_list);
    const double ns = (thread_cpu_ns() - start) / static_cast<double>(bench_runs);
    if (!s.ok()) return fail(s.message());
    std::printf("generated: %zu ops, %.1f ns per run, %.2f ns per op (%ld runs)\n", Program::kNumCalls, ns,
                Program::kNumCalls ? ns / static_cast<double>(Program::kNumCalls) : 0.0, bench_runs);
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    return fail("usage: harness INPUTS.bin OUTPUTS.bin [--trace TRACE.bin] [--bench RUNS] [--also INPUTS OUTPUTS]...");
  }
  std::string trace_path;
  long bench_runs = 0;
  std::vector<std::pair<std::string, std::string>> runs = {{argv[1], argv[2]}};
  for (int i = 3; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--trace" && i + 1 < argc) {
      trace_path = argv[++i];
    } else if (arg == "--bench" && i + 1 < argc) {
      bench_runs = std::strtol(argv[++i], nullptr, 10);
    } else if (arg == "--also" && i + 2 < argc) {
      runs.emplace_back(argv[i + 1], argv[i + 2]);
      i += 2;
    } else {
      return fail("unknown argument '" + arg + "'");
    }
  }

  // One object for every run: later runs reuse it as an application would (same or new dynamic dims).
  using Program = KFORGE_PROGRAM_CLASS;
  Program program;
  bool bound = false;
  for (size_t r = 0; r < runs.size(); ++r) {
    std::vector<kforge::bundle::NamedTensor> all;
    if (kforge::Status s = kforge::bundle::read(runs[r].first, &all); !s.ok()) return fail(s.message());
    if (!bound) {
      for (const kforge::bundle::NamedTensor& nt : all) {
        if (nt.name.rfind("param/", 0) != 0) continue;
        if (kforge::Status s = program.bind_parameter(nt.name.substr(6), nt.tensor); !s.ok()) return fail(s.message());
      }
      bound = true;
    }
    const int rc = run_once(program, all, runs[r].first, runs[r].second, r == 0 ? trace_path : std::string(),
                            r == 0 ? bench_runs : 0);
    if (rc != 0) return rc;
  }
  return 0;
}
