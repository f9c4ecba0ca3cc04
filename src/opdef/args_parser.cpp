// The `args` mini-language (schemas/op.schema.json, args):
//   args := '(' [arg (',' arg)*] ')'
//   arg  := TYPE NAME ['=' DEFAULT]        TYPE := name ['(' name ')'] ['[' ']']
// DEFAULT is a C++ expression (cpp_expr.h); a top-level ',' ends it, commas inside {...} do not.
#include <fmt/format.h>

#include "opdef/cpp_expr.h"
#include "opdef/op_syntax.h"

namespace kforge::opdef {

namespace {

struct RawArg {
  std::string type_text;
  size_t type_begin = 0;
  std::string name;
  size_t name_begin = 0;
  std::optional<DefaultValue> default_value;
};

// TYPE: `int`, `Tensor[]`, `Scalar(int64_t)`. Returns false (after reporting) if malformed.
bool parse_type(TextCursor& cur, DiagnosticEngine& diags, RawArg& arg) {
  cur.skip_spaces();
  arg.type_begin = cur.pos();
  const std::string_view base = cur.identifier();
  if (base.empty()) {
    diags.error(cur.loc(), fmt::format("expected an argument type, found {}", cur.describe_next()));
    return false;
  }
  arg.type_text = std::string(base);
  // `Scalar(int)`: the parenthesis must touch the name, otherwise it is not part of the type.
  if (cur.peek() == '(') {
    const size_t open = cur.pos();
    cur.advance();
    const std::string_view inner = cur.identifier();
    if (inner.empty() || !cur.consume(")")) {
      Diagnostic d{Severity::kError, cur.loc(), fmt::format("expected ')' to close the type '{}('", base), {}};
      d.note("to match this '('", cur.loc(open));
      diags.report(std::move(d));
      return false;
    }
    arg.type_text += fmt::format("({})", inner);
  }
  if (cur.peek() == '[') {
    cur.advance();
    if (cur.peek() != ']') {
      diags.error(cur.loc(), fmt::format("expected ']' after '{}['", arg.type_text));
      return false;
    }
    cur.advance();
    arg.type_text += "[]";
  }
  return true;
}

bool parse_one(TextCursor& cur, DiagnosticEngine& diags, RawArg& arg) {
  if (!parse_type(cur, diags, arg)) return false;
  cur.skip_spaces();
  arg.name_begin = cur.pos();
  const std::string_view name = cur.identifier();
  if (name.empty()) {
    diags.error(cur.loc(), fmt::format("expected an argument name after type '{}', found {}", arg.type_text,
                                       cur.describe_next()));
    return false;
  }
  arg.name = std::string(name);
  if (!cur.consume("=")) return true;
  cur.skip_spaces();
  const char next = cur.peek();
  if (cur.at_end() || next == ',' || next == ')') {
    diags.error(cur.loc(), fmt::format("expected a default value for '{}' after '='", arg.name));
    return false;
  }
  const size_t begin = cur.pos();
  if (!parse_cpp_expression(cur, diags, fmt::format("bad default value for '{}'", arg.name))) return false;
  arg.default_value = classify_default(cur.text(), begin, cur.pos());
  return true;
}

// Turns the raw arguments into inputs and attributes, checking Paddle's ordering rules.
bool build(const TextCursor& cur, DiagnosticEngine& diags, std::vector<RawArg>& raw, ArgList& out) {
  bool ok = true;
  const Attribute* first_with_default = nullptr;
  for (RawArg& arg : raw) {
    const SourceLoc type_loc = cur.loc(arg.type_begin);
    const SourceLoc name_loc = cur.loc(arg.name_begin);
    const std::optional<ArgType> type = parse_arg_type(arg.type_text);
    if (!type) {
      diags.error(type_loc, fmt::format("unknown argument type '{}'{}", arg.type_text,
                                        did_you_mean(arg.type_text, arg_type_spellings())));
      ok = false;
      continue;
    }
    auto previous = [&](const std::string& name) -> SourceLoc {
      for (const Input& in : out.inputs) {
        if (in.name == name) return in.name_loc;
      }
      for (const Attribute& a : out.attributes) {
        if (a.name == name) return a.name_loc;
      }
      return {};
    };
    if (const SourceLoc prev = previous(arg.name); prev.valid()) {
      Diagnostic d{Severity::kError, name_loc, fmt::format("duplicate argument '{}'", arg.name), {}};
      d.note(fmt::format("'{}' was first declared here", arg.name), prev);
      diags.report(std::move(d));
      ok = false;
      continue;
    }
    if (is_tensor_type(*type)) {
      if (!out.attributes.empty()) {
        Diagnostic d{Severity::kError, type_loc,
                     fmt::format("tensor argument '{}' must come before the attributes", arg.name), {}};
        d.note(fmt::format("first attribute '{}' is here", out.attributes.front().name), out.attributes.front().loc);
        diags.report(std::move(d));
        ok = false;
        continue;
      }
      if (arg.default_value) {
        diags.error(arg.default_value->loc, fmt::format("tensor argument '{}' cannot have a default value", arg.name));
        ok = false;
        continue;
      }
      Input in;
      in.name = std::move(arg.name);
      in.type = *type;
      in.loc = type_loc;
      in.name_loc = name_loc;
      out.inputs.push_back(std::move(in));
      continue;
    }
    if (first_with_default && !arg.default_value) {
      Diagnostic d{Severity::kError, name_loc,
                   fmt::format("attribute '{}' needs a default value because an earlier attribute has one", arg.name),
                   {}};
      d.note(fmt::format("'{}' has a default value here", first_with_default->name),
             first_with_default->default_value->loc);
      diags.report(std::move(d));
      ok = false;
      continue;
    }
    if (*type == ArgType::kDataType && arg.default_value &&
        arg.default_value->text.find("DataType") == std::string::npos) {
      // Paddle's parse_op_entry asserts this: the generators strip everything before "DataType".
      diags.error(arg.default_value->loc,
                  fmt::format("default of DataType attribute '{}' must be a DataType constant such as "
                              "DataType::FLOAT32",
                              arg.name));
      ok = false;
      continue;
    }
    if (*type == ArgType::kDataLayout && arg.default_value &&
        arg.default_value->text.find("DataLayout") == std::string::npos) {
      diags.error(arg.default_value->loc,
                  fmt::format("default of DataLayout attribute '{}' must be a DataLayout constant such as "
                              "DataLayout::NCHW",
                              arg.name));
      ok = false;
      continue;
    }
    Attribute a;
    a.name = std::move(arg.name);
    a.type = *type;
    a.default_value = std::move(arg.default_value);
    a.loc = type_loc;
    a.name_loc = name_loc;
    out.attributes.push_back(std::move(a));
    if (!first_with_default && out.attributes.back().default_value) first_with_default = &out.attributes.back();
  }
  return ok;
}

}  // namespace

bool parse_arg_list(TextCursor& cur, DiagnosticEngine& diags, ArgList& out) {
  cur.skip_spaces();
  const size_t open = cur.pos();
  if (cur.peek() != '(') {
    diags.error(cur.loc(), fmt::format("expected '(' to start the argument list, found {}", cur.describe_next()));
    return false;
  }
  cur.advance();
  std::vector<RawArg> raw;
  if (!cur.consume(")")) {
    for (;;) {
      RawArg arg;
      if (!parse_one(cur, diags, arg)) return false;
      raw.push_back(std::move(arg));
      if (cur.consume(",")) continue;
      if (cur.consume(")")) break;
      cur.skip_spaces();
      if (cur.at_end()) {
        Diagnostic d{Severity::kError, cur.loc(), "expected ')' to close the argument list", {}};
        d.note("to match this '('", cur.loc(open));
        diags.report(std::move(d));
      } else {
        diags.error(cur.loc(), fmt::format("expected ',' or ')' after argument '{}', found {}", raw.back().name,
                                           cur.describe_next()));
      }
      return false;
    }
  }
  // `build` keeps a pointer into out.attributes while appending to it: reserve so it stays valid.
  out.attributes.reserve(raw.size());
  return build(cur, diags, raw, out);
}

std::optional<ArgList> parse_args(const LocatedText& text, DiagnosticEngine& diags) {
  TextCursor cur(text);
  ArgList out;
  if (!parse_arg_list(cur, diags, out)) return std::nullopt;
  cur.skip_spaces();
  if (!cur.at_end()) {
    diags.error(cur.loc(), fmt::format("unexpected {} after the argument list", cur.describe_next()));
    return std::nullopt;
  }
  return out;
}

std::optional<ArgList> parse_single_arg(const LocatedText& text, DiagnosticEngine& diags) {
  TextCursor cur(text);
  RawArg arg;
  if (!parse_one(cur, diags, arg)) return std::nullopt;
  cur.skip_spaces();
  if (!cur.at_end()) {
    diags.error(cur.loc(), fmt::format("unexpected {} after argument '{}'", cur.describe_next(), arg.name));
    return std::nullopt;
  }
  std::vector<RawArg> raw;
  raw.push_back(std::move(arg));
  ArgList out;
  out.attributes.reserve(1);
  if (!build(cur, diags, raw, out)) return std::nullopt;
  return out;
}

}  // namespace kforge::opdef
