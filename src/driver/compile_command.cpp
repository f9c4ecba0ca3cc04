#include "driver/compile_command.h"

#include <filesystem>
#include <iostream>
#include <memory>

#include "codegen/cpp_text.h"
#include "codegen/cuda_conv.h"
#include "codegen/cuda_index.h"
#include "codegen/cuda_program.h"
#include "codegen/program_codegen.h"
#include "driver/compile_target.h"
#include "driver/template_search_path.h"
#include "opdef/op_compat.h"
#include "driver/op_files.h"
#include "opdef/op_loader.h"
#include "passes/concat_in_place.h"
#include "passes/fusion.h"
#include "passes/lower.h"
#include "passes/memory_plan.h"
#include "passes/op_set.h"
#include "passes/variants.h"
#include "program/program_reader.h"
#include "template/codegen_filters.h"
#include "template/environment.h"

namespace kforge::driver {

namespace {

struct CompileOptions {
  std::string program;
  OpFileOptions op_files;
  std::vector<std::string> ops;      // every op file, dense or sparse, in command-line order
  std::vector<opdef::OpFile> files;  // the same, with their kinds
  std::string op_compat;
  std::string output_dir;
  std::string name;
  std::string target = "cpu";
  bool trace_hooks = false;
  bool dump_lowered = false;
  bool cuda_graph = false;          // --cuda-graph (--target cuda)
  std::optional<int64_t> cudnn_workspace_mib;  // --cudnn-workspace-mib (--target cuda; kDefaultCudnnWorkspaceMib)
  bool no_fuse = false;             // --no-fuse: every call stays a kernel call
  std::string layout = "auto";      // --layout nchw|nhwc|nchw8c|auto
  std::optional<std::string> precision;  // --precision float32|float16|bfloat16 (--target cuda)
  std::optional<std::string> io_precision;  // --io-precision float32|compute (with --precision)
  std::string dump_groups;          // --dump-groups FILE.dot
  std::optional<std::string> multi_kernel_hints;  // --multi-kernel-hints, as given
  std::string python_module;                      // --python MODULE
  std::optional<std::string> cpp_namespace;       // --namespace NS
  OutputOptions out;
};

// No zoo model ran faster with more (BENCHMARKS.md, "The cuDNN workspaces in the memory plan").
constexpr int64_t kDefaultCudnnWorkspaceMib = 64;

constexpr const char* kCompileFooter = R"(Examples:
  Compile a Paddle inference program against the reference kernels:
    kforge compile inference.json --ops kernels/ops.yaml \
        --op-compat kernels/op_compat.yaml -o gen --name resnet --target cpu

