// Scans, reductions and selection along an axis: cumsum, prod, argmax, topk, argsort, log_softmax. Each views x as
// [outer, len, inner] around its axis and walks the len elements of every (outer, inner) line.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "kforge_kernels.h"
#include "math_util.h"
#include "transcendental.h"

namespace kforge::kernels {

using util::Tag;

namespace {

template <typename Meta>
Status check_against_meta(const char* op, const Tensor* out, Meta meta, const char* name = "out") {
  KFORGE_RETURN_IF_ERROR(util::require_output(out, op, name));
  Tensor expected;
  KFORGE_RETURN_IF_ERROR(meta(&expected));
  if (out->dtype != expected.dtype) {
    return Status::Error(op, ": ", name, " is ", out->dtype, ", expected ", expected.dtype);
  }
  return util::require_dims(*out, expected, op, name);
}

Status check_dtype(const KernelContext& ctx, const Tensor& x, const char* op) {
  const DataType dtype = util::kernel_dtype(ctx, x);
  if (x.dtype != dtype) return Status::Error(op, ": x is ", x.dtype, " but the kernel dtype is ", dtype);
  return Status::OK();
}

// x as [outer, len, inner] around `axis` (a 0-D x is one line of one element).
struct Lines {
  int64_t outer = 1, len = 1, inner = 1;
};
Lines lines_of(const Tensor& x, int64_t axis) {
  Lines l;
  if (x.ndim == 0) return l;
  l.outer = util::product(x.dims, 0, axis);
  l.len = x.dims[axis];
  l.inner = util::product(x.dims, axis + 1, x.ndim);
  return l;
}

// int8 ... int64 add with wrap-around (unsigned arithmetic), floats as they are.
template <typename T>
T add_wrapping(T a, T b) {
  if constexpr (std::is_integral<T>::value) {
    using U = typename std::make_unsigned<T>::type;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}

}  // namespace

Status cumsum(const KernelContext& ctx, const Tensor& x, const Scalar& axis, bool flatten, bool exclusive, bool reverse,
              Tensor* out) {
  static constexpr const char* kOp = "cumsum";
  KFORGE_RETURN_IF_ERROR(check_dtype(ctx, x, kOp));
  KFORGE_RETURN_IF_ERROR(check_against_meta(
      kOp, out, [&](Tensor* e) { return meta::CumScalarAxisInferMeta(x, axis, flatten, exclusive, reverse, e); }));
  Lines l;
  if (flatten) {
    l.len = x.numel();
  } else {
    int64_t a = 0, normalized = 0;
    KFORGE_RETURN_IF_ERROR(util::scalar_to_int(axis, kOp, "axis", &a));
    util::normalize_axis_or_scalar(a, x.ndim, &normalized);
    l = lines_of(x, normalized);
  }
  auto body = [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* xd = x.data_as<const T>();
    T* od = out->data_as<T>();
    for (int64_t o = 0; o < l.outer; ++o) {
      for (int64_t i = 0; i < l.inner; ++i) {
        const int64_t base = o * l.len * l.inner + i;
        T acc = T(0);
        for (int64_t k = 0; k < l.len; ++k) {
          const int64_t at = base + (reverse ? l.len - 1 - k : k) * l.inner;
          const T v = xd[at];  // read before the write: out may alias x
          if (exclusive) {
            od[at] = acc;
            acc = add_wrapping(acc, v);
          } else {
            acc = add_wrapping(acc, v);
            od[at] = acc;
          }
        }
      }
    }
    return Status::OK();
  };
  switch (x.dtype) {
    case DataType::kInt8: return body(Tag<int8_t>{});
    case DataType::kUInt8: return body(Tag<uint8_t>{});
    case DataType::kInt16: return body(Tag<int16_t>{});
    default: return util::visit_number(x.dtype, kOp, body);
  }
}

Status prod(const KernelContext& ctx, const Tensor& x, const IntArray& axis, bool keepdim, bool reduce_all,
            Tensor* out) {
  static constexpr const char* kOp = "prod";
  KFORGE_RETURN_IF_ERROR(check_dtype(ctx, x, kOp));
  KFORGE_RETURN_IF_ERROR(check_against_meta(
      kOp, out, [&](Tensor* e) { return meta::ReduceIntArrayAxisInferMetaBase(x, axis, keepdim, reduce_all, e); }));
  bool reduced[kMaxRank];
  std::vector<int64_t> dims;
  KFORGE_RETURN_IF_ERROR(util::reduce_dims(x, reduce_all ? IntArray() : axis, keepdim, kOp, reduced, &dims));
  // Strides of the output position of every input element: 0 along reduced dims.
  int64_t strides[2][kMaxRank];
  util::contiguous_strides(x.dims, x.ndim, strides[0]);
  int64_t stride = 1;
  for (int32_t d = x.ndim - 1; d >= 0; --d) {
    strides[1][d] = reduced[d] ? 0 : stride;
    if (!reduced[d]) stride *= x.dims[d];
  }
  return util::visit_number(x.dtype, kOp, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    // Floats multiply in double, as the other reductions of kernels/ accumulate; integers wrap.
    using Acc = typename std::conditional<std::is_floating_point<T>::value, double, uint64_t>::type;
    const int64_t out_numel = out->numel();
    util::Scratch<Acc> acc(ctx, static_cast<size_t>(out_numel));
    for (int64_t i = 0; i < out_numel; ++i) acc[static_cast<size_t>(i)] = Acc(1);
    const T* xd = x.data_as<const T>();
    const int64_t n = x.numel();
    if (x.ndim == 0 || out_numel == 1) {
      for (int64_t i = 0; i < n; ++i) acc[0] = static_cast<Acc>(acc[0] * static_cast<Acc>(xd[i]));
    } else if (n > 0) {
      util::NdCounter counter;
      counter.rank = x.ndim;
      for (int32_t d = 0; d < x.ndim; ++d) counter.dims[d] = x.dims[d];
      const int64_t inner = x.dims[x.ndim - 1], step = strides[1][x.ndim - 1];
      int64_t offsets[2] = {0, 0};
      do {
        const T* row = xd + offsets[0];
        Acc* a = acc.data() + offsets[1];
        for (int64_t j = 0; j < inner; ++j) a[j * step] = static_cast<Acc>(a[j * step] * static_cast<Acc>(row[j]));
      } while (counter.next(offsets, strides));
    }
    T* o = out->data_as<T>();
    for (int64_t i = 0; i < out_numel; ++i) o[i] = static_cast<T>(acc[static_cast<size_t>(i)]);
    return Status::OK();
  });
}

Status argmax(const KernelContext& ctx, const Tensor& x, const Scalar& axis, bool keepdims, bool flatten,
              DataType dtype, Tensor* out) {
  static constexpr const char* kOp = "argmax";
  KFORGE_RETURN_IF_ERROR(check_dtype(ctx, x, kOp));
  KFORGE_RETURN_IF_ERROR(check_against_meta(
      kOp, out, [&](Tensor* e) { return meta::ArgMinMaxInferMeta(x, axis, keepdims, flatten, dtype, e); }));
  if (x.numel() == 0) return Status::Error(kOp, ": x ", x.dims_string(), " has no elements");
  Lines l;
  if (flatten) {
    l.len = x.numel();
  } else {
    int64_t a = 0, normalized = 0;
    KFORGE_RETURN_IF_ERROR(util::scalar_to_int(axis, kOp, "axis", &a));
    util::normalize_axis_or_scalar(a, x.ndim, &normalized);
    l = lines_of(x, normalized);
  }
  if (dtype == DataType::kInt32 && l.len > std::numeric_limits<int32_t>::max()) {
    return Status::Error(kOp, ": ", l.len, " elements along the axis do not fit int32 indices");
  }
  auto body = [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* xd = x.data_as<const T>();
    for (int64_t o = 0; o < l.outer; ++o) {
      for (int64_t i = 0; i < l.inner; ++i) {
        const T* line = xd + o * l.len * l.inner + i;
        // Eigen's argmax: the best starts at T's lowest with index 0 and only a strictly larger value replaces it,
        // so ties keep the first index and NaN never wins.
        T best = std::numeric_limits<T>::lowest();
        int64_t index = 0;
        for (int64_t k = 0; k < l.len; ++k) {
          if (line[k * l.inner] > best) {
            best = line[k * l.inner];
            index = k;
          }
        }
        const int64_t at = o * l.inner + i;
        if (dtype == DataType::kInt32) {
          out->data_as<int32_t>()[at] = static_cast<int32_t>(index);
        } else {
          out->data_as<int64_t>()[at] = index;
        }
      }
    }
    return Status::OK();
  };
  switch (x.dtype) {
    case DataType::kUInt8: return body(Tag<uint8_t>{});
    case DataType::kInt16: return body(Tag<int16_t>{});
    default: return util::visit_number(x.dtype, kOp, body);
  }
}

namespace {

template <typename T>
struct Entry {
  T value;
  int64_t index;
};

// Paddle's order of a line's (value, index) pairs in topk and argsort: NaN before every number (descending) or
// after every number (ascending), and no tie-break among equals.
template <typename T>
struct Before {
  bool descending;
  bool operator()(const Entry<T>& p, const Entry<T>& q) const {
    const bool pn = util::is_nan(p.value), qn = util::is_nan(q.value);
    return descending ? ((pn && !qn) || p.value > q.value) : ((!pn && qn) || p.value < q.value);
  }
};

// Each line of x along the axis gathered as its (value, index) pairs in index order, ordered in place by
// order(first, last, before), and its first `count` pairs written to out and indices (either may be null), whose
// lines are `count` long.
template <typename T, typename Order>
void order_lines(const KernelContext& ctx, const Tensor& x, const Lines& l, int64_t count, bool descending,
                 Order order, Tensor* out, Tensor* indices) {
  const Before<T> before{descending};
  util::Scratch<Entry<T>> line(ctx, static_cast<size_t>(l.len));
  const T* xd = x.data_as<const T>();
  for (int64_t o = 0; o < l.outer; ++o) {
    for (int64_t i = 0; i < l.inner; ++i) {
      const int64_t base = o * l.len * l.inner + i;
      for (int64_t j = 0; j < l.len; ++j) line[static_cast<size_t>(j)] = {xd[base + j * l.inner], j};
      order(line.data(), line.data() + l.len, before);
      const int64_t out_base = o * count * l.inner + i;
      for (int64_t j = 0; j < count; ++j) {
        const Entry<T>& picked = line[static_cast<size_t>(j)];
        if (out != nullptr) out->data_as<T>()[out_base + j * l.inner] = picked.value;
        if (indices != nullptr) indices->data_as<int64_t>()[out_base + j * l.inner] = picked.index;
      }
    }
  }
}

}  // namespace

Status topk(const KernelContext& ctx, const Tensor& x, const Scalar& k, int axis, bool largest, bool sorted,
            Tensor* out, Tensor* indices) {
  static constexpr const char* kOp = "topk";
  KFORGE_RETURN_IF_ERROR(check_dtype(ctx, x, kOp));
  Tensor expected[2];
  KFORGE_RETURN_IF_ERROR(meta::TopKInferMeta(x, k, axis, largest, sorted, &expected[0], &expected[1]));
  Tensor* outs[2] = {out, indices};
  const char* names[2] = {"out", "indices"};
  for (int i = 0; i < 2; ++i) {
    if (outs[i] == nullptr) continue;  // PIR may leave either result unused
    KFORGE_RETURN_IF_ERROR(check_against_meta(kOp, outs[i], [&](Tensor* e) { *e = expected[i]; return Status::OK(); },
                                              names[i]));
  }
  int64_t a = 0, count = 0;
  util::normalize_axis_or_scalar(axis, x.ndim, &a);
  KFORGE_RETURN_IF_ERROR(util::scalar_to_int(k, kOp, "k", &count));
  const Lines l = lines_of(x, a);
  if (count == 0) return Status::OK();
  return util::visit_number(x.dtype, kOp, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    // Paddle's CPU kernel (phi FullTopK), step for step, so that equal values come out in its order too: NaN
    // before every number (largest) or after every number (smallest), no tie-break among equals; the line in index
    // order; std::partial_sort of the first k when k * 64 < len, else std::nth_element at k - 1 and, when
    // `sorted`, std::sort of the first k - 1. Which of equal values comes first is then what those libstdc++
    // algorithms make of this input sequence, as in Paddle (not stable, not by index).
    const bool partial = count * 64 < l.len;
    order_lines<T>(ctx, x, l, count, largest, [&](Entry<T>* first, Entry<T>* last, const Before<T>& before) {
      if (partial) {
        std::partial_sort(first, first + count, last, before);
      } else {
        std::nth_element(first, first + count - 1, last, before);
        if (sorted) std::sort(first, first + count - 1, before);
      }
    }, out, indices);
    return Status::OK();
  });
}

