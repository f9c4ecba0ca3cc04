// Helpers shared by the reference kernels and infer-meta functions: dtype dispatch, axis and shape arithmetic,
// broadcasting, conv/pool geometry. Internal to kernels/ (users read kforge_kernels.h).
#ifndef KFORGE_EXAMPLES_KERNELS_KERNEL_UTIL_H_
#define KFORGE_EXAMPLES_KERNELS_KERNEL_UTIL_H_

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "kforge_runtime.h"
#include "kforge_shape_meta.h"
#include "kforge_shape_meta_interp.h"

// Error paths stay out of the hot code of small kernels.
#if defined(__GNUC__)
#define KFORGE_COLD __attribute__((cold, noinline))
#define KFORGE_NOINLINE __attribute__((noinline))
#else
#define KFORGE_COLD
#define KFORGE_NOINLINE
#endif

namespace kforge::kernels::util {

template <typename T>
struct Tag {
  using type = T;
};

inline Status unsupported_dtype(const char* op, DataType dtype) {
  return Status::Error(op, ": unsupported dtype ", dtype);
}

// `v` converted to To as static_cast does (a float truncated toward zero), without its undefined behaviour: a float
// whose truncation To cannot hold, or NaN, becomes To's lowest (the value x86's conversion produces). The range is
// checked on the truncated value against [lowest, 2^digits): 127.9 -> int8 is 127, 128.0 is out of range.
template <typename To, typename From>
To convert(From v) {
  if constexpr (std::is_floating_point<From>::value && std::is_integral<To>::value && !std::is_same<To, bool>::value) {
    const From t = std::trunc(v);
    const From hi = std::ldexp(From(1), std::numeric_limits<To>::digits);  // exact in any float type
    if (!(t >= static_cast<From>(std::numeric_limits<To>::lowest()) && t < hi)) return std::numeric_limits<To>::lowest();
  }
  return static_cast<To>(v);
}

// Calls f(Tag<T>{}) for the C++ type of `dtype`, among float32 and float64.
template <typename F>
Status visit_float(DataType dtype, const char* op, F&& f) {
  switch (dtype) {
    case DataType::kFloat32: return f(Tag<float>{});
    case DataType::kFloat64: return f(Tag<double>{});
    default: return unsupported_dtype(op, dtype);
  }
}

// float32, float64, int32, int64.
template <typename F>
Status visit_number(DataType dtype, const char* op, F&& f) {
  switch (dtype) {
    case DataType::kFloat32: return f(Tag<float>{});
    case DataType::kFloat64: return f(Tag<double>{});
    case DataType::kInt32: return f(Tag<int32_t>{});
    case DataType::kInt64: return f(Tag<int64_t>{});
    default: return unsupported_dtype(op, dtype);
  }
}

// bool and the integers: bool, int8, uint8, int16, int32, int64 (Paddle's bitwise kernels).
template <typename F>
Status visit_integral(DataType dtype, const char* op, F&& f) {
  switch (dtype) {
    case DataType::kBool: return f(Tag<bool>{});
    case DataType::kInt8: return f(Tag<int8_t>{});
    case DataType::kUInt8: return f(Tag<uint8_t>{});
    case DataType::kInt16: return f(Tag<int16_t>{});
    case DataType::kInt32: return f(Tag<int32_t>{});
    case DataType::kInt64: return f(Tag<int64_t>{});
    default: return unsupported_dtype(op, dtype);
  }
}

// Every dtype with a plain C++ type: visit_integral's, float32, float64.
template <typename F>
Status visit_plain(DataType dtype, const char* op, F&& f) {
  switch (dtype) {
    case DataType::kFloat32: return f(Tag<float>{});
    case DataType::kFloat64: return f(Tag<double>{});
    default: return visit_integral(dtype, op, std::forward<F>(f));
  }
}

// Data-movement kernels only care about the element size: an unsigned integer of that many bytes.
struct Bytes16 {
  uint64_t lo, hi;
};
template <typename F>
Status visit_element_size(DataType dtype, const char* op, F&& f) {
  switch (size_of(dtype)) {
    case 1: return f(Tag<uint8_t>{});
    case 2: return f(Tag<uint16_t>{});
    case 4: return f(Tag<uint32_t>{});
    case 8: return f(Tag<uint64_t>{});
    case 16: return f(Tag<Bytes16>{});
    default: return unsupported_dtype(op, dtype);
  }
}

// The dtype a kernel computes in: the context's when the caller selected one, else the natural tensor's.
inline DataType kernel_dtype(const KernelContext& ctx, const Tensor& natural) {
  return ctx.dtype == DataType::kUndefined ? natural.dtype : ctx.dtype;
}

inline Status require_cpu(const KernelContext& ctx, const char* op) {
  if (ctx.place.backend != Backend::kCPU) return Status::Error(op, ": the reference kernels run on the CPU only");
  return Status::OK();
}

// An output must have storage for its elements (the caller allocates from infer_meta).
inline Status require_output(const Tensor* out, const char* op, const char* name = "out") {
  if (out == nullptr) return Status::Error(op, ": output ", name, " is null");
  if (out->data == nullptr && out->numel() > 0) return Status::Error(op, ": output ", name, " has no data");
  return Status::OK();
}

inline Status require_same_dtype(const Tensor& a, const Tensor& b, const char* op, const char* a_name,
                                 const char* b_name) {
  if (a.dtype != b.dtype) {
    return Status::Error(op, ": ", a_name, " is ", a.dtype, " but ", b_name, " is ", b.dtype);
  }
  return Status::OK();
}

// The output's dims must be what infer_meta computes for the inputs, else writing it would go out of bounds.
inline Status require_dims(const Tensor& out, const Tensor& expected, const char* op, const char* name = "out") {
  if (!out.same_dims(expected)) {
    return Status::Error(op, ": output ", name, " has dims ", out.dims_string(), ", expected ",
                         expected.dims_string());
  }
  return Status::OK();
}

// Axis normalisation, its error and "[2, 3]": the runtime's shape rules' (kforge_shape_meta.h), which the CUDA
// target runs on the host too.
using shape_meta::bad_axis;
using shape_meta::dims_string;
using shape_meta::normalize_axis;

inline int64_t product(const int64_t* dims, int64_t begin, int64_t end) {
  int64_t n = 1;
  for (int64_t i = begin; i < end; ++i) n *= dims[i];
  return n;
}

// Right-aligned numpy broadcasting of two shapes (Paddle's ElementwiseInferMeta with axis = -1). A dim of -1
// (unknown) broadcasts with anything but a mismatch.
// The reduction chunks of a matmul (issue 34 item 5, docs/model-zoo.md "RT-DETR"): a dot product longer than
// kGemmChunkFromK is summed in chunks of kGemmChunkK products, each in an accumulator of its own, the chunks' sums
// added to the output in order. One float32 accumulator over the whole K (oneDNN's matmul and inner product, as
// kforge called them) lies 1.4x (K = 256) to 2.5x (K = 4096) farther from a float64 run on average than Paddle's
// CPU matmul, whose MKL sgemm (here: no FMA) sums blocks of 112 products, bit for bit up to K = 224; chunks of 64
// end at 0.8x - 0.9x of Paddle's distance. The chunks depend on K only: every path (oneDNN, the loops) and every
// thread count cuts alike. Up to 112 products Paddle sums in one accumulator too.
constexpr int64_t kGemmChunkFromK = 112;
constexpr int64_t kGemmChunkK = 64;
struct GemmChunks {
  int64_t count = 1;  // chunks: every one of `size` products but the last, of `last`
  int64_t size = 0, last = 0;
  int64_t begin(int64_t c) const { return c * size; }
  int64_t length(int64_t c) const { return c == count - 1 ? last : size; }
};
inline GemmChunks gemm_chunks(int64_t k) {
  if (k <= kGemmChunkFromK) return {1, k, k};
  const int64_t count = (k + kGemmChunkK - 1) / kGemmChunkK;
  return {count, kGemmChunkK, k - (count - 1) * kGemmChunkK};
}

inline Status broadcast_dims(const Tensor& x, const Tensor& y, const char* op, std::vector<int64_t>* out) {
  int32_t rank = x.ndim > y.ndim ? x.ndim : y.ndim;
  out->assign(static_cast<size_t>(rank), 1);
  for (int32_t i = 0; i < rank; ++i) {
    int32_t xi = i - (rank - x.ndim), yi = i - (rank - y.ndim);
    int64_t a = xi >= 0 ? x.dims[xi] : 1, b = yi >= 0 ? y.dims[yi] : 1;
    int64_t d;
    if (a == b) {
      d = a;
    } else if (a == 1) {
      d = b;
    } else if (b == 1) {
      d = a;
    } else if (a == -1 || b == -1) {
      d = a == -1 ? b : a;
    } else {
      return Status::Error(op, ": shapes ", x.dims_string(), " and ", y.dims_string(), " cannot be broadcast");
    }
    (*out)[static_cast<size_t>(i)] = d;
  }
  return Status::OK();
}

// Strides (in elements) of `t` seen through the broadcast shape of rank `rank`: 0 along broadcast dims.
inline void broadcast_strides(const Tensor& t, int32_t rank, int64_t* strides) {
  int64_t stride = 1;
  for (int32_t i = rank - 1; i >= 0; --i) {
    int32_t ti = i - (rank - t.ndim);
    if (ti < 0) {
      strides[i] = 0;
      continue;
    }
    strides[i] = t.dims[ti] == 1 ? 0 : stride;
    stride *= t.dims[ti];
  }
}

// Walks a row-major index over `dims`, keeping up to three strided offsets in step; the innermost loop is left to
// the caller. Used by broadcasting, transpose, expand and strided slicing.
struct NdCounter {
  int32_t rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t index[kMaxRank] = {};

