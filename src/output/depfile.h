// Make-syntax dependency files (--depfile), as ninja (`deps = gcc`), Meson (custom_target depfile:)
// and CMake (add_custom_command DEPFILE) read them.
//
//   out/first.h out/second.cc: ops.yaml <backslash-newline>
//     templates/ops/api.h.j2 <backslash-newline>
//     templates/common.j2
//
// Targets are spelled exactly as the user passed them (the build system matches them textually),
// the first output first; dependencies are every input read and every template actually loaded,
// each once, in the order first read.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kforge {

/// Escapes a path for a Make rule: ' ' -> "\ ", '$' -> "$$", '#' -> "\#".
std::string escape_make_path(std::string_view path);

/// The depfile text: one rule, targets then deps (duplicates dropped, order kept), LF-terminated.
std::string format_depfile(const std::vector<std::string>& targets, const std::vector<std::string>& deps);

}  // namespace kforge
