// Internal to the PIR JSON reader: the reader class shared by pir_json_reader.cpp (program structure) and
// pir_json_values.cpp (types and attributes).
#pragma once

#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "program/json_document.h"
#include "program/program.h"
#include "support/diagnostics.h"

namespace kforge::ir::pir_json {

/// Regions, vectors and arrays nested deeper than this are rejected rather than risking the stack.
constexpr int kMaxNesting = 64;

class Reader {
 public:
  Reader(const SourceManager& sources, uint32_t file, DiagnosticEngine& diags)
      : sources_(sources), file_(file), diags_(diags) {}

  std::optional<Program> read();

  // ---- types and attributes (pir_json_values.cpp)
  /// A "TT" type object. Reports and returns nullopt when it is malformed.
  std::optional<Type> read_type(const Json& j, int depth = 0);
  /// An "AT" attribute object.
  std::optional<Attribute> read_attribute(const Json& j, int depth = 0);

 private:
  // ---- structure (pir_json_reader.cpp)
  bool read_base_code(const Json& root);
  void read_block(const Json& j, BlockId block, int depth);
  void read_block_args(const Json& block_json, BlockId block);
  void read_op(const Json& j, BlockId block, int depth);
  void read_parameter_op(const Json& j, BlockId block);
  void read_attribute_list(const Json& list, std::string_view key, std::vector<NamedAttribute>& out);
  void read_bool_flags(const Json& list, std::string_view key, std::initializer_list<const char*> names,
                       std::vector<NamedAttribute>& out);
  std::optional<ValueId> operand(const Json& j, size_t index, const std::string& op_name);
  void define_value(int64_t id, ValueId value, const Json& where);

  // ---- helpers shared by both files
 public:
  SourceLoc loc(const Json& j) const { return doc_.loc(j); }
  SourceLoc key_loc(const Json& j) const { return doc_.key_loc(j); }
  void error(const Json& at, std::string message) { diags_.error(loc(at), std::move(message)); }
  /// The member `key` of object `obj`, or null; when `required`, a missing key is reported at `obj` as
  /// "missing key 'KEY' (ROLE) in WHAT".
  const Json* member(const Json& obj, std::string_view key, std::string_view role, std::string_view what,
                     bool required);
  /// Warns about keys of `obj` not in `known`: "unknown key 'K' in WHAT; ignored".
  void warn_unknown_keys(const Json& obj, std::initializer_list<std::string_view> known, std::string_view what);
  /// "expected an array for 'I' (operands), got an object" unless `j` has the wanted kind.
  bool expect_object(const Json& j, std::string_view what);
  bool expect_array(const Json& j, std::string_view what);
  bool expect_string(const Json& j, std::string_view what);
  /// A JSON integer that fits in int64.
  std::optional<int64_t> get_int(const Json& j, std::string_view what);
  /// A JSON number (integer or float).
  std::optional<double> get_number(const Json& j, std::string_view what);

 private:
  const SourceManager& sources_;
  uint32_t file_;
  DiagnosticEngine& diags_;
  JsonDocument doc_;
  Program program_;
  // JSON value ids. Ids are unique in the whole file, but a value is visible only in the block that defines
  // it and the blocks nested in it, after its definition.
  std::map<int64_t, std::pair<ValueId, const Json*>> visible_;  // id -> value, where it is defined
  std::map<int64_t, const Json*> defined_;                      // every id defined so far -> where
  std::vector<std::vector<int64_t>> scopes_;                    // ids defined by each block being read
};

}  // namespace kforge::ir::pir_json
