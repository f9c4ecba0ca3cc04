// Internal: callable values (macros, loop.cycle/loop.changed) and namespace objects.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "support/source_manager.h"
#include "template/small_vector.h"
#include "template/value.h"

namespace kforge::tmpl {

class Renderer;

/// Arguments of a call as evaluated at the call site, before binding to a signature.
struct EvaluatedArgs {
  SmallVec<Value, 4> positional;
  SmallVec<std::pair<std::string_view, Value>, 2> keywords;
  SmallVec<SourceLoc, 2> keyword_locs;
};

class Callable {
 public:
  virtual ~Callable() = default;
  /// "macro 'f'" / "loop.cycle", for diagnostics.
  virtual std::string describe() const = 0;
  virtual Value call(Renderer& renderer, EvaluatedArgs& args, SourceLoc loc) const = 0;
  /// Calls and prints the result into `out` ({{ f(...) }}); macros render straight into it.
  virtual void call_into(Renderer& renderer, EvaluatedArgs& args, SourceLoc loc, std::string& out) const;
};

/// What namespace() returns, and the value an `import ... as m` binds (then `module` is set and the
/// object is read-only).
class NamespaceObject {
 public:
  mutable Map attrs;
  std::string module;                      // template name for imported modules; empty for namespace()
  std::shared_ptr<const void> keep_alive;  // a module's frames, kept while the module value lives
};

/// The namespaces namespace() made while a render runs. Namespaces are the one mutable value, so every reference
/// cycle among values passes through one (`{% set ns.me = ns %}`, or an undefined attribute assigned to its own
/// namespace: the undefined value keeps its container for the message): Renderer::render holds one of these and,
/// when it ends, empties every namespace noted, which frees such cycles. A render's values never outlive it (its
/// result is text), so nothing that is still used loses its attributes.
class RenderNamespaces {
 public:
  RenderNamespaces();   // the current render's, until destroyed
  ~RenderNamespaces();  // empties the namespaces noted
  RenderNamespaces(const RenderNamespaces&) = delete;
  RenderNamespaces& operator=(const RenderNamespaces&) = delete;
  /// Notes a namespace made now (no-op outside a render).
  static void note(const std::shared_ptr<NamespaceObject>& ns);

 private:
  std::vector<std::weak_ptr<NamespaceObject>> made_;
  RenderNamespaces* previous_;
};

}  // namespace kforge::tmpl
