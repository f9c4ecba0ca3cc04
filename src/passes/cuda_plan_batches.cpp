// Index batches (cuda_plan.h, plan_cuda_index_batches): index-mapped calls that launch one after the other run as
// one kernel, call k of the batch at blockIdx.y == k (templates/program/cuda/index.j2, batched_kernel).
//
// A batch runs where its last call ran, so each call's operands must be intact then and no call may see another's
// result. Between the first and the last call nothing else launches: no group sits there and every other call
// there launches nothing (a view) and reads no dims from data. Then, for every pair of calls in the batch: neither
// reads a buffer the other writes and they write different buffers. And a call that writes a workspace buffer
// joins only if every workspace buffer the batch reads is live up to it, so the memory plan gave its output none
// of their bytes: a buffer whose life ended at an earlier call of the batch could hold a later call's output,
// written while the earlier call still reads it. (Buffers that begin inside the batch are its outputs alone: the
// calls between launch nothing, so they make no buffer.)
//
// Only the data-movement calls with an index map (concat, transpose, slice, gather, ...) of one output, with no
// scratch and no known result, take part: one kernel each, whose body the batched kernel runs unchanged.
#include <algorithm>
#include <set>

#include "passes/cuda_plan.h"
#include "passes/memory_plan.h"

namespace kforge::passes {

namespace {

class Batcher {
 public:
  Batcher(const LoweredProgram& program, const FusionPlan& fusion, CudaPlan& plan)
      : p_(program), fusion_(fusion), plan_(plan) {
    for (const FusedGroup& g : fusion.groups) group_at_.insert(g.position);
  }

  void run() {
    std::vector<uint32_t> batch;
    for (uint32_t c = 0; c < p_.calls.size(); ++c) {
      if (group_at_.count(c) != 0 || !launches_nothing(c)) {
        const bool joins = !batch.empty() && batchable(c) && independent(batch, c);
        if (!joins) close(batch);
        if (batchable(c)) batch.push_back(c);
      }
    }
    close(batch);
  }

 private:
  bool in_group(uint32_t c) const { return c < fusion_.call_group.size() && fusion_.call_group[c] != kNone; }

  bool reads_dims_before(uint32_t c) const {
    return std::any_of(p_.symbols.begin(), p_.symbols.end(),
                       [&](const Symbol& s) { return !s.is_input_dim() && s.before_call && s.call == c; });
  }

  // A call outside the groups that runs no kernel (a view of its input's buffer) and binds no dims first.
  bool launches_nothing(uint32_t c) const {
    if (in_group(c)) return true;  // its group launches at the group's position
    const auto run = plan_.runs.find(c);
    return run != plan_.runs.end() && run->second == CudaRun::kNothing && !reads_dims_before(c);
  }

  bool batchable(uint32_t c) const {
    if (in_group(c) || group_at_.count(c) != 0) return false;
    const auto run = plan_.runs.find(c);
    if (run == plan_.runs.end() || run->second != CudaRun::kIndex || plan_.index_maps.count(c) == 0) return false;
    const KernelCall& call = p_.calls[c];
    if (call.outputs.size() != 1 || call.outputs[0].is_list || call.outputs[0].values.size() != 1 ||
        call.outputs[0].values[0] == kNone) {
      return false;
    }
    return !cuda_results_known(p_, call) && scratch_buffer(p_, c) == nullptr && !reads_dims_before(c);
  }

  std::set<uint32_t> read_buffers(uint32_t c) const {
    std::set<uint32_t> out;
    for (const KernelArg& a : p_.calls[c].args) {
      if (a.kind == ArgKind::kTensor && a.value != kNone) out.insert(p_.value(a.value).buffer);
      for (uint32_t v : a.values) {
        if (v != kNone) out.insert(p_.value(v).buffer);
      }
    }
    return out;
  }

  uint32_t written_buffer(uint32_t c) const { return p_.value(p_.calls[c].outputs[0].values[0]).buffer; }

  bool independent(const std::vector<uint32_t>& batch, uint32_t c) const {
    const std::set<uint32_t> reads = read_buffers(c);
    const uint32_t writes = written_buffer(c);
    if (reads.count(writes) != 0) return false;
    for (uint32_t m : batch) {
      const std::set<uint32_t> member_reads = read_buffers(m);
      if (reads.count(written_buffer(m)) != 0 || member_reads.count(writes) != 0 || written_buffer(m) == writes) {
        return false;
      }
    }
    // c's output may take the bytes of a workspace buffer whose life ended before c, one a call of the batch
    // still reads when the batch runs: c must then write no workspace buffer (a program output has its own).
    if (p_.buffers[writes].kind != BufferKind::kWorkspace) return true;
    for (uint32_t m : batch) {
      for (uint32_t b : read_buffers(m)) {
        const Buffer& buffer = p_.buffers[b];
        if (buffer.kind == BufferKind::kWorkspace && buffer.last_call < c) return false;
      }
    }
    return true;
  }

  void close(std::vector<uint32_t>& batch) {
    if (batch.size() > 1) plan_.index_batches.push_back(batch);
    batch.clear();
  }

  const LoweredProgram& p_;
  const FusionPlan& fusion_;
  CudaPlan& plan_;
  std::set<uint32_t> group_at_;  // the positions the groups launch at
};

}  // namespace

void plan_cuda_index_batches(const LoweredProgram& program, const FusionPlan& fusion, CudaPlan& plan) {
  Batcher(program, fusion, plan).run();
}

}  // namespace kforge::passes
