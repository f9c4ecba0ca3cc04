// kforge 16-bit attention through cuDNN's fused flash-attention engines (header-only; link -lcudnn, cuDNN 9), a
// candidate beside kforge_attention.cuh's own kernel: out = softmax(scale * q k^T + mask) v, described as one
// operation graph of cuDNN's backend API -- q k^T (float), * scale, + the additive mask or the causal bound by
// position, the row's max, exp of the difference, the row's sum, the division (rounded to q's type), * v -- the
// pattern cuDNN's heuristics hand to its fused SDPA kernels (on Hopper: wgmma with TMA, which kforge's mma.sync
// kernel is not; BENCHMARKS.md, "fused attention kernel alone"). The graph is the one cudnn-frontend's composite SDPA
// node lowers to for inference (no statistics output, no dropout).
//
// Operands as kforge_attention.cuh's AttentionArgs: q, k, v and out addressed by strides over [batch, head, position]
// with the head dim contiguous; the mask float or T with strides over [batch, head, query, key], a stride of 0
// broadcasting (a dim of 1 for cuDNN); the causal bound only where diagonal is 1 (key j masked for query i where
// j > i: cuDNN's top-left causal mask). Anything else is not offered (supports() says so) and runs kforge's kernel.
//
// CudnnAttention (one per generated class, one host thread) keeps a cuDNN handle, and per description (sizes,
// strides, the mask's form, the element type) the execution plan finalized from the first acceptable engine
// configuration of cuDNN's heuristics, and a workspace grown to the largest plan's need. Finalizing a plan compiles
// an engine (host work, tenths of a second): prepare() does it, outside any graph capture; run() is capturable.
#ifndef KFORGE_CUDNN_ATTENTION_CUH_
#define KFORGE_CUDNN_ATTENTION_CUH_

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "kforge_attention.cuh"
#include "kforge_cudnn_backend.cuh"
#include "kforge_cuda_timer.cuh"
#include "kforge_multikernel.h"

namespace kforge {
namespace cuda_attention {

class CudnnAttention {
 public:
  CudnnAttention() = default;
  CudnnAttention(const CudnnAttention&) = delete;
  CudnnAttention& operator=(const CudnnAttention&) = delete;
  ~CudnnAttention() {
    plans_.clear();  // before the handle they were made on
    if (workspace_ != nullptr) static_cast<void>(cudaFree(workspace_));
    if (handle_ != nullptr) static_cast<void>(cudnnDestroy(handle_));
  }

  // Whether cuDNN's graph can describe a: 16-bit T, head dim a multiple of 8, strides of 8-element multiples (16-byte
  // rows), no causal bound but the top-left one.
  template <typename T>
  static bool supports(const AttentionArgs& a, int head_dim) {
    if (!std::is_same_v<T, __half> && !std::is_same_v<T, __nv_bfloat16>) return false;
    if (head_dim % 8 != 0 || head_dim > 256) return false;
    if (a.causal && (a.diagonal != 1 || a.seq_q != a.seq_k)) return false;
    for (int64_t s : {a.q_batch, a.q_head, a.q_seq, a.k_batch, a.k_head, a.k_seq, a.v_batch, a.v_head, a.v_seq,
                      a.o_batch, a.o_head, a.o_seq}) {
      if (s % 8 != 0) return false;
    }
    for (const void* p : {a.q, a.k, a.v, static_cast<const void*>(a.out)}) {
      if (reinterpret_cast<uintptr_t>(p) % 16 != 0) return false;
    }
    if (a.mask != nullptr && (a.m_col != 1 || reinterpret_cast<uintptr_t>(a.mask) % 16 != 0)) return false;
    return true;
  }

