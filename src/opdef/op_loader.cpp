#include "opdef/op_loader.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <sstream>
#include <utility>

#include "opdef/op_entry.h"
#include "opdef/op_syntax.h"
#include "opdef/yaml_reader.h"
#include "opdef/yaml_tree.h"
#include "support/input_file.h"

namespace kforge::opdef {

const std::vector<std::string>& known_op_keys() {
  static const std::vector<std::string> keys = {
      "op",
      "backward_op",
      "args",
      "output",
      "infer_meta",
      "infer_meta.func",
      "infer_meta.param",
      "infer_meta.spmd_rule",
      "infer_meta.local_shape",
      "infer_meta.global_shape",
      "kernel",
      "kernel.func",
      "kernel.param",
      "kernel.data_type",
      "kernel.layout",
      "kernel.backend",
      "kernel.force_backend",
      "forward",
      "backward",
      "interfaces",
      "inplace",
      "traits",
      "optional",
      "composite",
      "no_need_buffer",
      "data_transform",
      "data_transform.skip_transform",
      "data_transform.support_trans_dtype",
      "intermediate",
      "invoke",
      "support_dygraph_mode",
      "support_tensor",
      "view",
      "compute",
      "reduce",
      "reduce.init",
      "reduce.combine",
      "reduce.finalize",
      "reduce.axis",
      "pattern",
      "row_pattern",
  };
  return keys;
}

const std::vector<std::string>& extension_keys() {
  static const std::vector<std::string> keys = {"compute", "reduce", "pattern", "row_pattern"};
  return keys;
}

namespace {

// The top-level keys (those without a '.').
const std::vector<std::string>& top_level_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> out;
    for (const std::string& k : known_op_keys()) {
      if (k.find('.') == std::string::npos) out.push_back(k);
    }
    return out;
  }();
  return keys;
}

bool is_extension_key(std::string_view key) {
  const auto& ext = extension_keys();
  return std::find(ext.begin(), ext.end(), key) != ext.end();
}

const KernelFunc* first_sparse_kernel(const std::vector<KernelFunc>& funcs) {
  for (const KernelFunc& f : funcs) {
    if (f.takes_sparse()) return &f;
  }
  return nullptr;
}

// The first kernel of an entry's kernel.func that takes sparse tensors, read from the raw entry (whose
// definition is not loaded because it is a redefinition); errors in it do not matter here.
std::optional<std::pair<std::string, SourceLoc>> sparse_kernel_of_entry(const YamlContext& ctx,
                                                                       const KeyTable& keys) {
  const KeyTable::Entry* kernel = keys.find("kernel");
  if (!kernel || !kernel->value->is_map()) return std::nullopt;
  const YamlNode& map = *kernel->value;
  for (size_t i = 0; i < map.map_size(); ++i) {
    if (map.key(i).value != "func" || !map.value_at(i).is_scalar()) continue;
    std::ostringstream discarded;
    DiagnosticEngine quiet(ctx.sources, discarded);
    const std::optional<std::vector<KernelFunc>> funcs = parse_kernel_funcs(ctx.text(map.value_at(i)), quiet);
    if (!funcs) continue;
    if (const KernelFunc* f = first_sparse_kernel(*funcs)) return std::make_pair(f->name, f->loc);
  }
  return std::nullopt;
}

}  // namespace

bool OpLoader::add_file(const std::string& path, OpFileKind kind) {
  const std::optional<uint32_t> file =
      load_input_file(sources_, diags_, path, kind == OpFileKind::kSparse ? "sparse op file" : "op file");
  return file && add_buffer(*file, kind);
}

bool OpLoader::add_buffer(uint32_t file, OpFileKind kind) {
  const size_t errors_before = diags_.error_count();
  const size_t ops_before = library_.ops_.size();
  library_.files_.push_back(file);
  std::vector<YamlNode> documents;
  if (!parse_yaml(sources_, file, diags_, documents)) return false;
  const YamlContext ctx{sources_, file, diags_};
  for (const YamlNode& doc : documents) {
    if (doc.is_null()) continue;
    if (!doc.is_sequence()) {
      diags_.error(ctx.loc(doc), fmt::format("an op file must be a list of op entries ('- op : name'), not {}",
                                             doc.kind_name()));
      continue;
    }
    for (const YamlNode& entry : doc.children) load_entry(ctx, entry, kind);
  }
  if (kind == OpFileKind::kSparse) {
    // A dense file loaded as sparse renames all its ops (`_sp`) without any other sign: say so.
    bool any_kernel = false;
    for (size_t i = ops_before; i < library_.ops_.size(); ++i) {
      const Op& op = library_.ops_[i];
      if (!op.kernel) continue;
      any_kernel = true;
      if (first_sparse_kernel(op.kernel->funcs)) return diags_.error_count() == errors_before;
    }
    if (any_kernel) {
      diags_.warning({file, 0}, "no op of this sparse op file has a sparse kernel ({... sparse_coo ...} or "
                                "{... sparse_csr ...}); dense op files are loaded with --ops");
    }
  }
  return diags_.error_count() == errors_before;
}

