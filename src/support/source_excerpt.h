// The source line printed under a diagnostic, with its caret. Paddle writes inference.json on one line
// of hundreds of KB, so a line wider than the terminal is shown as a window around the column, with
// "..." where it was cut.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kforge {

/// The most columns a printed source line takes, counting its leading space and any "..." marks.
inline constexpr size_t kSourceExcerptWidth = 120;

struct SourceExcerpt {
  std::string text;    // the line, or a window of it with "..." where cut
  std::string indent;  // what goes before the '^': a space per character, a tab per tab
};

/// The excerpt of `line` for a caret at 1-based byte column `col` (clamped to just past the end), at
/// most `width` columns wide. A line that fits is kept whole; a longer one is cut at UTF-8 character
/// boundaries into a window around the caret. Widths count characters (code points), a tab as one.
SourceExcerpt source_excerpt(std::string_view line, uint32_t col, size_t width);

}  // namespace kforge
