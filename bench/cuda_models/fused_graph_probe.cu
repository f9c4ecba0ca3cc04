// Probe (issue 35, 16-bit CNNs): can cuDNN 9's graph API run a convolution and its epilogue -- bias, optional
// residual, ReLU -- as one kernel at resnet50's shapes in float16 NHWC, and is that faster than the convolution alone
// followed by a separate epilogue kernel (what kforge runs today: kforge_channel_epilogue.cuh)? For each shape it
// builds two operation graphs through the backend API: the convolution alone (16-bit output, as the legacy call)
// and the convolution -> add bias -> [add residual] -> relu chain, asks the heuristics (mode A, then the fallback
// list) for engine configurations, finalizes up to kMaxPlans of each, times every plan (20 calls in a CUDA graph,
// median of 7 launches) and prints the best of each beside the epilogue kernel's time, and how long the fused
// graph's plans took to build (host). It also checks the fused result against the unfused one on random data.
// BENCHMARKS.md, "16-bit CNNs: the epilogue inside the convolution".
//
//   source bench/cudnn_env.sh; use_wheel_cudnn
//   nvcc -arch=sm_90 -std=c++20 -O2 -I $CUDNN_DIR/include -L $CUDNN_DIR/lib bench/cuda_models/fused_graph_probe.cu \
//     -o fused_graph_probe -l:libcudnn.so.9 && ./fused_graph_probe [batch...]
#include <cuda_fp16.h>
#include <cudnn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                                          \
  do {                                                                                 \
    cudnnStatus_t s_ = (x);                                                            \
    if (s_ != CUDNN_STATUS_SUCCESS) {                                                  \
      std::printf("%s:%d: %s -> %s\n", __FILE__, __LINE__, #x, cudnnGetErrorString(s_)); \
      std::exit(1);                                                                    \
    }                                                                                  \
  } while (0)

namespace {

constexpr int kMaxPlans = 12;
cudnnHandle_t handle;
cudaStream_t stream;

struct Desc {
  cudnnBackendDescriptor_t d = nullptr;
  explicit Desc(cudnnBackendDescriptorType_t t) { CK(cudnnBackendCreateDescriptor(t, &d)); }
  Desc(const Desc&) = delete;
  ~Desc() { cudnnBackendDestroyDescriptor(d); }
  template <typename T>
  void set(cudnnBackendAttributeName_t a, cudnnBackendAttributeType_t t, const T* v, int64_t n = 1) {
    CK(cudnnBackendSetAttribute(d, a, t, n, v));
  }
  void set_desc(cudnnBackendAttributeName_t a, const Desc& o) {
    CK(cudnnBackendSetAttribute(d, a, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &o.d));
  }
  cudnnStatus_t finalize() { return cudnnBackendFinalize(d); }
};

// An NHWC tensor of dims [n, c, h, w] (cuDNN's order), uid given, virtual if not in memory.
Desc* tensor(int64_t uid, cudnnDataType_t dt, int64_t n, int64_t c, int64_t h, int64_t w, bool virt = false) {
  auto* t = new Desc(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  int64_t dims[4] = {n, c, h, w}, strides[4] = {h * w * c, 1, w * c, c}, align = 16;
  bool v = virt;
  t->set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, &dt);
  t->set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, dims, 4);
  t->set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, strides, 4);
  t->set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, &uid);
  t->set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, &align);
  t->set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, &v);
  CK(t->finalize());
  return t;
}

