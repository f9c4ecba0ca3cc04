// The C++ half of tools/run-model: runs a class that `kforge compile --target cpu` generated, with its weights from
// a .pdiparams file, on inputs read from .npy files (or seeded random ones), writes output i as DIR/<i>.npy and,
// with --bench, times the runs. The model is reached through runner_model.h, so this file is compiled once per
// build directory and linked with each model's model_adapter.cc (tools/run_model/model.py does both):
//   g++ -std=c++17 -O2 -Wall -Wextra -Werror -I templates/runtime -c tools/run_model/runner.cc
//   g++ ... -I GEN -DKFORGE_PROGRAM_HEADER='"NAME.h"' -DKFORGE_PROGRAM_CLASS=NAME tools/run_model/model_adapter.cc
//       GEN/NAME.cc runner.o libkforge_kernels.a
// Usage: runner --output-dir DIR [--params FILE] [--input NAME=FILE.npy]... [--shape NAME=D0,D1,...]...
//               [--seed N] [--bench N] [--bench-json FILE] [--model NAME]
// --model picks one class of a runner linked with several (tests/paddle/check_fixture.py's batches).
// Errors are one line on stderr and exit 1.
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "npy.h"
#include "runner_model.h"

namespace {

using kforge::runner::Model;

struct Options {
  std::string output_dir, params, bench_json;
  std::string model;  // --model: which class of a runner linked with several ("" when it has one)
  std::map<std::string, std::string> inputs;               // name -> .npy path
  std::map<std::string, std::vector<int64_t>> shapes;      // name -> dims of a random input
  uint64_t seed = 1;
  long bench = 0;
  int threads = 1;  // the kernel library's (set_num_threads on the generated class)
};

int fail(const std::string& message) {
  std::fprintf(stderr, "%s\n", message.c_str());
  return 1;
}

bool parse_int(const std::string& text, long long lo, long long* out) {
  if (text.empty()) return false;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || *end != '\0' || v < lo) return false;
  *out = v;
  return true;
}

// NAME=VALUE; false when there is no '=' or either side is empty.
bool split_pair(const std::string& arg, std::string* name, std::string* value) {
  const size_t eq = arg.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == arg.size()) return false;
  *name = arg.substr(0, eq);
  *value = arg.substr(eq + 1);
  return true;
}

kforge::Status parse_args(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (i + 1 >= argc) return kforge::Status::Error("'", arg, "' needs a value");
    const std::string value = argv[++i];
    std::string name, rest;
    long long n = 0;
    if (arg == "--output-dir") {
      o->output_dir = value;
    } else if (arg == "--params") {
      o->params = value;
    } else if (arg == "--bench-json") {
      o->bench_json = value;
    } else if (arg == "--model") {
      o->model = value;
    } else if (arg == "--input" && split_pair(value, &name, &rest)) {
      o->inputs[name] = rest;
    } else if (arg == "--shape" && split_pair(value, &name, &rest)) {
      std::vector<int64_t> dims;
      size_t start = 0;
      while (start <= rest.size()) {
        const size_t comma = std::min(rest.find(',', start), rest.size());
        if (!parse_int(rest.substr(start, comma - start), 0, &n)) {
          return kforge::Status::Error("--shape expects NAME=D0,D1,... with dims >= 0, got '", value, "'");
        }
        dims.push_back(n);
        start = comma + 1;
      }
      o->shapes[name] = dims;
    } else if (arg == "--seed" && parse_int(value, 0, &n)) {
      o->seed = static_cast<uint64_t>(n);
    } else if (arg == "--threads" && parse_int(value, 1, &n)) {
      o->threads = static_cast<int>(n);
    } else if (arg == "--bench" && parse_int(value, 1, &n)) {
      o->bench = static_cast<long>(n);
    } else {
      return kforge::Status::Error("bad argument '", arg, " ", value, "'");
    }
  }
  if (o->output_dir.empty()) return kforge::Status::Error("--output-dir is required");
  return kforge::Status::OK();
}

// splitmix64: a small, seedable generator whose sequence is the same everywhere.
struct Random {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53 * 2.0 - 1.0; }  // [-1, 1)
};

