// Maps byte offsets inside a YAML scalar's *value* to locations in the YAML source.
//
// The op loader hands over `compute: max(x, 0)` as the string "max(x, 0)" and the location of the string's
// first character. For a plain one-line scalar, offset k is simply base + k. Quoted scalars and folded
// multi-line scalars differ from their source text: the location may point at the opening quote, escapes
// such as \" take two source bytes for one value byte, and a line break plus indentation folds to one space.
// The locator walks the source from the base location in step with the value, so a caret lands under the
// right character in all those cases; where the source does not match the value (a caller that passes a
// synthetic string), it falls back to base + k.
#pragma once

#include <string_view>
#include <vector>

#include "support/source_manager.h"

namespace kforge::expr {

class ScalarLocator {
 public:
  ScalarLocator() = default;
  /// `sources` may be null (then every location is base + offset, or invalid when base is invalid).
  ScalarLocator(std::string_view value, SourceLoc base, const SourceManager* sources);

  /// Location of value byte `offset`; offset == value.size() gives the position just past the last byte.
  SourceLoc at(size_t offset) const;

 private:
  SourceLoc base_;
  std::vector<uint32_t> source_offsets_;  // per value byte, plus one past the end; empty: base + k
};

}  // namespace kforge::expr
