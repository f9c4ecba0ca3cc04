// The CudaHostEmitter of generate_cuda_program_files (cuda_program.h), shared by the files that define its
// members: cuda_program.cpp (the headers, the class parts, emit), cuda_program_library_steps.cpp (the calls outside
// every group: convolutions, pools, batch norms, views; the steps that run them through cuDNN and kforge's headers),
// cuda_data_dependent.cpp (the sizes that depend on data) and cuda_program_host_keys.cpp (the constants' tables, what enqueue() does per group and the other keys of
// program.cu.j2). Internal to codegen/.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string_view>

#include "codegen/cpp_text.h"
#include "codegen/cuda_program.h"
#include "codegen/cuda_attention.h"
#include "codegen/cuda_conv.h"
#include "codegen/cuda_class_context.h"
#include "codegen/cuda_gemm.h"
#include "codegen/cuda_index.h"
#include "codegen/cuda_kernels.h"
#include "codegen/cuda_row_variants.h"
#include "codegen/data_symbols.h"
#include "codegen/generated_file.h"
#include "codegen/python_program_module.h"
#include "codegen/runtime_version.h"
#include "codegen/size_table.h"
#include "output/banner.h"
#include "passes/gemm.h"
#include "passes/memory_plan.h"

namespace kforge::codegen::cuda_program_internal {

using passes::Buffer;
using passes::BufferKind;
using passes::FusedGroup;
using passes::kNone;
using passes::LoweredProgram;
using passes::SymExpr;

// nonzero, masked_select and unique as stream compactions whose count the host reads (cuda_data_dependent.cpp).
inline constexpr const char* kCudaSelectHeaderTemplate = "cuda/kforge_select.cuh";
inline constexpr const char* kCudaUniqueHeaderTemplate = "cuda/kforge_unique.cuh";
// generate_proposals and distribute_fpn_proposals, their rows counted on the device and read by the host the same
// way (cuda_data_dependent.cpp).
inline constexpr const char* kCudaProposalsHeaderTemplate = "cuda/kforge_proposals.cuh";
// The shape rules run on the host for dims read from a tensor's values (cuda_shape_from_values.cpp).
inline constexpr const char* kShapeMetaHeaderTemplate = "runtime/kforge_shape_meta.h";
inline constexpr const char* kShapeMetaInterpHeaderTemplate = "runtime/kforge_shape_meta_interp.h";

class CudaHostEmitter {
 public:
  /// `sizes`: the size table to number the sizes by (SizeTable::canonical of an earlier emitter's), or empty.
  CudaHostEmitter(const LoweredProgram& p, const passes::FusionPlan& plan, const passes::CudaPlan& target_plan,
                  const SourceManager& sources, const ProgramFilesOptions& options, const CudaFilesOptions& cuda,
                  DiagnosticEngine& diags, SizeTable sizes = {})
      : p_(p), plan_(plan), target_(target_plan), sources_(sources), o_(options), cuda_(cuda), diags_(diags),
        cls_(options.codegen.class_name), sizes_(std::move(sizes)),
        gemm_(p, plan, cuda.multi_kernel, cuda.cuda_graph,
              [this](uint32_t v, const std::string& type, bool is_const) { return typed_buffer(v, type, is_const); },
              [this](const FusedGroup& g) { return group_description(g); }, size_),
        rows_(plan, cuda.row_multi_kernel, launchers_, cuda.cuda_graph,
              [this](uint32_t v) { return value_binding(v); },
              [this](const FusedGroup& g) { return group_description(g); }, size_) {}

  const SizeTable& size_table() const { return sizes_; }

  /// The headers the output needs beside the runtime's, in a fixed order, each once.
  std::vector<const char*> extra_headers() const;

  /// What the class header (templates/program/cuda/program.h.j2) declares beyond what every program has.
  CudaClassParts class_parts() const;

  /// Builds the context of NAME.h, NAME.cu and NAME_kernels.cu (templates/program/cuda/) into `ctx`.
  bool emit(tmpl::Value& ctx);

 private:
  // Whether group g is a kernel generated into NAME_kernels.cu (elementwise and row groups), not a library or
  // header call from NAME.cu (GEMM, convolution, attention).
  static bool is_generated_kernel(const FusedGroup& g);

  // Whether an attention group computes on 16-bit values (kforge_attention.cuh), on float32 values
  // (kforge_attention_f32.cuh).
  bool has_attention(bool float32) const;

  // Whether a fused (generated-kernel) group loads or stores float16 / bfloat16 values (then NAME_kernels.cu
  // includes kforge_half.cuh for the conversions).
  bool fused_half() const;

