// Creation ops: full_with_tensor, uniform, randint, arange, one_hot.
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kforge_kernels.h"
#include "math_util.h"

namespace kforge::kernels {

using util::Tag;

namespace {

// out must be allocated with the dims and dtype its infer-meta gives.
template <typename Meta>
Status check_against_meta(const char* op, const Tensor* out, Meta meta) {
  KFORGE_RETURN_IF_ERROR(util::require_output(out, op));
  Tensor expected;
  KFORGE_RETURN_IF_ERROR(meta(&expected));
  if (out->dtype != expected.dtype) return Status::Error(op, ": out is ", out->dtype, ", expected ", expected.dtype);
  return util::require_dims(*out, expected, op);
}

// splitmix64 (as dropout's mask): a counter-based generator, so element i's draw depends only on the seed and i.
uint64_t mix(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

Status full_with_tensor(const KernelContext& ctx, const Tensor& value, const IntArray& shape, DataType dtype,
                        Tensor* out) {
  static constexpr const char* kOp = "full_with_tensor";
  KFORGE_RETURN_IF_ERROR(
      check_against_meta(kOp, out, [&](Tensor* e) { return meta::FullWithTensorInferMeta(shape, dtype, e); }));
  if (value.numel() != 1) return Status::Error(kOp, ": value must have one element, got ", value.dims_string());
  const DataType out_dtype = util::kernel_dtype(ctx, *out);
  if (out_dtype != out->dtype) return Status::Error(kOp, ": out is ", out->dtype, " but the kernel dtype is ", out_dtype);
  return util::visit_plain(value.dtype, kOp, [&](auto in_tag) -> Status {
    using From = typename decltype(in_tag)::type;
    const From v = value.data_as<const From>()[0];
    return util::visit_plain(out_dtype, kOp, [&](auto out_tag) -> Status {
      using T = typename decltype(out_tag)::type;
      const T fill = util::convert<T>(v);
      T* o = out->data_as<T>();
      for (int64_t i = 0, n = out->numel(); i < n; ++i) o[i] = fill;
      return Status::OK();
    });
  });
}

Status uniform(const KernelContext& ctx, const IntArray& shape, DataType dtype, const Scalar& min, const Scalar& max,
               int seed, Tensor* out) {
  static constexpr const char* kOp = "uniform";
  KFORGE_RETURN_IF_ERROR(
      check_against_meta(kOp, out, [&](Tensor* e) { return meta::UniformRandomInferMeta(shape, dtype, e); }));
  const double lo = min.to<double>(), hi = max.to<double>();
  if (!(std::isfinite(lo) && std::isfinite(hi) && lo <= hi)) {
    return Status::Error(kOp, ": min ", lo, " and max ", hi, " must be finite with min <= max");
  }
  const uint64_t key = static_cast<uint64_t>(static_cast<int64_t>(seed));
  return util::visit_float(util::kernel_dtype(ctx, *out), kOp, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    T* o = out->data_as<T>();
    const T top = static_cast<T>(hi), bottom = static_cast<T>(lo);
    for (int64_t i = 0, n = out->numel(); i < n; ++i) {
      // 53 random bits as a double in [0, 1), scaled into [min, max); rounding to T may reach max, which the
      // interval excludes, so such a value steps down to the largest T below it.
      const double u = static_cast<double>(mix(key * 0x100000001B3ull + static_cast<uint64_t>(i)) >> 11) * 0x1.0p-53;
      T v = static_cast<T>(lo + (hi - lo) * u);
      if (v >= top && top > bottom) v = std::nextafter(top, bottom);
      o[i] = v;
    }
    return Status::OK();
  });
}

Status randint(const KernelContext& ctx, int low, int high, const IntArray& shape, DataType dtype, Tensor* out) {
  static constexpr const char* kOp = "randint";
  KFORGE_RETURN_IF_ERROR(
      check_against_meta(kOp, out, [&](Tensor* e) { return meta::RandintInferMeta(low, high, shape, dtype, e); }));
  const uint64_t range = static_cast<uint64_t>(static_cast<int64_t>(high) - low);
  auto fill = [&](auto* o) {
    using T = std::remove_pointer_t<decltype(o)>;
    // Element i: 53 random bits of uniform's draw with seed 0, scaled to the range (below 2^31 values: the
    // scaled double's floor stays below range).
    for (int64_t i = 0, n = out->numel(); i < n; ++i) {
      const double u = static_cast<double>(mix(static_cast<uint64_t>(i)) >> 11) * 0x1.0p-53;
      o[i] = static_cast<T>(low + static_cast<int64_t>(u * static_cast<double>(range)));
    }
  };
  const DataType kernel = util::kernel_dtype(ctx, *out);
  if (kernel == DataType::kInt32) fill(out->data_as<int32_t>());
  else if (kernel == DataType::kInt64) fill(out->data_as<int64_t>());
  else return Status::Error(kOp, ": out must be int32 or int64, got ", kernel);
  return Status::OK();
}

Status arange(const KernelContext& ctx, const Scalar& start, const Scalar& end, const Scalar& step, Tensor* out) {
  static constexpr const char* kOp = "arange";
  KFORGE_RETURN_IF_ERROR(util::require_output(out, kOp));
  const DataType dtype = util::kernel_dtype(ctx, *out);
  KFORGE_RETURN_IF_ERROR(
      check_against_meta(kOp, out, [&](Tensor* e) { return meta::ArangeInferMeta(start, end, step, dtype, e); }));
  return util::visit_number(dtype, kOp, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral<T>::value) {
      // Floating start/step must be integers of T's range before the conversion, which would be undefined.
      for (const Scalar* s : {&start, &step}) {
        const double v = s->to<double>();
        if (s->is_floating() && !(v >= static_cast<double>(std::numeric_limits<T>::lowest()) &&
                                  v < static_cast<double>(std::numeric_limits<T>::max()) + 1.0)) {
          return Status::Error(kOp, ": ", v, " does not fit ", dtype);
        }
      }
    }
    // Paddle accumulates in T (its MPType for 32/64-bit types): value += step, not start + i * step.
    T* o = out->data_as<T>();
    T value = start.to<T>();
    const T delta = step.to<T>();
    for (int64_t i = 0, n = out->numel(); i < n; ++i) {
      o[i] = value;
      if constexpr (std::is_integral<T>::value) {
        using U = typename std::make_unsigned<T>::type;  // wraps past the last element instead of overflowing
        value = static_cast<T>(static_cast<U>(value) + static_cast<U>(delta));
      } else {
        value += delta;
      }
    }
    return Status::OK();
  });
}

Status one_hot(const KernelContext& ctx, const Tensor& x, const Scalar& num_classes, Tensor* out) {
  (void)ctx;
  static constexpr const char* kOp = "one_hot";
  KFORGE_RETURN_IF_ERROR(
      check_against_meta(kOp, out, [&](Tensor* e) { return meta::OneHotInferMeta(x, num_classes, e); }));
  const int64_t depth = out->dims[out->ndim - 1];
  float* o = out->data_as<float>();
  if (out->numel() > 0) std::memset(o, 0, out->bytes());
  auto body = [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* ids = x.data_as<const T>();
    for (int64_t i = 0, n = x.numel(); i < n; ++i) {
      const int64_t id = static_cast<int64_t>(ids[i]);
      if (id < 0 || id >= depth) {
        return Status::Error(kOp, ": x[", i, "] is ", id, ", outside [0, num_classes = ", depth, ")");
      }
      o[i * depth + id] = 1.0f;
    }
    return Status::OK();
  };
  return x.dtype == DataType::kInt32 ? body(Tag<int32_t>{}) : body(Tag<int64_t>{});
}

}  // namespace kforge::kernels
