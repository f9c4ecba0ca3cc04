#include "opdef/cpp_expr.h"

#include <fmt/format.h>

#include <array>

namespace kforge::opdef {

namespace {

enum class TokKind { kEnd, kIdent, kInt, kFloat, kBadNumber, kString, kBadString, kChar, kPunct, kUnknown };

struct Token {
  TokKind kind = TokKind::kEnd;
  size_t begin = 0;
  size_t end = 0;
  std::string_view text;
};

// Longest first, so "<<" wins over "<".
constexpr std::array<std::string_view, 10> kTwoCharPuncts = {"::", "->", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||"};
constexpr std::string_view kOneCharPuncts = "+-*/%<>&^|!~?:()[]{},.=";

bool is_int_suffix(std::string_view s) {
  static constexpr std::array<std::string_view, 13> kSuffixes = {"",    "u",   "U",   "l",   "L",   "ll", "LL",
                                                                   "ul",  "uL",  "Ul",  "UL",  "lu",  "LU"};
  for (std::string_view k : kSuffixes) {
    if (s == k) return true;
  }
  return s == "ull" || s == "ULL" || s == "llu" || s == "LLU" || s == "Lu" || s == "lU";
}

bool is_hex_digit(char c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// Validates a pp-number as a C++ integer or floating literal.
TokKind classify_number(std::string_view s) {
  size_t i = 0;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    i = 2;
    while (i < s.size() && is_hex_digit(s[i])) ++i;
    return i > 2 && is_int_suffix(s.substr(i)) ? TokKind::kInt : TokKind::kBadNumber;
  }
  size_t int_digits = 0, frac_digits = 0;
  while (i < s.size() && is_digit(s[i])) ++i, ++int_digits;
  bool has_dot = false, has_exponent = false;
  if (i < s.size() && s[i] == '.') {
    has_dot = true;
    ++i;
    while (i < s.size() && is_digit(s[i])) ++i, ++frac_digits;
  }
  if (int_digits + frac_digits == 0) return TokKind::kBadNumber;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    has_exponent = true;
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    size_t exp_digits = 0;
    while (i < s.size() && is_digit(s[i])) ++i, ++exp_digits;
    if (exp_digits == 0) return TokKind::kBadNumber;
  }
  const std::string_view suffix = s.substr(i);
  if (!has_dot && !has_exponent) return is_int_suffix(suffix) ? TokKind::kInt : TokKind::kBadNumber;
  return suffix.empty() || suffix == "f" || suffix == "F" || suffix == "l" || suffix == "L" ? TokKind::kFloat
                                                                                             : TokKind::kBadNumber;
}

Token lex(TextCursor& cur) {
  cur.skip_spaces();
  Token t;
  t.begin = cur.pos();
  if (cur.at_end()) {
    t.end = t.begin;
    return t;
  }
  const char c = cur.peek();
  if (is_ident_start(c)) {
    t.kind = TokKind::kIdent;
    while (!cur.at_end() && is_ident_char(cur.peek())) cur.advance();
  } else if (is_digit(c) || (c == '.' && is_digit(cur.peek(1)))) {
    // A pp-number: digits, letters, '_', '.', and a sign right after an exponent letter.
    cur.advance();
    while (!cur.at_end()) {
      const char d = cur.peek();
      const char prev = cur.text()[cur.pos() - 1];
      if (is_ident_char(d) || d == '.' || ((d == '+' || d == '-') && (prev == 'e' || prev == 'E'))) {
        cur.advance();
      } else {
        break;
      }
    }
    t.kind = classify_number(cur.slice(t.begin, cur.pos()));
  } else if (c == '"' || c == '\'') {
    cur.advance();
    t.kind = TokKind::kBadString;
    while (!cur.at_end()) {
      const char d = cur.peek();
      cur.advance();
      if (d == '\\') {
        cur.advance();
      } else if (d == c) {
        t.kind = c == '"' ? TokKind::kString : TokKind::kChar;
        break;
      }
    }
  } else {
    t.kind = TokKind::kUnknown;
    for (std::string_view p : kTwoCharPuncts) {
      if (cur.peek() == p[0] && cur.peek(1) == p[1]) {
        cur.advance(2);
        t.kind = TokKind::kPunct;
        break;
      }
    }
    if (t.kind == TokKind::kUnknown) {
      if (kOneCharPuncts.find(c) != std::string_view::npos) t.kind = TokKind::kPunct;
      cur.advance();
    }
  }
  t.end = cur.pos();
  t.text = cur.slice(t.begin, t.end);
  return t;
}

Token peek_token(TextCursor& cur) {
  const size_t saved = cur.pos();
  Token t = lex(cur);
  cur.set_pos(saved);
  return t;
}

bool is_binary_operator(const Token& t) {
  if (t.kind != TokKind::kPunct) return false;
  static constexpr std::array<std::string_view, 18> kOps = {"+",  "-",  "*",  "/",  "%",  "<<", ">>", "<",  ">",
                                                             "<=", ">=", "==", "!=", "&",  "^",  "|",  "&&", "||"};
  for (std::string_view op : kOps) {
    if (t.text == op) return true;
  }
  return false;
}

bool is_prefix_operator(const Token& t) {
  return t.kind == TokKind::kPunct &&
         (t.text == "-" || t.text == "+" || t.text == "!" || t.text == "~" || t.text == "*" || t.text == "&");
}

class ExprParser {
 public:
  ExprParser(TextCursor& cur, DiagnosticEngine& diags, std::string_view context)
      : cur_(cur), diags_(diags), context_(context) {}

