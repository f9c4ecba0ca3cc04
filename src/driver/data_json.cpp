// JSON data -> Value. Objects keep document order (nlohmann::ordered_json).
#include <nlohmann/json.hpp>

#include <limits>
#include <string>

#include "driver/data_loader.h"

namespace kforge::driver {

namespace {

using tmpl::Value;
using Json = nlohmann::ordered_json;

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

bool convert(const Json& j, Value& out, std::string& error) {
  switch (j.type()) {
    case Json::value_t::null:
    case Json::value_t::discarded: out = Value(); return true;
    case Json::value_t::boolean: out = Value(j.get<bool>()); return true;
    case Json::value_t::number_integer: out = Value(j.get<int64_t>()); return true;
    case Json::value_t::number_unsigned: {
      const uint64_t u = j.get<uint64_t>();
      if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        error = "integer " + std::to_string(u) + " does not fit in 64 bits";
        return false;
      }
      out = Value(static_cast<int64_t>(u));
      return true;
    }
    case Json::value_t::number_float: out = Value(j.get<double>()); return true;
    case Json::value_t::string: out = Value(j.get<std::string>()); return true;
    case Json::value_t::array: {
      Value list{tmpl::List{}};
      for (const Json& item : j) {
        Value v;
        if (!convert(item, v, error)) return false;
        list.push_back(std::move(v));
      }
      out = std::move(list);
      return true;
    }
    case Json::value_t::object: {
      Value map = Value::map();
      for (const auto& [key, item] : j.items()) {
        Value v;
        if (!convert(item, v, error)) return false;
        map.set(key, std::move(v));
      }
      out = std::move(map);
      return true;
    }
    case Json::value_t::binary: error = "binary JSON values are not supported"; return false;
  }
  return false;
}

}  // namespace

std::optional<tmpl::Value> parse_json_data(uint32_t file_id, SourceManager& sources, DiagnosticEngine& diags) {
  const std::string_view text = sources.contents(file_id);
  Json json;
  try {
    json = Json::parse(text.begin(), text.end());
  } catch (const Json::parse_error& e) {
    // e.byte is 1-based: the position of the last character read.
    const size_t offset = e.byte == 0 ? 0 : std::min<size_t>(e.byte - 1, text.size());
    diags.error(sources.loc_of_offset(file_id, offset), "malformed JSON: " + explanation(e.what()));
    return std::nullopt;
  } catch (const Json::exception& e) {
    diags.error(sources.loc_of_offset(file_id, 0), "malformed JSON: " + explanation(e.what()));
    return std::nullopt;
  }
  if (!json.is_object()) {
    diags.error(sources.loc_of_offset(file_id, 0), "template data must be an object at the top level");
    return std::nullopt;
  }
  Value root;
  std::string error;
  if (!convert(json, root, error)) {
    diags.error(sources.loc_of_offset(file_id, 0), error);
    return std::nullopt;
  }
  return root;
}

}  // namespace kforge::driver
