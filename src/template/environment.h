// The template engine's entry point: an Environment owns the registry of filters, tests and functions,
// the template loader (ordered search path + in-memory templates), the cache of parsed and checked
// templates, and renders them.
//
// Typical use:
//   Environment env(sources, diags);
//   env.add_search_dir(user_dir);                 // --template-dir, first wins
//   env.add_search_dir(builtin_dir);              // shipped templates/, last
//   register_codegen_filters(env);                // kforge's own filters (codegen_filters.h)
//   const Template* t = env.load("ops/op.h.j2");  // parsed + checked once; null after diagnostics
//   std::string out;
//   if (t && env.render(*t, context, out)) ...    // render many times with different contexts
//
// Dialect: Jinja2 with trim_blocks, lstrip_blocks, keep_trailing_newline and StrictUndefined, plus the
// deliberate deviations of templates-and-build.md §1.4 (booleans print as true/false; printing none, a
// list or a map is an error). Unsupported Jinja constructs are parse errors with a hint.
//
// All errors are reported to the DiagnosticEngine as located kforge::Diagnostics (include/import and
// macro-call chains become notes); API functions return null/false afterwards and never throw.
//
// What the check pass (run by load) resolves before any rendering: filters, tests, registered
// functions and their arity; the template's own and imported macros and their arity; every include and
// import with a constant name (loaded and checked recursively; cycles are errors); what imports export.
// A call to a name that is none of these is resolved when rendering (an included template may call a
// macro of the template that includes it, as in Jinja), unless it is a near miss of a function name.
//
// Parsed templates are immutable. Rendering the same Environment from several threads at once is not
// supported (dynamic include names load templates into the shared cache).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "support/diagnostics.h"
#include "support/source_manager.h"
#include "template/value.h"

namespace kforge::tmpl {

class Environment;
class Template;
class Renderer;
struct BuiltinEntry;
struct EvaluatedArgs;
struct BoundArgs;

/// One declared parameter of a filter, test, function (or macro). Without a default it is required.
struct Param {
  std::string name;
  std::optional<Value> default_value;

  Param(std::string n) : name(std::move(n)) {}                      // required
  Param(std::string n, Value d) : name(std::move(n)), default_value(std::move(d)) {}
  Param(const char* n) : name(n) {}
};

/// Jinja-style signature. Arguments bind like Python: positional first, then keywords by name; missing
/// parameters take their defaults; anything else is an error at the call site (checked before rendering
/// where the callee is known statically, otherwise when called).
struct Signature {
  std::vector<Param> params;  // for filters and tests: the parameters after the input value
  bool varargs = false;       // extra positional arguments go to CallArgs::varargs()
  bool kwargs = false;        // unknown keyword arguments go to CallArgs::kwargs()

  Signature() = default;
  Signature(std::initializer_list<Param> p) : params(p) {}
  Signature(std::vector<Param> p, bool var_args, bool kw_args)
      : params(std::move(p)), varargs(var_args), kwargs(kw_args) {}
};

/// The evaluated, bound arguments handed to a built-in. Valid only during the call.
class CallArgs {
 public:
  /// For filters and tests: the value left of `|` or `is`. none for functions.
  const Value& input() const { return *input_; }
  /// Declared parameter `i` (in Signature order), with its default filled in when not passed.
  const Value& operator[](size_t i) const { return *params_[i]; }
  size_t size() const { return params_.size(); }
  /// Whether parameter `i` was passed explicitly (rather than defaulted).
  bool passed(size_t i) const { return (passed_mask_ >> i) & 1; }
  std::span<const Value> varargs() const { return varargs_; }
  std::span<const std::pair<std::string, Value>> kwargs() const { return kwargs_; }

  /// The call site: the filter name, test name or function name in the template.
  SourceLoc loc() const { return loc_; }
  /// Reports an error at the call site (plus optional notes) and aborts rendering of this output.
  [[noreturn]] void fail(std::string message, std::vector<std::string> notes = {}) const;

  /// Applies another filter / test by name (as map() and select() do), failing at the call site if
  /// there is none.
  Value apply_filter(std::string_view name, const Value& input, std::span<const Value> args) const;
  bool apply_test(std::string_view name, const Value& input, std::span<const Value> args) const;
  /// Attribute lookup as `x.a.b` would do it (dotted path), failing at the call site when missing.
  Value get_attribute(const Value& object, std::string_view dotted_path) const;
  /// Text of a value as {{ }} prints it (strings verbatim, numbers, true/false); fails for others.
  std::string to_text(const Value& value) const;
  /// Text as Jinja's str() gives it (what `~`, `join` and `string` use): like to_text, but none is
  /// "None" and lists/maps are Python reprs. Fails for undefined.
  std::string to_string(const Value& value) const;
  /// An undefined value located at the call site: an error only if something consumes it (so that
  /// `x | first | default(y)` works); `reason` is the error message then.
  Value undefined(std::string reason) const;
  /// The items a for loop would visit: list items, map keys, string characters; fails otherwise.
  std::vector<Value> iterate(const Value& value) const;

