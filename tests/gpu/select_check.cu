// kforge_select.cuh (nonzero, masked_select) and kforge_unique.cuh (unique over every element and along an axis) against references on
// the host written as kernels/detection.cc computes them, at counts of 0, some and every element, sizes around one
// tile (2048 elements) and past 256 tiles (the offsets kernel's loop), a broadcast mask, NaN, -0.0 and +0.0, bool
// and int32 indices; a capacity larger than the elements (the count copied to where the caller reads it). GPU
// machine:
//   nvcc -arch=sm_90 -std=c++17 -O2 -I templates/cuda tests/gpu/select_check.cu -o select_check && ./select_check
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <tuple>
#include <vector>

#include "kforge_unique.cuh"

namespace cs = kforge::cuda_select;

namespace {

int failures = 0;

void expect(bool ok, const char* what, long long n, const char* detail) {
  if (!ok) {
    std::printf("FAIL %s n=%lld: %s\n", what, n, detail);
    ++failures;
  }
}

template <typename T>
T* upload(const std::vector<T>& host) {
  T* d = nullptr;
  cudaMalloc(&d, std::max<size_t>(1, host.size()) * sizeof(T));
  if (!host.empty()) cudaMemcpy(d, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice);
  return d;
}

template <typename T>
std::vector<T> download(const T* d, size_t n) {
  std::vector<T> host(n);
  if (n != 0) cudaMemcpy(host.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost);
  return host;
}

int64_t read_count(int64_t* scratch, int64_t capacity) {
  int64_t count = -1;
  cudaMemcpy(&count, cs::count_of(scratch, capacity), sizeof(int64_t), cudaMemcpyDeviceToHost);
  return count;
}

// nonzero of a [rows, cols] float tensor whose elements are nonzero with probability p, with room for `extra` more.
void check_nonzero(int64_t rows, int64_t cols, double p, int64_t extra) {
  const int64_t n = rows * cols, capacity = n + extra;
  std::mt19937 rng(static_cast<unsigned>(n * 7 + extra));
  std::bernoulli_distribution keep(p);
  std::vector<float> x(static_cast<size_t>(n));
  for (float& v : x) v = keep(rng) ? 1.5f : 0.0f;
  std::vector<int64_t> want;
  for (int64_t i = 0; i < n; ++i) {
    if (x[static_cast<size_t>(i)] != 0.0f) {
      want.push_back(i / cols);
      want.push_back(i % cols);
    }
  }
  float* dx = upload(x);
  int64_t* dout = upload(std::vector<int64_t>(static_cast<size_t>(2 * capacity), -7));
  int64_t* scratch = nullptr;
  cudaMalloc(&scratch, cs::scratch_bytes(capacity));
  const cudaError_t e = cs::nonzero(static_cast<const float*>(dx), {rows, cols}, dout, capacity, scratch, nullptr);
  cudaDeviceSynchronize();
  expect(e == cudaSuccess && cudaGetLastError() == cudaSuccess, "nonzero launch", n, cudaGetErrorString(e));
  const int64_t count = read_count(scratch, capacity);
  expect(count == static_cast<int64_t>(want.size() / 2), "nonzero count", n, "wrong count");
  if (count == static_cast<int64_t>(want.size() / 2)) {
    expect(download(dout, want.size()) == want, "nonzero coordinates", n, "wrong coordinates");
  }
  cudaFree(dx);
  cudaFree(dout);
  cudaFree(scratch);
}

// masked_select of x [b, r, c] by a mask [r, c] (broadcast over b).
void check_masked_select(int64_t b, int64_t r, int64_t c, double p) {
  const int64_t n = b * r * c;
  std::mt19937 rng(static_cast<unsigned>(n + 3));
  std::bernoulli_distribution keep(p);
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) x[static_cast<size_t>(i)] = static_cast<float>(i);
  std::vector<uint8_t> mask_bytes(static_cast<size_t>(r * c));
  for (uint8_t& m : mask_bytes) m = keep(rng) ? 1 : 0;
  std::vector<float> want;
  for (int64_t i = 0; i < n; ++i) {
    if (mask_bytes[static_cast<size_t>(i % (r * c))]) want.push_back(x[static_cast<size_t>(i)]);
  }
  float* dx = upload(x);
  uint8_t* dmask = upload(mask_bytes);
  float* dout = upload(std::vector<float>(static_cast<size_t>(n), -1.0f));
  int64_t* scratch = nullptr;
  cudaMalloc(&scratch, cs::scratch_bytes(n));
  const cudaError_t e = cs::masked_select(static_cast<const float*>(dx), {b, r, c}, reinterpret_cast<const bool*>(dmask),
                                          {r, c}, dout, n, scratch, nullptr);
  cudaDeviceSynchronize();
  expect(e == cudaSuccess, "masked_select launch", n, cudaGetErrorString(e));
  const int64_t count = read_count(scratch, n);
  expect(count == static_cast<int64_t>(want.size()), "masked_select count", n, "wrong count");
  if (count == static_cast<int64_t>(want.size())) {
    expect(download(dout, want.size()) == want, "masked_select values", n, "wrong values");
  }
  cudaFree(dx);
  cudaFree(dmask);
  cudaFree(dout);
  cudaFree(scratch);
}

