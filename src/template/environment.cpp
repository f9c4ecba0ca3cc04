#include "template/environment.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "support/text.h"
#include "template/env_impl.h"
#include "template/lexer.h"
#include "template/parser.h"
#include "template/renderer.h"

namespace kforge::tmpl {

namespace fs = std::filesystem;

namespace {
constexpr std::string_view kMemoryPrefix = "<memory>/";
}

// ---------------------------------------------------------------- Impl

const BuiltinEntry* Environment::Impl::find(BuiltinEntry::Kind kind, std::string_view name) const {
  const auto& table = kind == BuiltinEntry::Kind::kFilter ? filters : kind == BuiltinEntry::Kind::kTest ? tests : functions;
  auto it = table.find(name);
  return it == table.end() ? nullptr : it->second.get();
}

std::vector<std::string> Environment::Impl::names(BuiltinEntry::Kind kind) const {
  const auto& table = kind == BuiltinEntry::Kind::kFilter ? filters : kind == BuiltinEntry::Kind::kTest ? tests : functions;
  std::vector<std::string> out;
  for (const auto& [name, entry] : table) out.push_back(name);
  return out;
}

std::string Environment::Impl::describe_loc(SourceLoc loc) const {
  const LineCol lc = sources.line_col(loc);
  return fmt::format("{}:{}:{}", sources.path(loc.file), lc.line, lc.col);
}

void Environment::Impl::add_chain_notes(Diagnostic& diag, const std::vector<ChainEntry>& chain) const {
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    switch (it->kind) {
      case ChainEntry::Kind::kInclude:
        diag.note(fmt::format("in template included from {}", describe_loc(it->loc)));
        break;
      case ChainEntry::Kind::kImport:
        diag.note(fmt::format("in template imported from {}", describe_loc(it->loc)));
        break;
      case ChainEntry::Kind::kMacro:
        diag.note(fmt::format("in macro '{}' called from {}", it->name, describe_loc(it->loc)));
        break;
    }
  }
}

void Environment::Impl::report(Diagnostic diag, const ChainEntry* from) {
  std::vector<ChainEntry> chain;
  for (const auto& [tmpl, entry] : check_stack) {
    if (entry.loc.valid()) chain.push_back(entry);
  }
  if (from) chain.push_back(*from);
  add_chain_notes(diag, chain);
  diags.report(std::move(diag));
}

void Environment::Impl::cannot_read(const std::string& path, const std::string& reason, SourceLoc at,
                                     const ChainEntry* from) {
  // At the include or import that asked for the file; a file loaded by name alone is located by its path.
  if (at.valid()) {
    report({Severity::kError, at, fmt::format("cannot read template '{}': {}", path, reason), {}}, from);
  } else {
    diags.file_error(path, "cannot read the template: " + reason);
  }
}

std::string Environment::Impl::validate_name(std::string_view name) {
  if (name.empty()) return "template name is empty";
  if (name.front() == '/' || name.find('\\') != std::string_view::npos ||
      (name.size() > 1 && name[1] == ':')) {
    return "template names are '/'-separated and relative to the template search path";
  }
  size_t begin = 0;
  while (begin <= name.size()) {
    size_t end = name.find('/', begin);
    if (end == std::string_view::npos) end = name.size();
    const std::string_view part = name.substr(begin, end - begin);
    if (part == "..") return "'..' is not allowed in template names";
    if (part.empty() || part == ".") return "template names must not contain empty or '.' components";
    begin = end + 1;
  }
  return "";
}

std::optional<std::string> Environment::Impl::resolve(std::string_view name) const {
  if (!validate_name(name).empty()) return std::nullopt;
  if (memory_templates.count(name)) return std::string(name);
  for (const std::string& dir : search_dirs) {
    std::string path = dir.empty() ? std::string(name) : dir + (dir.back() == '/' ? "" : "/") + std::string(name);
    // The first file there that is no directory: one that is not a regular file either (a FIFO) is then refused
    // when it is read, rather than passed over for a later directory's.
    std::error_code ec;
    if (fs::exists(path, ec) && !fs::is_directory(path, ec)) return path;
  }
  return std::nullopt;
}

