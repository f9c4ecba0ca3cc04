// kforge's shape rule of nearest_interp, bilinear_interp, linear_interp and bicubic_interp (Paddle's
// InterpolateInferMeta), whose output size may be read from the values of its size tensors (SizeTensor, OutSize,
// Scale). Header-only on the runtime header alone, as kforge_shape_meta.h and for the same two users: the reference
// CPU kernel library's interpolation kernels and their infer-meta (kernels/resize.cc, nn.cc, meta_nn.cc) call it, and
// a --target cuda class whose interpolation reads its size from a tensor's values runs it on the host after copying
// the small tensors back from the device (kforge copies this header beside the outputs then).
#ifndef KFORGE_SHAPE_META_INTERP_H_
#define KFORGE_SHAPE_META_INTERP_H_

#include <cstdint>
#include <string>
#include <vector>

#include "kforge_runtime.h"

namespace kforge::shape_meta {

// Channel-last layouts ("NHWC", "NDHWC", "NLC") versus channel-first ("NCHW", "NCDHW", "NCL", "NC", "AnyLayout").
inline Status channel_last(const char* op, const std::string& data_format, bool* last) {
  if (data_format == "NHWC" || data_format == "NDHWC" || data_format == "NLC") {
    *last = true;
  } else if (data_format == "NCHW" || data_format == "NCDHW" || data_format == "NCL" || data_format == "NC" ||
             data_format == "AnyLayout") {
    *last = false;
  } else if (data_format == "NCHW8c") {  // kernel_util.h's activation_layout, for the kernels that take it
    return Status::Error(op, ": data_format \"NCHW8c\" is not supported");
  } else {
    return Status::Error(op, ": unknown data_format \"", data_format, "\"");
  }
  return Status::OK();
}

// N, C, H, W of a 4-D tensor in either layout.
inline Status nchw(const char* op, const char* name, const Tensor& t, bool last, int64_t* n, int64_t* c,
                   int64_t* h, int64_t* w) {
  if (t.ndim != 4) return Status::Error(op, ": ", name, " must be 4-D, got ", t.dims_string());
  *n = t.dims[0];
  *c = last ? t.dims[3] : t.dims[1];
  *h = last ? t.dims[1] : t.dims[2];
  *w = last ? t.dims[2] : t.dims[3];
  return Status::OK();
}

namespace interp_internal {

// Float values of a small CPU tensor; false when its data is not available.
inline Status read_floats(const char* op, const Tensor& t, std::vector<float>* out, bool* available) {
  *available = t.data != nullptr;
  if (!*available) return Status::OK();
  if (t.place.backend != Backend::kCPU) return Status::Error(op, ": scale_tensor must be on the CPU");
  out->resize(static_cast<size_t>(t.numel()));
  for (size_t i = 0; i < out->size(); ++i) {
    switch (t.dtype) {
      case DataType::kFloat32: (*out)[i] = t.data_as<const float>()[i]; break;
      case DataType::kFloat64: (*out)[i] = static_cast<float>(t.data_as<const double>()[i]); break;
      case DataType::kInt32: (*out)[i] = static_cast<float>(t.data_as<const int32_t>()[i]); break;
      case DataType::kInt64: (*out)[i] = static_cast<float>(t.data_as<const int64_t>()[i]); break;
      default: return Status::Error(op, ": scale_tensor has unsupported dtype ", t.dtype);
    }
  }
  return Status::OK();
}

}  // namespace interp_internal

// The sizes of an interpolation: batch, channels, input and output spatial sizes, the scales its ratios use (-1:
// none).
struct InterpShape {
  bool channel_last = false;
  int64_t n = 0, c = 0, in_h = 0, in_w = 0, out_h = 0, out_w = 0;  // out_h/out_w -1: decided by unread data
  float scale_h = -1.f, scale_w = -1.f;
};

// Paddle's output size: the size tensors' values, else the scales' (attribute or scale_tensor) of the input size,
// else out_size's values or the attributes; -1 when a tensor's values are not there (generation time).
inline Status interp_shape(const char* op, const Tensor& x, const Tensor* out_size, TensorList size_tensor,
                           const Tensor* scale_tensor, const std::string& data_format, int out_h, int out_w,
                           const std::vector<float>& scale, InterpShape* s) {
  KFORGE_RETURN_IF_ERROR(channel_last(op, data_format, &s->channel_last));
  // A 3-D x (linear_interp's [N, C, W] or [N, W, C]) is an image of height 1: one size, one scale.
  const bool one_d = x.ndim == 3;
  const size_t sizes_wanted = one_d ? 1 : 2;
  if (one_d) {
    s->n = x.dims[0];
    s->c = s->channel_last ? x.dims[2] : x.dims[1];
    s->in_h = 1;
    s->in_w = s->channel_last ? x.dims[1] : x.dims[2];
  } else if (x.ndim != 4) {
    return Status::Error(op, ": x must be 4-D (3-D for linear interpolation), got ", x.dims_string());
  } else {
    KFORGE_RETURN_IF_ERROR(nchw(op, "x", x, s->channel_last, &s->n, &s->c, &s->in_h, &s->in_w));
  }
  s->scale_h = s->scale_w = -1.f;
  s->out_h = one_d ? 1 : out_h;
  s->out_w = out_w;
  if (!size_tensor.empty()) {
    if (size_tensor.size != sizes_wanted) {
      return Status::Error(op, ": size_tensor must hold ", sizes_wanted, " tensors, got ", size_tensor.size);
    }
    for (const Tensor* t : size_tensor) {
      if (t->data == nullptr) {
        s->out_h = s->out_w = -1;
        return Status::OK();
      }
    }
    IntArray sizes;
    KFORGE_RETURN_IF_ERROR(int_array_from_tensors(size_tensor, &sizes));
    s->out_h = one_d ? 1 : sizes[0];
    s->out_w = sizes[sizes_wanted - 1];
  } else {
    std::vector<float> scales = scale;
    if (scale_tensor != nullptr) {
      bool available;
      KFORGE_RETURN_IF_ERROR(interp_internal::read_floats(op, *scale_tensor, &scales, &available));
      if (!available) {
        s->out_h = s->out_w = -1;
        return Status::OK();
      }
      if (scales.empty()) return Status::Error(op, ": scale_tensor is empty");
    }
    if (one_d && !scales.empty()) {
      s->scale_w = scales[0];
      if (!(s->scale_w > 0.f)) return Status::Error(op, ": scale must be positive, got ", s->scale_w);
      s->out_w = static_cast<int64_t>(static_cast<float>(s->in_w) * s->scale_w);
    } else if (!scales.empty()) {
      s->scale_h = scales[0];
      s->scale_w = scales.size() > 1 ? scales[1] : scales[0];
      if (!(s->scale_h > 0.f && s->scale_w > 0.f)) {
        return Status::Error(op, ": scale must be positive, got ", s->scale_h, " and ", s->scale_w);
      }
      s->out_h = static_cast<int64_t>(static_cast<float>(s->in_h) * s->scale_h);
      s->out_w = static_cast<int64_t>(static_cast<float>(s->in_w) * s->scale_w);
    }
    if (out_size != nullptr) {
      if (out_size->data == nullptr) {
        s->out_h = s->out_w = -1;
        return Status::OK();
      }
      IntArray sizes;
      KFORGE_RETURN_IF_ERROR(int_array_from_tensor(*out_size, &sizes));
      if (sizes.size() != sizes_wanted) {
        return Status::Error(op, ": out_size must hold ", sizes_wanted, " values, got ", sizes.size());
      }
      s->out_h = one_d ? 1 : sizes[0];
      s->out_w = sizes[sizes_wanted - 1];
    }
  }
  if (s->out_h <= 0 || s->out_w <= 0) {
    return Status::Error(op, ": output size ", s->out_h, " x ", s->out_w, " must be positive");
  }
  return Status::OK();
}

inline Status InterpolateInferMeta(const Tensor& x, const Tensor* out_size, TensorList size_tensor,
                                   const Tensor* scale_tensor, const std::string& data_format, int out_d, int out_h,
                                   int out_w, const std::vector<float>& scale, const std::string& interp_method,
                                   bool align_corners, int align_mode, Tensor* output) {
  (void)out_d;
  (void)interp_method;
  (void)align_corners;
  (void)align_mode;
  static constexpr const char* kOp = "InterpolateInferMeta";
  InterpShape s;
  KFORGE_RETURN_IF_ERROR(
      interp_shape(kOp, x, out_size, size_tensor, scale_tensor, data_format, out_h, out_w, scale, &s));
  if (output == nullptr) return Status::Error(kOp, ": output is null");
  output->dtype = x.dtype;
  if (x.ndim == 3) return output->set_dims(s.channel_last ? std::vector<int64_t>{s.n, s.out_w, s.c}
                                                          : std::vector<int64_t>{s.n, s.c, s.out_w});
  return output->set_dims(s.channel_last ? std::vector<int64_t>{s.n, s.out_h, s.out_w, s.c}
                                         : std::vector<int64_t>{s.n, s.c, s.out_h, s.out_w});
}

}  // namespace kforge::shape_meta

#endif  // KFORGE_SHAPE_META_INTERP_H_
