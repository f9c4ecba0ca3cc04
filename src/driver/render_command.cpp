#include "driver/render_command.h"

#include <filesystem>
#include <memory>
#include <vector>

#include "driver/data_loader.h"
#include "driver/template_search_path.h"
#include "support/input_file.h"
#include "template/codegen_filters.h"
#include "template/environment.h"

namespace kforge::driver {

namespace {

struct RenderOptions {
  std::string template_path;
  std::vector<std::string> data_files;
  std::string data_format = "auto";
  std::string output;
  OutputOptions out;
};

constexpr const char* kRenderFooter = R"(Examples:
  Render a header from YAML data:
    kforge render config.h.j2 --data config.yaml -o build/config.h

  Merge two data files (keys of the later file win, maps merge deeply) and print to stdout:
    kforge render report.md.j2 --data base.yaml --data overrides.json -o -

  Use a directory of shared macros and write a depfile for the build system:
    kforge render api.h.j2 --data api.yaml --template-dir common/ -o api.h --depfile api.h.d

  Fail (exit 1, with a diff) if a checked-in file is out of date:
    kforge render api.h.j2 --data api.yaml -o src/api.h --check

Templates are Jinja2 with trim_blocks and lstrip_blocks on, the trailing newline kept and strict
undefined variables; docs/templates.md lists every difference from Python's jinja2. Includes and
imports are looked up in the --template-dir directories, then the directory of TEMPLATE, then
kforge's built-in templates. `render` adds no banner: the template owns every byte of its output.
Outputs are written only when their bytes change, and nothing is written if any error occurs.
)";

/// Loads and merges the --data files into one context map. Every file is read (so all their errors
/// are reported in one run); returns false if any failed.
bool load_context(const RenderOptions& opts, DataFormat format, Session& session, tmpl::Value& context) {
  bool ok = true;
  context = tmpl::Value::map();
  for (const std::string& path : opts.data_files) {
    std::optional<tmpl::Value> data = load_data_file(path, format, session.sources(), session.diags());
    if (!data) {
      ok = false;
      continue;
    }
    context = merge_data(context, *data);
  }
  return ok;
}

/// Keeps `value` until the process exits: reachable (leak checkers stay quiet) but never destroyed. The
/// context of a large data file is a tree of a hundred thousand small objects; freeing them one by one
/// just before exiting cost 8% of rendering a 1 MB JSON file (compilers skip freeing their ASTs at exit
/// for the same reason: clang's -disable-free, LLVM's BuryPointer).
void keep_until_exit(tmpl::Value value) {
  static auto* kept = new std::vector<tmpl::Value>;
  kept->push_back(std::move(value));
}

int run_render(const RenderOptions& opts) {
  const bool to_stdout = opts.output == kStdoutPath;
  if (to_stdout && opts.out.check) {
    return usage_error("render", "--check compares with a file on disk and cannot be used with -o -");
  }
  if (to_stdout && !opts.out.depfile.empty() && opts.out.depfile_target.empty()) {
    return usage_error("render", "--depfile with -o - needs --depfile-target to name the target");
  }
  const std::optional<DataFormat> format = parse_data_format(opts.data_format);
  if (!format) return usage_error("render", "--data-format must be yaml or json");

  Session session(opts.out);
  DiagnosticEngine& diags = session.diags();
  OutputSet outputs;
  OutputRequest request;

  tmpl::Value context;
  const bool data_ok = load_context(opts, *format, session, context);

  std::optional<std::string> source =
      read_input_file(opts.template_path, session.sources().max_file_bytes(), diags, "template");
  if (!source || !data_ok) return finish_outputs(opts.out, outputs, request, session);

  // The template's own directory serves its includes, after the user's overrides and before the
  // built-in templates.
  // For a TEMPLATE in the working directory that directory is "", so the paths of the templates it
  // loads read "inc.j2", not "./inc.j2", in diagnostics and in the depfile.
  const std::string template_dir = std::filesystem::path(opts.template_path).parent_path().string();
  tmpl::Environment env(session.sources(), diags);
  for (const std::string& dir : template_search_path(opts.out.template_dirs, {template_dir})) env.add_search_dir(dir);
  tmpl::register_codegen_filters(env);

  std::string rendered;
  const tmpl::Template* tmpl = env.load_string(opts.template_path, std::move(*source));
  if (tmpl != nullptr && env.render(*tmpl, context, rendered)) outputs.add(opts.output, std::move(rendered));

  request.dependencies.push_back(opts.template_path);
  request.dependencies.insert(request.dependencies.end(), opts.data_files.begin(), opts.data_files.end());
  const std::vector<std::string>& loaded = env.loaded_files();
  request.dependencies.insert(request.dependencies.end(), loaded.begin(), loaded.end());
  keep_until_exit(std::move(context));
  return finish_outputs(opts.out, outputs, request, session);
}

}  // namespace

void register_render_command(CLI::App& app, CommandAction& action) {
  auto opts = std::make_shared<RenderOptions>();
  CLI::App* cmd = app.add_subcommand("render", "Render a Jinja-style template with YAML or JSON data");
  cmd->add_option("TEMPLATE", opts->template_path, "The template file to render")->required()->type_name("FILE");
  cmd->add_option("-d,--data", opts->data_files,
                  "YAML or JSON data file; repeat to merge several, later keys winning")
      ->type_name("FILE")
      ->allow_extra_args(false);  // one value per flag, so a positional TEMPLATE may follow
  cmd->add_option("--data-format", opts->data_format,
                  "Format of the data files: auto (from the extension: .yaml, .yml, .json), yaml or json")
      ->check(CLI::IsMember({"auto", "yaml", "json"}))
      ->type_name("FORMAT")
      ->default_str("auto");
  cmd->add_option("-o,--output", opts->output, "The file to write; '-' writes to standard output")
      ->required()
      ->type_name("FILE");
  add_output_options(*cmd, opts->out);
  cmd->footer(kRenderFooter);
  cmd->callback([opts, &action] { action = [opts] { return run_render(*opts); }; });
}

}  // namespace kforge::driver
