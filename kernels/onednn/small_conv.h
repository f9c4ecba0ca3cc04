// Convolutions with few output channels, NHWC (NCHW through NHWC copies), computed directly instead of by oneDNN
// (internal to kernels/; built with oneDNN only). oneDNN 2.6's jit kernels pad the channels to blocks of 16: a 16 -> 4
// 3 x 3 convolution does 4x the useful multiply-adds, a 4 -> 1 transposed convolution 16x to 64x (the PP-OCR-style
// detection head's last layers, BENCHMARKS.md, issue 36). These loops run the useful ones only, with AVX2 and FMA
// (where the CPU has them; else oneDNN runs as before), in an order fixed by the shapes: the same bits for any thread
// count and on every CPU that runs them; not oneDNN's bits (another summation order).
#ifndef KFORGE_KERNELS_ONEDNN_SMALL_CONV_H_
#define KFORGE_KERNELS_ONEDNN_SMALL_CONV_H_

#include "kernel_util.h"
#include "kforge_runtime.h"
#include "onednn/onednn.h"

namespace kforge::kernels::onednn {

// Whether small_conv2d takes this convolution: float32 NHWC or NCHW (not NCHW8c), ungrouped, undilated, at most 4
// output channels, at most 256 products per output (longer reductions keep issue 34's chunked sums on oneDNN), no
// residual sharing out's memory, and a CPU with AVX2 and FMA.
bool small_conv2d_fits(const Tensor& input, const util::ConvShape& s, const ConvEpilogue& e, const Tensor& out);

// conv2d / conv2d_fused as conv_fused.cc's reference path defines the epilogue: each output element's sum over (kh, kw,
// input channel) in 8 interleaved partial sums, added up in a fixed tree; then bias, batch norm (unfolded), activation
// and residual in conv_fused.cc's order and formulas.
Status small_conv2d(const Tensor& input, const Tensor& filter, const util::ConvShape& s, const ConvEpilogue& e,
                    Tensor* out);

// Whether small_conv2d_transpose takes this transposed convolution: float32 NHWC or NCHW, ungrouped, stride equal to
// the kernel (each output pixel gets one input pixel), no padding, no output padding, undilated, at most 4 output and
// 16 input channels, and AVX2 and FMA.
bool small_conv2d_transpose_fits(const Tensor& x, const util::ConvShape& s);

// conv2d_transpose so: each output element the FMA chain over the input channels in order.
Status small_conv2d_transpose(const Tensor& x, const Tensor& filter, const util::ConvShape& s, Tensor* out);

}  // namespace kforge::kernels::onednn

#endif  // KFORGE_KERNELS_ONEDNN_SMALL_CONV_H_
