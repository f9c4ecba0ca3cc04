// conv2d, depthwise_conv2d and conv2d_transpose on oneDNN (float32, NCHW or NHWC, any groups).
//
// One plan per shape and attribute set: a primitive for one task's share of the work, and the reorders between the
// caller's layouts and the primitive's. The work is split into tasks by image groups (a few small images share a
// task, so that their filters are read once) and, for ungrouped convolutions, by chunks of output channels; the
// split depends on the shapes only, so results do not depend on the thread count (runtime.h).
//
// Two variants. "blocked": oneDNN picks every layout (brgconv and friends), with reorders from and to the caller's
// layout around it; the filter is reordered into its layout once when it lies in memory declared constant, else on
// every call. "plain": an NCHW, ungrouped convolution that reads the caller's tensors and OIHW filter in place
// (gemm-based; a 1 x 1 convolution is then one GEMM). choose_blocked() says which, from measurements on resnet18
// and mobilenet_v2 layers (bench/kernels; docs/kernels.md).
#include <algorithm>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>

#include "onednn/onednn.h"
#include "onednn/runtime.h"

namespace kforge::kernels::onednn {

namespace {

using tag = dnnl::memory::format_tag;

enum class Kind : int64_t { kConv = 1, kDeconv = 2 };

// An NCHW k x k convolution (k > 1) whose filter is not declared constant runs plain below this many output
// pixels per call (N * OH * OW): reordering the filter on every call would cost more than the gemm-based primitive
// loses (512 channels at 2 x 2 pixels: reorder + brgconv 6.6x the gemm time; at 8 x 8 they tie).
constexpr int64_t kPlainBelowPixels = 64;
// An NCHW 1 x 1 convolution runs plain from this many output pixels per call on: it is one GEMM on the caller's
// layout, while the blocked one also reorders its input and output (144 -> 24 channels at 16 x 16: plain 0.38x
// the time; 96 -> 576 at 4 x 4: a tie; 320 -> 1280 at 2 x 2: blocked 3x faster).
constexpr int64_t kPlain1x1FromPixels = 32;
// Image groups: enough images per task that a task computes at least this many output pixels.
constexpr int64_t kPixelsPerTask = 256;
// Output-channel chunks only when each still has this many multiply-adds: a primitive's run costs a few
// microseconds whatever its size, so small convolutions stay whole (at one thread chunks are pure cost).
constexpr int64_t kMinChunkMacs = int64_t{1} << 20;

struct Geometry {
  Kind kind = Kind::kConv;
  bool channel_last = false;
  bool blocked = true;
  int64_t group_images = 1;  // images per task
  int64_t ic = 0, ih = 0, iw = 0, oc = 0, oh = 0, ow = 0, kh = 0, kw = 0, groups = 1;
  int64_t chunk_oc = 0;  // output channels per task
  int64_t sh = 1, sw = 1, dh = 1, dw = 1, pt = 0, pb = 0, pl = 0, pr = 0;  // pb / pr as oneDNN counts them

