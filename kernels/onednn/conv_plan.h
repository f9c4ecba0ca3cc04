// Plans of the oneDNN convolutions (conv.cc runs them): what defines one, how the work is split, the variant, and
// the primitive with its reorders and post-ops. Internal to kernels/onednn/.
#ifndef KFORGE_KERNELS_ONEDNN_CONV_PLAN_H_
#define KFORGE_KERNELS_ONEDNN_CONV_PLAN_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "activation.h"
#include "onednn/runtime.h"

namespace kforge::kernels::onednn {

enum class ConvKind : int64_t { kConv = 1, kDeconv = 2 };

// Everything that defines a convolution plan (its PlanKey).
struct ConvGeometry {
  ConvKind kind = ConvKind::kConv;
  bool channel_last = false;
  bool nchw8c = false;       // activations in oneDNN's nChw8c ("NCHW8c"), read and written as they are
  bool plain_input = false;  // NCHW8c with an NCHW input (a stem: util::ConvShape::plain_input)
  bool blocked = true;       // the variant (conv.cc's file comment)
  int64_t group_images = 1;  // images per task
  int64_t ic = 0, ih = 0, iw = 0, oc = 0, oh = 0, ow = 0, kh = 0, kw = 0, groups = 1;
  int64_t chunk_oc = 0;  // output channels per task
  int64_t chunk_ic = 0;  // input channels per primitive run: the reduction in chunks (choose_ic_chunk); 0: all
  // An NHWC 1 x 1 convolution that conv.cc's conv2d runs as rows of pixels: the output pixels of one of the caller's
  // images (choose_ic_chunk's rule counts them, as it counts an image's oh * ow otherwise). Not part of the key:
  // chunk_ic, which it decides, is.
  int64_t image_pixels = 0;
  int64_t sh = 1, sw = 1, dh = 1, dw = 1, pt = 0, pb = 0, pl = 0, pr = 0;  // pb / pr as oneDNN counts them
  // The epilogue of conv2d_fused: a per-channel bias (given, or from a folded batch norm), a batch norm as post-ops
  // (per-channel multiply and add; when it is not folded into the filter), one activation before or after the
  // residual, and the residual (a sum post-op).
  bool bias = false;
  bool batch_norm_post_ops = false;
  util::Activation activation = util::Activation::kNone;
  float alpha = 0, beta = 0;
  bool activation_after_residual = false;
  bool residual = false;
  int64_t out_stride = 0;  // NHWC: elements between output pixels (ConvEpilogue::out_pixel_stride); 0: oc

