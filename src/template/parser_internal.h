// The Parser of parse_template (parser.h), shared by the files that define its members: parser.cpp (the token
// helpers and the statements: {% if %}, {% for %}, {% set %}, {% macro %}, {% include %}, imports) and
// parser_expressions.cpp (the expressions, production by production). Internal to template/.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <optional>

#include "support/text.h"
#include "template/parser.h"
#include "template/value_ops.h"

namespace kforge::tmpl::parser_internal {

using namespace ast;

struct ParseAbort {};

// How deep the AST of one template may grow: nested blocks, brackets, unary operators and the operands of a
// left-associative chain (`a + b + c` is a tree one level deeper per operand) all count. The checker, the
// renderer and the AST's destructors recurse over the tree, so hostile input must not make it deeper than
// the stack allows (docs/fuzzing.md, "Limits"); real templates stay below 30.
constexpr int kMaxNesting = 128;

class Parser {
 public:
  Parser(uint32_t file, const std::vector<Token>& tokens, Diagnostic& error)
      : file_(file), tokens_(tokens), error_(error) {}

  bool run(Body& body);

 private:
  /// Counts levels of the tree under construction against kMaxNesting for as long as it lives; deeper() adds one
  /// more (the next operand of a chain).
  class Nesting {
   public:
    explicit Nesting(Parser& parser, int levels = 1) : parser_(parser) {
      for (int i = 0; i < levels; ++i) deeper();
    }
    ~Nesting() { parser_.nesting_ -= added_; }
    Nesting(const Nesting&) = delete;
    Nesting& operator=(const Nesting&) = delete;
    void deeper() {
      ++added_;
      if (++parser_.nesting_ > kMaxNesting) {
        parser_.fail_here(fmt::format("template nested too deeply: more than {} levels of blocks, brackets and operators",
                                      kMaxNesting));
      }
    }

   private:
    Parser& parser_;
    int added_ = 0;
  };

  struct OpenBlock {
    std::string_view keyword;
    SourceLoc loc;
  };

  // ---- token helpers ----
  const Token& cur() const { return tokens_[pos_]; }
  const Token& peek(size_t n = 1) const { return tokens_[std::min(pos_ + n, tokens_.size() - 1)]; }
  SourceLoc loc_of(const Token& t) const { return {file_, t.offset}; }
  SourceLoc here() const { return loc_of(cur()); }
  void advance();
  bool is_op(std::string_view op, size_t n = 0) const;
  bool is_name(std::string_view name, size_t n = 0) const;
  bool skip_op(std::string_view op);
  bool skip_name(std::string_view name);

  static std::string describe(const Token& t);

  [[noreturn]] void fail(SourceLoc loc, std::string message, std::vector<DiagNote> notes = {});
  [[noreturn]] void fail_here(std::string message) { fail(here(), std::move(message)); }

  void expect_op(std::string_view op);
  const Token& expect_name(std::string_view what = "a name");
  void expect_block_end();

  // ---- statements ----

  /// Parses nodes until a `{%` tag whose keyword is in `end_keywords` (left unconsumed, positioned on the
  /// keyword) or the end of the template (an error when end keywords were expected).
  void parse_body(Body& body, std::initializer_list<std::string_view> end_keywords);

  void parse_statement(Body& body);

  [[noreturn]] void reject_statement(const Token& kw);

  /// Parses `body` up to one of `ends` and returns the keyword found (positioned after it).
  std::string_view parse_block_body(Body& body, std::initializer_list<std::string_view> ends);

  void parse_if(Body& body);

  Target parse_target(bool allow_tuple, bool allow_namespace, std::initializer_list<std::string_view> end_names);

  void parse_for(Body& body);

  void parse_set(Body& body);

  void parse_macro(Body& body);

  void reject_context_modifier();

  void parse_include(Body& body);

  void parse_import(Body& body);

  void parse_from(Body& body);

  // ---- expressions (Jinja's parser.py, production by production) ----

  bool is_tuple_end(std::initializer_list<std::string_view> extra_end_names) const;

  ExprPtr parse_tuple(bool with_condexpr, std::initializer_list<std::string_view> extra_end_names,
                      bool explicit_parentheses, SourceLoc paren_loc = {}) {
    std::vector<ExprPtr> items;
    bool is_tuple = false;
    const SourceLoc at = explicit_parentheses ? paren_loc : here();
    while (true) {
      if (!items.empty()) expect_op(",");
      if (is_tuple_end(extra_end_names)) break;
      items.push_back(parse_expression(with_condexpr));
      if (is_op(",")) {
        is_tuple = true;
      } else {
        break;
      }
    }
    if (!is_tuple) {
      if (!items.empty()) return std::move(items[0]);
      if (!explicit_parentheses) fail_here(fmt::format("expected an expression, got {}", describe(cur())));
    }
    auto tuple = std::make_unique<ListExpr>(ExprKind::kTuple, at);
    tuple->items = std::move(items);
    return tuple;
  }

  ExprPtr parse_expression(bool with_condexpr);

  ExprPtr parse_condexpr();

  ExprPtr parse_or();

  ExprPtr parse_and();

  ExprPtr parse_not();

  ExprPtr parse_compare();

  ExprPtr parse_math1();

  ExprPtr parse_concat();

  ExprPtr parse_math2();

  ExprPtr parse_pow();

  ExprPtr parse_unary(bool with_filter);

  ExprPtr parse_primary();

  Value parse_integer(const Token& t);

  ExprPtr parse_list();

  ExprPtr parse_dict();

  ExprPtr parse_postfix(ExprPtr node);

  ExprPtr parse_filter_expr(ExprPtr node);

  ExprPtr parse_subscript(ExprPtr node);

  void parse_call_args(ArgList& args);

  ExprPtr parse_call(ExprPtr callee);

  std::unique_ptr<FilterExpr> parse_filter_call(ExprPtr input);

  ExprPtr parse_test(ExprPtr input);

  uint32_t file_;
  const std::vector<Token>& tokens_;
  Diagnostic& error_;
  size_t pos_ = 0;
  bool in_variable_ = false;
  int nesting_ = 0;  // see Nesting
  std::vector<OpenBlock> blocks_;
  std::vector<std::string> import_aliases_;
};

}  // namespace kforge::tmpl::parser_internal
