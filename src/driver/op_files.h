// The op YAML files of a command: `--ops FILE` (dense op files) and `--sparse-ops FILE` (Paddle's
// sparse_ops.yaml and sparse_backward.yaml), both repeatable, loaded together in command-line order.
//
// Why sparse files are marked on the command line rather than detected: Paddle's generator decides it
// by file name (sparse_ops.parsed.yaml), and the mark changes every name the file defines (`abs` becomes
// the PIR ops pd_op.abs_coo_sp, pd_op.abs_csr_sp) and which attributes are mutable. Backward ops need no
// mark: their entries say `backward_op :`. docs/op-yaml.md describes the rules.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "opdef/op_loader.h"

namespace kforge::driver {

struct OpFileOptions {
  std::vector<std::string> ops;
  std::vector<std::string> sparse_ops;
};

/// Adds --ops (required, repeatable) and --sparse-ops (repeatable) to `command`.
void add_op_file_options(CLI::App& command, OpFileOptions& options);

/// The files in the order they were given, each with its kind; call after parsing.
std::vector<opdef::OpFile> op_files_in_order(const CLI::App& command, const OpFileOptions& options);

/// Their paths in that order (banners, depfile dependencies).
std::vector<std::string> op_file_paths(const std::vector<opdef::OpFile>& files);

}  // namespace kforge::driver
