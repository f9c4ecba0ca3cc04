// A JSON file parsed with nlohmann::json that knows where each of its values is written.
//
// nlohmann gives no positions per element, so after it has parsed (and validated) the text, a small scanner
// walks the same text and records the offset of every value and object key in document order; the values
// of the ordered_json tree, visited in the same order, are paired with those offsets. The scanner also
// finds what nlohmann silently merges (duplicate object keys) and, for a truncated file, which bracket was
// left open.
#pragma once

#include <nlohmann/json.hpp>

#include <unordered_map>

#include "support/diagnostics.h"
#include "support/source_manager.h"

namespace kforge::ir {

/// Keeps object members in file order, so diagnostics and the model follow the file.
using Json = nlohmann::ordered_json;

class JsonDocument {
 public:
  /// Parses the registered buffer `file`. Malformed or truncated JSON and duplicate keys are reported to
  /// `diags` with their location; returns false then.
  bool parse(const SourceManager& sources, uint32_t file, DiagnosticEngine& diags);

  const Json& root() const { return root_; }
  /// Where `value` (a node of root()) starts: its '{', '[', '"' or first character.
  SourceLoc loc(const Json& value) const;
  /// For a member of an object, where its key starts (the opening quote); otherwise loc(value).
  SourceLoc key_loc(const Json& value) const;

 private:
  struct Position {
    uint32_t value = 0;
    uint32_t key = UINT32_MAX;
  };

  uint32_t file_ = SourceLoc::kNoFile;
  Json root_;
  std::unordered_map<const Json*, Position> positions_;
};

/// "an object", "an array", "a string", "an integer", "a number", "a boolean", "null": for messages like
/// "expected an array, got a string".
std::string json_kind_name(const Json& value);

}  // namespace kforge::ir
