// Shared fixture for the template engine's unit tests: an Environment over an in-memory diagnostic
// stream, JSON -> Value conversion for test data, and render helpers that return either the output or
// the full diagnostic text.
#pragma once

#include <nlohmann/json.hpp>

#include <sstream>
#include <string>

#include "support/diagnostics.h"
#include "support/source_manager.h"
#include "template/codegen_filters.h"
#include "template/environment.h"
#include "template/value.h"

namespace kforge::tmpl::testing {

/// A template and the output it must render to.
struct RenderCase {
  const char* source;
  const char* expected;
};

inline Value from_json(const nlohmann::ordered_json& j) {
  if (j.is_null()) return Value();
  if (j.is_boolean()) return Value(j.get<bool>());
  if (j.is_number_integer()) return Value(j.get<int64_t>());
  if (j.is_number_float()) return Value(j.get<double>());
  if (j.is_string()) return Value(j.get<std::string>());
  if (j.is_array()) {
    Value list = Value::list();
    for (const auto& item : j) list.push_back(from_json(item));
    return list;
  }
  Value map = Value::map();
  for (const auto& [k, v] : j.items()) map.set(k, from_json(v));
  return map;
}

inline Value parse_json(std::string_view text) {
  if (text.empty()) return Value::map();
  return from_json(nlohmann::ordered_json::parse(text));
}

struct Fixture {
  SourceManager sources;
  std::ostringstream diag_text;
  DiagnosticEngine diags{sources, diag_text};
  Environment env{sources, diags};

  Fixture() { register_codegen_filters(env); }

  /// The rendered output, or "error:\n" + every diagnostic printed.
  std::string render(const std::string& source, const Value& context = Value::map(), const std::string& name = "t.j2") {
    diag_text.str("");
    std::string out;
    if (env.render_string(name, source, context, out)) return out;
    return "error:\n" + diag_text.str();
  }
  std::string render_json(const std::string& source, std::string_view json) { return render(source, parse_json(json)); }

  /// Renders a named template through the loader.
  std::string render_named(const std::string& name, const Value& context = Value::map()) {
    diag_text.str("");
    const Template* t = env.load(name);
    std::string out;
    if (t && env.render(*t, context, out)) return out;
    return "error:\n" + diag_text.str();
  }
};

}  // namespace kforge::tmpl::testing