// A unique's device buffers, and the host reference of what it writes.
template <typename S, typename I>
struct UniqueBuffers {
  S *x, *out;
  I *indices, *inverse, *counts;
};
template <typename S, typename I>
struct UniqueResults {
  const std::vector<S>& out;
  const std::vector<I>& indices;
  const std::vector<I>& inverse;
  const std::vector<I>& counts;
};

// What a unique launched (`e`, its count at count_of(scratch, capacity)) wrote against the reference (out bit for
// bit), then its buffers and scratch freed.
template <typename S, typename I>
void expect_unique(const char* what, cudaError_t e, int64_t* scratch, int64_t capacity, const UniqueBuffers<S, I>& d,
                   const UniqueResults<S, I>& want) {
  cudaDeviceSynchronize();
  expect(e == cudaSuccess, what, capacity, cudaGetErrorString(e));
  const bool counted = read_count(scratch, capacity) == static_cast<int64_t>(want.indices.size());
  expect(counted, what, capacity, "wrong count");
  if (counted) {
    const std::vector<S> got = download(d.out, want.out.size());
    expect(std::memcmp(got.data(), want.out.data(), want.out.size() * sizeof(S)) == 0, what, capacity,
           "wrong values (bits)");
    expect(download(d.indices, want.indices.size()) == want.indices, what, capacity, "wrong indices");
    expect(download(d.counts, want.counts.size()) == want.counts, what, capacity, "wrong counts");
    expect(download(d.inverse, want.inverse.size()) == want.inverse, what, capacity, "wrong inverse");
  }
  for (void* p : {static_cast<void*>(d.x), static_cast<void*>(d.out), static_cast<void*>(d.indices),
                  static_cast<void*>(d.inverse), static_cast<void*>(d.counts), static_cast<void*>(scratch)}) {
    cudaFree(p);
  }
}

// unique over every element, as kernels/detection.cc: NaN sorted last as one value, -0.0 equal to +0.0. S: how the
// host holds T (bool as a byte: std::vector<bool> has no data()).
template <typename T, typename I, typename S = T>
void check_unique(const std::vector<S>& x, const char* what) {
  const int64_t n = static_cast<int64_t>(x.size());
  auto less = [](S a, S b) {
    if constexpr (std::is_floating_point_v<S>) return !std::isnan(a) && (std::isnan(b) || a < b);
    return a < b;
  };
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return less(x[a], x[b]); });
  std::vector<S> out;
  std::vector<I> indices, inverse(static_cast<size_t>(n)), counts;
  for (int64_t k = 0; k < n; ++k) {
    const int64_t i = order[static_cast<size_t>(k)];
    if (k == 0 || less(x[order[static_cast<size_t>(k - 1)]], x[i])) {
      out.push_back(x[i]);
      indices.push_back(static_cast<I>(i));
      counts.push_back(0);
    }
    ++counts.back();
    inverse[static_cast<size_t>(i)] = static_cast<I>(out.size() - 1);
  }
  S* dx = upload(x);
  S* dout = upload(std::vector<S>(static_cast<size_t>(n)));
  I* dindices = upload(std::vector<I>(static_cast<size_t>(n)));
  I* dinverse = upload(std::vector<I>(static_cast<size_t>(n)));
  I* dcounts = upload(std::vector<I>(static_cast<size_t>(n)));
  int64_t* scratch = nullptr;
  cudaMalloc(&scratch, cs::unique_scratch_bytes<T>(n));
  const cudaError_t e = cs::unique<T, I>(reinterpret_cast<const T*>(dx), reinterpret_cast<T*>(dout), dindices,
                                         dinverse, dcounts, n, scratch, nullptr);
  expect_unique(what, e, scratch, n, UniqueBuffers<S, I>{dx, dout, dindices, dinverse, dcounts},
                UniqueResults<S, I>{out, indices, inverse, counts});
}

