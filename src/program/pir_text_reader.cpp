// PIR text reader, structure: programs, blocks, block arguments, ops and their regions. Types and attribute
// values are in pir_text_values.cpp.
#include "program/pir_text_reader.h"

#include <fmt/format.h>

#include <filesystem>

#include "program/pir_text_internal.h"

namespace kforge::ir {

namespace pir_text {

namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

}  // namespace

Parser::Parser(const SourceManager& sources, uint32_t file, DiagnosticEngine& diags)
    : sources_(sources), file_(file), diags_(diags), lexer_(sources.contents(file)) {}

// ---------------------------------------------------------------------------------------------- helpers

void Parser::fail(size_t offset, std::string message) {
  diags_.error(at(offset), std::move(message));
  throw Fatal{};
}

void Parser::fail_note(size_t offset, std::string message, size_t note_offset, std::string note) {
  Diagnostic d{Severity::kError, at(offset), std::move(message), {}};
  d.note(std::move(note), at(note_offset));
  diags_.report(std::move(d));
  throw Fatal{};
}

Token Parser::next() {
  Token t = lexer_.next();
  if (t.kind == TokenKind::kError) fail(t.offset, t.value);
  return t;
}

Token Parser::peek() {
  Token t = lexer_.peek();
  if (t.kind == TokenKind::kError) fail(t.offset, t.value);
  return t;
}

std::string Parser::describe(const Token& t) {
  if (t.kind == TokenKind::kEof) return "end of file";
  return fmt::format("'{}'", t.text);
}

Token Parser::expect(char c, std::string_view context) {
  Token t = next();
  if (!t.is(c)) fail(t.offset, fmt::format("expected '{}' {}, got {}", c, context, describe(t)));
  return t;
}

// ---------------------------------------------------------------------------------------------- entry points

std::vector<Program> Parser::programs() {
  errors_before_ = diags_.error_count();
  std::vector<Program> out;
  try {
    lexer_.skip_space();
    if (lexer_.at_end()) fail(lexer_.pos(), "no program in the file: expected '{'");
    while (true) {
      lexer_.skip_space();
      if (lexer_.at_end()) break;
      out.push_back(parse_program(out.size()));
    }
  } catch (const Fatal&) {
    return {};
  }
  if (diags_.error_count() > errors_before_) return {};
  return out;
}

std::optional<Type> Parser::type_only() {
  const size_t errors_before = diags_.error_count();
  try {
    Type t = parse_type(0);
    const Token end = next();
    if (end.kind != TokenKind::kEof) fail(end.offset, fmt::format("unexpected {} after the type", describe(end)));
    if (diags_.error_count() > errors_before) return std::nullopt;
    return t;
  } catch (const Fatal&) {
    return std::nullopt;
  }
}

std::optional<Attribute> Parser::attribute_only() {
  const size_t errors_before = diags_.error_count();
  try {
    Attribute a = parse_attribute(0);
    const Token end = next();
    if (end.kind != TokenKind::kEof) {
      fail(end.offset, fmt::format("unexpected {} after the attribute value", describe(end)));
    }
    if (diags_.error_count() > errors_before) return std::nullopt;
    return a;
  } catch (const Fatal&) {
    return std::nullopt;
  }
}

// ---------------------------------------------------------------------------------------------- structure

Program Parser::parse_program(size_t index) {
  const Token open = next();
  if (!open.is('{')) fail(open.offset, fmt::format("expected '{{' to start a program, got {}", describe(open)));
  Program program;
  program.format = SourceFormat::kPirText;
  program.file = file_;
  program.name = std::filesystem::path(sources_.path(file_)).stem().string();
  if (index > 0) program.name += "." + std::to_string(index + 1);
  program.block(program.top_block()).loc = at(open.offset);
  program_ = &program;
  visible_.clear();
  defined_.clear();
  scopes_.clear();
  block_stack_.clear();
  parse_block(program.top_block(), 0);
  assign_value_names(program);
  program_ = nullptr;
  return program;
}

void Parser::parse_block(BlockId block, int depth) {
  const uint32_t open_offset = program_->block(block).loc.offset;
  if (depth > kMaxNesting) fail(open_offset, fmt::format("regions nested more than {} deep", kMaxNesting));
  block_stack_.push_back(block);
  scopes_.emplace_back();
  parse_block_args(block);
  while (true) {
    const Token t = peek();
    if (t.is('}')) {
      next();
      break;
    }
    if (t.kind == TokenKind::kEof) {
      fail_note(t.offset, "unexpected end of file: expected '}' to close the block", open_offset,
                "the block starts here");
    }
    if (!t.is('(')) fail(t.offset, fmt::format("expected an op or '}}', got {}", describe(t)));
    parse_op(block, depth);
  }
  for (const std::string& name : scopes_.back()) visible_.erase(name);
  scopes_.pop_back();
  block_stack_.pop_back();
}

void Parser::parse_block_args(BlockId block) {
  while (peek().is('^')) {
    next();
    if (peek().is_ident("kw")) {
      // ^kw: then one %kwarg_<key> {attrs} per line.
      next();
      expect(':', "after '^kw'");
      while (peek().kind == TokenKind::kValue) define_block_arg(block, next(), true);
      continue;
    }
    if (peek().kind != TokenKind::kValue) continue;  // a while body with no arguments prints a bare '^'
    while (true) {
      const Token name = next();
      if (name.kind != TokenKind::kValue) {
        fail(name.offset, fmt::format("expected a block argument such as %arg_0, got {}", describe(name)));
      }
      define_block_arg(block, name, false);
      if (!peek().is(',')) break;
      next();
    }
  }
}

ValueId Parser::define_block_arg(BlockId block, const Token& name, bool keyword) {
  std::vector<NamedAttribute> attrs;
  if (peek().is('{')) attrs = parse_attr_map();
  Type type;
  if (peek().is(':')) {
    next();
    type = parse_type(0);
  }
  ValueId v;
  if (keyword) {
    constexpr std::string_view kPrefix = "%kwarg_";
    if (name.text.substr(0, kPrefix.size()) != kPrefix || name.text.size() == kPrefix.size()) {
      fail(name.offset, fmt::format("keyword block arguments are named %kwarg_<key>, got '{}'", name.text));
    }
    v = program_->add_block_kwarg(block, std::string(name.text.substr(kPrefix.size())), std::move(type),
                                  at(name.offset));
  } else {
    v = program_->add_block_argument(block, std::move(type), at(name.offset));
  }
  program_->value(v).attributes = std::move(attrs);
  bind_name(name, v);
  return v;
}

void Parser::bind_name(const Token& name, ValueId value) {
  Value& v = program_->value(value);
  v.source_id = std::string(name.text);
  v.loc = at(name.offset);
  auto [it, inserted] = defined_.emplace(std::string(name.text), at(name.offset));
  if (!inserted) {
    Diagnostic d{Severity::kError, at(name.offset), fmt::format("value '{}' is defined twice", name.text), {}};
    d.note("first defined here", it->second);
    diags_.report(std::move(d));
    return;
  }
  visible_.emplace(std::string(name.text), Binding{value, at(name.offset)});
  scopes_.back().push_back(std::string(name.text));
}

ValueId Parser::parse_operand(BlockId block) {
  (void)block;
  const Token t = next();
  if (t.kind == TokenKind::kNullValue) return ValueId{};
  if (t.kind != TokenKind::kValue) {
    fail(t.offset, fmt::format("expected a value such as %0 or <<NULL VALUE>>, got {}", describe(t)));
  }
  auto it = visible_.find(std::string(t.text));
  if (it != visible_.end()) return it->second.value;
  auto elsewhere = defined_.find(std::string(t.text));
  if (elsewhere != defined_.end()) {
    Diagnostic d{Severity::kError, at(t.offset),
                 fmt::format("use of value '{}' outside the region that defines it", t.text), {}};
    d.note("defined here", elsewhere->second);
    diags_.report(std::move(d));
    return ValueId{};
  }
  if (peek().is('{')) {
    // Paddle prints a block argument where it is first used, with its attributes: `%arg_0 {}`.
    for (auto b = block_stack_.rbegin(); b != block_stack_.rend(); ++b) {
      if (*b != program_->top_block()) {
        return define_block_arg(*b, t, t.text.substr(0, 7) == "%kwarg_");
      }
    }
    fail(t.offset, fmt::format("block argument '{}' is used outside any region", t.text));
  }
  diags_.error(at(t.offset), fmt::format("use of undefined value '{}'", t.text));
  return ValueId{};
}

void Parser::parse_op(BlockId block, int depth) {
  const Token open = next();  // '('
  std::vector<Token> result_names;
  if (peek().is(')')) {
    next();
  } else {
    while (true) {
      const Token v = next();
      if (v.kind != TokenKind::kValue) {
        fail(v.offset, fmt::format("expected a value name such as %0 in the results of an op, got {}", describe(v)));
      }
      result_names.push_back(v);
      const Token sep = next();
      if (sep.is(')')) break;
      if (!sep.is(',')) fail(sep.offset, fmt::format("expected ',' or ')' in the results of an op, got {}", describe(sep)));
    }
  }
  const Token eq = next();
  if (!eq.is('=')) fail(eq.offset, fmt::format("expected '=' after the results of an op, got {}", describe(eq)));

  const Token name_tok = next();
  std::string full_name;
  if (name_tok.kind == TokenKind::kString) {
    full_name = name_tok.value;
  } else if (name_tok.kind == TokenKind::kIdent) {
    full_name = std::string(name_tok.text);  // the 2024 printer wrote `pd_op.if` unquoted
  } else {
    fail(name_tok.offset, fmt::format("expected an op name such as \"pd_op.add\", got {}", describe(name_tok)));
  }
  OpSpec spec;
  spec.loc = at(open.offset);
  spec.name_loc = at(name_tok.offset);
  std::string kernel_name;
  const size_t paren = full_name.find('(');
  if (paren != std::string::npos && full_name.back() == ')' &&
      (ends_with(full_name, "(phi_kernel)") || ends_with(full_name, "(legacy_kernel)"))) {
    // Kernel dialect: "add(phi_kernel)" is pd_kernel.phi_kernel running kernel "add".
    spec.dialect = "pd_kernel";
    spec.name = full_name.substr(paren + 1, full_name.size() - paren - 2);
    kernel_name = full_name.substr(0, paren);
  } else {
    const size_t dot = full_name.find('.');
    if (dot == std::string::npos || dot == 0 || dot + 1 == full_name.size()) {
      fail(name_tok.offset, fmt::format("op name '{}' is not '<dialect>.<op>' (e.g. \"pd_op.add\")", full_name));
    }
    spec.dialect = full_name.substr(0, dot);
    spec.name = full_name.substr(dot + 1);
  }
  const std::string op_name = spec.dialect + "." + spec.name;

  if (peek().is('[')) {  // [id:N], printed with FLAGS_print_ir
    next();
    const Token id = next();
    if (!id.is_ident("id")) fail(id.offset, fmt::format("expected 'id' in an op id '[id:N]', got {}", describe(id)));
    expect(':', "in an op id '[id:N]'");
    const Token n = next();
    if (n.kind != TokenKind::kNumber) fail(n.offset, fmt::format("expected a number in '[id:N]', got {}", describe(n)));
    expect(']', "to close '[id:N]'");
  }

  expect('(', fmt::format("to start the operands of '{}'", op_name));
  std::vector<SourceLoc> operand_locs;
  if (peek().is(')')) {
    next();
  } else {
    while (true) {
      if (peek().kind == TokenKind::kIdent) {  // while: (cond=%c, inputs=%a, %b)
        next();
        expect('=', "after an operand keyword");
        if (peek().is(')')) {  // a while with no inputs prints "inputs=)"
          next();
          break;
        }
      }
      operand_locs.push_back(at(peek().offset));
      spec.operands.push_back(parse_operand(block));
      const Token sep = next();
      if (sep.is(')')) break;
      if (!sep.is(',')) fail(sep.offset, fmt::format("expected ',' or ')' in the operands of '{}', got {}", op_name, describe(sep)));
    }
  }

  if (peek().is('{')) {
    // An attribute map, unless this '{' opens a region (while: `{` then `^args` or the first op).
    const size_t saved = lexer_.pos();
    next();
    const Token after = peek();
    lexer_.set_pos(saved);
    if (!after.is('^') && !after.is('(')) spec.attributes = parse_attr_map();
  }

  std::vector<Type> operand_types;
  bool has_operand_types = false;
  bool has_result_types = false;
  const Token colon = peek();
  if (colon.is(':')) {
    next();
    expect('(', "to start the operand types");
    has_operand_types = true;
    if (peek().is(')')) {
      next();
    } else {
      while (true) {
        operand_types.push_back(parse_type(0));
        const Token sep = next();
        if (sep.is(')')) break;
        if (!sep.is(',')) fail(sep.offset, fmt::format("expected ',' or ')' in the operand types, got {}", describe(sep)));
      }
    }
    const Token arrow = next();
    if (arrow.kind != TokenKind::kArrow) {
      fail(arrow.offset, fmt::format("expected '->' after the operand types, got {}", describe(arrow)));
    }
    has_result_types = true;
  } else if (colon.kind == TokenKind::kArrow) {
    next();
    has_result_types = true;
  }
  std::vector<Type> result_types;
  if (has_result_types) {
    while (true) {
      const Token t = peek();
      const bool starts_type = (t.kind == TokenKind::kIdent && !t.is_ident("else") && !t.is_ident("do")) ||
                               t.kind == TokenKind::kNullType;
      if (!starts_type) break;
      result_types.push_back(parse_type(0));
      if (!peek().is(',')) break;
      next();
    }
  }

  if (has_operand_types && operand_types.size() != spec.operands.size()) {
    diags_.error(spec.loc, fmt::format("op '{}' has {} operand{} but {} operand type{}", op_name,
                                       spec.operands.size(), spec.operands.size() == 1 ? "" : "s",
                                       operand_types.size(), operand_types.size() == 1 ? "" : "s"));
  } else if (has_operand_types) {
    // Values whose type the text never printed (block arguments) learn it here.
    for (size_t i = 0; i < spec.operands.size(); ++i) {
      if (spec.operands[i].valid() && program_->value(spec.operands[i]).type.is_none()) {
        program_->value(spec.operands[i]).type = operand_types[i];
      }
    }
  }
  if (has_result_types && result_types.size() != result_names.size()) {
    diags_.error(spec.loc, fmt::format("op '{}' has {} result{} but {} result type{}", op_name, result_names.size(),
                                       result_names.size() == 1 ? "" : "s", result_types.size(),
                                       result_types.size() == 1 ? "" : "s"));
    result_types.clear();
  }
  if (!has_result_types && spec.operands.size() == result_names.size() + 1) {
    // The while form prints no types: its results have the types of its inputs (operands after cond).
    for (size_t i = 1; i < spec.operands.size(); ++i) {
      result_types.push_back(spec.operands[i].valid() ? program_->value(spec.operands[i]).type : Type::none());
    }
  }
  result_types.resize(result_names.size());
  spec.result_types = std::move(result_types);
  if (!kernel_name.empty() && !std::any_of(spec.attributes.begin(), spec.attributes.end(),
                                           [](const NamedAttribute& a) { return a.name == "kernel_name"; })) {
    spec.attributes.push_back({"kernel_name", Attribute::string(kernel_name).at(at(name_tok.offset)), at(name_tok.offset)});
  }

  const std::vector<ValueId> inputs = spec.operands;
  const OpId op = program_->append_op(block, std::move(spec));
  program_->op(op).operand_locs = std::move(operand_locs);

  // Regions: `{...}` blocks, separated by nothing (generic ops), `else` (if) or `do` (old while).
  while (true) {
    const Token t = peek();
    if (t.is_ident("else") || t.is_ident("do")) {
      if (program_->op(op).regions.empty()) fail(t.offset, fmt::format("'{}' without a preceding region", t.text));
      next();
      const Token open_block = expect('{', fmt::format("after '{}'", t.text));
      const BlockId b = program_->add_region(op);
      program_->block(b).loc = at(open_block.offset);
      parse_block(b, depth + 1);
    } else if (t.is('{')) {
      next();
      const BlockId b = program_->add_region(op);
      program_->block(b).loc = at(t.offset);
      parse_block(b, depth + 1);
    } else {
      break;
    }
  }

  // Body arguments of a while mirror its inputs.
  const Op& o = program_->op(op);
  if (o.regions.size() == 1 && o.regions[0].blocks.size() == 1 && o.is("pd_op", "while")) {
    const Block& body = program_->block(o.regions[0].blocks[0]);
    for (size_t i = 0; i < body.args.size() && i + 1 < inputs.size(); ++i) {
      Value& arg = program_->value(body.args[i]);
      if (arg.type.is_none() && inputs[i + 1].valid()) arg.type = program_->value(inputs[i + 1]).type;
    }
  }
  for (size_t i = 0; i < result_names.size(); ++i) bind_name(result_names[i], program_->op(op).results[i]);
}

}  // namespace pir_text

std::vector<Program> read_pir_text_programs(const SourceManager& sources, uint32_t file, DiagnosticEngine& diags) {
  return pir_text::Parser(sources, file, diags).programs();
}

std::optional<Program> read_pir_text(const SourceManager& sources, uint32_t file, DiagnosticEngine& diags) {
  std::vector<Program> programs = read_pir_text_programs(sources, file, diags);
  if (programs.empty()) return std::nullopt;
  if (programs.size() > 1) {
    Diagnostic d{Severity::kWarning, programs[1].block(programs[1].top_block()).loc,
                 fmt::format("the file holds {} programs; only the first is used", programs.size()), {}};
    d.note("the first program starts here", programs[0].block(programs[0].top_block()).loc);
    diags.report(std::move(d));
  }
  return std::move(programs[0]);
}

std::optional<Type> read_pir_type(const SourceManager& sources, uint32_t file, DiagnosticEngine& diags) {
  return pir_text::Parser(sources, file, diags).type_only();
}

std::optional<Attribute> read_pir_attribute(const SourceManager& sources, uint32_t file, DiagnosticEngine& diags) {
  return pir_text::Parser(sources, file, diags).attribute_only();
}

}  // namespace kforge::ir