  // Makes the plan of a's description (and the workspace it needs) where there is none yet: host work, never inside
  // a graph capture. False where cuDNN describes or plans nothing for it.
  template <typename T, typename M>
  bool prepare(const AttentionArgs& a, int head_dim) {
    if (!supports<T>(a, head_dim)) return false;
    if (handle_ == nullptr && cudnnCreate(&handle_) != CUDNN_STATUS_SUCCESS) {
      handle_ = nullptr;
      return false;
    }
    const Key key = key_of<T, M>(a, head_dim);
    auto found = plans_.find(key);
    if (found != plans_.end()) return found->second != nullptr;
    std::unique_ptr<Plan>& plan = plans_[key];
    plan = make_plan(handle_, a, head_dim, data_type<T>(), mask_type<T, M>());
    if (plan == nullptr) {
      char text[512] = {0};
      cudnnGetLastErrorString(text, sizeof(text));
      last_error_ = text;
    }
    if (plan != nullptr && plan->workspace > workspace_bytes_) {
      if (workspace_ != nullptr) static_cast<void>(cudaFree(workspace_));
      workspace_ = nullptr;
      workspace_bytes_ = 0;
      if (cudaMalloc(&workspace_, plan->workspace) != cudaSuccess) {
        workspace_ = nullptr;
        plan.reset();
        return false;
      }
      workspace_bytes_ = plan->workspace;
    }
    return plan != nullptr;
  }

  // cuDNN's message for the last description prepare() could make no plan for.
  const std::string& last_error() const { return last_error_; }

