// kforge cuDNN convolutions for `kforge compile --target cuda` (header-only; link -lcudnn, cuDNN 9).
//
// A float32 or 16-bit (below) conv2d / depthwise_conv2d (grouped, strided, padded, dilated; NCHW or NHWC data, OIHW
// filter as Paddle stores it, or for NHWC data the KRSC filter [k, r, s, c / groups] that the generated code reorders
// once when the parameters are bound: cuDNN's NHWC tensor-core kernels read that without a reorder of their own) is one
// cudnnConvolutionForward of the legacy cuDNN API and its fused epilogue (the convolution groups of
// passes/fusion.h: per-channel bias, inference batch norm, activation, residual add) one elementwise kernel over the
// convolution's output, in place (kforge_channel_epilogue.cuh); or, where the epilogue is a bias, a residual and
// ReLU (or no activation), one cudnnConvolutionBiasActivationForward. The batch norm is applied as
// y * (scale / sqrt(var + eps)) + (shift - mean * scale / sqrt(var + eps)), the order of the reference kernel.
// An NHWC depthwise convolution (groups == channels, one filter each) is instead kforge_depthwise.cuh's kernel, with
// the epilogue applied in its registers.
//
// Per generated object one CudnnContext (a handle on the object's stream, the TF32 switch and the event timer of the
// benchmarks) and one ConvSite per convolution, whose cuDNN workspace (Scratch) is a buffer of the object's memory
// plan: its descriptors are created once and set again only when the shape changes; its
// method (cuDNN algorithm, fused or not) is chosen once per (batch, H, W, TF32 switch) by kforge's multi-kernel
// dispatcher, which times the algorithms cuDNN's heuristics allow and keeps the pick on disk (ConvSite below).
// The heuristics' list alone is not the choice: it is cuDNN's expectation, not a measurement. Nor is
// cudnnFindConvolutionForwardAlgorithmEx's: on an H200 with the cuDNN 9 of torch's wheel its benchmark returned only
// the implicit-GEMM algorithms 0 and 1 without tensor cores for every NHWC convolution of resnet50, while the
// heuristics list the TF32 tensor-core engines (resnet50 at batch 1: 1.25-1.40 ms per run with Find's pick, 0.59 ms
// with the heuristics' first; BENCHMARKS.md). run() chooses on first use; with --cuda-graph the generated
// prepare_convs() chooses every site before a capture.
//
// A conv2d_transpose (ConvGeometry::transposed) is cudnnConvolutionBackwardData of the forward convolution that maps
// the output's shape [n, k, out_h, out_w] to the input's [n, c, h, w], with Paddle's filter [c, k / groups, r, s] as
// that convolution's filter.
//
// TF32: set_tf32(true) (the default, as torch's cudnn.allow_tf32) lets cuDNN use TF32 tensor cores for float32
// convolutions (CUDNN_DEFAULT_MATH; never a conversion of the data to float16, as torch); false restricts it to FMA
// kernels (CUDNN_FMA_MATH: float32 throughout). Either way the algorithms sum the products directly: no FFT or
// Winograd algorithm is considered.
//
// Strict float32 (TF32 off) is also summed as precisely as the CPU target's: cuDNN's FMA kernels add all c x r x s
// products of an output into one float32 accumulator, 2-5x as far from the float64 result as a blocked sum (3 x 3
// convolutions over 256 / 512 channels: 8.5e-7 / 1.2e-6 rms against 2.3e-7 for the same layers summed in blocks,
// tools/paddle_zoo/conv_precision_cudnn.py on an H200), which is what Paddle's CPU kernels and kforge's CPU target
// do. So an ungrouped float32 convolution with more than kChunkProducts products per output runs, with TF32 off, as
// a grouped one: G groups, one per chunk of its input channels (chunk_channels), each computing every output channel
// over its chunk (the filter regrouped into [G * k, chunk, r, s] per run, regroup_filter), into G partial sums per
// output in the scratch; a kernel then adds them in chunk order into y (sum_chunks) and the epilogue kernel follows
// (ConvSite::execute). One cuDNN call, not one per chunk: as G calls of a 16-channel chunk each (chunk 256 / 512
// products apart), resnet18's strict float32 graph took 3.4x its time on an H200. Where the scratch cannot hold the
// filter and the partial sums besides the workspace, or cuDNN lists nothing for the grouped convolution, it runs
// whole.
//
// 16-bit (kforge compile --precision float16 | bfloat16: ConvGeometry::data): the activations, the filter and the
// residual are __half or __nv_bfloat16 (CUDNN_DATA_HALF / CUDNN_DATA_BFLOAT16 descriptors), the convolution
// accumulates in float32 (its compute type stays CUDNN_DATA_FLOAT, alpha and beta are float) and may use tensor cores
// whatever the TF32 switch says (any math type but CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION; still no FFT or Winograd).
// The epilogue is the epilogue kernel's (never cuDNN's fused call): in float32 on cuDNN's 16-bit output, rounded
// again when stored (the direct depthwise kernel applies it to its float32 sums and rounds once). Its bias and batch
// norm are float32: fold_filter folds a 16-bit filter's bias and batch norm into a 16-bit filter and a float32 bias.
#ifndef KFORGE_CUDNN_CUH_
#define KFORGE_CUDNN_CUH_

#include <cudnn.h>
#include <cuda_runtime.h>

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "kforge_channel_epilogue.cuh"
#include "kforge_cuda_runtime.h"
#include "kforge_cuda_timer.cuh"
#include "kforge_cudnn_graph.cuh"
#include "kforge_depthwise.cuh"
#include "kforge_half.cuh"

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

// The element type of a convolution's activations, filter and residual (ConvGeometry::data); its epilogue's
// per-channel vectors (bias, batch norm) are float32 whatever it is.
enum class ElementType { kFloat32, kFloat16, kBFloat16 };

// ElementTag<T>::type names T where a parameter must not take part in deducing it (fold_filter's bias, which may be
// nullptr).
template <typename T>
struct ElementTag {
  using type = T;
};

// The ElementType of the C++ element type T: float, __half or __nv_bfloat16.
template <typename T>
constexpr ElementType element_type_of() {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>,
                "a convolution's element type is float, __half or __nv_bfloat16");
  return std::is_same_v<T, __half> ? ElementType::kFloat16
         : std::is_same_v<T, __nv_bfloat16> ? ElementType::kBFloat16
                                            : ElementType::kFloat32;
}

inline cudnnDataType_t cudnn_data_type(ElementType type) {
  return type == ElementType::kFloat16    ? CUDNN_DATA_HALF
         : type == ElementType::kBFloat16 ? CUDNN_DATA_BFLOAT16
                                          : CUDNN_DATA_FLOAT;
}

// The element type in the dispatcher's site names.
inline const char* element_type_name(ElementType type) {
  return type == ElementType::kFloat16 ? "f16" : type == ElementType::kBFloat16 ? "bf16" : "f32";
}