// k/16 for k in [-16, 16): exact in float16 and bfloat16, so no rounding is needed. |k| = m = 2^b + f with
// f < 2^b is 1.(f / 2^b) * 2^(b - 4): exponent b - 4, fraction f shifted to the top of the mantissa field.
uint16_t half_bits(int k, bool bfloat) {
  if (k == 0) return 0;
  const int m = k < 0 ? -k : k;
  int b = 0;
  while ((m >> (b + 1)) != 0) ++b;
  const int mantissa_bits = bfloat ? 7 : 10, bias = bfloat ? 127 : 15;
  return static_cast<uint16_t>((k < 0 ? 0x8000 : 0) | (b - 4 + bias) << mantissa_bits |
                               (m - (1 << b)) << (mantissa_bits - b));
}

// Seeded random values by dtype: floats in [-1, 1), integers in [0, 4) (safe as indices into small dims), bools.
void fill_random(kforge::Tensor& t, Random& r) {
  const int64_t n = t.numel();
  for (int64_t i = 0; i < n; ++i) {
    switch (t.dtype) {
      case kforge::DataType::kFloat32: t.data_as<float>()[i] = static_cast<float>(r.uniform()); break;
      case kforge::DataType::kFloat64: t.data_as<double>()[i] = r.uniform(); break;
      case kforge::DataType::kComplex64:
        t.data_as<float>()[2 * i] = static_cast<float>(r.uniform());
        t.data_as<float>()[2 * i + 1] = static_cast<float>(r.uniform());
        break;
      case kforge::DataType::kComplex128:
        t.data_as<double>()[2 * i] = r.uniform();
        t.data_as<double>()[2 * i + 1] = r.uniform();
        break;
      case kforge::DataType::kFloat16:
      case kforge::DataType::kBFloat16:
        t.data_as<uint16_t>()[i] = half_bits(static_cast<int>(r.next() % 32) - 16, t.dtype == kforge::DataType::kBFloat16);
        break;
      case kforge::DataType::kBool: t.data_as<bool>()[i] = (r.next() & 1) != 0; break;
      case kforge::DataType::kInt8: t.data_as<int8_t>()[i] = static_cast<int8_t>(r.next() % 4); break;
      case kforge::DataType::kUInt8: t.data_as<uint8_t>()[i] = static_cast<uint8_t>(r.next() % 4); break;
      case kforge::DataType::kInt16: t.data_as<int16_t>()[i] = static_cast<int16_t>(r.next() % 4); break;
      case kforge::DataType::kInt32: t.data_as<int32_t>()[i] = static_cast<int32_t>(r.next() % 4); break;
      case kforge::DataType::kInt64: t.data_as<int64_t>()[i] = static_cast<int64_t>(r.next() % 4); break;
      case kforge::DataType::kUndefined: break;
    }
  }
}

std::string list_inputs(const Model& m) {
  std::string out;
  for (size_t i = 0; i < m.num_inputs(); ++i) out += (i ? ", " : "") + std::string(m.input_name(i));
  return out.empty() ? "none" : out;
}

// Input i: from its .npy, or random with the program's dims (dynamic ones from --shape, else 1).
kforge::Status make_input(const Model& m, const Options& o, size_t i, Random& r, kforge::Tensor* out) {
  const std::string name = m.input_name(i);
  const auto file = o.inputs.find(name);
  const auto shape = o.shapes.find(name);
  if (file != o.inputs.end()) {
    if (shape != o.shapes.end()) {
      return kforge::Status::Error("input '", name, "' comes from ", file->second, ": --shape is for random inputs");
    }
    kforge::Status s = kforge::npy::read_file(file->second, out);
    if (!s.ok()) return kforge::Status::Error("input '", name, "': ", s.message());
    return kforge::Status::OK();
  }
  std::vector<int64_t> dims(m.input_dims(i), m.input_dims(i) + m.input_rank(i));
  if (shape != o.shapes.end()) {
    if (shape->second.size() != dims.size()) {
      return kforge::Status::Error("--shape ", name, ": the input has rank ", dims.size(), ", got ", shape->second.size(),
                                   " dims");
    }
    for (size_t a = 0; a < dims.size(); ++a) {
      if (dims[a] >= 0 && dims[a] != shape->second[a]) {
        return kforge::Status::Error("--shape ", name, ": dim ", a, " is ", dims[a], " in the program, got ",
                                     shape->second[a]);
      }
      dims[a] = shape->second[a];
    }
  }
  for (int64_t& d : dims) d = d < 0 ? 1 : d;
  out->dtype = m.input_dtype(i);
  KFORGE_RETURN_IF_ERROR(out->set_dims(dims));
  KFORGE_RETURN_IF_ERROR(out->allocate());
  fill_random(*out, r);
  return kforge::Status::OK();
}

