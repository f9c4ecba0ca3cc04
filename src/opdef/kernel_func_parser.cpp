// The kernel.func mini-language (schemas/op.schema.json, kernel.func):
//   funcs     := func ([','] func)* [',']          separators: a comma, spaces or a line break
//   func      := NAME [signature]
//   signature := '{' kinds '->' kinds '}'           kinds := KIND (',' KIND)*
//   KIND      := dense | selected_rows | sparse_coo | sparse_csr
#include <fmt/format.h>

#include "opdef/op_syntax.h"

namespace kforge::opdef {

namespace {

bool parse_kinds(TextCursor& cur, DiagnosticEngine& diags, const std::string& func, std::string_view side,
                 std::vector<TensorKind>& out) {
  for (;;) {
    cur.skip_spaces();
    const size_t begin = cur.pos();
    const std::string_view word = cur.identifier();
    if (word.empty()) {
      diags.error(cur.loc(), fmt::format("expected a tensor kind in the {} of kernel '{}', found {}", side, func,
                                         cur.describe_next()));
      return false;
    }
    const std::optional<TensorKind> kind = parse_tensor_kind(word);
    if (!kind) {
      diags.error(cur.loc(begin), fmt::format("unknown tensor kind '{}' in kernel '{}'{}", word, func,
                                              did_you_mean(word, tensor_kind_spellings())));
      return false;
    }
    out.push_back(*kind);
    if (!cur.consume(",")) return true;
  }
}

bool parse_signature(TextCursor& cur, DiagnosticEngine& diags, KernelFunc& func) {
  const size_t open = cur.pos();
  cur.advance();  // '{'
  func.has_signature = true;
  if (!parse_kinds(cur, diags, func.name, "inputs", func.input_kinds)) return false;
  if (!cur.consume("->")) {
    cur.skip_spaces();
    diags.error(cur.loc(), fmt::format("expected '->' in the signature of kernel '{}', found {}", func.name,
                                       cur.describe_next()));
    return false;
  }
  if (!parse_kinds(cur, diags, func.name, "outputs", func.output_kinds)) return false;
  if (!cur.consume("}")) {
    cur.skip_spaces();
    Diagnostic d{Severity::kError, cur.loc(),
                 fmt::format("expected '}}' to close the signature of kernel '{}', found {}", func.name,
                             cur.describe_next()),
                 {}};
    d.note("to match this '{'", cur.loc(open));
    diags.report(std::move(d));
    return false;
  }
  return true;
}

}  // namespace

std::optional<std::vector<KernelFunc>> parse_kernel_funcs(const LocatedText& text, DiagnosticEngine& diags) {
  TextCursor cur(text);
  std::vector<KernelFunc> funcs;
  for (;;) {
    cur.skip_spaces();
    if (cur.at_end()) break;
    const size_t begin = cur.pos();
    const std::string_view name = cur.identifier();
    if (name.empty()) {
      diags.error(cur.loc(), fmt::format("expected a kernel name, found {}", cur.describe_next()));
      return std::nullopt;
    }
    KernelFunc func;
    func.name = std::string(name);
    func.loc = cur.loc(begin);
    cur.skip_spaces();
    if (cur.peek() == '{' && !parse_signature(cur, diags, func)) return std::nullopt;
    for (const KernelFunc& prev : funcs) {
      if (prev.name == func.name) {
        Diagnostic d{Severity::kError, func.loc, fmt::format("kernel '{}' is listed twice", func.name), {}};
        d.note("first listed here", prev.loc);
        diags.report(std::move(d));
        return std::nullopt;
      }
    }
    funcs.push_back(std::move(func));
    cur.consume(",");
  }
  if (funcs.empty()) {
    diags.error(text.loc(0), "'func' names no kernel");
    return std::nullopt;
  }
  return funcs;
}

}  // namespace kforge::opdef