// What one convolution is, fixed at generation time: the channels, the filter and the window. Dims are those of
// the logical NCHW tensors: input [n, c, h, w], filter [k, c / groups, r, s], output [n, k, out_h, out_w]; for a
// transposed convolution the filter is [c, k / groups, r, s] and pads, strides and dilations are those of the forward
// convolution from the output to the input.
struct ConvGeometry {
  int c, k, r, s;
  int pad_h, pad_w, stride_h, stride_w, dilation_h, dilation_w, groups;
  bool nhwc;
  bool transposed = false;
  bool krsc_filter = false;  // the filter is [k, r, s, c / groups] (cuDNN's NHWC filter format), not OIHW
  // A direct depthwise convolution's filter rewritten at bind (fold_filter) as [r, s, k]: kforge_depthwise.cuh reads
  // a tap's four channels as one vector load.
  bool tap_major_filter = false;
  // > 0: a direct depthwise convolution clamps its input at this: the relu6 of the convolution that produced it,
  // which ran a cuDNN-fused ReLU and left the clamp at 6 to this one (one pass over the tensor fewer).
  float input_max = 0.0f;
  // The element type of x, w, y and the epilogue's residual (the void pointers of ConvSite and ConvCall).
  ElementType data = ElementType::kFloat32;
};

// What one call's tensors are: the batch and the spatial dims, which the generated code passes as literals where
// they are known at generation time and computes from the input's dims where they are not (a PP-OCR detector
// exported with dynamic H and W).
struct ConvShape {
  int n, h, w, out_h, out_w;
};

// Whether the convolution runs as kforge_depthwise.cuh's kernel rather than cuDNN: NHWC, one filter per channel.
constexpr bool direct_depthwise(const ConvGeometry& g) {
  return g.nhwc && !g.transposed && g.groups == g.c && g.k == g.c;
}

// The TF32 switch as it applies to g: only float32 convolutions heed it (a 16-bit one runs the same either way, and
// is chosen for, and keyed by, false).
inline bool tf32_applies(bool tf32, const ConvGeometry& g) { return tf32 && g.data == ElementType::kFloat32; }

// Strict float32's longest reduction per cuDNN call (above): 16 channels of a 3 x 3 filter, 256 of a 1 x 1.
constexpr int kChunkProducts = 256;

// The input channels per cuDNN call of a strict float32 convolution (TF32 off): the largest divisor of c within
// kChunkProducts products, a multiple of 8 where one is (x's slices then start 32-byte aligned in NHWC); 0 where the
// convolution runs whole (16-bit, transposed, grouped, depthwise, or its reduction short enough already).
constexpr int chunk_channels(const ConvGeometry& g) {
  if (g.data != ElementType::kFloat32 || g.transposed || g.groups != 1 || direct_depthwise(g)) return 0;
  const int taps = g.r * g.s;
  if (g.c * taps <= kChunkProducts) return 0;
  int best = 0, best_aligned = 0;
  for (int d = 1; d < g.c; ++d) {
    if (g.c % d != 0 || d * taps > kChunkProducts) continue;
    best = d;
    if (d % 8 == 0) best_aligned = d;
  }
  return best_aligned > 0 ? best_aligned : best;
}

// wg = the filter w [k, c, r, s] (OIHW) or [k, r, s, c] (KRSC) regrouped for chunks of `chunk` input channels:
// [groups * k, chunk, r, s] or [groups * k, r, s, chunk], group g's k filters those of channels [g * chunk, ...).
// (A template, as every kernel of a header several translation units may include.)
template <typename F>
__global__ void regroup_filter_kernel(const F* w, F* wg, int64_t k, int64_t c, int64_t chunk, int64_t taps,
                                      bool krsc, int64_t total) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t per_filter = chunk * taps, group_filter = i / per_filter, in = i % per_filter;
    const int64_t g = group_filter / k, o = group_filter % k;
    // KRSC: in = tap * chunk + j; OIHW: in = j * taps + tap, the chunk's run of c * taps.
    const int64_t from = krsc ? (o * taps + in / chunk) * c + g * chunk + in % chunk : o * c * taps + g * per_filter + in;
    wg[i] = w[from];
  }
}

// y[b, o, p] = the sum over g of partial[b, g * k + o, p] in g's order (NCHW; NHWC: y[b, p, o], partial[b, p,
// g * k + o]), for `total` = batch * k * plane outputs: the grouped convolution's chunk sums added as the chunks
// come.
template <typename F>
__global__ void sum_chunks_kernel(const F* partial, F* y, int64_t k, int64_t groups, int64_t plane, bool nhwc,
                                  int64_t total) {
  for (int64_t e = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t first, step;
    if (nhwc) {
      first = (e / k) * groups * k + e % k;
      step = k;
    } else {
      first = (e / (k * plane)) * groups * k * plane + e % (k * plane);
      step = k * plane;
    }
    F sum = partial[first];
    for (int64_t g = 1; g < groups; ++g) sum += partial[first + g * step];
    y[e] = sum;
  }
}

inline unsigned grid_for(int64_t total) {
  const int64_t blocks = (total + 255) / 256;
  return static_cast<unsigned>(blocks < 65535 ? blocks : 65535);
}

// What the benchmark of a convolution's methods times (ConvSite): GPU execution alone, what a CUDA graph replays (a
// spin kernel of CudnnContext::kBenchmarkLeadUs runs before each timed call, so that the GPU never waits for the
// host), or the host's cuDNN call and the GPU's work together, what a run() that calls cuDNN every time pays.
enum class BenchmarkTiming { kGpu, kHostAndGpu };

// A convolution's cuDNN workspace: a buffer of the generated object's memory plan, live while the convolution runs
// (kforge compile --cudnn-workspace-mib sets its size). Algorithms needing more are not considered; the size is part
// of each method's cache entry. {nullptr, 0}: none (only algorithms that need no workspace).
struct Scratch {
  void* data = nullptr;
  size_t bytes = 0;
};

class CudnnContext {
 public:
  // BenchmarkTiming::kGpu's lead (kforge_cuda_timer.cuh says why it is longer than the GEMM sites').
  static constexpr double kBenchmarkLeadUs = cuda_timing::kCudnnCallLeadUs;

  explicit CudnnContext(BenchmarkTiming timing) : timing_(timing) {}
  CudnnContext(const CudnnContext&) = delete;
  CudnnContext& operator=(const CudnnContext&) = delete;
  ~CudnnContext() {
    graph_plans_.clear();  // made on the handle
    if (handle_ != nullptr) static_cast<void>(cudnnDestroy(handle_));
  }

  // Creates the handle on first use; every call points the handle at `stream`.
  Status init(cudaStream_t stream) {
    if (handle_ == nullptr) KFORGE_CUDNN_RETURN_IF_ERROR(cudnnCreate(&handle_));
    KFORGE_CUDNN_RETURN_IF_ERROR(cudnnSetStream(handle_, stream));
    stream_ = stream;
    if (timer_ == nullptr) {
      timer_ = std::make_shared<cuda_timing::CudaEventTimer>(stream,
                                                             timing_ == BenchmarkTiming::kGpu ? kBenchmarkLeadUs : 0.0);
    }
    timer_->set_stream(stream);
    return Status::OK();
  }
  cudnnHandle_t handle() const { return handle_; }
  cudaStream_t stream() const { return stream_; }
  bool tf32() const { return tf32_; }
  void set_tf32(bool on) { tf32_ = on; }
  // Times the convolutions' methods on the context's stream (made by init()).
  const std::shared_ptr<cuda_timing::CudaEventTimer>& timer() const { return timer_; }
  BenchmarkTiming timing() const { return timing_; }
  // The graph API's plans of the 16-bit convolutions with their epilogue, shared by the object's sites: resnet50
  // has 16 convolutions with a residual but 4 shapes of them, each plan compiled by cuDNN at run time.
  GraphConvPlans& graph_plans() { return graph_plans_; }

