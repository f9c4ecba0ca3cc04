// The template parser (parser.h): tokens to the AST of one template. This file holds the token helpers and the
// statements; the expressions are parsed in parser_expressions.cpp.
#include "template/parser.h"

#include "template/parser_internal.h"

namespace kforge::tmpl {

namespace parser_internal {

namespace {

const char* const kStatementKeywords[] = {"if", "elif", "else", "endif", "for", "endfor", "set", "endset",
                                          "macro", "endmacro", "include", "import", "from", "raw", "endraw",
                                          "print"};

}  // namespace

bool Parser::run(Body& body) {
  try {
    parse_body(body, {});
    return true;
  } catch (const ParseAbort&) {
    return false;
  }
}

void Parser::advance() {
  if (pos_ + 1 < tokens_.size()) ++pos_;
}

bool Parser::is_op(std::string_view op, size_t n) const {
  const Token& t = peek(n);
  return t.kind == TokenKind::kOperator && t.text == op;
}

bool Parser::is_name(std::string_view name, size_t n) const {
  const Token& t = peek(n);
  return t.kind == TokenKind::kName && t.text == name;
}

bool Parser::skip_op(std::string_view op) {
  if (!is_op(op)) return false;
  advance();
  return true;
}

bool Parser::skip_name(std::string_view name) {
  if (!is_name(name)) return false;
  advance();
  return true;
}

std::string Parser::describe(const Token& t) {
  switch (t.kind) {
    case TokenKind::kName:
    case TokenKind::kOperator:
    case TokenKind::kInteger:
    case TokenKind::kFloat:
      return fmt::format("'{}'", t.text);
    case TokenKind::kString: return "string literal";
    case TokenKind::kText: return "template text";
    default: return token_kind_name(t.kind);
  }
}

[[noreturn]] void Parser::fail(SourceLoc loc, std::string message, std::vector<DiagNote> notes) {
  Diagnostic d{Severity::kError, loc, std::move(message), std::move(notes)};
  if (in_variable_) {
    d.note("to output '{{' literally (e.g. C++ brace initialisation), use {% raw %}...{% endraw %} or {{ '{{' }}");
  }
  error_ = std::move(d);
  throw ParseAbort{};
}

void Parser::expect_op(std::string_view op) {
  if (!skip_op(op)) fail_here(fmt::format("expected '{}', got {}", op, describe(cur())));
}

const Token& Parser::expect_name(std::string_view what) {
  if (cur().kind != TokenKind::kName) fail_here(fmt::format("expected {}, got {}", what, describe(cur())));
  const Token& t = cur();
  advance();
  return t;
}

void Parser::expect_block_end() {
  if (cur().kind == TokenKind::kBlockEnd) {
    advance();
    return;
  }
  fail_here(fmt::format("expected '%}}', got {}", describe(cur())));
}

void Parser::parse_body(Body& body, std::initializer_list<std::string_view> end_keywords) {
  while (true) {
    const Token& t = cur();
    switch (t.kind) {
      case TokenKind::kText:
        body.push_back(std::make_unique<TextNode>(loc_of(t), t.text));
        advance();
        break;
      case TokenKind::kVariableBegin: {
        advance();
        in_variable_ = true;
        const SourceLoc at = here();
        ExprPtr e = parse_tuple(/*with_condexpr=*/true, {}, false);
        if (cur().kind != TokenKind::kVariableEnd) fail_here(fmt::format("expected '}}}}', got {}", describe(cur())));
        in_variable_ = false;
        advance();
        body.push_back(std::make_unique<OutputNode>(at, std::move(e)));
        break;
      }
      case TokenKind::kBlockBegin: {
        const Token& kw = peek();
        if (kw.kind == TokenKind::kName) {
          for (std::string_view end : end_keywords) {
            if (kw.text == end) {
              advance();
              return;
            }
          }
        }
        advance();
        parse_statement(body);
        break;
      }
      case TokenKind::kEof:
        if (!blocks_.empty()) {
          const OpenBlock& open = blocks_.back();
          fail(open.loc, fmt::format("'{}' block is never closed", open.keyword),
               {{SourceLoc{}, fmt::format("expected '{{% end{} %}}' before the end of the template", open.keyword)}});
        }
        return;
      default:
        fail_here(fmt::format("unexpected {}", describe(t)));
    }
  }
}

void Parser::parse_statement(Body& body) {
  Nesting nesting(*this);
  const Token& kw = cur();
  if (kw.kind != TokenKind::kName) fail_here(fmt::format("expected a statement keyword, got {}", describe(kw)));
  const std::string_view k = kw.text;
  const SourceLoc at = here();
  if (k == "if") return parse_if(body);
  if (k == "for") return parse_for(body);
  if (k == "set") return parse_set(body);
  if (k == "macro") return parse_macro(body);
  if (k == "include") return parse_include(body);
  if (k == "import") return parse_import(body);
  if (k == "from") return parse_from(body);
  if (k == "print") {
    advance();
    ExprPtr e = parse_tuple(true, {}, false);
    expect_block_end();
    body.push_back(std::make_unique<OutputNode>(at, std::move(e)));
    return;
  }
  reject_statement(kw);
}

[[noreturn]] void Parser::reject_statement(const Token& kw) {
  const std::string_view k = kw.text;
  const SourceLoc at = loc_of(kw);
  auto reject = [&](std::string message, std::string hint) {
    fail(at, std::move(message), {{SourceLoc{}, std::move(hint)}});
  };
  if (k == "extends" || k == "block" || k == "endblock") {
    reject(fmt::format("'{}' is not supported (no template inheritance)", k), "use 'include' or macros instead");
  }
  if (k == "call" || k == "endcall") {
    reject(fmt::format("'{}' blocks are not supported", k), "pass the content to the macro as an argument instead of using caller()");
  }
  if (k == "filter" || k == "endfilter") {
    reject("'filter' blocks are not supported", "capture the text with '{% set x %}...{% endset %}' and apply the filter to x");
  }
  if (k == "with" || k == "endwith") reject("'with' blocks are not supported", "use 'set' (inside a for loop or macro to limit its scope)");
  if (k == "do") reject("'do' is not supported", "use a namespace and '{% set ns.attr = ... %}'");
  if (k == "autoescape" || k == "endautoescape") reject("autoescape is not supported", "kforge output is never HTML-escaped");
  if (k == "trans" || k == "endtrans" || k == "pluralize") reject("i18n tags are not supported", "write the text directly");
  if (k == "break" || k == "continue") {
    reject(fmt::format("'{}' is not supported", k), "filter the loop instead: '{% for x in xs if condition %}'");
  }
  for (std::string_view end : {"endif", "endfor", "endset", "endmacro", "elif", "else", "endraw"}) {
    if (k == end) {
      if (blocks_.empty()) fail(at, fmt::format("unexpected '{}' outside of any block", k));
      const OpenBlock& open = blocks_.back();
      fail(at, fmt::format("unexpected '{}' inside '{}' block", k, open.keyword),
           {{open.loc, fmt::format("'{}' opened here; close it with '{{% end{} %}}'", open.keyword, open.keyword)}});
    }
  }
  std::vector<std::string> keywords(std::begin(kStatementKeywords), std::end(kStatementKeywords));
  std::vector<DiagNote> notes;
  if (auto m = closest_match(k, keywords)) notes.push_back({SourceLoc{}, fmt::format("did you mean '{}'?", *m)});
  fail(at, fmt::format("unknown statement '{}'", k), std::move(notes));
}

std::string_view Parser::parse_block_body(Body& body, std::initializer_list<std::string_view> ends) {
  parse_body(body, ends);
  const std::string_view end = cur().text;
  advance();
  return end;
}

void Parser::parse_if(Body& body) {
  auto node = std::make_unique<IfNode>(here());
  blocks_.push_back({"if", here()});
  advance();
  SourceLoc branch_loc = node->loc;
  while (true) {
    IfBranch branch;
    branch.loc = branch_loc;
    branch.cond = parse_tuple(false, {}, false);
    expect_block_end();
    const SourceLoc kw_loc = here();
    const std::string_view end = parse_block_body(branch.body, {"elif", "else", "endif"});
    node->branches.push_back(std::move(branch));
    if (end == "elif") {
      branch_loc = kw_loc;
      continue;
    }
    if (end == "else") {
      expect_block_end();
      parse_block_body(node->else_body, {"endif"});
    }
    break;
  }
  expect_block_end();
  blocks_.pop_back();
  body.push_back(std::move(node));
}

Target Parser::parse_target(bool allow_tuple, bool allow_namespace, std::initializer_list<std::string_view> end_names) {
  Target target;
  target.loc = here();
  if (allow_namespace && cur().kind == TokenKind::kName && is_op(".", 1)) {
    target.names.push_back(std::string(expect_name().text));
    advance();
    target.ns_attr = std::string(expect_name("an attribute name").text);
    return target;
  }
  bool parenthesized = false;
  if (allow_tuple && skip_op("(")) parenthesized = true;
  while (true) {
    const Token& t = expect_name("a variable name");
    if (t.text == "true" || t.text == "false" || t.text == "none" || t.text == "True" || t.text == "False" ||
        t.text == "None") {
      fail(loc_of(t), fmt::format("cannot assign to '{}'", t.text));
    }
    target.names.push_back(std::string(t.text));
    if (!allow_tuple || !is_op(",")) break;
    advance();
    target.unpack = true;
    // trailing comma: "a, in" / "(a, )"
    bool at_end = is_op(")") || is_op("=") || cur().kind == TokenKind::kBlockEnd;
    for (std::string_view e : end_names) at_end = at_end || is_name(e);
    if (at_end) break;
  }
  if (parenthesized) {
    expect_op(")");
    if (target.names.size() > 1) target.unpack = true;
  }
  return target;
}

void Parser::parse_for(Body& body) {
  auto node = std::make_unique<ForNode>(here());
  blocks_.push_back({"for", here()});
  advance();
  node->target = parse_target(true, false, {"in"});
  if (!skip_name("in")) fail_here(fmt::format("expected 'in', got {}", describe(cur())));
  node->iter = parse_tuple(false, {"recursive"}, false);
  if (skip_name("if")) node->filter = parse_expression(true);
  if (is_name("recursive")) {
    fail(here(), "recursive loops are not supported", {{SourceLoc{}, "use a macro that calls itself instead"}});
  }
  expect_block_end();
  const std::string_view end = parse_block_body(node->body, {"else", "endfor"});
  if (end == "else") {
    expect_block_end();
    parse_block_body(node->else_body, {"endfor"});
  }
  expect_block_end();
  blocks_.pop_back();
  body.push_back(std::move(node));
}

void Parser::parse_set(Body& body) {
  const SourceLoc at = here();
  advance();
  Target target = parse_target(true, true, {});
  if (skip_op("=")) {
    auto node = std::make_unique<SetNode>(at);
    node->target = std::move(target);
    node->value = parse_tuple(true, {}, false);
    expect_block_end();
    body.push_back(std::move(node));
    return;
  }
  auto node = std::make_unique<SetBlockNode>(at);
  if (target.unpack) fail(target.loc, "a block 'set' assigns to exactly one name");
  node->target = std::move(target);
  while (skip_op("|")) node->filters.push_back(parse_filter_call(nullptr));
  expect_block_end();
  blocks_.push_back({"set", at});
  parse_block_body(node->body, {"endset"});
  expect_block_end();
  blocks_.pop_back();
  body.push_back(std::move(node));
}

void Parser::parse_macro(Body& body) {
  auto node = std::make_unique<MacroNode>(here(), "");
  blocks_.push_back({"macro", here()});
  advance();
  node->name = std::string(expect_name("a macro name").text);
  expect_op("(");
  bool any_default = false;
  while (!is_op(")")) {
    if (!node->params.empty()) expect_op(",");
    if (is_op(")")) break;
    if (is_op("*") || is_op("**")) {
      fail_here("variadic macro parameters are not supported");
    }
    MacroParam p;
    p.loc = here();
    p.name = std::string(expect_name("a parameter name").text);
    for (const MacroParam& q : node->params) {
      if (q.name == p.name) fail(p.loc, fmt::format("duplicate parameter '{}'", p.name));
    }
    if (skip_op("=")) {
      p.default_value = parse_expression(true);
      any_default = true;
    } else if (any_default) {
      fail(p.loc, fmt::format("parameter '{}' without a default follows a parameter with a default", p.name));
    }
    node->params.push_back(std::move(p));
  }
  advance();
  expect_block_end();
  parse_block_body(node->body, {"endmacro"});
  expect_block_end();
  blocks_.pop_back();
  body.push_back(std::move(node));
}

void Parser::reject_context_modifier() {
  if ((is_name("with") || is_name("without")) && is_name("context", 1)) {
    fail(here(), fmt::format("'{} context' is not supported", cur().text),
         {{SourceLoc{}, "includes always see the current variables; imports never do"}});
  }
}

void Parser::parse_include(Body& body) {
  auto node = std::make_unique<IncludeNode>(here());
  advance();
  node->name = parse_expression(true);
  if (is_name("ignore") && is_name("missing", 1)) {
    advance();
    advance();
    node->ignore_missing = true;
  }
  reject_context_modifier();
  expect_block_end();
  body.push_back(std::move(node));
}

void Parser::parse_import(Body& body) {
  auto node = std::make_unique<ImportNode>(here());
  advance();
  node->name = parse_expression(true);
  if (!skip_name("as")) fail_here(fmt::format("expected 'as', got {}", describe(cur())));
  node->alias = std::string(expect_name("a name for the imported template").text);
  import_aliases_.push_back(node->alias);
  reject_context_modifier();
  expect_block_end();
  body.push_back(std::move(node));
}

void Parser::parse_from(Body& body) {
  auto node = std::make_unique<FromImportNode>(here());
  advance();
  node->name = parse_expression(true);
  if (!skip_name("import")) fail_here(fmt::format("expected 'import', got {}", describe(cur())));
  while (true) {
    if (!node->names.empty()) {
      if (!is_op(",")) break;
      advance();
    }
    reject_context_modifier();
    ImportedName n;
    n.loc = here();
    n.name = std::string(expect_name("a name to import").text);
    if (n.name.starts_with("_")) fail(n.loc, "names starting with an underscore cannot be imported");
    n.alias = skip_name("as") ? std::string(expect_name("an alias").text) : n.name;
    node->names.push_back(std::move(n));
  }
  reject_context_modifier();
  expect_block_end();
  body.push_back(std::move(node));
}

}  // namespace parser_internal

bool parse_template(uint32_t file, const std::vector<Token>& tokens, ast::Body& body, Diagnostic& error) {
  parser_internal::Parser parser(file, tokens, error);
  return parser.run(body);
}

}  // namespace kforge::tmpl