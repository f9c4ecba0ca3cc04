// Internal: callable values (macros, loop.cycle/loop.changed) and namespace objects.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "support/source_manager.h"
#include "template/value.h"

namespace kforge::tmpl {

class Renderer;

/// Arguments of a call as evaluated at the call site, before binding to a signature.
struct EvaluatedArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string_view, Value>> keywords;
  std::vector<SourceLoc> keyword_locs;
};

class Callable {
 public:
  virtual ~Callable() = default;
  /// "macro 'f'" / "loop.cycle", for diagnostics.
  virtual std::string describe() const = 0;
  virtual Value call(Renderer& renderer, EvaluatedArgs& args, SourceLoc loc) const = 0;
};

/// What namespace() returns, and the value an `import ... as m` binds (then `module` is set and the
/// object is read-only).
class NamespaceObject {
 public:
  mutable Map attrs;
  std::string module;                      // template name for imported modules; empty for namespace()
  std::shared_ptr<const void> keep_alive;  // a module's frames, kept while the module value lives
};

}  // namespace kforge::tmpl