 private:
  cudnnHandle_t handle_ = nullptr;
  cudaStream_t stream_ = nullptr;
  bool tf32_ = true;
  std::shared_ptr<cuda_timing::CudaEventTimer> timer_;
  BenchmarkTiming timing_;
  GraphConvPlans graph_plans_;
};

// The ways one convolution can run, numbered: for a forward convolution, method m < kForwardAlgorithms is cuDNN
// forward algorithm m followed by the epilogue kernel, and m >= kForwardAlgorithms algorithm m - kForwardAlgorithms
// as cuDNN's fused convolution + bias (+ residual) + ReLU (cudnnConvolutionBiasActivationForward: one kernel where
// cuDNN has a fused engine); for a transposed convolution, method m is backward-data algorithm m, then the epilogue.
constexpr int kForwardAlgorithms = CUDNN_CONVOLUTION_FWD_ALGO_COUNT;
constexpr int kBackwardDataAlgorithms = CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT;

// Methods from 2 * kForwardAlgorithms on are the cuDNN graph plans of a 16-bit convolution with its epilogue
// (kforge_cudnn_graph.cuh): method 2 * kForwardAlgorithms + i is plan i of the shape's list.
constexpr int kFirstGraphMethod = 2 * kForwardAlgorithms;

// The method's name in the dispatcher's logs and cache entries (KFORGE_MULTI_KERNEL_FORCE takes these).
inline const char* method_name(bool transposed, int method) {
  static const char* const kGraph[kMaxGraphPlans] = {"graph_0", "graph_1", "graph_2", "graph_3"};
  static_assert(kMaxGraphPlans == 4, "a name for each graph plan");
  if (!transposed && method >= kFirstGraphMethod) return kGraph[method - kFirstGraphMethod];
  static const char* const kForward[2 * kForwardAlgorithms] = {
      "implicit_gemm",       "implicit_precomp_gemm",       "gemm",       "direct",
      "fft",                 "fft_tiling",                  "winograd",   "winograd_nonfused",
      "fused_implicit_gemm", "fused_implicit_precomp_gemm", "fused_gemm", "fused_direct",
      "fused_fft",           "fused_fft_tiling",            "fused_winograd", "fused_winograd_nonfused"};
  static const char* const kBackward[kBackwardDataAlgorithms] = {"bwd_data_0",   "bwd_data_1",       "bwd_data_fft",
                                                                 "bwd_data_fft_tiling", "bwd_data_winograd",
                                                                 "bwd_data_winograd_nonfused"};
  return transposed ? kBackward[method] : kForward[method];
}

// Whether cuDNN's fused call computes the epilogue: y = act(conv(x) + z + bias) with act ReLU or the identity,
// a bias (the folded one: no batch norm left to apply) and the residual z, if any, added before the activation.
// Not relu6: cuDNN 9.19 (H200) refused CLIPPED_RELU there for every algorithm of mobilenet_v2's convolutions. Not
// 16-bit: the epilogue kernel computes a 16-bit convolution's epilogue (in float32, its bias float32).
inline bool cudnn_can_fuse(const ConvGeometry& g, const Epilogue* e) {
  if (e == nullptr || g.transposed || direct_depthwise(g) || g.data != ElementType::kFloat32 || e->bias == nullptr ||
      e->mean != nullptr) {
    return false;
  }
  if (e->activation == Activation::kNone) return true;
  return e->activation == Activation::kRelu && (e->residual == nullptr || e->activation_after_residual);
}

// Whether cuDNN's fused call lets a NaN through its ReLU: Paddle's relu maps NaN to 0 (x > 0 ? x : 0), as the epilogue
// kernel does, and a model whose activations overflow (a convolution over infinities sums to NaN) then gives 0 where
// such a method gives NaN for the rest of the network. cuDNN 9.19 on an H200 (tests/gpu/conv_fused_check.cu): the
// precomputed implicit GEMM does, in NCHW and NHWC; the implicit GEMM and the GEMM do not. GraphNet's PP-HGNet_base
// (batch 128, drawn weights whose activations pass through infinities) was wrong on the GPU through it. Strict
// float32 (TF32 off: Paddle's results as closely as float32 allows) does not offer those methods for a ReLU; with
// TF32 on, which is approximate anyway, they stay: resnet50's fastest method for 25 or 26 of its 27 sites, and
// leaving it out for TF32 too made resnet50 / resnet18 (224², --cuda-graph, batch 1 and 10) 1.19x-1.22x slower on
// an H200 (bench/cuda_models/ab_trees.sh, BENCHMARKS.md). So with TF32 on, a convolution + ReLU over non-finite
// data may give NaN where Paddle gives 0 (Paddle fixture conv2d_relu_nan; docs/compile.md, TF32).
constexpr bool cudnn_relu_keeps_nan(int algo) { return algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM; }

// Whether the cuDNN graph API may run the convolution with its epilogue inside (kforge_cudnn_graph.cuh): a 16-bit
// ungrouped forward convolution whose epilogue is the folded bias, a residual (before or after the activation) and
// ReLU, relu6 or no activation. Float32 keeps the legacy methods: strict float32 sums in chunks (above), and its fused
// call already takes a float32 bias.
inline bool graph_can_fuse(const ConvGeometry& g, const Epilogue* e) {
  if (e == nullptr || g.transposed || direct_depthwise(g) || g.data == ElementType::kFloat32 || g.groups != 1 ||
      e->bias == nullptr || e->mean != nullptr) {
    return false;
  }
  return e->activation == Activation::kNone || e->activation == Activation::kRelu ||
         e->activation == Activation::kRelu6;
}

// The graph API's description of such a convolution at one shape.
inline GraphConvDesc graph_conv_desc(const ConvGeometry& g, const ConvShape& shape, const Epilogue& e) {
  return GraphConvDesc{shape.n,
                       g.c,
                       shape.h,
                       shape.w,
                       g.k,
                       g.r,
                       g.s,
                       shape.out_h,
                       shape.out_w,
                       g.pad_h,
                       g.pad_w,
                       g.stride_h,
                       g.stride_w,
                       g.dilation_h,
                       g.dilation_w,
                       g.nhwc,
                       g.krsc_filter,
                       cudnn_data_type(g.data),
                       e.residual != nullptr,
                       e.activation != Activation::kNone,
                       e.activation_after_residual,
                       e.activation == Activation::kRelu6 ? 6.0f : 0.0f};
}

// One convolution call's operands, as the dispatcher's variants take them: x, w and y of g->data's element type.
struct ConvCall {
  CudnnContext* ctx;
  const ConvGeometry* g;
  ConvShape shape;
  const void* x;
  const void* w;
  void* y;
  Scratch scratch;
  const Epilogue* epilogue;  // null: none
  // The epilogue kernel in place over y (conv_epilogue_in_place<T>): ConvSite::prepare and run know T, the
  // dispatcher's variants do not.
  cudaError_t (*epilogue_in_place)(const ConvCall& c);
};

