#include "support/text.h"

#include <algorithm>

namespace kforge {

size_t edit_distance(std::string_view a, std::string_view b, size_t max_distance) {
  // The distance is at least the difference of the lengths: most candidates of a "did you mean" search end here,
  // which keeps a file of many misspelt names against a large op set linear (a fuzz finding: one PIR text file of
  // unknown ops took seconds under ASan, one dynamic programme per op and name).
  const size_t length_gap = a.size() > b.size() ? a.size() - b.size() : b.size() - a.size();
  if (length_gap > max_distance) return max_distance + 1;
  // Two-row dynamic programme; rows are indexed by positions in b.
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    size_t row_min = cur[0];
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t subst = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, subst});
      row_min = std::min(row_min, cur[j]);
    }
    if (max_distance != SIZE_MAX && row_min > max_distance) return max_distance + 1;
    std::swap(prev, cur);
  }
  return max_distance != SIZE_MAX && prev[b.size()] > max_distance ? max_distance + 1 : prev[b.size()];
}

std::optional<std::string> closest_match(std::string_view name, const std::vector<std::string>& candidates) {
  const size_t limit = std::max<size_t>(1, name.size() / 3);
  std::optional<std::string> best;
  size_t best_distance = limit + 1;
  for (const std::string& c : candidates) {
    if (c == name) continue;
    const size_t d = edit_distance(name, c, limit);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best;
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

std::optional<size_t> find_non_printable_yaml_byte(std::string_view text) {
  for (size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f) return i;
  }
  return std::nullopt;
}

std::string c_string_literal(std::string_view text) {
  std::string out = "\"";
  for (const unsigned char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          const char octal[5] = {'\\', static_cast<char>('0' + (c >> 6)), static_cast<char>('0' + ((c >> 3) & 7)),
                                 static_cast<char>('0' + (c & 7)), 0};
          out += octal;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

bool is_cpp_keyword(std::string_view word) {
  static constexpr std::string_view kKeywords[] = {
      "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor", "bool", "break", "case", "catch",
      "char", "char8_t", "char16_t", "char32_t", "class", "compl", "concept", "const", "consteval", "constexpr",
      "constinit", "const_cast", "continue", "co_await", "co_return", "co_yield", "decltype", "default", "delete",
      "do", "double", "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false", "float", "for",
      "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept", "not", "not_eq",
      "nullptr", "operator", "or", "or_eq", "private", "protected", "public", "register", "reinterpret_cast",
      "requires", "return", "short", "signed", "sizeof", "static", "static_assert", "static_cast", "struct",
      "switch", "template", "this", "thread_local", "throw", "true", "try", "typedef", "typeid", "typename",
      "union", "unsigned", "using", "virtual", "void", "volatile", "wchar_t", "while", "xor", "xor_eq",
      "restrict", "_Bool", "_Complex"};
  for (std::string_view keyword : kKeywords) {
    if (word == keyword) return true;
  }
  return false;
}

}  // namespace kforge
