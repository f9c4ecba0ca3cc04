// Helpers shared by the readers of op YAML and op_compat.yaml: typed access to YamlNodes with
// located diagnostics, and the key check of a mapping (duplicates, unknown keys with did-you-mean).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "opdef/located_text.h"
#include "opdef/yaml_tree.h"
#include "support/diagnostics.h"
#include "support/source_manager.h"

namespace kforge::opdef {

/// One buffer being read: where its nodes are and where errors go.
struct YamlContext {
  const SourceManager& sources;
  uint32_t file;
  DiagnosticEngine& diags;

  SourceLoc loc(const YamlNode& node) const { return {file, node.offset}; }
  LocatedText text(const YamlNode& node) const {
    return LocatedText::from_scalar(node, sources.contents(file), file);
  }

  /// `value` if it is a scalar with some text; otherwise reports "'<key>' must be a string, not a list"
  /// (at the value) or "'<key>' has no value" (at the key) and returns nullptr.
  const YamlNode* scalar(const YamlNode& key, const YamlNode& value, std::string_view name) const;
  /// `value` if it is a mapping; otherwise reports and returns nullptr.
  const YamlNode* map(const YamlNode& key, const YamlNode& value, std::string_view name) const;
  /// `value` if it is a sequence; otherwise reports and returns nullptr.
  const YamlNode* sequence(const YamlNode& key, const YamlNode& value, std::string_view name) const;
  /// A YAML boolean (true/false in any of YAML 1.1's spellings that PyYAML accepts).
  std::optional<bool> boolean(const YamlNode& key, const YamlNode& value, std::string_view name) const;
};

/// The keys of one mapping, checked once: a duplicated key is a warning and the last one wins (as in
/// PyYAML); an unknown key is a warning with a did-you-mean suggestion, and is skipped.
class KeyTable {
 public:
  struct Entry {
    std::string_view key;
    const YamlNode* key_node;
    const YamlNode* value;
  };

  /// `prefix` is prepended to key names in messages ("kernel." gives 'kernel.fucn'); `where` names
  /// the owner ("op 'abs'").
  KeyTable(const YamlNode& map, const YamlContext& ctx, const std::vector<std::string>& known,
           std::string_view prefix, std::string_view where);

  const Entry* find(std::string_view key) const;
  /// Known keys, each once (its last occurrence), in document order.
  const std::vector<Entry>& entries() const { return entries_; }

 private:
  std::vector<Entry> entries_;
};

}  // namespace kforge::opdef
