// The oneDNN paths of matmul and pool2d against the reference loops (bounds in compare_paths.h), the cases they
// leave to the loops, thread counts (bitwise) and the chunked sums of a long K. Built only with oneDNN.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "compare_paths.h"
#include "kernel_util.h"
#include "kforge_kernels.h"
#include "onednn/onednn.h"
#include "reference.h"

using namespace kforge;
using namespace kforge::test;
namespace k = kforge::kernels;
namespace m = kforge::meta;
namespace util = kforge::kernels::util;

namespace {

struct MatmulCase {
  std::vector<int64_t> x, y;
  bool tx = false, ty = false;
};

Tensor run_matmul(const MatmulCase& c, const Tensor& x, const Tensor& y, int path) {  // 0 reference, 1 public, 2 oneDNN
  Tensor out = poisoned_like(output_from([&](Tensor* o) { return m::MatmulInferMeta(x, y, c.tx, c.ty, o); }));
  Status s;
  if (path == 0) {
    s = k::reference::matmul(cpu(), x, y, c.tx, c.ty, &out);
  } else if (path == 1) {
    s = k::matmul(cpu(), x, y, c.tx, c.ty, &out);
  } else {
    bool handled = false;
    s = k::onednn::matmul(x, y, c.tx, c.ty, &out, &handled);
    REQUIRE(handled);
  }
  INFO(s.message());
  REQUIRE(s.ok());
  return out;
}

}  // namespace

TEST_CASE("oneDNN matmul matches the reference loops: transposes, vectors, broadcast batches, blocks") {
  const std::vector<MatmulCase> cases = {
      {{3, 4}, {4, 5}},
      {{4, 3}, {4, 5}, true},
      {{3, 4}, {5, 4}, false, true},
      {{4, 3}, {5, 4}, true, true},
      {{7}, {7, 5}},
      {{6, 7}, {7}},
      {{7}, {7}},
      {{2, 3, 4, 5}, {5, 6}},
      {{2, 1, 4, 5}, {3, 5, 6}},
      {{4, 5}, {2, 3, 5, 6}},
      {{2, 3, 5, 4}, {2, 3, 6, 5}, true, true},
      {{1, 512}, {512, 1000}},
      {{300, 70}, {70, 520}},         // 2 x 3 blocks of 256 with a bottom and a right edge
      {{70, 300}, {520, 70}, true, true},
      {{2, 257, 130}, {130, 256}},    // a 1-row bottom edge, one full column block
      {{1, 1024}, {1024, 1000}},      // a classifier: one block (too few multiply-adds to split)
      {{1, 4096}, {4096, 2100}},      // M = 1 in 9 column blocks, the last of 52
      {{1, 4, 16, 32}, {1, 4, 16, 32}, false, true},  // attention's scores: the 4 heads are one task
      {{37, 3, 5}, {37, 5, 4}},       // 37 tiny matrices, one task
      {{20, 64, 64}, {20, 64, 64}},   // 8 matrices of 256 K multiply-adds per task: tasks of 8, 8 and 4
  };
  uint32_t seed = 200;
  for (const MatmulCase& c : cases) {
    INFO("x " << util::dims_string(c.x) << (c.tx ? "^T" : "") << " y " << util::dims_string(c.y) << (c.ty ? "^T" : ""));
    const Tensor x = random_f32(c.x, seed++), y = random_f32(c.y, seed++);
    const Tensor got = run_matmul(c, x, y, 2);
    const int64_t k_dim = c.x.size() == 1 ? c.x[0] : (c.tx ? c.x[c.x.size() - 2] : c.x.back());
    check_within_bound(got, run_matmul(c, x, y, 0), run_matmul(c, abs_of(x), abs_of(y), 0), k_dim + 1);
    CHECK(same_bits(run_matmul(c, x, y, 1), got));
    for (int threads : {2, 3, 5}) {
      ThreadsScope scope(threads);
      CHECK(same_bits(run_matmul(c, x, y, 1), got));
    }
  }
}

