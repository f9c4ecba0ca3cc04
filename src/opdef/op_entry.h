// Internal to the op loader: reading the keys of one op entry into an Op.
#pragma once

#include "opdef/op_library.h"
#include "opdef/yaml_reader.h"

namespace kforge::opdef {

/// Reads every Paddle key of a full op definition (the name is already set) and checks the names they
/// mention against the op's arguments and outputs. Returns false if anything was reported as an error.
bool read_op_definition(const YamlContext& ctx, const KeyTable& keys, Op& op);

/// Reads the kforge extension keys present in `keys` (compute, reduce, pattern) into `op`, whether the
/// entry is the definition or a later overlay; setting one that is already set is an error.
bool read_op_extensions(const YamlContext& ctx, const KeyTable& keys, Op& op);

}  // namespace kforge::opdef
