// JSON data -> Value, built directly from nlohmann's SAX events: no intermediate DOM, objects keep
// document order, a later duplicate key replaces the earlier value in place.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <limits>
#include <string>
#include <vector>

#include "driver/data_loader.h"

namespace kforge::driver {

namespace {

using tmpl::Value;
using Json = nlohmann::json;

/// nlohmann's what() is "[json.exception.parse_error.101] parse error at line 3, column 5: syntax error
/// while parsing ..."; the location goes into our own prefix, so keep only the explanation.
std::string explanation(const std::string& what) {
  const size_t column = what.find(", column ");
  if (column != std::string::npos) {
    const size_t colon = what.find(": ", column);
    if (colon != std::string::npos) return what.substr(colon + 2);
  }
  const size_t bracket = what.find("] ");
  return bracket == std::string::npos ? what : what.substr(bracket + 2);
}

// Arrays and objects nest at most kMaxDataNesting deep (docs/fuzzing.md, "Limits"): Values are destroyed and rendered
// recursively, so a file of a million '[' must be an error, not a stack overflow.

// The offset of the bracket that opens nesting level `level` + 1 (the first one too deep), skipping strings.
size_t offset_of_nesting(std::string_view text, size_t level) {
  size_t depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > level) return i;
    } else if (c == ']' || c == '}') {
      if (depth > 0) --depth;
    }
  }
  return 0;
}

class ValueBuilder final : public nlohmann::json_sax<Json> {
 public:
  bool null() override { return add(Value()); }
  bool boolean(bool v) override { return add(Value(v)); }
  bool number_integer(number_integer_t v) override { return add(Value(static_cast<int64_t>(v))); }
  bool number_unsigned(number_unsigned_t v) override {
    if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      error = "integer " + std::to_string(v) + " does not fit in 64 bits";
      return false;
    }
    return add(Value(static_cast<int64_t>(v)));
  }
  bool number_float(number_float_t v, const string_t&) override { return add(Value(static_cast<double>(v))); }
  bool string(string_t& v) override { return add(Value(std::move(v))); }
  bool binary(binary_t&) override {
    error = "binary JSON values are not supported";
    return false;
  }
  bool start_object(std::size_t) override {
    if (too_deep()) return false;
    stack_.push_back({Value::map(), {}});
    return true;
  }
  bool key(string_t& k) override {
    stack_.back().key = std::move(k);
    return true;
  }
  bool end_object() override { return pop(); }
  bool start_array(std::size_t) override {
    if (too_deep()) return false;
    stack_.push_back({Value(tmpl::List{}), {}});
    return true;
  }
  bool end_array() override { return pop(); }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) override {
    error_position = position;
    error = "malformed JSON: " + explanation(e.what());
    return false;
  }

  Value root;
  std::string error;
  size_t error_position = 0;  // 1-based byte position of a syntax error; 0 for other errors
  bool nested_too_deeply = false;

 private:
  struct Frame {
    Value container;  // a map or a list under construction
    std::string key;  // for maps: the key of the next value
  };

  bool add(Value v) {
    if (stack_.empty()) {
      root = std::move(v);
    } else if (stack_.back().container.is_map()) {
      stack_.back().container.set(std::move(stack_.back().key), std::move(v));
    } else {
      stack_.back().container.push_back(std::move(v));
    }
    return true;
  }

  bool too_deep() {
    if (stack_.size() < static_cast<size_t>(kMaxDataNesting)) return false;
    nested_too_deeply = true;
    error = fmt::format("template data nested more than {} deep", kMaxDataNesting);
    return true;
  }

  bool pop() {
    Value done = std::move(stack_.back().container);
    stack_.pop_back();
    return add(std::move(done));
  }

  std::vector<Frame> stack_;
};

}  // namespace

std::optional<tmpl::Value> parse_json_data(uint32_t file_id, SourceManager& sources, DiagnosticEngine& diags) {
  const std::string_view text = sources.contents(file_id);
  ValueBuilder builder;
  bool ok = false;
  try {
    ok = Json::sax_parse(text.begin(), text.end(), &builder);
  } catch (const Json::exception& e) {
    builder.error = "malformed JSON: " + explanation(e.what());
  }
  if (!ok) {
    // The position is that of the last character read.
    size_t offset = builder.error_position == 0 ? 0 : std::min(builder.error_position - 1, text.size());
    if (builder.nested_too_deeply) offset = offset_of_nesting(text, static_cast<size_t>(kMaxDataNesting));
    diags.error(sources.loc_of_offset(file_id, offset), builder.error.empty() ? "malformed JSON" : builder.error);
    return std::nullopt;
  }
  if (!builder.root.is_map()) {
    diags.error(sources.loc_of_offset(file_id, 0), "template data must be an object at the top level");
    return std::nullopt;
  }
  return std::move(builder.root);
}

}  // namespace kforge::driver
