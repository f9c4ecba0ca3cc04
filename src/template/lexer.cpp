#include "template/lexer.h"

#include <fmt/format.h>
#include "support/ascii.h"

namespace kforge::tmpl {

namespace {

using ascii::is_digit;
using ascii::is_ident_char;
using ascii::is_ident_start;

// Python's str.isspace() restricted to ASCII: what Jinja's `\s` and str.rstrip() remove.
bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f' ||
         (c >= '\x1c' && c <= '\x1f');
}

class Lexer {
 public:
  Lexer(const SourceManager& sources, uint32_t file, Diagnostic& error, std::vector<Token>& out)
      : file_(file), src_(sources.contents(file)), error_(error), out_(out) {}

  bool run() {
    while (pos_ < src_.size()) {
      if (!lex_text()) return false;
    }
    return true;
  }

 private:
  SourceLoc loc(size_t offset) const { return {file_, static_cast<uint32_t>(offset)}; }

  bool error(size_t offset, std::string message, std::string note = {}) {
    error_ = Diagnostic{Severity::kError, loc(offset), std::move(message), {}};
    if (!note.empty()) error_.note(std::move(note));
    return false;
  }

  void push(TokenKind kind, size_t begin, size_t end, char control = 0) {
    out_.push_back({kind, control, 0, static_cast<uint32_t>(begin), src_.substr(begin, end - begin)});
  }

  bool starts_with(size_t at, std::string_view s) const { return src_.substr(at, s.size()) == s; }

  size_t skip_space(size_t at) const {
    while (at < src_.size() && is_space(src_[at])) ++at;
    return at;
  }

  char control_at(size_t at) const {
    return at < src_.size() && (src_[at] == '-' || src_[at] == '+') ? src_[at] : 0;
  }

  // `{%(-|+|)\s*raw\s*(?:-%}\s*|%})` at `at`; on a match returns the end offset and the end control.
  bool match_raw_begin(size_t at, size_t& end, char& end_control) const {
    size_t p = at + 2;
    if (control_at(p)) ++p;
    p = skip_space(p);
    if (!starts_with(p, "raw")) return false;
    p = skip_space(p + 3);
    if (starts_with(p, "-%}")) {
      end = p + 3;
      end_control = '-';
      return true;
    }
    if (starts_with(p, "%}")) {
      end = p + 2;
      end_control = 0;
      return true;
    }
    return false;
  }

  // `{%(-|+|)\s*endraw\s*(?:\+%}|-%}|%})` at `at`.
  bool match_raw_end(size_t at, size_t& end, char& end_control) const {
    if (!starts_with(at, "{%")) return false;
    size_t p = at + 2;
    if (control_at(p)) ++p;
    p = skip_space(p);
    if (!starts_with(p, "endraw")) return false;
    p = skip_space(p + 6);
    for (std::string_view close : {"+%}", "-%}", "%}"}) {
      if (starts_with(p, close)) {
        end = p + close.size();
        end_control = close.size() == 3 ? close[0] : 0;
        return true;
      }
    }
    return false;
  }

  bool lex_text() {
    size_t at = pos_;
    while (true) {
      at = src_.find('{', at);
      if (at == std::string_view::npos || at + 1 >= src_.size()) {
        push(TokenKind::kText, pos_, src_.size());
        pos_ = src_.size();
        return true;
      }
      const char next = src_[at + 1];
      if (next == '{' || next == '%' || next == '#') break;
      ++at;
    }
    if (at > pos_) push(TokenKind::kText, pos_, at);
    const char kind = src_[at + 1];
    const char control = control_at(at + 2);
    if (kind == '%') {
      size_t end = 0;
      char end_control = 0;
      if (match_raw_begin(at, end, end_control)) {
        out_.push_back({TokenKind::kRawBegin, control, end_control, static_cast<uint32_t>(at),
                        src_.substr(at, end - at)});
        return lex_raw(at, end);
      }
    }
    const size_t begin_len = control ? 3 : 2;
    pos_ = at + begin_len;
    if (kind == '#') {
      push(TokenKind::kCommentBegin, at, pos_, control);
      return lex_comment(at);
    }
    push(kind == '{' ? TokenKind::kVariableBegin : TokenKind::kBlockBegin, at, pos_, control);
    return lex_tag(at, kind == '{');
  }

  bool lex_comment(size_t open) {
    for (size_t i = pos_; i + 1 < src_.size(); ++i) {
      if (src_[i] == '#' && src_[i + 1] == '}') {
        const char control = i > pos_ && (src_[i - 1] == '-' || src_[i - 1] == '+') ? src_[i - 1] : 0;
        const size_t begin = control ? i - 1 : i;
        push(TokenKind::kCommentEnd, begin, i + 2, control);
        pos_ = i + 2;
        return true;
      }
    }
    return error(open, "unclosed comment: '{#' has no matching '#}'");
  }

