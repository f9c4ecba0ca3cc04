// Reader of kforge program YAML, the small format for hand-written programs (schemas/program.schema.json):
//
//   program: mlp                                          # the program's name
//   inputs:  [{name: x, dtype: float32, shape: [-1, 64]}] # feeds: pd_op.data ops (-1 = dynamic dim)
//   params:  [{name: w0, dtype: float32, shape: [64, 128]}]  # parameters: builtin.parameter ops
//   ops:
//     - {op: matmul, in: [x, w0], out: [h0], attrs: {transpose_x: false, transpose_y: false}}
//     - {op: relu, in: [h0], out: [y]}
//   outputs: [y]                                          # fetched values: pd_op.fetch ops
//
// `op` is an op YAML name (the op gets dialect "pd_op") or a dialect-qualified PIR name ("builtin.combine",
// "pd_op.add"); both give the same model op. `in` entries name values (~ for an absent optional input);
// `out` entries are names, or {name, dtype, shape} to declare the result type (otherwise it is unknown
// until shape inference). Attribute values: plain YAML scalars and lists have guessed kinds (see
// attribute.h: `3` may be an int32, int64 or float attribute; an unquoted `float32` may be a DataType);
// a quoted string is exactly a string; a one-key map gives the kind exactly: {i32: 3}, {i64: 3},
// {index: 3}, {f32: 0.5}, {f64: 0.5}, {bool: true}, {str: x}, {dtype: float32}, {place: cpu} (or gpu:0),
// {layout: NCHW}, {int_array: [2, 2]}, {scalar: [float32, 1.5]}.
//
// Every problem is an error at its place in the file: unknown keys (with did-you-mean), undefined or
// repeated value names, bad dtypes, shapes and attribute values.
#pragma once

#include <optional>

#include "program/program.h"
#include "support/diagnostics.h"

namespace kforge::ir {

/// Reads the registered buffer `file` as program YAML. Returns nullopt when any error was reported.
std::optional<Program> read_program_yaml(const SourceManager& sources, uint32_t file, DiagnosticEngine& diags);

}  // namespace kforge::ir
