// Internal to the PIR text reader: the parser shared by pir_text_reader.cpp (programs, blocks, ops) and
// pir_text_values.cpp (types and attribute values).
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "program/pir_text_lexer.h"
#include "program/program.h"
#include "support/diagnostics.h"

namespace kforge::ir::pir_text {

/// Regions, vectors and arrays nested deeper than this are rejected rather than risking the stack.
constexpr int kMaxNesting = 64;

class Parser {
 public:
  Parser(const SourceManager& sources, uint32_t file, DiagnosticEngine& diags);

  std::vector<Program> programs();
  std::optional<Type> type_only();
  std::optional<Attribute> attribute_only();

  // ---- types and attribute values (pir_text_values.cpp)
  Type parse_type(int depth);
  Attribute parse_attribute(int depth);
  /// `{name:value,...}`, the lexer at '{'.
  std::vector<NamedAttribute> parse_attr_map();

 private:
  /// Thrown after a syntax error has been reported; the parse stops there.
  struct Fatal {};

  // ---- programs, blocks and ops (pir_text_reader.cpp)
  Program parse_program(size_t index);
  void parse_block(BlockId block, int depth);  // the lexer just past '{'
  void parse_block_args(BlockId block);
  ValueId define_block_arg(BlockId block, const Token& name, bool keyword);
  void parse_op(BlockId block, int depth);
  ValueId parse_operand(BlockId block);
  void bind_name(const Token& name, ValueId value);

  // ---- pieces shared by both files
  Type parse_tensor_body(const std::string& name, uint32_t name_offset);
  Attribute parse_typed_attribute(uint32_t offset, int depth);
  Attribute parse_number_attribute(const Token& t, bool guessed, AttrKind kind);
  std::string raw_balanced(char open, char close);

 public:
  // ---- token helpers
  SourceLoc at(size_t offset) const { return {file_, static_cast<uint32_t>(offset)}; }
  [[noreturn]] void fail(size_t offset, std::string message);
  [[noreturn]] void fail_note(size_t offset, std::string message, size_t note_offset, std::string note);
  Token next();
  /// The next token without consuming it; a lexical error there is reported (and stops the parse).
  Token peek();
  /// Consumes punct `c` or fails with "expected 'c' CONTEXT".
  Token expect(char c, std::string_view context);
  /// "end of file", "'}'", "identifier 'foo'": how a token is named in messages.
  static std::string describe(const Token& t);

 private:
  const SourceManager& sources_;
  uint32_t file_;
  DiagnosticEngine& diags_;
  Lexer lexer_;
  size_t errors_before_ = 0;

  // Per program.
  Program* program_ = nullptr;
  struct Binding {
    ValueId value;
    SourceLoc loc;
  };
  // Value names: unique in the whole program, visible only in the defining block (and the blocks nested in
  // it) after the definition.
  std::unordered_map<std::string, Binding> visible_;
  std::unordered_map<std::string, SourceLoc> defined_;  // every name defined so far -> where
  std::vector<std::vector<std::string>> scopes_;         // names defined by each block being parsed
  std::vector<BlockId> block_stack_;
};

}  // namespace kforge::ir::pir_text
