// matmul on oneDNN (float32): Paddle's rules (transpose flags on matrices, a 1-D x is a row, a 1-D y a column,
// batch dims broadcast right-aligned) as plain strided 2-D matmuls, with no copy of either operand.
//
// Tasks: every batch matrix, split into blocks of at most kBlock x kBlock outputs (a matrix of fewer than
// kMinSplitMacs multiply-adds stays one block: a classifier's M = 1 product ran as four 256-column primitives, each
// costing its fixed overhead); each block is one primitive over the whole K, so no sum is ever split between tasks,
// and the split depends on the shapes only, so the result does not depend on the thread count. Blocks at the bottom
// / right edge may be smaller: a plan holds a primitive for each of the (up to) four block shapes. Consecutive
// blocks run as one task up to kMinTaskMacs (small batched products, attention's per head, stay on one thread).
//
// A long K (util::gemm_chunks: issue 34 item 5) runs as one primitive per chunk of K within each task, the first
// writing the block, each later one adding its sum to it (a sum post-op): the chunks' dot products are summed in
// accumulators of their own, a blocked float32 sum as Paddle's sgemm computes one, where a single primitive over
// the whole K sums each in one accumulator (1.4x Paddle's distance from float64 at K = 256, 2.5x at K = 4096).
//
// On a CPU where those chunk primitives are brgemm:avx512_core's, the inner-product path (a constant y) computes
// the same bits in one pass over the output instead (chunked_gemm.h): a pass per chunk over a block of the output
// beyond L2 (BERT-base's 128 x 3072) cost the model 7 %.
//
// A call site (runtime.h's SiteTable, by its operands' and output's addresses) keeps its plan and the arguments
// of each task's primitive, so a steady-state call looks nothing up and creates no oneDNN object.
#include <algorithm>
#include <array>
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernel_util.h"
#include "onednn/chunked_gemm.h"
#include "onednn/onednn.h"
#include "onednn/runtime.h"

