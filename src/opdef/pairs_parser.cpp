// The inplace / view mini-language (schemas/op.schema.json, inplace and view):
//   pairs := group (',' group)*
//   group := '(' pair (',' pair)* ')' | pair
//   pair  := NAME '->' NAME               (spaces optional: `(N->N)`)
// Both layouts Paddle uses are accepted: `(a -> b), (c -> d)` and `(a -> b, c -> d)`.
#include <fmt/format.h>

#include "opdef/op_syntax.h"

namespace kforge::opdef {

namespace {

bool parse_pair(TextCursor& cur, DiagnosticEngine& diags, std::string_view key, InplacePair& out) {
  cur.skip_spaces();
  out.loc = cur.loc();
  const std::string_view input = cur.identifier();
  if (input.empty()) {
    diags.error(cur.loc(), fmt::format("expected an input name in '{}', found {}", key, cur.describe_next()));
    return false;
  }
  if (!cur.consume("->")) {
    cur.skip_spaces();
    diags.error(cur.loc(), fmt::format("expected '->' after '{}' in '{}', found {}", input, key, cur.describe_next()));
    return false;
  }
  cur.skip_spaces();
  out.output_loc = cur.loc();
  const std::string_view output = cur.identifier();
  if (output.empty()) {
    diags.error(cur.loc(), fmt::format("expected an output name after '->' in '{}', found {}", key,
                                       cur.describe_next()));
    return false;
  }
  out.input = std::string(input);
  out.output = std::string(output);
  return true;
}

}  // namespace

std::optional<std::vector<InplacePair>> parse_inplace_pairs(const LocatedText& text, DiagnosticEngine& diags,
                                                            std::string_view key) {
  TextCursor cur(text);
  std::vector<InplacePair> pairs;
  for (;;) {
    cur.skip_spaces();
    const size_t open = cur.pos();
    const bool grouped = cur.consume("(");
    for (;;) {
      InplacePair pair;
      if (!parse_pair(cur, diags, key, pair)) return std::nullopt;
      pairs.push_back(std::move(pair));
      if (!grouped || !cur.consume(",")) break;
    }
    if (grouped && !cur.consume(")")) {
      cur.skip_spaces();
      Diagnostic d{Severity::kError, cur.loc(),
                   fmt::format("expected ')' to close '(' in '{}', found {}", key, cur.describe_next()), {}};
      d.note("to match this '('", cur.loc(open));
      diags.report(std::move(d));
      return std::nullopt;
    }
    if (cur.consume(",")) continue;
    cur.skip_spaces();
    if (cur.at_end()) break;
    diags.error(cur.loc(), fmt::format("expected ',' between pairs in '{}', found {}", key, cur.describe_next()));
    return std::nullopt;
  }
  return pairs;
}

}  // namespace kforge::opdef
