// The template AST: immutable after parsing (the checker only fills in the `resolved_*` caches, which
// never change what a node means), every node located. Nodes own their children through unique_ptr;
// text nodes are string_views into the SourceManager buffer.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "support/source_manager.h"
#include "template/value.h"

namespace kforge::tmpl {

class TemplateImpl;
struct BuiltinEntry;

namespace ast {

enum class ExprKind : uint8_t {
  kConst, kName, kList, kTuple, kDict, kGetAttr, kGetItem, kSlice, kUnary, kBinary, kCompare,
  kCondExpr, kFilter, kTest, kCall,
};

struct Expr {
  ExprKind kind;
  SourceLoc loc;
  Expr(ExprKind k, SourceLoc l) : kind(k), loc(l) {}
  virtual ~Expr() = default;
};
using ExprPtr = std::unique_ptr<Expr>;

struct ConstExpr : Expr {
  Value value;
  ConstExpr(SourceLoc l, Value v) : Expr(ExprKind::kConst, l), value(std::move(v)) {}
};

struct NameExpr : Expr {
  std::string name;
  NameExpr(SourceLoc l, std::string n) : Expr(ExprKind::kName, l), name(std::move(n)) {}
};

/// A list literal [a, b] or a tuple (a, b) / a, b.
struct ListExpr : Expr {
  std::vector<ExprPtr> items;
  ListExpr(ExprKind k, SourceLoc l) : Expr(k, l) {}
};

struct DictExpr : Expr {
  std::vector<std::pair<ExprPtr, ExprPtr>> items;
  explicit DictExpr(SourceLoc l) : Expr(ExprKind::kDict, l) {}
};

/// object.attr (loc: the attribute name)
struct GetAttrExpr : Expr {
  ExprPtr object;
  std::string attr;
  GetAttrExpr(SourceLoc l, ExprPtr o, std::string a) : Expr(ExprKind::kGetAttr, l), object(std::move(o)), attr(std::move(a)) {}
};

/// object[index] (loc: the '[')
struct GetItemExpr : Expr {
  ExprPtr object;
  ExprPtr index;
  GetItemExpr(SourceLoc l, ExprPtr o, ExprPtr i) : Expr(ExprKind::kGetItem, l), object(std::move(o)), index(std::move(i)) {}
};

/// object[start:stop:step], each part optional
struct SliceExpr : Expr {
  ExprPtr object, start, stop, step;
  SliceExpr(SourceLoc l, ExprPtr o) : Expr(ExprKind::kSlice, l), object(std::move(o)) {}
};

enum class UnaryOp : uint8_t { kNeg, kPos, kNot };
struct UnaryExpr : Expr {
  UnaryOp op;
  ExprPtr operand;
  UnaryExpr(SourceLoc l, UnaryOp o, ExprPtr e) : Expr(ExprKind::kUnary, l), op(o), operand(std::move(e)) {}
};

enum class BinaryOp : uint8_t { kAdd, kSub, kMul, kDiv, kFloorDiv, kMod, kPow, kConcat, kAnd, kOr };
struct BinaryExpr : Expr {
  BinaryOp op;
  ExprPtr lhs, rhs;
  BinaryExpr(SourceLoc l, BinaryOp o, ExprPtr a, ExprPtr b)
      : Expr(ExprKind::kBinary, l), op(o), lhs(std::move(a)), rhs(std::move(b)) {}
};

enum class CompareOp : uint8_t { kEq, kNe, kLt, kLe, kGt, kGe, kIn, kNotIn };
struct CompareOperand {
  CompareOp op;
  SourceLoc loc;  // the operator
  ExprPtr expr;
};
/// a < b <= c (chained like Python)
struct CompareExpr : Expr {
  ExprPtr first;
  std::vector<CompareOperand> rest;
  CompareExpr(SourceLoc l, ExprPtr f) : Expr(ExprKind::kCompare, l), first(std::move(f)) {}
};

/// then_expr if cond else else_expr (else_expr may be null: undefined, as in Jinja)
struct CondExpr : Expr {
  ExprPtr cond, then_expr, else_expr;
  /// Without else_expr: the (lenient) undefined value a false condition yields, made once by the parser
  /// rather than at every evaluation (`{{ ", " if not loop.last }}` is common in loops).
  Value missing_else;
  CondExpr(SourceLoc l) : Expr(ExprKind::kCondExpr, l) {}
};

struct KeywordArg {
  std::string name;
  SourceLoc loc;
  ExprPtr value;
};
struct ArgList {
  std::vector<ExprPtr> positional;
  std::vector<KeywordArg> keywords;
};

/// input | name(args)   (input is null for the filters of a block set)
struct FilterExpr : Expr {
  ExprPtr input;
  std::string name;
  ArgList args;
  mutable const BuiltinEntry* resolved = nullptr;  // set by the checker
  FilterExpr(SourceLoc l, ExprPtr in, std::string n) : Expr(ExprKind::kFilter, l), input(std::move(in)), name(std::move(n)) {}
};

/// input is [not] name(args)
struct TestExpr : Expr {
  ExprPtr input;
  std::string name;
  ArgList args;
  bool negated = false;
  mutable const BuiltinEntry* resolved = nullptr;
  TestExpr(SourceLoc l, ExprPtr in, std::string n) : Expr(ExprKind::kTest, l), input(std::move(in)), name(std::move(n)) {}
};

/// callee(args) (loc: the callee's name)
struct CallExpr : Expr {
  ExprPtr callee;
  ArgList args;
  /// Set by the checker when the callee is a registered function that no template variable shadows.
  mutable const BuiltinEntry* resolved_function = nullptr;
  CallExpr(SourceLoc l, ExprPtr c) : Expr(ExprKind::kCall, l), callee(std::move(c)) {}
};

// ---- statements ----

enum class NodeKind : uint8_t { kText, kOutput, kIf, kFor, kSet, kSetBlock, kMacro, kInclude, kImport, kFromImport };

struct Node {
  NodeKind kind;
  SourceLoc loc;  // the statement keyword (or the expression / text start)
  Node(NodeKind k, SourceLoc l) : kind(k), loc(l) {}
  virtual ~Node() = default;
};
using NodePtr = std::unique_ptr<Node>;
using Body = std::vector<NodePtr>;

struct TextNode : Node {
  std::string_view text;
  TextNode(SourceLoc l, std::string_view t) : Node(NodeKind::kText, l), text(t) {}
};

/// {{ expr }}
struct OutputNode : Node {
  ExprPtr expr;
  OutputNode(SourceLoc l, ExprPtr e) : Node(NodeKind::kOutput, l), expr(std::move(e)) {}
};

struct IfBranch {
  SourceLoc loc;
  ExprPtr cond;
  Body body;
};
struct IfNode : Node {
  std::vector<IfBranch> branches;  // if, elif...
  Body else_body;
  explicit IfNode(SourceLoc l) : Node(NodeKind::kIf, l) {}
};

/// Assignment targets: one name, several names to unpack (a, b), or a namespace attribute ns.attr.
struct Target {
  std::vector<std::string> names;
  bool unpack = false;        // written as a tuple (even with one name: "a,")
  std::string ns_attr;        // non-empty for `set ns.attr`: names[0] is the namespace variable
  SourceLoc loc;
};

struct ForNode : Node {
  Target target;
  ExprPtr iter;
  ExprPtr filter;  // for x in xs if filter
  Body body;
  Body else_body;
  explicit ForNode(SourceLoc l) : Node(NodeKind::kFor, l) {}
};

struct SetNode : Node {
  Target target;
  ExprPtr value;
  explicit SetNode(SourceLoc l) : Node(NodeKind::kSet, l) {}
};

/// {% set x | filters %}body{% endset %}
struct SetBlockNode : Node {
  Target target;
  std::vector<std::unique_ptr<FilterExpr>> filters;  // applied in order; their inputs are null
  Body body;
  explicit SetBlockNode(SourceLoc l) : Node(NodeKind::kSetBlock, l) {}
};

struct MacroParam {
  std::string name;
  SourceLoc loc;
  ExprPtr default_value;  // null: required
};
struct MacroNode : Node {
  std::string name;
  std::vector<MacroParam> params;
  Body body;
  MacroNode(SourceLoc l, std::string n) : Node(NodeKind::kMacro, l), name(std::move(n)) {}
};

struct IncludeNode : Node {
  ExprPtr name;
  bool ignore_missing = false;
  mutable const TemplateImpl* resolved = nullptr;  // constant names: set by the checker
  explicit IncludeNode(SourceLoc l) : Node(NodeKind::kInclude, l) {}
};

/// {% import "x" as alias %}
struct ImportNode : Node {
  ExprPtr name;
  std::string alias;
  mutable const TemplateImpl* resolved = nullptr;
  explicit ImportNode(SourceLoc l) : Node(NodeKind::kImport, l) {}
};

struct ImportedName {
  std::string name;
  std::string alias;  // == name when no `as`
  SourceLoc loc;
};
/// {% from "x" import a, b as c %}
struct FromImportNode : Node {
  ExprPtr name;
  std::vector<ImportedName> names;
  mutable const TemplateImpl* resolved = nullptr;
  explicit FromImportNode(SourceLoc l) : Node(NodeKind::kFromImport, l) {}
};

/// Stable textual form: one statement per line, expressions as S-expressions, e.g.
///   (for x (name xs) (body (output (filter upper (name x)))))
std::string dump(const Body& body);
std::string dump(const Expr& expr);

}  // namespace ast
}  // namespace kforge::tmpl
