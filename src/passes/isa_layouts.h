// --layout auto on a target with two fast layouts (CompileTarget::isa_layout): which layout plan runs fastest
// depends on the machine (oneDNN's NHWC convolutions on AVX-512, its blocked nChw8c on AVX2 without it:
// BENCHMARKS.md, "On an AVX2 machine"), and the generated code must not depend on the machine that generates it
// (the generated code contract: same inputs, same bytes). So the pipeline plans the program twice, and where the
// second plan differs materially from the first, the class holds both and picks one when it is constructed, from
// the kernel library's ISA (docs/compile.md, "`--layout auto` on the CPU"). This file holds the rule; the pipeline
// (pipeline.cpp) runs both plans, the CPU backend (codegen/program_codegen.cpp) emits both.
#pragma once

#include <cstddef>
#include <string>

#include "passes/layout.h"
#include "passes/lowered_program.h"

namespace kforge::passes {

/// The convolutions (conv2d, depthwise_conv2d, conv2d_transpose) a layout plan converted.
size_t converted_convolutions(const LayoutReport& report);

/// The rule: the blocked plan (`blocked`, NCHW8c) is worth emitting beside the first (`first`, NHWC) when it
/// converts the bulk of the convolutions the first converts: at least one, and at least three quarters of them.
/// Where channel counts make no blocks of 8 (shufflenet_v2's 58 and 116) or channel shuffles break the regions,
/// fewer convolutions convert, NCHW8c is slower than NHWC even on AVX2 (1.17x-1.24x in BENCHMARKS.md), and the
/// class keeps the first plan alone (exactly the code of --layout nhwc).
bool blocked_plan_pays(const LayoutReport& first, const LayoutReport& blocked);

/// "" when the two lowered programs have the same interface (inputs, parameters and outputs: names, dtypes, dims;
/// the dynamic input dims), so that one class can run either; else what differs (for --dump-lowered).
std::string interface_difference(const LoweredProgram& a, const LoweredProgram& b);

}  // namespace kforge::passes