  int64_t chunks() const { return oc / chunk_oc; }
  PlanKey key() const {
    return {static_cast<int64_t>(kind), channel_last, blocked, group_images, ic, ih, iw, oc, oh, ow, kh, kw, groups,
            chunk_oc, sh, sw, dh, dw, pt, pb, pl, pr};
  }
};

struct ConvPlan : Plan {
  Geometry geo;
  dnnl::primitive prim;
  dnnl::memory::desc user_src, src;  // one image group, as the caller and as the primitive lay it out
  dnnl::memory::desc user_weights, weights;  // one chunk of the filter
  dnnl::memory::desc user_dst, dst;  // one chunk of one image group
  std::optional<dnnl::reorder> src_reorder, weights_reorder, dst_reorder;  // where the layouts differ
  size_t src_bytes = 0, weights_bytes = 0, dst_bytes = 0, scratchpad_bytes = 0;
  std::string impl;
};

thread_local ConvPlanInfo g_last_plan;

// The output channels of one task: a chunk of 64, 48 or 32 (the first that divides them) of an ungrouped
// convolution, when that chunk has at least kMinChunkMacs multiply-adds; else all of them.
int64_t choose_chunk(const Geometry& g) {
  if (g.kind != Kind::kConv || g.groups != 1) return g.oc;
  const int64_t macs_per_channel = g.group_images * g.oh * g.ow * g.ic * g.kh * g.kw;
  for (int64_t c : {64, 48, 32}) {
    if (g.oc > c && g.oc % c == 0 && c * macs_per_channel >= kMinChunkMacs) return c;
  }
  return g.oc;
}

// The variant (see the file comment). Grouped and depthwise convolutions, NHWC and conv2d_transpose are always
// blocked: their gemm-based primitives are 3 to 27x slower (depthwise 3 x 3, mobilenet_v2 shapes).
bool choose_blocked(const Geometry& g, int64_t images, bool constant) {
  if (g.kind != Kind::kConv || g.channel_last || g.groups != 1) return true;
  const int64_t pixels = images * g.oh * g.ow;
  if (g.kh == 1 && g.kw == 1) return constant && pixels < kPlain1x1FromPixels;
  return constant || pixels >= kPlainBelowPixels;
}

// The largest divisor of n not above ceil(kPixelsPerTask / pixels).
int64_t choose_group_images(int64_t n, int64_t pixels) {
  const int64_t want = std::max<int64_t>(1, (kPixelsPerTask + pixels - 1) / std::max<int64_t>(pixels, 1));
  for (int64_t g = std::min(n, want); g > 1; --g) {
    if (n % g == 0) return g;
  }
  return 1;
}

// Builds the plan, or returns null when oneDNN has no implementation for it (the caller uses the reference loops).
std::shared_ptr<Plan> build(const Geometry& g) {
  auto plan = std::make_shared<ConvPlan>();
  plan->geo = g;
  const tag act = g.channel_last ? tag::nhwc : tag::nchw;
  const int64_t n = g.group_images, chunk = g.chunk_oc;
  plan->user_src = f32_desc({n, g.ic, g.ih, g.iw}, act);
  if (g.chunks() == 1 || (!g.channel_last && n == 1)) {
    plan->user_dst = f32_desc({n, chunk, g.oh, g.ow}, act);  // the chunk is contiguous in the caller's tensor
  } else if (g.channel_last) {
    plan->user_dst = f32_strided({n, chunk, g.oh, g.ow}, {g.oh * g.ow * g.oc, 1, g.ow * g.oc, g.oc});
  } else {
    plan->user_dst = f32_strided({n, chunk, g.oh, g.ow}, {g.oc * g.oh * g.ow, g.oh * g.ow, g.ow, 1});
  }
  if (g.kind == Kind::kConv) {
    plan->user_weights = g.groups == 1 ? f32_desc({chunk, g.ic, g.kh, g.kw}, tag::oihw)
                                       : f32_desc({g.groups, g.oc / g.groups, g.ic / g.groups, g.kh, g.kw}, tag::goihw);
  } else {  // Paddle's [in_c, out_c / groups, kh, kw]
    plan->user_weights = g.groups == 1 ? f32_desc({g.oc, g.ic, g.kh, g.kw}, tag::iohw)
                                       : f32_desc({g.groups, g.oc / g.groups, g.ic / g.groups, g.kh, g.kw}, tag::giohw);
  }
  const dnnl::memory::desc any_src = f32_desc({n, g.ic, g.ih, g.iw}, tag::any);
  const dnnl::memory::desc any_dst = f32_desc({n, chunk, g.oh, g.ow}, tag::any);
  const dnnl::memory::desc any_weights(plan->user_weights.dims(), dnnl::memory::data_type::f32, tag::any);
  const dnnl::memory::desc& src_md = g.blocked ? any_src : plan->user_src;
  const dnnl::memory::desc& weights_md = g.blocked ? any_weights : plan->user_weights;
  const dnnl::memory::desc& dst_md = g.blocked ? any_dst : plan->user_dst;
  const Dims strides{g.sh, g.sw}, dilates{g.dh - 1, g.dw - 1}, pad_l{g.pt, g.pl}, pad_r{g.pb, g.pr};
  dnnl::primitive_desc_base pd;
  if (g.kind == Kind::kConv) {
    dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                         src_md, weights_md, dst_md, strides, dilates, pad_l, pad_r);
    dnnl::convolution_forward::primitive_desc conv_pd(desc, user_scratchpad(), engine(), true);
    if (!conv_pd) return nullptr;
    plan->prim = dnnl::convolution_forward(conv_pd);
    pd = conv_pd;
  } else {
    dnnl::deconvolution_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::deconvolution_direct,
                                           src_md, weights_md, dst_md, strides, dilates, pad_l, pad_r);
    dnnl::deconvolution_forward::primitive_desc deconv_pd(desc, user_scratchpad(), engine(), true);
    if (!deconv_pd) return nullptr;
    plan->prim = dnnl::deconvolution_forward(deconv_pd);
    pd = deconv_pd;
  }
  plan->src = pd.src_desc();
  plan->weights = pd.weights_desc();
  plan->dst = pd.dst_desc();
  plan->impl = pd.impl_info_str();
  plan->scratchpad_bytes = pd.scratchpad_desc().get_size();
  plan->src_bytes = plan->src.get_size();
  plan->weights_bytes = plan->weights.get_size();
  plan->dst_bytes = plan->dst.get_size();
  plan->src_reorder = make_reorder(plan->user_src, plan->src, &plan->scratchpad_bytes);
  plan->weights_reorder = make_reorder(plan->user_weights, plan->weights, &plan->scratchpad_bytes);
  plan->dst_reorder = make_reorder(plan->dst, plan->user_dst, &plan->scratchpad_bytes);
  return plan;
}

