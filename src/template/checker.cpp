// The check pass: runs once per template after parsing, before any rendering. Resolves filters, tests
// and functions against the registry, loads and checks every template included or imported by a
// constant name, checks what imports export, and checks the arity of every call whose callee is known
// statically (registered functions, the template's own macros, imported macros).
#include <fmt/format.h>

#include <set>

#include "support/text.h"
#include "template/env_impl.h"
#include "template/value_ops.h"

namespace kforge::tmpl {

namespace {

using namespace ast;

std::string format_default(const Value& v) {
  switch (v.kind()) {
    case Value::Kind::kNone: return "none";
    case Value::Kind::kBool: return v.as_bool() ? "true" : "false";
    case Value::Kind::kUndefined: return "...";
    default: return python_repr(v);
  }
}

}  // namespace

std::string format_signature(std::string_view name, const Signature& sig) {
  std::string out = std::string(name) + "(";
  bool first = true;
  for (const Param& p : sig.params) {
    if (!first) out += ", ";
    first = false;
    out += p.name;
    if (p.default_value) out += "=" + format_default(*p.default_value);
  }
  if (sig.varargs) out += first ? "..." : ", ...";
  return out + ")";
}

Signature macro_signature(const MacroNode& macro) {
  Signature sig;
  for (const MacroParam& p : macro.params) {
    if (p.default_value) {
      sig.params.emplace_back(p.name, Value::undefined(nullptr));
    } else {
      sig.params.emplace_back(p.name);
    }
  }
  return sig;
}

std::optional<ArityProblem> check_arity(const Signature& sig, size_t positional,
                                        const std::vector<std::pair<std::string_view, SourceLoc>>& keywords,
                                        std::string_view what, std::string_view display) {
  const std::string signature_note = "signature: " + format_signature(display, sig);
  const size_t nparams = sig.params.size();
  if (positional > nparams && !sig.varargs) {
    return ArityProblem{{},
                        nparams == 0 ? fmt::format("{} takes no arguments, got {}", what, positional)
                                     : fmt::format("too many arguments to {}: expected at most {}, got {}", what,
                                                   nparams, positional),
                        {signature_note}};
  }
  std::vector<bool> bound(nparams, false);
  for (size_t i = 0; i < positional && i < nparams; ++i) bound[i] = true;
  for (const auto& [name, loc] : keywords) {
    size_t index = nparams;
    for (size_t i = 0; i < nparams; ++i) {
      if (sig.params[i].name == name) index = i;
    }
    if (index == nparams) {
      if (sig.kwargs) continue;
      std::vector<std::string> candidates;
      for (const Param& p : sig.params) candidates.push_back(p.name);
      std::vector<std::string> notes;
      if (auto m = closest_match(name, candidates)) notes.push_back(fmt::format("did you mean '{}'?", *m));
      notes.push_back(signature_note);
      return ArityProblem{loc, fmt::format("{} has no parameter named '{}'", what, name), std::move(notes)};
    }
    if (bound[index]) {
      return ArityProblem{loc, fmt::format("{} got multiple values for argument '{}'", what, name), {signature_note}};
    }
    bound[index] = true;
  }
  for (size_t i = 0; i < nparams; ++i) {
    if (!bound[i] && !sig.params[i].default_value) {
      return ArityProblem{{}, fmt::format("missing argument '{}' in call to {}", sig.params[i].name, what),
                          {signature_note}};
    }
  }
  return std::nullopt;
}

namespace {

class Checker {
 public:
  Checker(Environment::Impl& env, TemplateImpl& tmpl) : env_(env), tmpl_(tmpl) {}

  bool run() {
    collect(tmpl_.body, /*template_level=*/true);
    for (const auto& [name, count] : declared_) {
      if (tmpl_.macros.count(name) == 0 && !name.starts_with("_") && template_level_sets_.count(name)) {
        tmpl_.exports.push_back(name);
      }
    }
    for (const auto& [name, macro] : tmpl_.macros) {
      if (!name.starts_with("_")) tmpl_.exports.push_back(name);
    }
    std::sort(tmpl_.exports.begin(), tmpl_.exports.end());
    tmpl_.exports.erase(std::unique(tmpl_.exports.begin(), tmpl_.exports.end()), tmpl_.exports.end());
    check_body(tmpl_.body);
    return ok_;
  }

 private:
  void error(SourceLoc loc, std::string message, std::vector<std::string> notes = {}) {
    Diagnostic d{Severity::kError, loc, std::move(message), {}};
    for (std::string& n : notes) d.note(std::move(n));
    env_.report(std::move(d), nullptr);
    ok_ = false;
  }

