// The built-in filters over sequences and maps (Jinja 3.1's jinja2/filters.py): join, first, last, sort, reverse,
// unique, map, select / reject (by value or attribute), items, dictsort, list, min, max, sum; and the helpers they
// share (the items of an iterable, attribute getters, Python's ordering). Registered by register_builtin_filters.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "template/callable.h"
#include "template/env_impl.h"
#include "template/unicode_case.h"
#include "template/value_ops.h"

namespace kforge::tmpl {

namespace {

/// The items a for loop would visit, without copying a list.
class Items {
 public:
  Items(const CallArgs& a, const Value& v) {
    if (v.is_list()) {
      list_ = &v.as_list();
    } else {
      owned_ = a.iterate(v);
      list_ = &owned_;
    }
  }
  const List& get() const { return *list_; }
  auto begin() const { return list_->begin(); }
  auto end() const { return list_->end(); }

 private:
  std::vector<Value> owned_;
  const List* list_;
};

/// Jinja's ignore_case postprocess: strings are compared lowercased.
Value ignore_case(const Value& v) { return v.is_string() ? Value(utf8_lower(v.as_string())) : v; }

/// make_attrgetter: `attribute` may be none (the item itself), a dotted path, or an integer index.
Value attr_of(const CallArgs& a, const Value& item, const Value& attribute) {
  if (attribute.is_none()) return item;
  if (attribute.is_int()) return a.get_attribute(item, std::to_string(attribute.as_int()));
  return a.get_attribute(item, a.to_string(attribute));
}

int compare_or_fail(const CallArgs& a, const Value& x, const Value& y) {
  if (x.is_undefined() || y.is_undefined()) {
    a.to_string(x.is_undefined() ? x : y);  // reports the undefined value
  }
  auto c = compare_values(x, y);
  if (!c) a.fail(fmt::format("cannot compare {} with {}", a_type(x), a_type(y)));
  return *c == 2 ? 0 : *c;
}

std::vector<Value> sorted_items(const CallArgs& a, std::vector<Value> items, bool reverse, bool case_sensitive,
                                const Value& attribute) {
  // make_multi_attrgetter: "a,b" sorts by several attributes.
  std::vector<Value> attrs;
  if (attribute.is_string()) {
    const std::string& spec = attribute.as_string();
    size_t begin = 0;
    while (begin <= spec.size()) {
      size_t end = spec.find(',', begin);
      if (end == std::string::npos) end = spec.size();
      attrs.emplace_back(spec.substr(begin, end - begin));
      begin = end + 1;
    }
  } else {
    attrs.push_back(attribute);
  }
  std::vector<std::pair<List, Value>> keyed;
  keyed.reserve(items.size());
  for (Value& item : items) {
    List key;
    for (const Value& attr : attrs) {
      Value k = attr_of(a, item, attr);
      key.push_back(case_sensitive ? k : ignore_case(k));
    }
    keyed.emplace_back(std::move(key), std::move(item));
  }
  std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& x, const auto& y) {
    for (size_t i = 0; i < x.first.size(); ++i) {
      const int c = compare_or_fail(a, x.first[i], y.first[i]);
      if (c != 0) return reverse ? c > 0 : c < 0;
    }
    return false;
  });
  std::vector<Value> out;
  out.reserve(keyed.size());
  for (auto& [k, v] : keyed) out.push_back(std::move(v));
  return out;
}

Value min_or_max(const CallArgs& a, bool want_max) {
  std::vector<Value> items = a.iterate(a.input());
  if (items.empty()) return a.undefined(fmt::format("'{}' of an empty sequence is undefined", want_max ? "max" : "min"));
  const bool case_sensitive = truthy(a[0]);
  size_t best = 0;
  Value best_key;
  for (size_t i = 0; i < items.size(); ++i) {
    Value key = attr_of(a, items[i], a[1]);
    if (!case_sensitive) key = ignore_case(key);
    if (i == 0) {
      best_key = key;
      continue;
    }
    const int c = compare_or_fail(a, key, best_key);
    if (want_max ? c > 0 : c < 0) {
      best = i;
      best_key = key;
    }
  }
  return items[best];
}

