#include "driver/json_reader.h"

#include <charconv>
#include <cstdint>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

namespace kforge::driver {

namespace {

using tmpl::Value;

/// Deeper documents go to nlohmann's parser, which does not recurse.
constexpr int kMaxDepth = 256;

bool is_digit(char c) { return c >= '0' && c <= '9'; }

/// A string character that needs no attention: printable ASCII other than '"' and '\'.
bool is_plain(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u >= 0x20 && u < 0x80 && c != '"' && c != '\\';
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

class Reader {
 public:
  explicit Reader(std::string_view text) : p_(text.data()), end_(text.data() + text.size()) {}

  bool document(Value& out) {
    skip_space();
    if (!value(out, 0)) return false;
    skip_space();
    return p_ == end_;
  }

 private:
  void skip_space() {
    while (p_ != end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\t' || *p_ == '\r')) ++p_;
  }

  bool at(char c) const { return p_ != end_ && *p_ == c; }

  bool literal(std::string_view word) {
    if (static_cast<size_t>(end_ - p_) < word.size() || std::string_view(p_, word.size()) != word) return false;
    p_ += word.size();
    return true;
  }

  /// A value starting at p_ (whitespace already skipped).
  bool value(Value& out, int depth) {
    if (p_ == end_) return false;
    switch (*p_) {
      case '{': return object(out, depth + 1);
      case '[': return array(out, depth + 1);
      case '"': {
        std::string s;
        if (!string(s)) return false;
        out = Value(std::move(s));
        return true;
      }
      case 't': out = Value(true); return literal("true");
      case 'f': out = Value(false); return literal("false");
      case 'n': out = Value(); return literal("null");
      default: return number(out);
    }
  }

  // The elements (entries) of the containers being read wait on one shared stack and are moved into
  // their list (map) once it is complete, so each container is allocated once, at its final size.

  bool array(Value& out, int depth) {
    if (depth > kMaxDepth) return false;
    ++p_;  // '['
    skip_space();
    const size_t first = items_.size();
    if (at(']')) {
      ++p_;
    } else {
      while (true) {
        skip_space();
        Value item;
        if (!value(item, depth)) return false;
        items_.push_back(std::move(item));
        skip_space();
        if (at(',')) {
          ++p_;
          continue;
        }
        if (!at(']')) return false;
        ++p_;
        break;
      }
    }
    const auto begin = items_.begin() + static_cast<std::ptrdiff_t>(first);
    tmpl::List list(std::make_move_iterator(begin), std::make_move_iterator(items_.end()));
    items_.erase(begin, items_.end());
    out = Value(std::move(list));
    return true;
  }

  bool object(Value& out, int depth) {
    if (depth > kMaxDepth) return false;
    ++p_;  // '{'
    skip_space();
    const size_t first = entries_.size();
    if (at('}')) {
      ++p_;
    } else {
      while (true) {
        skip_space();
        if (!at('"')) return false;
        std::string key;
        if (!string(key)) return false;
        skip_space();
        if (!at(':')) return false;
        ++p_;
        skip_space();
        Value item;
        if (!value(item, depth)) return false;
        entries_.emplace_back(std::move(key), std::move(item));
        skip_space();
        if (at(',')) {
          ++p_;
          continue;
        }
        if (!at('}')) return false;
        ++p_;
        break;
      }
    }
    tmpl::Map map;
    map.reserve(entries_.size() - first);
    for (size_t i = first; i < entries_.size(); ++i) map.set(std::move(entries_[i].first), std::move(entries_[i].second));
    entries_.resize(first);
    out = Value(std::move(map));
    return true;
  }

  /// A string starting at its opening quote. Runs of plain characters are copied in one piece.
  bool string(std::string& out) {
    ++p_;  // '"'
    const char* run = p_;
    while (true) {
      while (p_ != end_ && is_plain(*p_)) ++p_;
      if (p_ == end_) return false;
      const auto c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        out.append(run, p_);
        ++p_;
        return true;
      }
      if (c == '\\') {
        out.append(run, p_);
        if (!escape(out)) return false;
        run = p_;
      } else if (c < 0x20 || !utf8_sequence()) {
        return false;  // control characters must be escaped; malformed UTF-8 is an error
      }
    }
  }

  /// One well-formed UTF-8 sequence of 2 to 4 bytes (Unicode's table 3-7: no overlong forms, no
  /// surrogates, nothing above U+10FFFF), as nlohmann checks it.
  bool utf8_sequence() {
    const auto byte = [&](size_t i) { return static_cast<unsigned char>(p_[i]); };
    const auto lead = byte(0);
    size_t n = 0;
    unsigned char lo = 0x80, hi = 0xBF;  // the range of the second byte
    if (lead >= 0xC2 && lead <= 0xDF) n = 2;
    else if (lead == 0xE0) n = 3, lo = 0xA0;
    else if ((lead >= 0xE1 && lead <= 0xEC) || lead == 0xEE || lead == 0xEF) n = 3;
    else if (lead == 0xED) n = 3, hi = 0x9F;
    else if (lead == 0xF0) n = 4, lo = 0x90;
    else if (lead >= 0xF1 && lead <= 0xF3) n = 4;
    else if (lead == 0xF4) n = 4, hi = 0x8F;
    else return false;
    if (static_cast<size_t>(end_ - p_) < n || byte(1) < lo || byte(1) > hi) return false;
    for (size_t i = 2; i < n; ++i) {
      if (byte(i) < 0x80 || byte(i) > 0xBF) return false;
    }
    p_ += n;
    return true;
  }

  bool hex4(uint32_t& out) {
    if (end_ - p_ < 4) return false;
    const auto [ptr, ec] = std::from_chars(p_, p_ + 4, out, 16);
    if (ec != std::errc() || ptr != p_ + 4) return false;
    p_ += 4;
    return true;
  }

  /// An escape sequence starting at its backslash.
  bool escape(std::string& out) {
    ++p_;  // '\'
    if (p_ == end_) return false;
    switch (*p_++) {
      case '"': out += '"'; return true;
      case '\\': out += '\\'; return true;
      case '/': out += '/'; return true;
      case 'b': out += '\b'; return true;
      case 'f': out += '\f'; return true;
      case 'n': out += '\n'; return true;
      case 'r': out += '\r'; return true;
      case 't': out += '\t'; return true;
      case 'u': break;
      default: return false;
    }
    uint32_t cp = 0;
    if (!hex4(cp) || (cp >= 0xDC00 && cp <= 0xDFFF)) return false;  // a low surrogate cannot come first
    if (cp >= 0xD800 && cp <= 0xDBFF) {
      uint32_t low = 0;
      if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') return false;
      p_ += 2;
      if (!hex4(low) || low < 0xDC00 || low > 0xDFFF) return false;
      cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
    }
    append_utf8(out, cp);
    return true;
  }

  /// RFC 8259's number grammar. Integers that fit int64 become integers, other numbers doubles.
  bool number(Value& out) {
    const char* start = p_;
    if (at('-')) ++p_;
    if (at('0')) {
      ++p_;
    } else if (p_ != end_ && *p_ >= '1' && *p_ <= '9') {
      while (p_ != end_ && is_digit(*p_)) ++p_;
    } else {
      return false;
    }
    bool integral = true;
    if (at('.')) {
      integral = false;
      ++p_;
      if (p_ == end_ || !is_digit(*p_)) return false;
      while (p_ != end_ && is_digit(*p_)) ++p_;
    }
    if (at('e') || at('E')) {
      integral = false;
      ++p_;
      if (at('+') || at('-')) ++p_;
      if (p_ == end_ || !is_digit(*p_)) return false;
      while (p_ != end_ && is_digit(*p_)) ++p_;
    }
    // Out of range (an integer beyond int64, a float that overflows or underflows): nlohmann's rules.
    if (integral) {
      int64_t i = 0;
      const auto [ptr, ec] = std::from_chars(start, p_, i);
      if (ec != std::errc() || ptr != p_) return false;
      out = Value(i);
      return true;
    }
    double d = 0;
    const auto [ptr, ec] = std::from_chars(start, p_, d);
    if (ec != std::errc() || ptr != p_) return false;
    out = Value(d);
    return true;
  }

  const char* p_;
  const char* end_;
  std::vector<Value> items_;
  std::vector<std::pair<std::string, Value>> entries_;
};

}  // namespace

std::optional<Value> read_json_fast(std::string_view text) {
  Reader reader(text);
  Value out;
  if (!reader.document(out)) return std::nullopt;
  return out;
}

}  // namespace kforge::driver