Desc* pointwise_op(cudnnPointwiseMode_t mode, const Desc& x, const Desc* b, const Desc& y) {
  Desc pw(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
  cudnnDataType_t prec = CUDNN_DATA_FLOAT;
  pw.set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, &mode);
  pw.set(CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, &prec);
  CK(pw.finalize());
  auto* op = new Desc(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
  op->set_desc(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw);
  op->set_desc(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x);
  if (b) op->set_desc(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, *b);
  op->set_desc(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y);
  CK(op->finalize());
  return op;
}

struct Shape {
  int n, c, hw, k, r, stride;
  bool residual;
  int count;  // how many of resnet50's convolutions have this shape
};

enum Uid : int64_t { kX = 1, kW, kY, kBias, kRes, kConvOut, kBiasOut, kResOut };

struct Plans {
  std::vector<cudnnBackendDescriptor_t> plans;
  std::vector<int64_t> workspaces;
};

// Every engine configuration the heuristics give (mode A, then the fallback list) that finalizes into a plan.
Plans make_plans(const std::vector<Desc*>& ops) {
  Desc graph(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  std::vector<cudnnBackendDescriptor_t> raw;
  for (auto* o : ops) raw.push_back(o->d);
  graph.set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, raw.data(), raw.size());
  graph.set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, &handle);
  CK(graph.finalize());
  Plans out;
  for (cudnnBackendHeurMode_t mode : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
    Desc heur(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    heur.set_desc(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph);
    heur.set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, &mode);
    if (heur.finalize() != CUDNN_STATUS_SUCCESS) continue;
    int64_t count = 0;
    CK(cudnnBackendGetAttribute(heur.d, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count,
                                nullptr));
    std::vector<cudnnBackendDescriptor_t> cfgs(count);
    for (auto& c : cfgs) CK(cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, &c));
    CK(cudnnBackendGetAttribute(heur.d, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &count,
                                cfgs.data()));
    for (int64_t i = 0; i < count && int(out.plans.size()) < kMaxPlans; ++i) {
      cudnnBackendDescriptor_t plan;
      CK(cudnnBackendCreateDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &plan));
      CK(cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle));
      CK(cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                  &cfgs[i]));
      if (cudnnBackendFinalize(plan) != CUDNN_STATUS_SUCCESS) {
        cudnnBackendDestroyDescriptor(plan);
        continue;
      }
      int64_t ws = 0, n = 0;
      CK(cudnnBackendGetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &n, &ws));
      out.plans.push_back(plan);
      out.workspaces.push_back(ws);
    }
    for (auto& c : cfgs) cudnnBackendDestroyDescriptor(c);
  }
  return out;
}

cudnnStatus_t execute(cudnnBackendDescriptor_t plan, const std::vector<int64_t>& uids, std::vector<void*> ptrs,
                      void* work) {
  Desc pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, uids.data(), uids.size());
  pack.set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, ptrs.data(), ptrs.size());
  pack.set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, &work);
  if (auto s = pack.finalize(); s != CUDNN_STATUS_SUCCESS) return s;
  return cudnnBackendExecute(handle, plan, pack.d);
}

// GPU time per call: 20 calls captured in a CUDA graph (as kforge's --cuda-graph runs them, so the host's cost of
// building a variant pack and launching is not measured), the median of 7 launches of the graph.
template <typename F>
float time_us(F f) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  f();
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal);
  for (int i = 0; i < 20; ++i) f();
  if (cudaStreamEndCapture(stream, &graph) != cudaSuccess ||
      cudaGraphInstantiate(&exec, graph, 0) != cudaSuccess) {
    std::printf("capture failed: %s\n", cudaGetErrorString(cudaGetLastError()));
    return 1e30f;
  }
  cudaGraphLaunch(exec, stream);
  std::vector<float> runs;
  for (int r = 0; r < 7; ++r) {
    cudaEventRecord(a, stream);
    cudaGraphLaunch(exec, stream);
    cudaEventRecord(b, stream);
    cudaEventSynchronize(b);
    float ms;
    cudaEventElapsedTime(&ms, a, b);
    runs.push_back(ms * 1000 / 20);
  }
  std::sort(runs.begin(), runs.end());
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return runs[3];
}

// kforge's epilogue, as kforge_channel_epilogue.cuh does it in 16 bits: y = relu(conv + bias [+ residual]), 8
// channels a thread.
__global__ void epilogue(const __half* conv, const __half* bias, const __half* res, __half* y, int64_t n8, int k8) {
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= n8) return;
  uint4 c = reinterpret_cast<const uint4*>(conv)[i], b = reinterpret_cast<const uint4*>(bias)[i % k8], r{};
  if (res) r = reinterpret_cast<const uint4*>(res)[i];
  const __half* cv = reinterpret_cast<const __half*>(&c);
  const __half* bv = reinterpret_cast<const __half*>(&b);
  const __half* rv = reinterpret_cast<const __half*>(&r);
  uint4 o;
  __half* ov = reinterpret_cast<__half*>(&o);
  for (int j = 0; j < 8; ++j) {
    float v = __half2float(cv[j]) + __half2float(bv[j]) + (res ? __half2float(rv[j]) : 0.0f);
    ov[j] = __float2half(v > 0 ? v : 0);
  }
  reinterpret_cast<uint4*>(y)[i] = o;
}

__global__ void fill(__half* p, int64_t n, uint32_t seed, float scale) {
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  uint32_t h = uint32_t(i) * 2654435761u ^ seed;
  h ^= h >> 13;
  h *= 0x5bd1e995u;
  h ^= h >> 15;
  p[i] = __float2half((float(h & 0xffff) / 65535.0f - 0.5f) * scale);
}

__half* alloc(size_t n, uint32_t seed, float scale) {
  __half* p;
  cudaMalloc(&p, n * 2);
  fill<<<(n + 255) / 256, 256, 0, stream>>>(p, n, seed, scale);
  return p;
}

