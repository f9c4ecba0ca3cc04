// kforge cuDNN graph-API convolutions with their epilogue inside (header-only; link -lcudnn, cuDNN 9), for
// kforge_cudnn.cuh's 16-bit convolutions.
//
// The legacy API runs a 16-bit convolution and leaves its epilogue (bias, residual, ReLU) to a second kernel over
// the output (kforge_channel_epilogue.cuh): its fused call takes a 16-bit bias only and was slower than the plain
// convolution (BENCHMARKS.md, "16-bit CNNs on the H200, again"). The backend ("graph") API describes the whole chain
// -- convolution -> + bias -> [+ residual] -> activation, or the residual after the activation -- as one operation
// graph, whose engines apply the pointwise ops to the float32 accumulators before the one 16-bit store. At
// resnet50's bottleneck shapes in float16 NHWC on an H200 that took the convolution + epilogue pairs to 0.80x (batch
// 10) / 0.79x (batch 1) of their time (bench/cuda_models/fused_graph_probe.cu; BENCHMARKS.md, "16-bit CNNs: the
// epilogue inside the convolution"). It also rounds once where the pair rounds the convolution's output and then the
// epilogue's.
//
// GraphConvPlans (one per CudnnContext, shared by its convolutions) holds, per description (GraphConvDesc: the
// geometry at one shape, the epilogue) and workspace limit, the first kMaxGraphPlans engine configurations of cuDNN's
// heuristics (mode A) that are deterministic and free of transforms (no FFT or Winograd numerical note, as the legacy
// algorithms kforge_cudnn.cuh takes), and the execution plans finalized from them on demand. kforge_cudnn.cuh's
// ConvSite offers plan i to its multi-kernel dispatcher as method "graph_<i>" beside the legacy algorithms; the
// benchmark picks. Finalizing a plan is host work -- an engine compiled at run time by cuDNN (those with a residual
// at resnet50's shapes: 0.4-0.7 s each on an H200) -- done at the plan's first run, in the benchmark's untimed
// warm-up or, for a pick from the disk cache, in ConvSite::prepare (the picked plan alone); never inside a graph
// capture. Executing a plan is capturable.
#ifndef KFORGE_CUDNN_GRAPH_CUH_
#define KFORGE_CUDNN_GRAPH_CUH_

#include <cudnn.h>

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "kforge_cuda_runtime.h"
#include "kforge_cudnn_backend.cuh"

namespace kforge {
namespace cuda_conv {

// How many plans per shape are offered to the dispatcher (each one a benchmark run at the first call).
constexpr int kMaxGraphPlans = 4;

// What the graph computes, in cuDNN's terms: the convolution (ungrouped; dims of the logical NCHW tensors), the
// data's type (half or bfloat16), the layouts, and the epilogue: a float32 bias per output channel, an optional
// residual of the data's type, and ReLU (clipped at relu_max when > 0) or no activation, applied after the residual
// or before it.
struct GraphConvDesc {
  int64_t n, c, h, w, k, r, s, out_h, out_w;
  int64_t pad_h, pad_w, stride_h, stride_w, dilation_h, dilation_w;
  bool nhwc, krsc_filter;
  cudnnDataType_t data;
  bool residual, relu, activation_after_residual;
  float relu_max;  // > 0: ReLU clipped at this (relu6)
};

// The operands of one execution, by the graph's tensor ids.
struct GraphConvOperands {
  const void* x;
  const void* w;
  const float* bias;
  const void* residual;  // null unless GraphConvDesc::residual
  void* y;
  void* workspace;
};

class GraphConvPlans {
 public:
  GraphConvPlans() = default;
  GraphConvPlans(const GraphConvPlans&) = delete;
  GraphConvPlans& operator=(const GraphConvPlans&) = delete;
  ~GraphConvPlans() { clear(); }

  // Destroys every plan (before the handle they were made on).
  void clear() {
    for (auto& [key, entry] : entries_) {
      for (cudnnBackendDescriptor_t plan : entry.plans) {
        if (plan != nullptr) static_cast<void>(cudnnBackendDestroyDescriptor(plan));
      }
    }
    entries_.clear();
  }

