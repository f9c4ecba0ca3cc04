// Internal: the tree-walking interpreter. One Renderer renders one template (with everything it
// includes, imports and calls) into one output string.
//
// Scopes are frames with a parent link: the template's root frame, one frame per for loop (reused and
// cleared for each iteration, so nothing leaks between iterations), one per macro call, one per include.
// Lookup walks the chain, then the render context (absent for imported templates), then the
// environment's globals. Values are handles, so binding never deep-copies.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "template/ast.h"
#include "template/callable.h"
#include "template/env_impl.h"
#include "template/small_vector.h"
#include "template/value_ops.h"

namespace kforge::tmpl {

struct Frame {
  Frame* parent = nullptr;
  const Map* context = nullptr;      // the render context, on the root frame of a rendered template
  bool include_boundary = false;     // `loop` of the includer is not visible through it (as in Jinja)
  const TemplateImpl* tmpl = nullptr;
  SmallVec<std::pair<std::string_view, Value>, 6> vars;
  std::shared_ptr<bool> alive;       // created when a macro captures this frame; false once it is gone

  Frame() = default;
  Frame(const Frame&) = delete;
  Frame& operator=(const Frame&) = delete;
  ~Frame() {
    if (alive) *alive = false;
  }
  void set(std::string_view name, Value value) {
    for (auto& [n, v] : vars) {
      if (n == name) {
        v = std::move(value);
        return;
      }
    }
    vars.emplace_back(name, std::move(value));
  }
  /// Forgets all variables (next loop iteration); macros that captured the old scope see it as gone.
  void reset() {
    vars.clear();
    if (alive) {
      *alive = false;
      alive.reset();
    }
  }
};

/// Storage for the bound arguments a CallArgs views: where each parameter's value is (an evaluated
/// argument or a default), and the extra keyword arguments of signatures that take them.
struct BoundArgs {
  SmallVec<const Value*, 6> params;
  std::vector<std::pair<std::string, Value>> kwargs;
};

/// How to name the object of an attribute or item access in messages: by its expression (the path is
/// only built if needed) or by a ready-made path.
struct ObjectPath {
  const ast::Expr* expr = nullptr;
  const std::string* text = nullptr;
};

struct RenderAbort {};
/// The state behind the `loop` variable of one for loop (mutated in place as the loop advances).
struct LoopState {
  const std::vector<Value>* items = nullptr;
  size_t index0 = 0;
  Value last_changed;
  bool changed_called = false;
};  // the diagnostic has been reported

class Renderer {
 public:
  Renderer(Environment::Impl& env, std::string& out) : env_(env), out_(&out) {}

  /// Renders `tmpl` with `context` into the output. Returns false after reporting a diagnostic.
  bool render(const TemplateImpl& tmpl, const Value& context);

  // ---- used by built-ins (through CallArgs) and callables ----
  [[noreturn]] void fail(SourceLoc loc, std::string message, std::vector<DiagNote> notes = {});
  /// Counts one loop iteration or macro call against EnvironmentOptions::max_render_steps.
  void count_step(SourceLoc loc);
  /// Fails at `loc` when a text of `bytes` (or a list of that many items) would exceed max_text_bytes.
  void check_size(size_t bytes, SourceLoc loc, std::string_view what);
  [[noreturn]] void fail_undefined(const Value& undefined, SourceLoc used_at);
  void require_defined(const Value& v, SourceLoc used_at) {
    if (v.is_undefined()) fail_undefined(v, used_at);
  }
  /// Before taking a value's truthiness: lenient undefined values are simply false.
  void require_truthiness(const Value& v, SourceLoc used_at);
  /// Python str() with booleans as true/false (the `~` operator, join, string); errors for undefined.
  void stringify(const Value& v, std::string& out, SourceLoc loc);
  std::string stringify(const Value& v, SourceLoc loc) {
    std::string s;
    stringify(v, s, loc);
    return s;
  }
  /// {{ }} printing: like stringify but none, lists, maps, macros are errors.
  void print(const Value& v, std::string& out, SourceLoc loc, bool tuple_literal = false);

