// The program model: what every reader (PIR JSON, PIR text, program YAML) produces and what passes and
// codegen consume.
//
// A Program owns arenas of ops, values and blocks addressed by small typed ids (OpId, ValueId, BlockId), so
// ids stay valid while passes add and erase ops, and a Program can be copied. The top-level block is the
// body of PIR's module op. An op may own regions (pd_op.if has two, pd_op.while one); each region holds
// blocks; each block holds block arguments and an ordered list of ops.
//
// Op names: `dialect` and `name` are kept apart and spelled as Paddle spells them after decompressing
// JSON dialect ids: dialect "pd_op", name "conv2d" (never "1.conv2d" or "pd_op.conv2d" in `name`);
// "builtin" / "parameter", "cf" / "yield". Program YAML op names (`matmul`) get dialect "pd_op". Kernel
// dialect ops printed as "add(phi_kernel)" are dialect "pd_kernel", name "phi_kernel", with the kernel in
// their `kernel_name` attribute, as in Paddle.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "program/attribute.h"
#include "program/type.h"
#include "support/source_manager.h"

namespace kforge::ir {

namespace detail {
template <typename Tag>
struct Id {
  static constexpr uint32_t kInvalid = UINT32_MAX;
  uint32_t index = kInvalid;
  bool valid() const { return index != kInvalid; }
  explicit operator bool() const { return valid(); }
  friend bool operator==(Id, Id) = default;
  friend auto operator<=>(Id, Id) = default;
};
}  // namespace detail

using OpId = detail::Id<struct OpTag>;
using ValueId = detail::Id<struct ValueTag>;  // an invalid ValueId as an operand is a null operand
using BlockId = detail::Id<struct BlockTag>;

enum class ValueKind : uint8_t { kOpResult, kBlockArgument };

struct Value {
  ValueId id;
  Type type;
  ValueKind kind = ValueKind::kOpResult;
  OpId op;         // kOpResult: the defining op
  BlockId block;   // kBlockArgument: the owning block
  uint32_t index = 0;  // result index, or argument index (keyword arguments count after positional ones)
  std::string keyword;  // keyword block arguments (PIR kwargs): the key
  /// A user-visible name where one is known: the parameter name of builtin.parameter, the feed name of
  /// pd_op.data / pd_op.feed, the fetch name of pd_op.fetch, and every value of a program YAML.
  std::string name;
  /// How the source refers to it: "%3" or "%arg_0" (text), "3" or "-1" (JSON), the YAML name. For messages.
  std::string source_id;
  /// Block arguments only: their attributes (PIR prints them as `%arg_0 {stop_gradient:true}`).
  std::vector<NamedAttribute> attributes;
  SourceLoc loc;
};

struct Region {
  std::vector<BlockId> blocks;
};

struct Block {
  BlockId id;
  OpId parent;                 // the op owning this block's region; invalid for the top-level block
  uint32_t region_index = 0;   // which region of `parent`
  std::vector<ValueId> args;   // positional arguments, then keyword arguments (Value::keyword set)
  std::vector<OpId> ops;       // in order; erased ops are removed from here
  SourceLoc loc;
};

struct Op {
  OpId id;
  std::string dialect;  // "pd_op", "builtin", "cf", "pd_kernel", ...
  std::string name;     // "conv2d", "parameter", "yield", ...
  std::vector<ValueId> operands;       // invalid ValueId = null operand (an absent optional input)
  std::vector<SourceLoc> operand_locs;  // parallel to operands where the source gives them, else empty
  std::vector<ValueId> results;
  std::vector<NamedAttribute> attributes;  // in source order
  std::vector<Region> regions;
  BlockId parent;      // the block holding this op
  SourceLoc loc;       // the op as a whole: '{' in JSON, the result list in text, the list item in YAML
  SourceLoc name_loc;  // the op name
  bool erased = false;

  /// "pd_op.conv2d".
  std::string full_name() const { return dialect + "." + name; }
  bool is(std::string_view dialect_name, std::string_view op_name) const {
    return dialect == dialect_name && name == op_name;
  }
  const Attribute* attr(std::string_view attr_name) const;
  const NamedAttribute* named_attr(std::string_view attr_name) const;
  /// Replaces the attribute of that name, or appends it.
  void set_attr(std::string attr_name, Attribute value, SourceLoc name_loc = {});
  bool erase_attr(std::string_view attr_name);
  /// The string value of a string attribute, or "" when absent or not a string.
  std::string string_attr(std::string_view attr_name) const;
};

/// One use of a value: operand `operand_index` of `op`.
struct Use {
  OpId op;
  uint32_t operand_index = 0;
  friend bool operator==(const Use&, const Use&) = default;
};

/// What a new op is made of (Program::append_op / insert_op).
struct OpSpec {
  std::string dialect;
  std::string name;
  std::vector<ValueId> operands;
  std::vector<Type> result_types;
  std::vector<NamedAttribute> attributes;
  SourceLoc loc;
  SourceLoc name_loc;
};

enum class SourceFormat : uint8_t { kBuilt, kPirJson, kPirText, kProgramYaml };
std::string_view source_format_name(SourceFormat format);  // "built", "pir-json", "pir-text", "program-yaml"

class Program {
 public:
  Program();

