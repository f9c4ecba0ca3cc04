#include "scalar_expr/expr_check.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "scalar_expr/expr_builtins.h"
#include "support/text.h"

namespace kforge::expr {

ExprContext& ExprContext::input(std::string name, ScalarType dtype) {
  params_.push_back({std::move(name), ExprParam::Kind::kInput, dtype, std::string(name_of(dtype))});
  return *this;
}

ExprContext& ExprContext::attribute(std::string name, ScalarType type) {
  params_.push_back({std::move(name), ExprParam::Kind::kAttribute, type, std::string(name_of(type))});
  return *this;
}

ExprContext& ExprContext::opaque_attribute(std::string name, std::string type_spelling) {
  params_.push_back({std::move(name), ExprParam::Kind::kAttribute, std::nullopt, std::move(type_spelling)});
  return *this;
}

const ExprParam* ExprContext::find(std::string_view name) const {
  for (const ExprParam& p : params_) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

namespace {

bool fits(int64_t v, ScalarType t) {
  if (t == ScalarType::kInt32) return v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max();
  return true;
}

int64_t int_max(ScalarType t) {
  return t == ScalarType::kInt32 ? std::numeric_limits<int32_t>::max() : std::numeric_limits<int64_t>::max();
}
int64_t int_min(ScalarType t) {
  return t == ScalarType::kInt32 ? std::numeric_limits<int32_t>::min() : std::numeric_limits<int64_t>::min();
}

std::string literal_spelling(const Literal& lit) {
  if (lit.kind == Literal::Kind::kInt) return fmt::format("{}", lit.int_value);
  if (lit.kind == Literal::Kind::kBool) return lit.bool_value ? "true" : "false";
  if (std::isinf(lit.float_value)) return lit.float_value > 0 ? "inf" : "-inf";
  return fmt::format("{}", lit.float_value);
}

// Re-types a literal node to `target`; `explicit_cast` allows the lossy conversions a written cast performs.
bool retype_literal(Node& node, ScalarType target, bool explicit_cast, DiagnosticEngine& diags) {
  Literal& lit = node.literal;
  auto error = [&](std::string message) {
    diags.error(node.loc, std::move(message));
    return false;
  };
  if (target == ScalarType::kBool) {
    if (lit.kind == Literal::Kind::kBool) return true;
    lit.bool_value = lit.kind == Literal::Kind::kInt ? lit.int_value != 0 : lit.float_value != 0;
    lit.kind = Literal::Kind::kBool;
  } else if (is_float(target)) {
    if (lit.kind == Literal::Kind::kInt) lit.float_value = static_cast<double>(lit.int_value);
    if (lit.kind == Literal::Kind::kBool) lit.float_value = lit.bool_value ? 1.0 : 0.0;
    if (target == ScalarType::kFloat32 && std::isfinite(lit.float_value) &&
        std::isinf(static_cast<float>(lit.float_value))) {
      return error(fmt::format("literal {} overflows float32", literal_spelling(lit)));
    }
    lit.kind = Literal::Kind::kFloat;
  } else {  // integer target
    if (lit.kind == Literal::Kind::kBool) {
      lit.int_value = lit.bool_value ? 1 : 0;
    } else if (lit.kind == Literal::Kind::kFloat) {
      const double v = lit.float_value;
      if (std::isinf(v)) {
        lit.int_value = v > 0 ? int_max(target) : int_min(target);
      } else if (std::isnan(v) || v >= 9223372036854775808.0 || v < -9223372036854775808.0 ||
                 !fits(static_cast<int64_t>(v), target)) {
        return error(fmt::format("literal {} is out of range for {}", literal_spelling(lit), name_of(target)));
      } else if (!explicit_cast && std::trunc(v) != v) {
        return error(fmt::format("literal {} is not an integer and cannot become {}", literal_spelling(lit),
                                 name_of(target)));
      } else {
        lit.int_value = static_cast<int64_t>(v);
      }
    } else if (!fits(lit.int_value, target)) {
      return error(fmt::format("integer literal {} does not fit in {}", lit.int_value, name_of(target)));
    }
    lit.kind = Literal::Kind::kInt;
  }
  node.type = target;
  return true;
}

NodePtr make_cast(NodePtr operand, ScalarType target, bool implicit) {
  auto cast = std::make_unique<Node>();
  cast->kind = NodeKind::kCast;
  cast->offset = operand->offset;
  cast->loc = operand->loc;
  cast->name = std::string(name_of(target));
  cast->cast_to = target;
  cast->implicit = implicit;
  cast->typed = true;
  cast->type = compute_type(target);
  cast->weak = implicit && operand->weak;
  cast->operands.push_back(std::move(operand));
  return cast;
}

struct Unified {
  ScalarType type;
  bool weak;
};

// The common type of two numeric operands: see the header for the weak-operand rule.
Unified unify(const Node& a, const Node& b) {
  if (a.weak == b.weak) return {promote(a.type, b.type), a.weak};
  const Node& strong = a.weak ? b : a;
  const Node& weak = a.weak ? a : b;
  if (category(weak.type) <= category(strong.type)) return {strong.type, false};
  return {promote(strong.type, weak.type), false};
}

class Checker {
 public:
  Checker(const ExprContext& context, const ExprScope& scope, DiagnosticEngine& diags)
      : context_(context), scope_(scope), diags_(diags) {}

  // Returns the typed node, or nullptr after reporting an error in this subtree.
  NodePtr check(NodePtr node) {
    // Check every operand first, so that independent errors are all reported.
    bool operands_ok = true;
    for (NodePtr& child : node->operands) {
      child = check(std::move(child));
      if (!child) operands_ok = false;
    }
    if (!operands_ok) return nullptr;
    node->typed = true;
    switch (node->kind) {
      case NodeKind::kLiteral: return check_literal(std::move(node));
      case NodeKind::kName: return check_name(std::move(node));
      case NodeKind::kUnary: return check_unary(std::move(node));
      case NodeKind::kBinary: return check_binary(std::move(node));
      case NodeKind::kSelect: return check_select(std::move(node));
      case NodeKind::kCall: return check_call(std::move(node));
      case NodeKind::kCast: return check_cast(std::move(node));
    }
    return nullptr;
  }

 private:
  NodePtr fail(const Node& at, std::string message, std::string note = {}) {
    Diagnostic diag{Severity::kError, at.loc, std::move(message), {}};
    if (!note.empty()) diag.note(std::move(note));
    diags_.report(std::move(diag));
    return nullptr;
  }

  static std::string type_name(const Node& n) { return std::string(name_of(n.type)); }

  NodePtr check_literal(NodePtr node) {
    switch (node->literal.kind) {
      case Literal::Kind::kBool: node->type = ScalarType::kBool; break;
      case Literal::Kind::kInt:
        node->type = fits(node->literal.int_value, ScalarType::kInt32) ? ScalarType::kInt32 : ScalarType::kInt64;
        node->weak = true;
        break;
      case Literal::Kind::kFloat: {
        // float32 unless only float64 can hold it (1e300 is fine next to a float64 input).
        const double v = node->literal.float_value;
        const bool f32 = !std::isfinite(v) || !std::isinf(static_cast<float>(v));
        node->type = f32 ? ScalarType::kFloat32 : ScalarType::kFloat64;
        node->weak = true;
        break;
      }
    }
    return node;
  }

  std::string names_note() const {
    std::vector<std::string> inputs;
    std::vector<std::string> attributes;
    for (const ExprParam& p : context_.params()) {
      (p.kind == ExprParam::Kind::kInput ? inputs : attributes).push_back(fmt::format("'{}'", p.name));
    }
    auto phrase = [](const std::vector<std::string>& names, std::string_view word) {
      if (names.empty()) return fmt::format("no {}s", word);
      return fmt::format("{}{} {}", word, names.size() == 1 ? "" : "s", join(names, ", "));
    };
    const std::string body = fmt::format("{} and {}", phrase(inputs, "input"), phrase(attributes, "attribute"));
    if (context_.op_name().empty()) return "available: " + body;
    return fmt::format("op '{}' has {}", context_.op_name(), body);
  }

  NodePtr check_name(NodePtr node) {
    const std::string& name = node->name;
    if (name == "acc" && scope_.accumulator) {
      node->name_kind = NameKind::kAccumulator;
      node->type = compute_type(*scope_.accumulator);
      return node;
    }
    if (name == "n" && scope_.count) {
      node->name_kind = NameKind::kCount;
      node->type = ScalarType::kInt64;
      return node;
    }
    if (const ExprParam* p = context_.find(name)) {
      if (p->kind == ExprParam::Kind::kInput) {
        if (!scope_.inputs) {
          return fail(*node, fmt::format("input '{}' cannot be used in '{}'", name, scope_.part),
                      scope_.count ? "'finalize' sees 'acc', 'n' and the attributes"
                                   : fmt::format("'{}' sees only the attributes", scope_.part));
        }
        node->name_kind = NameKind::kInput;
        node->type = compute_type(p->type.value_or(ScalarType::kFloat32));
        return node;
      }
      if (!p->type) {
        return fail(*node, fmt::format("attribute '{}' has type {}, which is not a scalar", name, p->type_spelling));
      }
      node->name_kind = NameKind::kAttribute;
      node->type = compute_type(*p->type);
      node->weak = true;
      return node;
    }
    // Unknown: suggest the closest visible name and list what the op offers.
    std::vector<std::string> candidates;
    for (const ExprParam& p : context_.params()) {
      if (p.kind == ExprParam::Kind::kAttribute || scope_.inputs) candidates.push_back(p.name);
    }
    if (scope_.accumulator) candidates.emplace_back("acc");
    if (scope_.count) candidates.emplace_back("n");
    Diagnostic diag{Severity::kError, node->loc, fmt::format("unknown identifier '{}'", name), {}};
    if (std::optional<std::string> close = closest_match(name, candidates)) diag.note(fmt::format("did you mean '{}'?", *close));
    diag.note(names_note());
    if (scope_.accumulator && scope_.count) {
      diag.note(fmt::format("in '{}', 'acc' is the accumulated value and 'n' the number of reduced elements", scope_.part));
    } else if (scope_.accumulator) {
      diag.note(fmt::format("in '{}', 'acc' is the accumulator", scope_.part));
    }
    diags_.report(std::move(diag));
    return nullptr;
  }

  // Converts both operands to `type`; false if a literal did not fit (already reported).
  bool convert_operands(Node& node, ScalarType type, size_t first = 0) {
    bool ok = true;
    for (size_t i = first; i < node.operands.size(); ++i) {
      node.operands[i] = convert_to(std::move(node.operands[i]), type, diags_);
      if (!node.operands[i]) ok = false;
    }
    return ok;
  }

  NodePtr check_unary(NodePtr node) {
    Node& operand = *node->operands[0];
    if (node->unary == UnaryOp::kNot) {
      if (operand.type != ScalarType::kBool) {
        return fail(*node, fmt::format("operand of '!' must be bool, got {}", type_name(operand)),
                    "convert with bool(...) to test for a non-zero value");
      }
      node->type = ScalarType::kBool;
      return node;
    }
    if (operand.type == ScalarType::kBool) {
      return fail(*node, "operand of unary '-' must be numeric, got bool", "convert with int32(...) or float32(...) first");
    }
    const bool foldable = operand.kind == NodeKind::kLiteral &&
                          !(operand.literal.kind == Literal::Kind::kInt &&
                            operand.literal.int_value == std::numeric_limits<int64_t>::min());
    if (foldable) {  // fold: `-1` and `-inf` are literals, so they re-type as one
      NodePtr literal = std::move(node->operands[0]);
      literal->offset = node->offset;
      literal->loc = node->loc;
      if (literal->literal.kind == Literal::Kind::kInt) {
        literal->literal.int_value = -literal->literal.int_value;
      } else {
        literal->literal.float_value = -literal->literal.float_value;
      }
      return literal;
    }
    node->type = operand.type;
    node->weak = operand.weak;
    return node;
  }

  NodePtr check_binary(NodePtr node) {
    const BinaryOp op = node->binary;
    const Node& a = *node->operands[0];
    const Node& b = *node->operands[1];
    const std::string_view spelled = spelling(op);
    const bool a_bool = a.type == ScalarType::kBool;
    const bool b_bool = b.type == ScalarType::kBool;
    if (op == BinaryOp::kAnd || op == BinaryOp::kOr) {
      if (!a_bool || !b_bool) {
        return fail(*node, fmt::format("operands of '{}' must be bool, got {} and {}", spelled, type_name(a), type_name(b)),
                    "convert with bool(...) to test for a non-zero value");
      }
      node->type = ScalarType::kBool;
      return node;
    }
    const bool equality = op == BinaryOp::kEq || op == BinaryOp::kNe;
    const bool ordering = op == BinaryOp::kLt || op == BinaryOp::kLe || op == BinaryOp::kGt || op == BinaryOp::kGe;
    if (equality && a_bool && b_bool) {
      node->type = ScalarType::kBool;
      return node;
    }
    if ((equality || ordering) && a_bool != b_bool) {
      return fail(*node, fmt::format("cannot compare {} with {}", type_name(a), type_name(b)),
                  "convert with int32(...) or float32(...) first");
    }
    if (a_bool || b_bool) {
      return fail(*node, fmt::format("operands of '{}' must be numeric, got {} and {}", spelled, type_name(a), type_name(b)),
                  "convert with int32(...) or float32(...) first");
    }
    const Unified u = unify(a, b);
    if (!convert_operands(*node, u.type)) return nullptr;
    node->type = equality || ordering ? ScalarType::kBool : u.type;
    node->weak = equality || ordering ? false : u.weak;
    return node;
  }

  NodePtr check_select(NodePtr node) {
    const std::string what = node->spelled_select ? "select" : "?:";
    const Node& cond = *node->operands[0];
    const Node& a = *node->operands[1];
    const Node& b = *node->operands[2];
    if (cond.type != ScalarType::kBool) {
      return fail(cond, fmt::format("condition of '{}' must be bool, got {}", what, type_name(cond)),
                  "convert with bool(...) to test for a non-zero value");
    }
    const bool a_bool = a.type == ScalarType::kBool;
    const bool b_bool = b.type == ScalarType::kBool;
    if (a_bool && b_bool) {
      node->type = ScalarType::kBool;
      return node;
    }
    if (a_bool || b_bool) {
      return fail(*node, fmt::format("branches of '{}' have incompatible types {} and {}", what, type_name(a), type_name(b)));
    }
    const Unified u = unify(a, b);
    if (!convert_operands(*node, u.type, 1)) return nullptr;
    node->type = u.type;
    node->weak = u.weak;
    return node;
  }

  NodePtr check_call(NodePtr node) {
    const FunctionInfo& info = function_info(node->function);
    for (const NodePtr& arg : node->operands) {
      if (arg->type == ScalarType::kBool) {
        if (info.arity == 1) {
          return fail(*node, fmt::format("argument of '{}' must be numeric, got bool", info.name),
                      "convert with int32(...) or float32(...) first");
        }
        return fail(*node, fmt::format("arguments of '{}' must be numeric, got {} and {}", info.name,
                                       type_name(*node->operands[0]), type_name(*node->operands[1])),
                    "convert with int32(...) or float32(...) first");
      }
    }
    const Node& a = *node->operands[0];
    switch (info.cls) {
      case FunctionClass::kFloatMath:
      case FunctionClass::kPredicate: {
        const ScalarType t = is_float(a.type) ? a.type : ScalarType::kFloat32;
        const bool weak = a.weak;
        if (!convert_operands(*node, t)) return nullptr;
        node->type = info.cls == FunctionClass::kPredicate ? ScalarType::kBool : t;
        node->weak = info.cls == FunctionClass::kPredicate ? false : weak;
        return node;
      }
      case FunctionClass::kSameType:
        node->type = a.type;
        node->weak = a.weak;
        return node;
      case FunctionClass::kMinMax:
      case FunctionClass::kPow: {
        Unified u = unify(a, *node->operands[1]);
        if (info.cls == FunctionClass::kPow && !is_float(u.type)) u.type = ScalarType::kFloat32;
        if (!convert_operands(*node, u.type)) return nullptr;
        node->type = u.type;
        node->weak = u.weak;
        return node;
      }
    }
    return nullptr;
  }

  NodePtr check_cast(NodePtr node) {
    const ScalarType target = compute_type(node->cast_to);
    if (node->operands[0]->kind == NodeKind::kLiteral) {  // fold: float64(0.5) is the literal 0.5 as float64
      NodePtr literal = std::move(node->operands[0]);
      if (!retype_literal(*literal, target, /*explicit_cast=*/true, diags_)) return nullptr;
      literal->offset = node->offset;
      literal->loc = node->loc;
      literal->weak = false;
      return literal;
    }
    if (node->operands[0]->type == target) {  // a cast to the type it already has is only a strong marker
      NodePtr operand = std::move(node->operands[0]);
      operand->weak = false;
      return operand;
    }
    node->type = target;
    node->weak = false;
    return node;
  }

  const ExprContext& context_;
  const ExprScope& scope_;
  DiagnosticEngine& diags_;
};

}  // namespace

NodePtr convert_to(NodePtr node, ScalarType target, DiagnosticEngine& diags) {
  target = compute_type(target);
  if (!node) return nullptr;
  if (node->type == target) return node;
  if (node->kind == NodeKind::kLiteral) {
    if (!retype_literal(*node, target, /*explicit_cast=*/false, diags)) return nullptr;
    return node;
  }
  return make_cast(std::move(node), target, /*implicit=*/true);
}

std::optional<Expression> check_expression(const Expression& expr, const ExprContext& context,
                                           DiagnosticEngine& diags, const ExprScope& scope) {
  if (!expr.root) return std::nullopt;
  Checker checker(context, scope, diags);
  NodePtr typed = checker.check(clone(*expr.root));
  if (!typed) return std::nullopt;
  return Expression(expr.text, expr.loc, std::move(typed));
}

}  // namespace kforge::expr
