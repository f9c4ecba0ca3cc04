// Template parser: recursive descent for statements, precedence climbing for expressions, following
// Jinja2's grammar (parser.py) production by production so that precedence and associativity match.
// A block stack keeps each opening tag so that an unclosed block is reported where it starts.
// Unsupported Jinja constructs (extends, call, filter blocks, with, do, recursive loops, method calls,
// ...) are parse errors with a hint. The first error stops the template.
#pragma once

#include <vector>

#include "support/diagnostics.h"
#include "template/ast.h"
#include "template/lexer.h"

namespace kforge::tmpl {

/// Parses the tokens of buffer `file` (from lex_template). On failure returns false with the error.
bool parse_template(uint32_t file, const std::vector<Token>& tokens, ast::Body& body, Diagnostic& error);

}  // namespace kforge::tmpl
