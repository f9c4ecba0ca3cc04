#include "scalar_expr/expr_rewrite.h"

namespace kforge::expr {

namespace {

NodePtr implicit_cast(NodePtr operand, ScalarType target) {
  auto cast = std::make_unique<Node>();
  cast->kind = NodeKind::kCast;
  cast->offset = operand->offset;
  cast->loc = operand->loc;
  cast->name = std::string(name_of(target));
  cast->cast_to = target;
  cast->implicit = true;
  cast->typed = true;
  cast->type = target;
  cast->weak = operand->weak;
  cast->operands.push_back(std::move(operand));
  return cast;
}

bool is_literal(const Node& n) { return n.kind == NodeKind::kLiteral; }

// substitute (at_use false) and substitute_at_use (true): with at_use, a name under an implicit conversion is
// replaced together with it, its substitute converted to the conversion's type.
NodePtr substitute_names(const Node& typed, const std::function<NodePtr(const Node& name)>& replace, bool at_use) {
  const Node* name = &typed;
  if (at_use && typed.kind == NodeKind::kCast && typed.implicit && typed.operands.size() == 1 &&
      typed.operands[0]->kind == NodeKind::kName) {
    name = typed.operands[0].get();
  }
  if (name->kind == NodeKind::kName) {
    if (NodePtr with = replace(*name)) {
      if (with->type != typed.type) with = implicit_cast(std::move(with), typed.type);
      return with;
    }
  }
  NodePtr copy = clone(typed);
  for (NodePtr& child : copy->operands) child = substitute_names(*child, replace, at_use);
  return copy;
}

}  // namespace

NodePtr substitute(const Node& typed, const std::function<NodePtr(const Node& name)>& replace) {
  return substitute_names(typed, replace, false);
}

NodePtr substitute_at_use(const Node& typed, const std::function<NodePtr(const Node& name)>& replace) {
  return substitute_names(typed, replace, true);
}

NodePtr make_literal(const Value& value, ScalarType type) {
  type = compute_type(type);
  const std::optional<Value> v = convert_value(value, type);
  if (!v) return nullptr;
  auto node = std::make_unique<Node>();
  node->kind = NodeKind::kLiteral;
  node->typed = true;
  node->type = type;
  if (type == ScalarType::kBool) {
    node->literal.kind = Literal::Kind::kBool;
    node->literal.bool_value = v->b;
  } else if (is_integer(type)) {
    node->literal.kind = Literal::Kind::kInt;
    node->literal.int_value = v->i;
  } else {
    node->literal.kind = Literal::Kind::kFloat;
    node->literal.float_value = v->f;
  }
  return node;
}

NodePtr bind_attributes(const Node& typed, const std::function<std::optional<Value>(std::string_view)>& value_of) {
  return substitute(typed, [&](const Node& name) -> NodePtr {
    if (name.name_kind != NameKind::kAttribute) return nullptr;
    const std::optional<Value> value = value_of(name.name);
    if (!value) return nullptr;
    NodePtr literal = make_literal(*value, name.type);
    if (!literal) return nullptr;  // a value the attribute's type cannot hold: leave the name
    literal->offset = name.offset;
    literal->loc = name.loc;
    literal->weak = name.weak;
    return literal;
  });
}

NodePtr fold_constants(const Node& typed) {
  NodePtr node = clone(typed);
  for (NodePtr& child : node->operands) child = fold_constants(*child);
  switch (node->kind) {
    case NodeKind::kLiteral:
    case NodeKind::kName: return node;
    case NodeKind::kSelect:
      if (is_literal(*node->operands[0])) return std::move(node->operands[node->operands[0]->literal.bool_value ? 1 : 2]);
      break;
    case NodeKind::kBinary:
      if (node->binary == BinaryOp::kAnd || node->binary == BinaryOp::kOr) {
        // The language has no side effects, so a literal on either side decides or drops out.
        const bool absorbing = node->binary == BinaryOp::kOr;  // true || a == true; false && a == false
        for (size_t side = 0; side < 2; ++side) {
          const Node& operand = *node->operands[side];
          if (!is_literal(operand)) continue;
          if (operand.literal.bool_value == absorbing) return std::move(node->operands[side]);
          return std::move(node->operands[1 - side]);
        }
      }
      break;
    default: break;
  }
  for (const NodePtr& child : node->operands) {
    if (!is_literal(*child)) return node;
  }
  const std::optional<Value> value = evaluate(*node, {});
  if (!value) return node;  // e.g. integer division by zero: leave it to the running code
  NodePtr literal = make_literal(*value, node->type);
  if (!literal) return node;
  literal->offset = node->offset;
  literal->loc = node->loc;
  literal->weak = node->weak;
  return literal;
}

}  // namespace kforge::expr
