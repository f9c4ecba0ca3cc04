// Reader of printed PIR programs (the text Paddle's IR printer writes), both printer eras:
//   * the 2024 typed form: `(%2) = "pd_op.full" () {dtype:(pd_op.DataType)float32,value:(Float)0} : ()
//     -> builtin.tensor<1xi32>`, with `builtin.tensor<...>` and the older `pd_op.tensor<...>`;
//   * the 2025 untyped form: `{dtype:float32,value:0} : () -> tensor<1xi32>`. Its numbers and lists do
//     not say their kind; they are read with Attribute::kind_guessed set (see attribute.h).
// Also read: control flow (`"pd_op.if" (%c) {..} -> T {` ... `} else {` ... `}`, the unquoted 2024
// `pd_op.if`, `"pd_op.while" (cond=%c, inputs=%a, %b) {` with a `^%arg_0 {..}, ...` line, generic ops with
// regions, `^kw:` keyword arguments, block arguments first printed where used (`%arg_0 {}`)), null values
// and types, `[id:N]`, `//` comments, the kernel dialect (`"add(phi_kernel)"`, `gpu_tensor<...>`, kernel
// keys `<backend:GPU|layout:NCHW|dtype:float32>`, kept opaque), and the two kforge extensions of
// Program::dump() (block-argument types, `(pd_op.Scalar)float32:1.5`).
//
// What the text does not say is inferred: block arguments and while results take their types from the
// operand types printed where they are used, or from the while's inputs; a printed operand type never
// overrides a known value type (Paddle's own test programs disagree with themselves there).
#pragma once

#include <optional>
#include <vector>

#include "program/program.h"
#include "support/diagnostics.h"

namespace kforge::ir {

/// Reads the registered buffer `file`, which holds one printed program or several (a file may show a
/// program before and after lowering); returns them all, or an empty vector when any error was reported.
std::vector<Program> read_pir_text_programs(const SourceManager& sources, uint32_t file, DiagnosticEngine& diags);

/// Reads the first program of the buffer; warns when the file holds more than one.
std::optional<Program> read_pir_text(const SourceManager& sources, uint32_t file, DiagnosticEngine& diags);

/// Reads the whole buffer as one printed type (`builtin.tensor<256xf32>`, `vec[bf16,f64]`).
std::optional<Type> read_pir_type(const SourceManager& sources, uint32_t file, DiagnosticEngine& diags);

/// Reads the whole buffer as one printed attribute value (`[(Float)inf,(Float)-inf]`).
std::optional<Attribute> read_pir_attribute(const SourceManager& sources, uint32_t file, DiagnosticEngine& diags);

}  // namespace kforge::ir
