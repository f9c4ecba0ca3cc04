// YAML data -> Value, with YAML 1.2 core-schema scalar typing.
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "driver/data_loader.h"
#include "support/text.h"
#include "support/yaml_progress.h"
#include "support/yaml_scalar.h"

namespace kforge::driver {

namespace {

using tmpl::Value;

constexpr std::string_view kCoreTagPrefix = "tag:yaml.org,2002:";

// Data nests at most kMaxDataNesting deep (docs/fuzzing.md, "Limits"): converting it recurses. What aliases may expand to (the
// "billion laughs", an anchor used inside itself) is bounded before the parse, by yaml_precheck_passes.

class YamlConverter {
 public:
  YamlConverter(uint32_t file, SourceManager& sources, DiagnosticEngine& diags)
      : file_(file), sources_(sources), diags_(diags) {}

  SourceLoc loc(const YAML::Mark& mark) const {
    // yaml-cpp marks are 0-based; a null mark (-1) has no position.
    if (mark.line < 0 || mark.column < 0) return sources_.loc_of_offset(file_, 0);
    return sources_.loc_at(file_, static_cast<uint32_t>(mark.line + 1), static_cast<uint32_t>(mark.column + 1));
  }

  bool convert(const YAML::Node& node, Value& out, int depth = 0) {
    if (depth > kMaxDataNesting) {
      diags_.error(loc(node.Mark()), fmt::format("template data nested more than {} deep", kMaxDataNesting));
      return false;
    }
    switch (node.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null:
        out = Value();
        return true;
      case YAML::NodeType::Scalar: return convert_scalar(node, out);
      case YAML::NodeType::Sequence: {
        Value list{tmpl::List{}};
        for (const YAML::Node& item : node) {
          Value v;
          if (!convert(item, v, depth + 1)) return false;
          list.push_back(std::move(v));
        }
        list.set_origin(loc(node.Mark()));
        out = std::move(list);
        return true;
      }
      case YAML::NodeType::Map: {
        Value map = Value::map();
        // A hash map, not a scan of the keys so far: a map of many keys must not take quadratic time.
        std::unordered_map<std::string, YAML::Mark> seen;
        for (const auto& entry : node) {
          const YAML::Node& key = entry.first;
          if (!key.IsScalar()) {
            diags_.error(loc(key.Mark()), "mapping keys must be scalars in template data");
            return false;
          }
          const std::string& name = key.Scalar();
          const auto [earlier, inserted] = seen.emplace(name, key.Mark());
          if (!inserted) {
            Diagnostic d{Severity::kError, loc(key.Mark()), "duplicate key '" + name + "'", {}};
            d.note("first defined here", loc(earlier->second));
            diags_.report(std::move(d));
            return false;
          }
          Value v;
          if (!convert(entry.second, v, depth + 1)) return false;
          map.set(name, std::move(v));
        }
        map.set_origin(loc(node.Mark()));
        out = std::move(map);
        return true;
      }
    }
    return false;
  }

 private:
  bool convert_scalar(const YAML::Node& node, Value& out) {
    const std::string& tag = node.Tag();
    const std::string& text = node.Scalar();
    // yaml-cpp tags quoted and block scalars "!" and plain ones "?"; anything else is explicit.
    if (tag == "!" || tag == std::string(kCoreTagPrefix) + "str") {
      out = Value(text);
      return true;
    }
    if (tag == "?") {
      std::optional<Value> typed = resolve_plain(text);
      if (!typed) return out_of_range(node);
      out = std::move(*typed);
      return true;
    }
    if (tag.rfind(kCoreTagPrefix, 0) == 0) {
      const std::string kind = tag.substr(kCoreTagPrefix.size());
      const std::optional<Value> typed = resolve_plain(text);
      if (!typed) return out_of_range(node);
      const bool ok = (kind == "int" && typed->is_int()) || (kind == "float" && typed->is_number()) ||
                      (kind == "bool" && typed->is_bool()) || (kind == "null" && typed->is_none());
      if (ok) {
        out = kind == "float" && typed->is_int() ? Value(static_cast<double>(typed->as_int())) : *typed;
        return true;
      }
      diags_.error(loc(node.Mark()), "'" + text + "' is not a valid !!" + kind);
      return false;
    }
    diags_.error(loc(node.Mark()), "unsupported YAML tag '" + tag + "' in template data");
    return false;
  }