Status reorder_into(const ConvPlan& p, const dnnl::reorder& r, const dnnl::memory::desc& from, const void* src,
                    const dnnl::memory::desc& to, void* dst) {
  char* scratch = p.scratchpad_bytes > 0 ? task_arena().reserve(p.scratchpad_bytes) : nullptr;
  if (p.scratchpad_bytes > 0 && scratch == nullptr) return Status::Error("out of memory");
  execute(r, {{DNNL_ARG_FROM, wrap(from, src)}, {DNNL_ARG_TO, wrap(to, dst)}}, p.scratchpad_bytes, scratch);
  return Status::OK();
}

Status run(const char* op, const ConvPlan& p, const Tensor& input, const Tensor& filter, int64_t images,
           Tensor* out) {
  const Geometry& g = p.geo;
  const int64_t image_groups = images / g.group_images, chunks = g.chunks();
  const int64_t src_group = g.group_images * g.ic * g.ih * g.iw, dst_group = g.group_images * g.oc * g.oh * g.ow;
  const int64_t dst_chunk = g.channel_last ? g.chunk_oc : g.chunk_oc * g.oh * g.ow;  // elements between chunks
  const int64_t weights_chunk = filter.numel() / chunks;
  const float* in = input.data_as<const float>();
  const float* user_weights = filter.data_as<const float>();
  float* dst = out->data_as<float>();

  // The filter in the primitive's layout: kept for declared constants, else reordered below.
  const size_t weights_stride = align_up(p.weights_bytes);
  std::shared_ptr<const char> cached;
  if (p.weights_reorder) {
    Status status;
    cached = constant_weights(
        p, filter.data, filter.bytes(), weights_stride * static_cast<size_t>(chunks),
        [&](char* buffer) {
          for (int64_t j = 0; j < chunks; ++j) {
            KFORGE_RETURN_IF_ERROR(reorder_into(p, *p.weights_reorder, p.user_weights, user_weights + j * weights_chunk,
                                                p.weights, buffer + j * weights_stride));
          }
          return Status::OK();
        },
        &status);
    KFORGE_RETURN_IF_ERROR(status);
  }
  const bool reorder_weights = p.weights_reorder && cached == nullptr;
  const size_t weights_total = reorder_weights ? weights_stride * static_cast<size_t>(chunks) : 0;
  const size_t src_stride = align_up(p.src_bytes);
  const size_t src_total = p.src_reorder ? src_stride * static_cast<size_t>(image_groups) : 0;
  char* shared = nullptr;
  if (weights_total + src_total > 0) {
    shared = call_arena().reserve(weights_total + src_total);
    if (shared == nullptr) return Status::Error(op, ": out of memory");
  }

  // Phase 1: the per-call reorders (filter chunks, then image groups), independent of each other.
  const int64_t weight_tasks = reorder_weights ? chunks : 0;
  const int64_t src_tasks = p.src_reorder ? image_groups : 0;
  if (weight_tasks + src_tasks > 0) {
    KFORGE_RETURN_IF_ERROR(run_tasks(weight_tasks + src_tasks, [&](int64_t t) {
      return guarded(op, [&] {
        if (t < weight_tasks) {
          return reorder_into(p, *p.weights_reorder, p.user_weights, user_weights + t * weights_chunk, p.weights,
                              shared + t * weights_stride);
        }
        const int64_t b = t - weight_tasks;
        return reorder_into(p, *p.src_reorder, p.user_src, in + b * src_group, p.src,
                            shared + weights_total + b * src_stride);
      });
    }));
  }

  // Phase 2: one task per (image group, output-channel chunk).
  const char* weights_base = cached ? cached.get() : shared;
  return run_tasks(image_groups * chunks, [&](int64_t t) {
    return guarded(op, [&] {
      const int64_t b = t / chunks, j = t % chunks;
      const void* src = p.src_reorder ? static_cast<const void*>(shared + weights_total + b * src_stride)
                                      : static_cast<const void*>(in + b * src_group);
      const void* weights = p.weights_reorder ? static_cast<const void*>(weights_base + j * weights_stride)
                                              : static_cast<const void*>(user_weights + j * weights_chunk);
      float* user_dst = dst + b * dst_group + j * dst_chunk;
      const size_t dst_bytes = p.dst_reorder ? align_up(p.dst_bytes) : 0;
      char* scratch = task_arena().reserve(dst_bytes + p.scratchpad_bytes);
      if (scratch == nullptr) return Status::Error(op, ": out of memory");
      void* conv_dst = p.dst_reorder ? static_cast<void*>(scratch) : static_cast<void*>(user_dst);
      execute(p.prim,
              {{DNNL_ARG_SRC, wrap(p.src, src)},
               {DNNL_ARG_WEIGHTS, wrap(p.weights, weights)},
               {DNNL_ARG_DST, wrap(p.dst, conv_dst)}},
              p.scratchpad_bytes, scratch + dst_bytes);
      if (p.dst_reorder) {
        execute(*p.dst_reorder, {{DNNL_ARG_FROM, wrap(p.dst, conv_dst)}, {DNNL_ARG_TO, wrap(p.user_dst, user_dst)}},
                p.scratchpad_bytes, scratch + dst_bytes);
      }
      return Status::OK();
    });
  });
}