namespace kforge::kernels::onednn {

namespace {

constexpr int64_t kBlock = 256;
constexpr int64_t kMinSplitMacs = int64_t{8} << 20;
// Units (a batch matrix's blocks) per task: consecutive units run as one task until it has this many multiply-adds.
// Waking the pool costs a few microseconds of CPU per job and thread (futex wake and sleep); attention's per-head
// products (4 heads of 16 x 32 by 32 x 16) each ran as a pool job of 4 tasks of 8 K multiply-adds, which made a GPT
// decode step take 1.9x the CPU time at 2 threads it took at 1.
constexpr int64_t kMinTaskMacs = int64_t{2} << 20;

std::atomic<bool> g_one_pass_allowed{true};  // set_matmul_one_pass()
thread_local bool g_last_one_pass = false;   // last_matmul_one_pass()

// A reduction chunk's kind: the first writes the output, the later ones add to it; the last may be shorter.
enum ChunkKind { kFirstChunk = 0, kLaterChunk = 1, kLastChunk = 2 };
constexpr int kChunkKinds = 3;

ChunkKind chunk_kind(const util::GemmChunks& chunks, int64_t c) {
  return c == 0 ? kFirstChunk : (c == chunks.count - 1 ? kLastChunk : kLaterChunk);
}
bool kind_used(const util::GemmChunks& chunks, int kind) {
  return kind == kFirstChunk || (kind == kLaterChunk ? chunks.count > 2 : chunks.count > 1);
}
int64_t kind_length(const util::GemmChunks& chunks, int kind) {
  return kind == kLastChunk ? chunks.last : chunks.size;
}
dnnl::primitive_attr chunk_attr(int kind) {
  dnnl::primitive_attr attr = user_scratchpad();
  if (kind != kFirstChunk) {
    dnnl::post_ops ops;
    ops.append_sum(1.f);
    attr.set_post_ops(ops);
  }
  return attr;
}

struct Part {
  dnnl::matmul prims[kChunkKinds];
  dnnl::memory::desc a[kChunkKinds], b[kChunkKinds], c;
};

struct MatmulPlan : Plan {
  Part parts[2][2];  // [bottom edge block][right edge block]; the edge ones also when there is one block
  size_t scratchpad_bytes = 0;
};

// A call site: its shapes (the plan's key, then out's, x's and y's dims) and per task the primitive's arguments.
struct MatmulSite {
  using Key = std::array<int64_t, 36>;
  Key key{};
  uint64_t epoch = 0;                 // constants_epoch() when resolved
  std::shared_ptr<const Plan> plan;   // null: oneDNN cannot do it
  bool inner = false;                 // plan is an InnerPlan
  std::weak_ptr<const char> weights;  // the inner product's packed y, once found
  bool one_pass_allowed = true;       // g_one_pass_allowed when resolved
  std::vector<ArgSet> tasks;
};

// x's rows times a constant 2-D y (a classifier, a linear layer): oneDNN inner products over blocks of rows, with y
// packed once into the primitive's layout (kept like a convolution's filter, runtime.h's constant_weights). The
// matmul primitive on y as it lies reads it through a per-call copy into its own layout: with M = 1 (1 x 1024 by
// 1024 x 1000) it took 140 us where this takes 20 us.
// With several reduction chunks, each task copies its rows' chunk of x into a dense buffer (the primitive reads
// plain rows only), and y is packed chunk by chunk.
struct InnerPlan : Plan {
  dnnl::inner_product_forward prims[2][kChunkKinds];  // [the last block][chunk kind]
  dnnl::memory::desc src[2][kChunkKinds], dst[2];
  dnnl::memory::desc user_weights[kChunkKinds], weights[kChunkKinds];  // a chunk of y as it lies, and packed
  dnnl::reorder weights_reorder[kChunkKinds];
  util::GemmChunks chunks;
  size_t weights_stride = 0;  // bytes between the packed chunks
  size_t scratchpad_bytes = 0;
  size_t src_bytes = 0;  // a task's dense copy of one chunk of its rows (several chunks only)
  int64_t block_rows = 0, blocks = 0;
  // Several chunks summed in one pass (chunked_gemm.h) instead of the primitives, y packed for it; tasks are the
  // blocks of rows times blocks of one_pass_cols columns (the primitives' output is the same bits).
  bool one_pass = false;
  int64_t one_pass_cols = 0, col_blocks = 1;
};

// Output columns per task of the one-pass path: a 256 x 256 block of the output (256 KiB) stays in L2.
constexpr int64_t kOnePassCols = 256;

std::shared_ptr<Plan> build_inner_plan(int64_t rows, int64_t k, int64_t n, bool ty, bool one_pass_allowed) {
  auto p = std::make_shared<InnerPlan>();
  p->block_rows = rows * n * k < kMinSplitMacs ? rows : kBlock;
  p->blocks = (rows + p->block_rows - 1) / p->block_rows;
  p->chunks = util::gemm_chunks(k);
  if (p->chunks.count > 1) p->src_bytes = align_up(static_cast<size_t>(p->block_rows * p->chunks.size) * sizeof(float));
  bool all_brgemm_avx512 = true;
  for (int kind = 0; kind < kChunkKinds; ++kind) {
    if (!kind_used(p->chunks, kind)) continue;
    const int64_t len = kind_length(p->chunks, kind);
    // y's chunk as the primitive's {n, len} weights: y is k x n (element (o, i) at i * n + o) or, transposed, n x k.
    p->user_weights[kind] = f32_strided({n, len}, ty ? Dims{k, 1} : Dims{1, n});
    const dnnl::memory::desc any_weights({n, len}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::any);
    for (int last = p->blocks > 1 ? 0 : 1; last < 2; ++last) {
      const int64_t r = last ? rows - (p->blocks - 1) * p->block_rows : p->block_rows;
      p->src[last][kind] = f32_desc({r, len}, dnnl::memory::format_tag::nc);
      p->dst[last] = f32_desc({r, n}, dnnl::memory::format_tag::nc);
      const dnnl::inner_product_forward::primitive_desc pd =
          inner_product_pd(p->src[last][kind], any_weights, p->dst[last], chunk_attr(kind));
      if (!pd || is_reference_impl(pd)) return nullptr;
      all_brgemm_avx512 = all_brgemm_avx512 && std::string(pd.impl_info_str()).rfind("brgemm:avx512_core", 0) == 0;
      // One packed y for both.
      if (last == 1 && p->blocks > 1 && pd.weights_desc() != p->weights[kind]) return nullptr;
      p->weights[kind] = pd.weights_desc();
      p->prims[last][kind] = dnnl::inner_product_forward(pd);
      p->scratchpad_bytes = std::max(p->scratchpad_bytes, pd.scratchpad_desc().get_size());
    }
    std::optional<dnnl::reorder> r =
        make_reorder(p->user_weights[kind], p->weights[kind], &p->scratchpad_bytes, true);
    p->weights_reorder[kind] = *r;
    p->weights_stride = std::max(p->weights_stride, align_up(p->weights[kind].get_size()));
  }
  // The one-pass path reproduces brgemm:avx512_core's arithmetic (chunked_gemm.h), so only where every chunk
  // primitive is that implementation, and only for the chunk lengths whose arithmetic is one chain: that kernel
  // sums a chunk of 16 q + r products (q >= 1, 0 < r < 16) as a chain over the 16 q plus a chain over the r, which
  // chunked_gemm does not reproduce (tests/unit/kernels/test_onednn_matmul_pool.cpp, K = 113).
  const int64_t last = p->chunks.last;
  if (p->chunks.count > 1 && one_pass_allowed && chunked_gemm::available() && all_brgemm_avx512 &&
      (last <= 16 || last % 16 == 0)) {
    p->one_pass = true;
    // A product too small to split (kMinSplitMacs) stays one task, as the primitives' path keeps it.
    p->one_pass_cols = p->blocks == 1 && rows * n * k < kMinSplitMacs ? n : std::min(n, kOnePassCols);
    p->col_blocks = (n + p->one_pass_cols - 1) / p->one_pass_cols;
  }
  return p;
}

Status run_one_pass(MatmulSite& site, const Tensor& x, const Tensor& y, int64_t k, int64_t n, bool ty, Tensor* out);

Status run_inner(MatmulSite& site, const Tensor& x, const Tensor& y, int64_t k, int64_t n, bool ty, Tensor* out) {
  static constexpr const char* kOp = "matmul";
  const auto& p = static_cast<const InnerPlan&>(*site.plan);
  if (p.one_pass) return run_one_pass(site, x, y, k, n, ty, out);
  std::shared_ptr<const char> packed = site.weights.lock();
  if (packed == nullptr) {
    Status status;
    const size_t bytes = p.weights_stride * static_cast<size_t>(p.chunks.count);
    const float* yd = y.data_as<const float>();
    packed = constant_weights(
        p, {{y.data, y.bytes()}}, bytes,
        [&](char* buffer) {
          return guarded(kOp, [&] {
            char* scratch = task_arena().reserve(p.scratchpad_bytes);
            if (scratch == nullptr) return Status::Error(kOp, ": out of memory");
            for (int64_t c = 0; c < p.chunks.count; ++c) {
              const ChunkKind kind = chunk_kind(p.chunks, c);
              const float* from = yd + p.chunks.begin(c) * (ty ? 1 : n);
              execute(p.weights_reorder[kind],
                      {{DNNL_ARG_FROM, wrap(p.user_weights[kind], from)},
                       {DNNL_ARG_TO, wrap(p.weights[kind], buffer + static_cast<size_t>(c) * p.weights_stride)}},
                      p.scratchpad_bytes, scratch);
            }
            return Status::OK();
          });
        },
        &status);
    KFORGE_RETURN_IF_ERROR(status);
    if (packed == nullptr) return Status::Error(kOp, ": y is no longer declared constant");  // released meanwhile
    site.weights = packed;
  }
  const util::GemmChunks& chunks = p.chunks;
  if (site.tasks.empty()) site.tasks.resize(static_cast<size_t>(p.blocks * chunks.count));
  const float* xd = x.data_as<const float>();
  float* od = out->data_as<float>();
  return run_tasks(p.blocks, [&](int64_t b) {
    return guarded(kOp, [&] {
      const int last = b == p.blocks - 1 ? 1 : 0;
      const int64_t rows = last ? x.numel() / k - b * p.block_rows : p.block_rows;
      const size_t scratch_bytes = align_up(p.scratchpad_bytes);
      char* scratch = task_arena().reserve(scratch_bytes + p.src_bytes);
      if (scratch == nullptr) return Status::Error(kOp, ": out of memory");
      float* dense = reinterpret_cast<float*>(scratch + scratch_bytes);
      const float* block = xd + b * p.block_rows * k;
      for (int64_t c = 0; c < chunks.count; ++c) {
        const ChunkKind kind = chunk_kind(chunks, c);
        const float* src = block;
        if (chunks.count > 1) {  // the rows' chunk c, dense
          const int64_t len = chunks.length(c);
          for (int64_t i = 0; i < rows; ++i) {
            std::copy_n(block + i * k + chunks.begin(c), len, dense + i * len);
          }
          src = dense;
        }
        ArgSet& args = site.tasks[static_cast<size_t>(b * chunks.count + c)];
        args.set(DNNL_ARG_SRC, p.src[last][kind], src);
        args.set(DNNL_ARG_WEIGHTS, p.weights[kind], packed.get() + static_cast<size_t>(c) * p.weights_stride);
        args.set(DNNL_ARG_DST, p.dst[last], od + b * p.block_rows * n);
        args.set_scratchpad(p.scratchpad_bytes, scratch);
        args.run(p.prims[last][kind]);
      }
      return Status::OK();
    });
  });
}

Status run_one_pass(MatmulSite& site, const Tensor& x, const Tensor& y, int64_t k, int64_t n, bool ty, Tensor* out) {
  static constexpr const char* kOp = "matmul";
  const auto& p = static_cast<const InnerPlan&>(*site.plan);
  g_last_one_pass = true;
  std::shared_ptr<const char> packed = site.weights.lock();
  if (packed == nullptr) {
    Status status;
    packed = constant_weights(
        p, {{y.data, y.bytes()}}, chunked_gemm::packed_bytes(k, n),
        [&](char* buffer) {
          chunked_gemm::pack(y.data_as<const float>(), k, n, ty, reinterpret_cast<float*>(buffer));
          return Status::OK();
        },
        &status);
    KFORGE_RETURN_IF_ERROR(status);
    if (packed == nullptr) return Status::Error(kOp, ": y is no longer declared constant");  // released meanwhile
    site.weights = packed;
  }
  const int64_t rows = x.numel() / k;
  const float* xd = x.data_as<const float>();
  const float* yp = reinterpret_cast<const float*>(packed.get());
  float* od = out->data_as<float>();
  return run_tasks(p.blocks * p.col_blocks, [&](int64_t t) {
    const int64_t b = t / p.col_blocks, cb = t % p.col_blocks;
    const int64_t row0 = b * p.block_rows, col0 = cb * p.one_pass_cols;
    chunked_gemm::run(xd, yp, od, k, n, p.chunks, row0, std::min(rows, row0 + p.block_rows), col0,
                      std::min(n, col0 + p.one_pass_cols));
    return Status::OK();
  });
}

MatmulSite::Key site_key(const Tensor& x, const Tensor& y, const Tensor& out, bool tx, bool ty, int64_t m, int64_t k,
                         int64_t n) {
  MatmulSite::Key key{4, m, k, n, tx, ty};
  size_t i = 6;
  for (const Tensor* t : {&out, &x, &y}) {
    key[i++] = t->ndim;
    for (int32_t d = 0; d < kMaxRank; ++d) key[i++] = d < t->ndim ? t->dims[d] : 0;
  }
  return key;
}

struct Problem {
  int64_t m, k, n;
  bool tx, ty;  // x stored k x m, y stored n x k
  int64_t a_row, a_col, b_row, b_col;  // element strides of A (m x k) and B (k x n)
};

bool build_part(const Problem& q, const util::GemmChunks& chunks, int64_t rows, int64_t cols, Part* part,
                size_t* scratchpad) {
  part->c = f32_strided({rows, cols}, {q.n, 1});
  for (int kind = 0; kind < kChunkKinds; ++kind) {
    if (!kind_used(chunks, kind)) continue;
    const int64_t len = kind_length(chunks, kind);
    part->a[kind] = f32_strided({rows, len}, {q.a_row, q.a_col});
    part->b[kind] = f32_strided({len, cols}, {q.b_row, q.b_col});
    const dnnl::matmul::primitive_desc pd = matmul_pd(part->a[kind], part->b[kind], part->c, chunk_attr(kind));
    if (!pd || is_reference_impl(pd)) return false;
    part->prims[kind] = dnnl::matmul(pd);
    *scratchpad = std::max(*scratchpad, pd.scratchpad_desc().get_size());
  }
  return true;
}

}  // namespace

Status matmul(const Tensor& x, const Tensor& y, bool transpose_x, bool transpose_y, Tensor* out, bool* handled) {
  static constexpr const char* kOp = "matmul";
  *handled = false;
  g_last_one_pass = false;
  const bool x_vec = x.ndim == 1, y_vec = y.ndim == 1;
  Problem q;
  q.tx = transpose_x && !x_vec;
  q.ty = transpose_y && !y_vec;
  q.m = x_vec ? 1 : (q.tx ? x.dims[x.ndim - 1] : x.dims[x.ndim - 2]);
  q.k = x_vec ? x.dims[0] : (q.tx ? x.dims[x.ndim - 2] : x.dims[x.ndim - 1]);
  q.n = y_vec ? 1 : (q.ty ? y.dims[y.ndim - 2] : y.dims[y.ndim - 1]);
  if (out->numel() == 0) {
    *handled = true;
    return Status::OK();
  }
  if (q.k == 0) return Status::OK();  // zeros: the reference loops write them
  q.a_row = q.tx ? 1 : q.k;
  q.a_col = q.tx ? q.m : 1;
  q.b_row = q.ty ? 1 : q.n;
  q.b_col = q.ty ? q.k : 1;
  const bool whole = q.m * q.n * q.k < kMinSplitMacs;
  const int64_t block_rows = whole ? q.m : kBlock, block_cols = whole ? q.n : kBlock;
  const int64_t row_blocks = (q.m + block_rows - 1) / block_rows, col_blocks = (q.n + block_cols - 1) / block_cols;
  const int64_t last_rows = q.m - (row_blocks - 1) * block_rows, last_cols = q.n - (col_blocks - 1) * block_cols;
  const util::GemmChunks chunks = util::gemm_chunks(q.k);

  SingleThreadScope single;
  bool fresh = false;
  MatmulSite& site = this_thread_sites<MatmulSite>().find(
      reinterpret_cast<uintptr_t>(y.data), reinterpret_cast<uintptr_t>(out->data),
      site_key(x, y, *out, q.tx, q.ty, q.m, q.k, q.n), &fresh);
  // x's rows are contiguous (no transpose) and y is one constant matrix: the inner-product variant.
  const bool rows_of_x = !q.tx && y.ndim == 2;
  const int64_t rows = x.numel() / q.k;
  const uint64_t epoch = constants_epoch();
  const bool one_pass_allowed = g_one_pass_allowed.load(std::memory_order_relaxed);
  const bool resolve = fresh || site.epoch != epoch || site.one_pass_allowed != one_pass_allowed;
  if (resolve) KFORGE_RETURN_IF_ERROR(guarded(kOp, [&] {
    const MatmulSite::Key found = site.key;
    site = MatmulSite{};  // the key stays empty until the plan is found
    site.epoch = epoch;
    site.one_pass_allowed = one_pass_allowed;
    site.inner = rows_of_x && is_constant(y.data, y.bytes());
    if (site.inner) {
      site.plan = find_or_build_plan({5, rows, q.k, q.n, q.ty, one_pass_allowed}, [&]() -> std::shared_ptr<Plan> {
        try {
          return build_inner_plan(rows, q.k, q.n, q.ty, one_pass_allowed);
        } catch (const dnnl::error&) {
          return nullptr;
        }
      });
      site.inner = site.plan != nullptr;
      if (site.inner) {
        site.key = found;
        return Status::OK();
      }
    }
    site.plan = find_or_build_plan({4, q.m, q.k, q.n, q.tx, q.ty}, [&]() -> std::shared_ptr<Plan> {
      try {
        auto p = std::make_shared<MatmulPlan>();
        for (int bottom = row_blocks > 1 ? 0 : 1; bottom < 2; ++bottom) {
          for (int right = col_blocks > 1 ? 0 : 1; right < 2; ++right) {
            const int64_t rows = bottom ? last_rows : block_rows;
            const int64_t cols = right ? last_cols : block_cols;
            if (!build_part(q, chunks, rows, cols, &p->parts[bottom][right], &p->scratchpad_bytes)) return nullptr;
          }
        }
        return p;
      } catch (const dnnl::error&) {
        return nullptr;
      }
    });
    site.key = found;
    return Status::OK();
  }));
  if (site.plan == nullptr) return Status::OK();
  *handled = true;
  if (site.inner) return run_inner(site, x, y, q.k, q.n, q.ty, out);
  const auto& p = static_cast<const MatmulPlan&>(*site.plan);

  // Batch dims: out's leading dims; an operand's stride is 0 along a dim it broadcasts (as the reference loops).
  const int32_t batch_rank = out->ndim - (x_vec ? 0 : 1) - (y_vec ? 0 : 1);
  int64_t x_strides[kMaxRank] = {}, y_strides[kMaxRank] = {};
  auto batch_strides = [batch_rank](const Tensor& t, int32_t t_batch, int64_t matrix, int64_t* s) {
    int64_t stride = matrix;
    for (int32_t i = batch_rank - 1; i >= 0; --i) {
      const int32_t ti = i - (batch_rank - t_batch);
      s[i] = ti < 0 || t.dims[ti] == 1 ? 0 : stride;
      if (ti >= 0) stride *= t.dims[ti];
    }
  };
  batch_strides(x, x_vec ? 0 : x.ndim - 2, q.m * q.k, x_strides);
  batch_strides(y, y_vec ? 0 : y.ndim - 2, q.k * q.n, y_strides);
  const int64_t batches = util::product(out->dims, 0, batch_rank);
  const int64_t blocks = row_blocks * col_blocks;
  if (site.tasks.empty()) site.tasks.resize(static_cast<size_t>(batches * blocks * chunks.count));
  const float* xd = x.data_as<const float>();
  const float* yd = y.data_as<const float>();
  float* od = out->data_as<float>();
  auto run_unit = [&](int64_t t) {
    return guarded(kOp, [&] {
      int64_t batch = t / blocks, x_off = 0, y_off = 0;
      for (int32_t d = batch_rank - 1; d >= 0; --d) {
        const int64_t i = batch % out->dims[d];
        batch /= out->dims[d];
        x_off += i * x_strides[d];
        y_off += i * y_strides[d];
      }
      const int64_t block = t % blocks, rb = block / col_blocks, cb = block % col_blocks;
      const int64_t row0 = rb * block_rows, col0 = cb * block_cols;
      const Part& part = p.parts[rb == row_blocks - 1][cb == col_blocks - 1];
      const float* a = xd + x_off + row0 * q.a_row;
      const float* b = yd + y_off + col0 * q.b_col;
      float* c = od + (t / blocks) * q.m * q.n + row0 * q.n + col0;
      char* scratch = task_arena().reserve(p.scratchpad_bytes);
      if (scratch == nullptr) return Status::Error(kOp, ": out of memory");
      for (int64_t h = 0; h < chunks.count; ++h) {
        const ChunkKind kind = chunk_kind(chunks, h);
        ArgSet& args = site.tasks[static_cast<size_t>(t * chunks.count + h)];
        args.set(DNNL_ARG_SRC, part.a[kind], a + chunks.begin(h) * q.a_col);
        args.set(DNNL_ARG_WEIGHTS, part.b[kind], b + chunks.begin(h) * q.b_row);
        args.set(DNNL_ARG_DST, part.c, c);
        args.set_scratchpad(p.scratchpad_bytes, scratch);
        args.run(part.prims[kind]);
      }
      return Status::OK();
    });
  };
  const int64_t units = batches * blocks;
  const int64_t unit_macs = std::max<int64_t>(1, block_rows * block_cols * q.k);
  const int64_t per_task = std::clamp<int64_t>(kMinTaskMacs / unit_macs, 1, units);
  return run_tasks((units + per_task - 1) / per_task, [&](int64_t task) {
    const int64_t end = std::min(units, (task + 1) * per_task);
    for (int64_t t = task * per_task; t < end; ++t) KFORGE_RETURN_IF_ERROR(run_unit(t));
    return Status::OK();
  });
}

void set_matmul_one_pass(bool allowed) { g_one_pass_allowed.store(allowed); }
bool last_matmul_one_pass() { return g_last_one_pass; }

}  // namespace kforge::kernels::onednn
