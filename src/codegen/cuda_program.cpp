#include "codegen/cuda_program.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string_view>

#include "codegen/cpp_text.h"
#include "codegen/cuda_attention.h"
#include "codegen/cuda_conv.h"
#include "codegen/cuda_class_context.h"
#include "codegen/cuda_gemm.h"
#include "codegen/cuda_index.h"
#include "codegen/cuda_kernels.h"
#include "codegen/cuda_row_variants.h"
#include "codegen/generated_file.h"
#include "codegen/python_program_module.h"
#include "codegen/runtime_version.h"
#include "codegen/size_table.h"
#include "output/banner.h"
#include "passes/gemm.h"
#include "passes/memory_plan.h"

namespace kforge::codegen {

namespace {

using passes::Buffer;
using passes::BufferKind;
using passes::FusedGroup;
using passes::kNone;
using passes::LoweredProgram;
using passes::SymExpr;

class CudaHostEmitter {
 public:
  /// `sizes`: the size table to number the sizes by (SizeTable::canonical of an earlier emitter's), or empty.
  CudaHostEmitter(const LoweredProgram& p, const passes::FusionPlan& plan, const SourceManager& sources,
                  const ProgramFilesOptions& options, const CudaFilesOptions& cuda, DiagnosticEngine& diags,
                  SizeTable sizes = {})
      : p_(p), plan_(plan), sources_(sources), o_(options), cuda_(cuda), diags_(diags),
        cls_(options.codegen.class_name), sizes_(std::move(sizes)),
        gemm_(p, plan, cuda.multi_kernel, cuda.cuda_graph,
              [this](uint32_t v, const std::string& type, bool is_const) { return typed_buffer(v, type, is_const); },
              [this](const FusedGroup& g) { return group_description(g); }, size_),
        rows_(plan, cuda.row_multi_kernel, launchers_, cuda.cuda_graph,
              [this](uint32_t v) { return binding(p_.values[v].buffer); },
              [this](const FusedGroup& g) { return group_description(g); }, size_) {}

  const SizeTable& size_table() const { return sizes_; }

  /// The headers the output needs beside the runtime's, in a fixed order, each once.
  std::vector<const char*> extra_headers() const {
    std::vector<const char*> out;
    std::vector<const char*> half;
    // The convolution, batch-norm and pooling headers template their kernels over 16-bit element types too.
    if (fused_half() || converted_parameters() || !conv_steps_.empty() || batch_norms_ > 0 || !pool_steps_.empty()) {
      half.push_back(kCudaHalfHeaderTemplate);
    }
    std::vector<const char*> library;
    if (!conv_steps_.empty() || batch_norms_ > 0) library.push_back(kCudaEpilogueHeaderTemplate);
    if (!conv_steps_.empty()) {
      // Each convolution's method is a multi-kernel pick, timed with CUDA events (kforge_cudnn.cuh).
      library.push_back(kMultiKernelHeaderTemplate);
      library.push_back(kCudaTimerHeaderTemplate);
      library.push_back(kCudaDepthwiseHeaderTemplate);
      library.push_back(kCudaCudnnHeaderTemplate);
      if (padded_convs_) library.push_back(kCudaConvPadHeaderTemplate);
    }
    if (!pool_steps_.empty()) library.push_back(kCudaPoolHeaderTemplate);
    if (index_interp_) library.push_back(kCudaIndexHeaderTemplate);
    if (has_attention()) {
      half.push_back(kCudaHalfHeaderTemplate);  // kforge_attention.cuh converts through it
      library.push_back(kCudaAttentionHeaderTemplate);
    }
    for (const std::vector<const char*>& list : {gemm_.header_templates(), half, rows_.header_templates(), library}) {
      for (const char* h : list) {
        if (std::find_if(out.begin(), out.end(), [&](const char* o) { return std::string_view(o) == h; }) == out.end()) {
          out.push_back(h);
        }
      }
    }
    return out;
  }

  /// What the class header (templates/program/cuda/program.h.j2) declares beyond what every program has.
  CudaClassParts class_parts() const {
    return {gemm_.summary(), rows_.any(), cuda_.cuda_graph, conv_steps_.size(), pool_steps_.size(),
            library_calls_.size(), half_convs_, size_};
  }

