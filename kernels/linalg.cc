// matmul, embedding, softmax, layer_norm and the reductions sum, mean, mean_all, max, min, any, all, p_norm.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "kernel_util.h"
#include "kforge_kernels.h"
#include "reference.h"
#include "transcendental.h"
#if KFORGE_KERNELS_ONEDNN
#include "onednn/onednn.h"
#endif

namespace kforge::kernels {

namespace {

template <typename Meta>
Status check_against_meta(const char* op, const Tensor& out, Meta meta) {
  Tensor expected;
  KFORGE_RETURN_IF_ERROR(meta(&expected));
  if (out.dtype != expected.dtype) return Status::Error(op, ": out is ", out.dtype, ", expected ", expected.dtype);
  return util::require_dims(out, expected, op);
}

// C (m x n) = A (m x k) * B, with A contiguous and B either k x n (b_transposed false) or n x k. The loop orders
// keep the innermost accesses contiguous; each C element sums over k in increasing order either way, in
// util::gemm_chunks's chunks (each in its own accumulator, added to C in order), as the oneDNN path does.
template <typename T>
void gemm(const T* a, const T* b, T* c, int64_t m, int64_t k, int64_t n, bool b_transposed) {
  const util::GemmChunks chunks = util::gemm_chunks(k);
  if (b_transposed) {
    for (int64_t i = 0; i < m; ++i) {
      const T* row = a + i * k;
      for (int64_t j = 0; j < n; ++j) {
        const T* col = b + j * k;
        T sum = T(0);
        for (int64_t h = 0; h < chunks.count; ++h) {
          T acc = T(0);
          for (int64_t p = chunks.begin(h), end = p + chunks.length(h); p < end; ++p) acc += row[p] * col[p];
          sum = h == 0 ? acc : sum + acc;
        }
        c[i * n + j] = sum;
      }
    }
    return;
  }
  std::vector<T> part(chunks.count > 1 ? static_cast<size_t>(n) : 0);
  for (int64_t i = 0; i < m; ++i) {
    T* out_row = c + i * n;
    for (int64_t h = 0; h < chunks.count; ++h) {
      T* acc = h == 0 ? out_row : part.data();  // the first chunk sums into C itself
      for (int64_t j = 0; j < n; ++j) acc[j] = T(0);
      for (int64_t p = chunks.begin(h), end = p + chunks.length(h); p < end; ++p) {
        const T av = a[i * k + p];
        const T* b_row = b + p * n;
        for (int64_t j = 0; j < n; ++j) acc[j] += av * b_row[j];
      }
      if (h > 0) {
        for (int64_t j = 0; j < n; ++j) out_row[j] += acc[j];
      }
    }
  }
}

// `fast`: float32 may run on oneDNN (onednn/matmul.cc); false keeps the loops (reference.h).
Status matmul_kernel(bool fast, const KernelContext& ctx, const Tensor& x, const Tensor& y, bool transpose_x,
                     bool transpose_y, Tensor* out) {
  KFORGE_RETURN_IF_ERROR(util::require_output(out, "matmul"));
  const DataType dtype = util::kernel_dtype(ctx, x);
  if (x.dtype != dtype) return Status::Error("matmul: x is ", x.dtype, " but the kernel dtype is ", dtype);
  KFORGE_RETURN_IF_ERROR(check_against_meta(
      "matmul", *out, [&](Tensor* e) { return meta::MatmulInferMeta(x, y, transpose_x, transpose_y, e); }));
#if KFORGE_KERNELS_ONEDNN
  if (fast && dtype == DataType::kFloat32 && y.dtype == dtype) {
    bool handled = false;
    Status status = onednn::matmul(x, y, transpose_x, transpose_y, out, &handled);
    if (handled) return status;
  }
#else
  (void)fast;
#endif
  // Vectors: x [K] is a row, y [K] a column; the transpose flags apply to matrices only.
  const bool x_vec = x.ndim == 1, y_vec = y.ndim == 1;
  const bool tx = transpose_x && !x_vec, ty = transpose_y && !y_vec;
  const int64_t m = x_vec ? 1 : (tx ? x.dims[x.ndim - 1] : x.dims[x.ndim - 2]);
  const int64_t k = x_vec ? x.dims[0] : (tx ? x.dims[x.ndim - 2] : x.dims[x.ndim - 1]);
  const int64_t n = y_vec ? 1 : (ty ? y.dims[y.ndim - 2] : y.dims[y.ndim - 1]);
  // Batch dims: those of out before its matrix dims; each operand's batch stride is 0 where it broadcasts.
  const int32_t batch_rank = out->ndim - (x_vec ? 0 : 1) - (y_vec ? 0 : 1);
  int64_t strides[3][kMaxRank];
  auto batch_strides = [batch_rank](const Tensor& t, int32_t t_batch, int64_t matrix, int64_t* s) {
    int64_t stride = matrix;
    for (int32_t i = batch_rank - 1; i >= 0; --i) {
      int32_t ti = i - (batch_rank - t_batch);
      s[i] = ti < 0 || t.dims[ti] == 1 ? 0 : stride;
      if (ti >= 0) stride *= t.dims[ti];
    }
  };
  batch_strides(x, x_vec ? 0 : x.ndim - 2, m * k, strides[0]);
  batch_strides(y, y_vec ? 0 : y.ndim - 2, k * n, strides[1]);
  for (int32_t i = batch_rank - 1, s = 0; i >= 0; --i, ++s) {
    strides[2][i] = (s == 0 ? m * n : strides[2][i + 1] * out->dims[i + 1]);
  }
  const int64_t batches = util::product(out->dims, 0, batch_rank);
  return util::visit_float(dtype, "matmul", [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* xd = x.data_as<const T>();
    const T* yd = y.data_as<const T>();
    T* od = out->data_as<T>();
    if (batches == 0 || m == 0 || n == 0) return Status::OK();
    util::Scratch<T> packed(ctx, tx ? static_cast<size_t>(m * k) : 0);
    // One batch at a time: walk the batch index by hand (rank may be 0).
    int64_t index[kMaxRank] = {};
    int64_t offsets[3] = {0, 0, 0};
    for (int64_t b = 0; b < batches; ++b) {
      const T* a = xd + offsets[0];
      if (tx) {  // stored k x m: pack it to m x k
        for (int64_t i = 0; i < m; ++i)
          for (int64_t p = 0; p < k; ++p) packed[static_cast<size_t>(i * k + p)] = a[p * m + i];
        a = packed.data();
      }
      gemm<T>(a, yd + offsets[1], od + offsets[2], m, k, n, ty);
      for (int32_t d = batch_rank - 1; d >= 0; --d) {
        for (int q = 0; q < 3; ++q) offsets[q] += strides[q][d];
        if (++index[d] < out->dims[d]) break;
        for (int q = 0; q < 3; ++q) offsets[q] -= strides[q][d] * out->dims[d];
        index[d] = 0;
      }
    }
    return Status::OK();
  });
}

}  // namespace

Status matmul(const KernelContext& ctx, const Tensor& x, const Tensor& y, bool transpose_x, bool transpose_y,
              Tensor* out) {
  return matmul_kernel(true, ctx, x, y, transpose_x, transpose_y, out);
}

Status reference::matmul(const KernelContext& ctx, const Tensor& x, const Tensor& y, bool transpose_x,
                         bool transpose_y, Tensor* out) {
  return matmul_kernel(false, ctx, x, y, transpose_x, transpose_y, out);
}

Status embedding(const KernelContext& ctx, const Tensor& x, const Tensor& weight, int64_t padding_idx, Tensor* out) {
  KFORGE_RETURN_IF_ERROR(util::require_output(out, "embedding"));
  const DataType dtype = util::kernel_dtype(ctx, weight);
  if (weight.dtype != dtype) return Status::Error("embedding: weight is ", weight.dtype, ", kernel dtype ", dtype);
  KFORGE_RETURN_IF_ERROR(check_against_meta(
      "embedding", *out, [&](Tensor* e) { return meta::EmbeddingInferMeta(x, weight, padding_idx, e); }));
  const int64_t rows = weight.dims[0];
  const int64_t pad = padding_idx == -1 ? -1 : (padding_idx < 0 ? padding_idx + rows : padding_idx);
  const size_t row_bytes = static_cast<size_t>(weight.dims[1]) * size_of(weight.dtype);
  const unsigned char* w = static_cast<const unsigned char*>(weight.data);
  unsigned char* o = static_cast<unsigned char*>(out->data);
  for (int64_t i = 0, n = x.numel(); i < n; ++i) {
    const int64_t id = x.dtype == DataType::kInt64 ? x.data_as<const int64_t>()[i] : x.data_as<const int32_t>()[i];
    if (id == pad && pad >= 0) {
      std::memset(o + static_cast<size_t>(i) * row_bytes, 0, row_bytes);
      continue;
    }
    if (id < 0 || id >= rows) {
      return Status::Error("embedding: id ", id, " at position ", i, " is out of range [0, ", rows, ")");
    }
    if (row_bytes > 0) std::memcpy(o + static_cast<size_t>(i) * row_bytes, w + static_cast<size_t>(id) * row_bytes, row_bytes);
  }
  return Status::OK();
}

Status softmax(const KernelContext& ctx, const Tensor& x, int axis, Tensor* out) {
  KFORGE_RETURN_IF_ERROR(util::require_output(out, "softmax"));
  const DataType dtype = util::kernel_dtype(ctx, x);
  if (x.dtype != dtype || out->dtype != dtype) {
    return Status::Error("softmax: x and out must be ", dtype, ", got ", x.dtype, " and ", out->dtype);
  }
  KFORGE_RETURN_IF_ERROR(util::require_dims(*out, x, "softmax"));
  int64_t a = 0;
  if (x.ndim > 0 && !util::normalize_axis(axis, x.ndim, &a)) return util::bad_axis("softmax", axis, x.ndim);
  if (x.ndim == 0 && axis != 0 && axis != -1) return util::bad_axis("softmax", axis, 0);
  const int64_t outer = x.ndim == 0 ? 1 : util::product(x.dims, 0, a);
  const int64_t len = x.ndim == 0 ? 1 : x.dims[a];
  const int64_t inner = x.ndim == 0 ? 1 : util::product(x.dims, a + 1, x.ndim);
  return util::visit_float(dtype, "softmax", [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* xd = x.data_as<const T>();
    T* od = out->data_as<T>();
    for (int64_t o = 0; o < outer; ++o) {
      if (inner == 1) {
        // A contiguous row: its max, the exps (one vectorised loop; each read before its write: out may alias x)
        // and their sum in kforge_math.h's row order, as the fused softmax rows compute them.
        const T* in = xd + o * len;
        T* res = od + o * len;
        const T max = math::row_max(in, len);
        util::map_exp_shifted(in, max, res, len);
        const T total = math::row_sum(res, len);
        for (int64_t j = 0; j < len; ++j) res[j] /= total;
        continue;
      }
      // Strided rows (an axis that is not the last): each in order, as the CUDA index kernel computes it, but
      // kBlock neighbouring rows at a time, so that every pass reads contiguous runs of memory rather than one
      // element per cache line (PP-YOLOE's DFL softmax over 17 bins of [1, 17, 8400, 4]: 4.5 % of its time
      // was this loop's cache misses). Each row's operations and their order are unchanged: the same bits.
      constexpr int64_t kBlock = 64;
      T max[kBlock], total[kBlock];
      for (int64_t i0 = 0; i0 < inner; i0 += kBlock) {
        const int64_t n = std::min(kBlock, inner - i0);
        const T* in = xd + o * len * inner + i0;
        T* res = od + o * len * inner + i0;
        for (int64_t k = 0; k < n; ++k) max[k] = -std::numeric_limits<T>::infinity();
        for (int64_t j = 0; j < len; ++j) {
          for (int64_t k = 0; k < n; ++k) max[k] = in[j * inner + k] > max[k] ? in[j * inner + k] : max[k];
        }
        for (int64_t j = 0; j < len; ++j) {  // each read before its write: out may alias x
          for (int64_t k = 0; k < n; ++k) res[j * inner + k] = math::exp(in[j * inner + k] - max[k]);
        }
        for (int64_t k = 0; k < n; ++k) total[k] = T(0);
        for (int64_t j = 0; j < len; ++j) {
          for (int64_t k = 0; k < n; ++k) total[k] += res[j * inner + k];
        }
        for (int64_t j = 0; j < len; ++j) {
          for (int64_t k = 0; k < n; ++k) res[j * inner + k] /= total[k];
        }
      }
    }
    return Status::OK();
  });
}

Status layer_norm(const KernelContext& ctx, const Tensor& x, const Tensor* scale, const Tensor* bias, float epsilon,
                  int begin_norm_axis, Tensor* out, Tensor* mean, Tensor* variance) {
  KFORGE_RETURN_IF_ERROR(util::require_output(out, "layer_norm"));
  const DataType dtype = util::kernel_dtype(ctx, x);
  if (x.dtype != dtype) return Status::Error("layer_norm: x is ", x.dtype, ", kernel dtype ", dtype);
  Tensor expected[3];
  KFORGE_RETURN_IF_ERROR(meta::LayerNormInferMeta(x, scale, bias, epsilon, begin_norm_axis, &expected[0],
                                                  &expected[1], &expected[2]));
  const char* names[3] = {"out", "mean", "variance"};
  Tensor* outs[3] = {out, mean, variance};
  for (int i = 0; i < 3; ++i) {
    if (outs[i] == nullptr) continue;
    KFORGE_RETURN_IF_ERROR(util::require_output(outs[i], "layer_norm", names[i]));
    if (outs[i]->dtype != expected[i].dtype) {
      return Status::Error("layer_norm: ", names[i], " is ", outs[i]->dtype, ", expected ", expected[i].dtype);
    }
    KFORGE_RETURN_IF_ERROR(util::require_dims(*outs[i], expected[i], "layer_norm", names[i]));
  }
  for (const Tensor* t : {scale, bias}) {
    if (t != nullptr && t->dtype != dtype) {
      return Status::Error("layer_norm: ", t == scale ? "scale" : "bias", " is ", t->dtype, ", expected ", dtype);
    }
  }
  int64_t axis = 0;
  util::normalize_axis(begin_norm_axis, x.ndim, &axis);
  const int64_t left = util::product(x.dims, 0, axis), right = util::product(x.dims, axis, x.ndim);
  return util::visit_float(dtype, "layer_norm", [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* xd = x.data_as<const T>();
    const T* s = scale != nullptr ? scale->data_as<const T>() : nullptr;
    const T* b = bias != nullptr ? bias->data_as<const T>() : nullptr;
    T* od = out->data_as<T>();
    for (int64_t r = 0; r < left; ++r) {
      const T* row = xd + r * right;
      double sum = 0.0;
      for (int64_t j = 0; j < right; ++j) sum += static_cast<double>(row[j]);
      const double mu = right > 0 ? sum / static_cast<double>(right) : 0.0;
      double sq = 0.0;
      for (int64_t j = 0; j < right; ++j) {
        const double d = static_cast<double>(row[j]) - mu;
        sq += d * d;
      }
      const double var = right > 0 ? sq / static_cast<double>(right) : 0.0;
      const T mean_t = static_cast<T>(mu);
      const T inv_std = static_cast<T>(1.0 / std::sqrt(var + static_cast<double>(epsilon)));
      T* res = od + r * right;
      for (int64_t j = 0; j < right; ++j) {
        T v = (row[j] - mean_t) * inv_std;
        if (s != nullptr) v *= s[j];
        if (b != nullptr) v += b[j];
        res[j] = v;
      }
      if (mean != nullptr) mean->data_as<T>()[r] = mean_t;
      if (variance != nullptr) variance->data_as<T>()[r] = static_cast<T>(var);
    }
    return Status::OK();
  });
}

// ---- reductions -----------------------------------------------------------------------------------------------

namespace {

// Folds every element of x into the accumulator of its output position (row-major input order, so the result is
// deterministic), then writes each accumulator through `finish`.
template <typename In, typename Acc, typename Fold, typename Finish>
void reduce(const Tensor& x, const bool* reduced, Acc* acc, int64_t out_numel, Acc init, Fold fold, Finish finish) {
  for (int64_t i = 0; i < out_numel; ++i) acc[i] = init;
  const In* xd = x.data_as<const In>();
  const int64_t n = x.numel();
  // Whether the reduced dims are the trailing ones (NCHW's H and W for a global pool): then each output folds one
  // contiguous run of the input.
  int32_t kept = x.ndim;
  while (kept > 0 && reduced[kept - 1]) --kept;
  bool trailing = kept < x.ndim;
  for (int32_t d = 0; d < kept; ++d) trailing = trailing && !reduced[d];
  if (x.ndim == 0 || out_numel == 1) {
    for (int64_t i = 0; i < n; ++i) acc[0] = fold(acc[0], xd[i]);
  } else if (trailing && n > 0) {
    // kLanes outputs at a time, each folding its run in order as the walk below would (so the same bits): their
    // chains are independent, where one output at a time waits on each add's latency (a float64 add: 4 cycles
    // an element; PP-YOLOE's ESE pools spent 3 % of the model here).
    constexpr int64_t kLanes = 8;
    const int64_t inner = n / out_numel;
    int64_t i = 0;
    for (; i + kLanes <= out_numel; i += kLanes) {
      Acc a[kLanes];
      for (int64_t q = 0; q < kLanes; ++q) a[q] = acc[i + q];
      const In* run = xd + i * inner;
      for (int64_t j = 0; j < inner; ++j) {
        for (int64_t q = 0; q < kLanes; ++q) a[q] = fold(a[q], run[q * inner + j]);
      }
      for (int64_t q = 0; q < kLanes; ++q) acc[i + q] = a[q];
    }
    for (; i < out_numel; ++i) {
      Acc a = acc[i];
      for (int64_t j = 0; j < inner; ++j) a = fold(a, xd[i * inner + j]);
      acc[i] = a;
    }
  } else if (n > 0) {
    // Output strides over the input's dims, 0 along reduced dims.
    int64_t strides[2][kMaxRank];
    util::contiguous_strides(x.dims, x.ndim, strides[0]);
    int64_t stride = 1;
    for (int32_t d = x.ndim - 1; d >= 0; --d) {
      strides[1][d] = reduced[d] ? 0 : stride;
      if (!reduced[d]) stride *= x.dims[d];
    }
    util::NdCounter counter;
    counter.rank = x.ndim;
    for (int32_t d = 0; d < x.ndim; ++d) counter.dims[d] = x.dims[d];
    const int64_t inner = x.dims[x.ndim - 1], out_step = strides[1][x.ndim - 1];
    int64_t offsets[2] = {0, 0};
    do {
      const In* row = xd + offsets[0];
      Acc* a = acc + offsets[1];
      for (int64_t j = 0; j < inner; ++j) a[j * out_step] = fold(a[j * out_step], row[j]);
    } while (counter.next(offsets, strides));
  }
  for (int64_t i = 0; i < out_numel; ++i) finish(i, acc[i]);
}

// Sum-like accumulation type: double for floating inputs, int64 otherwise.
template <typename T>
using SumAcc = typename std::conditional<std::is_floating_point<T>::value, double, int64_t>::type;

template <typename Meta>
Status reduce_prologue(const char* op, const KernelContext& ctx, const Tensor& x, const IntArray& axis, bool keepdim,
                       Tensor* out, bool* reduced, Meta meta) {
  KFORGE_RETURN_IF_ERROR(util::require_output(out, op));
  const DataType dtype = util::kernel_dtype(ctx, x);
  if (x.dtype != dtype) return Status::Error(op, ": x is ", x.dtype, ", kernel dtype ", dtype);
  KFORGE_RETURN_IF_ERROR(check_against_meta(op, *out, meta));
  std::vector<int64_t> dims;
  return util::reduce_dims(x, axis, keepdim, op, reduced, &dims);
}

}  // namespace

Status sum(const KernelContext& ctx, const Tensor& x, const IntArray& axis, DataType dtype, bool keepdim, Tensor* out) {
  bool reduced[kMaxRank];
  KFORGE_RETURN_IF_ERROR(reduce_prologue("sum", ctx, x, axis, keepdim, out, reduced, [&](Tensor* e) {
    return meta::SumInferMeta(x, axis, dtype, keepdim, e);
  }));
  const int64_t out_numel = out->numel();
  return util::visit_plain(x.dtype, "sum", [&](auto in_tag) -> Status {
    using In = typename decltype(in_tag)::type;
    using Acc = SumAcc<In>;
    return util::visit_plain(out->dtype, "sum", [&](auto out_tag) -> Status {
      using Out = typename decltype(out_tag)::type;
      util::Scratch<Acc> acc(ctx, static_cast<size_t>(out_numel));
      Out* o = out->data_as<Out>();
      reduce<In, Acc>(x, reduced, acc.data(), out_numel, Acc(0), [](Acc a, In v) { return a + static_cast<Acc>(v); },
                      [o](int64_t i, Acc a) { o[i] = static_cast<Out>(a); });
      return Status::OK();
    });
  });
}

Status mean(const KernelContext& ctx, const Tensor& x, const IntArray& axis, bool keepdim, Tensor* out) {
  bool reduced[kMaxRank];
  KFORGE_RETURN_IF_ERROR(reduce_prologue("mean", ctx, x, axis, keepdim, out, reduced, [&](Tensor* e) {
    return meta::ReduceIntArrayAxisInferMeta(x, axis, keepdim, e);
  }));
  const int64_t out_numel = out->numel();
  const int64_t count = out_numel == 0 ? 0 : x.numel() / out_numel;
  return util::visit_number(x.dtype, "mean", [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    using Acc = SumAcc<T>;
    if (std::is_integral<T>::value && count == 0) return Status::Error("mean: reducing over no elements");
    util::Scratch<Acc> acc(ctx, static_cast<size_t>(out_numel));
    T* o = out->data_as<T>();
    reduce<T, Acc>(x, reduced, acc.data(), out_numel, Acc(0), [](Acc a, T v) { return a + static_cast<Acc>(v); },
                   [o, count](int64_t i, Acc a) { o[i] = static_cast<T>(a / static_cast<Acc>(count)); });
    return Status::OK();
  });
}

Status max(const KernelContext& ctx, const Tensor& x, const IntArray& axis, bool keepdim, Tensor* out) {
  bool reduced[kMaxRank];
  KFORGE_RETURN_IF_ERROR(reduce_prologue("max", ctx, x, axis, keepdim, out, reduced, [&](Tensor* e) {
    return meta::ReduceIntArrayAxisInferMeta(x, axis, keepdim, e);
  }));
  const int64_t out_numel = out->numel();
  if (out_numel > 0 && x.numel() == 0) return Status::Error("max: reducing over no elements");
  return util::visit_number(x.dtype, "max", [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    util::Scratch<T> acc(ctx, static_cast<size_t>(out_numel));
    T* o = out->data_as<T>();
    const T lowest = std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                          : std::numeric_limits<T>::lowest();
    // A NaN makes the result NaN, as Paddle's max (is_nan: false for integers, without a self-comparison).
    reduce<T, T>(x, reduced, acc.data(), out_numel, lowest, [](T a, T v) { return v > a || util::is_nan(v) ? v : a; },
                 [o](int64_t i, T a) { o[i] = a; });
    return Status::OK();
  });
}

Status mean_all(const KernelContext& ctx, const Tensor& x, Tensor* out) {
  KFORGE_RETURN_IF_ERROR(util::require_output(out, "mean_all"));
  KFORGE_RETURN_IF_ERROR(check_against_meta("mean_all", *out, [&](Tensor* e) { return meta::MeanAllInferMeta(x, e); }));
  // mean over no axis reduces every dim; without keepdim its result is the same 0-D tensor.
  return mean(ctx, x, IntArray(std::vector<int64_t>{}), false, out);
}

Status min(const KernelContext& ctx, const Tensor& x, const IntArray& axis, bool keepdim, Tensor* out) {
  bool reduced[kMaxRank];
  KFORGE_RETURN_IF_ERROR(reduce_prologue("min", ctx, x, axis, keepdim, out, reduced, [&](Tensor* e) {
    return meta::ReduceIntArrayAxisInferMeta(x, axis, keepdim, e);
  }));
  const int64_t out_numel = out->numel();
  if (out_numel > 0 && x.numel() == 0) return Status::Error("min: reducing over no elements");
  return util::visit_number(x.dtype, "min", [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    util::Scratch<T> acc(ctx, static_cast<size_t>(out_numel));
    T* o = out->data_as<T>();
    const T highest = std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity()
                                                           : std::numeric_limits<T>::max();
    reduce<T, T>(x, reduced, acc.data(), out_numel, highest, [](T a, T v) { return v < a || util::is_nan(v) ? v : a; },
                 [o](int64_t i, T a) { o[i] = a; });
    return Status::OK();
  });
}

namespace {

// any / all: whether some (every) element of x reduced into a position is nonzero; bool out whatever x's dtype.
Status logic_reduce(const char* op, bool is_all, const KernelContext& ctx, const Tensor& x,
                    const std::vector<int64_t>& axis, bool keepdim, Tensor* out) {
  (void)ctx;
  KFORGE_RETURN_IF_ERROR(util::require_output(out, op));
  KFORGE_RETURN_IF_ERROR(check_against_meta(op, *out, [&](Tensor* e) {
    return meta::ReduceInferMeta(x, axis, keepdim, e);
  }));
  bool reduced[kMaxRank];
  std::vector<int64_t> dims;
  KFORGE_RETURN_IF_ERROR(util::reduce_dims(x, IntArray(axis), keepdim, op, reduced, &dims));
  const int64_t out_numel = out->numel();
  bool* o = out->data_as<bool>();
  return util::visit_plain(x.dtype, op, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    // The accumulators are the output itself: a bool per position, folded in place.
    reduce<T, bool>(x, reduced, o, out_numel, is_all,
                    [is_all](bool a, T v) { return is_all ? (a && v != T(0)) : (a || v != T(0)); },
                    [](int64_t, bool) {});
    return Status::OK();
  });
}

}  // namespace

