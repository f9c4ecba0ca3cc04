// Tokens of printed PIR programs (both printer eras, pir_text_reader.h).
//
// The lexer is on demand over the source buffer: the parser reads tokens, and switches to reading raw
// characters where PIR's syntax is not token-shaped (`tensor<-1x3xf32>`, `Place(gpu:0)`, kernel keys
// `<backend:GPU|...>`), which is why the position is exposed.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kforge::ir::pir_text {

enum class TokenKind : uint8_t {
  kEof,
  kIdent,      // [A-Za-z_][A-Za-z0-9_.]*   (true, f32, pd_op.IntArray, builtin.tensor, else, ...)
  kNumber,     // -?digits[.digits][e[+-]digits], -inf, -nan, 0x1f (hex pointers)
  kString,     // "..." (value() is decoded: \" becomes ", every other backslash stays)
  kValue,      // %12, %arg_0, %kwarg_key
  kNullValue,  // <<NULL VALUE>>
  kNullType,   // <<NULL TYPE>>
  kArrow,      // ->
  kPunct,      // one of { } ( ) [ ] : , = ^ < >
  kError,      // an unexpected character or an unterminated string; `value` says which
};

struct Token {
  TokenKind kind = TokenKind::kEof;
  uint32_t offset = 0;      // where the token starts in the buffer
  std::string_view text;    // the token as written
  std::string value;        // kString: the decoded string; kError: what is wrong
  char punct = 0;           // kPunct: the character

  bool is(char c) const { return kind == TokenKind::kPunct && punct == c; }
  bool is_ident(std::string_view s) const { return kind == TokenKind::kIdent && text == s; }
};

class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}

  Token next();
  Token peek();
  /// Skips spaces, newlines and `//` comments.
  void skip_space();

  size_t pos() const { return pos_; }
  void set_pos(size_t pos) { pos_ = pos; }
  std::string_view text() const { return text_; }
  bool at_end() const { return pos_ >= text_.size(); }
  char peek_char() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }

  static bool is_ident_start(char c);
  static bool is_ident_char(char c);

 private:
  Token lex_number(size_t begin);
  Token lex_string(size_t begin);

  std::string_view text_;
  size_t pos_ = 0;
};

/// True when an integer or floating number token is written as a float ("1.5", "1e-05", "-inf", "nan").
bool is_float_text(std::string_view number);

}  // namespace kforge::ir::pir_text