// y = epilogue(y) for a convolution of element type T (the methods that leave the epilogue to a kernel).
template <typename T>
cudaError_t conv_epilogue_in_place(const ConvCall& c) {
  return channel_epilogue(static_cast<const T*>(c.y), static_cast<T*>(c.y), *c.epilogue, c.shape.n, c.g->k,
                          static_cast<int64_t>(c.shape.out_h) * c.shape.out_w, c.g->nhwc, c.ctx->stream());
}

// OK when a convolution of g's element type is given tensors of T.
template <typename T>
Status check_element_type(const ConvGeometry& g) {
  if (g.data == element_type_of<T>()) return Status::OK();
  return Status::Error("a ", element_type_name(g.data), " convolution given ", element_type_name(element_type_of<T>()),
                       " tensors");
}

// One convolution of a generated object. Its method is chosen once per (batch, H, W, TF32 switch: tf32_applies) by
// kforge's multi-kernel dispatcher (kforge_multikernel.h): cuDNN's heuristics (cudnnGetConvolutionForwardAlgorithm_v7,
// or the backward-data one) say which algorithms can run it within its workspace (deterministic ones only, where
// there are any), and every such algorithm, alone and fused, is timed on the call's own buffers (GPU time alone, or
// host and GPU time: the context's BenchmarkTiming); the fastest is remembered in memory and on disk
// (KFORGE_CACHE_DIR, ~/.cache/kforge: the entry is keyed by the geometry and its element type, the epilogue, the
// timing, cuDNN's version and the device, the shape by (batch, H, W, TF32)), so a second process benchmarks nothing.
// Where no benchmark may run (the stream is being captured into a CUDA graph, or KFORGE_MULTI_KERNEL_BENCHMARK=0 and
// no cache entry) the method is cuDNN's expectation: the first algorithm of its heuristics' list, unfused.
class ConvSite {
 public:
  ConvSite() = default;
  ConvSite(const ConvSite&) = delete;
  ConvSite& operator=(const ConvSite&) = delete;
  ~ConvSite() {
    if (x_ != nullptr) static_cast<void>(cudnnDestroyTensorDescriptor(x_));
    if (y_ != nullptr) static_cast<void>(cudnnDestroyTensorDescriptor(y_));
    if (bias_ != nullptr) static_cast<void>(cudnnDestroyTensorDescriptor(bias_));
    if (w_ != nullptr) static_cast<void>(cudnnDestroyFilterDescriptor(w_));
    if (conv_ != nullptr) static_cast<void>(cudnnDestroyConvolutionDescriptor(conv_));
    if (activation_ != nullptr) static_cast<void>(cudnnDestroyActivationDescriptor(activation_));
  }

  // Chooses the method for the call's shape and the context's TF32 switch, once; the benchmark runs the
  // convolution on x, w and y (y is overwritten, x and w only read) and synchronises the stream. x, w and y (and the
  // epilogue's residual) are of g.data's element type, T.
  template <typename T>
  Status prepare(CudnnContext& ctx, const ConvGeometry& g, const ConvShape& shape, const T* x, const T* w, T* y,
                 const Scratch& scratch, const Epilogue* epilogue) {
    KFORGE_RETURN_IF_ERROR(check_element_type<T>(g));
    if (direct_depthwise(g)) return Status::OK();  // no cuDNN state
    const bool tf32 = tf32_applies(ctx.tf32(), g);
    const Key key = key_of(shape, tf32);
    if (chunk_by_key_.count(key) == 0) {  // in chunks where strict float32 and the scratch holds their data
      const int chunk = tf32 ? 0 : chunk_channels(g);
      chunk_by_key_[key] = chunk > 0 && scratch.bytes > chunks_bytes(g, shape, chunk) ? chunk : 0;
    }
    KFORGE_RETURN_IF_ERROR(describe(g, shape, tf32));
    if (chosen_.count(key) != 0) return Status::OK();
    Status listed = list_algorithms(ctx, g, key, workspace(g, shape, tf32, scratch).bytes);
    if (!listed.ok() && chunk_of(key) > 0) {  // cuDNN runs nothing on the chunks: the convolution whole
      chunk_by_key_[key] = 0;
      KFORGE_RETURN_IF_ERROR(describe(g, shape, tf32));
      listed = list_algorithms(ctx, g, key, workspace(g, shape, tf32, scratch).bytes);
    }
    KFORGE_RETURN_IF_ERROR(listed);
    if (dispatcher_ == nullptr) KFORGE_RETURN_IF_ERROR(make_dispatcher(ctx, g, epilogue, algorithms_[key], scratch.bytes));
    int method = algorithms_[key].first;
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    KFORGE_CUDA_RETURN_IF_ERROR(cudaStreamIsCapturing(ctx.stream(), &capture));
    if (capture == cudaStreamCaptureStatusNone) {
      const ConvCall call{&ctx, &g, shape, x, w, y, scratch, epilogue, &conv_epilogue_in_place<T>};
      ctx.timer()->set_stream(ctx.stream());
      method = variant_methods_[dispatcher_->select(shape_key(key), [&](const Variant& v) {
        if (!v.fn(call).ok()) ctx.timer()->mark_failed();
      })];
      // A graph plan picked from the disk cache: its list built now, outside any capture (cuDNN's expectation where
      // this cuDNN lists fewer plans than the one that made the entry).
      if (method >= kFirstGraphMethod &&
          ctx.graph_plans().ensure(ctx.handle(), graph_conv_desc(g, shape, *epilogue),
                                   workspace(g, shape, tf32, scratch).bytes, method - kFirstGraphMethod) == nullptr) {
        method = algorithms_[key].first;
      }
    }
    chosen_[key] = method;
    return Status::OK();
  }

  // y = epilogue(conv(x, w)) on the context's stream (no epilogue where `epilogue` is null) through cuDNN;
  // chooses the method first when prepare() has not. x, w and y (and the epilogue's residual) are of g.data's element
  // type, T. A direct depthwise convolution runs through run_direct_depthwise instead.
  //
  // T is a template parameter, not a switch over g.data at run time, and the direct depthwise kernel has a method of
  // its own, so that a translation unit compiles kernels only for the element types and the kinds of convolution
  // it has: the depthwise kernel's 16 variants per element type and the epilogue kernel's 4 were three quarters of
  // the device code of every program with a convolution, and most of its nvcc time.
  template <typename T>
  Status run(CudnnContext& ctx, const ConvGeometry& g, const ConvShape& shape, const T* x, const T* w, T* y,
             const Scratch& scratch, const Epilogue* epilogue) {
    KFORGE_RETURN_IF_ERROR(check_element_type<T>(g));
    if (direct_depthwise(g)) return Status::Error("a direct depthwise convolution runs through run_direct_depthwise");
    const Key key = key_of(shape, tf32_applies(ctx.tf32(), g));
    auto chosen = chosen_.find(key);
    if (chosen == chosen_.end()) {
      KFORGE_RETURN_IF_ERROR(prepare(ctx, g, shape, x, w, y, scratch, epilogue));
      chosen = chosen_.find(key);
    }
    return execute(ConvCall{&ctx, &g, shape, x, w, y, scratch, epilogue, &conv_epilogue_in_place<T>}, chosen->second);
  }

