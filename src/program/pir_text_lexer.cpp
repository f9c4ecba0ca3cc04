#include "program/pir_text_lexer.h"

#include <cctype>
#include "support/ascii.h"

namespace kforge::ir::pir_text {

namespace {

using ascii::is_digit;


}  // namespace

bool Lexer::is_ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }

bool Lexer::is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; }

bool is_float_text(std::string_view number) {
  if (number.size() > 1 && (number.substr(0, 2) == "0x" || number.substr(0, 3) == "-0x")) return false;
  return number.find_first_of(".eEin") != std::string_view::npos;
}

void Lexer::skip_space() {
  while (pos_ < text_.size()) {
    const char c = text_[pos_];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
      ++pos_;
    } else if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '/') {
      while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
    } else {
      break;
    }
  }
}

Token Lexer::peek() {
  const size_t saved = pos_;
  Token t = next();
  pos_ = saved;
  return t;
}

Token Lexer::lex_number(size_t begin) {
  size_t i = begin;
  if (text_[i] == '-') ++i;
  auto finish = [&](size_t end) {
    pos_ = end;
    return Token{TokenKind::kNumber, static_cast<uint32_t>(begin), text_.substr(begin, end - begin), {}, 0};
  };
  // -inf and -nan are how ostream prints negative infinity (and a negative NaN).
  if (text_.substr(i, 3) == "inf" || text_.substr(i, 3) == "nan") {
    if (i + 3 >= text_.size() || !is_ident_char(text_[i + 3])) return finish(i + 3);
  }
  if (text_.substr(i, 2) == "0x" || text_.substr(i, 2) == "0X") {
    i += 2;
    while (i < text_.size() && std::isxdigit(static_cast<unsigned char>(text_[i]))) ++i;
    return finish(i);
  }
  while (i < text_.size() && is_digit(text_[i])) ++i;
  if (i < text_.size() && text_[i] == '.') {
    ++i;
    while (i < text_.size() && is_digit(text_[i])) ++i;
  }
  if (i < text_.size() && (text_[i] == 'e' || text_[i] == 'E')) {
    size_t j = i + 1;
    if (j < text_.size() && (text_[j] == '+' || text_[j] == '-')) ++j;
    if (j < text_.size() && is_digit(text_[j])) {
      i = j;
      while (i < text_.size() && is_digit(text_[i])) ++i;
    }
  }
  return finish(i);
}

Token Lexer::lex_string(size_t begin) {
  // Paddle's printer escapes only '"' (as \"), and its old lexer turned only \" back: other backslashes are
  // literal characters ("\t" is a backslash and a 't').
  std::string value;
  size_t i = begin + 1;
  while (i < text_.size()) {
    const char c = text_[i];
    if (c == '\\' && i + 1 < text_.size() && text_[i + 1] == '"') {
      value += '"';
      i += 2;
    } else if (c == '"') {
      pos_ = i + 1;
      return Token{TokenKind::kString, static_cast<uint32_t>(begin), text_.substr(begin, pos_ - begin),
                   std::move(value), 0};
    } else {
      value += c;
      ++i;
    }
  }
  pos_ = text_.size();
  return Token{TokenKind::kError, static_cast<uint32_t>(begin), text_.substr(begin, 1), "unterminated string", 0};
}

Token Lexer::next() {
  skip_space();
  const size_t begin = pos_;
  if (pos_ >= text_.size()) return Token{TokenKind::kEof, static_cast<uint32_t>(begin), {}, {}, 0};
  const char c = text_[pos_];
  if (is_ident_start(c)) {
    size_t i = pos_;
    while (i < text_.size() && is_ident_char(text_[i])) ++i;
    pos_ = i;
    return Token{TokenKind::kIdent, static_cast<uint32_t>(begin), text_.substr(begin, i - begin), {}, 0};
  }
  if (c == '-' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '>') {
    pos_ += 2;
    return Token{TokenKind::kArrow, static_cast<uint32_t>(begin), text_.substr(begin, 2), {}, 0};
  }
  if (is_digit(c) || (c == '-' && pos_ + 1 < text_.size() &&
                      (is_digit(text_[pos_ + 1]) || text_.substr(pos_ + 1, 3) == "inf" ||
                       text_.substr(pos_ + 1, 3) == "nan"))) {
    return lex_number(begin);
  }
  if (c == '"') return lex_string(begin);
  if (c == '%') {
    size_t i = pos_ + 1;
    while (i < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[i])) || text_[i] == '_' ||
                                text_[i] == '.')) {
      ++i;
    }
    pos_ = i;
    if (i == begin + 1) {
      return Token{TokenKind::kError, static_cast<uint32_t>(begin), text_.substr(begin, 1), "'%' without a value name",
                   0};
    }
    return Token{TokenKind::kValue, static_cast<uint32_t>(begin), text_.substr(begin, i - begin), {}, 0};
  }
  for (std::string_view special : {std::string_view("<<NULL VALUE>>"), std::string_view("<<NULL TYPE>>")}) {
    if (text_.substr(pos_, special.size()) == special) {
      pos_ += special.size();
      return Token{special == "<<NULL VALUE>>" ? TokenKind::kNullValue : TokenKind::kNullType,
                   static_cast<uint32_t>(begin), special, {}, 0};
    }
  }
  if (std::string_view("{}()[]:,=^<>").find(c) != std::string_view::npos) {
    ++pos_;
    return Token{TokenKind::kPunct, static_cast<uint32_t>(begin), text_.substr(begin, 1), {}, c};
  }
  ++pos_;
  return Token{TokenKind::kError, static_cast<uint32_t>(begin), text_.substr(begin, 1),
               std::string("unexpected character '") + c + "'", 0};
}

}  // namespace kforge::ir::pir_text
