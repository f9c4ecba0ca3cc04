#include "passes/memory_plan.h"

#include <algorithm>

#include <fmt/format.h>

namespace kforge::passes {

namespace {

bool overlaps_in_time(const Buffer& a, const Buffer& b) { return a.first_call <= b.last_call && b.first_call <= a.last_call; }

int64_t align(int64_t v, int64_t a) { return (v + a - 1) / a * a; }

}  // namespace

std::vector<uint32_t> move_into_slice(LoweredProgram& program, uint32_t value, uint32_t into, int64_t offset) {
  const uint32_t from = program.value(value).buffer;
  std::vector<uint32_t> moved = program.buffers[from].values;
  program.move_values_into(from, program.value(into).buffer, program.value(into).buffer_offset + SymExpr(offset));
  return moved;
}

void plan_memory(LoweredProgram& program, uint32_t alignment) {
  const int64_t align_to = std::max<int64_t>(alignment, 1);
  program.plan.alignment = alignment;
  std::vector<uint32_t> statics, dynamics;
  for (const Buffer& b : program.buffers) {
    if (b.kind != BufferKind::kWorkspace) continue;
    (b.size_bytes.is_constant() ? statics : dynamics).push_back(b.index);
  }

  // ---- static buffers: greedy best-fit by decreasing size
  std::vector<Buffer>& buffers = program.buffers;
  auto size_of = [&](uint32_t i) { return align(*buffers[i].size_bytes.constant(), align_to); };
  std::stable_sort(statics.begin(), statics.end(), [&](uint32_t a, uint32_t b) {
    if (size_of(a) != size_of(b)) return size_of(a) > size_of(b);
    if (buffers[a].first_call != buffers[b].first_call) return buffers[a].first_call < buffers[b].first_call;
    return a < b;
  });
  std::vector<uint32_t> placed;
  int64_t static_end = 0;
  SymExpr unshared = 0;
  for (uint32_t i : statics) {
    const int64_t size = size_of(i);
    unshared += size;
    // Intervals of the placed buffers live at the same time, by offset.
    std::vector<std::pair<int64_t, int64_t>> busy;
    for (uint32_t p : placed) {
      if (overlaps_in_time(buffers[p], buffers[i])) {
        const int64_t off = *buffers[p].offset.constant();
        busy.push_back({off, off + size_of(p)});
      }
    }
    std::sort(busy.begin(), busy.end());
    int64_t best = -1, best_gap = INT64_MAX, cursor = 0;
    for (const auto& [begin, end] : busy) {
      const int64_t gap = begin - cursor;
      if (gap >= size && gap < best_gap) {
        best = cursor;
        best_gap = gap;
      }
      cursor = std::max(cursor, end);
    }
    const int64_t offset = best >= 0 ? best : cursor;
    buffers[i].offset = offset;
    static_end = std::max(static_end, offset + size);
    placed.push_back(i);
  }

  // ---- dynamic buffers: slots after the static region
  std::stable_sort(dynamics.begin(), dynamics.end(), [&](uint32_t a, uint32_t b) {
    if (buffers[a].first_call != buffers[b].first_call) return buffers[a].first_call < buffers[b].first_call;
    return a < b;
  });
  struct Slot {
    SymExpr size;
    std::vector<uint32_t> members;
  };
  std::vector<Slot> slots;
  auto free_for = [&](const Slot& s, uint32_t i) {
    for (uint32_t m : s.members) {
      if (overlaps_in_time(buffers[m], buffers[i])) return false;
    }
    return true;
  };
  std::vector<size_t> slot_of(buffers.size(), SIZE_MAX);
  for (uint32_t i : dynamics) {
    const SymExpr size = SymExpr::align_up(buffers[i].size_bytes, align_to);
    unshared += size;
    size_t chosen = SIZE_MAX;
    for (size_t s = 0; s < slots.size() && chosen == SIZE_MAX; ++s) {
      if (free_for(slots[s], i) && slots[s].size == size) chosen = s;
    }
    for (size_t s = 0; s < slots.size() && chosen == SIZE_MAX; ++s) {
      if (free_for(slots[s], i)) chosen = s;
    }
    if (chosen == SIZE_MAX) {
      chosen = slots.size();
      slots.push_back({size, {}});
    } else {
      slots[chosen].size = SymExpr::max(slots[chosen].size, size);
    }
    slots[chosen].members.push_back(i);
    slot_of[i] = chosen;
  }
  SymExpr offset = static_end;
  for (Slot& s : slots) {
    for (uint32_t m : s.members) buffers[m].offset = offset;
    offset += s.size;  // each slot size is aligned, so every offset stays aligned
  }
  program.plan.workspace_bytes = offset;
  program.plan.unshared_bytes = unshared;
}

void add_scratch_buffers(LoweredProgram& program, const std::vector<uint32_t>& positions, int64_t bytes) {
  if (bytes <= 0) return;
  std::vector<ScratchNeed> needs;
  for (uint32_t position : positions) needs.push_back(ScratchNeed{position, SymExpr(bytes)});
  add_scratch_buffers(program, needs);
}

void add_scratch_buffers(LoweredProgram& program, const std::vector<ScratchNeed>& needs) {
  if (needs.empty()) return;
  for (const ScratchNeed& need : needs) {
    Buffer b;
    b.index = static_cast<uint32_t>(program.buffers.size());
    b.kind = BufferKind::kWorkspace;
    b.size_bytes = need.bytes;
    b.first_call = b.last_call = need.position;
    b.scratch_at = need.position;
    program.buffers.push_back(std::move(b));
  }
  plan_memory(program, program.plan.alignment);
}

const Buffer* scratch_buffer(const LoweredProgram& program, uint32_t position) {
  for (const Buffer& b : program.buffers) {
    if (b.scratch_at == position) return &b;
  }
  return nullptr;
}

std::string find_overlap(const LoweredProgram& program, const std::vector<int64_t>& symbol_values) {
  const std::vector<Buffer>& buffers = program.buffers;
  const int64_t a = std::max<int64_t>(program.plan.alignment, 1);
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (buffers[i].kind != BufferKind::kWorkspace) continue;
    const int64_t oi = buffers[i].offset.evaluate(symbol_values);
    const int64_t ei = oi + buffers[i].size_bytes.evaluate(symbol_values);
    if (oi % a != 0) return fmt::format("buffer {} offset {} is not aligned to {}", i, oi, a);
    for (size_t j = i + 1; j < buffers.size(); ++j) {
      if (buffers[j].kind != BufferKind::kWorkspace || !overlaps_in_time(buffers[i], buffers[j])) continue;
      const int64_t oj = buffers[j].offset.evaluate(symbol_values);
      const int64_t ej = oj + buffers[j].size_bytes.evaluate(symbol_values);
      if (oi < ej && oj < ei && ei > oi && ej > oj) {
        return fmt::format("buffer {} [{}, {}) and buffer {} [{}, {}) are both live at call {}", i, oi, ei, j, oj, ej,
                           std::max(buffers[i].first_call, buffers[j].first_call));
      }
    }
    if (ei > program.plan.workspace_bytes.evaluate(symbol_values)) {
      return fmt::format("buffer {} [{}, {}) ends past the workspace ({} bytes)", i, oi, ei,
                         program.plan.workspace_bytes.evaluate(symbol_values));
    }
  }
  return "";
}

}  // namespace kforge::passes
