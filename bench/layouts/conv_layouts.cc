// What planning activation layouts at generation time could save (issue 12): one oneDNN convolution (float32,
// inference, one thread) per layer shape, timed three ways:
//   nchw+reorders  the caller's NCHW tensors reordered into the layouts the primitive picks and back, as
//                  kernels/onednn/conv.cc does for its blocked variant today;
//   nhwc           the primitive created on NHWC tensors directly (no activation reorders);
//   blocked        the primitive's own layouts on both sides and no reorders: what a program whose values stay
//                  in that layout from one convolution to the next would pay.
// Filters are reordered once, outside the timing, in every case. Prints the median of --reps calls per layer,
// the three interleaved call by call, and the implementation oneDNN chose for each.
//   conv_layouts [--reps N]
#include <oneapi/dnnl/dnnl.hpp>

#include "thread_time.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace {

using dnnl::memory;
using tag = memory::format_tag;

struct Layer {
  const char* name;
  int64_t ic, hw, oc, k, stride, groups;
};

// resnet18 at 224x224 and mobilenet_v2 at 224x224 (batch 1).
const Layer kLayers[] = {
    {"resnet18 layer1 3x3 64", 64, 56, 64, 3, 1, 1},
    {"resnet18 layer2 3x3 128", 128, 28, 128, 3, 1, 1},
    {"resnet18 layer3 3x3 256", 256, 14, 256, 3, 1, 1},
    {"resnet18 layer4 3x3 512", 512, 7, 512, 3, 1, 1},
    {"mobilenet_v2 1x1 24->144", 24, 56, 144, 1, 1, 1},
    {"mobilenet_v2 dw 3x3 144", 144, 56, 144, 3, 1, 144},
    {"mobilenet_v2 1x1 144->24", 144, 56, 24, 1, 1, 1},
    {"mobilenet_v2 1x1 96->576", 96, 14, 576, 1, 1, 1},
    {"mobilenet_v2 dw 3x3 576", 576, 14, 576, 3, 1, 576},
    {"mobilenet_v2 1x1 576->96", 576, 14, 96, 1, 1, 1},
};

struct Case {
  dnnl::convolution_forward prim;
  memory src, weights, dst, user_src, user_dst;
  std::optional<dnnl::reorder> to_src, from_dst;
  std::string impl;
};

memory filled(const memory::desc& d, const dnnl::engine& eng) {
  memory m(d, eng);
  float* p = static_cast<float*>(m.get_data_handle());
  for (size_t i = 0; i < d.get_size() / sizeof(float); ++i) p[i] = static_cast<float>((i * 2654435761u) % 1000) / 1000.f - 0.5f;
  return m;
}

Case make_case(const Layer& l, tag src_tag, bool user_nchw, const dnnl::engine& eng, dnnl::stream& s) {
  const int64_t pad = l.k / 2, ohw = (l.hw + 2 * pad - l.k) / l.stride + 1;
  const memory::dims src_dims{1, l.ic, l.hw, l.hw}, dst_dims{1, l.oc, ohw, ohw};
  const memory::dims w_dims = l.groups == 1 ? memory::dims{l.oc, l.ic, l.k, l.k}
                                            : memory::dims{l.groups, l.oc / l.groups, l.ic / l.groups, l.k, l.k};
  const auto f32 = memory::data_type::f32;
  memory::desc src_md(src_dims, f32, src_tag), dst_md(dst_dims, f32, src_tag), w_md(w_dims, f32, tag::any);
  dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                       src_md, w_md, dst_md, {l.stride, l.stride}, {pad, pad}, {pad, pad});
  dnnl::convolution_forward::primitive_desc pd(desc, eng);
  Case c;
  c.prim = dnnl::convolution_forward(pd);
  c.impl = pd.impl_info_str();
  c.src = filled(pd.src_desc(), eng);
  c.dst = memory(pd.dst_desc(), eng);
  memory user_w = filled(memory::desc(w_dims, f32, l.groups == 1 ? tag::oihw : tag::goihw), eng);
  c.weights = memory(pd.weights_desc(), eng);
  dnnl::reorder(user_w, c.weights).execute(s, user_w, c.weights);
  if (user_nchw) {
    c.user_src = filled(memory::desc(src_dims, f32, tag::nchw), eng);
    c.user_dst = memory(memory::desc(dst_dims, f32, tag::nchw), eng);
    c.to_src = dnnl::reorder(c.user_src, c.src);
    c.from_dst = dnnl::reorder(c.dst, c.user_dst);
  }
  s.wait();
  return c;
}

void run(Case& c, dnnl::stream& s) {
  if (c.to_src) c.to_src->execute(s, c.user_src, c.src);
  c.prim.execute(s, {{DNNL_ARG_SRC, c.src}, {DNNL_ARG_WEIGHTS, c.weights}, {DNNL_ARG_DST, c.dst}});
  if (c.from_dst) c.from_dst->execute(s, c.dst, c.user_dst);
  s.wait();
}

}  // namespace

extern "C" void omp_set_num_threads(int);

int main(int argc, char** argv) {
  int reps = 30;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--reps") == 0) reps = std::max(1, std::atoi(argv[i + 1]));
  }
  omp_set_num_threads(1);
  dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  dnnl::stream s(eng);
  std::printf("| layer (224x224 model, batch 1) | NCHW + reorders ms | NHWC ms | blocked ms | NHWC impl | blocked impl |\n");
  std::printf("|---|---:|---:|---:|---|---|\n");
  double sums[3] = {0, 0, 0};
  for (const Layer& l : kLayers) {
    Case cases[3] = {make_case(l, tag::any, true, eng, s), make_case(l, tag::nhwc, false, eng, s),
                     make_case(l, tag::any, false, eng, s)};
    std::vector<double> times[3];
    for (Case& c : cases) run(c, s);  // warm-up
    for (int r = 0; r < reps; ++r) {
      for (int j = 0; j < 3; ++j) {
        Case& c = cases[(j + r) % 3];
        const double t0 = now_ms();
        run(c, s);
        times[(j + r) % 3].push_back(now_ms() - t0);
      }
    }
    double m[3];
    for (int j = 0; j < 3; ++j) sums[j] += (m[j] = median(times[j]));
    std::printf("| %s | %.3f | %.3f | %.3f | %s | %s |\n", l.name, m[0], m[1], m[2], cases[1].impl.c_str(),
                cases[2].impl.c_str());
  }
  std::printf("| **sum** | %.3f | %.3f (%.2fx) | %.3f (%.2fx) | | |\n", sums[0], sums[1], sums[0] / sums[1], sums[2],
              sums[0] / sums[2]);
  return 0;
}
