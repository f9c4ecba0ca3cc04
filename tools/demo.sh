#!/usr/bin/env bash
# Quick start: installs what is missing, builds kforge, and runs it on the bundled example
# (examples/render/): generate a C++ header from a template and YAML data, compile a program that
# uses it, run the program. Later commands (kforge ops, kforge compile) join as further steps.
set -euo pipefail
# shellcheck source=tools/lib.sh
source "$(dirname "$0")/lib.sh"

ensure_dependencies
build_kforge

# Paths relative to the repository root (build_kforge left us there), as a build system would pass them.
cd "$KFORGE_ROOT"
KFORGE="$(kforge_binary)"
EXAMPLE="examples/render"
DEMO_OUT="$KFORGE_BUILD_DIR/demo"

# Step 1: generate. kforge renders the template with the data; the file is written only if it changed.
demo_generate() {
  log "kforge render: $EXAMPLE/activations.h.j2 + activations.yaml -> $DEMO_OUT/activations.h"
  "$KFORGE" render "$EXAMPLE/activations.h.j2" --data "$EXAMPLE/activations.yaml" \
    -o "$DEMO_OUT/activations.h" --depfile "$DEMO_OUT/activations.h.d"
  echo "----- $DEMO_OUT/activations.h"
  cat "$DEMO_OUT/activations.h"
  echo "-----"
  log "depfile (what a build system re-runs kforge for):"
  cat "$DEMO_OUT/activations.h.d"
}

# Step 2: compile a program that includes the generated header, warnings as errors.
demo_compile() {
  log "compiling $EXAMPLE/main.cpp against the generated header"
  g++ -std=c++17 -Wall -Wextra -Werror -I "$DEMO_OUT" "$EXAMPLE/main.cpp" -o "$DEMO_OUT/activations_demo"
}

# Step 3: run it.
demo_run() {
  log "running the program"
  "$DEMO_OUT/activations_demo"
}

demo_generate
demo_compile
demo_run
log "demo done: try editing examples/render/activations.yaml and running tools/demo.sh again"
