// group_norm, instance_norm and rms_norm. Statistics are accumulated in double (two passes: mean, then the squared
// deviations), then applied in the tensor's dtype in Paddle's order: (x - mean) * inv_std * scale + bias.
#include <cmath>
#include <initializer_list>
#include <vector>

#include "kernel_util.h"
#include "kforge_kernels.h"

namespace kforge::kernels {

namespace {

// Every non-null output has the dtype and dims `meta` gives it.
template <size_t N, typename Meta>
Status check_outputs(const char* op, Tensor* const (&outs)[N], const char* const (&names)[N], Meta meta) {
  Tensor expected[N];
  Tensor* ptrs[N];
  for (size_t i = 0; i < N; ++i) ptrs[i] = outs[i] != nullptr ? &expected[i] : nullptr;
  KFORGE_RETURN_IF_ERROR(meta(ptrs));
  for (size_t i = 0; i < N; ++i) {
    if (outs[i] == nullptr) {
      if (i == 0) return Status::Error(op, ": output ", names[0], " is null");
      continue;
    }
    KFORGE_RETURN_IF_ERROR(util::require_output(outs[i], op, names[i]));
    if (outs[i]->dtype != expected[i].dtype) {
      return Status::Error(op, ": ", names[i], " is ", outs[i]->dtype, ", expected ", expected[i].dtype);
    }
    KFORGE_RETURN_IF_ERROR(util::require_dims(*outs[i], expected[i], op, names[i]));
  }
  return Status::OK();
}

Status same_dtype(const char* op, DataType dtype, std::initializer_list<const Tensor*> ts) {
  for (const Tensor* t : ts) {
    if (t != nullptr && t->dtype != dtype) {
      return Status::Error(op, ": scale, bias and weights must be ", dtype, ", got ", t->dtype);
    }
  }
  return Status::OK();
}

// Mean and variance (biased) of `count` elements at base + i * stride.
template <typename T>
void moments(const T* base, int64_t count, int64_t stride, double* mean, double* var) {
  double sum = 0.0;
  for (int64_t i = 0; i < count; ++i) sum += static_cast<double>(base[i * stride]);
  const double mu = count > 0 ? sum / static_cast<double>(count) : 0.0;
  double sq = 0.0;
  for (int64_t i = 0; i < count; ++i) {
    const double d = static_cast<double>(base[i * stride]) - mu;
    sq += d * d;
  }
  *mean = mu;
  *var = count > 0 ? sq / static_cast<double>(count) : 0.0;
}

}  // namespace

Status group_norm(const KernelContext& ctx, const Tensor& x, const Tensor* scale, const Tensor* bias, float epsilon,
                  int groups, const std::string& data_format, Tensor* y, Tensor* mean, Tensor* variance) {
  static constexpr const char* kOp = "group_norm";
  KFORGE_RETURN_IF_ERROR(util::require_cpu(ctx, kOp));
  const DataType dtype = util::kernel_dtype(ctx, x);
  if (x.dtype != dtype) return Status::Error(kOp, ": x is ", x.dtype, ", kernel dtype ", dtype);
  KFORGE_RETURN_IF_ERROR(check_outputs(kOp, {y, mean, variance}, {"y", "mean", "variance"}, [&](Tensor** o) {
    return meta::GroupNormInferMeta(x, scale, bias, epsilon, groups, data_format, o[0], o[1], o[2]);
  }));
  KFORGE_RETURN_IF_ERROR(same_dtype(kOp, dtype, {scale, bias}));
  bool last = false;
  KFORGE_RETURN_IF_ERROR(util::channel_last(kOp, data_format, &last));
  const int64_t n = x.dims[0], c = x.dims[last ? x.ndim - 1 : 1];
  const int64_t spatial = n * c == 0 ? 0 : x.numel() / (n * c), per_group = c / groups;
  // Element (b, ch, s) is at b * c * spatial + ch * cs + s * ss.
  const int64_t cs = last ? 1 : spatial, ss = last ? c : 1;
  return util::visit_float(dtype, kOp, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* xd = x.data_as<const T>();
    T* yd = y->data_as<T>();
    for (int64_t b = 0; b < n; ++b) {
      for (int64_t g = 0; g < groups; ++g) {
        // The group's channels times the spatial positions, in either layout.
        double sum = 0.0;
        const int64_t count = per_group * spatial;
        auto at = [&](int64_t ch, int64_t s) { return b * c * spatial + ch * cs + s * ss; };
        for (int64_t ch = g * per_group; ch < (g + 1) * per_group; ++ch)
          for (int64_t s = 0; s < spatial; ++s) sum += static_cast<double>(xd[at(ch, s)]);
        const double mu = count > 0 ? sum / static_cast<double>(count) : 0.0;
        double sq = 0.0;
        for (int64_t ch = g * per_group; ch < (g + 1) * per_group; ++ch) {
          for (int64_t s = 0; s < spatial; ++s) {
            const double d = static_cast<double>(xd[at(ch, s)]) - mu;
            sq += d * d;
          }
        }
        const double var = count > 0 ? sq / static_cast<double>(count) : 0.0;
        const T mean_t = static_cast<T>(mu), inv = static_cast<T>(1.0 / std::sqrt(var + static_cast<double>(epsilon)));
        for (int64_t ch = g * per_group; ch < (g + 1) * per_group; ++ch) {
          for (int64_t s = 0; s < spatial; ++s) {
            T v = (xd[at(ch, s)] - mean_t) * inv;
            if (scale != nullptr) v *= scale->data_as<const T>()[ch];
            if (bias != nullptr) v += bias->data_as<const T>()[ch];
            yd[at(ch, s)] = v;
          }
        }
        if (mean != nullptr) mean->data_as<T>()[b * groups + g] = mean_t;
        if (variance != nullptr) variance->data_as<T>()[b * groups + g] = static_cast<T>(var);
      }
    }
    return Status::OK();
  });
}

