// The mini-languages inside op YAML values (schemas/op.schema.json), one hand-written parser
// each (args_parser.cpp, output_parser.cpp, ...). Every parser reads a LocatedText, reports its first
// error at the exact character with "<what>: <problem>"-style messages, and returns nullopt on error.
// Checks that need the whole op (does `x` name an input?) are done by the loader, not here.
#pragma once

#include <fmt/format.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "opdef/located_text.h"
#include "opdef/op_library.h"
#include "opdef/text_cursor.h"
#include "support/diagnostics.h"
#include "support/text.h"

namespace kforge::opdef {

struct ArgList {
  std::vector<Input> inputs;
  std::vector<Attribute> attributes;
};

/// `(Tensor x, Tensor[] xs, int axis = -1, ...)` at the cursor; leaves the cursor after the ')'.
/// Enforces Paddle's rules: known types, tensors before attributes, defaults on every attribute after
/// the first that has one, unique names.
bool parse_arg_list(TextCursor& cursor, DiagnosticEngine& diags, ArgList& out);
/// The whole value of `args`: one argument list and nothing after it.
std::optional<ArgList> parse_args(const LocatedText& text, DiagnosticEngine& diags);
/// One `TYPE NAME [= DEFAULT]` filling the whole value (op_compat `extra.attrs` items).
std::optional<ArgList> parse_single_arg(const LocatedText& text, DiagnosticEngine& diags);

/// `Tensor(out), Tensor[](xs){x.size()}, Tensor` in [cursor, end of value).
std::optional<std::vector<Output>> parse_outputs(TextCursor& cursor, DiagnosticEngine& diags);
std::optional<std::vector<Output>> parse_outputs(const LocatedText& text, DiagnosticEngine& diags);

/// kernel.func: `adam {dense, ... -> dense, ...}, adam_sr {...}` (comma, space or newline separated).
std::optional<std::vector<KernelFunc>> parse_kernel_funcs(const LocatedText& text, DiagnosticEngine& diags);

/// kernel.data_type / backend / layout: `x`, `dtype > x`, `place>`, `complex(x)`, `DataType::FLOAT32`.
/// `key` names the field in messages ("data_type").
std::optional<Candidates> parse_candidates(const LocatedText& text, DiagnosticEngine& diags, std::string_view key);

/// inplace / view: `(x -> out)`, `(a -> b), (c -> d)`, `(a -> b, c -> d)`, `(N->N)`.
std::optional<std::vector<InplacePair>> parse_inplace_pairs(const LocatedText& text, DiagnosticEngine& diags,
                                                            std::string_view key);

/// invoke / composite: `func(arg, ...)`, each argument a C++ expression kept verbatim.
std::optional<Call> parse_call(const LocatedText& text, DiagnosticEngine& diags, std::string_view key);

/// forward: `name (args) -> outputs`.
std::optional<Forward> parse_forward(const LocatedText& text, DiagnosticEngine& diags);

/// optional / intermediate / no_need_buffer / traits / ...: `a, b, c`. With `qualified`, items may be
/// C++ qualified names (`paddle::dialect::InferSymbolicShapeInterface`).
std::optional<std::vector<NameRef>> parse_name_list(const LocatedText& text, DiagnosticEngine& diags,
                                                    std::string_view key, bool qualified);

/// "; did you mean 'x'?" when a candidate is close to `name`, else empty: appended to messages.
inline std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates) {
  const std::optional<std::string> best = closest_match(name, candidates);
  return best ? fmt::format("; did you mean '{}'?", *best) : std::string();
}

/// Reads a (possibly qualified) C++ name at the cursor: `a`, `a::b::c`. Empty if none.
std::string_view read_qualified_name(TextCursor& cursor);

}  // namespace kforge::opdef