  Environment& env() const;

 private:
  friend class Renderer;
  friend void bind_arguments(Renderer& r, const BuiltinEntry& entry, EvaluatedArgs& args, SourceLoc loc,
                             BoundArgs& storage, CallArgs& out);
  // Views of storage owned by the caller for the duration of the call. Parameters point at the
  // evaluated arguments or at the signature's defaults: binding copies no value.
  Renderer* renderer_ = nullptr;
  const Value* input_ = nullptr;
  std::span<const Value* const> params_;
  uint64_t passed_mask_ = 0;
  std::span<const Value> varargs_;
  std::span<const std::pair<std::string, Value>> kwargs_;
  SourceLoc loc_;
};

using Builtin = std::function<Value(const CallArgs&)>;
using TestFunction = std::function<bool(const CallArgs&)>;

struct BuiltinOptions {
  /// The input may be undefined (e.g. `default`); otherwise an undefined input is an error before the
  /// built-in runs.
  bool accepts_undefined = false;
};

/// Limits that keep any template, however hostile, from hanging or exhausting memory (docs/fuzzing.md,
/// "Limits"). Exceeding one is an error at the construct that did.
struct EnvironmentOptions {
  size_t max_recursion_depth = 100;       // nested macro calls + includes + imports
  size_t max_render_steps = 10'000'000;   // for-loop iterations + macro calls of one render()
  size_t max_text_bytes = size_t{256} << 20;  // the output, and any string or list built while rendering
};

/// A parsed and checked template. Immutable; owned by the Environment that loaded it.
class Template {
 public:
  virtual ~Template() = default;
  /// The name it was loaded by ("ops/op.h.j2"), or the name given to load_string().
  virtual const std::string& name() const = 0;
  /// The file it was read from (the display path of its buffer in the SourceManager).
  virtual const std::string& path() const = 0;
  virtual uint32_t file_id() const = 0;
  /// A stable textual form of the AST, for parser tests.
  virtual std::string dump() const = 0;
};

class Environment {
 public:
  Environment(SourceManager& sources, DiagnosticEngine& diags, EnvironmentOptions options = {});
  ~Environment();
  Environment(const Environment&) = delete;
  Environment& operator=(const Environment&) = delete;

  /// Appends a directory to the search path; directories added first win.
  void add_search_dir(std::string dir);
  /// Registers an in-memory template; in-memory templates win over the search path.
  void add_memory_template(std::string name, std::string source);

  // Extension API: built-ins are registered through the same calls. Re-registering a name replaces it.
  void register_filter(std::string name, Signature sig, Builtin fn, BuiltinOptions options = {});
  void register_test(std::string name, Signature sig, TestFunction fn, BuiltinOptions options = {});
  void register_function(std::string name, Signature sig, Builtin fn);
  /// A variable visible to every template (also imported ones), below the render context.
  void set_global(std::string name, Value value);

  /// Loads a template by name: resolves it, reads, parses and checks it and every template it includes
  /// or imports by a constant name. Cached by resolved path. Returns null after reporting diagnostics.
  const Template* load(std::string_view name);
  /// Parses and checks a template from memory; `name` is its display path in diagnostics. Templates it
  /// includes resolve through add_memory_template() and the search path. Not cached by name.
  const Template* load_string(std::string name, std::string source);
  /// Checks every *.j2 file under `dir` (recursively, sorted) without data. True if all are clean.
  bool check_all(const std::string& dir);

  /// Renders `tmpl` with `context` (a map, or none for no variables), appending to `out`. On error the
  /// diagnostics are reported, `out` is left as it was, and the result is false.
  bool render(const Template& tmpl, const Value& context, std::string& out);
  /// load_string() + render(): for tests and small jobs.
  bool render_string(std::string name, std::string source, const Value& context, std::string& out);

  /// Which file a name resolves to (first search directory that has it), or nullopt; "<memory>:name"
  /// style paths are not returned: in-memory templates resolve to their name.
  std::optional<std::string> resolve(std::string_view name) const;
  /// The text of the file `name` resolves to, read as it is, not parsed: for the headers that generators copy
  /// beside their outputs. Recorded in loaded_files() like a template, so depfiles list it. Reports an error
  /// (no location) and returns nullopt when it is not on the search path or cannot be read.
  std::optional<std::string_view> read_verbatim(std::string_view name);
  /// The resolved paths of every file read so far (templates and read_verbatim()), in first-read order (for
  /// depfiles).
  const std::vector<std::string>& loaded_files() const;

  SourceManager& sources();
  DiagnosticEngine& diags();
  const EnvironmentOptions& options() const;

  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace kforge::tmpl
