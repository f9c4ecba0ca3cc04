#include "template/parser.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <optional>

#include "support/text.h"
#include "template/value_ops.h"

namespace kforge::tmpl {

namespace {

using namespace ast;

struct ParseAbort {};

// How deep the AST of one template may grow: nested blocks, brackets, unary operators and the operands of a
// left-associative chain (`a + b + c` is a tree one level deeper per operand) all count. The checker, the
// renderer and the AST's destructors recurse over the tree, so hostile input must not make it deeper than
// the stack allows (docs/fuzzing.md, "Limits"); real templates stay below 30.
constexpr int kMaxNesting = 128;

/// What `a if c` yields when c is false: Jinja's plain (lenient) Undefined whatever the environment says.
Value missing_else_value(SourceLoc loc) {
  auto info = std::make_shared<UndefinedInfo>();
  info->loc = loc;
  info->reason = "the inline if-expression evaluated to false and has no 'else' branch";
  info->lenient = true;
  return Value::undefined(std::move(info));
}

// Python methods people write out of habit, and what to use instead (Note [no method calls]).
std::optional<std::string> method_call_hint(std::string_view method) {
  static const std::pair<std::string_view, std::string_view> kFilters[] = {
      {"items", "items"}, {"upper", "upper"}, {"lower", "lower"}, {"title", "title"},
      {"capitalize", "capitalize"}, {"strip", "trim"}, {"replace", "replace"}, {"join", "join"},
      {"count", "length"}, {"sort", "sort"}, {"reverse", "reverse"}, {"format", "format"},
  };
  for (const auto& [name, filter] : kFilters) {
    if (method == name) {
      if (name == "join") return std::string("use the 'join' filter: `list | join(separator)`");
      if (name == "format") return std::string("use '~' to concatenate strings");
      return fmt::format("use the '{}' filter: `value | {}`", filter, filter);
    }
  }
  if (method == "keys") return std::string("iterate the map directly (`for k in map`) or use `map | list`");
  if (method == "values") return std::string("use `for k, v in map | items`");
  if (method == "get") return std::string("use `map[key] | default(value)` or `map.key | default(value)`");
  static const std::string_view kMutators[] = {"append", "extend", "insert", "remove", "pop", "popitem",
                                               "update", "setdefault", "clear", "copy"};
  for (std::string_view m : kMutators) {
    if (method == m) return std::string("templates cannot modify lists or maps; use a namespace and `{% set ns.attr = ... %}`");
  }
  static const std::string_view kStringMethods[] = {
      "casefold", "center", "encode", "endswith", "expandtabs", "find", "format_map", "index", "isalnum",
      "isalpha", "isdigit", "islower", "isspace", "istitle", "isupper", "ljust", "lstrip", "partition",
      "rfind", "rindex", "rjust", "rpartition", "rsplit", "rstrip", "split", "splitlines", "startswith",
      "swapcase", "translate", "zfill"};
  for (std::string_view m : kStringMethods) {
    if (method == m) return std::string("use filters and tests instead (e.g. `trim`, `replace`, `x is in(...)`)");
  }
  return std::nullopt;
}

const char* const kStatementKeywords[] = {"if", "elif", "else", "endif", "for", "endfor", "set", "endset",
                                          "macro", "endmacro", "include", "import", "from", "raw", "endraw",
                                          "print"};

class Parser {
 public:
  Parser(uint32_t file, const std::vector<Token>& tokens, Diagnostic& error)
      : file_(file), tokens_(tokens), error_(error) {}

  bool run(Body& body) {
    try {
      parse_body(body, {});
      return true;
    } catch (const ParseAbort&) {
      return false;
    }
  }

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
  void advance() {
    if (pos_ + 1 < tokens_.size()) ++pos_;
  }
  bool is_op(std::string_view op, size_t n = 0) const {
    const Token& t = peek(n);
    return t.kind == TokenKind::kOperator && t.text == op;
  }
  bool is_name(std::string_view name, size_t n = 0) const {
    const Token& t = peek(n);
    return t.kind == TokenKind::kName && t.text == name;
  }
  bool skip_op(std::string_view op) {
    if (!is_op(op)) return false;
    advance();
    return true;
  }
  bool skip_name(std::string_view name) {
    if (!is_name(name)) return false;
    advance();
    return true;
  }

