// Small text helpers shared by front ends and emitters: edit distance, did-you-mean suggestions, joining,
// C string literals.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kforge {

/// Levenshtein distance, capped: max_distance + 1 wherever the distance exceeds it (found out as early as possible).
size_t edit_distance(std::string_view a, std::string_view b, size_t max_distance = SIZE_MAX);

/// The closest candidate to `name` (ties: first in order), if it is close enough to be a plausible typo:
/// distance at most max(1, name.size() / 3). Used for "did you mean 'x'?" notes.
std::optional<std::string> closest_match(std::string_view name, const std::vector<std::string>& candidates);

/// The offset of the first byte that YAML does not allow anywhere in a stream (YAML 1.2 c-printable): a C0
/// control character other than tab, line feed and carriage return, or DEL. yaml-cpp does not reject them itself
/// and loops forever on some (a NUL inside a flow mapping), so YAML front ends check first.
std::optional<size_t> find_non_printable_yaml_byte(std::string_view text);

/// Joins strings with a separator: join({"a", "b"}, ", ") == "a, b".
std::string join(const std::vector<std::string>& parts, std::string_view sep);

/// A double-quoted C/C++ string literal of `text` (also valid CUDA and readable in dumps): quotes, backslashes,
/// \n, \t and \r escaped, other control bytes as three-digit octal escapes (a following digit cannot extend
/// them), everything else (UTF-8 included) as is.
std::string c_string_literal(std::string_view text);

/// Whether `word` is reserved in C++20 or C (`restrict`, `_Bool`, `_Complex`): generated identifiers that would be
/// one get a trailing underscore (the emitters and the templates' c_ident filter both ask here).
bool is_cpp_keyword(std::string_view word);

}  // namespace kforge
