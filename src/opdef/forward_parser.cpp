// The forward mini-language of backward ops (schemas/op.schema.json, forward):
//   forward := NAME args '->' outputs
// with the args and output languages of args_parser.cpp and output_parser.cpp.
#include <fmt/format.h>

#include "opdef/op_syntax.h"

namespace kforge::opdef {

std::optional<Forward> parse_forward(const LocatedText& text, DiagnosticEngine& diags) {
  TextCursor cur(text);
  Forward fwd;
  cur.skip_spaces();
  fwd.loc = cur.loc();
  const std::string_view name = cur.identifier();
  if (name.empty()) {
    diags.error(cur.loc(), fmt::format("expected the forward op name, found {}", cur.describe_next()));
    return std::nullopt;
  }
  fwd.op = std::string(name);
  ArgList args;
  if (!parse_arg_list(cur, diags, args)) return std::nullopt;
  fwd.inputs = std::move(args.inputs);
  fwd.attributes = std::move(args.attributes);
  if (!cur.consume("->")) {
    cur.skip_spaces();
    diags.error(cur.loc(), fmt::format("expected '->' after the arguments of '{}', found {}", fwd.op,
                                       cur.describe_next()));
    return std::nullopt;
  }
  std::optional<std::vector<Output>> outputs = parse_outputs(cur, diags);
  if (!outputs) return std::nullopt;
  fwd.outputs = std::move(*outputs);
  return fwd;
}

}  // namespace kforge::opdef
