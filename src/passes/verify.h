// The program verifier: checks a Program against an OpSet and normalises its attributes, so that every
// later pass can trust what it reads. Each problem is a diagnostic at the op's location in the JSON, text or
// YAML file (the operand, attribute or result location where the reader recorded one):
//   - unknown op: error, with "did you mean" (PIR names of the OpSet; a name that exists without the
//     dialect or with/without the in-place `_` is suggested too);
//   - operand count or kind mismatch: error (a vector where a tensor is expected, or the reverse; a null
//     operand for a non-optional input);
//   - use before definition, use of an erased or undefined value: error;
//   - attribute type mismatch: error (`transpose_x: 3` for a bool); attributes whose kind was guessed
//     (2025 text, program YAML: attribute.h) are converted to the exact kind the signature asks for, and
//     an IntArray / Scalar / DataType / Place given in a compatible form is normalised;
//   - missing attribute: filled with the YAML default when there is one (no diagnostic), else an error;
//   - unknown attribute: a warning (Paddle's bookkeeping attributes stop_gradient, persistable, op_callstack,
//     struct_name, is_persistable, op_role, op_namescope ... are accepted silently);
//   - dtype or rank conflicts between an op's declared operand/result types that the signature relates
//     (the result count; a declared result type that is not a tensor where one is expected) are errors;
//     shape-level conflicts are found by shape inference (analysis.h).
// PIR op names map to op YAML names: "pd_op.add" is op `add`, "pd_op.relu_" the in-place twin of `relu`.
#pragma once

#include "passes/op_set.h"
#include "program/program.h"
#include "support/diagnostics.h"

namespace kforge::passes {

struct VerifyOptions {
  bool warn_unknown_attributes = true;
};

/// Verifies `program` (every block, regions included) and normalises its attributes in place. Returns
/// false when any error was reported.
bool verify_program(ir::Program& program, const OpSet& ops, DiagnosticEngine& diags, const VerifyOptions& options = {});

}  // namespace kforge::passes
