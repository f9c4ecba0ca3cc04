#!/usr/bin/env bash
# Runs the whole test suite: installs what is missing, makes a release build with warnings as errors, runs every
# meson test (unit, golden, conformance, e2e; e2e-install-downstream installs that build into a temporary directory
# and builds the downstream examples against it), then builds again with clang under ASan + UBSan (build-sanitize, or
# $KFORGE_SANITIZER_BUILD_DIR) and runs the front ends' unit tests and the golden suite there, with a short run of every
# fuzz target on its checked-in corpus (suite "fuzz", $KFORGE_FUZZ_SECONDS each, default 5; docs/fuzzing.md).
# KFORGE_SANITIZER_TESTS=0 skips that second build (CI never does). Prints as its last line "N passed, N failed"
# from the meson test logs of both builds, after a table of the time each phase took and the ten slowest tests
# (docs/testing.md). Exits non-zero if anything failed or if no test ran.
#   tools/test.sh --quick   the fast subset for developers (docs/testing.md): no sanitizer build, and the main
#                           suite without the tests of suite "slow" (Paddle fixtures, nvcc, downstream builds)
# Other arguments go to the first `meson test`.
set -euo pipefail
# shellcheck source=tools/lib.sh
source "$(dirname "$0")/lib.sh"

quick=0
meson_args=()
for arg in "$@"; do
  if [ "$arg" = "--quick" ]; then quick=1; else meson_args+=("$arg"); fi
done
if [ "$quick" = 1 ]; then
  KFORGE_SANITIZER_TESTS=0
  meson_args=(--no-suite slow "${meson_args[@]}")
fi

# Phase timing: phase NAME starts a phase (ending the one before); the table is printed at the end.
phase_names=()
phase_seconds=()
phase_started=$SECONDS
phase() {
  if [ "${#phase_names[@]}" -gt 0 ]; then
    phase_seconds+=($((SECONDS - phase_started)))
  fi
  phase_started=$SECONDS
  [ "$#" -gt 0 ] && phase_names+=("$1")
  return 0
}

phase "dependencies"
ensure_dependencies "${KFORGE_PACKAGES[@]}" "${KFORGE_TEST_PACKAGES[@]}"
phase "main build"
# Warnings are errors here (and in CI), not in a plain `meson setup`: packagers build with their own flags.
# A release build at -O2 (assertions stay on, b_ndebug is false): e2e-install-downstream installs this one rather
# than making a release build of its own, so CI compiles kforge twice (this and the sanitizer build), not three times.
# -O2, as distributions build packages, rather than meson's release -O3: kforge, the kernel library and the
# interpreter took 510 s of CPU in the ninja log at -O3, 385 s at -O2 (the kernel library's linalg.cc alone
# 13.8 s -> 5.3 s), and nothing the suite runs is timed (docs/testing.md).
if ! build_kforge -Dbuildtype=release -Doptimization=2 -Dpkgconfig.relocatable=true -Dwerror=true -Dtests=true; then
  echo "build failed: no tests were run" >&2
  echo "0 passed, 0 failed"
  exit 1
fi

log "running the test suite"
phase "main suite"
testlog="$(build_path)/meson-logs/testlog.json"
rm -f "$testlog"
set +e
meson test -C "$(build_path)" --print-errorlogs "${meson_args[@]}"
meson_status=$?
set -e

