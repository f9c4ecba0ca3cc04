// kforge multi-kernel dispatch: pick one of several variants of a kernel per run-time shape, benchmark each
// new shape once, remember the pick in memory (fast path) and on disk (across processes).
// Plain C++17 and the standard library only (plus kforge_runtime.h); compiles with g++, clang++ and nvcc (host
// side). kforge copies this file beside every output set that uses --multi-kernel-hints.
// The contract is documented in docs/multi-kernel.md; the public API comes first, the details after it.
#ifndef KFORGE_MULTIKERNEL_H_
#define KFORGE_MULTIKERNEL_H_

// Bumped when the public API below changes incompatibly (additions do not bump it).
#define KFORGE_MULTIKERNEL_API_VERSION 1

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <limits>
#include <memory>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "kforge_runtime.h"

namespace kforge {
namespace mk {

// =========================================================================================================
// Public API
// =========================================================================================================

// The on-disk format version: the first line of every cache entry is exactly kCacheHeader.
constexpr int kCacheFormatVersion = 1;
constexpr const char* kCacheHeader = "kforge-multi-kernel-pick 1";

// Environment switches (read once, when a dispatcher is constructed, by EnvOptions::from_environment()).
constexpr const char* kEnvForce = "KFORGE_MULTI_KERNEL_FORCE";          // variant name(s), comma-separated
constexpr const char* kEnvBenchmark = "KFORGE_MULTI_KERNEL_BENCHMARK";  // "0": no benchmarking, nearest hint
constexpr const char* kEnvCache = "KFORGE_MULTI_KERNEL_CACHE";          // "0": no disk cache (read or write)
constexpr const char* kEnvLog = "KFORGE_MULTI_KERNEL_LOG";              // "1": one stderr line per pick
constexpr const char* kEnvCacheDir = "KFORGE_CACHE_DIR";                // cache root (see cache_root())

// A run-time shape: up to kMaxDims int64 values (for a GEMM {M, N, K}; for a row reduction {rows, cols}).
// Cheap to build and compare: no allocation.
struct ShapeKey {
  static constexpr int kMaxDims = 8;
  int64_t dims[kMaxDims] = {};
  int32_t size = 0;

  ShapeKey() = default;
  ShapeKey(std::initializer_list<int64_t> values) { assign(values.begin(), values.size()); }
  ShapeKey(const int64_t* values, size_t count) { assign(values, count); }

  bool operator==(const ShapeKey& other) const {
    if (size != other.size) return false;
    for (int32_t i = 0; i < size; ++i)
      if (dims[i] != other.dims[i]) return false;
    return true;
  }
  bool operator!=(const ShapeKey& other) const { return !(*this == other); }
  // Hot-path hash (not stable across versions; never written to disk).
  uint64_t hash() const;
  // "64x4096x4096" ("scalar" for no dims); the spelling used in cache file names and logs.
  std::string to_string() const;