  // Advances every offset by one step along the outer dims (all but the last); false when done.
  template <int N>
  bool next(int64_t (&offsets)[N], const int64_t (*strides)[kMaxRank]) {
    for (int32_t d = rank - 2; d >= 0; --d) {
      if (++index[d] < dims[d]) {
        for (int k = 0; k < N; ++k) offsets[k] += strides[k][d];
        return true;
      }
      for (int k = 0; k < N; ++k) offsets[k] -= strides[k][d] * (dims[d] - 1);
      index[d] = 0;
    }
    return false;
  }
};

// Contiguous (row-major) strides of a shape.
inline void contiguous_strides(const int64_t* dims, int32_t rank, int64_t* strides) {
  int64_t s = 1;
  for (int32_t i = rank - 1; i >= 0; --i) {
    strides[i] = s;
    s *= dims[i];
  }
}

// Paddle's reduce shape rule: `axis` empty (or naming every dim) reduces all; negative axes count from the back;
// reduced dims become 1 with keepdim and disappear without it (reducing all without keepdim gives a 0-D tensor).
inline Status reduce_dims(const Tensor& x, const IntArray& axis, bool keepdim, const char* op, bool* reduced,
                          std::vector<int64_t>* out_dims) {
  for (int32_t i = 0; i < x.ndim; ++i) reduced[i] = axis.empty();
  for (int64_t a : axis) {
    int64_t d;
    if (x.ndim == 0 && (a == 0 || a == -1)) continue;  // a 0-D tensor reduces over its only element
    if (!normalize_axis(a, x.ndim, &d)) return bad_axis(op, a, x.ndim);
    reduced[d] = true;
  }
  out_dims->clear();
  for (int32_t i = 0; i < x.ndim; ++i) {
    if (!reduced[i]) {
      out_dims->push_back(x.dims[i]);
    } else if (keepdim) {
      out_dims->push_back(1);
    }
  }
  return Status::OK();
}

// The elements a slice takes along each input axis: start, step (may be negative) and count. Axes not sliced
// take everything. Computed once by the infer-meta rules (meta_manip.cc) and again by the kernels.
struct SliceRanges {
  int64_t start[kMaxRank];
  int64_t step[kMaxRank];
  int64_t count[kMaxRank];
};
Status slice_ranges(const Tensor& x, const std::vector<int64_t>& axes, const IntArray& starts, const IntArray& ends,
                    const char* op, SliceRanges* ranges);
Status strided_slice_ranges(const Tensor& x, const std::vector<int>& axes, const IntArray& starts,
                            const IntArray& ends, const IntArray& strides, const char* op, SliceRanges* ranges);

// A permutation with negative entries normalised; error when it is not a permutation of [0, rank).
Status normalize_perm(const std::vector<int>& perm, int32_t rank, const char* op, int32_t* out);

// ------------------------------------------------------------------------------------------------------------
// Conv and pool geometry (Paddle's UpdatePaddingAndDilation and ConvOutSize)
// ------------------------------------------------------------------------------------------------------------

struct Geometry2D {
  int64_t pad_top = 0, pad_bottom = 0, pad_left = 0, pad_right = 0;
  int64_t stride_h = 1, stride_w = 1;
  int64_t dilation_h = 1, dilation_w = 1;
};

// Expands `paddings` (2 values: one per spatial dim, or 4: top, bottom, left, right) and applies padding_algorithm
// ("EXPLICIT", "SAME", "VALID"). SAME pads so that out = ceil(in / stride) and resets the dilation to 1.
inline Status conv_geometry(const char* op, const std::vector<int>& strides, const std::vector<int>& paddings,
                            const std::vector<int>& dilations, const std::string& padding_algorithm, int64_t in_h,
                            int64_t in_w, int64_t k_h, int64_t k_w, Geometry2D* g) {
  if (strides.size() != 2) return Status::Error(op, ": strides must have 2 values, got ", strides.size());
  if (dilations.size() != 2) return Status::Error(op, ": dilations must have 2 values, got ", dilations.size());
  g->stride_h = strides[0];
  g->stride_w = strides[1];
  g->dilation_h = dilations[0];
  g->dilation_w = dilations[1];
  if (g->stride_h <= 0 || g->stride_w <= 0) return Status::Error(op, ": strides must be positive");
  if (g->dilation_h <= 0 || g->dilation_w <= 0) return Status::Error(op, ": dilations must be positive");
  if (paddings.size() == 2) {
    g->pad_top = g->pad_bottom = paddings[0];
    g->pad_left = g->pad_right = paddings[1];
  } else if (paddings.size() == 4) {
    g->pad_top = paddings[0];
    g->pad_bottom = paddings[1];
    g->pad_left = paddings[2];
    g->pad_right = paddings[3];
  } else {
    return Status::Error(op, ": paddings must have 2 or 4 values, got ", paddings.size());
  }
  if (padding_algorithm == "SAME") {
    auto same = [](int64_t in, int64_t stride, int64_t k, int64_t* p0, int64_t* p1) {
      int64_t out = (in + stride - 1) / stride;
      int64_t sum = (out - 1) * stride + k - in;
      if (sum < 0) sum = 0;
      *p0 = sum / 2;
      *p1 = sum - *p0;
    };
    same(in_h, g->stride_h, k_h, &g->pad_top, &g->pad_bottom);
    same(in_w, g->stride_w, k_w, &g->pad_left, &g->pad_right);
    g->dilation_h = g->dilation_w = 1;
  } else if (padding_algorithm == "VALID") {
    g->pad_top = g->pad_bottom = g->pad_left = g->pad_right = 0;
  } else if (padding_algorithm != "EXPLICIT") {
    return Status::Error(op, ": padding_algorithm must be EXPLICIT, SAME or VALID, got \"", padding_algorithm, "\"");
  }
  if (g->pad_top < 0 || g->pad_bottom < 0 || g->pad_left < 0 || g->pad_right < 0) {
    return Status::Error(op, ": paddings must not be negative");
  }
  return Status::OK();
}

inline int64_t conv_out_size(int64_t in, int64_t k, int64_t dilation, int64_t pad0, int64_t pad1, int64_t stride) {
  return (in + pad0 + pad1 - (dilation * (k - 1) + 1)) / stride + 1;
}

// Channel-last layouts versus channel-first (kforge_shape_meta_interp.h, which the CUDA host runs too).
using shape_meta::channel_last;

// "NCHW8c", oneDNN's nChw8c: a logical NCHW activation whose channels come in blocks of kChannelBlock, stored 5-D
// [N, C/8, H, W, 8] with element (n, c, h, w) at (((n * C/8 + c/8) * H + h) * W + w) * 8 + c % 8, so that
// consecutive oneDNN convolutions exchange it without reorders. conv2d, depthwise_conv2d, conv2d_fused, pool2d
// and batch_norm take it (activation_layout); everything else rejects it through channel_last above. A
// convolution's input may also be a 4-D NCHW tensor (ConvShape::plain_input): a network's stem, whose 3 channels
// make no block, writes nChw8c directly, as oneDNN's AVX2 kernels do for such a first layer.
constexpr int64_t kChannelBlock = 8;

// channel_last, plus whether the layout is NCHW8c (then *last is false).
inline Status activation_layout(const char* op, const std::string& data_format, bool* last, bool* nchw8c) {
  *nchw8c = data_format == "NCHW8c";
  if (*nchw8c) {
    *last = false;
    return Status::OK();
  }
  return channel_last(op, data_format, last);
}

// An NCHW8c tensor is 5-D with a last dim of kChannelBlock.
inline Status check_nchw8c(const char* op, const char* name, const Tensor& t) {
  if (t.ndim != 5 || t.dims[4] != kChannelBlock) {
    return Status::Error(op, ": ", name, " must be 5-D [N, C/8, H, W, 8] for data_format \"NCHW8c\", got ",
                         t.dims_string());
  }
  return Status::OK();
}

// The dims of an N x C x H x W activation in its layout.
inline std::vector<int64_t> activation_dims(bool last, bool nchw8c, int64_t n, int64_t c, int64_t h, int64_t w) {
  if (nchw8c) return {n, c / kChannelBlock, h, w, kChannelBlock};
  return last ? std::vector<int64_t>{n, h, w, c} : std::vector<int64_t>{n, c, h, w};
}

// The channels of an activation x (rank 2 to 5 for NCHW and NHWC, checked 5-D for NCHW8c).
inline int64_t channel_count(const Tensor& x, bool last, bool nchw8c) {
  if (nchw8c) return x.dims[1] * kChannelBlock;
  return x.dims[last ? x.ndim - 1 : 1];
}

// Element strides of an activation's N, H, W axes, and where channel ch starts within an image: channels come in
// blocks of `block` (kChannelBlock for NCHW8c, else 1) that lie `c` elements apart, side by side within a block.
struct Strides4 {
  int64_t n, c, h, w, block;
  int64_t channel(int64_t ch) const { return (ch / block) * c + ch % block; }
};
inline Strides4 strides4(bool last, bool nchw8c, int64_t c, int64_t h, int64_t w) {
  if (nchw8c) return {c * h * w, h * w * kChannelBlock, w * kChannelBlock, kChannelBlock, kChannelBlock};
  return last ? Strides4{h * w * c, 1, w * c, c, 1} : Strides4{c * h * w, h * w, w, 1, 1};
}

// The channel of element i of an activation with c channels of `plane` pixels each.
inline int64_t channel_of(bool last, bool nchw8c, int64_t i, int64_t c, int64_t plane) {
  if (last) return i % c;
  const int64_t block = nchw8c ? kChannelBlock : 1;
  return (i / (block * plane)) % (c / block) * block + i % block;
}

// The full geometry of one conv2d / conv2d_transpose / pool2d / nearest_interp call, as the infer-meta rules
// compute it (meta_nn.cc); the kernels recompute it from their arguments.
struct ConvShape {
  bool channel_last = false;
  bool nchw8c = false;       // "NCHW8c" (channel_last false): the output, and the input unless plain_input
  bool plain_input = false;  // NCHW8c of conv2d with a 4-D NCHW input: a stem (3 channels) writing nChw8c
  int64_t n = 0, in_c = 0, in_h = 0, in_w = 0;
  int64_t out_c = 0, out_h = 0, out_w = 0;
  int64_t k_h = 0, k_w = 0, groups = 1;
  Geometry2D g;
};
Status conv_shape(const char* op, const Tensor& input, const Tensor& filter, const std::vector<int>& strides,
                  const std::vector<int>& paddings, const std::string& padding_algorithm,
                  const std::vector<int>& dilations, int groups, const std::string& data_format, ConvShape* s);
Status conv_transpose_shape(const char* op, const Tensor& x, const Tensor& filter, const std::vector<int>& strides,
                            const std::vector<int>& paddings, const std::vector<int>& output_padding,
                            const IntArray& output_size, const std::string& padding_algorithm, int groups,
                            const std::vector<int>& dilations, const std::string& data_format, ConvShape* s);

struct PoolShape {
  bool channel_last = false;
  bool nchw8c = false;  // "NCHW8c" (channel_last false)
  bool is_max = true;
  bool adaptive = false;
  int64_t n = 0, c = 0, in_h = 0, in_w = 0, out_h = 0, out_w = 0, k_h = 0, k_w = 0;
  Geometry2D g;
};
Status pool_shape(const char* op, const Tensor& x, const IntArray& kernel_size, const std::vector<int>& strides,
                  const std::vector<int>& paddings, bool ceil_mode, const std::string& data_format,
                  const std::string& pooling_type, bool global_pooling, bool adaptive,
                  const std::string& padding_algorithm, PoolShape* s);

using InterpShape = shape_meta::InterpShape;  // kforge_shape_meta_interp.h, shared with --target cuda's host
using shape_meta::interp_shape;

// Temporary memory for a kernel: from ctx.scratch when it has room (given back on destruction), else the heap.
template <typename T>
class Scratch {
  static_assert(std::is_trivially_copyable<T>::value, "scratch holds plain values");

