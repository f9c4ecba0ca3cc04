#include "scalar_expr/expr_parser.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <span>

#include "scalar_expr/expr_builtins.h"
#include "scalar_expr/scalar_locator.h"
#include "support/text.h"
#include "support/ascii.h"

namespace kforge::expr {

Expression::Expression(const Expression& other)
    : text(other.text), loc(other.loc), root(other.root ? clone(*other.root) : nullptr) {}

Expression& Expression::operator=(const Expression& other) {
  if (this != &other) {
    text = other.text;
    loc = other.loc;
    root = other.root ? clone(*other.root) : nullptr;
  }
  return *this;
}

namespace {

using ascii::is_digit;
using ascii::is_ident_char;
using ascii::is_ident_start;

enum class TokenKind { kNumber, kName, kPunct, kEnd };

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string_view text;
  uint32_t offset = 0;
};

// Thrown after the error has been reported; caught in parse_expression.
struct ParseFailed {};

// Limits that keep every recursive walk over a tree (checker, emitters, destructor) shallow.
constexpr int kMaxDepth = 200;
constexpr size_t kMaxLength = 4096;

int tree_depth(const Node& node) {
  int deepest = 0;
  for (const NodePtr& child : node.operands) deepest = std::max(deepest, tree_depth(*child));
  return deepest + 1;
}


class Parser {
 public:
  Parser(std::string_view text, SourceLoc loc, const SourceManager* sources, DiagnosticEngine& diags)
      : text_(text), locator_(text, loc, sources), diags_(diags) {}

  NodePtr parse() {
    skip_space();
    if (pos_ == text_.size()) fail(0, "empty expression");
    if (text_.size() > kMaxLength) fail(0, fmt::format("expression is longer than {} characters", kMaxLength));
    advance();
    NodePtr root = parse_expr();
    if (tok_.kind != TokenKind::kEnd) fail(tok_.offset, fmt::format("unexpected {} after the expression", describe(tok_)));
    if (tree_depth(*root) > kMaxDepth) fail(0, "expression is nested too deeply");
    return root;
  }

 private:
  // ---- diagnostics ----

  [[noreturn]] void fail(uint32_t offset, std::string message, std::vector<DiagNote> notes = {}) {
    Diagnostic diag{Severity::kError, locator_.at(offset), std::move(message), std::move(notes)};
    diags_.report(std::move(diag));
    throw ParseFailed{};
  }

  static std::string describe(const Token& tok) {
    if (tok.kind == TokenKind::kEnd) return "end of input";
    return fmt::format("'{}'", tok.text);
  }

  // ---- lexer ----

  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  void advance() {
    skip_space();
    const auto start = static_cast<uint32_t>(pos_);
    if (pos_ == text_.size()) {
      tok_ = {TokenKind::kEnd, {}, start};
      return;
    }
    const char c = text_[pos_];
    if (is_digit(c) || (c == '.' && pos_ + 1 < text_.size() && is_digit(text_[pos_ + 1]))) {
      lex_number();
      return;
    }
    if (is_ident_start(c)) {
      while (pos_ < text_.size() && is_ident_char(text_[pos_])) ++pos_;
      tok_ = {TokenKind::kName, text_.substr(start, pos_ - start), start};
      return;
    }
    static constexpr std::string_view kTwoChar[] = {"==", "!=", "<=", ">=", "&&", "||"};
    for (std::string_view op : kTwoChar) {
      if (text_.substr(pos_, 2) == op) {
        pos_ += 2;
        tok_ = {TokenKind::kPunct, op, start};
        return;
      }
    }
    if (c == '=' || c == '&' || c == '|') {
      const std::string doubled(2, c);
      fail(start, fmt::format("unexpected '{}' in expression", c), {{{}, fmt::format("did you mean '{}'?", doubled)}});
    }
    if (std::string_view("+-*/%<>!?:(),").find(c) != std::string_view::npos) {
      ++pos_;
      tok_ = {TokenKind::kPunct, text_.substr(start, 1), start};
      return;
    }
    if (std::isprint(static_cast<unsigned char>(c))) fail(start, fmt::format("unexpected character '{}' in expression", c));
    fail(start, fmt::format("unexpected byte 0x{:02x} in expression", static_cast<unsigned char>(c)));
  }

