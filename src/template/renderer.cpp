// Statement execution, calls (macros, built-ins, loop methods), includes and imports.
#include "template/renderer.h"

#include <fmt/format.h>

#include "support/text.h"
#include "template/value_ops.h"

namespace kforge::tmpl {

using namespace ast;


/// A macro closes over the frame it was defined in; `alive` tells whether that scope still exists.
class MacroCallable : public Callable {
 public:
  MacroCallable(const MacroNode& node, Frame* closure, std::shared_ptr<bool> alive, std::shared_ptr<const void> keep)
      : node_(node), closure_(closure), alive_(std::move(alive)), keep_(std::move(keep)) {}
  std::string describe() const override { return fmt::format("macro '{}'", node_.name); }
  Value call(Renderer& r, EvaluatedArgs& args, SourceLoc loc) const override {
    if (!*alive_) {
      r.fail(loc, fmt::format("macro '{}' is called after the scope that defined it has ended", node_.name));
    }
    return r.call_macro(node_, closure_, args, loc);
  }
  void call_into(Renderer& r, EvaluatedArgs& args, SourceLoc loc, std::string& out) const override {
    if (!*alive_) {
      r.fail(loc, fmt::format("macro '{}' is called after the scope that defined it has ended", node_.name));
    }
    r.call_macro(node_, closure_, args, loc, &out);
  }

