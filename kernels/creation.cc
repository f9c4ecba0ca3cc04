// Creation and copy kernels: full, full_like, full_int_array, assign, assign_value, shape, shape64, numel,
// dropout.
#include <algorithm>
#include <cstring>
#include <vector>

#include "kernel_util.h"
#include "kforge_kernels.h"

namespace kforge::kernels {

namespace {

Status fill(const char* op, const Scalar& value, Tensor* out) {
  return util::visit_plain(out->dtype, op, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T v = value.to<T>();
    T* o = out->data_as<T>();
    for (int64_t i = 0, n = out->numel(); i < n; ++i) o[i] = v;
    return Status::OK();
  });
}

Status require_kernel_dtype(const KernelContext& ctx, const Tensor& out, const char* op) {
  if (ctx.dtype != DataType::kUndefined && ctx.dtype != out.dtype) {
    return Status::Error(op, ": kernel dtype ", ctx.dtype, " differs from out dtype ", out.dtype);
  }
  return Status::OK();
}

}  // namespace

Status full(const KernelContext& ctx, const IntArray& shape, const Scalar& value, DataType dtype, Tensor* out) {
  KFORGE_RETURN_IF_ERROR(util::require_output(out, "full"));
  KFORGE_RETURN_IF_ERROR(require_kernel_dtype(ctx, *out, "full"));
  if (out->dtype != dtype) return Status::Error("full: out is ", out->dtype, " but dtype is ", dtype);
  if (!(out->ndim == static_cast<int32_t>(shape.size()) && std::equal(shape.begin(), shape.end(), out->dims))) {
    return Status::Error("full: out has dims ", out->dims_string(), ", expected ", util::dims_string(shape.values()));
  }
  return fill("full", value, out);
}

Status full_like(const KernelContext& ctx, const Tensor& x, const Scalar& value, DataType dtype, Tensor* out) {
  KFORGE_RETURN_IF_ERROR(util::require_output(out, "full_like"));
  KFORGE_RETURN_IF_ERROR(require_kernel_dtype(ctx, *out, "full_like"));
  const DataType want = dtype == DataType::kUndefined ? x.dtype : dtype;
  if (out->dtype != want) return Status::Error("full_like: out is ", out->dtype, ", expected ", want);
  KFORGE_RETURN_IF_ERROR(util::require_dims(*out, x, "full_like"));
  return fill("full_like", value, out);
}

Status full_int_array(const KernelContext& ctx, const std::vector<int64_t>& value, DataType dtype, Tensor* out) {
  KFORGE_RETURN_IF_ERROR(util::require_output(out, "full_int_array"));
  KFORGE_RETURN_IF_ERROR(require_kernel_dtype(ctx, *out, "full_int_array"));
  if (out->dtype != dtype) return Status::Error("full_int_array: out is ", out->dtype, " but dtype is ", dtype);
  if (out->ndim != 1 || out->dims[0] != static_cast<int64_t>(value.size())) {
    return Status::Error("full_int_array: out has dims ", out->dims_string(), ", expected [", value.size(), "]");
  }
  return util::visit_number(dtype, "full_int_array", [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    T* o = out->data_as<T>();
    for (size_t i = 0; i < value.size(); ++i) o[i] = static_cast<T>(value[i]);
    return Status::OK();
  });
}

Status assign_raw(const KernelContext& ctx, const Tensor& x, Tensor* out) {
  (void)ctx;
  KFORGE_RETURN_IF_ERROR(util::require_output(out, "assign"));
  KFORGE_RETURN_IF_ERROR(util::require_same_dtype(*out, x, "assign", "out", "x"));
  KFORGE_RETURN_IF_ERROR(util::require_dims(*out, x, "assign"));
  util::copy_bytes(out->data, x.data, x.bytes());
  return Status::OK();
}

Status assign_value(const KernelContext& ctx, const std::vector<int>& shape, DataType dtype,
                    const std::vector<Scalar>& values, Tensor* out) {
  KFORGE_RETURN_IF_ERROR(util::require_output(out, "assign_value"));
  KFORGE_RETURN_IF_ERROR(require_kernel_dtype(ctx, *out, "assign_value"));
  if (out->dtype != dtype) return Status::Error("assign_value: out is ", out->dtype, " but dtype is ", dtype);
  if (!(out->ndim == static_cast<int32_t>(shape.size()) && std::equal(shape.begin(), shape.end(), out->dims))) {
    return Status::Error("assign_value: out has dims ", out->dims_string(), ", expected ",
                         util::dims_string(std::vector<int64_t>(shape.begin(), shape.end())));
  }
  if (out->numel() != static_cast<int64_t>(values.size())) {
    return Status::Error("assign_value: ", values.size(), " values for a tensor of ", out->numel(), " elements");
  }
  return util::visit_plain(dtype, "assign_value", [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    T* o = out->data_as<T>();
    for (size_t i = 0; i < values.size(); ++i) o[i] = values[i].to<T>();
    return Status::OK();
  });
}