  /// Builds the context of NAME.h, NAME.cu and NAME_kernels.cu (templates/program/cuda/) into `ctx`.
  bool emit(tmpl::Value& ctx) {
    check_calls();
    gemm_.check(diags_);
    build_library_steps();
    tmpl::List group_kernels;
    for (const FusedGroup& g : plan_.groups) {
      // GEMM, convolution and attention groups are library / header calls from NAME.cu.
      if (!is_generated_kernel(g)) continue;
      std::optional<CudaGroupCode> code = emit_cuda_group(p_, g, cls_ + "_", rows_.site(g), diags_);
      if (!code) continue;
      group_kernels.push_back(code->kernels);
      launchers_.emplace(g.index, *code);
    }
    if (diags_.has_errors()) return false;
    std::optional<tmpl::Value> cls = build_cuda_class_context(p_, plan_, o_, class_parts(), diags_);
    if (!cls) return false;
    ctx = std::move(*cls);
    ctx.set("half", fused_half());
    ctx.set("index_kernels", tmpl::Value(tmpl::List(index_kernels_.begin(), index_kernels_.end())));
    ctx.set("index_interp", index_interp_);
    ctx.set("group_kernels", tmpl::Value(std::move(group_kernels)));
    add_host_keys(ctx);
    return !diags_.has_errors();
  }

 private:
  // Whether group g is a kernel generated into NAME_kernels.cu (elementwise and row groups), not a library or
  // header call from NAME.cu (GEMM, convolution, attention).
  static bool is_generated_kernel(const FusedGroup& g) {
    return g.kind == passes::GroupKind::kElementwise || g.kind == passes::GroupKind::kRow;
  }

  bool has_attention() const {
    return std::any_of(plan_.groups.begin(), plan_.groups.end(),
                       [](const FusedGroup& g) { return g.kind == passes::GroupKind::kAttention; });
  }

  // Whether a fused (generated-kernel) group loads or stores float16 / bfloat16 values (then NAME_kernels.cu
  // includes kforge_half.cuh for the conversions).
  bool fused_half() const {
    for (const FusedGroup& g : plan_.groups) {
      if (is_generated_kernel(g) && group_uses_half(g)) return true;
    }
    return false;
  }

  // Whether --precision made a parameter 16-bit that a parameter file holds in float32.
  bool converted_parameters() const {
    return std::any_of(p_.parameters.begin(), p_.parameters.end(), [&](const passes::ProgramParameter& pa) {
      return pa.stored_dtype != ir::DataType::kUndefined;
    });
  }

  // The program's path as the CPU target prints it: relative to the generated header (stable across
  // working directories).
  std::string where(SourceLoc loc) const {
    const std::string program =
        banner_input_path(o_.codegen.program_path, o_.codegen.output_dir + "/" + o_.codegen.class_name + ".h");
    if (!loc.valid()) return program;
    const LineCol lc = sources_.line_col(loc);
    return program + ":" + std::to_string(lc.line) + ":" + std::to_string(lc.col);
  }

  // A call outside every group must be a convolution, a pool, a batch norm or a view (build_library_steps()
  // makes their steps), or share its input's buffer (nothing to run on the device).
  void check_calls() {
    // A data-dependent size (nonzero's rows) would come back to the host after its kernel, a synchronisation in
    // the middle of run() that a captured CUDA graph cannot replay with another count; not generated yet.
    std::set<uint32_t> refused;
    for (const passes::Symbol& s : p_.symbols) {
      if (s.is_input_dim() || s.call == kNone || !refused.insert(s.call).second) continue;
      const passes::KernelCall& call = p_.calls.at(s.call);
      diags_.error(call.loc, fmt::format("'{}': {} depends on the data, which the CUDA target does not support yet "
                                         "(the CPU target does: --target cpu)",
                                         call.pir_name, s.name));
    }
    for (uint32_t c = 0; c < p_.calls.size(); ++c) {
      if (c < plan_.call_group.size() && plan_.call_group[c] != kNone) continue;
      if (refused.contains(c)) continue;
      const passes::KernelCall& call = p_.calls[c];
      if (is_cuda_conv_op(call.op) || is_cuda_pool_op(call.op) || is_cuda_batch_norm_op(call.op) ||
          is_cuda_index_op(call.op) || cuda_results_known(p_, call)) {
        // cuDNN / the pooling / epilogue / an index-mapped kernel / the known elements written: build_library_steps()
        // says if it can
        library_calls_.push_back(c);
        continue;
      }
      if (std::optional<std::pair<uint32_t, uint32_t>> view = p_.view_values(c)) {
        // A view of its input's buffer needs nothing; one with a buffer of its own (its input is memory the
        // caller owns, or is written in place later) is a copy of the same bytes.
        if (p_.values[view->first].buffer != p_.values[view->second].buffer) library_calls_.push_back(c);
        continue;
      }
      bool shares = !call.inplace_twin;
      uint32_t in_buffer = kNone;
      for (const passes::KernelArg& a : call.args) {
        if (a.kind == passes::ArgKind::kTensor && in_buffer == kNone) in_buffer = p_.values[a.value].buffer;
      }
      bool any_output = false;
      for (const passes::CallOutput& out : call.outputs) {
        for (uint32_t v : out.values) {
          if (v == kNone) continue;
          any_output = true;
          shares &= p_.values[v].buffer == in_buffer;
        }
      }
      if (shares && any_output && in_buffer != kNone) continue;
      if (call.op == "matmul" || call.op == "bmm") {
        // Supported matmuls are GEMM groups; one that is not (a batched y) is a generated batched kernel when it
        // can be (build_library_steps() says why not, with why it is no GEMM).
        std::string why;
        if (!passes::gemm_form(p_, call, &why)) {
          library_calls_.push_back(c);
          no_gemm_why_.emplace(c, why);
          continue;
        }
      }
      diags_.error(call.loc, "--target cuda: op '" + call.op + "' (" + call.pir_name +
                                 ") is not in a fused group and the CUDA backend has no kernel for it; only ops "
                                 "with `compute`, `reduce` or `row_pattern` that fuse, float32, float16 or "
                                 "bfloat16 matmuls, float32 convolutions, pool2d and the index-mapped ops "
                                 "(transpose, concat, split, slice, gather, interpolation, ...) run on the GPU "
                                 "(docs/compile.md)");
    }
  }

