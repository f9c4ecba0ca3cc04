// Index and data-movement kernels GraphNet's Paddle models use (issue 34): share_data, gather_nd, meshgrid,
// broadcast_tensors, take_along_axis, diag, expand_as and pad. Indices are checked before anything is written, so that a bad index is
// an error status, never an out-of-bounds access; negative ones count from the end of their axis, as Paddle's.
#include <cstring>
#include <vector>

#include "kernel_util.h"
#include "kforge_kernels.h"

namespace kforge::kernels {

namespace {

Status check_meta(const char* op, const Tensor* out, const Tensor& expected) {
  KFORGE_RETURN_IF_ERROR(util::require_output(out, op));
  if (out->dtype != expected.dtype) return Status::Error(op, ": out is ", out->dtype, ", expected ", expected.dtype);
  return util::require_dims(*out, expected, op);
}

// Element i of an int32 or int64 index tensor.
int64_t index_at(const Tensor& index, int64_t i) {
  return index.dtype == DataType::kInt32 ? index.data_as<const int32_t>()[i] : index.data_as<const int64_t>()[i];
}

// `v` as a position on an axis of size n: [-n, n) accepted, negative counting from the end.
Status resolve_index(const char* op, int64_t v, int64_t n, int64_t axis, int64_t* out) {
  if (v < -n || v >= n) {
    return Status::Error(op, ": index ", v, " is out of range for axis ", axis, " of size ", n);
  }
  *out = v < 0 ? v + n : v;
  return Status::OK();
}

}  // namespace

Status share_data(const KernelContext& ctx, const Tensor& x, Tensor* out) {
  (void)ctx;
  KFORGE_RETURN_IF_ERROR(util::require_output(out, "share_data"));
  KFORGE_RETURN_IF_ERROR(util::require_same_dtype(*out, x, "share_data", "out", "x"));
  KFORGE_RETURN_IF_ERROR(util::require_dims(*out, x, "share_data"));
  if (out->data != x.data) util::copy_bytes(out->data, x.data, x.bytes());
  return Status::OK();
}

Status gather_nd(const KernelContext& ctx, const Tensor& x, const Tensor& index, Tensor* out) {
  (void)ctx;
  static constexpr const char* kOp = "gather_nd";
  Tensor expected;
  KFORGE_RETURN_IF_ERROR(meta::GatherNdInferMeta(x, index, &expected));
  KFORGE_RETURN_IF_ERROR(check_meta(kOp, out, expected));
  const int64_t k = index.ndim == 0 ? 0 : index.dims[index.ndim - 1];
  // One row per index position but the last dim (an empty row, k = 0, picks the whole of x).
  const int64_t rows = util::product(index.dims, 0, index.ndim - 1);
  // Each index row picks a slice of x: the dims past the first k, `slice` elements of `elem` bytes.
  const int64_t slice = util::product(x.dims, k, x.ndim);
  const size_t elem = size_of(x.dtype);
  int64_t x_strides[kMaxRank];
  util::contiguous_strides(x.dims, x.ndim, x_strides);
  std::vector<int64_t> offsets(static_cast<size_t>(rows), 0);
  for (int64_t r = 0; r < rows && k > 0; ++r) {
    int64_t offset = 0;
    for (int64_t j = 0; j < k; ++j) {
      int64_t pos = 0;
      KFORGE_RETURN_IF_ERROR(resolve_index(kOp, index_at(index, r * k + j), x.dims[j], j, &pos));
      offset += pos * x_strides[j];
    }
    offsets[static_cast<size_t>(r)] = offset;
  }
  const char* src = static_cast<const char*>(x.data);
  char* dst = static_cast<char*>(out->data);
  const size_t slice_bytes = static_cast<size_t>(slice) * elem;
  if (slice_bytes == 0) return Status::OK();
  for (int64_t r = 0; r < rows; ++r) {
    std::memcpy(dst + static_cast<size_t>(r) * slice_bytes, src + static_cast<size_t>(offsets[r]) * elem, slice_bytes);
  }
  return Status::OK();
}

Status index_put(const KernelContext& ctx, const Tensor& x, TensorList indices, const Tensor& value, bool accumulate,
                 Tensor* out) {
  (void)ctx;
  static constexpr const char* kOp = "index_put";
  Tensor expected;
  KFORGE_RETURN_IF_ERROR(meta::IndexPutInferMeta(x, indices, value, accumulate, &expected));
  KFORGE_RETURN_IF_ERROR(check_meta(kOp, out, expected));
  // The indices broadcast together to `at` (rank b); each position of `at` names a slice of x (x's dims past the
  // m indexed ones), which value, broadcast to at's dims + the slice's, fills.
  const auto m = static_cast<int32_t>(indices.size);
  std::vector<int64_t> at;
  Tensor shape;  // the broadcast so far, as dims only
  shape.ndim = 0;
  for (int32_t j = 0; j < m; ++j) {
    KFORGE_RETURN_IF_ERROR(util::broadcast_dims(shape, indices[j], kOp, &at));
    KFORGE_RETURN_IF_ERROR(shape.set_dims(at));
  }
  const int32_t b = static_cast<int32_t>(at.size()), rank = b + x.ndim - m;
  if (rank > kMaxRank) return Status::Error(kOp, ": rank ", rank, " of the indexed positions and slices");
  Tensor target;  // at's dims + the slice's: what value broadcasts to
  std::vector<int64_t> target_dims = at;
  target_dims.insert(target_dims.end(), x.dims + m, x.dims + x.ndim);
  KFORGE_RETURN_IF_ERROR(target.set_dims(target_dims));
  std::vector<int64_t> check;
  KFORGE_RETURN_IF_ERROR(util::broadcast_dims(target, value, kOp, &check));
  if (check != target_dims) {
    return Status::Error(kOp, ": value ", value.dims_string(), " does not broadcast to ", target.dims_string());
  }
  int64_t x_strides[kMaxRank], value_strides[kMaxRank];
  util::contiguous_strides(x.dims, x.ndim, x_strides);
  util::broadcast_strides(value, rank, value_strides);
  std::vector<std::vector<int64_t>> index_strides(static_cast<size_t>(m), std::vector<int64_t>(kMaxRank, 0));
  for (int32_t j = 0; j < m; ++j) util::broadcast_strides(indices[j], b, index_strides[static_cast<size_t>(j)].data());
  const int64_t positions = util::product(at.data(), 0, b), slice = util::product(x.dims, m, x.ndim);
  if (out->data != x.data) util::copy_bytes(out->data, x.data, x.bytes());
  return util::visit_plain(x.dtype, kOp, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    T* o = out->data_as<T>();
    const T* v = value.data_as<const T>();
    std::vector<int64_t> coord(static_cast<size_t>(rank), 0);
    for (int64_t p = 0; p < positions; ++p) {
      // p's coordinate in `at`, then the x offset its indices name and value's offset there.
      int64_t r = p, base = 0, from = 0;
      for (int32_t d = b - 1; d >= 0; --d) {
        coord[static_cast<size_t>(d)] = r % at[static_cast<size_t>(d)];
        r /= at[static_cast<size_t>(d)];
      }
      for (int32_t j = 0; j < m; ++j) {
        int64_t k = 0;
        for (int32_t d = 0; d < b; ++d) k += coord[static_cast<size_t>(d)] * index_strides[static_cast<size_t>(j)][static_cast<size_t>(d)];
        int64_t pos = 0;
        KFORGE_RETURN_IF_ERROR(resolve_index(kOp, index_at(indices[j], k), x.dims[j], j, &pos));
        base += pos * x_strides[j];
      }
      for (int32_t d = 0; d < b; ++d) from += coord[static_cast<size_t>(d)] * value_strides[d];
      for (int64_t e = 0; e < slice; ++e) {
        int64_t ve = from, q = e;
        for (int32_t d = rank - 1; d >= b; --d) {
          const int64_t n = x.dims[d - b + m];
          ve += (q % n) * value_strides[d];
          q /= n;
        }
        if constexpr (std::is_same_v<T, bool>) {
          o[base + e] = accumulate ? (o[base + e] || v[ve]) : v[ve];
        } else {
          o[base + e] = accumulate ? static_cast<T>(o[base + e] + v[ve]) : v[ve];
        }
      }
    }
    return Status::OK();
  });
}