  bool expression() { return ternary(); }

 private:
  bool fail(size_t at, std::string_view problem) {
    diags_.error(cur_.loc(at), fmt::format("{}: {}", context_, problem));
    return false;
  }

  bool fail_expected(std::string_view what, const Token& found) {
    if (found.kind == TokKind::kEnd) return fail(found.begin, fmt::format("expected {}", what));
    return fail(found.begin, fmt::format("expected {}, found '{}'", what, found.text));
  }

  // Expects `close` for the bracket opened at `open_at`; reports with a note at the opener.
  bool expect_close(std::string_view close, const Token& open) {
    const Token t = lex(cur_);
    if (t.kind == TokKind::kPunct && t.text == close) return true;
    Diagnostic d{Severity::kError, cur_.loc(t.begin),
                 fmt::format("{}: expected '{}' to close '{}'", context_, close, open.text), {}};
    if (t.kind != TokKind::kEnd) d.message += fmt::format(", found '{}'", t.text);
    d.note(fmt::format("to match this '{}'", open.text), cur_.loc(open.begin));
    diags_.report(std::move(d));
    return false;
  }

  bool ternary() {
    if (!binary()) return false;
    const Token q = peek_token(cur_);
    if (q.kind != TokKind::kPunct || q.text != "?") return true;
    lex(cur_);
    if (!expression()) return false;
    const Token colon = lex(cur_);
    if (colon.kind != TokKind::kPunct || colon.text != ":") {
      return fail_expected("':' of the conditional expression", colon);
    }
    return ternary();
  }

  bool binary() {
    if (!unary()) return false;
    for (;;) {
      const Token op = peek_token(cur_);
      if (!is_binary_operator(op)) return true;
      lex(cur_);
      const Token next = peek_token(cur_);
      if (!starts_operand(next)) return fail_expected(fmt::format("an expression after '{}'", op.text), next);
      if (!unary()) return false;
    }
  }

  static bool starts_operand(const Token& t) {
    switch (t.kind) {
      case TokKind::kIdent:
      case TokKind::kInt:
      case TokKind::kFloat:
      case TokKind::kBadNumber:
      case TokKind::kString:
      case TokKind::kBadString:
      case TokKind::kChar: return true;
      case TokKind::kPunct: return t.text == "(" || t.text == "{" || t.text == "::" || is_prefix_operator(t);
      default: return false;
    }
  }