  // Whether value v is a program output or read by any call.
  bool is_read(uint32_t v) const { return readers(v) > 0; }

  // The convolution and pooling steps (codegen/cuda_conv.h): the convolution groups' conv2d_fused calls and the
  // conv2d / depthwise_conv2d / pool2d calls outside every group (check_calls collected them), each with its
  // launch index in kLaunchNames (groups first, then these calls). What they cannot run is an error at the op.
  void build_library_steps() {
    const CudaBufferExpr buffer = [this](uint32_t v, const std::string& type, bool is_const) {
      return typed_buffer(v, type, is_const);
    };
    plan_relu6_splits();
    for (const FusedGroup& g : plan_.groups) {
      if (g.kind != passes::GroupKind::kConv) continue;
      add_library_step(g.conv_call, p_.calls[g.calls.front()], g.index, g.position, group_description(g), buffer);
    }
    for (size_t k = 0; k < library_calls_.size(); ++k) {
      const passes::KernelCall& call = p_.calls[library_calls_[k]];
      add_library_step(call, call, plan_.groups.size() + k, library_calls_[k], call_description(library_calls_[k]),
                       buffer);
    }
  }

  // The number of calls that read value v, plus one if it is a program output.
  size_t readers(uint32_t v) const {
    size_t n = 0;
    for (const passes::ProgramOutput& o : p_.outputs) n += o.value == v ? 1 : 0;
    for (const passes::KernelCall& call : p_.calls) {
      for (const passes::KernelArg& a : call.args) {
        if (a.value == v || std::find(a.values.begin(), a.values.end(), v) != a.values.end()) {
          ++n;
          break;
        }
      }
    }
    return n;
  }

  // mobilenet_v2's pattern: a convolution group ending in relu6 whose output only a direct depthwise convolution
  // reads (NHWC, kforge_depthwise.cuh). Its clamp at 6 moves into the depthwise kernel's loads (input_max), so the
  // first convolution's epilogue is a bias and ReLU, which cuDNN can fuse into its call: one pass over the tensor
  // fewer. Fills relu_for_relu6_ and clamped_inputs_ with the two groups' launch indices.
  void plan_relu6_splits() {
    std::map<uint32_t, uint32_t> relu6_out;  // output value -> launch index of a group that may leave its clamp
    std::map<uint32_t, uint32_t> depthwise_in;  // input value -> launch index of a direct depthwise group
    for (const FusedGroup& g : plan_.groups) {
      if (g.kind != passes::GroupKind::kConv) continue;
      std::string why;
      const std::optional<CudaConvSite> s = cuda_conv_site(p_, g.conv_call, &why);
      if (!s) continue;
      if (s->direct_depthwise()) {
        depthwise_in.emplace(s->input, g.index);
      } else if (!s->transposed && s->activation == "relu6" && s->residual == kNone &&
                 (s->foldable || s->bias != kNone)) {
        relu6_out.emplace(s->out, g.index);
      }
    }
    for (const auto& [value, producer] : relu6_out) {
      auto consumer = depthwise_in.find(value);
      if (consumer == depthwise_in.end() || readers(value) != 1) continue;
      relu_for_relu6_.insert(producer);
      clamped_inputs_.insert(consumer->second);
    }
  }

