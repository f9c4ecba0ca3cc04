// The builder the index-mapped CUDA kernels share (codegen/cuda_index.h): KernelText, which collects one kernel's
// parameters, launch arguments and per-element statements, and IndexBuilder, the state of one call's kernels,
// rendered from the CUDA target plan's form (which has checked the call). Internal to codegen/: cuda_index.cpp
// builds the data-movement kernels with it, cuda_index_compute.cpp the reductions, scans and the ops that compute
// per element without a fused expression, cuda_index_select.cpp the ops that pick or place elements by an index or
// a rank.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/cuda_index.h"
#include "passes/cuda_plan_compute.h"

namespace kforge::codegen::index_text {

// The lowered program's names these files use.
using passes::ArgKind;
using passes::KernelArg;
using passes::KernelCall;
using passes::kNone;
using passes::LoweredProgram;
using passes::SymExpr;
using passes::SymShape;

/// The type a data move copies an element as: element_type's, and the unsigned type of the same width for
/// float16, bfloat16 (their bits) and uint16/32/64.
std::optional<std::string> move_type(ir::DataType dtype);

/// A context of templates/program/cuda/index_compute.j2's skeleton `shape`, to fill with its names, types, sizes and
/// expressions.
tmpl::Value statements_of(const std::string& shape);
/// A declaration of the `store` skeleton: `const TYPE NAME = VALUE, NAME = VALUE;` (names and values in order).
tmpl::Value local(const std::string& type, const std::vector<std::pair<std::string, std::string>>& values);
/// The `store` skeleton: the coordinates `coords` (KernelText::coordinates_context; rank 0: none), the locals, then
/// `out[e] = VALUE;`.
tmpl::Value store_statements(tmpl::Value coords, const std::string& value, tmpl::List locals = {});

/// Builds one kernel: its parameters (pointers, then the symbols its expressions use) and its body.
class KernelText {
 public:
  KernelText(const CudaBufferExpr& buffer, SizeTable& table, const SizeTable::Spelling& argument)
      : buffer_(buffer), sizes_(table, argument) {}

  /// A dim or any size as C++ text: the literal, a dim `s0`, or a parameter `z3` the launch passes from the
  /// program's size table (codegen/size_table.h), so that no kernel spells out a size.
  std::string size(const passes::SymExpr& d);
  /// `const int64_t <prefix><d>` for every dim of `dims`: the coordinate of element `index` (row-major).
  void coordinates(const passes::SymShape& dims, const std::string& index = "e", const std::string& prefix = "c");
  /// The row-major offset in a tensor of dims `dims` of the coordinate whose entries are `coords` (C++ text).
  std::string offset(const std::vector<std::string>& coords, const passes::SymShape& dims);
  /// A read-only pointer parameter for value v, as element type `type`; returns its name.
  std::string input(uint32_t v, const std::string& type);
  /// The output pointer `out` (or `name`, for a kernel that writes a second output).
  std::string output(uint32_t v, const std::string& type, const std::string& name = "out");
  /// The pointer `scratch` (int32 entries) to the call's scratch buffer, whose pointer expression is `pointer`.
  std::string scratch(const std::string& pointer);
  /// The kernel tests first whether `out` and `inputs` are 16-byte aligned (`const bool aligned`), for move units.
  void aligned(const std::vector<std::string>& inputs);
  /// The context of the coordinates() statements, for templates/program/cuda/index_compute.j2's `coordinates`:
  /// {rank, index, prefix, remainder, sizes: [{dim, size}] from the last dim to the second}.
  tmpl::Value coordinates_context(const passes::SymShape& dims, const std::string& index = "e",
                                  const std::string& prefix = "c");
  /// The kernel's statements as a typed context for index_compute.j2 (instead of line()s).
  void statements(tmpl::Value context) { statements_ = std::move(context); }

  CudaIndexKernel finish(std::string name, std::string description, const passes::SymExpr& numel, bool interp);

 private:
  const CudaBufferExpr& buffer_;
  SizeParams sizes_;
  std::vector<std::string> params_, args_;
  tmpl::Value aligned_, coords_, statements_;
  int inputs_ = 0;
};

/// The kernels of one call under construction: the program, the call, how buffers and sizes are spelled, and the
/// kernels made so far. It renders the CUDA target plan's form of the call, which the plan has checked: nothing
/// here can refuse the call.
class IndexBuilder {
 public:
  IndexBuilder(const passes::LoweredProgram& p, const passes::KernelCall& call, const std::string& prefix, size_t first,
               const std::string& description, const CudaBufferExpr& buffer, SizeTable& sizes,
               const SizeTable::Spelling& size_argument)
      : p_(p), call_(call), prefix_(prefix), next_(first), description_(description), buffer_(buffer),
        sizes_(sizes), size_argument_(size_argument) {}

