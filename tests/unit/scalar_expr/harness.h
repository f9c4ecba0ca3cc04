// Shared helpers of the kernel unit tests: a source manager and a diagnostic engine writing to a string,
// and one-liners that parse and check expressions.
#pragma once

#include <optional>
#include <sstream>
#include <string>
#include <string_view>

#include "scalar_expr/expr_check.h"
#include "scalar_expr/expr_emit.h"
#include "scalar_expr/expr_eval.h"
#include "scalar_expr/expr_parser.h"
#include "support/diagnostics.h"

namespace kforge::expr::testing {

struct Harness {
  SourceManager sources;
  std::ostringstream out;
  DiagnosticEngine diags{sources, out};

  /// Registers `yaml` as "ops.yaml" and returns the location of the first occurrence of `needle` in it.
  SourceLoc place(const std::string& yaml, std::string_view needle) {
    const uint32_t file = sources.add_buffer("ops.yaml", yaml);
    const size_t at = sources.contents(file).find(needle);
    return {file, static_cast<uint32_t>(at == std::string_view::npos ? 0 : at)};
  }

  /// Parses text without a source location.
  std::optional<Expression> parse(std::string_view text) { return parse_expression(text, {}, nullptr, diags); }

  /// Parses and checks; nullopt if either step failed.
  std::optional<Expression> typed(std::string_view text, const ExprContext& context, const ExprScope& scope = {}) {
    std::optional<Expression> parsed = parse(text);
    if (!parsed) return std::nullopt;
    return check_expression(*parsed, context, diags, scope);
  }

  /// Everything the engine printed so far, then cleared.
  std::string take() {
    std::string text = out.str();
    out.str("");
    return text;
  }
};

/// The typed dump of `text` checked against `context`, or the diagnostics when it fails.
inline std::string typed_dump(std::string_view text, const ExprContext& context) {
  Harness h;
  std::optional<Expression> e = h.typed(text, context);
  return e ? dump(*e->root, true) : h.take();
}

}  // namespace kforge::expr::testing