  bool lex_raw(size_t open, size_t body_begin) {
    for (size_t i = body_begin; i < src_.size(); ++i) {
      size_t end = 0;
      char end_control = 0;
      if (src_[i] == '{' && match_raw_end(i, end, end_control)) {
        if (i > body_begin) push(TokenKind::kText, body_begin, i);
        out_.push_back({TokenKind::kRawEnd, control_at(i + 2), end_control, static_cast<uint32_t>(i),
                        src_.substr(i, end - i)});
        pos_ = end;
        return true;
      }
    }
    return error(open, "'raw' block is never closed (missing '{% endraw %}')");
  }

  bool lex_tag(size_t open, bool variable) {
    std::vector<std::pair<char, size_t>> balance;  // expected closer, offset of the opener
    const std::string_view raw_hint =
        variable ? "to output '{{' literally, use {% raw %}...{% endraw %} or {{ '{{' }}" : "";
    while (true) {
      pos_ = skip_space(pos_);
      if (pos_ >= src_.size()) {
        if (!balance.empty()) {
          return error(balance.back().second, fmt::format("unclosed '{}'", src_[balance.back().second]));
        }
        return error(open, fmt::format("unclosed '{}': expected '{}' before the end of the template",
                                       variable ? "{{" : "{%", variable ? "}}" : "%}"),
                     std::string(raw_hint));
      }
      if (balance.empty()) {
        const std::string_view close = variable ? "}}" : "%}";
        const char c = src_[pos_];
        if ((c == '-' || (c == '+' && !variable)) && starts_with(pos_ + 1, close)) {
          push(variable ? TokenKind::kVariableEnd : TokenKind::kBlockEnd, pos_, pos_ + 3, c);
          pos_ += 3;
          return true;
        }
        if (starts_with(pos_, close)) {
          push(variable ? TokenKind::kVariableEnd : TokenKind::kBlockEnd, pos_, pos_ + 2);
          pos_ += 2;
          return true;
        }
      }
      const size_t start = pos_;
      const char c = src_[pos_];
      if (is_digit(c)) {
        lex_number();
      } else if (is_ident_start(c)) {
        while (pos_ < src_.size() && is_ident_char(src_[pos_])) ++pos_;
        push(TokenKind::kName, start, pos_);
      } else if (c == '\'' || c == '"') {
        size_t p = pos_ + 1;
        while (p < src_.size() && src_[p] != c) p += src_[p] == '\\' ? 2 : 1;
        if (p >= src_.size()) return error(start, "unterminated string literal");
        pos_ = p + 1;
        push(TokenKind::kString, start, pos_);
      } else {
        static constexpr std::string_view kTwoCharOps[] = {"//", "**", "==", "!=", ">=", "<="};
        size_t len = 0;
        for (std::string_view op : kTwoCharOps) {
          if (starts_with(pos_, op)) len = 2;
        }
        if (len == 0 && std::string_view("+-/*%~[](){}><=.:|,;").find(c) != std::string_view::npos) len = 1;
        if (len == 0) {
          return error(start, fmt::format("unexpected character '{}' in {}", c, variable ? "'{{ }}'" : "'{% %}'"),
                       std::string(raw_hint));
        }
        if (c == '(' || c == '[' || c == '{') {
          balance.push_back({c == '(' ? ')' : c == '[' ? ']' : '}', start});
        } else if (c == ')' || c == ']' || c == '}') {
          if (balance.empty()) return error(start, fmt::format("unexpected '{}'", c), std::string(raw_hint));
          if (balance.back().first != c) {
            return error(start, fmt::format("unexpected '{}', expected '{}'", c, balance.back().first),
                         std::string(raw_hint));
          }
          balance.pop_back();
        }
        pos_ += len;
        push(TokenKind::kOperator, start, pos_);
      }
    }
  }

