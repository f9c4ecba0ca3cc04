#include "output/committer.h"

#include <algorithm>
#include <filesystem>
#include <ostream>
#include <string>
#include <system_error>
#include <vector>

#include "output/file_io.h"

namespace kforge {

namespace fs = std::filesystem;

namespace {

struct PendingWrite {
  const OutputFile* file;
  std::string temp_path;  // empty: written in place (a device or pipe such as /dev/null)
};

/// Directories on the way to `dir` that do not exist yet, outermost first.
std::vector<fs::path> missing_directories(const fs::path& dir) {
  std::vector<fs::path> missing;
  std::error_code ec;
  for (fs::path p = dir; !p.empty() && !fs::exists(p, ec); p = p.parent_path()) {
    missing.push_back(p);
    if (p == p.parent_path()) break;
  }
  std::reverse(missing.begin(), missing.end());
  return missing;
}

class Transaction {
 public:
  explicit Transaction(DiagnosticEngine& diags) : diags_(diags) {}

  /// Undoes phase 1: removes temp files, then the directories it created (innermost first).
  void roll_back() {
    std::error_code ignored;
    for (const PendingWrite& w : pending_) {
      if (!w.temp_path.empty()) fs::remove(w.temp_path, ignored);
    }
    for (auto it = created_dirs_.rbegin(); it != created_dirs_.rend(); ++it) fs::remove(*it, ignored);
    pending_.clear();
    created_dirs_.clear();
  }

  bool stage(const OutputFile& file) {
    std::error_code ec;
    const fs::file_status status = fs::status(file.path, ec);
    if (fs::is_character_file(status) || fs::is_fifo(status)) {
      // -o /dev/null, -o /dev/stdout, a named pipe: written in place in phase 2. Renaming a temp
      // file over them would replace the device node itself.
      pending_.push_back({&file, {}});
      return true;
    }
    if (fs::exists(status) && !fs::is_regular_file(status)) {
      fail(file, fs::is_directory(status) ? "it is a directory" : "it is not a regular file");
      return false;
    }
    const fs::path parent = fs::path(file.path).parent_path();
    for (const fs::path& dir : missing_directories(parent)) {
      if (!fs::create_directory(dir, ec) && ec) {
        fail(file, "cannot create directory '" + dir.string() + "': " + ec.message());
        return false;
      }
      created_dirs_.push_back(dir);
    }
    if (!parent.empty() && !fs::is_directory(parent, ec)) {
      fail(file, "'" + parent.string() + "' is not a directory");
      return false;
    }
    std::string temp = temp_path_for(file.path);
    std::string error;
    if (!write_temp_file(temp, file.bytes, error)) {
      fail(file, error);
      return false;
    }
    // A regenerated file keeps the permissions of the one it replaces (e.g. an executable script).
    if (fs::exists(status)) fs::permissions(temp, status.permissions(), ec);
    pending_.push_back({&file, std::move(temp)});
    return true;
  }

  bool finish(CommitStats& stats) {
    bool ok = true;
    for (const PendingWrite& w : pending_) {
      std::string error;
      const bool ok_one = w.temp_path.empty() ? write_in_place(w.file->path, w.file->bytes, error)
                                              : replace_file(w.temp_path, w.file->path, error);
      if (ok_one) {
        ++stats.written;
      } else {
        fail(*w.file, error);
        ok = false;
      }
    }
    pending_.clear();
    return ok;
  }

 private:
  void fail(const OutputFile& file, const std::string& reason) {
    diags_.file_error(file.path, "cannot write the " + std::string(file.what) + ": " + reason);
  }

  DiagnosticEngine& diags_;
  std::vector<PendingWrite> pending_;
  std::vector<fs::path> created_dirs_;
};

}  // namespace

bool commit_outputs(const OutputSet& outputs, DiagnosticEngine& diags, std::ostream& stdout_stream,
                    CommitStats* stats) {
  CommitStats local;
  CommitStats& counts = stats ? *stats : local;
  Transaction txn(diags);
  for (const OutputFile& file : outputs.files()) {
    if (file.path == kStdoutPath) continue;
    const std::optional<std::string> existing = read_file_bytes(file.path);
    if (existing && *existing == file.bytes) {
      ++counts.unchanged;
      continue;
    }
    if (!txn.stage(file)) {
      txn.roll_back();
      return false;
    }
  }
  const bool ok = txn.finish(counts);
  for (const OutputFile& file : outputs.files()) {
    if (file.path == kStdoutPath) stdout_stream << file.bytes;
  }
  stdout_stream.flush();
  return ok;
}

}  // namespace kforge