Status any(const KernelContext& ctx, const Tensor& x, const std::vector<int64_t>& axis, bool keepdim, Tensor* out) {
  return logic_reduce("any", false, ctx, x, axis, keepdim, out);
}

Status all(const KernelContext& ctx, const Tensor& x, const std::vector<int64_t>& axis, bool keepdim, Tensor* out) {
  return logic_reduce("all", true, ctx, x, axis, keepdim, out);
}

Status p_norm(const KernelContext& ctx, const Tensor& x, float porder, int axis, float epsilon, bool keepdim,
              bool asvector, Tensor* out) {
  static constexpr const char* kOp = "p_norm";
  KFORGE_RETURN_IF_ERROR(util::require_output(out, kOp));
  const DataType dtype = util::kernel_dtype(ctx, x);
  if (x.dtype != dtype) return Status::Error(kOp, ": x is ", x.dtype, ", kernel dtype ", dtype);
  KFORGE_RETURN_IF_ERROR(check_against_meta(kOp, *out, [&](Tensor* e) {
    return meta::PNormInferMeta(x, porder, axis, epsilon, keepdim, asvector, e);
  }));
  bool reduced[kMaxRank];
  for (int32_t d = 0; d < x.ndim; ++d) reduced[d] = asvector;
  if (!asvector && x.ndim > 0) {
    int64_t a = 0;
    if (!util::normalize_axis(axis, x.ndim, &a)) return util::bad_axis(kOp, axis, x.ndim);
    reduced[a] = true;
  }
  const int64_t out_numel = out->numel();
  return util::visit_float(dtype, kOp, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    T* o = out->data_as<T>();
    util::Scratch<double> acc(ctx, static_cast<size_t>(out_numel));
    const double p = porder;
    auto write = [o](int64_t i, double a) { o[i] = static_cast<T>(a); };
    // Paddle's PNormKernel: the count of nonzeros for p = 0, max / min |x| for +-inf, else (sum |x|^p)^(1/p),
    // here accumulated in double.
    if (p == 0) {
      reduce<T, double>(x, reduced, acc.data(), out_numel, 0.0, [](double a, T v) { return a + (v != T(0)); },
                        write);
    } else if (std::isinf(p)) {
      const bool largest = p > 0;
      reduce<T, double>(x, reduced, acc.data(), out_numel, largest ? 0.0 : std::numeric_limits<double>::infinity(),
                        [largest](double a, T v) {
                          const double m = std::fabs(static_cast<double>(v));
                          return largest ? (m > a ? m : a) : (m < a ? m : a);
                        },
                        write);
    } else {
      reduce<T, double>(x, reduced, acc.data(), out_numel, 0.0,
                        [p](double a, T v) { return a + std::pow(std::fabs(static_cast<double>(v)), p); },
                        [o, p](int64_t i, double a) { o[i] = static_cast<T>(std::pow(a, 1.0 / p)); });
    }
    return Status::OK();
  });
}

}  // namespace kforge::kernels