  // `call` (the conv2d_fused of a group, or the op itself) as a step at launch index `launch`, run at `position`
  // (the group's, or the call's index); errors at `op`.
  void add_library_step(const passes::KernelCall& call, const passes::KernelCall& op, size_t launch, uint32_t position,
                        const std::string& description, const CudaBufferExpr& buffer) {
    std::string why;
    // A call outside every group runs at its own index: a view there is a copy.
    const bool own_call = &call == &p_.calls[position];
    if (std::optional<std::pair<uint32_t, uint32_t>> view = own_call ? p_.view_values(position) : std::nullopt) {
      tmpl::Value step = cuda_copy_step(p_, view->first, view->second, static_cast<int64_t>(launch), description, buffer, size_);
      step.set("kind", "copy");
      library_step_at_.emplace(launch, std::move(step));
      return;
    }
    std::optional<std::vector<CudaIndexKernel>> known =
        cuda_known_kernels(p_, call, cls_ + "_index_", index_kernels_.size(), description, buffer, sizes_, run_size);
    if (known || is_cuda_index_op(call.op) || is_cuda_batched_matmul(call.op)) {
      if (std::optional<std::vector<CudaIndexKernel>> kernels =
              known ? std::move(known)
                    : cuda_index_kernels(p_, call, cls_ + "_index_", index_kernels_.size(), description, buffer, sizes_,
                                         run_size, &why)) {
        tmpl::List contexts;
        for (const CudaIndexKernel& k : *kernels) {
          contexts.push_back(cuda_index_kernel_context(k));
          index_kernels_.push_back(contexts.back());
          index_interp_ = index_interp_ || k.interp;
        }
        tmpl::Value step = tmpl::Value::map();
        step.set("kind", "index");
        step.set("launch", static_cast<int64_t>(launch));
        step.set("description", description);
        step.set("kernels", tmpl::Value(std::move(contexts)));
        library_step_at_.emplace(launch, std::move(step));
        return;
      }
    } else if (is_cuda_batch_norm_op(call.op)) {
      if (std::optional<CudaBatchNormSite> site =
              cuda_batch_norm_site(p_, call, [this](uint32_t v) { return is_read(v); }, &why)) {
        tmpl::Value step = cuda_batch_norm_step(*site, static_cast<int64_t>(launch), description, buffer, size_);
        step.set("kind", "batch_norm");
        library_step_at_.emplace(launch, std::move(step));
        ++batch_norms_;
        return;
      }
    } else if (is_cuda_pool_op(call.op)) {
      if (std::optional<CudaPoolSite> site = cuda_pool_site(p_, call, &why)) {
        tmpl::Value step = cuda_pool_step(*site, static_cast<int64_t>(pool_steps_.size()),
                                          static_cast<int64_t>(launch), description, buffer, size_);
        step.set("kind", "pool");
        library_step_at_.emplace(launch, step);
        pool_steps_.push_back(std::move(step));
        return;
      }
    } else if (std::optional<CudaConvSite> site = cuda_conv_site(p_, call, &why)) {
      if (site->pads_input() && !padded_input_fits(*site, position, op)) return;
      // A batch norm of parameters is folded into the filter when they are bound (kforge_cudnn.cuh).
      const int64_t fold_offset = site->foldable ? folded_bytes_ : -1;
      if (site->foldable) folded_bytes_ += cuda_conv_fold_bytes(*site);
      std::string what = description;
      if (relu_for_relu6_.count(static_cast<uint32_t>(launch)) != 0) {
        site->activation = "relu";
        what += "; relu6 as ReLU here, its clamp at 6 in the depthwise convolution that reads the output";
      }
      if (clamped_inputs_.count(static_cast<uint32_t>(launch)) != 0) {
        site->input_max = 6;
        what += "; the input clamped at 6 (the relu6 of the convolution that produced it)";
      }
      tmpl::Value step = cuda_conv_step(*site, static_cast<int64_t>(conv_steps_.size()), static_cast<int64_t>(launch),
                                        what, buffer, size_, fold_offset);
      step.set("kind", "conv");
      step.set("scratch", scratch_value(position));
      library_step_at_.emplace(launch, step);
      conv_steps_.push_back(std::move(step));
      if (site->dtype != ir::DataType::kFloat32) half_convs_ = true;
      return;
    }
    if (is_cuda_batched_matmul(call.op)) {
      const auto no_gemm = no_gemm_why_.find(static_cast<uint32_t>(&op - p_.calls.data()));
      diags_.error(op.loc, "--target cuda: matmul (" + op.pir_name + ") has no CUDA GEMM: " +
                               (no_gemm != no_gemm_why_.end() ? no_gemm->second : std::string()) +
                               "; and no batched kernel: " + why);
      return;
    }
    diags_.error(op.loc, "--target cuda: " + op.op + " (" + op.pir_name + ") has no CUDA kernel: " + why);
  }

  // The broadcast dims the analysis took as equal (passes::DimEquality), each pair once: {a, b (sizes of run(),
  // computed and checked for overflow there), message (what run() says when an input makes them differ)}.
  tmpl::Value dim_equalities() const {
    passes::SymExpr::PrintOptions named;
    named.symbol_name = [this](uint32_t id) { return id < p_.symbols.size() ? p_.symbols[id].name : "?"; };
    std::set<std::pair<passes::SymExpr, passes::SymExpr>> seen;
    tmpl::List out;
    for (const passes::DimEquality& e : p_.dim_equalities) {
      if (!seen.emplace(e.a, e.b).second) continue;
      tmpl::Value v = tmpl::Value::map();
      v.set("a", size_(e.a));
      v.set("b", size_(e.b));
      v.set("message", fmt::format("{}: {} at {}: dims {} and {} meet in a broadcast, which --target cuda takes as "
                                   "equal dims (Paddle broadcasts a dim of 1 there); with these inputs they are",
                                   o_.codegen.class_name, e.op, where(e.loc), e.a.to_string(named),
                                   e.b.to_string(named)));
      out.push_back(std::move(v));
    }
    return tmpl::Value(std::move(out));
  }

