// The kernel library's reference loops against its oneDNN paths on resnet18-like layers (and a few mobilenet_v2
// depthwise ones), batch 1, one thread: thread CPU time per call, the variants interleaved call by call so that
// the shared machine's load hits them alike (in a rotating order: the one after the reference loops finds its data
// evicted); the ratios are the result, not the absolute times.
//
//   bench/kernels/run.sh [BUILD_DIR] [REPS] [--size 64|224]
//
// Variants: "reference" (kernels/reference.h), "onednn" (the public kernel, filter not declared constant: the plain
// primitive or a reorder of the filter per call), "onednn+const" (filter declared constant: reordered once).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "kforge_kernels.h"
#include "onednn/onednn.h"
#include "reference.h"

using namespace kforge;
namespace k = kforge::kernels;

namespace {

double thread_ms() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) * 1e-6;
}

Tensor random_tensor(std::vector<int64_t> dims, uint32_t seed) {
  Tensor t;
  t.dtype = DataType::kFloat32;
  if (!t.set_dims(dims).ok() || !t.allocate().ok()) std::abort();
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  for (int64_t i = 0; i < t.numel(); ++i) t.data_as<float>()[i] = dist(rng);
  return t;
}

void must(const Status& s) {
  if (!s.ok()) {
    std::fprintf(stderr, "kernel failed: %s\n", s.message().c_str());
    std::exit(1);
  }
}

struct Layer {
  std::string name;
  std::function<void(int variant)> run;  // 0 reference, 1 onednn, 2 onednn+const
  std::string impl;
};

const KernelContext kCtx{CPUPlace(), DataType::kFloat32, nullptr, nullptr};

Layer conv_layer(const std::string& name, int64_t c, int64_t hw, int64_t oc, int64_t k, int stride, int pad,
                 int groups = 1) {
  auto input = std::make_shared<Tensor>(random_tensor({1, c, hw, hw}, 1));
  auto filter = std::make_shared<Tensor>(random_tensor({oc, c / groups, k, k}, 2));
  auto constant = std::make_shared<Tensor>(random_tensor({oc, c / groups, k, k}, 2));  // its own memory
  k::declare_constant(constant->data, constant->bytes());
  const int64_t out_hw = (hw + 2 * pad - k) / stride + 1;
  auto out = std::make_shared<Tensor>(random_tensor({1, oc, out_hw, out_hw}, 3));
  const std::vector<int> strides{stride, stride}, pads{pad, pad}, dil{1, 1};
  Layer layer;
  layer.name = name;
  layer.run = [=](int variant) {
    if (variant == 0) {
      must(k::reference::conv2d(kCtx, *input, *filter, strides, pads, "EXPLICIT", dil, groups, "NCHW", out.get()));
    } else {
      must(k::conv2d(kCtx, *input, variant == 2 ? *constant : *filter, strides, pads, "EXPLICIT", dil, groups, "NCHW",
                     out.get()));
    }
  };
  layer.run(1);
  const k::onednn::ConvPlanInfo plain = k::onednn::last_conv_plan();
  layer.run(2);
  layer.impl = std::string(plain.blocked ? "blocked " : "plain ") + plain.impl + " / const " +
               k::onednn::last_conv_plan().impl;
  return layer;
}

Layer pool_layer(const std::string& name, int64_t c, int64_t hw, int64_t k, int stride, int pad, bool adaptive_avg) {
  auto x = std::make_shared<Tensor>(random_tensor({1, c, hw, hw}, 4));
  const int64_t out_hw = adaptive_avg ? 1 : (hw + 2 * pad - k) / stride + 1;
  auto out = std::make_shared<Tensor>(random_tensor({1, c, out_hw, out_hw}, 5));
  const IntArray kernel = adaptive_avg ? IntArray{1, 1} : IntArray{k, k};
  const std::vector<int> strides{stride, stride}, pads{pad, pad};
  const std::string type = adaptive_avg ? "avg" : "max";
  Layer layer;
  layer.name = name;
  layer.run = [=](int variant) {
    auto fn = variant == 0 ? k::reference::pool2d : k::pool2d;
    must(fn(kCtx, *x, kernel, strides, pads, false, true, "NCHW", type, false, adaptive_avg, "EXPLICIT", out.get()));
  };
  layer.impl = "pooling";
  return layer;
}

