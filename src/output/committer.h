// Commits an OutputSet to disk: write-if-changed, atomic per file, all-or-nothing as far as a file
// system allows.
//
// Phase 1 compares every output with the bytes on disk, creates missing directories and writes each
// changed file to a temp file beside its target. If anything fails there, the temp files and the
// directories created are removed and nothing has changed. Phase 2 renames the temp files over their
// targets (rename(2) is atomic; a failure here is reported but can leave earlier renames done).
// Files whose bytes are unchanged are not touched at all, so their mtime stays and build systems
// that restat outputs (ninja `restat`, CMake, Meson) skip the work that depends on them.
#pragma once

#include <cstddef>
#include <iosfwd>

#include "output/output_set.h"
#include "support/diagnostics.h"

namespace kforge {

struct CommitStats {
  size_t written = 0;    // files created or replaced
  size_t unchanged = 0;  // files already holding the right bytes
};

/// Writes `outputs`; the path "-" goes to `stdout_stream` (always, after the files). Reports each
/// failure to `diags` ("path: error: cannot write the output: reason") and returns false if anything failed.
bool commit_outputs(const OutputSet& outputs, DiagnosticEngine& diags, std::ostream& stdout_stream,
                    CommitStats* stats = nullptr);

}  // namespace kforge