testlogs=("$testlog")
build_failures=0  # a build that failed counts as one failed test in the final line
if [ "${KFORGE_SANITIZER_TESTS:-1}" != 0 ]; then
  main_build_dir="$KFORGE_BUILD_DIR"
  KFORGE_BUILD_DIR="${KFORGE_SANITIZER_BUILD_DIR:-build-sanitize}"
  sanitizer_testlog="$(build_path)/meson-logs/testlog.json"
  rm -f "$sanitizer_testlog"
  testlogs+=("$sanitizer_testlog")
  sanitizer_unit_testlog="$(build_path)/meson-logs/sanitizer-unit.json"
  rm -f "$sanitizer_unit_testlog"
  testlogs+=("$sanitizer_unit_testlog")
  phase "sanitizer build"
  configure_sanitizer_build
  # Only what the suites below run (tools/sanitizer_tests.py): not the kernels, examples and e2e of a full build.
  if build_kforge "${SANITIZER_BUILD_OPTIONS[@]}" -Dfuzz_seconds="${KFORGE_FUZZ_SECONDS:-5}" -- src/kforge &&
     mapfile -t sanitizer_targets < <(/usr/bin/python3 "$KFORGE_ROOT/tools/sanitizer_tests.py" "$(build_path)" targets) &&
     mapfile -t sanitizer_unit_tests < <(/usr/bin/python3 "$KFORGE_ROOT/tools/sanitizer_tests.py" "$(build_path)" tests) &&
     ninja -C "$(build_path)" ${KFORGE_JOBS:+-j "$KFORGE_JOBS"} "${sanitizer_targets[@]}"; then
    log "running the unit and golden suites under ASan + UBSan, and the fuzz smoke runs"
    phase "sanitizer suites"
    set +e
    # A UBSan report fails the test that caused it instead of scrolling past.
    UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1" \
      meson test -C "$(build_path)" --no-rebuild --print-errorlogs --logbase sanitizer-unit "${sanitizer_unit_tests[@]}"
    sanitizer_status=$?
    phase "fuzz smoke and golden (sanitizers)"
    if ! UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1" \
      meson test -C "$(build_path)" --no-rebuild --print-errorlogs --suite golden --suite fuzz; then
      sanitizer_status=1
    fi
    set -e
    [ "$sanitizer_status" -eq 0 ] || meson_status=$sanitizer_status
  else
    echo "the ASan + UBSan build failed: its tests were not run" >&2
    meson_status=1
    build_failures=1
  fi
  KFORGE_BUILD_DIR="$main_build_dir"
fi

phase  # ends the last phase
echo
echo "time per phase (s):"
total=0
for i in "${!phase_names[@]}"; do
  printf '  %-36s %6d\n' "${phase_names[$i]}" "${phase_seconds[$i]}"
  total=$((total + phase_seconds[i]))
done
printf '  %-36s %6d\n' "total" "$total"

python_bin=/usr/bin/python3
[ -x "$python_bin" ] || python_bin=python3
# The counts for the last line; the ten slowest tests of both builds to standard error, before it.
counts="$("$python_bin" - "${testlogs[@]}" <<'PY'
import json, os, sys
passed = failed = skipped = 0
durations = []
for path in sys.argv[1:]:
    build = os.path.basename(os.path.dirname(os.path.dirname(path)))
    try:
        with open(path, encoding="utf-8") as log:
            for line in log:
                if not line.strip():
                    continue
                entry = json.loads(line)
                result = entry.get("result", "")
                durations.append((entry.get("duration", 0.0), entry.get("name", "?").split(" / ")[-1], build))
                if result in ("OK", "EXPECTEDFAIL"):
                    passed += 1
                elif result == "SKIP":
                    skipped += 1
                else:
                    failed += 1
    except FileNotFoundError:
        pass
print("\nthe ten slowest tests (s, wall, two at a time):", file=sys.stderr)
for seconds, name, build in sorted(durations, reverse=True)[:10]:
    print(f"  {seconds:7.1f}  {name} ({build})", file=sys.stderr)
print(passed, failed, skipped)
PY
)"
read -r passed failed skipped <<<"$counts"
failed=$((failed + build_failures))
if [ "$skipped" -gt 0 ]; then
  echo "($skipped skipped)"
fi
echo "$passed passed, $failed failed"
if [ "$failed" -gt 0 ] || [ "$passed" -eq 0 ] || [ "$meson_status" -ne 0 ]; then
  exit 1
fi
