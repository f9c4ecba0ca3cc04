// pool2d on oneDNN (float32, NCHW or NHWC, read and written in the caller's layout). The public pool2d kernel
// (nn.cc) sends only NCHW calls here: NHWC ones run its channel-last loop, which measured 4 to 5x faster than
// oneDNN 2.6's NHWC pooling on AVX2 (jit:avx2 took 2.1 ms for resnet18 224²'s max pool in the model).
//
// Paddle's windows map onto oneDNN's as follows: max is pooling_max (padding never wins); avg with `exclusive`
// divides by the elements inside the input, which is pooling_avg_exclude_padding, and without it by the full
// kernel size, which is pooling_avg_include_padding; ceil_mode is a larger bottom / right padding; global pooling
// is a kernel the size of the input; adaptive pooling is a plain kernel when the input divides evenly into the
// output (window = stride = in / out), and is left to the reference loops otherwise. So is a configuration where a
// window lies wholly in the padding (Paddle would divide by zero or keep -FLT_MAX there).
#include <algorithm>
#include <array>
#include <memory>
#include <vector>
#include <string>

#include "onednn/onednn.h"
#include "onednn/runtime.h"

namespace kforge::kernels::onednn {

namespace {

struct PoolPlan : Plan {
  dnnl::pooling_forward prim;
  dnnl::memory::desc src, dst;
  size_t scratchpad_bytes = 0;
};

// The oneDNN window of one spatial dim: kernel, stride, and paddings that give exactly `out` windows; false when a
// window would be empty.
bool window(const util::PoolShape& s, bool height, int64_t* k, int64_t* stride, int64_t* pad_l, int64_t* pad_r) {
  const int64_t in = height ? s.in_h : s.in_w, out = height ? s.out_h : s.out_w;
  if (s.adaptive) {
    if (in % out != 0) return false;
    *k = *stride = in / out;
    *pad_l = *pad_r = 0;
    return true;
  }
  *k = height ? s.k_h : s.k_w;
  *stride = height ? s.g.stride_h : s.g.stride_w;
  *pad_l = height ? s.g.pad_top : s.g.pad_left;
  *pad_r = (out - 1) * *stride + *k - in - *pad_l;
  const bool first_empty = *k <= *pad_l, last_empty = (out - 1) * *stride - *pad_l >= in;
  return !first_empty && !last_empty;
}

// A call site (runtime.h's SiteTable), by its input and output addresses.
struct PoolSite {
  using Key = std::array<int64_t, 17>;  // the plan's key, then the image count
  Key key;
  std::shared_ptr<const Plan> plan;  // null: oneDNN cannot do it
  std::vector<ArgSet> images;        // per image
};

}  // namespace

Status pool2d(const Tensor& x, const util::PoolShape& s, bool exclusive, Tensor* out, bool* handled) {
  static constexpr const char* kOp = "pool2d";
  *handled = false;
  if (s.n == 0 || s.c == 0 || s.out_h == 0 || s.out_w == 0) {
    *handled = true;
    return Status::OK();
  }
  int64_t kh, kw, sh, sw, pt, pb, pl, pr;
  if (!window(s, true, &kh, &sh, &pt, &pb) || !window(s, false, &kw, &sw, &pl, &pr)) return Status::OK();
  const dnnl::algorithm alg = s.is_max ? dnnl::algorithm::pooling_max
                              : exclusive || s.adaptive ? dnnl::algorithm::pooling_avg_exclude_padding
                                                        : dnnl::algorithm::pooling_avg_include_padding;
  SingleThreadScope single;
  bool fresh = false;
  PoolSite& site = this_thread_sites<PoolSite>().find(
      reinterpret_cast<uintptr_t>(x.data), reinterpret_cast<uintptr_t>(out->data),
      {3, s.channel_last, static_cast<int64_t>(alg), s.c, s.in_h, s.in_w, s.out_h, s.out_w, kh, kw, sh, sw, pt, pb, pl,
       pr, s.n},
      &fresh);
  if (fresh) KFORGE_RETURN_IF_ERROR(guarded(kOp, [&] {
    const PoolSite::Key found = site.key;
    site.key = PoolSite::Key{};  // until the plan is found
    site.plan = find_or_build_plan(PlanKey(found.begin(), found.end() - 1), [&]() -> std::shared_ptr<Plan> {
      try {
        auto p = std::make_shared<PoolPlan>();
        const auto layout = s.channel_last ? dnnl::memory::format_tag::nhwc : dnnl::memory::format_tag::nchw;
        p->src = f32_desc({1, s.c, s.in_h, s.in_w}, layout);
        p->dst = f32_desc({1, s.c, s.out_h, s.out_w}, layout);
        const dnnl::pooling_forward::primitive_desc pd =
            pooling_pd(alg, p->src, p->dst, {sh, sw}, {kh, kw}, {pt, pl}, {pb, pr}, user_scratchpad());
        if (!pd || is_reference_impl(pd)) return nullptr;
        p->prim = dnnl::pooling_forward(pd);
        p->scratchpad_bytes = pd.scratchpad_desc().get_size();
        return p;
      } catch (const dnnl::error&) {
        return nullptr;  // a window oneDNN rejects: the reference loops do it
      }
    });
    site.key = found;
    site.images.resize(static_cast<size_t>(s.n));
    return Status::OK();
  }));
  if (site.plan == nullptr) return Status::OK();
  const auto& p = static_cast<const PoolPlan&>(*site.plan);
  *handled = true;
  const int64_t in_image = s.c * s.in_h * s.in_w, out_image = s.c * s.out_h * s.out_w;
  const float* src = x.data_as<const float>();
  float* dst = out->data_as<float>();
  // One task per image: each output element is one window's max or mean, whatever the split.
  return run_tasks(s.n, [&](int64_t b) {
    return guarded(kOp, [&] {
      char* scratch = task_arena().reserve(p.scratchpad_bytes);
      if (scratch == nullptr) return Status::Error(kOp, ": out of memory");
      ArgSet& args = site.images[static_cast<size_t>(b)];
      args.set(DNNL_ARG_SRC, p.src, src + b * in_image);
      args.set(DNNL_ARG_DST, p.dst, dst + b * out_image);
      args.set_scratchpad(p.scratchpad_bytes, scratch);
      args.run(p.prim);
      return Status::OK();
    });
  });
}

}  // namespace kforge::kernels::onednn