  void declare(const std::string& name, bool template_level) {
    ++declared_[name];
    if (template_level) template_level_sets_.insert(name);
  }

  // Pass 1: every name the template binds, its top-level macros and exports, and its imports.
  void collect(const Body& body, bool template_level) {
    for (const NodePtr& node : body) {
      switch (node->kind) {
        case NodeKind::kIf: {
          const auto& n = static_cast<const IfNode&>(*node);
          for (const IfBranch& b : n.branches) collect(b.body, template_level);
          collect(n.else_body, template_level);
          break;
        }
        case NodeKind::kFor: {
          const auto& n = static_cast<const ForNode&>(*node);
          for (const std::string& name : n.target.names) declare(name, false);
          collect(n.body, false);
          collect(n.else_body, false);
          break;
        }
        case NodeKind::kSet: {
          const auto& n = static_cast<const SetNode&>(*node);
          if (n.target.ns_attr.empty()) {
            for (const std::string& name : n.target.names) declare(name, template_level);
          }
          break;
        }
        case NodeKind::kSetBlock: {
          const auto& n = static_cast<const SetBlockNode&>(*node);
          if (n.target.ns_attr.empty()) declare(n.target.names[0], template_level);
          collect(n.body, false);
          break;
        }
        case NodeKind::kMacro: {
          const auto& n = static_cast<const MacroNode&>(*node);
          if (template_level) tmpl_.macros[n.name] = &n;
          declare(n.name, false);
          for (const MacroParam& p : n.params) declare(p.name, false);
          collect(n.body, false);
          break;
        }
        case NodeKind::kInclude: {
          const auto& n = static_cast<const IncludeNode&>(*node);
          if (const std::string* name = constant_string(*n.name)) {
            const ChainEntry site{ChainEntry::Kind::kInclude, "", n.loc};
            n.resolved = env_.load(*name, &site, n.ignore_missing);
            if (!n.resolved && !(n.ignore_missing && !env_.resolve(*name))) ok_ = false;
          }
          break;
        }
        case NodeKind::kImport: {
          const auto& n = static_cast<const ImportNode&>(*node);
          declare(n.alias, false);  // imports are not re-exported (as in Jinja)
          if (const std::string* name = constant_string(*n.name)) {
            const ChainEntry site{ChainEntry::Kind::kImport, "", n.loc};
            n.resolved = env_.load(*name, &site);
            if (!n.resolved) ok_ = false;
            imports_[n.alias] = n.resolved;
          }
          break;
        }
        case NodeKind::kFromImport: {
          const auto& n = static_cast<const FromImportNode&>(*node);
          for (const ImportedName& in : n.names) declare(in.alias, false);
          if (const std::string* name = constant_string(*n.name)) {
            const ChainEntry site{ChainEntry::Kind::kImport, "", n.loc};
            n.resolved = env_.load(*name, &site);
            if (!n.resolved) {
              ok_ = false;
              break;
            }
            for (const ImportedName& in : n.names) {
              if (!check_export(*n.resolved, in.name, in.loc)) continue;
              auto it = n.resolved->macros.find(in.name);
              if (it != n.resolved->macros.end()) imported_macros_[in.alias] = it->second;
            }
          }
          break;
        }
        default:
          break;
      }
    }
  }

  static const std::string* constant_string(const Expr& e) {
    if (e.kind != ExprKind::kConst) return nullptr;
    const Value& v = static_cast<const ConstExpr&>(e).value;
    return v.is_string() ? &v.as_string() : nullptr;
  }

  bool check_export(const TemplateImpl& module, const std::string& name, SourceLoc loc) {
    if (std::binary_search(module.exports.begin(), module.exports.end(), name)) return true;
    std::vector<std::string> notes;
    if (auto m = closest_match(name, module.exports)) notes.push_back(fmt::format("did you mean '{}'?", *m));
    notes.push_back(module.exports.empty() ? fmt::format("'{}' exports nothing", module.name())
                                           : fmt::format("'{}' exports: {}", module.name(), join(module.exports, ", ")));
    error(loc, fmt::format("template '{}' does not export '{}'", module.name(), name), std::move(notes));
    return false;
  }

