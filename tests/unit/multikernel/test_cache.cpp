// The disk cache of templates/runtime/kforge_multikernel.h: format, a second instance (as a second process
// would), corrupt / truncated / foreign entries, and concurrent writers (forked processes).
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "mk_test_util.h"

using kforge::mk::PickSource;
using kforge::mk::ShapeKey;
using mk_test::Kernel;
using mk_test::read_text;
using mk_test::Setup;
using mk_test::TempDir;
using mk_test::write_text;

namespace {

// Benchmarks shape {64, 256} into `dir` with tile64 the winner; returns the entry's path.
std::string seed_entry(const std::string& dir) {
  Setup s;
  s.timer->us = {{"plain", 40.0}, {"tile64", 10.5}, {"tile4096", 20.25}};
  Kernel k(s.variants(), s.config(dir));
  REQUIRE(k.dispatch(ShapeKey{64, 256}, s.runner(), 0) == 101);
  REQUIRE(k.stats().disk_writes == 1);
  return k.cache_path(ShapeKey{64, 256});
}

}  // namespace

TEST_CASE("a pick is written as one small text file with the variant's name and the timings") {
  TempDir dir;
  std::string path = seed_entry(dir.path);
  CHECK(path.find(dir.path + "/multi-kernel/00000000001234ab") == std::string::npos);  // full 16-digit hash
  CHECK(path.find(dir.path + "/multi-kernel/000000001234abcd-") == 0);
  CHECK(path.substr(path.size() - 12) == "-64x256.pick");
  CHECK(TempDir::list(dir.path + "/multi-kernel").size() == 1);  // no temp file left behind
  CHECK(read_text(path) ==
        "kforge-multi-kernel-pick 1\n"
        "set 000000001234abcd\n"
        "site test_site\n"
        "device fake-device\n"
        "arch fake-arch\n"
        "runtime cpu\n"
        "shape 64x256\n"
        "pick tile64\n"
        "time plain 40.000\n"
        "time tile64 10.500\n"
        "time tile4096 20.250\n"
        "end\n");
}

TEST_CASE("a second dispatcher loads the pick from disk and benchmarks nothing") {
  TempDir dir;
  std::string path = seed_entry(dir.path);
  Setup s;
  s.timer->us = {{"plain", 1.0}, {"tile64", 99.0}, {"tile4096", 99.0}};  // would pick plain if it benchmarked
  Kernel k(s.variants(), s.config(dir.path));
  CHECK(k.dispatch(ShapeKey{64, 256}, s.runner(), 0) == 101);
  CHECK(s.timer->measured == 0);
  CHECK(s.ran == std::vector<std::string>{"tile64"});
  CHECK(k.stats().shapes_benchmarked == 0);
  CHECK(k.stats().disk_hits == 1);
  CHECK(s.warnings.empty());
  kforge::mk::Pick pick;
  REQUIRE(k.pick_for(ShapeKey{64, 256}, &pick));
  CHECK(pick.source == PickSource::kDiskCache);
  CHECK(pick.median_us == std::vector<double>{40.0, 10.5, 20.25});
  REQUIRE(s.logs.size() == 1);
  CHECK(s.logs[0].find("-> tile64 (from cache)") != std::string::npos);
  // The pick is by name: a set listing the variants in another order still finds it.
  Setup r;
  Kernel::Config config = r.config(dir.path);
  std::vector<Kernel::Variant> reordered = r.variants();
  std::swap(reordered[0], reordered[2]);
  Kernel k2(reordered, config);
  CHECK(k2.dispatch(ShapeKey{64, 256}, r.runner(), 0) == 101);
  CHECK(r.timer->measured == 0);
  // Another device does not share it (another file name), so it benchmarks.
  Setup d;
  d.timer->us = {{"plain", 1.0}, {"tile64", 99.0}, {"tile4096", 99.0}};
  Kernel::Config other = d.config(dir.path);
  other.device.arch = "other-arch";
  Kernel k3(d.variants(), other);
  CHECK(k3.cache_path(ShapeKey{64, 256}) != path);
  CHECK(k3.dispatch(ShapeKey{64, 256}, d.runner(), 0) == 100);
  CHECK(d.timer->measured == 9);
}