  // A call outside every group, for error messages: "call 3 (pd_op.pool2d at model.json:10:5)".
  std::string call_description(uint32_t c) const {
    const passes::KernelCall& call = p_.calls[c];
    return "call " + std::to_string(c) + " (" + call.pir_name + " at " + where(call.loc) + ")";
  }

  std::string input_ident(size_t i) const { return cuda_input_ident(p_, i); }
  std::string output_ident(size_t i) const { return cuda_output_ident(p_, i); }

  // The constants' host tables and their offsets in the device buffer (64-byte aligned each); errors for
  // dtypes that cannot be uploaded yet.
  void add_constants(tmpl::Value& ctx, std::vector<size_t>& offsets) {
    tmpl::List tables;
    size_t offset = 0;
    for (size_t i = 0; i < p_.constants.size(); ++i) {
      const passes::ConstantData& c = p_.constants[i];
      // float16 / bfloat16 constants are uploaded as their bits, rounded to nearest even here, at generation
      // time: the host code needs no cuda_fp16.h / cuda_bf16.h conversions, and the bits are what every run uses.
      const bool half = c.dtype == ir::DataType::kFloat16 || c.dtype == ir::DataType::kBFloat16;
      std::optional<std::string> t = half ? std::optional<std::string>("uint16_t") : element_type(c.dtype);
      if (!t) {
        diags_.error(c.loc, "--target cuda: a constant of dtype " + std::string(ir::dtype_name(c.dtype)) +
                                " cannot be uploaded yet");
        offsets.push_back(0);
        continue;
      }
      const int64_t numel = c.numel();
      const size_t bytes = static_cast<size_t>(numel) * ir::dtype_size(c.dtype);
      offsets.push_back(offset);
      const bool floating = ir::is_floating(c.dtype);
      tmpl::List values;
      for (int64_t k = 0; k < (c.splat ? 1 : numel); ++k) {
        if (half) values.push_back(fmt::format("0x{:04x}", ir::half_bits_from_double(c.dtype, c.float_at(k))));
        else if (floating) values.push_back(floating_constant(*t, c.float_at(k)));
        else values.push_back(fmt::format("static_cast<{}>({})", *t, c.int_at(k)));
      }
      tmpl::Value table = tmpl::Value::map();
      table.set("index", static_cast<int64_t>(i));
      table.set("type", *t);
      table.set("bits_of", half ? std::string(ir::dtype_name(c.dtype)) : std::string());
      table.set("values", tmpl::Value(std::move(values)));
      table.set("numel", numel);
      table.set("offset", static_cast<int64_t>(offset));
      table.set("splat", c.splat);
      tables.push_back(std::move(table));
      offset += (bytes + 63) / 64 * 64;
    }
    ctx.set("constant_tables", tmpl::Value(std::move(tables)));
    ctx.set("constants_host_bytes", static_cast<int64_t>(std::max<size_t>(offset, 64)));
  }

  // A floating constant of host type `type`: infinities and NaN through std::numeric_limits (a causal mask's -inf).
  static std::string floating_constant(const std::string& type, double v) {
    if (std::isnan(v)) return fmt::format("std::numeric_limits<{}>::quiet_NaN()", type);
    if (std::isinf(v)) return fmt::format("{}std::numeric_limits<{}>::infinity()", v < 0 ? "-" : "", type);
    return fmt::format("static_cast<{}>({:.17g})", type, v);
  }

  std::string group_description(const FusedGroup& g) const {
    std::string s = "group " + std::to_string(g.index) + " (" + g.label + ":";
    std::vector<uint32_t> calls = g.calls;  // with the absorbed transposes, in program order
    calls.insert(calls.end(), g.absorbed.begin(), g.absorbed.end());
    std::sort(calls.begin(), calls.end());
    for (size_t k = 0; k < calls.size(); ++k) {
      const passes::KernelCall& call = p_.calls[calls[k]];
      s += (k ? ", " : " ") + call.pir_name + " at " + where(call.loc);
    }
    return s + ")";
  }

  std::string typed_buffer(uint32_t value, const std::string& type, bool is_const) const {
    return fmt::format("static_cast<{}{}*>({})", is_const ? "const " : "", type, binding(p_.values[value].buffer));
  }
  static std::string binding(uint32_t buffer) { return fmt::format("b.buffers[{}]", buffer); }

