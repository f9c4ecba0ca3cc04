// Line-based unified diff (the `diff -u` format) for --check and for test failure messages.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kforge {

struct DiffOptions {
  size_t context = 3;                // unchanged lines shown around each change
  size_t max_lines = SIZE_MAX;       // cap on the hunk lines printed; the rest is summarised
  size_t max_edit_distance = 1000;   // beyond this many changed lines, show a whole-file replacement
};

/// The unified diff turning `old_text` into `new_text`, with "--- old_label" / "+++ new_label"
/// headers; "" when the texts are equal. A last line without a newline is followed by
/// "\ No newline at end of file", as diff(1) prints it.
std::string unified_diff(std::string_view old_text, std::string_view new_text, std::string_view old_label,
                         std::string_view new_label, const DiffOptions& options = {});

}  // namespace kforge