  std::vector<CudaIndexKernel> take() { return std::move(kernels_); }

 protected:
  const passes::LoweredValue& value(uint32_t v) const { return p_.values[v]; }
  /// The first output's single value.
  uint32_t out_value() const;
  KernelText text() const { return KernelText(buffer_, sizes_, size_argument_); }
  /// Data movement in 16-byte units: the elements of `dtype` that make one 16 bytes when the rows of `dims`' last
  /// dim (a constant) are whole units, else 1 (element by element). A kernel moving units counts its dims and
  /// offsets in units (the last dim divided by it) and moves each by 16 bytes where KernelText::aligned's test
  /// holds (every pointer 16-byte aligned: a caller's tensor or a view may not be), else element by element.
  static int64_t unit_elements(const passes::SymShape& dims, ir::DataType dtype);
  void add(KernelText& k, const passes::SymExpr& numel, bool interp = false);

  const passes::LoweredProgram& p_;
  const passes::KernelCall& call_;
  const std::string& prefix_;
  size_t next_;
  const std::string& description_;
  const CudaBufferExpr& buffer_;
  SizeTable& sizes_;
  const SizeTable::Spelling& size_argument_;
  std::vector<CudaIndexKernel> kernels_;
};

/// The ops whose kernels compute on the values (cuda_index_compute.cpp): dropout, interpolation, triu / tril,
/// arange, full_with_tensor, the reductions outside a fused group (sum, mean, max, min, prod, any, all over any
/// axes), cumsum, one_hot and pow; their kernels, as cuda_index_kernels() (codegen/cuda_index.h).
std::vector<CudaIndexKernel> compute_kernels(const passes::LoweredProgram& program, const passes::KernelCall& call,
                                             const passes::CudaComputeForm& form, const std::string& prefix,
                                             size_t first, const std::string& description,
                                             const CudaBufferExpr& buffer, SizeTable& sizes,
                                             const SizeTable::Spelling& size_argument);

/// The ops whose kernels pick, place or combine elements by an index or a rank (cuda_index_select.cpp): topk,
/// argsort, gather_nd, scatter, roll, pad, add_n, assign, set_value, set_value_with_tensor; their kernels rendered
/// from their plan form `map`, as cuda_index_kernels() (codegen/cuda_index.h), `scratch` the call's scratch (topk's,
/// argsort's).
std::vector<CudaIndexKernel> select_kernels(const passes::LoweredProgram& program, const passes::KernelCall& call,
                                            const passes::CudaIndexMap& map, const std::string& prefix, size_t first,
                                            const std::string& description, const CudaBufferExpr& buffer,
                                            SizeTable& sizes, const SizeTable::Spelling& size_argument,
                                            const std::string& scratch);

/// The norms no fused group takes (cuda_index_norm.cpp): group_norm, p_norm; their kernels, as cuda_index_kernels().
std::vector<CudaIndexKernel> norm_kernels(const passes::LoweredProgram& program, const passes::KernelCall& call,
                                          const passes::CudaComputeForm& form, const std::string& prefix,
                                          size_t first, const std::string& description, const CudaBufferExpr& buffer,
                                          SizeTable& sizes, const SizeTable::Spelling& size_argument);

/// The losses no fused group takes (cuda_index_loss.cpp): sigmoid_cross_entropy_with_logits,
/// cross_entropy_with_softmax; their kernels from the plan's form `map`, as cuda_index_kernels().
std::vector<CudaIndexKernel> loss_kernels(const passes::LoweredProgram& program, const passes::KernelCall& call,
                                          const passes::CudaIndexMap& map, const std::string& prefix, size_t first,
                                          const std::string& description, const CudaBufferExpr& buffer,
                                          SizeTable& sizes, const SizeTable::Spelling& size_argument);

/// einsum (cuda_index_linalg.cpp); its kernel, as cuda_index_kernels().
std::vector<CudaIndexKernel> einsum_kernels(const passes::LoweredProgram& program, const passes::KernelCall& call,
                                            const passes::CudaComputeForm& form, const std::string& prefix,
                                            size_t first, const std::string& description, const CudaBufferExpr& buffer,
                                            SizeTable& sizes, const SizeTable::Spelling& size_argument);

/// floor_divide, broadcasting, and uniform (cuda_index_binary.cpp); their kernels, as cuda_index_kernels().
std::vector<CudaIndexKernel> binary_kernels(const passes::LoweredProgram& program, const passes::KernelCall& call,
                                            const passes::CudaComputeForm& form, const std::string& prefix,
                                            size_t first, const std::string& description, const CudaBufferExpr& buffer,
                                            SizeTable& sizes, const SizeTable::Spelling& size_argument);

}  // namespace kforge::codegen::index_text
