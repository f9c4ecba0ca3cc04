// Hostile calls of a generated class (docs/fuzzing.md, "Generated code under hostile calls"): the class that
// `kforge compile` made of tests/e2e/hostile/hostile_net.yaml (hostile_net_cuda.yaml for CUDA), called with null,
// mis-typed, mis-shaped, overflowing, aliasing and unbound tensors and, on the CPU, with missing, truncated and
// corrupt parameter files.
// Every call must return an error status whose message says what is wrong (each case names the text it
// expects), never crash; in between and at the end, valid calls must still give the right results.
//
// Built by tests/e2e/test_hostile.py (CPU: g++ with -fsanitize=address,undefined where it links) and, with
// -DHOSTILE_CUDA, by nvcc for the CUDA class (tests/e2e/hostile/gpu_run.sh runs it on a GPU):
//   c++ -std=c++17 -I GEN -DKFORGE_PROGRAM_HEADER='"hostile_net.h"' -DKFORGE_PROGRAM_CLASS=hostile_net
//       tests/e2e/hostile/driver.cc GEN/hostile_net.cc libkforge_kernels.a
// Usage: driver SCRATCH_DIR     (parameter files are written there)
// Prints one line per case, "PASS name" or "FAIL name: why", then "N passed, N failed"; exits 1 on any failure.
#include <sys/stat.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include KFORGE_PROGRAM_HEADER

#ifdef HOSTILE_CUDA
#include <cuda_runtime.h>
#endif