TEST_CASE("oneDNN matmul: K = 0 is left to the loops (zeros), float64 never reaches oneDNN") {
  const MatmulCase empty_k{{3, 0}, {0, 4}};
  Tensor x = empty(DataType::kFloat32, {3, 0}), y = empty(DataType::kFloat32, {0, 4});
  Tensor out = poisoned_like(output_from([&](Tensor* o) { return m::MatmulInferMeta(x, y, false, false, o); }));
  bool handled = true;
  REQUIRE(k::onednn::matmul(x, y, false, false, &out, &handled).ok());
  CHECK_FALSE(handled);
  REQUIRE(k::matmul(cpu(), x, y, false, false, &out).ok());
  check_close<float>(out, std::vector<float>(12, 0.f), 0.0);

  const Tensor a = f64({2, 2}, {1, 2, 3, 4}), b = f64({2, 2}, {5, 6, 7, 8});
  Tensor c = output_from([&](Tensor* o) { return m::MatmulInferMeta(a, b, false, false, o); });
  REQUIRE(k::matmul(cpu(), a, b, false, false, &c).ok());
  check_close<double>(c, {19, 22, 43, 50}, 0.0);
}

namespace {

struct PoolCase {
  const char* name;
  std::vector<int64_t> x;  // in data_format
  std::vector<int64_t> kernel;
  std::vector<int> strides = {1, 1};
  std::vector<int> paddings = {0, 0};
  bool ceil_mode = false;
  bool exclusive = true;
  std::string data_format = "NCHW";
  std::string type = "max";
  bool global = false;
  bool adaptive = false;
  std::string algorithm = "EXPLICIT";
};

Tensor run_pool(const PoolCase& c, const Tensor& x, bool reference) {
  const IntArray kernel(c.kernel);
  Tensor out = poisoned_like(output_from([&](Tensor* o) {
    return m::Pool2DInferMeta(x, kernel, c.strides, c.paddings, c.ceil_mode, c.exclusive, c.data_format, c.type,
                              c.global, c.adaptive, c.algorithm, o);
  }));
  auto kernel_fn = reference ? k::reference::pool2d : k::pool2d;
  Status s = kernel_fn(cpu(), x, kernel, c.strides, c.paddings, c.ceil_mode, c.exclusive, c.data_format, c.type,
                       c.global, c.adaptive, c.algorithm, &out);
  INFO(s.message());
  REQUIRE(s.ok());
  return out;
}

// The oneDNN path directly; *handled says whether it took the case.
Tensor run_pool_onednn(const PoolCase& c, const Tensor& x, bool* handled) {
  util::PoolShape shape;
  REQUIRE(util::pool_shape("pool2d", x, IntArray(c.kernel), c.strides, c.paddings, c.ceil_mode, c.data_format, c.type,
                           c.global, c.adaptive, c.algorithm, &shape)
              .ok());
  Tensor out = poisoned_like(run_pool(c, x, true));
  Status s = k::onednn::pool2d(x, shape, c.exclusive, &out, handled);
  INFO(s.message());
  REQUIRE(s.ok());
  return out;
}

}  // namespace

