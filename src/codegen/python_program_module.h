// The Python module of `kforge compile ... --python MODULE`, for both targets: DIR/NAME_python.cc from
// templates/python/program_module.cc.j2 (the generated class as a Python class) and the runtime headers it
// includes, copied beside it: kforge_python.h and its parts; with --target cuda also kforge_python_cuda.h (the
// class on the shared model base) and kforge_python_device.h (device inputs and outputs, streams), and kforge_params.h (the module reads the .pdiparams and binds the parameters on the device,
// which the CUDA class leaves to its caller). docs/python.md documents the module.
#pragma once

#include <array>

#include "codegen/program_codegen.h"
#include "output/output_set.h"
#include "template/environment.h"
#include "template/value.h"

namespace kforge::codegen {

/// Which class the module wraps: the CPU class (program/program.h.j2) or the CUDA class (program/cuda/).
enum class PythonModuleTarget { kCpu, kCuda };

/// Renders the module from `class_context` (the context the class's own templates were rendered with, which
/// has the keys the module template reads: class_name, header, program_name, inputs, outputs, and for CUDA
/// parameters[{name, dtype, rank, dims, dtype_name, shape_text}] and parameter_file_order) and adds its files to
/// `outputs`. Returns false after reporting errors (a path clash is reported by the caller).
bool add_python_program_module(tmpl::Environment& env, const tmpl::Value& class_context, PythonModuleTarget target,
                               const ProgramFilesOptions& options, OutputSet& outputs, bool* path_clash);

/// The CUDA half of the runtime the module includes (--target cuda).
inline constexpr std::array<const char*, 2> kPythonCudaHeaderTemplates = {"runtime/kforge_python_cuda.h",
                                                                          "runtime/kforge_python_device.h"};

}  // namespace kforge::codegen
