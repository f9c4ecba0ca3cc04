#include "opdef/located_text.h"

#include <algorithm>

#include "opdef/yaml_tree.h"

namespace kforge::opdef {

namespace {

bool is_fold_space(char c) { return c == ' ' || c == '\t' || c == '\n'; }

size_t hex_digits_of_escape(char kind) {
  switch (kind) {
    case 'x': return 2;
    case 'u': return 4;
    case 'U': return 8;
    default: return 0;
  }
}

// Number of UTF-8 bytes yaml-cpp produces for the escape at source[p] ('\\'), and its source length.
void measure_escape(std::string_view source, size_t p, size_t& value_bytes, size_t& source_length) {
  value_bytes = 1;
  source_length = 2;
  if (p + 1 >= source.size()) return;
  const size_t digits = hex_digits_of_escape(source[p + 1]);
  if (digits == 0) {
    // \N, \_, \L, \P are multi-byte characters; the exact count only shifts carets within one escape.
    if (source[p + 1] == 'N' || source[p + 1] == '_') value_bytes = 2;
    if (source[p + 1] == 'L' || source[p + 1] == 'P') value_bytes = 3;
    return;
  }
  source_length = 2 + digits;
  unsigned long code = 0;
  for (size_t k = 0; k < digits && p + 2 + k < source.size(); ++k) {
    const char h = source[p + 2 + k];
    code = code * 16 + static_cast<unsigned long>(h >= 'a' ? h - 'a' + 10 : h >= 'A' ? h - 'A' + 10 : h - '0');
  }
  value_bytes = code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
}

}  // namespace

LocatedText LocatedText::contiguous(std::string text, SourceLoc start) {
  LocatedText t;
  t.file_ = start.file;
  t.offsets_.resize(text.size() + 1);
  for (size_t i = 0; i <= text.size(); ++i) t.offsets_[i] = start.offset + static_cast<uint32_t>(i);
  t.text_ = std::move(text);
  return t;
}

// Aligns the value with the source: equal characters map to each other; source whitespace that
// folding removed is skipped; a folded line break maps to the newline it came from; escapes and
// doubled single quotes map to their first source character.
LocatedText LocatedText::from_scalar(const YamlNode& node, std::string_view source, uint32_t file) {
  LocatedText t;
  t.file_ = file;
  t.text_ = node.value;
  const std::string& value = t.text_;
  t.offsets_.resize(value.size() + 1);
  size_t p = std::min<size_t>(node.offset, source.size());
  if (node.style == YamlNode::Style::kSingleQuoted || node.style == YamlNode::Style::kDoubleQuoted) {
    ++p;  // the opening quote
  } else if (node.style == YamlNode::Style::kBlock) {
    const size_t eol = source.find('\n', p);
    p = eol == std::string_view::npos ? source.size() : eol + 1;
  }
  const bool double_quoted = node.style == YamlNode::Style::kDoubleQuoted;
  const bool single_quoted = node.style == YamlNode::Style::kSingleQuoted;
  size_t i = 0;
  while (i < value.size()) {
    if (p >= source.size()) {
      t.offsets_[i++] = static_cast<uint32_t>(source.size());
      continue;
    }
    const char c = value[i];
    const char s = source[p];
    if (double_quoted && s == '\\') {
      if (p + 1 < source.size() && source[p + 1] == '\n') {  // escaped line break: produces nothing
        p += 2;
        while (p < source.size() && (source[p] == ' ' || source[p] == '\t')) ++p;
        continue;
      }
      size_t bytes = 1, length = 2;
      measure_escape(source, p, bytes, length);
      for (size_t k = 0; k < bytes && i < value.size(); ++k) t.offsets_[i++] = static_cast<uint32_t>(p);
      p += length;
      continue;
    }
    if (single_quoted && s == '\'' && p + 1 < source.size() && source[p + 1] == '\'') {
      t.offsets_[i++] = static_cast<uint32_t>(p);
      p += 2;
      continue;
    }
    if (s == c) {
      t.offsets_[i++] = static_cast<uint32_t>(p++);
      continue;
    }
    if (s == '\n' && (c == ' ' || c == '\n')) {  // a folded line break
      t.offsets_[i++] = static_cast<uint32_t>(p++);
      continue;
    }
    if (is_fold_space(s)) {
      ++p;
      continue;
    }
    // Not expected for values yaml-cpp produced from this source; keep going without drifting.
    t.offsets_[i++] = static_cast<uint32_t>(p);
  }
  // The end position: just after the last character of the value.
  t.offsets_[value.size()] = value.empty() ? static_cast<uint32_t>(p) : t.offsets_[value.size() - 1] + 1;
  return t;
}

SourceLoc LocatedText::loc(size_t index) const {
  if (offsets_.empty()) return {};
  return {file_, offsets_[std::min(index, offsets_.size() - 1)]};
}

}  // namespace kforge::opdef
