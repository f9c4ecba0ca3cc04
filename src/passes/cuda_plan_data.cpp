// The CUDA target plan's data-dependent part (cuda_plan.h, plan_cuda_data_dependent): the compactions (nonzero,
// masked_select, unique, generate_proposals, distribute_fpn_proposals), whose counts come back to the host to size
// what follows, each with its form (CudaCompaction), and the refusals of what the CUDA target cannot size from
// data: every data-dependent dim with --cuda-graph (a captured graph replays the sizes it was captured with), a dim
// read from a tensor's values by a shape rule the host does not run (it runs kforge_shape_meta.h's), a dim counted
// by an op with no counting kernel, and a compaction whose operands its kernels do not take.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "passes/cuda_plan.h"
#include "scalar_expr/scalar_type.h"

namespace kforge::passes {

namespace {

// Whether a compaction kernel takes elements of `dtype`: bool, the integers and float32 / float64 (those with a
// plain C++ element type; not the 16-bit floats).
bool compaction_element(ir::DataType dtype) {
  const std::optional<expr::ScalarType> s = expr::scalar_type_from_name(ir::dtype_name(dtype));
  return s && *s != expr::ScalarType::kFloat16 && *s != expr::ScalarType::kBFloat16;
}

// Whether `dims` need a data-dependent symbol (codegen's DataSymbols::late_symbol finds which).
bool sized_by_data(const LoweredProgram& p, const SymShape& dims) {
  for (const SymExpr& d : dims) {
    for (uint32_t id : d.symbols()) {
      if (id < p.symbols.size() && !p.symbols[id].is_input_dim()) return true;
    }
  }
  return false;
}

// Why symbol s (data-dependent, of call `call`) cannot be sized on the GPU, or "" when it can.
std::string data_symbol_refusal(const Symbol& s, const KernelCall& call, bool cuda_graph) {
  if (cuda_graph) {
    return fmt::format("{} depends on the data{}: run() copies it back to the host in the middle of the run to size "
                       "what comes after, and a CUDA graph (--cuda-graph) replays the sizes it was captured with; "
                       "compile without --cuda-graph (the launches then run one by one)",
                       s.name, s.before_call ? " (it is read from a tensor's values)" : "");
  }
  if (s.before_call && !is_cuda_host_shape_rule(call.infer_meta)) {
    return fmt::format("{} is read from a tensor's values by {}, which --target cuda does not run on the host (it "
                       "runs those of reshape, slice, expand, tile, full_with_tensor and arange: kforge_shape_meta.h, "
                       "and the interpolations': kforge_shape_meta_interp.h; --target cpu compiles it)",
                       s.name, call.infer_meta.empty() ? "no infer-meta" : call.infer_meta);
  }
  if (!s.before_call && !is_cuda_compaction_op(call.op)) {
    return fmt::format("{} depends on the data, and --target cuda has no kernel that counts it for '{}' yet "
                       "(nonzero, masked_select, unique, generate_proposals and distribute_fpn_proposals have one; "
                       "--target cpu compiles it)",
                       s.name, call.op);
  }
  return "";
}

// unique's form (x its one tensor operand, `symbol` the count), or the whole message of why no kernel runs it.
std::optional<CudaCompaction> plan_unique(const LoweredProgram& p, const KernelCall& call, uint32_t x,
                                          uint32_t symbol, std::string* refusal) {
  CudaCompaction form;
  form.unique = true;
  form.x = x;
  form.symbol = symbol;
  // out, indices, inverse, counts by name (kernels/ops.yaml); a missing or unread one is kNone.
  std::map<std::string, uint32_t> outputs;
  for (const CallOutput& o : call.outputs) {
    if (!o.values.empty() && o.values[0] != kNone) outputs.emplace(o.name, o.values[0]);
  }
  auto value = [&](const char* name) { return outputs.contains(name) ? outputs.at(name) : kNone; };
  form.out = value("out");
  form.indices = value("indices");
  form.inverse = value("inverse");
  form.counts = value("counts");
  for (uint32_t v : {form.indices, form.inverse, form.counts}) {
    if (v != kNone) form.index_dtype = p.values[v].dtype;
  }
  // Along an axis (axis=[a], the shape rule's only form with one): x as [outer, x.dims[a], inner].
  const KernelArg* axis_arg = call.arg("axis");
  form.along_axis = axis_arg != nullptr && axis_arg->kind == ArgKind::kConstant && !axis_arg->constant.ints.empty();
  const SymShape& xd = p.values[x].dims;
  if (form.along_axis) {
    const int64_t rank = static_cast<int64_t>(xd.size());
    const int64_t a = axis_arg->constant.ints[0] < 0 ? axis_arg->constant.ints[0] + rank : axis_arg->constant.ints[0];
    if (axis_arg->constant.ints.size() != 1 || a < 0 || a >= rank) {
      *refusal = "--target cuda: unique (" + call.pir_name + ") along more than one axis, or an axis out of range, "
                 "has no CUDA kernel";
      return std::nullopt;
    }
    for (int64_t d = 0; d < rank; ++d) {
      if (d < a) form.outer = form.outer * xd[static_cast<size_t>(d)];
      if (d > a) form.inner = form.inner * xd[static_cast<size_t>(d)];
    }
  }
  if (!compaction_element(p.values[x].dtype) || form.out == kNone ||
      (form.index_dtype != ir::DataType::kInt32 && form.index_dtype != ir::DataType::kInt64)) {
    *refusal = fmt::format("--target cuda: unique ({}) of {} with {} indices has no CUDA kernel (bool, integer and "
                           "float32 / float64 elements with int32 or int64 indices do)",
                           call.pir_name, ir::dtype_name(p.values[x].dtype), ir::dtype_name(form.index_dtype));
    return std::nullopt;
  }
  return form;
}

// generate_proposals' form (`symbol` its rows), or the whole message of why no kernel runs it.
std::optional<CudaCompaction> plan_proposals(const LoweredProgram& p, const KernelCall& call, uint32_t symbol,
                                             std::string* refusal) {
  CudaCompaction form;
  form.proposals = true;
  form.symbol = symbol;
  for (const char* name : {"scores", "bbox_deltas", "im_shape", "anchors", "variances"}) {
    form.operands.push_back(call.tensor_arg(name));
  }
  auto output = [&](size_t i) {
    return i < call.outputs.size() && !call.outputs[i].values.empty() ? call.outputs[i].values[0] : kNone;
  };
  form.out = output(0);
  form.probs = output(1);
  form.rois_num = output(2);
  const std::optional<double> pre = call.constant_number("pre_nms_top_n"), post = call.constant_number("post_nms_top_n");
  const std::optional<double> nms = call.constant_number("nms_thresh"), min_size = call.constant_number("min_size");
  const std::optional<double> eta = call.constant_number("eta");
  const std::optional<bool> pixel_offset = call.constant_bool("pixel_offset");
  const bool operands = std::none_of(form.operands.begin(), form.operands.end(), [](uint32_t v) { return v == kNone; });
  const ir::DataType dtype = operands ? p.values[form.operands[3]].dtype : ir::DataType::kUndefined;
  if (!operands || form.out == kNone || form.probs == kNone || symbol == kNone || !pre || !post || !nms ||
      !min_size || !eta || !pixel_offset || (dtype != ir::DataType::kFloat32 && dtype != ir::DataType::kFloat64) ||
      p.values[form.operands[0]].dims.size() != 4) {
    *refusal = "--target cuda: generate_proposals (" + call.pir_name + ") has a CUDA kernel for float32 / float64 "
               "operands with both rpn_rois and rpn_roi_probs read and constant attributes only";
    return std::nullopt;
  }
  if (form.rois_num != kNone && p.values[form.rois_num].dtype != ir::DataType::kInt32) {
    *refusal = "--target cuda: generate_proposals (" + call.pir_name + ") writes rpn_rois_num as int32, not " +
               std::string(ir::dtype_name(p.values[form.rois_num].dtype));
    return std::nullopt;
  }
  form.pre_nms_top_n = static_cast<int64_t>(*pre);
  form.post_nms_top_n = static_cast<int64_t>(*post);
  form.nms_thresh = *nms;
  form.min_size = *min_size;
  form.eta = *eta;
  form.pixel_offset = *pixel_offset;
  const SymShape& sd = p.values[form.operands[0]].dims;
  form.images = sd[0];
  form.anchors = sd[1];
  form.places = sd[2] * sd[3];
  return form;
}

// distribute_fpn_proposals' form, or the whole message of why no kernel runs it.
std::optional<CudaCompaction> plan_fpn(const LoweredProgram& p, uint32_t c, std::string* refusal) {
  const KernelCall& call = p.calls[c];
  CudaCompaction form;
  form.fpn = true;
  form.x = call.tensor_arg("fpn_rois");
  form.mask = call.tensor_arg("rois_num");
  auto values = [&](size_t i) { return i < call.outputs.size() ? call.outputs[i].values : std::vector<uint32_t>{}; };
  form.level_rois = values(0);
  form.level_nums = values(1);
  const std::vector<uint32_t> restore = values(2);
  form.out = restore.empty() ? kNone : restore[0];
  const std::optional<double> lo = call.constant_number("min_level"), hi = call.constant_number("max_level");
  const std::optional<double> refer = call.constant_number("refer_level"), scale = call.constant_number("refer_scale");
  const std::optional<bool> pixel_offset = call.constant_bool("pixel_offset");
  const bool known = lo && hi && refer && scale && pixel_offset;
  const int64_t levels = known ? static_cast<int64_t>(*hi) - static_cast<int64_t>(*lo) + 1 : 0;
  const ir::DataType dtype = form.x == kNone ? ir::DataType::kUndefined : p.values[form.x].dtype;
  const ir::DataType num_dtype = form.mask == kNone ? ir::DataType::kUndefined : p.values[form.mask].dtype;
  if (!known || levels < 1 || levels > 16 || form.level_rois.size() != static_cast<size_t>(levels) ||
      (!form.level_nums.empty() && form.level_nums.size() != form.level_rois.size()) ||
      (dtype != ir::DataType::kFloat32 && dtype != ir::DataType::kFloat64) ||
      (num_dtype != ir::DataType::kInt32 && num_dtype != ir::DataType::kInt64)) {
    *refusal = "--target cuda: distribute_fpn_proposals (" + call.pir_name + ") has a CUDA kernel for float32 / "
               "float64 rois counted by an int32 / int64 rois_num, 1 to 16 levels and constant attributes only";
    return std::nullopt;
  }
  form.level_nums.resize(form.level_rois.size(), kNone);
  form.level_symbols.assign(form.level_rois.size(), kNone);
  for (const Symbol& s : p.symbols) {
    if (s.is_input_dim() || s.call != c || s.before_call) continue;
    if (s.result == 0 && s.element < form.level_symbols.size()) form.level_symbols[s.element] = s.id;
  }
  form.min_level = static_cast<int64_t>(*lo);
  form.max_level = static_cast<int64_t>(*hi);
  form.refer_level = static_cast<int64_t>(*refer);
  form.refer_scale = static_cast<int64_t>(*scale);
  form.pixel_offset = *pixel_offset;
  return form;
}

// The form of compaction call c, or the whole message of why no kernel runs it.
std::optional<CudaCompaction> plan_compaction(const LoweredProgram& p, uint32_t c, std::string* refusal) {
  const KernelCall& call = p.calls[c];
  std::vector<uint32_t> in;
  for (const KernelArg& a : call.args) {
    if (a.kind == ArgKind::kTensor && a.value != kNone) in.push_back(a.value);
  }
  const uint32_t out = call.outputs.empty() || call.outputs[0].values.empty() ? kNone : call.outputs[0].values[0];
  uint32_t symbol = kNone;  // the dim its count gives
  for (const Symbol& s : p.symbols) {
    if (!s.is_input_dim() && s.call == c && !s.before_call) symbol = s.id;
  }
  const bool masked = call.op == "masked_select";
  if (call.op == "generate_proposals") return plan_proposals(p, call, symbol, refusal);
  if (call.op == "distribute_fpn_proposals") return plan_fpn(p, c, refusal);
  if (call.op == "unique" && symbol != kNone && in.size() == 1 && out != kNone) {
    return plan_unique(p, call, in[0], symbol, refusal);
  }
  if (in.size() != (masked ? 2u : 1u) || out == kNone || symbol == kNone) {
    *refusal = "--target cuda: " + call.op + " (" + call.pir_name + ") has no CUDA kernel for these operands";
    return std::nullopt;
  }
  const ir::DataType x = p.values[in[0]].dtype;
  if (!compaction_element(x) || (masked && p.values[in[1]].dtype != ir::DataType::kBool)) {
    *refusal = fmt::format(
        "--target cuda: {} ({}) of {}{} has no CUDA kernel (bool, integer and float32 / float64 elements{} do)",
        call.op, call.pir_name, ir::dtype_name(x),
        masked ? " with a " + std::string(ir::dtype_name(p.values[in[1]].dtype)) + " mask" : "",
        masked ? " with a bool mask" : "");
    return std::nullopt;
  }
  CudaCompaction form;
  form.x = in[0];
  form.mask = masked ? in[1] : kNone;
  form.out = out;
  form.symbol = symbol;
  return form;
}

}  // namespace

bool cuda_runtime_dtype(ir::DataType dtype) {
  switch (dtype) {
    case ir::DataType::kUInt16:
    case ir::DataType::kUInt32:
    case ir::DataType::kUInt64:
    case ir::DataType::kFloat8E4M3FN:
    case ir::DataType::kFloat8E5M2:
    case ir::DataType::kPString:
    case ir::DataType::kIndex: return false;
    default: return true;
  }
}

void plan_cuda_tensor_dtypes(const LoweredProgram& p, CudaPlan& plan) {
  auto check = [&](ir::DataType dtype, SourceLoc loc, const std::string& what) {
    if (cuda_runtime_dtype(dtype)) return;
    plan.refusals.push_back({loc, "--target cuda: " + what + " has dtype " + std::string(ir::dtype_name(dtype)) +
                                      ", which the runtime (kforge_runtime.h) has no name for"});
  };
  for (const ProgramInput& in : p.inputs) check(in.dtype, in.loc, "input '" + in.name + "'");
  for (const ProgramParameter& pa : p.parameters) {
    const ir::DataType dtype = p.values[pa.value].dtype;
    check(dtype, pa.loc, "parameter '" + pa.name + "'");
    if (p.file_dtype(pa) != dtype) check(p.file_dtype(pa), pa.loc, "parameter '" + pa.name + "'");
  }
  for (const ProgramOutput& out : p.outputs) check(p.values[out.value].dtype, out.loc, "output '" + out.name + "'");
  // The constants are uploaded as their elements (16-bit floats as their bits): a type of the scalar language.
  for (const ConstantData& c : p.constants) {
    if (!expr::scalar_type_from_name(ir::dtype_name(c.dtype))) {
      plan.refusals.push_back({c.loc, "--target cuda: a constant of dtype " + std::string(ir::dtype_name(c.dtype)) +
                                          " cannot be uploaded yet"});
    }
  }
}

void plan_cuda_data_dependent(const LoweredProgram& p, bool cuda_graph, CudaPlan& plan) {
  // The dims the target cannot size, refused at their calls: one message per call, for its first such dim.
  std::set<uint32_t> refused;
  for (const Symbol& s : p.symbols) {
    if (s.is_input_dim() || s.call == kNone || refused.contains(s.call)) continue;
    const KernelCall& call = p.calls.at(s.call);
    const std::string why = data_symbol_refusal(s, call, cuda_graph);
    if (why.empty()) continue;
    refused.insert(s.call);
    plan.refusals.push_back({call.loc, fmt::format("'{}': {}", call.pir_name, why)});
  }
  // The compactions the backend runs (a call it runs otherwise aside), in program order.
  for (const auto& [c, run] : plan.runs) {
    const KernelCall& call = p.calls[c];
    if (refused.contains(c) || run == CudaRun::kNothing || run == CudaRun::kDataDependent ||
        !is_cuda_compaction_op(call.op) || plan.call_conv(c) != nullptr || plan.pools.contains(c) ||
        plan.batch_norms.contains(c)) {
      continue;
    }
    std::string refusal;
    if (std::optional<CudaCompaction> form = plan_compaction(p, c, &refusal)) {
      plan.compactions.emplace(c, std::move(*form));
    } else {
      plan.refusals.push_back({call.loc, refusal});
    }
  }
  // Lowering copies every output sized by data (lower_buffers.cpp): allocated once its size is known.
  for (const ProgramOutput& out : p.outputs) {
    if (!out.copy && sized_by_data(p, p.values[out.value].dims)) {
      plan.refusals.push_back({out.loc, "--target cuda: output '" + out.name + "' is sized by data but not copied"});
    }
  }
}

}  // namespace kforge::passes
