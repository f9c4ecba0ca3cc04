// Internal state of an Environment: the built-in registry, the loader and the template cache.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "template/ast.h"
#include "template/environment.h"

namespace kforge::tmpl {

struct BuiltinEntry {
  enum class Kind : uint8_t { kFilter, kTest, kFunction };
  Kind kind = Kind::kFilter;
  std::string name;
  Signature signature;
  Builtin fn;         // filters and functions
  TestFunction test;  // tests
  BuiltinOptions options;
};

class TemplateImpl : public Template {
 public:
  enum class State : uint8_t { kChecking, kOk, kFailed };

  const std::string& name() const override { return name_; }
  const std::string& path() const override { return path_; }
  uint32_t file_id() const override { return file_id_; }
  std::string dump() const override { return ast::dump(body); }

  std::string name_;
  std::string path_;
  uint32_t file_id_ = 0;
  State state = State::kChecking;
  ast::Body body;
  /// Top-level macros, by name (also used for arity checks of local calls).
  std::map<std::string, const ast::MacroNode*, std::less<>> macros;
  /// What an import of this template exports: top-level macros and `set` names not starting with '_'.
  std::vector<std::string> exports;
};

/// What a diagnostic chain entry says: "in template included from a.j2:3:4".
struct ChainEntry {
  enum class Kind : uint8_t { kInclude, kImport, kMacro };
  Kind kind = Kind::kInclude;
  std::string_view name;  // macro name (lives in the AST)
  SourceLoc loc;     // the include / import / call site
};

struct Environment::Impl {
  Impl(SourceManager& s, DiagnosticEngine& d, EnvironmentOptions o) : sources(s), diags(d), options(o) {}

  Environment* self = nullptr;
  SourceManager& sources;
  DiagnosticEngine& diags;
  EnvironmentOptions options;
  std::vector<std::string> search_dirs;
  std::map<std::string, std::string, std::less<>> memory_templates;
  std::map<std::string, std::unique_ptr<BuiltinEntry>, std::less<>> filters, tests, functions;
  Map globals;
  // Cache keyed by resolved path ("<memory>/name" for in-memory templates).
  std::map<std::string, std::unique_ptr<TemplateImpl>, std::less<>> cache;
  std::vector<std::unique_ptr<TemplateImpl>> string_templates;  // load_string() results
  std::vector<std::string> loaded_files;
  /// The include/import chain of the templates being checked right now (for cycle errors and notes).
  std::vector<std::pair<const TemplateImpl*, ChainEntry>> check_stack;

  const BuiltinEntry* find(BuiltinEntry::Kind kind, std::string_view name) const;
  std::vector<std::string> names(BuiltinEntry::Kind kind) const;

  /// Loads (or finds in the cache) and checks a template by name. `from` is the include/import site
  /// or invalid for a top-level load. Reports problems; returns null on failure. When `missing_ok` and
  /// the name does not resolve, returns null without a diagnostic.
  TemplateImpl* load(std::string_view name, const ChainEntry* from, bool missing_ok = false);
  TemplateImpl* parse_and_check(std::unique_ptr<TemplateImpl> tmpl, const ChainEntry* from);
  bool check_parsed(TemplateImpl& tmpl, const ChainEntry* from);
  /// "" when `name` is acceptable, else why not.
  static std::string validate_name(std::string_view name);
  std::optional<std::string> resolve(std::string_view name) const;

  void report(Diagnostic diag, const ChainEntry* from);
  /// A template file that cannot be read (SourceManager::add_file's `reason`): at `at`, or at `path` without one.
  void cannot_read(const std::string& path, const std::string& reason, SourceLoc at, const ChainEntry* from);
  /// The notes describing a chain (innermost first).
  void add_chain_notes(Diagnostic& diag, const std::vector<ChainEntry>& chain) const;
  std::string describe_loc(SourceLoc loc) const;
};

/// Runs the check pass over a freshly parsed template (resolving filters, tests, functions, macros,
/// imports and includes, checking arity). Returns false after reporting errors.
bool check_template(Environment::Impl& env, TemplateImpl& tmpl);

/// Formats a signature for notes: "replace(old, new, count=none)".
std::string format_signature(std::string_view name, const Signature& sig);

/// Registers the built-in filters, tests and functions (filters.cpp, tests.cpp).
void register_builtin_filters(Environment& env);
/// The filters over sequences and maps (filters_sequences.cpp), registered by register_builtin_filters.
void register_sequence_filters(Environment& env);
void register_builtin_tests(Environment& env);
void register_builtin_functions(Environment& env);

}  // namespace kforge::tmpl

namespace kforge::tmpl {

/// A mismatch between a call's arguments and a signature.
struct ArityProblem {
  SourceLoc loc;  // invalid: the call site
  std::string message;
  std::vector<std::string> notes;
};

/// Checks `positional` arguments and `keywords` against `sig` with Python's binding rules. `what` names
/// the callee in messages ("filter 'replace'"), `display` is the name shown in the signature note.
std::optional<ArityProblem> check_arity(const Signature& sig, size_t positional,
                                        const std::vector<std::pair<std::string_view, SourceLoc>>& keywords,
                                        std::string_view what, std::string_view display);

/// The signature of a macro (defaults shown as '...': they are expressions evaluated per call).
Signature macro_signature(const ast::MacroNode& macro);

}  // namespace kforge::tmpl
