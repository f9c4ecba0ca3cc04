#include "output/unified_diff.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

namespace kforge {

namespace {

enum class EditKind { kEqual, kDelete, kInsert };

struct Edit {
  EditKind kind;
  size_t old_index;  // for kEqual/kDelete: the old line; for kInsert: the old line it precedes
  size_t new_index;  // for kEqual/kInsert: the new line; for kDelete: the new line it precedes
};

/// Lines including their terminating '\n' (the last one may lack it), so that a missing final
/// newline is a difference like any other.
std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    end = end == std::string_view::npos ? text.size() : end + 1;
    lines.push_back(text.substr(start, end - start));
    start = end;
  }
  return lines;
}

/// Myers' O((N+M)D) shortest edit script over the middle part a[lo_a, hi_a) / b[lo_b, hi_b).
/// Returns false if the distance exceeds `limit` (the caller then replaces the whole range).
bool myers(const std::vector<std::string_view>& a, const std::vector<std::string_view>& b, size_t lo_a,
           size_t hi_a, size_t lo_b, size_t hi_b, size_t limit, std::vector<Edit>& out) {
  const long n = static_cast<long>(hi_a - lo_a);
  const long m = static_cast<long>(hi_b - lo_b);
  const long max_d = std::min<long>(n + m, static_cast<long>(limit));
  const long offset = max_d + 1;
  std::vector<long> v(static_cast<size_t>(2 * max_d + 3), 0);
  std::vector<std::vector<long>> trace;
  long found_d = -1;
  for (long d = 0; d <= max_d && found_d < 0; ++d) {
    // Only the diagonals -d-1..d+1 of the previous round are needed to backtrack round d.
    trace.emplace_back(v.begin() + (offset - d - 1), v.begin() + (offset + d + 2));
    for (long k = -d; k <= d; k += 2) {
      long x;
      if (k == -d || (k != d && v[offset + k - 1] < v[offset + k + 1])) {
        x = v[offset + k + 1];
      } else {
        x = v[offset + k - 1] + 1;
      }
      long y = x - k;
      while (x < n && y < m && a[lo_a + x] == b[lo_b + y]) ++x, ++y;
      v[offset + k] = x;
      if (x >= n && y >= m) {
        found_d = d;
        break;
      }
    }
  }
  if (found_d < 0) return false;
  // Walk the trace backwards to recover the path.
  std::vector<Edit> reversed;
  long x = n, y = m;
  for (long d = found_d; d > 0; --d) {
    const std::vector<long>& pv = trace[static_cast<size_t>(d)];
    const long k = x - y;
    long prev_k;
    const auto at = [&](long diag) { return pv[static_cast<size_t>(diag + d + 1)]; };
    if (k == -d || (k != d && at(k - 1) < at(k + 1))) {
      prev_k = k + 1;
    } else {
      prev_k = k - 1;
    }
    const long prev_x = at(prev_k);
    const long prev_y = prev_x - prev_k;
    while (x > prev_x && y > prev_y) {
      --x, --y;
      reversed.push_back({EditKind::kEqual, lo_a + x, lo_b + y});
    }
    if (x == prev_x) {
      --y;
      reversed.push_back({EditKind::kInsert, lo_a + x, lo_b + y});
    } else {
      --x;
      reversed.push_back({EditKind::kDelete, lo_a + x, lo_b + y});
    }
  }
  while (x > 0 && y > 0) {
    --x, --y;
    reversed.push_back({EditKind::kEqual, lo_a + x, lo_b + y});
  }
  out.insert(out.end(), reversed.rbegin(), reversed.rend());
  return true;
}

