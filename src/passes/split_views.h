// Splits as views (issue 36): the memory plan makes the pieces of a split / split_with_num views of its input, slices
// of the input's buffer at their offsets, so that the split copies nothing (or only the pieces that cannot be views).
//
// A piece is a contiguous slice of the input when the input has one element before the split's axis (a split along
// axis 0, or over the channels of one image in NCHW or NCHW8c): it is then an ordinary dense tensor at an offset of
// the input's memory, which any op reads. Along an inner axis of more than one row (the default NHWC layout's
// channel splits: shufflenet_v2's) a piece is strided, and no reader takes it so: oneDNN 2.6 reads a strided
// convolution source only with its reference implementation (ref:any, checked on shufflenet's 1 x 1 shapes, where a
// dense source takes brgconv_1x1), concat and the kernel calls read dense tensors, and the loop groups would index a
// strided input with a division chain per element. Those pieces stay copies (BENCHMARKS.md, "Split views (issue 36)").
//
// Aliasing is buffer sharing, as for the concat in place (concat_in_place.h), which runs first: a piece moves into
// the input's buffer at LoweredValue::buffer_offset, and the buffer's live range becomes the union of its values'.
// What makes it safe: nothing writes that buffer after the split (every value in it that a later call defines is a
// view's), the piece's own buffer held only it and its views (no in-place twin writes it), and the piece is no
// program output. The split kernel skips a piece whose data already is its slice (kernels/manipulation.cc).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "passes/lowered_program.h"

namespace kforge::passes {

/// One piece of a split made a view of the split's input.
struct SplitView {
  uint32_t split = kNone;  // the split call
  uint32_t value = kNone;  // the piece
  int64_t offset = 0;      // bytes from the input's first element to the piece's
};

/// Makes the pieces of `program`'s splits views of their inputs where they are contiguous slices (file comment),
/// after fusion, apply_fusion_to_memory_plan and the concat in place: sets LoweredValue::buffer_offset, moves the
/// pieces into the inputs' buffers and places the workspace again. Splits inside a fused group (`call_group`, one
/// entry per call or empty) keep their pieces. Returns what it made, in call order.
std::vector<SplitView> make_split_views(LoweredProgram& program, const std::vector<uint32_t>& call_group = {});

/// One line per view, for --dump-lowered and tests: "split call 4: v12 at +256".
std::string dump_split_views(const std::vector<SplitView>& views);

}  // namespace kforge::passes
