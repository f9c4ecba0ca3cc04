#include "template/codegen_filters.h"

#include <fmt/format.h>

#include <string>
#include <string_view>
#include <vector>

#include "support/text.h"
#include "template/environment.h"

namespace kforge::tmpl {

namespace {

bool is_lower(char c) { return c >= 'a' && c <= 'z'; }
bool is_upper(char c) { return c >= 'A' && c <= 'Z'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_alnum(char c) { return is_lower(c) || is_upper(c) || is_digit(c); }
char to_lower(char c) { return is_upper(c) ? static_cast<char>(c + 32) : c; }
char to_upper(char c) { return is_lower(c) ? static_cast<char>(c - 32) : c; }

/// Splits an identifier-ish string into words: at every non-alphanumeric character, before an
/// uppercase letter that follows a lowercase one ("matMul"), and before the last capital of an acronym
/// that starts a new word ("HTTPServer" -> HTTP, Server). Digits stay with the word before them
/// ("Conv2DGrad" -> Conv2D, Grad).
std::vector<std::string> split_words(std::string_view s) {
  std::vector<std::string> words;
  std::string cur;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (!is_alnum(c)) {
      if (!cur.empty()) words.push_back(std::move(cur));
      cur.clear();
      continue;
    }
    if (is_upper(c) && !cur.empty()) {
      const char prev = cur.back();
      const bool next_lower = i + 1 < s.size() && is_lower(s[i + 1]);
      if (is_lower(prev) || (is_upper(prev) && next_lower)) {
        words.push_back(std::move(cur));
        cur.clear();
      }
    }
    cur += c;
  }
  if (!cur.empty()) words.push_back(std::move(cur));
  return words;
}

std::string snake_case(std::string_view s) {
  std::string out;
  for (const std::string& w : split_words(s)) {
    if (!out.empty()) out += '_';
    for (char c : w) out += to_lower(c);
  }
  return out;
}

}  // namespace

void register_codegen_filters(Environment& env) {
  env.register_filter("c_ident", {}, [](const CallArgs& a) -> Value {
    std::string out;
    for (char c : a.to_text(a.input())) out += is_alnum(c) || c == '_' ? c : '_';
    if (out.empty() || is_digit(out[0])) out.insert(out.begin(), '_');
    if (is_cpp_keyword(out)) out += '_';
    return Value(std::move(out));
  });
  env.register_filter("cpp_str", {}, [](const CallArgs& a) -> Value {
    return Value(c_string_literal(a.to_text(a.input())));
  });
  env.register_filter("snake_case", {}, [](const CallArgs& a) -> Value { return Value(snake_case(a.to_text(a.input()))); });
  env.register_filter("camel_case", {}, [](const CallArgs& a) -> Value {
    std::string out;
    for (const std::string& w : split_words(a.to_text(a.input()))) {
      for (size_t i = 0; i < w.size(); ++i) out += i == 0 ? to_upper(w[i]) : to_lower(w[i]);
    }
    return Value(std::move(out));
  });
  env.register_filter("upper_snake", {}, [](const CallArgs& a) -> Value {
    std::string out = snake_case(a.to_text(a.input()));
    for (char& c : out) c = to_upper(c);
    return Value(std::move(out));
  });
  env.register_function("fail", {"message"}, [](const CallArgs& a) -> Value { a.fail(a.to_string(a[0])); });
}

}  // namespace kforge::tmpl