  bool unary() {
    const Token t = peek_token(cur_);
    if (is_prefix_operator(t)) {
      lex(cur_);
      const Token next = peek_token(cur_);
      if (!starts_operand(next)) return fail_expected(fmt::format("an expression after '{}'", t.text), next);
      return unary();
    }
    return postfix();
  }

  bool postfix() {
    if (!primary()) return false;
    for (;;) {
      const Token t = peek_token(cur_);
      if (t.kind != TokKind::kPunct) return true;
      if (t.text == "(") {
        lex(cur_);
        if (!arguments(t, ")")) return false;
      } else if (t.text == "[") {
        lex(cur_);
        if (!expression() || !expect_close("]", t)) return false;
      } else if (t.text == "." || t.text == "->" || t.text == "::") {
        lex(cur_);
        const Token member = lex(cur_);
        if (member.kind != TokKind::kIdent) return fail_expected(fmt::format("a name after '{}'", t.text), member);
      } else {
        return true;
      }
    }
  }

  // Comma-separated expressions up to `close`; `open` has been consumed. A trailing comma is allowed
  // in brace lists only, as in C++.
  bool arguments(const Token& open, std::string_view close) {
    Token t = peek_token(cur_);
    if (t.kind == TokKind::kPunct && t.text == close) {
      lex(cur_);
      return true;
    }
    if (t.kind == TokKind::kPunct && (t.text == ")" || t.text == "]" || t.text == "}")) {
      return expect_close(close, open);  // `f(}`: the bracket is the problem, not a missing argument
    }
    for (;;) {
      if (!expression()) return false;
      t = peek_token(cur_);
      if (t.kind == TokKind::kPunct && t.text == ",") {
        lex(cur_);
        const Token after = peek_token(cur_);
        if (close == "}" && after.kind == TokKind::kPunct && after.text == "}") {
          lex(cur_);
          return true;
        }
        continue;
      }
      return expect_close(close, open);
    }
  }

  bool primary() {
    const Token t = lex(cur_);
    switch (t.kind) {
      case TokKind::kInt:
      case TokKind::kFloat:
      case TokKind::kChar: return true;
      case TokKind::kString:
        // Adjacent string literals concatenate.
        while (peek_token(cur_).kind == TokKind::kString) lex(cur_);
        return true;
      case TokKind::kBadNumber: return fail(t.begin, fmt::format("invalid number '{}'", t.text));
      case TokKind::kBadString: return fail(t.begin, "unterminated string literal");
      case TokKind::kIdent: return true;  // '::' continuations are handled as postfix
      case TokKind::kPunct:
        if (t.text == "(") return expression() && expect_close(")", t);
        if (t.text == "{") return arguments(t, "}");
        if (t.text == "::") {
          const Token name = lex(cur_);
          if (name.kind != TokKind::kIdent) return fail_expected("a name after '::'", name);
          return true;
        }
        return fail_expected("an expression", t);
      case TokKind::kUnknown: return fail(t.begin, fmt::format("unexpected character '{}'", t.text));
      case TokKind::kEnd: return fail_expected("an expression", t);
    }
    return false;
  }