Status meshgrid(const KernelContext& ctx, TensorList inputs, MutableTensorList out) {
  (void)ctx;
  static constexpr const char* kOp = "meshgrid";
  if (out.size != inputs.size) {
    return Status::Error(kOp, ": ", inputs.size, " inputs but ", out.size, " outputs");
  }
  std::vector<Tensor> expected(inputs.size);
  std::vector<Tensor*> expected_ptrs;
  for (Tensor& t : expected) expected_ptrs.push_back(&t);
  const MutableTensorList expected_list{expected_ptrs.data(), expected_ptrs.size()};
  KFORGE_RETURN_IF_ERROR(meta::MeshgridInferMeta(inputs, expected_list));
  const size_t elem = size_of(inputs[0].dtype);
  for (size_t i = 0; i < inputs.size; ++i) {
    KFORGE_RETURN_IF_ERROR(check_meta(kOp, out.items[i], expected[i]));
    // Output i repeats input i along its own axis: `outer` blocks of n runs of `inner` equal elements.
    const Tensor& in = inputs[i];
    const int64_t n = in.numel();
    const int64_t inner = util::product(expected[i].dims, static_cast<int64_t>(i) + 1, expected[i].ndim);
    const int64_t outer = util::product(expected[i].dims, 0, static_cast<int64_t>(i));
    const char* src = static_cast<const char*>(in.data);
    char* dst = static_cast<char*>(out.items[i]->data);
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t j = 0; j < n; ++j) {
        for (int64_t r = 0; r < inner; ++r) {
          std::memcpy(dst, src + static_cast<size_t>(j) * elem, elem);
          dst += elem;
        }
      }
    }
  }
  return Status::OK();
}