 private:
  void assign(const int64_t* values, size_t count);
};

// What the cache entry is specific to. CPU: {"cpu", <CPU model>, "cpu"}; CUDA: {<device name>, "sm_90",
// "cuda-12.4"} (the CUDA code fills it from cudaGetDeviceProperties / cudaRuntimeGetVersion).
struct DeviceInfo {
  std::string name;
  std::string arch;     // compute capability or CPU model
  std::string runtime;  // CUDA version, or "cpu"
};
DeviceInfo cpu_device_info();  // model name from /proc/cpuinfo (or "unknown-cpu")

// Times one run of `body`, in microseconds. CPU: std::chrono::steady_clock. CUDA: the caller derives a timer
// that records events around body() on its stream and synchronises on the stop event. Tests inject fakes.
class Timer {
 public:
  virtual ~Timer() = default;
  virtual double measure_us(const std::function<void()>& body) = 0;
};
class SteadyClockTimer : public Timer {
 public:
  double measure_us(const std::function<void()>& body) override;
};

struct BenchmarkOptions {
  int warmup = 1;            // untimed runs per variant before timing
  int repetitions = 5;       // timed runs per variant; the median counts
  double tie_margin = 0.02;  // variants within 2 % of the fastest median tie; the lowest rank wins a tie
};

// The environment switches, parsed. Tests build one by hand instead of calling from_environment().
struct EnvOptions {
  std::vector<std::string> force;  // KFORGE_MULTI_KERNEL_FORCE: the first name a dispatcher has wins
  bool benchmark = true;           // KFORGE_MULTI_KERNEL_BENCHMARK != "0"
  bool cache = true;               // KFORGE_MULTI_KERNEL_CACHE != "0"
  bool log = false;                // KFORGE_MULTI_KERNEL_LOG set and not "0"
  std::string cache_dir;           // resolved cache root (cache_root()); entries go under <root>/multi-kernel/
  static EnvOptions from_environment();
};
// KFORGE_CACHE_DIR, else $XDG_CACHE_HOME/kforge, else $HOME/.cache/kforge, else "" (no disk cache).
std::string cache_root();

// 64-bit FNV-1a: the variant-set hash and the device part of cache file names. Stable across versions.
constexpr uint64_t fnv1a64(std::string_view text, uint64_t seed = 14695981039346656037ull) {
  uint64_t h = seed;
  for (char c : text) {
    h ^= static_cast<uint8_t>(c);
    h *= 1099511628211ull;
  }
  return h;
}
std::string hex16(uint64_t value);

// How a shape's pick was made (for logs, tests and the benchmark of a second process).
enum class PickSource : int8_t { kBenchmarked, kDiskCache, kForced, kNearestHint };
const char* name_of(PickSource source);

struct Pick {
  size_t variant = 0;
  PickSource source = PickSource::kBenchmarked;
  std::vector<double> median_us;  // per variant (benchmarked or loaded from disk); empty otherwise
};

struct Stats {
  uint64_t shapes_benchmarked = 0;  // shapes for which every variant was run and timed
  uint64_t variant_runs = 0;        // runs made while benchmarking (warm-up included)
  uint64_t disk_hits = 0;           // shapes whose pick came from a valid cache entry
  uint64_t disk_writes = 0;         // cache entries written
  uint64_t ignored_entries = 0;     // corrupt, truncated or foreign entries seen (each warned about once)
};

template <class Signature>
class MultiKernel;

// A dispatcher over variants that are all called as R(Args...). Variants must compute the same result; they
// may differ only in speed. Thread-safe: the known-shape path is lock-free, a new shape takes a mutex.
template <class R, class... Args>
class MultiKernel<R(Args...)> {
 public:
  struct Variant {
    // A constructor rather than an aggregate, so that `{name, fn, rank, hint}` (without `applies`) stays valid
    // under -Wextra (-Wmissing-field-initializers) in code written before `applies` existed.
    Variant() = default;
    Variant(std::string name_, std::function<R(Args...)> fn_, int rank_ = 0, std::vector<int64_t> hint_ = {},
            std::function<bool(const ShapeKey&)> applies_ = {})
        : name(std::move(name_)), fn(std::move(fn_)), rank(rank_), hint(std::move(hint_)), applies(std::move(applies_)) {}

    std::string name;               // identifier-like, unique in the set; written to the cache file
    std::function<R(Args...)> fn;   // a CPU function, or a host function that launches CUDA work
    int rank = 0;                   // simplicity: lower is simpler, and wins ties within the margin
    std::vector<int64_t> hint;      // the shape it is tuned for (same length as the keys; 0 = any value);
                                    // empty: no hint (never chosen by nearest-hint unless nothing has one)
    // The shapes it can run (e.g. a row kernel that holds the row in registers: rows up to its capacity);
    // empty: every shape. A variant is never benchmarked, picked, forced or loaded from the cache for a
    // shape it cannot run; at least one variant of a set should run every shape.
    std::function<bool(const ShapeKey&)> applies;
  };
  struct Config {
    std::string name = "multi_kernel";       // the call site, for logs and cache entries
    uint64_t variant_set_hash = 0;           // emitted by kforge; 0: computed from names, ranks and hints
    DeviceInfo device = cpu_device_info();
    std::shared_ptr<Timer> timer = std::make_shared<SteadyClockTimer>();
    BenchmarkOptions bench;
    EnvOptions env = EnvOptions::from_environment();
    // Where warnings ("kforge: warning: ...") and log lines go; default: stderr.
    std::function<void(const std::string&)> warn;
    std::function<void(const std::string&)> log;
  };
  // Called while benchmarking a new shape: must run the given variant once, on scratch outputs (so that
  // in-place or accumulating kernels do not corrupt real data). The timer wraps each call.
  using ScratchRunner = std::function<void(const Variant&)>;

  // Throws std::invalid_argument for an empty set, an empty/duplicate name or a name with whitespace.
  MultiKernel(std::vector<Variant> variants, Config config);