Status instance_norm(const KernelContext& ctx, const Tensor& x, const Tensor* scale, const Tensor* bias, float epsilon,
                     Tensor* y, Tensor* saved_mean, Tensor* saved_variance) {
  static constexpr const char* kOp = "instance_norm";
  KFORGE_RETURN_IF_ERROR(util::require_cpu(ctx, kOp));
  const DataType dtype = util::kernel_dtype(ctx, x);
  if (x.dtype != dtype) return Status::Error(kOp, ": x is ", x.dtype, ", kernel dtype ", dtype);
  KFORGE_RETURN_IF_ERROR(
      check_outputs(kOp, {y, saved_mean, saved_variance}, {"y", "saved_mean", "saved_variance"}, [&](Tensor** o) {
        return meta::InstanceNormInferMeta(x, scale, bias, epsilon, o[0], o[1], o[2]);
      }));
  KFORGE_RETURN_IF_ERROR(same_dtype(kOp, dtype, {scale, bias}));
  const int64_t n = x.dims[0], c = x.dims[1];
  const int64_t spatial = n * c == 0 ? 0 : x.numel() / (n * c);
  return util::visit_float(dtype, kOp, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* xd = x.data_as<const T>();
    T* yd = y->data_as<T>();
    for (int64_t p = 0; p < n * c; ++p) {
      const int64_t ch = p % c;
      double mu, var;
      moments(xd + p * spatial, spatial, 1, &mu, &var);
      const T mean_t = static_cast<T>(mu), inv = static_cast<T>(1.0 / std::sqrt(var + static_cast<double>(epsilon)));
      const T sc = scale != nullptr ? scale->data_as<const T>()[ch] : T(1);
      const T bi = bias != nullptr ? bias->data_as<const T>()[ch] : T(0);
      for (int64_t s = 0; s < spatial; ++s) yd[p * spatial + s] = (xd[p * spatial + s] - mean_t) * inv * sc + bi;
      if (saved_mean != nullptr) saved_mean->data_as<T>()[p] = mean_t;
      if (saved_variance != nullptr) saved_variance->data_as<T>()[p] = inv;
    }
    return Status::OK();
  });
}

Status rms_norm(const KernelContext& ctx, const Tensor& x, const Tensor* bias, const Tensor* residual,
                const Tensor& norm_weight, const Tensor* norm_bias, float epsilon, int begin_norm_axis,
                float quant_scale, int quant_round_type, float quant_max_bound, float quant_min_bound, Tensor* out,
                Tensor* residual_out, Tensor* inv_var) {
  static constexpr const char* kOp = "rms_norm";
  KFORGE_RETURN_IF_ERROR(util::require_cpu(ctx, kOp));
  if (quant_scale > 0.f) return Status::Error(kOp, ": int8 quantisation (quant_scale > 0) is not supported");
  const DataType dtype = util::kernel_dtype(ctx, x);
  if (x.dtype != dtype) return Status::Error(kOp, ": x is ", x.dtype, ", kernel dtype ", dtype);
  KFORGE_RETURN_IF_ERROR(
      check_outputs(kOp, {out, residual_out, inv_var}, {"out", "residual_out", "inv_var"}, [&](Tensor** o) {
        return meta::RmsNormInferMeta(x, bias, residual, norm_weight, norm_bias, epsilon, begin_norm_axis, quant_scale,
                                      quant_round_type, quant_max_bound, quant_min_bound, o[0], o[1], o[2]);
      }));
  KFORGE_RETURN_IF_ERROR(same_dtype(kOp, dtype, {bias, residual, &norm_weight, norm_bias}));
  int64_t axis = 0;
  util::normalize_axis(begin_norm_axis, x.ndim, &axis);
  const int64_t rows = util::product(x.dims, 0, axis), cols = util::product(x.dims, axis, x.ndim);
  return util::visit_float(dtype, kOp, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* w = norm_weight.data_as<const T>();
    const T* nb = norm_bias != nullptr ? norm_bias->data_as<const T>() : nullptr;
    // Paddle's kernels add bias only together with residual: h = x + residual + bias, else h = x.
    const T* rb = residual != nullptr && bias != nullptr ? bias->data_as<const T>() : nullptr;
    std::vector<T> h(static_cast<size_t>(cols));
    for (int64_t r = 0; r < rows; ++r) {
      const T* xr = x.data_as<const T>() + r * cols;
      double sq = 0.0;
      for (int64_t j = 0; j < cols; ++j) {
        T v = xr[j];
        if (residual != nullptr) v = v + residual->data_as<const T>()[r * cols + j];
        if (rb != nullptr) v = v + rb[j];
        h[static_cast<size_t>(j)] = v;
        sq += static_cast<double>(v) * static_cast<double>(v);
      }
      const double inv = 1.0 / std::sqrt(sq / static_cast<double>(cols) + static_cast<double>(epsilon));
      const T inv_t = static_cast<T>(inv);
      T* o = out->data_as<T>() + r * cols;
      for (int64_t j = 0; j < cols; ++j) {
        T v = h[static_cast<size_t>(j)] * inv_t * w[j];
        if (nb != nullptr) v += nb[j];
        o[j] = v;
      }
      if (residual_out != nullptr) {
        T* ro = residual_out->data_as<T>() + r * cols;
        for (int64_t j = 0; j < cols; ++j) ro[j] = h[static_cast<size_t>(j)];
      }
      if (inv_var != nullptr) inv_var->data_as<float>()[r] = static_cast<float>(inv);
    }
    return Status::OK();
  });
}

}  // namespace kforge::kernels
