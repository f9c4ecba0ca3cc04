// conv2d, depthwise_conv2d, conv2d_transpose and conv2d_fused on oneDNN (float32, NCHW or NHWC, any groups; the
// transpose excepted, also NCHW8c: oneDNN's nChw8c, which the primitive reads and writes in place).
//
// One plan per shape, attribute set and epilogue (conv_plan.h): a primitive for one task's share of the work, and
// the reorders between the caller's layouts and the primitive's. The work is split into tasks by image groups (a
// few small images share a task, so that their filters are read once) and, for ungrouped convolutions, by chunks
// of output channels; the split depends on the shapes only, so results do not depend on the thread count
// (runtime.h). A long reduction of a large output runs as several primitives per task, over chunks of the input
// channels, each summed into the output by the next (conv_plan.cc's choose_ic_chunk: a blocked float32 sum, as
// Paddle's im2col + sgemm has; issue 34 item 5); over a large NHWC output, band by band of output rows
// (ConvPlan::bands), the same sums.
//
// Two variants. "blocked": oneDNN picks the filter's layout and, for NCHW, the activations' (brgconv and friends),
// with reorders from and to the caller's layout around it; NHWC activations stay NHWC where a jit kernel reads
// them (conv_plan.cc). "plain": an NCHW, ungrouped convolution that reads the caller's tensors and OIHW filter in
// place (gemm-based; a 1 x 1 convolution is then one GEMM). conv_plan.cc's choose_split() says which, from
// measurements on resnet18 and mobilenet_v2 layers (bench/kernels; docs/kernels.md).
//
// Weights. The primitive reads the caller's filter, or a prepared one: reordered into the blocked layout, and with
// conv2d_fused's batch norm folded in (w' = w * s, bias' = bias * s + shift - mean * s per output channel). A
// prepared filter is kept when every tensor it comes from lies in memory declared constant, else prepared again on
// every call. The batch norm is folded only then: otherwise it is two post-ops (multiply by s, add shift - mean * s,
// per channel, computed per call), which costs no pass over the filter. The rest of the epilogue is post-ops too:
// the activation, and the residual as a sum into the output. The plain variant takes no post-ops (its gemm-based
// primitive runs them through oneDNN's slow reference code): its epilogue is a binary primitive over the task's
// output after the convolution (out * s + (bias * s + t), then the activation and residual as its post-ops).
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "onednn/conv_plan.h"
#include "onednn/onednn.h"
#include "onednn/runtime.h"
#include "onednn/small_conv.h"