 public:
  Scratch(const KernelContext& ctx, size_t count) {
    if (ctx.scratch != nullptr) {
      mark_ = ctx.scratch->mark();
      data_ = ctx.scratch->allocate_array<T>(count);
      if (data_ != nullptr) workspace_ = ctx.scratch;
    }
    if (data_ == nullptr) {
      heap_.resize(count);
      data_ = heap_.data();
    }
  }
  ~Scratch() {
    if (workspace_ != nullptr) workspace_->release(mark_);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;

  T* data() { return data_; }
  T& operator[](size_t i) { return data_[i]; }

 private:
  Workspace* workspace_ = nullptr;
  size_t mark_ = 0;
  T* data_ = nullptr;
  std::vector<T> heap_;
};

// Copies `bytes` from src to dst unless they are the same memory (in-place and view outputs).
inline void copy_bytes(void* dst, const void* src, size_t bytes) {
  if (dst != src && bytes > 0) std::memcpy(dst, src, bytes);
}

// Whether v is NaN; false for integers (max / min keep a NaN and fmax / fmin drop one, as Paddle's kernels do).
template <typename T>
bool is_nan(T v) {
  if constexpr (std::is_floating_point<T>::value) {
    return std::isnan(v);
  } else {
    static_cast<void>(v);
    return false;
  }
}

}  // namespace kforge::kernels::util

#endif  // KFORGE_EXAMPLES_KERNELS_KERNEL_UTIL_H_
