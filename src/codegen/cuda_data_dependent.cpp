// The CUDA class's sizes that depend on data (docs/compile.md, "Sizes that depend on data"): nonzero and
// masked_select run as kforge_select.cuh's compactions (unique as kforge_unique.cuh's, generate_proposals as
// kforge_proposals.cuh's kernels, one thread per image as the CPU kernel computes it), whose count comes back to
// the host (an 8-byte copy and a wait for the stream); then bind_s<id>() computes the sizes that need it and
// allocates the run-time device buffers, in the order and by the facts the CPU class binds them
// (codegen/data_symbols.h). What the CUDA target cannot size from data the plan refused at the op
// (passes::plan_cuda_data_dependent): this file renders the compactions' forms.
#include "codegen/cuda_host_emitter.h"

namespace kforge::codegen::cuda_program_internal {

uint32_t CudaHostEmitter::gemm_data_symbol(const passes::GemmGroup& g) const {
  return data_.late_symbol(passes::SymShape{g.m, g.n, g.k, g.batch});
}

std::string CudaHostEmitter::dims_text(const passes::SymShape& dims) const {
  return braced_list(dims, size_);
}

tmpl::Value CudaHostEmitter::select_step(const passes::KernelCall& call, const passes::CudaCompaction& form,
                                         size_t launch, const std::string& description) {
  if (form.unique) return unique_step(form, launch, description);
  if (form.proposals) return proposals_step(form, launch, description);
  if (form.fpn) return fpn_step(form, launch, description);
  const passes::LoweredValue& x = p_.values[form.x];
  const std::string type = *element_type(x.dtype);  // the plan's compaction_element
  tmpl::List args = {typed_buffer(form.x, type, true), dims_text(x.dims)};
  if (form.mask != kNone) {
    args.push_back(typed_buffer(form.mask, "bool", true));
    args.push_back(dims_text(p_.values[form.mask].dims));
  }
  args.push_back(typed_buffer(form.out, form.mask != kNone ? type : "int64_t", false));
  const passes::Symbol& symbol = p_.symbols[form.symbol];
  tmpl::Value step = tmpl::Value::map();
  step.set("kind", "select");
  step.set("launch", static_cast<int64_t>(launch));
  step.set("description", description);
  step.set("function", call.op);
  step.set("args", tmpl::Value(std::move(args)));
  step.set("capacity", size_(symbol.bound));
  step.set("scratch_bytes", "kforge::cuda_select::scratch_bytes(" + size_(symbol.bound) + ")");
  step.set("symbol", "s" + std::to_string(symbol.id));
  step.set("meaning", symbol.name);
  select_steps_ = true;
  return step;
}

tmpl::Value CudaHostEmitter::unique_step(const passes::CudaCompaction& form, size_t launch,
                                         const std::string& description) {
  const std::string type = *element_type(p_.values[form.x].dtype);  // the plan's compaction_element
  const std::string index_type = form.index_dtype == ir::DataType::kInt32 ? "int32_t" : "int64_t";
  auto pointer = [&](uint32_t v, const std::string& t) {
    return v == kNone ? "static_cast<" + t + "*>(nullptr)" : typed_buffer(v, t, false);
  };
  tmpl::List args = {typed_buffer(form.x, type, true), pointer(form.out, type), pointer(form.indices, index_type),
                     pointer(form.inverse, index_type), pointer(form.counts, index_type)};
  if (form.along_axis) {
    args.push_back("static_cast<int64_t>(" + size_(form.outer) + ")");
    args.push_back("static_cast<int64_t>(" + size_(form.inner) + ")");
  }
  const passes::Symbol& symbol = p_.symbols[form.symbol];
  const std::string capacity = size_(symbol.bound);
  tmpl::Value step = tmpl::Value::map();
  step.set("kind", "select");
  step.set("launch", static_cast<int64_t>(launch));
  step.set("description", description);
  step.set("function", std::string(form.along_axis ? "unique_axis<" : "unique<") + type + ", " + index_type + ">");
  step.set("args", tmpl::Value(std::move(args)));
  step.set("capacity", capacity);
  step.set("scratch_bytes", form.along_axis ? "kforge::cuda_select::unique_axis_scratch_bytes(" + capacity + ")"
                                            : "kforge::cuda_select::unique_scratch_bytes<" + type + ">(" + capacity + ")");
  step.set("symbol", "s" + std::to_string(symbol.id));
  step.set("meaning", symbol.name);
  unique_steps_ = select_steps_ = true;
  return step;
}

tmpl::Value CudaHostEmitter::proposals_step(const passes::CudaCompaction& form, size_t launch,
                                            const std::string& description) {
  const std::string type = *element_type(p_.values[form.out].dtype);  // float or double (the plan's)
  tmpl::List args;
  for (uint32_t v : form.operands) args.push_back(typed_buffer(v, type, true));
  args.push_back(typed_buffer(form.out, type, false));
  args.push_back(typed_buffer(form.probs, type, false));
  args.push_back(form.rois_num == kNone ? "static_cast<int32_t*>(nullptr)" : typed_buffer(form.rois_num, "int32_t", false));
  const std::string images = "static_cast<int64_t>(" + size_(form.images) + ")";
  const std::string anchors = "static_cast<int64_t>(" + size_(form.anchors) + ")";
  const std::string places = "static_cast<int64_t>(" + size_(form.places) + ")";
  for (const std::string& a : {images, anchors, places, std::to_string(form.pre_nms_top_n),
                               std::to_string(form.post_nms_top_n), cuda_device_constant(form.nms_thresh, "float"),
                               cuda_device_constant(form.min_size, "float"), cuda_device_constant(form.eta, "float"),
                               std::string(form.pixel_offset ? "true" : "false")}) {
    args.push_back(a);
  }
  const passes::Symbol& symbol = p_.symbols[form.symbol];
  tmpl::Value step = tmpl::Value::map();
  step.set("kind", "select");
  step.set("launch", static_cast<int64_t>(launch));
  step.set("description", description);
  step.set("function", "generate_proposals<" + type + ">");
  step.set("args", tmpl::Value(std::move(args)));
  step.set("capacity", size_(symbol.bound));
  step.set("scratch_bytes", "kforge::cuda_select::proposals_scratch_bytes<" + type + ">(" + images + ", " + anchors +
                                " * " + places + ", " + std::to_string(form.pre_nms_top_n) + ")");
  step.set("count", "kforge::cuda_select::proposals_count_of(scratch)");
  step.set("symbol", "s" + std::to_string(symbol.id));
  step.set("meaning", symbol.name);
  proposal_steps_ = true;
  return step;
}

tmpl::Value CudaHostEmitter::fpn_step(const passes::CudaCompaction& form, size_t launch,
                                      const std::string& description) {
  const std::string type = *element_type(p_.values[form.x].dtype);            // float or double (the plan's)
  const std::string num_type = *element_type(p_.values[form.mask].dtype);     // int32_t or int64_t
  auto pointers = [&](const std::vector<uint32_t>& values, const std::string& t) {
    std::string list;
    for (uint32_t v : values) list += (list.empty() ? "" : ", ") + (v == kNone ? "nullptr" : typed_buffer(v, t, false));
    return "{" + list + "}";
  };
  const std::string levels = "kforge::cuda_select::FpnLevels<" + type + ">{" + pointers(form.level_rois, type) +
                             ", " + pointers(form.level_nums, "int32_t") + "}";
  const std::string images = "static_cast<int64_t>(" + size_(p_.values[form.mask].dims[0]) + ")";
  tmpl::List args = {typed_buffer(form.x, type, true), typed_buffer(form.mask, num_type, true), levels,
                     form.out == kNone ? "static_cast<int32_t*>(nullptr)" : typed_buffer(form.out, "int32_t", false),
                     images};
  for (int64_t a : {form.min_level, form.max_level, form.refer_level, form.refer_scale}) {
    args.push_back(std::to_string(a));
  }
  args.push_back(form.pixel_offset ? "true" : "false");
  // The counts in bind order (a later one's bind_s<id>() may read an earlier one): level l's at scratch + l, the
  // total at scratch + levels.
  std::map<uint32_t, std::string> at;
  for (size_t l = 0; l < form.level_symbols.size(); ++l) {
    if (form.level_symbols[l] != kNone) at.emplace(form.level_symbols[l], "scratch + " + std::to_string(l));
  }

  tmpl::List counts;
  for (uint32_t id : data_.bind_order()) {
    if (!at.contains(id)) continue;
    tmpl::Value c = tmpl::Value::map();
    c.set("symbol", "s" + std::to_string(id));
    c.set("at", at.at(id));
    counts.push_back(std::move(c));
  }
  const std::string capacity = size_(p_.values[form.x].dims[0]);
  tmpl::Value step = tmpl::Value::map();
  step.set("kind", "select");
  step.set("launch", static_cast<int64_t>(launch));
  step.set("description", description);
  step.set("function", "distribute_fpn_proposals<" + type + ", " + num_type + ">");
  step.set("args", tmpl::Value(std::move(args)));
  step.set("capacity", "static_cast<int64_t>(" + capacity + ")");
  step.set("scratch_bytes", "kforge::cuda_select::distribute_scratch_bytes(" +
                                std::to_string(form.level_rois.size()) + ", " + capacity + ")");
  step.set("counts", tmpl::Value(std::move(counts)));
  step.set("meaning", std::string("the rois of each level and their total"));
  // restore_index has fpn_rois' rows (the shape rule's R): rois_num must count them all, as the CPU kernel checks.
  step.set("total", "scratch + " + std::to_string(form.level_symbols.size()));
  step.set("total_meaning", std::string("rois_num must count every row of fpn_rois, as the CPU kernel checks"));
  proposal_steps_ = true;
  return step;
}

tmpl::List CudaHostEmitter::data_symbols_value() {
  std::map<uint32_t, uint32_t> runtime_slot;  // kRuntime buffer index -> runtime_ slot
  for (const Buffer& b : p_.buffers) {
    if (b.kind == BufferKind::kRuntime) runtime_slot.emplace(b.index, static_cast<uint32_t>(runtime_slot.size()));
  }
  num_runtime_buffers_ = runtime_slot.size();
  tmpl::List out;
  tmpl::List known;  // input dims, then each data-dependent one as it is bound
  for (const passes::Symbol& s : p_.symbols) {
    if (s.is_input_dim()) known.push_back("s" + std::to_string(s.id));
  }
  for (uint32_t id : data_.bind_order()) {
    const passes::Symbol& s = p_.symbols[id];
    const std::string name = "s" + std::to_string(id);
    tmpl::List earlier = known;  // what bind_s<id>() reads from the bindings
    known.push_back(name);
    tmpl::Value sv = tmpl::Value::map();
    sv.set("id", static_cast<int64_t>(id));
    sv.set("name", name);
    sv.set("meaning", s.name);
    sv.set("call", static_cast<int64_t>(s.call));
    sv.set("before", s.before_call);
    sv.set("bound", comment_size(s.bound));
    sv.set("params", tmpl::Value(known));
    tmpl::List reads;
    for (const tmpl::Value& k : earlier) {
      tmpl::Value r = tmpl::Value::map();
      r.set("name", k);
      r.set("id", static_cast<int64_t>(std::stoul(k.as_string().substr(1))));
      reads.push_back(std::move(r));
    }
    sv.set("reads", tmpl::Value(std::move(reads)));
    tmpl::List runtime;
    for (const auto& [buffer, slot] : runtime_slot) {
      const Buffer& b = p_.buffers[buffer];
      if (data_.late_symbol(b.size_bytes) != id) continue;
      tmpl::Value rv = tmpl::Value::map();
      rv.set("slot", static_cast<int64_t>(slot));
      rv.set("buffer", static_cast<int64_t>(buffer));
      rv.set("bytes", size_(b.size_bytes));
      runtime.push_back(std::move(rv));
    }
    sv.set("runtime", tmpl::Value(std::move(runtime)));
    // The GEMMs whose M, N, K or batch it gives: checked against the kernels' int range here, not in run().
    sv.set("gemm_checks", gemm_.checks([&](const passes::GemmGroup& g) { return gemm_data_symbol(g) == id; }));
    out.push_back(std::move(sv));
  }
  return out;
}

tmpl::List CudaHostEmitter::late_output_copies() {
  tmpl::List copies;
  for (size_t i = 0; i < p_.outputs.size(); ++i) {
    const passes::ProgramOutput& out = p_.outputs[i];
    const passes::LoweredValue& v = p_.values[out.value];
    // Lowering copies every output sized by data (lower_buffers.cpp; the plan refuses one it does not).
    if (data_.late_symbol(v.dims) == kNone || !out.copy) continue;
    tmpl::Value c = tmpl::Value::map();
    c.set("index", static_cast<int64_t>(i));
    c.set("name", out.name);
    c.set("dtype", runtime_dtype(v.dtype).value_or("kforge::DataType::kUndefined"));  // reported by the class context
    c.set("dims", dims_text(v.dims));
    c.set("from", value_binding(out.value));
    c.set("bytes", size_(v.bytes()));
    copies.push_back(std::move(c));
  }
  return copies;
}

void CudaHostEmitter::add_data_dependent_keys(tmpl::Value& ctx, tmpl::List data_symbols) {
  for (tmpl::Value& sv : data_symbols) {
    const uint32_t id = static_cast<uint32_t>(sv.find("id")->as_int());
    sv.set("sizes", sizes_.definitions_value([&](uint32_t k) { return data_.late_symbol(sizes_.expression(k)) == id; }));
  }
  ctx.set("data_symbols", tmpl::Value(std::move(data_symbols)));
  // The size table (every entry, bind_s<id>()'s too) and whether there is one: a dim of an input or of data.
  ctx.set("num_sizes", static_cast<int64_t>(sizes_.size()));
  ctx.set("dynamic", !p_.symbols.empty());
  ctx.set("late_outputs", std::any_of(p_.outputs.begin(), p_.outputs.end(), [&](const passes::ProgramOutput& o) {
            return data_.late_symbol(p_.values[o.value].dims) != kNone;
          }));
  ctx.set("num_runtime_buffers", static_cast<int64_t>(num_runtime_buffers_));
  ctx.set("select_steps", select_steps_ || proposal_steps_);  // both use select_scratch_
}

}  // namespace kforge::codegen::cuda_program_internal
