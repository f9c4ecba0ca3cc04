#include "scalar_expr/reduction.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "support/text.h"

namespace kforge::expr {

namespace {

bool is_identifier(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  }
  return true;
}

// The op's tensor inputs that a parsed (unresolved) expression names, in order of first use.
std::vector<std::string> inputs_named(const Node& root, const ExprContext& context) {
  std::vector<std::string> names;
  visit(root, [&](const Node& n) {
    if (n.kind != NodeKind::kName || n.name == "acc") return;
    const ExprParam* p = context.find(n.name);
    if (p != nullptr && p->kind == ExprParam::Kind::kInput && std::find(names.begin(), names.end(), n.name) == names.end()) {
      names.push_back(n.name);
    }
  });
  return names;
}

// Converts a checked part to the accumulator type, with a specific message for bool / number mismatches.
std::optional<Expression> to_accumulator(Expression typed, ScalarType acc, std::string_view part,
                                         DiagnosticEngine& diags) {
  const ScalarType got = typed.root->type;
  if ((got == ScalarType::kBool) != (acc == ScalarType::kBool)) {
    diags.error(typed.root->loc, fmt::format("'{}' gives {} but the accumulator is {}", part, name_of(got), name_of(acc)));
    return std::nullopt;
  }
  typed.root = convert_to(std::move(typed.root), acc, diags);
  if (!typed.root) return std::nullopt;
  return typed;
}

}  // namespace

std::optional<Reduction> parse_reduction(const RawReduce& raw, const SourceManager* sources, DiagnosticEngine& diags) {
  bool ok = true;
  Reduction out;
  out.loc = raw.loc;
  auto parse_part = [&](const std::optional<RawString>& part, std::string_view key, Expression& into) {
    if (!part) {
      diags.error(raw.loc, fmt::format("'reduce' is missing '{}'", key));
      ok = false;
      return;
    }
    std::optional<Expression> parsed = parse_expression(part->text, part->loc, sources, diags);
    if (!parsed) {
      ok = false;
      return;
    }
    into = std::move(*parsed);
  };
  parse_part(raw.init, "init", out.init);
  parse_part(raw.combine, "combine", out.combine);
  if (raw.finalize) {
    Expression finalize;
    parse_part(raw.finalize, "finalize", finalize);
    if (finalize.root) out.finalize = std::move(finalize);
  }
  if (!raw.axis) {
    diags.error(raw.loc, "'reduce' is missing 'axis'");
    ok = false;
  } else if (!is_identifier(raw.axis->text)) {
    diags.error(raw.axis->loc, fmt::format("'axis' must name an attribute, got '{}'", raw.axis->text));
    ok = false;
  } else {
    out.axis = raw.axis->text;
    out.axis_loc = raw.axis->loc;
  }
  if (!ok) return std::nullopt;
  return out;
}

std::optional<TypedReduction> check_reduction(const Reduction& reduction, const ExprContext& context,
                                              DiagnosticEngine& diags, std::optional<ScalarType> accumulator) {
  const size_t errors_before = diags.error_count();
  TypedReduction out;
  out.axis = reduction.axis;

  // axis: an attribute of the op, of any type.
  const ExprParam* axis = context.find(reduction.axis);
  if (axis == nullptr || axis->kind != ExprParam::Kind::kAttribute) {
    Diagnostic diag{Severity::kError, reduction.axis_loc, "", {}};
    if (axis != nullptr) {
      diag.message = fmt::format("'axis' names input '{}'; it must name an attribute", reduction.axis);
    } else {
      diag.message = context.op_name().empty()
                         ? fmt::format("'axis' names '{}', which is not an attribute", reduction.axis)
                         : fmt::format("'axis' names '{}', which is not an attribute of op '{}'", reduction.axis, context.op_name());
      std::vector<std::string> attributes;
      for (const ExprParam& p : context.params()) {
        if (p.kind == ExprParam::Kind::kAttribute) attributes.push_back(p.name);
      }
      if (auto close = closest_match(reduction.axis, attributes)) diag.note(fmt::format("did you mean '{}'?", *close));
    }
    diags.report(std::move(diag));
  }

  // init: attributes only. Its type decides the accumulator unless it is a bare number.
  ExprScope init_scope;
  init_scope.part = "init";
  init_scope.inputs = false;
  std::optional<Expression> init = check_expression(reduction.init, context, diags, init_scope);

  // The reduced input: the one tensor input that combine names, else the op's first input.
  std::string input_name;
  ScalarType input_type = ScalarType::kFloat32;
  for (const ExprParam& p : context.params()) {
    if (p.kind == ExprParam::Kind::kInput) {
      input_name = p.name;
      input_type = compute_type(p.type.value_or(ScalarType::kFloat32));
      break;
    }
  }
  const std::vector<std::string> used = inputs_named(*reduction.combine.root, context);
  if (used.size() > 1) {
    diags.error(reduction.combine.root->loc,
                fmt::format("'combine' may read only one input, but it reads '{}' and '{}'", used[0], used[1]));
  } else if (used.size() == 1) {
    input_name = used[0];
    input_type = compute_type(context.find(input_name)->type.value_or(ScalarType::kFloat32));
  }

  ScalarType acc = input_type;
  if (accumulator) {
    acc = compute_type(*accumulator);
  } else if (init && !(init->root->kind == NodeKind::kLiteral && init->root->weak)) {
    acc = init->root->type;
  }
  out.input = input_name;
  out.input_type = input_type;
  out.accumulator = acc;
  out.result = acc;
  if (init) init = to_accumulator(std::move(*init), acc, "init", diags);

  ExprScope combine_scope;
  combine_scope.part = "combine";
  combine_scope.accumulator = acc;
  std::optional<Expression> combine = check_expression(reduction.combine, context, diags, combine_scope);
  if (combine) combine = to_accumulator(std::move(*combine), acc, "combine", diags);

  // merge: the same combine with the input standing for another partial accumulator.
  std::optional<Expression> merge;
  if (combine && !input_name.empty()) {
    ExprContext as_partial(context.op_name());
    for (const ExprParam& p : context.params()) {
      if (p.kind == ExprParam::Kind::kInput && p.name == input_name) {
        as_partial.input(p.name, acc);
      } else if (p.kind == ExprParam::Kind::kInput) {
        as_partial.input(p.name, p.type.value_or(ScalarType::kFloat32));
      } else if (p.type) {
        as_partial.attribute(p.name, *p.type);
      } else {
        as_partial.opaque_attribute(p.name, p.type_spelling);
      }
    }
    merge = check_expression(reduction.combine, as_partial, diags, combine_scope);
    if (merge) merge = to_accumulator(std::move(*merge), acc, "combine", diags);
  } else if (combine) {
    merge = combine;
  }

  std::optional<Expression> finalize;
  if (reduction.finalize) {
    ExprScope finalize_scope;
    finalize_scope.part = "finalize";
    finalize_scope.inputs = false;
    finalize_scope.accumulator = acc;
    finalize_scope.count = true;
    finalize = check_expression(*reduction.finalize, context, diags, finalize_scope);
    if (finalize) out.result = finalize->root->type;
  }

  if (diags.error_count() != errors_before || !init || !combine || !merge || (reduction.finalize && !finalize)) {
    return std::nullopt;
  }
  out.init = std::move(*init);
  out.combine = std::move(*combine);
  out.merge = std::move(*merge);
  out.finalize = std::move(finalize);
  return out;
}

}  // namespace kforge::expr
