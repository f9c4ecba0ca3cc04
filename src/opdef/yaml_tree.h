// A small YAML tree built from yaml-cpp's event parser, for the op front ends.
//
// Why not YAML::Node: the event parser is about twice as fast on Paddle's files, and this tree keeps
// what the front ends need and YAML::Node hides: every key of a mapping in document order including
// duplicates (Paddle's data has a duplicated key; PyYAML keeps the last one), the byte offset of every
// node in the SourceManager buffer, and whether a scalar was quoted.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "support/diagnostics.h"
#include "support/source_manager.h"

namespace kforge::opdef {

struct YamlNode {
  enum class Kind : uint8_t { kNull, kScalar, kSequence, kMap };
  enum class Style : uint8_t { kPlain, kSingleQuoted, kDoubleQuoted, kBlock };

  Kind kind = Kind::kNull;
  Style style = Style::kPlain;  // scalars only
  bool flow = false;            // sequences and maps written as [...] or {...}
  uint32_t offset = 0;          // byte offset of the node's first character in its buffer
  std::string value;            // scalars: the value after YAML folding and unescaping
  // Sequences: the items. Maps: key, value, key, value, ... in document order, duplicates kept.
  std::vector<YamlNode> children;

  bool is_null() const { return kind == Kind::kNull; }
  bool is_scalar() const { return kind == Kind::kScalar; }
  bool is_sequence() const { return kind == Kind::kSequence; }
  bool is_map() const { return kind == Kind::kMap; }
  size_t map_size() const { return children.size() / 2; }
  const YamlNode& key(size_t i) const { return children[2 * i]; }
  const YamlNode& value_at(size_t i) const { return children[2 * i + 1]; }

  /// "a string", "a list", "a mapping", "empty": for "'x' must be a string, not a list" messages.
  const char* kind_name() const;
};

/// Parses every document of buffer `file`. A syntax error is reported at its position (yaml-cpp's
/// message, prefixed "invalid YAML: ") and makes the function return false; aliases are rejected the
/// same way because op files never use them and their targets would have no single location.
bool parse_yaml(const SourceManager& sources, uint32_t file, DiagnosticEngine& diags,
                std::vector<YamlNode>& documents);

}  // namespace kforge::opdef
