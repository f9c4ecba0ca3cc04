#include "driver/compile_options.h"

#include "codegen/cpp_text.h"

namespace kforge::driver {

namespace {

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
With --python MODULE also DIR/NAME_python.cc and DIR/kforge_python*.h: a CPython extension module MODULE whose
class NAME loads the .pdiparams and runs the program on numpy arrays or DLPack tensors (docs/python.md); with
--target cuda also kforge_python_cuda.h, kforge_python_device.h and kforge_params.h: inputs are CUDA tensors
(torch, cupy) taken without copying, outputs stay on the device (DLPack).
)";

}  // namespace

void add_compile_options(CLI::App& cmd, CompileOptions& opts) {
  cmd.add_option("PROGRAM", opts.program, "The program: PIR JSON, PIR text or kforge program YAML")->required();
  add_op_file_options(cmd, opts.op_files);
  cmd.add_option("--op-compat", opts.op_compat,
                 "Paddle's op_compat.yaml format: which attributes are mutable (PIR operands)")
      ->type_name("FILE");
  cmd.add_option("-o,--output-dir", opts.output_dir, "Directory the files are written to")
      ->required()
      ->type_name("DIR");
  cmd.add_option("--name", opts.name,
                 "Name of the generated class and files (default: the program's name as an identifier)")
      ->type_name("NAME")
      ->check([](const std::string& name) -> std::string {
        return codegen::cpp_identifier(name) == name ? "" : "--name must be a C++ identifier, got '" + name + "'";
      });
  cmd.add_option("--target", opts.target,
                 "What the code runs on: cpu, or cuda (NAME.h, NAME.cu and NAME_kernels.cu: fused CUDA kernels)")
      ->type_name("TARGET")
      ->default_str("cpu");
  cmd.add_flag("--cuda-graph", opts.cuda_graph,
               "--target cuda: capture the launches once per set of input dims into a CUDA graph and replay it");
  cmd.add_option("--cudnn-workspace-mib", opts.cudnn_workspace_mib,
                 "--target cuda: the workspace each cuDNN convolution may use, in MiB (default " +
                     std::to_string(kDefaultCudnnWorkspaceMib) +
                     "); a buffer of the memory plan, live while the convolution runs; algorithms that need more "
                     "are not considered")
      ->type_name("MIB")
      ->check(CLI::Range(0, 65536));
  cmd.add_flag("--trace-hooks", opts.trace_hooks,
               "Call KFORGE_TRACE_HOOK (when the build defines it) after every kernel with each result, to compare "
               "runs op by op (tools/check-program)");
  cmd.add_option("--multi-kernel-hints", opts.multi_kernel_hints,
                 "Size hints (e.g. 64,256,4096): emit several variants of each matmul and last-axis softmax "
                 "(--target cuda: of each GEMM, cuBLASLt and SIMT or tensor-core tiles) and a run-time dispatcher that benchmarks "
                 "each new shape once and caches the pick on disk (docs/multi-kernel.md)")
      ->type_name("N,N,...");
  cmd.add_flag("--no-fuse", opts.no_fuse,
               "Do not fuse: every op is a kernel call, as before fusion existed (--target cuda: one generated "
               "kernel or GEMM per op) (docs/compile.md, \"Fusion\")");
  cmd.add_option("--dump-groups", opts.dump_groups,
                 "Write the fused groups as a Graphviz picture (one cluster per group, ops as nodes, values as "
                 "edges) to FILE")
      ->type_name("FILE.dot");
  cmd.add_option("--layout", opts.layout,
                 "Activation layout of convolution regions: nhwc (convolutions, pooling, batch norm, concat and the "
                 "elementwise ops between them in NHWC, one transpose at each end of a region), nchw8c (--target cpu: "
                 "the same regions in oneDNN's blocked nChw8c, [N, C/8, H, W, 8], where every channel count is a "
                 "multiple of 8; fastest on AVX2 machines), nchw (as the program says), or auto (nhwc; with "
                 "--target cuda conv2d_transpose stays nchw; with --target cpu nhwc and nchw8c both where nchw8c "
                 "converts most convolutions, the class picking by the CPU's ISA, or KFORGE_LAYOUT_FORCE, when it "
                 "is constructed) (docs/compile.md, \"Layouts\")")
      ->type_name("LAYOUT")
      ->default_str("auto")
      ->check(CLI::IsMember({"nchw", "nhwc", "nchw8c", "auto"}));
  cmd.add_option("--precision", opts.precision,
                 "--target cuda: what a float32 program computes in: float32 (as written), float16 or bfloat16 "
                 "(activations and parameters 16-bit, converted when the parameters are loaded; inputs and outputs "
                 "stay float32; every kernel computes in float32 on the values it loads) (docs/compile.md, "
                 "\"Precision\")")
      ->type_name("DTYPE")
      ->default_str("float32")
      ->check(CLI::IsMember({"float32", "float16", "bfloat16"}));
  cmd.add_option("--io-precision", opts.io_precision,
                 "With --precision float16|bfloat16: the dtype of the class's float inputs and outputs: float32 (as "
                 "the program declares them, converted on the way in and out) or compute (the --precision dtype "
                 "itself, no conversion: a decoder's key / value caches stay 16-bit between steps) "
                 "(docs/compile.md, \"Precision\")")
      ->type_name("WHICH")
      ->default_str("float32")
      ->check(CLI::IsMember({"float32", "compute"}));
  cmd.add_flag("--dump-lowered", opts.dump_lowered, "Print the lowered program (calls, values, memory plan) to stderr");
  cmd.add_option("--python", opts.python_module,
                 "Also write NAME_python.cc and kforge_python*.h: the CPython extension module MODULE with the class "
                 "NAME (load_parameters, run returning numpy arrays, or device tensors with --target cuda; "
                 "docs/python.md)")
      ->type_name("MODULE");
  cmd.add_option("--namespace", opts.cpp_namespace,
                 "C++ namespace (a or a::b) of the class and of everything private to the program, so that programs "
                 "compiled with different namespaces build in one translation unit (docs/compile.md)")
      ->type_name("NS");
  add_output_options(cmd, opts.out);
  cmd.footer(kCompileFooter);
}

}  // namespace kforge::driver
