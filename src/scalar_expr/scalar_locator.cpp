#include "scalar_expr/scalar_locator.h"

#include <algorithm>
#include "support/ascii.h"

namespace kforge::expr {

namespace {

using ascii::is_space;


// Escapes of a double-quoted YAML scalar that decode to one byte other than the escaped character.
bool is_letter_escape(char c) {
  return c == 'n' || c == 't' || c == 'r' || c == '0' || c == 'a' || c == 'b' || c == 'e' || c == 'f' ||
         c == 'v';
}

}  // namespace

ScalarLocator::ScalarLocator(std::string_view value, SourceLoc base, const SourceManager* sources) : base_(base) {
  if (!base.valid() || sources == nullptr || base.file >= sources->file_count()) return;
  const std::string_view src = sources->contents(base.file);
  size_t r = base.offset;
  if (r > src.size()) return;
  char quote = 0;
  // Expressions never start with a quote, so a quote at the base location opens a quoted scalar.
  if (r < src.size() && (src[r] == '"' || src[r] == '\'')) quote = src[r++];

  std::vector<uint32_t> map;
  map.reserve(value.size() + 1);
  // Bound the walk: folding and escapes never make the source more than a few times longer than the value.
  const size_t limit = std::min(src.size(), r + 4 * value.size() + 256);
  size_t d = 0;
  while (d < value.size()) {
    if (r >= limit) return;  // the source does not hold this value: fall back to base + offset
    const char c = src[r];
    const char want = value[d];
    if (quote == '"' && c == '\\' && r + 1 < src.size()) {
      const char next = src[r + 1];
      if (next == want || is_letter_escape(next)) {
        map.push_back(static_cast<uint32_t>(r));
        r += 2;
        ++d;
        continue;
      }
      if (next == '\n') {  // an escaped line break joins the lines without a space
        r += 2;
        while (r < src.size() && (src[r] == ' ' || src[r] == '\t')) ++r;
        continue;
      }
      return;
    }
    if (quote == '\'' && c == '\'' && want == '\'' && r + 1 < src.size() && src[r + 1] == '\'') {
      map.push_back(static_cast<uint32_t>(r));
      r += 2;
      ++d;
      continue;
    }
    if (quote != 0 && c == quote) return;  // the scalar ended before the value did
    if (c == want) {
      map.push_back(static_cast<uint32_t>(r));
      ++r;
      ++d;
      continue;
    }
    if (is_space(c)) {
      if (want == ' ' || want == '\n') {  // a folded line break: the value byte stands for the break
        map.push_back(static_cast<uint32_t>(r));
        ++d;
        while (r < src.size() && is_space(src[r])) ++r;
      } else {
        ++r;  // trailing spaces before a break, or indentation, have no value byte
      }
      continue;
    }
    return;
  }
  map.push_back(static_cast<uint32_t>(r));
  source_offsets_ = std::move(map);
}

SourceLoc ScalarLocator::at(size_t offset) const {
  if (!base_.valid()) return {};
  if (!source_offsets_.empty()) {
    return {base_.file, source_offsets_[std::min(offset, source_offsets_.size() - 1)]};
  }
  return {base_.file, static_cast<uint32_t>(base_.offset + offset)};
}

}  // namespace kforge::expr
