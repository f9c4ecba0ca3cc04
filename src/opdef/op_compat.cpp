#include "opdef/op_compat.h"

#include <fmt/format.h>

#include "opdef/op_syntax.h"
#include "opdef/yaml_reader.h"
#include "opdef/yaml_tree.h"
#include "support/input_file.h"

namespace kforge::opdef {

const std::vector<std::string>& known_op_compat_keys() {
  static const std::vector<std::string> keys = {
      "op",
      "backward",
      "inputs",
      "outputs",
      "attrs",
      "extra",
      "extra.attrs",
      "extra.inputs",
      "extra.outputs",
      "scalar",
      "scalar.*.data_type",
      "scalar.*.tensor_name",
      "scalar.*.tensors_name",
      "scalar.*.support_tensor",
      "int_array",
      "int_array.*.data_type",
      "int_array.*.tensor_name",
      "int_array.*.tensors_name",
      "int_array.*.support_tensor",
      "manual_signature",
      "get_expected_kernel_type",
      "complex_promote",
      "drop_empty_grad",
  };
  return keys;
}

const MutableAttrInfo* CompatEntry::find_scalar(std::string_view attr) const {
  for (const MutableAttrInfo& m : scalar) {
    if (m.name == attr) return &m;
  }
  return nullptr;
}

const MutableAttrInfo* CompatEntry::find_int_array(std::string_view attr) const {
  for (const MutableAttrInfo& m : int_array) {
    if (m.name == attr) return &m;
  }
  return nullptr;
}

const CompatEntry* OpCompat::lookup(std::string_view name) const {
  auto it = by_name_.find(std::string(name));
  return it == by_name_.end() ? nullptr : &entries_[it->second];
}

namespace {

const std::vector<std::string> kTopKeys = {"op",     "backward",  "inputs",           "outputs",
                                           "attrs",  "extra",     "scalar",           "int_array",
                                           "manual_signature",    "get_expected_kernel_type",
                                           "complex_promote",     "drop_empty_grad"};
const std::vector<std::string> kExtraKeys = {"attrs", "inputs", "outputs"};
const std::vector<std::string> kMutableKeys = {"data_type", "tensor_name", "tensors_name", "support_tensor"};

}  // namespace

class OpCompatReader {
 public:
  OpCompatReader(const YamlContext& ctx, OpCompat& out) : ctx_(ctx), out_(out) {}

  void read_document(const YamlNode& doc) {
    if (doc.is_null()) return;
    if (!doc.is_sequence()) {
      ctx_.diags.error(ctx_.loc(doc), fmt::format("op_compat must be a list of entries ('- op : name'), not {}",
                                                  doc.kind_name()));
      return;
    }
    for (const YamlNode& entry : doc.children) read_entry(entry);
  }

 private:
  // `name` or `name (legacy)`, filling the text.
  std::optional<CompatName> compat_name(const LocatedText& text, size_t begin, size_t end, std::string_view key) {
    TextCursor cur(text, begin, end);
    CompatName n;
    cur.skip_spaces();
    n.loc = cur.loc();
    n.name = std::string(cur.identifier());
    bool ok = !n.name.empty();
    if (ok && cur.consume("(")) {
      n.legacy = std::string(cur.identifier());
      ok = !n.legacy.empty() && cur.consume(")");
    }
    cur.skip_spaces();
    if (ok && cur.at_end()) return n;
    ctx_.diags.error(n.name.empty() ? text.loc(begin) : cur.loc(),
                     fmt::format("bad name '{}' in '{}': expected 'name' or 'name (legacy_name)'",
                                 text.text().substr(begin, end - begin), key));
    return std::nullopt;
  }

  bool read_renames(const KeyTable::Entry& e, std::vector<CompatRename>& out) {
    const YamlNode* node = ctx_.map(*e.key_node, *e.value, e.key);
    if (!node) return false;
    for (size_t i = 0; i < node->map_size(); ++i) {
      const YamlNode* from = ctx_.scalar(*e.key_node, node->key(i), e.key);
      const YamlNode* to = ctx_.scalar(node->key(i), node->value_at(i), fmt::format("{}.{}", e.key, node->key(i).value));
      if (!from || !to) return false;
      out.push_back({from->value, to->value, ctx_.loc(*from)});
    }
    return true;
  }

  bool read_name_sequence(const KeyTable::Entry& e, std::string_view key, std::vector<NameRef>& out) {
    const YamlNode* seq = ctx_.sequence(*e.key_node, *e.value, key);
    if (!seq) return false;
    for (const YamlNode& item : seq->children) {
      const YamlNode* node = ctx_.scalar(*e.key_node, item, key);
      if (!node) return false;
      out.push_back({node->value, ctx_.loc(*node)});
    }
    return true;
  }