Layer fc_layer(const std::string& name, int64_t m, int64_t kdim, int64_t n) {
  auto x = std::make_shared<Tensor>(random_tensor({m, kdim}, 6));
  auto y = std::make_shared<Tensor>(random_tensor({kdim, n}, 7));
  auto out = std::make_shared<Tensor>(random_tensor({m, n}, 8));
  Layer layer;
  layer.name = name;
  layer.run = [=](int variant) {
    auto fn = variant == 0 ? k::reference::matmul : k::matmul;
    must(fn(kCtx, *x, *y, false, false, out.get()));
  };
  layer.impl = "matmul";
  return layer;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int reps = 15;
  int64_t size = 64;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--size") == 0 && i + 1 < argc) {
      size = std::atoi(argv[++i]);
    } else {
      reps = std::atoi(argv[i]);
    }
  }
  if (!k::has_onednn()) {
    std::fprintf(stderr, "this kernel library was built without oneDNN\n");
    return 1;
  }
  k::set_num_threads(1);
  const int64_t s = size;  // resnet18 input; the stem halves it, the max pool again, each stage after that
  std::vector<Layer> layers = {
      conv_layer("stem conv 7x7/2 3->64", 3, s, 64, 7, 2, 3),
      pool_layer("max pool 3x3/2", 64, s / 2, 3, 2, 1, false),
      conv_layer("layer1 conv 3x3 64", 64, s / 4, 64, 3, 1, 1),
      conv_layer("layer2 conv 3x3/2 64->128", 64, s / 4, 128, 3, 2, 1),
      conv_layer("layer2 down 1x1/2 64->128", 64, s / 4, 128, 1, 2, 0),
      conv_layer("layer2 conv 3x3 128", 128, s / 8, 128, 3, 1, 1),
      conv_layer("layer3 conv 3x3 256", 256, s / 16, 256, 3, 1, 1),
      conv_layer("layer4 conv 3x3 512", 512, s / 32, 512, 3, 1, 1),
      pool_layer("global avg pool 512", 512, s / 32, 1, 1, 0, true),
      fc_layer("fc 512->1000", 1, 512, 1000),
      conv_layer("mbv2 dw 3x3 144", 144, s / 8, 144, 3, 1, 1, 144),
      conv_layer("mbv2 pw 1x1 144->32", 144, s / 8, 32, 1, 1, 0),
  };
  std::printf("kernel bench: %lld x %lld input, batch 1, 1 thread, %d interleaved reps, median thread CPU ms\n",
              static_cast<long long>(s), static_cast<long long>(s), reps);
  std::printf("%-28s %11s %11s %13s %9s %9s  %s\n", "layer", "reference", "onednn", "onednn+const", "ref/dnn",
              "ref/const", "implementation (not declared / declared)");
  double total[3] = {0, 0, 0};
  for (Layer& layer : layers) {
    const int variants = layer.impl == "pooling" || layer.impl == "matmul" ? 2 : 3;
    for (int v = 0; v < variants; ++v) layer.run(v);  // warm-up: plans, caches
    std::vector<double> times[3];
    for (int r = 0; r < reps; ++r) {
      for (int i = 0; i < variants; ++i) {
        const int v = (r + i) % variants;  // rotated, so that no variant always runs right after the slow loops
        const double t0 = thread_ms();
        layer.run(v);
        times[v].push_back(thread_ms() - t0);
      }
    }
    double med[3];
    for (int v = 0; v < 3; ++v) med[v] = v < variants ? median(times[v]) : median(times[1]);
    for (int v = 0; v < 3; ++v) total[v] += med[v];
    std::printf("%-28s %11.4f %11.4f %13.4f %9.1f %9.1f  %s\n", layer.name.c_str(), med[0], med[1], med[2],
                med[0] / med[1], med[0] / med[2], layer.impl.c_str());
  }
  std::printf("%-28s %11.4f %11.4f %13.4f %9.1f %9.1f\n", "sum", total[0], total[1], total[2], total[0] / total[1],
              total[0] / total[2]);
  return 0;
}