  // Dispatch with the real arguments: on a new shape every variant is first benchmarked on these arguments.
  // Only valid when every variant writes its outputs without reading them and no output aliases an input.
  R operator()(const ShapeKey& key, Args... args);
  // Dispatch; on a new shape run_on_scratch(variant) is timed for every variant (any callable taking
  // const Variant&; it is invoked only on a miss, so passing a lambda costs nothing on the hot path).
  template <class Runner>
  R dispatch(const ShapeKey& key, Runner&& run_on_scratch, Args... args);
  // The variant index for a shape, choosing (benchmarking, loading, ...) on first sight.
  template <class Runner>
  size_t select(const ShapeKey& key, Runner&& run_on_scratch);
  // Known-shape lookup only; returns false for an unseen shape. The hot path.
  bool lookup(const ShapeKey& key, size_t* variant) const;

  size_t size() const { return variants_.size(); }
  const Variant& variant(size_t index) const { return variants_[index]; }
  const Config& config() const { return config_; }
  uint64_t variant_set_hash() const { return set_hash_; }
  // The cache file for a shape (empty when the disk cache is off).
  std::string cache_path(const ShapeKey& key) const;
  bool pick_for(const ShapeKey& key, Pick* out) const;  // the pick made for a shape, if any
  bool can_run(size_t variant, const ShapeKey& key) const { return runs(variants_[variant], key); }
  Stats stats() const;

  // Pure helpers (exposed for tests and for GPU code that wants them).
  static size_t choose_fastest(const std::vector<Variant>& variants, const std::vector<double>& median_us,
                               double tie_margin);
  static size_t nearest_hint(const std::vector<Variant>& variants, const ShapeKey& key);
  static bool runs(const Variant& v, const ShapeKey& key) { return !v.applies || v.applies(key); }

 private:
  struct Slot {
    std::atomic<uint32_t> state{0};  // 0: empty; otherwise variant index + 1, published after the key
    ShapeKey key;
  };
  struct Table {
    explicit Table(size_t capacity) : slots(new Slot[capacity]), mask(capacity - 1) {}
    std::unique_ptr<Slot[]> slots;
    size_t mask;
    size_t used = 0;
  };
  struct Record {
    ShapeKey key;
    Pick pick;
  };

  size_t choose_locked(const ShapeKey& key, const std::function<void(const Variant&)>& run);
  void insert_locked(const ShapeKey& key, size_t variant);
  bool load_entry(const ShapeKey& key, Pick* pick);
  void store_entry(const ShapeKey& key, const Pick& pick);
  void emit_warning(const std::string& text) const;
  void emit_log(const ShapeKey& key, const Pick& pick, const std::string& where) const;

  std::vector<Variant> variants_;
  Config config_;
  uint64_t set_hash_ = 0;
  long forced_ = -1;
  std::atomic<const Table*> table_{nullptr};
  std::vector<std::unique_ptr<Table>> tables_;  // every table ever published (readers may hold old ones)
  std::vector<Record> records_;
  mutable std::mutex mutex_;
  Stats stats_;
};

// =========================================================================================================
// Details
// =========================================================================================================

namespace detail {

inline bool env_flag(const char* name, bool fallback) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return fallback;
  std::string_view v(value);
  return !(v == "0" || v == "false" || v == "off" || v == "no");
}

inline std::string trim(std::string_view text) {
  size_t begin = 0, end = text.size();
  while (begin < end && (text[begin] == ' ' || text[begin] == '\t' || text[begin] == '\r')) ++begin;
  while (end > begin && (text[end - 1] == ' ' || text[end - 1] == '\t' || text[end - 1] == '\r')) --end;
  return std::string(text.substr(begin, end - begin));
}

// One line of a cache file never holds a newline; device names etc. are flattened.
inline std::string one_line(std::string_view text) {
  std::string out(text);
  for (char& c : out)
    if (c == '\n' || c == '\r') c = ' ';
  return trim(out);
}

inline bool has_space(std::string_view text) {
  for (char c : text)
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') return true;
  return false;
}

inline void make_directories(const std::string& path) {
  std::string partial;
  for (size_t i = 0; i <= path.size(); ++i) {
    if (i == path.size() || path[i] == '/') {
      if (!partial.empty()) ::mkdir(partial.c_str(), 0755);  // EEXIST and races are fine
    }
    if (i < path.size()) partial.push_back(path[i]);
  }
}

inline std::string format_us(double us) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.3f", us);
  return buffer;
}

}  // namespace detail

inline void ShapeKey::assign(const int64_t* values, size_t count) {
  // Keys longer than kMaxDims fold the rest into the last slot: still distinct in practice, and a collision
  // would only cost speed (every variant computes the same result).
  size = static_cast<int32_t>(count < static_cast<size_t>(kMaxDims) ? count : kMaxDims);
  for (int32_t i = 0; i < size; ++i) dims[i] = values[i];
  for (size_t i = kMaxDims; i < count; ++i)
    dims[kMaxDims - 1] = static_cast<int64_t>((static_cast<uint64_t>(dims[kMaxDims - 1]) * 1000003u) ^
                                              static_cast<uint64_t>(values[i]));
}

