// Whether resnet50's 1 x 1 convolutions at a 64 x 64 input (issue 12: the model furthest behind ONNX Runtime,
// 86 % of its time in oneDNN's brgconv) run faster in another oneDNN form. Each stride-1 1 x 1 convolution of the
// model (NHWC, batch 1, one thread, bias and relu post-ops, weights in the primitive's own layout, reordered
// outside the timing) three ways:
//   conv   a convolution_forward on NHWC tensors (what kernels/onednn/conv.cc runs: brgconv_1x1);
//   ip     an inner product of [H*W, C_in] by [C_out, C_in] (the form of the classifiers' packed matmuls);
//   mm     a matmul of [H*W, C_in] by [C_in, C_out].
// "model order" times the 32 layers one after the other as the model runs them (37 MB of weights: they come from
// memory, not cache), the three forms interleaved round by round; then each layer shape alone (warm caches).
// Medians of --reps rounds of thread CPU time.
//   g++ -std=c++17 -O2 bench/layouts/pointwise_forms.cc -ldnnl -o pointwise_forms && ./pointwise_forms [reps]
#include <oneapi/dnnl/dnnl.hpp>

#include "thread_time.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

using dnnl::memory;
using tag = memory::format_tag;

struct Layer {
  int64_t ic, hw, oc;
  int count;  // how many times resnet50 has this shape
};

// resnet50 (paddle.vision) at 64 x 64: the stride-1 1 x 1 convolutions of its four stages (16, 8, 4, 2 pixels).
const Layer kLayers[] = {{64, 16, 64, 1},   {64, 16, 256, 3},  {256, 16, 64, 2},  {256, 16, 128, 1},
                         {128, 8, 512, 4},  {512, 8, 128, 3},  {512, 8, 256, 1},  {256, 4, 1024, 6},
                         {1024, 4, 256, 5}, {1024, 4, 512, 1}, {512, 2, 2048, 3}, {2048, 2, 512, 2}};
constexpr int kForms = 3;
const char* const kFormNames[kForms] = {"conv", "ip", "mm"};

memory filled(const memory::desc& d, const dnnl::engine& eng) {
  memory m(d, eng);
  float* p = static_cast<float*>(m.get_data_handle());
  for (size_t i = 0; i < d.get_size() / sizeof(float); ++i) {
    p[i] = static_cast<float>((i * 2654435761u) % 1000) / 1000.f - 0.5f;
  }
  return m;
}

struct Primitive {
  dnnl::primitive prim;
  std::unordered_map<int, memory> args;
  std::string impl;
  void run(dnnl::stream& s) { prim.execute(s, args); }
};

Primitive form(int f, const Layer& l, const dnnl::primitive_attr& attr, const dnnl::engine& eng) {
  const auto f32 = memory::data_type::f32;
  const int64_t m = l.hw * l.hw;
  auto with_args = [&](dnnl::primitive p, const memory::desc& src, const memory::desc& w, const memory::desc& b,
                       const memory::desc& dst, const char* impl) {
    return Primitive{p,
                     {{DNNL_ARG_SRC, filled(src, eng)},
                      {DNNL_ARG_WEIGHTS, filled(w, eng)},
                      {DNNL_ARG_BIAS, filled(b, eng)},
                      {DNNL_ARG_DST, filled(dst, eng)}},
                     impl};
  };
  if (f == 0) {
    const memory::desc src({1, l.ic, l.hw, l.hw}, f32, tag::nhwc), dst({1, l.oc, l.hw, l.hw}, f32, tag::nhwc),
        w({l.oc, l.ic, 1, 1}, f32, tag::any), b({l.oc}, f32, tag::x);
    const dnnl::convolution_forward::desc d(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                            src, w, b, dst, {1, 1}, {0, 0}, {0, 0});
    const dnnl::convolution_forward::primitive_desc pd(d, attr, eng);
    return with_args(dnnl::convolution_forward(pd), src, pd.weights_desc(), b, dst, pd.impl_info_str());
  }
  if (f == 1) {
    const memory::desc src({m, l.ic}, f32, tag::nc), dst({m, l.oc}, f32, tag::nc), w({l.oc, l.ic}, f32, tag::any),
        b({l.oc}, f32, tag::x);
    const dnnl::inner_product_forward::desc d(dnnl::prop_kind::forward_inference, src, w, b, dst);
    const dnnl::inner_product_forward::primitive_desc pd(d, attr, eng);
    return with_args(dnnl::inner_product_forward(pd), src, pd.weights_desc(), b, dst, pd.impl_info_str());
  }
  const memory::desc src({m, l.ic}, f32, tag::ab), dst({m, l.oc}, f32, tag::ab), w({l.ic, l.oc}, f32, tag::any),
      b({1, l.oc}, f32, tag::ab);
  const dnnl::matmul::desc d(src, w, b, dst);
  const dnnl::matmul::primitive_desc pd(d, attr, eng);
  return with_args(dnnl::matmul(pd), src, pd.weights_desc(), b, dst, pd.impl_info_str());
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 15;
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream s(eng);
  dnnl::primitive_attr attr;
  dnnl::post_ops relu;
  relu.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
  attr.set_post_ops(relu);

  std::vector<Primitive> forms[kForms];  // per form: every layer of the model, in order
  for (const Layer& l : kLayers) {
    for (int c = 0; c < l.count; ++c) {
      for (int f = 0; f < kForms; ++f) forms[f].push_back(form(f, l, attr, eng));
    }
  }
  for (auto& f : forms) {
    for (Primitive& p : f) p.run(s);  // warm-up: oneDNN finishes its lazy setup on the first execution
  }
  std::vector<double> model[kForms];
  for (int r = 0; r < reps; ++r) {
    for (int k = 0; k < kForms; ++k) {
      const int f = (k + r) % kForms;  // rotate which form goes first
      const double t0 = now_ms();
      for (Primitive& p : forms[f]) p.run(s);
      model[f].push_back(now_ms() - t0);
    }
  }
  size_t weight_bytes = 0;
  for (Primitive& p : forms[0]) weight_bytes += p.args.at(DNNL_ARG_WEIGHTS).get_desc().get_size();
  std::printf("model order (%zu layers, %.1f MB of weights):", forms[0].size(), weight_bytes / 1e6);
  for (int f = 0; f < kForms; ++f) std::printf("  %s %.3f ms", kFormNames[f], median(model[f]));
  std::printf("\n\n| layer | count | conv ms | ip ms | mm ms | conv impl | ip impl | mm impl |\n|---|---:|---:|---:|---:|---|---|---|\n");
  size_t first = 0;
  for (const Layer& l : kLayers) {
    std::vector<double> alone[kForms];
    for (int r = 0; r < reps; ++r) {
      for (int k = 0; k < kForms; ++k) {
        const int f = (k + r) % kForms;
        const double t0 = now_ms();
        forms[f][first].run(s);
        alone[f].push_back(now_ms() - t0);
      }
    }
    std::printf("| %ld -> %ld at %ldx%ld | %d | %.4f | %.4f | %.4f | %s | %s | %s |\n", static_cast<long>(l.ic),
                static_cast<long>(l.oc), static_cast<long>(l.hw), static_cast<long>(l.hw), l.count, median(alone[0]),
                median(alone[1]), median(alone[2]), forms[0][first].impl.c_str(), forms[1][first].impl.c_str(),
                forms[2][first].impl.c_str());
    first += l.count;
  }
  return 0;
}
