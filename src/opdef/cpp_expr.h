// The C++ expressions embedded in op YAML: argument defaults (`(2 << 12) - 1`, `1.0f/8`, `{1, 1}`,
// `CPUPlace()`), output size expressions (`axis<0 ? input.dims()[...] : ...`) and invoke arguments.
//
// kforge keeps their text verbatim, but checks that they parse as an expression so a typo is reported
// at its line and column instead of surfacing as a compile error in generated code. The grammar is the
// subset of C++ the files use: literals, (qualified) names, calls, member access, subscripts, brace
// lists, prefix operators, binary operators and `?:`. Assignment and the comma operator are not
// expressions here: a top-level ',' or '=' ends the expression (it separates arguments).
#pragma once

#include <optional>
#include <string_view>

#include "opdef/op_library.h"
#include "opdef/text_cursor.h"
#include "support/diagnostics.h"

namespace kforge::opdef {

/// Parses one expression from the cursor (leading spaces skipped) and leaves the cursor just after it.
/// On error reports "<context>: <problem>" at the offending character and returns false.
bool parse_cpp_expression(TextCursor& cursor, DiagnosticEngine& diags, std::string_view context);

/// Classifies the already-parsed expression text [begin, end) of `text` (see DefaultKind).
DefaultValue classify_default(const LocatedText& text, size_t begin, size_t end);

/// Parses [begin, end) as one default value: it must be a single expression filling the range.
std::optional<DefaultValue> parse_default_value(const LocatedText& text, size_t begin, size_t end,
                                                DiagnosticEngine& diags, std::string_view context);

}  // namespace kforge::opdef
