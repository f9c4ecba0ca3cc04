#!/usr/bin/env bash
# Quick start: installs what is missing, builds kforge, and runs it on the bundled example
# (examples/render/): generate a C++ header from a template and YAML data, compile a program that
# uses it, run the program; then compile a Paddle program (examples/programs/) into C++ with kforge
# compile, build it with the reference kernels, run it and print its outputs.
set -euo pipefail
# shellcheck source=tools/lib.sh
source "$(dirname "$0")/lib.sh"

ensure_dependencies
# Only what the demo runs: the generator and the kernel library (not the test suite).
build_kforge -- src/kforge kernels/libkforge_kernels.a

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

# Step 4, the main job: compile a Paddle program (examples/programs/classifier.json, PIR JSON) into a class
# whose run() calls the reference kernels directly and fused loops for the groups that fusion.yaml makes
# fusible, build it with an application, run it.
PROGRAM="examples/programs/classifier.json"
demo_compile_program() {
  log "kforge compile: $PROGRAM -> $DEMO_OUT/classifier.{h,cc} + kforge_runtime.h"
  "$KFORGE" compile "$PROGRAM" --ops kernels/ops.yaml --ops kernels/fusion.yaml \
    --op-compat kernels/op_compat.yaml --dump-groups "$DEMO_OUT/classifier_groups.dot" \
    -o "$DEMO_OUT" --name classifier --target cpu
  echo "----- $DEMO_OUT/classifier.cc (run())"
  sed -n '/^kforge::Status classifier::run(const/,/^}/p' "$DEMO_OUT/classifier.cc"
  echo "-----"
  log "building examples/programs/run_classifier.cc + the generated code + the reference kernels (g++ -O2)"
  local kernels_link=()  # what the library needs after it: oneDNN's libraries when it was built with them
  read -ra kernels_link < "$KFORGE_BUILD_DIR/kernels/kforge_kernels.link"
  g++ -std=c++17 -O2 -Wall -Wextra -Werror -I "$DEMO_OUT" examples/programs/run_classifier.cc \
    "$DEMO_OUT/classifier.cc" "$KFORGE_BUILD_DIR/kernels/libkforge_kernels.a" "${kernels_link[@]}" \
    -o "$DEMO_OUT/run_classifier"
  log "running it"
  "$DEMO_OUT/run_classifier"
}

demo_generate
demo_compile
demo_run
demo_compile_program
log "demo done: try editing examples/render/activations.yaml, or check a program of your own with"
log "  tools/check-program PROGRAM [--shape NAME=D0,D1,...]"