void run(const Shape& s, double& total_unfused, double& total_fused) {
  const int pad = s.r / 2, oh = (s.hw + 2 * pad - s.r) / s.stride + 1;
  const size_t xs = size_t(s.n) * s.c * s.hw * s.hw, ws = size_t(s.k) * s.c * s.r * s.r,
               ys = size_t(s.n) * s.k * oh * oh;
  __half *x = alloc(xs, 1, 2.0f), *w = alloc(ws, 2, 2.0f / std::sqrt(float(s.c * s.r * s.r))),
         *bias = alloc(s.k, 3, 0.5f), *res = alloc(ys, 4, 1.0f), *tmp = alloc(ys, 5, 0),
         *y0 = alloc(ys, 6, 0), *y1 = alloc(ys, 7, 0);
  void* work;
  const size_t work_bytes = size_t(256) << 20;
  cudaMalloc(&work, work_bytes);

  const cudnnDataType_t h = CUDNN_DATA_HALF, f = CUDNN_DATA_FLOAT;
  Desc conv(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  {
    int64_t dims = 2, pads[2] = {pad, pad}, strides[2] = {s.stride, s.stride}, dil[2] = {1, 1};
    cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    conv.set(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, &dims);
    conv.set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, &f);
    conv.set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, &mode);
    conv.set(CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, dil, 2);
    conv.set(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, strides, 2);
    conv.set(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, pads, 2);
    conv.set(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, pads, 2);
    CK(conv.finalize());
  }
  auto conv_op = [&](const Desc& xd, const Desc& wd, const Desc& yd) {
    auto* op = new Desc(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
    float alpha = 1, beta = 0;
    op->set_desc(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, xd);
    op->set_desc(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, wd);
    op->set_desc(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, yd);
    op->set_desc(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, conv);
    op->set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, &alpha);
    op->set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, &beta);
    CK(op->finalize());
    return op;
  };
  Desc* xd = tensor(kX, h, s.n, s.c, s.hw, s.hw);
  Desc* wd = tensor(kW, h, s.k, s.c, s.r, s.r);
  Desc* yd = tensor(kY, h, s.n, s.k, oh, oh);
  Desc* bd = tensor(kBias, h, 1, s.k, 1, 1);
  Desc* rd = tensor(kRes, h, s.n, s.k, oh, oh);
  Desc* cv = tensor(kConvOut, f, s.n, s.k, oh, oh, true);
  Desc* bv = tensor(kBiasOut, f, s.n, s.k, oh, oh, true);
  Desc* av = tensor(kResOut, f, s.n, s.k, oh, oh, true);

  // The convolution alone: 16-bit output, then the epilogue kernel.
  Desc* alone = conv_op(*xd, *wd, *yd);
  Plans p0 = make_plans({alone});
  // The chain: conv -> + bias -> [+ residual] -> relu.
  std::vector<Desc*> chain{conv_op(*xd, *wd, *cv), pointwise_op(CUDNN_POINTWISE_ADD, *cv, bd, *bv)};
  if (s.residual) chain.push_back(pointwise_op(CUDNN_POINTWISE_ADD, *bv, rd, *av));
  chain.push_back(pointwise_op(CUDNN_POINTWISE_RELU_FWD, s.residual ? *av : *bv, nullptr, *yd));
  const auto build_start = std::chrono::steady_clock::now();
  Plans p1 = make_plans(chain);
  const double build_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - build_start).count();

  const int64_t n8 = ys / 8;
  const int k8 = s.k / 8;
  float best0 = 1e30f, best1 = 1e30f;
  int best1_at = -1;
  for (size_t i = 0; i < p0.plans.size(); ++i) {
    if (size_t(p0.workspaces[i]) > work_bytes) continue;
    if (execute(p0.plans[i], {kX, kW, kY}, {x, w, tmp}, work) != CUDNN_STATUS_SUCCESS) continue;
    best0 = std::min(best0, time_us([&] { execute(p0.plans[i], {kX, kW, kY}, {x, w, tmp}, work); }));
  }
  const float epi = time_us([&] {
    epilogue<<<(n8 + 255) / 256, 256, 0, stream>>>(tmp, bias, s.residual ? res : nullptr, y0, n8, k8);
  });
  std::vector<int64_t> uids{kX, kW, kBias, kY};
  std::vector<void*> ptrs{x, w, bias, y1};
  if (s.residual) {
    uids.push_back(kRes);
    ptrs.push_back(res);
  }
  for (size_t i = 0; i < p1.plans.size(); ++i) {
    if (size_t(p1.workspaces[i]) > work_bytes) continue;
    if (execute(p1.plans[i], uids, ptrs, work) != CUDNN_STATUS_SUCCESS) continue;
    float t = time_us([&] { execute(p1.plans[i], uids, ptrs, work); });
    if (t < best1) best1 = t, best1_at = int(i);
  }
  // Agreement: the best fused plan's output against conv + epilogue.
  double max_diff = -1;
  if (best1_at >= 0) {
    execute(p1.plans[best1_at], uids, ptrs, work);
    execute(p0.plans[0], {kX, kW, kY}, {x, w, tmp}, work);
    epilogue<<<(n8 + 255) / 256, 256, 0, stream>>>(tmp, bias, s.residual ? res : nullptr, y0, n8, k8);
    std::vector<__half> a(ys), b(ys);
    cudaMemcpy(a.data(), y0, ys * 2, cudaMemcpyDeviceToHost);
    cudaMemcpy(b.data(), y1, ys * 2, cudaMemcpyDeviceToHost);
    max_diff = 0;
    for (size_t i = 0; i < ys; ++i)
      max_diff = std::max(max_diff, double(std::fabs(__half2float(a[i]) - __half2float(b[i]))));
  }
  std::printf("n%-2d c%-4d %3dx%-3d k%-4d %dx%d s%d %s x%d | plans %2zu / %2zu | conv %7.1f + epilogue %6.1f = %7.1f us"
              " | fused %7.1f us (%.2fx) | max diff %.3g | fused plans built in %.0f ms\n",
              s.n, s.c, s.hw, s.hw, s.k, s.r, s.r, s.stride, s.residual ? "res" : "   ", s.count, p0.plans.size(),
              p1.plans.size(), best0, epi, best0 + epi, best1, best1 / (best0 + epi), max_diff, build_ms);
  total_unfused += s.count * double(best0 + epi);
  total_fused += s.count * double(best1_at >= 0 ? std::min(best1, best0 + epi) : best0 + epi);
  for (auto pl : p0.plans) cudnnBackendDestroyDescriptor(pl);
  for (auto pl : p1.plans) cudnnBackendDestroyDescriptor(pl);
  for (auto* d : chain) delete d;
  for (auto* d : {alone, xd, wd, yd, bd, rd, cv, bv, av}) delete d;
  for (void* p : {(void*)x, (void*)w, (void*)bias, (void*)res, (void*)tmp, (void*)y0, (void*)y1, work}) cudaFree(p);
}

}  // namespace

