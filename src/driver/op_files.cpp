#include "driver/op_files.h"

namespace kforge::driver {

void add_op_file_options(CLI::App& command, OpFileOptions& options) {
  command.add_option("--ops", options.ops, "Op YAML file; repeat to load several, in order")
      ->required()
      ->type_name("FILE")
      ->allow_extra_args(false);
  command
      .add_option("--sparse-ops", options.sparse_ops,
                  "Sparse op YAML file (Paddle's sparse_ops.yaml, sparse_backward.yaml): its ops are separate "
                  "from the dense ones of the same name and become the PIR ops <kernel>_sp; repeatable, loaded "
                  "in command-line order with the --ops files")
      ->type_name("FILE")
      ->allow_extra_args(false);
}

std::vector<opdef::OpFile> op_files_in_order(const CLI::App& command, const OpFileOptions& options) {
  // CLI11 collects each option's values separately; parse_order() has one entry per occurrence, which
  // restores the interleaving (each occurrence carries exactly one file: allow_extra_args(false)).
  const CLI::Option* dense = command.get_option("--ops");
  const CLI::Option* sparse = command.get_option("--sparse-ops");
  std::vector<opdef::OpFile> files;
  size_t next_dense = 0, next_sparse = 0;
  for (const CLI::Option* opt : command.parse_order()) {
    if (opt == dense && next_dense < options.ops.size()) {
      files.push_back({options.ops[next_dense++], opdef::OpFileKind::kDense});
    } else if (opt == sparse && next_sparse < options.sparse_ops.size()) {
      files.push_back({options.sparse_ops[next_sparse++], opdef::OpFileKind::kSparse});
    }
  }
  // Values that did not come through parse_order (a config file, an environment variable) go last.
  while (next_dense < options.ops.size()) files.push_back({options.ops[next_dense++], opdef::OpFileKind::kDense});
  while (next_sparse < options.sparse_ops.size()) {
    files.push_back({options.sparse_ops[next_sparse++], opdef::OpFileKind::kSparse});
  }
  return files;
}

std::vector<std::string> op_file_paths(const std::vector<opdef::OpFile>& files) {
  std::vector<std::string> paths;
  for (const opdef::OpFile& f : files) paths.push_back(f.path);
  return paths;
}

}  // namespace kforge::driver