TEST_CASE("corrupt, truncated and foreign entries are ignored with one warning and benchmarked again") {
  const std::string good =
      "kforge-multi-kernel-pick 1\nset 000000001234abcd\nsite test_site\ndevice fake-device\narch fake-arch\n"
      "runtime cpu\nshape 64x256\npick tile64\ntime plain 40.000\ntime tile64 10.500\ntime tile4096 20.250\nend\n";
  auto replace = [&](const std::string& from, const std::string& to) {
    std::string text = good;
    text.replace(text.find(from), from.size(), to);
    return text;
  };
  struct Case {
    const char* what;
    std::string text;
    const char* reason;
  };
  std::vector<Case> cases = {
      {"garbage", "\x01\x02not a cache file at all\n", "not a version 1 entry"},
      {"empty", "", "incomplete"},
      {"truncated at a line end", good.substr(0, good.size() - 4), "incomplete"},
      {"truncated mid-line", good.substr(0, good.size() - 20), "bad time on line 11"},
      {"truncated before the pick", good.substr(0, 60), "incomplete"},
      {"wrong version", replace("pick 1\n", "pick 2\n"), "not a version 1 entry"},
      {"wrong set hash", replace("set 000000001234abcd", "set 000000001234abce"), "another variant set"},
      {"unknown variant", replace("pick tile64", "pick tile128"), "unknown variant 'tile128'"},
      {"another device", replace("device fake-device", "device gpu"), "another device"},
      {"another shape", replace("shape 64x256", "shape 64x257"), "another shape"},
      {"bad time", replace("time plain 40.000", "time plain forty"), "bad time"},
      {"unknown line", replace("end\n", "bogus\nend\n"), "unexpected line"},
      {"text after end", good + "pick plain\n", "text after 'end'"},
  };
  for (const Case& c : cases) {
    SECTION(c.what) {
      TempDir dir;
      std::string path = seed_entry(dir.path);
      write_text(path, c.text);
      Setup s;
      s.timer->us = {{"plain", 1.0}, {"tile64", 99.0}, {"tile4096", 99.0}};
      Kernel k(s.variants(), s.config(dir.path));
      CHECK(k.dispatch(ShapeKey{64, 256}, s.runner(), 0) == 100);  // benchmarked again: plain wins now
      CHECK(s.timer->measured == 9);
      REQUIRE(s.warnings.size() == 1);
      CHECK(s.warnings[0].find("kforge: warning: ignoring multi-kernel cache entry '" + path + "': ") == 0);
      CHECK(s.warnings[0].find(c.reason) != std::string::npos);
      CHECK(k.stats().ignored_entries == 1);
      // Rewritten as a valid entry: the next dispatcher loads it silently.
      CHECK(read_text(path).find("pick plain\n") != std::string::npos);
      Setup t;
      Kernel k2(t.variants(), t.config(dir.path));
      CHECK(k2.dispatch(ShapeKey{64, 256}, t.runner(), 0) == 100);
      CHECK(t.timer->measured == 0);
      CHECK(t.warnings.empty());
    }
  }
}

TEST_CASE("an entry that is a FIFO is not opened (that would wait for a writer): one warning, benchmarked again") {
  TempDir dir;
  std::string path = seed_entry(dir.path);
  REQUIRE(::unlink(path.c_str()) == 0);
  REQUIRE(::mkfifo(path.c_str(), 0600) == 0);
  Setup s;
  s.timer->us = {{"plain", 1.0}, {"tile64", 99.0}, {"tile4096", 99.0}};
  Kernel k(s.variants(), s.config(dir.path));
  CHECK(k.dispatch(ShapeKey{64, 256}, s.runner(), 0) == 100);
  REQUIRE(s.warnings.size() == 1);
  CHECK(s.warnings[0] == "kforge: warning: ignoring multi-kernel cache entry '" + path +
                             "': it is not a regular file; benchmarking again");
  CHECK(read_text(path).find("pick plain\n") != std::string::npos);  // replaced by a complete entry
}

TEST_CASE("an unwritable cache directory warns and keeps the pick in memory") {
  TempDir dir;
  write_text(dir.path + "/multi-kernel", "a file where the directory should be");
  Setup s;
  s.timer->us = {{"plain", 9.0}, {"tile64", 1.0}, {"tile4096", 9.0}};
  Kernel k(s.variants(), s.config(dir.path));
  CHECK(k.dispatch(ShapeKey{8, 8}, s.runner(), 0) == 101);
  REQUIRE(s.warnings.size() == 1);
  CHECK(s.warnings[0].find("kforge: warning: cannot write multi-kernel cache entry") == 0);
  CHECK(k.dispatch(ShapeKey{8, 8}, s.runner(), 0) == 101);
  CHECK(s.timer->measured == 9);
}

TEST_CASE("concurrent processes dispatching the same new shape leave one well-formed entry") {
  TempDir dir;
  constexpr int kProcesses = 6;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      // Child: a real clock, so the processes race for real; every result must be a valid variant's.
      int status = 0;
      {
        std::vector<std::string> warnings;
        Kernel::Config config;
        config.name = "test_site";
        config.variant_set_hash = 0x1234abcdull;
        config.device = {"fake-device", "fake-arch", "cpu"};
        config.env = kforge::mk::EnvOptions{};
        config.env.cache_dir = dir.path;
        config.bench.repetitions = 3;
        config.warn = [&](const std::string& w) { warnings.push_back(w); };
        volatile int sink = 0;
        auto work = [&](int n) {
          for (int i = 0; i < n * 2000; ++i) sink = sink + i;
          return 100 + n;
        };
        Kernel k({{"plain", [&](int) { return work(0); }, 0, {}},
                  {"tile64", [&](int) { return work(1); }, 1, {64, 0}},
                  {"tile4096", [&](int) { return work(2); }, 2, {4096, 0}}},
                 config);
        for (int round = 0; round < 20; ++round) {
          int r = k(ShapeKey{64 + round % 2, 256}, 0);
          if (r < 100 || r > 102) status = 1;
        }
        if (!warnings.empty()) status = 2;
      }
      ::_exit(status);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
  std::vector<std::string> files = TempDir::list(dir.path + "/multi-kernel");
  CHECK(files.size() == 2);  // one per shape, no temp files
  for (const std::string& name : files) CHECK(name.find(".tmp") == std::string::npos);
  // Each is complete and valid: a fresh dispatcher loads both without benchmarking or warnings.
  Setup s;
  Kernel k(s.variants(), s.config(dir.path));
  k.dispatch(ShapeKey{64, 256}, s.runner(), 0);
  k.dispatch(ShapeKey{65, 256}, s.runner(), 0);
  CHECK(s.timer->measured == 0);
  CHECK(s.warnings.empty());
  CHECK(k.stats().disk_hits == 2);
}