inline uint64_t ShapeKey::hash() const {
  uint64_t h = static_cast<uint64_t>(size) * uint64_t{0x9E3779B97F4A7C15u};
  for (int32_t i = 0; i < size; ++i) {
    h ^= static_cast<uint64_t>(dims[i]);
    h *= uint64_t{0xFF51AFD7ED558CCDu};
    h ^= h >> 29;
  }
  return h;
}

inline std::string ShapeKey::to_string() const {
  if (size == 0) return "scalar";
  std::string out;
  for (int32_t i = 0; i < size; ++i) {
    if (i > 0) out += 'x';
    out += std::to_string(dims[i]);
  }
  return out;
}

inline DeviceInfo cpu_device_info() {
  DeviceInfo info{"cpu", "unknown-cpu", "cpu"};
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.compare(0, 10, "model name") == 0) {
      size_t colon = line.find(':');
      if (colon != std::string::npos) {
        std::string model = detail::one_line(std::string_view(line).substr(colon + 1));
        if (!model.empty()) info.arch = model;
      }
      break;
    }
  }
  return info;
}

inline double SteadyClockTimer::measure_us(const std::function<void()>& body) {
  auto start = std::chrono::steady_clock::now();
  body();
  auto stop = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::micro>(stop - start).count();
}

inline std::string cache_root() {
  const char* dir = std::getenv(kEnvCacheDir);
  if (dir != nullptr && *dir != '\0') return dir;
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg != nullptr && *xdg != '\0') return std::string(xdg) + "/kforge";
  const char* home = std::getenv("HOME");
  if (home != nullptr && *home != '\0') return std::string(home) + "/.cache/kforge";
  return "";
}

inline EnvOptions EnvOptions::from_environment() {
  EnvOptions options;
  if (const char* force = std::getenv(kEnvForce)) {
    std::string_view rest(force);
    while (!rest.empty()) {
      size_t comma = rest.find(',');
      std::string name = detail::trim(rest.substr(0, comma));
      if (!name.empty()) options.force.push_back(name);
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  }
  options.benchmark = detail::env_flag(kEnvBenchmark, true);
  options.cache = detail::env_flag(kEnvCache, true);
  options.log = detail::env_flag(kEnvLog, false);
  options.cache_dir = cache_root();
  return options;
}

inline std::string hex16(uint64_t value) {
  char buffer[17];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(value));
  return buffer;
}

inline const char* name_of(PickSource source) {
  switch (source) {
    case PickSource::kBenchmarked: return "benchmarked";
    case PickSource::kDiskCache: return "from cache";
    case PickSource::kForced: return "forced";
    case PickSource::kNearestHint: return "nearest hint";
  }
  return "unknown";
}

// ---------------------------------------------------------------------------------------------------------
// MultiKernel
// ---------------------------------------------------------------------------------------------------------

template <class R, class... Args>
MultiKernel<R(Args...)>::MultiKernel(std::vector<Variant> variants, Config config)
    : variants_(std::move(variants)), config_(std::move(config)) {
  if (variants_.empty()) throw std::invalid_argument("kforge multi-kernel '" + config_.name + "': no variants");
  if (variants_.size() >= 0xFFFFFFFFu) throw std::invalid_argument("kforge multi-kernel: too many variants");
  uint64_t computed = fnv1a64("kforge-variant-set");
  for (size_t i = 0; i < variants_.size(); ++i) {
    const Variant& v = variants_[i];
    if (v.name.empty() || detail::has_space(v.name))
      throw std::invalid_argument("kforge multi-kernel '" + config_.name + "': bad variant name '" + v.name + "'");
    for (size_t j = 0; j < i; ++j)
      if (variants_[j].name == v.name)
        throw std::invalid_argument("kforge multi-kernel '" + config_.name + "': duplicate variant '" + v.name +
                                    "'");
    std::string part = v.name + ":" + std::to_string(v.rank);
    for (int64_t h : v.hint) part += "," + std::to_string(h);
    computed = fnv1a64(part + ";", computed);
  }
  set_hash_ = config_.variant_set_hash != 0 ? config_.variant_set_hash : computed;
  if (!config_.timer) config_.timer = std::make_shared<SteadyClockTimer>();
  if (config_.bench.repetitions < 1) config_.bench.repetitions = 1;
  if (config_.bench.warmup < 0) config_.bench.warmup = 0;
  for (const std::string& name : config_.env.force) {
    for (size_t i = 0; i < variants_.size() && forced_ < 0; ++i)
      if (variants_[i].name == name) forced_ = static_cast<long>(i);
    if (forced_ >= 0) break;
  }
  if (!config_.env.force.empty() && forced_ < 0) {
    std::string known;
    for (const Variant& v : variants_) known += (known.empty() ? "" : ", ") + v.name;
    emit_warning(std::string(kEnvForce) + " names no variant of '" + config_.name + "' (it has: " + known +
                 "); choosing as usual");
  }
  if (forced_ >= 0 && config_.env.log)
    emit_log(ShapeKey{}, Pick{static_cast<size_t>(forced_), PickSource::kForced, {}}, "");
  auto table = std::make_unique<Table>(16);
  table_.store(table.get(), std::memory_order_release);
  tables_.push_back(std::move(table));
}

