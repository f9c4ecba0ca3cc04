// kforge's asymmetric convolution padding for `kforge compile --target cuda` (header-only; with kforge_cudnn.cuh).
//
// Paddle pads a convolution's input by four amounts, [top, bottom, left, right] (PP-HGNetV2's and RT-DETR's stems:
// 0, 1, 0, 1), where cuDNN's convolution descriptor pads both sides of a dim alike. Such a convolution runs as two
// steps: pad_conv_input copies the input, zeros around it, into the front of the convolution's scratch (the cuDNN
// workspace the memory plan gives it, kforge compile --cudnn-workspace-mib), and ConvSite runs it with no padding on
// that padded input, the rest of the scratch its workspace. The geometry the generated code prints for it
// (ConvGeometry) has pads 0; ConvPadding holds the four. The padded input is the same values at the same places as
// the padding cuDNN would have applied, so the result is that of the convolution with the asymmetric padding, exactly.
// A direct depthwise convolution (kforge_depthwise.cuh) needs none of this: it reads the top and left pads, and its
// bounds checks are the others.
#ifndef KFORGE_CONV_PAD_CUH_
#define KFORGE_CONV_PAD_CUH_

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "kforge_cudnn.cuh"

namespace kforge {
namespace cuda_conv {

// A convolution's padding on each side of its spatial dims (Paddle's order); any may be 0, none negative.
struct ConvPadding {
  int top, bottom, left, right;
};

// The padded input's dims: the input's, each spatial dim grown by its two pads.
inline ConvShape padded_shape(const ConvPadding& p, const ConvShape& shape) {
  return ConvShape{shape.n, shape.h + p.top + p.bottom, shape.w + p.left + p.right, shape.out_h, shape.out_w};
}

// Bytes of the padded input in the front of the scratch, rounded up to 256 (the rest stays aligned for cuDNN).
inline size_t padded_bytes(const ConvGeometry& g, const ConvShape& padded, size_t element) {
  const size_t bytes = static_cast<size_t>(padded.n) * g.c * padded.h * padded.w * element;
  return (bytes + 255) / 256 * 256;
}

// out [n, c, h + top + bottom, w + left + right] (NCHW) or [n, h + ..., w + ..., c] (NHWC) from x [n, c, h, w]
// (or NHWC): x's elements at their padded places, zeros around them. One thread per element of out (grid-stride);
// the elements move as their bits (U: an unsigned integer of the element's width).
template <typename U>
__global__ void pad_conv_input_kernel(const U* __restrict__ x, U* __restrict__ out, int64_t c, int64_t h, int64_t w,
                                      int top, int left, int64_t out_h, int64_t out_w, bool nhwc, int64_t total) {
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t r = e, ch = 0;
    if (nhwc) {
      ch = r % c;
      r /= c;
    }
    const int64_t ow = r % out_w;
    r /= out_w;
    const int64_t oh = r % out_h;
    r /= out_h;
    if (!nhwc) {
      ch = r % c;
      r /= c;
    }
    const int64_t b = r, ih = oh - top, iw = ow - left;
    const bool inside = ih >= 0 && ih < h && iw >= 0 && iw < w;
    const int64_t at = nhwc ? ((b * h + ih) * w + iw) * c + ch : ((b * c + ch) * h + ih) * w + iw;
    out[e] = inside ? x[at] : U(0);
  }
}

// Pads x (geometry g, the unpadded `shape`) into the front of `scratch`: *padded is the padded input there,
// *shape_out its shape, *rest the scratch after it (the convolution's workspace). An error when the scratch is too
// small (the generated code checks this at generation time where the dims are known).
template <typename T>
Status pad_conv_input(const ConvPadding& p, const ConvGeometry& g, const ConvShape& shape, const T* x,
                      const Scratch& scratch, cudaStream_t stream, const T** padded, ConvShape* shape_out,
                      Scratch* rest) {
  static_assert(sizeof(T) == 2 || sizeof(T) == 4, "a convolution's element is 2 or 4 bytes");
  using U = std::conditional_t<sizeof(T) == 2, uint16_t, uint32_t>;
  *shape_out = padded_shape(p, shape);
  const size_t bytes = padded_bytes(g, *shape_out, sizeof(T));
  if (scratch.data == nullptr || scratch.bytes < bytes) {
    return Status::Error("the input padded for an asymmetric padding takes ", bytes, " bytes, and the convolution's ",
                         "scratch has ", scratch.bytes, " (kforge compile --cudnn-workspace-mib)");
  }
  *padded = static_cast<const T*>(scratch.data);
  *rest = Scratch{static_cast<char*>(scratch.data) + bytes, scratch.bytes - bytes};
  const int64_t total = static_cast<int64_t>(shape_out->n) * g.c * shape_out->h * shape_out->w;
  if (total == 0) return Status::OK();
  const int64_t blocks = (total + 255) / 256;
  pad_conv_input_kernel<U><<<static_cast<unsigned>(blocks < 65535 ? blocks : 65535), 256, 0, stream>>>(
      reinterpret_cast<const U*>(x), static_cast<U*>(scratch.data), g.c, shape.h, shape.w, p.top, p.left,
      shape_out->h, shape_out->w, g.nhwc, total);
  KFORGE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  return Status::OK();
}

// ConvSite::prepare for a convolution with padding p (g: its geometry with pads 0): x padded first, so that the
// benchmark of its methods runs on the padded input.
template <typename T>
Status prepare_padded(ConvSite& site, const ConvPadding& p, CudnnContext& ctx, const ConvGeometry& g,
                      const ConvShape& shape, const T* x, const T* w, T* y, const Scratch& scratch,
                      const Epilogue* epilogue) {
  const T* padded = nullptr;
  ConvShape padded_dims{};
  Scratch rest;
  KFORGE_RETURN_IF_ERROR(pad_conv_input(p, g, shape, x, scratch, ctx.stream(), &padded, &padded_dims, &rest));
  return site.prepare(ctx, g, padded_dims, padded, w, y, rest, epilogue);
}

// ConvSite::run for a convolution with padding p (g: its geometry with pads 0): x padded, then the convolution.
template <typename T>
Status run_padded(ConvSite& site, const ConvPadding& p, CudnnContext& ctx, const ConvGeometry& g,
                  const ConvShape& shape, const T* x, const T* w, T* y, const Scratch& scratch,
                  const Epilogue* epilogue) {
  const T* padded = nullptr;
  ConvShape padded_dims{};
  Scratch rest;
  KFORGE_RETURN_IF_ERROR(pad_conv_input(p, g, shape, x, scratch, ctx.stream(), &padded, &padded_dims, &rest));
  return site.run(ctx, g, padded_dims, padded, w, y, rest, epilogue);
}

}  // namespace cuda_conv
}  // namespace kforge

#endif  // KFORGE_CONV_PAD_CUH_