  bool out_of_range(const YAML::Node& node) {
    diags_.error(loc(node.Mark()), "integer '" + node.Scalar() + "' does not fit in 64 bits");
    return false;
  }

  /// The YAML 1.2 core schema for plain scalars (support/yaml_scalar.h). nullopt for an integer out of range.
  static std::optional<Value> resolve_plain(const std::string& s) {
    const yaml::CoreScalar r = yaml::resolve_core_scalar(s);
    switch (r.kind) {
      case yaml::CoreKind::kNull: return Value();
      case yaml::CoreKind::kBool: return Value(r.bool_value);
      case yaml::CoreKind::kInt:
        if (r.out_of_range) return std::nullopt;
        return Value(r.int_value);
      case yaml::CoreKind::kFloat: return Value(r.float_value);
      case yaml::CoreKind::kString: break;
    }
    return Value(s);
  }

  uint32_t file_;
  SourceManager& sources_;
  DiagnosticEngine& diags_;
};

/// For "end of sequence flow not found" (and the map flavour) yaml-cpp reports where it gave up; the
/// useful place is the '[' or '{' that was never closed. Scans back from `offset` for the innermost
/// unmatched opener (quotes and comments are not tracked: this only places a note).
std::optional<size_t> unclosed_flow_opener(std::string_view text, size_t offset, char open, char close) {
  int depth = 0;
  for (size_t i = std::min(offset, text.size()); i-- > 0;) {
    if (text[i] == close) ++depth;
    if (text[i] == open) {
      if (depth == 0) return i;
      --depth;
    }
  }
  return std::nullopt;
}

void report_parser_error(const YAML::Exception& e, const YamlConverter& converter, uint32_t file_id,
                         SourceManager& sources, DiagnosticEngine& diags) {
  Diagnostic d{Severity::kError, converter.loc(e.mark), "malformed YAML: " + e.msg, {}};
  const bool seq = e.msg == YAML::ErrorMsg::END_OF_SEQ_FLOW;
  const bool map = e.msg == YAML::ErrorMsg::END_OF_MAP_FLOW;
  if ((seq || map) && e.mark.pos >= 0) {
    const std::optional<size_t> opener = unclosed_flow_opener(sources.contents(file_id), static_cast<size_t>(e.mark.pos),
                                                              seq ? '[' : '{', seq ? ']' : '}');
    if (opener) d.note(std::string("'") + (seq ? '[' : '{') + "' opened here is never closed", sources.loc_of_offset(file_id, *opener));
  }
  diags.report(std::move(d));
}

}  // namespace

std::optional<tmpl::Value> parse_yaml_data(uint32_t file_id, SourceManager& sources, DiagnosticEngine& diags) {
  YamlConverter converter(file_id, sources, diags);
  const std::string_view text = sources.contents(file_id);
  if (const std::optional<size_t> bad = find_non_printable_yaml_byte(text)) {
    diags.error(sources.loc_of_offset(file_id, *bad), fmt::format("control character U+{:04X} is not allowed in YAML", static_cast<unsigned char>(text[*bad])));
    return std::nullopt;
  }
  const auto loc_of = [&converter](const YAML::Mark& mark) { return converter.loc(mark); };
  if (!yaml_precheck_passes(text, diags, loc_of, "malformed YAML: ")) return std::nullopt;
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(std::string(sources.contents(file_id)));
  } catch (const YAML::Exception& e) {
    report_parser_error(e, converter, file_id, sources, diags);
    return std::nullopt;
  }
  if (docs.size() > 1) {
    diags.error(converter.loc(docs[1].Mark()), "data file holds " + std::to_string(docs.size()) +
                                                   " YAML documents; expected one");
    return std::nullopt;
  }
  if (docs.empty() || docs[0].IsNull()) return tmpl::Value::map();  // an empty file is empty data
  if (!docs[0].IsMap()) {
    diags.error(converter.loc(docs[0].Mark()), "template data must be a mapping at the top level");
    return std::nullopt;
  }
  tmpl::Value root;
  try {
    if (!converter.convert(docs[0], root)) return std::nullopt;
  } catch (const YAML::Exception& e) {
    diags.error(converter.loc(e.mark), "malformed YAML: " + e.msg);
    return std::nullopt;
  }
  return root;
}

}  // namespace kforge::driver