template <class R, class... Args>
inline bool MultiKernel<R(Args...)>::lookup(const ShapeKey& key, size_t* variant) const {
  const Table* table = table_.load(std::memory_order_acquire);
  size_t i = static_cast<size_t>(key.hash()) & table->mask;
  for (;;) {
    const Slot& slot = table->slots[i];
    uint32_t state = slot.state.load(std::memory_order_acquire);
    if (state == 0) return false;
    if (slot.key == key) {
      *variant = state - 1;
      return true;
    }
    i = (i + 1) & table->mask;
  }
}

template <class R, class... Args>
R MultiKernel<R(Args...)>::operator()(const ShapeKey& key, Args... args) {
  size_t index = select(key, [&](const Variant& v) { static_cast<void>(v.fn(args...)); });
  return variants_[index].fn(std::forward<Args>(args)...);
}

template <class R, class... Args>
template <class Runner>
R MultiKernel<R(Args...)>::dispatch(const ShapeKey& key, Runner&& run_on_scratch, Args... args) {
  size_t index = select(key, std::forward<Runner>(run_on_scratch));
  return variants_[index].fn(std::forward<Args>(args)...);
}

template <class R, class... Args>
template <class Runner>
size_t MultiKernel<R(Args...)>::select(const ShapeKey& key, Runner&& run_on_scratch) {
  if (forced_ >= 0 && can_run(static_cast<size_t>(forced_), key)) return static_cast<size_t>(forced_);
  size_t index;
  if (lookup(key, &index)) return index;
  std::function<void(const Variant&)> run = [&](const Variant& v) { run_on_scratch(v); };
  std::lock_guard<std::mutex> lock(mutex_);
  return choose_locked(key, run);
}

template <class R, class... Args>
size_t MultiKernel<R(Args...)>::choose_locked(const ShapeKey& key, const std::function<void(const Variant&)>& run) {
  size_t index;
  if (lookup(key, &index)) return index;  // another thread chose it while we waited
  Pick pick;
  std::string where;
  if (forced_ >= 0)
    emit_warning(std::string(kEnvForce) + ": variant '" + variants_[static_cast<size_t>(forced_)].name + "' of '" +
                 config_.name + "' cannot run shape " + key.to_string() + "; choosing as usual for it");
  bool use_disk = config_.env.cache && !config_.env.cache_dir.empty();
  if (use_disk && load_entry(key, &pick)) {
    where = cache_path(key);
    ++stats_.disk_hits;
  } else if (!config_.env.benchmark) {
    pick.variant = nearest_hint(variants_, key);
    pick.source = PickSource::kNearestHint;
  } else {
    pick.source = PickSource::kBenchmarked;
    const size_t count = variants_.size();
    pick.median_us.assign(count, 0.0);
    // Warm-ups first, then the repetitions interleaved: repetition r runs every variant once, starting at
    // variant r % count, so clock or temperature drift and cache state do not favour one variant's phase.
    // A variant that cannot run the shape is not run: its time is +inf, so it never wins.
    std::vector<char> runnable(count);
    size_t runnable_count = 0;
    for (size_t v = 0; v < count; ++v) {
      runnable[v] = can_run(v, key);
      if (runnable[v]) ++runnable_count;
    }
    for (int w = 0; w < config_.bench.warmup; ++w)
      for (size_t v = 0; v < count; ++v)
        if (runnable[v]) run(variants_[v]);
    std::vector<std::vector<double>> samples(count);
    for (int r = 0; r < config_.bench.repetitions; ++r) {
      for (size_t i = 0; i < count; ++i) {
        const size_t v = (static_cast<size_t>(r) + i) % count;
        if (runnable[v]) samples[v].push_back(config_.timer->measure_us([&] { run(variants_[v]); }));
      }
    }
    stats_.variant_runs += static_cast<uint64_t>(config_.bench.warmup + config_.bench.repetitions) * runnable_count;
    for (size_t v = 0; v < count; ++v) {
      std::vector<double>& s = samples[v];
      std::sort(s.begin(), s.end());
      size_t n = s.size();
      pick.median_us[v] = n == 0   ? std::numeric_limits<double>::infinity()
                          : n % 2 == 1 ? s[n / 2]
                                       : 0.5 * (s[n / 2 - 1] + s[n / 2]);
    }
    ++stats_.shapes_benchmarked;
    pick.variant = choose_fastest(variants_, pick.median_us, config_.bench.tie_margin);
    // Every variant failed or none can run the shape: the nearest hint among those that can (else rank 0).
    if (!(pick.median_us[pick.variant] < std::numeric_limits<double>::infinity()))
      pick.variant = nearest_hint(variants_, key);
    if (use_disk) {
      store_entry(key, pick);
      where = cache_path(key);
    }
  }
  emit_log(key, pick, where);
  records_.push_back(Record{key, pick});
  insert_locked(key, pick.variant);
  return pick.variant;
}

