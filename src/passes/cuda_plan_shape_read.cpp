// The CUDA target plan's part for dims read from a tensor's values (cuda_plan_internal.h): whether the host can run
// the op's shape rule, as codegen/cuda_shape_from_values.cpp spells it (the tensors copied back, the constants and
// the values computed from the dims as the rule's arguments), refused at the op with the reason otherwise, so that
// codegen cannot fail there.
#include <fmt/format.h>

#include "passes/cuda_plan.h"
#include "passes/cuda_plan_internal.h"

namespace kforge::passes::cuda_plan_internal {

namespace {

// The dtypes the runtime names (kforge::DataType; codegen's runtime_dtype spells these and no others).
bool runtime_named(ir::DataType d) {
  switch (d) {
    case ir::DataType::kUndefined:
    case ir::DataType::kBool:
    case ir::DataType::kInt8:
    case ir::DataType::kUInt8:
    case ir::DataType::kInt16:
    case ir::DataType::kInt32:
    case ir::DataType::kInt64:
    case ir::DataType::kFloat16:
    case ir::DataType::kBFloat16:
    case ir::DataType::kFloat32:
    case ir::DataType::kFloat64:
    case ir::DataType::kComplex64:
    case ir::DataType::kComplex128: return true;
    default: return false;
  }
}

// Why a constant argument has no C++ spelling on the host (codegen's constant_literal), or "".
std::string constant_problem(const AttrConstant& c) {
  using opdef::ArgType;
  auto dtype = [](ir::DataType d, const char* what) {
    return runtime_named(d) ? std::string() : fmt::format("{} {}", what, ir::dtype_name(d));
  };
  switch (c.type) {
    case ArgType::kScalar:
    case ArgType::kScalarBool:
    case ArgType::kScalarInt:
    case ArgType::kScalarInt64:
    case ArgType::kScalarFloat:
    case ArgType::kScalarDouble: return dtype(c.scalar.dtype, "a Scalar of dtype");
    case ArgType::kScalarList:
      for (const ScalarConstant& s : c.scalars) {
        if (std::string why = dtype(s.dtype, "a Scalar of dtype"); !why.empty()) return why;
      }
      return "";
    case ArgType::kDataType: return dtype(c.dtype, "the data type");
    case ArgType::kDataLayout:
      return c.layout == ir::DataLayout::kUndefined || c.layout == ir::DataLayout::kNCHW ||
                     c.layout == ir::DataLayout::kNHWC
                 ? ""
                 : "the layout " + std::string(ir::layout_name(c.layout));
    case ArgType::kPlace:
      return c.place.type == ir::AllocationType::kUndefined || c.place.type == ir::AllocationType::kCpu ||
                     c.place.type == ir::AllocationType::kGpu
                 ? ""
                 : "the place " + ir::place_to_string(c.place);
    case ArgType::kTensor:
    case ArgType::kTensorList: return "a tensor argument as a constant";
    default: return "";
  }
}

// Why values computed from the dims cannot be an argument of type `type` (codegen's symbolic_arg), or "".
std::string symbolic_problem(opdef::ArgType type, size_t items) {
  using opdef::ArgType;
  const bool one = items == 1;
  const bool ok = type == ArgType::kIntArray || type == ArgType::kInt64List || type == ArgType::kIntList ||
                  ((type == ArgType::kInt || type == ArgType::kInt32 || type == ArgType::kInt64 ||
                    opdef::is_scalar_type(type)) &&
                   one);
  return ok ? "" : "its values come from the dims in a way the generated code cannot express";
}

// The tensors whose values argument `a` passes (kTensorToAttr, kTensorListToAttr; kTensor and kTensorList to a rule
// that reads their values) or whose dtype and dims it does (kTensor); none for the others.
std::vector<uint32_t> arg_tensors(const KernelArg& a) {
  if (a.kind == ArgKind::kTensor || a.kind == ArgKind::kTensorToAttr) return {a.value};
  return a.kind == ArgKind::kTensorListToAttr || a.kind == ArgKind::kTensorList ? a.values : std::vector<uint32_t>{};
}

// Why argument `a` of shape rule `rule` cannot be passed on the host, or "".
std::string argument_problem(const LoweredProgram& p, std::string_view rule, const KernelArg& a) {
  if (a.kind == ArgKind::kTensorList && !is_cuda_host_values_rule(rule)) return "it is a list of tensors";
  for (uint32_t v : arg_tensors(a)) {
    if (!runtime_named(p.values[v].dtype)) {
      return fmt::format("its dtype {} has no runtime name", ir::dtype_name(p.values[v].dtype));
    }
  }
  switch (a.kind) {
    case ArgKind::kConstant: return constant_problem(a.constant);
    case ArgKind::kTensorToAttr:
      return opdef::is_scalar_type(a.type) || a.type == opdef::ArgType::kIntArray
                 ? ""
                 : "it is neither an IntArray nor a Scalar";
    case ArgKind::kTensorListToAttr:
      return a.type == opdef::ArgType::kIntArray ? "" : "it is a list of tensors but no IntArray";
    case ArgKind::kSymbolic: return symbolic_problem(a.type, a.symbolic.size());
    default: return "";
  }
}

// Whether a tensor whose values `a` passes is computed by the fused group that runs call c: the values come back to
// the host before that group's launch, so they would not be there yet.
bool computed_in_same_launch(const LoweredProgram& p, const FusionPlan& fusion, uint32_t c, const KernelArg& a) {
  auto group = [&](uint32_t call) { return call < fusion.call_group.size() ? fusion.call_group[call] : kNone; };
  const bool values = a.kind == ArgKind::kTensorToAttr || a.kind == ArgKind::kTensorListToAttr ||
                      cuda_host_rule_reads_values(p.calls[c].infer_meta, a);
  if (!values) return false;
  for (uint32_t v : arg_tensors(a)) {
    const uint32_t producer = p.values[v].defined_by;
    if (producer != kNone && group(c) != kNone && group(producer) == group(c)) return true;
  }
  return false;
}

}  // namespace

void plan_shape_reads(const LoweredProgram& p, const FusionPlan& fusion,
                      std::map<uint32_t, std::string>& call_refusal) {
  std::set<uint32_t> checked;
  for (const Symbol& s : p.symbols) {
    if (s.is_input_dim() || !s.before_call || !is_cuda_host_shape_rule(p.calls[s.call].infer_meta) ||
        !checked.insert(s.call).second) {
      continue;
    }
    const KernelCall& call = p.calls[s.call];
    std::string message;
    for (const KernelArg& a : call.infer_meta_args) {
      const std::string why = argument_problem(p, call.infer_meta, a);
      if (why.empty() && computed_in_same_launch(p, fusion, s.call, a)) {
        message = fmt::format("'{}': its output dims are read from the values of '{}', which --target cuda computes "
                              "in the same launch (a fused group); --target cpu compiles it",
                              call.pir_name, a.name);
      } else if (!why.empty()) {
        message = fmt::format("'{}': its output dims are read from a tensor's values, and --target cuda cannot pass "
                              "argument '{}' of {} to the shape rule on the host: {}",
                              call.pir_name, a.name, call.infer_meta, why);
      }
      if (!message.empty()) break;
    }
    if (message.empty() && (call.outputs.size() != 1 || call.outputs[0].is_list)) {
      message = "'" + call.pir_name + "': its output dims are read from a tensor's values, which --target cuda does "
                "for one output only";
    }
    if (!message.empty()) call_refusal.emplace(s.call, std::move(message));
  }
}

}  // namespace kforge::passes::cuda_plan_internal