  void lex_number() {
    const size_t start = pos_;
    bool is_float = false;
    bool valid = true;
    while (pos_ < text_.size() && is_digit(text_[pos_])) ++pos_;
    if (pos_ < text_.size() && text_[pos_] == '.') {
      is_float = true;
      ++pos_;
      while (pos_ < text_.size() && is_digit(text_[pos_])) ++pos_;
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      is_float = true;
      ++pos_;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
      if (pos_ == text_.size() || !is_digit(text_[pos_])) valid = false;
      while (pos_ < text_.size() && is_digit(text_[pos_])) ++pos_;
    }
    const bool suffixed = pos_ < text_.size() && is_ident_char(text_[pos_]);
    while (pos_ < text_.size() && (is_ident_char(text_[pos_]) || text_[pos_] == '.')) ++pos_;
    const std::string_view spelled = text_.substr(start, pos_ - start);
    const auto offset = static_cast<uint32_t>(start);
    if (suffixed && valid && (spelled.back() == 'f' || spelled.back() == 'F') &&
        spelled.find_first_of(".eE") != std::string_view::npos) {
      fail(offset, fmt::format("invalid number '{}'", spelled),
           {{{}, "literals take no suffix: their type follows the other operand"}});
    }
    if (suffixed || !valid) fail(offset, fmt::format("invalid number '{}'", spelled));
    tok_ = {TokenKind::kNumber, spelled, offset};
    number_is_float_ = is_float;
  }

  // ---- nodes ----

  NodePtr make(NodeKind kind, uint32_t offset) {
    auto node = std::make_unique<Node>();
    node->kind = kind;
    node->offset = offset;
    node->loc = locator_.at(offset);
    return node;
  }

  bool at_punct(std::string_view p) const { return tok_.kind == TokenKind::kPunct && tok_.text == p; }

  struct DepthGuard {
    Parser& parser;
    explicit DepthGuard(Parser& p, uint32_t offset) : parser(p) {
      if (++parser.depth_ > kMaxDepth) parser.fail(offset, "expression is nested too deeply");
    }
    ~DepthGuard() { --parser.depth_; }
  };

  // ---- grammar ----

  NodePtr parse_expr() {
    DepthGuard guard(*this, tok_.offset);
    NodePtr cond = parse_or();
    if (!at_punct("?")) return cond;
    const Token question = tok_;
    advance();
    NodePtr if_true = parse_expr();
    if (!at_punct(":")) {
      fail(tok_.offset, fmt::format("expected ':' in conditional expression, got {}", describe(tok_)),
           {{locator_.at(question.offset), "'?' is here"}});
    }
    advance();
    NodePtr if_false = parse_expr();
    NodePtr node = make(NodeKind::kSelect, question.offset);
    node->name = "?:";
    node->operands.push_back(std::move(cond));
    node->operands.push_back(std::move(if_true));
    node->operands.push_back(std::move(if_false));
    return node;
  }

  // Binary nodes are located at their operator, where a caret explains an operand mismatch best.
  NodePtr binary(BinaryOp op, uint32_t op_offset, NodePtr lhs, NodePtr rhs) {
    NodePtr node = make(NodeKind::kBinary, op_offset);
    node->binary = op;
    node->operands.push_back(std::move(lhs));
    node->operands.push_back(std::move(rhs));
    return node;
  }

  NodePtr parse_or() {
    NodePtr lhs = parse_and();
    while (at_punct("||")) {
      const uint32_t at = tok_.offset;
      advance();
      lhs = binary(BinaryOp::kOr, at, std::move(lhs), parse_and());
    }
    return lhs;
  }

  NodePtr parse_and() {
    NodePtr lhs = parse_equality();
    while (at_punct("&&")) {
      const uint32_t at = tok_.offset;
      advance();
      lhs = binary(BinaryOp::kAnd, at, std::move(lhs), parse_equality());
    }
    return lhs;
  }

