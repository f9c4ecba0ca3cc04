// kforge cuDNN convolutions for `kforge compile --target cuda` (header-only; link -lcudnn, cuDNN 9).
//
// A float32 conv2d / depthwise_conv2d (grouped, strided, padded, dilated; NCHW or NHWC data, OIHW filter as
// Paddle stores it, or for NHWC data the KRSC filter [k, r, s, c / groups] that the generated code reorders once
// when the parameters are bound: cuDNN's NHWC tensor-core kernels read that without a reorder of their own) is one
// cudnnConvolutionForward of the legacy cuDNN API, and its fused epilogue (the convolution groups of
// passes/fusion.h: per-channel bias, inference batch norm, activation, residual add) one elementwise kernel over the
// convolution's output, in place (kforge_channel_epilogue.cuh). The batch norm is applied as
// y * (scale / sqrt(var + eps)) + (shift - mean * scale / sqrt(var + eps)), the order of the reference kernel.
// An NHWC depthwise convolution (groups == channels, one filter each) is instead kforge_depthwise.cuh's kernel, with
// the epilogue applied in its registers.
//
// Per generated object one CudnnContext (a handle on the object's stream, the TF32 switch and the workspace
// every convolution shares: kWorkspaceBytes, allocated once by the first run) and one ConvSite per
// convolution: its descriptors are created once and set again only when the batch changes; its algorithm is
// chosen once per (batch, TF32 switch) by cuDNN's heuristics (cudnnGetConvolutionForwardAlgorithm_v7, host only),
// the first of its list, fastest expected first, that fits the workspace (deterministic ones first). Not by
// cudnnFindConvolutionForwardAlgorithmEx: on an H200 with the cuDNN 9 of torch's wheel its benchmark returned only the
// implicit-GEMM algorithms 0 and 1 without tensor cores for every NHWC convolution of resnet50 (the others "not
// supported"), while the heuristics' choices run cuDNN's TF32 tensor-core kernels: resnet50 at batch 1 went
// from 1.25-1.40 ms to 0.59 ms per run (BENCHMARKS.md). run() chooses on first use; with --cuda-graph the
// generated prepare_convs() chooses every site before a capture.
//
// A conv2d_transpose (ConvGeometry::transposed) is cudnnConvolutionBackwardData of the forward convolution that maps
// the output's shape [n, k, out_h, out_w] to the input's [n, c, h, w], with Paddle's filter [c, k / groups, r, s] as
// that convolution's filter; its algorithm is found by a benchmark on the site's own buffers
// (cudnnFindConvolutionBackwardDataAlgorithmEx, which synchronises; y is overwritten, x and w only read).
//
// TF32: set_tf32(true) (the default, as torch's cudnn.allow_tf32) lets cuDNN use TF32 tensor cores for float32
// convolutions (CUDNN_DEFAULT_MATH); false restricts it to FMA kernels (CUDNN_FMA_MATH: float32 throughout).
#pragma once

#include <cudnn.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>

#include "kforge_channel_epilogue.cuh"
#include "kforge_cuda_runtime.h"
#include "kforge_depthwise.cuh"

