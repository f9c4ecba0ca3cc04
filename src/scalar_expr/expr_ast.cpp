#include "scalar_expr/expr_ast.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "scalar_expr/expr_builtins.h"

namespace kforge::expr {

NodePtr clone(const Node& node) {
  auto copy = std::make_unique<Node>();
  copy->kind = node.kind;
  copy->offset = node.offset;
  copy->loc = node.loc;
  copy->literal = node.literal;
  copy->name = node.name;
  copy->name_kind = node.name_kind;
  copy->unary = node.unary;
  copy->binary = node.binary;
  copy->function = node.function;
  copy->cast_to = node.cast_to;
  copy->implicit = node.implicit;
  copy->spelled_select = node.spelled_select;
  copy->typed = node.typed;
  copy->type = node.type;
  copy->weak = node.weak;
  copy->operands.reserve(node.operands.size());
  for (const NodePtr& child : node.operands) copy->operands.push_back(clone(*child));
  return copy;
}

std::string_view spelling(BinaryOp op) {
  switch (op) {
    case BinaryOp::kAdd: return "+";
    case BinaryOp::kSub: return "-";
    case BinaryOp::kMul: return "*";
    case BinaryOp::kDiv: return "/";
    case BinaryOp::kMod: return "%";
    case BinaryOp::kEq: return "==";
    case BinaryOp::kNe: return "!=";
    case BinaryOp::kLt: return "<";
    case BinaryOp::kLe: return "<=";
    case BinaryOp::kGt: return ">";
    case BinaryOp::kGe: return ">=";
    case BinaryOp::kAnd: return "&&";
    case BinaryOp::kOr: return "||";
  }
  return "?";
}

std::string_view spelling(UnaryOp op) { return op == UnaryOp::kNeg ? "-" : "!"; }

namespace {

std::string literal_text(const Literal& lit) {
  switch (lit.kind) {
    case Literal::Kind::kBool: return lit.bool_value ? "true" : "false";
    case Literal::Kind::kInt: return fmt::format("{}", lit.int_value);
    case Literal::Kind::kFloat: {
      if (std::isinf(lit.float_value)) return lit.float_value > 0 ? "inf" : "-inf";
      if (std::isnan(lit.float_value)) return "nan";
      std::string text = fmt::format("{}", lit.float_value);
      // Keep floats recognisable: 1.0 prints as "1.0", not "1".
      if (text.find_first_of(".en") == std::string::npos) text += ".0";
      return text;
    }
  }
  return "?";
}

void dump_into(std::string& out, const Node& node, bool with_types) {
  auto head = [&](std::string_view name) {
    out += '(';
    out += name;
    if (with_types && node.typed) {
      out += ':';
      out += name_of(node.type);
      if (node.weak) out += '~';
    }
  };
  auto children = [&] {
    for (const NodePtr& child : node.operands) {
      out += ' ';
      dump_into(out, *child, with_types);
    }
    out += ')';
  };
  switch (node.kind) {
    case NodeKind::kLiteral:
    case NodeKind::kName:
      out += node.kind == NodeKind::kLiteral ? literal_text(node.literal) : node.name;
      if (with_types && node.typed) {
        out += ':';
        out += name_of(node.type);
        if (node.weak) out += '~';
      }
      return;
    case NodeKind::kUnary: head(node.unary == UnaryOp::kNeg ? "neg" : "!"); break;
    case NodeKind::kBinary: head(spelling(node.binary)); break;
    case NodeKind::kSelect: head("select"); break;
    case NodeKind::kCall: head(function_info(node.function).name); break;
    case NodeKind::kCast: head(node.implicit ? "convert" : name_of(node.cast_to)); break;
  }
  children();
}

}  // namespace

std::vector<std::string> names_used(const Node& node, NameKind kind) {
  std::vector<std::string> names;
  visit(node, [&](const Node& n) {
    if (n.kind == NodeKind::kName && n.name_kind == kind &&
        std::find(names.begin(), names.end(), n.name) == names.end()) {
      names.push_back(n.name);
    }
  });
  return names;
}

std::string dump(const Node& node, bool with_types) {
  std::string out;
  dump_into(out, node, with_types);
  return out;
}

}  // namespace kforge::expr