  // Jinja's integer_re / float_re: 0b/0o/0x integers, decimals with '_' separators, floats with a
  // fractional part and/or an exponent ("1." is the integer 1 followed by '.').
  void lex_number() {
    const size_t start = pos_;
    auto digits = [&](auto pred) {
      size_t p = pos_;
      bool any = false;
      while (p < src_.size()) {
        if (pred(src_[p])) {
          any = true;
          ++p;
        } else if (src_[p] == '_' && any && p + 1 < src_.size() && pred(src_[p + 1])) {
          ++p;
        } else {
          break;
        }
      }
      const bool ok = any;
      if (ok) pos_ = p;
      return ok;
    };
    auto is_dec = [](char ch) { return is_digit(ch); };
    if (src_[pos_] == '0' && pos_ + 1 < src_.size()) {
      const char p = static_cast<char>(src_[pos_ + 1] | 0x20);
      auto radix = [&](auto pred) {
        const size_t save = pos_;
        pos_ += 2;
        // '_' may also follow the prefix directly: 0x_ff
        if (pos_ < src_.size() && src_[pos_] == '_') ++pos_;
        if (digits(pred)) return true;
        pos_ = save;
        return false;
      };
      if ((p == 'x' && radix([](char ch) { return is_digit(ch) || ((ch | 0x20) >= 'a' && (ch | 0x20) <= 'f'); })) ||
          (p == 'o' && radix([](char ch) { return ch >= '0' && ch <= '7'; })) ||
          (p == 'b' && radix([](char ch) { return ch == '0' || ch == '1'; }))) {
        push(TokenKind::kInteger, start, pos_);
        return;
      }
    }
    digits(is_dec);
    bool is_float = false;
    if (pos_ + 1 < src_.size() && src_[pos_] == '.' && is_digit(src_[pos_ + 1])) {
      ++pos_;
      digits(is_dec);
      is_float = true;
    }
    if (pos_ < src_.size() && (src_[pos_] | 0x20) == 'e') {
      size_t p = pos_ + 1;
      if (p < src_.size() && (src_[p] == '+' || src_[p] == '-')) ++p;
      if (p < src_.size() && is_digit(src_[p])) {
        const size_t save = pos_;
        pos_ = p;
        if (digits(is_dec)) {
          is_float = true;
        } else {
          pos_ = save;
        }
      }
    }
    if (!is_float) {
      // Jinja: "0(_?0)*" or "[1-9](_?\d)*"; a leading zero followed by other digits ends the token
      // after the zeros (and the rest becomes a second token, a parse error later).
      if (src_[start] == '0') {
        size_t p = start + 1;
        while (p < pos_ && (src_[p] == '0' || src_[p] == '_')) ++p;
        while (p > start + 1 && src_[p - 1] == '_') --p;
        pos_ = p;
      }
    }
    push(is_float ? TokenKind::kFloat : TokenKind::kInteger, start, pos_);
  }

