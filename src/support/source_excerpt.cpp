#include "support/source_excerpt.h"

#include <algorithm>

namespace kforge {

namespace {

bool is_utf8_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

size_t count_chars(std::string_view s) {
  return static_cast<size_t>(std::count_if(s.begin(), s.end(), [](char c) { return !is_utf8_continuation(c); }));
}

/// Byte offset reached from byte `from` by stepping over `n` characters (or to the end).
size_t skip_chars(std::string_view s, size_t from, size_t n) {
  for (; n > 0 && from < s.size(); --n) {
    ++from;
    while (from < s.size() && is_utf8_continuation(s[from])) ++from;
  }
  return from;
}

}  // namespace

SourceExcerpt source_excerpt(std::string_view line, uint32_t col, size_t width) {
  constexpr std::string_view kMark = "...";
  width = std::max(width, 2 * kMark.size() + 1);  // room for two marks and the caret's character
  // Columns count bytes; a caret on a continuation byte goes under the start of its character.
  size_t caret = std::min<size_t>(col > 0 ? col - 1 : 0, line.size());
  while (caret > 0 && caret < line.size() && is_utf8_continuation(line[caret])) --caret;
  const size_t caret_char = count_chars(line.substr(0, caret));
  const size_t chars = count_chars(line);
  const size_t needed = std::max(chars, caret_char + 1);  // a caret just past the end takes a column too

  size_t first = 0, last = chars;  // the characters shown: [first, last)
  if (needed > width) {
    // Centre the caret between two marks. A mark that would hide no more than its own width is
    // dropped, and the window reaches that end of the line instead.
    const size_t body = width - 2 * kMark.size();
    first = caret_char > body / 2 ? caret_char - body / 2 : 0;
    last = first + body;
    if (first <= kMark.size()) {
      first = 0;
      last = width - kMark.size();
    } else if (last + kMark.size() >= needed) {
      first = needed - (width - kMark.size());
      last = chars;
    }
  }

  const size_t begin = skip_chars(line, 0, first);
  const size_t end = skip_chars(line, begin, last - first);
  SourceExcerpt out;
  if (begin > 0) {
    out.text += kMark;
    out.indent.append(kMark.size(), ' ');
  }
  out.text += line.substr(begin, end - begin);
  if (end < line.size()) out.text += kMark;
  // One column per character, not per byte; tabs are kept so the caret lines up in a terminal.
  for (size_t i = begin; i < caret; ++i) {
    if (!is_utf8_continuation(line[i])) out.indent += line[i] == '\t' ? '\t' : ' ';
  }
  return out;
}

}  // namespace kforge
