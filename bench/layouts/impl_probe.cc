// Which implementation a oneDNN build picks for the convolutions kernels/onednn asks for where oneDNN 2.6 had only
// its reference one (`ref:any`, which a plan never uses): the epilogue orders of conv2d_fused (batch norm as two
// per-channel binary post-ops, relu, the residual as a sum post-op) and an NHWC output chunk written into its slice
// of a wider tensor (a strided destination: the output-channel chunks of a task, conv2d_fused's out_pixel_stride).
// 64 -> 64 channels (128 for the slice, 32 or 64 of them, pixels 160 apart) at 14 x 14, 1 x 1 and 3 x 3; builds
// against oneDNN 2.x and 3.x (BENCHMARKS.md, "oneDNN 2026.1 (PyPI) against Debian's 2.6.3").
//   g++ -std=c++17 -O2 bench/layouts/impl_probe.cc -ldnnl -o impl_probe && ONEDNN_MAX_CPU_ISA=AVX2 ./impl_probe
#include <oneapi/dnnl/dnnl.hpp>

#include <cstdio>

namespace {

using dnnl::algorithm;
using dnnl::memory;

void append_relu(dnnl::post_ops* ops) {
#if DNNL_VERSION_MAJOR >= 3
  ops->append_eltwise(algorithm::eltwise_relu, 0.f, 0.f);
#else
  ops->append_eltwise(1.f, algorithm::eltwise_relu, 0.f, 0.f);
#endif
}

// 64 input channels, `out_c` output channels.
const char* impl(const dnnl::engine& eng, const memory::desc& src, const memory::desc& dst, int64_t out_c, int64_t k,
                 const dnnl::post_ops& ops) {
  const memory::desc weights({out_c, 64, k, k}, memory::data_type::f32, memory::format_tag::any);
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  const memory::dims stride{1, 1}, dilate{0, 0}, pad{k / 2, k / 2};
#if DNNL_VERSION_MAJOR >= 3
  const dnnl::convolution_forward::primitive_desc pd(eng, dnnl::prop_kind::forward_inference,
                                                     algorithm::convolution_direct, src, weights, memory::desc(), dst,
                                                     stride, dilate, pad, pad, attr, true);
#else
  const dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, algorithm::convolution_direct, src,
                                             weights, memory::desc(), dst, stride, dilate, pad, pad);
  const dnnl::convolution_forward::primitive_desc pd(desc, attr, eng, true);
#endif
  return pd ? pd.impl_info_str() : "(none)";
}

}  // namespace

int main() {
  const dnnl_version_t* v = dnnl_version();
  std::printf("oneDNN %d.%d.%d\n", v->major, v->minor, v->patch);
  const dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  const memory::data_type f32 = memory::data_type::f32;
  const int64_t h = 14;
  const memory::desc per_channel({1, 64, 1, 1}, f32, memory::format_tag::nchw);
  const char* orders[] = {"bn", "bn, relu", "bn, sum", "bn, sum, relu", "relu, sum", "sum, relu"};
  for (memory::format_tag tag : {memory::format_tag::nhwc, memory::format_tag::any}) {
    const memory::desc src({1, 64, h, h}, f32, tag), dst({1, 64, h, h}, f32, tag);
    for (int64_t k : {1, 3}) {
      for (int order = 0; order < 6; ++order) {
        dnnl::post_ops ops;
        if (order < 4) {
          ops.append_binary(algorithm::binary_mul, per_channel);
          ops.append_binary(algorithm::binary_add, per_channel);
        }
        if (order == 1 || order == 4) append_relu(&ops);
        if (order >= 2) ops.append_sum(1.f);
        if (order == 3 || order == 5) append_relu(&ops);
        std::printf("%s %lld x %lld  post-ops %-14s %s\n", tag == memory::format_tag::nhwc ? "nhwc" : "any ",
                    static_cast<long long>(k), static_cast<long long>(k), orders[order],
                    impl(eng, src, dst, 64, k, ops));
      }
    }
  }
  // An NHWC chunk of a wider output's channels, with a relu: what a task of a chunked or in-place convolution writes.
  const memory::desc src({1, 64, h, h}, f32, memory::format_tag::nhwc);
  dnnl::post_ops relu;
  append_relu(&relu);
  for (int64_t k : {1, 3}) {
    for (int64_t chunk : {32, 64}) {
      const int64_t pixel = 160;
      const memory::desc slice({1, chunk, h, h}, f32, memory::dims{h * h * pixel, 1, h * pixel, pixel});
      const memory::desc dense({1, chunk, h, h}, f32, memory::format_tag::nhwc);
      std::printf("nhwc %lld x %lld  %lld channels, strided dst %-16s dense dst %s\n", static_cast<long long>(k),
                  static_cast<long long>(k), static_cast<long long>(chunk), impl(eng, src, slice, chunk, k, relu),
                  impl(eng, src, dense, chunk, k, relu));
    }
  }
}
