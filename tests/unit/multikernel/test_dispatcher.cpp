// The run-time dispatcher of templates/runtime/kforge_multikernel.h: choosing, the fast path, env switches.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <thread>

#include "mk_test_util.h"

using kforge::mk::PickSource;
using kforge::mk::ShapeKey;
using mk_test::Kernel;
using mk_test::Setup;
using mk_test::TempDir;

TEST_CASE("the fastest median wins, with warm-up and repetitions") {
  Setup s;
  s.timer->us = {{"plain", 50.0}, {"tile64", 10.0}, {"tile4096", 30.0}};
  Kernel k(s.variants(), s.config(""));
  CHECK(k.dispatch(ShapeKey{64, 256}, s.runner(), 0) == 101);
  // 3 variants x (1 warm-up + 3 timed) runs, then the winner once.
  CHECK(s.ran.size() == 13);
  CHECK(s.timer->measured == 9);
  CHECK(s.ran.back() == "tile64");
  // Warm-up round, then interleaved rounds that rotate the starting variant.
  CHECK(std::vector<std::string>(s.ran.begin(), s.ran.begin() + 9) ==
        std::vector<std::string>{"plain", "tile64", "tile4096", "plain", "tile64", "tile4096", "tile64", "tile4096",
                                 "plain"});
  kforge::mk::Pick pick;
  REQUIRE(k.pick_for(ShapeKey{64, 256}, &pick));
  CHECK(pick.source == PickSource::kBenchmarked);
  CHECK(pick.median_us == std::vector<double>{50.0, 10.0, 30.0});
  CHECK(k.stats().shapes_benchmarked == 1);
  REQUIRE(s.logs.size() == 1);
  CHECK(s.logs[0].find("kforge: multi-kernel test_site 64x256 -> tile64 (benchmarked) times: plain=50.000us") == 0);
}

TEST_CASE("a known shape is not benchmarked again") {
  Setup s;
  s.timer->us = {{"plain", 50.0}, {"tile64", 60.0}, {"tile4096", 5.0}};
  Kernel k(s.variants(), s.config(""));
  CHECK(k.dispatch(ShapeKey{4096, 8}, s.runner(), 0) == 102);
  int measured = s.timer->measured;
  s.ran.clear();
  for (int i = 0; i < 10; ++i) CHECK(k.dispatch(ShapeKey{4096, 8}, s.runner(), 0) == 102);
  CHECK(s.timer->measured == measured);
  CHECK(s.ran.size() == 10);
  size_t index = 9;
  CHECK(k.lookup(ShapeKey{4096, 8}, &index));
  CHECK(index == 2);
  CHECK_FALSE(k.lookup(ShapeKey{4096, 9}, &index));
  CHECK_FALSE(k.lookup(ShapeKey{4096}, &index));
}

TEST_CASE("within the tie margin the simpler variant wins") {
  Setup s;
  // tile4096 is fastest, plain is 1.5 % slower (a tie at 2 %), tile64 is 1 % slower but more complex than plain.
  s.timer->us = {{"plain", 101.5}, {"tile64", 101.0}, {"tile4096", 100.0}};
  Kernel k(s.variants(), s.config(""));
  CHECK(k.dispatch(ShapeKey{1, 1}, s.runner(), 0) == 100);
  // Outside the margin the faster one wins.
  s.timer->us = {{"plain", 103.0}, {"tile64", 101.0}, {"tile4096", 100.0}};
  CHECK(k.dispatch(ShapeKey{2, 1}, s.runner(), 0) == 101);
  s.timer->us = {{"plain", 103.0}, {"tile64", 102.5}, {"tile4096", 100.0}};
  CHECK(k.dispatch(ShapeKey{3, 1}, s.runner(), 0) == 102);
  // The pure helper, with equal ranks: the lower index wins a tie.
  std::vector<Kernel::Variant> same_rank = {{"a", nullptr, 1, {}}, {"b", nullptr, 1, {}}};
  CHECK(Kernel::choose_fastest(same_rank, {10.1, 10.0}, 0.02) == 0);
  CHECK(Kernel::choose_fastest(same_rank, {10.1, 10.0}, 0.0) == 1);
}