  // Pass 2: expressions.
  void check_body(const Body& body) {
    for (const NodePtr& node : body) {
      switch (node->kind) {
        case NodeKind::kText: break;
        case NodeKind::kOutput: check_expr(*static_cast<const OutputNode&>(*node).expr); break;
        case NodeKind::kIf: {
          const auto& n = static_cast<const IfNode&>(*node);
          for (const IfBranch& b : n.branches) {
            check_expr(*b.cond);
            check_body(b.body);
          }
          check_body(n.else_body);
          break;
        }
        case NodeKind::kFor: {
          const auto& n = static_cast<const ForNode&>(*node);
          check_expr(*n.iter);
          if (n.filter) check_expr(*n.filter);
          check_body(n.body);
          check_body(n.else_body);
          break;
        }
        case NodeKind::kSet: check_expr(*static_cast<const SetNode&>(*node).value); break;
        case NodeKind::kSetBlock: {
          const auto& n = static_cast<const SetBlockNode&>(*node);
          for (const auto& f : n.filters) check_filter(*f);
          check_body(n.body);
          break;
        }
        case NodeKind::kMacro: {
          const auto& n = static_cast<const MacroNode&>(*node);
          for (const MacroParam& p : n.params) {
            if (p.default_value) check_expr(*p.default_value);
          }
          check_body(n.body);
          break;
        }
        case NodeKind::kInclude: check_expr(*static_cast<const IncludeNode&>(*node).name); break;
        case NodeKind::kImport: check_expr(*static_cast<const ImportNode&>(*node).name); break;
        case NodeKind::kFromImport: check_expr(*static_cast<const FromImportNode&>(*node).name); break;
      }
    }
  }

  std::vector<std::pair<std::string_view, SourceLoc>> keywords_of(const ArgList& args) {
    std::vector<std::pair<std::string_view, SourceLoc>> out;
    for (const KeywordArg& k : args.keywords) out.emplace_back(k.name, k.loc);
    return out;
  }

  void check_args(const ArgList& args) {
    for (const ExprPtr& a : args.positional) check_expr(*a);
    for (const KeywordArg& k : args.keywords) check_expr(*k.value);
  }

  void check_arity_at(const Signature& sig, const ArgList& args, SourceLoc call_loc, std::string_view what,
                      std::string_view display) {
    if (auto problem = check_arity(sig, args.positional.size(), keywords_of(args), what, display)) {
      error(problem->loc.valid() ? problem->loc : call_loc, std::move(problem->message), std::move(problem->notes));
    }
  }

  void check_filter(const FilterExpr& f) {
    if (f.input) check_expr(*f.input);
    check_args(f.args);
    const BuiltinEntry* entry = env_.find(BuiltinEntry::Kind::kFilter, f.name);
    if (!entry) {
      std::vector<std::string> notes;
      if (auto m = closest_match(f.name, env_.names(BuiltinEntry::Kind::kFilter))) {
        notes.push_back(fmt::format("did you mean '{}'?", *m));
      }
      error(f.loc, fmt::format("unknown filter '{}'", f.name), std::move(notes));
      return;
    }
    f.resolved = entry;
    check_arity_at(entry->signature, f.args, f.loc, fmt::format("filter '{}'", f.name), f.name);
  }

  void check_test(const TestExpr& t) {
    check_expr(*t.input);
    check_args(t.args);
    const BuiltinEntry* entry = env_.find(BuiltinEntry::Kind::kTest, t.name);
    if (!entry) {
      std::vector<std::string> notes;
      if (auto m = closest_match(t.name, env_.names(BuiltinEntry::Kind::kTest))) {
        notes.push_back(fmt::format("did you mean '{}'?", *m));
      }
      error(t.loc, fmt::format("unknown test '{}'", t.name), std::move(notes));
      return;
    }
    t.resolved = entry;
    check_arity_at(entry->signature, t.args, t.loc, fmt::format("test '{}'", t.name), t.name);
  }

  bool is_import_alias(const Expr& e, const TemplateImpl*& module) {
    if (e.kind != ExprKind::kName) return false;
    const std::string& name = static_cast<const NameExpr&>(e).name;
    auto it = imports_.find(name);
    if (it == imports_.end() || !it->second || declared_[name] != 1) return false;
    module = it->second;
    return true;
  }