  // Whether the input of a convolution with an asymmetric padding, padded (kforge_conv_pad.cuh), fits in the scratch
  // of the convolution at `position`; an error at `op` where it cannot.
  bool padded_input_fits(const CudaConvSite& site, uint32_t position, const passes::KernelCall& op) {
    if (std::optional<std::string> why = cuda_conv_padded_input_problem(site, passes::scratch_buffer(p_, position))) {
      diags_.error(op.loc, "--target cuda: " + op.op + " (" + op.pir_name + ") " + *why);
      return false;
    }
    padded_convs_ = true;
    return true;
  }

  // The cuDNN workspace of the convolution at `position` (passes::add_scratch_buffers): {pointer, bytes}, or
  // false where it has none (a direct depthwise convolution, or --cudnn-workspace-mib 0).
  tmpl::Value scratch_value(uint32_t position) const {
    const passes::Buffer* scratch = passes::scratch_buffer(p_, position);
    if (scratch == nullptr) return tmpl::Value(false);
    tmpl::Value v = tmpl::Value::map();
    v.set("pointer", binding(scratch->index));
    v.set("bytes", size_(scratch->size_bytes));
    return v;
  }

  // What enqueue() does per group, in order: a GEMM or row-dispatcher block (C++ text of codegen/cuda_gemm.h,
  // codegen/cuda_row_variants.h) or a launcher call.
  tmpl::Value steps() const {
    tmpl::List out;
    size_t next_call = 0;  // the next of library_calls_, placed before the first group that comes after it
    auto calls_before = [&](uint32_t position) {
      for (; next_call < library_calls_.size() && library_calls_[next_call] < position; ++next_call) {
        auto step = library_step_at_.find(plan_.groups.size() + next_call);
        if (step != library_step_at_.end()) out.push_back(step->second);
      }
    };
    for (size_t k = 0; k < plan_.groups.size(); ++k) {
      const FusedGroup& g = plan_.groups[k];
      calls_before(g.position);
      if (g.kind == passes::GroupKind::kConv) {
        auto step = library_step_at_.find(g.index);
        if (step != library_step_at_.end()) out.push_back(step->second);
        continue;
      }
      if (g.kind == passes::GroupKind::kAttention) {
        out.push_back(cuda_attention_step(p_, g, g.index, group_description(g),
                                          [this](uint32_t v, const std::string& type, bool is_const) {
                                            return typed_buffer(v, type, is_const);
                                          },
                                          size_));
        continue;
      }
      if (g.kind == passes::GroupKind::kGemm) {
        out.push_back(gemm_.call(g));
        continue;
      }
      tmpl::Value step = tmpl::Value::map();
      auto launcher = launchers_.find(g.index);
      if (launcher == launchers_.end()) continue;  // reported by emit_cuda_group
      if (rows_.site(g) != nullptr) {
        out.push_back(rows_.step(g));
        continue;
      }
      tmpl::List args;
      for (const passes::GroupInput& in : g.inputs) {
        args.push_back(typed_buffer(in.value, *cuda_scalar_type(in.storage), true));
      }
      for (const passes::GroupStore& st : g.stores) {
        args.push_back(typed_buffer(st.value, *cuda_scalar_type(st.storage), false));
      }
      args.push_back("static_cast<int64_t>(" + size_(g.outer) + ")");
      args.push_back("static_cast<int64_t>(" + size_(g.inner) + ")");
      for (const CudaShapeParam& sp : cuda_group_shape_params(g)) {
        args.push_back("static_cast<int64_t>(" + size_(sp.value) + ")");
      }
      args.push_back("stream_");
      step.set("kind", "launch");
      step.set("description", group_description(g));
      step.set("launcher", launcher->second.launcher);
      step.set("args", tmpl::Value(std::move(args)));
      step.set("index", static_cast<int64_t>(k));
      out.push_back(std::move(step));
    }
    calls_before(static_cast<uint32_t>(p_.calls.size()));
    return tmpl::Value(std::move(out));
  }

