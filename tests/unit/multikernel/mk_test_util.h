// Helpers of the multi-kernel dispatcher tests: a fake timer with per-variant timings, a temporary cache
// directory per test (never the user's), and a tiny dispatcher type.
#pragma once

#include <dirent.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "kforge_multikernel.h"

namespace mk_test {

using Kernel = kforge::mk::MultiKernel<int(int)>;  // a variant returns its own id, so a test sees who ran

// Returns the timing the test assigned to whichever variant the runner last started.
class FakeTimer : public kforge::mk::Timer {
 public:
  std::map<std::string, double> us;
  std::string current;
  int measured = 0;
  double measure_us(const std::function<void()>& body) override {
    body();
    ++measured;
    return us.at(current);
  }
};

// A fresh directory under $TMPDIR, removed (with its contents, two levels deep) at the end of the test.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/kforge-mk-test-XXXXXX";
    std::vector<char> buffer(pattern.begin(), pattern.end());
    buffer.push_back('\0');
    path = mkdtemp(buffer.data()) ? buffer.data() : "";
  }
  ~TempDir() { remove_tree(path); }
  std::string path;

  static std::vector<std::string> list(const std::string& dir) {
    std::vector<std::string> names;
    if (DIR* d = opendir(dir.c_str())) {
      while (dirent* e = readdir(d)) {
        std::string name = e->d_name;
        if (name != "." && name != "..") names.push_back(name);
      }
      closedir(d);
    }
    return names;
  }

 private:
  static void remove_tree(const std::string& dir) {
    if (dir.empty()) return;
    for (const std::string& name : list(dir)) {
      std::string child = dir + "/" + name;
      if (::unlink(child.c_str()) != 0) remove_tree(child);
    }
    ::rmdir(dir.c_str());
  }
};

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

// Three variants: "plain" (rank 0), "tile64" (rank 1, hint {64, 0}), "tile4096" (rank 2, hint {4096, 0});
// each returns its index + 100 and records that it ran.
struct Setup {
  std::shared_ptr<FakeTimer> timer = std::make_shared<FakeTimer>();
  std::vector<std::string> warnings;
  std::vector<std::string> logs;
  std::vector<std::string> ran;

  Kernel::Config config(const std::string& cache_dir) {
    Kernel::Config c;
    c.name = "test_site";
    c.variant_set_hash = 0x1234abcdull;
    c.device = {"fake-device", "fake-arch", "cpu"};
    c.timer = timer;
    c.bench.warmup = 1;
    c.bench.repetitions = 3;
    c.bench.tie_margin = 0.02;
    c.env = kforge::mk::EnvOptions{};
    c.env.cache_dir = cache_dir;
    c.env.cache = !cache_dir.empty();
    c.env.log = true;
    c.warn = [this](const std::string& line) { warnings.push_back(line); };
    c.log = [this](const std::string& line) { logs.push_back(line); };
    return c;
  }
  std::vector<Kernel::Variant> variants() {
    auto make = [this](const char* name, int id) {
      return [this, name, id](int) {
        ran.push_back(name);
        return id;
      };
    };
    return {{"plain", make("plain", 100), 0, {}},
            {"tile64", make("tile64", 101), 1, {64, 0}},
            {"tile4096", make("tile4096", 102), 2, {4096, 0}}};
  }
  // The runner of Kernel::dispatch: tells the fake timer which variant runs.
  auto runner() {
    return [this](const Kernel::Variant& v) {
      timer->current = v.name;
      static_cast<void>(v.fn(0));
    };
  }
};

}  // namespace mk_test