 private:
  const MacroNode& node_;
  Frame* closure_;
  std::shared_ptr<bool> alive_;
  std::shared_ptr<const void> keep_;
};

void Callable::call_into(Renderer& renderer, EvaluatedArgs& args, SourceLoc loc, std::string& out) const {
  renderer.print(call(renderer, args, loc), out, loc);
}

struct Renderer::ChainGuard {
  ChainGuard(Renderer& r, ChainEntry entry) : r_(r) {
    if (r.chain_.size() >= r.env_.options.max_recursion_depth) {
      r.fail(entry.loc, fmt::format("maximum template recursion depth ({}) exceeded", r.env_.options.max_recursion_depth));
    }
    r.chain_.push_back(std::move(entry));
  }
  ~ChainGuard() { r_.chain_.pop_back(); }
  Renderer& r_;
};

void Renderer::count_step(SourceLoc loc) {
  if (++steps_ > env_.options.max_render_steps) {
    fail(loc, fmt::format("rendering takes more than {} loop iterations and macro calls", env_.options.max_render_steps));
  }
}

void Renderer::check_size(size_t bytes, SourceLoc loc, std::string_view what) {
  if (bytes > env_.options.max_text_bytes) {
    fail(loc, fmt::format("{} would be larger than the limit of {} bytes", what, env_.options.max_text_bytes));
  }
}

namespace {
thread_local RenderNamespaces* g_render_namespaces = nullptr;
}  // namespace

RenderNamespaces::RenderNamespaces() : previous_(g_render_namespaces) { g_render_namespaces = this; }

RenderNamespaces::~RenderNamespaces() {
  g_render_namespaces = previous_;
  for (const std::weak_ptr<NamespaceObject>& made : made_) {
    if (std::shared_ptr<NamespaceObject> ns = made.lock()) ns->attrs = Map{};
  }
}

void RenderNamespaces::note(const std::shared_ptr<NamespaceObject>& ns) {
  if (g_render_namespaces != nullptr) g_render_namespaces->made_.push_back(ns);
}

bool Renderer::render(const TemplateImpl& tmpl, const Value& context) {
  RenderNamespaces namespaces;
  try {
    if (!context.is_none() && !context.is_map()) {
      fail({}, fmt::format("the render context must be a map, not {}", a_type(context)));
    }
    Frame root;
    root.context = context.is_map() ? &context.as_map() : nullptr;
    root.tmpl = &tmpl;
    include_stack_.push_back(&tmpl);
    exec(tmpl.body, root);
    return true;
  } catch (const RenderAbort&) {
    return false;
  }
}

namespace {
/// Restores the renderer's notion of the current scope when a nested exec() returns or unwinds.
struct CurrentFrameGuard {
  const Frame*& slot;
  const Frame* saved;
  ~CurrentFrameGuard() { slot = saved; }
};
}  // namespace

void Renderer::exec(const Body& body, Frame& frame) {
  CurrentFrameGuard guard{current_frame_, current_frame_};
  for (const NodePtr& node : body) {
    current_frame_ = &frame;
    switch (node->kind) {
      case NodeKind::kText:
        out_->append(static_cast<const TextNode&>(*node).text);
        break;
      case NodeKind::kOutput: {
        const Expr& e = *static_cast<const OutputNode&>(*node).expr;
        if (e.kind == ExprKind::kCall && !static_cast<const CallExpr&>(e).resolved_function) {
          print_call(static_cast<const CallExpr&>(e), frame);
          break;
        }
        Value scratch;
        print(eval_ref(e, frame, scratch), *out_, e.loc, e.kind == ExprKind::kTuple);
        break;
      }
      case NodeKind::kIf: {
        const auto& n = static_cast<const IfNode&>(*node);
        bool taken = false;
        for (const IfBranch& b : n.branches) {
          Value scratch;
          const Value& cond = eval_ref(*b.cond, frame, scratch);
          require_truthiness(cond, b.cond->loc);
          if (truthy(cond)) {
            exec(b.body, frame);
            taken = true;
            break;
          }
        }
        if (!taken) exec(n.else_body, frame);
        break;
      }
      case NodeKind::kFor:
        exec_for(static_cast<const ForNode&>(*node), frame);
        break;
      case NodeKind::kSet: {
        const auto& n = static_cast<const SetNode&>(*node);
        assign(n.target, eval(*n.value, frame), frame);
        break;
      }
      case NodeKind::kSetBlock: {
        const auto& n = static_cast<const SetBlockNode&>(*node);
        std::string captured;
        std::string* saved = out_;
        out_ = &captured;
        try {
          exec(n.body, frame);
        } catch (...) {
          out_ = saved;
          throw;
        }
        out_ = saved;
        Value value(std::move(captured));
        for (const auto& f : n.filters) value = eval_filter(*f, value, frame);
        assign(n.target, std::move(value), frame);
        break;
      }
      case NodeKind::kMacro: {
        const auto& n = static_cast<const MacroNode&>(*node);
        if (!frame.alive) frame.alive = std::make_shared<bool>(true);
        frame.set(n.name, Value::callable(std::make_shared<MacroCallable>(n, &frame, frame.alive, nullptr)));
        break;
      }
      case NodeKind::kInclude:
        exec_include(static_cast<const IncludeNode&>(*node), frame);
        break;
      case NodeKind::kImport:
      case NodeKind::kFromImport:
        exec_import(*node, frame);
        break;
    }
    check_size(out_->size(), node->loc, "the rendered text");
  }
}

void Renderer::assign(const Target& target, Value value, Frame& frame) {
  if (!target.ns_attr.empty()) {
    const Value* ns = lookup(target.names[0], frame);
    if (!ns || ns->is_undefined()) fail(target.loc, fmt::format("'{}' is undefined", target.names[0]));
    if (!ns->is_namespace() || !ns->as_namespace().module.empty()) {
      fail(target.loc, fmt::format("cannot assign to an attribute of '{}': it is {}, not a namespace", target.names[0],
                                   ns->is_namespace() ? "an imported template" : a_type(*ns)),
           {{SourceLoc{}, "create it with `{% set ns = namespace(attr=value) %}`"}});
    }
    ns->as_namespace().attrs.set(target.ns_attr, std::move(value));
    return;
  }
  if (!target.unpack) {
    frame.set(target.names[0], std::move(value));
    return;
  }
  require_defined(value, target.loc);
  std::vector<Value> parts = iterate(value, target.loc);
  if (parts.size() != target.names.size()) {
    fail(target.loc, fmt::format("cannot unpack {} value{} into {} name{}", parts.size(), parts.size() == 1 ? "" : "s",
                                 target.names.size(), target.names.size() == 1 ? "" : "s"));
  }
  for (size_t i = 0; i < parts.size(); ++i) frame.set(target.names[i], std::move(parts[i]));
}

void Renderer::require_truthiness(const Value& v, SourceLoc used_at) {
  if (v.is_undefined() && !is_lenient_undefined(v)) fail_undefined(v, used_at);
}

std::vector<Value> Renderer::iterate(const Value& v, SourceLoc loc, bool pairs_for_maps) {
  if (is_lenient_undefined(v)) return {};
  require_defined(v, loc);
  switch (v.kind()) {
    case Value::Kind::kList: return v.as_list();
    case Value::Kind::kMap: {
      std::vector<Value> out;
      out.reserve(v.as_map().size());
      for (const auto& [k, item] : v.as_map()) {
        out.push_back(pairs_for_maps ? Value::list({Value(k), item}) : Value(k));
      }
      return out;
    }
    case Value::Kind::kString: {
      std::vector<Value> out;
      for (std::string_view c : utf8_chars(v.as_string())) out.emplace_back(std::string(c));
      return out;
    }
    default:
      fail(loc, fmt::format("{} is not iterable", a_type(v)));
  }
}

void Renderer::exec_for(const ForNode& node, Frame& frame) {
  const Value seq = eval(*node.iter, frame);
  require_truthiness(seq, node.iter->loc);
  // `for k, v in map` iterates (key, value) pairs (a deliberate deviation: Jinja would unpack keys).
  const bool pairs = seq.is_map() && node.target.names.size() == 2;
  std::vector<Value> owned;
  const std::vector<Value>* items = nullptr;
  if (seq.is_list() && !node.filter) {
    items = &seq.as_list();
  } else {
    owned = iterate(seq, node.iter->loc, pairs);
    items = &owned;
  }
  Frame body_frame;
  body_frame.parent = &frame;
  body_frame.tmpl = frame.tmpl;
  if (node.filter) {
    std::vector<Value> kept;
    for (Value& item : owned) {
      count_step(node.loc);
      body_frame.reset();
      assign(node.target, item, body_frame);
      const Value keep = eval(*node.filter, body_frame);
      require_truthiness(keep, node.filter->loc);
      if (truthy(keep)) kept.push_back(std::move(item));
    }
    owned.swap(kept);
  }
  if (items->empty()) {
    exec(node.else_body, frame);
    return;
  }
  auto state = std::make_shared<LoopState>();
  state->items = items;
  const Value loop = Value::loop_object(state);
  for (size_t i = 0; i < items->size(); ++i) {
    count_step(node.loc);
    body_frame.reset();
    state->index0 = i;
    body_frame.vars.emplace_back("loop", loop);
    assign(node.target, (*items)[i], body_frame);
    exec(node.body, body_frame);
  }
}

const TemplateImpl* Renderer::load_dynamic(const Expr& name_expr, const TemplateImpl* resolved, Frame& frame,
                                           bool ignore_missing, const ChainEntry& site) {
  if (resolved) return resolved;
  const Value name = eval(name_expr, frame);
  require_defined(name, name_expr.loc);
  if (!name.is_string()) fail(name_expr.loc, fmt::format("template name must be a string, not {}", a_type(name)));
  if (ignore_missing && !env_.resolve(name.as_string())) return nullptr;
  // Diagnostics from loading get the render chain as notes.
  std::vector<std::pair<const TemplateImpl*, ChainEntry>> saved;
  saved.swap(env_.check_stack);
  for (const ChainEntry& c : chain_) env_.check_stack.push_back({nullptr, c});
  const TemplateImpl* t = env_.load(name.as_string(), &site, ignore_missing);
  env_.check_stack.swap(saved);
  if (!t) {
    if (ignore_missing) return nullptr;
    throw RenderAbort{};
  }
  return t;
}

void Renderer::exec_include(const IncludeNode& node, Frame& frame) {
  const ChainEntry site{ChainEntry::Kind::kInclude, "", node.loc};
  const TemplateImpl* t = load_dynamic(*node.name, node.resolved, frame, node.ignore_missing, site);
  if (!t) return;
  for (const TemplateImpl* open : include_stack_) {
    if (open == t) fail(node.loc, fmt::format("include cycle: '{}' includes itself", t->name()));
  }
  ChainGuard guard(*this, site);
  include_stack_.push_back(t);
  Frame root;
  root.parent = &frame;
  root.include_boundary = true;
  root.tmpl = t;
  exec(t->body, root);
  include_stack_.pop_back();
}

std::shared_ptr<NamespaceObject> Renderer::module_of(const TemplateImpl& tmpl, SourceLoc loc) {
  if (auto it = modules_.find(&tmpl); it != modules_.end()) {
    if (!it->second) fail(loc, fmt::format("import cycle: '{}' imports itself", tmpl.name()));
    return it->second;
  }
  modules_[&tmpl] = nullptr;  // in progress
  ChainGuard guard(*this, {ChainEntry::Kind::kImport, "", loc});
  auto root = std::make_shared<Frame>();
  root->tmpl = &tmpl;
  std::string discarded;
  std::string* saved = out_;
  out_ = &discarded;
  try {
    exec(tmpl.body, *root);
  } catch (...) {
    out_ = saved;
    throw;
  }
  out_ = saved;
  auto module = std::make_shared<NamespaceObject>();
  module->module = tmpl.name();
  for (const std::string& name : tmpl.exports) {
    for (const auto& [n, v] : root->vars) {
      if (n == name) module->attrs.set(name, v);
    }
  }
  module->keep_alive = root;  // the module's macros close over its root frame
  modules_[&tmpl] = module;
  return module;
}

void Renderer::exec_import(const Node& node, Frame& frame) {
  const ChainEntry site{ChainEntry::Kind::kImport, "", node.loc};
  if (node.kind == NodeKind::kImport) {
    const auto& n = static_cast<const ImportNode&>(node);
    const TemplateImpl* t = load_dynamic(*n.name, n.resolved, frame, false, site);
    frame.set(n.alias, Value::namespace_object(module_of(*t, n.loc)));
    return;
  }
  const auto& n = static_cast<const FromImportNode&>(node);
  const TemplateImpl* t = load_dynamic(*n.name, n.resolved, frame, false, site);
  auto module = module_of(*t, n.loc);
  for (const ImportedName& in : n.names) {
    const Value* v = module->attrs.find(in.name);
    if (!v) {
      std::vector<DiagNote> notes;
      if (auto m = closest_match(in.name, module->attrs.keys())) notes.push_back({SourceLoc{}, fmt::format("did you mean '{}'?", *m)});
      fail(in.loc, fmt::format("template '{}' does not export '{}'", t->name(), in.name), std::move(notes));
    }
    frame.set(in.alias, *v);
  }
}

// ---------------------------------------------------------------- calls

void bind_arguments(Renderer& r, const BuiltinEntry& entry, EvaluatedArgs& args, SourceLoc loc, BoundArgs& storage,
                    CallArgs& out) {
  const Signature& sig = entry.signature;
  const size_t nparams = sig.params.size();
  const size_t npositional = args.positional.size();
  out.renderer_ = &r;
  out.loc_ = loc;
  out.passed_mask_ = 0;
  for (size_t i = 0; i < nparams; ++i) storage.params.push_back(nullptr);
  bool ok = npositional <= nparams || sig.varargs;
  for (size_t i = 0; ok && i < npositional && i < nparams; ++i) {
    storage.params[i] = &args.positional[i];
    out.passed_mask_ |= uint64_t{1} << i;
  }
  for (size_t k = 0; ok && k < args.keywords.size(); ++k) {
    auto& [name, value] = args.keywords[k];
    size_t index = nparams;
    for (size_t i = 0; i < nparams; ++i) {
      if (sig.params[i].name == name) index = i;
    }
    if (index == nparams) {
      if (!sig.kwargs) ok = false;
      else storage.kwargs.emplace_back(std::string(name), std::move(value));
      continue;
    }
    if ((out.passed_mask_ >> index) & 1) {
      ok = false;
      continue;
    }
    storage.params[index] = &value;
    out.passed_mask_ |= uint64_t{1} << index;
  }
  for (size_t i = 0; ok && i < nparams; ++i) {
    if (!((out.passed_mask_ >> i) & 1)) {
      if (!sig.params[i].default_value) ok = false;
      else storage.params[i] = &*sig.params[i].default_value;
    }
  }
  if (ok) {
    out.params_ = storage.params;
    // Positional arguments beyond the declared parameters (only with sig.varargs) stay where they are.
    if (npositional > nparams) out.varargs_ = std::span<const Value>(args.positional).subspan(nparams);
    out.kwargs_ = storage.kwargs;
    return;
  }
  // Re-derive the precise message with the shared checker.
  std::vector<std::pair<std::string_view, SourceLoc>> keywords;
  for (size_t k = 0; k < args.keywords.size(); ++k) {
    keywords.emplace_back(args.keywords[k].first, k < args.keyword_locs.size() ? args.keyword_locs[k] : SourceLoc{});
  }
  const char* kind = entry.kind == BuiltinEntry::Kind::kFilter ? "filter" : entry.kind == BuiltinEntry::Kind::kTest ? "test" : "function";
  auto problem = check_arity(sig, args.positional.size(), keywords, fmt::format("{} '{}'", kind, entry.name), entry.name);
  std::vector<DiagNote> notes;
  if (problem) {
    for (std::string& n : problem->notes) notes.push_back({SourceLoc{}, std::move(n)});
    r.fail(problem->loc.valid() ? problem->loc : loc, std::move(problem->message), std::move(notes));
  }
  r.fail(loc, fmt::format("bad arguments to {} '{}'", kind, entry.name));
}

Value Renderer::apply_filter(const BuiltinEntry& filter, const Value& input, EvaluatedArgs& args, SourceLoc loc) {
  if (is_lenient_undefined(input) && !filter.options.accepts_undefined) {
    static const Value kEmpty("");
    return apply_filter(filter, kEmpty, args, loc);  // Jinja's lenient Undefined behaves as ''
  }
  if (!filter.options.accepts_undefined) require_defined(input, loc);
  for (const Value& a : args.positional) require_defined(a, loc);
  for (const auto& [k, a] : args.keywords) require_defined(a, loc);
  BoundArgs storage;
  CallArgs bound;
  bound.input_ = &input;
  bind_arguments(*this, filter, args, loc, storage, bound);
  return filter.fn(bound);
}

bool Renderer::apply_test(const BuiltinEntry& test, const Value& input, EvaluatedArgs& args, SourceLoc loc) {
  if (!test.options.accepts_undefined) require_defined(input, loc);
  for (const Value& a : args.positional) require_defined(a, loc);
  for (const auto& [k, a] : args.keywords) require_defined(a, loc);
  BoundArgs storage;
  CallArgs bound;
  bound.input_ = &input;
  bind_arguments(*this, test, args, loc, storage, bound);
  return test.test(bound);
}

Value Renderer::call_function(const BuiltinEntry& fn, EvaluatedArgs& args, SourceLoc loc) {
  for (const Value& a : args.positional) require_defined(a, loc);
  for (const auto& [k, a] : args.keywords) require_defined(a, loc);
  static const Value kNone;
  BoundArgs storage;
  CallArgs bound;
  bound.input_ = &kNone;
  bind_arguments(*this, fn, args, loc, storage, bound);
  return fn.fn(bound);
}

Value Renderer::call_value(const Value& callee, EvaluatedArgs& args, SourceLoc loc, ObjectPath callee_path) {
  require_defined(callee, loc);
  if (!callee.is_callable()) {
    fail(loc, fmt::format("'{}' is {}, not a macro; it cannot be called", path_of(callee_path), a_type(callee)));
  }
  return callee.as_callable().call(*this, args, loc);
}

Value Renderer::eval_call(const CallExpr& e, Frame& frame) {
  EvaluatedArgs args;
  if (e.resolved_function) {
    eval_args(e.args, frame, args);
    return call_function(*e.resolved_function, args, e.loc);
  }
  const Value callee = eval_callee(e, frame);
  eval_args(e.args, frame, args);
  return call_value(callee, args, e.loc, {e.callee.get(), nullptr});
}

void Renderer::print_call(const CallExpr& e, Frame& frame) {
  const Value callee = eval_callee(e, frame);
  EvaluatedArgs args;
  eval_args(e.args, frame, args);
  if (!callee.is_callable()) {
    call_value(callee, args, e.loc, {e.callee.get(), nullptr});  // reports the error
  }
  callee.as_callable().call_into(*this, args, e.loc, *out_);
}

Value Renderer::eval_callee(const CallExpr& e, Frame& frame) {
  Value callee = eval(*e.callee, frame);
  if (callee.is_undefined() && e.callee->kind == ExprKind::kName) {
    const std::string& name = static_cast<const NameExpr&>(*e.callee).name;
    std::vector<std::string> candidates = env_.names(BuiltinEntry::Kind::kFunction);
    for (std::string& n : visible_names(frame)) candidates.push_back(std::move(n));
    std::vector<DiagNote> notes;
    if (auto m = closest_match(name, candidates)) notes.push_back({SourceLoc{}, fmt::format("did you mean '{}'?", *m)});
    fail(e.loc, fmt::format("unknown function or macro '{}'", name), std::move(notes));
  }
  return callee;
}

Value Renderer::call_macro(const MacroNode& macro, Frame* closure, EvaluatedArgs& args, SourceLoc loc,
                           std::string* into) {
  count_step(loc);
  const size_t nparams = macro.params.size();
  // Which keyword argument binds each parameter (-1: none); macros rarely have more than a few.
  SmallVec<int, 8> bound;
  for (size_t i = 0; i < nparams; ++i) bound.push_back(-1);
  Frame frame;
  frame.parent = closure;
  frame.tmpl = closure ? closure->tmpl : nullptr;
  auto problem = [&]() {
    std::vector<std::pair<std::string_view, SourceLoc>> keywords;
    for (size_t k = 0; k < args.keywords.size(); ++k) keywords.emplace_back(args.keywords[k].first, args.keyword_locs[k]);
    if (auto p = check_arity(macro_signature(macro), args.positional.size(), keywords,
                             fmt::format("macro '{}'", macro.name), macro.name)) {
      std::vector<DiagNote> notes;
      for (std::string& n : p->notes) notes.push_back({SourceLoc{}, std::move(n)});
      fail(p->loc.valid() ? p->loc : loc, std::move(p->message), std::move(notes));
    }
  };
  if (args.positional.size() > nparams) problem();
  for (size_t k = 0; k < args.keywords.size(); ++k) {
    size_t index = nparams;
    for (size_t i = 0; i < nparams; ++i) {
      if (macro.params[i].name == args.keywords[k].first) index = i;
    }
    if (index == nparams || index < args.positional.size() || bound[index] >= 0) problem();
    bound[index] = static_cast<int>(k);
  }
  // Bind in declaration order so that defaults can refer to earlier parameters.
  frame.vars.reserve(nparams);
  for (size_t i = 0; i < nparams; ++i) {
    const MacroParam& p = macro.params[i];
    if (i < args.positional.size()) {
      frame.vars.emplace_back(p.name, std::move(args.positional[i]));
    } else if (bound[i] >= 0) {
      frame.vars.emplace_back(p.name, std::move(args.keywords[static_cast<size_t>(bound[i])].second));
    } else if (p.default_value) {
      Value v = eval(*p.default_value, frame);
      frame.vars.emplace_back(p.name, std::move(v));
    } else {
      problem();
    }
  }
  ChainGuard guard(*this, {ChainEntry::Kind::kMacro, macro.name, loc});
  std::string result;
  std::string* saved = out_;
  out_ = into ? into : &result;
  try {
    exec(macro.body, frame);
  } catch (...) {
    out_ = saved;
    throw;
  }
  out_ = saved;
  if (into) return Value();
  return Value(std::move(result));
}

}  // namespace kforge::tmpl
