// Reader of PIR JSON programs, the files Paddle 3 saves (`inference.json`, `model.json`), versions 0 to 4.
//
// What it reads: every key of Paddle's schema.h: base_code {magic, version, trainable}; program/regions/
// blocks with args and kwargs; ops with I (operands, {"%":0} = null operand), O (results), A, OA, DA and
// QA (all merged into the op's attribute list, in that order), regions (pd_op.if, pd_op.while, ...), the
// compressed parameter op {"#":"p", ...}; every type of §4.5 and every attribute kind of §4.6 (both the
// a_i32/a_i64 and a_f32/a_f64 flavours, VD for NaN and infinities; dist attributes are kept as opaque JSON
// text). Version differences are attribute-kind changes that the verifier absorbs (§4.8); the reader
// records the version in Program::pir_version.
//
// Diagnostics point into the JSON file: an op's problems at its '{', a bad value at that value, an unknown
// key (a warning: newer writers add keys) at the key. Deviations from Paddle's own reader, on purpose: "INF"
// and "-INF" become infinities (Paddle turns them into FLT_MAX and FLT_MIN), and a `kwargs` list that only
// repeats `args` (a Paddle writer bug) is skipped with a warning.
#pragma once

#include <optional>

#include "program/program.h"
#include "support/diagnostics.h"

namespace kforge::ir {

/// The newest PIR JSON version this reader knows; newer files are read with a warning.
constexpr int64_t kNewestPirJsonVersion = 4;

/// Reads the registered buffer `file` as a PIR JSON program. Returns nullopt when any error was reported.
std::optional<Program> read_pir_json(const SourceManager& sources, uint32_t file, DiagnosticEngine& diags);

}  // namespace kforge::ir