namespace {

template <typename T>
Status write_shape(const Tensor& input, Tensor* out, DataType dtype, const char* op) {
  KFORGE_RETURN_IF_ERROR(util::require_output(out, op));
  if (out->dtype != dtype) return Status::Error(op, ": out must be ", dtype, ", got ", out->dtype);
  if (out->ndim != 1 || out->dims[0] != input.ndim) {
    return Status::Error(op, ": out has dims ", out->dims_string(), ", expected [", input.ndim, "]");
  }
  T* o = out->data_as<T>();
  for (int32_t i = 0; i < input.ndim; ++i) o[i] = static_cast<T>(input.dims[i]);
  return Status::OK();
}

}  // namespace

Status shape(const KernelContext& ctx, const Tensor& input, Tensor* out) {
  (void)ctx;
  return write_shape<int32_t>(input, out, DataType::kInt32, "shape");
}

Status shape64(const KernelContext& ctx, const Tensor& input, Tensor* out) {
  (void)ctx;
  return write_shape<int64_t>(input, out, DataType::kInt64, "shape64");
}

Status numel(const KernelContext& ctx, const Tensor& x, Tensor* size) {
  (void)ctx;
  static constexpr const char* kOp = "numel";
  KFORGE_RETURN_IF_ERROR(util::require_output(size, kOp));
  if (size->dtype != DataType::kInt64) return Status::Error(kOp, ": size must be int64, got ", size->dtype);
  if (size->numel() != 1) return Status::Error(kOp, ": size has dims ", size->dims_string(), ", expected []");
  size->data_as<int64_t>()[0] = x.numel();
  return Status::OK();
}

// ---- dropout --------------------------------------------------------------------------------------------------

namespace {

// splitmix64: a counter-based generator, so element i's draw does not depend on the order of evaluation.
uint64_t mix(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

Status dropout(const KernelContext& ctx, const Tensor& x, const Tensor* seed_tensor, const Scalar& p, bool is_test,
               const std::string& mode, int seed, bool fix_seed, Tensor* out, Tensor* mask) {
  (void)fix_seed;
  KFORGE_RETURN_IF_ERROR(util::require_output(out, "dropout"));
  const DataType dtype = util::kernel_dtype(ctx, x);
  if (x.dtype != dtype || out->dtype != dtype) {
    return Status::Error("dropout: x and out must be ", dtype, ", got ", x.dtype, " and ", out->dtype);
  }
  KFORGE_RETURN_IF_ERROR(util::require_dims(*out, x, "dropout"));
  if (mask != nullptr) {
    KFORGE_RETURN_IF_ERROR(util::require_output(mask, "dropout", "mask"));
    if (mask->dtype != DataType::kUInt8) return Status::Error("dropout: mask must be uint8, got ", mask->dtype);
    KFORGE_RETURN_IF_ERROR(util::require_dims(*mask, x, "dropout", "mask"));
  }
  const bool upscale = mode == "upscale_in_train";
  if (!upscale && mode != "downgrade_in_infer") {
    return Status::Error("dropout: mode must be upscale_in_train or downgrade_in_infer, got \"", mode, "\"");
  }
  const double prob = p.to<double>();
  if (!(prob >= 0.0 && prob <= 1.0)) return Status::Error("dropout: p must be in [0, 1], got ", prob);
  const int64_t n = x.numel();
  uint64_t key = static_cast<uint64_t>(static_cast<int64_t>(seed));
  if (!is_test && seed_tensor != nullptr) {
    Scalar s;
    KFORGE_RETURN_IF_ERROR(scalar_from_tensor(*seed_tensor, &s));
    key = static_cast<uint64_t>(s.to<int64_t>());
  }
  uint8_t* m = mask != nullptr ? mask->data_as<uint8_t>() : nullptr;
  return util::visit_float(dtype, "dropout", [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* a = x.data_as<const T>();
    T* o = out->data_as<T>();
    if (is_test) {
      const T factor = upscale ? T(1) : static_cast<T>(1.0 - prob);
      for (int64_t i = 0; i < n; ++i) o[i] = upscale ? a[i] : a[i] * factor;
      if (m != nullptr) std::memset(m, 1, static_cast<size_t>(n));
      return Status::OK();
    }
    const T keep_scale = upscale && prob < 1.0 ? static_cast<T>(1.0 / (1.0 - prob)) : T(1);
    for (int64_t i = 0; i < n; ++i) {
      const double u = static_cast<double>(mix(key * 0x100000001B3ull + static_cast<uint64_t>(i)) >> 11) * 0x1.0p-53;
      const bool keep = u >= prob;
      o[i] = keep ? a[i] * keep_scale : T(0);
      if (m != nullptr) m[i] = keep ? 1 : 0;
    }
    return Status::OK();
  });
}

}  // namespace kforge::kernels