  // y = epilogue(depthwise_conv(x, w)) on the context's stream, for a direct_depthwise(g) convolution:
  // kforge_depthwise.cuh's kernel, the epilogue in it (no cuDNN state; the scratch is not used). As run().
  template <typename T>
  Status run_direct_depthwise(CudnnContext& ctx, const ConvGeometry& g, const ConvShape& shape, const T* x,
                              const T* w, T* y, const Scratch& /*scratch*/, const Epilogue* epilogue) {
    KFORGE_RETURN_IF_ERROR(check_element_type<T>(g));
    if (!direct_depthwise(g)) return Status::Error("run_direct_depthwise on a convolution that cuDNN runs");
    const DepthwiseShape d{shape.n,    shape.h,    shape.w,    g.c,        shape.out_h,       shape.out_w,
                           g.r,        g.s,        g.stride_h, g.stride_w, g.pad_h,           g.pad_w,
                           g.dilation_h, g.dilation_w, g.tap_major_filter, g.input_max};
    static const Epilogue kIdentity{nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, 0.0f,
                                    Activation::kNone, 0.0f, 0.0f, false};
    const Epilogue& e = epilogue != nullptr ? *epilogue : kIdentity;
    KFORGE_CUDA_RETURN_IF_ERROR(depthwise_nhwc(x, w, y, d, e, ctx.stream()));
    return Status::OK();
  }

 private:
  using Dispatcher = mk::MultiKernel<Status(const ConvCall&)>;
  using Variant = Dispatcher::Variant;
  // What a method is chosen for: the batch, the input's spatial dims (the output's follow) and the TF32 switch
  // (tf32_applies).
  using Key = std::array<int, 4>;
  static Key key_of(const ConvShape& shape, bool tf32) { return Key{shape.n, shape.h, shape.w, tf32 ? 1 : 0}; }
  static mk::ShapeKey shape_key(const Key& key) { return mk::ShapeKey{key[0], key[1], key[2], key[3]}; }
  static Key key_of(const mk::ShapeKey& key) {
    return Key{static_cast<int>(key.dims[0]), static_cast<int>(key.dims[1]), static_cast<int>(key.dims[2]),
               static_cast<int>(key.dims[3])};
  }

  // The input channels per cuDNN call for a key (0: the convolution whole; chunk_channels), set by prepare().
  int chunk_of(const Key& key) const {
    auto found = chunk_by_key_.find(key);
    return found != chunk_by_key_.end() ? found->second : 0;
  }
  static size_t aligned(size_t bytes) { return (bytes + 255) / 256 * 256; }
  // The regrouped filter's bytes in the front of the scratch (float32: chunks are strict float32 only).
  static size_t regrouped_filter_bytes(const ConvGeometry& g) {
    return aligned(static_cast<size_t>(g.k) * g.c * g.r * g.s * sizeof(float));
  }
  // The partial sums after it: [n, groups * k, out_h, out_w].
  static size_t partial_bytes(const ConvGeometry& g, const ConvShape& shape, int chunk) {
    return aligned(static_cast<size_t>(shape.n) * (g.c / chunk) * g.k * shape.out_h * shape.out_w * sizeof(float));
  }
  static size_t chunks_bytes(const ConvGeometry& g, const ConvShape& shape, int chunk) {
    return regrouped_filter_bytes(g) + partial_bytes(g, shape, chunk);
  }
  // cuDNN's workspace: the scratch, after the regrouped filter and the partial sums where the convolution runs in
  // chunks.
  Scratch workspace(const ConvGeometry& g, const ConvShape& shape, bool tf32, const Scratch& scratch) const {
    const int chunk = chunk_of(key_of(shape, tf32));
    if (chunk == 0) return scratch;
    const size_t used = chunks_bytes(g, shape, chunk);
    return Scratch{static_cast<char*>(scratch.data) + used, scratch.bytes - used};
  }

  // What cuDNN's heuristics say of one algorithm for one (batch, TF32) key.
  struct Candidate {
    bool usable = false;  // listed as supported, within the workspace, deterministic where any is
    cudnnMathType_t math = CUDNN_DEFAULT_MATH;
    size_t workspace = 0;
    int order = 0;        // its place in the heuristics' list: 0 is the one cuDNN expects to be fastest
  };
  struct Algorithms {
    Candidate by_algo[kForwardAlgorithms];  // indexed by algorithm (backward data uses the first 6)
    int first = -1;                         // the usable algorithm cuDNN expects to be fastest
  };

  // Runs method m: cuDNN, then the epilogue kernel in place unless the method fuses it.
  Status execute(const ConvCall& c, int m) {
    const ConvGeometry& g = *c.g;
    if (!g.transposed && m >= kFirstGraphMethod) {  // the convolution and its epilogue as one cuDNN graph plan
      // The plan is finalized at its first run: the benchmark's untimed warm-up, or prepare() for a cached pick.
      const Epilogue& e = *c.epilogue;
      const Scratch work = workspace(g, c.shape, tf32_applies(c.ctx->tf32(), g), c.scratch);
      return c.ctx->graph_plans().execute(c.ctx->handle(), graph_conv_desc(g, c.shape, e), work.bytes,
                                          m - kFirstGraphMethod,
                                          GraphConvOperands{c.x, c.w, e.bias, e.residual, c.y, work.data});
    }
    const int algos = g.transposed ? kBackwardDataAlgorithms : kForwardAlgorithms;
    const int algo = m % algos;
    const bool fused = m >= algos;
    const bool tf32 = tf32_applies(c.ctx->tf32(), g);
    auto listed = algorithms_.find(key_of(c.shape, tf32));
    if (listed == algorithms_.end() || !listed->second.by_algo[algo].usable) {
      return Status::Error("cuDNN cannot run the convolution with ", method_name(g.transposed, m), " (batch ",
                           c.shape.n, ", ", c.shape.h, " x ", c.shape.w, ")");
    }
    const Candidate& a = listed->second.by_algo[algo];
    KFORGE_RETURN_IF_ERROR(describe(g, c.shape, tf32));
    KFORGE_CUDNN_RETURN_IF_ERROR(cudnnSetConvolutionMathType(conv_, a.math));
    const float one = 1.0f, zero = 0.0f;
    if (const int chunk = chunk_of(key_of(c.shape, tf32)); chunk > 0) {
      // Strict float32 in chunks of input channels: the grouped convolution into the partial sums, then their sum.
      const Scratch work = workspace(g, c.shape, tf32, c.scratch);
      float* regrouped = static_cast<float*>(c.scratch.data);
      float* partial = reinterpret_cast<float*>(static_cast<char*>(c.scratch.data) + regrouped_filter_bytes(g));
      const int64_t taps = static_cast<int64_t>(g.r) * g.s, filter = static_cast<int64_t>(g.k) * g.c * taps;
      regroup_filter_kernel<float><<<grid_for(filter), 256, 0, c.ctx->stream()>>>(static_cast<const float*>(c.w), regrouped,
                                                                           g.k, g.c, chunk, taps, g.krsc_filter,
                                                                           filter);
      KFORGE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
      KFORGE_CUDNN_RETURN_IF_ERROR(cudnnConvolutionForward(
          c.ctx->handle(), &one, x_, c.x, w_, regrouped, conv_, static_cast<cudnnConvolutionFwdAlgo_t>(algo),
          work.data, a.workspace, &zero, y_, partial));
      const int64_t plane = static_cast<int64_t>(c.shape.out_h) * c.shape.out_w;
      const int64_t outputs = static_cast<int64_t>(c.shape.n) * g.k * plane;
      sum_chunks_kernel<float><<<grid_for(outputs), 256, 0, c.ctx->stream()>>>(partial, static_cast<float*>(c.y), g.k,
                                                                        g.c / chunk, plane, g.nhwc, outputs);
      KFORGE_CUDA_RETURN_IF_ERROR(cudaGetLastError());
    } else if (g.transposed) {
      // x is the forward convolution's dy, y its dx.
      KFORGE_CUDNN_RETURN_IF_ERROR(cudnnConvolutionBackwardData(
          c.ctx->handle(), &one, w_, c.w, x_, c.x, conv_, static_cast<cudnnConvolutionBwdDataAlgo_t>(algo),
          c.scratch.data, a.workspace, &zero, y_, c.y));
    } else if (fused) {
      const Epilogue& e = *c.epilogue;
      const float alpha2 = e.residual != nullptr ? 1.0f : 0.0f;
      KFORGE_CUDNN_RETURN_IF_ERROR(cudnnConvolutionBiasActivationForward(
          c.ctx->handle(), &one, x_, c.x, w_, c.w, conv_, static_cast<cudnnConvolutionFwdAlgo_t>(algo),
          c.scratch.data, a.workspace, &alpha2, y_, e.residual != nullptr ? e.residual : c.y, bias_, e.bias,
          activation_, y_, c.y));
      return Status::OK();
    } else {
      KFORGE_CUDNN_RETURN_IF_ERROR(cudnnConvolutionForward(
          c.ctx->handle(), &one, x_, c.x, w_, c.w, conv_, static_cast<cudnnConvolutionFwdAlgo_t>(algo),
          c.scratch.data, a.workspace, &zero, y_, c.y));
    }
    if (c.epilogue != nullptr) KFORGE_CUDA_RETURN_IF_ERROR(c.epilogue_in_place(c));
    return Status::OK();
  }

