#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <sstream>
#include <thread>

#include "output/committer.h"
#include "temp_dir.h"

using namespace kforge;
using kforge::test::read_text;
using kforge::test::TempDir;
using kforge::test::write_text;
namespace fs = std::filesystem;

namespace {

struct Harness {
  SourceManager sources;
  std::ostringstream diag_text;
  DiagnosticEngine diags{sources, diag_text};
  std::ostringstream stdout_text;
};

}  // namespace

TEST_CASE("commit creates directories and writes new files") {
  TempDir tmp;
  Harness h;
  OutputSet set;
  set.add(tmp / "a/b/c.h", "int c;\n");
  set.add(tmp / "top.txt", "top\n");
  CommitStats stats;
  REQUIRE(commit_outputs(set, h.diags, h.stdout_text, &stats));
  CHECK(stats.written == 2);
  CHECK(stats.unchanged == 0);
  CHECK(read_text(tmp / "a/b/c.h") == "int c;\n");
  CHECK(read_text(tmp / "top.txt") == "top\n");
  CHECK(h.diag_text.str().empty());
  // No temp file is left behind.
  size_t entries = 0;
  for (auto& e : fs::recursive_directory_iterator(tmp.path())) entries += e.is_regular_file() ? 1 : 0;
  CHECK(entries == 2);
}

TEST_CASE("commit leaves unchanged files and their mtime alone") {
  TempDir tmp;
  write_text(tmp / "same.h", "same\n");
  write_text(tmp / "diff.h", "old\n");
  const auto old_time = fs::last_write_time(tmp / "same.h") - std::chrono::hours(1);
  fs::last_write_time(tmp / "same.h", old_time);
  fs::last_write_time(tmp / "diff.h", old_time);
  Harness h;
  OutputSet set;
  set.add(tmp / "same.h", "same\n");
  set.add(tmp / "diff.h", "new\n");
  CommitStats stats;
  REQUIRE(commit_outputs(set, h.diags, h.stdout_text, &stats));
  CHECK(stats.written == 1);
  CHECK(stats.unchanged == 1);
  CHECK(fs::last_write_time(tmp / "same.h") == old_time);
  CHECK(fs::last_write_time(tmp / "diff.h") != old_time);
  CHECK(read_text(tmp / "diff.h") == "new\n");
}

TEST_CASE("a failure while staging writes nothing and removes created directories") {
  TempDir tmp;
  fs::create_directories(tmp / "is_a_dir");
  write_text(tmp / "existing.h", "keep\n");
  Harness h;
  OutputSet set;
  set.add(tmp / "existing.h", "changed\n");
  set.add(tmp / "fresh/sub/new.h", "new\n");
  set.add(tmp / "is_a_dir", "cannot be written\n");
  CHECK_FALSE(commit_outputs(set, h.diags, h.stdout_text));
  CHECK(read_text(tmp / "existing.h") == "keep\n");
  CHECK_FALSE(fs::exists(tmp / "fresh"));
  CHECK(h.diag_text.str().find((tmp / "is_a_dir") + ": error: cannot write the output: it is a directory") !=
        std::string::npos);
  size_t entries = 0;
  for (auto& e : fs::recursive_directory_iterator(tmp.path())) entries += e.is_regular_file() ? 1 : 0;
  CHECK(entries == 1);  // only existing.h: no temp files left
}

TEST_CASE("a parent that is a file is an error, not a crash") {
  TempDir tmp;
  write_text(tmp / "file", "x");
  Harness h;
  OutputSet set;
  set.add(tmp / "file/out.h", "x");
  CHECK_FALSE(commit_outputs(set, h.diags, h.stdout_text));
  CHECK(h.diags.error_count() == 1);
  CHECK(read_text(tmp / "file") == "x");
}

TEST_CASE("stdout output goes to the stream and is never a file") {
  TempDir tmp;
  Harness h;
  OutputSet set;
  set.add("-", "to stdout\n");
  REQUIRE(commit_outputs(set, h.diags, h.stdout_text));
  CHECK(h.stdout_text.str() == "to stdout\n");
  CHECK_FALSE(fs::exists("-"));
}

TEST_CASE("replacing a file keeps its permissions") {
  TempDir tmp;
  write_text(tmp / "run.sh", "old\n");
  fs::permissions(tmp / "run.sh", fs::perms::owner_all | fs::perms::group_read);
  Harness h;
  OutputSet set;
  set.add(tmp / "run.sh", "new\n");
  REQUIRE(commit_outputs(set, h.diags, h.stdout_text));
  CHECK((fs::status(tmp / "run.sh").permissions() & fs::perms::owner_exec) != fs::perms::none);
}

TEST_CASE("devices such as /dev/null are written in place, never replaced") {
  Harness h;
  OutputSet set;
  set.add("/dev/null", "discarded\n");
  CommitStats stats;
  REQUIRE(commit_outputs(set, h.diags, h.stdout_text, &stats));
  CHECK(stats.written == 1);
  CHECK(fs::is_character_file("/dev/null"));
  CHECK(h.diag_text.str().empty());
}
