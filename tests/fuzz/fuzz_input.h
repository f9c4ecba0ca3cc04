// What every front-end fuzz target shares: the fuzzer's bytes registered as a source buffer, diagnostics
// collected in memory, and the promise the targets check on top of "no crash, no hang, no sanitizer report":
// every error a front end reports about its input has a location (`file:line:col`), never "kforge: error:".
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <utility>

#include "support/diagnostics.h"
#include "support/source_manager.h"

namespace kforge::fuzz {

class FuzzInput {
 public:
  FuzzInput(const uint8_t* data, size_t size, std::string display_path) : diags_(sources_, printed_) {
    file_ = sources_.add_buffer(std::move(display_path), std::string(reinterpret_cast<const char*>(data), size));
  }
  /// Starts from `prelude`'s buffers (shared, not copied), so that they have the same file ids in every run: a
  /// model built once from them (an op set) keeps locations that every run's SourceManager resolves.
  FuzzInput(const uint8_t* data, size_t size, std::string display_path, const SourceManager& prelude)
      : sources_(prelude), diags_(sources_, printed_) {
    file_ = sources_.add_buffer(std::move(display_path), std::string(reinterpret_cast<const char*>(data), size));
  }

  SourceManager& sources() { return sources_; }
  DiagnosticEngine& diags() { return diags_; }
  uint32_t file() const { return file_; }
  std::string_view text() const { return sources_.contents(file_); }

  /// Aborts (a finding) when an error was reported without a location: hostile input must be answered with a
  /// located diagnostic. Call after the front end returned.
  void require_located_errors() const {
    const std::string printed = printed_.str();
    const bool unlocated = printed.rfind("kforge: error:", 0) == 0 || printed.find("\nkforge: error:") != std::string::npos;
    if (unlocated) {
      std::fprintf(stderr, "unlocated error diagnostic:\n%s\n", printed.c_str());
      std::abort();
    }
  }

 private:
  SourceManager sources_;
  std::ostringstream printed_;
  DiagnosticEngine diags_;
  uint32_t file_ = 0;
};

}  // namespace kforge::fuzz