template <class R, class... Args>
void MultiKernel<R(Args...)>::insert_locked(const ShapeKey& key, size_t variant) {
  Table* table = tables_.back().get();
  if ((table->used + 1) * 2 > table->mask + 1) {
    // Grow: readers keep using the old table until they load the new pointer; old tables stay alive.
    auto bigger = std::make_unique<Table>((table->mask + 1) * 2);
    for (size_t s = 0; s <= table->mask; ++s) {
      uint32_t state = table->slots[s].state.load(std::memory_order_relaxed);
      if (state == 0) continue;
      size_t i = static_cast<size_t>(table->slots[s].key.hash()) & bigger->mask;
      while (bigger->slots[i].state.load(std::memory_order_relaxed) != 0) i = (i + 1) & bigger->mask;
      bigger->slots[i].key = table->slots[s].key;
      bigger->slots[i].state.store(state, std::memory_order_relaxed);
      ++bigger->used;
    }
    table = bigger.get();
    tables_.push_back(std::move(bigger));
    table_.store(table, std::memory_order_release);
  }
  size_t i = static_cast<size_t>(key.hash()) & table->mask;
  while (table->slots[i].state.load(std::memory_order_relaxed) != 0) i = (i + 1) & table->mask;
  table->slots[i].key = key;
  table->slots[i].state.store(static_cast<uint32_t>(variant + 1), std::memory_order_release);
  ++table->used;
}

template <class R, class... Args>
size_t MultiKernel<R(Args...)>::choose_fastest(const std::vector<Variant>& variants,
                                               const std::vector<double>& median_us, double tie_margin) {
  size_t fastest = 0;
  for (size_t v = 1; v < median_us.size(); ++v)
    if (median_us[v] < median_us[fastest]) fastest = v;
  // Every variant within the margin of the fastest ties; the simplest (lowest rank, then lowest index) wins.
  double limit = median_us[fastest] * (1.0 + tie_margin);
  size_t chosen = fastest;
  for (size_t v = 0; v < median_us.size(); ++v) {
    if (median_us[v] > limit) continue;
    if (variants[v].rank < variants[chosen].rank || (variants[v].rank == variants[chosen].rank && v < chosen))
      chosen = v;
  }
  return chosen;
}

template <class R, class... Args>
size_t MultiKernel<R(Args...)>::nearest_hint(const std::vector<Variant>& variants, const ShapeKey& key) {
  // PyTorch #163090: argmin over hinted variants of sum |log2(dim) - log2(hint)|; ties go to the lower rank.
  auto log2_of = [](int64_t value) { return std::log2(static_cast<double>(value < 1 ? 1 : value)); };
  size_t best = variants.size();
  double best_distance = std::numeric_limits<double>::infinity();
  for (size_t v = 0; v < variants.size(); ++v) {
    const std::vector<int64_t>& hint = variants[v].hint;
    if (hint.empty() || !runs(variants[v], key)) continue;
    double distance = 0;
    for (size_t d = 0; d < hint.size() && d < static_cast<size_t>(key.size); ++d)
      if (hint[d] != 0) distance += std::fabs(log2_of(key.dims[d]) - log2_of(hint[d]));
    bool better = distance < best_distance - 1e-12 ||
                  (std::fabs(distance - best_distance) <= 1e-12 && variants[v].rank < variants[best].rank);
    if (best == variants.size() || better) {
      best = v;
      best_distance = distance;
    }
  }
  if (best < variants.size()) return best;
  size_t simplest = variants.size();  // nothing that runs the shape has a hint: the simplest that runs it
  for (size_t v = 0; v < variants.size(); ++v)
    if (runs(variants[v], key) && (simplest == variants.size() || variants[v].rank < variants[simplest].rank))
      simplest = v;
  return simplest < variants.size() ? simplest : 0;
}

