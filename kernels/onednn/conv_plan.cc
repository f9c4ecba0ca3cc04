// Convolution plans: the task split, the variant and the primitive (conv_plan.h; conv.cc runs them).
#include "onednn/conv_plan.h"

#include <algorithm>
#include <array>
#include <cstring>

namespace kforge::kernels::onednn {

namespace {

using tag = dnnl::memory::format_tag;

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

// Reduction chunks (choose_ic_chunk; issue 34 item 5, docs/dynamic-shapes-measured.md "Precision"). oneDNN 2.6's
// brgconv adds all ic x kh x kw products of an output into one float32 accumulator; Paddle's im2col + sgemm sums
// blocks of them, and PP-OCRv5's server det came out 1.9x as far from a float64 run as Paddle's own float32.
// Cutting a long reduction into primitive runs over chunks of input channels, each summed in an accumulator of
// its own and then into the output (a sum post-op), gives a blocked sum too: 1.07x. It costs the extra output
// passes, the dense copy of each input chunk and brgconv's lower speed on 16 channels: +5 to +7 % on a 3 x 3
// 64 -> 64 layer alone at 28 x 28 to 80 x 80, +10 % at 64 -> 32 (the doc's measurements), hardly less on large
// outputs. So it is a scope, not a cost optimum: outputs of at least 20 x 20 pixels, and only where the copies are
// cheap. The server det's gain is at 80 x 80 (its 48- and 64-channel 3 x 3 layers at a quarter of the input's
// side); RT-DETR's encoder at 320 x 320 needs its 40 x 40 and 20 x 20 layers too (1.19x Paddle's mean distance from
// float64 at the encoder's output with chunks from 64 x 64 on; docs/model-zoo.md "RT-DETR, op by op"). Below 20 x 20
// the fixed cost of a primitive run dominates: chunking every size made resnet18 at 64 x 64 +40 %, from 20 x 20 on
// it is unchanged there, +1.5 % at 224 x 224 and within noise for resnet50 at 224 x 224.
constexpr int64_t kChunkProducts = 256;        // reductions longer than this are cut, into chunks within it
constexpr int64_t kChunkChannels = 16;         // chunks of a multiple of this many channels (brgconv's block)
constexpr int64_t kChunkFromPixels = 20 * 20;  // output pixels per image
// Each copied input element feeds kh * kw * oc multiply-adds of its chunk: below this the copies are a large share
// (the mobile det's 96 -> 24 3 x 3 neck layers, 216: +16 % each, most of it the copies).
constexpr int64_t kChunkMinUsesPerCopy = 256;
// Row bands of a reduction in chunks (ConvPlan::bands): an output chunk larger than this runs in bands of about
// this many bytes of output rows. Whole, each chunk's sum post-op reads and writes all of the output (2.4 MB for a
// 96-channel 80 x 80 layer of PP-YOLOE+-s), from L3 rather than L2 (1 MB per core on the development machine).
constexpr int64_t kBandOutputBytes = int64_t{256} << 10;

int64_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// Rows of an NHWC 1 x 1 convolution (conv.cc's conv2d makes each an image) per task: at least this many
// multiply-adds, so that a task's primitive run outweighs its fixed cost (mobilenet_v2 224²: tasks of 256 pixels
// ran 214 primitives per inference).
constexpr int64_t kMinRowTaskMacs = int64_t{4} << 20;

bool rows_as_images(const ConvGeometry& g) {
  return g.channel_last && g.kind == ConvKind::kConv && g.groups == 1 && g.kh == 1 && g.kw == 1 && g.ih == 1 &&
         g.oh == 1;
}

// The largest divisor of n not above ceil(task pixels / pixels).
int64_t choose_group_images(const ConvGeometry& g, int64_t n, int64_t pixels) {
  int64_t task = kPixelsPerTask;
  if (rows_as_images(g)) task = std::max(task, kMinRowTaskMacs / std::max<int64_t>(g.ic * g.oc, 1));
  const int64_t want = std::max<int64_t>(1, (task + pixels - 1) / std::max<int64_t>(pixels, 1));
  for (int64_t g = std::min(n, want); g > 1; --g) {
    if (n % g == 0) return g;
  }
  return 1;
}

// The output channels of one task: a chunk of 64, 48 or 32 (the first that divides them) of an ungrouped
// convolution, when that chunk has at least kMinChunkMacs multiply-adds; else all of them. An NHWC chunk is a strided
// slice of the output, which oneDNN (2.6 to 3.13, bench/layouts/impl_probe.cc) writes only with its reference
// implementation, so the primitive writes a dense chunk that is then copied into place.
int64_t choose_chunk(const ConvGeometry& g) {
  if (g.kind != ConvKind::kConv || g.groups != 1) return g.oc;
  // An nChw8c chunk of 64, 48 or 32 channels is contiguous in one image only (nChw8c has no strided form).
  if (g.nchw8c && g.group_images > 1) return g.oc;
  // An NHWC 1 x 1 convolution over rows of pixels (conv.cc's conv2d): the rows are the tasks.
  if (rows_as_images(g)) return g.oc;
  const int64_t macs_per_channel = g.group_images * g.oh * g.ow * g.ic * g.kh * g.kw;
  for (int64_t c : {64, 48, 32}) {
    if (g.oc > c && g.oc % c == 0 && c * macs_per_channel >= kMinChunkMacs) return c;
  }
  return g.oc;
}

// The variant (conv.cc's file comment). Grouped and depthwise convolutions, NHWC and conv2d_transpose are always
// blocked: their gemm-based primitives are 3 to 27x slower (depthwise 3 x 3, mobilenet_v2 shapes). So is NCHW8c,
// which the plain variant does not read.
bool choose_blocked(const ConvGeometry& g, int64_t images, bool constant) {
  if (g.kind != ConvKind::kConv || g.channel_last || g.nchw8c || g.groups != 1) return true;
  const int64_t pixels = images * g.oh * g.ow;
  if (g.kh == 1 && g.kw == 1) return constant && pixels < kPlain1x1FromPixels;
  return constant || pixels >= kPlainBelowPixels;
}

// Whether an NHWC convolution lets oneDNN pick its activations' layout, reordering them there and back, rather than
// asking for NHWC: ungrouped k x k convolutions (k > 1). On AVX2, oneDNN 2.6's jit:avx2 kernel is much slower on
// NHWC than on nChw8c at these (resnet18 224² layer1 3 x 3: 5.0 ms against 3.4, and 3.8 with reorders from and to
// NCHW around it, bench/layouts/conv_layouts.cc), and with the reorders from and to NHWC whole models gain
// (resnet18 224² 0.88x, resnet50 224² 0.89x, resnet18 64² 1.01x of the time, BENCHMARKS.md), while for 1 x 1 and depthwise ones the reorders cost more than the blocked kernel saves. On
// AVX-512, brgconv picks NHWC itself and nothing is reordered either way.
bool prefers_own_layout(const ConvGeometry& g) {
  return g.kind == ConvKind::kConv && g.groups == 1 && g.kh * g.kw > 1;
}

struct Eltwise {
  dnnl::algorithm alg;
  float alpha, beta;
};

// The oneDNN eltwise of an activation (activation.h gives the formulas); false for none.
bool eltwise_of(util::Activation a, float alpha, float beta, Eltwise* e) {
  using util::Activation;
  switch (a) {
    case Activation::kNone: return false;
    case Activation::kRelu: *e = {dnnl::algorithm::eltwise_relu, 0.f, 0.f}; return true;
    case Activation::kLeakyRelu: *e = {dnnl::algorithm::eltwise_relu, alpha, 0.f}; return true;
    case Activation::kRelu6: *e = {dnnl::algorithm::eltwise_clip_v2, 0.f, 6.f}; return true;
    case Activation::kClip: *e = {dnnl::algorithm::eltwise_clip_v2, alpha, beta}; return true;
    case Activation::kHardswish: *e = {dnnl::algorithm::eltwise_hardswish, 0.f, 0.f}; return true;
    case Activation::kSigmoid: *e = {dnnl::algorithm::eltwise_logistic, 0.f, 0.f}; return true;
    case Activation::kTanh: *e = {dnnl::algorithm::eltwise_tanh, 0.f, 0.f}; return true;
    case Activation::kSwish: *e = {dnnl::algorithm::eltwise_swish, 1.f, 0.f}; return true;
    case Activation::kGelu: *e = {dnnl::algorithm::eltwise_gelu_erf, 0.f, 0.f}; return true;
    case Activation::kGeluTanh: *e = {dnnl::algorithm::eltwise_gelu_tanh, 0.f, 0.f}; return true;
  }
  return false;
}

// Scratchpad by the caller, and the epilogue as post-ops: [batch norm: multiply, add per channel] [activation]
// [sum: the residual] [activation]. conv.cc passes the batch norm's operands as post-ops 0 and 1. With
// `residual_src1` (a descriptor of the output), the residual is a binary add of that operand instead of a sum into
// the output, and *residual_post_op says which post-op it is.
dnnl::primitive_attr attributes(const ConvGeometry& g, const dnnl::memory::desc* residual_src1 = nullptr,
                                int* residual_post_op = nullptr) {
  dnnl::primitive_attr attr = user_scratchpad();
  dnnl::post_ops ops;
  if (g.batch_norm_post_ops) {
    const dnnl::memory::desc per_channel = f32_desc({1, g.chunk_oc, 1, 1}, dnnl::memory::format_tag::nchw);
    ops.append_binary(dnnl::algorithm::binary_mul, per_channel);
    ops.append_binary(dnnl::algorithm::binary_add, per_channel);
  }
  Eltwise e{};
  const bool act = eltwise_of(g.activation, g.alpha, g.beta, &e);
  if (act && !g.activation_after_residual) append_eltwise(&ops, e.alg, e.alpha, e.beta);
  if (g.residual && residual_src1 != nullptr) {
    *residual_post_op = ops.len();
    ops.append_binary(dnnl::algorithm::binary_add, *residual_src1);
  } else if (g.residual) {
    ops.append_sum(1.f);
  }
  if (act && g.activation_after_residual) append_eltwise(&ops, e.alg, e.alpha, e.beta);
  attr.set_post_ops(ops);
  return attr;
}

// Whether a blocked convolution's residual may be a binary post-op read from the caller's tensor (build_conv_plan's
// last resort): an activation before the residual, which oneDNN 2.6's jit:avx2 kernels take before a binary add
// but not before a sum (only its reference code does: PP-YOLOE+-s's CSPResNet blocks, swish then the shortcut,
// ran through kforge's reference loops on an AVX2 machine, 80 % of the inference), one reduction run (a chunk's sum
// post-ops accumulate in the output), and the output written where the caller has it (the operand is read in the
// output's layout).
bool residual_as_binary(const ConvGeometry& g) {
  return g.kind == ConvKind::kConv && g.blocked && g.ic_chunks() == 1 && g.residual &&
         g.activation != util::Activation::kNone && !g.activation_after_residual && g.out_stride == 0;
}

// Which chunk of a reduction in chunks (ConvGeometry::chunk_ic) a primitive runs.
enum class ReductionPart { kFirst, kMiddle, kLast };

// The post-ops of one reduction chunk (choose_ic_chunk allows no batch-norm post-ops and no activation before the
// residual): the first writes its sum (and the bias, not a post-op) or adds it to the residual already in the
// output; every later one adds its sum to the output (a sum post-op), and the last then applies the activation.
dnnl::primitive_attr chunk_attributes(const ConvGeometry& g, ReductionPart part) {
  dnnl::primitive_attr attr = user_scratchpad();
  dnnl::post_ops ops;
  if (part != ReductionPart::kFirst || g.residual) ops.append_sum(1.f);
  Eltwise e{};
  if (part == ReductionPart::kLast && eltwise_of(g.activation, g.alpha, g.beta, &e)) {
    append_eltwise(&ops, e.alg, e.alpha, e.beta);
  }
  attr.set_post_ops(ops);
  return attr;
}

// The plain variant's epilogue as one binary primitive (jit, in place on the output chunk); false when oneDNN has
// only its reference implementation for it.
bool add_epilogue(const ConvGeometry& g, ConvPlan* plan) {
  plan->per_channel = f32_desc({1, g.chunk_oc, 1, 1}, tag::nchw);
  plan->epilogue_dst = plan->user_dst;
  plan->epilogue_channel = plan->per_channel;
  if (g.oh * g.ow == 1) {
    // A 1 x 1 output's [n, chunk, 1, 1] has the strides of NCHW and NHWC alike, and oneDNN 2.6's binary then applied
    // the per-channel operand per block of 8 channels: channel c got shift[8 * (c / 8)] (a squeeze-excitation's
    // bias in GraphNet's MobileNetV3 samples, seed 10, docs/model-zoo.md). As [n, chunk] and [1, chunk] it is plain.
    const dnnl_dim_t* strides = plan->user_dst.data.format_desc.blocking.strides;
    plan->epilogue_dst = f32_strided({plan->user_dst.dims()[0], g.chunk_oc}, {strides[0], strides[1]});
    plan->epilogue_channel = f32_desc({1, g.chunk_oc}, tag::ab);
  }
  dnnl::post_ops ops;
  ops.append_binary(dnnl::algorithm::binary_add, plan->epilogue_channel);
  Eltwise e{};
  const bool act = eltwise_of(g.activation, g.alpha, g.beta, &e);
  if (act && !g.activation_after_residual) append_eltwise(&ops, e.alg, e.alpha, e.beta);
  if (g.residual) {
    plan->residual_post_op = ops.len();
    ops.append_binary(dnnl::algorithm::binary_add, plan->epilogue_dst);
  }
  if (act && g.activation_after_residual) append_eltwise(&ops, e.alg, e.alpha, e.beta);
  dnnl::primitive_attr attr = user_scratchpad();
  attr.set_post_ops(ops);
  const dnnl::binary::primitive_desc pd =
      binary_pd(dnnl::algorithm::binary_mul, plan->epilogue_dst, plan->epilogue_channel, plan->epilogue_dst, attr);
  if (!pd || is_reference_impl(pd)) return false;
  plan->epilogue = dnnl::binary(pd);
  plan->scratchpad_bytes = std::max(plan->scratchpad_bytes, pd.scratchpad_desc().get_size());
  return true;
}

// The first and middle primitives of a reduction in chunks, on exactly the descriptors the last one chose; false
// where oneDNN has no jit implementation for them.
bool add_reduction_parts(const ConvGeometry& g, ConvPlan* plan) {
  const Dims strides{g.sh, g.sw}, dilates{g.dh - 1, g.dw - 1}, pad_l{g.pt, g.pl}, pad_r{g.pb, g.pr};
  for (ReductionPart part : {ReductionPart::kFirst, ReductionPart::kMiddle}) {
    if (part == ReductionPart::kMiddle && g.ic_chunks() < 3) break;
    const dnnl::convolution_forward::primitive_desc pd =
        convolution_pd(plan->src, plan->weights, part == ReductionPart::kFirst ? plan->bias : dnnl::memory::desc(),
                       plan->dst, strides, dilates, pad_l, pad_r, chunk_attributes(g, part));
    if (!pd || is_reference_impl(pd)) return false;
    (part == ReductionPart::kFirst ? plan->first_prim : plan->middle_prim) = dnnl::convolution_forward(pd);
    plan->scratchpad_bytes = std::max(plan->scratchpad_bytes, pd.scratchpad_desc().get_size());
  }
  return true;
}

// Row bands of a reduction in chunks (ConvPlan::bands), when the primitives read and write NHWC (rows contiguous,
// as brgconv picks on AVX-512) and oneDNN runs each band with the whole's implementation and filter layout; else
// none. Each band reads the input rows its output rows reach, with the padding of the whole where it reaches past
// the image: every output element gets the products and the post-ops it gets in the whole.
void add_bands(const ConvGeometry& g, ConvPlan* plan) {
  const int64_t ic = g.chunk_ic, chunk = g.chunk_oc;
  if (g.group_images != 1 || !plan->src_reorder) return;
  const bool nhwc = plan->src == f32_desc({1, ic, g.ih, g.iw}, tag::nhwc) &&
                    plan->dst == f32_desc({1, chunk, g.oh, g.ow}, tag::nhwc);
  if (!nhwc) return;
  const int64_t rows = std::max<int64_t>(1, kBandOutputBytes / (g.ow * chunk * int64_t{sizeof(float)}));
  if (rows >= g.oh) return;
  const int64_t span = (g.kh - 1) * g.dh + 1;
  const Dims strides{g.sh, g.sw}, dilates{g.dh - 1, g.dw - 1};
  std::vector<std::array<int64_t, 4>> shapes;  // per kind: input rows, top and bottom padding, output rows
  try {
    for (int64_t r0 = 0; r0 < g.oh; r0 += rows) {
      const int64_t r = std::min(rows, g.oh - r0);
      const int64_t lo = r0 * g.sh - g.pt, hi = (r0 + r - 1) * g.sh - g.pt + span;  // the rows reached, padded
      const int64_t in0 = std::max<int64_t>(lo, 0), in1 = std::min(hi, g.ih);
      if (in1 <= in0) throw dnnl::error(dnnl_invalid_arguments, "a band of padding only");
      const std::array<int64_t, 4> shape{in1 - in0, in0 - lo, hi - in1, r};
      const size_t kind = static_cast<size_t>(std::find(shapes.begin(), shapes.end(), shape) - shapes.begin());
      if (kind == shapes.size()) {
        ConvPlan::BandKind k;
        k.src = f32_desc({1, ic, shape[0], g.iw}, tag::nhwc);
        k.dst = f32_desc({1, chunk, r, g.ow}, tag::nhwc);
        for (ReductionPart part : {ReductionPart::kFirst, ReductionPart::kMiddle, ReductionPart::kLast}) {
          if (part == ReductionPart::kMiddle && g.ic_chunks() < 3) continue;
          const dnnl::convolution_forward::primitive_desc pd = convolution_pd(
              k.src, plan->weights, part == ReductionPart::kFirst ? plan->bias : dnnl::memory::desc(), k.dst, strides,
              dilates, {shape[1], g.pl}, {shape[2], g.pr}, chunk_attributes(g, part));
          if (!pd || is_reference_impl(pd) || pd.impl_info_str() != plan->impl || pd.weights_desc() != plan->weights ||
              pd.src_desc() != k.src || pd.dst_desc() != k.dst) {
            throw dnnl::error(dnnl_unimplemented, "no band of the whole's implementation");
          }
          plan->scratchpad_bytes = std::max(plan->scratchpad_bytes, pd.scratchpad_desc().get_size());
          const dnnl::convolution_forward prim(pd);
          (part == ReductionPart::kFirst ? k.first : part == ReductionPart::kLast ? k.last : k.middle.emplace()) = prim;
        }
        shapes.push_back(shape);
        plan->band_kinds.push_back(std::move(k));
      }
      plan->bands.push_back({r0, in0, kind});
      plan->band_src_bytes = std::max(plan->band_src_bytes, plan->band_kinds[kind].src.get_size());
    }
    plan->band_copies = g.chunks() == 1 && g.channel_last;  // conv.cc copies NHWC rows (NCHW: phase 1 reorders)
  } catch (const dnnl::error&) {  // the whole output in each primitive run, as without bands
    plan->bands.clear();
    plan->band_kinds.clear();
  }
}

}  // namespace

PlanKey ConvGeometry::key() const {
  return {static_cast<int64_t>(kind), channel_last, nchw8c, plain_input, blocked, group_images, ic, ih, iw, oc, oh, ow, kh, kw, groups,
          chunk_oc, chunk_ic, sh, sw, dh, dw, pt, pb, pl, pr, bias, batch_norm_post_ops,
          static_cast<int64_t>(activation), bits_of(alpha), bits_of(beta), activation_after_residual, residual,
          out_stride};
}

int64_t images_per_task(const ConvGeometry& g, int64_t images) {
  return choose_group_images(g, images, g.oh * g.ow);
}

void choose_split(ConvGeometry* g, int64_t images, bool constant) {
  g->group_images = choose_group_images(*g, images, g->oh * g->ow);
  g->chunk_oc = choose_chunk(*g);
  g->blocked = choose_blocked(*g, images, constant);
  g->chunk_ic = choose_ic_chunk(*g, constant);
}

int64_t choose_ic_chunk(const ConvGeometry& g, bool constant) {
  // Blocked ungrouped convolutions with a kept filter only: the chunks' filters are prepared once. The epilogue
  // must be one the last chunk can apply after the sum: not a batch norm as post-ops nor an activation before the
  // residual (the residual is in the output before the first chunk's sum is added to it).
  if (g.kind != ConvKind::kConv || g.groups != 1 || !g.blocked || g.nchw8c || !constant || g.batch_norm_post_ops) {
    return 0;
  }
  if (g.activation != util::Activation::kNone && g.residual && !g.activation_after_residual) return 0;
  // A 1 x 1 NHWC convolution over rows of pixels (conv.cc's conv2d): the pixels of one of the caller's images, not
  // of a row (a task's rows run as one primitive). Whole, 512 or 1024 products in one accumulator put
  // PP-DocLayout-M's 1 x 1 groups at 1.4x-2.0x Paddle's local error from float64 (docs/model-zoo.md, "PicoDet and
  // PP-DocLayout-M against float64").
  const int64_t pixels = rows_as_images(g) ? g.image_pixels : g.oh * g.ow;
  const int64_t taps = g.kh * g.kw;
  if (g.ic * taps <= kChunkProducts || pixels < kChunkFromPixels || taps * g.oc < kChunkMinUsesPerCopy) return 0;
  // The largest multiple of kChunkChannels that divides ic and keeps a chunk within kChunkProducts; else the
  // smallest (a 9 x 9 kernel: 16 channels, 1296 products).
  int64_t best = 0;
  for (int64_t c = kChunkChannels; c < g.ic; c += kChunkChannels) {
    if (g.ic % c == 0 && (best == 0 || c * taps <= kChunkProducts)) best = c;
  }
  return best;
}

std::shared_ptr<Plan> build_conv_plan(const ConvGeometry& g) {
  auto plan = std::make_shared<ConvPlan>();
  plan->geo = g;
  const tag act = g.nchw8c ? tag::nChw8c : g.channel_last ? tag::nhwc : tag::nchw;
  const int64_t n = g.group_images, chunk = g.chunk_oc;
  const int64_t ic = g.ic_chunks() > 1 ? g.chunk_ic : g.ic;  // the input channels of one primitive run
  if (g.ic_chunks() > 1) {  // a slice of the caller's channels (choose_ic_chunk: NCHW or NHWC)
    plan->user_src = g.channel_last ? f32_strided({n, ic, g.ih, g.iw}, {g.ih * g.iw * g.ic, 1, g.iw * g.ic, g.ic})
                                    : f32_strided({n, ic, g.ih, g.iw}, {g.ic * g.ih * g.iw, g.ih * g.iw, g.iw, 1});
  } else {
    plan->user_src = f32_desc({n, g.ic, g.ih, g.iw}, g.plain_input ? tag::nchw : act);
  }
  plan->per_channel = f32_desc({1, chunk, 1, 1}, tag::nchw);
  const int64_t pixel = g.pixel_stride();  // a slice of a wider NHWC tensor: the primitive writes a dense copy
  if ((g.chunks() == 1 && pixel == g.oc) || (!g.channel_last && n == 1)) {  // choose_chunk: so is every nChw8c chunk
    plan->user_dst = f32_desc({n, chunk, g.oh, g.ow}, act);  // the chunk is contiguous in the caller's tensor
  } else if (g.channel_last) {
    plan->user_dst = f32_strided({n, chunk, g.oh, g.ow}, {g.oh * g.ow * pixel, 1, g.ow * pixel, pixel});
  } else {
    plan->user_dst = f32_strided({n, chunk, g.oh, g.ow}, {g.oc * g.oh * g.ow, g.oh * g.ow, g.ow, 1});
  }
  if (g.kind == ConvKind::kConv) {
    const int64_t taps = g.kh * g.kw;
    if (g.ic_chunks() > 1) {  // a slice of the filter's input channels
      plan->user_weights = f32_strided({chunk, ic, g.kh, g.kw}, {g.ic * taps, taps, g.kw, 1});
    } else {
      plan->user_weights = g.groups == 1 ? f32_desc({chunk, g.ic, g.kh, g.kw}, tag::oihw)
                                         : f32_desc({g.groups, g.oc / g.groups, g.ic / g.groups, g.kh, g.kw}, tag::goihw);
    }
  } else {  // Paddle's [in_c, out_c / groups, kh, kw]
    plan->user_weights = g.groups == 1 ? f32_desc({g.oc, g.ic, g.kh, g.kw}, tag::iohw)
                                       : f32_desc({g.groups, g.oc / g.groups, g.ic / g.groups, g.kh, g.kw}, tag::giohw);
  }
  if (g.bias && g.blocked) plan->bias = f32_desc({chunk}, tag::a);
  const dnnl::memory::desc any_src = f32_desc({n, ic, g.ih, g.iw}, tag::any);
  // The caller's layout where the primitive reads it in place; a reduction chunk is copied dense into it first.
  const dnnl::memory::desc caller_src = g.ic_chunks() > 1 ? f32_desc({n, ic, g.ih, g.iw}, act) : plan->user_src;
  const dnnl::memory::desc any_dst = f32_desc({n, chunk, g.oh, g.ow}, tag::any);
  const dnnl::memory::desc any_weights(dims_of(plan->user_weights), dnnl::memory::data_type::f32, tag::any);
  const Dims strides{g.sh, g.sw}, dilates{g.dh - 1, g.dw - 1}, pad_l{g.pt, g.pl}, pad_r{g.pb, g.pr};
  const bool reduction_chunks = g.ic_chunks() > 1;
  dnnl::primitive_attr attr = reduction_chunks ? chunk_attributes(g, ReductionPart::kLast)
                              : g.blocked      ? attributes(g)
                                               : user_scratchpad();
  const dnnl::memory::desc& weights_md = g.blocked ? any_weights : plan->user_weights;
  const dnnl::memory::desc no_bias;
  // The primitive for given src / dst layouts; an empty one where oneDNN has only its reference implementation.
  auto make = [&](const dnnl::memory::desc& src_md, const dnnl::memory::desc& dst_md) -> dnnl::primitive_desc_base {
    if (g.kind == ConvKind::kConv) {
      const dnnl::convolution_forward::primitive_desc conv_pd = convolution_pd(
          src_md, weights_md, reduction_chunks ? no_bias : plan->bias, dst_md, strides, dilates, pad_l, pad_r, attr);
      if (!conv_pd || is_reference_impl(conv_pd)) return {};
      plan->prim = dnnl::convolution_forward(conv_pd);
      return conv_pd;
    }
    const dnnl::deconvolution_forward::primitive_desc deconv_pd =
        deconvolution_pd(src_md, weights_md, plan->bias, dst_md, strides, dilates, pad_l, pad_r, attr);
    if (!deconv_pd || is_reference_impl(deconv_pd)) return {};
    plan->prim = dnnl::deconvolution_forward(deconv_pd);
    return deconv_pd;
  };
  dnnl::primitive_desc_base pd;
  if (!g.blocked) {
    pd = make(plan->user_src, plan->user_dst);
  } else if (g.nchw8c) {
    // nChw8c in and out, no reorders, as the caller chose it for that; oneDNN's own layout (with reorders around
    // the primitive) only where it has no jit kernel for nChw8c, which beats the reference loops still.
    pd = make(plan->user_src, plan->user_dst);
    if (!pd) pd = make(any_src, any_dst);
  } else if (g.channel_last && !prefers_own_layout(g)) {
    // NHWC in and out where oneDNN has a jit kernel for it: left to choose (`any`), its AVX2 kernels pick nChw8c
    // and every convolution would reorder its input and output (resnet50 64² 7 %, mobilenet_v2 64² 19 % of the
    // inference on an AVX2 machine); AVX-512's brgconv picks NHWC either way. A chunk is written dense and copied
    // into place (choose_chunk).
    pd = make(caller_src, f32_desc({n, chunk, g.oh, g.ow}, tag::nhwc));
    if (!pd) pd = make(any_src, any_dst);
  } else if (g.channel_last) {
    // An ungrouped k x k convolution: oneDNN's own layout, NHWC only where it has no jit kernel for that.
    pd = make(any_src, any_dst);
    if (!pd) pd = make(caller_src, f32_desc({n, chunk, g.oh, g.ow}, tag::nhwc));
  } else {
    pd = make(any_src, any_dst);
  }
  if (!pd && residual_as_binary(g)) {
    // No jit kernel with the residual as a sum after the activation: as a binary add of the caller's residual
    // (conv.cc passes it, saved first where it is the output's own memory), the output in the caller's layout.
    attr = attributes(g, &plan->user_dst, &plan->residual_post_op);
    pd = make(g.nchw8c ? plan->user_src : any_src, plan->user_dst);
    if (!pd) plan->residual_post_op = -1;
  }
  if (!pd) return nullptr;
  plan->src = pd.src_desc();
  plan->weights = pd.weights_desc();
  plan->dst = pd.dst_desc();
  plan->impl = pd.impl_info_str();
  plan->scratchpad_bytes = pd.scratchpad_desc().get_size();
  if (reduction_chunks && !add_reduction_parts(g, plan.get())) return nullptr;
  plan->src_bytes = plan->src.get_size();
  plan->weights_bytes = plan->weights.get_size();
  plan->dst_bytes = plan->dst.get_size();
  plan->src_reorder = make_reorder(plan->user_src, plan->src, &plan->scratchpad_bytes);
  plan->weights_reorder = make_reorder(plan->user_weights, plan->weights, &plan->scratchpad_bytes);
  plan->dst_reorder = make_reorder(plan->dst, plan->user_dst, &plan->scratchpad_bytes);
  if (reduction_chunks) add_bands(g, plan.get());
  plan->copy_pixels = plan->dst_reorder && g.channel_last && g.out_stride != 0 &&
                      plan->dst == f32_desc({n, chunk, g.oh, g.ow}, tag::nhwc);
  if (g.separate_epilogue()) return add_epilogue(g, plan.get()) ? plan : nullptr;
  if (plan->residual_post_op >= 0) return plan;  // the residual is an operand, not in the output first
  if (g.residual && plan->dst_reorder) {
    plan->residual_in = make_reorder(plan->user_dst, plan->dst, &plan->scratchpad_bytes);
  } else if (g.residual) {
    plan->residual_copy = make_reorder(plan->user_dst, plan->user_dst, &plan->scratchpad_bytes, true);
  }
  return plan;
}

}  // namespace kforge::kernels::onednn
