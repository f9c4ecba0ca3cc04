#include "template/value.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>
#include <charconv>
#include <cmath>
#include <cstring>
#include <functional>

#include "template/callable.h"
#include "template/value_ops.h"

namespace kforge::tmpl {

namespace {

struct ListObject {
  List items;
  SourceLoc origin;
};
struct MapObject {
  Map map;
  SourceLoc origin;
};

constexpr size_t kIndexThreshold = 8;

size_t hash_key(std::string_view key) { return std::hash<std::string_view>{}(key); }

}  // namespace

// ---------------------------------------------------------------- Map

Map::Map(std::initializer_list<Entry> entries) {
  for (const Entry& e : entries) set(e.first, e.second);
}

const Value* Map::find(std::string_view key) const { return const_cast<Map*>(this)->find(key); }

Value* Map::find(std::string_view key) {
  if (index_.empty()) {
    for (Entry& e : entries_) {
      if (e.first == key) return &e.second;
    }
    return nullptr;
  }
  const size_t mask = index_.size() - 1;
  for (size_t slot = hash_key(key) & mask;; slot = (slot + 1) & mask) {
    const uint32_t i = index_[slot];
    if (i == 0) return nullptr;
    if (entries_[i - 1].first == key) return &entries_[i - 1].second;
  }
}

void Map::set(std::string key, Value value) {
  if (Value* existing = find(key)) {
    *existing = std::move(value);
    return;
  }
  entries_.emplace_back(std::move(key), std::move(value));
  if (entries_.size() <= kIndexThreshold) return;
  if (entries_.size() * 2 > index_.size()) {
    rebuild_index();
    return;
  }
  const size_t mask = index_.size() - 1;
  size_t slot = hash_key(entries_.back().first) & mask;
  while (index_[slot] != 0) slot = (slot + 1) & mask;
  index_[slot] = static_cast<uint32_t>(entries_.size());
}

void Map::rebuild_index() {
  size_t capacity = 16;
  while (capacity < entries_.size() * 4) capacity *= 2;
  index_.assign(capacity, 0);
  const size_t mask = capacity - 1;
  for (size_t i = 0; i < entries_.size(); ++i) {
    size_t slot = hash_key(entries_[i].first) & mask;
    while (index_[slot] != 0) slot = (slot + 1) & mask;
    index_[slot] = static_cast<uint32_t>(i + 1);
  }
}

std::vector<std::string> Map::keys() const {
  std::vector<std::string> out;
  out.reserve(entries_.size());
  for (const Entry& e : entries_) out.push_back(e.first);
  return out;
}

// ---------------------------------------------------------------- Value

Value::Value(std::string s) : kind_(Kind::kString) {
  // A string that fits std::string's own buffer moves in without allocating; a longer one keeps its
  // buffer and gets a shared holder, so that copies do not copy the text.
  if (s.size() <= std::string().capacity()) {
    rep_ = Rep::kInline;
    new (&inline_string_) std::string(std::move(s));
  } else {
    rep_ = Rep::kShared;
    new (&ptr_) std::shared_ptr<const void>(std::make_shared<const std::string>(std::move(s)));
  }
}

Value::Value(List items) : kind_(Kind::kList), rep_(Rep::kShared) {
  new (&ptr_) std::shared_ptr<const void>(std::make_shared<ListObject>(ListObject{std::move(items), {}}));
}

Value::Value(Map map) : kind_(Kind::kMap), rep_(Rep::kShared) {
  new (&ptr_) std::shared_ptr<const void>(std::make_shared<MapObject>(MapObject{std::move(map), {}}));
}

Value Value::list(std::initializer_list<Value> items) { return Value(List(items)); }
Value Value::map() { return Value(Map()); }

const std::string& Value::empty_string() {
  static const std::string empty;
  return empty;
}

const std::shared_ptr<const void>& Value::shared_object() const {
  static const std::shared_ptr<const void> none;
  return rep_ == Rep::kShared ? ptr_ : none;
}

const List& Value::as_list() const {
  assert(kind_ == Kind::kList);
  return static_cast<const ListObject*>(ptr_.get())->items;
}

const Map& Value::as_map() const {
  assert(kind_ == Kind::kMap);
  return static_cast<const MapObject*>(ptr_.get())->map;
}

const Callable& Value::as_callable() const {
  assert(kind_ == Kind::kCallable);
  return *static_cast<const Callable*>(ptr_.get());
}

const NamespaceObject& Value::as_namespace() const {
  assert(kind_ == Kind::kNamespace);
  return *static_cast<const NamespaceObject*>(ptr_.get());
}

const UndefinedInfo& Value::as_undefined() const {
  assert(kind_ == Kind::kUndefined);
  return *static_cast<const UndefinedInfo*>(ptr_.get());
}

const Value* Value::find(std::string_view key) const {
  if (kind_ != Kind::kMap) return nullptr;
  return as_map().find(key);
}

size_t Value::size() const {
  switch (kind_) {
    case Kind::kString: return as_string().size();
    case Kind::kList: return as_list().size();
    case Kind::kMap: return as_map().size();
    default: return 0;
  }
}

Value& Value::set(std::string key, Value value) {
  assert(kind_ == Kind::kMap);
  if (ptr_.use_count() != 1) ptr_ = std::make_shared<MapObject>(*static_cast<const MapObject*>(ptr_.get()));
  const_cast<MapObject*>(static_cast<const MapObject*>(ptr_.get()))->map.set(std::move(key), std::move(value));
  return *this;
}

Value& Value::push_back(Value value) {
  assert(kind_ == Kind::kList);
  if (ptr_.use_count() != 1) ptr_ = std::make_shared<ListObject>(*static_cast<const ListObject*>(ptr_.get()));
  const_cast<ListObject*>(static_cast<const ListObject*>(ptr_.get()))->items.push_back(std::move(value));
  return *this;
}

SourceLoc Value::origin() const {
  if (kind_ == Kind::kList) return static_cast<const ListObject*>(ptr_.get())->origin;
  if (kind_ == Kind::kMap) return static_cast<const MapObject*>(ptr_.get())->origin;
  return {};
}

void Value::set_origin(SourceLoc loc) {
  if (kind_ == Kind::kList) {
    if (ptr_.use_count() != 1) ptr_ = std::make_shared<ListObject>(*static_cast<const ListObject*>(ptr_.get()));
    const_cast<ListObject*>(static_cast<const ListObject*>(ptr_.get()))->origin = loc;
  } else if (kind_ == Kind::kMap) {
    if (ptr_.use_count() != 1) ptr_ = std::make_shared<MapObject>(*static_cast<const MapObject*>(ptr_.get()));
    const_cast<MapObject*>(static_cast<const MapObject*>(ptr_.get()))->origin = loc;
  }
}

std::string_view Value::type_name() const {
  switch (kind_) {
    case Kind::kUndefined: return "undefined";
    case Kind::kNone: return "none";
    case Kind::kBool: return "boolean";
    case Kind::kInt: return "integer";
    case Kind::kFloat: return "float";
    case Kind::kString: return "string";
    case Kind::kList: return "list";
    case Kind::kMap: return "map";
    case Kind::kCallable: return "macro";
    case Kind::kNamespace: return "namespace";
    case Kind::kLoop: return "loop";
  }
  return "value";
}

Value Value::undefined(std::shared_ptr<const UndefinedInfo> info) {
  Value v;
  v.set_shared(Kind::kUndefined, std::move(info));
  return v;
}

Value Value::callable(std::shared_ptr<const Callable> fn) {
  Value v;
  v.set_shared(Kind::kCallable, std::move(fn));
  return v;
}

Value Value::namespace_object(std::shared_ptr<const NamespaceObject> ns) {
  Value v;
  v.set_shared(Kind::kNamespace, std::move(ns));
  return v;
}

Value Value::loop_object(std::shared_ptr<const void> loop) {
  Value v;
  v.set_shared(Kind::kLoop, std::move(loop));
  return v;
}

std::string a_type(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kNone: return "none";
    case Value::Kind::kUndefined: return "an undefined value";
    case Value::Kind::kInt: return "an integer";
    default: return "a " + std::string(v.type_name());
  }
}

