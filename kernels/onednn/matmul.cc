// matmul on oneDNN (float32): Paddle's rules (transpose flags on matrices, a 1-D x is a row, a 1-D y a column,
// batch dims broadcast right-aligned) as plain strided 2-D matmuls, with no copy of either operand.
//
// Tasks: every batch matrix, split into blocks of at most kBlock x kBlock outputs; each block is one primitive over
// the whole K, so no sum is ever split between tasks and the result does not depend on the thread count. Blocks at
// the bottom / right edge may be smaller: a plan holds a primitive for each of the (up to) four block shapes.
#include <algorithm>

#include "onednn/onednn.h"
#include "onednn/runtime.h"

namespace kforge::kernels::onednn {

namespace {

constexpr int64_t kBlock = 256;

struct Part {
  dnnl::matmul prim;
  dnnl::memory::desc a, b, c;
};

struct MatmulPlan : Plan {
  Part parts[2][2];  // [bottom edge block][right edge block]; the edge ones also when there is one block
  size_t scratchpad_bytes = 0;
};

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
  const int64_t row_blocks = (q.m + kBlock - 1) / kBlock, col_blocks = (q.n + kBlock - 1) / kBlock;
  const int64_t last_rows = q.m - (row_blocks - 1) * kBlock, last_cols = q.n - (col_blocks - 1) * kBlock;

  SingleThreadScope single;
  const PlanKey key{4, q.m, q.k, q.n, q.tx, q.ty};
  std::shared_ptr<const Plan> plan;
  KFORGE_RETURN_IF_ERROR(guarded(kOp, [&] {
    plan = find_or_build_plan(key, [&]() -> std::shared_ptr<Plan> {
      try {
        auto p = std::make_shared<MatmulPlan>();
        for (int bottom = row_blocks > 1 ? 0 : 1; bottom < 2; ++bottom) {
          for (int right = col_blocks > 1 ? 0 : 1; right < 2; ++right) {
            const int64_t rows = bottom ? last_rows : std::min(kBlock, q.m);
            const int64_t cols = right ? last_cols : std::min(kBlock, q.n);
            if (!build_part(q, rows, cols, &p->parts[bottom][right], &p->scratchpad_bytes)) return nullptr;
          }
        }
        return p;
      } catch (const dnnl::error&) {
        return nullptr;
      }
    });
    return Status::OK();
  }));
  if (plan == nullptr) return Status::OK();
  const auto& p = static_cast<const MatmulPlan&>(*plan);
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
      const int64_t row0 = rb * kBlock, col0 = cb * kBlock;
      const Part& part = p.parts[rb == row_blocks - 1][cb == col_blocks - 1];
      const float* a = xd + x_off + row0 * q.a_row;
      const float* b = yd + y_off + col0 * q.b_col;
      float* c = od + (t / blocks) * q.m * q.n + row0 * q.n + col0;
      char* scratch = task_arena().reserve(p.scratchpad_bytes);
      if (scratch == nullptr) return Status::Error(kOp, ": out of memory");
      execute(part.prim, {{DNNL_ARG_SRC, wrap(part.a, a)}, {DNNL_ARG_WEIGHTS, wrap(part.b, b)},
                          {DNNL_ARG_DST, wrap(part.c, c)}},
              p.scratchpad_bytes, scratch);
      return Status::OK();
    });
  });
}

}  // namespace kforge::kernels::onednn
