// The kforge extension keys of an op entry:
//   compute : max(x, 0)                      a scalar expression over inputs and attributes (raw text)
//   reduce  : {init: 0, combine: a + b, finalize: acc / n, axis: axis}
//   pattern : elementwise | broadcast | injective | reduction | out_fusible | opaque
//   row_pattern : softmax | layer_norm | rms_norm   a named row-reduction composition
// The expressions are kept as raw text with their location; src/scalar_expr/ parses them.
#include <fmt/format.h>

#include "opdef/op_entry.h"
#include "opdef/op_syntax.h"

namespace kforge::opdef {

namespace {

const std::vector<std::string> kReduceKeys = {"init", "combine", "finalize", "axis"};

// Reports "'compute' of op 'relu' is already set" when an overlay repeats an extension.
bool check_unset(const YamlContext& ctx, const KeyTable::Entry& e, const Op& op, SourceLoc previous) {
  if (!previous.valid()) return true;
  Diagnostic d{Severity::kError, ctx.loc(*e.key_node), fmt::format("'{}' of op '{}' is already set", e.key, op.name),
               {}};
  d.note("previously set here", previous);
  ctx.diags.report(std::move(d));
  return false;
}

std::optional<RawText> raw_text(const YamlContext& ctx, const KeyTable::Entry& e, std::string_view name) {
  const YamlNode* node = ctx.scalar(*e.key_node, *e.value, name);
  if (!node) return std::nullopt;
  const LocatedText text = ctx.text(*node);
  size_t begin = 0, end = text.size();
  trim_range(text.text(), begin, end);
  return RawText{std::string(text.text().substr(begin, end - begin)), text.loc(begin)};
}

}  // namespace

bool read_op_extensions(const YamlContext& ctx, const KeyTable& keys, Op& op) {
  bool ok = true;
  if (const KeyTable::Entry* e = keys.find("compute")) {
    if (check_unset(ctx, *e, op, op.compute ? op.compute->loc : SourceLoc{})) {
      op.compute = raw_text(ctx, *e, "compute");
      ok = ok && op.compute.has_value();
    } else {
      ok = false;
    }
  }
  if (const KeyTable::Entry* e = keys.find("pattern")) {
    if (!check_unset(ctx, *e, op, op.pattern ? op.pattern->loc : SourceLoc{})) {
      ok = false;
    } else if (const YamlNode* node = ctx.scalar(*e->key_node, *e->value, "pattern")) {
      const std::optional<PatternKind> kind = parse_pattern_kind(node->value);
      if (kind) {
        op.pattern = Pattern{*kind, ctx.loc(*node)};
      } else {
        ctx.diags.error(ctx.loc(*node), fmt::format("unknown pattern '{}'{}; expected one of {}", node->value,
                                                    did_you_mean(node->value, pattern_kind_spellings()),
                                                    join(pattern_kind_spellings(), ", ")));
        ok = false;
      }
    } else {
      ok = false;
    }
  }
  if (const KeyTable::Entry* e = keys.find("row_pattern")) {
    if (!check_unset(ctx, *e, op, op.row_pattern ? op.row_pattern->loc : SourceLoc{})) {
      ok = false;
    } else if (const YamlNode* node = ctx.scalar(*e->key_node, *e->value, "row_pattern")) {
      const std::optional<RowPatternKind> kind = parse_row_pattern(node->value);
      if (kind) {
        op.row_pattern = RowPattern{*kind, ctx.loc(*node)};
      } else {
        ctx.diags.error(ctx.loc(*node), fmt::format("unknown row_pattern '{}'{}; expected one of {}", node->value,
                                                    did_you_mean(node->value, row_pattern_spellings()),
                                                    join(row_pattern_spellings(), ", ")));
        ok = false;
      }
    } else {
      ok = false;
    }
  }
  if (const KeyTable::Entry* e = keys.find("reduce")) {
    if (!check_unset(ctx, *e, op, op.reduce ? op.reduce->loc : SourceLoc{})) return false;
    const YamlNode* node = ctx.map(*e->key_node, *e->value, "reduce");
    if (!node) return false;
    const KeyTable sub(*node, ctx, kReduceKeys, "reduce.", fmt::format("op '{}'", op.name));
    Reduce r;
    r.loc = ctx.loc(*e->key_node);
    bool reduce_ok = true;
    for (const char* required : {"init", "combine", "axis"}) {
      if (!sub.find(required)) {
        ctx.diags.error(r.loc, fmt::format("'reduce' of op '{}' has no '{}'", op.name, required));
        reduce_ok = false;
      }
    }
    auto read = [&](const char* key, RawText& out) {
      const KeyTable::Entry* k = sub.find(key);
      if (!k) return;
      std::optional<RawText> t = raw_text(ctx, *k, fmt::format("reduce.{}", key));
      if (t) {
        out = std::move(*t);
      } else {
        reduce_ok = false;
      }
    };
    read("init", r.init);
    read("combine", r.combine);
    if (sub.find("finalize")) {
      r.finalize.emplace();
      read("finalize", *r.finalize);
    }
    RawText axis;
    read("axis", axis);
    if (!axis.text.empty()) {
      r.axis = NameRef{axis.text, axis.loc};
      if (!op.find_attribute(axis.text)) {
        std::vector<std::string> names;
        for (const Attribute& a : op.attributes) names.push_back(a.name);
        ctx.diags.error(axis.loc, fmt::format("'reduce.axis' must name an attribute of op '{}', and '{}' is not "
                                              "one{}",
                                              op.name, axis.text, did_you_mean(axis.text, names)));
        reduce_ok = false;
      }
    }
    if (reduce_ok) {
      op.reduce = std::move(r);
    } else {
      ok = false;
    }
  }
  return ok;
}

}  // namespace kforge::opdef
