// kforge-interp: runs a program with the reference interpreter on seeded random inputs and parameters.
// The oracle half of tools/check-program and tests/e2e; see --help.
#include <CLI/CLI.hpp>

#include <time.h>

#include <cinttypes>
#include <cstdio>
#include <iostream>
#include <map>

#include "compare.h"
#include "interpreter.h"
#include "kforge_kernels.h"
#include "program/program_reader.h"

namespace {

using kforge::interp::Interpreter;
namespace bundle = kforge::bundle;

constexpr const char* kFeedPrefix = "feed/";
constexpr const char* kParamPrefix = "param/";

struct Options {
  std::string program;
  uint64_t seed = 1;
  int64_t params_seed = -1;  // -1: seed + 1
  std::vector<std::string> shapes;
  std::string inputs;
  std::string write_inputs;
  std::string write_outputs;
  std::string write_trace;
  std::string compare;
  std::string compare_trace;
  double atol = 0;
  double rtol = 0;
  bool print = false;
  int bench = 0;
  bool list_ops = false;
};

bool parse_shapes(const std::vector<std::string>& specs, std::map<std::string, std::vector<int64_t>>* out) {
  for (const std::string& spec : specs) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::cerr << "kforge-interp: error: --shape expects NAME=D0,D1,..., got '" << spec << "'\n";
      return false;
    }
    std::vector<int64_t> dims;
    std::string rest = spec.substr(eq + 1);
    size_t pos = 0;
    while (!rest.empty() && pos <= rest.size()) {
      const size_t comma = rest.find(',', pos);
      const std::string item = rest.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
      char* end = nullptr;
      const long long v = std::strtoll(item.c_str(), &end, 10);
      if (item.empty() || *end != '\0' || v < 0) {
        std::cerr << "kforge-interp: error: --shape " << spec << ": '" << item << "' is not a dimension\n";
        return false;
      }
      dims.push_back(v);
      if (comma == std::string::npos) break;
      pos = comma + 1;
    }
    (*out)[spec.substr(0, eq)] = dims;
  }
  return true;
}

double thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e9 + static_cast<double>(ts.tv_nsec);
}