  // The keys of templates/program/cuda/program.cu.j2 beyond the class context's.
  void add_host_keys(tmpl::Value& ctx) {
    std::set<std::string> std_headers = {"cstring", "vector"};
    for (const passes::ConstantData& c : p_.constants) {
      for (int64_t k = 0; k < (c.splat ? 1 : c.numel()) && ir::is_floating(c.dtype); ++k) {
        if (!std::isfinite(c.float_at(k))) std_headers.insert("limits");  // floating_constant's infinities
      }
    }
    for (const std::string& h : gemm_.host_std_includes()) std_headers.insert(h);
    ctx.set("std_includes", tmpl::Value(tmpl::List(std_headers.begin(), std_headers.end())));
    // The launchers' declarations name __half / __nv_bfloat16 when a fused group stores them.
    tmpl::List includes;
    for (const std::string& h : gemm_.host_includes()) includes.push_back(h);
    // load_parameters() rounds the parameters --precision converted with upload_rounded().
    if (fused_half() || converted_parameters()) includes.push_back("kforge_half.cuh");
    for (const std::string& h : rows_.host_includes()) includes.push_back(h);
    if (!conv_steps_.empty()) includes.push_back("kforge_cudnn.cuh");
    if (padded_convs_) includes.push_back("kforge_conv_pad.cuh");
    if (conv_steps_.empty() && batch_norms_ > 0) includes.push_back("kforge_channel_epilogue.cuh");
    if (!pool_steps_.empty()) includes.push_back("kforge_pool.cuh");
    if (has_attention()) includes.push_back("kforge_attention.cuh");
    ctx.set("includes", tmpl::Value(std::move(includes)));
    ctx.set("conv_steps", tmpl::Value(tmpl::List(conv_steps_.begin(), conv_steps_.end())));
    ctx.set("folded_bytes", folded_bytes_);
    ctx.set("pool_steps", tmpl::Value(tmpl::List(pool_steps_.begin(), pool_steps_.end())));
    tmpl::List declarations;
    for (const auto& [index, l] : launchers_) {
      declarations.push_back(l.declaration);
      if (!l.variant_declaration.empty()) declarations.push_back(l.variant_declaration);
    }
    ctx.set("launcher_declarations", tmpl::Value(std::move(declarations)));
    tmpl::List launch_names;
    for (const FusedGroup& g : plan_.groups) launch_names.push_back(group_description(g));
    for (uint32_t c : library_calls_) launch_names.push_back(call_description(c));
    ctx.set("launch_names", tmpl::Value(std::move(launch_names)));
    std::vector<size_t> const_offsets;
    add_constants(ctx, const_offsets);
    ctx.set("gemm_multi_kernel", gemm_.multi_kernel_state());
    ctx.set("row_sites", rows_.sites());
    ctx.set("gemm_state", gemm_.state());
    ctx.set("gemm_setup", gemm_.setup());
    ctx.set("gemm_checks", gemm_.checks());
    ctx.set("gemm_calls", gemm_.calls());
    ctx.set("binding_locals", cuda_binding_locals(p_));
    ctx.set("workspace_bytes", size_(p_.plan.workspace_bytes));
    ctx.set("dim_equalities", dim_equalities());
    tmpl::List bindings;
    for (const Buffer& buf : p_.buffers) {
      std::string ptr;
      switch (buf.kind) {
        case BufferKind::kInput: ptr = "const_cast<void*>(" + input_ident(buf.role_index) + ".data)"; break;
        case BufferKind::kParameter: ptr = fmt::format("parameters_[{}].data", buf.role_index); break;
        case BufferKind::kConstant:
          ptr = fmt::format("constants_.data() + {}", const_offsets.at(buf.role_index));
          break;
        case BufferKind::kOutput: ptr = output_ident(buf.role_index) + "->data"; break;
        case BufferKind::kWorkspace:
          ptr = fmt::format("workspace_.data() + static_cast<size_t>({})", size_(buf.offset));
          break;
        case BufferKind::kRuntime: continue;  // refused: check_calls()
      }
      tmpl::Value b = tmpl::Value::map();
      b.set("index", static_cast<int64_t>(buf.index));
      b.set("pointer", ptr);
      bindings.push_back(std::move(b));
    }
    ctx.set("bindings", tmpl::Value(std::move(bindings)));
    // One graph-cache lookup per run() decides whether to prepare (choices made, cuBLASLt plans built).
    tmpl::List before_capture;
    const std::string convs = conv_steps_.empty() ? "" : "KFORGE_RETURN_IF_ERROR(prepare_convs(kforge_b));";
    for (const std::string& statement : {gemm_.before_capture(), rows_.before_capture(), convs}) {
      if (!statement.empty()) before_capture.push_back(statement);
    }
    ctx.set("before_capture", tmpl::Value(std::move(before_capture)));
    ctx.set("steps", steps());
    tmpl::List copies;
    for (size_t i = 0; i < p_.outputs.size(); ++i) {
      const passes::ProgramOutput& out = p_.outputs[i];
      if (!out.copy) continue;
      const auto& v = p_.values[out.value];
      tmpl::Value c = tmpl::Value::map();
      c.set("to", static_cast<int64_t>(output_buffer(i)));
      c.set("from", static_cast<int64_t>(v.buffer));
      c.set("bytes", size_(v.bytes()));
      copies.push_back(std::move(c));
    }
    ctx.set("output_copies", tmpl::Value(std::move(copies)));
    sizes_.add_program_sizes(p_);
    ctx.set("sizes", sizes_.definitions_value());  // last: everything above named the sizes it uses
  }

  // The buffer of output i (its caller's tensor).
  uint32_t output_buffer(size_t i) const {
    for (const Buffer& buf : p_.buffers) {
      if (buf.kind == BufferKind::kOutput && buf.role_index == i) return buf.index;
    }
    return 0;
  }

