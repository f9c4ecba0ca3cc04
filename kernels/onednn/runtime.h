// What the oneDNN-backed kernels share: the engine, per-thread streams and buffers, the task runner that makes
// results independent of the thread count, the plan cache and the cache of reordered constant weights.
// Internal to kernels/ (built only with oneDNN; see docs/kernels.md).
#ifndef KFORGE_KERNELS_ONEDNN_RUNTIME_H_
#define KFORGE_KERNELS_ONEDNN_RUNTIME_H_

#include <oneapi/dnnl/dnnl.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "kforge_runtime.h"

namespace kforge::kernels::onednn {

// The CPU engine every primitive and memory object lives on (created on first use).
const dnnl::engine& engine();

// This thread's stream (oneDNN streams must not be shared between threads).
dnnl::stream& thread_stream();

// For the scope of one kernel call, oneDNN may use only the calling thread: primitives are created and run with
// OpenMP's thread count at 1, and restored afterwards so the caller's own OpenMP setting is untouched.
class SingleThreadScope {
 public:
  SingleThreadScope();
  ~SingleThreadScope();
  SingleThreadScope(const SingleThreadScope&) = delete;
  SingleThreadScope& operator=(const SingleThreadScope&) = delete;

 private:
  int saved_;
};

// A growable, 64-byte aligned buffer owned by one thread and reused across calls (no allocation per call once
// the largest layer has been seen). `call` holds what a whole kernel call shares (reordered inputs and weights);
// `task` what one task uses alone (its output block and the primitive's scratchpad). Two separate ones, because
// the calling thread also runs tasks.
class Arena {
 public:
  // At least `bytes` (and at least one cache line) of memory, valid until the next reserve() on this arena; null
  // when out of memory.
  char* reserve(size_t bytes);

 private:
  std::unique_ptr<char[], void (*)(char*)> data_{nullptr, [](char*) {}};
  size_t size_ = 0;
};
Arena& call_arena();
Arena& task_arena();

// Rounds a byte count up to the arena alignment, for laying several buffers out in one reserve().
constexpr size_t align_up(size_t bytes) { return (bytes + 63) / 64 * 64; }

// Runs task(i) for i in [0, count) on up to num_threads() threads (a pool kept across calls; the caller is one of
// them). Each task runs with oneDNN on its own thread only, and the split into tasks depends on the shapes alone,
// never on the thread count: every output element is computed by the same primitive, the same way, for every
// count. Returns the first error (tasks after it still run; their outputs are unspecified).
Status run_tasks(int64_t count, const std::function<Status(int64_t)>& task);

// Wraps oneDNN calls that may throw (dnnl::error, std::bad_alloc) into a Status.
template <typename F>
Status guarded(const char* op, F&& f) {
  try {
    return f();
  } catch (const dnnl::error& e) {
    return Status::Error(op, ": oneDNN: ", e.what());
  } catch (const std::bad_alloc&) {
    return Status::Error(op, ": out of memory");
  }
}

// Primitive attributes with a scratchpad the caller passes (DNNL_ARG_SCRATCHPAD): each task brings its own, so
// several threads can run one primitive at once.
dnnl::primitive_attr user_scratchpad();

// A reorder from `from` to `to` (raising *scratchpad to what it needs), or nothing when the layouts are the same
// (unless `copy`: then a plain copy).
std::optional<dnnl::reorder> make_reorder(const dnnl::memory::desc& from, const dnnl::memory::desc& to,
                                          size_t* scratchpad, bool copy = false);

// Runs `prim` on this thread's stream with `args` and `scratchpad` (from the task arena; may be null when
// scratchpad_bytes is 0). Throws dnnl::error; wrap the caller in guarded().
void execute(const dnnl::primitive& prim, std::unordered_map<int, dnnl::memory> args, size_t scratchpad_bytes,
             char* scratchpad);

// oneDNN's reference implementations ("ref:any") take any descriptor and post-op but run naive loops, slower than
// kforge's own: a plan never uses one (the kernel tries another variant or runs its reference loops).
inline bool is_reference_impl(const dnnl::primitive_desc_base& pd) {
  return std::string(pd.impl_info_str()).rfind("ref", 0) == 0;
}

// ---- plans ---------------------------------------------------------------------------------------------------
// A plan is everything a kernel creates for one shape and attribute set: primitives, reorders, buffer sizes.
// Plans are immutable once built and shared (several threads may run one plan at once).
struct Plan {
  virtual ~Plan() = default;
  uint64_t id = 0;       // unique for the process's lifetime (keys the weight cache)
  bool unusable = false;  // the remembered "oneDNN cannot do it" of find_or_build_plan
};

// Everything that defines a plan, as integers (the op kind first).
using PlanKey = std::vector<int64_t>;

// The cached plan for `key`, built by `build` on a miss (outside the lock; an exception is not cached). A null
// result (oneDNN cannot do it) is remembered too, so that later calls do not try again, and returned as null.
// Bounded: the least recently used plans are dropped beyond kMaxPlans (in use, they stay alive).
constexpr size_t kMaxPlans = 512;
std::shared_ptr<const Plan> find_or_build_plan(const PlanKey& key,
                                               const std::function<std::shared_ptr<Plan>()>& build);

// ---- constant weights ------------------------------------------------------------------------------------------
void declare_constant(const void* data, size_t bytes);
void release_constant(const void* data);

// Weights prepared for one plan (a filter reordered into the primitive's layout, a batch norm folded into it) from
// `sources` (address, bytes): `fill` writes them into the buffer it is given (of `bytes`); it runs once per plan
// and declaration of every source. Returns null when a source does not lie inside a declared constant: the caller
// then prepares them in its own buffer on every call. Bounded by kMaxWeightBytes (least recently used copies
// dropped; in use, they stay alive).
constexpr size_t kMaxWeightBytes = size_t{4} << 30;
struct Source {
  const void* data;
  size_t bytes;
};
std::shared_ptr<const char> constant_weights(const Plan& plan, const std::vector<Source>& sources, size_t bytes,
                                             const std::function<Status(char*)>& fill, Status* status);

// Whether [data, data + bytes) lies inside a declared constant.
bool is_constant(const void* data, size_t bytes);

// ---- memory descriptors -------------------------------------------------------------------------------------------
using Dims = dnnl::memory::dims;
inline dnnl::memory::desc f32_desc(const Dims& dims, dnnl::memory::format_tag tag) {
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, tag);
}
inline dnnl::memory::desc f32_strided(const Dims& dims, const Dims& strides) {
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, strides);
}
// A memory object over existing data (oneDNN does not own it).
inline dnnl::memory wrap(const dnnl::memory::desc& desc, const void* data) {
  return dnnl::memory(desc, engine(), const_cast<void*>(data));
}

}  // namespace kforge::kernels::onednn

#endif  // KFORGE_KERNELS_ONEDNN_RUNTIME_H_
