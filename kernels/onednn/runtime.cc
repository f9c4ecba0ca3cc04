// The shared machinery of the oneDNN-backed kernels: engine, streams, arenas, the task pool, the plan cache and
// the cache of reordered constant weights.
#include "onednn/runtime.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <list>
#include <map>
#include <mutex>
#include <new>
#include <thread>
#include <unordered_map>
#include <utility>

#include <sys/mman.h>
#include <unistd.h>

#include "kforge_kernels.h"
#include "onednn/onednn.h"

// libgomp's thread-count controls (the OpenMP runtime Debian's oneDNN is built with). Declared here rather than
// through <omp.h> so that the library compiles without -fopenmp and with compilers that ship another omp.h.
extern "C" {
int omp_get_max_threads(void);
void omp_set_num_threads(int);
}

namespace kforge::kernels::onednn {

const dnnl::engine& engine() {
  static const dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

dnnl::stream& thread_stream() {
  thread_local dnnl::stream s(engine());
  return s;
}

SingleThreadScope::SingleThreadScope() : saved_(omp_get_max_threads()) {
  if (saved_ != 1) omp_set_num_threads(1);
}

SingleThreadScope::~SingleThreadScope() {
  if (saved_ != 1) omp_set_num_threads(saved_);
}

char* Arena::reserve(size_t bytes) {
  if (bytes <= size_ && data_ != nullptr) return data_.get();
  const size_t size = std::max({align_up(bytes), size_t{64}, size_ + size_ / 2});
  data_.reset();
  size_ = 0;
  char* p = static_cast<char*>(::operator new[](size, std::align_val_t(64), std::nothrow));
  if (p == nullptr) return nullptr;
  data_ = std::unique_ptr<char[], void (*)(char*)>(p, [](char* q) { ::operator delete[](q, std::align_val_t(64)); });
  size_ = size;
  return p;
}

Arena& call_arena() {
  thread_local Arena a;
  return a;
}

Arena& task_arena() {
  thread_local Arena a;
  return a;
}

dnnl::primitive_attr user_scratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

std::optional<dnnl::reorder> make_reorder(const dnnl::memory::desc& from, const dnnl::memory::desc& to,
                                          size_t* scratchpad, bool copy) {
  if (from == to && !copy) return std::nullopt;
  dnnl::reorder::primitive_desc pd(engine(), from, engine(), to, user_scratchpad());
  *scratchpad = std::max(*scratchpad, pd.scratchpad_desc().get_size());
  return dnnl::reorder(pd);
}

dnnl::memory::desc bytes_desc(size_t bytes) {
  return dnnl::memory::desc({static_cast<int64_t>(bytes)}, dnnl::memory::data_type::u8, dnnl::memory::format_tag::a);
}

// The forward-inference primitives the kernels use, with allow_empty (an empty descriptor, not an exception,
// where oneDNN has no implementation).
#if DNNL_VERSION_MAJOR >= 3
dnnl::convolution_forward::primitive_desc convolution_pd(const dnnl::memory::desc& src,
                                                         const dnnl::memory::desc& weights,
                                                         const dnnl::memory::desc& bias, const dnnl::memory::desc& dst,
                                                         const Dims& strides, const Dims& dilates, const Dims& pad_l,
                                                         const Dims& pad_r, const dnnl::primitive_attr& attr) {
  return {engine(), dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src, weights, bias, dst,
          strides, dilates, pad_l, pad_r, attr, true};
}

dnnl::deconvolution_forward::primitive_desc deconvolution_pd(const dnnl::memory::desc& src,
                                                             const dnnl::memory::desc& weights,
                                                             const dnnl::memory::desc& bias,
                                                             const dnnl::memory::desc& dst, const Dims& strides,
                                                             const Dims& dilates, const Dims& pad_l, const Dims& pad_r,
                                                             const dnnl::primitive_attr& attr) {
  return {engine(), dnnl::prop_kind::forward_inference, dnnl::algorithm::deconvolution_direct, src, weights, bias, dst,
          strides, dilates, pad_l, pad_r, attr, true};
}

dnnl::inner_product_forward::primitive_desc inner_product_pd(const dnnl::memory::desc& src,
                                                             const dnnl::memory::desc& weights,
                                                             const dnnl::memory::desc& dst,
                                                             const dnnl::primitive_attr& attr) {
  return {engine(), dnnl::prop_kind::forward_inference, src, weights, dst, attr, true};
}

dnnl::matmul::primitive_desc matmul_pd(const dnnl::memory::desc& a, const dnnl::memory::desc& b,
                                       const dnnl::memory::desc& c, const dnnl::primitive_attr& attr) {
  return {engine(), a, b, c, attr, true};
}

dnnl::pooling_forward::primitive_desc pooling_pd(dnnl::algorithm alg, const dnnl::memory::desc& src,
                                                 const dnnl::memory::desc& dst, const Dims& strides,
                                                 const Dims& kernel, const Dims& pad_l, const Dims& pad_r,
                                                 const dnnl::primitive_attr& attr) {
  const Dims no_dilation(strides.size(), 0);
  return {engine(), dnnl::prop_kind::forward_inference, alg, src, dst, strides, kernel, no_dilation, pad_l, pad_r,
          attr, true};
}

dnnl::binary::primitive_desc binary_pd(dnnl::algorithm alg, const dnnl::memory::desc& src0,
                                       const dnnl::memory::desc& src1, const dnnl::memory::desc& dst,
                                       const dnnl::primitive_attr& attr) {
  return {engine(), alg, src0, src1, dst, attr, true};
}

void append_eltwise(dnnl::post_ops* ops, dnnl::algorithm alg, float alpha, float beta) {
  // oneDNN 3 made hardswish x * max(0, min(1, alpha * x + beta)); 2.x's (and Paddle's) x * relu6(x + 3) / 6 is
  // alpha 1/6, beta 1/2 there.
  if (alg == dnnl::algorithm::eltwise_hardswish) {
    alpha = 1.f / 6.f;
    beta = 0.5f;
  }
  ops->append_eltwise(alg, alpha, beta);
}

Dims dims_of(const dnnl::memory::desc& md) { return md.get_dims(); }
#else
dnnl::convolution_forward::primitive_desc convolution_pd(const dnnl::memory::desc& src,
                                                         const dnnl::memory::desc& weights,
                                                         const dnnl::memory::desc& bias, const dnnl::memory::desc& dst,
                                                         const Dims& strides, const Dims& dilates, const Dims& pad_l,
                                                         const Dims& pad_r, const dnnl::primitive_attr& attr) {
  const dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                                             src, weights, bias, dst, strides, dilates, pad_l, pad_r);
  return {desc, attr, engine(), true};
}

dnnl::deconvolution_forward::primitive_desc deconvolution_pd(const dnnl::memory::desc& src,
                                                             const dnnl::memory::desc& weights,
                                                             const dnnl::memory::desc& bias,
                                                             const dnnl::memory::desc& dst, const Dims& strides,
                                                             const Dims& dilates, const Dims& pad_l, const Dims& pad_r,
                                                             const dnnl::primitive_attr& attr) {
  const dnnl::deconvolution_forward::desc desc(dnnl::prop_kind::forward_inference,
                                               dnnl::algorithm::deconvolution_direct, src, weights, bias, dst, strides,
                                               dilates, pad_l, pad_r);
  return {desc, attr, engine(), true};
}

dnnl::inner_product_forward::primitive_desc inner_product_pd(const dnnl::memory::desc& src,
                                                             const dnnl::memory::desc& weights,
                                                             const dnnl::memory::desc& dst,
                                                             const dnnl::primitive_attr& attr) {
  const dnnl::inner_product_forward::desc desc(dnnl::prop_kind::forward_inference, src, weights, dst);
  return {desc, attr, engine(), true};
}

dnnl::matmul::primitive_desc matmul_pd(const dnnl::memory::desc& a, const dnnl::memory::desc& b,
                                       const dnnl::memory::desc& c, const dnnl::primitive_attr& attr) {
  return {dnnl::matmul::desc(a, b, c), attr, engine(), true};
}

dnnl::pooling_forward::primitive_desc pooling_pd(dnnl::algorithm alg, const dnnl::memory::desc& src,
                                                 const dnnl::memory::desc& dst, const Dims& strides,
                                                 const Dims& kernel, const Dims& pad_l, const Dims& pad_r,
                                                 const dnnl::primitive_attr& attr) {
  const dnnl::pooling_forward::desc desc(dnnl::prop_kind::forward_inference, alg, src, dst, strides, kernel, pad_l,
                                         pad_r);
  return {desc, attr, engine(), true};
}

dnnl::binary::primitive_desc binary_pd(dnnl::algorithm alg, const dnnl::memory::desc& src0,
                                       const dnnl::memory::desc& src1, const dnnl::memory::desc& dst,
                                       const dnnl::primitive_attr& attr) {
  return {dnnl::binary::desc(alg, src0, src1, dst), attr, engine(), true};
}

void append_eltwise(dnnl::post_ops* ops, dnnl::algorithm alg, float alpha, float beta) {
  ops->append_eltwise(1.f, alg, alpha, beta);
}

Dims dims_of(const dnnl::memory::desc& md) { return md.dims(); }
#endif

void execute(const dnnl::primitive& prim, std::unordered_map<int, dnnl::memory> args, size_t scratchpad_bytes,
             char* scratchpad) {
  if (scratchpad_bytes > 0) args.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(bytes_desc(scratchpad_bytes), engine(), scratchpad));
  prim.execute(thread_stream(), args);
  thread_stream().wait();
}

