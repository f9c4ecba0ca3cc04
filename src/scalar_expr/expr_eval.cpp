#include "scalar_expr/expr_eval.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "kforge_math.h"

namespace kforge::expr {

double Value::as_double() const {
  if (type == ScalarType::kBool) return b ? 1.0 : 0.0;
  if (is_integer(type)) return static_cast<double>(i);
  return f;
}

std::string to_string(const Value& v) {
  if (v.type == ScalarType::kBool) return fmt::format("bool {}", v.b);
  if (is_integer(v.type)) return fmt::format("{} {}", name_of(v.type), v.i);
  if (v.type == ScalarType::kFloat32) return fmt::format("float32 {}", static_cast<float>(v.f));
  return fmt::format("{} {}", name_of(v.type), v.f);
}

namespace {

int64_t wrap_to(ScalarType t, uint64_t bits) {
  if (t == ScalarType::kInt32) return static_cast<int32_t>(static_cast<uint32_t>(bits));
  return static_cast<int64_t>(bits);
}

bool set_error(std::string* error, std::string message) {
  if (error) *error = std::move(message);
  return false;
}

}  // namespace

std::optional<Value> convert_value(const Value& v, ScalarType target, std::string* error) {
  target = compute_type(target);
  const ScalarType from = compute_type(v.type);
  if (target == ScalarType::kBool) {
    if (from == ScalarType::kBool) return v;
    return Value::of_bool(is_integer(from) ? v.i != 0 : v.f != 0);
  }
  if (is_float(target)) {
    if (from == ScalarType::kBool) return Value::of_float(v.b ? 1 : 0, target);
    if (is_integer(from)) {
      // int64 -> float rounds like the C++ conversion (via float directly for float32).
      if (target == ScalarType::kFloat32) return Value{target, static_cast<double>(static_cast<float>(v.i)), 0, false};
      return Value::of_float(static_cast<double>(v.i), target);
    }
    return Value::of_float(v.f, target);
  }
  // integer target
  if (from == ScalarType::kBool) return Value::of_int(v.b ? 1 : 0, target);
  if (is_integer(from)) return Value::of_int(wrap_to(target, static_cast<uint64_t>(v.i)), target);
  const double lo = target == ScalarType::kInt32 ? -2147483649.0 : -9223372036854777856.0;
  const double hi = target == ScalarType::kInt32 ? 2147483648.0 : 9223372036854775808.0;
  if (!(v.f > lo && v.f < hi)) {  // also catches NaN
    // NaN prints without its sign bit, which differs between platforms.
    const std::string shown = std::isnan(v.f) ? std::string("nan") : fmt::format("{}", v.f);
    set_error(error, fmt::format("value {} is out of range for {}", shown, name_of(target)));
    return std::nullopt;
  }
  return Value::of_int(static_cast<int64_t>(v.f), target);
}

EvalBindings EvalBindings::from_maps(std::map<std::string, Value, std::less<>> inputs,
                                     std::map<std::string, Value, std::less<>> attributes) {
  EvalBindings b;
  b.input = [inputs = std::move(inputs)](std::string_view name) -> std::optional<Value> {
    auto it = inputs.find(name);
    if (it == inputs.end()) return std::nullopt;
    return it->second;
  };
  b.attribute = [attributes = std::move(attributes)](std::string_view name) -> std::optional<Value> {
    auto it = attributes.find(name);
    if (it == attributes.end()) return std::nullopt;
    return it->second;
  };
  return b;
}

namespace {

class Evaluator {
 public:
  Evaluator(const EvalBindings& bindings, std::string* error) : bindings_(bindings), error_(error) {}

  std::optional<Value> eval(const Node& node) {
    if (!node.typed) return fail("expression is not type-checked");
    switch (node.kind) {
      case NodeKind::kLiteral: return literal(node);
      case NodeKind::kName: return name(node);
      case NodeKind::kCast: {
        auto v = eval(*node.operands[0]);
        if (!v) return std::nullopt;
        return convert_value(*v, node.type, error_);
      }
      case NodeKind::kUnary: return unary(node);
      case NodeKind::kBinary: return binary(node);
      case NodeKind::kSelect: {
        auto c = eval(*node.operands[0]);
        if (!c) return std::nullopt;
        return eval(*node.operands[c->b ? 1 : 2]);  // only the chosen branch, as the C++ `?:`
      }
      case NodeKind::kCall: return call(node);
    }
    return fail("unknown node");
  }

