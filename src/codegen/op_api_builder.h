// The OpApiBuilder of build_op_api_model (op_api_model.h), shared by the files that define its members:
// op_api_model.cpp (which kernel, the dtype and place candidates, each function's calls and checks, the model) and
// op_api_decls.cpp (the declarations of the kernels and infer-meta functions, and the form of an op that invokes
// another). Internal to codegen/.
#pragma once

#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>

#include "codegen/cpp_text.h"
#include "codegen/op_api_defaults.h"
#include "codegen/op_api_model.h"
#include "codegen/op_api_size_expr.h"

namespace kforge::codegen::op_api_internal {

using opdef::ArgType;
using opdef::Attribute;
using opdef::Input;
using opdef::Op;
using opdef::Output;
using opdef::OutputType;

/// Why an op is left out (returned, never thrown).
struct Skip {
  std::string reason;
};

/// The namespace and name of an infer-meta function as op YAML spells it ("a::F" -> kforge::meta::a, F); returns
/// the qualified name.
std::string qualified_meta(std::string_view func, std::string* name_space, std::string* name);

// The C++ type a literal of a `param` list has in the declarations (`false` -> bool).
std::optional<std::string> literal_type(std::string_view text);

/// Everything the builder knows about one op while it decides its functions.
class OpApiBuilder {
 public:
  explicit OpApiBuilder(const Op& op) : op_(op) {}

  std::optional<Skip> check_expressible() const;
  std::optional<Skip> choose_kernel();
  std::optional<Skip> build_function(bool inplace_twin, const std::string& name, ApiFunction& fn);
  std::optional<Skip> build_decls(std::vector<FunctionDecl>& kernels, std::vector<FunctionDecl>& metas) const;
  std::optional<Skip> build_invoke(const std::unordered_map<std::string, const OpApi*>& generated,
                                   ApiFunction& fn) const;

 private:
  std::optional<Skip> call_args(const std::vector<opdef::ParamItem>& items, const ApiFunction& fn,
                                std::vector<std::string>& args) const;
  std::optional<Skip> dtype_candidates(ApiFunction& fn) const;
  std::optional<Skip> place_candidates(ApiFunction& fn) const;
  std::vector<opdef::ParamItem> kernel_param() const;
  std::vector<opdef::ParamItem> meta_param() const;
  const opdef::InplacePair* inplace_of_output(std::string_view output) const;
  const opdef::InplacePair* view_of_output(std::string_view output) const;
  std::optional<Skip> param_decl(const opdef::ParamItem& item, size_t index, std::string& decl) const;
  void output_decls(std::vector<std::string>& params) const;

  const Op& op_;
  const opdef::KernelFunc* kernel_ = nullptr;
};

}  // namespace kforge::codegen::op_api_internal