  // Plan `index` of d (at most kMaxGraphPlans: the first acceptable configurations of the heuristics, listed at
  // d's first call), finalized where it is not yet: host only, never inside a graph capture (an engine cuDNN
  // compiles at run time took 0.4-0.7 s on an H200, BENCHMARKS.md); null where it cannot be made or needs more
  // workspace.
  cudnnBackendDescriptor_t ensure(cudnnHandle_t handle, const GraphConvDesc& d, size_t workspace_limit, int index) {
    Entry& e = entry(handle, d, workspace_limit);
    if (index < 0 || index >= static_cast<int>(e.configs.size())) return nullptr;
    if (!e.tried[index]) {
      e.tried[index] = 1;
      e.plans[index] = finalize(handle, e.configs[index].d, workspace_limit);
    }
    return e.plans[index];
  }

  // Runs plan `index` of d on the handle's stream, finalizing it first where ensure() has not.
  Status execute(cudnnHandle_t handle, const GraphConvDesc& d, size_t workspace_limit, int index,
                 const GraphConvOperands& o) {
    const cudnnBackendDescriptor_t plan = ensure(handle, d, workspace_limit, index);
    if (plan == nullptr) {
      return Status::Error("cuDNN has no graph plan ", index, " for the convolution with its epilogue");
    }
    std::vector<int64_t> ids{kX, kW, kBias, kY};
    std::vector<void*> pointers{const_cast<void*>(o.x), const_cast<void*>(o.w), const_cast<float*>(o.bias), o.y};
    if (d.residual) {
      ids.push_back(kResidual);
      pointers.push_back(const_cast<void*>(o.residual));
    }
    Descriptor pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    void* workspace = o.workspace;
    if (!pack.ok() ||
        !pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, ids.data(), static_cast<int64_t>(ids.size())) ||
        !pack.set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, pointers.data(),
                  static_cast<int64_t>(pointers.size())) ||
        !pack.set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, &workspace) || !pack.finalize()) {
      return Status::Error("cuDNN refused the graph convolution's operands");
    }
    const cudnnStatus_t status = cudnnBackendExecute(handle, plan, pack.d);
    if (status != CUDNN_STATUS_SUCCESS) return Status::Error("cudnnBackendExecute: ", cudnnGetErrorString(status));
    return Status::OK();
  }

 private:
  // The graph's tensors: the ids the variant pack names them by, and the virtual ones between the ops.
  enum Id : int64_t { kX = 1, kW, kBias, kResidual, kY, kConvOut, kFirstOut, kSecondOut };

  using Descriptor = cudnn_backend::Descriptor;

  // Every descriptor of one operation graph, alive until its plans are built.
  struct Graph {
    std::vector<Descriptor> parts;
    Descriptor graph{CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR};
  };

  // One description's operation graph (kept alive with its configurations), its acceptable configurations and
  // the plans finalized from them (null: not yet, or it could not be made; tried says which).
  struct Entry {
    std::unique_ptr<Graph> graph;
    Descriptor heuristics{CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR};
    std::vector<Descriptor> configs;
    std::vector<cudnnBackendDescriptor_t> plans;
    std::vector<char> tried;
  };
  using Key = std::array<int64_t, 24>;

  static Key key_of(cudnnHandle_t handle, const GraphConvDesc& d, size_t workspace_limit) {
    return Key{d.n, d.c, d.h, d.w, d.k, d.r, d.s, d.out_h, d.out_w, d.pad_h, d.pad_w, d.stride_h, d.stride_w,
               d.dilation_h, d.dilation_w, d.nhwc, d.krsc_filter, static_cast<int64_t>(d.data), d.residual, d.relu,
               d.activation_after_residual, static_cast<int64_t>(d.relu_max * 1024),
               static_cast<int64_t>(workspace_limit), static_cast<int64_t>(reinterpret_cast<uintptr_t>(handle))};
  }

  // d's entry, its graph described and its configurations listed at the first call.
  Entry& entry(cudnnHandle_t handle, const GraphConvDesc& d, size_t workspace_limit) {
    const Key key = key_of(handle, d, workspace_limit);
    auto found = entries_.find(key);
    if (found != entries_.end()) return found->second;
    Entry& e = entries_[key];
    e.graph = std::make_unique<Graph>();
    cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
    int64_t count = 0;
    if (!describe(handle, d, *e.graph) || !e.heuristics.ok() ||
        !e.heuristics.set_descriptor(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, e.graph->graph.d) ||
        !e.heuristics.set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, &mode) || !e.heuristics.finalize() ||
        cudnnBackendGetAttribute(e.heuristics.d, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0,
                                 &count, nullptr) != CUDNN_STATUS_SUCCESS) {
      return e;
    }
    std::vector<Descriptor> all;
    for (int64_t i = 0; i < count; ++i) all.emplace_back(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    std::vector<cudnnBackendDescriptor_t> raw;
    for (const Descriptor& c : all) raw.push_back(c.d);
    if (cudnnBackendGetAttribute(e.heuristics.d, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, count,
                                 &count, raw.data()) != CUDNN_STATUS_SUCCESS) {
      return e;
    }
    for (int64_t i = 0; i < count && static_cast<int>(e.configs.size()) < kMaxGraphPlans; ++i) {
      if (acceptable(raw[i])) e.configs.push_back(std::move(all[i]));
    }
    e.plans.assign(e.configs.size(), nullptr);
    e.tried.assign(e.configs.size(), 0);
    return e;
  }

  // The execution plan of one configuration, or null where it cannot be made within the workspace.
  static cudnnBackendDescriptor_t finalize(cudnnHandle_t handle, cudnnBackendDescriptor_t config,
                                           size_t workspace_limit) {
    cudnnBackendDescriptor_t plan = nullptr;
    if (cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan) != CUDNN_STATUS_SUCCESS) {
      return nullptr;
    }
    int64_t workspace = 0, returned = 0;
    const bool made =
        cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle) ==
            CUDNN_STATUS_SUCCESS &&
        cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                 &config) == CUDNN_STATUS_SUCCESS &&
        cudnnBackendFinalize(plan) == CUDNN_STATUS_SUCCESS &&
        cudnnBackendGetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &returned,
                                 &workspace) == CUDNN_STATUS_SUCCESS &&
        workspace >= 0 && static_cast<size_t>(workspace) <= workspace_limit;
    if (made) return plan;
    static_cast<void>(cudnnBackendDestroyDescriptor(plan));
    return nullptr;
  }

  // A 4-D tensor of logical dims [n, c, h, w] in NHWC or NCHW order (or, for the filter, KRSC / OIHW).
  static bool tensor(Graph& g, int64_t id, cudnnDataType_t type, std::array<int64_t, 4> dims, bool channels_last,
                     bool is_virtual) {
    const int64_t c = dims[1], h = dims[2], w = dims[3];
    const std::array<int64_t, 4> strides = channels_last ? std::array<int64_t, 4>{h * w * c, 1, w * c, c}
                                                         : std::array<int64_t, 4>{c * h * w, h * w, w, 1};
    const int64_t alignment = 16;
    Descriptor t(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    const bool ok = t.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, &type) &&
                    t.set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, dims.data(), 4) &&
                    t.set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, strides.data(), 4) &&
                    t.set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, &id) &&
                    t.set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, &alignment) &&
                    t.set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, &is_virtual) && t.finalize();
    g.parts.push_back(std::move(t));
    return ok;
  }

  // The tensor descriptor made for `id` (tensor() appends them in order of their ids).
  static cudnnBackendDescriptor_t tensor_of(const Graph& g, int64_t id) { return g.parts[id - 1].d; }

  // y = mode(x[, b]) in float32.
  static bool pointwise(Graph& g, cudnnPointwiseMode_t mode, int64_t x, int64_t b, int64_t y, float relu_max,
                        std::vector<cudnnBackendDescriptor_t>& ops) {
    Descriptor pw(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    const cudnnDataType_t precision = CUDNN_DATA_FLOAT;
    const float upper = relu_max;  // a float attribute: the math precision is float32
    bool ok = pw.set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, &mode) &&
              pw.set(CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, &precision);
    if (ok && mode == CUDNN_POINTWISE_RELU_FWD && relu_max > 0) {
      ok = pw.set(CUDNN_ATTR_POINTWISE_RELU_UPPER_CLIP, CUDNN_TYPE_FLOAT, &upper);
    }
    ok = ok && pw.finalize();
    Descriptor op(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    ok = ok && op.set_descriptor(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw.d) &&
         op.set_descriptor(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, tensor_of(g, x)) &&
         (b == 0 || op.set_descriptor(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, tensor_of(g, b))) &&
         op.set_descriptor(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, tensor_of(g, y)) && op.finalize();
    ops.push_back(op.d);
    g.parts.push_back(std::move(pw));
    g.parts.push_back(std::move(op));
    return ok;
  }

  // The operation graph of d: false where cuDNN refuses any part of it.
  static bool describe(cudnnHandle_t handle, const GraphConvDesc& d, Graph& g) {
    const cudnnDataType_t f32 = CUDNN_DATA_FLOAT;
    const std::array<int64_t, 4> out{d.n, d.k, d.out_h, d.out_w};
    // In id order (tensor_of): x, w, bias, residual, y, then the virtual float32 results of the ops.
    bool ok = tensor(g, kX, d.data, {d.n, d.c, d.h, d.w}, d.nhwc, false) &&
              tensor(g, kW, d.data, {d.k, d.c, d.r, d.s}, d.krsc_filter, false) &&
              tensor(g, kBias, f32, {1, d.k, 1, 1}, d.nhwc, false) && tensor(g, kResidual, d.data, out, d.nhwc, false) &&
              tensor(g, kY, d.data, out, d.nhwc, false) && tensor(g, kConvOut, f32, out, d.nhwc, true) &&
              tensor(g, kFirstOut, f32, out, d.nhwc, true) && tensor(g, kSecondOut, f32, out, d.nhwc, true);
    if (!ok) return false;
    Descriptor conv(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
    const int64_t spatial = 2, pads[2] = {d.pad_h, d.pad_w}, strides[2] = {d.stride_h, d.stride_w},
                  dilations[2] = {d.dilation_h, d.dilation_w};
    const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    ok = conv.set(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, &spatial) &&
         conv.set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, &f32) &&
         conv.set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, &mode) &&
         conv.set(CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, dilations, 2) &&
         conv.set(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, strides, 2) &&
         conv.set(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, pads, 2) &&
         conv.set(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, pads, 2) && conv.finalize();
    Descriptor forward(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
    const float alpha = 1.0f, beta = 0.0f;
    ok = ok && forward.set_descriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, tensor_of(g, kX)) &&
         forward.set_descriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, tensor_of(g, kW)) &&
         forward.set_descriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, tensor_of(g, kConvOut)) &&
         forward.set_descriptor(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, conv.d) &&
         forward.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, &alpha) &&
         forward.set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, &beta) && forward.finalize();
    std::vector<cudnnBackendDescriptor_t> ops{forward.d};
    g.parts.push_back(std::move(conv));
    g.parts.push_back(std::move(forward));
    if (!ok) return false;
    // conv + bias, then the residual and the activation in the program's order; the last op writes y.
    std::vector<std::pair<cudnnPointwiseMode_t, int64_t>> chain{{CUDNN_POINTWISE_ADD, kBias}};
    const std::pair<cudnnPointwiseMode_t, int64_t> add_residual{CUDNN_POINTWISE_ADD, kResidual},
        relu{CUDNN_POINTWISE_RELU_FWD, 0};
    if (d.residual && d.activation_after_residual) chain.push_back(add_residual);
    if (d.relu) chain.push_back(relu);
    if (d.residual && !d.activation_after_residual) chain.push_back(add_residual);
    const int64_t results[2] = {kFirstOut, kSecondOut};  // at most three ops: the last writes y
    int64_t from = kConvOut;
    for (size_t i = 0; i < chain.size(); ++i) {
      const int64_t to = i + 1 == chain.size() ? kY : results[i];
      if (!pointwise(g, chain[i].first, from, chain[i].second, to, d.relu_max, ops)) return false;
      from = to;
    }
    return g.graph.set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, ops.data(),
                       static_cast<int64_t>(ops.size())) &&
           g.graph.set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, &handle) && g.graph.finalize();
  }

  // Deterministic, and no transform (FFT, Winograd) or down-conversion of its inputs: as the legacy algorithms
  // kforge_cudnn.cuh takes.
  static bool acceptable(cudnnBackendDescriptor_t config) {
    Descriptor engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
    int64_t returned = 0;
    if (!engine.ok() || cudnnBackendGetAttribute(config, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                                 &returned, &engine.d) != CUDNN_STATUS_SUCCESS) {
      return false;
    }
    cudnnBackendNumericalNote_t notes[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
    if (cudnnBackendGetAttribute(engine.d, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                                 CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &returned, notes) != CUDNN_STATUS_SUCCESS) {
      return false;
    }
    for (int64_t i = 0; i < returned; ++i) {
      switch (notes[i]) {
        case CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC:
        case CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS:
        case CUDNN_NUMERICAL_NOTE_FFT:
        case CUDNN_NUMERICAL_NOTE_WINOGRAD:
        case CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_4x4:
        case CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_6x6:
        case CUDNN_NUMERICAL_NOTE_WINOGRAD_TILE_13x13:
          return false;
        default:
          break;
      }
    }
    return true;
  }

  std::map<Key, Entry> entries_;
};

}  // namespace cuda_conv
}  // namespace kforge

#endif  // KFORGE_CUDNN_GRAPH_CUH_