std::vector<Edit> edit_script(const std::vector<std::string_view>& a, const std::vector<std::string_view>& b,
                              size_t limit) {
  std::vector<Edit> edits;
  size_t prefix = 0;
  while (prefix < a.size() && prefix < b.size() && a[prefix] == b[prefix]) ++prefix;
  size_t suffix = 0;
  while (suffix < a.size() - prefix && suffix < b.size() - prefix &&
         a[a.size() - 1 - suffix] == b[b.size() - 1 - suffix]) {
    ++suffix;
  }
  for (size_t i = 0; i < prefix; ++i) edits.push_back({EditKind::kEqual, i, i});
  const size_t hi_a = a.size() - suffix, hi_b = b.size() - suffix;
  if (!myers(a, b, prefix, hi_a, prefix, hi_b, limit, edits)) {
    for (size_t i = prefix; i < hi_a; ++i) edits.push_back({EditKind::kDelete, i, prefix});
    for (size_t j = prefix; j < hi_b; ++j) edits.push_back({EditKind::kInsert, hi_a, j});
  }
  for (size_t i = 0; i < suffix; ++i) edits.push_back({EditKind::kEqual, hi_a + i, hi_b + i});
  return edits;
}

/// difflib/GNU range format: "start,count", "start" alone when count is 1, and for an empty range
/// the line before it.
std::string format_range(size_t first_index, size_t count) {
  if (count == 1) return fmt::format("{}", first_index + 1);
  if (count == 0) return fmt::format("{},0", first_index);
  return fmt::format("{},{}", first_index + 1, count);
}

void append_line(std::string& out, char marker, std::string_view line) {
  out += marker;
  out += line;
  if (line.empty() || line.back() != '\n') out += "\n\\ No newline at end of file\n";
}

}  // namespace

std::string unified_diff(std::string_view old_text, std::string_view new_text, std::string_view old_label,
                         std::string_view new_label, const DiffOptions& options) {
  if (old_text == new_text) return {};
  const std::vector<std::string_view> a = split_lines(old_text);
  const std::vector<std::string_view> b = split_lines(new_text);
  const std::vector<Edit> edits = edit_script(a, b, options.max_edit_distance);

  std::string out = fmt::format("--- {}\n+++ {}\n", old_label, new_label);
  size_t lines_printed = 0;
  size_t lines_skipped = 0;
  const size_t ctx = options.context;
  size_t i = 0;
  while (i < edits.size()) {
    while (i < edits.size() && edits[i].kind == EditKind::kEqual) ++i;
    if (i == edits.size()) break;
    // [first_change, last_change] grows while the equal run between changes is short enough to share
    // one hunk (at most 2 * context lines).
    const size_t first_change = i;
    size_t last_change = i;
    size_t j = i + 1;
    while (j < edits.size()) {
      if (edits[j].kind != EditKind::kEqual) {
        last_change = j;
        ++j;
        continue;
      }
      size_t run_end = j;
      while (run_end < edits.size() && edits[run_end].kind == EditKind::kEqual) ++run_end;
      if (run_end == edits.size() || run_end - j > 2 * ctx) break;
      j = run_end;
    }
    const size_t begin = first_change >= ctx ? first_change - ctx : 0;
    const size_t end = std::min(edits.size(), last_change + ctx + 1);
    size_t old_count = 0, new_count = 0;
    for (size_t e = begin; e < end; ++e) {
      if (edits[e].kind != EditKind::kInsert) ++old_count;
      if (edits[e].kind != EditKind::kDelete) ++new_count;
    }
    std::string hunk = fmt::format("@@ -{} +{} @@\n", format_range(edits[begin].old_index, old_count),
                                   format_range(edits[begin].new_index, new_count));
    for (size_t e = begin; e < end; ++e) {
      const Edit& edit = edits[e];
      switch (edit.kind) {
        case EditKind::kEqual: append_line(hunk, ' ', a[edit.old_index]); break;
        case EditKind::kDelete: append_line(hunk, '-', a[edit.old_index]); break;
        case EditKind::kInsert: append_line(hunk, '+', b[edit.new_index]); break;
      }
    }
    // The cap counts lines; a hunk that would cross it is cut at the cap.
    size_t pos = 0;
    while (pos < hunk.size()) {
      size_t nl = hunk.find('\n', pos);
      nl = nl == std::string::npos ? hunk.size() : nl + 1;
      if (lines_printed < options.max_lines) {
        out.append(hunk, pos, nl - pos);
        ++lines_printed;
      } else {
        ++lines_skipped;
      }
      pos = nl;
    }
    i = end;
  }
  if (lines_skipped > 0) out += fmt::format("... {} more diff lines not shown\n", lines_skipped);
  return out;
}

}  // namespace kforge