Status argsort(const KernelContext& ctx, const Tensor& x, int axis, bool descending, bool stable, Tensor* out,
               Tensor* indices) {
  static constexpr const char* kOp = "argsort";
  KFORGE_RETURN_IF_ERROR(check_dtype(ctx, x, kOp));
  Tensor expected[2];
  KFORGE_RETURN_IF_ERROR(meta::ArgsortInferMeta(x, axis, descending, stable, &expected[0], &expected[1]));
  Tensor* outs[2] = {out, indices};
  const char* names[2] = {"out", "indices"};
  for (int i = 0; i < 2; ++i) {
    if (outs[i] == nullptr) continue;  // PIR may leave either result unused
    KFORGE_RETURN_IF_ERROR(check_against_meta(kOp, outs[i], [&](Tensor* e) { *e = expected[i]; return Status::OK(); },
                                              names[i]));
  }
  int64_t a = 0;
  util::normalize_axis_or_scalar(axis, x.ndim, &a);
  const Lines l = lines_of(x, a);
  return util::visit_number(x.dtype, kOp, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    // Paddle's CPU kernel (phi FullSort), step for step: each line's (value, index) pairs in index order, then
    // std::stable_sort when `stable`, else std::sort, with NaN before every number (descending) or after every
    // number (ascending) and no tie-break among equals, so that equal values come out in its order too (what
    // libstdc++'s introsort makes of the sequence when not stable; index order when stable).
    order_lines<T>(ctx, x, l, l.len, descending, [&](Entry<T>* first, Entry<T>* last, const Before<T>& before) {
      if (stable) {
        std::stable_sort(first, last, before);
      } else {
        std::sort(first, last, before);
      }
    }, out, indices);
    return Status::OK();
  });
}

