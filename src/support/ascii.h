// ASCII character classes for the hand-written lexers (templates, PIR text, op YAML mini-languages, scalar
// expressions, C++ spellings): one definition each, independent of the C locale (std::isalpha and friends are not).
#pragma once

namespace kforge::ascii {

inline bool is_digit(char c) { return c >= '0' && c <= '9'; }
inline bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
inline bool is_ident_start(char c) { return is_alpha(c) || c == '_'; }
inline bool is_ident_char(char c) { return is_ident_start(c) || is_digit(c); }
/// Space, tab, newline, carriage return.
inline bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

}  // namespace kforge::ascii
