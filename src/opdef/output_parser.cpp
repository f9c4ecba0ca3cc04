// The `output` mini-language (schemas/op.schema.json, output):
//   outputs := output (',' output)*
//   output  := TYPE ['(' NAME ')'] ['{' SIZE '}']      TYPE := Tensor | Tensor[] | SelectedRows
// NAME may contain '@' (strings ops); a missing name is "out"; SIZE is a C++ expression, kept verbatim,
// allowed on vector outputs only.
#include <fmt/format.h>

#include "opdef/cpp_expr.h"
#include "opdef/op_syntax.h"

namespace kforge::opdef {

namespace {

bool is_output_name_char(char c) { return is_ident_char(c) || c == '@'; }

bool parse_one(TextCursor& cur, DiagnosticEngine& diags, Output& out) {
  cur.skip_spaces();
  const size_t type_begin = cur.pos();
  out.loc = cur.loc();
  std::string type_text(cur.identifier());
  if (type_text.empty()) {
    diags.error(cur.loc(), fmt::format("expected an output type, found {}", cur.describe_next()));
    return false;
  }
  if (cur.peek() == '[' && cur.peek(1) == ']') {
    cur.advance(2);
    type_text += "[]";
  }
  const std::optional<OutputType> type = parse_output_type(type_text);
  if (!type) {
    diags.error(cur.loc(type_begin), fmt::format("unknown output type '{}'{}", type_text,
                                                 did_you_mean(type_text, output_type_spellings())));
    return false;
  }
  out.type = *type;
  out.name = "out";
  if (cur.consume("(")) {
    const size_t open = cur.pos() - 1;
    cur.skip_spaces();
    const size_t name_begin = cur.pos();
    while (!cur.at_end() && is_output_name_char(cur.peek())) cur.advance();
    if (cur.pos() == name_begin) {
      diags.error(cur.loc(), fmt::format("expected an output name after '(', found {}", cur.describe_next()));
      return false;
    }
    out.name = std::string(cur.slice(name_begin, cur.pos()));
    out.name_given = true;
    if (!cur.consume(")")) {
      cur.skip_spaces();
      Diagnostic d{Severity::kError, cur.loc(),
                   fmt::format("expected ')' after output name '{}', found {}", out.name, cur.describe_next()), {}};
      d.note("to match this '('", cur.loc(open));
      diags.report(std::move(d));
      return false;
    }
  }
  if (cur.consume("{")) {
    const size_t open = cur.pos() - 1;
    cur.skip_spaces();
    if (cur.peek() == '}') {
      diags.error(cur.loc(), fmt::format("empty size expression for output '{}'", out.name));
      return false;
    }
    size_t begin = cur.pos();
    if (!parse_cpp_expression(cur, diags, fmt::format("bad size expression for output '{}'", out.name))) return false;
    size_t end = cur.pos();
    trim_range(cur.text().text(), begin, end);
    if (!cur.consume("}")) {
      cur.skip_spaces();
      Diagnostic d{Severity::kError, cur.loc(),
                   fmt::format("bad size expression for output '{}': expected '}}' to close '{{'", out.name), {}};
      if (!cur.at_end()) d.message += fmt::format(", found {}", cur.describe_next());
      d.note("to match this '{'", cur.loc(open));
      diags.report(std::move(d));
      return false;
    }
    if (out.type != OutputType::kTensorList) {
      diags.error(cur.loc(open), fmt::format("output '{}' has a size expression but is not a vector (Tensor[])",
                                             out.name));
      return false;
    }
    out.size_expr = std::string(cur.slice(begin, end));
    out.size_loc = cur.loc(begin);
  }
  return true;
}

}  // namespace

std::optional<std::vector<Output>> parse_outputs(TextCursor& cur, DiagnosticEngine& diags) {
  std::vector<Output> outputs;
  for (;;) {
    Output out;
    if (!parse_one(cur, diags, out)) return std::nullopt;
    for (const Output& prev : outputs) {
      if (prev.name == out.name) {
        Diagnostic d{Severity::kError, out.loc, fmt::format("duplicate output '{}'", out.name), {}};
        if (!out.name_given) d.message += " (an output without a name is called 'out')";
        d.note(fmt::format("'{}' was first declared here", out.name), prev.loc);
        diags.report(std::move(d));
        return std::nullopt;
      }
    }
    outputs.push_back(std::move(out));
    if (cur.consume(",")) continue;
    cur.skip_spaces();
    if (cur.at_end()) return outputs;
    diags.error(cur.loc(), fmt::format("expected ',' between outputs, found {}", cur.describe_next()));
    return std::nullopt;
  }
}

std::optional<std::vector<Output>> parse_outputs(const LocatedText& text, DiagnosticEngine& diags) {
  TextCursor cur(text);
  return parse_outputs(cur, diags);
}

}  // namespace kforge::opdef