  bool read_mutable(const KeyTable::Entry& e, std::vector<MutableAttrInfo>& out, std::string_view where) {
    const YamlNode* node = ctx_.map(*e.key_node, *e.value, e.key);
    if (!node) return false;
    for (size_t i = 0; i < node->map_size(); ++i) {
      const YamlNode& key = node->key(i);
      const std::string path = fmt::format("{}.{}", e.key, key.value);
      const YamlNode* props = ctx_.map(key, node->value_at(i), path);
      if (!props) return false;
      MutableAttrInfo m;
      m.name = key.value;
      m.loc = ctx_.loc(key);
      const KeyTable sub(*props, ctx_, kMutableKeys, path + ".", where);
      for (const KeyTable::Entry& p : sub.entries()) {
        const std::string name = fmt::format("{}.{}", path, p.key);
        if (p.key == "support_tensor") {
          m.support_tensor = ctx_.boolean(*p.key_node, *p.value, name);
          if (!m.support_tensor) return false;
          continue;
        }
        const YamlNode* v = ctx_.scalar(*p.key_node, *p.value, name);
        if (!v) return false;
        (p.key == "data_type" ? m.data_type : p.key == "tensor_name" ? m.tensor_name : m.tensors_name) = v->value;
      }
      out.push_back(std::move(m));
    }
    return true;
  }

  bool read_extra(const KeyTable::Entry& e, CompatEntry& entry, std::string_view where) {
    const YamlNode* node = ctx_.map(*e.key_node, *e.value, "extra");
    if (!node) return false;
    CompatExtra extra;
    extra.loc = ctx_.loc(*e.key_node);
    const KeyTable sub(*node, ctx_, kExtraKeys, "extra.", where);
    bool ok = true;
    if (const KeyTable::Entry* a = sub.find("attrs")) {
      const YamlNode* seq = ctx_.sequence(*a->key_node, *a->value, "extra.attrs");
      if (!seq) return false;
      for (const YamlNode& item : seq->children) {
        const YamlNode* s = ctx_.scalar(*a->key_node, item, "extra.attrs");
        if (!s) return false;
        std::optional<ArgList> arg = parse_single_arg(ctx_.text(*s), ctx_.diags);
        if (!arg) {
          ok = false;
          continue;
        }
        if (!arg->inputs.empty()) {
          ctx_.diags.error(arg->inputs.front().loc, "'extra.attrs' lists attributes, not tensors");
          ok = false;
          continue;
        }
        extra.attrs.push_back(std::move(arg->attributes.front()));
      }
    }
    if (const KeyTable::Entry* i = sub.find("inputs")) ok = read_name_sequence(*i, "extra.inputs", extra.inputs) && ok;
    if (const KeyTable::Entry* o = sub.find("outputs")) {
      ok = read_name_sequence(*o, "extra.outputs", extra.outputs) && ok;
    }
    entry.extra = std::move(extra);
    return ok;
  }

  void read_entry(const YamlNode& node) {
    if (!node.is_map()) {
      ctx_.diags.error(ctx_.loc(node), fmt::format("expected an op_compat entry (a mapping that starts with "
                                                   "'op :'), found {}",
                                                   node.kind_name()));
      return;
    }
    std::string where = "op_compat entry";
    for (size_t i = 0; i < node.map_size(); ++i) {
      if (node.key(i).value == "op" && node.value_at(i).is_scalar()) {
        where = fmt::format("op_compat entry '{}'", node.value_at(i).value);
      }
    }
    const KeyTable keys(node, ctx_, kTopKeys, "", where);
    CompatEntry entry;
    entry.loc = ctx_.loc(node);
    const KeyTable::Entry* op_key = keys.find("op");
    if (!op_key) {
      ctx_.diags.error(ctx_.loc(node), "op_compat entry has no 'op' key naming the op");
      return;
    }
    const YamlNode* op_node = ctx_.scalar(*op_key->key_node, *op_key->value, "op");
    if (!op_node) return;
    const LocatedText op_text = ctx_.text(*op_node);
    std::optional<CompatName> op_name = compat_name(op_text, 0, op_text.size(), "op");
    if (!op_name) return;
    entry.op = std::move(*op_name);

    bool ok = true;
    for (const KeyTable::Entry& e : keys.entries()) {
      if (e.key == "op") continue;
      if (e.key == "backward") {
        ok = read_backward(e, entry) && ok;
      } else if (e.key == "inputs") {
        ok = read_renames(e, entry.inputs) && ok;
      } else if (e.key == "outputs") {
        ok = read_renames(e, entry.outputs) && ok;
      } else if (e.key == "attrs") {
        ok = read_renames(e, entry.attrs) && ok;
      } else if (e.key == "scalar") {
        ok = read_mutable(e, entry.scalar, where) && ok;
      } else if (e.key == "int_array") {
        ok = read_mutable(e, entry.int_array, where) && ok;
      } else if (e.key == "extra") {
        ok = read_extra(e, entry, where) && ok;
      } else if (e.key == "manual_signature") {
        ok = read_name_sequence(e, e.key, entry.manual_signature) && ok;
      } else if (e.key == "complex_promote") {
        ok = read_name_sequence(e, e.key, entry.complex_promote) && ok;
      } else if (e.key == "drop_empty_grad") {
        ok = read_name_sequence(e, e.key, entry.drop_empty_grad) && ok;
      } else if (e.key == "get_expected_kernel_type") {
        std::vector<CompatRename> pairs;
        ok = read_renames(e, pairs) && ok;
        for (CompatRename& p : pairs) {
          entry.get_expected_kernel_type.push_back({NameRef{p.name, p.loc}, NameRef{p.legacy, p.loc}});
        }
      }
    }
    if (!ok) return;
    add(std::move(entry));
  }