TemplateImpl* Environment::Impl::load(std::string_view name, const ChainEntry* from, bool missing_ok) {
  const SourceLoc at = from ? from->loc : SourceLoc{};
  if (std::string why = validate_name(name); !why.empty()) {
    report({Severity::kError, at, fmt::format("invalid template name '{}': {}", name, why), {}}, nullptr);
    return nullptr;
  }
  const bool in_memory = memory_templates.count(name) > 0;
  std::optional<std::string> path = resolve(name);
  if (!path) {
    if (missing_ok) return nullptr;
    Diagnostic d{Severity::kError, at, fmt::format("template '{}' not found", name), {}};
    if (search_dirs.empty()) {
      d.note("no template search directories are configured");
    } else {
      // "" stands for the working directory (a template beside it); say so rather than print nothing.
      std::vector<std::string> shown;
      for (const std::string& dir : search_dirs) shown.push_back(dir.empty() ? "." : dir);
      d.note(fmt::format("searched: {}", join(shown, ", ")));
    }
    report(std::move(d), nullptr);
    return nullptr;
  }
  const std::string key = in_memory ? std::string(kMemoryPrefix) + *path : *path;
  if (auto it = cache.find(key); it != cache.end()) {
    TemplateImpl* t = it->second.get();
    if (t->state == TemplateImpl::State::kChecking) {
      // On the check stack: an include/import cycle.
      std::vector<std::string> names;
      bool on_cycle = false;
      for (const auto& [tmpl, entry] : check_stack) {
        on_cycle = on_cycle || tmpl == t;
        if (on_cycle) names.push_back(tmpl->name());
      }
      names.push_back(t->name());
      report({Severity::kError, at, fmt::format("include cycle: {}", join(names, " -> ")), {}}, nullptr);
      return nullptr;
    }
    return t->state == TemplateImpl::State::kOk ? t : nullptr;
  }
  auto tmpl = std::make_unique<TemplateImpl>();
  tmpl->name_ = std::string(name);
  if (in_memory) {
    tmpl->file_id_ = sources.add_buffer(std::string(name), memory_templates.find(name)->second);
  } else {
    std::string reason;
    if (!sources.add_file(*path, tmpl->file_id_, reason)) {
      cannot_read(*path, reason, at, from);
      return nullptr;
    }
    loaded_files.push_back(*path);
  }
  tmpl->path_ = sources.path(tmpl->file_id_);
  TemplateImpl* raw = tmpl.get();
  cache.emplace(key, std::move(tmpl));
  return check_parsed(*raw, from) ? raw : nullptr;
}

bool Environment::Impl::check_parsed(TemplateImpl& tmpl, const ChainEntry* from) {
  tmpl.state = TemplateImpl::State::kChecking;
  std::vector<Token> tokens;
  Diagnostic error;
  if (!lex_template(sources, tmpl.file_id_, tokens, error) || !parse_template(tmpl.file_id_, tokens, tmpl.body, error)) {
    report(std::move(error), from);
    tmpl.state = TemplateImpl::State::kFailed;
    return false;
  }
  check_stack.push_back({&tmpl, from ? *from : ChainEntry{}});
  const bool ok = check_template(*this, tmpl);
  check_stack.pop_back();
  tmpl.state = ok ? TemplateImpl::State::kOk : TemplateImpl::State::kFailed;
  return ok;
}

TemplateImpl* Environment::Impl::parse_and_check(std::unique_ptr<TemplateImpl> tmpl, const ChainEntry* from) {
  TemplateImpl* raw = tmpl.get();
  string_templates.push_back(std::move(tmpl));
  return check_parsed(*raw, from) ? raw : nullptr;
}

// ---------------------------------------------------------------- Environment

Environment::Environment(SourceManager& sources, DiagnosticEngine& diags, EnvironmentOptions options)
    : impl_(std::make_unique<Impl>(sources, diags, options)) {
  impl_->self = this;
  register_builtin_filters(*this);
  register_builtin_tests(*this);
  register_builtin_functions(*this);
}

Environment::~Environment() = default;

void Environment::add_search_dir(std::string dir) { impl_->search_dirs.push_back(std::move(dir)); }

