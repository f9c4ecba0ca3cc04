#include "codegen/ops_codegen.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "codegen/cpp_text.h"
#include "codegen/generated_file.h"
#include "codegen/op_api_model.h"
#include "codegen/ops_context.h"
#include "codegen/python_context.h"
#include "codegen/python_ops_model.h"
#include "codegen/program_codegen.h"
#include "codegen/runtime_version.h"
#include "output/banner.h"

namespace kforge::codegen {

namespace {

using tmpl::List;
using tmpl::Value;

std::string shard_name(const OpsCodegenOptions& options, std::string_view kind, uint32_t shard) {
  const std::string base = options.prefix + "_" + std::string(kind);
  if (options.shards <= 1) return join_output_path(options.output_dir, base + ".cc");
  return join_output_path(options.output_dir, base + "_" + std::to_string(shard) + ".cc");
}

std::string upper_identifier(std::string_view text) {
  std::string out = cpp_identifier(text);
  for (char& c : out) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return out;
}

// P_python.cc and the kforge_python*.h it includes (--python MODULE).
bool generate_python_op_module(const OpApiModel& model, tmpl::Environment& env, const OpsCodegenOptions& options,
                               const Value& globals, OutputSet& outputs) {
  const tmpl::Template* module_cc = env.load(kPythonOpsModuleTemplate);
  if (module_cc == nullptr) return false;
  const PyOpModule module = build_python_op_module(model);
  Value ctx = Value::map();
  for (const auto& [key, value] : globals.as_map()) ctx.set(key, value);
  ctx.set("module", options.python_module);
  List functions, skipped;
  for (const PyFunction& fn : module.functions) functions.push_back(python_function_value(fn));
  for (const std::string& s : module.skipped) skipped.emplace_back(s);
  ctx.set("functions", Value(std::move(functions)));
  ctx.set("skipped", Value(std::move(skipped)));
  const std::string cc_path = join_output_path(options.output_dir, options.prefix + "_python.cc");
  std::string text = generated_banner(options, cc_path);
  if (!env.render(*module_cc, ctx, text)) return false;
  std::vector<std::pair<std::string, std::string>> files = {{cc_path, std::move(text)}};
  for (const char* header : kPythonHeaderTemplates) {
    const std::optional<std::string_view> header_text = env.read_verbatim(header);
    if (!header_text) return false;
    const std::string path = join_output_path(options.output_dir, copied_file_name(header));
    files.emplace_back(path, generated_banner(options, path) + std::string(*header_text));
  }
  bool ok = true;
  for (auto& [path, file_text] : files) {
    if (outputs.add(path, std::move(file_text))) continue;
    env.diags().error({}, "two outputs have the path '" + path + "'");
    ok = false;
  }
  return ok;
}

}  // namespace

uint32_t op_shard(std::string_view op_name, uint32_t shards) {
  if (shards <= 1) return 0;
  uint32_t hash = 2166136261u;
  for (unsigned char c : op_name) {
    hash ^= c;
    hash *= 16777619u;
  }
  return hash % shards;
}

std::vector<std::string> op_library_file_names(const OpsCodegenOptions& options) {
  std::vector<std::string> names;
  names.push_back(join_output_path(options.output_dir, options.prefix + "_api.h"));
  names.push_back(join_output_path(options.output_dir, options.prefix + "_decls.h"));
  const uint32_t shards = std::max<uint32_t>(options.shards, 1);
  for (uint32_t i = 0; i < shards; ++i) names.push_back(shard_name(options, "api", i));
  for (uint32_t i = 0; i < shards; ++i) names.push_back(shard_name(options, "args_info", i));
  if (!options.python_module.empty()) {
    names.push_back(join_output_path(options.output_dir, options.prefix + "_python.cc"));
    for (const char* header : kPythonHeaderTemplates) {
      names.push_back(join_output_path(options.output_dir, copied_file_name(header)));
    }
  }
  names.push_back(join_output_path(options.output_dir, "kforge_runtime.h"));
  return names;
}

bool is_valid_namespace(std::string_view text, std::string* why) {
  if (text.empty()) {
    *why = "it is empty";
    return false;
  }
  size_t begin = 0;
  while (true) {
    const size_t sep = text.find("::", begin);
    const std::string_view part = text.substr(begin, sep == std::string_view::npos ? std::string_view::npos : sep - begin);
    if (part.empty() || cpp_identifier(part) != part) {
      *why = "'" + std::string(part) + "' is not a C++ identifier";
      return false;
    }
    if (sep == std::string_view::npos) return true;
    begin = sep + 2;
  }
}

bool generate_op_library_files(const opdef::OpLibrary& library, const opdef::OpCompat* compat, tmpl::Environment& env,
                               const OpsCodegenOptions& options, OutputSet& outputs) {
  DiagnosticEngine& diags = env.diags();
  const uint32_t shards = std::max<uint32_t>(options.shards, 1);
  const std::vector<std::string> names = op_library_file_names(options);
  const std::string& api_h_path = names[0];
  const std::string& decls_h_path = names[1];

  const tmpl::Template* api_h = env.load("ops/api.h.j2");
  const tmpl::Template* api_cc = env.load("ops/api.cc.j2");
  const tmpl::Template* args_info_cc = env.load("ops/args_info.cc.j2");
  const tmpl::Template* decls_h = env.load("ops/decls.h.j2");
  const std::optional<std::string_view> runtime = env.read_verbatim(kRuntimeHeaderTemplate);
  const std::optional<int64_t> version = runtime ? runtime_header_version(env) : std::nullopt;
  if (api_h == nullptr || api_cc == nullptr || args_info_cc == nullptr || decls_h == nullptr || !version) return false;

  std::vector<std::string> display_paths;
  for (uint32_t file : library.files()) {
    if (display_paths.size() <= file) display_paths.resize(file + 1);
    display_paths[file] = banner_input_path(env.sources().path(file), api_h_path);
  }
  const OpApiModel model = build_op_api_model(library, env.sources(), display_paths);

  Value globals = Value::map();
  globals.set("prefix", options.prefix);
  globals.set("namespace", options.name_space);
  globals.set("runtime_version", *version);
  globals.set("api_header", options.prefix + "_api.h");
  globals.set("decls_header", options.prefix + "_decls.h");
  globals.set("guard_prefix", upper_identifier(options.prefix));
  globals.set("shards", static_cast<int64_t>(shards));
  globals.set("args_info_symbol", cpp_identifier(options.prefix) + "_args_info");

  // Per-op values, shared by the header and the shards (values are handles: no copies).
  std::vector<Value> op_values;
  std::vector<std::vector<size_t>> shard_ops(shards);
  List all_ops, skipped;
  op_values.reserve(model.ops.size());
  for (size_t i = 0; i < model.ops.size(); ++i) {
    op_values.push_back(op_api_value(model.ops[i]));
    all_ops.push_back(op_values.back());
    if (!model.ops[i].generated) skipped.push_back(op_values.back());
    shard_ops[op_shard(model.ops[i].name, shards)].push_back(i);
  }

  auto render_into = [&](const tmpl::Template& tmpl, Value context, const std::string& path) {
    for (const auto& [key, value] : globals.as_map()) context.set(key, value);
    std::string text = generated_banner(options, path);
    if (!env.render(tmpl, context, text)) return false;
    if (!outputs.add(path, std::move(text))) {
      diags.error({}, "two outputs have the path '" + path + "'");
      return false;
    }
    return true;
  };

  bool ok = true;
  {
    Value ctx = Value::map();
    ctx.set("ops", Value(std::move(all_ops)));
    ctx.set("skipped", Value(std::move(skipped)));
    ctx.set("generated_count", static_cast<int64_t>(model.generated_count()));
    ok = render_into(*api_h, std::move(ctx), api_h_path) && ok;
  }
  {
    Value ctx = Value::map();
    List kernels;
    for (const FunctionDecl& d : model.kernels) kernels.push_back(decl_value(d));
    // Infer-meta functions grouped by namespace (kforge::meta, kforge::meta::strings, ...), first use order.
    std::vector<std::string> order;
    std::map<std::string, List> by_ns;
    for (const FunctionDecl& d : model.metas) {
      if (by_ns.find(d.name_space) == by_ns.end()) order.push_back(d.name_space);
      by_ns[d.name_space].push_back(decl_value(d));
    }
    List metas;
    for (const std::string& ns : order) {
      Value group = Value::map();
      group.set("name_space", ns);
      group.set("decls", Value(std::move(by_ns[ns])));
      metas.push_back(std::move(group));
    }
    ctx.set("kernels", Value(std::move(kernels)));
    ctx.set("meta_groups", Value(std::move(metas)));
    ok = render_into(*decls_h, std::move(ctx), decls_h_path) && ok;
  }

  // Args-info: entries per shard; shard 0 also holds the name-sorted index over every shard.
  struct IndexEntry {
    std::string name;
    uint32_t shard;
    size_t position;
  };
  std::vector<IndexEntry> index;
  std::vector<List> shard_entries(shards);
  for (uint32_t s = 0; s < shards; ++s) {
    for (size_t pos = 0; pos < shard_ops[s].size(); ++pos) {
      const OpApi& api = model.ops[shard_ops[s][pos]];
      shard_entries[s].push_back(args_info_value(*api.op, compat, api.generated));
      index.push_back({api.name, s, pos});
    }
  }
  std::sort(index.begin(), index.end(), [](const IndexEntry& a, const IndexEntry& b) { return a.name < b.name; });
  List index_list, shard_arrays;
  for (const IndexEntry& e : index) {
    Value v = Value::map();
    v.set("name", e.name);
    v.set("shard", static_cast<int64_t>(e.shard));
    v.set("position", static_cast<int64_t>(e.position));
    index_list.push_back(std::move(v));
  }
  for (uint32_t s = 0; s < shards; ++s) {
    Value v = Value::map();
    v.set("shard", static_cast<int64_t>(s));
    v.set("count", static_cast<int64_t>(shard_ops[s].size()));
    shard_arrays.push_back(std::move(v));
  }
  const Value index_value(std::move(index_list));
  const Value shard_arrays_value(std::move(shard_arrays));

  for (uint32_t s = 0; s < shards; ++s) {
    List ops;
    for (size_t i : shard_ops[s]) {
      if (model.ops[i].generated) ops.push_back(op_values[i]);
    }
    Value api_ctx = Value::map();
    api_ctx.set("ops", Value(std::move(ops)));
    api_ctx.set("shard", static_cast<int64_t>(s));
    ok = render_into(*api_cc, std::move(api_ctx), names[2 + s]) && ok;
  }
  for (uint32_t s = 0; s < shards; ++s) {
    Value info_ctx = Value::map();
    info_ctx.set("entries", Value(std::move(shard_entries[s])));
    info_ctx.set("shard", static_cast<int64_t>(s));
    info_ctx.set("has_index", s == 0);
    info_ctx.set("index", s == 0 ? index_value : Value(List()));
    info_ctx.set("shard_arrays", shard_arrays_value);
    ok = render_into(*args_info_cc, std::move(info_ctx), names[2 + shards + s]) && ok;
  }

  if (!options.python_module.empty()) ok = generate_python_op_module(model, env, options, globals, outputs) && ok;

  const std::string runtime_out = names.back();
  if (!outputs.add(runtime_out, generated_banner(options, runtime_out) + std::string(*runtime))) {
    diags.error({}, "two outputs have the path '" + runtime_out + "'");
    ok = false;
  }
  return ok;
}

}  // namespace kforge::codegen
