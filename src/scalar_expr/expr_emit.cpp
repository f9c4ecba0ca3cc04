#include "scalar_expr/expr_emit.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <limits>

#include "scalar_expr/expr_builtins.h"

namespace kforge::expr {

EmitNames EmitNames::from_maps(std::map<std::string, std::string, std::less<>> inputs,
                               std::map<std::string, std::string, std::less<>> attributes) {
  EmitNames names;
  names.input = [inputs = std::move(inputs)](std::string_view name) {
    auto it = inputs.find(name);
    return it == inputs.end() ? std::string(name) : it->second;
  };
  names.attribute = [attributes = std::move(attributes)](std::string_view name) {
    auto it = attributes.find(name);
    return it == attributes.end() ? std::string(name) : it->second;
  };
  return names;
}

namespace {

// C++ operator precedence, higher binds tighter.
enum Prec : int {
  kPrecTernary = 3,
  kPrecOr = 4,
  kPrecAnd = 5,
  kPrecEquality = 9,
  kPrecRelational = 10,
  kPrecAdditive = 12,
  kPrecMultiplicative = 13,
  kPrecUnary = 15,
  kPrecPrimary = 16,
};

struct Text {
  std::string text;
  int prec = kPrecPrimary;
};

int precedence(BinaryOp op) {
  switch (op) {
    case BinaryOp::kMul:
    case BinaryOp::kDiv:
    case BinaryOp::kMod: return kPrecMultiplicative;
    case BinaryOp::kAdd:
    case BinaryOp::kSub: return kPrecAdditive;
    case BinaryOp::kLt:
    case BinaryOp::kLe:
    case BinaryOp::kGt:
    case BinaryOp::kGe: return kPrecRelational;
    case BinaryOp::kEq:
    case BinaryOp::kNe: return kPrecEquality;
    case BinaryOp::kAnd: return kPrecAnd;
    case BinaryOp::kOr: return kPrecOr;
  }
  return kPrecPrimary;
}

bool is_comparison(BinaryOp op) {
  const int p = precedence(op);
  return p == kPrecRelational || p == kPrecEquality;
}

std::string paren(const Text& t, int min_prec) {
  return t.prec < min_prec ? "(" + t.text + ")" : t.text;
}

// A caller-provided name text is used bare when it is a primary expression: an identifier, possibly with
// member accesses and subscripts (`x`, `attrs.alpha`, `in0[i]`, `v.x`); anything else is parenthesised.
bool is_primary_text(std::string_view text) {
  if (text.empty() || !(std::isalpha(static_cast<unsigned char>(text[0])) || text[0] == '_')) return false;
  int depth = 0;
  for (char c : text) {
    if (c == '[') {
      ++depth;
    } else if (c == ']') {
      if (--depth < 0) return false;
    } else if (depth == 0 && !(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == ':')) {
      return false;
    }
  }
  return depth == 0;
}

std::string float_digits(double value, ScalarType type) {
  // Shortest text that reads back as the same value of the type, kept recognisably floating point.
  std::string text = type == ScalarType::kFloat32 ? fmt::format("{}", static_cast<float>(value)) : fmt::format("{}", value);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

class Emitter {
 public:
  Emitter(EmitTarget target, const EmitNames& names) : target_(target), names_(names) {}

  Text emit(const Node& node) {
    if (!node.typed) return {"/*untyped*/"};
    switch (node.kind) {
      case NodeKind::kLiteral: return literal(node.literal, node.type);
      case NodeKind::kName: return name(node);
      case NodeKind::kUnary: return unary(node);
      case NodeKind::kBinary: return binary(node);
      case NodeKind::kSelect: return select(node);
      case NodeKind::kCall: return call(node);
      case NodeKind::kCast:
        return {fmt::format("static_cast<{}>({})", cpp_type_name(node.type), emit(*node.operands[0]).text)};
    }
    return {"/*?*/"};
  }

  Text literal(const Literal& lit, ScalarType type) const {
    const bool cuda = target_ == EmitTarget::kCuda;
    switch (type) {
      case ScalarType::kBool: return {lit.bool_value ? "true" : "false"};
      case ScalarType::kInt32: {
        const int64_t v = lit.int_value;
        if (v == std::numeric_limits<int32_t>::min()) return {"INT32_MIN"};
        if (v == std::numeric_limits<int32_t>::max()) return {"INT32_MAX"};
        return {fmt::format("{}", v), v < 0 ? kPrecUnary : kPrecPrimary};
      }
      case ScalarType::kInt64: {
        const int64_t v = lit.int_value;
        if (v == std::numeric_limits<int64_t>::min()) return {"INT64_MIN"};
        if (v == std::numeric_limits<int64_t>::max()) return {"INT64_MAX"};
        return {fmt::format("int64_t{{{}}}", v)};
      }
      case ScalarType::kFloat32:
      case ScalarType::kFloat64: {
        const bool f32 = type == ScalarType::kFloat32;
        const double v = f32 ? static_cast<double>(static_cast<float>(lit.float_value)) : lit.float_value;
        std::string text;
        if (std::isinf(v)) {
          text = cuda ? (f32 ? "HUGE_VALF" : "HUGE_VAL")
                      : (f32 ? "std::numeric_limits<float>::infinity()" : "std::numeric_limits<double>::infinity()");
          if (v < 0) return {"-" + text, kPrecUnary};
          return {text};
        }
        if (std::isnan(v)) {
          if (cuda) return {f32 ? "NAN" : "static_cast<double>(NAN)"};
          return {f32 ? "std::numeric_limits<float>::quiet_NaN()" : "std::numeric_limits<double>::quiet_NaN()"};
        }
        text = float_digits(v, type) + (f32 ? "f" : "");
        return {text, text[0] == '-' ? kPrecUnary : kPrecPrimary};
      }
      default: return {"/*?*/"};
    }
  }

 private:
  Text name(const Node& node) const {
    std::string text;
    switch (node.name_kind) {
      case NameKind::kInput: text = names_.input ? names_.input(node.name) : node.name; break;
      case NameKind::kAttribute: text = names_.attribute ? names_.attribute(node.name) : node.name; break;
      case NameKind::kAccumulator: text = names_.accumulator; break;
      case NameKind::kCount: text = names_.count; break;
      case NameKind::kUnresolved: text = node.name; break;
    }
    if (is_primary_text(text)) return {text};
    return {"(" + text + ")"};
  }

  // `-a` / `!a`, never `--a`.
  static Text prefix(std::string_view op, const Text& operand) {
    std::string inner = paren(operand, kPrecUnary);
    if (!inner.empty() && (inner[0] == '-' || inner[0] == '!')) inner = "(" + inner + ")";
    return {std::string(op) + inner, kPrecUnary};
  }

  Text unary(const Node& node) {
    return prefix(spelling(node.unary), emit(*node.operands[0]));
  }

  // Parenthesise what -Wparentheses / -Wlogical-not-parentheses would flag, beyond what precedence needs.
  static bool needs_clarity_parens(const Node& parent, const Node& child) {
    if (child.kind == NodeKind::kBinary) {
      const BinaryOp p = parent.binary;
      const BinaryOp c = child.binary;
      if ((p == BinaryOp::kAnd || p == BinaryOp::kOr) && (c == BinaryOp::kAnd || c == BinaryOp::kOr) && p != c) return true;
      if (is_comparison(p) && is_comparison(c)) return true;
    }
    if (child.kind == NodeKind::kUnary && child.unary == UnaryOp::kNot && is_comparison(parent.binary)) return true;
    return false;
  }

  std::string operand(const Node& parent, const Node& child, int min_prec) {
    const Text t = emit(child);
    if (needs_clarity_parens(parent, child)) return "(" + t.text + ")";
    return paren(t, min_prec);
  }

  Text binary(const Node& node) {
    const int prec = precedence(node.binary);
    const Node& a = *node.operands[0];
    const Node& b = *node.operands[1];
    if (node.binary == BinaryOp::kMod && is_float(node.operands[0]->type)) {
      return call_text(float_function("fmod", a.type), {emit(a).text, emit(b).text});
    }
    return {fmt::format("{} {} {}", operand(node, a, prec), spelling(node.binary), operand(node, b, prec + 1)), prec};
  }

  Text select(const Node& node) {
    const Text cond = emit(*node.operands[0]);
    const Text a = emit(*node.operands[1]);
    const Text b = emit(*node.operands[2]);
    // Nested conditionals are parenthesised for the reader, although C++ would not need it.
    return {fmt::format("{} ? {} : {}", paren(cond, kPrecOr), paren(a, kPrecOr), paren(b, kPrecOr)), kPrecTernary};
  }

  static Text call_text(const std::string& fn, std::initializer_list<std::string> args) {
    std::string text = fn + "(";
    bool first = true;
    for (const std::string& a : args) {
      if (!first) text += ", ";
      text += a;
      first = false;
    }
    return {text + ")"};
  }

  // The name of a float math function: std::NAME in C++ (kforge::math::NAME for exp and erf, see
  // calls_runtime_math), NAMEf / NAME in CUDA.
  std::string float_function(std::string_view base, ScalarType type) const {
    if (target_ == EmitTarget::kCpp) {
      return base == "exp" || base == "erf" ? fmt::format("kforge::math::{}", base) : fmt::format("std::{}", base);
    }
    return type == ScalarType::kFloat32 ? fmt::format("{}f", base) : std::string(base);
  }

  Text one(const Node& node) {
    const Text arg = emit(*node.operands[0]);
    return {arg.text, arg.prec};
  }

  Text call(const Node& node) {
    const ScalarType t = node.type;
    const ScalarType arg_type = node.operands[0]->type;
    const bool cpp = target_ == EmitTarget::kCpp;
    const bool f32 = arg_type == ScalarType::kFloat32;
    const std::string one_text = f32 ? "1.0f" : "1.0";
    auto arg = [&](size_t i) { return emit(*node.operands[i]).text; };
    const std::string_view name = function_info(node.function).name;
    switch (node.function) {
      case Function::kMin:
      case Function::kMax: {
        if (cpp) return call_text(fmt::format("std::{}", name), {arg(0), arg(1)});
        // Floats: kforge_fused.cuh's std_min / std_max, whose NaN behaviour is std::min / std::max's (fminf /
        // fmaxf's is not).
        if (is_float(t)) return call_text(fmt::format("kforge::cuda::std_{}", name), {arg(0), arg(1)});
        return call_text(std::string(name), {arg(0), arg(1)});
      }
      case Function::kPow: return call_text(float_function("pow", t), {arg(0), arg(1)});
      case Function::kAbs:
        if (cpp) return call_text("std::abs", {arg(0)});
        if (is_float(t)) return call_text(float_function("fabs", t), {arg(0)});
        if (t == ScalarType::kInt32) return call_text("abs", {arg(0)});
        return call_text("static_cast<int64_t>", {call_text("llabs", {arg(0)}).text});
      case Function::kFloor:
      case Function::kCeil:
      case Function::kTrunc:
        if (!is_float(t)) return one(node);  // identity on integers
        return call_text(float_function(name, t), {arg(0)});
      case Function::kRsqrt:
        if (!cpp) return call_text(float_function("rsqrt", t), {arg(0)});
        return {fmt::format("{} / {}", one_text, call_text("std::sqrt", {arg(0)}).text), kPrecMultiplicative};
      case Function::kSigmoid: {
        const Text neg = prefix("-", emit(*node.operands[0]));
        return {fmt::format("{0} / ({0} + {1})", one_text, call_text(float_function("exp", t), {neg.text}).text),
                kPrecMultiplicative};
      }
      case Function::kIsnan:
      case Function::kIsinf:
      case Function::kIsfinite:
        return call_text(cpp ? fmt::format("std::{}", name) : std::string(name), {arg(0)});
      default: return call_text(float_function(name, t), {arg(0)});
    }
  }

  EmitTarget target_;
  const EmitNames& names_;
};

}  // namespace

bool calls_runtime_math(const Node& typed) {
  if (typed.kind == NodeKind::kCall &&
      (typed.function == Function::kExp || typed.function == Function::kErf || typed.function == Function::kSigmoid)) {
    return true;
  }
  for (const NodePtr& operand : typed.operands) {
    if (operand && calls_runtime_math(*operand)) return true;
  }
  return false;
}

std::string emit(const Node& typed, EmitTarget target, const EmitNames& names) {
  Emitter emitter(target, names);
  return emitter.emit(typed).text;
}

std::string emit_literal(const Literal& literal, ScalarType type, EmitTarget target) {
  const EmitNames names;
  const Emitter emitter(target, names);
  return emitter.literal(literal, compute_type(type)).text;
}

}  // namespace kforge::expr
