// The flags of `kforge compile` (CLI11 declarations and help) and the values they are parsed into. What the
// values mean for the pipeline is compile_command.cpp's.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "driver/common_options.h"
#include "driver/op_files.h"

namespace kforge::driver {

/// The compile command's flags, as given.
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

/// Adds the compile command's arguments and flags to `cmd` (its footer included), parsed into `opts`.
void add_compile_options(CLI::App& cmd, CompileOptions& opts);

}  // namespace kforge::driver
