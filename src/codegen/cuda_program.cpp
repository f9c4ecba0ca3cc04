#include "codegen/cuda_program.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <string_view>

#include "codegen/cpp_text.h"
#include "codegen/cuda_gemm.h"
#include "codegen/cuda_kernels.h"
#include "codegen/cuda_row_variants.h"
#include "output/banner.h"
#include "passes/gemm.h"

namespace kforge::codegen {

namespace {

using passes::Buffer;
using passes::BufferKind;
using passes::FusedGroup;
using passes::kNone;
using passes::LoweredProgram;
using passes::SymExpr;

std::string join_path(const std::string& dir, const std::string& file) {
  if (dir.empty()) return file;
  return dir.back() == '/' ? dir + file : dir + "/" + file;
}

std::optional<std::string> constant_element_type(ir::DataType dtype) {
  switch (dtype) {
    case ir::DataType::kBool: return "bool";
    case ir::DataType::kInt8: return "int8_t";
    case ir::DataType::kUInt8: return "uint8_t";
    case ir::DataType::kInt16: return "int16_t";
    case ir::DataType::kInt32: return "int32_t";
    case ir::DataType::kInt64: return "int64_t";
    case ir::DataType::kFloat32: return "float";
    case ir::DataType::kFloat64: return "double";
    default: return std::nullopt;
  }
}

std::string dims_list(const passes::SymShape& dims) {
  std::string out = "{";
  for (size_t i = 0; i < dims.size(); ++i) out += (i ? ", " : "") + dims[i].to_string();
  return out + "}";
}

std::string shape_text(const passes::SymShape& dims) {
  std::string out = "[";
  for (size_t i = 0; i < dims.size(); ++i) out += (i ? ", " : "") + (dims[i].is_constant() ? dims[i].to_string() : "?");
  return out + "]";
}

class CudaHostEmitter {
 public:
  CudaHostEmitter(const LoweredProgram& p, const passes::FusionPlan& plan, const SourceManager& sources,
                  const ProgramFilesOptions& options, const CudaFilesOptions& cuda, DiagnosticEngine& diags)
      : p_(p), plan_(plan), sources_(sources), o_(options), cuda_(cuda), diags_(diags),
        cls_(options.codegen.class_name),
        gemm_(p, plan, cuda.multi_kernel, cuda.cuda_graph, cls_,
              [this](uint32_t v, const std::string& type, bool is_const) { return typed_buffer(v, type, is_const); },
              [this](const FusedGroup& g) { return group_description(g); }),
        rows_(p, plan, cuda.row_multi_kernel, launchers_, cuda.cuda_graph, cls_,
              [this](uint32_t v) { return fmt::format("b.buffers[{}]", p_.values[v].buffer); },
              [this](const FusedGroup& g) { return group_description(g); }) {}

  /// The headers the output needs beside the runtime's, in a fixed order, each once.
  std::vector<const char*> extra_headers() const {
    std::vector<const char*> out;
    std::vector<const char*> half;
    if (fused_half()) half.push_back(kCudaHalfHeaderTemplate);
    for (const std::vector<const char*>& list : {gemm_.header_templates(), half, rows_.header_templates()}) {
      for (const char* h : list) {
        if (std::find_if(out.begin(), out.end(), [&](const char* o) { return std::string_view(o) == h; }) == out.end()) {
          out.push_back(h);
        }
      }
    }
    return out;
  }