void Environment::add_memory_template(std::string name, std::string source) {
  impl_->memory_templates[std::move(name)] = std::move(source);
}

namespace {
void register_entry(std::map<std::string, std::unique_ptr<BuiltinEntry>, std::less<>>& table, BuiltinEntry entry) {
  auto& slot = table[entry.name];
  if (!slot) slot = std::make_unique<BuiltinEntry>();
  *slot = std::move(entry);  // in place: templates already checked keep a valid pointer
}
}  // namespace

void Environment::register_filter(std::string name, Signature sig, Builtin fn, BuiltinOptions options) {
  register_entry(impl_->filters, {BuiltinEntry::Kind::kFilter, std::move(name), std::move(sig), std::move(fn), {}, options});
}

void Environment::register_test(std::string name, Signature sig, TestFunction fn, BuiltinOptions options) {
  register_entry(impl_->tests, {BuiltinEntry::Kind::kTest, std::move(name), std::move(sig), {}, std::move(fn), options});
}

void Environment::register_function(std::string name, Signature sig, Builtin fn) {
  register_entry(impl_->functions, {BuiltinEntry::Kind::kFunction, std::move(name), std::move(sig), std::move(fn), {}, {}});
}

void Environment::set_global(std::string name, Value value) { impl_->globals.set(std::move(name), std::move(value)); }

const Template* Environment::load(std::string_view name) { return impl_->load(name, nullptr); }

const Template* Environment::load_string(std::string name, std::string source) {
  auto tmpl = std::make_unique<TemplateImpl>();
  tmpl->name_ = name;
  tmpl->file_id_ = impl_->sources.add_buffer(std::move(name), std::move(source));
  tmpl->path_ = impl_->sources.path(tmpl->file_id_);
  return impl_->parse_and_check(std::move(tmpl), nullptr);
}

bool Environment::check_all(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    impl_->diags.error({}, fmt::format("template directory '{}' does not exist", dir));
    return false;
  }
  std::vector<std::string> files;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->is_regular_file(ec) && it->path().extension() == ".j2") files.push_back(it->path().generic_string());
  }
  std::sort(files.begin(), files.end());
  bool ok = true;
  const std::string prefix = dir.empty() || dir.back() == '/' ? dir : dir + "/";
  for (const std::string& file : files) {
    std::string name = file.starts_with(prefix) ? file.substr(prefix.size()) : file;
    // Check the file itself (not whatever the search path resolves its name to). Files already
    // loaded through an include or import under the same path are not checked (or reported) twice.
    if (auto it = impl_->cache.find(file); it != impl_->cache.end()) {
      if (it->second->state != TemplateImpl::State::kOk) ok = false;
      continue;
    }
    auto tmpl = std::make_unique<TemplateImpl>();
    tmpl->name_ = name;
    std::string reason;
    if (!impl_->sources.add_file(file, tmpl->file_id_, reason)) {
      impl_->cannot_read(file, reason, {}, nullptr);
      ok = false;
      continue;
    }
    impl_->loaded_files.push_back(file);
    tmpl->path_ = impl_->sources.path(tmpl->file_id_);
    TemplateImpl* raw = tmpl.get();
    impl_->cache.emplace(file, std::move(tmpl));
    if (!impl_->check_parsed(*raw, nullptr)) ok = false;
  }
  return ok && !ec;
}

bool Environment::render(const Template& tmpl, const Value& context, std::string& out) {
  const size_t original = out.size();
  Renderer renderer(*impl_, out);
  if (renderer.render(static_cast<const TemplateImpl&>(tmpl), context)) return true;
  out.resize(original);
  return false;
}

bool Environment::render_string(std::string name, std::string source, const Value& context, std::string& out) {
  const Template* t = load_string(std::move(name), std::move(source));
  return t && render(*t, context, out);
}

std::optional<std::string> Environment::resolve(std::string_view name) const { return impl_->resolve(name); }

