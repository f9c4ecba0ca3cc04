// Reading the Paddle keys of one op definition (schemas/op.schema.json) and checking every name
// they mention against the op's arguments and outputs, as Paddle's parse_op_entry asserts.
#include "opdef/op_entry.h"

#include <fmt/format.h>

#include "opdef/op_syntax.h"
#include "support/yaml_scalar.h"

namespace kforge::opdef {

namespace {

const std::vector<std::string> kInferMetaKeys = {"func", "param", "spmd_rule", "local_shape", "global_shape"};
const std::vector<std::string> kKernelKeys = {"func", "param", "data_type", "layout", "backend", "force_backend"};
const std::vector<std::string> kDataTransformKeys = {"skip_transform", "support_trans_dtype"};

// Which of the op's names a reference may denote.
enum NameSet : unsigned { kInputs = 1, kAttributes = 2, kOutputs = 4 };

std::string describe_sets(unsigned sets) {
  switch (sets) {
    case kInputs: return "an input";
    case kOutputs: return "an output";
    case kAttributes: return "an attribute";
    case kInputs | kOutputs: return "an input or output";
    case kInputs | kAttributes: return "an argument";
    default: return "an argument or output";
  }
}

bool is_literal(const YamlNode& item) {
  if (item.style != YamlNode::Style::kPlain) return true;  // a quoted string
  const std::string& v = item.value;
  if (v == "true" || v == "false" || v == "True" || v == "False") return true;
  size_t i = v.size() > 0 && (v[0] == '-' || v[0] == '+') ? 1 : 0;
  return i < v.size() && (is_digit(v[i]) || (v[i] == '.' && i + 1 < v.size() && is_digit(v[i + 1])));
}

class DefinitionReader {
 public:
  DefinitionReader(const YamlContext& ctx, const KeyTable& keys, Op& op) : ctx_(ctx), keys_(keys), op_(op) {}

  bool run() {
    if (!read_args() || !read_outputs()) return false;
    read_flags();
    read_infer_meta();
    read_kernel();
    read_pairs("inplace", op_.inplace, op_.has_inplace_key);
    read_pairs("view", op_.view, op_.has_view_key);
    read_data_transform();
    read_calls();
    read_misc();
    return ok_;
  }

 private:
  std::string where() const { return fmt::format("op '{}'", op_.name); }

  // The text of a scalar key, or nullopt after reporting.
  std::optional<LocatedText> text_of(const KeyTable::Entry& e, std::string_view name) {
    const YamlNode* node = ctx_.scalar(*e.key_node, *e.value, name);
    if (!node) {
      ok_ = false;
      return std::nullopt;
    }
    return ctx_.text(*node);
  }

  template <typename T>
  T checked(std::optional<T> parsed, T fallback = {}) {
    if (!parsed) {
      ok_ = false;
      return fallback;
    }
    return std::move(*parsed);
  }

  // Does `name` denote one of `sets`? Reports "'x' in 'key' is not an input of op 'y'" otherwise.
  bool check_name(std::string_view name, SourceLoc loc, unsigned sets, std::string_view key) {
    std::vector<std::string> candidates;
    if (sets & kInputs) {
      for (const Input& in : op_.inputs) candidates.push_back(in.name);
    }
    if (sets & kAttributes) {
      for (const Attribute& a : op_.attributes) candidates.push_back(a.name);
    }
    if (sets & kOutputs) {
      for (const Output& out : op_.outputs) candidates.push_back(out.name);
    }
    for (const std::string& c : candidates) {
      if (c == name) return true;
    }
    ctx_.diags.error(loc, fmt::format("'{}' in '{}' is not {} of {}{}", name, key, describe_sets(sets), where(),
                                      did_you_mean(name, candidates)));
    ok_ = false;
    return false;
  }

