// Values of the template engine: what templates compute with and what callers pass in as context.
//
// A Value is a cheap handle (40 bytes): scalars and short strings are stored inline; longer strings,
// lists and maps live behind a shared_ptr to an immutable object, so copying a Value (binding a loop
// variable, passing a macro argument, storing it in a map) never deep-copies or allocates. Short
// strings are inline because most strings of data and of filter results are names and types ("int64",
// "in_0"): an object for each made loading and rendering data allocate twice as often. The builders
// `set` and `push_back` are copy-on-write: they mutate in place while the handle is the only owner, and
// copy otherwise, so a value that was shared with someone else never changes under them.
//
// Maps keep insertion order (YAML document order), which is also the order `for k, v in map`, `items`
// and `tojson`-free printing use.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "support/source_manager.h"

namespace kforge::tmpl {

class Value;
class Callable;         // a macro or a bound built-in (see callable.h); opaque to callers
class NamespaceObject;  // the object made by `namespace()`; opaque to callers
struct UndefinedInfo;   // why a value is undefined (access path, location); opaque to callers

using List = std::vector<Value>;

/// A string-keyed map that keeps insertion order. Lookups are linear for small maps and hashed once a
/// map grows past a few entries.
class Map {
 public:
  using Entry = std::pair<std::string, Value>;

  Map() = default;
  Map(std::initializer_list<Entry> entries);

  /// The value of `key`, or null when absent.
  const Value* find(std::string_view key) const;
  Value* find(std::string_view key);
  bool contains(std::string_view key) const { return find(key) != nullptr; }

  /// Sets `key`: replaces the value in place (keeping the key's position) or appends a new entry.
  void set(std::string key, Value value);

  /// Room for `n` entries, so that filling a map of known size allocates once.
  void reserve(size_t n);

  size_t size() const;
  bool empty() const;
  const Entry& at_index(size_t i) const;
  std::vector<Entry>::const_iterator begin() const;
  std::vector<Entry>::const_iterator end() const;

  /// The keys in order, e.g. for "has keys: ..." notes.
  std::vector<std::string> keys() const;

 private:
  void rebuild_index();
  std::vector<Entry> entries_;
  std::vector<uint32_t> index_;  // open-addressing table of entry index + 1 (0 = empty); empty if small
};

class Value {
 public:
  enum class Kind : uint8_t {
    kUndefined,  // a missing variable, key or index (strict: only `defined`/`default` may consume it)
    kNone,
    kBool,
    kInt,        // int64
    kFloat,      // double
    kString,
    kList,
    kMap,
    kCallable,   // macro, `loop.cycle`, ...
    kNamespace,  // made by namespace(); the only mutable object
    kLoop,       // the `loop` variable of a for loop
  };

  /// none
  Value() noexcept : scalar_{} {}
  Value(std::nullptr_t) noexcept : Value() {}
  Value(bool b) noexcept : kind_(Kind::kBool), scalar_{} { scalar_.b = b; }
  template <typename T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool> &&
                                             !std::is_same_v<T, char>, int> = 0>
  Value(T v) noexcept : kind_(Kind::kInt), scalar_{} {
    scalar_.i = static_cast<int64_t>(v);
  }
  Value(double d) noexcept : kind_(Kind::kFloat), scalar_{} { scalar_.d = d; }
  Value(float d) noexcept : Value(static_cast<double>(d)) {}
  Value(std::string s);
  Value(std::string_view s) : Value(std::string(s)) {}
  Value(const char* s) : Value(std::string(s)) {}
  Value(List items);
  Value(Map map);

  Value(const Value& other) : kind_(other.kind_), rep_(other.rep_) { construct_from(other); }
  Value(Value&& other) noexcept : kind_(other.kind_), rep_(other.rep_) { construct_from(std::move(other)); }
  Value& operator=(const Value& other) {
    if (this != &other) *this = Value(other);
    return *this;
  }
  Value& operator=(Value&& other) noexcept {
    if (this != &other) {
      // `other` may live inside this value (an item of its list): take it out before letting go.
      Value taken(std::move(other));
      destroy();
      kind_ = taken.kind_;
      rep_ = taken.rep_;
      construct_from(std::move(taken));
    }
    return *this;
  }
  ~Value() { destroy(); }

  /// A list of the given items: Value::list({1, "a", Value::map()}).
  static Value list(std::initializer_list<Value> items = {});
  /// An empty map, to be filled with set().
  static Value map();

  Kind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == Kind::kUndefined; }
  bool is_none() const { return kind_ == Kind::kNone; }
  bool is_bool() const { return kind_ == Kind::kBool; }
  bool is_int() const { return kind_ == Kind::kInt; }
  bool is_float() const { return kind_ == Kind::kFloat; }
  bool is_number() const { return kind_ == Kind::kInt || kind_ == Kind::kFloat; }
  bool is_string() const { return kind_ == Kind::kString; }
  bool is_list() const { return kind_ == Kind::kList; }
  bool is_map() const { return kind_ == Kind::kMap; }
  bool is_callable() const { return kind_ == Kind::kCallable; }
  bool is_namespace() const { return kind_ == Kind::kNamespace; }