  // ---- what the program came from
  std::string name;                         // YAML `program:`; for Paddle files the readers use the file stem
  SourceFormat format = SourceFormat::kBuilt;
  uint32_t file = SourceLoc::kNoFile;       // the SourceManager file it was read from
  int64_t pir_version = 0;                  // PIR JSON `base_code.version` (0 for other formats)
  bool trainable = false;                   // PIR JSON `base_code.trainable`

  // ---- access
  BlockId top_block() const { return top_; }
  Op& op(OpId id) { return ops_.at(id.index); }
  const Op& op(OpId id) const { return ops_.at(id.index); }
  Value& value(ValueId id) { return values_.at(id.index); }
  const Value& value(ValueId id) const { return values_.at(id.index); }
  Block& block(BlockId id) { return blocks_.at(id.index); }
  const Block& block(BlockId id) const { return blocks_.at(id.index); }
  const Type& type_of(ValueId id) const { return value(id).type; }
  size_t op_capacity() const { return ops_.size(); }       // ids are < this (erased ops included)
  size_t value_capacity() const { return values_.size(); }  // ids are < this

  // ---- building and editing
  /// Appends a new op at the end of `block`; its results get `spec.result_types`.
  OpId append_op(BlockId block, OpSpec spec);
  /// Inserts a new op before the op now at `position` in `block` (position == size appends).
  OpId insert_op(BlockId block, size_t position, OpSpec spec);
  /// Inserts a new op right before `anchor`, in the anchor's block.
  OpId insert_op_before(OpId anchor, OpSpec spec);
  /// Adds a region with one empty block to `op`; returns that block.
  BlockId add_region(OpId op);
  /// Adds an empty block at the end of region `region` of `op`.
  BlockId add_block(OpId op, uint32_t region);
  ValueId add_block_argument(BlockId block, Type type, SourceLoc loc = {});
  ValueId add_block_kwarg(BlockId block, std::string keyword, Type type, SourceLoc loc = {});
  /// Removes the op (and everything in its regions) from its block. Its results must have no uses left
  /// outside the erased ops (check with uses()); the ids stay allocated but op(id).erased is set.
  void erase_op(OpId id);
  /// Points every use of `from` at `to`.
  void replace_all_uses(ValueId from, ValueId to);
  void set_operand(OpId op, uint32_t index, ValueId value);

  // ---- queries
  /// Every live op, in program order: each op is followed by the ops of its regions (pre-order).
  std::vector<OpId> ops_in_order() const;
  /// Calls fn on every live op in program order.
  void walk(const std::function<void(const Op&)>& fn) const;
  /// The top-level block's ops.
  const std::vector<OpId>& top_level_ops() const { return block(top_).ops; }
  /// Every use of `value` in program order.
  std::vector<Use> uses(ValueId value) const;
  /// Uses of every value at once, indexed by ValueId::index (for passes that ask about many values).
  std::vector<std::vector<Use>> use_lists() const;
  /// The op defining `value`, or an invalid id for a block argument.
  OpId defining_op(ValueId value) const;
  /// builtin.parameter ops, in program order.
  std::vector<OpId> parameters() const;
  /// pd_op.data and pd_op.feed ops, in program order.
  std::vector<OpId> feeds() const;
  /// pd_op.fetch and builtin.shadow_output ops, in program order.
  std::vector<OpId> fetches() const;
  /// Live ops whose full name is `full_name` ("pd_op.conv2d"), in program order.
  std::vector<OpId> find_ops(std::string_view full_name) const;

  /// Structural self-check: every operand names a live value defined before its use (in the same block or
  /// an enclosing one), ids are consistent. Returns "" when sound, else a description of the first problem.
  /// For tests and for passes checking their own work; readers report located diagnostics instead.
  std::string check_structure() const;

  /// Deterministic text of the whole program: PIR text in the 2024 typed form (see dump.cpp), which the
  /// PIR text reader reads back. Values are renumbered %0, %1, ... in program order.
  std::string dump() const;

 private:
  ValueId new_value(Type type, ValueKind kind, SourceLoc loc);
  OpId new_op(BlockId block, OpSpec spec);

  std::vector<Op> ops_;
  std::vector<Value> values_;
  std::vector<Block> blocks_;
  BlockId top_;
};

/// Fills Value::name from the ops that name values: builtin.parameter (parameter_name), pd_op.data and
/// pd_op.feed (name), pd_op.fetch (name), for values that have no name yet. Every reader calls it.
void assign_value_names(Program& program);

}  // namespace kforge::ir
