// The memory plan: places the workspace buffers of a LoweredProgram in one workspace, reusing memory by
// liveness. Deterministic: the result depends only on the buffers' sizes and live ranges.
//
// Static buffers (constant size) come first, by greedy best-fit: buffers in decreasing size order (ties:
// earlier first_call, then lower index); each goes into the smallest gap, between the buffers already placed
// whose live ranges overlap its own, that holds it (lowest offset on ties), else after the highest of them.
// Sizes are rounded up to the alignment and offsets are multiples of it. The static region ends at the
// largest end offset.
//
// Buffers with a symbolic size go after the static region, into slots: in first_call order, each takes the
// first slot that is free for its whole live range and whose size expression equals its own, else the first
// free slot (the slot's size becomes the max of both), else a new slot. A slot's offset is the static region
// plus the aligned sizes of the slots before it, so the workspace size is an expression over the symbols and
// no two buffers live at the same time overlap for any value of the symbols.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "passes/lowered_program.h"

namespace kforge::passes {

/// Places every kWorkspace buffer of `program` (sets Buffer::offset) and fills program.plan. Buffers
/// must have their size_bytes and live ranges set (lower_program does).
void plan_memory(LoweredProgram& program, uint32_t alignment = 64);

/// Gives the call at each of `positions` (a call index, or a fused group's position) a scratch buffer of `bytes`
/// (Buffer::scratch_at, live at that position alone, so scratches of different calls share memory with each other
/// and with values dead there), then places the workspace again. Nothing is added where `bytes` is 0.
void add_scratch_buffers(LoweredProgram& program, const std::vector<uint32_t>& positions, int64_t bytes);

/// A call's own scratch: at `position` (a call index), `bytes` (an expression of the dims).
struct ScratchNeed {
  uint32_t position = 0;
  SymExpr bytes;
};
/// Gives each call of `needs` a scratch buffer of its size, as above; nothing when `needs` is empty.
void add_scratch_buffers(LoweredProgram& program, const std::vector<ScratchNeed>& needs);

/// The scratch buffer of the call at `position`, or null.
const Buffer* scratch_buffer(const LoweredProgram& program, uint32_t position);

/// Moves `value` and every value sharing its buffer into the buffer of `into`, `offset` bytes after `into`'s first
/// element (a slice of it: the concat in place, split views); that buffer's live range grows to cover theirs, and
/// theirs is emptied. Returns the values moved. The caller places the workspace again (plan_memory).
std::vector<uint32_t> move_into_slice(LoweredProgram& program, uint32_t value, uint32_t into, int64_t offset);

/// For tests: the first pair of workspace buffers that are live at the same call and overlap in memory
/// when the symbols take `symbol_values`, as "buffer A [off, end) and buffer B [off, end) both live at call
/// N"; "" when there is none. Checks every pair (brute force).
std::string find_overlap(const LoweredProgram& program, const std::vector<int64_t>& symbol_values);

}  // namespace kforge::passes
