// read_input_file (support/input_file.h): regular files only, read whole up to a limit; everything else one reason,
// at once (a FIFO without a writer must not block, /dev/zero must not be read).
#include <catch2/catch.hpp>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "support/diagnostics.h"
#include "support/input_file.h"
#include "support/source_manager.h"

namespace fs = std::filesystem;
using kforge::read_input_file;

namespace {

struct TempDir {
  TempDir() : path(fs::temp_directory_path() / ("kforge-input-file-" + std::to_string(::getpid()))) {
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
  std::string operator/(const std::string& name) const { return (path / name).string(); }
  fs::path path;
};

std::string reason_for(const std::string& path, uint64_t max_bytes = kforge::kDefaultMaxInputBytes) {
  std::string reason;
  CHECK_FALSE(read_input_file(path, max_bytes, reason));
  return reason;
}

}  // namespace

TEST_CASE("input files: a regular file, or a symlink to one, is read whole") {
  TempDir tmp;
  std::ofstream(tmp / "a.yaml") << "x: 1\n";
  fs::create_symlink(tmp / "a.yaml", tmp / "link.yaml");
  for (const std::string& path : {tmp / "a.yaml", tmp / "link.yaml"}) {
    std::string reason;
    const std::optional<std::string> text = read_input_file(path, 5, reason);
    REQUIRE(text);
    CHECK(*text == "x: 1\n");
  }
  std::ofstream(tmp / "empty.yaml");
  std::string reason;
  CHECK(read_input_file(tmp / "empty.yaml", 5, reason) == std::string());
}

TEST_CASE("input files: what is not a regular file is refused before it is read") {
  TempDir tmp;
  CHECK(reason_for(tmp.path.string()) == "it is a directory");
  CHECK(reason_for("/dev/zero") == "it is not a regular file (a character device)");
  REQUIRE(::mkfifo((tmp / "fifo").c_str(), 0600) == 0);
  CHECK(reason_for(tmp / "fifo") == "it is not a regular file (a FIFO)");  // and returns: nobody writes to it
  const int sock = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string sock_path = tmp / "sock";
  if (sock >= 0 && sock_path.size() < sizeof addr.sun_path) {
    sock_path.copy(addr.sun_path, sock_path.size());
    REQUIRE(::bind(sock, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0);
    CHECK(reason_for(sock_path) == "it is not a regular file (a socket)");
  }
  if (sock >= 0) ::close(sock);
  CHECK(reason_for(tmp / "missing") == "no such file or directory");
  fs::create_symlink(tmp / "missing", tmp / "dangling");
  CHECK(reason_for(tmp / "dangling") == "no such file or directory");
}

TEST_CASE("input files: a file over the limit is refused by its size, before it is read") {
  TempDir tmp;
  std::ofstream(tmp / "six") << "123456";
  CHECK(reason_for(tmp / "six", 5) == "it is larger than 5 bytes (--max-input-bytes)");
  std::string reason;
  CHECK(read_input_file(tmp / "six", 6, reason) == std::string("123456"));
  // A sparse file of 1 GiB + 1 byte: refused by its size alone (reading it would take a second and a gigabyte).
  { std::ofstream(tmp / "big"); }
  fs::resize_file(tmp / "big", kforge::kDefaultMaxInputBytes + 1);
  CHECK(reason_for(tmp / "big") == "it is larger than 1073741824 bytes (--max-input-bytes)");
}

TEST_CASE("input files: load_input_file reports one line located at the path") {
  TempDir tmp;
  kforge::SourceManager sources;
  std::ostringstream out;
  kforge::DiagnosticEngine diags(sources, out);
  CHECK_FALSE(kforge::load_input_file(sources, diags, tmp.path.string(), "op file"));
  CHECK(out.str() == tmp.path.string() + ": error: cannot read the op file: it is a directory\n");
  CHECK(diags.error_count() == 1);
  std::ofstream(tmp / "ops.yaml") << "- op : a\n";
  sources.set_max_file_bytes(4);
  out.str("");
  CHECK_FALSE(kforge::load_input_file(sources, diags, tmp / "ops.yaml", "op file"));
  CHECK(out.str() == tmp / "ops.yaml" + ": error: cannot read the op file: it is larger than 4 bytes "
                                        "(--max-input-bytes)\n");
  sources.set_max_file_bytes(100);
  const std::optional<uint32_t> id = kforge::load_input_file(sources, diags, tmp / "ops.yaml", "op file");
  REQUIRE(id);
  CHECK(sources.contents(*id) == "- op : a\n");
}
