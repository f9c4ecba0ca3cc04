#!/usr/bin/env bash
# Builds and runs bench/kernels/layers.cc against BUILD_DIR's kernel library (configured with oneDNN):
# reference loops vs oneDNN per layer, one thread, interleaved (see the header of layers.cc).
#   bench/kernels/run.sh [BUILD_DIR] [REPS] [--size 64|224]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
BUILD="$(cd "${1:-$ROOT/build}" && pwd)"
shift || true
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
kernels_link=()
read -ra kernels_link < "$BUILD/kernels/kforge_kernels.link"
ninja -C "$BUILD" kernels/libkforge_kernels.a >/dev/null
g++ -std=c++17 -O2 -Wall -Wextra -Werror -I "$ROOT/kernels" -I "$ROOT/templates/runtime" \
  "$ROOT/bench/kernels/layers.cc" "$BUILD/kernels/libkforge_kernels.a" "${kernels_link[@]}" -o "$WORK/layers"
echo "machine: $(lscpu | sed -n 's/^Model name: *//p'), $(nproc) cores; load: $(cut -d' ' -f1-3 /proc/loadavg)"
"$WORK/layers" "$@"