  Value apply_filter(const BuiltinEntry& filter, const Value& input, EvaluatedArgs& args, SourceLoc loc);
  bool apply_test(const BuiltinEntry& test, const Value& input, EvaluatedArgs& args, SourceLoc loc);
  Value call_function(const BuiltinEntry& fn, EvaluatedArgs& args, SourceLoc loc);
  /// Attribute or key lookup; a missing one yields an undefined value described by `path`.
  Value get_attribute(const Value& object, std::string_view name, SourceLoc loc, ObjectPath object_path);
  Value get_item(const Value& object, const Value& key, SourceLoc loc, ObjectPath object_path);
  Value call_value(const Value& callee, EvaluatedArgs& args, SourceLoc loc, ObjectPath callee_path);
  /// Calls a macro; its output is returned as a string, or appended to `into` (then none is returned).
  Value call_macro(const ast::MacroNode& macro, Frame* closure, EvaluatedArgs& args, SourceLoc loc,
                   std::string* into = nullptr);
  /// Iterates a value as `for` does (list items, map keys, string characters).
  std::vector<Value> iterate(const Value& v, SourceLoc loc, bool pairs_for_maps = false);
  Environment::Impl& env() { return env_; }
  /// An undefined value that reports `reason` when consumed.
  Value make_undefined(std::string path, SourceLoc loc, std::vector<std::string> notes = {},
                       std::string reason = {});

  // Binary operators and comparisons (eval.cpp).
  Value binary(ast::BinaryOp op, const Value& a, const Value& b, SourceLoc loc);
  bool compare(ast::CompareOp op, const Value& a, const Value& b, SourceLoc loc);

 private:
  friend class LoopCallable;
  void exec(const ast::Body& body, Frame& frame);
  void exec_for(const ast::ForNode& node, Frame& frame);
  void exec_include(const ast::IncludeNode& node, Frame& frame);
  void exec_import(const ast::Node& node, Frame& frame);
  void assign(const ast::Target& target, Value value, Frame& frame);
  const TemplateImpl* load_dynamic(const ast::Expr& name_expr, const TemplateImpl* resolved, Frame& frame,
                                   bool ignore_missing, const ChainEntry& site);
  std::shared_ptr<NamespaceObject> module_of(const TemplateImpl& tmpl, SourceLoc loc);

  Value eval(const ast::Expr& e, Frame& frame);
  /// Like eval(), but names, constants and found attributes are returned by reference (no reference
  /// count traffic); anything else is evaluated into `scratch`. The reference is only valid until the
  /// next evaluation that may run template code (a macro call could rebind what it refers to).
  const Value& eval_ref(const ast::Expr& e, Frame& frame, Value& scratch);
  Value eval_name(const ast::NameExpr& e, Frame& frame);
  Value eval_call(const ast::CallExpr& e, Frame& frame);
  /// {{ f(...) }}: prints the call's result, letting macros render straight into the output.
  void print_call(const ast::CallExpr& e, Frame& frame);
  Value eval_callee(const ast::CallExpr& e, Frame& frame);
  Value eval_filter(const ast::FilterExpr& e, const Value& input, Frame& frame);
  void eval_args(const ast::ArgList& args, Frame& frame, EvaluatedArgs& out);
  Value eval_slice(const ast::SliceExpr& e, Frame& frame);
  const Value* lookup(std::string_view name, const Frame& frame) const;
  std::vector<std::string> visible_names(const Frame& frame) const;
  std::string path_of(const ast::Expr& e) const;
  std::string path_of(ObjectPath p) const;
  Value missing(UndefinedInfo::Cause cause, const Value& container, Value key, SourceLoc loc, ObjectPath object_path);
  std::vector<DiagNote> undefined_notes(const UndefinedInfo& info, const std::string& object_path);

  struct ChainGuard;
  Environment::Impl& env_;
  std::string* out_;
  size_t steps_ = 0;  // count_step()
  std::vector<ChainEntry> chain_;
  const Frame* current_frame_ = nullptr;  // the scope of the statement being executed (for did-you-mean)
  std::vector<const TemplateImpl*> include_stack_;
  std::unordered_map<const TemplateImpl*, std::shared_ptr<NamespaceObject>> modules_;
};

/// Binds evaluated arguments to a signature (Python rules). Fails through the renderer. `out` views
/// `args` and `storage`, which must outlive the call.
void bind_arguments(Renderer& r, const BuiltinEntry& entry, EvaluatedArgs& args, SourceLoc loc, BoundArgs& storage,
                    CallArgs& out);

}  // namespace kforge::tmpl
