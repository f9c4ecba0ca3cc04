// Small text helpers shared by front ends: edit distance and did-you-mean suggestions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kforge {

/// Levenshtein distance, capped: returns max_distance + 1 as soon as the distance exceeds it.
size_t edit_distance(std::string_view a, std::string_view b, size_t max_distance = SIZE_MAX);

/// The closest candidate to `name` (ties: first in order), if it is close enough to be a plausible typo:
/// distance at most max(1, name.size() / 3). Used for "did you mean 'x'?" notes.
std::optional<std::string> closest_match(std::string_view name, const std::vector<std::string>& candidates);

/// Joins strings with a separator: join({"a", "b"}, ", ") == "a, b".
std::string join(const std::vector<std::string>& parts, std::string_view sep);

}  // namespace kforge