Status convolve(const char* op, Geometry g, const Tensor& input, const Tensor& filter, int64_t images, Tensor* out,
                bool* handled) {
  *handled = false;
  if (images == 0 || out->numel() == 0) {
    *handled = true;
    return Status::OK();
  }
  if (input.numel() == 0 || filter.numel() == 0) return Status::OK();  // the reference loops write the zeros
  SingleThreadScope single;
  g.group_images = choose_group_images(images, g.oh * g.ow);
  g.chunk_oc = choose_chunk(g);
  g.blocked = choose_blocked(g, images, is_constant(filter.data, filter.bytes()));
  std::shared_ptr<const Plan> plan;
  KFORGE_RETURN_IF_ERROR(guarded(op, [&] {
    plan = find_or_build_plan(g.key(), [&]() -> std::shared_ptr<Plan> {
      try {
        std::shared_ptr<Plan> built = build(g);
        if (built == nullptr && !g.blocked) {  // no plain implementation: the blocked one reorders
          Geometry blocked = g;
          blocked.blocked = true;
          built = build(blocked);
        }
        return built;
      } catch (const dnnl::error&) {
        return nullptr;  // descriptors oneDNN rejects (e.g. negative padding): the reference loops do them
      }
    });
    return Status::OK();
  }));
  if (plan == nullptr) return Status::OK();
  const auto& p = static_cast<const ConvPlan&>(*plan);
  g_last_plan = ConvPlanInfo{p.geo.blocked, p.geo.chunks(), p.geo.group_images, p.impl};
  *handled = true;
  return run(op, p, input, filter, images, out);
}

}  // namespace

