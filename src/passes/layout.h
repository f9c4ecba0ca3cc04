// The activation layout plan (docs/compile.md, "Layouts"): rewrites the convolution regions of a program written
// in Paddle's NCHW to NHWC, the layout oneDNN's fastest float32 convolutions read and write on AVX-512 machines
// (BENCHMARKS.md, "Activation layouts"), so that no convolution reorders its activations.
//
// A region starts at a convolution (conv2d, depthwise_conv2d, conv2d_transpose with data_format NCHW and a 4-D
// input) and grows forward through the ops that have an NHWC form: pooling, batch norm and interpolation
// (data_format), concat (its axis moves: 1 -> 3), and the elementwise ops whose every 4-D operand can be read in
// NHWC, split along a constant axis (the axis moves; its pieces join), and a channel shuffle (reshape to
// [N, G, C / G, H, W], transpose [0, 2, 1, 3, 4], reshape back; in NHWC: [N, H, W, G, C / G], [0, 1, 2, 4, 3]).
// Such an op joins when at least one of its activation operands is already NHWC; its other 4-D operands
// (a per-channel bias [1, C, 1, 1], a residual computed outside) get a transpose. A value leaves a region through
// one transpose back to NCHW, placed after the op that last writes it, read by every op that needs NCHW
// (flatten, reshape, matmul, a fetch, ...). Where the move keeps the elements in order (a [1, C, 1, 1] bias, a
// globally pooled [N, 1, 1, C]), the "transpose" is a reshape, which the kernels make a view. So a program keeps its interface and its values' dims stay consistent:
// the pass changes dims, attributes and operands and inserts pd_op.transpose ops; the pipeline verifies and
// analyses the result again (pipeline.h, compile_program).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "passes/op_set.h"
#include "program/program.h"

namespace kforge::passes {

/// kNhwc: regions in NHWC. kNchw8c (CPU): regions hold [N, C / 8, H, W, 8] values (oneDNN's nChw8c, the layout of
/// its AVX2 convolutions), for convolutions, pooling, batch norm, concat, split and elementwise ops whose every
/// region value has a static multiple of 8 channels and static spatial dims; conv2d_transpose, interpolation and
/// channel shuffles stay NCHW. A value enters through reshape [N, C / 8, 8, H, W] + transpose [0, 1, 3, 4, 2] and
/// leaves through transpose [0, 1, 4, 2, 3] + reshape [N, C, H, W]; a value with H = W = 1 through one reshape.
enum class LayoutChoice { kNchw, kNhwc, kNchw8c };

/// What plan_layouts did, for --dump-lowered and tests.
struct LayoutReport {
  struct Converted {
    ir::OpId op;
    std::string name;  // "pd_op.conv2d"
  };
  struct Transpose {
    ir::OpId op;       // the inserted pd_op.transpose, or pd_op.reshape when that moves no element (view)
    bool into_region;  // into a region (NHWC: perm [0, 2, 3, 1]) or out of one ([0, 3, 1, 2])
    ir::OpId after;    // the op it follows (the value's last writer)
    bool view;         // a reshape: the non-1 dims keep their order ([1, C, 1, 1] -> [1, 1, 1, C])
  };
  std::vector<Converted> converted;
  std::vector<Transpose> transposes;
  std::string skipped;  // why nothing was converted, when the program has convolutions but the pass did not run
  std::string format = "NHWC";  // the regions' data_format: NHWC or NCHW8c

  bool empty() const { return converted.empty(); }
  /// One line per converted op and per transpose ("layout: ..."), in program order.
  std::string dump(const ir::Program& program) const;
};

/// What a backend's kernels take in NHWC, where that is not every op above.
struct LayoutOptions {
  /// conv2d_transpose may start or join a region (the CUDA backend's transposed convolution, cuDNN's backward
  /// data, found no algorithm for NHWC data in float32: there it stays NCHW between two transposes).
  bool transposed_convolutions = true;
};

/// Rewrites the top-level block's convolution regions to NHWC (kNhwc) or NCHW8c (kNchw8c); kNchw changes nothing. The program must be
/// verified and carry inferred types (apply_inferred_types). Programs with control flow are left unchanged.
LayoutReport plan_layouts(ir::Program& program, const OpSet& ops, LayoutChoice choice,
                          const LayoutOptions& options = {});

}  // namespace kforge::passes