bool ArgSet::update(int arg, const void* data) {
  for (size_t i = 0; i < args_.size(); ++i) {
    if (args_[i].arg != arg) continue;
    if (data_[i] != data) {
      memories_[i].set_data_handle(const_cast<void*>(data));
      data_[i] = data;
    }
    return true;
  }
  return false;
}

void ArgSet::set(int arg, const dnnl::memory::desc& md, const void* data) {
  if (update(arg, data)) return;
  memories_.emplace_back(md, engine(), const_cast<void*>(data));
  data_.push_back(data);
  args_.push_back(dnnl_exec_arg_t{arg, memories_.back().get()});
}

void ArgSet::set_scratchpad(size_t bytes, const void* data) {
  if (bytes > 0 && !update(DNNL_ARG_SCRATCHPAD, data)) set(DNNL_ARG_SCRATCHPAD, bytes_desc(bytes), data);
}

void ArgSet::run(const dnnl::primitive& prim) const {
  dnnl::stream& stream = thread_stream();
  dnnl::error::wrap_c_api(dnnl_primitive_execute(prim.get(), stream.get(), static_cast<int>(args_.size()), args_.data()),
                          "could not execute a primitive");
  stream.wait();
}

// ---- the task pool ---------------------------------------------------------------------------------------------

namespace {

// Worker threads kept for the process's lifetime (never joined: a pool destroyed at exit could wait on threads
// the runtime already stopped). One job at a time; a caller that finds the pool busy runs its tasks itself.
class Pool {
 public:
  Status run(int threads, int64_t count, const TaskRef& task) {
    std::unique_lock<std::mutex> busy(run_mutex_, std::try_to_lock);
    if (!busy.owns_lock()) return run_inline(count, task);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      while (static_cast<int>(workers_.size()) < threads - 1) {
        const int index = static_cast<int>(workers_.size());
        workers_.emplace_back([this, index] { work_loop(index); });
        workers_.back().detach();
      }
      task_ = &task;
      count_ = count;
      next_.store(0);
      participants_ = threads - 1;
      pending_ = threads - 1;
      error_ = Status::OK();
      ++job_;
    }
    wake_.notify_all();
    work();
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return pending_ == 0; });
    task_ = nullptr;
    return error_;
  }

  static Status run_inline(int64_t count, const TaskRef& task) {
    Status first;
    for (int64_t i = 0; i < count; ++i) {
      Status s = task(i);
      if (!s.ok() && first.ok()) first = s;
    }
    return first;
  }

 private:
  void work_loop(int index) {
    omp_set_num_threads(1);  // this thread's oneDNN calls stay on it
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return job_ != seen; });
      seen = job_;
      if (index >= participants_) continue;
      lock.unlock();
      work();
      lock.lock();
      if (--pending_ == 0) done_.notify_one();
    }
  }

  void work() {
    for (int64_t i = next_.fetch_add(1); i < count_; i = next_.fetch_add(1)) {
      Status s;
      try {
        s = (*task_)(i);
      } catch (...) {
        s = Status::Error("oneDNN kernel task failed with an exception");
      }
      if (!s.ok()) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (error_.ok()) error_ = s;
      }
    }
  }

  std::mutex run_mutex_;  // held for a whole job
  std::mutex mutex_;      // guards the job fields and the worker list
  std::condition_variable wake_, done_;
  std::vector<std::thread> workers_;
  const TaskRef* task_ = nullptr;
  int64_t count_ = 0;
  std::atomic<int64_t> next_{0};
  int participants_ = 0;
  int pending_ = 0;
  uint64_t job_ = 0;
  Status error_;
};

