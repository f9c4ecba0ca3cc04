#include "program/json_document.h"

#include <fmt/format.h>

#include <optional>
#include <string>
#include <vector>
#include "support/ascii.h"

namespace kforge::ir {

namespace {

using ascii::is_space;

constexpr uint32_t kNone = UINT32_MAX;


// One entry per JSON value in document (pre-)order.
struct ScannedValue {
  uint32_t value;
  uint32_t key;  // kNone unless the value is an object member
};

struct OpenContainer {
  char bracket;        // '{' or '['
  uint32_t offset;
  bool expect_key;     // objects: the next string is a key
  std::unordered_map<std::string, uint32_t> keys;  // objects: decoded key -> offset of its first occurrence
};

struct DuplicateKey {
  std::string key;
  uint32_t offset;
  uint32_t first_offset;
};

struct ScanResult {
  std::vector<ScannedValue> values;
  std::vector<OpenContainer> open;  // containers still open at the end of the text
  std::optional<DuplicateKey> duplicate;
};

// Offset just past the string starting at `begin` (a '"'), or text.size() if it is not terminated.
size_t skip_string(std::string_view text, size_t begin) {
  size_t i = begin + 1;
  while (i < text.size()) {
    if (text[i] == '\\') {
      i += 2;
    } else if (text[i] == '"') {
      return i + 1;
    } else {
      ++i;
    }
  }
  return text.size();
}

std::string decode_key(std::string_view raw) {
  if (raw.find('\\') == std::string_view::npos) return std::string(raw.substr(1, raw.size() - 2));
  try {
    return Json::parse(raw).get<std::string>();
  } catch (const Json::exception&) {
    return std::string(raw);
  }
}

// Scans text that nlohmann accepted (or, for a truncated file, its prefix). Iterative: nesting depth is
// whatever the file says.
ScanResult scan(std::string_view text) {
  ScanResult r;
  uint32_t pending_key = kNone;
  auto record = [&](size_t offset) {
    r.values.push_back({static_cast<uint32_t>(offset), pending_key});
    pending_key = kNone;
  };
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (is_space(c)) {
      ++i;
    } else if (c == '{' || c == '[') {
      record(i);
      r.open.push_back({c, static_cast<uint32_t>(i), c == '{', {}});
      ++i;
    } else if (c == '}' || c == ']') {
      if (!r.open.empty()) r.open.pop_back();
      ++i;
    } else if (c == ',') {
      if (!r.open.empty() && r.open.back().bracket == '{') r.open.back().expect_key = true;
      ++i;
    } else if (c == ':') {
      ++i;
    } else if (c == '"') {
      const size_t end = skip_string(text, i);
      if (!r.open.empty() && r.open.back().bracket == '{' && r.open.back().expect_key) {
        OpenContainer& obj = r.open.back();
        obj.expect_key = false;
        std::string key = decode_key(text.substr(i, end - i));
        auto [it, inserted] = obj.keys.emplace(key, static_cast<uint32_t>(i));
        if (!inserted && !r.duplicate) r.duplicate = DuplicateKey{key, static_cast<uint32_t>(i), it->second};
        pending_key = static_cast<uint32_t>(i);
      } else {
        record(i);
      }
      i = end;
    } else {
      record(i);
      while (i < text.size() && !is_space(text[i]) && text[i] != ',' && text[i] != ']' && text[i] != '}' &&
             text[i] != ':') {
        ++i;
      }
    }
  }
  return r;
}

// The part of nlohmann's message after "parse error at line L, column C: ".
std::string parse_error_detail(const std::string& what) {
  const size_t column = what.find(", column ");
  if (column != std::string::npos) {
    const size_t colon = what.find(": ", column);
    if (colon != std::string::npos) return what.substr(colon + 2);
  }
  const size_t bracket = what.find("] ");
  return bracket == std::string::npos ? what : what.substr(bracket + 2);
}

}  // namespace

std::string json_kind_name(const Json& value) {
  switch (value.type()) {
    case Json::value_t::object: return "an object";
    case Json::value_t::array: return "an array";
    case Json::value_t::string: return "a string";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned: return "an integer";
    case Json::value_t::number_float: return "a number";
    case Json::value_t::boolean: return "a boolean";
    case Json::value_t::null: return "null";
    default: return "an unsupported JSON value";
  }
}

bool JsonDocument::parse(const SourceManager& sources, uint32_t file, DiagnosticEngine& diags) {
  file_ = file;
  positions_.clear();
  const std::string_view text = sources.contents(file);
  size_t first = 0;
  while (first < text.size() && is_space(text[first])) ++first;
  if (first == text.size()) {
    diags.error({file, 0}, "empty JSON file: expected a PIR program object");
    return false;
  }
  try {
    root_ = Json::parse(text.begin(), text.end());
  } catch (const Json::parse_error& e) {
    const std::string detail = parse_error_detail(e.what());
    if (detail.find("unexpected end of input") != std::string::npos) {
      // Point just past the last thing in the file, and at the innermost bracket that was never closed.
      size_t end = text.size();
      while (end > 0 && is_space(text[end - 1])) --end;
      Diagnostic d{Severity::kError, {file, static_cast<uint32_t>(end)}, "truncated JSON: " + detail, {}};
      const ScanResult partial = scan(text);
      if (!partial.open.empty()) {
        const OpenContainer& innermost = partial.open.back();
        d.note(fmt::format("this '{}' is never closed", innermost.bracket), {file, innermost.offset});
      }
      diags.report(std::move(d));
    } else {
      const size_t offset = e.byte > 0 ? std::min<size_t>(e.byte - 1, text.size()) : 0;
      diags.error({file, static_cast<uint32_t>(offset)}, "invalid JSON: " + detail);
    }
    return false;
  } catch (const Json::exception& e) {
    diags.error({file, 0}, std::string("invalid JSON: ") + e.what());
    return false;
  }

  const ScanResult scanned = scan(text);
  if (scanned.duplicate) {
    // nlohmann keeps one of the two values silently; a program file with a repeated key is ambiguous.
    Diagnostic d{Severity::kError, {file, scanned.duplicate->offset},
                 fmt::format("duplicate key '{}' in JSON object", scanned.duplicate->key), {}};
    d.note("first given here", {file, scanned.duplicate->first_offset});
    diags.report(std::move(d));
    return false;
  }

  // Pair the tree's nodes, visited in document order, with the scanned offsets.
  std::vector<const Json*> stack{&root_};
  size_t index = 0;
  while (!stack.empty()) {
    const Json* node = stack.back();
    stack.pop_back();
    if (index < scanned.values.size()) {
      positions_[node] = {scanned.values[index].value, scanned.values[index].key};
    }
    ++index;
    if (node->is_object() || node->is_array()) {
      std::vector<const Json*> children;
      for (const Json& child : *node) children.push_back(&child);
      for (auto it = children.rbegin(); it != children.rend(); ++it) stack.push_back(*it);
    }
  }
  return true;
}

SourceLoc JsonDocument::loc(const Json& value) const {
  auto it = positions_.find(&value);
  return {file_, it == positions_.end() ? 0u : it->second.value};
}

SourceLoc JsonDocument::key_loc(const Json& value) const {
  auto it = positions_.find(&value);
  if (it == positions_.end()) return {file_, 0};
  return {file_, it->second.key == kNone ? it->second.value : it->second.key};
}

}  // namespace kforge::ir
