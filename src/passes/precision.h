// The compute precision plan (`kforge compile --precision float16|bfloat16`, docs/compile.md "Precision"): rewrites
// a float32 program so that its activations and its parameters are 16-bit floats, keeping the program's interface.
//
// What changes:
//   - every float32 parameter becomes 16-bit (the generated class converts the float32 data of a .pdiparams file
//     once, when it loads it; `stored` keeps what the file holds), except the parameters read only as a batch norm's
//     mean, variance, scale or bias: those stay float32, as a batch norm computes in float32 (its y is x's dtype);
//   - every DataType attribute float32 (full's, cast's, assign_value's dtype, ...) becomes the 16-bit type, so that
//     the constants a program makes meet its activations in one dtype;
//   - a float32 program input is read through one inserted cast to the 16-bit type, and a fetched value that became
//     16-bit is cast back to float32 before its fetch: callers pass and receive float32 tensors as before; or, with
//     `float32_interface` false (`--io-precision compute`), the float32 inputs and outputs are 16-bit themselves,
//     with no cast (a decoder's key / value caches stay 16-bit between steps, as in a model converted with
//     onnxconverter's keep_io_types=False or torch's model.half());
//   - an op the target computes in float32 only (`float32_ops`: the CUDA backend's index-mapped kernels that do
//     arithmetic, as dropout's scaling and bilinear interpolation) reads its float operands through casts to float32
//     and its float32 results are cast back to the 16-bit type for their readers.
// Everything else follows from the dtypes: the pipeline verifies and analyses the program again (lower.h), and the
// kernels compute in float32 on the 16-bit values they load (reductions and norms accumulate in float32).
// Programs with control flow and programs without float32 values are left unchanged (`skipped` says why).
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "program/program.h"

namespace kforge::passes {

/// What plan_precision did, for --dump-lowered, the parameter loaders and tests.
struct PrecisionReport {
  ir::DataType to = ir::DataType::kFloat32;
  /// Converted parameters: name -> the dtype the program declared (and a .pdiparams file holds).
  std::map<std::string, ir::DataType> stored;
  /// Parameters left float32 (batch-norm statistics and affine parameters), by name.
  std::vector<std::string> kept;
  struct Cast {
    ir::OpId op;       // the inserted pd_op.cast
    ir::DataType to;   // what it casts to
    std::string what;  // "input 'x'", "output 'y'", "operand of pd_op.dropout", "result of pd_op.dropout"
  };
  std::vector<Cast> casts;
  size_t attributes = 0;  // DataType attributes rewritten
  size_t interface = 0;   // inputs made 16-bit themselves (float32_interface false)
  std::string skipped;    // why the program was left unchanged
  ir::OpId skipped_at;    // the op that says why (invalid: none)

  bool empty() const { return stored.empty() && casts.empty() && attributes == 0; }
  /// One line per converted / kept parameter and per cast ("precision: ..."), in name and program order.
  std::string dump(const ir::Program& program) const;
};

/// Rewrites the top-level block of a float32 program to compute in `to` (float16 or bfloat16; float32 changes
/// nothing). `float32_ops` names ops ("dropout", without the dialect) that stay float32 between casts;
/// `float32_interface` false makes the float32 inputs and outputs 16-bit instead of casting at the boundary. The
/// program must be verified and carry inferred types (apply_inferred_types).
PrecisionReport plan_precision(ir::Program& program, ir::DataType to, const std::set<std::string>& float32_ops = {},
                               bool float32_interface = true);

}  // namespace kforge::passes