  // Comparisons do not chain: `a < b < c` means (a < b) < c in C, which is never what a formula means.
  // (`a < b == c < d` compares two comparisons and is fine.)
  void reject_chained_comparison(bool equality) {
    static constexpr std::string_view kEquality[] = {"==", "!="};
    static constexpr std::string_view kRelational[] = {"<", "<=", ">", ">="};
    for (std::string_view op : equality ? std::span<const std::string_view>(kEquality) : std::span<const std::string_view>(kRelational)) {
      if (at_punct(op)) fail(tok_.offset, "comparison operators cannot be chained; combine comparisons with '&&'");
    }
  }

  NodePtr parse_equality() {
    NodePtr lhs = parse_relation();
    BinaryOp op;
    if (at_punct("==")) {
      op = BinaryOp::kEq;
    } else if (at_punct("!=")) {
      op = BinaryOp::kNe;
    } else {
      return lhs;
    }
    const uint32_t at = tok_.offset;
    advance();
    NodePtr node = binary(op, at, std::move(lhs), parse_relation());
    reject_chained_comparison(/*equality=*/true);
    return node;
  }

  NodePtr parse_relation() {
    NodePtr lhs = parse_additive();
    BinaryOp op;
    if (at_punct("<")) {
      op = BinaryOp::kLt;
    } else if (at_punct("<=")) {
      op = BinaryOp::kLe;
    } else if (at_punct(">")) {
      op = BinaryOp::kGt;
    } else if (at_punct(">=")) {
      op = BinaryOp::kGe;
    } else {
      return lhs;
    }
    const uint32_t at = tok_.offset;
    advance();
    NodePtr node = binary(op, at, std::move(lhs), parse_additive());
    reject_chained_comparison(/*equality=*/false);
    return node;
  }

  NodePtr parse_additive() {
    NodePtr lhs = parse_term();
    while (at_punct("+") || at_punct("-")) {
      const BinaryOp op = tok_.text == "+" ? BinaryOp::kAdd : BinaryOp::kSub;
      const uint32_t at = tok_.offset;
      advance();
      lhs = binary(op, at, std::move(lhs), parse_term());
    }
    return lhs;
  }

  NodePtr parse_term() {
    NodePtr lhs = parse_unary();
    while (at_punct("*") || at_punct("/") || at_punct("%")) {
      const BinaryOp op = tok_.text == "*" ? BinaryOp::kMul : tok_.text == "/" ? BinaryOp::kDiv : BinaryOp::kMod;
      const uint32_t at = tok_.offset;
      advance();
      lhs = binary(op, at, std::move(lhs), parse_unary());
    }
    return lhs;
  }

  NodePtr parse_unary() {
    if (at_punct("-") || at_punct("!")) {
      DepthGuard guard(*this, tok_.offset);
      NodePtr node = make(NodeKind::kUnary, tok_.offset);
      node->unary = tok_.text == "-" ? UnaryOp::kNeg : UnaryOp::kNot;
      advance();
      node->operands.push_back(parse_unary());
      return node;
    }
    return parse_primary();
  }

  NodePtr parse_number() {
    NodePtr node = make(NodeKind::kLiteral, tok_.offset);
    const std::string_view spelled = tok_.text;
    if (number_is_float_) {
      // std::from_chars does not take a leading '.', so parse a copy with a leading 0 where needed.
      const std::string padded = spelled.front() == '.' ? "0" + std::string(spelled) : std::string(spelled);
      double value = 0;
      const auto [end, ec] = std::from_chars(padded.data(), padded.data() + padded.size(), value);
      if (ec == std::errc::result_out_of_range) {
        fail(tok_.offset, fmt::format("float literal '{}' is out of range", spelled));
      }
      if (ec != std::errc() || end != padded.data() + padded.size()) fail(tok_.offset, fmt::format("invalid number '{}'", spelled));
      node->literal.kind = Literal::Kind::kFloat;
      node->literal.float_value = value;
    } else {
      int64_t value = 0;
      const auto [end, ec] = std::from_chars(spelled.data(), spelled.data() + spelled.size(), value);
      if (ec == std::errc::result_out_of_range) fail(tok_.offset, fmt::format("integer literal '{}' is too large", spelled));
      if (ec != std::errc() || end != spelled.data() + spelled.size()) fail(tok_.offset, fmt::format("invalid number '{}'", spelled));
      node->literal.kind = Literal::Kind::kInt;
      node->literal.int_value = value;
    }
    advance();
    return node;
  }