TEST_CASE("oneDNN pool2d matches the reference loops: max exactly, avg within the bound") {
  const std::vector<PoolCase> cases = {
      {"max 3x3 s2 p1", {2, 5, 9, 9}, {3, 3}, {2, 2}, {1, 1}},
      {"max ceil_mode", {1, 3, 8, 8}, {3, 3}, {2, 2}, {0, 0}, true},
      {"max floor on odd input", {1, 3, 7, 7}, {2, 2}, {2, 2}},
      {"max NHWC 4 paddings", {2, 7, 6, 5}, {3, 2}, {1, 2}, {1, 0, 0, 1}, false, true, "NHWC"},
      {"avg exclusive p1", {1, 4, 9, 9}, {3, 3}, {2, 2}, {1, 1}, false, true, "NCHW", "avg"},
      {"avg inclusive p1", {1, 4, 9, 9}, {3, 3}, {2, 2}, {1, 1}, false, false, "NCHW", "avg"},
      {"avg inclusive ceil_mode", {1, 4, 8, 8}, {3, 3}, {2, 2}, {1, 1}, true, false, "NCHW", "avg"},
      {"avg exclusive ceil_mode NHWC", {3, 8, 8, 6}, {3, 3}, {2, 2}, {0, 0}, true, true, "NHWC", "avg"},
      {"avg SAME", {1, 3, 7, 6}, {3, 3}, {2, 2}, {0, 0}, false, true, "NCHW", "avg", false, false, "SAME"},
      {"max VALID", {1, 3, 7, 6}, {3, 3}, {2, 2}, {1, 1}, false, true, "NCHW", "max", false, false, "VALID"},
      {"global avg", {2, 16, 7, 7}, {1, 1}, {1, 1}, {0, 0}, false, true, "NCHW", "avg", true},
      {"global max NHWC", {2, 5, 4, 16}, {1, 1}, {1, 1}, {0, 0}, false, true, "NHWC", "max", true},
      {"adaptive avg to 1", {1, 32, 6, 6}, {1, 1}, {1, 1}, {0, 0}, false, true, "NCHW", "avg", false, true},
      {"adaptive max 8 to 4", {1, 3, 8, 12}, {4, 3}, {1, 1}, {0, 0}, false, true, "NCHW", "max", false, true},
      {"adaptive avg 8 to 2 NHWC", {2, 8, 8, 3}, {2, 2}, {1, 1}, {0, 0}, false, true, "NHWC", "avg", false, true},
  };
  uint32_t seed = 300;
  for (const PoolCase& c : cases) {
    INFO(c.name);
    const Tensor x = random_f32(c.x, seed++);
    bool handled = false;
    const Tensor got = run_pool_onednn(c, x, &handled);
    REQUIRE(handled);
    const Tensor want = run_pool(c, x, true);
    if (c.type == "max") {
      CHECK(same_bits(got, want));
    } else {
      const bool nhwc = c.data_format == "NHWC";
      const int64_t plane = nhwc ? c.x[1] * c.x[2] : c.x[2] * c.x[3];
      const int64_t terms = c.global || c.adaptive ? plane : c.kernel[0] * c.kernel.back();  // the window or more
      check_within_bound(got, want, run_pool(c, abs_of(x), true), terms + 2);  // + the division
    }
    // The public kernel: oneDNN for NCHW; channel-last pooling runs kforge's own loop (nn.cc), which computes
    // what the reference loops compute, bit for bit.
    const Tensor& public_want = c.data_format == "NHWC" ? want : got;
    CHECK(same_bits(run_pool(c, x, false), public_want));
    ThreadsScope threads(3);
    CHECK(same_bits(run_pool(c, x, false), public_want));
  }
}

TEST_CASE("oneDNN pool2d leaves uneven adaptive windows and windows wholly in the padding to the loops") {
  const std::vector<PoolCase> cases = {
      {"adaptive 7 to 3", {1, 2, 7, 7}, {3, 3}, {1, 1}, {0, 0}, false, true, "NCHW", "avg", false, true},
      {"window in the padding", {1, 2, 4, 4}, {2, 2}, {1, 1}, {2, 2}, false, true, "NCHW", "max"},
      {"ceil_mode window past the input", {1, 2, 5, 5}, {1, 1}, {2, 2}, {1, 1}, true, true, "NCHW", "max"},
  };
  for (const PoolCase& c : cases) {
    INFO(c.name);
    const Tensor x = random_f32(c.x, 400);
    bool handled = true;
    run_pool_onednn(c, x, &handled);
    CHECK_FALSE(handled);
    CHECK(same_bits(run_pool(c, x, false), run_pool(c, x, true)));  // the public kernel ran the loops
  }
}

TEST_CASE("oneDNN matmul and pool2d: a repeated call from one call site resolves nothing") {
  const MatmulCase mc{{2, 3, 40}, {40, 300}};
  const Tensor x = random_f32(mc.x, 500), y = random_f32(mc.y, 501);
  Tensor mout = poisoned_like(run_matmul(mc, x, y, 0));
  const PoolCase pc{"avg 3x3 s2 p1 NHWC", {2, 9, 9, 16}, {3, 3}, {2, 2}, {1, 1}, false, true, "NHWC", "avg"};
  const Tensor px = random_f32(pc.x, 502);
  Tensor pout = poisoned_like(run_pool(pc, px, true));
  auto call = [&] {
    REQUIRE(k::matmul(cpu(), x, y, mc.tx, mc.ty, &mout).ok());
    REQUIRE(k::pool2d(cpu(), px, IntArray(pc.kernel), pc.strides, pc.paddings, pc.ceil_mode, pc.exclusive,
                      pc.data_format, pc.type, pc.global, pc.adaptive, pc.algorithm, &pout)
                .ok());
  };
  call();
  const Tensor matmul_first = run_matmul(mc, x, y, 1), pool_first = run_pool(pc, px, false);
  CHECK(same_bits(mout, matmul_first));
  CHECK(same_bits(pout, pool_first));
  const uint64_t sites = k::onednn::sites_filled(), plans = k::onednn::plans_built();
  for (int i = 0; i < 3; ++i) {
    call();
    CHECK(same_bits(mout, matmul_first));
    CHECK(same_bits(pout, pool_first));
  }
  CHECK(k::onednn::sites_filled() == sites);
  CHECK(k::onednn::plans_built() == plans);
}