 private:
  std::optional<Value> fail(std::string message) {
    set_error(error_, std::move(message));
    return std::nullopt;
  }

  std::optional<Value> literal(const Node& node) {
    const Literal& lit = node.literal;
    if (node.type == ScalarType::kBool) return Value::of_bool(lit.bool_value);
    if (is_integer(node.type)) return Value::of_int(lit.int_value, node.type);
    return Value::of_float(lit.float_value, node.type);
  }

  std::optional<Value> name(const Node& node) {
    std::optional<Value> v;
    switch (node.name_kind) {
      case NameKind::kInput:
        if (bindings_.input) v = bindings_.input(node.name);
        if (!v) return fail(fmt::format("no value for input '{}'", node.name));
        break;
      case NameKind::kAttribute:
        if (bindings_.attribute) v = bindings_.attribute(node.name);
        if (!v) return fail(fmt::format("no value for attribute '{}'", node.name));
        break;
      case NameKind::kAccumulator:
        v = bindings_.accumulator;
        if (!v) return fail("no value for 'acc'");
        break;
      case NameKind::kCount:
        if (!bindings_.count) return fail("no value for 'n'");
        v = Value::of_int(*bindings_.count, ScalarType::kInt64);
        break;
      case NameKind::kUnresolved: return fail(fmt::format("unresolved name '{}'", node.name));
    }
    return convert_value(*v, node.type, error_);
  }

  std::optional<Value> unary(const Node& node) {
    auto v = eval(*node.operands[0]);
    if (!v) return std::nullopt;
    if (node.unary == UnaryOp::kNot) return Value::of_bool(!v->b);
    if (is_integer(node.type)) return Value::of_int(wrap_to(node.type, 0 - static_cast<uint64_t>(v->i)), node.type);
    return Value::of_float(-v->f, node.type);
  }

  template <typename T>
  static std::optional<Value> float_op(BinaryOp op, T a, T b, ScalarType t) {
    switch (op) {
      case BinaryOp::kAdd: return Value::of_float(static_cast<T>(a + b), t);
      case BinaryOp::kSub: return Value::of_float(static_cast<T>(a - b), t);
      case BinaryOp::kMul: return Value::of_float(static_cast<T>(a * b), t);
      case BinaryOp::kDiv: return Value::of_float(static_cast<T>(a / b), t);
      case BinaryOp::kMod: return Value::of_float(std::fmod(a, b), t);
      case BinaryOp::kEq: return Value::of_bool(a == b);
      case BinaryOp::kNe: return Value::of_bool(a != b);
      case BinaryOp::kLt: return Value::of_bool(a < b);
      case BinaryOp::kLe: return Value::of_bool(a <= b);
      case BinaryOp::kGt: return Value::of_bool(a > b);
      case BinaryOp::kGe: return Value::of_bool(a >= b);
      default: return std::nullopt;
    }
  }

  std::optional<Value> int_op(BinaryOp op, int64_t a, int64_t b, ScalarType t) {
    const auto ua = static_cast<uint64_t>(a);
    const auto ub = static_cast<uint64_t>(b);
    const int64_t lowest = t == ScalarType::kInt32 ? std::numeric_limits<int32_t>::min() : std::numeric_limits<int64_t>::min();
    switch (op) {
      case BinaryOp::kAdd: return Value::of_int(wrap_to(t, ua + ub), t);
      case BinaryOp::kSub: return Value::of_int(wrap_to(t, ua - ub), t);
      case BinaryOp::kMul: return Value::of_int(wrap_to(t, ua * ub), t);
      case BinaryOp::kDiv:
      case BinaryOp::kMod:
        if (b == 0) return fail(op == BinaryOp::kDiv ? "integer division by zero" : "integer remainder by zero");
        if (a == lowest && b == -1) return fail(fmt::format("{} overflow in {} / -1", name_of(t), a));
        return Value::of_int(op == BinaryOp::kDiv ? a / b : a % b, t);
      case BinaryOp::kEq: return Value::of_bool(a == b);
      case BinaryOp::kNe: return Value::of_bool(a != b);
      case BinaryOp::kLt: return Value::of_bool(a < b);
      case BinaryOp::kLe: return Value::of_bool(a <= b);
      case BinaryOp::kGt: return Value::of_bool(a > b);
      case BinaryOp::kGe: return Value::of_bool(a >= b);
      default: return std::nullopt;
    }
  }