  Check in the generated files and fail CI when they are stale:
    kforge compile model.yaml --ops ops.yaml -o src/gen --name model --check

Writes DIR/NAME.h, DIR/NAME.cc, DIR/kforge_runtime.h and DIR/kforge_params.h: a class NAME whose run() checks
its inputs and calls the kernels of the op YAML (`kernel: func:`) one after the other, with no executor and,
for static shapes, one workspace planned at generation time and no allocation per call; load_parameters(path)
reads the weights from Paddle's .pdiparams file. Build NAME.cc with your kernel library
(kernels/ is one). PROGRAM is PIR JSON (.json), PIR text (.txt, .pir) or kforge program YAML
(.yaml). Every op must have a kernel: an op without one is an error at its place in PROGRAM.
With --python MODULE also DIR/NAME_python.cc and DIR/kforge_python.h: a CPython extension module MODULE whose
class NAME loads the .pdiparams and runs the program on numpy arrays or DLPack tensors (docs/python.md); with
--target cuda also kforge_python_cuda.h and kforge_params.h: inputs are CUDA tensors (torch, cupy) taken
without copying, outputs stay on the device (DLPack).
)";

int run_compile(const CompileOptions& opts) {
  const CompileTarget* target = find_compile_target(opts.target);
  if (target == nullptr) {
    return usage_error("compile", "--target " + opts.target + " is not supported; use --target " +
                                      compile_target_names());
  }
  if (opts.cuda_graph && !target->cuda_graph) return usage_error("compile", "--cuda-graph needs --target cuda");
  // NCHW8c is the kernel library's (oneDNN's nChw8c); the CUDA kernels take NCHW and NHWC.
  if (opts.layout == "nchw8c" && target->backend == CompileBackend::kCuda) {
    return usage_error("compile", "--layout nchw8c needs --target cpu");
  }
  if (opts.cudnn_workspace_mib && target->backend != CompileBackend::kCuda) {
    return usage_error("compile", "--cudnn-workspace-mib needs --target cuda");
  }
  // The kernel library's convolutions and loops are float32: 16-bit compute is the CUDA target's.
  if (opts.precision && *opts.precision != "float32" && target->backend != CompileBackend::kCuda) {
    return usage_error("compile", "--precision " + *opts.precision + " needs --target cuda");
  }
  if (opts.io_precision && opts.precision.value_or("float32") == "float32") {
    return usage_error("compile", "--io-precision needs --precision float16 or bfloat16");
  }
  if (!opts.python_module.empty() && codegen::cpp_identifier(opts.python_module) != opts.python_module) {
    return usage_error("compile", "--python '" + opts.python_module +
                                      "' is not a Python module name (letters, digits and '_', not starting with a digit)");
  }
  Session session(opts.out);
  DiagnosticEngine& diags = session.diags();
  OutputSet outputs;
  OutputRequest request;

  if (opts.cpp_namespace) {
    // A usage error located in a buffer holding the flag as typed, so the caret points at the bad part.
    if (const std::optional<codegen::NamespaceProblem> problem = codegen::namespace_problem(*opts.cpp_namespace)) {
      const std::string flag = "--namespace ";
      const uint32_t file = session.sources().add_buffer("<command line>", flag + *opts.cpp_namespace);
      diags.error(session.sources().loc_of_offset(file, flag.size() + problem->offset),
                  "--namespace '" + *opts.cpp_namespace + "' is not a C++ namespace: " + problem->why);
      diags.print_summary();
      return kExitUsage;
    }
  }

  std::vector<int64_t> hints;
  if (opts.multi_kernel_hints) {
    // Located in a buffer holding the flag as typed, so the caret points at the bad hint.
    const std::string flag = "--multi-kernel-hints ";
    std::string error;
    size_t offset = 0;
    std::optional<std::vector<int64_t>> parsed = passes::parse_multi_kernel_hints(*opts.multi_kernel_hints, error, offset);
    if (!parsed) {
      uint32_t file = session.sources().add_buffer("<command line>", flag + *opts.multi_kernel_hints);
      diags.error(session.sources().loc_of_offset(file, flag.size() + offset), error);
      return finish_outputs(opts.out, outputs, request, session);
    }
    hints = std::move(*parsed);
  }

  const opdef::OpLibrary library = opdef::load_op_library(opts.files, session.sources(), diags);
  opdef::OpCompat compat;
  if (!opts.op_compat.empty()) compat = opdef::load_op_compat(opts.op_compat, session.sources(), diags);
  std::optional<ir::Program> program = ir::read_program_file(session.sources(), opts.program, diags);

  request.dependencies.push_back(opts.program);
  request.dependencies.insert(request.dependencies.end(), opts.ops.begin(), opts.ops.end());
  if (!opts.op_compat.empty()) request.dependencies.push_back(opts.op_compat);
  if (!program || diags.has_errors()) return finish_outputs(opts.out, outputs, request, session);

  const passes::OpSet op_set(library, opts.op_compat.empty() ? nullptr : &compat, diags);
  if (diags.has_errors()) return finish_outputs(opts.out, outputs, request, session);
  passes::PipelineOptions pipeline;
  // auto is NHWC on both targets: the kernel library's oneDNN convolutions and cuDNN's tensor-core ones (KRSC
  // filters, kforge_cudnn.cuh) are fastest on it (BENCHMARKS.md). cuDNN's transposed convolutions stay NCHW.
  const bool nhwc = opts.layout == "nhwc" || opts.layout == "auto";
  pipeline.layout = nhwc                       ? passes::LayoutChoice::kNhwc
                    : opts.layout == "nchw8c" ? passes::LayoutChoice::kNchw8c
                                              : passes::LayoutChoice::kNchw;
  pipeline.layout_options.transposed_convolutions = target->backend != CompileBackend::kCuda;
  // CUDA kernels index every dim by an expression: two dynamic input dims that meet in a broadcast (a decoder's
  // target and memory batches) become one symbol, checked equal at run time.
  pipeline.unify_broadcast_symbols = target->backend == CompileBackend::kCuda;
  // The CUDA interpolation kernels take their size from the output's dims: size tensors known from the dims
  // (`size=[h * 2, w * 2]`) are left out, and the ops computing them are not called.
  pipeline.lower.sizes_from_output_dims = target->backend == CompileBackend::kCuda;
  // cudaMalloc's alignment, which cuBLASLt asks of its workspace: cuDNN's workspaces are buffers of the plan.
  if (target->backend == CompileBackend::kCuda) pipeline.alignment = 256;
  passes::LayoutReport layout_report;
  pipeline.layout_report = &layout_report;
  pipeline.precision = ir::parse_dtype_name(opts.precision.value_or("float32")).value_or(ir::DataType::kFloat32);
  if (target->backend == CompileBackend::kCuda) pipeline.precision_float32_ops = codegen::cuda_float32_index_ops();
  pipeline.precision_float32_interface = opts.io_precision.value_or("float32") == "float32";
  passes::PrecisionReport precision_report;
  pipeline.precision_report = &precision_report;
  std::optional<passes::LoweredProgram> lowered = passes::compile_program(*program, op_set, diags, pipeline);
  if (!lowered) return finish_outputs(opts.out, outputs, request, session);
  if (opts.dump_lowered && pipeline.layout != passes::LayoutChoice::kNchw) std::cerr << layout_report.dump(*program);
  if (opts.dump_lowered && pipeline.precision != ir::DataType::kFloat32) std::cerr << precision_report.dump(*program);
  passes::FusionOptions fusion_options;
  fusion_options.enabled = !opts.no_fuse;
  fusion_options.single_call_groups = target->single_call_groups;
  fusion_options.gemm_groups = target->gemm_groups;  // matmul (+ bias [+ gelu]) as one GEMM call
  fusion_options.half_floats = target->half_floats;  // the kernels load / store float16 and bfloat16
  // conv (+ bias, batch norm, activation, residual) as one conv2d_fused call, when the op set has the library's.
  if (target->conv_groups) fusion_options.conv_fused = library.find("conv2d_fused");
  fusion_options.absorb_transposes = target->absorb_transposes;  // a transpose as a group's input / store map
  fusion_options.attention_groups = target->attention_groups;    // q k^T, softmax, p v as one kernel (16-bit)
  passes::FusionPlan fusion = passes::plan_fusion(*lowered, fusion_options);
  passes::apply_fusion_to_memory_plan(*lowered, fusion);
  std::vector<passes::ConcatPlacement> placements;
  if (target->backend != CompileBackend::kCuda) {
    // A concat's inputs in their slices of its output (issue 36). Strided slices take conv2d_fused calls, which
    // --no-fuse does not make; --trace-hooks reads every value as a dense tensor.
    passes::ConcatInPlaceOptions in_place;
    in_place.conv_fused = fusion_options.conv_fused;
    in_place.strided = !opts.no_fuse && !opts.trace_hooks;
    placements = passes::place_concat_inputs(*lowered, fusion, in_place);
  }
  if (target->backend == CompileBackend::kCuda) {
    // Each cuDNN convolution's workspace is a buffer of the plan, live while it runs: shared with the other
    // convolutions' (and, where the shapes are static, with the values dead there), and captured by a CUDA graph
    // with the rest of the workspace.
    passes::add_scratch_buffers(*lowered, codegen::cudnn_scratch_positions(*lowered, fusion),
                                opts.cudnn_workspace_mib.value_or(kDefaultCudnnWorkspaceMib) << 20);
  }
  if (opts.dump_lowered) {
    std::cerr << lowered->dump() << passes::dump_fusion(*lowered, fusion) << passes::dump_placements(placements);
  }
  // CPU: variants of kernel calls (fused calls are no kernel calls and get none). CUDA: of the GEMM groups.
  const passes::MultiKernelPlan multi_kernel =
      passes::plan_multi_kernels(*lowered, target->kernel_call_variants ? hints : std::vector<int64_t>{}, fusion.call_group);
  const std::vector<int64_t> cuda_hints = target->kernel_call_variants ? std::vector<int64_t>{} : hints;
  const passes::MultiKernelPlan cuda_multi_kernel = passes::plan_cuda_gemm_variants(fusion, cuda_hints);
  const passes::MultiKernelPlan cuda_row_multi_kernel = passes::plan_cuda_row_variants(*lowered, fusion, cuda_hints);

  tmpl::Environment env(session.sources(), diags);
  for (const std::string& dir : template_search_path(opts.out.template_dirs, {})) env.add_search_dir(dir);
  tmpl::register_codegen_filters(env);

  codegen::ProgramFilesOptions files;
  files.codegen.class_name = opts.name.empty() ? codegen::cpp_identifier(lowered->name) : opts.name;
  files.codegen.program_path = opts.program;
  files.codegen.output_dir = opts.output_dir;
  files.codegen.trace_hooks = opts.trace_hooks;
  files.codegen.cpp_namespace = opts.cpp_namespace.value_or("");
  if (!fusion.empty()) files.codegen.fusion = &fusion;
  if (!multi_kernel.sites.empty()) files.codegen.multi_kernel = &multi_kernel;
  files.banner_inputs = {opts.program};
  files.banner_inputs.insert(files.banner_inputs.end(), opts.ops.begin(), opts.ops.end());
  if (!opts.op_compat.empty()) files.banner_inputs.push_back(opts.op_compat);
  files.tool_version = std::string(kforge_version());
  files.version_stamp = !opts.out.no_version_stamp;
  files.python_module = opts.python_module;
  if (target->backend == CompileBackend::kCuda) {
    codegen::CudaFilesOptions cuda;
    cuda.cuda_graph = opts.cuda_graph;
    if (!cuda_multi_kernel.sites.empty()) cuda.multi_kernel = &cuda_multi_kernel;
    if (!cuda_row_multi_kernel.sites.empty()) cuda.row_multi_kernel = &cuda_row_multi_kernel;
    codegen::generate_cuda_program_files(*lowered, fusion, env, files, cuda, outputs);
  } else {
    codegen::generate_program_files(*lowered, env, files, outputs);
  }
  if (!opts.dump_groups.empty() && !outputs.add(opts.dump_groups, passes::fusion_dot(*lowered, fusion))) {
    diags.error({}, "--dump-groups '" + opts.dump_groups + "' names a file that kforge compile already writes");
  }

  const std::vector<std::string>& loaded = env.loaded_files();
  // Every template rendered and every header copied beside the outputs (Environment::read_verbatim).
  request.dependencies.insert(request.dependencies.end(), loaded.begin(), loaded.end());
  return finish_outputs(opts.out, outputs, request, session);
}

}  // namespace