Value select_or_reject(const CallArgs& a, bool select, bool by_attribute) {
  std::span<const Value> rest = a.varargs();
  Value attribute;
  if (by_attribute) {
    if (rest.empty()) a.fail("missing parameter for attribute name");
    attribute = rest[0];
    rest = rest.subspan(1);
  }
  std::optional<std::string> test;
  if (!rest.empty()) {
    test = a.to_string(rest[0]);
    rest = rest.subspan(1);
  }
  if (!a.kwargs().empty()) a.fail(fmt::format("unexpected keyword argument '{}'", a.kwargs()[0].first));
  List out;
  for (const Value& item : Items(a, a.input())) {
    const Value subject = by_attribute ? attr_of(a, item, attribute) : item;
    bool result;
    if (test) {
      result = a.apply_test(*test, subject, rest);
    } else {
      if (subject.is_undefined()) a.to_string(subject);
      result = truthy(subject);
    }
    if (result == select) out.push_back(item);
  }
  return Value(std::move(out));
}

}  // namespace

void register_sequence_filters(Environment& env) {
  env.register_filter("join", {{"d", Value("")}, {"attribute", Value()}}, [](const CallArgs& a) -> Value {
    const std::string sep = a.to_string(a[0]);
    std::string out;
    bool first = true;
    for (const Value& item : Items(a, a.input())) {
      if (!first) out += sep;
      first = false;
      if (item.is_string() && a[1].is_none()) out += item.as_string();  // the common case, without a copy
      else out += a.to_string(attr_of(a, item, a[1]));
    }
    return Value(std::move(out));
  });

  env.register_filter("first", {}, [](const CallArgs& a) -> Value {
    const Value& v = a.input();
    if (v.is_list() && !v.as_list().empty()) return v.as_list().front();
    std::vector<Value> items = a.iterate(v);
    if (items.empty()) return a.undefined("'first' of an empty sequence is undefined");
    return items.front();
  });
  env.register_filter("last", {}, [](const CallArgs& a) -> Value {
    const Value& v = a.input();
    if (v.is_list() && !v.as_list().empty()) return v.as_list().back();
    std::vector<Value> items = a.iterate(v);
    if (items.empty()) return a.undefined("'last' of an empty sequence is undefined");
    return items.back();
  });

  env.register_filter("sort", {{"reverse", Value(false)}, {"case_sensitive", Value(false)}, {"attribute", Value()}},
                      [](const CallArgs& a) -> Value {
    return Value(sorted_items(a, a.iterate(a.input()), truthy(a[0]), truthy(a[1]), a[2]));
  });
  env.register_filter("reverse", {}, [](const CallArgs& a) -> Value {
    const Value& v = a.input();
    std::vector<Value> items = a.iterate(v);
    std::reverse(items.begin(), items.end());
    if (v.is_string()) {
      std::string s;
      for (const Value& c : items) s += c.as_string();
      return Value(std::move(s));
    }
    return Value(std::move(items));
  });
  env.register_filter("unique", {{"case_sensitive", Value(false)}, {"attribute", Value()}}, [](const CallArgs& a) -> Value {
    List out;
    List seen;
    for (const Value& item : Items(a, a.input())) {
      Value key = attr_of(a, item, a[1]);
      if (key.is_undefined()) a.to_string(key);
      if (!truthy(a[0])) key = ignore_case(key);
      bool dup = false;
      for (const Value& s : seen) {
        if (values_equal(s, key)) {
          dup = true;
          break;
        }
      }
      if (!dup) {
        seen.push_back(std::move(key));
        out.push_back(item);
      }
    }
    return Value(std::move(out));
  });

  env.register_filter("map", Signature({}, true, true), [](const CallArgs& a) -> Value {
    List out;
    if (!truthy(a.input())) return Value(std::move(out));
    const Value* attribute = nullptr;
    Value default_value;
    bool has_default = false;
    for (const auto& [k, v] : a.kwargs()) {
      if (k == "attribute" && a.varargs().empty()) {
        attribute = &v;
      } else if (k == "default" && a.varargs().empty()) {
        default_value = v;
        has_default = true;
      } else {
        a.fail(fmt::format("unexpected keyword argument '{}' to filter 'map'", k));
      }
    }
    if (attribute) {
      for (const Value& item : Items(a, a.input())) {
        Value v = attr_of(a, item, *attribute);
        if (v.is_undefined() && has_default) v = default_value;
        out.push_back(std::move(v));
      }
      return Value(std::move(out));
    }
    if (a.varargs().empty()) a.fail("'map' needs a filter name or attribute=");
    const std::string filter = a.to_string(a.varargs()[0]);
    const std::span<const Value> args = a.varargs().subspan(1);
    for (const Value& item : Items(a, a.input())) out.push_back(a.apply_filter(filter, item, args));
    return Value(std::move(out));
  });
  env.register_filter("select", Signature({}, true, true), [](const CallArgs& a) { return select_or_reject(a, true, false); });
  env.register_filter("reject", Signature({}, true, true), [](const CallArgs& a) { return select_or_reject(a, false, false); });
  env.register_filter("selectattr", Signature({}, true, true), [](const CallArgs& a) { return select_or_reject(a, true, true); });
  env.register_filter("rejectattr", Signature({}, true, true), [](const CallArgs& a) { return select_or_reject(a, false, true); });

  env.register_filter("items", {}, [](const CallArgs& a) -> Value {
    const Value& v = a.input();
    if (!v.is_map()) a.fail(fmt::format("'items' needs a map, not {}", a_type(v)));
    List out;
    out.reserve(v.as_map().size());
    for (const auto& [k, item] : v.as_map()) out.push_back(Value::list({Value(k), item}));
    return Value(std::move(out));
  });
  env.register_filter("dictsort", {{"case_sensitive", Value(false)}, {"by", Value("key")}, {"reverse", Value(false)}},
                      [](const CallArgs& a) -> Value {
    const Value& v = a.input();
    if (!v.is_map()) a.fail(fmt::format("'dictsort' needs a map, not {}", a_type(v)));
    const std::string by = a.to_string(a[1]);
    if (by != "key" && by != "value") a.fail("'by' must be 'key' or 'value'");
    const int pos = by == "key" ? 0 : 1;
    std::vector<Value> pairs;
    for (const auto& [k, item] : v.as_map()) pairs.push_back(Value::list({Value(k), item}));
    return Value(sorted_items(a, std::move(pairs), truthy(a[2]), truthy(a[0]), Value(static_cast<int64_t>(pos))));
  });

  env.register_filter("list", {}, [](const CallArgs& a) -> Value { return Value(a.iterate(a.input())); });
  env.register_filter("min", {{"case_sensitive", Value(false)}, {"attribute", Value()}},
                      [](const CallArgs& a) { return min_or_max(a, false); });
  env.register_filter("max", {{"case_sensitive", Value(false)}, {"attribute", Value()}},
                      [](const CallArgs& a) { return min_or_max(a, true); });
  env.register_filter("sum", {{"attribute", Value()}, {"start", Value(0)}}, [](const CallArgs& a) -> Value {
    Value total = a[1];
    for (const Value& item : Items(a, a.input())) {
      const Value x = attr_of(a, item, a[0]);
      if (x.is_undefined()) a.to_string(x);
      if (total.is_int() && x.is_int()) {
        int64_t r;
        if (__builtin_add_overflow(total.as_int(), x.as_int(), &r)) a.fail("integer overflow in 'sum'");
        total = Value(r);
      } else if ((total.is_number() || total.is_bool()) && (x.is_number() || x.is_bool())) {
        auto num = [](const Value& v) { return v.is_bool() ? (v.as_bool() ? 1.0 : 0.0) : v.as_number(); };
        if (!total.is_float() && !x.is_float()) {
          total = Value(static_cast<int64_t>(num(total) + num(x)));
        } else {
          total = Value(num(total) + num(x));
        }
      } else if (total.is_list() && x.is_list()) {
        List l = total.as_list();
        l.insert(l.end(), x.as_list().begin(), x.as_list().end());
        total = Value(std::move(l));
      } else {
        a.fail(fmt::format("unsupported operand types for +: {} and {}", total.type_name(), x.type_name()));
      }
    }
    return total;
  });
}

}  // namespace kforge::tmpl