// ---------------------------------------------------------------- Python semantics

std::string format_float(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  // Shortest round-trip digits and decimal exponent, then Python's repr layout: fixed notation when
  // -4 <= exponent < 16, otherwise d.ddde+XX.
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string_view sci(buf, static_cast<size_t>(res.ptr - buf));
  bool negative = false;
  if (!sci.empty() && sci[0] == '-') {
    negative = true;
    sci.remove_prefix(1);
  }
  const size_t e_pos = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e_pos)) {
    if (c != '.') digits += c;
  }
  int exponent = 0;
  std::from_chars(sci.data() + e_pos + 1 + (sci[e_pos + 1] == '+' ? 1 : 0), sci.data() + sci.size(), exponent);
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  std::string out = negative ? "-" : "";
  const int ndigits = static_cast<int>(digits.size());
  if (exponent >= -5 + 1 && exponent < 16) {
    // decimal point position after `exponent + 1` digits
    const int point = exponent + 1;
    if (point <= 0) {
      out += "0.";
      out.append(static_cast<size_t>(-point), '0');
      out += digits;
    } else if (point >= ndigits) {
      out += digits;
      out.append(static_cast<size_t>(point - ndigits), '0');
      out += ".0";
    } else {
      out += digits.substr(0, static_cast<size_t>(point));
      out += '.';
      out += digits.substr(static_cast<size_t>(point));
    }
    return out;
  }
  out += digits[0];
  if (ndigits > 1) {
    out += '.';
    out += digits.substr(1);
  }
  out += fmt::format("e{}{:02d}", exponent < 0 ? '-' : '+', std::abs(exponent));
  return out;
}

