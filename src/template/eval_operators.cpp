// Template expressions, the text and the operators (renderer.h): how values print and convert to strings, and
// the binary and comparison operators with Python's semantics (numbers, strings, lists, repetition).
#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <limits>

#include "support/text.h"
#include "template/renderer.h"
#include "template/value_ops.h"

namespace kforge::tmpl {

using namespace ast;

// ---------------------------------------------------------------- text

namespace {
void append_int(std::string& out, int64_t i) {
  char buf[24];
  const auto res = std::to_chars(buf, buf + sizeof buf, i);
  out.append(buf, static_cast<size_t>(res.ptr - buf));
}
}  // namespace

void Renderer::stringify(const Value& v, std::string& out, SourceLoc loc) {
  if (is_lenient_undefined(v)) return;
  switch (v.kind()) {
    case Value::Kind::kString: out += v.as_string(); return;
    case Value::Kind::kInt: append_int(out, v.as_int()); return;
    case Value::Kind::kFloat: out += format_float(v.as_float()); return;
    case Value::Kind::kBool: out += v.as_bool() ? "true" : "false"; return;
    case Value::Kind::kNone: out += "None"; return;
    case Value::Kind::kList:
    case Value::Kind::kMap:
      for (const Value& item : v.is_list() ? v.as_list() : List{}) require_defined(item, loc);
      out += python_repr(v);
      return;
    case Value::Kind::kUndefined: fail_undefined(v, loc);
    case Value::Kind::kCallable: fail(loc, fmt::format("cannot convert {} to text; call it", v.as_callable().describe()));
    default: fail(loc, fmt::format("cannot convert {} to text", a_type(v)));
  }
}

void Renderer::print(const Value& v, std::string& out, SourceLoc loc, bool tuple_literal) {
  if (is_lenient_undefined(v)) return;
  switch (v.kind()) {
    case Value::Kind::kString: out += v.as_string(); return;
    case Value::Kind::kInt: append_int(out, v.as_int()); return;
    case Value::Kind::kFloat: out += format_float(v.as_float()); return;
    case Value::Kind::kBool: out += v.as_bool() ? "true" : "false"; return;
    case Value::Kind::kUndefined: fail_undefined(v, loc);
    case Value::Kind::kNone:
    case Value::Kind::kList:
    case Value::Kind::kMap: {
      std::vector<DiagNote> notes;
      if (tuple_literal) {
        notes.push_back({SourceLoc{}, "to output '{{' literally (e.g. C++ brace initialisation), use {% raw %}...{% endraw %} or {{ '{{' }}"});
      }
      fail(loc, fmt::format("cannot print {}; use `join`, `tojson` or `default`",
                            v.is_none() ? "none" : v.is_list() ? "a list" : "a map"),
           std::move(notes));
    }
    case Value::Kind::kCallable: fail(loc, fmt::format("cannot print {}; call it", v.as_callable().describe()));
    default: fail(loc, fmt::format("cannot print {}", a_type(v)));
  }
}

// ---------------------------------------------------------------- operators

namespace {

const char* op_symbol(BinaryOp op) {
  switch (op) {
    case BinaryOp::kAdd: return "+";
    case BinaryOp::kSub: return "-";
    case BinaryOp::kMul: return "*";
    case BinaryOp::kDiv: return "/";
    case BinaryOp::kFloorDiv: return "//";
    case BinaryOp::kMod: return "%";
    case BinaryOp::kPow: return "**";
    default: return "?";
  }
}

Value repeat(const Value& seq, int64_t times) {
  if (times <= 0) return seq.is_string() ? Value(std::string()) : Value(List{});
  if (seq.is_string()) {
    std::string out;
    for (int64_t i = 0; i < times; ++i) out += seq.as_string();
    return Value(std::move(out));
  }
  List out;
  for (int64_t i = 0; i < times; ++i) out.insert(out.end(), seq.as_list().begin(), seq.as_list().end());
  return Value(std::move(out));
}

}  // namespace

Value Renderer::binary(BinaryOp op, const Value& a, const Value& b, SourceLoc loc) {
  if (op == BinaryOp::kConcat) {
    std::string s;
    stringify(a, s, loc);
    stringify(b, s, loc);
    check_size(s.size(), loc, "the concatenated string");
    return Value(std::move(s));
  }
  require_defined(a, loc);
  require_defined(b, loc);
  auto overflow = [&]() -> Value { fail(loc, fmt::format("integer overflow in '{}'", op_symbol(op))); };
  if (is_numeric(a) && is_numeric(b)) {
    const bool ints = !a.is_float() && !b.is_float();
    if (ints) {
      const int64_t x = to_int(a), y = to_int(b);
      int64_t r = 0;
      switch (op) {
        case BinaryOp::kAdd: return __builtin_add_overflow(x, y, &r) ? overflow() : Value(r);
        case BinaryOp::kSub: return __builtin_sub_overflow(x, y, &r) ? overflow() : Value(r);
        case BinaryOp::kMul: return __builtin_mul_overflow(x, y, &r) ? overflow() : Value(r);
        case BinaryOp::kDiv:
          if (y == 0) fail(loc, "division by zero");
          return Value(static_cast<double>(x) / static_cast<double>(y));
        case BinaryOp::kFloorDiv: {
          if (y == 0) fail(loc, "integer division or modulo by zero");
          if (x == std::numeric_limits<int64_t>::min() && y == -1) return overflow();
          int64_t q = x / y;
          if ((x % y != 0) && ((x < 0) != (y < 0))) --q;
          return Value(q);
        }
        case BinaryOp::kMod: {
          if (y == 0) fail(loc, "integer division or modulo by zero");
          if (y == -1) return Value(int64_t{0});
          int64_t m = x % y;
          if (m != 0 && ((m < 0) != (y < 0))) m += y;
          return Value(m);
        }
        case BinaryOp::kPow: {
          if (y < 0) {
            if (x == 0) fail(loc, "0.0 cannot be raised to a negative power");
            return Value(std::pow(static_cast<double>(x), static_cast<double>(y)));
          }
          int64_t result = 1, base = x, e = y;
          while (e > 0) {
            if (e & 1) {
              if (__builtin_mul_overflow(result, base, &result)) return overflow();
            }
            e >>= 1;
            if (e > 0 && __builtin_mul_overflow(base, base, &base)) return overflow();
          }
          return Value(result);
        }
        default: break;
      }
    } else {
      const double x = to_double(a), y = to_double(b);
      switch (op) {
        case BinaryOp::kAdd: return Value(x + y);
        case BinaryOp::kSub: return Value(x - y);
        case BinaryOp::kMul: return Value(x * y);
        case BinaryOp::kDiv:
          if (y == 0) fail(loc, "float division by zero");
          return Value(x / y);
        case BinaryOp::kFloorDiv:
        case BinaryOp::kMod: {
          if (y == 0) fail(loc, op == BinaryOp::kMod ? "float modulo" : "float divmod()");
          // Python's float_divmod.
          double mod = std::fmod(x, y);
          double div = (x - mod) / y;
          if (mod != 0) {
            if ((y < 0) != (mod < 0)) {
              mod += y;
              div -= 1.0;
            }
          } else {
            mod = std::copysign(0.0, y);
          }
          if (op == BinaryOp::kMod) return Value(mod);
          double floordiv;
          if (div != 0) {
            floordiv = std::floor(div);
            if (div - floordiv > 0.5) floordiv += 1.0;
          } else {
            floordiv = std::copysign(0.0, x / y);
          }
          return Value(floordiv);
        }
        case BinaryOp::kPow:
          if (x == 0 && y < 0) fail(loc, "0.0 cannot be raised to a negative power");
          if (x < 0 && y != std::floor(y)) fail(loc, "negative number cannot be raised to a fractional power");
          return Value(std::pow(x, y));
        default: break;
      }
    }
  }
  if (op == BinaryOp::kAdd && a.is_string() && b.is_string()) {
    check_size(a.as_string().size() + b.as_string().size(), loc, "the concatenated string");
    return Value(a.as_string() + b.as_string());
  }
  if (op == BinaryOp::kAdd && a.is_list() && b.is_list()) {
    check_size(a.as_list().size() + b.as_list().size(), loc, "the concatenated list");
    List out = a.as_list();
    out.insert(out.end(), b.as_list().begin(), b.as_list().end());
    return Value(std::move(out));
  }
  if (op == BinaryOp::kMul) {
    const bool seq_left = (a.is_string() || a.is_list()) && (b.is_int() || b.is_bool());
    if (seq_left || ((b.is_string() || b.is_list()) && (a.is_int() || a.is_bool()))) {
      const Value& seq = seq_left ? a : b;
      const int64_t times = to_int(seq_left ? b : a);
      const size_t unit = seq.is_string() ? seq.as_string().size() : seq.as_list().size();
      if (times > 0 && unit > 0) {
        const unsigned __int128 total = static_cast<unsigned __int128>(unit) * static_cast<uint64_t>(times);
        check_size(total > SIZE_MAX ? SIZE_MAX : static_cast<size_t>(total), loc, "the repeated sequence");
      }
      return repeat(seq, times);
    }
  }
  if (op == BinaryOp::kMod && a.is_string()) {
    fail(loc, "'%' string formatting is not supported", {{SourceLoc{}, "concatenate with '~' instead"}});
  }
  fail(loc, fmt::format("unsupported operand types for {}: {} and {}", op_symbol(op), a.type_name(), b.type_name()));
}

bool Renderer::compare(CompareOp op, const Value& a, const Value& b, SourceLoc loc) {
  require_defined(a, loc);
  require_defined(b, loc);
  switch (op) {
    case CompareOp::kEq: return values_equal(a, b);
    case CompareOp::kNe: return !values_equal(a, b);
    case CompareOp::kIn:
    case CompareOp::kNotIn: {
      bool found = false;
      if (b.is_string()) {
        if (!a.is_string()) fail(loc, fmt::format("'in <string>' requires a string on the left, not {}", a_type(a)));
        found = b.as_string().find(a.as_string()) != std::string::npos;
      } else if (b.is_list()) {
        for (const Value& item : b.as_list()) {
          if (values_equal(a, item)) {
            found = true;
            break;
          }
        }
      } else if (b.is_map()) {
        found = a.is_string() && b.as_map().contains(a.as_string());
      } else {
        fail(loc, fmt::format("'in' needs a string, list or map on the right, not {}", a_type(b)));
      }
      return op == CompareOp::kIn ? found : !found;
    }
    default: break;
  }
  const std::optional<int> c = compare_values(a, b);
  const char* sym = op == CompareOp::kLt ? "<" : op == CompareOp::kLe ? "<=" : op == CompareOp::kGt ? ">" : ">=";
  if (!c) fail(loc, fmt::format("'{}' is not supported between {} and {}", sym, a_type(a), a_type(b)));
  if (*c == 2) return false;  // NaN
  switch (op) {
    case CompareOp::kLt: return *c < 0;
    case CompareOp::kLe: return *c <= 0;
    case CompareOp::kGt: return *c > 0;
    default: return *c >= 0;
  }
}

}  // namespace kforge::tmpl
