// Case conversion of UTF-8 text like Python's str.upper()/lower()/capitalize() for the scripts
// templates meet in practice: ASCII, Latin-1, Latin Extended-A and Additional, Greek, Cyrillic,
// Armenian and fullwidth Latin (ß and İ expand as in Python). Other code points, including rare
// archaic letters and other multi-character expansions, are left unchanged.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kforge::tmpl {

std::string utf8_upper(std::string_view s);
std::string utf8_lower(std::string_view s);
/// First code point upper-cased, the rest lower-cased (Python's str.capitalize()).
std::string utf8_capitalize(std::string_view s);

/// Decodes the code point at `i` (advancing `i`); invalid bytes decode as themselves.
uint32_t utf8_decode(std::string_view s, size_t& i);
void utf8_append(std::string& out, uint32_t cp);

/// Whether a code point has a lower- or upper-case mapping (for `is lower` / `is upper`).
bool is_lower_cp(uint32_t cp);
bool is_upper_cp(uint32_t cp);

}  // namespace kforge::tmpl
