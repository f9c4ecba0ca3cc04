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

// A reference to a callable Status(int64_t), without std::function's allocation: the callable must outlive it.
class TaskRef {
 public:
  template <typename F>
  TaskRef(const F& f)  // NOLINT(google-explicit-constructor): passed where a lambda is written
      : object_(&f), call_([](const void* o, int64_t i) { return (*static_cast<const F*>(o))(i); }) {}
  Status operator()(int64_t i) const { return call_(object_, i); }

 private:
  const void* object_;
  Status (*call_)(const void*, int64_t);
};

// Runs task(i) for i in [0, count) on up to num_threads() threads (a pool kept across calls; the caller is one of
// them). Each task runs with oneDNN on its own thread only, and the split into tasks depends on the shapes alone,
// never on the thread count: every output element is computed by the same primitive, the same way, for every
// count. Returns the first error (tasks after it still run; their outputs are unspecified).
Status run_tasks(int64_t count, TaskRef task);

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
// scratchpad_bytes is 0). Throws dnnl::error; wrap the caller in guarded(). Builds its memory objects on every call:
// for one-off work (a filter prepared per call); a call site's steady state uses an ArgSet.
void execute(const dnnl::primitive& prim, std::unordered_map<int, dnnl::memory> args, size_t scratchpad_bytes,
             char* scratchpad);

// A u8 descriptor of `bytes` bytes (a scratchpad as a DNNL_ARG_SCRATCHPAD memory).
dnnl::memory::desc bytes_desc(size_t bytes);

// One primitive's arguments, kept between calls of one call site: a memory object is created the first time an
// argument is set, and later calls only change its data handle, when the address differs. A steady-state call
// thus creates no oneDNN object and allocates nothing on kforge's side; run() hands the arguments to oneDNN's C API
// as they are (the C++ API would build a map and a vector per call). Not shared between threads.
class ArgSet {
 public:
  // Argument `arg` (a DNNL_ARG_*) is `md` over `data`; an argument keeps its first descriptor.
  void set(int arg, const dnnl::memory::desc& md, const void* data);
  // The scratchpad (a primitive's DNNL_ARG_SCRATCHPAD) of `bytes` bytes at `data`; nothing when `bytes` is 0.
  void set_scratchpad(size_t bytes, const void* data);
  // Runs `prim` on this thread's stream and waits; throws dnnl::error.
  void run(const dnnl::primitive& prim) const;

 private:
  // Whether `arg` is set already; if so, its handle now points at `data`.
  bool update(int arg, const void* data);

  std::vector<dnnl::memory> memories_;
  std::vector<const void*> data_;
  std::vector<dnnl_exec_arg_t> args_;
};

// Counts the call-site states filled (a SiteTable miss), for sites_filled() in onednn.h.
void note_site_filled();

// Per-thread states of call sites, each found by addresses that identify its call site (a convolution's filter
// and output, say) and checked against its full key: every slot is a one-entry "last key" cache, a few ways per
// address hash, so a steady-state call does no lookup in a shared map, takes no lock and allocates nothing. A
// site whose key is not found replaces the least recently filled way. `Site` has a `Key key` member with ==.
// Allocate it on the heap (this_thread_sites()): it is too large for every thread's static TLS block.
template <typename Site>
class SiteTable {
 public:
  // The site for `key` (hit: *fresh false), or a slot reset to a default Site with that key (*fresh true).
  Site& find(uintptr_t a, uintptr_t b, const typename Site::Key& key, bool* fresh) {
    uint64_t h = static_cast<uint64_t>(a) * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(b);
    h ^= h >> 33;  // murmur3's finaliser: every address bit reaches the set index
    h *= 0xFF51AFD7ED558CCDull;
    h ^= h >> 33;
    const size_t base = static_cast<size_t>(h) & (kSlots - 1) & ~(kWays - 1);
    for (size_t w = 0; w < kWays; ++w) {
      Site& s = slots_[base + w];
      // The addresses too: two call sites of the same shapes (a transformer's q, k and v projections) can share a
      // set, and a site keeps what belongs to its own operands (a packed matrix, a prepared filter).
      if (addresses_[base + w][0] == a && addresses_[base + w][1] == b && s.key == key) {
        *fresh = false;
        return s;
      }
    }
    note_site_filled();
    size_t& next = victim_[base / kWays];
    Site& s = slots_[base + next];
    addresses_[base + next][0] = a;
    addresses_[base + next][1] = b;
    next = (next + 1) % kWays;
    s = Site{};
    s.key = key;
    *fresh = true;
    return s;
  }

