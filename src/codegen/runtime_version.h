// The version of the runtime header a generator copies beside its output: every generated file static_asserts
// on it, so it is read from the header itself (the one the template search path resolves), never hard-coded.
#ifndef KFORGE_CODEGEN_RUNTIME_VERSION_H_
#define KFORGE_CODEGEN_RUNTIME_VERSION_H_

#include <cstdint>
#include <optional>

#include "template/environment.h"

namespace kforge::codegen {

/// `N` of `#define KFORGE_RUNTIME_VERSION N` in runtime/kforge_runtime.h, or nullopt after a diagnostic (the
/// header is missing or does not define it).
std::optional<int64_t> runtime_header_version(tmpl::Environment& env);

}  // namespace kforge::codegen

#endif  // KFORGE_CODEGEN_RUNTIME_VERSION_H_
