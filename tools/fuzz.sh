#!/usr/bin/env bash
# Fuzzes one front end of kforge (or all of them) with libFuzzer under ASan and UBSan (docs/fuzzing.md).
#
#   tools/fuzz.sh TARGET SECONDS     # TARGET: op_yaml op_compat pir_json pir_text program_yaml template
#                                    #         render_data scalar_expr pdiparams, or `all` (each for SECONDS)
#
# Builds the targets in $KFORGE_FUZZ_BUILD_DIR (default: build-sanitize; clang, -Db_sanitize=address,undefined,
# -Dfuzz=true), then runs each from the checked-in seeds of tests/fuzz/corpus/TARGET, keeping what it finds in
# $KFORGE_FUZZ_CORPUS_DIR/TARGET (default: BUILD/fuzz-corpus, so a later run continues from there; never the
# checked-in seeds). Prints one line per target: executions, corpus size, findings. A crash, hang (10 s), leak,
# sanitizer report or unlocated error diagnostic stops the target; its input is saved under BUILD/fuzz-findings/
# SECONDS = 0 replays the seeds and the work corpus once, without mutating (libFuzzer -runs=0).
set -euo pipefail
# shellcheck source=tools/lib.sh
source "$(dirname "$0")/lib.sh"

targets_all=(op_yaml op_compat pir_json pir_text program_yaml template render_data scalar_expr pdiparams)
if [ "$#" -ne 2 ] || ! [[ "$2" =~ ^[0-9]+$ ]]; then
  echo "usage: tools/fuzz.sh TARGET|all SECONDS   (targets: ${targets_all[*]})" >&2
  exit 2
fi
if [ "$1" = all ]; then
  targets=("${targets_all[@]}")
else
  case " ${targets_all[*]} " in
    *" $1 "*) targets=("$1") ;;
    *) echo "tools/fuzz.sh: unknown target '$1' (targets: ${targets_all[*]})" >&2; exit 2 ;;
  esac
fi
seconds="$2"

export KFORGE_BUILD_DIR="${KFORGE_FUZZ_BUILD_DIR:-build-sanitize}"
ensure_dependencies "${KFORGE_PACKAGES[@]}" "${KFORGE_TEST_PACKAGES[@]}"
configure_sanitizer_build
fuzzers=()
for t in "${targets[@]}"; do fuzzers+=("tests/fuzz/fuzz_$t"); done
build_kforge "${SANITIZER_BUILD_OPTIONS[@]}" -- "${fuzzers[@]}"

build="$(build_path)"
corpus_root="${KFORGE_FUZZ_CORPUS_DIR:-$build/fuzz-corpus}"
refdata="${KFORGE_PADDLE_REFDATA:-$KFORGE_ROOT/../shared/refdata/paddle}"
status=0
for t in "${targets[@]}"; do
  extra=()
  case "$t" in
    op_yaml) extra=(--extra-seeds "$refdata/yaml") ;;
    pir_json) extra=(--extra-seeds "$refdata/pir_json") ;;
    pir_text) extra=(--extra-seeds "$refdata/pir_text") ;;
  esac
  nice -n 10 /usr/bin/python3 "$KFORGE_ROOT/tests/fuzz/run_fuzz.py" --fuzzer "$build/tests/fuzz/fuzz_$t" \
    --seeds "$KFORGE_ROOT/tests/fuzz/corpus/$t" --seconds "$seconds" --corpus "$corpus_root/$t" \
    --artifacts "$build/fuzz-findings/$t" "${extra[@]}" || status=1
done
exit "$status"