namespace kforge::kernels::onednn {

namespace {

// The plan the last call on this thread ran (last_conv_plan()).
thread_local std::shared_ptr<const Plan> g_last_plan;

int64_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

Status reorder_into(const ConvPlan& p, const dnnl::reorder& r, const dnnl::memory::desc& from, const void* src,
                    const dnnl::memory::desc& to, void* dst) {
  char* scratch = p.scratchpad_bytes > 0 ? task_arena().reserve(p.scratchpad_bytes) : nullptr;
  if (p.scratchpad_bytes > 0 && scratch == nullptr) return Status::Error("out of memory");
  execute(r, {{DNNL_ARG_FROM, wrap(from, src)}, {DNNL_ARG_TO, wrap(to, dst)}}, p.scratchpad_bytes, scratch);
  return Status::OK();
}

// How a call's filter reaches the primitive, and where its prepared form lives.
struct WeightsLayout {
  bool fold = false;          // a batch norm to fold in
  bool prepared = false;      // the primitive reads a prepared filter (reordered and / or folded)
  size_t stride = 0;          // bytes between output-channel chunks in the filter the primitives read
  size_t ic_stride = 0;       // bytes between the reduction chunks of one output-channel chunk (when reordered)
  size_t weights_bytes = 0;   // the prepared filter
  size_t bias_offset = 0;     // the folded bias [oc] after it, in the same buffer
  size_t bytes = 0;           // the whole prepared buffer
};

WeightsLayout weights_layout(const ConvPlan& p, const ConvEpilogue& e, const Tensor& filter) {
  WeightsLayout w;
  w.fold = e.mean != nullptr && p.geo.blocked && !p.geo.batch_norm_post_ops;
  w.prepared = w.fold || p.weights_reorder.has_value();
  const size_t plain_chunk = filter.bytes() / static_cast<size_t>(p.geo.chunks());
  w.ic_stride = align_up(p.weights_bytes);
  w.stride = p.weights_reorder ? w.ic_stride * static_cast<size_t>(p.geo.ic_chunks()) : plain_chunk;
  w.weights_bytes = align_up(w.stride * static_cast<size_t>(p.geo.chunks()));
  w.bias_offset = w.weights_bytes;
  w.bytes = w.weights_bytes + (w.fold ? align_up(static_cast<size_t>(p.geo.oc) * sizeof(float)) : 0);
  return w;
}

// The batch norm's per-channel scale s and shift t, as the batch_norm kernel computes them.
void batch_norm_affine(const ConvEpilogue& e, int64_t o, float* s, float* t) {
  const float inv_std = 1.f / std::sqrt(e.variance->data_as<const float>()[o] + e.epsilon);
  *s = (e.scale != nullptr ? e.scale->data_as<const float>()[o] : 1.f) * inv_std;
  *t = (e.shift != nullptr ? e.shift->data_as<const float>()[o] : 0.f) - e.mean->data_as<const float>()[o] * *s;
}

// Output-channel chunk j of the filter as the primitives read it (each of its reduction chunks in turn), into
// `out`; with a folded batch norm, its bias into bias_out[chunk's channels] and, when the chunk must also be
// reordered, the folded OIHW chunk through `temp`.
Status prepare_chunk(const ConvPlan& p, const WeightsLayout& wl, const ConvEpilogue& e, const Tensor& filter,
                     int64_t j, char* out, float* bias_out, float* temp) {
  const ConvGeometry& g = p.geo;
  const int64_t per_oc = filter.numel() / g.oc, o0 = j * g.chunk_oc;
  const float* w = filter.data_as<const float>() + o0 * per_oc;
  if (wl.fold) {
    float* folded = p.weights_reorder ? temp + o0 * per_oc : reinterpret_cast<float*>(out);
    for (int64_t o = o0; o < o0 + g.chunk_oc; ++o) {
      float s, t;
      batch_norm_affine(e, o, &s, &t);
      for (int64_t k = 0; k < per_oc; ++k) folded[(o - o0) * per_oc + k] = w[(o - o0) * per_oc + k] * s;
      bias_out[o] = (e.bias != nullptr ? e.bias->data_as<const float>()[o] * s : 0.f) + t;
    }
    w = folded;
  }
  if (!p.weights_reorder) return Status::OK();
  const int64_t ic_per_run = g.ic / g.ic_chunks();
  for (int64_t i = 0; i < g.ic_chunks(); ++i) {  // user_weights is a slice of ic_per_run input channels
    KFORGE_RETURN_IF_ERROR(reorder_into(p, *p.weights_reorder, p.user_weights, w + i * ic_per_run * g.kh * g.kw,
                                        p.weights, out + static_cast<size_t>(i) * wl.ic_stride));
  }
  return Status::OK();
}

// What one call site keeps between calls (runtime.h's SiteTable): the plan its shapes, attributes and tensors
// resolved to, its kept prepared filter, and the oneDNN arguments of each primitive run of its tasks.
struct ConvSite {
  // The geometry as the caller gave it (and an NHWC 1 x 1 one's image pixels), the epilogue, the image count and the
  // addresses of the filter and the per-channel tensors (which decide what is constant).
  using Key = std::array<int64_t, 34>;
  Key key{};
  uint64_t epoch = 0;                 // constants_epoch() when resolved
  bool constant = false;              // everything the prepared filter comes from is declared constant
  std::shared_ptr<const Plan> plan;   // null: oneDNN cannot do it (the reference loops run)
  std::weak_ptr<const char> weights;  // the kept prepared filter (runtime.h's constant_weights), once found
  std::vector<ArgSet> src_reorders;   // per image group and reduction chunk
  struct Task {
    ArgSet residual, dst, epilogue;
    std::vector<ArgSet> conv;  // per reduction chunk
  };
  std::vector<Task> tasks;  // per (image group, output-channel chunk)
};

// Band `band`'s input rows of reduction chunk `i`, copied dense from the caller's NHWC `image` into `to`.
void copy_band_rows(const ConvGeometry& g, const ConvPlan::Band& band, int64_t rows, int64_t i, const float* image,
                    float* to) {
  const int64_t c = g.chunk_ic, pixels = rows * g.iw;
  const float* from = image + band.in_row * g.iw * g.ic + i * c;
  if (c == 16) {  // 3 x 3 and larger kernels' chunks: one 64-byte move per pixel
    for (int64_t q = 0; q < pixels; ++q) std::memcpy(to + q * 16, from + q * g.ic, 16 * sizeof(float));
    return;
  }
  for (int64_t q = 0; q < pixels; ++q) std::memcpy(to + q * c, from + q * g.ic, static_cast<size_t>(c) * sizeof(float));
}

// A task's reduction in chunks, band by band of output rows (ConvPlan::bands): every chunk of a band, in the
// whole's order, before the next band. Its input chunks: copied dense per band from the caller's `image` into
// `band_src` (ConvPlan::band_copies), or the dense copies of phase 1 (`src`, `src_stride` bytes apart). `weights`:
// its first filter chunk, the next ones `ic_stride` bytes apart; `dst`: the primitives' output.
void run_bands(const ConvPlan& p, ConvSite::Task& task, const float* image, char* band_src, const char* src,
               size_t src_stride, const char* weights, size_t ic_stride, float* dst, const float* bias, char* pad) {
  const ConvGeometry& g = p.geo;
  const int64_t ic_chunks = g.ic_chunks();
  if (task.conv.empty()) task.conv.resize(p.bands.size() * static_cast<size_t>(ic_chunks));
  for (size_t k = 0; k < p.bands.size(); ++k) {
    const ConvPlan::Band& band = p.bands[k];
    const ConvPlan::BandKind& kind = p.band_kinds[band.kind];
    const size_t in_at = static_cast<size_t>(band.in_row * g.iw * g.chunk_ic) * sizeof(float);
    for (int64_t i = 0; i < ic_chunks; ++i) {
      ArgSet& conv = task.conv[k * static_cast<size_t>(ic_chunks) + static_cast<size_t>(i)];
      if (p.band_copies) {
        copy_band_rows(g, band, kind.src.dims()[2], i, image, reinterpret_cast<float*>(band_src));
        conv.set(DNNL_ARG_SRC, kind.src, band_src);
      } else {
        conv.set(DNNL_ARG_SRC, kind.src, src + static_cast<size_t>(i) * src_stride + in_at);
      }
      conv.set(DNNL_ARG_WEIGHTS, p.weights, weights + static_cast<size_t>(i) * ic_stride);
      conv.set(DNNL_ARG_DST, kind.dst, dst + band.out_row * g.ow * g.chunk_oc);
      if (bias != nullptr && i == 0) conv.set(DNNL_ARG_BIAS, p.bias, bias);
      conv.set_scratchpad(p.scratchpad_bytes, pad);
      conv.run(i + 1 == ic_chunks ? kind.last : i == 0 ? kind.first : *kind.middle);
    }
  }
}

Status run(const char* op, ConvSite& site, const Tensor& input, const Tensor& filter, const ConvEpilogue& e,
           int64_t images, Tensor* out) {
  const auto& p = static_cast<const ConvPlan&>(*site.plan);
  const ConvGeometry& g = p.geo;
  const int64_t image_groups = images / g.group_images, chunks = g.chunks(), ic_chunks = g.ic_chunks();
  const int64_t src_group = g.group_images * g.ic * g.ih * g.iw;
  // Elements between the reduction chunks of the input (each p.user_src's slice of the channels).
  const int64_t src_ic_chunk = (g.ic / ic_chunks) * (g.channel_last ? 1 : g.ih * g.iw);
  const int64_t dst_group = g.group_images * (g.channel_last ? g.pixel_stride() : g.oc) * g.oh * g.ow;
  // Elements between chunks: NCHW and nChw8c (whose chunks are whole blocks) alike.
  const int64_t dst_chunk = g.channel_last ? g.chunk_oc : g.chunk_oc * g.oh * g.ow;
  const float* in = input.data_as<const float>();
  float* dst = out->data_as<float>();
  const float* residual = e.residual != nullptr ? e.residual->data_as<const float>() : nullptr;
  const WeightsLayout wl = weights_layout(p, e, filter);
  if (site.src_reorders.empty() && p.src_reorder) {
    site.src_reorders.resize(static_cast<size_t>(image_groups * ic_chunks));
  }
  if (site.tasks.empty()) site.tasks.resize(static_cast<size_t>(image_groups * chunks));

  // The prepared filter: kept when all it comes from is declared constant, else prepared below (phase 1).
  std::shared_ptr<const char> cached;
  if (wl.prepared && site.constant) cached = site.weights.lock();
  if (wl.prepared && site.constant && cached == nullptr) {
    std::vector<Source> sources = {{filter.data, filter.bytes()}};
    for (const Tensor* t : {e.bias, e.mean, e.variance, e.scale, e.shift}) {
      if (t != nullptr && wl.fold) sources.push_back({t->data, t->bytes()});
    }
    Status status;
    cached = constant_weights(
        p, sources, wl.bytes,
        [&](char* buffer) {
          std::vector<float> temp(wl.fold && p.weights_reorder ? static_cast<size_t>(filter.numel()) : 0);
          for (int64_t j = 0; j < chunks; ++j) {
            KFORGE_RETURN_IF_ERROR(prepare_chunk(p, wl, e, filter, j, buffer + j * wl.stride,
                                                 reinterpret_cast<float*>(buffer + wl.bias_offset), temp.data()));
          }
          return Status::OK();
        },
        &status);
    KFORGE_RETURN_IF_ERROR(status);
    site.weights = cached;
  }
  const bool prepare = wl.prepared && cached == nullptr;
  const size_t prepared_total = prepare ? wl.bytes : 0;
  const size_t temp_total = prepare && wl.fold && p.weights_reorder ? align_up(filter.bytes()) : 0;
  // A batch norm not folded (post-ops), or the plain variant's epilogue: per-channel scale and shift, [oc] each,
  // computed here (cheap: no pass over the filter). The plain epilogue's shift takes the bias in too.
  const bool separate = p.epilogue.has_value();
  const bool affine = separate || (e.mean != nullptr && !wl.fold);
  const size_t affine_total = affine ? 2 * align_up(static_cast<size_t>(g.oc) * sizeof(float)) : 0;
  const size_t affine_offset = prepared_total + temp_total;
  const size_t src_stride = align_up(p.src_bytes);
  const size_t src_offset = affine_offset + affine_total;
  const bool copy_first = p.src_reorder && !p.band_copies;  // else each band copies its own rows (phase 2)
  const size_t src_total = copy_first ? src_stride * static_cast<size_t>(image_groups * ic_chunks) : 0;
  char* shared = nullptr;
  if (src_offset + src_total > 0) {
    shared = call_arena().reserve(src_offset + src_total);
    if (shared == nullptr) return Status::Error(op, ": out of memory");
  }
  float* bn_scale = affine ? reinterpret_cast<float*>(shared + affine_offset) : nullptr;
  float* bn_shift = affine ? bn_scale + affine_total / 2 / sizeof(float) : nullptr;
  for (int64_t o = 0; affine && o < g.oc; ++o) {
    float s = 1.f, t = 0.f;
    if (e.mean != nullptr) batch_norm_affine(e, o, &s, &t);
    if (separate && e.bias != nullptr) t = e.bias->data_as<const float>()[o] * s + t;
    bn_scale[o] = s;
    bn_shift[o] = t;
  }

  // Phase 1: the per-call preparations (filter chunks, then image groups and their reduction chunks), independent
  // of each other.
  const int64_t weight_tasks = prepare ? chunks : 0;
  const int64_t src_tasks = copy_first ? image_groups * ic_chunks : 0;
  if (weight_tasks + src_tasks > 0) {
    const auto phase1 = [&](int64_t t) {
      return guarded(op, [&] {
        if (t < weight_tasks) {
          return prepare_chunk(p, wl, e, filter, t, shared + t * wl.stride,
                               reinterpret_cast<float*>(shared + wl.bias_offset),
                               reinterpret_cast<float*>(shared + prepared_total));
        }
        const int64_t b = (t - weight_tasks) / ic_chunks, i = (t - weight_tasks) % ic_chunks;
        char* scratch = p.scratchpad_bytes > 0 ? task_arena().reserve(p.scratchpad_bytes) : nullptr;
        if (p.scratchpad_bytes > 0 && scratch == nullptr) return Status::Error(op, ": out of memory");
        ArgSet& a = site.src_reorders[static_cast<size_t>(t - weight_tasks)];
        a.set(DNNL_ARG_FROM, p.user_src, in + b * src_group + i * src_ic_chunk);
        a.set(DNNL_ARG_TO, p.src, shared + src_offset + static_cast<size_t>(t - weight_tasks) * src_stride);
        a.set_scratchpad(p.scratchpad_bytes, scratch);
        a.run(*p.src_reorder);
        return Status::OK();
      });
    };
    KFORGE_RETURN_IF_ERROR(run_tasks(weight_tasks + src_tasks, phase1));
  }

  // Phase 2: one task per (image group, output-channel chunk).
  const char* weights_base = cached ? cached.get() : wl.prepared ? shared : static_cast<const char*>(filter.data);
  const float* bias = wl.fold ? reinterpret_cast<const float*>(weights_base + wl.bias_offset)
                      : e.bias != nullptr ? e.bias->data_as<const float>()
                                          : nullptr;
  const auto phase2 = [&](int64_t t) {
    return guarded(op, [&] {
      const int64_t b = t / chunks, j = t % chunks;
      ConvSite::Task& task = site.tasks[static_cast<size_t>(t)];
      const int64_t at = b * dst_group + j * dst_chunk;  // the task's first output element
      const size_t dst_bytes = p.dst_reorder ? align_up(p.dst_bytes) : 0;
      // The plain variant writes the caller's output first, and a blocked primitive that reads the residual as
      // a binary operand may keep partial sums there: a residual in that memory is saved before, in the caller's
      // layout of the chunk (element (i, c, k) at (i * oc + c) * plane + k, from `at`; nChw8c's chunks of whole
      // blocks are copied by the same rows).
      const int64_t plane = g.oh * g.ow;
      const int64_t extent = ((g.group_images - 1) * g.oc + g.chunk_oc) * plane;
      const bool residual_operand = p.residual_post_op >= 0;
      const bool save_residual = residual_operand && residual == dst;
      const size_t saved_bytes = save_residual ? align_up(static_cast<size_t>(extent) * sizeof(float)) : 0;
      const size_t band_src_bytes = p.band_copies ? p.band_src_bytes : 0;
      char* scratch = task_arena().reserve(dst_bytes + saved_bytes + align_up(p.scratchpad_bytes) + band_src_bytes);
      if (scratch == nullptr) return Status::Error(op, ": out of memory");
      void* conv_dst = p.dst_reorder ? static_cast<void*>(scratch) : static_cast<void*>(dst + at);
      float* saved = reinterpret_cast<float*>(scratch + dst_bytes);
      char* pad = scratch + dst_bytes + saved_bytes;
      if (save_residual) {
        for (int64_t i = 0; i < g.group_images; ++i) {
          for (int64_t c = 0; c < g.chunk_oc; ++c) {
            const int64_t row = (i * g.oc + c) * plane;
            std::memcpy(saved + row, residual + at + row, static_cast<size_t>(plane) * sizeof(float));
          }
        }
      }
      // The residual goes where the primitive writes, for its sum post-op to add to.
      if (p.residual_in || (p.residual_copy && residual + at != dst + at)) {
        task.residual.set(DNNL_ARG_FROM, p.user_dst, residual + at);
        task.residual.set(DNNL_ARG_TO, p.residual_in ? p.dst : p.user_dst, p.residual_in ? conv_dst : dst + at);
        task.residual.set_scratchpad(p.scratchpad_bytes, pad);
        task.residual.run(p.residual_in ? *p.residual_in : *p.residual_copy);
      }
      // The reduction, in chunks (each summed into the output by the next) or whole; the bias with the first. A
      // chunk read in place (no copy: its slice is dense, as for one image of one pixel) starts at its channels.
      if (!p.bands.empty()) {
        const size_t copies_at = src_offset + static_cast<size_t>(b * ic_chunks) * src_stride;
        const char* copies = copy_first ? shared + copies_at : nullptr;
        run_bands(p, task, in + b * src_group, scratch + dst_bytes + saved_bytes + align_up(p.scratchpad_bytes), copies,
                  src_stride, weights_base + j * wl.stride, wl.ic_stride, static_cast<float*>(conv_dst),
                  g.bias ? bias + j * g.chunk_oc : nullptr, pad);
      }
      if (task.conv.empty()) task.conv.resize(static_cast<size_t>(ic_chunks));
      for (int64_t i = 0; i < ic_chunks && p.bands.empty(); ++i) {
        ArgSet& conv = task.conv[static_cast<size_t>(i)];
        const size_t src_at = static_cast<size_t>(b * ic_chunks + i) * src_stride;
        conv.set(DNNL_ARG_SRC, p.src, p.src_reorder ? static_cast<const void*>(shared + src_offset + src_at)
                                                    : static_cast<const void*>(in + b * src_group + i * src_ic_chunk));
        conv.set(DNNL_ARG_WEIGHTS, p.weights, weights_base + j * wl.stride + static_cast<size_t>(i) * wl.ic_stride);
        conv.set(DNNL_ARG_DST, p.dst, conv_dst);
        if (g.bias && i == 0) conv.set(DNNL_ARG_BIAS, p.bias, bias + j * g.chunk_oc);
        if (residual_operand && !separate) {
          conv.set(DNNL_ARG_ATTR_MULTIPLE_POST_OP(p.residual_post_op) | DNNL_ARG_SRC_1, p.user_dst,
                   save_residual ? saved : residual + at);
        }
        if (g.batch_norm_post_ops) {
          conv.set(DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, p.per_channel, bn_scale + j * g.chunk_oc);
          conv.set(DNNL_ARG_ATTR_MULTIPLE_POST_OP(1) | DNNL_ARG_SRC_1, p.per_channel, bn_shift + j * g.chunk_oc);
        }
        conv.set_scratchpad(p.scratchpad_bytes, pad);
        conv.run(i + 1 == ic_chunks ? p.prim : i == 0 ? *p.first_prim : *p.middle_prim);
      }
      if (p.copy_pixels) {
        const int64_t pixels = g.group_images * g.oh * g.ow, stride = g.pixel_stride();
        const size_t bytes = static_cast<size_t>(g.chunk_oc) * sizeof(float);
        for (int64_t q = 0; q < pixels; ++q) {
          std::memcpy(dst + at + q * stride, static_cast<const char*>(conv_dst) + static_cast<size_t>(q) * bytes, bytes);
        }
      } else if (p.dst_reorder) {
        task.dst.set(DNNL_ARG_FROM, p.dst, conv_dst);
        task.dst.set(DNNL_ARG_TO, p.user_dst, dst + at);
        task.dst.set_scratchpad(p.scratchpad_bytes, pad);
        task.dst.run(*p.dst_reorder);
      }
      if (separate) {
        task.epilogue.set(DNNL_ARG_SRC_0, p.epilogue_dst, dst + at);
        task.epilogue.set(DNNL_ARG_SRC_1, p.epilogue_channel, bn_scale + j * g.chunk_oc);
        task.epilogue.set(DNNL_ARG_DST, p.epilogue_dst, dst + at);
        task.epilogue.set(DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, p.epilogue_channel, bn_shift + j * g.chunk_oc);
        if (p.residual_post_op >= 0) {
          task.epilogue.set(DNNL_ARG_ATTR_MULTIPLE_POST_OP(p.residual_post_op) | DNNL_ARG_SRC_1, p.epilogue_dst,
                            save_residual ? saved : residual + at);
        }
        task.epilogue.set_scratchpad(p.scratchpad_bytes, pad);
        task.epilogue.run(*p.epilogue);
      }
      return Status::OK();
    });
  };
  return run_tasks(image_groups * chunks, phase2);
}

// Whether everything the prepared filter comes from is declared constant (a filter alone when nothing folds).
bool weights_constant(const Tensor& filter, const ConvEpilogue& e) {
  if (!is_constant(filter.data, filter.bytes())) return false;
  if (e.mean == nullptr) return true;
  for (const Tensor* t : {e.bias, e.mean, e.variance, e.scale, e.shift}) {
    if (t != nullptr && !is_constant(t->data, t->bytes())) return false;
  }
  return true;
}

ConvSite::Key site_key(const ConvGeometry& g, const ConvEpilogue& e, const Tensor& filter, int64_t images) {
  auto address = [](const void* p) { return static_cast<int64_t>(reinterpret_cast<uintptr_t>(p)); };
  auto data = [&](const Tensor* t) { return t != nullptr ? address(t->data) : 0; };
  const int64_t layout = g.plain_input ? 3 : g.nchw8c ? 2 : g.channel_last ? 1 : 0;
  return {static_cast<int64_t>(g.kind), layout, g.ic, g.ih, g.iw, g.oc, g.oh, g.ow, g.kh, g.kw, g.groups,
          g.sh, g.sw, g.dh, g.dw, g.pt, g.pb, g.pl, g.pr, static_cast<int64_t>(e.activation), bits_of(e.alpha),
          bits_of(e.beta), e.activation_after_residual, e.residual != nullptr, bits_of(e.epsilon), images,
          address(filter.data), data(e.bias), data(e.mean), data(e.variance), data(e.scale), data(e.shift),
          e.out_pixel_stride, g.image_pixels};
}

// Resolves a fresh (or outdated) site: which tensors are constant, the split, the variant and the plan.
Status resolve(const char* op, ConvGeometry g, const Tensor& filter, const ConvEpilogue& e, int64_t images,
               uint64_t epoch, ConvSite* site) {
  const bool constant = weights_constant(filter, e);
  g.batch_norm_post_ops = e.mean != nullptr && !constant;  // folded into a kept filter only
  g.bias = e.bias != nullptr || (e.mean != nullptr && !g.batch_norm_post_ops);
  g.activation = e.activation;
  g.alpha = e.alpha;
  g.beta = e.beta;
  g.activation_after_residual = e.activation_after_residual;
  g.residual = e.residual != nullptr;
  g.out_stride = e.out_pixel_stride == g.oc ? 0 : e.out_pixel_stride;
  choose_split(&g, images, constant);
  auto find = [&](const ConvGeometry& geo) {
    return find_or_build_plan(geo.key(), [&]() -> std::shared_ptr<Plan> {
      try {
        return build_conv_plan(geo);
      } catch (const dnnl::error&) {
        return nullptr;  // descriptors oneDNN rejects (e.g. negative padding): the reference loops do them
      }
    });
  };
  std::shared_ptr<const Plan> plan;
  KFORGE_RETURN_IF_ERROR(guarded(op, [&] {
    plan = find(g);
    // No jit kernel for a reduction in chunks: the whole reduction in one run.
    if (plan == nullptr && g.chunk_ic != 0) {
      g.chunk_ic = 0;
      plan = find(g);
    }
    // No jit kernel for the chosen variant: the other one, where there is one. Plain -> blocked with post-ops;
    // blocked -> plain for an NCHW ungrouped convolution whose post-op chain the blocked kernels of this machine do
    // not take (oneDNN 2.6's jit:avx2 takes per-channel binary post-ops, a batch norm not folded, but not with a sum,
    // the residual).
    ConvGeometry other = g;
    other.blocked = !g.blocked;
    const bool other_exists = other.blocked || (g.kind == ConvKind::kConv && !g.channel_last && g.groups == 1);
    if (plan == nullptr && other_exists) plan = find(other);
    // Batch-norm post-ops with a residual no jit kernel takes (AVX2, NHWC or grouped): the batch norm folded into
    // the filter on every call instead (a pass over the filter per call; kept ones are folded once anyway).
    if (plan == nullptr && g.batch_norm_post_ops) {
      ConvGeometry folded = g;
      folded.blocked = true;
      folded.batch_norm_post_ops = false;
      folded.bias = true;
      plan = find(folded);
    }
    return Status::OK();
  }));
  site->epoch = epoch;
  site->constant = constant;
  site->plan = std::move(plan);
  return Status::OK();
}

Status convolve(const char* op, const ConvGeometry& g, const Tensor& input, const Tensor& filter,
                const ConvEpilogue& e, int64_t images, Tensor* out, bool* handled) {
  *handled = false;
  if (images == 0 || out->numel() == 0) {
    *handled = true;
    return Status::OK();
  }
  if (input.numel() == 0 || filter.numel() == 0) return Status::OK();  // the reference loops write the zeros
  SingleThreadScope single;
  bool fresh = false;
  ConvSite& site = this_thread_sites<ConvSite>().find(reinterpret_cast<uintptr_t>(filter.data), reinterpret_cast<uintptr_t>(out->data),
                                     site_key(g, e, filter, images), &fresh);
  const uint64_t epoch = constants_epoch();
  if (fresh || site.epoch != epoch) {
    const ConvSite::Key key = site.key;
    site = ConvSite{};
    site.key = key;
    Status status = resolve(op, g, filter, e, images, epoch, &site);
    if (!status.ok()) {
      site.key = ConvSite::Key{};  // resolved again on the next call
      return status;
    }
  }
  if (site.plan == nullptr) return Status::OK();
  g_last_plan = site.plan;
  *handled = true;
  return run(op, site, input, filter, e, images, out);
}

}  // namespace

ConvPlanInfo last_conv_plan() {
  if (g_last_plan == nullptr) return ConvPlanInfo{};
  const auto& p = static_cast<const ConvPlan&>(*g_last_plan);
  return ConvPlanInfo{p.geo.blocked,        p.geo.chunks(), p.geo.group_images,
                      p.geo.ic_chunks(),    static_cast<int64_t>(p.bands.size()), p.impl};
}

Status conv2d(const char* op, const Tensor& input, const Tensor& filter, const util::ConvShape& s,
              const ConvEpilogue& epilogue, Tensor* out, bool* handled) {
  if (small_conv2d_fits(input, s, epilogue, *out)) {  // oneDNN would pad the output channels to 16
    *handled = true;
    return small_conv2d(input, filter, s, epilogue, out);
  }
  ConvGeometry g;
  g.kind = ConvKind::kConv;
  g.channel_last = s.channel_last;
  g.nchw8c = s.nchw8c;
  g.plain_input = s.plain_input;
  g.ic = s.in_c, g.ih = s.in_h, g.iw = s.in_w, g.oc = s.out_c, g.oh = s.out_h, g.ow = s.out_w;
  g.kh = s.k_h, g.kw = s.k_w, g.groups = s.groups;
  g.sh = s.g.stride_h, g.sw = s.g.stride_w, g.dh = s.g.dilation_h, g.dw = s.g.dilation_w;
  g.pt = s.g.pad_top, g.pl = s.g.pad_left;
  // oneDNN wants out = (in + pt + pb - span) / stride + 1 exactly: the bottom / right padding that gives Paddle's
  // output size (smaller than Paddle's when the last stride does not fit; those rows are never read).
  g.pb = (g.oh - 1) * g.sh + (g.kh - 1) * g.dh + 1 - g.ih - g.pt;
  g.pr = (g.ow - 1) * g.sw + (g.kw - 1) * g.dw + 1 - g.iw - g.pl;
  // An NHWC 1 x 1 convolution with stride 1 and no padding is one GEMM over the pixels, and each row of pixels is
  // an image of its own in the same memory: tasks then split the rows (contiguous in NHWC), never the output
  // channels, whose chunks are strided slices of an NHWC output that oneDNN only writes through a copy
  // (conv_plan.cc's choose_chunk).
  int64_t images = s.n;
  if (g.channel_last && g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.pt == 0 && g.pl == 0 && g.pb == 0 &&
      g.pr == 0 && g.oh == g.ih && g.ow == g.iw) {
    g.image_pixels = g.oh * g.ow;
    images *= g.ih;
    g.ih = g.oh = 1;
    // Rows that all go to one task are one row of all their pixels: oneDNN's brgconv_1x1 runs a GEMM per image, so
    // as rows it read the whole filter once per row (mobilenet_v1 64²: 512 -> 512 channels at 4 x 4 pixels, four
    // passes over a 1 MB filter; 1024 -> 1024 at 2 x 2, two over 4 MB), as one row once. The split, and so the
    // result, still depends on the shapes only.
    if (images > 1 && images_per_task(g, images) == images) {
      g.iw = g.ow = images * g.iw;
      images = 1;
    }
  }
  return convolve(op, g, input, filter, epilogue, images, out, handled);
}

Status conv2d_transpose(const Tensor& x, const Tensor& filter, const util::ConvShape& s, Tensor* out, bool* handled) {
  if (small_conv2d_transpose_fits(x, s)) {  // oneDNN would pad both channel counts to 16
    *handled = true;
    return small_conv2d_transpose(x, filter, s, out);
  }
  ConvGeometry g;
  g.kind = ConvKind::kDeconv;
  g.channel_last = s.channel_last;
  g.ic = s.in_c, g.ih = s.in_h, g.iw = s.in_w, g.oc = s.out_c, g.oh = s.out_h, g.ow = s.out_w;
  g.kh = s.k_h, g.kw = s.k_w, g.groups = s.groups;
  g.sh = s.g.stride_h, g.sw = s.g.stride_w, g.dh = s.g.dilation_h, g.dw = s.g.dilation_w;
  g.pt = s.g.pad_top, g.pl = s.g.pad_left;
  // out = (in - 1) * stride - pt - pb + span: output_padding / output_size make Paddle's out larger, which is a
  // smaller (possibly negative) bottom / right padding here.
  g.pb = (g.ih - 1) * g.sh + (g.kh - 1) * g.dh + 1 - g.pt - g.oh;
  g.pr = (g.iw - 1) * g.sw + (g.kw - 1) * g.dw + 1 - g.pl - g.ow;
  return convolve("conv2d_transpose", g, x, filter, ConvEpilogue{}, s.n, out, handled);
}

}  // namespace kforge::kernels::onednn