Pool& pool() {
  static Pool* p = new Pool;  // intentionally leaked, see Pool
  return *p;
}

}  // namespace

Status run_tasks(int64_t count, TaskRef task) {
  const int threads = static_cast<int>(std::min<int64_t>(num_threads(), count));
  if (threads <= 1) return Pool::run_inline(count, task);
  return pool().run(threads, count, task);
}

// ---- plan cache ----------------------------------------------------------------------------------------------

namespace {

std::atomic<uint64_t> g_plans_built{0};
std::atomic<uint64_t> g_constants_epoch{1};
std::atomic<uint64_t> g_sites_filled{0};

struct KeyHash {
  size_t operator()(const PlanKey& key) const {
    uint64_t h = 1469598103934665603ull;  // FNV-1a over the values
    for (int64_t v : key) {
      h ^= static_cast<uint64_t>(v);
      h *= 1099511628211ull;
    }
    return static_cast<size_t>(h);
  }
};

class PlanCache {
 public:
  std::shared_ptr<const Plan> find(const PlanKey& key) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second);
    return it->second->second;
  }

  std::shared_ptr<const Plan> insert(const PlanKey& key, std::shared_ptr<Plan> plan) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = index_.find(key);
    if (it != index_.end()) return it->second->second;  // another thread built it meanwhile
    plan->id = ++g_plans_built;
    order_.emplace_front(key, std::move(plan));
    index_.emplace(key, order_.begin());
    while (order_.size() > kMaxPlans) {
      index_.erase(order_.back().first);
      order_.pop_back();
    }
    return order_.front().second;
  }

 private:
  std::mutex mutex_;
  std::list<std::pair<PlanKey, std::shared_ptr<const Plan>>> order_;  // most recently used first
  std::unordered_map<PlanKey, decltype(order_)::iterator, KeyHash> index_;
};

