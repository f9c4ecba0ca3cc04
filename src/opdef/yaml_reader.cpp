#include "opdef/yaml_reader.h"

#include <fmt/format.h>

#include <algorithm>

#include "support/text.h"

namespace kforge::opdef {

const YamlNode* YamlContext::scalar(const YamlNode& key, const YamlNode& value, std::string_view name) const {
  if (value.is_null() || (value.is_scalar() && value.value.find_first_not_of(" \t\n") == std::string::npos)) {
    diags.error(loc(key), fmt::format("'{}' has no value", name));
    return nullptr;
  }
  if (!value.is_scalar()) {
    diags.error(loc(value), fmt::format("'{}' must be a string, not {}", name, value.kind_name()));
    return nullptr;
  }
  return &value;
}

const YamlNode* YamlContext::map(const YamlNode& key, const YamlNode& value, std::string_view name) const {
  if (value.is_null()) {
    diags.error(loc(key), fmt::format("'{}' has no value", name));
    return nullptr;
  }
  if (!value.is_map()) {
    diags.error(loc(value), fmt::format("'{}' must be a mapping, not {}", name, value.kind_name()));
    return nullptr;
  }
  return &value;
}

const YamlNode* YamlContext::sequence(const YamlNode& key, const YamlNode& value, std::string_view name) const {
  if (value.is_null()) {
    diags.error(loc(key), fmt::format("'{}' has no value", name));
    return nullptr;
  }
  if (!value.is_sequence()) {
    diags.error(loc(value), fmt::format("'{}' must be a list like [a, b], not {}", name, value.kind_name()));
    return nullptr;
  }
  return &value;
}

std::optional<bool> YamlContext::boolean(const YamlNode& key, const YamlNode& value, std::string_view name) const {
  const YamlNode* node = scalar(key, value, name);
  if (!node) return std::nullopt;
  // Paddle reads op YAML with PyYAML, whose YAML 1.1 booleans include yes/no/on/off: op YAML keeps them (the YAML
  // 1.2 core schema of the other readers, support/yaml_scalar.h, has only the first three of each).
  static const std::vector<std::string> kTrue = {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"};
  static const std::vector<std::string> kFalse = {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF"};
  if (node->style == YamlNode::Style::kPlain) {
    if (std::find(kTrue.begin(), kTrue.end(), node->value) != kTrue.end()) return true;
    if (std::find(kFalse.begin(), kFalse.end(), node->value) != kFalse.end()) return false;
  }
  diags.error(loc(*node), fmt::format("'{}' must be true or false, not '{}'", name, node->value));
  return std::nullopt;
}

KeyTable::KeyTable(const YamlNode& map, const YamlContext& ctx, const std::vector<std::string>& known,
                   std::string_view prefix, std::string_view where) {
  entries_.reserve(map.map_size());
  for (size_t i = 0; i < map.map_size(); ++i) {
    const YamlNode& key = map.key(i);
    const YamlNode& value = map.value_at(i);
    if (!key.is_scalar()) {
      ctx.diags.error(ctx.loc(key), fmt::format("keys of {} must be names, not {}", where, key.kind_name()));
      continue;
    }
    const std::string& name = key.value;
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      const std::optional<std::string> suggestion = closest_match(name, known);
      ctx.diags.warning(ctx.loc(key),
                        fmt::format("unknown key '{}{}' in {}{}", prefix, name, where,
                                    suggestion ? fmt::format("; did you mean '{}{}'?", prefix, *suggestion) : ""));
      continue;
    }
    auto previous = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.key == name; });
    if (previous != entries_.end()) {
      Diagnostic d{Severity::kWarning, ctx.loc(key),
                   fmt::format("duplicate key '{}{}' in {}; the last one is used", prefix, name, where), {}};
      d.note("first given here", ctx.loc(*previous->key_node));
      ctx.diags.report(std::move(d));
      entries_.erase(previous);
    }
    entries_.push_back({name, &key, &value});
  }
}

const KeyTable::Entry* KeyTable::find(std::string_view key) const {
  for (const Entry& e : entries_) {
    if (e.key == key) return &e;
  }
  return nullptr;
}

}  // namespace kforge::opdef