  NodePtr parse_primary() {
    if (tok_.kind == TokenKind::kNumber) return parse_number();
    if (at_punct("(")) {
      const Token open = tok_;
      advance();
      NodePtr inner = parse_expr();
      if (!at_punct(")")) {
        fail(tok_.offset, fmt::format("expected ')' to close '(', got {}", describe(tok_)),
             {{locator_.at(open.offset), "'(' opened here"}});
      }
      advance();
      return inner;
    }
    if (tok_.kind != TokenKind::kName) fail(tok_.offset, fmt::format("expected an expression, got {}", describe(tok_)));

    const Token name = tok_;
    advance();
    if (at_punct("(")) return parse_call(name);
    if (name.text == "inf" || name.text == "true" || name.text == "false") {
      NodePtr node = make(NodeKind::kLiteral, name.offset);
      if (name.text == "inf") {
        node->literal.kind = Literal::Kind::kFloat;
        node->literal.float_value = HUGE_VAL;
      } else {
        node->literal.kind = Literal::Kind::kBool;
        node->literal.bool_value = name.text == "true";
      }
      return node;
    }
    NodePtr node = make(NodeKind::kName, name.offset);
    node->name = std::string(name.text);
    return node;
  }

  NodePtr parse_call(const Token& name) {
    const Token open = tok_;
    NodePtr node = make(NodeKind::kCall, name.offset);
    node->name = std::string(name.text);
    int arity = 0;
    if (name.text == "select") {
      node->kind = NodeKind::kSelect;
      node->spelled_select = true;
      arity = 3;
    } else if (std::optional<ScalarType> cast = find_cast(name.text)) {
      node->kind = NodeKind::kCast;
      node->cast_to = *cast;
      arity = 1;
    } else if (std::optional<FunctionInfo> fn = find_function(name.text)) {
      node->function = fn->function;
      arity = fn->arity;
    } else {
      std::vector<DiagNote> notes;
      if (std::optional<std::string> close = closest_match(name.text, callable_names())) {
        notes.push_back({{}, fmt::format("did you mean '{}'?", *close)});
      }
      fail(name.offset, fmt::format("unknown function '{}'", name.text), std::move(notes));
    }
    advance();  // '('
    if (!at_punct(")")) {
      while (true) {
        node->operands.push_back(parse_expr());
        if (at_punct(",")) {
          advance();
          continue;
        }
        if (at_punct(")")) break;
        fail(tok_.offset, fmt::format("expected ',' or ')' in call to '{}', got {}", name.text, describe(tok_)),
             {{locator_.at(open.offset), "'(' opened here"}});
      }
    }
    if (static_cast<int>(node->operands.size()) != arity) {
      fail(name.offset, fmt::format("'{}' takes {} argument{}, got {}", name.text, arity, arity == 1 ? "" : "s",
                                    node->operands.size()));
    }
    advance();  // ')'
    return node;
  }

  std::string_view text_;
  ScalarLocator locator_;
  DiagnosticEngine& diags_;
  size_t pos_ = 0;
  Token tok_;
  bool number_is_float_ = false;
  int depth_ = 0;
};

}  // namespace

std::optional<Expression> parse_expression(std::string_view text, SourceLoc loc, const SourceManager* sources,
                                           DiagnosticEngine& diags) {
  try {
    Parser parser(text, loc, sources, diags);
    NodePtr root = parser.parse();
    return Expression(std::string(text), loc, std::move(root));
  } catch (const ParseFailed&) {
    return std::nullopt;
  }
}

}  // namespace kforge::expr