PlanCache& plans() {
  static PlanCache* c = new PlanCache;  // leaked: kernels may run from other static destructors
  return *c;
}

}  // namespace

uint64_t plans_built() { return g_plans_built.load(); }

void note_site_filled() { g_sites_filled.fetch_add(1, std::memory_order_relaxed); }

uint64_t sites_filled() { return g_sites_filled.load(); }

std::shared_ptr<const Plan> find_or_build_plan(const PlanKey& key,
                                               const std::function<std::shared_ptr<Plan>()>& build) {
  std::shared_ptr<const Plan> plan = plans().find(key);
  if (plan == nullptr) {
    std::shared_ptr<Plan> built = build();
    if (built == nullptr) {
      built = std::make_shared<Plan>();
      built->unusable = true;
    }
    plan = plans().insert(key, std::move(built));
  }
  return plan->unusable ? nullptr : plan;
}

// ---- constants and their reordered copies ---------------------------------------------------------------------

namespace {

// A plan and, per source, its address and declaration.
struct WeightKey {
  uint64_t plan;
  std::vector<std::pair<uintptr_t, uint64_t>> sources;
  bool operator<(const WeightKey& o) const {
    return plan != o.plan ? plan < o.plan : sources < o.sources;
  }
};

class Constants {
 public:
  void declare(const void* data, size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    g_constants_epoch.fetch_add(1);
    const uintptr_t begin = reinterpret_cast<uintptr_t>(data);
    drop_overlapping(begin, begin + bytes);
    ranges_[begin] = Range{bytes, ++generation_};
  }

