// A strict JSON reader that builds template Values straight from the text.
//
// nlohmann's parser, behind its SAX interface, copies every string one character at a time and grows
// every container element by element; on large data files that was most of `kforge render`'s time.
// This reader copies each string in one piece and builds each list and map at its final size.
//
// It is the fast path only: it accepts exactly what RFC 8259 accepts, and gives up (nullopt) on any
// input that is not well-formed JSON and on the few well-formed inputs whose conversion has rules of
// its own (integers outside int64, floats that overflow or underflow, nesting deeper than kMaxDepth).
// The caller then runs nlohmann's parser, which reports the precise, located error or converts the
// rare case, so both paths give the same result and the diagnostics stay nlohmann's.
#pragma once

#include <optional>
#include <string_view>

#include "template/value.h"

namespace kforge::driver {

/// The value of the JSON document `text` (objects keep document order; a later duplicate key replaces
/// the earlier value in place), or nullopt when the fast path does not handle it (see above).
std::optional<tmpl::Value> read_json_fast(std::string_view text);

}  // namespace kforge::driver
