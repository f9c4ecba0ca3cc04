// A read position inside a LocatedText, shared by the hand-written mini-language parsers.
#pragma once

#include <string>
#include <string_view>

#include "opdef/located_text.h"
#include "support/ascii.h"

namespace kforge::opdef {

using ascii::is_digit;
using ascii::is_ident_char;
using ascii::is_ident_start;
using ascii::is_space;

class TextCursor {
 public:
  explicit TextCursor(const LocatedText& text, size_t begin = 0, size_t end = std::string_view::npos)
      : text_(text), pos_(begin), end_(end > text.size() ? text.size() : end) {}

  const LocatedText& text() const { return text_; }
  size_t pos() const { return pos_; }
  void set_pos(size_t pos) { pos_ = pos; }
  size_t end() const { return end_; }
  bool at_end() const { return pos_ >= end_; }
  /// The character `ahead` places after the position, or '\0' past the end.
  char peek(size_t ahead = 0) const { return pos_ + ahead < end_ ? text_[pos_ + ahead] : '\0'; }
  void advance(size_t n = 1) { pos_ = pos_ + n > end_ ? end_ : pos_ + n; }

  void skip_spaces() {
    while (!at_end() && is_space(text_[pos_])) ++pos_;
  }
  /// Skips spaces, then consumes `s` if it comes next.
  bool consume(std::string_view s) {
    skip_spaces();
    if (text_.text().substr(pos_, s.size()) != s || pos_ + s.size() > end_) return false;
    pos_ += s.size();
    return true;
  }
  /// Skips spaces, then reads [A-Za-z_][A-Za-z0-9_]*; empty if none.
  std::string_view identifier() {
    skip_spaces();
    const size_t start = pos_;
    if (!at_end() && is_ident_start(text_[pos_])) {
      while (!at_end() && is_ident_char(text_[pos_])) ++pos_;
    }
    return slice(start, pos_);
  }

  std::string_view slice(size_t begin, size_t end) const { return text_.text().substr(begin, end - begin); }
  SourceLoc loc() const { return text_.loc(pos_); }
  SourceLoc loc(size_t index) const { return text_.loc(index); }

  /// "'x'" for the next character, or "end of value": for "expected X, found Y" messages.
  std::string describe_next() const {
    if (at_end()) return "end of value";
    return std::string("'") + text_[pos_] + "'";
  }

 private:
  const LocatedText& text_;
  size_t pos_;
  size_t end_;
};

/// Trims spaces from both ends of [begin, end) of `text`.
inline void trim_range(std::string_view text, size_t& begin, size_t& end) {
  while (begin < end && is_space(text[begin])) ++begin;
  while (end > begin && is_space(text[end - 1])) --end;
}

}  // namespace kforge::opdef