TEST_CASE("the fast path survives table growth and holds many shapes") {
  Setup s;
  Kernel k(s.variants(), s.config(""));
  for (int64_t m = 1; m <= 200; ++m) {
    s.timer->us = {{"plain", m % 3 == 0 ? 1.0 : 9.0}, {"tile64", m % 3 == 1 ? 1.0 : 9.0},
                   {"tile4096", m % 3 == 2 ? 1.0 : 9.0}};
    CHECK(k.dispatch(ShapeKey{m, 7}, s.runner(), 0) == 100 + m % 3);
  }
  for (int64_t m = 1; m <= 200; ++m) {
    size_t index = 99;
    REQUIRE(k.lookup(ShapeKey{m, 7}, &index));
    CHECK(index == static_cast<size_t>(m % 3));
  }
  CHECK(k.stats().shapes_benchmarked == 200);
}

TEST_CASE("operator() benchmarks on the real arguments") {
  std::vector<int> seen;
  Kernel::Config config;
  config.env = kforge::mk::EnvOptions{};
  config.env.cache = false;
  config.bench.warmup = 0;
  config.bench.repetitions = 1;
  Kernel k({{"a", [&](int x) { seen.push_back(x); return 1; }, 0, {}},
            {"b", [&](int x) { seen.push_back(-x); return 2; }, 1, {}}}, config);
  int result = k(ShapeKey{5}, 7);
  CHECK((result == 1 || result == 2));
  CHECK(seen.size() == 3);  // a, b, then the winner
  CHECK(seen[0] == 7);
  CHECK(seen[1] == -7);
}

TEST_CASE("threads that meet the same new shape benchmark it once") {
  Setup s;
  s.timer->us = {{"plain", 3.0}, {"tile64", 2.0}, {"tile4096", 1.0}};
  Kernel::Config config = s.config("");
  config.log = nullptr;
  config.env.log = false;
  std::atomic<int> runs{0};
  std::atomic<int> wrong{0};
  std::vector<Kernel::Variant> variants = {{"plain", [&](int) { ++runs; return 100; }, 0, {}},
                                           {"tile64", [&](int) { ++runs; return 101; }, 1, {}},
                                           {"tile4096", [&](int) { ++runs; return 102; }, 2, {}}};
  // The fake timer is not thread-safe, but it is only used under the dispatcher's mutex.
  Kernel k(variants, config);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        if (k.dispatch(ShapeKey{i % 5, 1}, s.runner(), 0) != 102) ++wrong;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  CHECK(wrong == 0);
  CHECK(k.stats().shapes_benchmarked == 5);
}

TEST_CASE("invalid variant sets are rejected") {
  Kernel::Config config;
  config.env = kforge::mk::EnvOptions{};
  CHECK_THROWS_AS(Kernel({}, config), std::invalid_argument);
  CHECK_THROWS_AS(Kernel({{"a", nullptr, 0, {}}, {"a", nullptr, 1, {}}}, config), std::invalid_argument);
  CHECK_THROWS_AS(Kernel({{"has space", nullptr, 0, {}}}, config), std::invalid_argument);
  CHECK_THROWS_AS(Kernel({{"", nullptr, 0, {}}}, config), std::invalid_argument);
}