int main(int argc, char** argv) {
  CK(cudnnCreate(&handle));
  cudaStreamCreate(&stream);
  CK(cudnnSetStream(handle, stream));
  std::printf("cuDNN %zu\n", cudnnGetVersion());
  std::vector<int> batches;
  for (int i = 1; i < argc; ++i) batches.push_back(std::atoi(argv[i]));
  if (batches.empty()) batches = {10, 1};
  for (int n : batches) {
    // resnet50's bottleneck convolutions (the stem and the classifier aside): c, hw, k, r, stride, residual, count.
    const Shape shapes[] = {
        {n, 64, 56, 64, 1, 1, false, 1},     {n, 64, 56, 64, 3, 1, false, 3},    {n, 64, 56, 256, 1, 1, true, 3},
        {n, 64, 56, 256, 1, 1, false, 1},    {n, 256, 56, 64, 1, 1, false, 2},   {n, 256, 56, 128, 1, 1, false, 1},
        {n, 128, 56, 128, 3, 2, false, 1},   {n, 128, 28, 512, 1, 1, true, 4},   {n, 256, 56, 512, 1, 2, false, 1},
        {n, 512, 28, 128, 1, 1, false, 3},   {n, 128, 28, 128, 3, 1, false, 3},  {n, 512, 28, 256, 1, 1, false, 1},
        {n, 256, 28, 256, 3, 2, false, 1},   {n, 256, 14, 1024, 1, 1, true, 6},  {n, 512, 28, 1024, 1, 2, false, 1},
        {n, 1024, 14, 256, 1, 1, false, 5},  {n, 256, 14, 256, 3, 1, false, 5},  {n, 1024, 14, 512, 1, 1, false, 1},
        {n, 512, 14, 512, 3, 2, false, 1},   {n, 512, 7, 2048, 1, 1, true, 3},   {n, 1024, 14, 2048, 1, 2, false, 1},
        {n, 2048, 7, 512, 1, 1, false, 2},   {n, 512, 7, 512, 3, 1, false, 2},
    };
    double unfused = 0, fused = 0;
    for (const auto& s : shapes) run(s, unfused, fused);
    std::printf("batch %d: resnet50's bottlenecks, summed by count: conv + epilogue %.1f us, best of each %.1f us "
                "(%.2fx)\n\n",
                n, unfused, fused, fused / unfused);
  }
  std::printf("cuda error: %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
}