  // Runs a on the stream through the plan prepare() made; cudaErrorNotSupported where it made none.
  template <typename T, typename M>
  cudaError_t run(const AttentionArgs& a, int head_dim, cudaStream_t stream) {
    auto found = plans_.find(key_of<T, M>(a, head_dim));
    if (found == plans_.end() || found->second == nullptr) return cudaErrorNotSupported;
    if (cudnnSetStream(handle_, stream) != CUDNN_STATUS_SUCCESS) return cudaErrorUnknown;
    const float scale = a.scale, minus_infinity = -std::numeric_limits<float>::infinity();
    std::vector<int64_t> ids{kQ, kK, kV, kO, kScale};
    std::vector<void*> pointers{const_cast<void*>(a.q), const_cast<void*>(a.k), const_cast<void*>(a.v), a.out,
                                const_cast<float*>(&scale)};
    if (a.mask != nullptr) {
      ids.push_back(kMask);
      pointers.push_back(const_cast<void*>(a.mask));
    }
    if (a.causal) {
      ids.push_back(kMinusInfinity);
      pointers.push_back(const_cast<float*>(&minus_infinity));
    }
    Descriptor pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    void* workspace = workspace_;
    if (!pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, ids.data(), int64_t(ids.size())) ||
        !pack.set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, pointers.data(),
                  int64_t(pointers.size())) ||
        !pack.set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, &workspace) || !pack.finalize()) {
      return cudaErrorInvalidValue;
    }
    return cudnnBackendExecute(handle_, found->second->plan.d, pack.d) == CUDNN_STATUS_SUCCESS ? cudaSuccess
                                                                                             : cudaErrorLaunchFailure;
  }

 private:
  using Descriptor = cudnn_backend::Descriptor;

  // The graph's tensors: the ids the variant pack names them by, then the virtual results between the ops.
  enum Id : int64_t {
    kQ = 1, kK, kV, kO, kScale, kMask, kMinusInfinity,
    kScores, kScaled, kMasked, kRow, kColumn, kVisible, kCausal, kMax, kShifted, kExp, kSum, kLogSum, kStatistics,
    kProbabilities
  };

  // Every descriptor of one description's graph, and the plan made from it (alive together).
  struct Plan {
    std::map<int64_t, Descriptor> tensors;
    std::vector<Descriptor> parts;
    std::vector<cudnnBackendDescriptor_t> ops;
    Descriptor graph{CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR};
    Descriptor heuristics{CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR};
    std::vector<Descriptor> configs;
    Descriptor plan{CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR};
    size_t workspace = 0;
  };

  using Key = std::array<int64_t, 24>;

  template <typename T, typename M>
  static Key key_of(const AttentionArgs& a, int head_dim) {
    return Key{a.batch,   a.heads,   a.seq_q,   a.seq_k,   head_dim,  a.q_batch, a.q_head,
               a.q_seq,   a.k_batch, a.k_head,  a.k_seq,   a.v_batch, a.v_head,  a.v_seq,
               a.o_batch, a.o_head,  a.o_seq,   a.mask != nullptr,    a.m_batch, a.m_head,
               a.m_row,   a.causal,  int64_t(data_type<T>()), int64_t(mask_type<T, M>())};
  }

  template <typename T>
  static cudnnDataType_t data_type() {
    return std::is_same_v<T, __half> ? CUDNN_DATA_HALF : CUDNN_DATA_BFLOAT16;
  }
  template <typename T, typename M>
  static cudnnDataType_t mask_type() {
    return std::is_same_v<M, float> ? CUDNN_DATA_FLOAT : data_type<T>();
  }

  static bool tensor(Plan& p, int64_t id, cudnnDataType_t type, std::array<int64_t, 4> dims,
                     std::array<int64_t, 4> strides, bool is_virtual, bool by_value = false) {
    const int64_t alignment = 16;
    Descriptor t(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    bool ok = t.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, &type) &&
              t.set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, dims.data(), 4) &&
              t.set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, strides.data(), 4) &&
              t.set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, &id) &&
              t.set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, &alignment) &&
              t.set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, &is_virtual);
    if (by_value) ok = ok && t.set(CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, &by_value);
    ok = ok && t.finalize();
    p.tensors.emplace(id, std::move(t));
    return ok;
  }

  // y = mode(x[, b[, t]]) computed in `precision` (axis: GEN_INDEX's).
  static bool pointwise(Plan& p, cudnnPointwiseMode_t mode, cudnnDataType_t precision, int64_t x, int64_t b,
                        int64_t t, int64_t y, int64_t axis = -1) {
    Descriptor pw(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    bool ok = pw.set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, &mode) &&
              pw.set(CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, &precision);
    if (axis >= 0) ok = ok && pw.set(CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, &axis);
    ok = ok && pw.finalize();
    Descriptor op(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    ok = ok && op.set_descriptor(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw.d) &&
         op.set_descriptor(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, p.tensors.at(x).d) &&
         (b == 0 || op.set_descriptor(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, p.tensors.at(b).d)) &&
         (t == 0 || op.set_descriptor(CUDNN_ATTR_OPERATION_POINTWISE_TDESC, p.tensors.at(t).d)) &&
         op.set_descriptor(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, p.tensors.at(y).d) && op.finalize();
    p.ops.push_back(op.d);
    p.parts.push_back(std::move(pw));
    p.parts.push_back(std::move(op));
    return ok;
  }

  static bool reduction(Plan& p, cudnnReduceTensorOp_t mode, int64_t x, int64_t y) {
    Descriptor r(CUDNN_BACKEND_REDUCTION_DESCRIPTOR);
    const cudnnDataType_t f32 = CUDNN_DATA_FLOAT;
    bool ok = r.set(CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, &mode) &&
              r.set(CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, &f32) && r.finalize();
    Descriptor op(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
    ok = ok && op.set_descriptor(CUDNN_ATTR_OPERATION_REDUCTION_XDESC, p.tensors.at(x).d) &&
         op.set_descriptor(CUDNN_ATTR_OPERATION_REDUCTION_YDESC, p.tensors.at(y).d) &&
         op.set_descriptor(CUDNN_ATTR_OPERATION_REDUCTION_DESC, r.d) && op.finalize();
    p.ops.push_back(op.d);
    p.parts.push_back(std::move(r));
    p.parts.push_back(std::move(op));
    return ok;
  }

  static bool matmul(Plan& p, int64_t a, int64_t b, int64_t c) {
    Descriptor m(CUDNN_BACKEND_MATMUL_DESCRIPTOR);
    const cudnnDataType_t f32 = CUDNN_DATA_FLOAT;
    bool ok = m.set(CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, &f32) && m.finalize();
    Descriptor op(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
    ok = ok && op.set_descriptor(CUDNN_ATTR_OPERATION_MATMUL_ADESC, p.tensors.at(a).d) &&
         op.set_descriptor(CUDNN_ATTR_OPERATION_MATMUL_BDESC, p.tensors.at(b).d) &&
         op.set_descriptor(CUDNN_ATTR_OPERATION_MATMUL_CDESC, p.tensors.at(c).d) &&
         op.set_descriptor(CUDNN_ATTR_OPERATION_MATMUL_DESC, m.d) && op.finalize();
    p.ops.push_back(op.d);
    p.parts.push_back(std::move(m));
    p.parts.push_back(std::move(op));
    return ok;
  }

  // The graph of a, its heuristics' first acceptable configuration and the plan finalized from it; null where any
  // step fails.
  static std::unique_ptr<Plan> make_plan(cudnnHandle_t handle, const AttentionArgs& a, int64_t d,
                                         cudnnDataType_t data, cudnnDataType_t mask_data) {
    auto p = std::make_unique<Plan>();
    const cudnnDataType_t f32 = CUDNN_DATA_FLOAT, i32 = CUDNN_DATA_INT32, boolean = CUDNN_DATA_BOOLEAN;
    const int64_t b = a.batch, h = a.heads, sq = a.seq_q, sk = a.seq_k;
    const std::array<int64_t, 4> scores{b, h, sq, sk}, scores_strides{h * sq * sk, sq * sk, sk, 1};
    const std::array<int64_t, 4> rows{b, h, sq, 1}, rows_strides{h * sq, sq, 1, 1};
    const std::array<int64_t, 4> one{1, 1, 1, 1};
    bool ok = tensor(*p, kQ, data, {b, h, sq, d}, {a.q_batch, a.q_head, a.q_seq, 1}, false) &&
              tensor(*p, kK, data, {b, h, d, sk}, {a.k_batch, a.k_head, 1, a.k_seq}, false) &&
              tensor(*p, kV, data, {b, h, sk, d}, {a.v_batch, a.v_head, a.v_seq, 1}, false) &&
              tensor(*p, kO, data, {b, h, sq, d}, {a.o_batch, a.o_head, a.o_seq, 1}, false) &&
              tensor(*p, kScale, f32, one, one, false, true) &&
              tensor(*p, kScores, f32, scores, scores_strides, true) &&
              tensor(*p, kScaled, f32, scores, scores_strides, true) &&
              matmul(*p, kQ, kK, kScores) &&
              pointwise(*p, CUDNN_POINTWISE_MUL, f32, kScores, kScale, 0, kScaled);
    int64_t last = kScaled;
    if (ok && a.mask != nullptr) {
      const std::array<int64_t, 4> dims{a.m_batch == 0 ? 1 : b, a.m_head == 0 ? 1 : h, a.m_row == 0 ? 1 : sq, sk};
      const std::array<int64_t, 4> strides{a.m_batch, a.m_head, a.m_row, 1};
      ok = tensor(*p, kMask, mask_data, dims, strides, false) &&
           tensor(*p, kMasked, f32, scores, scores_strides, true) &&
           pointwise(*p, CUDNN_POINTWISE_ADD, f32, last, kMask, 0, kMasked);
      last = kMasked;
    }
    if (ok && a.causal) {  // keep key j of query i where i >= j, -inf elsewhere
            ok = tensor(*p, kMinusInfinity, f32, one, one, false, true) &&
           tensor(*p, kRow, i32, scores, scores_strides, true) &&
           tensor(*p, kColumn, i32, scores, scores_strides, true) &&
           tensor(*p, kVisible, boolean, scores, scores_strides, true) &&
           tensor(*p, kCausal, f32, scores, scores_strides, true) &&
           pointwise(*p, CUDNN_POINTWISE_GEN_INDEX, f32, last, 0, 0, kRow, 2) &&
           pointwise(*p, CUDNN_POINTWISE_GEN_INDEX, f32, last, 0, 0, kColumn, 3) &&
           pointwise(*p, CUDNN_POINTWISE_CMP_GE, boolean, kRow, kColumn, 0, kVisible) &&
           pointwise(*p, CUDNN_POINTWISE_BINARY_SELECT, f32, last, kMinusInfinity, kVisible, kCausal);
      last = kCausal;
    }
    ok = ok && tensor(*p, kMax, f32, rows, rows_strides, true) &&
         tensor(*p, kShifted, f32, scores, scores_strides, true) &&
         tensor(*p, kExp, f32, scores, scores_strides, true) && tensor(*p, kSum, f32, rows, rows_strides, true) &&
         tensor(*p, kProbabilities, data, scores, scores_strides, true) &&
         reduction(*p, CUDNN_REDUCE_TENSOR_MAX, last, kMax) &&
         pointwise(*p, CUDNN_POINTWISE_SUB, f32, last, kMax, 0, kShifted) &&
         pointwise(*p, CUDNN_POINTWISE_EXP, f32, kShifted, 0, 0, kExp) &&
         reduction(*p, CUDNN_REDUCE_TENSOR_ADD, kExp, kSum) &&
         tensor(*p, kLogSum, f32, rows, rows_strides, true) &&
         tensor(*p, kStatistics, f32, rows, rows_strides, true) &&
         pointwise(*p, CUDNN_POINTWISE_LOG, f32, kSum, 0, 0, kLogSum) &&
         pointwise(*p, CUDNN_POINTWISE_ADD, f32, kMax, kLogSum, 0, kStatistics) &&
         pointwise(*p, CUDNN_POINTWISE_DIV, f32, kExp, kSum, 0, kProbabilities) &&
         matmul(*p, kProbabilities, kV, kO) &&
         p->graph.set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, p->ops.data(),
                      int64_t(p->ops.size())) &&
         p->graph.set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, &handle) && p->graph.finalize();
    if (!ok) return nullptr;
    cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
    int64_t count = 0;
    if (!p->heuristics.set_descriptor(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, p->graph.d) ||
        !p->heuristics.set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, &mode) || !p->heuristics.finalize() ||
        cudnnBackendGetAttribute(p->heuristics.d, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0,
                                 &count, nullptr) != CUDNN_STATUS_SUCCESS || count == 0) {
      return nullptr;
    }
    for (int64_t i = 0; i < count; ++i) p->configs.emplace_back(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    std::vector<cudnnBackendDescriptor_t> raw;
    for (const Descriptor& c : p->configs) raw.push_back(c.d);
    if (cudnnBackendGetAttribute(p->heuristics.d, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, count,
                                 &count, raw.data()) != CUDNN_STATUS_SUCCESS) {
      return nullptr;
    }
    for (int64_t i = 0; i < count; ++i) {
      Descriptor plan(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
      int64_t workspace = 0, returned = 0;
      if (plan.set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, &handle) &&
          plan.set_descriptor(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, raw[i]) && plan.finalize() &&
          cudnnBackendGetAttribute(plan.d, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &returned,
                                   &workspace) == CUDNN_STATUS_SUCCESS &&
          workspace >= 0) {
        p->plan = std::move(plan);
        p->workspace = size_t(workspace);
        return p;
      }
    }
    return nullptr;
  }

  cudnnHandle_t handle_ = nullptr;
  std::string last_error_;
  std::map<Key, std::unique_ptr<Plan>> plans_;
  void* workspace_ = nullptr;
  size_t workspace_bytes_ = 0;
};