  // Whether an algorithm computes through a transform (FFT, Winograd): it rounds otherwise than a direct sum of the
  // products, by more. Never considered: alexnet's 5 x 5 and 3 x 3 convolutions on winograd_nonfused were 2.6e-4 of
  // the output's largest value off in float32 on an H100, where the other algorithms stay under 1e-5 (BENCHMARKS.md).
  template <typename Perf>
  static bool transform_algorithm(int algo) {
    if constexpr (std::is_same_v<Perf, cudnnConvolutionFwdAlgoPerf_t>) {
      return algo == CUDNN_CONVOLUTION_FWD_ALGO_FFT || algo == CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING ||
             algo == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD || algo == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED;
    } else {
      return algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT || algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_FFT_TILING ||
             algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD ||
             algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED;
    }
  }

  // algorithms_[key] from cuDNN's heuristics (host only): no transform algorithm, and nothing that may convert the
  // float32 data to float16 (CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION; torch never asks for it either: TF32 is as low
  // as a float32 convolution goes); strict float32 (TF32 off: key[3] == 0) takes only what runs with FMA kernels. A
  // 16-bit convolution (g.data) takes every other math type, tensor cores included, whatever the TF32 switch.
  template <typename Perf>
  Status fill(const ConvGeometry& g, const Key& key, const Perf* perf, int returned, size_t workspace_limit) {
    const bool any_math = key[3] != 0 || g.data != ElementType::kFloat32;
    auto fits = [&](const Perf& p) {
      return p.status == CUDNN_STATUS_SUCCESS && p.memory <= workspace_limit &&
             !transform_algorithm<Perf>(static_cast<int>(p.algo)) &&
             p.mathType != CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION &&
             (any_math || p.mathType == CUDNN_FMA_MATH || p.mathType == CUDNN_DEFAULT_MATH);
    };
    bool any_deterministic = false;
    for (int i = 0; i < returned; ++i) any_deterministic |= fits(perf[i]) && perf[i].determinism == CUDNN_DETERMINISTIC;
    Algorithms list;
    for (int i = 0; i < returned; ++i) {
      const int algo = static_cast<int>(perf[i].algo);
      if (algo < 0 || algo >= kForwardAlgorithms || list.by_algo[algo].usable || !fits(perf[i])) continue;
      if (any_deterministic && perf[i].determinism != CUDNN_DETERMINISTIC) continue;
      list.by_algo[algo] = Candidate{true, any_math ? perf[i].mathType : CUDNN_FMA_MATH, perf[i].memory, i};
      if (list.first < 0) list.first = algo;
    }
    // 16-bit data: IMPLICIT_GEMM runs cuDNN's non-tensor-core kernel (implicit_convolve_sgemm<__half>), 2-15x slower
    // than IMPLICIT_PRECOMP_GEMM's tensor-core one on mobilenet_v2's 1x1 convolutions (H200, cuDNN 9.19), yet the
    // benchmark picked it for 10 of them in one run and 30 in another: two identical shapes measured 29 and 60 us
    // with the same algorithm. Where another algorithm is listed it is not a candidate (BENCHMARKS.md).
    if (g.data != ElementType::kFloat32 && !g.transposed && list.by_algo[CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM].usable) {
      for (int algo = 0; algo < kForwardAlgorithms; ++algo) {
        if (algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM || !list.by_algo[algo].usable) continue;
        list.by_algo[CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM].usable = false;
        if (list.first == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM) {
          list.first = -1;
          for (int i = 0; i < returned && list.first < 0; ++i) {
            const int a = static_cast<int>(perf[i].algo);
            if (a >= 0 && a < kForwardAlgorithms && list.by_algo[a].usable) list.first = a;
          }
        }
        break;
      }
    }
    if (list.first < 0) {
      return Status::Error("cuDNN lists no algorithm for the convolution (batch ", key[0], ", ", key[1], " x ", key[2],
                           ", ", returned, " candidates, workspace limit ", workspace_limit, " bytes)");
    }
    algorithms_[key] = list;
    return Status::OK();
  }

  Status list_algorithms(CudnnContext& ctx, const ConvGeometry& g, const Key& key, size_t workspace_limit) {
    int returned = 0;
    if (g.transposed) {
      cudnnConvolutionBwdDataAlgoPerf_t perf[kBackwardDataAlgorithms];
      KFORGE_CUDNN_RETURN_IF_ERROR(cudnnGetConvolutionBackwardDataAlgorithm_v7(
          ctx.handle(), w_, x_, conv_, y_, kBackwardDataAlgorithms, &returned, perf));
      return fill(g, key, perf, returned, workspace_limit);
    }
    cudnnConvolutionFwdAlgoPerf_t perf[kForwardAlgorithms];
    KFORGE_CUDNN_RETURN_IF_ERROR(cudnnGetConvolutionForwardAlgorithm_v7(ctx.handle(), x_, w_, conv_, y_,
                                                                        kForwardAlgorithms, &returned, perf));
    return fill(g, key, perf, returned, workspace_limit);
  }