TEST_CASE("oneDNN matmul by a constant y: inner products on a packed y, within the bound, any thread count") {
  const std::vector<MatmulCase> cases = {
      {{1, 1024}, {1024, 1000}},           // a classifier
      {{1, 576}, {1000, 576}, false, true},
      {{70}, {70, 33}},                    // a vector x
      {{2, 3, 40}, {40, 70}},              // batch dims become rows
      {{600, 64}, {300, 64}, false, true}, // 3 blocks of 256 rows, the last of 88
  };
  uint32_t seed = 600;
  for (const MatmulCase& c : cases) {
    INFO("x " << util::dims_string(c.x) << " y " << util::dims_string(c.y) << (c.ty ? "^T" : ""));
    const Tensor x = random_f32(c.x, seed++), y = random_f32(c.y, seed++);
    ConstantScope declared(y, true);
    const Tensor got = run_matmul(c, x, y, 2);
    const int64_t k_dim = c.x.back();
    check_within_bound(got, run_matmul(c, x, y, 0), run_matmul(c, abs_of(x), abs_of(y), 0), k_dim + 1);
    for (int threads : {2, 3}) {
      ThreadsScope scope(threads);
      CHECK(same_bits(run_matmul(c, x, y, 1), got));
    }
  }
}

namespace {

// Mean |out - float64 product| over out's elements, for x (m x k) times y (k x n).
double mean_distance_from_float64(const Tensor& x, const Tensor& y, const Tensor& out, int64_t m, int64_t k,
                                  int64_t n) {
  const float* a = x.data_as<const float>();
  const float* b = y.data_as<const float>();
  const float* c = out.data_as<const float>();
  double total = 0;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double exact = 0;
      for (int64_t p = 0; p < k; ++p) exact += static_cast<double>(a[i * k + p]) * b[p * n + j];
      total += std::abs(c[i * n + j] - exact);
    }
  }
  return total / static_cast<double>(m * n);
}

// The same product summed in one float32 accumulator per element (what the kernels computed before the chunks).
Tensor one_accumulator(const Tensor& x, const Tensor& y, int64_t m, int64_t k, int64_t n) {
  Tensor out = empty(DataType::kFloat32, {m, n});
  const float* a = x.data_as<const float>();
  const float* b = y.data_as<const float>();
  float* c = out.data_as<float>();
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float acc = 0;
      for (int64_t p = 0; p < k; ++p) acc = std::fma(a[i * k + p], b[p * n + j], acc);
      c[i * n + j] = acc;
    }
  }
  return out;
}

}  // namespace

TEST_CASE("matmul sums a long K in chunks: closer to float64 than one accumulator, on every path") {
  CHECK(util::gemm_chunks(112).count == 1);
  const util::GemmChunks c113 = util::gemm_chunks(113), c256 = util::gemm_chunks(256);
  CHECK((c113.count == 2 && c113.size == 64 && c113.last == 49));
  CHECK((c256.count == 4 && c256.size == 64 && c256.last == 64));
  // 300 rows (two row blocks of the oneDNN paths) of K = 1024: one accumulator is 2.5x Paddle's mean distance from
  // float64 there, the chunks 0.8x (kernel_util.h's gemm_chunks).
  const int64_t m = 300, k = 1024, n = 64;
  const MatmulCase c{{m, k}, {k, n}};
  const Tensor x = random_f32(c.x, 900), y = random_f32(c.y, 901);
  const double single = mean_distance_from_float64(x, y, one_accumulator(x, y, m, k, n), m, k, n);
  const Tensor general = run_matmul(c, x, y, 2);
  CHECK(mean_distance_from_float64(x, y, general, m, k, n) < 0.6 * single);
  CHECK(mean_distance_from_float64(x, y, run_matmul(c, x, y, 0), m, k, n) < 0.6 * single);
  ConstantScope declared(y, true);
  const Tensor inner = run_matmul(c, x, y, 2);
  CHECK(mean_distance_from_float64(x, y, inner, m, k, n) < 0.6 * single);
  for (int threads : {2, 3}) {
    ThreadsScope scope(threads);
    CHECK(same_bits(run_matmul(c, x, y, 1), inner));
  }
}

