#include "opdef/op_loader.h"

#include <fmt/format.h>

#include <algorithm>

#include "opdef/op_entry.h"
#include "opdef/op_syntax.h"
#include "opdef/yaml_reader.h"
#include "opdef/yaml_tree.h"

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

}  // namespace

bool OpLoader::add_file(const std::string& path) {
  uint32_t file = 0;
  std::string error;
  if (!sources_.add_file(path, file, error)) {
    diags_.error({}, error);
    return false;
  }
  return add_buffer(file);
}

bool OpLoader::add_buffer(uint32_t file) {
  const size_t errors_before = diags_.error_count();
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
    for (const YamlNode& entry : doc.children) load_entry(ctx, entry);
  }
  return diags_.error_count() == errors_before;
}

void OpLoader::load_entry(const YamlContext& ctx, const YamlNode& entry) {
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

  auto existing = defined_.find(std::string(name));
  if (existing != defined_.end()) {
    if (!only_extensions) {
      Diagnostic d{Severity::kError, name_loc, fmt::format("redefinition of op '{}'", name), {}};
      d.note("previous definition is here", existing->second.loc);
      diags_.report(std::move(d));
      return;
    }
    if (existing->second.index == SIZE_MAX) return;  // the definition had errors, already reported
    read_op_extensions(ctx, keys, library_.ops_[existing->second.index]);
    return;
  }
  if (only_extensions && keys.entries().size() > 1) {
    std::vector<std::string> names;
    for (const auto& [n, def] : defined_) names.push_back(n);
    std::sort(names.begin(), names.end());  // deterministic suggestion on ties
    diags_.error(name_loc, fmt::format("extension keys for op '{}', which no earlier entry defines{}", name,
                                       did_you_mean(name, names)));
    return;
  }

  Definition& def = defined_[std::string(name)];
  def.loc = name_loc;
  Op op;
  op.name = std::string(name);
  op.is_backward = name_key == backward_key;
  op.loc = name_loc;
  op.file = ctx.file;
  bool ok = read_op_definition(ctx, keys, op);
  ok = read_op_extensions(ctx, keys, op) && ok;
  if (!ok) return;
  def.index = library_.ops_.size();
  library_.ops_.push_back(std::move(op));
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

}  // namespace kforge::opdef
