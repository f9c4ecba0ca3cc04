// The GroupEmitter of cuda_group_code (cuda_kernels.h), shared by the files that define its members:
// cuda_kernels.cpp (the launcher's parameters, vector widths, strided offsets, the elementwise kernels' context)
// and cuda_kernels_rows.cpp (the row kernels' context: passes over a row, cached rows, row patterns, a row
// group's variants). templates/program/cuda/group_kernels.j2 spells the kernels from it. Internal to codegen/.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <functional>

#include "codegen/cpp_text.h"
#include "codegen/cuda_kernels.h"
#include "codegen/size_table.h"
#include "codegen/group_text.h"
#include "support/ascii.h"
#include "template/value.h"

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

/// The launcher's parameter of a store.
inline std::string store_param(const GroupStore& st) { return "o_" + st.name; }

/// One statement of a kernel's body for templates/program/cuda/group_kernels.j2's `stmt` macro: `kind` (let, var,
/// set, add, reduce, square, row_store) says how the template spells it; code gives the type, the name (or the
/// assigned lvalue) and the value, an expression.
inline tmpl::Value stmt(const char* kind, const std::string& type, const std::string& name, const std::string& value) {
  tmpl::Value s = tmpl::Value::map();
  s.set("kind", kind);
  s.set("type", type);
  s.set("name", name);
  s.set("value", value);
  return s;
}

/// Builds a fused group's context for templates/program/cuda/group_kernels.j2. The CUDA target plan
/// (passes/cuda_plan_groups.cpp) has refused every group this cannot spell, so it cannot fail.
class GroupEmitter {
 public:
  GroupEmitter(const FusedGroup& group, std::string prefix, const passes::MultiKernelSite* site)
      : g_(group),
        name_(prefix + "fused_" + std::to_string(group.index)),
        site_(site),
        shape_params_(cuda_group_shape_params(group)) {}

  CudaGroupCode emit();

 private:
  // The CUDA spelling of a dtype the plan accepted.
  static std::string type_of(expr::ScalarType t);

  // A loaded storage value as compute type `compute`: a plain cast, except that 16-bit floats go through
  // kforge::cuda::to_float (kforge_half.cuh: their casts to bool or integers can be ambiguous).
  static std::string load_as(expr::ScalarType storage, expr::ScalarType compute, const std::string& text);
  // A computed value as storage type `storage`: a plain cast, or for 16-bit floats a conversion from float
  // rounded to nearest even (kforge::cuda::from_float).
  static std::string store_as(expr::ScalarType storage, const std::string& text);

  // The context keys both kernel shapes share: names, the launcher's parameters, the vector path's check.
  tmpl::Value launcher_context(bool needs_inner) const;

  // Inputs and element stores accessed V at a time; the vector width makes their widest access 16 bytes.
  int vector_width() const;

  // Offset of a strided input (a general broadcast, a transpose read through) or store (a transpose stored
  // through) `name` at flat element `flat`: the sum over its dims of
  // (flat / (the product of the dims after k)) % dim k * stride k, one plain expression (a lambda inside a 16-bit
  // load's conversion crashed nvcc 13's front end). Dims and strides known only at run time are the launcher's
  // shape parameters (cuda_group_shape_params), the others literals.
  std::string strided_offset(const std::string& name, const std::vector<SymExpr>& strides, const std::string& flat,
                             const std::string& index_type) const;

  static std::string stmt_text(const GroupStmt& s, const std::function<std::string(std::string_view)>& rename);

  // Elementwise groups: the scalars, the body's loads, statements and stores (cuda_kernels.cpp).
  void add_elementwise(tmpl::Value& k) const;

  // ---------------------------------------------------------------------------------------------------
  // Row groups (cuda_kernels_rows.cpp)
  // ---------------------------------------------------------------------------------------------------

  static bool in_pass(const GroupStmt& s, uint32_t pass);
  static uint32_t first_pass(const GroupStmt& s) { return s.passes.empty() ? 0 : s.passes.front(); }

  // Element-level names inside a row loop (cached: registers [c][v]; looped: the chunk's vectors).
  std::function<std::string(std::string_view)> row_rename(bool cached) const;

  // Math names for a float or double pattern local.
  struct PatternMath {
    std::string t, exp, max, rsqrt, neg_inf, zero;
  };
  static PatternMath math_for(const GroupStmt& s);
  static std::string operand(const GroupStmt& s, const std::string& arg);

  // One pass over a row: row values that can go before the loop, accumulator declarations, the body (per
  // element j0 + v), and the reductions/finalizations/row values/per-row stores after the loop.
  struct RowPass {
    tmpl::List before, decls, body, after;
    std::vector<std::string> texts;       // every statement's name and value: whether the kernel uses `base`
    std::vector<std::string> body_texts;  // the body's: which loads it needs
  };
  // Adds statement `s` to `part` of `t`.
  static void add(RowPass& t, tmpl::List RowPass::*part, tmpl::Value s);
  RowPass row_pass(uint32_t pass, bool cached) const;
  void row_pattern(const GroupStmt& s, uint32_t piece, const std::function<std::string(std::string_view)>& rename,
                   RowPass& t) const;
  tmpl::Value row_loop(const RowPass& t, uint32_t pass, bool cached) const;
  // The cached or looped body of the row kernel; `uses_base` is set when it reads or writes at row * inner.
  tmpl::Value row_body(bool cached, bool& uses_base) const;
  void add_rows(tmpl::Value& k) const;
  bool row_needs_inner() const;
  // --multi-kernel-hints: the site's variants, by index in its list (passes::plan_cuda_row_variants).
  tmpl::Value row_site() const;

  const FusedGroup& g_;
  std::string name_;
  const passes::MultiKernelSite* site_;
  const std::vector<CudaShapeParam> shape_params_;
};

}  // namespace kforge::codegen::cuda_kernels_internal
