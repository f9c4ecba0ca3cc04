#include "template/ast.h"

#include <fmt/format.h>

#include "template/value_ops.h"

namespace kforge::tmpl::ast {

namespace {

std::string quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      default: out += c;
    }
  }
  out += '"';
  return out;
}

const char* binary_name(BinaryOp op) {
  switch (op) {
    case BinaryOp::kAdd: return "+";
    case BinaryOp::kSub: return "-";
    case BinaryOp::kMul: return "*";
    case BinaryOp::kDiv: return "/";
    case BinaryOp::kFloorDiv: return "//";
    case BinaryOp::kMod: return "%";
    case BinaryOp::kPow: return "**";
    case BinaryOp::kConcat: return "~";
    case BinaryOp::kAnd: return "and";
    case BinaryOp::kOr: return "or";
  }
  return "?";
}

const char* compare_name(CompareOp op) {
  switch (op) {
    case CompareOp::kEq: return "==";
    case CompareOp::kNe: return "!=";
    case CompareOp::kLt: return "<";
    case CompareOp::kLe: return "<=";
    case CompareOp::kGt: return ">";
    case CompareOp::kGe: return ">=";
    case CompareOp::kIn: return "in";
    case CompareOp::kNotIn: return "not in";
  }
  return "?";
}

std::string opt(const ExprPtr& e) { return e ? dump(*e) : "_"; }

std::string dump_args(const ArgList& args) {
  std::string out;
  for (const ExprPtr& a : args.positional) out += " " + dump(*a);
  for (const KeywordArg& k : args.keywords) out += fmt::format(" {}={}", k.name, dump(*k.value));
  return out;
}

std::string dump_target(const Target& t) {
  if (!t.ns_attr.empty()) return t.names[0] + "." + t.ns_attr;
  std::string out;
  for (size_t i = 0; i < t.names.size(); ++i) out += (i ? ", " : "") + t.names[i];
  if (t.unpack && t.names.size() == 1) out += ",";
  return out;
}

void dump_body(const Body& body, int depth, std::string& out);

void line(std::string& out, int depth, const std::string& text) {
  out.append(static_cast<size_t>(depth) * 2, ' ');
  out += text;
  out += '\n';
}

void dump_node(const Node& node, int depth, std::string& out) {
  switch (node.kind) {
    case NodeKind::kText:
      line(out, depth, "text " + quote(static_cast<const TextNode&>(node).text));
      break;
    case NodeKind::kOutput:
      line(out, depth, "output " + dump(*static_cast<const OutputNode&>(node).expr));
      break;
    case NodeKind::kIf: {
      const auto& n = static_cast<const IfNode&>(node);
      for (size_t i = 0; i < n.branches.size(); ++i) {
        line(out, depth, (i ? "elif " : "if ") + dump(*n.branches[i].cond));
        dump_body(n.branches[i].body, depth + 1, out);
      }
      if (!n.else_body.empty()) {
        line(out, depth, "else");
        dump_body(n.else_body, depth + 1, out);
      }
      break;
    }
    case NodeKind::kFor: {
      const auto& n = static_cast<const ForNode&>(node);
      std::string head = "for " + dump_target(n.target) + " in " + dump(*n.iter);
      if (n.filter) head += " if " + dump(*n.filter);
      line(out, depth, head);
      dump_body(n.body, depth + 1, out);
      if (!n.else_body.empty()) {
        line(out, depth, "else");
        dump_body(n.else_body, depth + 1, out);
      }
      break;
    }
    case NodeKind::kSet: {
      const auto& n = static_cast<const SetNode&>(node);
      line(out, depth, "set " + dump_target(n.target) + " = " + dump(*n.value));
      break;
    }
    case NodeKind::kSetBlock: {
      const auto& n = static_cast<const SetBlockNode&>(node);
      std::string head = "set " + dump_target(n.target);
      for (const auto& f : n.filters) head += " | " + f->name + dump_args(f->args);
      line(out, depth, head);
      dump_body(n.body, depth + 1, out);
      break;
    }
    case NodeKind::kMacro: {
      const auto& n = static_cast<const MacroNode&>(node);
      std::string head = "macro " + n.name + "(";
      for (size_t i = 0; i < n.params.size(); ++i) {
        if (i) head += ", ";
        head += n.params[i].name;
        if (n.params[i].default_value) head += "=" + dump(*n.params[i].default_value);
      }
      line(out, depth, head + ")");
      dump_body(n.body, depth + 1, out);
      break;
    }
    case NodeKind::kInclude: {
      const auto& n = static_cast<const IncludeNode&>(node);
      line(out, depth, "include " + dump(*n.name) + (n.ignore_missing ? " ignore missing" : ""));
      break;
    }
    case NodeKind::kImport: {
      const auto& n = static_cast<const ImportNode&>(node);
      line(out, depth, "import " + dump(*n.name) + " as " + n.alias);
      break;
    }
    case NodeKind::kFromImport: {
      const auto& n = static_cast<const FromImportNode&>(node);
      std::string head = "from " + dump(*n.name) + " import ";
      for (size_t i = 0; i < n.names.size(); ++i) {
        if (i) head += ", ";
        head += n.names[i].name;
        if (n.names[i].alias != n.names[i].name) head += " as " + n.names[i].alias;
      }
      line(out, depth, head);
      break;
    }
  }
}