double thread_cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (kforge::Status s = parse_args(argc, argv, &o); !s.ok()) return fail(s.message());
  std::unique_ptr<Model> model = kforge::runner::make_model(o.model.c_str());
  if (!model) return fail("this runner has no model '" + o.model + "'");
  auto known = [&](const std::string& name) {
    for (size_t i = 0; i < model->num_inputs(); ++i) {
      if (name == model->input_name(i)) return true;
    }
    return false;
  };
  for (const auto& [name, path] : o.inputs) {
    if (!known(name)) return fail("the program has no input '" + name + "' (inputs: " + list_inputs(*model) + ")");
  }
  for (const auto& [name, dims] : o.shapes) {
    if (!known(name)) return fail("the program has no input '" + name + "' (inputs: " + list_inputs(*model) + ")");
  }

  if (kforge::Status s = model->set_num_threads(o.threads); !s.ok()) return fail(s.message());
  if (!o.params.empty()) {
    if (kforge::Status s = model->load_parameters(o.params.c_str()); !s.ok()) return fail(s.message());
  } else if (model->num_parameters() > 0) {
    return fail("the program has " + std::to_string(model->num_parameters()) +
                " parameters and no .pdiparams file was given (--params)");
  }

  Random random{o.seed};
  std::vector<kforge::Tensor> inputs(model->num_inputs()), outputs(model->num_outputs());
  std::vector<const kforge::Tensor*> input_ptrs;
  std::vector<kforge::Tensor*> output_ptrs;
  for (size_t i = 0; i < model->num_inputs(); ++i) {
    if (kforge::Status s = make_input(*model, o, i, random, &inputs[i]); !s.ok()) return fail(s.message());
    input_ptrs.push_back(&inputs[i]);
  }
  for (kforge::Tensor& t : outputs) output_ptrs.push_back(&t);
  const kforge::TensorList in{input_ptrs.data(), input_ptrs.size()};
  const kforge::MutableTensorList out{output_ptrs.data(), output_ptrs.size()};

  if (kforge::Status s = model->run(in, out); !s.ok()) return fail(s.message());
  for (size_t i = 0; i < model->num_outputs(); ++i) {
    const std::string path = o.output_dir + "/" + std::to_string(i) + ".npy";
    if (kforge::Status s = kforge::npy::write_file(path, outputs[i]); !s.ok()) return fail(s.message());
    std::printf("output %zu %s: %s %s -> %s\n", i, model->output_name(i), kforge::name_of(outputs[i].dtype),
                outputs[i].dims_string().c_str(), path.c_str());
  }

  if (o.bench > 0) {
    // Warm-up (a tenth of the runs, at least one), then each run timed alone: wall clock and this thread's CPU
    // time (on a shared machine the CPU time does not count time spent descheduled).
    for (long i = 0; i < std::max(1L, o.bench / 10); ++i) {
      if (kforge::Status s = model->run(in, out); !s.ok()) return fail(s.message());
    }
    std::vector<double> wall, cpu;
    for (long i = 0; i < o.bench; ++i) {
      const auto w0 = std::chrono::steady_clock::now();
      const double c0 = thread_cpu_ms();
      kforge::Status s = model->run(in, out);
      cpu.push_back(thread_cpu_ms() - c0);
      wall.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - w0).count());
      if (!s.ok()) return fail(s.message());
    }
    std::printf("bench: %ld runs, median %.4f ms wall, %.4f ms CPU\n", o.bench, median(wall), median(cpu));
    if (!o.bench_json.empty()) {
      FILE* f = std::fopen(o.bench_json.c_str(), "w");
      if (f == nullptr) return fail("cannot write '" + o.bench_json + "'");
      std::fprintf(f, "{\"runs\": %ld, \"median_ms\": %.6f, \"cpu_ms\": %.6f}\n", o.bench, median(wall), median(cpu));
      if (std::fclose(f) != 0) return fail("error writing '" + o.bench_json + "'");
    }
  }
  return 0;
}