Status broadcast_tensors(const KernelContext& ctx, TensorList input, MutableTensorList out) {
  (void)ctx;
  static constexpr const char* kOp = "broadcast_tensors";
  if (out.size != input.size) {
    return Status::Error(kOp, ": ", input.size, " inputs but ", out.size, " outputs");
  }
  std::vector<Tensor> expected(input.size);
  std::vector<Tensor*> expected_ptrs;
  for (Tensor& t : expected) expected_ptrs.push_back(&t);
  const MutableTensorList expected_list{expected_ptrs.data(), expected_ptrs.size()};
  KFORGE_RETURN_IF_ERROR(meta::BroadcastTensorsInferMeta(input, expected_list));
  for (size_t i = 0; i < input.size; ++i) {
    KFORGE_RETURN_IF_ERROR(check_meta(kOp, out.items[i], expected[i]));
    // Output element e reads the input at e's coordinates, 0 along the dims the input broadcasts.
    const Tensor& in = input[i];
    const Tensor& o = *out.items[i];
    const int32_t rank = o.ndim;
    int64_t in_strides[kMaxRank] = {}, coord[kMaxRank] = {};
    util::broadcast_strides(in, rank, in_strides);
    const size_t elem = size_of(in.dtype);
    const char* src = static_cast<const char*>(in.data);
    char* dst = static_cast<char*>(o.data);
    const int64_t n = o.numel();
    int64_t from = 0;
    for (int64_t e = 0; e < n; ++e) {
      std::memcpy(dst + static_cast<size_t>(e) * elem, src + static_cast<size_t>(from) * elem, elem);
      for (int32_t d = rank - 1; d >= 0; --d) {
        from += in_strides[d];
        if (++coord[d] < o.dims[d]) break;
        from -= in_strides[d] * o.dims[d];
        coord[d] = 0;
      }
    }
  }
  return Status::OK();
}

Status take_along_axis(const KernelContext& ctx, const Tensor& arr, const Tensor& indices, int axis, Tensor* out) {
  (void)ctx;
  static constexpr const char* kOp = "take_along_axis";
  Tensor expected;
  KFORGE_RETURN_IF_ERROR(meta::TakeAlongAxisInferMeta(arr, indices, axis, &expected));
  KFORGE_RETURN_IF_ERROR(check_meta(kOp, out, expected));
  int64_t a = 0;
  if (!util::normalize_axis(axis, arr.ndim, &a)) return util::bad_axis(kOp, axis, arr.ndim);
  int64_t arr_strides[kMaxRank], idx[kMaxRank] = {};
  util::contiguous_strides(arr.dims, arr.ndim, arr_strides);
  const size_t elem = size_of(arr.dtype);
  const char* src = static_cast<const char*>(arr.data);
  // Source offsets first (every index checked), then the copy.
  const int64_t n = indices.numel();
  std::vector<int64_t> offsets(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    int64_t pos = 0;
    KFORGE_RETURN_IF_ERROR(resolve_index(kOp, index_at(indices, i), arr.dims[a], a, &pos));
    int64_t offset = 0;
    for (int64_t d = 0; d < indices.ndim; ++d) offset += (d == a ? pos : idx[d]) * arr_strides[d];
    offsets[static_cast<size_t>(i)] = offset;
    for (int64_t d = indices.ndim - 1; d >= 0; --d) {  // row-major increment of the index position
      if (++idx[d] < indices.dims[d]) break;
      idx[d] = 0;
    }
  }
  char* dst = static_cast<char*>(out->data);
  for (int64_t i = 0; i < n; ++i) std::memcpy(dst + static_cast<size_t>(i) * elem, src + offsets[i] * elem, elem);
  return Status::OK();
}