  void release(const void* data) {
    std::lock_guard<std::mutex> lock(mutex_);
    g_constants_epoch.fetch_add(1);
    auto it = ranges_.find(reinterpret_cast<uintptr_t>(data));
    if (it == ranges_.end()) return;
    drop_copies(it->first, it->first + it->second.bytes);
    ranges_.erase(it);
  }

  // The generation of the declared range holding [data, data + bytes); 0 when there is none.
  uint64_t generation(const void* data, size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    return generation_locked(reinterpret_cast<uintptr_t>(data), bytes);
  }

  // The key of a copy made from `sources`, or nullopt when one of them is not declared.
  std::optional<WeightKey> key(uint64_t plan, const std::vector<Source>& sources) {
    std::lock_guard<std::mutex> lock(mutex_);
    WeightKey k{plan, {}};
    for (const Source& s : sources) {
      const uintptr_t begin = reinterpret_cast<uintptr_t>(s.data);
      const uint64_t g = generation_locked(begin, s.bytes);
      if (g == 0) return std::nullopt;
      k.sources.emplace_back(begin, g);
    }
    return k;
  }

  std::shared_ptr<const char> find(const WeightKey& key) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = copies_.find(key);
    if (it == copies_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second.position);
    return it->second.data;
  }

  void insert(const WeightKey& key, const std::vector<Source>& sources, std::shared_ptr<const char> data,
              size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    // Released or re-declared while the copy was made: this call may use it, later ones must not find it.
    for (size_t i = 0; i < sources.size(); ++i) {
      if (generation_locked(key.sources[i].first, sources[i].bytes) != key.sources[i].second) return;
    }
    if (copies_.count(key) != 0) return;
    order_.push_front(key);
    copies_.emplace(key, Copy{std::move(data), bytes, order_.begin()});
    total_ += bytes;
    while (total_ > kMaxWeightBytes && order_.size() > 1) erase(WeightKey(order_.back()));
  }

 private:
  struct Range {
    size_t bytes;
    uint64_t generation;
  };
  struct Copy {
    std::shared_ptr<const char> data;
    size_t bytes;
    std::list<WeightKey>::iterator position;
  };

  uint64_t generation_locked(uintptr_t begin, size_t bytes) const {
    auto it = ranges_.upper_bound(begin);
    if (it == ranges_.begin()) return 0;
    --it;
    return begin + bytes <= it->first + it->second.bytes ? it->second.generation : 0;
  }

  void drop_overlapping(uintptr_t begin, uintptr_t end) {
    for (auto it = ranges_.begin(); it != ranges_.end();) {
      if (it->first < end && begin < it->first + it->second.bytes) {
        drop_copies(it->first, it->first + it->second.bytes);
        it = ranges_.erase(it);
      } else {
        ++it;
      }
    }
  }

  // Drops the copies made from a source in [begin, end).
  void drop_copies(uintptr_t begin, uintptr_t end) {
    for (auto it = copies_.begin(); it != copies_.end();) {
      auto next = std::next(it);
      for (const auto& [data, generation] : it->first.sources) {
        if (data >= begin && data < end) {
          erase(it->first);
          break;
        }
      }
      it = next;
    }
  }