namespace {

void repr_string(std::string_view s, std::string& out) {
  const bool has_single = s.find('\'') != std::string_view::npos;
  const bool has_double = s.find('"') != std::string_view::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  out += quote;
  for (unsigned char c : s) {
    if (c == '\\') out += "\\\\";
    else if (c == static_cast<unsigned char>(quote)) { out += '\\'; out += static_cast<char>(c); }
    else if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20 || c == 0x7f) out += fmt::format("\\x{:02x}", c);
    else out += static_cast<char>(c);
  }
  out += quote;
}

void repr_into(const Value& v, std::string& out) {
  switch (v.kind()) {
    case Value::Kind::kUndefined: out += "Undefined"; break;
    case Value::Kind::kNone: out += "None"; break;
    case Value::Kind::kBool: out += v.as_bool() ? "True" : "False"; break;
    case Value::Kind::kInt: out += fmt::format("{}", v.as_int()); break;
    case Value::Kind::kFloat: out += format_float(v.as_float()); break;
    case Value::Kind::kString: repr_string(v.as_string(), out); break;
    case Value::Kind::kList: {
      out += '[';
      bool first = true;
      for (const Value& item : v.as_list()) {
        if (!first) out += ", ";
        first = false;
        repr_into(item, out);
      }
      out += ']';
      break;
    }
    case Value::Kind::kMap: {
      out += '{';
      bool first = true;
      for (const auto& [k, item] : v.as_map()) {
        if (!first) out += ", ";
        first = false;
        repr_string(k, out);
        out += ": ";
        repr_into(item, out);
      }
      out += '}';
      break;
    }
    case Value::Kind::kCallable: out += "<macro>"; break;
    case Value::Kind::kNamespace: out += "<Namespace>"; break;
    case Value::Kind::kLoop: out += "<LoopContext>"; break;
  }
}

}  // namespace

std::string python_repr(const Value& v) {
  std::string out;
  repr_into(v, out);
  return out;
}

bool truthy(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kUndefined:
    case Value::Kind::kNone: return false;
    case Value::Kind::kBool: return v.as_bool();
    case Value::Kind::kInt: return v.as_int() != 0;
    case Value::Kind::kFloat: return v.as_float() != 0.0;
    case Value::Kind::kString: return !v.as_string().empty();
    case Value::Kind::kList: return !v.as_list().empty();
    case Value::Kind::kMap: return !v.as_map().empty();
    default: return true;
  }
}

namespace {
bool numeric(const Value& v) { return v.is_int() || v.is_float() || v.is_bool(); }
double numeric_value(const Value& v) {
  return v.is_bool() ? (v.as_bool() ? 1.0 : 0.0) : v.as_number();
}
int64_t int_value(const Value& v) { return v.is_bool() ? (v.as_bool() ? 1 : 0) : v.as_int(); }
}  // namespace

bool values_equal(const Value& a, const Value& b) {
  if (numeric(a) && numeric(b)) {
    if (!a.is_float() && !b.is_float()) return int_value(a) == int_value(b);
    return numeric_value(a) == numeric_value(b);
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Value::Kind::kNone:
    case Value::Kind::kUndefined: return true;
    case Value::Kind::kString: return a.as_string() == b.as_string();
    case Value::Kind::kList: {
      const List& x = a.as_list();
      const List& y = b.as_list();
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i) {
        if (!values_equal(x[i], y[i])) return false;
      }
      return true;
    }
    case Value::Kind::kMap: {
      const Map& x = a.as_map();
      const Map& y = b.as_map();
      if (x.size() != y.size()) return false;
      for (const auto& [k, v] : x) {
        const Value* other = y.find(k);
        if (!other || !values_equal(v, *other)) return false;
      }
      return true;
    }
    default: return a.object() == b.object();
  }
}

std::optional<int> compare_values(const Value& a, const Value& b) {
  if (numeric(a) && numeric(b)) {
    if (!a.is_float() && !b.is_float()) {
      const int64_t x = int_value(a), y = int_value(b);
      return x < y ? -1 : x > y ? 1 : 0;
    }
    const double x = numeric_value(a), y = numeric_value(b);
    if (std::isnan(x) || std::isnan(y)) return 2;  // every comparison false; caller treats 2 as unordered
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (a.is_string() && b.is_string()) {
    const int c = a.as_string().compare(b.as_string());
    return c < 0 ? -1 : c > 0 ? 1 : 0;
  }
  if (a.is_list() && b.is_list()) {
    const List& x = a.as_list();
    const List& y = b.as_list();
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (values_equal(x[i], y[i])) continue;
      return compare_values(x[i], y[i]);
    }
    return x.size() < y.size() ? -1 : x.size() > y.size() ? 1 : 0;
  }
  return std::nullopt;
}

size_t utf8_length(std::string_view s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

std::vector<std::string_view> utf8_chars(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    size_t j = i + 1;
    while (j < s.size() && (static_cast<unsigned char>(s[j]) & 0xC0) == 0x80) ++j;
    out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

}  // namespace kforge::tmpl
