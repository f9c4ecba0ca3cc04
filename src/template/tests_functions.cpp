// Built-in tests (`x is name`) and global functions (range, namespace, dict), after Jinja 3.1's
// jinja2/tests.py and jinja2/defaults.py.
#include <fmt/format.h>

#include <cmath>

#include "template/callable.h"
#include "template/env_impl.h"
#include "template/unicode_case.h"
#include "template/value_ops.h"

namespace kforge::tmpl {

namespace {

/// Python's `value % n == 0` for numbers.
bool divisible(const CallArgs& a, const Value& v, const Value& n) {
  if (!is_numeric(v) || !is_numeric(n)) {
    a.fail(fmt::format("unsupported operand types for %: {} and {}", v.type_name(), n.type_name()));
  }
  auto num = [](const Value& x) { return x.is_bool() ? (x.as_bool() ? 1.0 : 0.0) : x.as_number(); };
  if (!v.is_float() && !n.is_float()) {
    const int64_t x = v.is_bool() ? v.as_bool() : v.as_int();
    const int64_t y = n.is_bool() ? n.as_bool() : n.as_int();
    if (y == 0) a.fail("integer division or modulo by zero");
    return y == -1 || x % y == 0;
  }
  if (num(n) == 0) a.fail("float modulo");
  return std::fmod(num(v), num(n)) == 0;
}

bool contains(const CallArgs& a, const Value& needle, const Value& seq) {
  if (seq.is_string()) {
    if (!needle.is_string()) a.fail(fmt::format("'in <string>' requires a string on the left, not {}", a_type(needle)));
    return seq.as_string().find(needle.as_string()) != std::string::npos;
  }
  if (seq.is_map()) return needle.is_string() && seq.as_map().contains(needle.as_string());
  if (seq.is_list()) {
    for (const Value& item : seq.as_list()) {
      if (values_equal(needle, item)) return true;
    }
    return false;
  }
  a.fail(fmt::format("'in' needs a string, list or map, not {}", a_type(seq)));
}

int ordered(const CallArgs& a, const Value& x, const Value& y) {
  auto c = compare_values(x, y);
  if (!c) a.fail(fmt::format("cannot compare {} with {}", a_type(x), a_type(y)));
  return *c;
}

/// Python's str.islower() / str.isupper(): at least one cased character and none of the other case.
bool has_lower_or_upper(const std::string& s, bool want_lower) {
  bool cased = false;
  size_t i = 0;
  while (i < s.size()) {
    const uint32_t cp = utf8_decode(s, i);
    const bool lower = is_lower_cp(cp), upper = is_upper_cp(cp);
    if (want_lower ? upper : lower) return false;
    cased = cased || lower || upper;
  }
  return cased;
}

}  // namespace

void register_builtin_tests(Environment& env) {
  const BuiltinOptions undefined_ok{.accepts_undefined = true};
  env.register_test("defined", {}, [](const CallArgs& a) { return !a.input().is_undefined(); }, undefined_ok);
  env.register_test("undefined", {}, [](const CallArgs& a) { return a.input().is_undefined(); }, undefined_ok);
  env.register_test("none", {}, [](const CallArgs& a) { return a.input().is_none(); });
  env.register_test("boolean", {}, [](const CallArgs& a) { return a.input().is_bool(); });
  env.register_test("true", {}, [](const CallArgs& a) { return a.input().is_bool() && a.input().as_bool(); });
  env.register_test("false", {}, [](const CallArgs& a) { return a.input().is_bool() && !a.input().as_bool(); });
  env.register_test("string", {}, [](const CallArgs& a) { return a.input().is_string(); });
  env.register_test("number", {}, [](const CallArgs& a) { return is_numeric(a.input()); });
  env.register_test("integer", {}, [](const CallArgs& a) { return a.input().is_int(); });
  env.register_test("float", {}, [](const CallArgs& a) { return a.input().is_float(); });
  env.register_test("mapping", {}, [](const CallArgs& a) { return a.input().is_map(); });
  env.register_test("sequence", {}, [](const CallArgs& a) {
    return a.input().is_list() || a.input().is_map() || a.input().is_string();
  });
  env.register_test("iterable", {}, [](const CallArgs& a) {
    return a.input().is_list() || a.input().is_map() || a.input().is_string();
  });
  env.register_test("callable", {}, [](const CallArgs& a) { return a.input().is_callable(); });
  env.register_test("even", {}, [](const CallArgs& a) { return divisible(a, a.input(), Value(2)); });
  env.register_test("odd", {}, [](const CallArgs& a) {
    // Python: value % 2 == 1 (the remainder takes the divisor's sign, so -3 is odd and 1.5 is not).
    const Value& v = a.input();
    if (!is_numeric(v)) a.fail(fmt::format("unsupported operand types for %: {} and integer", v.type_name()));
    if (!v.is_float()) {
      const int64_t x = v.is_bool() ? v.as_bool() : v.as_int();
      return ((x % 2) + 2) % 2 == 1;
    }
    double m = std::fmod(v.as_float(), 2.0);
    if (m < 0) m += 2.0;
    return m == 1.0;
  });
  env.register_test("divisibleby", {"num"}, [](const CallArgs& a) { return divisible(a, a.input(), a[0]); });
  env.register_test("in", {"seq"}, [](const CallArgs& a) { return contains(a, a.input(), a[0]); });
  env.register_test("lower", {}, [](const CallArgs& a) { return has_lower_or_upper(a.to_string(a.input()), true); });
  env.register_test("upper", {}, [](const CallArgs& a) { return has_lower_or_upper(a.to_string(a.input()), false); });
  env.register_test("sameas", {"other"}, [](const CallArgs& a) {
    const Value& x = a.input();
    const Value& y = a[0];
    if (x.kind() != y.kind()) return false;
    if (x.is_none()) return true;
    if (x.is_bool() || x.is_int() || x.is_float()) return values_equal(x, y);
    // Short strings are stored inline, without an object to compare: for them identity is equality.
    if (x.is_string() && !x.object() && !y.object()) return x.as_string() == y.as_string();
    return x.object() == y.object();
  });
  auto eq = [](const CallArgs& a) { return values_equal(a.input(), a[0]); };
  auto ne = [](const CallArgs& a) { return !values_equal(a.input(), a[0]); };
  auto lt = [](const CallArgs& a) { return ordered(a, a.input(), a[0]) == -1; };
  auto le = [](const CallArgs& a) { const int c = ordered(a, a.input(), a[0]); return c == -1 || c == 0; };
  auto gt = [](const CallArgs& a) { return ordered(a, a.input(), a[0]) == 1; };
  auto ge = [](const CallArgs& a) { const int c = ordered(a, a.input(), a[0]); return c == 1 || c == 0; };
  for (const char* n : {"eq", "equalto", "=="}) env.register_test(n, {"other"}, eq);
  for (const char* n : {"ne", "!="}) env.register_test(n, {"other"}, ne);
  for (const char* n : {"lt", "lessthan", "<"}) env.register_test(n, {"other"}, lt);
  for (const char* n : {"le", "<="}) env.register_test(n, {"other"}, le);
  for (const char* n : {"gt", "greaterthan", ">"}) env.register_test(n, {"other"}, gt);
  for (const char* n : {"ge", ">="}) env.register_test(n, {"other"}, ge);
}

void register_builtin_functions(Environment& env) {
  env.register_function("range", Signature({}, true, false), [](const CallArgs& a) -> Value {
    const auto args = a.varargs();
    if (args.empty() || args.size() > 3) a.fail(fmt::format("range expected 1 to 3 arguments, got {}", args.size()));
    for (const Value& v : args) {
      if (!v.is_int() && !v.is_bool()) a.fail(fmt::format("range() arguments must be integers, not {}", v.type_name()));
    }
    auto get = [&](size_t i) { return args[i].is_bool() ? int64_t{args[i].as_bool()} : args[i].as_int(); };
    int64_t start = 0, stop, step = 1;
    if (args.size() == 1) {
      stop = get(0);
    } else {
      start = get(0);
      stop = get(1);
      if (args.size() == 3) step = get(2);
    }
    if (step == 0) a.fail("range() step must not be zero");
    // Jinja's sandbox-free range still refuses more than MAX_RANGE (100000) items.
    const __int128 span = step > 0 ? (static_cast<__int128>(stop) - start + step - 1) / step
                                   : (static_cast<__int128>(start) - stop - step - 1) / -step;
    if (span > 100000) a.fail("range too big: more than 100000 items");
    List out;
    if (span > 0) out.reserve(static_cast<size_t>(span));
    // Item k is start + k * step, which lies between start and stop: stepping past stop could overflow int64.
    for (int64_t k = 0; k < span; ++k) out.emplace_back(static_cast<int64_t>(start + static_cast<__int128>(k) * step));
    return Value(std::move(out));
  });
  auto make_map = [](const CallArgs& a, const char* what) {
    Map attrs;
    if (a.varargs().size() > 1) a.fail(fmt::format("{} expected at most 1 positional argument, got {}", what, a.varargs().size()));
    if (!a.varargs().empty()) {
      const Value& init = a.varargs()[0];
      if (init.is_map()) {
        for (const auto& [k, v] : init.as_map()) attrs.set(k, v);
      } else if (init.is_list()) {
        for (const Value& pair : init.as_list()) {
          if (!pair.is_list() || pair.as_list().size() != 2 || !pair.as_list()[0].is_string()) {
            a.fail(fmt::format("{}: each item must be a [key, value] pair with a string key", what));
          }
          attrs.set(pair.as_list()[0].as_string(), pair.as_list()[1]);
        }
      } else {
        a.fail(fmt::format("{} needs a map or a list of pairs, not {}", what, a_type(init)));
      }
    }
    for (const auto& [k, v] : a.kwargs()) attrs.set(k, v);
    return attrs;
  };
  env.register_function("namespace", Signature({}, true, true), [make_map](const CallArgs& a) -> Value {
    auto ns = std::make_shared<NamespaceObject>();
    ns->attrs = make_map(a, "namespace()");
    RenderNamespaces::note(ns);
    return Value::namespace_object(std::move(ns));
  });
  env.register_function("dict", Signature({}, true, true), [make_map](const CallArgs& a) -> Value {
    return Value(make_map(a, "dict()"));
  });
}

}  // namespace kforge::tmpl