 private:
  static constexpr size_t kSlots = 1024, kWays = 4;
  Site slots_[kSlots];
  uintptr_t addresses_[kSlots][2] = {};
  size_t victim_[kSlots / kWays] = {};
};

// oneDNN's reference implementations ("ref:any") take any descriptor and post-op but run naive loops, slower than
// kforge's own: a plan never uses one (the kernel tries another variant or runs its reference loops).
inline bool is_reference_impl(const dnnl::primitive_desc_base& pd) {
  return std::string(pd.impl_info_str()).rfind("ref", 0) == 0;
}

// This thread's SiteTable<Site>, made on its first use.
template <typename Site>
SiteTable<Site>& this_thread_sites() {
  thread_local std::unique_ptr<SiteTable<Site>> table;
  if (table == nullptr) table = std::make_unique<SiteTable<Site>>();
  return *table;
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

// Changes whenever a constant is declared or released, or a prepared copy is dropped: a call site that resolved
// which of its tensors are constant (and kept their prepared copy) resolves again when it differs.
uint64_t constants_epoch();

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

// ---- primitive descriptors, on oneDNN 2.x and 3.x ----------------------------------------------------------------
// oneDNN 3 removed the operation descriptors (`convolution_forward::desc` and the like: a primitive_desc is built
// from the engine and the operation's parameters at once), the scale of post_ops::append_eltwise and
// memory::desc::dims(). Every primitive the kernels create is built here, so that the rest of kernels/onednn reads
// the same on both (runtime.cc has the two versions). Each returns an empty primitive_desc (`!pd`) where oneDNN has
// no implementation; `bias` may be an empty desc (no bias).
dnnl::convolution_forward::primitive_desc convolution_pd(const dnnl::memory::desc& src,
                                                         const dnnl::memory::desc& weights,
                                                         const dnnl::memory::desc& bias, const dnnl::memory::desc& dst,
                                                         const Dims& strides, const Dims& dilates, const Dims& pad_l,
                                                         const Dims& pad_r, const dnnl::primitive_attr& attr);
dnnl::deconvolution_forward::primitive_desc deconvolution_pd(const dnnl::memory::desc& src,
                                                             const dnnl::memory::desc& weights,
                                                             const dnnl::memory::desc& bias,
                                                             const dnnl::memory::desc& dst, const Dims& strides,
                                                             const Dims& dilates, const Dims& pad_l, const Dims& pad_r,
                                                             const dnnl::primitive_attr& attr);
dnnl::inner_product_forward::primitive_desc inner_product_pd(const dnnl::memory::desc& src,
                                                             const dnnl::memory::desc& weights,
                                                             const dnnl::memory::desc& dst,
                                                             const dnnl::primitive_attr& attr);
dnnl::matmul::primitive_desc matmul_pd(const dnnl::memory::desc& a, const dnnl::memory::desc& b,
                                       const dnnl::memory::desc& c, const dnnl::primitive_attr& attr);
// Pooling without dilation (oneDNN 3 has only the form with it, 2.x's pooling_forward only the one without).
dnnl::pooling_forward::primitive_desc pooling_pd(dnnl::algorithm alg, const dnnl::memory::desc& src,
                                                 const dnnl::memory::desc& dst, const Dims& strides,
                                                 const Dims& kernel, const Dims& pad_l, const Dims& pad_r,
                                                 const dnnl::primitive_attr& attr);
dnnl::binary::primitive_desc binary_pd(dnnl::algorithm alg, const dnnl::memory::desc& src0,
                                       const dnnl::memory::desc& src1, const dnnl::memory::desc& dst,
                                       const dnnl::primitive_attr& attr);
// An eltwise post-op `alg(x; alpha, beta)` applied with scale 1.
void append_eltwise(dnnl::post_ops* ops, dnnl::algorithm alg, float alpha, float beta);
// A descriptor's logical dimensions.
Dims dims_of(const dnnl::memory::desc& md);

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
