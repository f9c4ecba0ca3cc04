#include "template/unicode_case.h"

namespace kforge::tmpl {

namespace {

// Ranges where upper and lower case alternate: even code point upper, odd lower (or the reverse).
struct PairRange {
  uint32_t first, last;
  bool even_is_upper;
};
constexpr PairRange kPairRanges[] = {
    {0x0100, 0x0137, true},  {0x0139, 0x0148, false}, {0x014A, 0x0177, true}, {0x0179, 0x017E, false},
    {0x01A0, 0x01A5, true},  {0x01DE, 0x01EF, true},  {0x01F8, 0x021F, true}, {0x0460, 0x0481, true},
    {0x0370, 0x0373, true},  {0x0376, 0x0377, true},  {0x03D8, 0x03EF, true},  {0x048A, 0x04BF, true},  {0x04C1, 0x04CE, false}, {0x04D0, 0x052F, true}, {0x1E00, 0x1E95, true},
    {0x1EA0, 0x1EFF, true},
};

// Ranges mapped to another range by a constant offset (upper -> lower).
struct OffsetRange {
  uint32_t first, last;  // upper-case range
  int32_t offset;        // lower = upper + offset
};
constexpr OffsetRange kOffsetRanges[] = {
    {'A', 'Z', 32},         {0x00C0, 0x00D6, 32},  {0x00D8, 0x00DE, 32},  {0x0391, 0x03A1, 32},
    {0x03A3, 0x03AB, 32},   {0x0388, 0x038A, 37},  {0x038E, 0x038F, 63},  {0x0410, 0x042F, 32},
    {0x0400, 0x040F, 80},   {0x0531, 0x0556, 48},  {0xFF21, 0xFF3A, 32},
};

uint32_t lower_cp(uint32_t cp) {
  if (cp == 0x0130) return 'i';  // (Python adds U+0307; see append_lower)
  for (const OffsetRange& r : kOffsetRanges) {
    if (cp >= r.first && cp <= r.last) return static_cast<uint32_t>(static_cast<int32_t>(cp) + r.offset);
  }
  for (const PairRange& r : kPairRanges) {
    if (cp >= r.first && cp <= r.last && ((cp % 2 == 0) == r.even_is_upper)) return cp + 1;
  }
  switch (cp) {
    case 0x0178: return 0x00FF;
    case 0x0386: return 0x03AC;
    case 0x038C: return 0x03CC;
    case 0x04C0: return 0x04CF;
    default: return cp;
  }
}

uint32_t upper_cp(uint32_t cp) {
  if (cp == 0x0131) return 'I';  // dotless i, inside a pair range
  for (const OffsetRange& r : kOffsetRanges) {
    const uint32_t lo_first = static_cast<uint32_t>(static_cast<int32_t>(r.first) + r.offset);
    const uint32_t lo_last = static_cast<uint32_t>(static_cast<int32_t>(r.last) + r.offset);
    if (cp >= lo_first && cp <= lo_last) return static_cast<uint32_t>(static_cast<int32_t>(cp) - r.offset);
  }
  for (const PairRange& r : kPairRanges) {
    if (cp >= r.first && cp <= r.last && ((cp % 2 == 0) != r.even_is_upper)) return cp - 1;
  }
  switch (cp) {
    case 0x00FF: return 0x0178;
    case 0x00B5: return 0x039C;
    case 0x017F: return 'S';
    case 0x03C2: return 0x03A3;
    case 0x03AC: return 0x0386;
    case 0x03CC: return 0x038C;
    case 0x04CF: return 0x04C0;
    default: return cp;
  }
}

bool is_ascii(std::string_view s) {
  for (char c : s) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return true;
}
char ascii_lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; }
char ascii_upper(char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 32) : c; }

template <typename F>
std::string map_cps(std::string_view s, F f) {
  std::string out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) f(utf8_decode(s, i), out);
  return out;
}

void append_upper(uint32_t cp, std::string& out) {
  if (cp == 0x00DF) {  // ß
    out += "SS";
    return;
  }
  utf8_append(out, upper_cp(cp));
}

void append_lower(uint32_t cp, std::string& out) {
  utf8_append(out, lower_cp(cp));
  if (cp == 0x0130) utf8_append(out, 0x0307);  // İ -> i + combining dot above
}

}  // namespace

uint32_t utf8_decode(std::string_view s, size_t& i) {
  const unsigned char c = static_cast<unsigned char>(s[i]);
  size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 0;
  if (len == 0 || i + len > s.size()) {
    ++i;
    return c;
  }
  uint32_t cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
  for (size_t k = 1; k < len; ++k) {
    const unsigned char cc = static_cast<unsigned char>(s[i + k]);
    if ((cc & 0xC0) != 0x80) {
      ++i;
      return c;
    }
    cp = (cp << 6) | (cc & 0x3F);
  }
  i += len;
  return cp;
}

void utf8_append(std::string& out, uint32_t cp) {
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

std::string utf8_upper(std::string_view s) {
  if (is_ascii(s)) {
    std::string out(s);
    for (char& c : out) c = ascii_upper(c);
    return out;
  }
  return map_cps(s, [](uint32_t cp, std::string& out) { append_upper(cp, out); });
}

std::string utf8_lower(std::string_view s) {
  if (is_ascii(s)) {
    std::string out(s);
    for (char& c : out) c = ascii_lower(c);
    return out;
  }
  return map_cps(s, [](uint32_t cp, std::string& out) { append_lower(cp, out); });
}

std::string utf8_capitalize(std::string_view s) {
  if (is_ascii(s)) {
    std::string out(s);
    for (size_t i = 0; i < out.size(); ++i) out[i] = i == 0 ? ascii_upper(out[i]) : ascii_lower(out[i]);
    return out;
  }
  bool first = true;
  return map_cps(s, [&first](uint32_t cp, std::string& out) {
    if (first) {
      append_upper(cp, out);
      first = false;
    } else {
      append_lower(cp, out);
    }
  });
}

bool is_lower_cp(uint32_t cp) { return upper_cp(cp) != cp || cp == 0x00DF; }
bool is_upper_cp(uint32_t cp) { return lower_cp(cp) != cp; }

}  // namespace kforge::tmpl
