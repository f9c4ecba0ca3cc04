// Expression evaluation: names, attribute and item access (strict undefined) and the expressions themselves;
// printing, string conversion and the operators (Python semantics) are in eval_operators.cpp.
#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <limits>

#include "support/text.h"
#include "template/renderer.h"
#include "template/value_ops.h"

namespace kforge::tmpl {

using namespace ast;


class LoopCallable : public Callable {
 public:
  LoopCallable(std::shared_ptr<const void> state, bool cycle) : state_(std::move(state)), cycle_(cycle) {}
  std::string describe() const override { return cycle_ ? "loop.cycle" : "loop.changed"; }
  Value call(Renderer& r, EvaluatedArgs& args, SourceLoc loc) const override {
    auto& st = *const_cast<LoopState*>(static_cast<const LoopState*>(state_.get()));
    if (!args.keywords.empty()) r.fail(args.keyword_locs[0], fmt::format("{} takes no keyword arguments", describe()));
    if (cycle_) {
      if (args.positional.empty()) r.fail(loc, "loop.cycle() needs at least one argument");
      return args.positional[st.index0 % args.positional.size()];
    }
    for (const Value& v : args.positional) r.require_defined(v, loc);
    Value current = args.positional.size() == 1 ? args.positional[0] : Value(List(args.positional.begin(), args.positional.end()));
    if (st.changed_called && values_equal(current, st.last_changed)) return Value(false);
    st.changed_called = true;
    st.last_changed = std::move(current);
    return Value(true);
  }