std::string format_number(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

void print_tensor(const std::string& name, const kforge::Tensor& t) {
  std::cout << name << ": " << kforge::name_of(t.dtype) << " " << t.dims_string() << "\n  [";
  const int64_t n = t.numel(), shown = n < 16 ? n : 16;
  for (int64_t i = 0; i < shown; ++i) {
    if (i) std::cout << ", ";
    switch (t.dtype) {
      case kforge::DataType::kFloat32: std::cout << format_number(t.data_as<const float>()[i]); break;
      case kforge::DataType::kFloat64: std::cout << format_number(t.data_as<const double>()[i]); break;
      case kforge::DataType::kInt32: std::cout << t.data_as<const int32_t>()[i]; break;
      case kforge::DataType::kInt64: std::cout << t.data_as<const int64_t>()[i]; break;
      case kforge::DataType::kBool: std::cout << (t.data_as<const bool>()[i] ? "true" : "false"); break;
      default: std::cout << "?"; break;
    }
  }
  std::cout << (n > shown ? ", ...]" : "]") << "\n";
}

/// Compares the interpreter's outputs with `expected_path`; on a difference, finds the first differing op
/// through the traces. Returns the exit code.
int compare_outputs(const Options& opts, const std::vector<bundle::NamedTensor>& outputs,
                    const std::vector<kforge::interp::TraceEntry>& trace, const kforge::SourceManager& sources) {
  std::vector<bundle::NamedTensor> actual;
  if (kforge::Status s = bundle::read(opts.compare, &actual); !s.ok()) {
    std::cerr << "kforge-interp: error: " << s.message() << "\n";
    return 1;
  }
  bool agree = true;
  for (const bundle::NamedTensor& expected : outputs) {
    const kforge::Tensor* got = bundle::find(actual, expected.name);
    std::cout << "output " << expected.name << ": shape " << expected.tensor.dims_string();
    if (got == nullptr) {
      std::cout << ": MISSING from the generated code's outputs\n";
      agree = false;
      continue;
    }
    const kforge::interp::Difference d = kforge::interp::compare_tensors(*got, expected.tensor, opts.atol, opts.rtol);
    if (!d.comparable) {
      std::cout << ": DIFFERENT " << d.why << " (generated vs interpreter)\n";
      agree = false;
      continue;
    }
    std::cout << ", max abs diff " << format_number(d.max_abs) << ", max rel diff " << format_number(d.max_rel);
    if (!d.agree()) {
      std::cout << ": " << d.mismatches << " of " << expected.tensor.numel() << " elements differ";
      agree = false;
    }
    std::cout << "\n";
  }
  if (agree) {
    std::cout << "agree: " << outputs.size() << " output" << (outputs.size() == 1 ? "" : "s")
              << " identical to the reference interpreter\n";
    return 0;
  }
  if (!opts.compare_trace.empty()) {
    std::vector<bundle::NamedTensor> gen_trace;
    if (kforge::Status s = bundle::read(opts.compare_trace, &gen_trace); !s.ok()) {
      std::cerr << "kforge-interp: error: " << s.message() << "\n";
      return 1;
    }
    for (const kforge::interp::TraceEntry& entry : trace) {
      const kforge::Tensor* got = bundle::find(gen_trace, entry.value_key);
      if (got == nullptr) continue;
      const kforge::interp::Difference d = kforge::interp::compare_tensors(*got, entry.tensor, opts.atol, opts.rtol);
      if (d.agree()) continue;
      std::string where;
      if (entry.loc.valid()) {
        const kforge::LineCol lc = sources.line_col(entry.loc);
        where = sources.path(entry.loc.file) + ":" + std::to_string(lc.line) + ":" + std::to_string(lc.col) + ": ";
      }
      std::cout << where << "first differing op: " << entry.op_name << " (result " << entry.value_key << "): "
                << (d.comparable ? std::to_string(d.mismatches) + " elements differ, max abs diff " + format_number(d.max_abs)
                                 : d.why + " (generated vs interpreter)")
                << "\n";
      return 1;
    }
    std::cout << "every traced op result agrees; the difference is in how outputs are returned\n";
  }
  std::cout << "DIFFERENT: the generated code does not match the reference interpreter\n";
  return 1;
}

int run(const Options& opts) {
  kforge::SourceManager sources;
  kforge::DiagnosticEngine diags(sources, std::cerr);
  std::map<std::string, std::vector<int64_t>> shapes;
  if (!parse_shapes(opts.shapes, &shapes)) return 2;
  if (opts.list_ops) {
    for (const std::string& name : kforge::interp::OpRegistry::builtin().names()) std::cout << name << "\n";
    return 0;
  }
  std::optional<kforge::ir::Program> program = kforge::ir::read_program_file(sources, opts.program, diags);
  if (!program) {
    diags.print_summary();
    return 1;
  }
  std::optional<Interpreter> interp = Interpreter::prepare(*program, sources, diags);
  if (!interp) {
    diags.print_summary();
    return 1;
  }
  std::vector<bundle::NamedTensor> feeds, params;
  if (!opts.inputs.empty()) {
    std::vector<bundle::NamedTensor> all;
    if (kforge::Status s = bundle::read(opts.inputs, &all); !s.ok()) {
      std::cerr << "kforge-interp: error: " << s.message() << "\n";
      return 1;
    }
    for (bundle::NamedTensor& nt : all) {
      if (nt.name.rfind(kFeedPrefix, 0) == 0) feeds.push_back({nt.name.substr(5), nt.tensor});
      if (nt.name.rfind(kParamPrefix, 0) == 0) params.push_back({nt.name.substr(6), nt.tensor});
    }
  } else {
    for (const auto& [name, dims] : shapes) {
      bool known = false;
      for (const kforge::interp::TensorSlot& slot : interp->feeds()) known = known || slot.name == name;
      if (!known) {
        std::string names;
        for (const kforge::interp::TensorSlot& slot : interp->feeds()) names += (names.empty() ? "" : ", ") + slot.name;
        std::cerr << "kforge-interp: error: --shape " << name << ": the program has no input '" << name
                  << "' (inputs: " << (names.empty() ? "none" : names) << ")\n";
        return 2;
      }
    }
    kforge::Status s = kforge::interp::random_tensors(interp->feeds(), opts.seed, shapes, &feeds);
    if (s.ok()) s = kforge::interp::random_tensors(interp->parameters(),
                                                          opts.params_seed < 0 ? opts.seed + 1 : static_cast<uint64_t>(opts.params_seed), {}, &params);
    if (!s.ok()) {
      std::cerr << "kforge-interp: error: " << s.message() << "\n";
      return 1;
    }
  }
  if (!opts.write_inputs.empty()) {
    std::vector<bundle::NamedTensor> all;
    for (const auto& f : feeds) all.push_back({kFeedPrefix + f.name, f.tensor});
    for (const auto& p : params) all.push_back({kParamPrefix + p.name, p.tensor});
    if (kforge::Status s = bundle::write(opts.write_inputs, all); !s.ok()) {
      std::cerr << "kforge-interp: error: " << s.message() << "\n";
      return 1;
    }
  }

  // Parameters declared constant, as a generated class declares what it binds: the kernel library then takes the
  // same paths in both (a filter prepared once, a matmul by a constant matrix as packed inner products), so that
  // their results can agree bit for bit.
  for (const auto& p : params) kforge::kernels::declare_constant(p.tensor.data, p.tensor.bytes());

  std::vector<bundle::NamedTensor> outputs;
  std::vector<kforge::interp::TraceEntry> trace;
  const bool want_trace = !opts.write_trace.empty() || !opts.compare_trace.empty();
  if (kforge::Status s = interp->run(feeds, params, &outputs, want_trace ? &trace : nullptr); !s.ok()) {
    std::cerr << s.message() << "\n";
    return 1;
  }
  if (!opts.write_outputs.empty()) {
    if (kforge::Status s = bundle::write(opts.write_outputs, outputs); !s.ok()) {
      std::cerr << "kforge-interp: error: " << s.message() << "\n";
      return 1;
    }
  }
  if (!opts.write_trace.empty()) {
    std::vector<bundle::NamedTensor> named;
    for (const auto& e : trace) named.push_back({e.value_key, e.tensor});
    if (kforge::Status s = bundle::write(opts.write_trace, named); !s.ok()) {
      std::cerr << "kforge-interp: error: " << s.message() << "\n";
      return 1;
    }
  }
  if (opts.print) {
    for (const auto& o : outputs) print_tensor(o.name, o.tensor);
  }
  if (opts.bench > 0) {
    std::vector<bundle::NamedTensor> scratch;
    kforge::Status s;
    for (int i = 0; i < 3 && s.ok(); ++i) s = interp->run(feeds, params, &scratch);  // warm up
    // CPU time of this thread: on a shared machine, time spent descheduled does not count.
    const double start = thread_cpu_ns();
    for (int i = 0; i < opts.bench && s.ok(); ++i) s = interp->run(feeds, params, &scratch);
    const double ns = (thread_cpu_ns() - start) / opts.bench;
    if (!s.ok()) {
      std::cerr << s.message() << "\n";
      return 1;
    }
    const size_t ops = interp->kernel_op_count();
    std::printf("interpreter: %zu ops, %.1f ns per run, %.1f ns per op (%d runs)\n", ops, ns,
                ops ? ns / static_cast<double>(ops) : 0.0, opts.bench);
  }
  if (!opts.compare.empty()) return compare_outputs(opts, outputs, trace, sources);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kforge-interp: run a program with kforge's reference interpreter (the oracle of generated code)"};
  Options opts;
  app.add_option("PROGRAM", opts.program, "PIR JSON, PIR text or kforge program YAML");
  app.add_option("--seed", opts.seed, "Seed of the random inputs (parameters use seed + 1)")->default_val(1);
  app.add_option("--params-seed", opts.params_seed, "Seed of the random parameters (default: seed + 1)");
  app.add_option("--shape", opts.shapes, "Shape of an input with dynamic dims: NAME=D0,D1,... (dynamic dims default to 1)")
      ->allow_extra_args(false);
  app.add_option("--inputs", opts.inputs, "Read inputs and parameters from this bundle instead of making random ones");
  app.add_option("--write-inputs", opts.write_inputs, "Write the inputs and parameters used (feed/NAME, param/NAME)");
  app.add_option("--write-outputs", opts.write_outputs, "Write the fetched outputs as a tensor bundle");
  app.add_option("--write-trace", opts.write_trace, "Write every op result, keyed by value id, as a tensor bundle");
  app.add_option("--compare", opts.compare, "Compare the outputs with this bundle (the generated code's); exit 1 if they differ");
  app.add_option("--compare-trace", opts.compare_trace, "With --compare: the generated code's trace, to name the first differing op");
  app.add_option("--atol", opts.atol, "Absolute tolerance of --compare (default 0: identical)");
  app.add_option("--rtol", opts.rtol, "Relative tolerance of --compare (default 0: identical)");
  app.add_flag("--print", opts.print, "Print the outputs");
  app.add_option("--bench", opts.bench, "Time this many runs and print ns per run and per op");
  app.add_flag("--list-ops", opts.list_ops, "Print the ops the interpreter supports");
  CLI11_PARSE(app, argc, argv);
  if (opts.program.empty() && !opts.list_ops) {
    std::cerr << "kforge-interp: error: PROGRAM is required\n";
    return 2;
  }
  return run(opts);
}