Status log_softmax(const KernelContext& ctx, const Tensor& x, int axis, Tensor* out) {
  static constexpr const char* kOp = "log_softmax";
  KFORGE_RETURN_IF_ERROR(check_dtype(ctx, x, kOp));
  KFORGE_RETURN_IF_ERROR(
      check_against_meta(kOp, out, [&](Tensor* e) { return meta::UnchangedInferMetaCheckAxis(x, axis, e); }));
  int64_t a = 0;
  util::normalize_axis_or_scalar(axis, x.ndim, &a);
  const Lines l = lines_of(x, a);
  return util::visit_float(x.dtype, kOp, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* xd = x.data_as<const T>();
    T* od = out->data_as<T>();
    for (int64_t o = 0; o < l.outer; ++o) {
      for (int64_t i = 0; i < l.inner; ++i) {
        const T* in = xd + o * l.len * l.inner + i;
        T* res = od + o * l.len * l.inner + i;
        // Paddle's LogSoftmaxFunctor: shifted = x - max, out = shifted - log(sum(exp(shifted))); the sum in double.
        T max = -std::numeric_limits<T>::infinity();
        for (int64_t j = 0; j < l.len; ++j) max = in[j * l.inner] > max ? in[j * l.inner] : max;
        double total = 0.0;
        for (int64_t j = 0; j < l.len; ++j) total += static_cast<double>(math::exp(in[j * l.inner] - max));
        const T log_total = static_cast<T>(std::log(total));
        for (int64_t j = 0; j < l.len; ++j) res[j * l.inner] = (in[j * l.inner] - max) - log_total;
      }
    }
    return Status::OK();
  });
}

}  // namespace kforge::kernels