  std::optional<Value> binary(const Node& node) {
    const BinaryOp op = node.binary;
    auto a = eval(*node.operands[0]);
    if (!a) return std::nullopt;
    // && and || short-circuit, as in the emitted code.
    if (op == BinaryOp::kAnd && !a->b) return Value::of_bool(false);
    if (op == BinaryOp::kOr && a->b) return Value::of_bool(true);
    auto b = eval(*node.operands[1]);
    if (!b) return std::nullopt;
    if (op == BinaryOp::kAnd || op == BinaryOp::kOr) return Value::of_bool(b->b);
    const ScalarType t = node.operands[0]->type;  // operands share one type after checking
    if (t == ScalarType::kBool) return Value::of_bool(op == BinaryOp::kEq ? a->b == b->b : a->b != b->b);
    if (t == ScalarType::kFloat32) return float_op<float>(op, static_cast<float>(a->f), static_cast<float>(b->f), t);
    if (t == ScalarType::kFloat64) return float_op<double>(op, a->f, b->f, t);
    return int_op(op, a->i, b->i, t);
  }

  template <typename T>
  static T float_call(Function f, T x, T y) {
    switch (f) {
      case Function::kMin: return std::min(x, y);
      case Function::kMax: return std::max(x, y);
      case Function::kPow: return std::pow(x, y);
      case Function::kAbs: return std::abs(x);
      case Function::kFloor: return std::floor(x);
      case Function::kCeil: return std::ceil(x);
      case Function::kTrunc: return std::trunc(x);
      case Function::kExp: return kforge::math::exp(x);
      case Function::kExpm1: return std::expm1(x);
      case Function::kLog: return std::log(x);
      case Function::kLog1p: return std::log1p(x);
      case Function::kLog2: return std::log2(x);
      case Function::kLog10: return std::log10(x);
      case Function::kSqrt: return std::sqrt(x);
      case Function::kRsqrt: return T(1) / std::sqrt(x);
      case Function::kSigmoid: return T(1) / (T(1) + kforge::math::exp(-x));
      case Function::kErf: return kforge::math::erf(x);
      case Function::kSin: return std::sin(x);
      case Function::kCos: return std::cos(x);
      case Function::kTan: return std::tan(x);
      case Function::kAsin: return std::asin(x);
      case Function::kAcos: return std::acos(x);
      case Function::kAtan: return std::atan(x);
      case Function::kSinh: return std::sinh(x);
      case Function::kCosh: return std::cosh(x);
      case Function::kTanh: return std::tanh(x);
      default: return x;
    }
  }

  std::optional<Value> call(const Node& node) {
    std::vector<Value> args;
    for (const NodePtr& operand : node.operands) {
      auto v = eval(*operand);
      if (!v) return std::nullopt;
      args.push_back(*v);
    }
    const Function f = node.function;
    const ScalarType arg_type = node.operands[0]->type;
    const Value& x = args[0];
    const Value y = args.size() > 1 ? args[1] : x;
    if (f == Function::kIsnan || f == Function::kIsinf || f == Function::kIsfinite) {
      const double v = x.f;
      return Value::of_bool(f == Function::kIsnan ? std::isnan(v) : f == Function::kIsinf ? std::isinf(v) : std::isfinite(v));
    }
    if (is_integer(arg_type)) {
      switch (f) {
        case Function::kMin: return Value::of_int(std::min(x.i, y.i), node.type);
        case Function::kMax: return Value::of_int(std::max(x.i, y.i), node.type);
        case Function::kAbs: return Value::of_int(wrap_to(node.type, x.i < 0 ? 0 - static_cast<uint64_t>(x.i) : x.i), node.type);
        default: return Value::of_int(x.i, node.type);  // floor, ceil, trunc: identity on integers
      }
    }
    if (arg_type == ScalarType::kFloat32) {
      return Value::of_float(float_call<float>(f, static_cast<float>(x.f), static_cast<float>(y.f)), node.type);
    }
    return Value::of_float(float_call<double>(f, x.f, y.f), node.type);
  }

  const EvalBindings& bindings_;
  std::string* error_;
};

}  // namespace

std::optional<Value> evaluate(const Node& typed, const EvalBindings& bindings, std::string* error) {
  Evaluator evaluator(bindings, error);
  return evaluator.eval(typed);
}

}  // namespace kforge::expr