std::optional<std::string_view> Environment::read_verbatim(std::string_view name) {
  const std::optional<std::string> path = impl_->resolve(name);
  if (!path) {
    impl_->diags.error({}, fmt::format("cannot find '{}' on the template search path", name));
    return std::nullopt;
  }
  uint32_t file_id = 0;
  std::string reason;
  if (!impl_->sources.add_file(*path, file_id, reason)) {
    impl_->cannot_read(*path, reason, {}, nullptr);
    return std::nullopt;
  }
  auto& loaded = impl_->loaded_files;
  if (std::find(loaded.begin(), loaded.end(), *path) == loaded.end()) loaded.push_back(*path);
  return impl_->sources.contents(file_id);
}
const std::vector<std::string>& Environment::loaded_files() const { return impl_->loaded_files; }
SourceManager& Environment::sources() { return impl_->sources; }
DiagnosticEngine& Environment::diags() { return impl_->diags; }
const EnvironmentOptions& Environment::options() const { return impl_->options; }

// ---------------------------------------------------------------- CallArgs

void CallArgs::fail(std::string message, std::vector<std::string> notes) const {
  std::vector<DiagNote> n;
  for (std::string& s : notes) n.push_back({SourceLoc{}, std::move(s)});
  renderer_->fail(loc_, std::move(message), std::move(n));
}

Value CallArgs::apply_filter(std::string_view name, const Value& input, std::span<const Value> args) const {
  const BuiltinEntry* f = renderer_->env().find(BuiltinEntry::Kind::kFilter, name);
  if (!f) {
    std::vector<DiagNote> notes;
    if (auto m = closest_match(name, renderer_->env().names(BuiltinEntry::Kind::kFilter))) {
      notes.push_back({SourceLoc{}, fmt::format("did you mean '{}'?", *m)});
    }
    renderer_->fail(loc_, fmt::format("unknown filter '{}'", name), std::move(notes));
  }
  EvaluatedArgs evaluated;
  evaluated.positional.assign(args.begin(), args.end());
  return renderer_->apply_filter(*f, input, evaluated, loc_);
}

bool CallArgs::apply_test(std::string_view name, const Value& input, std::span<const Value> args) const {
  const BuiltinEntry* t = renderer_->env().find(BuiltinEntry::Kind::kTest, name);
  if (!t) {
    std::vector<DiagNote> notes;
    if (auto m = closest_match(name, renderer_->env().names(BuiltinEntry::Kind::kTest))) {
      notes.push_back({SourceLoc{}, fmt::format("did you mean '{}'?", *m)});
    }
    renderer_->fail(loc_, fmt::format("unknown test '{}'", name), std::move(notes));
  }
  EvaluatedArgs evaluated;
  evaluated.positional.assign(args.begin(), args.end());
  return renderer_->apply_test(*t, input, evaluated, loc_);
}

Value CallArgs::get_attribute(const Value& object, std::string_view dotted_path) const {
  // Jinja's make_attrgetter: "a.b.0" walks attributes, integer parts index lists.
  Value cur = object;
  std::string path = "item";
  size_t begin = 0;
  while (begin <= dotted_path.size()) {
    size_t end = dotted_path.find('.', begin);
    if (end == std::string_view::npos) end = dotted_path.size();
    const std::string_view part = dotted_path.substr(begin, end - begin);
    renderer_->require_defined(cur, loc_);
    const bool numeric = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (numeric && cur.is_list()) {
      cur = renderer_->get_item(cur, Value(static_cast<int64_t>(std::stoll(std::string(part)))), loc_, {nullptr, &path});
      path += "[" + std::string(part) + "]";
    } else {
      cur = renderer_->get_attribute(cur, part, loc_, {nullptr, &path});
      path += "." + std::string(part);
    }
    begin = end + 1;
  }
  return cur;
}

std::string CallArgs::to_text(const Value& value) const {
  std::string s;
  renderer_->print(value, s, loc_);
  return s;
}

std::string CallArgs::to_string(const Value& value) const { return renderer_->stringify(value, loc_); }

std::vector<Value> CallArgs::iterate(const Value& value) const { return renderer_->iterate(value, loc_); }

Value CallArgs::undefined(std::string reason) const { return renderer_->make_undefined("", loc_, {}, std::move(reason)); }

Environment& CallArgs::env() const { return *renderer_->env().self; }

}  // namespace kforge::tmpl