  // The dispatcher over this site's methods, made at the first prepare(). A variant's rank is its algorithm's
  // place in that first heuristics list (fused just after unfused), so a tie within the benchmark's margin, and
  // KFORGE_MULTI_KERNEL_BENCHMARK=0, keep cuDNN's expectation.
  Status make_dispatcher(CudnnContext& ctx, const ConvGeometry& g, const Epilogue* epilogue, const Algorithms& first,
                         size_t workspace_limit) {
    const bool fuse = cudnn_can_fuse(g, epilogue);
    const bool relu = fuse && epilogue->activation == Activation::kRelu;
    if (fuse) {
      KFORGE_CUDNN_RETURN_IF_ERROR(cudnnCreateTensorDescriptor(&bias_));
      KFORGE_CUDNN_RETURN_IF_ERROR(cudnnSetTensor4dDescriptor(
          bias_, g.nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, g.k, 1, 1));
      KFORGE_CUDNN_RETURN_IF_ERROR(cudnnCreateActivationDescriptor(&activation_));
      KFORGE_CUDNN_RETURN_IF_ERROR(cudnnSetActivationDescriptor(
          activation_, relu ? CUDNN_ACTIVATION_RELU : CUDNN_ACTIVATION_IDENTITY, CUDNN_NOT_PROPAGATE_NAN, 0.0));
    }
    const int algos = g.transposed ? kBackwardDataAlgorithms : kForwardAlgorithms;
    std::vector<Variant> variants;
    for (int m = 0; m < (fuse ? 2 * algos : algos); ++m) {
      const int algo = m % algos;
      const bool fused = m >= algos;
      const int order = first.by_algo[algo].usable ? first.by_algo[algo].order : algos + algo;
      // cuDNN runs the identity activation fused only with the precomputed implicit GEMM.
      const bool fusable = !fused || relu || algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
      // In strict float32, a ReLU only where NaN becomes 0 (cudnn_relu_keeps_nan).
      const bool strict_nan = fused && relu && cudnn_relu_keeps_nan(algo);
      variant_methods_.push_back(m);
      variants.emplace_back(
          method_name(g.transposed, m), [this, m](const ConvCall& c) { return execute(c, m); },
          2 * order + (fused ? 1 : 0), std::vector<int64_t>{},
          [this, algo, fused, fusable, strict_nan](const mk::ShapeKey& key) {
            const Key k = key_of(key);
            auto listed = algorithms_.find(k);
            // A convolution run in chunks leaves its epilogue to the kernel.
            const bool chunked = chunk_of(k) > 0;
            const bool strict = k[3] == 0;
            return fusable && !(strict_nan && strict) && !(fused && chunked) && listed != algorithms_.end() &&
                   listed->second.by_algo[algo].usable;
          });
    }
    // The graph plans of a 16-bit convolution with its epilogue, ranked after every legacy method (a tie keeps
    // those); a plan cuDNN cannot make for a shape fails its benchmark run and is never picked.
    const bool graph = graph_can_fuse(g, epilogue);
    for (int i = 0; graph && i < kMaxGraphPlans; ++i) {
      const int m = kFirstGraphMethod + i;
      variant_methods_.push_back(m);
      variants.emplace_back(
          method_name(false, m), [this, m](const ConvCall& c) { return execute(c, m); }, 4 * algos + i,
          std::vector<int64_t>{},
          [](const mk::ShapeKey&) { return true; });
    }
    // The cache entry's identity: what the site computes (its element type included) and which cuDNN runs it (the
    // device is added by mk; the spatial dims are part of each entry's shape key).
    std::string name = std::string(g.transposed ? "cudnn_conv_transpose" : "cudnn_conv") + "_c" + std::to_string(g.c) +
                       "_k" + std::to_string(g.k) + "_r" +
                       std::to_string(g.r) + "_s" + std::to_string(g.s) + "_p" + std::to_string(g.pad_h) + "x" +
                       std::to_string(g.pad_w) + "_st" + std::to_string(g.stride_h) + "x" + std::to_string(g.stride_w) +
                       "_d" + std::to_string(g.dilation_h) + "x" + std::to_string(g.dilation_w) + "_g" +
                       std::to_string(g.groups) + (g.nhwc ? "_nhwc" : "_nchw") + (g.krsc_filter ? "_krsc" : "") + "_" +
                       element_type_name(g.data);
    const std::string epilogue_kind = epilogue == nullptr ? "none"
                                      : graph           ? std::string("graph:") +
                                                    std::to_string(static_cast<int>(epilogue->activation)) +
                                                    (epilogue->residual == nullptr          ? ""
                                                     : epilogue->activation_after_residual ? "+residual-first"
                                                                                            : "+residual-last")
                                      : !fuse ? "kernel"
                                              : std::string(relu ? "relu" : "identity") +
                                                    (epilogue->residual != nullptr ? "+residual" : "");
    const uint64_t set_hash = mk::fnv1a64("kforge-cudnn-conv 9;cudnn " + std::to_string(cudnnGetVersion()) + ";" +
                                          name + ";epilogue " + epilogue_kind + ";workspace " +
                                          std::to_string(workspace_limit) +
                                          (ctx.timing() == BenchmarkTiming::kGpu ? ";gpu" : ";host+gpu"));
    auto config = cuda_timing::make_cuda_config<Dispatcher>(name, ctx.timer(), set_hash);
    config.bench.warmup = 2;
    config.bench.repetitions = 9;
    dispatcher_ = std::make_unique<Dispatcher>(std::move(variants), std::move(config));
    return Status::OK();
  }

