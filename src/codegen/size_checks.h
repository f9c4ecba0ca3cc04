// The sizes a dynamic program computes from its caller's dims at run time (the workspace's bytes and every
// value's dims), spelled with kforge::CheckedInt (templates/runtime/kforge_runtime.h) so that the generated
// class finds an int64 overflow instead of wrapping into a small workspace its kernels would overrun. The
// dims of inputs are checked on their own (checked_bytes); these are the sizes derived from several of them
// (a broadcast [s0, 1] x [1, s1], a concat, a padded window), which can overflow when each input fits.
//
// Both class templates print the conditions as one test before they lay out the workspace
// (templates/program/class.j2, `size_checks`): `symbols` name the dims in the message.
#pragma once

#include <string>
#include <vector>

#include "passes/lowered_program.h"
#include "template/value.h"

namespace kforge::codegen {

struct SizeChecks {
  std::vector<std::string> conditions;  // C++ expressions of type kforge::CheckedInt, each to test with .ok()
  std::vector<std::string> symbols;     // "s0", "s1": the dynamic dims, as the generated code names them
};

/// Empty when the program has no dynamic dims or every size is a single dim or a constant.
SizeChecks size_checks(const passes::LoweredProgram& p);

/// The context value the templates' `size_checks` macro takes: {conditions: [text], symbols: [text]}.
tmpl::Value size_checks_value(const SizeChecks& checks);

}  // namespace kforge::codegen
