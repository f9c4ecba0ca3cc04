// The GroupEmitter of emit_cuda_group (cuda_kernels.h), shared by the files that define its members:
// cuda_kernels.cpp (the launcher's parameters and arguments, vector widths, strided offsets, the elementwise
// kernels) and cuda_kernels_rows.cpp (the row kernels: passes over a row, cached rows, row patterns, the
// launcher of a row group's variants). Internal to codegen/.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "codegen/cpp_text.h"
#include "codegen/cuda_kernels.h"
#include "codegen/size_table.h"
#include "codegen/group_text.h"
#include "support/ascii.h"
namespace kforge::codegen {

// The fused group's names the CUDA kernel files use (cuda_kernels.cpp, cuda_kernels_rows.cpp).
using passes::FusedGroup;
using passes::GroupInput;
using passes::GroupStmt;
using passes::GroupStore;
using passes::SymExpr;
using passes::InputAccess;
using passes::StmtKind;

}  // namespace kforge::codegen

namespace kforge::codegen::cuda_kernels_internal {

inline std::string indent(const std::string& text, int spaces) {
  std::string out, pad(static_cast<size_t>(spaces), ' ');
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    if (end > start) out += pad + text.substr(start, end - start);
    out += '\n';
    start = end + 1;
  }
  return out;
}

/// The launcher's parameter of a store.
inline std::string store_param(const GroupStore& st) { return "o_" + st.name; }

class GroupEmitter {
 public:
  GroupEmitter(const passes::LoweredProgram& program, const FusedGroup& group, std::string prefix,
               const passes::MultiKernelSite* site, DiagnosticEngine& diags)
      : p_(program),
        g_(group),
        name_(prefix + "fused_" + std::to_string(group.index)),
        site_(site),
        diags_(diags),
        shape_params_(cuda_group_shape_params(group)) {}

  std::optional<CudaGroupCode> emit();

 private:
  void error(const std::string& message);

  std::string type_of(expr::ScalarType t);

  // A loaded storage value as compute type `compute`: a plain cast, except that 16-bit floats go through
  // kforge::cuda::to_float (kforge_half.cuh: their casts to bool or integers can be ambiguous).
  std::string load_as(expr::ScalarType storage, expr::ScalarType compute, const std::string& text);
  // A computed value as storage type `storage`: a plain cast, or for 16-bit floats a conversion from float
  // rounded to nearest even (kforge::cuda::from_float).
  std::string store_as(expr::ScalarType storage, const std::string& text);

  bool check();

  std::string params(bool with_stream);

  std::string args() const;

  // Inputs and element stores accessed V at a time; the vector width makes their widest access 16 bytes.
  int vector_width() const;

  // The launcher's check that the vector path is allowed: every vector-accessed pointer aligned.
  std::string aligned_condition(int vec, bool needs_inner_multiple);

  // Offset of a strided input (a general broadcast, a transpose read through) or store (a transpose stored
  // through) `name` at flat element `flat`: the sum over its dims of
  // (flat / (the product of the dims after k)) % dim k * stride k, one plain expression (a lambda inside a 16-bit
  // load's conversion crashed nvcc 13's front end). Dims and strides known only at run time are the launcher's
  // shape parameters (cuda_group_shape_params), the others literals.
  std::string strided_offset(const std::string& name, const std::vector<SymExpr>& strides, const std::string& flat,
                             const std::string& index_type);

  std::string stmt_text(const GroupStmt& s, const std::function<std::string(std::string_view)>& rename);

  // ---------------------------------------------------------------------------------------------------
  // Elementwise groups
  // ---------------------------------------------------------------------------------------------------

  std::string elementwise_body(const std::string& index_type);

  std::string elementwise_kernel();

  // ---------------------------------------------------------------------------------------------------
  // Row groups
  // ---------------------------------------------------------------------------------------------------

  static bool in_pass(const GroupStmt& s, uint32_t pass);
  static uint32_t first_pass(const GroupStmt& s) { return s.passes.empty() ? 0 : s.passes.front(); }

  // Element-level names inside a row loop (cached: registers [c][v]; looped: the chunk's vectors).
  std::function<std::string(std::string_view)> row_rename(bool cached);

  // Math names for a float or double pattern local.
  struct PatternMath {
    std::string t, exp, max, rsqrt, neg_inf, zero;
  };
  PatternMath math_for(const GroupStmt& s);
  std::string operand(const GroupStmt& s, const std::string& arg);

  struct PassText {
    std::string before, decls, body, after;
  };

  // The text of pass `pass`: row values that can go before the loop, accumulator declarations, the body
  // (per element j0 + v), and the reductions/finalizations/row values/per-row stores after the loop.
  PassText row_pass(uint32_t pass, bool cached, std::set<std::string>& post_names);

  void row_pattern(const GroupStmt& s, uint32_t piece, const std::function<std::string(std::string_view)>& rename,
                   PassText& t, std::set<std::string>& post_names);

  std::string row_loop(const PassText& t, uint32_t pass, bool cached);

  std::string row_body(bool cached);

  std::string row_kernel();

  bool row_needs_inner() const;

  // --multi-kernel-hints: the launcher of the site's variants (passes::plan_cuda_row_variants), by index in
  // the site's list. A register variant holds rows up to team x regs x kVec elements: longer rows are not
  // its to run (the dispatcher never calls it for them; cudaErrorInvalidValue if called anyway). Unaligned
  // pointers keep the capacity with V = 1 and regs x kVec scalars per thread.
  std::string row_variant_launcher();

  const passes::LoweredProgram& p_;
  const FusedGroup& g_;
  std::string name_;
  const passes::MultiKernelSite* site_;
  DiagnosticEngine& diags_;
  const std::vector<CudaShapeParam> shape_params_;
  bool failed_ = false;
};

}  // namespace kforge::codegen::cuda_kernels_internal
