// The value of a YAML scalar together with the source location of each of its characters.
//
// The op mini-languages (args, output, kernel func, ...) are parsed from scalar values, but their
// errors must point at the exact line and column in the file. A value is not a substring of the file:
// plain scalars are folded (a line break plus indentation becomes one space), quoted scalars lose
// their quotes and escapes. LocatedText keeps a per-character map back to byte offsets, so a parser
// can report "position 17 of the value" as line:col of the character that produced it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "support/source_manager.h"

namespace kforge::opdef {

struct YamlNode;

class LocatedText {
 public:
  LocatedText() = default;

  /// The value of scalar `node` of buffer `file` (whose contents are `source`).
  static LocatedText from_scalar(const YamlNode& node, std::string_view source, uint32_t file);
  /// A value whose characters lie one after another from `start` (tests, synthetic values).
  static LocatedText contiguous(std::string text, SourceLoc start);

  std::string_view text() const { return text_; }
  size_t size() const { return text_.size(); }
  char operator[](size_t i) const { return text_[i]; }

  /// Location of character `index`; `index == size()` (or beyond) is the position just after the value.
  SourceLoc loc(size_t index) const;

 private:
  std::string text_;
  uint32_t file_ = SourceLoc::kNoFile;
  std::vector<uint32_t> offsets_;  // size() + 1 entries; the last is the end position
};

}  // namespace kforge::opdef