  void check_call(const CallExpr& c) {
    check_args(c.args);
    const Expr& callee = *c.callee;
    if (callee.kind == ExprKind::kName) {
      const std::string& name = static_cast<const NameExpr&>(callee).name;
      auto declared = declared_.find(name);
      if (declared != declared_.end()) {
        // A template-level macro that nothing else rebinds, or an imported macro: check arity now.
        auto macro = tmpl_.macros.find(name);
        if (macro != tmpl_.macros.end() && declared->second == 1) {
          check_arity_at(macro_signature(*macro->second), c.args, c.loc, fmt::format("macro '{}'", name), name);
        } else if (auto im = imported_macros_.find(name); im != imported_macros_.end() && declared->second == 1) {
          check_arity_at(macro_signature(*im->second), c.args, c.loc, fmt::format("macro '{}'", name), name);
        }
        return;
      }
      if (const BuiltinEntry* fn = env_.find(BuiltinEntry::Kind::kFunction, name)) {
        c.resolved_function = fn;
        check_arity_at(fn->signature, c.args, c.loc, fmt::format("function '{}'", name), name);
        return;
      }
      // Not declared here: it may be a macro of a template that includes this one (includes see
      // their includer's variables, as in Jinja), so it is resolved when rendering. A near miss of a
      // registered function is almost certainly a typo, though, and is reported now.
      if (auto m = closest_match(name, env_.names(BuiltinEntry::Kind::kFunction))) {
        error(c.loc, fmt::format("unknown function or macro '{}'", name), {fmt::format("did you mean '{}'?", *m)});
      }
      return;
    }
    if (callee.kind == ExprKind::kGetAttr) {
      const auto& g = static_cast<const GetAttrExpr&>(callee);
      const TemplateImpl* module = nullptr;
      if (is_import_alias(*g.object, module)) {
        if (!check_export(*module, g.attr, g.loc)) return;
        auto it = module->macros.find(g.attr);
        if (it != module->macros.end()) {
          check_arity_at(macro_signature(*it->second), c.args, c.loc, fmt::format("macro '{}'", g.attr), g.attr);
        }
        return;
      }
    }
    check_expr(callee);
  }

  void check_expr(const Expr& e) {
    switch (e.kind) {
      case ExprKind::kConst:
      case ExprKind::kName:
        break;
      case ExprKind::kList:
      case ExprKind::kTuple:
        for (const ExprPtr& item : static_cast<const ListExpr&>(e).items) check_expr(*item);
        break;
      case ExprKind::kDict:
        for (const auto& [k, v] : static_cast<const DictExpr&>(e).items) {
          check_expr(*k);
          check_expr(*v);
        }
        break;
      case ExprKind::kGetAttr: {
        const auto& g = static_cast<const GetAttrExpr&>(e);
        const TemplateImpl* module = nullptr;
        if (is_import_alias(*g.object, module)) {
          // `m.x is defined` / `m.x | default(...)` probe for an export: not an error (as in Jinja).
          if (probing_ != &e) check_export(*module, g.attr, g.loc);
        } else {
          check_expr(*g.object);
        }
        break;
      }
      case ExprKind::kGetItem: {
        const auto& g = static_cast<const GetItemExpr&>(e);
        check_expr(*g.object);
        check_expr(*g.index);
        break;
      }
      case ExprKind::kSlice: {
        const auto& s = static_cast<const SliceExpr&>(e);
        check_expr(*s.object);
        for (const ExprPtr* p : {&s.start, &s.stop, &s.step}) {
          if (*p) check_expr(**p);
        }
        break;
      }
      case ExprKind::kUnary: check_expr(*static_cast<const UnaryExpr&>(e).operand); break;
      case ExprKind::kBinary: {
        const auto& b = static_cast<const BinaryExpr&>(e);
        check_expr(*b.lhs);
        check_expr(*b.rhs);
        break;
      }
      case ExprKind::kCompare: {
        const auto& c = static_cast<const CompareExpr&>(e);
        check_expr(*c.first);
        for (const CompareOperand& o : c.rest) check_expr(*o.expr);
        break;
      }
      case ExprKind::kCondExpr: {
        const auto& c = static_cast<const CondExpr&>(e);
        check_expr(*c.cond);
        check_expr(*c.then_expr);
        if (c.else_expr) check_expr(*c.else_expr);
        break;
      }
      case ExprKind::kFilter: {
        const auto& f = static_cast<const FilterExpr&>(e);
        if ((f.name == "default" || f.name == "d") && f.input) probing_ = f.input.get();
        check_filter(f);
        break;
      }
      case ExprKind::kTest: {
        const auto& t = static_cast<const TestExpr&>(e);
        if (t.name == "defined" || t.name == "undefined") probing_ = t.input.get();
        check_test(t);
        break;
      }
      case ExprKind::kCall: check_call(static_cast<const CallExpr&>(e)); break;
    }
  }

  Environment::Impl& env_;
  TemplateImpl& tmpl_;
  bool ok_ = true;
  std::map<std::string, int> declared_;
  std::set<std::string> template_level_sets_;
  std::map<std::string, const TemplateImpl*> imports_;
  std::map<std::string, const MacroNode*> imported_macros_;
  const Expr* probing_ = nullptr;  // the input of the `defined`/`default` being checked
};

}  // namespace

bool check_template(Environment::Impl& env, TemplateImpl& tmpl) {
  Checker checker(env, tmpl);
  return checker.run();
}

}  // namespace kforge::tmpl