  bool read_backward(const KeyTable::Entry& e, CompatEntry& entry) {
    const YamlNode* node = ctx_.scalar(*e.key_node, *e.value, "backward");
    if (!node) return false;
    const LocatedText text = ctx_.text(*node);
    const std::string_view s = text.text();
    size_t begin = 0;
    for (;;) {
      size_t end = s.find(',', begin);
      if (end == std::string_view::npos) end = s.size();
      std::optional<CompatName> n = compat_name(text, begin, end, "backward");
      if (!n) return false;
      entry.backward.push_back(std::move(*n));
      if (end == s.size()) return true;
      begin = end + 1;
    }
  }

  // Registers the entry's names. A name an earlier entry claims stays with that entry (op_gen.py's
  // get_compat returns the first match), which is worth a warning: the later entry is dead for it.
  void add(CompatEntry entry) {
    const size_t index = out_.entries_.size();
    auto [op_it, op_new] = out_.by_name_.emplace(entry.op.name, index);
    claimed_at_.emplace(entry.op.name, entry.op.loc);
    if (!op_new) {
      Diagnostic d{Severity::kWarning, entry.op.loc,
                   fmt::format("duplicate op_compat entry for op '{}'; only the first one is used, as in Paddle",
                               entry.op.name),
                   {}};
      d.note("the first entry is here", claimed_at_[entry.op.name]);
      ctx_.diags.report(std::move(d));
    }
    for (const CompatName& b : entry.backward) {
      auto [it, inserted] = out_.by_name_.emplace(b.name, index);
      if (inserted) {
        claimed_at_.emplace(b.name, b.loc);
        continue;
      }
      // A repeated entry repeats its backward names; the warning above already covers those.
      if (!op_new && it->second == op_it->second) continue;
      // The claim may be this very entry (its op name, or the same backward name twice).
      const std::string& owner = it->second == index ? entry.op.name : out_.entries_[it->second].op.name;
      Diagnostic d{Severity::kWarning, b.loc,
                   fmt::format("backward op '{}' is already listed by the op_compat entry of '{}'; that entry is "
                               "used for it, as in Paddle",
                               b.name, owner),
                   {}};
      d.note("first listed here", claimed_at_[b.name]);
      ctx_.diags.report(std::move(d));
    }
    out_.entries_.push_back(std::move(entry));
  }

  const YamlContext& ctx_;
  OpCompat& out_;
  std::unordered_map<std::string, SourceLoc> claimed_at_;  // where each name was first claimed
};

OpCompat read_op_compat(const SourceManager& sources, uint32_t file, DiagnosticEngine& diags) {
  OpCompat out;
  std::vector<YamlNode> documents;
  if (!parse_yaml(sources, file, diags, documents)) return out;
  const YamlContext ctx{sources, file, diags};
  OpCompatReader reader(ctx, out);
  for (const YamlNode& doc : documents) reader.read_document(doc);
  return out;
}

OpCompat load_op_compat(const std::string& path, SourceManager& sources, DiagnosticEngine& diags) {
  const std::optional<uint32_t> file = load_input_file(sources, diags, path, "op_compat file");
  if (!file) return {};
  return read_op_compat(sources, *file, diags);
}

}  // namespace kforge::opdef