  uint32_t file_;
  std::string_view src_;
  Diagnostic& error_;
  std::vector<Token>& out_;
  size_t pos_ = 0;
};

bool is_end_like(TokenKind k) {
  return k == TokenKind::kVariableEnd || k == TokenKind::kBlockEnd || k == TokenKind::kCommentEnd ||
         k == TokenKind::kRawBegin || k == TokenKind::kRawEnd;
}

// The whitespace post-pass (Note [Jinja whitespace]): for every text token, first the tag before it
// eats whitespace on its right (`-` all of it; trim_blocks one newline after a statement, comment or
// endraw tag, never after `}}` or `{% raw %}`; `+` nothing), then the tag after it eats on its left
// (`-` all trailing whitespace; otherwise lstrip_blocks removes spaces/tabs between the last newline and
// a statement/comment/raw tag, or from the start of the text if it starts a line; `+` and `{{` never).
void apply_whitespace_control(std::string_view src, std::vector<Token>& tokens) {
  for (size_t k = 0; k < tokens.size(); ++k) {
    Token& t = tokens[k];
    if (t.kind != TokenKind::kText) continue;
    size_t begin = t.offset;
    size_t end = t.offset + t.text.size();
    if (k > 0 && is_end_like(tokens[k - 1].kind)) {
      const Token& prev = tokens[k - 1];
      const char control = (prev.kind == TokenKind::kRawBegin || prev.kind == TokenKind::kRawEnd) ? prev.end_control
                                                                                                   : prev.control;
      const bool trims = prev.kind == TokenKind::kBlockEnd || prev.kind == TokenKind::kCommentEnd ||
                         prev.kind == TokenKind::kRawEnd;
      if (control == '-') {
        while (begin < end && is_space(src[begin])) ++begin;
      } else if (control == 0 && trims && begin < end && src[begin] == '\n') {
        ++begin;
      }
    }
    if (k + 1 < tokens.size() && tokens[k + 1].kind != TokenKind::kText) {
      const Token& next = tokens[k + 1];
      if (next.control == '-') {
        while (end > begin && is_space(src[end - 1])) --end;
      } else if (next.control == 0 && next.kind != TokenKind::kVariableBegin && next.kind != TokenKind::kEof) {
        const size_t newline = src.substr(begin, end - begin).rfind('\n');
        const size_t line_begin = newline == std::string_view::npos ? begin : begin + newline + 1;
        const bool line_starting = begin == 0 || src[begin - 1] == '\n';
        if (line_begin > begin || line_starting) {
          bool all_space = line_begin < end;
          for (size_t i = line_begin; i < end && all_space; ++i) all_space = is_space(src[i]);
          if (all_space) end = line_begin;
        }
      }
    }
    t.offset = static_cast<uint32_t>(begin);
    t.text = src.substr(begin, end - begin);
  }
  std::vector<Token> kept;
  kept.reserve(tokens.size());
  for (Token& t : tokens) {
    switch (t.kind) {
      case TokenKind::kCommentBegin:
      case TokenKind::kCommentEnd:
      case TokenKind::kRawBegin:
      case TokenKind::kRawEnd:
        continue;
      case TokenKind::kText:
        if (t.text.empty()) continue;
        break;
      default:
        break;
    }
    kept.push_back(t);
  }
  tokens.swap(kept);
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = static_cast<char>(c | 0x20);
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

}  // namespace

const char* token_kind_name(TokenKind kind) {
  switch (kind) {
    case TokenKind::kText: return "text";
    case TokenKind::kVariableBegin: return "'{{'";
    case TokenKind::kVariableEnd: return "'}}'";
    case TokenKind::kBlockBegin: return "'{%'";
    case TokenKind::kBlockEnd: return "'%}'";
    case TokenKind::kName: return "name";
    case TokenKind::kString: return "string";
    case TokenKind::kInteger: return "integer";
    case TokenKind::kFloat: return "float";
    case TokenKind::kOperator: return "operator";
    case TokenKind::kEof: return "end of template";
    case TokenKind::kCommentBegin: return "'{#'";
    case TokenKind::kCommentEnd: return "'#}'";
    case TokenKind::kRawBegin: return "'{% raw %}'";
    case TokenKind::kRawEnd: return "'{% endraw %}'";
  }
  return "token";
}

bool lex_template(const SourceManager& sources, uint32_t file, std::vector<Token>& tokens, Diagnostic& error) {
  tokens.clear();
  Lexer lexer(sources, file, error, tokens);
  if (!lexer.run()) return false;
  const std::string_view src = sources.contents(file);
  apply_whitespace_control(src, tokens);
  tokens.push_back({TokenKind::kEof, 0, 0, static_cast<uint32_t>(src.size()), {}});
  return true;
}

bool decode_string_literal(std::string_view spelling, std::string& out, std::string& error) {
  out.clear();
  const std::string_view body = spelling.substr(1, spelling.size() - 2);
  out.reserve(body.size());
  for (size_t i = 0; i < body.size(); ++i) {
    const char c = body[i];
    if (c != '\\' || i + 1 >= body.size()) {
      out += c;
      continue;
    }
    const char e = body[++i];
    switch (e) {
      case '\n': break;  // line continuation
      case '\\': out += '\\'; break;
      case '\'': out += '\''; break;
      case '"': out += '"'; break;
      case 'a': out += '\a'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'v': out += '\v'; break;
      case 'x':
      case 'u':
      case 'U': {
        const size_t n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
        uint32_t cp = 0;
        for (size_t k = 0; k < n; ++k) {
          const int h = i + 1 + k < body.size() ? hex_value(body[i + 1 + k]) : -1;
          if (h < 0) {
            error = fmt::format("truncated \\{}{} escape in string literal", e, std::string(n, 'X'));
            return false;
          }
          cp = cp * 16 + static_cast<uint32_t>(h);
        }
        if (cp > 0x10FFFF) {
          error = "illegal Unicode character in string literal";
          return false;
        }
        append_utf8(out, cp);
        i += n;
        break;
      }
      default:
        if (e >= '0' && e <= '7') {
          uint32_t cp = static_cast<uint32_t>(e - '0');
          for (int k = 0; k < 2 && i + 1 < body.size() && body[i + 1] >= '0' && body[i + 1] <= '7'; ++k) {
            cp = cp * 8 + static_cast<uint32_t>(body[++i] - '0');
          }
          append_utf8(out, cp);
        } else {
          out += '\\';
          out += e;
        }
    }
  }
  return true;
}

std::string dump_tokens(const std::vector<Token>& tokens) {
  std::string out;
  for (const Token& t : tokens) {
    switch (t.kind) {
      case TokenKind::kText: {
        out += "text \"";
        for (char c : t.text) {
          if (c == '\n') out += "\\n";
          else if (c == '\t') out += "\\t";
          else if (c == '"') out += "\\\"";
          else if (c == '\\') out += "\\\\";
          else out += c;
        }
        out += "\"";
        break;
      }
      case TokenKind::kName: out += fmt::format("name {}", t.text); break;
      case TokenKind::kString: out += fmt::format("string {}", t.text); break;
      case TokenKind::kInteger: out += fmt::format("int {}", t.text); break;
      case TokenKind::kFloat: out += fmt::format("float {}", t.text); break;
      case TokenKind::kOperator: out += fmt::format("op {}", t.text); break;
      case TokenKind::kEof: out += "eof"; break;
      default: out += t.text; break;
    }
    out += '\n';
  }
  return out;
}

}  // namespace kforge::tmpl