  // Whether --precision made a parameter 16-bit that a parameter file holds in float32.
  bool converted_parameters() const;

  // The program's path as the CPU target prints it: relative to the generated header (stable across
  // working directories).
  std::string where(SourceLoc loc) const;

  // A call outside every group must be a convolution, a pool or a batch norm of the target plan, an index-mapped
  // op or a view (build_library_steps() makes their steps), or share its input's buffer (nothing to run on the
  // device).
  void check_calls();

  // The library steps: the convolution groups' conv2d_fused calls and the calls outside every group (check_calls
  // collected them), each with its launch index in kLaunchNames (groups first, then these calls). The convolutions,
  // pools and batch norms run the target plan's forms (codegen/cuda_conv.h), the index-mapped ops theirs
  // (codegen/cuda_index.h): the plan refused what they cannot run.
  void build_library_steps();

  // Call c outside every group as a step at launch index `launch`: the target plan's convolution, pool or batch
  // norm, or a compaction, a copy, the known elements written, the index-mapped kernels of the plan's index map or
  // computing form.
  void add_library_step(uint32_t c, size_t launch, const std::string& description, const CudaBufferExpr& buffer);
  // The one step of an index batch (passes::CudaPlan::index_batches) at launch index `launch` (its last call's).
  void add_index_batch_step(const std::vector<uint32_t>& batch, size_t launch, const CudaBufferExpr& buffer);

  // The step of the convolution `conv` (the target plan's form) at launch index `launch`, run at `position`.
  void add_conv_step(const CudaConv& conv, size_t launch, uint32_t position, const std::string& description,
                     const CudaBufferExpr& buffer);

  // The sizes that depend on data (cuda_data_dependent.cpp; what the target cannot size, the plan refused:
  // passes::plan_cuda_data_dependent): a compaction's step (the plan's CudaCompaction: the count copied back and
  // bind_s<id>() called after it); the bind_s<id>() functions' contexts in bind order (their `sizes` added by
  // add_data_dependent_keys, once every size is named); the copies into the outputs sized by data, allocated after
  // the last launch.
  tmpl::Value select_step(const passes::KernelCall& call, const passes::CudaCompaction& form, size_t launch,
                          const std::string& description);
  tmpl::Value unique_step(const passes::CudaCompaction& form, size_t launch, const std::string& description);
  tmpl::Value proposals_step(const passes::CudaCompaction& form, size_t launch, const std::string& description);
  tmpl::Value fpn_step(const passes::CudaCompaction& form, size_t launch, const std::string& description);
  // Dims read from a tensor's values (cuda_shape_from_values.cpp; which infer-metas the host runs:
  // passes::is_cuda_host_shape_rule): an argument of such a rule as host code (the tensors it copies back into
  // `copies`, conversions into `converts`; the plan refused those it cannot pass); the step that copies, runs the
  // rule and binds the call's dims; the steps of every such call not refused, by call; and, while steps() lays out enqueue(), those
  // to run before the launch of `calls` (a group's, or one library call's) that are not `placed` yet, as one step
  // with one wait, joined by the reads of later calls that can run as early (shape_read_ready_early: their tensors
  // are on the device, every dim bound before theirs is bound by then).
  std::string host_arg(uint32_t index, const passes::KernelArg& arg, tmpl::List& copies, tmpl::List& converts);
  tmpl::Value shape_read_step(uint32_t index);
  void build_shape_reads(const std::set<uint32_t>& refused);
  bool shape_read_ready_early(uint32_t call, const std::set<uint32_t>& bound) const;
  void place_shape_reads(const std::vector<uint32_t>& calls, std::set<uint32_t>& placed, tmpl::List& out) const;
  tmpl::List data_symbols_value();
  tmpl::List late_output_copies();
  void add_data_dependent_keys(tmpl::Value& ctx, tmpl::List data_symbols);
  // The data-dependent symbol a GEMM's M, N, K or batch is known after (its run-time check goes to that bind), or
  // kNone.
  uint32_t gemm_data_symbol(const passes::GemmGroup& g) const;
  // A shape as run() spells it: "{s0, sizes[3]}".
  std::string dims_text(const passes::SymShape& dims) const;

  // The broadcast dims the analysis took as equal (passes::DimEquality), each pair once: {a, b (sizes of run(),
  // computed and checked for overflow there), message (what run() says when an input makes them differ)}.
  tmpl::Value dim_equalities() const;

  // A call outside every group, for error messages: "call 3 (pd_op.pool2d at model.json:10:5)".
  std::string call_description(uint32_t c) const;

  std::string input_ident(size_t i) const { return cuda_input_ident(p_, i); }
  std::string output_ident(size_t i) const { return cuda_output_ident(p_, i); }