  // A kernel-key candidate that names no argument is a warning, not an error: Paddle passes candidates
  // through as text unchecked, and its static_ops.yaml has one (`data_type : PullGpupsSparseKernelKey`).
  void check_candidate(const Candidate& cand, std::string_view key) {
    if (op_.find_input(cand.name) || op_.find_attribute(cand.name)) return;
    std::vector<std::string> candidates;
    for (const Input& in : op_.inputs) candidates.push_back(in.name);
    for (const Attribute& a : op_.attributes) candidates.push_back(a.name);
    ctx_.diags.warning(cand.loc, fmt::format("'{}' in '{}' is not an argument of {}, so it cannot select the "
                                             "kernel{}",
                                             cand.name, key, where(), did_you_mean(cand.name, candidates)));
  }

  // A list of names written as `a, b` or as a YAML list.
  std::optional<std::vector<NameRef>> names_of(const KeyTable::Entry& e, std::string_view name, bool qualified) {
    if (e.value->is_sequence()) {
      std::vector<NameRef> out;
      for (const YamlNode& item : e.value->children) {
        const YamlNode* node = ctx_.scalar(*e.key_node, item, name);
        if (!node) {
          ok_ = false;
          return std::nullopt;
        }
        const LocatedText text = ctx_.text(*node);
        std::optional<std::vector<NameRef>> one = parse_name_list(text, ctx_.diags, name, qualified);
        if (!one || one->size() != 1) {
          if (one) ctx_.diags.error(ctx_.loc(*node), fmt::format("expected one name per item of '{}'", name));
          ok_ = false;
          return std::nullopt;
        }
        out.push_back(std::move(one->front()));
      }
      return out;
    }
    std::optional<LocatedText> text = text_of(e, name);
    if (!text) return std::nullopt;
    std::optional<std::vector<NameRef>> names = parse_name_list(*text, ctx_.diags, name, qualified);
    if (!names) ok_ = false;
    return names;
  }

  // A single (possibly qualified) name filling the value.
  std::optional<NameRef> name_of(const KeyTable::Entry& e, std::string_view name) {
    std::optional<LocatedText> text = text_of(e, name);
    if (!text) return std::nullopt;
    TextCursor cur(*text);
    const std::string_view n = read_qualified_name(cur);
    cur.skip_spaces();
    if (n.empty() || !cur.at_end()) {
      ctx_.diags.error(n.empty() ? text->loc(0) : cur.loc(),
                       fmt::format("'{}' must be a single name, not '{}'", name, text->text()));
      ok_ = false;
      return std::nullopt;
    }
    return NameRef{std::string(n), text->loc(0)};
  }

  bool read_args() {
    const KeyTable::Entry* e = keys_.find("args");
    if (!e) {
      ctx_.diags.error(op_.loc, fmt::format("{} has no 'args'", where()));
      return false;
    }
    op_.args_loc = ctx_.loc(*e->value);
    std::optional<LocatedText> text = text_of(*e, "args");
    if (!text) return false;
    std::optional<ArgList> args = parse_args(*text, ctx_.diags);
    if (!args) return false;
    op_.inputs = std::move(args->inputs);
    op_.attributes = std::move(args->attributes);
    return true;
  }

  bool read_outputs() {
    const KeyTable::Entry* e = keys_.find("output");
    if (!e) {
      ctx_.diags.error(op_.loc, fmt::format("{} has no 'output'", where()));
      return false;
    }
    op_.output_loc = ctx_.loc(*e->value);
    // `output :` with nothing after it: an op without outputs (send_v2, push_dense, ...); Paddle's
    // parse_outputs reads the null value (also PyYAML's plain `~` and `null`) as an empty list.
    const YamlNode& v = *e->value;
    const bool null_word = v.is_scalar() && v.style == YamlNode::Style::kPlain && !v.value.empty() &&
                           yaml::resolve_core_scalar(v.value).kind == yaml::CoreKind::kNull;
    if (v.is_null() || null_word) {
      op_.output_loc = ctx_.loc(*e->key_node);
      return true;
    }
    std::optional<LocatedText> text = text_of(*e, "output");
    if (!text) return false;
    std::optional<std::vector<Output>> outputs = parse_outputs(*text, ctx_.diags);
    if (!outputs) return false;
    // An output may share its input's name: `inplace : (N->N)` occurs in Paddle's files.
    op_.outputs = std::move(*outputs);
    return true;
  }