void register_compile_command(CLI::App& app, CommandAction& action) {
  auto opts = std::make_shared<CompileOptions>();
  CLI::App* cmd = app.add_subcommand("compile", "Compile a program into a straight-line C++ dispatch function");
  cmd->add_option("PROGRAM", opts->program, "The program: PIR JSON, PIR text or kforge program YAML")->required();
  add_op_file_options(*cmd, opts->op_files);
  cmd->add_option("--op-compat", opts->op_compat,
                  "Paddle's op_compat.yaml format: which attributes are mutable (PIR operands)")
      ->type_name("FILE");
  cmd->add_option("-o,--output-dir", opts->output_dir, "Directory the files are written to")
      ->required()
      ->type_name("DIR");
  cmd->add_option("--name", opts->name,
                  "Name of the generated class and files (default: the program's name as an identifier)")
      ->type_name("NAME")
      ->check([](const std::string& name) -> std::string {
        return codegen::cpp_identifier(name) == name ? "" : "--name must be a C++ identifier, got '" + name + "'";
      });
  cmd->add_option("--target", opts->target,
                  "What the code runs on: cpu, or cuda (NAME.h, NAME.cu and NAME_kernels.cu: fused CUDA kernels)")
      ->type_name("TARGET")
      ->default_str("cpu");
  cmd->add_flag("--cuda-graph", opts->cuda_graph,
                "--target cuda: capture the launches once per set of input dims into a CUDA graph and replay it");
  cmd->add_option("--cudnn-workspace-mib", opts->cudnn_workspace_mib,
                  "--target cuda: the workspace each cuDNN convolution may use, in MiB (default " +
                      std::to_string(kDefaultCudnnWorkspaceMib) +
                      "); a buffer of the memory plan, live while the convolution runs; algorithms that need more "
                      "are not considered")
      ->type_name("MIB")
      ->check(CLI::Range(0, 65536));
  cmd->add_flag("--trace-hooks", opts->trace_hooks,
                "Call KFORGE_TRACE_HOOK (when the build defines it) after every kernel with each result, to compare "
                "runs op by op (tools/check-program)");
  cmd->add_option("--multi-kernel-hints", opts->multi_kernel_hints,
                  "Size hints (e.g. 64,256,4096): emit several variants of each matmul and last-axis softmax "
                  "(--target cuda: of each GEMM, cuBLASLt and SIMT or tensor-core tiles) and a run-time dispatcher that benchmarks "
                  "each new shape once and caches the pick on disk (docs/multi-kernel.md)")
      ->type_name("N,N,...");
  cmd->add_flag("--no-fuse", opts->no_fuse,
                "Do not fuse: every op is a kernel call, as before fusion existed (--target cuda: one generated "
                "kernel or GEMM per op) (docs/compile.md, \"Fusion\")");
  cmd->add_option("--dump-groups", opts->dump_groups,
                  "Write the fused groups as a Graphviz picture (one cluster per group, ops as nodes, values as "
                  "edges) to FILE")
      ->type_name("FILE.dot");
  cmd->add_option("--layout", opts->layout,
                  "Activation layout of convolution regions: nhwc (convolutions, pooling, batch norm, concat and the "
                  "elementwise ops between them in NHWC, one transpose at each end of a region), nchw8c (--target cpu: "
                  "the same regions in oneDNN's blocked nChw8c, [N, C/8, H, W, 8], where every channel count is a "
                  "multiple of 8; fastest on AVX2 machines), nchw (as the program says), or auto (nhwc; with "
                  "--target cuda conv2d_transpose stays nchw) (docs/compile.md, \"Layouts\")")
      ->type_name("LAYOUT")
      ->default_str("auto")
      ->check(CLI::IsMember({"nchw", "nhwc", "nchw8c", "auto"}));
  cmd->add_option("--precision", opts->precision,
                  "--target cuda: what a float32 program computes in: float32 (as written), float16 or bfloat16 "
                  "(activations and parameters 16-bit, converted when the parameters are loaded; inputs and outputs "
                  "stay float32; every kernel computes in float32 on the values it loads) (docs/compile.md, "
                  "\"Precision\")")
      ->type_name("DTYPE")
      ->default_str("float32")
      ->check(CLI::IsMember({"float32", "float16", "bfloat16"}));
  cmd->add_option("--io-precision", opts->io_precision,
                  "With --precision float16|bfloat16: the dtype of the class's float inputs and outputs: float32 (as "
                  "the program declares them, converted on the way in and out) or compute (the --precision dtype "
                  "itself, no conversion: a decoder's key / value caches stay 16-bit between steps) "
                  "(docs/compile.md, \"Precision\")")
      ->type_name("WHICH")
      ->default_str("float32")
      ->check(CLI::IsMember({"float32", "compute"}));
  cmd->add_flag("--dump-lowered", opts->dump_lowered, "Print the lowered program (calls, values, memory plan) to stderr");
  cmd->add_option("--python", opts->python_module,
                  "Also write NAME_python.cc and kforge_python.h: the CPython extension module MODULE with the class "
                  "NAME (load_parameters, run returning numpy arrays, or device tensors with --target cuda; "
                  "docs/python.md)")
      ->type_name("MODULE");
  cmd->add_option("--namespace", opts->cpp_namespace,
                  "C++ namespace (a or a::b) of the class and of everything private to the program, so that programs "
                  "compiled with different namespaces build in one translation unit (docs/compile.md)")
      ->type_name("NS");
  add_output_options(*cmd, opts->out);
  cmd->footer(kCompileFooter);
  cmd->callback([opts, cmd, &action] {
    opts->files = op_files_in_order(*cmd, opts->op_files);
    opts->ops = op_file_paths(opts->files);
    action = [opts] { return run_compile(*opts); };
  });
}

}  // namespace kforge::driver