  // Creates the descriptors once and sets them for the call's shape (host calls only: nothing is allocated on the
  // device, so this is safe inside a graph capture). Checks cuDNN's output dims against the generated ones. The
  // tensors and the filter are of g.data's type, the convolution computes in float32; its math type: TF32 allowed
  // or not for float32 (tf32: tf32_applies), tensor cores for 16-bit.
  Status describe(const ConvGeometry& g, const ConvShape& shape, bool tf32) {
    const cudnnDataType_t data = cudnn_data_type(g.data);
    if (conv_ == nullptr) {
      KFORGE_CUDNN_RETURN_IF_ERROR(cudnnCreateTensorDescriptor(&x_));
      KFORGE_CUDNN_RETURN_IF_ERROR(cudnnCreateTensorDescriptor(&y_));
      KFORGE_CUDNN_RETURN_IF_ERROR(cudnnCreateFilterDescriptor(&w_));
      KFORGE_CUDNN_RETURN_IF_ERROR(cudnnCreateConvolutionDescriptor(&conv_));
      KFORGE_CUDNN_RETURN_IF_ERROR(cudnnSetConvolution2dDescriptor(conv_, g.pad_h, g.pad_w, g.stride_h, g.stride_w,
                                                                   g.dilation_h, g.dilation_w,
                                                                   CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
    }
    const Key key = key_of(shape, tf32);
    const int chunk = chunk_of(key);
    if (described_ != key || described_chunk_ != chunk) {
      const int n = shape.n;
      const cudnnTensorFormat_t format = g.nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
      // The forward convolution's filter: [k, c / groups, r, s] (in chunks: the grouped one's [c / chunk * k, chunk,
      // r, s]); transposed, Paddle's [c, k / groups, r, s].
      const int groups = chunk > 0 ? g.c / chunk : g.groups;
      const int out_channels = chunk > 0 ? groups * g.k : g.k;
      const int filter_out = g.transposed ? g.c : out_channels;
      const int filter_in = g.transposed ? g.k / g.groups : g.c / groups;
      KFORGE_CUDNN_RETURN_IF_ERROR(cudnnSetConvolutionGroupCount(conv_, groups));
      KFORGE_CUDNN_RETURN_IF_ERROR(cudnnSetFilter4dDescriptor(
          w_, data, g.krsc_filter ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW, filter_out, filter_in, g.r, g.s));
      KFORGE_CUDNN_RETURN_IF_ERROR(cudnnSetTensor4dDescriptor(x_, format, data, n, g.c, shape.h, shape.w));
      // In chunks, y_ describes the partial sums.
      KFORGE_CUDNN_RETURN_IF_ERROR(
          cudnnSetTensor4dDescriptor(y_, format, data, n, out_channels, shape.out_h, shape.out_w));
      const cudnnMathType_t math = g.data != ElementType::kFloat32 ? CUDNN_TENSOR_OP_MATH
                                   : tf32                          ? CUDNN_DEFAULT_MATH
                                                                   : CUDNN_FMA_MATH;
      KFORGE_CUDNN_RETURN_IF_ERROR(cudnnSetConvolutionMathType(conv_, math));
      // The forward convolution's output: y's dims, or for a transposed convolution x's (from y).
      int dims[4] = {0, 0, 0, 0};
      KFORGE_CUDNN_RETURN_IF_ERROR(cudnnGetConvolution2dForwardOutputDim(conv_, g.transposed ? y_ : x_, w_, &dims[0],
                                                                         &dims[1], &dims[2], &dims[3]));
      const int want[4] = {n, g.transposed ? g.c : out_channels, g.transposed ? shape.h : shape.out_h,
                           g.transposed ? shape.w : shape.out_w};
      if (dims[0] != want[0] || dims[1] != want[1] || dims[2] != want[2] || dims[3] != want[3]) {
        return Status::Error("cuDNN computes the convolution's ", g.transposed ? "input" : "output", " as [", dims[0],
                             ", ", dims[1], ", ", dims[2], ", ", dims[3], "], kforge as [", want[0], ", ", want[1],
                             ", ", want[2], ", ", want[3], "]");
      }
      described_ = key;
      described_chunk_ = chunk;
    }
    return Status::OK();
  }

  cudnnTensorDescriptor_t x_ = nullptr, y_ = nullptr;
  cudnnTensorDescriptor_t bias_ = nullptr;              // [1, k, 1, 1], for the fused methods
  cudnnActivationDescriptor_t activation_ = nullptr;    // ReLU or the identity, for the fused methods
  cudnnFilterDescriptor_t w_ = nullptr;
  cudnnConvolutionDescriptor_t conv_ = nullptr;
  Key described_{-1, -1, -1, -1};
  int described_chunk_ = -1;
  // The input channels per cuDNN call, by (batch, H, W, TF32) (chunk_channels; 0: whole, where TF32 applies, the
  // scratch cannot hold the slices, or cuDNN runs nothing on them), set by prepare().
  std::map<Key, int> chunk_by_key_;
  std::map<Key, Algorithms> algorithms_;  // by (batch, H, W, TF32)
  std::map<Key, int> chosen_;             // the method, by (batch, H, W, TF32)
  std::unique_ptr<Dispatcher> dispatcher_;
  std::vector<int> variant_methods_;  // the method of each of the dispatcher's variants, by index
};

// Rewrites a convolution's filter once the parameters are bound, as the CPU target does (kernels/onednn/conv.cc):
// the group's inference batch norm and the convolution's bias folded in, per output channel o,
// s = scale[o] / sqrt(var[o] + eps), w'[o, :] = w[o, :] * s, bias'[o] = bias[o] * s + (shift[o] - mean[o] * s) (with no
// batch norm, s = 1 and bias' = bias; with no bias, bias[o] = 0); and the filter reordered from OIHW to KRSC where
// g.krsc_filter, or to [r, s, k] where g.tap_major_filter (a depthwise filter, one input channel per output channel).
// The epilogue is then bias' (plus the residual and activation, if any), and inference runs no batch-norm arithmetic.
// The filter, its bias and the rewritten filter are T (float, or the 16-bit type of the convolution's data); the
// batch norm's vectors and bias' are float32; the arithmetic is float32, w' rounded to T when stored.
template <typename T>
__global__ void fold_filter_kernel(const T* w, const T* bias, Epilogue e, int64_t per_k, int64_t taps, bool krsc,
                                   bool tap_major, int64_t total, T* w_out, float* bias_out) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < total;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t o = i / per_k;
    const float inv_std = e.mean != nullptr ? 1.0f / sqrtf(e.variance[o] + e.epsilon) : 1.0f;
    const float s = e.mean != nullptr ? (e.scale != nullptr ? e.scale[o] : 1.0f) * inv_std : 1.0f;
    // i = ((o * cpg + ci) * r + kr) * s + ks; KRSC puts ci last: (o * taps + tap) * cpg + ci.
    const int64_t in_k = i % per_k, ci = in_k / taps, tap = in_k % taps;
    // Tap-major: ((tap * cpg + ci) * k + o), k = total / per_k.
    const int64_t to = tap_major ? (tap * (per_k / taps) + ci) * (total / per_k) + o
                       : krsc    ? o * per_k + tap * (per_k / taps) + ci
                                 : i;
    w_out[to] = cuda::from_float<T>(cuda::to_float(w[i]) * s);
    if (in_k == 0) {
      const float t = e.mean != nullptr ? (e.shift != nullptr ? e.shift[o] : 0.0f) - e.mean[o] * s : 0.0f;
      bias_out[o] = (bias != nullptr ? cuda::to_float(bias[o]) * s : 0.0f) + t;
    }
  }
}

// w_out = the rewritten filter of geometry g, bias_out = its folded bias [g.k] (float32), from the filter w, the
// convolution's bias [g.k] (null: none) and the batch norm's mean, variance, scale, shift and epsilon (mean null:
// none; batch_norm's other fields are not read); cudaGetLastError(). T: float, __half or __nv_bfloat16, deduced from w
// and w_out, not from bias (which may be nullptr).
template <typename T>
cudaError_t fold_filter(const T* w, const typename ElementTag<T>::type* bias, const Epilogue& batch_norm,
                        const ConvGeometry& g, T* w_out, float* bias_out, cudaStream_t stream) {
  const int64_t taps = static_cast<int64_t>(g.r) * g.s;
  const int64_t per_k = static_cast<int64_t>(g.c / g.groups) * taps, total = per_k * g.k;
  if (total == 0) return cudaSuccess;
  const int64_t blocks = (total + 255) / 256;
  fold_filter_kernel<T><<<static_cast<unsigned>(blocks < 65535 ? blocks : 65535), 256, 0, stream>>>(
      w, bias, batch_norm, per_k, taps, g.krsc_filter, g.tap_major_filter, total, w_out, bias_out);
  return cudaGetLastError();
}

}  // namespace cuda_conv
}  // namespace kforge

#endif  // KFORGE_CUDNN_CUH_