  int64_t chunks() const { return oc / chunk_oc; }
  int64_t ic_chunks() const { return chunk_ic == 0 ? 1 : ic / chunk_ic; }
  int64_t pixel_stride() const { return out_stride != 0 ? out_stride : oc; }
  // The plain variant's primitive takes no post-ops (oneDNN runs them through its reference code there): its
  // epilogue is a binary primitive over the output instead.
  bool separate_epilogue() const {
    return !blocked && (bias || batch_norm_post_ops || activation != util::Activation::kNone || residual);
  }
  PlanKey key() const;
};

// Fills group_images, chunk_oc, blocked and chunk_ic for a call with `images` images, from the shapes, the
// epilogue and whether the filter is declared constant only.
void choose_split(ConvGeometry* g, int64_t images, bool constant);

// The images per task choose_split picks for a call with `images` images (conv.cc's conv2d asks it for the rows of
// an NHWC 1 x 1 convolution before deciding how to lay them out).
int64_t images_per_task(const ConvGeometry& g, int64_t images);

// The input channels per primitive run of a convolution whose split is chosen otherwise (choose_split calls it):
// 0 (one run over all of them), or a divisor of ic that cuts a long reduction into chunks, each summed in an
// accumulator of its own and then into the output (conv_plan.cc says when and why).
int64_t choose_ic_chunk(const ConvGeometry& g, bool constant);

struct ConvPlan : Plan {
  ConvGeometry geo;
  dnnl::primitive prim;  // the whole reduction, or its last chunk (then a sum into the output, then the activation)
  // Reduction chunks (geo.ic_chunks() > 1): the first chunk's primitive (the bias; a sum into the output holding
  // the residual) and the middle ones' (a sum into the output). All read and write the same descriptors.
  std::optional<dnnl::primitive> first_prim, middle_prim;
  // One image group (and reduction chunk), as the caller and as the primitive lay it out.
  dnnl::memory::desc user_src, src;
  dnnl::memory::desc user_weights, weights;  // one chunk of the filter
  dnnl::memory::desc user_dst, dst;          // one chunk of one image group
  dnnl::memory::desc bias;                   // one chunk of the bias (when geo.bias)
  std::optional<dnnl::reorder> src_reorder, weights_reorder, dst_reorder;  // where the layouts differ
  // The primitive writes a dense NHWC block and the caller's output is a slice of a wider tensor (geo.out_stride):
  // conv.cc copies the block's pixels into place itself, cheaper than running dst_reorder on small layers.
  bool copy_pixels = false;
  std::optional<dnnl::reorder> residual_in;  // the residual into the primitive's dst layout (sum post-op)
  std::optional<dnnl::reorder> residual_copy;  // the residual into the caller's dst, when the primitive writes there
  // separate_epilogue(): out = out * scale[c] with post-ops [+ shift[c]] [activation] [+ residual] [activation], in
  // place on the caller's output chunk; scale / shift are per_channel.
  std::optional<dnnl::binary> epilogue;
  dnnl::memory::desc per_channel;  // [1, chunk_oc, 1, 1]: also the batch-norm post-ops' operands
  // The epilogue's view of user_dst and per_channel: the same, but [n, chunk_oc] and [1, chunk_oc] for a 1 x 1
  // output (add_epilogue says why).
  dnnl::memory::desc epilogue_dst, epilogue_channel;
  // The post-op that adds the residual as a binary operand in user_dst's layout: the epilogue's, or (a blocked
  // plan without separate_epilogue(), build_conv_plan's last resort) the primitive's own; -1: none.
  int residual_post_op = -1;
  size_t src_bytes = 0, weights_bytes = 0, dst_bytes = 0, scratchpad_bytes = 0;
  std::string impl;
  // Row bands of a reduction in chunks over a large NHWC output (conv_plan.cc's add_bands): the task runs every
  // chunk of one band of output rows before the next band, so that the band's output stays in cache between the
  // chunks' sums into it. A band's primitives are the whole's on its rows (its input rows with the padding it
  // reaches), with the same implementation and filter: each output element's sum is the same. Empty: no bands.
  struct BandKind {
    dnnl::memory::desc src, dst;  // the band's input rows of one chunk and its output rows, NHWC
    dnnl::primitive first, last;
    std::optional<dnnl::primitive> middle;  // 3 chunks or more
  };
  struct Band {
    int64_t out_row = 0, in_row = 0;  // its first output row, and the first input row its primitives read
    size_t kind = 0;                  // index into band_kinds
  };
  std::vector<BandKind> band_kinds;
  std::vector<Band> bands;
  // An NHWC caller and one task per image group (no output-channel chunks): each band copies its input rows of
  // each chunk dense just before the chunk's primitive reads them (still in cache), not every chunk of the whole
  // input first.
  bool band_copies = false;
  size_t band_src_bytes = 0;  // the largest band's input rows of one chunk
};

// Builds the plan, or returns null when oneDNN has no implementation for it but its reference one (then another
// variant or the reference loops run). Throws
// dnnl::error for descriptors oneDNN rejects.
std::shared_ptr<Plan> build_conv_plan(const ConvGeometry& g);

}  // namespace kforge::kernels::onednn

#endif  // KFORGE_KERNELS_ONEDNN_CONV_PLAN_H_
