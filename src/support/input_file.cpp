#include "support/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "support/diagnostics.h"
#include "support/source_manager.h"

namespace kforge {

namespace {

std::string system_error_text(int error) {
  std::string text = std::strerror(error);
  // Diagnostics are lowercase ("no such file or directory").
  if (!text.empty() && text[0] >= 'A' && text[0] <= 'Z' && (text.size() < 2 || text[1] < 'A' || text[1] > 'Z')) {
    text[0] = static_cast<char>(text[0] - 'A' + 'a');
  }
  return text;
}

std::string too_large(uint64_t max_bytes) {
  return "it is larger than " + std::to_string(max_bytes) + " bytes (--max-input-bytes)";
}

/// Why a file of this type and size cannot be read as input; "" when it can.
std::string refusal(const struct stat& st, uint64_t max_bytes) {
  if (S_ISDIR(st.st_mode)) return "it is a directory";
  if (S_ISFIFO(st.st_mode)) return "it is not a regular file (a FIFO)";
  if (S_ISSOCK(st.st_mode)) return "it is not a regular file (a socket)";
  if (S_ISCHR(st.st_mode)) return "it is not a regular file (a character device)";
  if (S_ISBLK(st.st_mode)) return "it is not a regular file (a block device)";
  if (!S_ISREG(st.st_mode)) return "it is not a regular file";
  if (st.st_size >= 0 && static_cast<uint64_t>(st.st_size) > max_bytes) return too_large(max_bytes);
  return "";
}

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

std::optional<std::string> read_input_file(const std::string& path, uint64_t max_bytes, std::string& reason) {
  // stat first, so that a device or a FIFO is never even opened (opening some devices does something).
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    reason = system_error_text(errno);
    return std::nullopt;
  }
  if (reason = refusal(st, max_bytes); !reason.empty()) return std::nullopt;
  // O_NONBLOCK: should the path have become a FIFO since the stat, open(2) returns at once rather than wait
  // for a writer, and the fstat below refuses it.
  const Fd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (fd.get() < 0) {
    reason = system_error_text(errno);
    return std::nullopt;
  }
  if (::fstat(fd.get(), &st) != 0) {
    reason = system_error_text(errno);
    return std::nullopt;
  }
  if (reason = refusal(st, max_bytes); !reason.empty()) return std::nullopt;

  // Read in one piece into a string of the file's size, then on to the end: the file may have grown (or shrunk)
  // since the fstat, and is cut off one byte past the limit.
  std::string text(static_cast<size_t>(st.st_size), '\0');
  size_t filled = 0;
  for (;;) {
    if (filled == text.size()) {
      if (text.size() > max_bytes) {
        reason = too_large(max_bytes);
        return std::nullopt;
      }
      const uint64_t grown = std::min<uint64_t>(max_bytes + 1, std::max<uint64_t>(text.size() * 2, 4096));
      text.resize(static_cast<size_t>(grown));
    }
    const ssize_t n = ::read(fd.get(), text.data() + filled, text.size() - filled);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      reason = system_error_text(errno);
      return std::nullopt;
    }
    if (n == 0) break;
    filled += static_cast<size_t>(n);
  }
  text.resize(filled);
  return text;
}

std::optional<std::string> read_input_file(const std::string& path, uint64_t max_bytes, DiagnosticEngine& diags,
                                           std::string_view what) {
  std::string reason;
  std::optional<std::string> text = read_input_file(path, max_bytes, reason);
  if (!text) diags.file_error(path, "cannot read the " + std::string(what) + ": " + reason);
  return text;
}

std::optional<uint32_t> load_input_file(SourceManager& sources, DiagnosticEngine& diags, const std::string& path,
                                        std::string_view what) {
  std::optional<std::string> text = read_input_file(path, sources.max_file_bytes(), diags, what);
  if (!text) return std::nullopt;
  return sources.add_buffer(path, std::move(*text));
}

}  // namespace kforge
