// The in-memory set of files a command produces.
//
// Every command renders all of its outputs into an OutputSet first and touches the disk only once the
// whole set exists (see committer.h), so an error anywhere leaves the file system untouched, and
// --check / --list-outputs / the golden tests see exactly the bytes a real run would write.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace kforge {

/// The path that stands for standard output (`-o -`).
inline constexpr std::string_view kStdoutPath = "-";

struct OutputFile {
  std::string path;   // exactly as the user or the command spelled it
  std::string bytes;  // the full contents, LF line endings
  std::string_view what = "output";  // what diagnostics call it ("depfile"); a string literal
};

/// Files in the order they were added. The order matters: the first output is the first target of
/// the depfile. Listing (--list-outputs) sorts separately.
class OutputSet {
 public:
  /// Adds a file. Returns false, and adds nothing, if a file with the same path (after lexical
  /// normalisation, so "a/./b" and "a/b" are one file) is already in the set.
  /// `what` names the file in diagnostics and must outlive the set (a string literal).
  bool add(std::string path, std::string bytes, std::string_view what = "output");

  const std::vector<OutputFile>& files() const { return files_; }
  const OutputFile* find(std::string_view path) const;
  size_t size() const { return files_.size(); }
  bool empty() const { return files_.empty(); }

  /// The paths as spelled, sorted bytewise: the --list-outputs order.
  std::vector<std::string> sorted_paths() const;

 private:
  std::vector<OutputFile> files_;
  std::vector<std::string> normalised_;  // parallel to files_
};

/// Lexically normalised form of a path used to decide whether two spellings name the same output.
std::string normalise_output_path(std::string_view path);

/// --list-outputs: one path per line, sorted, LF. Standard output ("-") is not a file and is not listed.
void print_output_list(const OutputSet& outputs, std::ostream& out);

}  // namespace kforge