  // Accessors; each requires the matching kind (checked with assert only: callers test kind first).
  bool as_bool() const { return scalar_.b; }
  int64_t as_int() const { return scalar_.i; }
  double as_float() const { return scalar_.d; }
  /// int or float as double
  double as_number() const { return kind_ == Kind::kInt ? static_cast<double>(scalar_.i) : scalar_.d; }
  const std::string& as_string() const {
    if (rep_ == Rep::kInline) return inline_string_;
    return ptr_ ? *static_cast<const std::string*>(ptr_.get()) : empty_string();
  }
  const List& as_list() const;
  const Map& as_map() const;
  const Callable& as_callable() const;
  const NamespaceObject& as_namespace() const;
  const UndefinedInfo& as_undefined() const;

  /// Map lookup: the value of `key`, or null when absent or when this is not a map.
  const Value* find(std::string_view key) const;
  /// Elements of a list, entries of a map, bytes of a string; 0 otherwise.
  size_t size() const;

  // Copy-on-write builders. `set` requires a map, `push_back` a list.
  Value& set(std::string key, Value value);
  Value& push_back(Value value);

  /// Where a list or map came from (e.g. a YAML node), for "value comes from" notes; invalid otherwise.
  SourceLoc origin() const;
  /// Records the origin of a list or map (no effect on other kinds).
  void set_origin(SourceLoc loc);

  /// "string", "integer", "list", ... as used in diagnostics.
  std::string_view type_name() const;

  // Internal constructors used by the engine.
  static Value undefined(std::shared_ptr<const UndefinedInfo> info);
  static Value callable(std::shared_ptr<const Callable> fn);
  static Value namespace_object(std::shared_ptr<const NamespaceObject> ns);
  static Value loop_object(std::shared_ptr<const void> loop);
  /// The shared object behind a long string, list, map, ...; null for scalars and inline strings.
  const void* object() const { return rep_ == Rep::kShared ? ptr_.get() : nullptr; }
  const std::shared_ptr<const void>& shared_object() const;

 private:
  /// Which member of the union is alive.
  enum class Rep : uint8_t {
    kScalar,  // none, bool, int, float
    kInline,  // a string that fits std::string's own buffer
    kShared,  // everything else
  };
  union Scalar {
    bool b;
    int64_t i;
    double d;
  };

  static const std::string& empty_string();

  /// Constructs the member named by rep_ (already set) from `other`'s.
  void construct_from(const Value& other) {
    switch (rep_) {
      case Rep::kScalar: scalar_ = other.scalar_; break;
      case Rep::kInline: new (&inline_string_) std::string(other.inline_string_); break;
      case Rep::kShared: new (&ptr_) std::shared_ptr<const void>(other.ptr_); break;
    }
  }
  void construct_from(Value&& other) noexcept {
    switch (rep_) {
      case Rep::kScalar: scalar_ = other.scalar_; break;
      case Rep::kInline: new (&inline_string_) std::string(std::move(other.inline_string_)); break;
      case Rep::kShared: new (&ptr_) std::shared_ptr<const void>(std::move(other.ptr_)); break;
    }
  }
  void destroy() noexcept {
    if (rep_ == Rep::kShared) ptr_.~shared_ptr();
    else if (rep_ == Rep::kInline) inline_string_.~basic_string();
  }
  /// Makes this a shared object of `kind` (used by the constructors of lists, maps, ...).
  void set_shared(Kind kind, std::shared_ptr<const void> object) {
    destroy();
    kind_ = kind;
    rep_ = Rep::kShared;
    new (&ptr_) std::shared_ptr<const void>(std::move(object));
  }

  Kind kind_ = Kind::kNone;
  Rep rep_ = Rep::kScalar;
  union {
    Scalar scalar_;
    std::string inline_string_;
    std::shared_ptr<const void> ptr_;  // string / ListObject / MapObject / Callable / ... by kind
  };
};

// Map's members that need Value complete (clang with libstdc++ instantiates vector<Entry>'s element size in
// them as soon as they are defined in the class).
inline void Map::reserve(size_t n) { entries_.reserve(n); }
inline const Map::Entry& Map::at_index(size_t i) const { return entries_[i]; }
inline size_t Map::size() const { return entries_.size(); }
inline bool Map::empty() const { return entries_.empty(); }
inline std::vector<Map::Entry>::const_iterator Map::begin() const { return entries_.begin(); }
inline std::vector<Map::Entry>::const_iterator Map::end() const { return entries_.end(); }

}  // namespace kforge::tmpl
