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
// A call site (runtime.h's SiteTable, by its operands' and output's addresses) keeps its plan and the arguments
// of each task's primitive, so a steady-state call looks nothing up and creates no oneDNN object.
#include <algorithm>
#include <array>
#include <memory>
#include <optional>
#include <vector>

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

struct Part {
  dnnl::matmul prim;
  dnnl::memory::desc a, b, c;
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
  std::vector<ArgSet> tasks;
};

// x's rows times a constant 2-D y (a classifier, a linear layer): oneDNN inner products over blocks of rows, with y
// packed once into the primitive's layout (kept like a convolution's filter, runtime.h's constant_weights). The
// matmul primitive on y as it lies reads it through a per-call copy into its own layout: with M = 1 (1 x 1024 by
// 1024 x 1000) it took 140 us where this takes 20 us.
struct InnerPlan : Plan {
  dnnl::inner_product_forward prims[2];  // [the last block]
  dnnl::memory::desc src[2], dst[2];
  dnnl::memory::desc user_weights, weights;
  dnnl::reorder weights_reorder;
  size_t scratchpad_bytes = 0;
  int64_t block_rows = 0, blocks = 0;
};

std::shared_ptr<Plan> build_inner_plan(int64_t rows, int64_t k, int64_t n, bool ty) {
  auto p = std::make_shared<InnerPlan>();
  p->block_rows = rows * n * k < kMinSplitMacs ? rows : kBlock;
  p->blocks = (rows + p->block_rows - 1) / p->block_rows;
  // y is k x n (the primitive's "io") or, transposed, n x k ("oi").
  p->user_weights = f32_desc({n, k}, ty ? dnnl::memory::format_tag::oi : dnnl::memory::format_tag::io);
  const dnnl::memory::desc any_weights({n, k}, dnnl::memory::data_type::f32, dnnl::memory::format_tag::any);
  for (int last = p->blocks > 1 ? 0 : 1; last < 2; ++last) {
    const int64_t r = last ? rows - (p->blocks - 1) * p->block_rows : p->block_rows;
    p->src[last] = f32_desc({r, k}, dnnl::memory::format_tag::nc);
    p->dst[last] = f32_desc({r, n}, dnnl::memory::format_tag::nc);
    const dnnl::inner_product_forward::primitive_desc pd =
        inner_product_pd(p->src[last], any_weights, p->dst[last], user_scratchpad());
    if (!pd || is_reference_impl(pd)) return nullptr;
    if (last == 1 && p->blocks > 1 && pd.weights_desc() != p->weights) return nullptr;  // one packed y for both
    p->weights = pd.weights_desc();
    p->prims[last] = dnnl::inner_product_forward(pd);
    p->scratchpad_bytes = std::max(p->scratchpad_bytes, pd.scratchpad_desc().get_size());
  }
  std::optional<dnnl::reorder> r = make_reorder(p->user_weights, p->weights, &p->scratchpad_bytes, true);
  p->weights_reorder = *r;
  return p;
}

