// Value: kinds, ordered maps, copy-on-write builders, and the Python semantics the engine relies on
// (float repr, equality, ordering).
#include <catch2/catch.hpp>

#include <cmath>

#include "template/value.h"
#include "template/value_ops.h"

namespace kforge::tmpl {
namespace {

TEST_CASE("values have the kinds of their constructors", "[template][value]") {
  CHECK(Value().is_none());
  CHECK(Value(nullptr).is_none());
  CHECK(Value(true).is_bool());
  CHECK(Value(3).is_int());
  CHECK(Value(int64_t{1} << 40).as_int() == (int64_t{1} << 40));
  CHECK(Value(2u).is_int());
  CHECK(Value(1.5).is_float());
  CHECK(Value("s").is_string());
  CHECK(Value(std::string("s")).as_string() == "s");
  CHECK(Value(std::string_view("sv")).as_string() == "sv");
  CHECK(Value::list({1, "a"}).is_list());
  CHECK(Value::map().is_map());
  CHECK(Value(List{Value(1)}).size() == 1);
  CHECK(Value(3).type_name() == "integer");
  CHECK(a_type(Value(3)) == "an integer");
  CHECK(a_type(Value("x")) == "a string");
  CHECK(a_type(Value()) == "none");
}

TEST_CASE("maps keep insertion order and replace in place", "[template][value]") {
  Value m = Value::map();
  m.set("z", 1).set("a", 2).set("m", 3);
  m.set("a", 20);
  std::vector<std::string> keys;
  for (const auto& [k, v] : m.as_map()) keys.push_back(k);
  CHECK(keys == std::vector<std::string>{"z", "a", "m"});
  CHECK(m.find("a")->as_int() == 20);
  CHECK(m.find("nope") == nullptr);
  CHECK(Value(1).find("a") == nullptr);
  CHECK(m.as_map().keys() == std::vector<std::string>{"z", "a", "m"});
}

TEST_CASE("large maps are looked up through their hash index", "[template][value]") {
  Map m;
  for (int i = 0; i < 1000; ++i) m.set("key" + std::to_string(i), Value(i));
  m.set("key500", Value(-1));
  REQUIRE(m.size() == 1000);
  for (int i = 0; i < 1000; ++i) {
    const Value* v = m.find("key" + std::to_string(i));
    REQUIRE(v != nullptr);
    CHECK(v->as_int() == (i == 500 ? -1 : i));
  }
  CHECK(m.find("key1000") == nullptr);
  CHECK(m.at_index(500).first == "key500");
  Map copy = m;  // the index is copied with the entries
  CHECK(copy.find("key999")->as_int() == 999);
}

TEST_CASE("builders copy on write, so shared values never change", "[template][value]") {
  Value a = Value::list({1, 2});
  Value b = a;  // shares the list
  b.push_back(3);
  CHECK(a.size() == 2);
  CHECK(b.size() == 3);
  Value m = Value::map();
  m.set("k", 1);
  Value n = m;
  n.set("k", 2);
  CHECK(m.find("k")->as_int() == 1);
  CHECK(n.find("k")->as_int() == 2);
  // A sole owner is mutated in place: the object stays the same.
  const void* before = b.object();
  b.push_back(4);
  CHECK(b.object() == before);
}

TEST_CASE("short strings are held inline, long ones shared; copies and moves keep both intact", "[template][value]") {
  const std::string fits(15, 'a');    // std::string's own buffer: no shared object
  const std::string longer(16, 'b');  // a shared object that copies share
  Value s(fits), l(longer);
  CHECK(s.object() == nullptr);
  REQUIRE(l.object() != nullptr);
  Value s2 = s, l2 = l;
  CHECK(s2.as_string() == fits);
  CHECK(l2.as_string() == longer);
  CHECK(l2.object() == l.object());
  Value moved = std::move(l2);
  CHECK(moved.as_string() == longer);
  // Assignments across representations, in both directions, and of a value to itself.
  Value v = 1;
  v = s;
  CHECK(v.as_string() == fits);
  v = l;
  CHECK(v.as_string() == longer);
  v = Value(2.5);
  CHECK(v.as_float() == 2.5);
  v = Value::list({"x"});
  const Value& same = v;
  v = same;
  CHECK(v.as_list()[0].as_string() == "x");
  // Assigning a value from inside a list to the list's own handle: the item is taken out first.
  Value holder = Value::list({Value(longer), Value(fits)});
  holder = holder.as_list()[0];
  CHECK(holder.as_string() == longer);
  holder = Value::list({Value(fits)});
  holder = std::move(const_cast<Value&>(holder.as_list()[0]));
  CHECK(holder.as_string() == fits);
}

TEST_CASE("origins are recorded on lists and maps", "[template][value]") {
  Value m = Value::map();
  CHECK_FALSE(m.origin().valid());
  m.set_origin({3, 14});
  CHECK(m.origin() == SourceLoc{3, 14});
  Value s("x");
  s.set_origin({3, 14});
  CHECK_FALSE(s.origin().valid());
}

TEST_CASE("floats format like Python's repr", "[template][value]") {
  const std::pair<double, const char*> cases[] = {
      {1.0, "1.0"},
      {0.1, "0.1"},
      {1e+20, "1e+20"},
      {1e+16, "1e+16"},
      {1000000000000000.0, "1000000000000000.0"},
      {1.5e-05, "1.5e-05"},
      {0.0001, "0.0001"},
      {0.00012345, "0.00012345"},
      {123456789.123, "123456789.123"},
      {2.5e-10, "2.5e-10"},
      {-0.0, "-0.0"},
      {1.7976931348623157e+308, "1.7976931348623157e+308"},
      {5e-324, "5e-324"},
      {3.141592653589793, "3.141592653589793"},
      {100.0, "100.0"},
      {1234567890123456.0, "1234567890123456.0"},
      {1.2345678901234568e+16, "1.2345678901234568e+16"},
      {-1.5, "-1.5"},
      {0.3, "0.3"},
      {1.4142135623730951, "1.4142135623730951"},
  };
  for (const auto& [d, text] : cases) {
    INFO(text);
    CHECK(format_float(d) == text);
  }
  CHECK(format_float(HUGE_VAL) == "inf");
  CHECK(format_float(-HUGE_VAL) == "-inf");
  CHECK(format_float(std::nan("")) == "nan");
}

TEST_CASE("python_repr matches Python for containers", "[template][value]") {
  Value m = Value::map();
  m.set("a", Value::list({1, 2.5, "x'y", true, Value()}));
  m.set("b", "it's");
  CHECK(python_repr(m) == R"({'a': [1, 2.5, "x'y", True, None], 'b': "it's"})");
  CHECK(python_repr(Value("a\nb\\")) == R"('a\nb\\')");
}

TEST_CASE("equality and ordering follow Python", "[template][value]") {
  CHECK(values_equal(Value(1), Value(1.0)));
  CHECK(values_equal(Value(true), Value(1)));
  CHECK_FALSE(values_equal(Value(1), Value("1")));
  CHECK(values_equal(Value::list({1, "a"}), Value::list({1.0, "a"})));
  Value m1 = Value::map(), m2 = Value::map();
  m1.set("a", 1).set("b", 2);
  m2.set("b", 2).set("a", 1);
  CHECK(values_equal(m1, m2));  // dict equality ignores order
  CHECK(compare_values(Value(1), Value(2.5)) == -1);
  CHECK(compare_values(Value("b"), Value("a")) == 1);
  CHECK(compare_values(Value::list({1, 2}), Value::list({1, 2, 0})) == -1);
  CHECK_FALSE(compare_values(Value(1), Value("a")).has_value());
  CHECK(truthy(Value(0.0)) == false);
  CHECK(truthy(Value::map()) == false);
  CHECK(truthy(Value(" ")) == true);
}

TEST_CASE("UTF-8 strings count code points", "[template][value]") {
  CHECK(utf8_length("h\xC3\xA9llo") == 5);
  const auto chars = utf8_chars("a\xE2\x82\xAC" "b");
  REQUIRE(chars.size() == 3);
  CHECK(chars[1] == "\xE2\x82\xAC");
}

}  // namespace
}  // namespace kforge::tmpl
