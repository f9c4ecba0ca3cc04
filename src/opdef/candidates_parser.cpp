// The candidate lists of kernel.data_type / backend / layout (schemas/op.schema.json, kernel):
//   candidates := cand ('>' cand)*   (ordered)   |   cand (',' cand)*   (unordered)
//   cand       := NAME | 'complex' '(' NAME ')' | QUALIFIED_NAME (a constant such as DataType::FLOAT32)
// As in Paddle, the list is ordered when it contains any '>', and empty candidates are dropped
// (`place>` is one candidate).
#include <fmt/format.h>

#include "opdef/op_syntax.h"

namespace kforge::opdef {

namespace {

// Parses one candidate filling [begin, end) (already trimmed, not empty).
bool parse_candidate(const LocatedText& text, size_t begin, size_t end, DiagnosticEngine& diags,
                     std::string_view key, Candidate& out) {
  TextCursor cur(text, begin, end);
  out.loc = text.loc(begin);
  const std::string_view name = read_qualified_name(cur);
  bool ok = !name.empty();
  if (ok && name == "complex" && cur.consume("(")) {
    const std::string_view inner = cur.identifier();
    ok = !inner.empty() && cur.consume(")");
    out.name = std::string(inner);
    out.to_complex = true;
  } else if (ok) {
    out.name = std::string(name);
    out.is_constant = name.find("::") != std::string_view::npos;
  }
  cur.skip_spaces();
  if (ok && cur.at_end()) return true;
  diags.error(ok ? cur.loc() : text.loc(begin),
              fmt::format("bad candidate '{}' in '{}': expected an argument name, complex(name) or a constant "
                          "such as DataType::FLOAT32",
                          text.text().substr(begin, end - begin), key));
  return false;
}

}  // namespace

std::optional<Candidates> parse_candidates(const LocatedText& text, DiagnosticEngine& diags, std::string_view key) {
  Candidates out;
  out.loc = text.loc(0);
  const std::string_view s = text.text();
  const char delimiter = s.find('>') != std::string_view::npos ? '>' : ',';
  out.ordered = delimiter == '>';
  size_t begin = 0;
  for (;;) {
    size_t end = s.find(delimiter, begin);
    if (end == std::string_view::npos) end = s.size();
    size_t b = begin, e = end;
    trim_range(s, b, e);
    if (b < e) {
      Candidate c;
      if (!parse_candidate(text, b, e, diags, key, c)) return std::nullopt;
      out.items.push_back(std::move(c));
    }
    if (end == s.size()) break;
    begin = end + 1;
  }
  if (out.items.empty()) {
    diags.error(text.loc(0), fmt::format("'{}' names no candidate", key));
    return std::nullopt;
  }
  return out;
}

}  // namespace kforge::opdef