void OpLoader::load_entry(const YamlContext& ctx, const YamlNode& entry, OpFileKind kind) {
  if (!entry.is_map()) {
    diags_.error(ctx.loc(entry), fmt::format("expected an op entry (a mapping that starts with 'op :'), found {}",
                                             entry.kind_name()));
    return;
  }
  // The op name, for messages about the other keys; it is read properly below.
  std::string where = "op entry";
  for (size_t i = 0; i < entry.map_size(); ++i) {
    const YamlNode& k = entry.key(i);
    if ((k.value == "op" || k.value == "backward_op") && entry.value_at(i).is_scalar()) {
      where = fmt::format("op '{}'", entry.value_at(i).value);
    }
  }
  const KeyTable keys(entry, ctx, top_level_keys(), "", where);
  const KeyTable::Entry* op_key = keys.find("op");
  const KeyTable::Entry* backward_key = keys.find("backward_op");
  if (op_key && backward_key) {
    diags_.error(ctx.loc(*backward_key->key_node), "an op entry has either 'op' or 'backward_op', not both");
    return;
  }
  const KeyTable::Entry* name_key = op_key ? op_key : backward_key;
  if (!name_key) {
    diags_.error(ctx.loc(entry), "op entry has no 'op' key naming the op");
    return;
  }
  const YamlNode* name_node = ctx.scalar(*name_key->key_node, *name_key->value, name_key->key);
  if (!name_node) return;
  const LocatedText name_text = ctx.text(*name_node);
  TextCursor cursor(name_text);
  const std::string_view name = cursor.identifier();
  cursor.skip_spaces();
  if (name.empty() || !cursor.at_end()) {
    diags_.error(name.empty() ? name_text.loc(0) : cursor.loc(),
                 fmt::format("bad op name '{}': expected a name like 'relu'", name_node->value));
    return;
  }
  const SourceLoc name_loc = name_text.loc(0);

  bool only_extensions = true;
  for (const KeyTable::Entry& e : keys.entries()) {
    if (&e != name_key && !is_extension_key(e.key)) only_extensions = false;
  }

  auto& defined = defined_[static_cast<int>(kind)];
  auto existing = defined.find(std::string(name));
  if (existing != defined.end()) {
    if (!only_extensions) {
      report_redefinition(ctx, keys, name, name_loc, existing->second.loc, kind);
      return;
    }
    if (existing->second.index == SIZE_MAX) return;  // the definition had errors, already reported
    read_op_extensions(ctx, keys, library_.ops_[existing->second.index]);
    return;
  }
  if (only_extensions && keys.entries().size() > 1) {
    std::vector<std::string> names;
    for (const auto& [n, def] : defined) names.push_back(n);
    std::sort(names.begin(), names.end());  // deterministic suggestion on ties
    diags_.error(name_loc, fmt::format("extension keys for op '{}', which no earlier entry defines{}", name,
                                       did_you_mean(name, names)));
    return;
  }

  Definition& def = defined[std::string(name)];
  def.loc = name_loc;
  Op op;
  op.name = std::string(name);
  op.is_backward = name_key == backward_key;
  op.sparse = kind == OpFileKind::kSparse;
  op.loc = name_loc;
  op.file = ctx.file;
  bool ok = read_op_definition(ctx, keys, op);
  ok = read_op_extensions(ctx, keys, op) && ok;
  if (!ok) return;
  def.index = library_.ops_.size();
  library_.ops_.push_back(std::move(op));
}

void OpLoader::report_redefinition(const YamlContext& ctx, const KeyTable& keys, std::string_view name,
                                   SourceLoc loc, SourceLoc previous, OpFileKind kind) {
  const char* what = kind == OpFileKind::kSparse ? "sparse op" : "op";
  Diagnostic d{Severity::kError, loc, fmt::format("redefinition of {} '{}'", what, name), {}};
  d.note("previous definition is here", previous);
  // The usual cause: Paddle's sparse_ops.yaml given as a dense file, whose `abs` repeats the dense one.
  if (kind == OpFileKind::kDense) {
    if (std::optional<std::pair<std::string, SourceLoc>> sparse = sparse_kernel_of_entry(ctx, keys)) {
      d.note(fmt::format("kernel '{}' takes sparse tensors: a sparse op file (Paddle's sparse_ops.yaml, "
                         "sparse_backward.yaml) is loaded with --sparse-ops, where its ops have their own names",
                         sparse->first),
             sparse->second);
    }
  }
  diags_.report(std::move(d));
}

OpLibrary OpLoader::finish() && {
  library_.index();
  return std::move(library_);
}

OpLibrary load_op_library(const std::vector<std::string>& paths, SourceManager& sources, DiagnosticEngine& diags) {
  OpLoader loader(sources, diags);
  for (const std::string& path : paths) loader.add_file(path);
  return std::move(loader).finish();
}

OpLibrary load_op_library(const std::vector<OpFile>& files, SourceManager& sources, DiagnosticEngine& diags) {
  OpLoader loader(sources, diags);
  for (const OpFile& f : files) loader.add_file(f.path, f.kind);
  return std::move(loader).finish();
}

}  // namespace kforge::opdef