// What an object's attention sites share: the cuDNN plans and the timer of their benchmarks. gpu_timing: GPU time
// alone (a class that replays CUDA graphs: the host's cuDNN call is not paid per run; a spin kernel keeps the GPU
// busy while the host launches, as CudnnContext's), else the host's calls and the GPU's work together.
struct AttentionContext {
  explicit AttentionContext(bool gpu_timing)
      : gpu_timing(gpu_timing),
        timer(std::make_shared<cuda_timing::CudaEventTimer>(nullptr,
                                                            gpu_timing ? cuda_timing::kCudnnCallLeadUs : 0.0)) {}
  bool gpu_timing;
  CudnnAttention cudnn;
  std::shared_ptr<cuda_timing::CudaEventTimer> timer;
};

// One 16-bit attention group's method per shape, chosen by the multi-kernel dispatcher (kforge_multikernel.h):
// "kernel" (kforge_attention.cuh's attention<T, D, M>) or "cudnn" (CudnnAttention's plan), both timed on the group's
// own operands at the first call of a shape (out overwritten), the faster remembered in memory and in the disk
// cache; cuDNN's plan is offered only where supports() and prepare() succeed. A shape first seen inside a graph
// capture (no benchmark can run there) takes the kernel; generated code calls choose() before capturing.
template <typename T, int D, typename M>
class AttentionSite {
 public:
  explicit AttentionSite(std::string name) : name_(std::move(name)) {}
  AttentionSite(const AttentionSite&) = delete;
  AttentionSite& operator=(const AttentionSite&) = delete;