ConvPlanInfo last_conv_plan() { return g_last_plan; }

Status conv2d(const char* op, const Tensor& input, const Tensor& filter, const util::ConvShape& s, Tensor* out,
              bool* handled) {
  Geometry g;
  g.kind = Kind::kConv;
  g.channel_last = s.channel_last;
  g.ic = s.in_c, g.ih = s.in_h, g.iw = s.in_w, g.oc = s.out_c, g.oh = s.out_h, g.ow = s.out_w;
  g.kh = s.k_h, g.kw = s.k_w, g.groups = s.groups;
  g.sh = s.g.stride_h, g.sw = s.g.stride_w, g.dh = s.g.dilation_h, g.dw = s.g.dilation_w;
  g.pt = s.g.pad_top, g.pl = s.g.pad_left;
  // oneDNN wants out = (in + pt + pb - span) / stride + 1 exactly: the bottom / right padding that gives Paddle's
  // output size (smaller than Paddle's when the last stride does not fit; those rows are never read).
  g.pb = (g.oh - 1) * g.sh + (g.kh - 1) * g.dh + 1 - g.ih - g.pt;
  g.pr = (g.ow - 1) * g.sw + (g.kw - 1) * g.dw + 1 - g.iw - g.pl;
  return convolve(op, g, input, filter, s.n, out, handled);
}

Status conv2d_transpose(const Tensor& x, const Tensor& filter, const util::ConvShape& s, Tensor* out, bool* handled) {
  Geometry g;
  g.kind = Kind::kDeconv;
  g.channel_last = s.channel_last;
  g.ic = s.in_c, g.ih = s.in_h, g.iw = s.in_w, g.oc = s.out_c, g.oh = s.out_h, g.ow = s.out_w;
  g.kh = s.k_h, g.kw = s.k_w, g.groups = s.groups;
  g.sh = s.g.stride_h, g.sw = s.g.stride_w, g.dh = s.g.dilation_h, g.dw = s.g.dilation_w;
  g.pt = s.g.pad_top, g.pl = s.g.pad_left;
  // out = (in - 1) * stride - pt - pb + span: output_padding / output_size make Paddle's out larger, which is a
  // smaller (possibly negative) bottom / right padding here.
  g.pb = (g.ih - 1) * g.sh + (g.kh - 1) * g.dh + 1 - g.pt - g.oh;
  g.pr = (g.iw - 1) * g.sw + (g.kw - 1) * g.dw + 1 - g.pl - g.ow;
  return convolve("conv2d_transpose", g, x, filter, s.n, out, handled);
}

}  // namespace kforge::kernels::onednn
