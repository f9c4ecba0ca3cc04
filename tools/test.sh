#!/usr/bin/env bash
# Runs the whole test suite: installs what is missing, builds with warnings as errors, runs every meson test
# (unit, golden, conformance, e2e; e2e-install-downstream builds a release, installs it and builds the
# downstream examples against it) and prints as its last line "N passed, N failed" from meson's test log.
# Exits non-zero if anything failed or if no test ran. Extra arguments go to `meson test`.
set -euo pipefail
# shellcheck source=tools/lib.sh
source "$(dirname "$0")/lib.sh"

ensure_dependencies "${KFORGE_PACKAGES[@]}" "${KFORGE_TEST_PACKAGES[@]}"
# Warnings are errors here (and in CI), not in a plain `meson setup`: packagers build with their own flags.
if ! build_kforge -Dwerror=true -Dtests=true; then
  echo "build failed: no tests were run" >&2
  echo "0 passed, 0 failed"
  exit 1
fi

log "running the test suite"
testlog="$(build_path)/meson-logs/testlog.json"
rm -f "$testlog"
set +e
meson test -C "$(build_path)" --print-errorlogs "$@"
meson_status=$?
set -e

python_bin=/usr/bin/python3
[ -x "$python_bin" ] || python_bin=python3
counts="$("$python_bin" - "$testlog" <<'PY'
import json, sys
passed = failed = skipped = 0
try:
    with open(sys.argv[1], encoding="utf-8") as log:
        for line in log:
            if not line.strip():
                continue
            result = json.loads(line).get("result", "")
            if result in ("OK", "EXPECTEDFAIL"):
                passed += 1
            elif result == "SKIP":
                skipped += 1
            else:
                failed += 1
except FileNotFoundError:
    pass
print(passed, failed, skipped)
PY
)"
read -r passed failed skipped <<<"$counts"
if [ "$skipped" -gt 0 ]; then
  echo "($skipped skipped)"
fi
echo "$passed passed, $failed failed"
if [ "$failed" -gt 0 ] || [ "$passed" -eq 0 ] || [ "$meson_status" -ne 0 ]; then
  exit 1
fi