Status diag(const KernelContext& ctx, const Tensor& x, int offset, float padding_value, Tensor* out) {
  (void)ctx;
  static constexpr const char* kOp = "diag";
  Tensor expected;
  KFORGE_RETURN_IF_ERROR(meta::DiagInferMeta(x, offset, padding_value, &expected));
  KFORGE_RETURN_IF_ERROR(check_meta(kOp, out, expected));
  return util::visit_plain(x.dtype, kOp, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* xd = x.data_as<const T>();
    T* o = out->data_as<T>();
    // The diagonal's first element: row -offset for a negative offset, column offset otherwise.
    const int64_t row0 = offset < 0 ? -static_cast<int64_t>(offset) : 0;
    const int64_t col0 = offset > 0 ? static_cast<int64_t>(offset) : 0;
    if (x.ndim <= 1) {
      const int64_t n = out->dims[0], len = x.numel();
      for (int64_t i = 0, total = n * n; i < total; ++i) o[i] = static_cast<T>(padding_value);
      for (int64_t i = 0; i < len; ++i) o[(row0 + i) * n + col0 + i] = xd[i];
    } else {
      const int64_t cols = x.dims[1];
      for (int64_t i = 0, len = out->numel(); i < len; ++i) o[i] = xd[(row0 + i) * cols + col0 + i];
    }
    return Status::OK();
  });
}

Status expand_as(const KernelContext& ctx, const Tensor& x, const Tensor* y, const std::vector<int>& target_shape,
                 Tensor* out) {
  Tensor expected;
  KFORGE_RETURN_IF_ERROR(meta::ExpandAsInferMeta(x, y, target_shape, &expected));
  KFORGE_RETURN_IF_ERROR(check_meta("expand_as", out, expected));
  return expand(ctx, x, IntArray(out->shape()), out);
}

Status pad(const KernelContext& ctx, const Tensor& x, const std::vector<int>& paddings, const Scalar& pad_value,
           Tensor* out) {
  (void)ctx;
  static constexpr const char* kOp = "pad";
  Tensor expected;
  KFORGE_RETURN_IF_ERROR(meta::PadInferMeta(x, paddings, pad_value, &expected));
  KFORGE_RETURN_IF_ERROR(check_meta(kOp, out, expected));
  return util::visit_plain(x.dtype, kOp, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    T* o = out->data_as<T>();
    const T value = pad_value.to<T>();
    for (int64_t i = 0, n = out->numel(); i < n; ++i) o[i] = value;
    if (x.numel() == 0) return Status::OK();
    // Copy x's rows (its last dim) to their place in out: out's offset of x's position plus the leading pads.
    int64_t out_strides[kMaxRank], idx[kMaxRank] = {};
    util::contiguous_strides(out->dims, out->ndim, out_strides);
    const T* xd = x.data_as<const T>();
    const int64_t inner = x.ndim == 0 ? 1 : x.dims[x.ndim - 1], rows = x.numel() / inner;
    for (int64_t r = 0; r < rows; ++r) {
      int64_t offset = 0;
      for (int32_t d = 0; d < x.ndim; ++d) offset += (idx[d] + paddings[2 * static_cast<size_t>(d)]) * out_strides[d];
      std::memcpy(o + offset, xd + r * inner, static_cast<size_t>(inner) * sizeof(T));
      for (int32_t d = x.ndim - 2; d >= 0; --d) {
        if (++idx[d] < x.dims[d]) break;
        idx[d] = 0;
      }
    }
    return Status::OK();
  });
}

}  // namespace kforge::kernels