  void read_flags() {
    if (const KeyTable::Entry* e = keys_.find("optional")) {
      op_.optional_names = checked(names_of(*e, "optional", false));
      for (const NameRef& n : op_.optional_names) {
        if (!check_name(n.name, n.loc, kInputs | kOutputs, "optional")) continue;
        for (Input& in : op_.inputs) in.optional = in.optional || in.name == n.name;
        for (Output& out : op_.outputs) out.optional = out.optional || out.name == n.name;
      }
    }
    if (const KeyTable::Entry* e = keys_.find("intermediate")) {
      op_.intermediate_names = checked(names_of(*e, "intermediate", false));
      for (const NameRef& n : op_.intermediate_names) {
        if (!check_name(n.name, n.loc, kOutputs, "intermediate")) continue;
        for (Output& out : op_.outputs) out.intermediate = out.intermediate || out.name == n.name;
      }
    }
    if (const KeyTable::Entry* e = keys_.find("no_need_buffer")) {
      op_.no_need_buffer_names = checked(names_of(*e, "no_need_buffer", false));
      for (const NameRef& n : op_.no_need_buffer_names) {
        if (!check_name(n.name, n.loc, kInputs, "no_need_buffer")) continue;
        for (Input& in : op_.inputs) in.no_need_buffer = in.no_need_buffer || in.name == n.name;
      }
    }
  }

  // A `param` list: argument names and literals (`[x, y, false]`).
  std::optional<std::vector<ParamItem>> read_param(const KeyTable::Entry& e, std::string_view name) {
    const YamlNode* seq = ctx_.sequence(*e.key_node, *e.value, name);
    if (!seq) {
      ok_ = false;
      return std::nullopt;
    }
    std::vector<ParamItem> items;
    for (const YamlNode& item : seq->children) {
      const YamlNode* node = ctx_.scalar(*e.key_node, item, name);
      if (!node) {
        ok_ = false;
        return std::nullopt;
      }
      ParamItem p{node->value, is_literal(*node), ctx_.loc(*node)};
      if (!p.is_literal && !check_name(p.text, p.loc, kInputs | kAttributes, name)) return std::nullopt;
      items.push_back(std::move(p));
    }
    return items;
  }

  void read_infer_meta() {
    const KeyTable::Entry* e = keys_.find("infer_meta");
    if (!e) return;
    const YamlNode* node = ctx_.map(*e->key_node, *e->value, "infer_meta");
    if (!node) {
      ok_ = false;
      return;
    }
    const KeyTable sub(*node, ctx_, kInferMetaKeys, "infer_meta.", where());
    InferMeta im;
    im.loc = ctx_.loc(*e->key_node);
    if (const KeyTable::Entry* f = sub.find("func")) {
      if (std::optional<NameRef> func = name_of(*f, "infer_meta.func")) {
        im.func = func->name;
        im.func_loc = func->loc;
      }
    } else {
      ctx_.diags.error(im.loc, fmt::format("'infer_meta' of {} has no 'func'", where()));
      ok_ = false;
    }
    if (const KeyTable::Entry* p = sub.find("param")) im.param = read_param(*p, "infer_meta.param");
    if (const KeyTable::Entry* s = sub.find("spmd_rule")) im.spmd_rule = name_of(*s, "infer_meta.spmd_rule");
    for (const char* shape_key : {"local_shape", "global_shape"}) {
      const KeyTable::Entry* s = sub.find(shape_key);
      if (!s) continue;
      const std::string full = fmt::format("infer_meta.{}", shape_key);
      std::optional<NameRef> n = name_of(*s, full);
      if (n && check_name(n->name, n->loc, kOutputs, full)) {
        (std::string_view(shape_key) == "local_shape" ? im.local_shape : im.global_shape) = std::move(n);
      }
    }
    op_.infer_meta = std::move(im);
  }

  std::optional<Candidates> read_candidates(const KeyTable& sub, std::string_view key) {
    const KeyTable::Entry* e = sub.find(key);
    if (!e) return std::nullopt;
    const std::string full = fmt::format("kernel.{}", key);
    std::optional<LocatedText> text = text_of(*e, full);
    if (!text) return std::nullopt;
    std::optional<Candidates> c = parse_candidates(*text, ctx_.diags, full);
    if (!c) {
      ok_ = false;
      return std::nullopt;
    }
    for (const Candidate& cand : c->items) {
      if (!cand.is_constant) check_candidate(cand, full);
    }
    return c;
  }

