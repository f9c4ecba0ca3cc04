// Concat in place (issue 36): the memory plan puts a concat's inputs in their slices of its output, so that their
// producers write there and the concat copies nothing (or only the inputs that could not be put there).
//
// A slice of the output along the concat's axis is
//   - contiguous when the output has one element before the axis (an NCHW or NCHW8c concat over the channels of one
//     image, any concat over axis 0): the input is then an ordinary dense tensor at an offset of the output's buffer,
//     so any producer may write it and any call may read it;
//   - strided otherwise (an NHWC concat over the channels: each pixel's channels are a run of the output's pixel):
//     only a producer that writes with a pixel stride may write it, the library's conv2d_fused
//     (out_pixel_stride, kernels/fusion.yaml), so the input must be the output of a convolution group or of a
//     convolution alone (made a group of its own here), and the concat its only reader (nothing else reads a strided
//     value). oneDNN 2.6 writes such a slice through a dense block that the kernel copies into place, so the copy
//     only moves: strided slices are taken only when every input of the concat goes in place and the concat copies
//     nothing (googlenet's inception blocks; not densenet's layers, whose previous concat is read again).
//
// Aliasing is buffer sharing, as for views and in-place twins (lowered_program.h): a placed value moves into the
// output's buffer at LoweredValue::buffer_offset, and the buffer's live range becomes the union of its values'. What
// makes it safe: every value in that buffer is the output or lies in a slice of it (slices of one concat are
// disjoint, and a placed concat output's own slices lie inside its slice), and no value there is written after it
// is defined, because each one's original buffer held it alone (no in-place twin, no view), it is no program
// output, and a value lives in one concat at most (the first, in call order, that can take it; another concat
// reading it copies it). The memory plan then keeps the whole buffer from being reused while any of them is live.
// Nested concats (densenet's dense blocks in NCHW8c: every layer concatenates the previous concat with one new
// feature map) end up in one buffer, the block's last concat's.
//
// The concat kernel itself stays: it skips an input that already lies in its slice (kernels/manipulation.cc), so a
// concat whose inputs were all placed copies nothing, and one with some (contiguous) placed copies only the others.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "opdef/op_library.h"
#include "passes/fusion.h"
#include "passes/lowered_program.h"

namespace kforge::passes {

struct ConcatInPlaceOptions {
  /// The op set's conv2d_fused, when it takes out_pixel_stride: convolutions may then write strided slices.
  const opdef::Op* conv_fused = nullptr;
  /// Strided slices at all. Off with --trace-hooks, whose hooks read every value as a dense tensor.
  bool strided = true;
};

/// One input put in its slice of a concat's output.
struct ConcatPlacement {
  uint32_t concat = kNone;  // the concat call
  uint32_t value = kNone;   // the input
  int64_t offset = 0;       // bytes from the output's first element to the slice's
  int64_t pixel_stride = 0; // strided slices: elements between the output's pixels (its channels); 0: contiguous
};

/// Places the inputs of `program`'s concats in their slices (file comment), after fusion and
/// apply_fusion_to_memory_plan: sets LoweredValue::buffer_offset and moves the values into the outputs' buffers,
/// gives lone convolutions that write a strided slice a group of their own in `plan` (groups renumbered in position
/// order) and their conv2d_fused its out_pixel_stride, and places the workspace again. Returns what it placed, in
/// call order.
std::vector<ConcatPlacement> place_concat_inputs(LoweredProgram& program, FusionPlan& plan,
                                                 const ConcatInPlaceOptions& options = {});

/// One line per placement, for --dump-lowered and tests: "concat call 11: v629 at +16384 (pixel stride 96)".
std::string dump_placements(const std::vector<ConcatPlacement>& placements);

}  // namespace kforge::passes
