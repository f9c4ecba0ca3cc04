// Infer-meta of bmm, einsum, group_norm, instance_norm and rms_norm (Paddle's BmmInferMeta, EinsumRawInferMeta,
// GroupNormInferMeta, InstanceNormInferMeta, RmsNormInferMeta), and the einsum equation parser they share with the
// kernel.
#include <algorithm>
#include <string>
#include <vector>

#include "kernel_util.h"
#include "kforge_kernels.h"
#include "movement_util.h"

namespace kforge::kernels::util {

namespace {

bool is_label(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

}  // namespace

Status parse_einsum(const char* op, const std::string& equation, TensorList x, EinsumSpec* spec) {
  std::string eq;
  for (char c : equation) {
    if (c != ' ') eq += c;
  }
  if (eq.find('.') != std::string::npos) {
    return Status::Error(op, ": \"", equation, "\": broadcasting with '...' is not supported");
  }
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  spec->inputs.clear();
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    spec->inputs.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (spec->inputs.size() != x.size) {
    return Status::Error(op, ": \"", equation, "\" names ", spec->inputs.size(), " operands, got ", x.size);
  }
  if (x.size < 1 || x.size > 2) return Status::Error(op, ": one or two operands are supported, got ", x.size);
  std::fill(std::begin(spec->size), std::end(spec->size), -1);
  int count[128] = {};
  for (size_t i = 0; i < x.size; ++i) {
    const std::string& labels = spec->inputs[i];
    const Tensor& t = x[i];
    if (labels.size() != static_cast<size_t>(t.ndim)) {
      return Status::Error(op, ": \"", equation, "\": operand ", i, " has ", labels.size(), " labels but rank ",
                           t.ndim, " (", t.dims_string(), ")");
    }
    for (size_t a = 0; a < labels.size(); ++a) {
      const char c = labels[a];
      if (!is_label(c)) return Status::Error(op, ": \"", equation, "\": '", std::string(1, c), "' is not a label");
      int64_t& size = spec->size[static_cast<unsigned char>(c)];
      const int64_t d = t.dims[a];
      if (size >= 0 && d >= 0 && size != d) {
        return Status::Error(op, ": \"", equation, "\": label '", std::string(1, c), "' has sizes ", size, " and ", d);
      }
      if (size < 0) size = d;
      ++count[static_cast<unsigned char>(c)];
    }
  }
  if (x.size == 2 && x[0].dtype != x[1].dtype) {
    return Status::Error(op, ": operands are ", x[0].dtype, " and ", x[1].dtype, "; they must match");
  }
  if (arrow == std::string::npos) {
    // Implicit output: the labels that appear once, in increasing order (numpy's rule).
    spec->output.clear();
    for (int c = 0; c < 128; ++c) {
      if (count[c] == 1) spec->output += static_cast<char>(c);
    }
    return Status::OK();
  }
  spec->output = eq.substr(arrow + 2);
  bool seen[128] = {};
  for (char c : spec->output) {
    if (!is_label(c) || count[static_cast<unsigned char>(c)] == 0) {
      return Status::Error(op, ": \"", equation, "\": output label '", std::string(1, c), "' is not in the inputs");
    }
    if (seen[static_cast<unsigned char>(c)]) {
      return Status::Error(op, ": \"", equation, "\": output label '", std::string(1, c), "' repeats");
    }
    seen[static_cast<unsigned char>(c)] = true;
  }
  return Status::OK();
}

}  // namespace kforge::kernels::util

namespace kforge::meta {

using kernels::util::normalize_axis;

namespace {

Status set_meta(Tensor* out, DataType dtype, const std::vector<int64_t>& dims, const char* op) {
  if (out == nullptr) return Status::Error(op, ": output is null");
  out->dtype = dtype;
  return out->set_dims(dims);
}

// Statistics of half-precision inputs are float32 (Paddle's rule for the norms), else x's dtype.
DataType stat_dtype(DataType x) {
  return x == DataType::kFloat16 || x == DataType::kBFloat16 ? DataType::kFloat32 : x;
}

// scale / bias of a norm: [channels] when present, of x's dtype.
Status check_affine(const char* op, const Tensor* t, const char* name, int64_t channels, const Tensor& x) {
  if (t == nullptr) return Status::OK();
  if (t->numel() != channels || t->ndim != 1) {
    return Status::Error(op, ": ", name, " ", t->dims_string(), " must be [", channels, "] for x ", x.dims_string());
  }
  return Status::OK();
}

}  // namespace

Status BmmInferMeta(const Tensor& x, const Tensor& y, Tensor* out) {
  static constexpr const char* kOp = "BmmInferMeta";
  if (x.ndim != 3 || y.ndim != 3) {
    return Status::Error(kOp, ": x and y must be 3-D, got ", x.dims_string(), " and ", y.dims_string());
  }
  KFORGE_RETURN_IF_ERROR(kernels::util::require_same_dtype(x, y, kOp, "x", "y"));
  if (x.dims[0] != y.dims[0] || x.dims[2] != y.dims[1]) {
    return Status::Error(kOp, ": x ", x.dims_string(), " and y ", y.dims_string(),
                         " must be [B, M, K] and [B, K, N]");
  }
  return set_meta(out, x.dtype, {x.dims[0], x.dims[1], y.dims[2]}, kOp);
}

Status EinsumRawInferMeta(TensorList x, const std::string& equation, Tensor* out, MutableTensorList inner_cache,
                          MutableTensorList xshape) {
  static constexpr const char* kOp = "EinsumRawInferMeta";
  kernels::util::EinsumSpec spec;
  KFORGE_RETURN_IF_ERROR(kernels::util::parse_einsum(kOp, equation, x, &spec));
  std::vector<int64_t> dims;
  for (char c : spec.output) dims.push_back(spec.size[static_cast<unsigned char>(c)]);
  KFORGE_RETURN_IF_ERROR(set_meta(out, x[0].dtype, dims, kOp));
  // Paddle fills these for the backward pass only: inner_cache stays 0-D, xshape has each operand's dims.
  for (size_t i = 0; i < inner_cache.size; ++i) {
    if (inner_cache.items[i] != nullptr) KFORGE_RETURN_IF_ERROR(set_meta(inner_cache.items[i], x[0].dtype, {}, kOp));
  }
  for (size_t i = 0; i < xshape.size; ++i) {
    Tensor* t = xshape.items[i];
    if (t != nullptr && i < x.size) KFORGE_RETURN_IF_ERROR(set_meta(t, x[i].dtype, x[i].shape(), kOp));
  }
  return Status::OK();
}

Status GroupNormInferMeta(const Tensor& x, const Tensor* scale, const Tensor* bias, float epsilon, int groups,
                          const std::string& data_format, Tensor* y, Tensor* mean, Tensor* variance) {
  static constexpr const char* kOp = "GroupNormInferMeta";
  if (x.ndim < 2 || x.ndim > 5) return Status::Error(kOp, ": x must have rank 2 to 5, got ", x.dims_string());
  if (!(epsilon >= 0.f)) return Status::Error(kOp, ": epsilon must not be negative");
  bool last = false;
  KFORGE_RETURN_IF_ERROR(kernels::util::channel_last(kOp, data_format, &last));
  const int64_t c = x.dims[last ? x.ndim - 1 : 1];
  if (groups <= 0) return Status::Error(kOp, ": groups must be positive, got ", groups);
  if (c >= 0 && (groups > c || c % groups != 0)) {
    return Status::Error(kOp, ": ", c, " channels of x ", x.dims_string(), " do not split into ", groups, " groups");
  }
  KFORGE_RETURN_IF_ERROR(check_affine(kOp, scale, "scale", c, x));
  KFORGE_RETURN_IF_ERROR(check_affine(kOp, bias, "bias", c, x));
  KFORGE_RETURN_IF_ERROR(set_meta(y, x.dtype, x.shape(), kOp));
  for (Tensor* stat : {mean, variance}) {
    if (stat != nullptr) KFORGE_RETURN_IF_ERROR(set_meta(stat, stat_dtype(x.dtype), {x.dims[0], groups}, kOp));
  }
  return Status::OK();
}

Status InstanceNormInferMeta(const Tensor& x, const Tensor* scale, const Tensor* bias, float epsilon, Tensor* y,
                             Tensor* saved_mean, Tensor* saved_variance) {
  static constexpr const char* kOp = "InstanceNormInferMeta";
  if (x.ndim < 2 || x.ndim > 5) return Status::Error(kOp, ": x must have rank 2 to 5, got ", x.dims_string());
  if (!(epsilon >= 0.f)) return Status::Error(kOp, ": epsilon must not be negative");
  const int64_t n = x.dims[0], c = x.dims[1];
  KFORGE_RETURN_IF_ERROR(check_affine(kOp, scale, "scale", c, x));
  KFORGE_RETURN_IF_ERROR(check_affine(kOp, bias, "bias", c, x));
  KFORGE_RETURN_IF_ERROR(set_meta(y, x.dtype, x.shape(), kOp));
  for (Tensor* stat : {saved_mean, saved_variance}) {
    if (stat != nullptr) KFORGE_RETURN_IF_ERROR(set_meta(stat, stat_dtype(x.dtype), {n < 0 ? -1 : n * c}, kOp));
  }
  return Status::OK();
}

Status RmsNormInferMeta(const Tensor& x, const Tensor* bias, const Tensor* residual, const Tensor& norm_weight,
                        const Tensor* norm_bias, float epsilon, int begin_norm_axis, float quant_scale,
                        int quant_round_type, float quant_max_bound, float quant_min_bound, Tensor* out,
                        Tensor* residual_out, Tensor* inv_var) {
  (void)quant_round_type;
  (void)quant_max_bound;
  (void)quant_min_bound;
  static constexpr const char* kOp = "RmsNormInferMeta";
  if (!(epsilon >= 0.f)) return Status::Error(kOp, ": epsilon must not be negative");
  int64_t axis = 0;
  if (!normalize_axis(begin_norm_axis, x.ndim, &axis)) {
    return Status::Error(kOp, ": begin_norm_axis ", begin_norm_axis, " is out of range for x ", x.dims_string());
  }
  const int64_t cols = kernels::util::product(x.dims, axis, x.ndim);
  KFORGE_RETURN_IF_ERROR(check_affine(kOp, &norm_weight, "norm_weight", cols, x));
  KFORGE_RETURN_IF_ERROR(check_affine(kOp, norm_bias, "norm_bias", cols, x));
  KFORGE_RETURN_IF_ERROR(check_affine(kOp, bias, "bias", cols, x));
  if (residual != nullptr && !residual->same_dims(x)) {
    return Status::Error(kOp, ": residual ", residual->dims_string(), " must have the dims of x ", x.dims_string());
  }
  // quant_scale > 0 makes Paddle's output int8; the reference kernel does not quantise (an error there).
  KFORGE_RETURN_IF_ERROR(set_meta(out, quant_scale > 0.f ? DataType::kInt8 : x.dtype, x.shape(), kOp));
  if (residual_out != nullptr) KFORGE_RETURN_IF_ERROR(set_meta(residual_out, x.dtype, x.shape(), kOp));
  if (inv_var != nullptr) {
    KFORGE_RETURN_IF_ERROR(set_meta(inv_var, DataType::kFloat32, std::vector<int64_t>(x.dims, x.dims + axis), kOp));
  }
  return Status::OK();
}

}  // namespace kforge::meta