  void read_kernel() {
    const KeyTable::Entry* e = keys_.find("kernel");
    if (!e) return;
    const YamlNode* node = ctx_.map(*e->key_node, *e->value, "kernel");
    if (!node) {
      ok_ = false;
      return;
    }
    const KeyTable sub(*node, ctx_, kKernelKeys, "kernel.", where());
    Kernel k;
    k.loc = ctx_.loc(*e->key_node);
    if (const KeyTable::Entry* f = sub.find("func")) {
      if (std::optional<LocatedText> text = text_of(*f, "kernel.func")) {
        k.funcs = checked(parse_kernel_funcs(*text, ctx_.diags));
      }
    } else {
      ctx_.diags.error(k.loc, fmt::format("'kernel' of {} has no 'func'", where()));
      ok_ = false;
    }
    for (const KernelFunc& f : k.funcs) check_signature(f);
    check_signatures_uniform(k.funcs);
    if (const KeyTable::Entry* p = sub.find("param")) k.param = read_param(*p, "kernel.param");
    k.data_type = read_candidates(sub, "data_type");
    k.backend = read_candidates(sub, "backend");
    k.layout = read_candidates(sub, "layout");
    if (const KeyTable::Entry* fb = sub.find("force_backend")) k.force_backend = name_of(*fb, "kernel.force_backend");
    op_.kernel = std::move(k);
  }

  // A kernel signature lists one kind per tensor input and per output.
  void check_signature(const KernelFunc& f) {
    if (!f.has_signature) return;
    auto check = [&](size_t kinds, size_t expected, const char* side) {
      if (kinds == expected) return;
      ctx_.diags.error(f.loc, fmt::format("the signature of kernel '{}' lists {} {} kind{} but {} has {} {}{}",
                                          f.name, kinds, side, kinds == 1 ? "" : "s", where(), expected,
                                          std::string_view(side) == "input" ? "tensor input" : "output",
                                          expected == 1 ? "" : "s"));
      ok_ = false;
    };
    check(f.input_kinds.size(), op_.inputs.size(), "input");
    check(f.output_kinds.size(), op_.outputs.size(), "output");
  }

  // Either every kernel has a `{... -> ...}` signature or none has: Paddle reads the tensor types of all
  // kernels from the signatures when the first kernel has one, and from the args when it has none.
  void check_signatures_uniform(const std::vector<KernelFunc>& funcs) {
    for (const KernelFunc& f : funcs) {
      if (f.has_signature == funcs.front().has_signature) continue;
      const KernelFunc& with = f.has_signature ? f : funcs.front();
      const KernelFunc& without = f.has_signature ? funcs.front() : f;
      Diagnostic d{Severity::kError, without.loc,
                   fmt::format("kernel '{}' of {} has no {{... -> ...}} signature but kernel '{}' has one: give "
                               "every kernel a signature or none",
                               without.name, where(), with.name),
                   {}};
      d.note(fmt::format("kernel '{}' is here", with.name), with.loc);
      ctx_.diags.report(std::move(d));
      ok_ = false;
      return;
    }
  }

  void read_pairs(std::string_view key, std::vector<InplacePair>& out, bool& present) {
    const KeyTable::Entry* e = keys_.find(key);
    if (!e) return;
    present = true;
    std::optional<LocatedText> text = text_of(*e, key);
    if (!text) return;
    out = checked(parse_inplace_pairs(*text, ctx_.diags, key));
    for (size_t i = 0; i < out.size(); ++i) {
      const InplacePair& pair = out[i];
      check_name(pair.input, pair.loc, kInputs, key);
      if (!check_name(pair.output, pair.output_loc, kOutputs, key)) continue;
      for (size_t j = 0; j < i; ++j) {
        if (out[j].output == pair.output) {
          Diagnostic d{Severity::kError, pair.output_loc,
                       fmt::format("output '{}' appears twice in '{}'", pair.output, key), {}};
          d.note("first used here", out[j].output_loc);
          ctx_.diags.report(std::move(d));
          ok_ = false;
        }
      }
      // An output written in place of an optional input is optional too: it is absent when the input
      // is (Paddle's PIR signatures mark it so, e.g. rmsprop_'s mean_grad_out).
      const Input* in = op_.find_input(pair.input);
      if (key == "inplace" && in && in->optional) {
        for (Output& o : op_.outputs) o.optional = o.optional || o.name == pair.output;
      }
    }
  }

