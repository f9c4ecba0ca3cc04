// Template lexer: a mode-switching state machine (text / expression tag / statement tag / comment / raw)
// over one SourceManager buffer, followed by a small whitespace post-pass that applies `-`, `+`,
// trim_blocks and lstrip_blocks to the text tokens next to each tag, exactly as Jinja2's lexer does.
//
// Text tokens are string_views into the buffer (after whitespace control); comments and raw tags leave
// no token behind (raw bodies become text tokens).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "support/diagnostics.h"
#include "support/source_manager.h"

namespace kforge::tmpl {

enum class TokenKind : uint8_t {
  kText,
  kVariableBegin,  // {{
  kVariableEnd,    // }}
  kBlockBegin,     // {%
  kBlockEnd,       // %}
  kName,
  kString,   // spelling includes the quotes; decode with decode_string_literal()
  kInteger,  // spelling as written (may contain '_', 0x/0o/0b prefixes)
  kFloat,
  kOperator,
  kEof,
  // Only present before the whitespace post-pass:
  kCommentBegin,
  kCommentEnd,
  kRawBegin,  // the whole {% raw %} tag
  kRawEnd,    // the whole {% endraw %} tag
};

struct Token {
  TokenKind kind = TokenKind::kEof;
  char control = 0;      // '-' or '+' written on the inner side of a begin/end delimiter, else 0
  char end_control = 0;  // for kRawBegin/kRawEnd (one token for the whole tag): control of its `%}`
  uint32_t offset = 0;   // byte offset of the token in the buffer
  std::string_view text; // the spelling (for kText: the text kept after whitespace control)
};

const char* token_kind_name(TokenKind kind);

/// Tokenizes buffer `file`. On failure returns false with the first lexical error in `error`.
bool lex_template(const SourceManager& sources, uint32_t file, std::vector<Token>& tokens, Diagnostic& error);

/// Decodes a string literal spelling (with quotes) like Python's unicode-escape: \\ \' \" \n \t \r \a
/// \b \f \v \ooo \xhh \uXXXX \UXXXXXXXX, backslash-newline; unknown escapes are kept verbatim.
/// Returns false (with `error` set) on a malformed \x/\u/\U escape.
bool decode_string_literal(std::string_view spelling, std::string& out, std::string& error);

/// A stable one-line-per-token form for lexer tests: `text "..."`, `name foo`, `op +`, `{{-`, ...
std::string dump_tokens(const std::vector<Token>& tokens);

}  // namespace kforge::tmpl