void dump_body(const Body& body, int depth, std::string& out) {
  for (const NodePtr& n : body) dump_node(*n, depth, out);
}

}  // namespace

std::string dump(const Body& body) {
  std::string out;
  dump_body(body, 0, out);
  return out;
}

std::string dump(const Expr& e) {
  switch (e.kind) {
    case ExprKind::kConst: {
      const Value& v = static_cast<const ConstExpr&>(e).value;
      if (v.is_string()) return quote(v.as_string());
      return python_repr(v);
    }
    case ExprKind::kName: return static_cast<const NameExpr&>(e).name;
    case ExprKind::kList:
    case ExprKind::kTuple: {
      const auto& n = static_cast<const ListExpr&>(e);
      std::string out = e.kind == ExprKind::kList ? "(list" : "(tuple";
      for (const ExprPtr& item : n.items) out += " " + dump(*item);
      return out + ")";
    }
    case ExprKind::kDict: {
      const auto& n = static_cast<const DictExpr&>(e);
      std::string out = "(dict";
      for (const auto& [k, v] : n.items) out += " (" + dump(*k) + " " + dump(*v) + ")";
      return out + ")";
    }
    case ExprKind::kGetAttr: {
      const auto& n = static_cast<const GetAttrExpr&>(e);
      return "(. " + dump(*n.object) + " " + n.attr + ")";
    }
    case ExprKind::kGetItem: {
      const auto& n = static_cast<const GetItemExpr&>(e);
      return "([] " + dump(*n.object) + " " + dump(*n.index) + ")";
    }
    case ExprKind::kSlice: {
      const auto& n = static_cast<const SliceExpr&>(e);
      return "(slice " + dump(*n.object) + " " + opt(n.start) + " " + opt(n.stop) + " " + opt(n.step) + ")";
    }
    case ExprKind::kUnary: {
      const auto& n = static_cast<const UnaryExpr&>(e);
      const char* name = n.op == UnaryOp::kNeg ? "neg" : n.op == UnaryOp::kPos ? "pos" : "not";
      return fmt::format("({} {})", name, dump(*n.operand));
    }
    case ExprKind::kBinary: {
      const auto& n = static_cast<const BinaryExpr&>(e);
      return fmt::format("({} {} {})", binary_name(n.op), dump(*n.lhs), dump(*n.rhs));
    }
    case ExprKind::kCompare: {
      const auto& n = static_cast<const CompareExpr&>(e);
      std::string out = "(cmp " + dump(*n.first);
      for (const CompareOperand& o : n.rest) out += fmt::format(" {} {}", compare_name(o.op), dump(*o.expr));
      return out + ")";
    }
    case ExprKind::kCondExpr: {
      const auto& n = static_cast<const CondExpr&>(e);
      return "(if " + dump(*n.cond) + " " + dump(*n.then_expr) + " " + opt(n.else_expr) + ")";
    }
    case ExprKind::kFilter: {
      const auto& n = static_cast<const FilterExpr&>(e);
      return "(filter " + n.name + " " + opt(n.input) + dump_args(n.args) + ")";
    }
    case ExprKind::kTest: {
      const auto& n = static_cast<const TestExpr&>(e);
      return std::string(n.negated ? "(is-not " : "(is ") + n.name + " " + dump(*n.input) + dump_args(n.args) + ")";
    }
    case ExprKind::kCall: {
      const auto& n = static_cast<const CallExpr&>(e);
      return "(call " + dump(*n.callee) + dump_args(n.args) + ")";
    }
  }
  return "?";
}

}  // namespace kforge::tmpl::ast