template <class R, class... Args>
std::string MultiKernel<R(Args...)>::cache_path(const ShapeKey& key) const {
  if (!config_.env.cache || config_.env.cache_dir.empty()) return "";
  const DeviceInfo& d = config_.device;
  uint64_t device_hash = fnv1a64(d.name + "\n" + d.arch + "\n" + d.runtime);
  return config_.env.cache_dir + "/multi-kernel/" + hex16(set_hash_) + "-" + hex16(device_hash) + "-" +
         key.to_string() + ".pick";
}

template <class R, class... Args>
bool MultiKernel<R(Args...)>::load_entry(const ShapeKey& key, Pick* pick) {
  std::string path = cache_path(key);
  // Regular files only, looked at before opening: a FIFO without a writer would block the open, and a device never
  // ends (the read below stops at 64 KiB anyway).
  struct stat st {};
  if (path.empty() || ::stat(path.c_str(), &st) != 0) return false;  // no entry: not an error
  std::string problem;
  if (!S_ISREG(st.st_mode)) problem = S_ISDIR(st.st_mode) ? "it is a directory" : "it is not a regular file";
  std::string text;
  std::ifstream in;
  if (problem.empty()) {
    in.open(path, std::ios::binary);
    if (!in) return false;  // gone since the stat, or unreadable: as if there were no entry
  }
  char buffer[4096];
  while (in.is_open() && (in.read(buffer, sizeof buffer) || in.gcount() > 0)) {
    text.append(buffer, static_cast<size_t>(in.gcount()));
    if (text.size() > (1u << 16)) break;
  }
  const DeviceInfo& d = config_.device;
  std::vector<double> times(variants_.size(), -1.0);
  long chosen = -1;
  bool header = false, set = false, device = false, arch = false, runtime = false, shape = false, end = false;
  std::istringstream lines(text);
  std::string line;
  size_t number = 0;
  while (problem.empty() && std::getline(lines, line)) {
    ++number;
    if (end) {
      problem = "text after 'end'";
      break;
    }
    if (number == 1) {
      header = line == kCacheHeader;
      if (!header) problem = "not a version " + std::to_string(kCacheFormatVersion) + " entry";
      continue;
    }
    size_t space = line.find(' ');
    std::string field = line.substr(0, space);
    std::string value = space == std::string::npos ? "" : line.substr(space + 1);
    if (field == "set") {
      set = value == hex16(set_hash_);
      if (!set) problem = "written for another variant set";
    } else if (field == "device") {
      device = value == detail::one_line(d.name);
      if (!device) problem = "written for another device";
    } else if (field == "arch") {
      arch = value == detail::one_line(d.arch);
      if (!arch) problem = "written for another architecture";
    } else if (field == "runtime") {
      runtime = value == detail::one_line(d.runtime);
      if (!runtime) problem = "written for another runtime";
    } else if (field == "shape") {
      shape = value == key.to_string();
      if (!shape) problem = "written for another shape";
    } else if (field == "pick") {
      for (size_t v = 0; v < variants_.size(); ++v)
        if (variants_[v].name == value) chosen = static_cast<long>(v);
      if (chosen < 0) problem = "unknown variant '" + value + "'";
      else if (!can_run(static_cast<size_t>(chosen), key))
        problem = "variant '" + value + "' cannot run this shape";
    } else if (field == "time") {
      size_t sep = value.find(' ');
      std::string name = value.substr(0, sep);
      char* parse_end = nullptr;
      const char* number_text = sep == std::string::npos ? "" : value.c_str() + sep + 1;
      double us = std::strtod(number_text, &parse_end);
      if (sep == std::string::npos || parse_end == number_text || *parse_end != '\0' || !(us >= 0)) {
        problem = "bad time on line " + std::to_string(number);
      } else {
        for (size_t v = 0; v < variants_.size(); ++v)
          if (variants_[v].name == name) times[v] = us;
      }
    } else if (field == "site") {
      // informational
    } else if (field == "end" && value.empty()) {
      end = true;
    } else {
      problem = "unexpected line " + std::to_string(number);
    }
  }
  if (problem.empty() && !(header && set && device && arch && runtime && shape && chosen >= 0 && end))
    problem = "incomplete (truncated?)";
  if (!problem.empty()) {
    ++stats_.ignored_entries;
    emit_warning("ignoring multi-kernel cache entry '" + path + "': " + problem + "; benchmarking again");
    return false;
  }
  pick->variant = static_cast<size_t>(chosen);
  pick->source = PickSource::kDiskCache;
  pick->median_us.clear();
  bool all_times = std::all_of(times.begin(), times.end(), [](double t) { return t >= 0; });
  if (all_times) pick->median_us = times;
  return true;
}