Status run_inner(MatmulSite& site, const Tensor& x, const Tensor& y, int64_t k, int64_t n, Tensor* out) {
  static constexpr const char* kOp = "matmul";
  const auto& p = static_cast<const InnerPlan&>(*site.plan);
  std::shared_ptr<const char> packed = site.weights.lock();
  if (packed == nullptr) {
    Status status;
    const size_t bytes = p.weights.get_size();
    packed = constant_weights(
        p, {{y.data, y.bytes()}}, bytes,
        [&](char* buffer) {
          return guarded(kOp, [&] {
            char* scratch = task_arena().reserve(p.scratchpad_bytes);
            if (scratch == nullptr) return Status::Error(kOp, ": out of memory");
            execute(p.weights_reorder, {{DNNL_ARG_FROM, wrap(p.user_weights, y.data)}, {DNNL_ARG_TO, wrap(p.weights, buffer)}},
                    p.scratchpad_bytes, scratch);
            return Status::OK();
          });
        },
        &status);
    KFORGE_RETURN_IF_ERROR(status);
    if (packed == nullptr) return Status::Error(kOp, ": y is no longer declared constant");  // released meanwhile
    site.weights = packed;
  }
  if (site.tasks.empty()) site.tasks.resize(static_cast<size_t>(p.blocks));
  const float* xd = x.data_as<const float>();
  float* od = out->data_as<float>();
  return run_tasks(p.blocks, [&](int64_t b) {
    return guarded(kOp, [&] {
      const int last = b == p.blocks - 1 ? 1 : 0;
      char* scratch = task_arena().reserve(p.scratchpad_bytes);
      if (scratch == nullptr) return Status::Error(kOp, ": out of memory");
      ArgSet& args = site.tasks[static_cast<size_t>(b)];
      args.set(DNNL_ARG_SRC, p.src[last], xd + b * p.block_rows * k);
      args.set(DNNL_ARG_WEIGHTS, p.weights, packed.get());
      args.set(DNNL_ARG_DST, p.dst[last], od + b * p.block_rows * n);
      args.set_scratchpad(p.scratchpad_bytes, scratch);
      args.run(p.prims[last]);
      return Status::OK();
    });
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

bool build_part(const Problem& q, int64_t rows, int64_t cols, Part* part, size_t* scratchpad) {
  part->a = f32_strided({rows, q.k}, {q.a_row, q.a_col});
  part->b = f32_strided({q.k, cols}, {q.b_row, q.b_col});
  part->c = f32_strided({rows, cols}, {q.n, 1});
  const dnnl::matmul::primitive_desc pd = matmul_pd(part->a, part->b, part->c, user_scratchpad());
  if (!pd || is_reference_impl(pd)) return false;
  part->prim = dnnl::matmul(pd);
  *scratchpad = std::max(*scratchpad, pd.scratchpad_desc().get_size());
  return true;
}

}  // namespace

Status matmul(const Tensor& x, const Tensor& y, bool transpose_x, bool transpose_y, Tensor* out, bool* handled) {
  static constexpr const char* kOp = "matmul";
  *handled = false;
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

  SingleThreadScope single;
  bool fresh = false;
  MatmulSite& site = this_thread_sites<MatmulSite>().find(
      reinterpret_cast<uintptr_t>(y.data), reinterpret_cast<uintptr_t>(out->data),
      site_key(x, y, *out, q.tx, q.ty, q.m, q.k, q.n), &fresh);
  // x's rows are contiguous (no transpose) and y is one constant matrix: the inner-product variant.
  const bool rows_of_x = !q.tx && y.ndim == 2;
  const int64_t rows = x.numel() / q.k;
  const uint64_t epoch = constants_epoch();
  if (fresh || site.epoch != epoch) KFORGE_RETURN_IF_ERROR(guarded(kOp, [&] {
    const MatmulSite::Key found = site.key;
    site = MatmulSite{};  // the key stays empty until the plan is found
    site.epoch = epoch;
    site.inner = rows_of_x && is_constant(y.data, y.bytes());
    if (site.inner) {
      site.plan = find_or_build_plan({5, rows, q.k, q.n, q.ty}, [&]() -> std::shared_ptr<Plan> {
        try {
          return build_inner_plan(rows, q.k, q.n, q.ty);
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
            if (!build_part(q, rows, cols, &p->parts[bottom][right], &p->scratchpad_bytes)) return nullptr;
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
  if (site.inner) return run_inner(site, x, y, q.k, q.n, out);
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
  if (site.tasks.empty()) site.tasks.resize(static_cast<size_t>(batches * blocks));
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
      ArgSet& args = site.tasks[static_cast<size_t>(t)];
      args.set(DNNL_ARG_SRC, part.a, a);
      args.set(DNNL_ARG_WEIGHTS, part.b, b);
      args.set(DNNL_ARG_DST, part.c, c);
      args.set_scratchpad(p.scratchpad_bytes, scratch);
      args.run(part.prim);
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

}  // namespace kforge::kernels::onednn