  void erase(const WeightKey& key) {
    g_constants_epoch.fetch_add(1);
    auto it = copies_.find(key);
    total_ -= it->second.bytes;
    order_.erase(it->second.position);
    copies_.erase(it);
  }

  std::mutex mutex_;
  std::map<uintptr_t, Range> ranges_;  // by start address; declarations never overlap
  uint64_t generation_ = 0;
  std::map<WeightKey, Copy> copies_;
  std::list<WeightKey> order_;  // most recently used first
  size_t total_ = 0;
};

Constants& constants() {
  static Constants* c = new Constants;  // leaked, as the plan cache
  return *c;
}

}  // namespace

void declare_constant(const void* data, size_t bytes) {
  if (data != nullptr && bytes > 0) constants().declare(data, bytes);
}

void release_constant(const void* data) { constants().release(data); }

uint64_t constants_epoch() { return g_constants_epoch.load(); }

bool is_constant(const void* data, size_t bytes) { return constants().generation(data, bytes) != 0; }

namespace {

// Prepared weights of 2 MiB and more go on huge pages where the kernel offers them (transparent huge pages, in
// `madvise` mode on Debian): each inference streams them all, and at a small input a model's filters are read once
// per inference from memory, not cache (resnet50 at 64 x 64: 100 MB), where 4 KiB pages cost a TLB miss every 4 KiB
// (resnet50 64², one thread: 4 to 5 % with glibc's heap on huge pages, this advice 1 %, within the noise;
// BENCHMARKS.md). The block is mapped 2 MiB-aligned; only its
// last partial 2 MiB, if any, stays on small pages. Smaller copies use the heap.
constexpr size_t kHugePage = size_t{2} << 20;

std::shared_ptr<char> allocate_prepared(size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (bytes >= kHugePage) {
    const long system_page = sysconf(_SC_PAGESIZE);
    const size_t page = system_page > 0 ? static_cast<size_t>(system_page) : 4096;
    const size_t size = (bytes + page - 1) / page * page;
    // kHugePage more than needed, so that a kHugePage-aligned block of `size` bytes lies inside the mapping.
    void* mapped = mmap(nullptr, size + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapped == MAP_FAILED) return nullptr;
    const uintptr_t start = reinterpret_cast<uintptr_t>(mapped);
    const uintptr_t aligned = (start + kHugePage - 1) / kHugePage * kHugePage;
    // Unmap the slack before and after the block: `head` bytes before it, the other kHugePage - head after it (both
    // page multiples, as start, size and kHugePage are).
    const size_t head = aligned - start, tail = kHugePage - head;
    if (head > 0) munmap(mapped, head);
    if (tail > 0) munmap(reinterpret_cast<void*>(aligned + size), tail);
    char* block = reinterpret_cast<char*>(aligned);
    madvise(block, size, MADV_HUGEPAGE);  // advice only: without THP the block keeps small pages
    return std::shared_ptr<char>(block, [size](char* p) { munmap(p, size); });
  }
#endif
  char* raw = static_cast<char*>(::operator new[](align_up(bytes), std::align_val_t(64), std::nothrow));
  if (raw == nullptr) return nullptr;
  return std::shared_ptr<char>(raw, [](char* p) { ::operator delete[](p, std::align_val_t(64)); });
}

}  // namespace

std::shared_ptr<const char> constant_weights(const Plan& plan, const std::vector<Source>& sources, size_t bytes,
                                             const std::function<Status(char*)>& fill, Status* status) {
  *status = Status::OK();
  std::optional<WeightKey> key = constants().key(plan.id, sources);
  if (!key) return nullptr;
  if (std::shared_ptr<const char> hit = constants().find(*key)) return hit;
  std::shared_ptr<char> copy = allocate_prepared(bytes);
  if (copy == nullptr) {
    *status = Status::Error("out of memory for ", bytes, " bytes of prepared weights");
    return nullptr;
  }
  *status = fill(copy.get());
  if (!status->ok()) return nullptr;
  constants().insert(*key, sources, copy, bytes);
  return copy;
}

}  // namespace kforge::kernels::onednn