TEST_CASE("shape keys") {
  CHECK(ShapeKey{64, 4096, 4096}.to_string() == "64x4096x4096");
  CHECK(ShapeKey{}.to_string() == "scalar");
  CHECK(ShapeKey{1, 2} != ShapeKey{1, 2, 0});
  CHECK(ShapeKey{1, 2} == ShapeKey{1, 2});
  CHECK(ShapeKey{1, 2}.hash() == ShapeKey{1, 2}.hash());
  const int64_t long_dims[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  const int64_t other_dims[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 11};
  CHECK(ShapeKey(long_dims, 10) != ShapeKey(other_dims, 10));
}

namespace {

// Sets an environment variable for the lifetime of the object.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    if (value) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (had_) {
      ::setenv(name_, old_.c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::string old_;
  bool had_ = false;
};

}  // namespace

TEST_CASE("environment switches are parsed") {
  TempDir dir;
  {
    ScopedEnv force("KFORGE_MULTI_KERNEL_FORCE", "nope, tile64");
    ScopedEnv bench("KFORGE_MULTI_KERNEL_BENCHMARK", "0");
    ScopedEnv cache("KFORGE_MULTI_KERNEL_CACHE", "off");
    ScopedEnv log("KFORGE_MULTI_KERNEL_LOG", "1");
    ScopedEnv root("KFORGE_CACHE_DIR", dir.path.c_str());
    kforge::mk::EnvOptions env = kforge::mk::EnvOptions::from_environment();
    CHECK(env.force == std::vector<std::string>{"nope", "tile64"});
    CHECK_FALSE(env.benchmark);
    CHECK_FALSE(env.cache);
    CHECK(env.log);
    CHECK(env.cache_dir == dir.path);
  }
  {
    ScopedEnv force("KFORGE_MULTI_KERNEL_FORCE", nullptr);
    ScopedEnv bench("KFORGE_MULTI_KERNEL_BENCHMARK", nullptr);
    ScopedEnv cache("KFORGE_MULTI_KERNEL_CACHE", "1");
    ScopedEnv log("KFORGE_MULTI_KERNEL_LOG", "0");
    ScopedEnv root("KFORGE_CACHE_DIR", nullptr);
    ScopedEnv xdg("XDG_CACHE_HOME", "/x/cache");
    kforge::mk::EnvOptions env = kforge::mk::EnvOptions::from_environment();
    CHECK(env.force.empty());
    CHECK(env.benchmark);
    CHECK(env.cache);
    CHECK_FALSE(env.log);
    CHECK(env.cache_dir == "/x/cache/kforge");
    ScopedEnv no_xdg("XDG_CACHE_HOME", nullptr);
    ScopedEnv home("HOME", "/home/someone");
    CHECK(kforge::mk::cache_root() == "/home/someone/.cache/kforge");
  }
}

TEST_CASE("KFORGE_MULTI_KERNEL_FORCE picks a variant by name for every shape") {
  TempDir dir;
  Setup s;
  Kernel::Config config = s.config(dir.path);
  config.env.force = {"missing", "tile4096"};
  s.timer->us = {{"plain", 1.0}, {"tile64", 1.0}, {"tile4096", 99.0}};
  Kernel k(s.variants(), config);
  CHECK(k.dispatch(ShapeKey{64, 1}, s.runner(), 0) == 102);
  CHECK(k.dispatch(ShapeKey{65, 1}, s.runner(), 0) == 102);
  CHECK(s.timer->measured == 0);
  CHECK(TempDir::list(dir.path).empty());  // nothing cached
  REQUIRE(s.logs.size() == 1);
  CHECK(s.logs[0] == "kforge: multi-kernel test_site * -> tile4096 (forced)");
  kforge::mk::Pick pick;
  REQUIRE(k.pick_for(ShapeKey{7, 7}, &pick));
  CHECK(pick.source == PickSource::kForced);

  Setup t;
  Kernel::Config unknown = t.config("");
  unknown.env.force = {"nothing_like_it"};
  t.timer->us = {{"plain", 9.0}, {"tile64", 1.0}, {"tile4096", 9.0}};
  Kernel u(t.variants(), unknown);
  REQUIRE(t.warnings.size() == 1);
  CHECK(t.warnings[0].find("kforge: warning: KFORGE_MULTI_KERNEL_FORCE names no variant of 'test_site'") == 0);
  CHECK(u.dispatch(ShapeKey{64, 1}, t.runner(), 0) == 101);
}

TEST_CASE("with benchmarking off the nearest hint wins") {
  TempDir dir;
  Setup s;
  Kernel::Config config = s.config(dir.path);
  config.env.benchmark = false;
  Kernel k(s.variants(), config);
  CHECK(k.dispatch(ShapeKey{100, 3}, s.runner(), 0) == 101);   // |log2 100 - 6| < |log2 100 - 12|
  CHECK(k.dispatch(ShapeKey{1000, 3}, s.runner(), 0) == 102);  // 2.03 from 4096 vs 3.97 from 64
  CHECK(k.dispatch(ShapeKey{1, 3}, s.runner(), 0) == 101);
  CHECK(s.timer->measured == 0);
  CHECK(TempDir::list(dir.path).empty());  // heuristic picks are not written
  kforge::mk::Pick pick;
  REQUIRE(k.pick_for(ShapeKey{100, 3}, &pick));
  CHECK(pick.source == PickSource::kNearestHint);
  // Equal distance: the lower rank. No variant with a hint: the simplest.
  std::vector<Kernel::Variant> tied = {{"b", nullptr, 2, {16}}, {"a", nullptr, 1, {64}}};
  CHECK(Kernel::nearest_hint(tied, ShapeKey{32}) == 1);
  std::vector<Kernel::Variant> unhinted = {{"b", nullptr, 2, {}}, {"a", nullptr, 1, {}}};
  CHECK(Kernel::nearest_hint(unhinted, ShapeKey{32}) == 1);
}

TEST_CASE("with the cache off nothing touches the disk") {
  TempDir dir;
  Setup s;
  Kernel::Config config = s.config(dir.path);
  config.env.cache = false;
  s.timer->us = {{"plain", 5.0}, {"tile64", 1.0}, {"tile4096", 5.0}};
  Kernel k(s.variants(), config);
  CHECK(k.dispatch(ShapeKey{64, 1}, s.runner(), 0) == 101);
  CHECK(k.cache_path(ShapeKey{64, 1}).empty());
  CHECK(TempDir::list(dir.path).empty());
  CHECK(k.stats().disk_writes == 0);
}

TEST_CASE("a variant that cannot run a shape is never benchmarked, picked, forced or loaded for it") {
  TempDir dir;
  Setup s;
  // tile64 holds at most 128 columns (like a row kernel that keeps the row in registers).
  auto variants_with_capacity = [](Setup& setup) {
    std::vector<Kernel::Variant> v = setup.variants();
    v[1].applies = [](const ShapeKey& key) { return key.dims[1] <= 128; };
    return v;
  };
  s.timer->us = {{"plain", 9.0}, {"tile64", 1.0}, {"tile4096", 5.0}};
  Kernel k(variants_with_capacity(s), s.config(dir.path));
  CHECK(k.dispatch(ShapeKey{64, 128}, s.runner(), 0) == 101);  // fits: the fastest wins
  s.ran.clear();
  CHECK(k.dispatch(ShapeKey{64, 129}, s.runner(), 0) == 102);  // too long: tile64 is not even run
  CHECK(std::count(s.ran.begin(), s.ran.end(), "tile64") == 0);
  kforge::mk::Pick pick;
  REQUIRE(k.pick_for(ShapeKey{64, 129}, &pick));
  CHECK(std::isinf(pick.median_us[1]));
  CHECK_FALSE(k.can_run(1, ShapeKey{64, 129}));
  CHECK(k.can_run(0, ShapeKey{64, 129}));

  SECTION("the cache entry records it as +inf and loads back") {
    Setup t;
    Kernel k2(variants_with_capacity(t), t.config(dir.path));
    CHECK(k2.dispatch(ShapeKey{64, 129}, t.runner(), 0) == 102);
    CHECK(t.timer->measured == 0);
    CHECK(t.warnings.empty());
  }
  SECTION("an entry that picks a variant that cannot run the shape is ignored") {
    const std::string path = k.cache_path(ShapeKey{64, 129});
    std::string text = mk_test::read_text(path);
    text.replace(text.find("pick tile4096"), 13, "pick tile64");
    mk_test::write_text(path, text);
    Setup t;
    t.timer->us = s.timer->us;
    Kernel k2(variants_with_capacity(t), t.config(dir.path));
    CHECK(k2.dispatch(ShapeKey{64, 129}, t.runner(), 0) == 102);
    REQUIRE(t.warnings.size() == 1);
    CHECK(t.warnings[0].find("variant 'tile64' cannot run this shape") != std::string::npos);
  }
  SECTION("forcing it applies where it can run and chooses as usual elsewhere, with a warning") {
    Setup t;
    Kernel::Config config = t.config("");
    config.env.force = {"tile64"};
    t.timer->us = {{"plain", 9.0}, {"tile64", 1.0}, {"tile4096", 5.0}};
    Kernel k2(variants_with_capacity(t), config);
    CHECK(k2.dispatch(ShapeKey{8, 100}, t.runner(), 0) == 101);
    CHECK(t.timer->measured == 0);
    CHECK(k2.dispatch(ShapeKey{8, 1000}, t.runner(), 0) == 102);
    REQUIRE(t.warnings.size() == 1);
    CHECK(t.warnings[0] ==
          "kforge: warning: KFORGE_MULTI_KERNEL_FORCE: variant 'tile64' of 'test_site' cannot run shape 8x1000; "
          "choosing as usual for it");
    CHECK(k2.dispatch(ShapeKey{8, 1000}, t.runner(), 0) == 102);  // remembered, no second warning
    CHECK(t.warnings.size() == 1);
  }
  SECTION("nearest hint skips it, and no benchmark falls back to what can run") {
    std::vector<Kernel::Variant> v = variants_with_capacity(s);
    CHECK(Kernel::nearest_hint(v, ShapeKey{64, 1000}) == 2);
    CHECK(Kernel::nearest_hint(v, ShapeKey{64, 100}) == 1);
    v[2].applies = [](const ShapeKey&) { return false; };
    CHECK(Kernel::nearest_hint(v, ShapeKey{64, 1000}) == 0);  // no hinted variant runs it: the simplest
  }
}