namespace {

// x's rows times y (k x n, or n x k when ty) as the chunk primitives of brgemm:avx512_core compute it: each chunk
// of util::gemm_chunks a chain of fused multiply-adds from zero in order of k, the chunks' sums added in order.
// The result has the shape of `like`.
Tensor fma_chunks(const Tensor& x, const Tensor& y, int64_t k, int64_t n, bool ty, const Tensor& like) {
  const int64_t rows = x.numel() / k;
  Tensor out = empty(DataType::kFloat32, like.shape());
  const util::GemmChunks chunks = util::gemm_chunks(k);
  const float* a = x.data_as<const float>();
  const float* b = y.data_as<const float>();
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      float sum = 0;
      for (int64_t h = 0; h < chunks.count; ++h) {
        float acc = 0;
        for (int64_t p = chunks.begin(h), end = p + chunks.length(h); p < end; ++p) {
          acc = std::fma(a[i * k + p], ty ? b[j * k + p] : b[p * n + j], acc);
        }
        sum = h == 0 ? acc : sum + acc;
      }
      out.data_as<float>()[i * n + j] = sum;
    }
  }
  return out;
}

}  // namespace

TEST_CASE("matmul by a constant y: a chunked K in one pass gives the bits of a primitive per chunk") {
  // Rows that leave 6-row tiles and 256-row blocks short, columns that leave 64-column panels and 256-column tasks
  // short, a last chunk shorter than 64, y transposed, a batched x.
  const std::vector<MatmulCase> cases = {
      {{37, 144}, {144, 50}},          // three chunks (64 + 64 + 16), one partial panel
      {{300, 200}, {200, 777}},        // 2 row blocks x 4 column tasks, last chunk of 8
      {{128, 768}, {768, 3072}},       // BERT-base's FFN
      {{128, 3072}, {768, 3072}, false, true},
      {{2, 41, 992}, {992, 64}},       // 16 chunks (the last of 32): two k blocks of 12 chunks
      {{7, 160}, {160, 100}},          // a last chunk of 32
  };
  uint32_t seed = 950;
  for (const MatmulCase& c : cases) {
    INFO("x " << util::dims_string(c.x) << " y " << util::dims_string(c.y) << (c.ty ? "^T" : ""));
    const Tensor x = random_f32(c.x, seed++), y = random_f32(c.y, seed++);
    const int64_t k = c.x.back(), n = c.ty ? c.y[0] : c.y[1];
    ConstantScope declared(y, true);
    k::onednn::set_matmul_one_pass(false);
    const Tensor per_chunk = run_matmul(c, x, y, 2);
    CHECK_FALSE(k::onednn::last_matmul_one_pass());
    k::onednn::set_matmul_one_pass(true);
    const Tensor one_pass = run_matmul(c, x, y, 2);
    if (!k::onednn::last_matmul_one_pass()) {  // no AVX-512 (the primitives run, so nothing to compare)
      WARN("the one-pass path is not used on this CPU (no AVX-512 or not brgemm:avx512_core)");
      continue;
    }
    CHECK(same_bits(one_pass, per_chunk));
    CHECK(same_bits(one_pass, fma_chunks(x, y, k, n, c.ty, one_pass)));
    for (int threads : {2, 3}) {
      ThreadsScope scope(threads);
      CHECK(same_bits(run_matmul(c, x, y, 1), one_pass));
    }
  }
}

TEST_CASE("matmul by a constant y: a last chunk of 16 q + r products stays on the primitives") {
  // brgemm:avx512_core sums such a chunk as two chains added (chunked_gemm.h), which the one-pass path does not.
  const MatmulCase c{{37, 113}, {113, 50}};  // chunks of 64 and 49
  const Tensor x = random_f32(c.x, 970), y = random_f32(c.y, 971);
  ConstantScope declared(y, true);
  k::onednn::set_matmul_one_pass(false);
  const Tensor per_chunk = run_matmul(c, x, y, 2);
  k::onednn::set_matmul_one_pass(true);
  CHECK(same_bits(run_matmul(c, x, y, 2), per_chunk));
  CHECK_FALSE(k::onednn::last_matmul_one_pass());
}