  // The constants' host tables and their offsets in the device buffer (64-byte aligned each); errors for
  // dtypes that cannot be uploaded yet.
  void add_constants(tmpl::Value& ctx, std::vector<size_t>& offsets);

  // A floating constant of host type `type`: infinities and NaN through std::numeric_limits (a causal mask's -inf).
  static std::string floating_constant(const std::string& type, double v);

  std::string group_description(const FusedGroup& g) const;

  /// A value's device pointer as `const type*` / `type*`; value_binding: as void*. Both start buffer_offset bytes
  /// into the value's buffer (packed GEMM outputs, gemm_siblings.h).
  std::string typed_buffer(uint32_t value, const std::string& type, bool is_const) const;
  std::string value_binding(uint32_t value) const;
  static std::string binding(uint32_t buffer) { return fmt::format("b.buffers[{}]", buffer); }

  // The pointer expression of the scratch buffer of the call at `position` ("" if it has none).
  std::string scratch_pointer(uint32_t position) const;
  // The cuDNN workspace of the convolution at `position` (passes::add_scratch_buffers): {pointer, bytes}, or
  // false where it has none (a direct depthwise convolution, or --cudnn-workspace-mib 0).
  tmpl::Value scratch_value(uint32_t position) const;

  // What enqueue() does per group, in order: a GEMM or row-dispatcher block (C++ text of codegen/cuda_gemm.h,
  // codegen/cuda_row_variants.h) or a launcher call.
  tmpl::Value steps() const;

  // The keys of templates/program/cuda/program.cu.j2 beyond the class context's.
  void add_host_keys(tmpl::Value& ctx);


  const LoweredProgram& p_;
  DataSymbols data_{p_};
  const passes::FusionPlan& plan_;
  const passes::CudaPlan& target_;  // the CUDA target plan: the convolutions', pools' and batch norms' forms
  const SourceManager& sources_;
  const ProgramFilesOptions& o_;
  const CudaFilesOptions& cuda_;
  DiagnosticEngine& diags_;
  std::string cls_;
  std::map<uint32_t, CudaGroupCode> launchers_;  // by group index (GEMM groups have none)
  std::vector<uint32_t> library_calls_;           // calls outside every group that run, in call order
  std::vector<tmpl::Value> conv_steps_, pool_steps_;  // codegen/cuda_conv.h contexts, in site order
  bool padded_convs_ = false;  // a convolution pads its input first (kforge_conv_pad.cuh)
  bool half_convs_ = false;                           // a convolution computes on 16-bit values (--precision)
  std::map<size_t, tmpl::Value> library_step_at_;     // every library step (also batch norms, copies) by launch
  size_t batch_norms_ = 0;                            // batch norms outside every convolution group
  std::vector<tmpl::Value> index_kernels_;            // codegen/cuda_index.h kernels, in call order
  bool index_interp_ = false;                         // one of them interpolates (kforge_index.cuh)
  int64_t folded_bytes_ = 0;                          // the folded filters and biases of the convolutions
  bool select_steps_ = false;                         // a nonzero / masked_select / unique runs (kforge_select.cuh)
  bool rnn_steps_ = false;                            // an rnn runs (kforge_rnn.cuh)
  int64_t fft_steps_ = 0;                             // fft_r2c calls (kforge_cufft.cuh: a cuFFT plan each)
  bool complex_parts_ = false;                        // a real / abs of a complex tensor runs (kforge_cufft.cuh)
  bool unique_steps_ = false;                         // a unique runs (kforge_unique.cuh, CUB's radix sort)
  bool proposal_steps_ = false;                       // a generate_proposals / distribute_fpn_proposals runs
                                                      // (kforge_proposals.cuh)
  std::map<uint32_t, tmpl::Value> shape_reads_;       // by call: its dims read from a tensor's values
  bool shape_meta_ = false;                           // one runs a host shape rule (runtime/kforge_shape_meta.h)
  bool shape_meta_interp_ = false;                    // an interpolation's (runtime/kforge_shape_meta_interp.h)
  size_t num_runtime_buffers_ = 0;                    // buffers sized by data (BufferKind::kRuntime)
  // Every size of a dynamic program, computed once per run() into the table `sizes` (codegen/size_table.h); the
  // functions run() calls see it as b.sizes, under the same name.
  SizeTable sizes_;
  static std::string run_size(uint32_t k) { return "sizes[" + std::to_string(k) + "]"; }
  SizeExpr size_ = [this](const SymExpr& e) { return sizes_.ref(e, run_size); };
  CudaGemmCode gemm_;
  CudaRowVariantCode rows_;
};

}  // namespace kforge::codegen::cuda_program_internal