  const LoweredProgram& p_;
  const passes::FusionPlan& plan_;
  const SourceManager& sources_;
  const ProgramFilesOptions& o_;
  const CudaFilesOptions& cuda_;
  DiagnosticEngine& diags_;
  std::string cls_;
  std::map<uint32_t, CudaGroupCode> launchers_;  // by group index (GEMM groups have none)
  std::vector<uint32_t> library_calls_;           // conv / pool calls outside every group, in call order
  std::vector<tmpl::Value> conv_steps_, pool_steps_;  // codegen/cuda_conv.h contexts, in site order
  bool padded_convs_ = false;  // a convolution pads its input first (kforge_conv_pad.cuh)
  bool half_convs_ = false;                           // a convolution computes on 16-bit values (--precision)
  std::map<size_t, tmpl::Value> library_step_at_;     // every library step (also batch norms, copies) by launch
  size_t batch_norms_ = 0;                            // batch norms outside every convolution group
  std::vector<tmpl::Value> index_kernels_;            // codegen/cuda_index.h kernels, in call order
  bool index_interp_ = false;                         // one of them interpolates (kforge_index.cuh)
  int64_t folded_bytes_ = 0;                          // the folded filters and biases of the convolutions
  std::set<uint32_t> relu_for_relu6_;                 // launch indices of groups whose relu6 runs as ReLU (plan_relu6_splits)
  std::set<uint32_t> clamped_inputs_;                 // launch indices of depthwise groups that clamp their input at 6
  std::map<uint32_t, std::string> no_gemm_why_;       // matmul calls outside GEMM groups: why they are no GEMM
  // Every size of a dynamic program, computed once per run() into the table `sizes` (codegen/size_table.h); the
  // functions run() calls see it as b.sizes, under the same name.
  SizeTable sizes_;
  static std::string run_size(uint32_t k) { return "sizes[" + std::to_string(k) + "]"; }
  SizeExpr size_ = [this](const SymExpr& e) { return sizes_.ref(e, run_size); };
  CudaGemmCode gemm_;
  CudaRowVariantCode rows_;
};

}  // namespace

bool generate_cuda_program_files(const passes::LoweredProgram& program, const passes::FusionPlan& plan,
                                 tmpl::Environment& env, const ProgramFilesOptions& options,
                                 const CudaFilesOptions& cuda, OutputSet& outputs) {
  DiagnosticEngine& diags = env.diags();
  std::string header, host, kernels;
  tmpl::Value ctx;
  // Twice, as the CPU context (program_context.cpp): the second numbers the sizes canonically.
  CudaHostEmitter first(program, plan, env.sources(), options, cuda, diags);
  if (!first.emit(ctx)) return false;
  CudaHostEmitter emitter(program, plan, env.sources(), options, cuda, diags, first.size_table().canonical());
  if (!emitter.emit(ctx)) return false;
  const std::optional<int64_t> version = runtime_header_version(env);
  if (!version) return false;
  ctx.set("runtime_version", *version);
  const tmpl::Template* header_template = env.load(kCudaClassHeaderTemplate);
  const tmpl::Template* host_template = env.load(kCudaClassSourceTemplate);
  const tmpl::Template* kernels_template = env.load(kCudaKernelsTemplate);
  if (header_template == nullptr || host_template == nullptr || kernels_template == nullptr) return false;
  if (!env.render(*header_template, ctx, header) || !env.render(*host_template, ctx, host) ||
      !env.render(*kernels_template, ctx, kernels)) {
    return false;
  }
  const std::string& dir = options.codegen.output_dir;
  const std::string& name = options.codegen.class_name;
  std::vector<std::pair<std::string, std::string>> files = {
      {name + ".h", header}, {name + ".cu", host}, {name + "_kernels.cu", kernels}};
  std::vector<const char*> headers = {kRuntimeHeaderTemplate, kParamsHeaderTemplate, kCudaRuntimeHeaderTemplate,
                                      kCudaFusedHeaderTemplate};
  for (const char* h : emitter.extra_headers()) headers.push_back(h);
  for (const char* tmpl_path : headers) {
    const std::optional<std::string_view> text = env.read_verbatim(tmpl_path);
    if (!text) return false;
    const std::string base = std::string(tmpl_path).substr(std::string(tmpl_path).find('/') + 1);
    files.emplace_back(base, *text);
  }
  bool ok = true;
  for (const auto& [file, text] : files) {
    const std::string path = join_output_path(dir, file);
    ok = outputs.add(path, generated_banner(options, path) + text) && ok;
  }
  if (ok && !options.python_module.empty()) {
    // NAME_python.cc: the class as a CPython extension module on the device (docs/python.md).
    bool clash = false;
    if (!add_python_program_module(env, ctx, PythonModuleTarget::kCuda, options, outputs, &clash)) return false;
    ok = !clash;
  }
  if (!ok) {
    diags.error({}, "--name '" + name + "' makes two outputs with the same path");
    return false;
  }
  return true;
}

}  // namespace kforge::codegen
