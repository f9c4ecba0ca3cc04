// matmul on oneDNN (float32): Paddle's rules (transpose flags on matrices, a 1-D x is a row, a 1-D y a column,
// batch dims broadcast right-aligned) as plain strided 2-D matmuls, with no copy of either operand.
//
// Tasks: every batch matrix, split into blocks of at most kBlock x kBlock outputs (a matrix of fewer than
// kMinSplitMacs multiply-adds stays one block: a classifier's M = 1 product ran as four 256-column primitives, each
// costing its fixed overhead); each block is one primitive over the whole K, so no sum is ever split between tasks,
// and the split depends on the shapes only, so the result does not depend on the thread count. Blocks at the bottom
// / right edge may be smaller: a plan holds a primitive for each of the (up to) four block shapes.
//
// A call site (runtime.h's SiteTable, by its operands' and output's addresses) keeps its plan and the arguments
// of each task's primitive, so a steady-state call looks nothing up and creates no oneDNN object.
#include <algorithm>
#include <array>
#include <memory>
#include <vector>

#include "onednn/onednn.h"
#include "onednn/runtime.h"

namespace kforge::kernels::onednn {

namespace {

constexpr int64_t kBlock = 256;
constexpr int64_t kMinSplitMacs = int64_t{8} << 20;

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
  std::shared_ptr<const Plan> plan;  // null: oneDNN cannot do it
  std::vector<ArgSet> tasks;
};

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
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(part->a, part->b, part->c), user_scratchpad(), engine(), true);
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
  if (fresh) KFORGE_RETURN_IF_ERROR(guarded(kOp, [&] {
    const MatmulSite::Key found = site.key;
    site.key = MatmulSite::Key{};  // until the plan is found
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
  const auto& p = static_cast<const MatmulPlan&>(*site.plan);
  *handled = true;

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
  return run_tasks(batches * blocks, [&](int64_t t) {
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
  });
}

}  // namespace kforge::kernels::onednn