  TextCursor& cur_;
  DiagnosticEngine& diags_;
  std::string_view context_;
};

std::vector<Token> lex_range(const LocatedText& text, size_t begin, size_t end) {
  TextCursor cur(text, begin, end);
  std::vector<Token> tokens;
  for (;;) {
    Token t = lex(cur);
    if (t.kind == TokKind::kEnd) break;
    tokens.push_back(t);
  }
  return tokens;
}

bool is_punct(const Token& t, std::string_view p) { return t.kind == TokKind::kPunct && t.text == p; }

// Index of the token closing the bracket at tokens[open], or tokens.size().
size_t matching_close(const std::vector<Token>& tokens, size_t open) {
  int depth = 0;
  for (size_t i = open; i < tokens.size(); ++i) {
    if (tokens[i].kind != TokKind::kPunct) continue;
    const std::string_view p = tokens[i].text;
    if (p == "(" || p == "[" || p == "{") ++depth;
    if (p == ")" || p == "]" || p == "}") {
      if (--depth == 0) return i;
    }
  }
  return tokens.size();
}

}  // namespace

bool parse_cpp_expression(TextCursor& cursor, DiagnosticEngine& diags, std::string_view context) {
  ExprParser parser(cursor, diags, context);
  return parser.expression();
}

DefaultValue classify_default(const LocatedText& text, size_t begin, size_t end) {
  trim_range(text.text(), begin, end);
  DefaultValue value;
  value.text = std::string(text.text().substr(begin, end - begin));
  value.loc = text.loc(begin);
  const std::vector<Token> tokens = lex_range(text, begin, end);
  value.kind = DefaultKind::kExpression;
  if (tokens.empty()) return value;

  const size_t first = is_punct(tokens[0], "-") || is_punct(tokens[0], "+") ? 1 : 0;
  if (tokens.size() == first + 1 && tokens[first].kind == TokKind::kInt) {
    value.kind = DefaultKind::kInteger;
  } else if (tokens.size() == first + 1 && tokens[first].kind == TokKind::kFloat) {
    value.kind = DefaultKind::kFloat;
  } else if (tokens.size() == 1 && tokens[0].kind == TokKind::kIdent &&
             (tokens[0].text == "true" || tokens[0].text == "false")) {
    value.kind = DefaultKind::kBool;
  } else if (tokens[0].kind == TokKind::kString) {
    bool all_strings = true;
    for (const Token& t : tokens) all_strings = all_strings && t.kind == TokKind::kString;
    if (all_strings) value.kind = DefaultKind::kString;
  } else if (is_punct(tokens[0], "{") && matching_close(tokens, 0) == tokens.size() - 1) {
    value.kind = DefaultKind::kList;
    // Split the elements on commas at depth one.
    int depth = 0;
    size_t item_begin = tokens[0].end;
    for (size_t i = 1; i + 1 < tokens.size(); ++i) {
      const Token& t = tokens[i];
      if (t.kind == TokKind::kPunct) {
        if (t.text == "(" || t.text == "[" || t.text == "{") ++depth;
        if (t.text == ")" || t.text == "]" || t.text == "}") --depth;
        if (t.text == "," && depth == 0) {
          value.items.push_back(classify_default(text, item_begin, t.begin));
          item_begin = t.end;
        }
      }
    }
    const size_t last_end = tokens.back().begin;
    size_t b = item_begin, e = last_end;
    trim_range(text.text(), b, e);
    if (b < e) value.items.push_back(classify_default(text, item_begin, last_end));
  }
  if (value.kind == DefaultKind::kExpression) {
    // A name or a qualified name (DataType::FLOAT32, INT64_MAX, ::x) is a named constant.
    bool qualified_name = true;
    bool expect_name = !is_punct(tokens[0], "::");
    for (size_t i = expect_name ? 0 : 1; i < tokens.size(); ++i) {
      const bool ok = expect_name ? tokens[i].kind == TokKind::kIdent : is_punct(tokens[i], "::");
      if (!ok) {
        qualified_name = false;
        break;
      }
      expect_name = !expect_name;
    }
    if (qualified_name && !expect_name) value.kind = DefaultKind::kEnumConstant;
  }
  return value;
}

std::optional<DefaultValue> parse_default_value(const LocatedText& text, size_t begin, size_t end,
                                                DiagnosticEngine& diags, std::string_view context) {
  TextCursor cur(text, begin, end);
  if (!parse_cpp_expression(cur, diags, context)) return std::nullopt;
  cur.skip_spaces();
  if (!cur.at_end()) {
    diags.error(cur.loc(), fmt::format("{}: unexpected {} after the value", context, cur.describe_next()));
    return std::nullopt;
  }
  return classify_default(text, begin, end);
}

}  // namespace kforge::opdef