template <class R, class... Args>
void MultiKernel<R(Args...)>::store_entry(const ShapeKey& key, const Pick& pick) {
  std::string path = cache_path(key);
  std::string dir = path.substr(0, path.rfind('/'));
  detail::make_directories(dir);
  const DeviceInfo& d = config_.device;
  std::string text = std::string(kCacheHeader) + "\n";
  text += "set " + hex16(set_hash_) + "\n";
  text += "site " + detail::one_line(config_.name) + "\n";
  text += "device " + detail::one_line(d.name) + "\n";
  text += "arch " + detail::one_line(d.arch) + "\n";
  text += "runtime " + detail::one_line(d.runtime) + "\n";
  text += "shape " + key.to_string() + "\n";
  text += "pick " + variants_[pick.variant].name + "\n";
  for (size_t v = 0; v < variants_.size(); ++v)
    text += "time " + variants_[v].name + " " + detail::format_us(pick.median_us[v]) + "\n";
  text += "end\n";
  // Atomic publication: a temp file in the same directory, then rename(2) over the entry. Readers see the old
  // entry, no entry, or the new one, never a partial file; concurrent writers each rename a complete file.
  static std::atomic<unsigned> counter{0};
  std::string temp = path + ".tmp-" + std::to_string(static_cast<long>(::getpid())) + "-" +
                     std::to_string(counter.fetch_add(1));
  std::FILE* file = std::fopen(temp.c_str(), "wb");
  bool ok = file != nullptr;
  if (ok) {
    ok = std::fwrite(text.data(), 1, text.size(), file) == text.size();
    ok = std::fflush(file) == 0 && ok;
    ok = std::fclose(file) == 0 && ok;
  }
  if (ok) ok = std::rename(temp.c_str(), path.c_str()) == 0;
  if (!ok) {
    std::string reason = std::strerror(errno);
    std::remove(temp.c_str());
    emit_warning("cannot write multi-kernel cache entry '" + path + "': " + reason);
    return;
  }
  ++stats_.disk_writes;
}

template <class R, class... Args>
bool MultiKernel<R(Args...)>::pick_for(const ShapeKey& key, Pick* out) const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const Record& record : records_) {
    if (record.key == key) {
      *out = record.pick;
      return true;
    }
  }
  if (forced_ >= 0) {
    out->variant = static_cast<size_t>(forced_);
    out->source = PickSource::kForced;
    out->median_us.clear();
    return true;
  }
  return false;
}

template <class R, class... Args>
Stats MultiKernel<R(Args...)>::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

template <class R, class... Args>
void MultiKernel<R(Args...)>::emit_warning(const std::string& text) const {
  std::string line = "kforge: warning: " + text;
  if (config_.warn) {
    config_.warn(line);
  } else {
    std::fprintf(stderr, "%s\n", line.c_str());
  }
}

template <class R, class... Args>
void MultiKernel<R(Args...)>::emit_log(const ShapeKey& key, const Pick& pick, const std::string& where) const {
  if (!config_.env.log) return;
  // Format (stable; the GPU benchmark greps it): kforge: multi-kernel <site> <shape> -> <variant> (<source>)
  // [times: <name>=<us>us ...] [cache: <path>]
  std::string shape = pick.source == PickSource::kForced ? std::string("*") : key.to_string();
  std::string line = "kforge: multi-kernel " + config_.name + " " + shape + " -> " +
                     variants_[pick.variant].name + " (" + name_of(pick.source) + ")";
  if (!pick.median_us.empty()) {
    line += " times:";
    for (size_t v = 0; v < variants_.size(); ++v)
      line += " " + variants_[v].name + "=" + detail::format_us(pick.median_us[v]) + "us";
  }
  if (!where.empty()) line += " cache: " + where;
  if (config_.log) {
    config_.log(line);
  } else {
    std::fprintf(stderr, "%s\n", line.c_str());
  }
}

}  // namespace mk
}  // namespace kforge

#endif  // KFORGE_MULTIKERNEL_H_