  bool emit(std::string& header, std::string& host, std::string& kernels) {
    check_calls();
    gemm_.check(diags_);
    kernels = "#include <cuda_runtime.h>\n\n#include <cmath>\n#include <cstdint>\n\n#include \"kforge_fused.cuh\"\n" +
              std::string(fused_half() ? "#include \"kforge_half.cuh\"\n" : "") + "\n"
              "// The fused kernels of " + cls_ + " (kforge compile --target cuda); launched from " + cls_ + ".cu.\n\n";
    for (const FusedGroup& g : plan_.groups) {
      if (g.kind == passes::GroupKind::kGemm) continue;  // a library / GEMM-header call from NAME.cu
      std::optional<CudaGroupCode> code = emit_cuda_group(p_, g, cls_ + "_", rows_.site(g), diags_);
      if (!code) continue;
      kernels += code->kernels + "\n";
      launchers_.emplace(g.index, *code);
    }
    if (diags_.has_errors()) return false;
    header = emit_header();
    host = emit_host();
    return !diags_.has_errors();
  }

 private:
  // Whether a fused (non-GEMM) group loads or stores float16 / bfloat16 values (then NAME_kernels.cu includes
  // kforge_half.cuh for the conversions).
  bool fused_half() const {
    for (const FusedGroup& g : plan_.groups) {
      if (g.kind != passes::GroupKind::kGemm && group_uses_half(g)) return true;
    }
    return false;
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

  // A call outside every group must be a view that shares its input's buffer (nothing to run on the device).
  void check_calls() {
    for (uint32_t c = 0; c < p_.calls.size(); ++c) {
      if (c < plan_.call_group.size() && plan_.call_group[c] != kNone) continue;
      const passes::KernelCall& call = p_.calls[c];
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
      if (call.op == "matmul") {
        // Supported matmuls are GEMM groups; say precisely why this one is not.
        std::string why;
        if (!passes::gemm_form(p_, call, &why)) {
          diags_.error(call.loc, "--target cuda: matmul (" + call.pir_name + ") has no CUDA GEMM: " + why);
          continue;
        }
      }
      diags_.error(call.loc, "--target cuda: op '" + call.op + "' (" + call.pir_name +
                                 ") is not in a fused group and the CUDA backend has no kernel for it; only ops "
                                 "with `compute`, `reduce` or `row_pattern` that fuse, and float32, float16 or "
                                 "bfloat16 matmuls, run on the GPU (docs/compile.md)");
    }
  }

  std::string ident(const std::string& name) const { return cpp_identifier(name); }

  std::string input_ident(size_t i) const { return ident(p_.inputs[i].name); }
  std::string output_ident(size_t i) const { return ident(p_.outputs[i].name) + "_out"; }

  std::string emit_header() {
    std::string h;
    const std::string guard = "KFORGE_GENERATED_" + cls_ + "_CUDA_H_";
    h += "#ifndef " + guard + "\n#define " + guard + "\n\n";
    h += "#include <cuda_runtime.h>\n\n#include <array>\n#include <cstddef>\n#include <cstdint>\n";
    if (gemm_.any() || rows_.any()) h += "#include <memory>\n";
    h += "#include <string_view>\n\n";
    h += "#include \"kforge_cuda_runtime.h\"\n#include \"kforge_runtime.h\"\n\n";
    h += fmt::format("// The program `{}` ({}) on a CUDA device: {} fused kernel launch{} per run(){}.\n//\n", p_.name,
                     banner_input_path(o_.codegen.program_path, o_.codegen.output_dir + "/" + cls_ + ".h"), plan_.groups.size(), plan_.groups.size() == 1 ? "" : "es",
                     cuda_.cuda_graph ? ", replayed as one CUDA graph per input-dims set" : "");
    h += gemm_.header_summary();
    for (const passes::ProgramInput& in : p_.inputs) {
      h += fmt::format("//   input      {}: {} {}\n", in.name, ir::dtype_name(in.dtype), shape_text(p_.values[in.value].dims));
    }
    for (const passes::ProgramParameter& pa : p_.parameters) {
      const auto& v = p_.values[pa.value];
      h += fmt::format("//   parameter  {}: {} {}\n", pa.name, ir::dtype_name(v.dtype), shape_text(v.dims));
    }
    for (const passes::ProgramOutput& out : p_.outputs) {
      const auto& v = p_.values[out.value];
      h += fmt::format("//   output     {}: {} {}\n", out.name, ir::dtype_name(v.dtype), shape_text(v.dims));
    }
    h += "//\n// Every tensor is device memory (place GPUPlace()). run() enqueues the kernels on stream() and returns\n"
         "// without waiting: call synchronize() (or sync the stream) before reading the outputs. Outputs are\n"
         "// allocated with cudaMalloc only when they have no data or other dims. One call at a time per object.\n";
    if (cuda_.cuda_graph) {
      h += "// --cuda-graph: the first run() for a set of input dims captures the launches into a CUDA graph; later\n"
           "// runs replay it with one cudaGraphLaunch. Pass the same input/output tensors to keep replaying: other\n"
           "// device pointers make run() capture again and update the graph in place (correct, but slower).\n";
    }
    h += "class " + cls_ + " {\n public:\n";
    h += fmt::format("  static constexpr size_t kNumInputs = {};\n", p_.inputs.size());
    h += fmt::format("  static constexpr size_t kNumParameters = {};\n", p_.parameters.size());
    h += fmt::format("  static constexpr size_t kNumOutputs = {};\n", p_.outputs.size());
    h += fmt::format("  static constexpr size_t kNumLaunches = {};\n", plan_.groups.size());
    auto names = [](auto& items) {
      std::string s;
      for (size_t i = 0; i < items.size(); ++i) s += (i ? ", " : "") + cpp_string(items[i].name);
      return s;
    };
    h += fmt::format("  static constexpr std::array<const char*, kNumInputs> kInputNames = {{{}}};\n", names(p_.inputs));
    h += fmt::format("  static constexpr std::array<const char*, kNumOutputs> kOutputNames = {{{}}};\n\n", names(p_.outputs));
    h += "  " + cls_ + "();\n  ~" + cls_ + "();\n";
    h += "  " + cls_ + "(const " + cls_ + "&) = delete;\n  " + cls_ + "& operator=(const " + cls_ + "&) = delete;\n\n";
    h += "  // Binds the parameter `name` (its name in the program): a device tensor that stays valid while used.\n";
    h += "  kforge::Status bind_parameter(std::string_view name, const kforge::Tensor& value);\n";
    h += "  kforge::Status run(" + run_params() + ");\n";
    h += "  // The same with inputs and outputs in kInputNames / kOutputNames order.\n";
    h += "  kforge::Status run(kforge::TensorList inputs, kforge::MutableTensorList outputs);\n\n";
    h += "  // The stream run() launches on (default: one the object creates; cudaStreamLegacy is not capturable).\n";
    h += "  void set_stream(cudaStream_t stream) { stream_ = stream; }\n";
    h += "  cudaStream_t stream() const { return stream_; }\n";
    h += "  kforge::Status synchronize();\n";
    if (cuda_.cuda_graph) h += "  // Graph captures so far (one per input-dims set, plus one per change of pointers).\n"
                               "  size_t graph_captures() const { return graphs_.captures(); }\n";
    h += "\n private:\n";
    h += fmt::format("  struct Bindings {{\n    std::array<void*, {}> buffers{{}};\n    std::array<int64_t, {}> symbols{{}};\n  }};\n",
                     std::max<size_t>(1, p_.buffers.size()), std::max<size_t>(1, p_.symbols.size()));
    h += "  kforge::Status enqueue(const Bindings& b);\n";
    if (!p_.constants.empty()) h += "  kforge::Status upload_constants();\n";
    h += "\n  cudaStream_t stream_ = nullptr;\n  bool own_stream_ = false;\n";
    h += "  kforge::DeviceMemory workspace_;\n";
    if (!p_.constants.empty()) h += "  kforge::DeviceMemory constants_;\n  bool constants_ready_ = false;\n";
    if (!p_.parameters.empty()) {
      h += fmt::format("  std::array<kforge::Tensor, {}> parameters_;\n  std::array<bool, {}> bound_{{}};\n",
                       p_.parameters.size(), p_.parameters.size());
    }
    if (cuda_.cuda_graph) h += "  kforge::GraphCache graphs_;\n";
    h += gemm_.header_members();
    h += rows_.header_members();
    h += "};\n\n#endif  // " + guard + "\n";
    return h;
  }

  std::string run_params() const {
    std::string s;
    for (size_t i = 0; i < p_.inputs.size(); ++i) s += (i ? ", " : "") + std::string("const kforge::Tensor& ") + input_ident(i);
    for (size_t i = 0; i < p_.outputs.size(); ++i) {
      s += (s.empty() ? "" : ", ") + std::string("kforge::Tensor* ") + output_ident(i);
    }
    return s;
  }

  std::string constants_code(std::vector<std::string>& offsets) {
    std::string tables, upload;
    size_t offset = 0;
    for (size_t i = 0; i < p_.constants.size(); ++i) {
      const passes::ConstantData& c = p_.constants[i];
      // float16 / bfloat16 constants are uploaded as their bits, rounded to nearest even here, at generation
      // time: the host code needs no cuda_fp16.h / cuda_bf16.h conversions, and the bits are what every run uses.
      const bool half = c.dtype == ir::DataType::kFloat16 || c.dtype == ir::DataType::kBFloat16;
      std::optional<std::string> t = half ? std::optional<std::string>("uint16_t") : constant_element_type(c.dtype);
      if (!t) {
        diags_.error(c.loc, "--target cuda: a constant of dtype " + std::string(ir::dtype_name(c.dtype)) +
                                " cannot be uploaded yet");
        offsets.push_back("0");
        continue;
      }
      const int64_t numel = c.numel();
      const size_t bytes = static_cast<size_t>(numel) * ir::dtype_size(c.dtype);
      offsets.push_back(std::to_string(offset));
      const bool floating = ir::is_floating(c.dtype);
      auto element = [&](int64_t k) {
        if (half) return fmt::format("0x{:04x}", ir::half_bits_from_double(c.dtype, c.float_at(k)));
        if (floating) return fmt::format("static_cast<{}>({:.17g})", *t, c.float_at(k));
        return fmt::format("static_cast<{}>({})", *t, c.int_at(k));
      };
      const int64_t stored = c.splat ? 1 : numel;
      if (half) tables += fmt::format("// {} bits (rounded to nearest even by kforge)\n", ir::dtype_name(c.dtype));
      tables += fmt::format("const {} kConstant{}[] = {{", *t, i);
      for (int64_t k = 0; k < stored; ++k) tables += (k ? ", " : "") + element(k);
      tables += "};\n";
      upload += fmt::format("  for (int64_t k = 0; k < {}; ++k) reinterpret_cast<{}*>(host.data() + {})[k] = kConstant{}[{}];\n",
                            numel, *t, offset, i, c.splat ? "0" : "k");
      offset += (bytes + 63) / 64 * 64;
    }
    std::string code = tables + "\n}  // namespace\n\n";
    code += "kforge::Status " + cls_ + "::upload_constants() {\n";
    code += fmt::format("  std::vector<unsigned char> host({});\n", std::max<size_t>(offset, 64));
    code += upload;
    code += "  KFORGE_RETURN_IF_ERROR(constants_.reserve(host.size()));\n";
    code += "  KFORGE_CUDA_RETURN_IF_ERROR(cudaMemcpy(constants_.data(), host.data(), host.size(), cudaMemcpyHostToDevice));\n";
    code += "  constants_ready_ = true;\n  return kforge::Status::OK();\n}\n\nnamespace {\n";
    return code;
  }

  std::string group_description(const FusedGroup& g) const {
    std::string s = "group " + std::to_string(g.index) + " (" + g.label + ":";
    for (size_t k = 0; k < g.calls.size(); ++k) {
      const passes::KernelCall& call = p_.calls[g.calls[k]];
      s += (k ? ", " : " ") + call.pir_name + " at " + where(call.loc);
    }
    return s + ")";
  }

  std::string emit_host() {
    std::string c;
    std::set<std::string> std_headers = {"cstring", "vector"};
    for (const std::string& h : gemm_.host_std_includes()) std_headers.insert(h);
    c += "#include \"" + cls_ + ".h\"\n\n";
    for (const std::string& h : std_headers) c += "#include <" + h + ">\n";
    // The launchers' declarations name __half / __nv_bfloat16 when a fused group stores them.
    const std::string includes = gemm_.host_includes() + (fused_half() ? "#include \"kforge_half.cuh\"\n" : "") +
                                 rows_.host_includes();
    c += includes.empty() ? "\n" : "\n" + includes + "\n";
    c += "// The launchers of " + cls_ + "_kernels.cu: each launches one fused group and returns cudaGetLastError().\n";
    for (const auto& [index, l] : launchers_) {
      c += l.declaration + "\n";
      if (!l.variant_declaration.empty()) c += l.variant_declaration + "\n";
    }
    c += "\nnamespace {\n\n";
    c += "[[maybe_unused]] int64_t kforge_floor_div(int64_t a, int64_t b) {\n"
         "  const int64_t q = a / b;\n  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;\n}\n"
         "[[maybe_unused]] int64_t kforge_ceil_div(int64_t a, int64_t b) { return -kforge_floor_div(-a, b); }\n\n";
    c += "// What each launch is, for error messages: the group, its ops and their places in the program.\n";
    c += "[[maybe_unused]] const char* const kLaunchNames[] = {\n";
    for (const FusedGroup& g : plan_.groups) c += "    " + cpp_string(group_description(g)) + ",\n";
    if (plan_.groups.empty()) c += "    \"\",\n";
    c += "};\n\n";
    std::vector<std::string> const_offsets;
    std::string constants = p_.constants.empty() ? "" : constants_code(const_offsets);
    c += constants;
    c += "[[maybe_unused]] kforge::Status launch_failed(size_t index, cudaError_t error) {\n";
    c += "  return kforge::Status::Error(\"" + cls_ + ": \", kLaunchNames[index], \": \", cudaGetErrorName(error), \" (\",\n"
         "                               cudaGetErrorString(error), \")\");\n}\n\n";
    c += "[[maybe_unused]] kforge::Status prepare_output(kforge::Tensor* out, const char* name, kforge::DataType dtype,\n"
         "                                               std::initializer_list<int64_t> dims) {\n"
         "  if (out == nullptr) return kforge::Status::Error(\"" + cls_ + ": output '\", name, \"' is null\");\n"
         "  kforge::Tensor want;\n  want.dtype = dtype;\n  KFORGE_RETURN_IF_ERROR(want.set_dims(dims));\n"
         "  if (out->data != nullptr && out->dtype == dtype && out->place.backend == kforge::Backend::kGPU &&\n"
         "      out->same_dims(want)) {\n    return kforge::Status::OK();\n  }\n"
         "  kforge::install_cuda_allocator();\n  *out = want;\n  out->place = kforge::GPUPlace();\n  return out->allocate();\n}\n\n";
    c += gemm_.failure_helper();
    c += "}  // namespace\n\n";
    c += gemm_.definitions();
    c += rows_.definitions();

    // Constructor, destructor, stream.
    c += cls_ + "::" + cls_ + "() = default;\n\n";
    c += cls_ + "::~" + cls_ + "() {\n  if (own_stream_) static_cast<void>(cudaStreamDestroy(stream_));\n}\n\n";
    c += "kforge::Status " + cls_ + "::synchronize() {\n"
         "  if (stream_ != nullptr) KFORGE_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(stream_));\n"
         "  return kforge::Status::OK();\n}\n\n";

    c += bind_parameter_code();

    // run(): checks, symbols, outputs, workspace, bindings, then enqueue (directly or through the graph).
    c += "kforge::Status " + cls_ + "::run(" + run_params() + ") {\n";
    for (size_t i = 0; i < p_.inputs.size(); ++i) {
      const passes::ProgramInput& in = p_.inputs[i];
      const auto& v = p_.values[in.value];
      const std::string x = input_ident(i);
      std::string cond = fmt::format("{}.dtype != {} || {}.ndim != {} || {}.place.backend != kforge::Backend::kGPU",
                                     x, passes::cpp_dtype(in.dtype), x, v.dims.size(), x);
      for (size_t d = 0; d < v.dims.size(); ++d) {
        if (v.dims[d].is_constant()) cond += fmt::format(" || {}.dims[{}] != {}", x, d, v.dims[d].to_string());
        else cond += fmt::format(" || {}.dims[{}] < 0", x, d);
      }
      c += fmt::format("  if ({}) {{\n    return kforge::Status::Error(\"{}: input '{}' must be a GPU tensor {} {}, got \", {}.dtype, \" \", {}.dims_string(),\n"
                       "                                 {}.place.backend == kforge::Backend::kGPU ? \"\" : \" not on the GPU\");\n  }}\n",
                       cond, cls_, in.name, ir::dtype_name(in.dtype), shape_text(v.dims), x, x, x);
    }
    for (size_t k = 0; k < p_.parameters.size(); ++k) {
      c += fmt::format("  if (!bound_[{}]) return kforge::Status::Error(\"{}: parameter '{}' is not bound\");\n", k, cls_,
                       p_.parameters[k].name);
    }
    for (const passes::Symbol& s : p_.symbols) {
      c += fmt::format("  [[maybe_unused]] const int64_t s{} = {}.dims[{}];\n", s.id, input_ident(s.input), s.axis);
    }
    c += gemm_.run_checks();
    for (size_t i = 0; i < p_.outputs.size(); ++i) {
      const auto& v = p_.values[p_.outputs[i].value];
      c += fmt::format("  KFORGE_RETURN_IF_ERROR(prepare_output({}, {}, {}, {}));\n", output_ident(i),
                       cpp_string(p_.outputs[i].name), passes::cpp_dtype(v.dtype), dims_list(v.dims));
    }
    c += "  if (stream_ == nullptr) {\n    KFORGE_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));\n"
         "    own_stream_ = true;\n  }\n";
    c += gemm_.run_setup();
    c += rows_.run_setup();
    if (!p_.constants.empty()) c += "  if (!constants_ready_) KFORGE_RETURN_IF_ERROR(upload_constants());\n";
    c += fmt::format("  KFORGE_RETURN_IF_ERROR(workspace_.reserve(static_cast<size_t>({}) + 64));\n",
                     p_.plan.workspace_bytes.to_string());
    c += "  Bindings kforge_b;\n";
    for (const passes::Symbol& s : p_.symbols) c += fmt::format("  kforge_b.symbols[{}] = s{};\n", s.id, s.id);
    for (const Buffer& buf : p_.buffers) {
      std::string ptr;
      switch (buf.kind) {
        case BufferKind::kInput: ptr = "const_cast<void*>(" + input_ident(buf.role_index) + ".data)"; break;
        case BufferKind::kParameter: ptr = fmt::format("parameters_[{}].data", buf.role_index); break;
        case BufferKind::kConstant: ptr = fmt::format("constants_.data() + {}", const_offsets.at(buf.role_index)); break;
        case BufferKind::kOutput: ptr = output_ident(buf.role_index) + "->data"; break;
        case BufferKind::kWorkspace:
          ptr = fmt::format("workspace_.data() + static_cast<size_t>({})", buf.offset.to_string());
          break;
      }
      c += fmt::format("  kforge_b.buffers[{}] = {};\n", buf.index, ptr);
    }
    if (cuda_.cuda_graph) {
      c += "  const std::vector<int64_t> kforge_key(kforge_b.symbols.begin(), kforge_b.symbols.end());\n";
      c += "  const std::vector<const void*> kforge_pointers(kforge_b.buffers.begin(), kforge_b.buffers.end());\n";
      // One graph-cache lookup per run() decides whether to prepare (choices made, cuBLASLt plans built).
      std::string prepare;
      for (const std::string& statement : {gemm_.before_capture(), rows_.before_capture()}) {
        if (!statement.empty()) prepare += "    " + statement + "\n";
      }
      if (!prepare.empty()) {
        c += "  // A capture must not benchmark (it synchronises) nor build cuBLASLt plans: choose and plan first.\n";
        c += "  if (graphs_.needs_capture(kforge_key, kforge_pointers)) {\n" + prepare + "  }\n";
      }
      c += "  return graphs_.launch(kforge_key, kforge_pointers, stream_, [&] { return enqueue(kforge_b); });\n}\n\n";
    } else {
      c += "  return enqueue(kforge_b);\n}\n\n";
    }
    c += run_generic();
    c += enqueue_code();
    return c;
  }

  std::string bind_parameter_code() {
    std::string c = "kforge::Status " + cls_ + "::bind_parameter(std::string_view name, const kforge::Tensor& value) {\n";
    if (p_.parameters.empty()) c += "  static_cast<void>(value);\n";
    for (size_t k = 0; k < p_.parameters.size(); ++k) {
      const auto& v = p_.values[p_.parameters[k].value];
      std::string cond = fmt::format("value.dtype != {} || value.ndim != {} || value.place.backend != kforge::Backend::kGPU",
                                     passes::cpp_dtype(v.dtype), v.dims.size());
      for (size_t d = 0; d < v.dims.size(); ++d) {
        if (v.dims[d].is_constant()) cond += fmt::format(" || value.dims[{}] != {}", d, v.dims[d].to_string());
      }
      c += fmt::format("  if (name == {}) {{\n    if ({}) {{\n      return kforge::Status::Error(\"{}: parameter '{}' must be a GPU tensor {} {}, got \", value.dtype, \" \", value.dims_string());\n    }}\n"
                       "    parameters_[{}] = value;\n    bound_[{}] = true;\n    return kforge::Status::OK();\n  }}\n",
                       cpp_string(p_.parameters[k].name), cond, cls_, p_.parameters[k].name, ir::dtype_name(v.dtype),
                       shape_text(v.dims), k, k);
    }
    c += "  return kforge::Status::Error(\"" + cls_ + ": no parameter named '\", name, \"'\");\n}\n\n";
    return c;
  }

  std::string run_generic() {
    std::string c = "kforge::Status " + cls_ + "::run(kforge::TensorList inputs, kforge::MutableTensorList outputs) {\n";
    c += "  if (inputs.size != kNumInputs || outputs.size != kNumOutputs) {\n";
    c += "    return kforge::Status::Error(\"" + cls_ + ": run() takes \", kNumInputs, \" inputs and \", kNumOutputs, \" outputs, got \",\n"
         "                                 inputs.size, \" and \", outputs.size);\n  }\n";
    std::string args;
    for (size_t i = 0; i < p_.inputs.size(); ++i) args += (i ? ", " : "") + fmt::format("inputs[{}]", i);
    for (size_t i = 0; i < p_.outputs.size(); ++i) args += (args.empty() ? "" : ", ") + fmt::format("outputs.items[{}]", i);
    c += "  return run(" + args + ");\n}\n\n";
    return c;
  }

  std::string typed_buffer(uint32_t value, const std::string& type, bool is_const) const {
    return fmt::format("static_cast<{}{}*>(b.buffers[{}])", is_const ? "const " : "", type, p_.values[value].buffer);
  }

  std::string enqueue_code() {
    std::string c = "kforge::Status " + cls_ + "::enqueue(const Bindings& b) {\n";
    for (const passes::Symbol& s : p_.symbols) c += fmt::format("  [[maybe_unused]] const int64_t s{} = b.symbols[{}];\n", s.id, s.id);
    for (size_t k = 0; k < plan_.groups.size(); ++k) {
      const FusedGroup& g = plan_.groups[k];
      if (g.kind == passes::GroupKind::kGemm) {
        c += gemm_.enqueue(g);
        continue;
      }
      auto launcher = launchers_.find(g.index);
      if (launcher == launchers_.end()) continue;  // reported by emit_cuda_group
      if (rows_.site(g) != nullptr) {
        c += rows_.enqueue(g);
        continue;
      }
      std::string args;
      for (const passes::GroupInput& in : g.inputs) args += typed_buffer(in.value, *cuda_scalar_type(in.storage), true) + ", ";
      for (const passes::GroupStore& st : g.stores) args += typed_buffer(st.value, *cuda_scalar_type(st.storage), false) + ", ";
      args += "static_cast<int64_t>(" + g.outer.to_string() + "), static_cast<int64_t>(" + g.inner.to_string() + "), stream_";
      c += fmt::format("  // {}\n  if (cudaError_t e = {}({}); e != cudaSuccess) return launch_failed({}, e);\n",
                       group_description(g), launcher->second.launcher, args, k);
    }
    for (size_t i = 0; i < p_.outputs.size(); ++i) {
      const passes::ProgramOutput& out = p_.outputs[i];
      if (!out.copy) continue;
      const auto& v = p_.values[out.value];
      c += fmt::format("  KFORGE_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(b.buffers[{}], b.buffers[{}], static_cast<size_t>({}), "
                       "cudaMemcpyDeviceToDevice, stream_));\n",
                       output_buffer(i),
                       v.buffer, v.bytes().to_string());
    }
    c += "  return kforge::Status::OK();\n}\n";
    return c;
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
  CudaGemmCode gemm_;
  CudaRowVariantCode rows_;
};

std::string banner_for(const ProgramFilesOptions& options, const std::string& path) {
  BannerInfo info;
  info.tool_version = options.tool_version;
  info.version_stamp = options.version_stamp;
  info.inputs = options.banner_inputs;
  info.output_path = path;
  return make_banner(info);
}

}  // namespace

bool generate_cuda_program_files(const passes::LoweredProgram& program, const passes::FusionPlan& plan,
                                 tmpl::Environment& env, const ProgramFilesOptions& options,
                                 const CudaFilesOptions& cuda, OutputSet& outputs) {
  DiagnosticEngine& diags = env.diags();
  std::string header, host, kernels;
  CudaHostEmitter emitter(program, plan, env.sources(), options, cuda, diags);
  if (!emitter.emit(header, host, kernels)) return false;
  const std::string& dir = options.codegen.output_dir;
  const std::string& name = options.codegen.class_name;
  std::vector<std::pair<std::string, std::string>> files = {
      {name + ".h", header}, {name + ".cu", host}, {name + "_kernels.cu", kernels}};
  std::vector<const char*> headers = {kRuntimeHeaderTemplate, kCudaRuntimeHeaderTemplate, kCudaFusedHeaderTemplate};
  for (const char* h : emitter.extra_headers()) headers.push_back(h);
  for (const char* tmpl_path : headers) {
    const std::optional<std::string_view> text = env.read_verbatim(tmpl_path);
    if (!text) return false;
    const std::string base = std::string(tmpl_path).substr(std::string(tmpl_path).find('/') + 1);
    files.emplace_back(base, *text);
  }
  bool ok = true;
  for (const auto& [file, text] : files) {
    const std::string path = join_path(dir, file);
    ok = outputs.add(path, banner_for(options, path) + text) && ok;
  }
  if (!ok) {
    diags.error({}, "--name '" + name + "' makes two outputs with the same path");
    return false;
  }
  return true;
}

}  // namespace kforge::codegen