namespace {

using Net = KFORGE_PROGRAM_CLASS;
using kforge::DataType;
using kforge::Status;
using kforge::Tensor;

constexpr int64_t kIn = 16, kOut = 8;
#ifdef HOSTILE_CUDA
// The CUDA program (hostile_net_cuda.yaml) has one dynamic input: the CUDA target does not fuse an add of two
// independently dynamic batches, so its skip is one row, broadcast.
constexpr bool kSkipBroadcast = true;
#else
constexpr bool kSkipBroadcast = false;
#endif
int64_t skip_rows(int64_t batch) { return kSkipBroadcast ? 1 : batch; }
int g_passed = 0, g_failed = 0;

#ifdef HOSTILE_CUDA
constexpr const char* kPlaceName = "GPU";
const kforge::Place kPlace = kforge::GPUPlace();
const kforge::Place kOtherPlace = kforge::CPUPlace();
#else
constexpr const char* kPlaceName = "CPU";
const kforge::Place kPlace = kforge::CPUPlace();
const kforge::Place kOtherPlace = kforge::GPUPlace();
#endif

void pass(const std::string& name, const std::string& message = "") {
  ++g_passed;
  std::printf("PASS %s%s%s\n", name.c_str(), message.empty() ? "" : ": ", message.c_str());
}
void fail(const std::string& name, const std::string& why) {
  ++g_failed;
  std::printf("FAIL %s: %s\n", name.c_str(), why.c_str());
}

// The case passes when `s` is an error whose message contains every one of `wants`.
void expect_error(const std::string& name, const Status& s, std::initializer_list<const char*> wants) {
  if (s.ok()) return fail(name, "returned OK");
  for (const char* want : wants) {
    if (s.message().find(want) == std::string::npos) {
      return fail(name, "the message '" + s.message() + "' lacks '" + want + "'");
    }
  }
  pass(name, s.message());
}

// A tensor of `dims` with memory at the target's place, filled with `values` (cycled) when given.
Tensor make(DataType dtype, std::initializer_list<int64_t> dims, const std::vector<float>& values = {}) {
  Tensor t;
  t.dtype = dtype;
  t.place = kPlace;
  if (!t.set_dims(dims).ok()) return t;
#ifdef HOSTILE_CUDA
  kforge::install_cuda_allocator();
#endif
  if (!t.allocate().ok()) return t;
  if (dtype == DataType::kFloat32 && !values.empty()) {
    std::vector<float> host(static_cast<size_t>(t.numel()));
    for (size_t i = 0; i < host.size(); ++i) host[i] = values[i % values.size()];
#ifdef HOSTILE_CUDA
    if (cudaMemcpy(t.data, host.data(), host.size() * sizeof(float), cudaMemcpyHostToDevice) != cudaSuccess) {
      t.data = nullptr;
    }
#else
    std::memcpy(t.data, host.data(), host.size() * sizeof(float));
#endif
  }
  return t;
}

std::vector<float> download(const Tensor& t) {
  std::vector<float> host(static_cast<size_t>(t.numel()));
  if (host.empty() || t.data == nullptr) return host;
#ifdef HOSTILE_CUDA
  if (cudaMemcpy(host.data(), t.data, host.size() * sizeof(float), cudaMemcpyDeviceToHost) != cudaSuccess) host.clear();
#else
  std::memcpy(host.data(), t.data, host.size() * sizeof(float));
#endif
  return host;
}

// Deterministic values in [-1, 1).
std::vector<float> pattern(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  uint32_t s = seed * 2654435761u + 1;
  for (float& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<float>(s >> 8) / static_cast<float>(1u << 23) - 1.0f;
  }
  return v;
}

const std::vector<float> kW = pattern(kIn * kOut, 1), kB = pattern(kOut, 2);

// y = relu(x w + b + skip), p = softmax(x w + b + skip) on the host, in double.
void reference(const std::vector<float>& x, const std::vector<float>& skip, int64_t batch, std::vector<float>* y,
               std::vector<float>* p) {
  y->assign(static_cast<size_t>(batch * kOut), 0.0f);
  p->assign(static_cast<size_t>(batch * kOut), 0.0f);
  for (int64_t r = 0; r < batch; ++r) {
    double h[kOut], m = -1e300, sum = 0;
    for (int64_t j = 0; j < kOut; ++j) {
      double acc = 0;
      for (int64_t k = 0; k < kIn; ++k) acc += static_cast<double>(x[r * kIn + k]) * kW[k * kOut + j];
      h[j] = acc + kB[j] + skip[(kSkipBroadcast ? 0 : r) * kOut + j];
      m = h[j] > m ? h[j] : m;
    }
    for (int64_t j = 0; j < kOut; ++j) sum += std::exp(h[j] - m);
    for (int64_t j = 0; j < kOut; ++j) {
      (*y)[r * kOut + j] = static_cast<float>(h[j] > 0 ? h[j] : 0);
      (*p)[r * kOut + j] = static_cast<float>(std::exp(h[j] - m) / sum);
    }
  }
}

Status finish(Net& net) {
#ifdef HOSTILE_CUDA
  return net.synchronize();
#else
  (void)net;
  return Status::OK();
#endif
}

// A valid run at `batch`: OK and within float32's rounding of the host reference (the case `name`).
void expect_correct(const std::string& name, Net& net, int64_t batch, Tensor* y = nullptr, Tensor* p = nullptr) {
  const std::vector<float> xv = pattern(static_cast<size_t>(batch * kIn), 10 + static_cast<uint32_t>(batch));
  const std::vector<float> sv = pattern(static_cast<size_t>(skip_rows(batch) * kOut), 20 + static_cast<uint32_t>(batch));
  Tensor x = make(DataType::kFloat32, {batch, kIn}, xv), skip = make(DataType::kFloat32, {skip_rows(batch), kOut}, sv);
  Tensor own_y, own_p;
  if (y == nullptr) y = &own_y;
  if (p == nullptr) p = &own_p;
  Status s = net.run(x, skip, y, p);
  if (s.ok()) s = finish(net);
  if (!s.ok()) return fail(name, "a valid run failed: " + s.message());
  std::vector<float> want_y, want_p;
  reference(xv, sv, batch, &want_y, &want_p);
  const std::vector<float> got_y = download(*y), got_p = download(*p);
  if (y->ndim != 2 || y->dims[0] != batch || y->dims[1] != kOut || got_y.size() != want_y.size() ||
      got_p.size() != want_p.size()) {
    return fail(name, "outputs of dims " + y->dims_string() + " and " + p->dims_string());
  }
  for (size_t i = 0; i < want_y.size(); ++i) {
    if (std::fabs(got_y[i] - want_y[i]) > 1e-4f + 1e-4f * std::fabs(want_y[i]) ||
        std::fabs(got_p[i] - want_p[i]) > 1e-5f + 1e-4f * std::fabs(want_p[i])) {
      return fail(name, "element " + std::to_string(i) + ": y " + std::to_string(got_y[i]) + " (want " +
                            std::to_string(want_y[i]) + "), p " + std::to_string(got_p[i]) + " (want " +
                            std::to_string(want_p[i]) + ")");
    }
  }
  pass(name);
}

Tensor good_w() { return make(DataType::kFloat32, {kIn, kOut}, kW); }
Tensor good_b() { return make(DataType::kFloat32, {kOut}, kB); }

void parameter_cases(Net& net, const Tensor& w, const Tensor& b) {
  Tensor x = make(DataType::kFloat32, {4, kIn}, {0.5f}), skip = make(DataType::kFloat32, {skip_rows(4), kOut}, {0.25f});
  Tensor y, p;
  expect_error("run-before-parameters-bound", net.run(x, skip, &y, &p), {"parameter 'w' is not bound"});
  expect_error("bind-unknown-name", net.bind_parameter("nope", w), {"parameter", "'nope'"});
  expect_error("bind-empty-name", net.bind_parameter("", w), {"parameter", "''"});
  expect_error("bind-wrong-dtype", net.bind_parameter("w", make(DataType::kFloat64, {kIn, kOut})),
               {"parameter 'w' must be", "float32 [16, 8]", "got float64 [16, 8]"});
  expect_error("bind-wrong-dims", net.bind_parameter("w", make(DataType::kFloat32, {kOut, kIn})),
               {"parameter 'w' must be", "got float32 [8, 16]"});
  expect_error("bind-wrong-rank", net.bind_parameter("w", make(DataType::kFloat32, {kIn, kOut, 1})),
               {"parameter 'w' must be", "got float32 [16, 8, 1]"});
  expect_error("bind-scalar-for-vector", net.bind_parameter("b", make(DataType::kFloat32, {})),
               {"parameter 'b' must be", "got float32 []"});
  Tensor null_data = w;
  null_data.data = nullptr;
  null_data.holder.reset();
  expect_error("bind-null-data", net.bind_parameter("w", null_data), {"parameter 'w' must be", "without data"});
  Tensor corrupt_rank = w;
  corrupt_rank.ndim = 1000;
  expect_error("bind-corrupt-rank", net.bind_parameter("w", corrupt_rank), {"parameter 'w' must be", "[rank 1000?]"});
  corrupt_rank.ndim = -3;
  expect_error("bind-negative-rank", net.bind_parameter("w", corrupt_rank), {"parameter 'w' must be", "[rank -3?]"});
  Tensor elsewhere = w;
  elsewhere.place = kOtherPlace;
  expect_error("bind-wrong-place", net.bind_parameter("w", elsewhere),
               {"parameter 'w' must be", kPlace == kforge::CPUPlace() ? "not on the CPU" : "not on the GPU"});
  expect_error("run-after-failed-binds", net.run(x, skip, &y, &p), {"parameter 'w' is not bound"});
  // One bound, one not: still nothing runs.
  Status s = net.bind_parameter("w", w);
  if (!s.ok()) return fail("bind-w", s.message());
  expect_error("run-with-one-parameter-unbound", net.run(x, skip, &y, &p), {"parameter 'b' is not bound"});
  s = net.bind_parameter("b", b);
  if (!s.ok()) return fail("bind-b", s.message());
  expect_correct("run-after-binding", net, 4);
  // A failed rebind keeps the parameter bound to what it was.
  expect_error("rebind-wrong-dims", net.bind_parameter("b", make(DataType::kFloat32, {kOut + 1})),
               {"parameter 'b' must be", "got float32 [9]"});
  expect_correct("run-after-failed-rebind", net, 3);
}

void input_cases(Net& net) {
  const int64_t n = 4;
  Tensor x = make(DataType::kFloat32, {n, kIn}, {0.5f}), skip = make(DataType::kFloat32, {skip_rows(n), kOut}, {0.25f});
  Tensor y, p;
  expect_error("input-wrong-dtype", net.run(make(DataType::kFloat64, {n, kIn}), skip, &y, &p),
               {"input 'x' must be", "float32 [?, 16]", "got float64 [4, 16]"});
  expect_error("input-int-dtype", net.run(x, make(DataType::kInt32, {skip_rows(n), kOut}), &y, &p),
               {"input 'skip' must be", "got int32 ["});
  expect_error("input-wrong-rank", net.run(make(DataType::kFloat32, {n, kIn, 1}), skip, &y, &p),
               {"input 'x' must be", "got float32 [4, 16, 1]"});
  expect_error("input-rank-0", net.run(make(DataType::kFloat32, {}), skip, &y, &p),
               {"input 'x' must be", "got float32 []"});
  expect_error("input-static-dim-violated", net.run(make(DataType::kFloat32, {n, kIn - 1}), skip, &y, &p),
               {"input 'x' must be", "got float32 [4, 15]"});
  Tensor negative = x;
  negative.dims[0] = -3;
  expect_error("input-negative-dim", net.run(negative, skip, &y, &p), {"input 'x' must be", "got float32 [-3, 16]"});
  Tensor huge = x;
  huge.dims[0] = int64_t{1} << 60;  // 2^60 * 16 * 4 bytes: more than int64 counts
  expect_error("input-overflowing-dims", net.run(huge, skip, &y, &p),
               {"input 'x' [1152921504606846976, 16] has more bytes than int64 can count"});
  // Each input's bytes fit in int64 (x: (2^57 - 1) * 16 * 4 = 2^63 - 64), but the workspace the program derives
  // from the batch (two [batch, 8] buffers) does not: refused before it sizes anything (codegen/size_table.h, the
  // generated compute_sizes()), not wrapped into a small workspace. (The CUDA class's sizes fit; it refuses the
  // batch as a GEMM's M beyond int.)
  Tensor wide_x = x, wide_skip = skip;
  wide_x.dims[0] = (int64_t{1} << 57) - 1;
  wide_skip.dims[0] = skip_rows(wide_x.dims[0]);
#ifdef HOSTILE_CUDA
  expect_error("input-dims-whose-sizes-overflow", net.run(wide_x, wide_skip, &y, &p),
               {"M x N x K = 144115188075855871 x 8 x 16", "exceeds the int range of the CUDA GEMM kernels"});
#else
  expect_error("input-dims-whose-sizes-overflow", net.run(wide_x, wide_skip, &y, &p),
               {"the dynamic dims (s0 = 144115188075855871", "give sizes that overflow int64"});
#endif
  Tensor max_dim = x;
  max_dim.dims[0] = std::numeric_limits<int64_t>::max();
  expect_error("input-int64-max-dim", net.run(max_dim, skip, &y, &p), {"input 'x'", "more bytes than int64 can count"});
  Tensor corrupt_rank = x;
  corrupt_rank.ndim = 77;
  expect_error("input-corrupt-rank", net.run(corrupt_rank, skip, &y, &p), {"input 'x' must be", "[rank 77?]"});
  Tensor null_data = x;
  null_data.data = nullptr;
  expect_error("input-null-data", net.run(null_data, skip, &y, &p), {"input 'x' has no data"});
  Tensor elsewhere = skip;
  elsewhere.place = kOtherPlace;
  expect_error("input-wrong-place", net.run(x, elsewhere, &y, &p),
               {"input 'skip' must be", kPlace == kforge::CPUPlace() ? "not on the CPU" : "not on the GPU"});
  // The batch is one symbol for both inputs: skip's must equal x's.
  // CPU: x's and skip's batches are two symbols that the add broadcasts; 4 against 5 is the add's error.
  // CUDA: skip is declared [1, 8].
  expect_error("input-inconsistent-batch", net.run(x, make(DataType::kFloat32, {n + 1, kOut}, {0.1f}), &y, &p),
               {kSkipBroadcast ? "input 'skip' must be" : "(pd_op.add at ",
                kSkipBroadcast ? "got float32 [5, 8]" : "shapes [4, 8] and [5, 8] cannot be broadcast"});
  expect_error("output-null", net.run(x, skip, nullptr, &p), {"output 'y' is null"});
  expect_error("output-null-second", net.run(x, skip, &y, nullptr), {"output 'p' is null"});
  expect_correct("run-after-input-errors", net, n);
}

void generic_run_cases(Net& net) {
  Tensor x = make(DataType::kFloat32, {2, kIn}, {0.5f}), skip = make(DataType::kFloat32, {skip_rows(2), kOut}, {0.25f});
  Tensor y, p;
  const Tensor* in2[] = {&x, &skip};
  Tensor* out2[] = {&y, &p};
  expect_error("list-wrong-counts", net.run(kforge::TensorList{in2, 1}, kforge::MutableTensorList{out2, 2}),
               {"run takes 2 inputs and 2 outputs, got 1 and 2"});
  expect_error("list-too-many-outputs", net.run(kforge::TensorList{in2, 2}, kforge::MutableTensorList{out2, 3}),
               {"run takes 2 inputs and 2 outputs, got 2 and 3"});
  expect_error("list-null-input-array", net.run(kforge::TensorList{nullptr, 2}, kforge::MutableTensorList{out2, 2}),
               {"input list has no items"});
  expect_error("list-null-output-array", net.run(kforge::TensorList{in2, 2}, kforge::MutableTensorList{nullptr, 2}),
               {"output list has no items"});
  const Tensor* in_null[] = {&x, nullptr};
  expect_error("list-null-input-item", net.run(kforge::TensorList{in_null, 2}, kforge::MutableTensorList{out2, 2}),
               {"input 1 is null"});
  Tensor* out_null[] = {nullptr, &p};
  expect_error("list-null-output-item", net.run(kforge::TensorList{in2, 2}, kforge::MutableTensorList{out_null, 2}),
               {"output 'y' is null"});
  Status s = net.run(kforge::TensorList{in2, 2}, kforge::MutableTensorList{out2, 2});
  if (s.ok()) s = finish(net);
  if (s.ok()) {
    pass("list-valid");
  } else {
    fail("list-valid", s.message());
  }
}

void aliasing_cases(Net& net, const Tensor& w) {
  const int64_t n = 4;
  Tensor x = make(DataType::kFloat32, {n, kIn}, {0.5f}), skip = make(DataType::kFloat32, {skip_rows(n), kOut}, {0.25f});
  Tensor y, p;
  Tensor x_copy = x;  // the same memory; run() must not resize the input it reads
  expect_error("output-is-input-tensor", net.run(x_copy, skip, &x_copy, &p), {"output 'y' is the same tensor as input 'x'"});
  Tensor skip_copy = skip;
  expect_error("output-is-second-input", net.run(x, skip_copy, &y, &skip_copy),
               {"output 'p' is the same tensor as input 'skip'"});
  expect_error("outputs-same-tensor", net.run(x, skip, &y, &y), {"output 'p' is the same tensor as output 'y'"});
  // Output tensors of their own whose memory (right dtype and dims, so kept) overlaps something run() reads.
  Tensor y_on_x = x;
  static_cast<void>(y_on_x.set_dims({n, kOut}));
  expect_error("output-memory-in-input", net.run(x, skip, &y_on_x, &p), {"output 'y' shares memory with input 'x'"});
  Tensor y_on_skip = skip;
  static_cast<void>(y_on_skip.set_dims({n, kOut}));  // from skip's first byte on (never written: run() refuses)
  expect_error("output-memory-is-input", net.run(x, skip, &y_on_skip, &p), {"output 'y' shares memory with input 'skip'"});
  Tensor y_own = make(DataType::kFloat32, {n, kOut});
  Tensor p_on_y = y_own;
  expect_error("outputs-share-memory", net.run(x, skip, &y_own, &p_on_y), {"output 'p' shares memory with output 'y'"});
  Tensor p_mid_y = make(DataType::kFloat32, {2 * n, kOut});
  Tensor p_half = p_mid_y;
  static_cast<void>(p_mid_y.set_dims({n, kOut}));
  p_half.data = static_cast<float*>(p_half.data) + 3;  // overlapping, not equal
  static_cast<void>(p_half.set_dims({n, kOut}));
  expect_error("outputs-overlap-partly", net.run(x, skip, &p_mid_y, &p_half), {"output 'p' shares memory with output 'y'"});
  Tensor y_on_w = w;
  static_cast<void>(y_on_w.set_dims({n, kOut}));
  expect_error("output-memory-in-parameter", net.run(x, skip, &y_on_w, &p), {"output 'y' shares memory with parameter 'w'"});
  // Outputs with other dims or dtype get fresh memory: no aliasing left, a clean run.
  Tensor y_wrong_dims = x, p_wrong_dtype = make(DataType::kInt64, {n, kOut});
  expect_correct("outputs-reallocated", net, n, &y_wrong_dims, &p_wrong_dtype);
  expect_correct("outputs-reused", net, n, &y_wrong_dims, &p_wrong_dtype);
}

void dynamic_cases(Net& net) {
  // Zero rows: no data needed; an empty result or an error, never a crash; later runs recover.
  Tensor x0, s0, y, p;
  x0.dtype = s0.dtype = DataType::kFloat32;
  x0.place = s0.place = kPlace;
  static_cast<void>(x0.set_dims({0, kIn}));
  static_cast<void>(s0.set_dims({skip_rows(0), kOut}));
  if (kSkipBroadcast) s0 = make(DataType::kFloat32, {1, kOut}, {0.5f});
  Status s = net.run(x0, s0, &y, &p);
  if (s.ok()) s = finish(net);
  if (s.ok() && y.dims[0] == 0 && p.dims[0] == 0) {
    pass("batch-0 (empty outputs)");
  } else if (!s.ok()) {
    pass("batch-0 (error: " + s.message() + ")");
  } else {
    fail("batch-0", "outputs of dims " + y.dims_string());
  }
  for (int64_t batch : {1, 64, 2, 300, 5}) expect_correct("resize-batch-" + std::to_string(batch), net, batch);
}

#ifndef HOSTILE_CUDA
// A .pdiparams stream of float32 tensors, as Paddle writes it (docs/parameters.md).
void append_tensor(std::string& out, const std::vector<int64_t>& dims, const std::vector<float>& values,
                   uint32_t version = 0) {
  auto raw = [&out](const void* p, size_t n) { out.append(static_cast<const char*>(p), n); };
  const uint32_t zero32 = 0;
  const uint64_t zero64 = 0;
  raw(&version, 4);
  raw(&zero64, 8);
  raw(&zero32, 4);
  std::string desc = "\x08\x05";  // data_type FP32
  for (int64_t d : dims) {
    desc += '\x10';
    for (uint64_t v = static_cast<uint64_t>(d);; v >>= 7) {
      if (v < 0x80) {
        desc += static_cast<char>(v);
        break;
      }
      desc += static_cast<char>((v & 0x7f) | 0x80);
    }
  }
  const int32_t size = static_cast<int32_t>(desc.size());
  raw(&size, 4);
  out += desc;
  raw(values.data(), values.size() * sizeof(float));
}

std::string write_file(const std::string& dir, const std::string& name, const std::string& bytes) {
  const std::string path = dir + "/" + name;
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

void load_cases(Net& net, const std::string& dir) {
  std::string good;  // sorted by name: b, then w
  append_tensor(good, {kOut}, kB);
  append_tensor(good, {kIn, kOut}, kW);
  const std::string good_path = write_file(dir, "good.pdiparams", good);
  Status s = net.load_parameters(good_path.c_str());
  if (!s.ok()) return fail("load-good", s.message());
  expect_correct("load-good", net, 4);

  expect_error("load-null-path", net.load_parameters(nullptr), {"path is null"});
  expect_error("run-after-load-null-path", net.run(make(DataType::kFloat32, {1, kIn}, {1.0f}),
                                                   make(DataType::kFloat32, {1, kOut}, {1.0f}), nullptr, nullptr),
               {"is not bound"});
  expect_error("load-missing-file", net.load_parameters((dir + "/no-such.pdiparams").c_str()), {"cannot open", "no-such.pdiparams"});
  expect_error("load-directory", net.load_parameters(dir.c_str()), {"it is a directory"});
  // A FIFO without a writer (opening it would block) and a device that never ends: refused before opening.
  const std::string fifo = dir + "/fifo.pdiparams";
  if (::mkfifo(fifo.c_str(), 0600) != 0) return fail("load-fifo", "mkfifo failed");
  expect_error("load-fifo", net.load_parameters(fifo.c_str()), {"fifo.pdiparams", "it is not a regular file"});
  expect_error("load-device", net.load_parameters("/dev/zero"), {"it is not a regular file"});
  expect_error("load-empty-file", net.load_parameters(write_file(dir, "empty.pdiparams", "").c_str()),
               {"parameter 'b' (entry 1 of 2, at byte 0): missing: the file ends after 0 tensors"});
  const std::string truncated_header = good.substr(0, 10);
  expect_error("load-truncated-header", net.load_parameters(write_file(dir, "th.pdiparams", truncated_header).c_str()),
               {"parameter 'b'", "inside the tensor header"});
  const std::string truncated_data = good.substr(0, good.size() - 7);
  expect_error("load-truncated-data", net.load_parameters(write_file(dir, "td.pdiparams", truncated_data).c_str()),
               {"parameter 'w' (entry 2 of 2", "runs past the end of the file"});
  std::string one;
  append_tensor(one, {kOut}, kB);
  expect_error("load-one-tensor-short", net.load_parameters(write_file(dir, "one.pdiparams", one).c_str()),
               {"parameter 'w'", "missing: the file ends after 1 tensor "});
  expect_error("load-trailing-bytes", net.load_parameters(write_file(dir, "extra.pdiparams", good + "junk").c_str()),
               {"4 bytes follow the last parameter"});
  std::string swapped;  // w's shape transposed: a file of another program
  append_tensor(swapped, {kOut}, kB);
  append_tensor(swapped, {kOut, kIn}, kW);
  expect_error("load-foreign-shapes", net.load_parameters(write_file(dir, "swapped.pdiparams", swapped).c_str()),
               {"parameter 'w'", "the program declares float32 [16, 8], the file holds float32 [8, 16]"});
  std::string unsorted;  // program order instead of name order
  append_tensor(unsorted, {kIn, kOut}, kW);
  append_tensor(unsorted, {kOut}, kB);
  expect_error("load-wrong-order", net.load_parameters(write_file(dir, "unsorted.pdiparams", unsorted).c_str()),
               {"parameter 'b' (entry 1 of 2, at byte 0): the program declares float32 [8], the file holds float32 [16, 8]"});
  std::string bad_version;
  append_tensor(bad_version, {kOut}, kB, 7);
  append_tensor(bad_version, {kIn, kOut}, kW);
  expect_error("load-corrupt-version", net.load_parameters(write_file(dir, "version.pdiparams", bad_version).c_str()),
               {"tensor version 7 at byte 0"});
  std::string bad_varint = good;
  bad_varint[4 + 8 + 4 + 4 + 3] = '\xff';  // b's dim varint runs on into the data
  expect_error("load-bad-varint", net.load_parameters(write_file(dir, "varint.pdiparams", bad_varint).c_str()),
               {"parameter 'b'", "not a valid protobuf message"});
  std::string huge_dims;
  append_tensor(huge_dims, {int64_t{1} << 40, int64_t{1} << 40}, {});
  expect_error("load-huge-dims", net.load_parameters(write_file(dir, "huge.pdiparams", huge_dims).c_str()),
               {"parameter 'b'", "the data of float32 [1099511627776, 1099511627776] from byte", "runs past the end"});
  std::string negative_dims;
  append_tensor(negative_dims, {-8}, {});
  expect_error("load-negative-dims", net.load_parameters(write_file(dir, "negative.pdiparams", negative_dims).c_str()),
               {"parameter 'b'"});
  std::string garbage(4096, '\0');
  uint32_t state = 12345;
  for (char& c : garbage) {
    state = state * 1103515245u + 12345u;
    c = static_cast<char>(state >> 16);
  }
  expect_error("load-garbage", net.load_parameters(write_file(dir, "garbage.pdiparams", garbage).c_str()), {"parameter 'b'"});
  // After a failed load nothing is bound, not even what the good file bound before.
  expect_error("run-after-failed-load",
               net.run(make(DataType::kFloat32, {1, kIn}, {1.0f}), make(DataType::kFloat32, {1, kOut}, {1.0f}), nullptr,
                       nullptr),
               {"parameter 'w' is not bound"});
  s = net.load_parameters(good_path.c_str());
  if (!s.ok()) return fail("reload-good", s.message());
  expect_correct("reload-good", net, 6);
}
#endif

#ifdef HOSTILE_CUDA
// set_stream() after the object made a stream of its own: the runs go on, in order, on the caller's stream, and
// the caller's stream outlives the object (the destructor used to destroy it, taking it for the object's own).
void stream_cases(const Tensor& w, const Tensor& b) {
  cudaStream_t mine = nullptr;
  if (cudaStreamCreateWithFlags(&mine, cudaStreamNonBlocking) != cudaSuccess) {
    return fail("set-stream-after-own-stream", "cudaStreamCreateWithFlags failed");
  }
  {
    Net net;
    Status s = net.bind_parameter("w", w);
    if (s.ok()) s = net.bind_parameter("b", b);
    if (!s.ok()) fail("set-stream-after-own-stream", "binding failed: " + s.message());
    expect_correct("run-on-own-stream", net, 3);
    net.set_stream(mine);
    if (net.stream() != mine) fail("set-stream-after-own-stream", "stream() is not the caller's stream");
    expect_correct("run-on-caller-stream-after-own", net, 5);
  }
  const cudaError_t q = cudaStreamQuery(mine);
  if (q == cudaSuccess) {
    pass("caller-stream-outlives-the-object");
  } else {
    fail("caller-stream-outlives-the-object", std::string("cudaStreamQuery: ") + cudaGetErrorString(q));
  }
  static_cast<void>(cudaStreamDestroy(mine));
}
#endif

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s SCRATCH_DIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  std::printf("hostile calls of %s on the %s\n", Net::kInputNames.size() == 2 ? "hostile_net" : "?", kPlaceName);
  Tensor w = good_w(), b = good_b();
  {
    Net net;
    parameter_cases(net, w, b);
    input_cases(net);
    generic_run_cases(net);
    aliasing_cases(net, w);
    dynamic_cases(net);
    expect_correct("final-run", net, 7);
  }
#ifndef HOSTILE_CUDA
  {
    Net net;
    load_cases(net, dir);
  }
#else
  (void)dir;
  stream_cases(w, b);
#endif
  std::printf("%d passed, %d failed\n", g_passed, g_failed);
  return g_failed == 0 ? 0 : 1;
}