namespace kforge {
namespace cuda_conv {

inline Status cudnn_error(cudnnStatus_t status, const char* what) {
  return Status::Error(what, ": ", cudnnGetErrorString(status));
}

#define KFORGE_CUDNN_RETURN_IF_ERROR(call)                                                            \
  do {                                                                                                 \
    cudnnStatus_t kforge_cudnn_status_ = (call);                                                       \
    if (kforge_cudnn_status_ != CUDNN_STATUS_SUCCESS) {                                                \
      return ::kforge::cuda_conv::cudnn_error(kforge_cudnn_status_, #call);                            \
    }                                                                                                  \
  } while (0)

// What one convolution is, fixed at generation time; only the batch is given at run time. Dims are those of
// the logical NCHW tensors: input [n, c, h, w], filter [k, c / groups, r, s], output [n, k, out_h, out_w]; for a
// transposed convolution the filter is [c, k / groups, r, s] and pads, strides and dilations are those of the forward
// convolution from the output to the input.
struct ConvGeometry {
  int c, h, w;
  int k, r, s;
  int pad_h, pad_w, stride_h, stride_w, dilation_h, dilation_w, groups;
  int out_h, out_w;
  bool nhwc;
  bool transposed = false;
  bool krsc_filter = false;  // the filter is [k, r, s, c / groups] (cuDNN's NHWC filter format), not OIHW
};

// Whether the convolution runs as kforge_depthwise.cuh's kernel rather than cuDNN: NHWC, one filter per channel.
constexpr bool direct_depthwise(const ConvGeometry& g) {
  return g.nhwc && !g.transposed && g.groups == g.c && g.k == g.c;
}

class CudnnContext {
 public:
  // The workspace every convolution of the object shares; algorithms needing more are not considered.
  static constexpr size_t kWorkspaceBytes = size_t{64} << 20;

  CudnnContext() = default;
  CudnnContext(const CudnnContext&) = delete;
  CudnnContext& operator=(const CudnnContext&) = delete;
  ~CudnnContext() {
    if (handle_ != nullptr) static_cast<void>(cudnnDestroy(handle_));
  }

  // Creates the handle and the workspace on first use; every call points the handle at `stream`.
  Status init(cudaStream_t stream) {
    if (handle_ == nullptr) {
      KFORGE_CUDNN_RETURN_IF_ERROR(cudnnCreate(&handle_));
      KFORGE_RETURN_IF_ERROR(workspace_.reserve(kWorkspaceBytes));
    }
    KFORGE_CUDNN_RETURN_IF_ERROR(cudnnSetStream(handle_, stream));
    stream_ = stream;
    return Status::OK();
  }
  cudnnHandle_t handle() const { return handle_; }
  cudaStream_t stream() const { return stream_; }
  void* workspace() const { return workspace_.data(); }
  bool tf32() const { return tf32_; }
  void set_tf32(bool on) { tf32_ = on; }

 private:
  cudnnHandle_t handle_ = nullptr;
  cudaStream_t stream_ = nullptr;
  DeviceMemory workspace_;
  bool tf32_ = true;
};

class ConvSite {
 public:
  ConvSite() = default;
  ConvSite(const ConvSite&) = delete;
  ConvSite& operator=(const ConvSite&) = delete;
  ~ConvSite() {
    if (x_ != nullptr) static_cast<void>(cudnnDestroyTensorDescriptor(x_));
    if (y_ != nullptr) static_cast<void>(cudnnDestroyTensorDescriptor(y_));
    if (w_ != nullptr) static_cast<void>(cudnnDestroyFilterDescriptor(w_));
    if (conv_ != nullptr) static_cast<void>(cudnnDestroyConvolutionDescriptor(conv_));
  }

  // Chooses the algorithm for batch n and the context's TF32 switch, once (a transposed convolution benchmarks on
  // x, w and y).
  Status prepare(CudnnContext& ctx, const ConvGeometry& g, int n, const float* x, const float* w, float* y) {
    if (direct_depthwise(g)) return Status::OK();  // no cuDNN state
    KFORGE_RETURN_IF_ERROR(describe(g, n, ctx.tf32()));
    const std::pair<int, bool> key(n, ctx.tf32());
    if (choices_.count(key) != 0) return Status::OK();
    return g.transposed ? find_backward_data(ctx, key, x, w, y) : choose_forward(ctx, key);
  }

  // y = epilogue(conv(x, w)) on the context's stream (no epilogue where `epilogue` is null); chooses the algorithm
  // first when prepare() has not.
  Status run(CudnnContext& ctx, const ConvGeometry& g, int n, const float* x, const float* w, float* y,
             const Epilogue* epilogue) {
    if (direct_depthwise(g)) {
      const DepthwiseShape d{n, g.h, g.w, g.c, g.out_h, g.out_w, g.r, g.s, g.stride_h, g.stride_w,
                             g.pad_h, g.pad_w, g.dilation_h, g.dilation_w};
      static const Epilogue kIdentity{nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, 0.0f,
                                      Activation::kNone, 0.0f, 0.0f, false};
      KFORGE_CUDA_RETURN_IF_ERROR(depthwise_nhwc(x, w, y, d, epilogue != nullptr ? *epilogue : kIdentity,
                                                 ctx.stream()));
      return Status::OK();
    }
    KFORGE_RETURN_IF_ERROR(forward(ctx, g, n, x, w, y));
    if (epilogue != nullptr) {
      KFORGE_CUDA_RETURN_IF_ERROR(channel_epilogue(y, y, *epilogue, n, g.k, static_cast<int64_t>(g.out_h) * g.out_w,
                                                   g.nhwc, ctx.stream()));
    }
    return Status::OK();
  }

 private:
  struct Choice {
    int algo;  // cudnnConvolutionFwdAlgo_t, or cudnnConvolutionBwdDataAlgo_t for a transposed convolution
    cudnnMathType_t math;
    size_t workspace;
  };

  // y = conv(x, w) through cuDNN.
  Status forward(CudnnContext& ctx, const ConvGeometry& g, int n, const float* x, const float* w, float* y) {
    auto choice = choices_.find(std::pair<int, bool>(n, ctx.tf32()));
    if (choice == choices_.end()) {
      KFORGE_RETURN_IF_ERROR(prepare(ctx, g, n, x, w, y));
      choice = choices_.find(std::pair<int, bool>(n, ctx.tf32()));
    }
    KFORGE_RETURN_IF_ERROR(describe(g, n, ctx.tf32()));
    KFORGE_CUDNN_RETURN_IF_ERROR(cudnnSetConvolutionMathType(conv_, choice->second.math));
    const float one = 1.0f, zero = 0.0f;
    if (g.transposed) {
      // x is the forward convolution's dy, y its dx.
      KFORGE_CUDNN_RETURN_IF_ERROR(cudnnConvolutionBackwardData(
          ctx.handle(), &one, w_, w, x_, x, conv_, static_cast<cudnnConvolutionBwdDataAlgo_t>(choice->second.algo),
          ctx.workspace(), choice->second.workspace, &zero, y_, y));
      return Status::OK();
    }
    KFORGE_CUDNN_RETURN_IF_ERROR(cudnnConvolutionForward(
        ctx.handle(), &one, x_, x, w_, w, conv_, static_cast<cudnnConvolutionFwdAlgo_t>(choice->second.algo),
        ctx.workspace(), choice->second.workspace, &zero, y_, y));
    return Status::OK();
  }

  // The first usable algorithm of a cuDNN list (fastest first, measured or expected), deterministic if any is: the
  // same inputs then give the same bits on every run. Strict float32 takes only what runs with FMA kernels.
  template <typename Perf>
  Status choose(const CudnnContext& ctx, const std::pair<int, bool>& key, const Perf* perf, int returned) {
    for (const bool deterministic_only : {true, false}) {
      for (int i = 0; i < returned; ++i) {
        if (perf[i].status != CUDNN_STATUS_SUCCESS || perf[i].memory > CudnnContext::kWorkspaceBytes) continue;
        if (deterministic_only && perf[i].determinism != CUDNN_DETERMINISTIC) continue;
        if (!ctx.tf32() && perf[i].mathType != CUDNN_FMA_MATH && perf[i].mathType != CUDNN_DEFAULT_MATH) continue;
        choices_[key] = Choice{static_cast<int>(perf[i].algo), ctx.tf32() ? perf[i].mathType : CUDNN_FMA_MATH,
                               perf[i].memory};
        return Status::OK();
      }
    }
    return Status::Error("cuDNN found no algorithm for the convolution (batch ", key.first, ", ", returned,
                         " candidates, workspace limit ", CudnnContext::kWorkspaceBytes, " bytes)");
  }

  Status choose_forward(CudnnContext& ctx, const std::pair<int, bool>& key) {
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int returned = 0;
    KFORGE_CUDNN_RETURN_IF_ERROR(cudnnGetConvolutionForwardAlgorithm_v7(
        ctx.handle(), x_, w_, conv_, y_, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, perf));
    return choose(ctx, key, perf, returned);
  }

  Status find_backward_data(CudnnContext& ctx, const std::pair<int, bool>& key, const float* x, const float* w,
                            float* y) {
    cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    int returned = 0;
    KFORGE_CUDNN_RETURN_IF_ERROR(cudnnFindConvolutionBackwardDataAlgorithmEx(
        ctx.handle(), w_, w, x_, x, conv_, y_, y, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &returned, perf,
        ctx.workspace(), CudnnContext::kWorkspaceBytes));
    return choose(ctx, key, perf, returned);
  }

  // Creates the descriptors once and sets them for batch n (host calls only: nothing is allocated on the
  // device, so this is safe inside a graph capture). Checks cuDNN's output dims against the generated ones.
  Status describe(const ConvGeometry& g, int n, bool tf32) {
    if (conv_ == nullptr) {
      KFORGE_CUDNN_RETURN_IF_ERROR(cudnnCreateTensorDescriptor(&x_));
      KFORGE_CUDNN_RETURN_IF_ERROR(cudnnCreateTensorDescriptor(&y_));
      KFORGE_CUDNN_RETURN_IF_ERROR(cudnnCreateFilterDescriptor(&w_));
      KFORGE_CUDNN_RETURN_IF_ERROR(cudnnCreateConvolutionDescriptor(&conv_));
      // The forward convolution's filter: [k, c / groups, r, s]; transposed, Paddle's [c, k / groups, r, s].
      const int filter_out = g.transposed ? g.c : g.k, filter_in = g.transposed ? g.k / g.groups : g.c / g.groups;
      KFORGE_CUDNN_RETURN_IF_ERROR(cudnnSetFilter4dDescriptor(
          w_, CUDNN_DATA_FLOAT, g.krsc_filter ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW, filter_out, filter_in, g.r, g.s));
      KFORGE_CUDNN_RETURN_IF_ERROR(cudnnSetConvolution2dDescriptor(conv_, g.pad_h, g.pad_w, g.stride_h, g.stride_w,
                                                                   g.dilation_h, g.dilation_w,
                                                                   CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
      KFORGE_CUDNN_RETURN_IF_ERROR(cudnnSetConvolutionGroupCount(conv_, g.groups));
    }
    if (described_n_ != n || described_tf32_ != tf32) {
      const cudnnTensorFormat_t format = g.nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
      KFORGE_CUDNN_RETURN_IF_ERROR(cudnnSetTensor4dDescriptor(x_, format, CUDNN_DATA_FLOAT, n, g.c, g.h, g.w));
      KFORGE_CUDNN_RETURN_IF_ERROR(cudnnSetTensor4dDescriptor(y_, format, CUDNN_DATA_FLOAT, n, g.k, g.out_h, g.out_w));
      KFORGE_CUDNN_RETURN_IF_ERROR(cudnnSetConvolutionMathType(conv_, tf32 ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH));
      // The forward convolution's output: y's dims, or for a transposed convolution x's (from y).
      int dims[4] = {0, 0, 0, 0};
      KFORGE_CUDNN_RETURN_IF_ERROR(cudnnGetConvolution2dForwardOutputDim(conv_, g.transposed ? y_ : x_, w_, &dims[0],
                                                                         &dims[1], &dims[2], &dims[3]));
      const int want[4] = {n, g.transposed ? g.c : g.k, g.transposed ? g.h : g.out_h, g.transposed ? g.w : g.out_w};
      if (dims[0] != want[0] || dims[1] != want[1] || dims[2] != want[2] || dims[3] != want[3]) {
        return Status::Error("cuDNN computes the convolution's ", g.transposed ? "input" : "output", " as [", dims[0],
                             ", ", dims[1], ", ", dims[2], ", ", dims[3], "], kforge as [", want[0], ", ", want[1],
                             ", ", want[2], ", ", want[3], "]");
      }
      described_n_ = n;
      described_tf32_ = tf32;
    }
    return Status::OK();
  }

  cudnnTensorDescriptor_t x_ = nullptr, y_ = nullptr;
  cudnnFilterDescriptor_t w_ = nullptr;
  cudnnConvolutionDescriptor_t conv_ = nullptr;
  int described_n_ = -1;
  bool described_tf32_ = true;
  std::map<std::pair<int, bool>, Choice> choices_;  // by (batch, TF32)
};

// Rewrites a convolution's filter once the parameters are bound, as the CPU target does (kernels/onednn/conv.cc):
// the group's inference batch norm (and bias) folded in, per output channel o, s = scale[o] / sqrt(var[o] + eps),
// w'[o, :] = w[o, :] * s, bias'[o] = bias[o] * s + (shift[o] - mean[o] * s) (with no batch norm, s = 1 and
// bias' = bias or 0); and the filter reordered from OIHW to KRSC where g.krsc_filter. The epilogue is then bias'
// (plus the residual and activation, if any), and inference runs no batch-norm arithmetic.
__global__ void fold_filter_kernel(const float* w, Epilogue e, int64_t per_k, int64_t taps, bool krsc, int64_t total,
                                   float* w_out, float* bias_out) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t o = i / per_k;
    const float inv_std = e.mean != nullptr ? 1.0f / sqrtf(e.variance[o] + e.epsilon) : 1.0f;
    const float s = e.mean != nullptr ? (e.scale != nullptr ? e.scale[o] : 1.0f) * inv_std : 1.0f;
    // i = ((o * cpg + ci) * r + kr) * s + ks; KRSC puts ci last: (o * taps + tap) * cpg + ci.
    const int64_t in_k = i % per_k, ci = in_k / taps, tap = in_k % taps;
    w_out[krsc ? o * per_k + tap * (per_k / taps) + ci : i] = w[i] * s;
    if (in_k == 0) {
      const float t = e.mean != nullptr ? (e.shift != nullptr ? e.shift[o] : 0.0f) - e.mean[o] * s : 0.0f;
      bias_out[o] = (e.bias != nullptr ? e.bias[o] * s : 0.0f) + t;
    }
  }
}

// w_out = the rewritten filter of geometry g, bias_out = its folded bias [g.k]; cudaGetLastError().
inline cudaError_t fold_filter(const float* w, const Epilogue& e, const ConvGeometry& g, float* w_out,
                               float* bias_out, cudaStream_t stream) {
  const int64_t taps = static_cast<int64_t>(g.r) * g.s;
  const int64_t per_k = static_cast<int64_t>(g.c / g.groups) * taps, total = per_k * g.k;
  if (total == 0) return cudaSuccess;
  const int64_t blocks = (total + 255) / 256;
  fold_filter_kernel<<<static_cast<unsigned>(blocks < 65535 ? blocks : 65535), 256, 0, stream>>>(
      w, e, per_k, taps, g.krsc_filter, total, w_out, bias_out);
  return cudaGetLastError();
}

}  // namespace cuda_conv
}  // namespace kforge