  // Chooses the method for a's shape where not done yet: host work that synchronises, never inside a capture.
  cudaError_t choose(AttentionContext& ctx, const AttentionArgs& a, cudaStream_t stream) {
    const mk::ShapeKey key{a.batch, a.heads, a.seq_q, a.seq_k};
    if (chosen_.count(key_of(key)) != 0) return cudaSuccess;
    if (dispatcher_ == nullptr) make_dispatcher(ctx);
    if (ctx.cudnn.template prepare<T, M>(a, D)) planned_.insert(key_of(key));
    ctx.timer->set_stream(stream);
    const size_t variant = dispatcher_->select(key, [&](const typename Dispatcher::Variant& v) {
      if (v.fn(Call{&ctx, &a, stream}) != cudaSuccess) ctx.timer->mark_failed();
    });
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
    chosen_[key_of(key)] = static_cast<int>(variant);
    return cudaSuccess;
  }

  // Runs a with its shape's method (choosing it first outside a capture).
  cudaError_t run(AttentionContext& ctx, const AttentionArgs& a, cudaStream_t stream) {
    auto chosen = chosen_.find(key_of(mk::ShapeKey{a.batch, a.heads, a.seq_q, a.seq_k}));
    if (chosen == chosen_.end()) {
      cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
      if (cudaError_t e = cudaStreamIsCapturing(stream, &capture); e != cudaSuccess) return e;
      if (capture != cudaStreamCaptureStatusNone) return attention<T, D, M>(a, stream);
      if (cudaError_t e = choose(ctx, a, stream); e != cudaSuccess) return e;
      chosen = chosen_.find(key_of(mk::ShapeKey{a.batch, a.heads, a.seq_q, a.seq_k}));
    }
    return chosen->second == kCudnn && CudnnAttention::supports<T>(a, D)
               ? ctx.cudnn.template run<T, M>(a, D, stream)
               : attention<T, D, M>(a, stream);
  }