  void read_data_transform() {
    const KeyTable::Entry* e = keys_.find("data_transform");
    if (!e) return;
    const YamlNode* node = ctx_.map(*e->key_node, *e->value, "data_transform");
    if (!node) {
      ok_ = false;
      return;
    }
    const KeyTable sub(*node, ctx_, kDataTransformKeys, "data_transform.", where());
    DataTransform dt;
    dt.loc = ctx_.loc(*e->key_node);
    if (const KeyTable::Entry* s = sub.find("skip_transform")) {
      dt.skip_transform = checked(names_of(*s, "data_transform.skip_transform", false));
    }
    if (const KeyTable::Entry* s = sub.find("support_trans_dtype")) {
      dt.support_trans_dtype = checked(names_of(*s, "data_transform.support_trans_dtype", false));
    }
    for (const NameRef& n : dt.skip_transform) {
      if (!check_name(n.name, n.loc, kInputs, "data_transform.skip_transform")) continue;
      for (Input& in : op_.inputs) in.skip_transform = in.skip_transform || in.name == n.name;
    }
    for (const NameRef& n : dt.support_trans_dtype) {
      if (!check_name(n.name, n.loc, kInputs, "data_transform.support_trans_dtype")) continue;
      for (Input& in : op_.inputs) in.support_trans_dtype = in.support_trans_dtype || in.name == n.name;
    }
    op_.data_transform = std::move(dt);
  }

  void read_calls() {
    if (const KeyTable::Entry* e = keys_.find("invoke")) {
      if (std::optional<LocatedText> text = text_of(*e, "invoke")) {
        op_.invoke = parse_call(*text, ctx_.diags, "invoke");
        ok_ = ok_ && op_.invoke.has_value();
      }
    }
    if (const KeyTable::Entry* e = keys_.find("composite")) {
      if (std::optional<LocatedText> text = text_of(*e, "composite")) {
        op_.composite = parse_call(*text, ctx_.diags, "composite");
        ok_ = ok_ && op_.composite.has_value();
      }
    }
    if (const KeyTable::Entry* e = keys_.find("forward")) {
      if (std::optional<LocatedText> text = text_of(*e, "forward")) {
        op_.forward = parse_forward(*text, ctx_.diags);
        ok_ = ok_ && op_.forward.has_value();
      }
    }
  }

  void read_misc() {
    if (const KeyTable::Entry* e = keys_.find("backward")) op_.backward = name_of(*e, "backward");
    if (const KeyTable::Entry* e = keys_.find("traits")) op_.traits = checked(names_of(*e, "traits", true));
    if (const KeyTable::Entry* e = keys_.find("interfaces")) {
      op_.interfaces = checked(names_of(*e, "interfaces", true));
    }
    if (const KeyTable::Entry* e = keys_.find("support_dygraph_mode")) {
      op_.support_dygraph_mode = ctx_.boolean(*e->key_node, *e->value, "support_dygraph_mode");
      ok_ = ok_ && op_.support_dygraph_mode.has_value();
    }
    if (const KeyTable::Entry* e = keys_.find("support_tensor")) {
      op_.support_tensor = checked(names_of(*e, "support_tensor", false));
      for (const NameRef& n : op_.support_tensor) check_name(n.name, n.loc, kAttributes, "support_tensor");
    }
  }

  const YamlContext& ctx_;
  const KeyTable& keys_;
  Op& op_;
  bool ok_ = true;
};

}  // namespace

bool read_op_definition(const YamlContext& ctx, const KeyTable& keys, Op& op) {
  DefinitionReader reader(ctx, keys, op);
  return reader.run();
}

}  // namespace kforge::opdef
