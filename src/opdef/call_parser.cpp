// The invoke / composite mini-language (schemas/op.schema.json, invoke and composite):
//   call := NAME '(' [arg (',' arg)*] ')'
//   arg  := [NAME '='] EXPR
// Arguments are C++ expressions (`x.dtype()`, `0.0f`, `grad_x_grad.dtype()`), kept verbatim; Paddle's
// regex takes whatever is inside the parentheses, and static_backward.yaml passes some by keyword
// (`transpose_x=false`).
#include <fmt/format.h>

#include "opdef/cpp_expr.h"
#include "opdef/op_syntax.h"

namespace kforge::opdef {

namespace {

// `NAME =` (not `==`) at the cursor: consumes it and returns NAME; otherwise leaves the cursor and
// returns "".
std::string_view read_keyword(TextCursor& cur) {
  const size_t start = cur.pos();
  const std::string_view name = cur.identifier();
  if (!name.empty() && cur.consume("=") && cur.peek() != '=') return name;
  cur.set_pos(start);
  return {};
}

}  // namespace

std::optional<Call> parse_call(const LocatedText& text, DiagnosticEngine& diags, std::string_view key) {
  TextCursor cur(text);
  Call call;
  cur.skip_spaces();
  call.loc = cur.loc();
  const std::string_view func = cur.identifier();
  if (func.empty()) {
    diags.error(cur.loc(), fmt::format("expected a function name in '{}', found {}", key, cur.describe_next()));
    return std::nullopt;
  }
  call.func = std::string(func);
  cur.skip_spaces();
  const size_t open = cur.pos();
  if (!cur.consume("(")) {
    diags.error(cur.loc(), fmt::format("expected '(' after '{}' in '{}', found {}", func, key, cur.describe_next()));
    return std::nullopt;
  }
  if (!cur.consume(")")) {
    for (;;) {
      cur.skip_spaces();
      call.keywords.push_back(std::string(read_keyword(cur)));
      cur.skip_spaces();
      size_t begin = cur.pos();
      const std::string context = fmt::format("bad argument {} of '{}' in '{}'", call.args.size() + 1, func, key);
      if (!parse_cpp_expression(cur, diags, context)) return std::nullopt;
      size_t end = cur.pos();
      trim_range(text.text(), begin, end);
      call.args.emplace_back(text.text().substr(begin, end - begin));
      call.arg_locs.push_back(text.loc(begin));
      if (cur.consume(",")) continue;
      if (cur.consume(")")) break;
      cur.skip_spaces();
      Diagnostic d{Severity::kError, cur.loc(),
                   fmt::format("expected ',' or ')' in the arguments of '{}', found {}", func, cur.describe_next()),
                   {}};
      d.note("to match this '('", cur.loc(open));
      diags.report(std::move(d));
      return std::nullopt;
    }
  }
  cur.skip_spaces();
  if (!cur.at_end()) {
    diags.error(cur.loc(), fmt::format("unexpected {} after the call in '{}'", cur.describe_next(), key));
    return std::nullopt;
  }
  return call;
}

}  // namespace kforge::opdef