 private:
  struct Call {
    AttentionContext* ctx;
    const AttentionArgs* a;
    cudaStream_t stream;
  };
  using Dispatcher = mk::MultiKernel<cudaError_t(const Call&)>;
  using Key = std::array<int64_t, 4>;
  enum Method : int { kKernel = 0, kCudnn = 1 };

  static Key key_of(const mk::ShapeKey& k) { return Key{k.dims[0], k.dims[1], k.dims[2], k.dims[3]}; }

  void make_dispatcher(AttentionContext& ctx) {
    std::vector<typename Dispatcher::Variant> variants;
    variants.emplace_back("kernel", [](const Call& c) { return attention<T, D, M>(*c.a, c.stream); }, 0);
    variants.emplace_back(
        "cudnn", [](const Call& c) { return c.ctx->cudnn.template run<T, M>(*c.a, D, c.stream); }, 1,
        std::vector<int64_t>{}, [this](const mk::ShapeKey& key) { return planned_.count(key_of(key)) != 0; });
    const std::string what = std::string(std::is_same_v<T, __half> ? "float16" : "bfloat16") + " head " +
                             std::to_string(D) + " mask " + (std::is_same_v<M, float> ? "float" : "data");
    const uint64_t hash = mk::fnv1a64("kforge-attention 1;cudnn " + std::to_string(cudnnGetVersion()) + ";" + name_ +
                                      ";" + what + (ctx.gpu_timing ? ";gpu" : ";host+gpu"));
    dispatcher_ = std::make_unique<Dispatcher>(std::move(variants),
                                               cuda_timing::make_cuda_config<Dispatcher>(name_, ctx.timer, hash));
  }

  std::string name_;
  std::unique_ptr<Dispatcher> dispatcher_;
  std::map<Key, int> chosen_;
  std::set<Key> planned_;
};

}  // namespace cuda_attention
}  // namespace kforge

#endif  // KFORGE_CUDNN_ATTENTION_CUH_
