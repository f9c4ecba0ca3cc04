// The template parser's expressions (parser_internal.h): tuples, conditional expressions, boolean and comparison
// operators, arithmetic, literals, subscripts, calls, filters and tests, following Jinja's parser.py production
// by production.
#include "template/parser_internal.h"

namespace kforge::tmpl::parser_internal {

namespace {

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

}  // namespace

bool Parser::is_tuple_end(std::initializer_list<std::string_view> extra_end_names) const {
  const TokenKind k = cur().kind;
  if (k == TokenKind::kVariableEnd || k == TokenKind::kBlockEnd || is_op(")")) return true;
  for (std::string_view n : extra_end_names) {
    if (is_name(n)) return true;
  }
  return false;
}

ExprPtr Parser::parse_expression(bool with_condexpr) {
  Nesting nesting(*this);
  return with_condexpr ? parse_condexpr() : parse_or();
}

ExprPtr Parser::parse_condexpr() {
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

ExprPtr Parser::parse_or() {
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

ExprPtr Parser::parse_and() {
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

ExprPtr Parser::parse_not() {
  if (is_name("not")) {
    Nesting nesting(*this);
    const SourceLoc at = here();
    advance();
    return std::make_unique<UnaryExpr>(at, UnaryOp::kNot, parse_not());
  }
  return parse_compare();
}

ExprPtr Parser::parse_compare() {
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

ExprPtr Parser::parse_math1() {
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

ExprPtr Parser::parse_concat() {
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

ExprPtr Parser::parse_math2() {
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

ExprPtr Parser::parse_pow() {
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

ExprPtr Parser::parse_unary(bool with_filter) {
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

ExprPtr Parser::parse_primary() {
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

Value Parser::parse_integer(const Token& t) {
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

ExprPtr Parser::parse_list() {
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

ExprPtr Parser::parse_dict() {
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

ExprPtr Parser::parse_postfix(ExprPtr node) {
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

ExprPtr Parser::parse_filter_expr(ExprPtr node) {
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

ExprPtr Parser::parse_subscript(ExprPtr node) {
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

void Parser::parse_call_args(ArgList& args) {
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

ExprPtr Parser::parse_call(ExprPtr callee) {
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

std::unique_ptr<FilterExpr> Parser::parse_filter_call(ExprPtr input) {
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

ExprPtr Parser::parse_test(ExprPtr input) {
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

}  // namespace kforge::tmpl::parser_internal