  static std::string describe(const Token& t) {
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

  [[noreturn]] void fail(SourceLoc loc, std::string message, std::vector<DiagNote> notes = {}) {
    Diagnostic d{Severity::kError, loc, std::move(message), std::move(notes)};
    if (in_variable_) {
      d.note("to output '{{' literally (e.g. C++ brace initialisation), use {% raw %}...{% endraw %} or {{ '{{' }}");
    }
    error_ = std::move(d);
    throw ParseAbort{};
  }
  [[noreturn]] void fail_here(std::string message) { fail(here(), std::move(message)); }

  void expect_op(std::string_view op) {
    if (!skip_op(op)) fail_here(fmt::format("expected '{}', got {}", op, describe(cur())));
  }
  const Token& expect_name(std::string_view what = "a name") {
    if (cur().kind != TokenKind::kName) fail_here(fmt::format("expected {}, got {}", what, describe(cur())));
    const Token& t = cur();
    advance();
    return t;
  }
  void expect_block_end() {
    if (cur().kind == TokenKind::kBlockEnd) {
      advance();
      return;
    }
    fail_here(fmt::format("expected '%}}', got {}", describe(cur())));
  }

  // ---- statements ----

  /// Parses nodes until a `{%` tag whose keyword is in `end_keywords` (left unconsumed, positioned on the
  /// keyword) or the end of the template (an error when end keywords were expected).
  void parse_body(Body& body, std::initializer_list<std::string_view> end_keywords) {
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

  void parse_statement(Body& body) {
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

  [[noreturn]] void reject_statement(const Token& kw) {
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

  /// Parses `body` up to one of `ends` and returns the keyword found (positioned after it).
  std::string_view parse_block_body(Body& body, std::initializer_list<std::string_view> ends) {
    parse_body(body, ends);
    const std::string_view end = cur().text;
    advance();
    return end;
  }

  void parse_if(Body& body) {
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

  Target parse_target(bool allow_tuple, bool allow_namespace, std::initializer_list<std::string_view> end_names) {
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

  void parse_for(Body& body) {
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

  void parse_set(Body& body) {
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

  void parse_macro(Body& body) {
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

  void reject_context_modifier() {
    if ((is_name("with") || is_name("without")) && is_name("context", 1)) {
      fail(here(), fmt::format("'{} context' is not supported", cur().text),
           {{SourceLoc{}, "includes always see the current variables; imports never do"}});
    }
  }

  void parse_include(Body& body) {
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

  void parse_import(Body& body) {
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

  void parse_from(Body& body) {
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

  // ---- expressions (Jinja's parser.py, production by production) ----

  bool is_tuple_end(std::initializer_list<std::string_view> extra_end_names) const {
    const TokenKind k = cur().kind;
    if (k == TokenKind::kVariableEnd || k == TokenKind::kBlockEnd || is_op(")")) return true;
    for (std::string_view n : extra_end_names) {
      if (is_name(n)) return true;
    }
    return false;
  }

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

  ExprPtr parse_expression(bool with_condexpr) {
    Nesting nesting(*this);
    return with_condexpr ? parse_condexpr() : parse_or();
  }

  ExprPtr parse_condexpr() {
    ExprPtr expr = parse_or();
    Nesting chain(*this, 0);
    while (is_name("if")) {
      chain.deeper();
      auto node = std::make_unique<CondExpr>(here());
      advance();
      node->cond = parse_or();
      if (skip_name("else")) node->else_expr = parse_condexpr();
      else node->missing_else = missing_else_value(node->loc);
      node->then_expr = std::move(expr);
      expr = std::move(node);
    }
    return expr;
  }

  ExprPtr parse_or() {
    ExprPtr left = parse_and();
    Nesting chain(*this, 0);
    while (is_name("or")) {
      chain.deeper();
      const SourceLoc at = here();
      advance();
      left = std::make_unique<BinaryExpr>(at, BinaryOp::kOr, std::move(left), parse_and());
    }
    return left;
  }

  ExprPtr parse_and() {
    ExprPtr left = parse_not();
    Nesting chain(*this, 0);
    while (is_name("and")) {
      chain.deeper();
      const SourceLoc at = here();
      advance();
      left = std::make_unique<BinaryExpr>(at, BinaryOp::kAnd, std::move(left), parse_not());
    }
    return left;
  }

  ExprPtr parse_not() {
    if (is_name("not")) {
      Nesting nesting(*this);
      const SourceLoc at = here();
      advance();
      return std::make_unique<UnaryExpr>(at, UnaryOp::kNot, parse_not());
    }
    return parse_compare();
  }

  ExprPtr parse_compare() {
    ExprPtr first = parse_math1();
    std::unique_ptr<CompareExpr> cmp;
    while (true) {
      const SourceLoc at = here();
      std::optional<CompareOp> op;
      if (cur().kind == TokenKind::kOperator) {
        const std::string_view t = cur().text;
        if (t == "==") op = CompareOp::kEq;
        else if (t == "!=") op = CompareOp::kNe;
        else if (t == "<") op = CompareOp::kLt;
        else if (t == "<=") op = CompareOp::kLe;
        else if (t == ">") op = CompareOp::kGt;
        else if (t == ">=") op = CompareOp::kGe;
        if (op) advance();
      } else if (is_name("in")) {
        op = CompareOp::kIn;
        advance();
      } else if (is_name("not") && is_name("in", 1)) {
        op = CompareOp::kNotIn;
        advance();
        advance();
      }
      if (!op) break;
      if (!cmp) {
        const SourceLoc first_loc = first->loc;
        cmp = std::make_unique<CompareExpr>(first_loc, std::move(first));
      }
      cmp->rest.push_back({*op, at, parse_math1()});
    }
    if (cmp) return cmp;
    return first;
  }

  ExprPtr parse_math1() {
    ExprPtr left = parse_concat();
    Nesting chain(*this, 0);
    while (is_op("+") || is_op("-")) {
      chain.deeper();
      const BinaryOp op = cur().text == "+" ? BinaryOp::kAdd : BinaryOp::kSub;
      const SourceLoc at = here();
      advance();
      left = std::make_unique<BinaryExpr>(at, op, std::move(left), parse_concat());
    }
    return left;
  }

  ExprPtr parse_concat() {
    ExprPtr left = parse_math2();
    Nesting chain(*this, 0);
    while (is_op("~")) {
      chain.deeper();
      const SourceLoc at = here();
      advance();
      left = std::make_unique<BinaryExpr>(at, BinaryOp::kConcat, std::move(left), parse_math2());
    }
    return left;
  }

  ExprPtr parse_math2() {
    ExprPtr left = parse_pow();
    Nesting chain(*this, 0);
    while (true) {
      BinaryOp op;
      if (is_op("*")) op = BinaryOp::kMul;
      else if (is_op("/")) op = BinaryOp::kDiv;
      else if (is_op("//")) op = BinaryOp::kFloorDiv;
      else if (is_op("%")) op = BinaryOp::kMod;
      else break;
      chain.deeper();
      const SourceLoc at = here();
      advance();
      left = std::make_unique<BinaryExpr>(at, op, std::move(left), parse_pow());
    }
    return left;
  }

  ExprPtr parse_pow() {
    ExprPtr left = parse_unary(true);
    Nesting chain(*this, 0);
    while (is_op("**")) {
      chain.deeper();
      const SourceLoc at = here();
      advance();
      left = std::make_unique<BinaryExpr>(at, BinaryOp::kPow, std::move(left), parse_unary(true));
    }
    return left;
  }

  ExprPtr parse_unary(bool with_filter) {
    ExprPtr node;
    const SourceLoc at = here();
    Nesting nesting(*this, 0);
    if (is_op("-")) {
      nesting.deeper();
      advance();
      node = std::make_unique<UnaryExpr>(at, UnaryOp::kNeg, parse_unary(false));
    } else if (is_op("+")) {
      nesting.deeper();
      advance();
      node = std::make_unique<UnaryExpr>(at, UnaryOp::kPos, parse_unary(false));
    } else {
      node = parse_primary();
    }
    node = parse_postfix(std::move(node));
    if (with_filter) node = parse_filter_expr(std::move(node));
    return node;
  }

  ExprPtr parse_primary() {
    const Token& t = cur();
    const SourceLoc at = here();
    switch (t.kind) {
      case TokenKind::kName: {
        advance();
        if (t.text == "true" || t.text == "True") return std::make_unique<ConstExpr>(at, Value(true));
        if (t.text == "false" || t.text == "False") return std::make_unique<ConstExpr>(at, Value(false));
        if (t.text == "none" || t.text == "None") return std::make_unique<ConstExpr>(at, Value());
        return std::make_unique<NameExpr>(at, std::string(t.text));
      }
      case TokenKind::kString: {
        std::string text;
        while (cur().kind == TokenKind::kString) {  // adjacent literals concatenate, as in Python
          std::string part, error;
          if (!decode_string_literal(cur().text, part, error)) fail_here(error);
          text += part;
          advance();
        }
        return std::make_unique<ConstExpr>(at, Value(std::move(text)));
      }
      case TokenKind::kInteger: {
        advance();
        return std::make_unique<ConstExpr>(at, parse_integer(t));
      }
      case TokenKind::kFloat: {
        advance();
        std::string digits;
        for (char c : t.text) {
          if (c != '_') digits += c;
        }
        return std::make_unique<ConstExpr>(at, Value(std::strtod(digits.c_str(), nullptr)));
      }
      case TokenKind::kOperator:
        if (t.text == "(") {
          advance();
          ExprPtr e = parse_tuple(true, {}, true, at);
          expect_op(")");
          return e;
        }
        if (t.text == "[") return parse_list();
        if (t.text == "{") return parse_dict();
        break;
      default:
        break;
    }
    fail_here(fmt::format("unexpected {}", describe(t)));
  }

  Value parse_integer(const Token& t) {
    std::string digits;
    for (char c : t.text) {
      if (c != '_') digits += c;
    }
    int base = 10;
    std::string_view body = digits;
    if (body.size() > 2 && body[0] == '0') {
      const char p = static_cast<char>(body[1] | 0x20);
      base = p == 'x' ? 16 : p == 'o' ? 8 : p == 'b' ? 2 : 10;
      if (base != 10) body.remove_prefix(2);
    }
    int64_t v = 0;
    auto [ptr, ec] = std::from_chars(body.data(), body.data() + body.size(), v, base);
    if (ec != std::errc() || ptr != body.data() + body.size()) {
      fail(loc_of(t), fmt::format("integer literal '{}' does not fit in 64 bits", t.text));
    }
    return Value(v);
  }

  ExprPtr parse_list() {
    auto node = std::make_unique<ListExpr>(ExprKind::kList, here());
    advance();
    while (!is_op("]")) {
      if (!node->items.empty()) expect_op(",");
      if (is_op("]")) break;
      node->items.push_back(parse_expression(true));
    }
    advance();
    return node;
  }

  ExprPtr parse_dict() {
    auto node = std::make_unique<DictExpr>(here());
    advance();
    while (!is_op("}")) {
      if (!node->items.empty()) expect_op(",");
      if (is_op("}")) break;
      ExprPtr key = parse_expression(true);
      expect_op(":");
      ExprPtr value = parse_expression(true);
      node->items.emplace_back(std::move(key), std::move(value));
    }
    advance();
    return node;
  }

  ExprPtr parse_postfix(ExprPtr node) {
    Nesting chain(*this, 0);
    while (true) {
      if (is_op(".") || is_op("[")) {
        chain.deeper();
        node = parse_subscript(std::move(node));
      } else if (is_op("(")) {
        chain.deeper();
        node = parse_call(std::move(node));
      } else {
        break;
      }
    }
    return node;
  }

  ExprPtr parse_filter_expr(ExprPtr node) {
    Nesting chain(*this, 0);
    while (true) {
      if (is_op("|")) {
        chain.deeper();
        advance();
        node = parse_filter_call(std::move(node));
      } else if (is_name("is")) {
        chain.deeper();
        node = parse_test(std::move(node));
      } else if (is_op("(")) {
        chain.deeper();
        node = parse_call(std::move(node));
      } else {
        break;
      }
    }
    return node;
  }

  ExprPtr parse_subscript(ExprPtr node) {
    const SourceLoc at = here();
    if (skip_op(".")) {
      const Token& t = cur();
      if (t.kind == TokenKind::kName) {
        advance();
        return std::make_unique<GetAttrExpr>(loc_of(t), std::move(node), std::string(t.text));
      }
      if (t.kind == TokenKind::kInteger) {
        advance();
        return std::make_unique<GetItemExpr>(loc_of(t), std::move(node), std::make_unique<ConstExpr>(loc_of(t), parse_integer(t)));
      }
      fail_here(fmt::format("expected an attribute name or number after '.', got {}", describe(t)));
    }
    advance();  // '['
    ExprPtr parts[3];
    int colons = 0;
    while (!is_op("]")) {
      if (is_op(":")) {
        if (++colons > 2) fail_here("too many ':' in slice");
        advance();
        continue;
      }
      if (is_op(",")) fail_here("tuple subscripts are not supported");
      if (parts[colons]) fail_here(fmt::format("expected ']', got {}", describe(cur())));
      parts[colons] = parse_expression(true);
    }
    advance();
    if (colons == 0) {
      if (!parts[0]) fail(at, "expected an index inside '[]'");
      return std::make_unique<GetItemExpr>(at, std::move(node), std::move(parts[0]));
    }
    auto slice = std::make_unique<SliceExpr>(at, std::move(node));
    slice->start = std::move(parts[0]);
    slice->stop = std::move(parts[1]);
    slice->step = std::move(parts[2]);
    return slice;
  }

  void parse_call_args(ArgList& args) {
    expect_op("(");
    bool require_comma = false;
    while (!is_op(")")) {
      if (require_comma) {
        expect_op(",");
        if (is_op(")")) break;
      }
      if (is_op("*") || is_op("**")) fail_here("'*args' and '**kwargs' in calls are not supported");
      if (cur().kind == TokenKind::kName && is_op("=", 1)) {
        KeywordArg kw;
        kw.loc = here();
        kw.name = std::string(cur().text);
        for (const KeywordArg& other : args.keywords) {
          if (other.name == kw.name) fail(kw.loc, fmt::format("keyword argument '{}' repeated", kw.name));
        }
        advance();
        advance();
        kw.value = parse_expression(true);
        args.keywords.push_back(std::move(kw));
      } else {
        if (!args.keywords.empty()) fail_here("positional argument follows keyword argument");
        args.positional.push_back(parse_expression(true));
      }
      require_comma = true;
    }
    advance();
  }

  ExprPtr parse_call(ExprPtr callee) {
    SourceLoc at = here();
    if (callee->kind == ExprKind::kName || callee->kind == ExprKind::kGetAttr) at = callee->loc;
    if (callee->kind == ExprKind::kGetAttr) {
      const auto& getattr = static_cast<const GetAttrExpr&>(*callee);
      const bool on_import = getattr.object->kind == ExprKind::kName &&
                             std::find(import_aliases_.begin(), import_aliases_.end(),
                                       static_cast<const NameExpr&>(*getattr.object).name) != import_aliases_.end();
      if (!on_import) {
        if (auto hint = method_call_hint(getattr.attr)) {
          in_variable_ = false;  // not a delimiter problem: no {% raw %} hint
          fail(getattr.loc, fmt::format("method calls are not supported: '.{}()'", getattr.attr),
               {{SourceLoc{}, *hint}});
        }
      }
    }
    auto node = std::make_unique<CallExpr>(at, std::move(callee));
    parse_call_args(node->args);
    return node;
  }

  std::unique_ptr<FilterExpr> parse_filter_call(ExprPtr input) {
    const Token& name = expect_name("a filter name");
    std::string full(name.text);
    while (is_op(".")) {
      advance();
      full += ".";
      full += expect_name().text;
    }
    auto node = std::make_unique<FilterExpr>(loc_of(name), std::move(input), std::move(full));
    if (is_op("(")) parse_call_args(node->args);
    return node;
  }

  ExprPtr parse_test(ExprPtr input) {
    advance();  // 'is'
    const bool negated = skip_name("not");
    const Token& name = expect_name("a test name");
    std::string full(name.text);
    auto node = std::make_unique<TestExpr>(loc_of(name), std::move(input), std::move(full));
    node->negated = negated;
    if (is_op("(")) {
      parse_call_args(node->args);
    } else {
      const TokenKind k = cur().kind;
      const bool starts_arg = k == TokenKind::kName || k == TokenKind::kString || k == TokenKind::kInteger ||
                              k == TokenKind::kFloat || is_op("(") || is_op("[") || is_op("{");
      if (starts_arg && !is_name("else") && !is_name("or") && !is_name("and")) {
        if (is_name("is")) fail_here("tests cannot be chained with 'is'");
        node->args.positional.push_back(parse_postfix(parse_primary()));
      }
    }
    return node;
  }

  uint32_t file_;
  const std::vector<Token>& tokens_;
  Diagnostic& error_;
  size_t pos_ = 0;
  bool in_variable_ = false;
  int nesting_ = 0;  // see Nesting
  std::vector<OpenBlock> blocks_;
  std::vector<std::string> import_aliases_;
};

}  // namespace

bool parse_template(uint32_t file, const std::vector<Token>& tokens, Body& body, Diagnostic& error) {
  Parser parser(file, tokens, error);
  return parser.run(body);
}

}  // namespace kforge::tmpl