// unique along an axis, as kernels/detection.cc: x as [outer, length, inner], slices x[:, i, :] compared element by
// element (NaN last as one value), stable; out written compact as [outer, count, inner].
template <typename T, typename I>
void check_unique_axis(const std::vector<T>& x, int64_t outer, int64_t length, int64_t inner, const char* what) {
  auto less = [](T a, T b) {
    if constexpr (std::is_floating_point_v<T>) return !std::isnan(a) && (std::isnan(b) || a < b);
    return a < b;
  };
  auto at = [&](int64_t slice, int64_t k) { return x[static_cast<size_t>(((k / inner) * length + slice) * inner + k % inner)]; };
  auto slice_less = [&](int64_t p, int64_t q) {
    for (int64_t k = 0; k < outer * inner; ++k) {
      if (less(at(p, k), at(q, k))) return true;
      if (less(at(q, k), at(p, k))) return false;
    }
    return false;
  };
  std::vector<int64_t> order(static_cast<size_t>(length));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), slice_less);
  std::vector<I> indices, inverse(static_cast<size_t>(length)), counts;
  for (int64_t k = 0; k < length; ++k) {
    const int64_t i = order[static_cast<size_t>(k)];
    if (k == 0 || slice_less(order[static_cast<size_t>(k - 1)], i)) {
      indices.push_back(static_cast<I>(i));
      counts.push_back(0);
    }
    ++counts.back();
    inverse[static_cast<size_t>(i)] = static_cast<I>(indices.size() - 1);
  }
  const int64_t count = static_cast<int64_t>(indices.size());
  std::vector<T> out(static_cast<size_t>(outer * count * inner));
  for (int64_t b = 0; b < outer; ++b) {
    for (int64_t r = 0; r < count; ++r) {
      for (int64_t t = 0; t < inner; ++t) {
        out[static_cast<size_t>((b * count + r) * inner + t)] =
            x[static_cast<size_t>((b * length + indices[static_cast<size_t>(r)]) * inner + t)];
      }
    }
  }
  T* dx = upload(x);
  T* dout = upload(std::vector<T>(x.size()));
  I* dindices = upload(std::vector<I>(static_cast<size_t>(length)));
  I* dinverse = upload(std::vector<I>(static_cast<size_t>(length)));
  I* dcounts = upload(std::vector<I>(static_cast<size_t>(length)));
  int64_t* scratch = nullptr;
  cudaMalloc(&scratch, cs::unique_axis_scratch_bytes(length));
  const cudaError_t e = cs::unique_axis<T, I>(dx, dout, dindices, dinverse, dcounts, outer, inner, length, scratch,
                                              nullptr);
  expect_unique(what, e, scratch, length, UniqueBuffers<T, I>{dx, dout, dindices, dinverse, dcounts},
                UniqueResults<T, I>{out, indices, inverse, counts});
}

}  // namespace

int main() {
  for (const auto& [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{
           {0, 4}, {1, 1}, {3, 4}, {1, 2047}, {1, 2048}, {1, 2049}, {512, 1025}, {700, 1000}}) {
    for (double p : {0.0, 0.3, 1.0}) check_nonzero(rows, cols, p, 0);
  }
  check_nonzero(3, 5, 0.5, 4096);  // capacity two tiles more than the elements
  for (int64_t b : {1, 3, 300}) {
    for (double p : {0.0, 0.5, 1.0}) check_masked_select(b, 17, 129, p);
  }
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> small(-3, 3);
  for (int64_t n : {0, 1, 5, 2048, 2049, 600000}) {
    std::vector<int64_t> x(static_cast<size_t>(n));
    for (int64_t& v : x) v = small(rng);
    check_unique<int64_t, int64_t>(x, "unique int64");
    std::vector<float> f(static_cast<size_t>(n));
    for (float& v : f) v = static_cast<float>(small(rng)) * 0.5f;
    check_unique<float, int32_t>(f, "unique float32");
  }
  const float nan = std::numeric_limits<float>::quiet_NaN();
  check_unique<float, int64_t>({2.0f, -0.0f, nan, 0.0f, -nan, 1.0f, -0.0f, nan}, "unique float32 NaN and zeros");
  check_unique<double, int64_t>({3.0, -1.0, 3.0, std::numeric_limits<double>::infinity(), -1.0}, "unique float64");
  check_unique<bool, int64_t, uint8_t>({1, 0, 1, 1, 0}, "unique bool");
  check_unique<int32_t, int32_t>(std::vector<int32_t>(5000, 7), "unique int32 every element equal");
  // Along an axis: rows of few values (so they repeat), a middle axis, columns with NaN, no slice, 3000 slices.
  for (const auto& [outer, length, inner] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
           {1, 7, 2}, {3, 5, 4}, {2, 9, 1}, {1, 0, 3}, {1, 3000, 2}, {4, 1, 1}}) {
    std::uniform_int_distribution<int> bit(0, 1);
    std::vector<int64_t> x(static_cast<size_t>(outer * length * inner));
    for (int64_t& v : x) v = bit(rng);
    check_unique_axis<int64_t, int64_t>(x, outer, length, inner, "unique_axis int64");
  }
  check_unique_axis<float, int32_t>({1.0f, nan, 1.0f, 0.0f, -0.0f, nan, 2.0f, 1.0f, 2.0f, 0.0f, 0.0f, 0.0f}, 2, 3, 2,
                                    "unique_axis float32 NaN and zeros");
  std::printf(failures == 0 ? "select_check: all passed\n" : "select_check: %d failed\n", failures);
  return failures == 0 ? 0 : 1;
}