 private:
  std::shared_ptr<const void> state_;
  bool cycle_;
};

// ---------------------------------------------------------------- errors and undefined

void Renderer::fail(SourceLoc loc, std::string message, std::vector<DiagNote> notes) {
  Diagnostic d{Severity::kError, loc, std::move(message), std::move(notes)};
  env_.add_chain_notes(d, chain_);
  env_.diags.report(std::move(d));
  throw RenderAbort{};
}

Value Renderer::make_undefined(std::string path, SourceLoc loc, std::vector<std::string> notes, std::string reason) {
  auto info = std::make_shared<UndefinedInfo>();
  info->path = std::move(path);
  info->loc = loc;
  info->notes = std::move(notes);
  info->reason = std::move(reason);
  return Value::undefined(std::move(info));
}

Value Renderer::missing(UndefinedInfo::Cause cause, const Value& container, Value key, SourceLoc loc,
                        ObjectPath object_path) {
  auto info = std::make_shared<UndefinedInfo>();
  info->cause = cause;
  info->object_expr = object_path.expr;
  if (!object_path.expr && object_path.text) info->path = *object_path.text;
  info->container = container;
  info->key = std::move(key);
  info->loc = loc;
  return Value::undefined(std::move(info));
}

namespace {

std::string keys_note(const std::string& path, const Map& map) {
  if (map.empty()) return fmt::format("'{}' is an empty map", path);
  std::vector<std::string> keys;
  for (const auto& [k, v] : map) {
    if (keys.size() == 20) {
      keys.push_back(fmt::format("... ({} more)", map.size() - 20));
      break;
    }
    keys.push_back(k);
  }
  return fmt::format("'{}' has keys: {}", path, join(keys, ", "));
}

const char* const kLoopAttributes[] = {"index", "index0", "revindex", "revindex0", "first", "last", "length",
                                       "depth", "depth0", "previtem", "nextitem", "cycle", "changed"};

}  // namespace

std::vector<DiagNote> Renderer::undefined_notes(const UndefinedInfo& info, const std::string& object_path) {
  std::vector<std::string> notes;
  auto suggest = [&](std::string_view name, const std::vector<std::string>& candidates) {
    if (auto m = closest_match(name, candidates)) notes.push_back(fmt::format("did you mean '{}'?", *m));
  };
  const Value& c = info.container;
  const Value& key = info.key;
  switch (info.cause) {
    case UndefinedInfo::Cause::kPlain:
      break;
    case UndefinedInfo::Cause::kVariable:
      if (current_frame_) suggest(info.path, visible_names(*current_frame_));
      break;
    case UndefinedInfo::Cause::kAttribute:
    case UndefinedInfo::Cause::kIndex: {
      const bool by_name = key.is_string();
      if (c.is_map() && by_name) {
        notes.push_back(keys_note(object_path, c.as_map()));
        suggest(key.as_string(), c.as_map().keys());
        if (c.origin().valid()) {
          notes.push_back(fmt::format("'{}' comes from {}", object_path, env_.describe_loc(c.origin())));
        }
      } else if (c.is_map()) {
        notes.push_back(fmt::format("map keys are strings, not {}", a_type(key)));
      } else if (c.is_namespace() && by_name) {
        const NamespaceObject& ns = c.as_namespace();
        if (!ns.module.empty()) {
          notes.push_back(ns.attrs.empty() ? fmt::format("'{}' exports nothing", ns.module)
                                           : fmt::format("'{}' exports: {}", ns.module, join(ns.attrs.keys(), ", ")));
        } else {
          notes.push_back(keys_note(object_path, ns.attrs));
        }
        suggest(key.as_string(), ns.attrs.keys());
      } else if (c.kind() == Value::Kind::kLoop && by_name) {
        std::vector<std::string> attrs(std::begin(kLoopAttributes), std::end(kLoopAttributes));
        suggest(key.as_string(), attrs);
        notes.push_back(fmt::format("the loop variable has: {}", join(attrs, ", ")));
      } else if (c.is_list() && info.cause == UndefinedInfo::Cause::kAttribute) {
        notes.push_back(fmt::format("'{}' is a list; use a filter such as `{} | length` or an index", object_path, object_path));
      } else if (c.is_list() && (key.is_int() || key.is_bool())) {
        const size_t n = c.as_list().size();
        notes.push_back(fmt::format("'{}' has {} item{}", object_path, n, n == 1 ? "" : "s"));
      } else if (c.is_string() && (key.is_int() || key.is_bool())) {
        notes.push_back(fmt::format("'{}' has {} characters", object_path, utf8_length(c.as_string())));
      } else if (info.cause == UndefinedInfo::Cause::kAttribute) {
        notes.push_back(fmt::format("'{}' is {}, which has no attributes", object_path, a_type(c)));
      } else {
        notes.push_back(fmt::format("cannot index {} with {}", a_type(c), a_type(key)));
      }
      break;
    }
  }
  for (const std::string& n : info.notes) notes.push_back(n);
  std::vector<DiagNote> out;
  for (std::string& n : notes) out.push_back({SourceLoc{}, std::move(n)});
  return out;
}

void Renderer::fail_undefined(const Value& undefined, SourceLoc used_at) {
  const UndefinedInfo* info = static_cast<const UndefinedInfo*>(undefined.object());
  if (!info) fail(used_at, "value is undefined");
  std::string object_path;
  std::string path = info->path;
  if (info->cause == UndefinedInfo::Cause::kAttribute || info->cause == UndefinedInfo::Cause::kIndex) {
    object_path = info->object_expr ? path_of(*info->object_expr) : info->path;
    path = info->cause == UndefinedInfo::Cause::kAttribute && info->key.is_string()
               ? object_path + "." + info->key.as_string()
               : object_path + "[" + python_repr(info->key) + "]";
  }
  std::vector<DiagNote> notes = undefined_notes(*info, object_path);
  if (used_at.valid() && info->loc.valid() &&
      (used_at.file != info->loc.file ||
       env_.sources.line_col(used_at).line != env_.sources.line_col(info->loc).line)) {
    notes.push_back({used_at, "the undefined value is used here"});
  }
  fail(info->loc.valid() ? info->loc : used_at,
       info->reason.empty() ? fmt::format("'{}' is undefined", path) : info->reason, std::move(notes));
}

std::string Renderer::path_of(ObjectPath p) const {
  if (p.expr) return path_of(*p.expr);
  return p.text ? *p.text : std::string("value");
}

std::string Renderer::path_of(const Expr& e) const {
  switch (e.kind) {
    case ExprKind::kName: return static_cast<const NameExpr&>(e).name;
    case ExprKind::kGetAttr: {
      const auto& g = static_cast<const GetAttrExpr&>(e);
      return path_of(*g.object) + "." + g.attr;
    }
    case ExprKind::kGetItem: {
      const auto& g = static_cast<const GetItemExpr&>(e);
      if (g.index->kind == ExprKind::kConst) {
        return path_of(*g.object) + "[" + python_repr(static_cast<const ConstExpr&>(*g.index).value) + "]";
      }
      return path_of(*g.object) + "[...]";
    }
    case ExprKind::kCall: return path_of(*static_cast<const CallExpr&>(e).callee) + "(...)";
    case ExprKind::kFilter: {
      const auto& f = static_cast<const FilterExpr&>(e);
      return (f.input ? path_of(*f.input) : std::string("value")) + "|" + f.name;
    }
    case ExprKind::kConst: return python_repr(static_cast<const ConstExpr&>(e).value);
    default: return "expression";
  }
}

// ---------------------------------------------------------------- names

const Value* Renderer::lookup(std::string_view name, const Frame& frame) const {
  bool hide_loop = false;
  const Map* context = nullptr;
  for (const Frame* f = &frame; f; f = f->parent) {
    if (!(hide_loop && name == "loop")) {
      for (const auto& [n, v] : f->vars) {  // names are unique within a frame
        if (n == name) return &v;
      }
    }
    if (f->include_boundary) hide_loop = true;
    if (f->context && !context) context = f->context;
  }
  if (context) {
    if (const Value* v = context->find(name)) return v;
  }
  return env_.globals.find(name);
}

std::vector<std::string> Renderer::visible_names(const Frame& frame) const {
  std::vector<std::string> names;
  const Map* context = nullptr;
  for (const Frame* f = &frame; f; f = f->parent) {
    for (const auto& [n, v] : f->vars) names.emplace_back(n);
    if (f->context && !context) context = f->context;
  }
  if (context) {
    for (const auto& [k, v] : *context) names.push_back(k);
  }
  for (const auto& [k, v] : env_.globals) names.push_back(k);
  return names;
}

Value Renderer::eval_name(const NameExpr& e, Frame& frame) {
  if (const Value* v = lookup(e.name, frame)) return *v;
  auto info = std::make_shared<UndefinedInfo>();
  info->cause = UndefinedInfo::Cause::kVariable;
  info->path = e.name;
  info->loc = e.loc;
  return Value::undefined(std::move(info));
}

// ---------------------------------------------------------------- attributes and items

Value Renderer::get_attribute(const Value& object, std::string_view name, SourceLoc loc, ObjectPath object_path) {
  require_defined(object, loc);
  switch (object.kind()) {
    case Value::Kind::kMap:
      if (const Value* v = object.as_map().find(name)) return *v;
      break;
    case Value::Kind::kNamespace:
      if (const Value* v = object.as_namespace().attrs.find(name)) return *v;
      break;
    case Value::Kind::kLoop: {
      const auto& st = *static_cast<const LoopState*>(object.object());
      const size_t n = st.items->size();
      const size_t i = st.index0;
      if (name == "index") return Value(static_cast<int64_t>(i + 1));
      if (name == "index0") return Value(static_cast<int64_t>(i));
      if (name == "revindex") return Value(static_cast<int64_t>(n - i));
      if (name == "revindex0") return Value(static_cast<int64_t>(n - i - 1));
      if (name == "first") return Value(i == 0);
      if (name == "last") return Value(i + 1 == n);
      if (name == "length") return Value(static_cast<int64_t>(n));
      if (name == "depth") return Value(int64_t{1});
      if (name == "depth0") return Value(int64_t{0});
      if (name == "previtem") {
        if (i > 0) return (*st.items)[i - 1];
        return make_undefined("loop.previtem", loc, {}, "there is no previous item ('loop.previtem' on the first iteration)");
      }
      if (name == "nextitem") {
        if (i + 1 < n) return (*st.items)[i + 1];
        return make_undefined("loop.nextitem", loc, {}, "there is no next item ('loop.nextitem' on the last iteration)");
      }
      if (name == "cycle" || name == "changed") {
        return Value::callable(std::make_shared<LoopCallable>(object.shared_object(), name == "cycle"));
      }
      break;
    }
    default:
      break;
  }
  return missing(UndefinedInfo::Cause::kAttribute, object, Value(name), loc, object_path);
}

Value Renderer::get_item(const Value& object, const Value& key, SourceLoc loc, ObjectPath object_path) {
  require_defined(object, loc);
  require_defined(key, loc);
  if (key.is_string() && (object.is_map() || object.is_namespace() || object.kind() == Value::Kind::kLoop)) {
    if (object.is_map()) {
      if (const Value* v = object.as_map().find(key.as_string())) return *v;
      return missing(UndefinedInfo::Cause::kIndex, object, key, loc, object_path);
    }
    Value v = get_attribute(object, key.as_string(), loc, object_path);
    if (v.is_undefined() && v.object() && v.as_undefined().cause == UndefinedInfo::Cause::kAttribute) {
      const_cast<UndefinedInfo&>(v.as_undefined()).cause = UndefinedInfo::Cause::kIndex;
    }
    return v;
  }
  if ((key.is_int() || key.is_bool()) && (object.is_list() || object.is_string())) {
    int64_t i = key.is_bool() ? key.as_bool() : key.as_int();
    if (object.is_list()) {
      const List& items = object.as_list();
      const int64_t n = static_cast<int64_t>(items.size());
      if (i < 0) i += n;
      if (i >= 0 && i < n) return items[static_cast<size_t>(i)];
    } else {
      const std::string& s = object.as_string();
      const bool ascii = std::all_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
      if (ascii) {
        const int64_t n = static_cast<int64_t>(s.size());
        if (i < 0) i += n;
        if (i >= 0 && i < n) return Value(std::string(1, s[static_cast<size_t>(i)]));
      } else {
        const auto chars = utf8_chars(s);
        const int64_t n = static_cast<int64_t>(chars.size());
        if (i < 0) i += n;
        if (i >= 0 && i < n) return Value(std::string(chars[static_cast<size_t>(i)]));
      }
    }
  }
  return missing(UndefinedInfo::Cause::kIndex, object, key, loc, object_path);
}

Value Renderer::eval_slice(const SliceExpr& e, Frame& frame) {
  const Value object = eval(*e.object, frame);
  require_defined(object, e.loc);
  auto bound = [&](const ExprPtr& p, const char* what) -> std::optional<int64_t> {
    if (!p) return std::nullopt;
    const Value v = eval(*p, frame);
    require_defined(v, p->loc);
    if (v.is_none()) return std::nullopt;
    if (!v.is_int()) fail(p->loc, fmt::format("slice {} must be an integer, not {}", what, a_type(v)));
    return v.as_int();
  };
  const std::optional<int64_t> start = bound(e.start, "start"), stop = bound(e.stop, "stop"), step_opt = bound(e.step, "step");
  const int64_t step = step_opt.value_or(1);
  if (step == 0) fail(e.loc, "slice step cannot be zero");
  std::vector<Value> chars_storage;
  const List* items = nullptr;
  if (object.is_list()) {
    items = &object.as_list();
  } else if (object.is_string()) {
    for (std::string_view c : utf8_chars(object.as_string())) chars_storage.emplace_back(std::string(c));
    items = &chars_storage;
  } else {
    fail(e.loc, fmt::format("cannot slice {}", a_type(object)));
  }
  // Python's PySlice_AdjustIndices.
  const int64_t n = static_cast<int64_t>(items->size());
  auto adjust = [&](std::optional<int64_t> v, int64_t dflt) {
    if (!v) return dflt;
    int64_t x = *v;
    if (x < 0) {
      x += n;
      if (x < 0) x = step < 0 ? -1 : 0;
    } else if (x >= n) {
      x = step < 0 ? n - 1 : n;
    }
    return x;
  };
  const int64_t lo = adjust(start, step < 0 ? n - 1 : 0);
  const int64_t hi = adjust(stop, step < 0 ? -1 : n);
  List out;
  if (step > 0) {
    for (int64_t i = lo; i < hi; i += step) out.push_back((*items)[static_cast<size_t>(i)]);
  } else {
    for (int64_t i = lo; i > hi; i += step) out.push_back((*items)[static_cast<size_t>(i)]);
  }
  if (object.is_string()) {
    std::string s;
    for (const Value& c : out) s += c.as_string();
    return Value(std::move(s));
  }
  return Value(std::move(out));
}

// ---------------------------------------------------------------- expressions

const Value& Renderer::eval_ref(const Expr& e, Frame& frame, Value& scratch) {
  switch (e.kind) {
    case ExprKind::kConst: return static_cast<const ConstExpr&>(e).value;
    case ExprKind::kName:
      if (const Value* v = lookup(static_cast<const NameExpr&>(e).name, frame)) return *v;
      break;
    case ExprKind::kGetAttr: {
      const auto& g = static_cast<const GetAttrExpr&>(e);
      Value object_scratch;
      const Value& object = eval_ref(*g.object, frame, object_scratch);
      if (object.is_map()) {
        if (const Value* v = object.as_map().find(g.attr)) {
          if (&object != &object_scratch) return *v;  // lives in a scope or in the context
          scratch = *v;
          return scratch;
        }
      }
      scratch = get_attribute(object, g.attr, g.loc, {g.object.get(), nullptr});
      return scratch;
    }
    default:
      break;
  }
  scratch = eval(e, frame);
  return scratch;
}

Value Renderer::eval(const Expr& e, Frame& frame) {
  switch (e.kind) {
    case ExprKind::kConst: return static_cast<const ConstExpr&>(e).value;
    case ExprKind::kName: return eval_name(static_cast<const NameExpr&>(e), frame);
    case ExprKind::kList:
    case ExprKind::kTuple: {
      const auto& n = static_cast<const ListExpr&>(e);
      List items;
      items.reserve(n.items.size());
      for (const ExprPtr& item : n.items) items.push_back(eval(*item, frame));
      return Value(std::move(items));
    }
    case ExprKind::kDict: {
      const auto& n = static_cast<const DictExpr&>(e);
      Map map;
      for (const auto& [k, v] : n.items) {
        Value key = eval(*k, frame);
        require_defined(key, k->loc);
        if (!key.is_string()) fail(k->loc, fmt::format("map keys must be strings, not {}", a_type(key)));
        map.set(key.as_string(), eval(*v, frame));
      }
      return Value(std::move(map));
    }
    case ExprKind::kGetAttr: {
      const auto& g = static_cast<const GetAttrExpr&>(e);
      Value scratch;
      const Value& object = eval_ref(*g.object, frame, scratch);
      if (object.is_map()) {  // fast path
        if (const Value* v = object.as_map().find(g.attr)) return *v;
      }
      return get_attribute(object, g.attr, g.loc, {g.object.get(), nullptr});
    }
    case ExprKind::kGetItem: {
      const auto& g = static_cast<const GetItemExpr&>(e);
      const Value object = eval(*g.object, frame);
      const Value key = eval(*g.index, frame);
      return get_item(object, key, g.loc, {g.object.get(), nullptr});
    }
    case ExprKind::kSlice: return eval_slice(static_cast<const SliceExpr&>(e), frame);
    case ExprKind::kUnary: {
      const auto& u = static_cast<const UnaryExpr&>(e);
      const Value v = eval(*u.operand, frame);
      if (u.op == UnaryOp::kNot) {
        require_truthiness(v, u.loc);
        return Value(!truthy(v));
      }
      require_defined(v, u.loc);
      if (v.is_float()) return Value(u.op == UnaryOp::kNeg ? -v.as_float() : v.as_float());
      if (v.is_int() || v.is_bool()) {
        const int64_t x = to_int(v);
        if (u.op == UnaryOp::kPos) return Value(x);
        if (x == std::numeric_limits<int64_t>::min()) fail(u.loc, "integer overflow in unary '-'");
        return Value(-x);
      }
      fail(u.loc, fmt::format("bad operand type for unary {}: {}", u.op == UnaryOp::kNeg ? "-" : "+", v.type_name()));
    }
    case ExprKind::kBinary: {
      const auto& b = static_cast<const BinaryExpr&>(e);
      if (b.op == BinaryOp::kAnd || b.op == BinaryOp::kOr) {
        Value left = eval(*b.lhs, frame);
        require_truthiness(left, b.loc);
        const bool t = truthy(left);
        if (b.op == BinaryOp::kAnd ? !t : t) return left;
        return eval(*b.rhs, frame);
      }
      const Value left = eval(*b.lhs, frame);
      const Value right = eval(*b.rhs, frame);
      if (b.op == BinaryOp::kConcat && left.is_string() && right.is_string()) {
        check_size(left.as_string().size() + right.as_string().size(), b.loc, "the concatenated string");
        return Value(left.as_string() + right.as_string());
      }
      return binary(b.op, left, right, b.loc);
    }
    case ExprKind::kCompare: {
      const auto& c = static_cast<const CompareExpr&>(e);
      Value left = eval(*c.first, frame);
      for (const CompareOperand& o : c.rest) {
        Value right = eval(*o.expr, frame);
        if (!compare(o.op, left, right, o.loc)) return Value(false);
        left = std::move(right);
      }
      return Value(true);
    }
    case ExprKind::kCondExpr: {
      const auto& c = static_cast<const CondExpr&>(e);
      Value scratch;
      const Value& cond = eval_ref(*c.cond, frame, scratch);
      require_truthiness(cond, c.cond->loc);
      if (truthy(cond)) return eval(*c.then_expr, frame);
      if (c.else_expr) return eval(*c.else_expr, frame);
      return c.missing_else;
    }
    case ExprKind::kFilter: {
      const auto& f = static_cast<const FilterExpr&>(e);
      if (f.args.positional.empty() && f.args.keywords.empty()) {
        Value scratch;
        return eval_filter(f, eval_ref(*f.input, frame, scratch), frame);
      }
      return eval_filter(f, eval(*f.input, frame), frame);
    }
    case ExprKind::kTest: {
      const auto& t = static_cast<const TestExpr&>(e);
      const Value input = eval(*t.input, frame);
      EvaluatedArgs args;
      eval_args(t.args, frame, args);
      const bool result = apply_test(*t.resolved, input, args, t.loc);
      return Value(t.negated ? !result : result);
    }
    case ExprKind::kCall: return eval_call(static_cast<const CallExpr&>(e), frame);
  }
  fail(e.loc, "unsupported expression");
}

void Renderer::eval_args(const ArgList& args, Frame& frame, EvaluatedArgs& out) {
  out.positional.reserve(args.positional.size());
  for (const ExprPtr& a : args.positional) out.positional.push_back(eval(*a, frame));
  for (const KeywordArg& k : args.keywords) {
    out.keywords.emplace_back(k.name, eval(*k.value, frame));
    out.keyword_locs.push_back(k.loc);
  }
}

Value Renderer::eval_filter(const FilterExpr& f, const Value& input, Frame& frame) {
  EvaluatedArgs args;
  eval_args(f.args, frame, args);
  return apply_filter(*f.resolved, input, args, f.loc);
}

}  // namespace kforge::tmpl
