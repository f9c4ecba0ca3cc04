// The builder of the CPU program's template context (build_program_context, program_context.h), shared by the
// files that define its members: program_context.cpp (build, the calls and the kernels they name),
// program_context_values.cpp (inputs, parameters, values, outputs, constants) and
// program_context_data_dependent.cpp (the symbols known only at run time and what is laid out once they are).
// Internal to codegen/.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>

#include "codegen/cpp_text.h"
#include "codegen/data_symbols.h"
#include "codegen/fused_cpu.h"
#include "codegen/multikernel_context.h"
#include "codegen/program_context.h"
#include "codegen/size_table.h"
#include "output/banner.h"

namespace kforge::codegen::program_context_internal {

using passes::ArgKind;
using passes::Buffer;
using passes::BufferKind;
using passes::KernelArg;
using passes::KernelCall;
using passes::LoweredProgram;
using passes::LoweredValue;
using passes::SymExpr;
using passes::ValueRole;
using tmpl::List;
using tmpl::Value;

constexpr int kMaxRank = 9;  // kforge::kMaxRank of the runtime

/// Builds the context; `ok` turns false at the first problem reported.
class ContextBuilder {
 public:
  /// `sizes`: the size table to number the sizes by (SizeTable::canonical of an earlier build), or empty.
  ContextBuilder(const LoweredProgram& program, const SourceManager& sources, const ProgramCodegenOptions& options,
                 DiagnosticEngine& diags, SizeTable sizes = {})
      : p_(program), sources_(sources), options_(options), diags_(diags), sizes_(std::move(sizes)) {}

  std::optional<Value> build();
  const SizeTable& sizes() const { return sizes_; }

 private:
  void error(SourceLoc loc, std::string message) {
    diags_.error(loc, std::move(message));
    ok_ = false;
  }

  /// A size where the class uses it: a constant, a dim, or its entry of the size table (`sizes_[k]`).
  std::string sym(const SymExpr& e) { return sizes_.ref(e, member_size); }
  static std::string member_size(uint32_t k) { return "sizes_[" + std::to_string(k) + "]"; }
  std::string dims_init(const passes::SymShape& dims) {
    return braced_list(dims, [this](const SymExpr& d) { return sym(d); });
  }
  std::string shape_text(const std::vector<int64_t>& dims) const {
    return bracket_list(dims, [](int64_t d) { return d < 0 ? std::string("?") : std::to_string(d); });
  }
  std::string shape_text(const passes::SymShape& dims) {
    return bracket_list(dims, [this](const SymExpr& d) { return sym(d); });
  }
  std::string where(SourceLoc loc) const {
    if (!loc.valid()) return program_display_;
    const LineCol lc = sources_.line_col(loc);
    return program_display_ + ":" + std::to_string(lc.line) + ":" + std::to_string(lc.col);
  }
  std::string dtype_of(ir::DataType dtype, SourceLoc loc, const std::string& what) {
    std::optional<std::string> text = runtime_dtype(dtype);
    if (!text) {
      error(loc, what + " has dtype " + std::string(ir::dtype_name(dtype)) + ", which the kforge runtime cannot represent");
      return "kforge::DataType::kUndefined";
    }
    return *text;
  }

  /// The C++ expression of a tensor value.
  std::string expr(uint32_t value_index) const {
    const LoweredValue& v = p_.value(value_index);
    switch (v.role) {
      case ValueRole::kInput: return input_idents_.at(v.role_index);
      case ValueRole::kParameter: return "parameters_[" + std::to_string(v.role_index) + "]";
      case ValueRole::kConstant: return "constants_[" + std::to_string(v.role_index) + "]";
      case ValueRole::kComputed: break;
    }
    auto it = slots_.find(value_index);
    return it == slots_.end() ? "values_[?]" : "values_[" + std::to_string(it->second) + "]";
  }
  std::string trace_key(const LoweredValue& v) const {
    return v.source_id.empty() ? "v" + std::to_string(v.source.index) : v.source_id;
  }

  /// The data-dependent symbols' facts, shared with the CUDA class (codegen/data_symbols.h).
  uint32_t late_symbol(const SymExpr& e) const { return data_.late_symbol(e); }
  uint32_t late_symbol(const passes::SymShape& dims) const { return data_.late_symbol(dims); }
  bool is_late(const LoweredValue& v) const { return data_.is_late(v); }

  void add_symbols(Value& ctx);
  List data_symbols_value();
  void add_late_sizes(List& data_symbols);
  void add_inputs(Value& ctx);
  void add_parameters(Value& ctx);
  void add_values(Value& ctx);
  void add_outputs(Value& ctx);
  void add_constants(Value& ctx);
  Value call_context(const KernelCall& call, uint32_t index);
  std::string bind_arg(const KernelCall& call, uint32_t index, const KernelArg& arg, List& pre);
  std::string named_attr(const KernelCall& call, const KernelArg& arg, const std::string& init);
  std::string context_name(ir::DataType dtype, SourceLoc loc);
  void declare_kernel(const KernelCall& call);
  /// The infer-meta call that gives a call's data-dependent dims before it runs (Symbol::before_call), or none.
  std::optional<Value> run_time_meta(const KernelCall& call, uint32_t index, const List& args, List& pre);
  static std::string meta_output(uint32_t index, const std::string& output) {
    return "kf_c" + std::to_string(index) + "_meta_" + cpp_identifier(output);
  }

  const LoweredProgram& p_;
  DataSymbols data_{p_};
  const SourceManager& sources_;
  const ProgramCodegenOptions& options_;
  DiagnosticEngine& diags_;
  bool ok_ = true;
  std::string program_display_;
  std::vector<std::string> input_idents_;
  std::map<uint32_t, uint32_t> slots_;  // computed value index -> values_ slot
  IdentifierScope attr_names_;
  std::map<std::string, std::string> attr_by_text_;  // "type = init" -> name
  List attrs_;
  std::map<std::string, std::string> contexts_;  // name -> dtype
  std::map<std::string, Value> kernel_decls_;
  std::map<std::string, Value> meta_decls_;  // infer-meta functions run before a call (run_time_meta)
  std::vector<std::string> kernel_order_;
  SizeTable sizes_;  // every size of a dynamic program, computed once per new set of dims
};

}  // namespace kforge::codegen::program_context_internal
