# shellcheck shell=bash
# Shared by tools/demo.sh and tools/test.sh: install what is missing, configure and build.
# Environment knobs: KFORGE_BUILD_DIR (default: build), KFORGE_JOBS (ninja -j; default: ninja's own).

KFORGE_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
KFORGE_BUILD_DIR="${KFORGE_BUILD_DIR:-build}"
KFORGE_PACKAGES=(meson ninja-build g++ pkg-config libyaml-cpp-dev libfmt-dev libcli11-dev catch2
                 nlohmann-json3-dev python3-jinja2 libdnnl-dev)
# What the test suite needs beyond building kforge: clang++ (the generated op library compiles with it too; it also
# builds the sanitizer and fuzz build), libclang-rt-14-dev (clang's ASan, UBSan and libFuzzer runtimes), cmake (the
# downstream CMake example is built against an installed kforge), python3-dev and python3-numpy (the Python extension
# modules of `--python` are built and imported with Debian's python3: tests/python, examples/python_ops).
KFORGE_TEST_PACKAGES=(clang libclang-rt-14-dev cmake python3-dev python3-numpy)

log() {
  if [ -t 2 ]; then
    printf '\033[1m==> %s\033[0m\n' "$*" >&2
  else
    printf '==> %s\n' "$*" >&2
  fi
}

package_installed() {
  dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'
}

# Installs the given Debian packages (default: what building kforge needs), only when one is missing, as root
# or through sudo.
ensure_dependencies() {
  local wanted=("$@")
  [ "${#wanted[@]}" -gt 0 ] || wanted=("${KFORGE_PACKAGES[@]}")
  if ! command -v dpkg-query >/dev/null 2>&1; then
    log "not a Debian-based system: install these yourself if the build fails: ${wanted[*]}"
    return 0
  fi
  local missing=()
  local pkg
  for pkg in "${wanted[@]}"; do
    package_installed "$pkg" || missing+=("$pkg")
  done
  if [ "${#missing[@]}" -eq 0 ]; then
    return 0
  fi
  log "installing missing packages: ${missing[*]}"
  local run_as_root=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then
      run_as_root=(sudo)
    else
      echo "error: missing packages (${missing[*]}) and not root, and sudo is not available" >&2
      echo "install them with: apt-get update && apt-get install -y ${missing[*]}" >&2
      return 1
    fi
  fi
  export DEBIAN_FRONTEND=noninteractive
  "${run_as_root[@]}" apt-get update
  "${run_as_root[@]}" apt-get install -y "${missing[@]}"
}

# Configures the build directory (reconfiguring an existing one, so that new golden and e2e cases are
# registered) and builds. Arguments: meson options (-D...) for the configure step, then, after `--`, the ninja
# targets to build (default: everything).
build_kforge() {
  local options=() targets=()
  while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do
    options+=("$1")
    shift
  done
  [ "$#" -gt 0 ] && shift
  targets=("$@")
  cd "$KFORGE_ROOT" || return 1
  # Each step checks its status itself: callers may run this in an `if`, where `set -e` is off.
  if [ -f "$KFORGE_BUILD_DIR/build.ninja" ]; then
    local setup_log
    # Quiet when it works; the whole log when it does not.
    if ! setup_log="$(meson setup --reconfigure "$KFORGE_BUILD_DIR" "${options[@]}" 2>&1)"; then
      printf '%s\n' "$setup_log" >&2
      return 1
    fi
  else
    log "configuring $KFORGE_BUILD_DIR"
    meson setup "$KFORGE_BUILD_DIR" "${options[@]}" || return 1
  fi
  log "building ${targets[*]:-everything} in $KFORGE_BUILD_DIR"
  local jobs=()
  if [ -n "${KFORGE_JOBS:-}" ]; then
    jobs=(-j "$KFORGE_JOBS")
  fi
  ninja -C "$KFORGE_BUILD_DIR" "${jobs[@]}" "${targets[@]}" || return 1
}

# The sanitizer build (tools/test.sh's ASan + UBSan run, tools/fuzz.sh): clang, ASan and UBSan, the libFuzzer
# targets of tests/fuzz. Meson reads CXX only when it first configures a directory, so it is set here for that.
# -O1, as the sanitizers' own documentation builds: it compiles faster than -O2, the third build of CI. Line tables
# (-gline-tables-only) rather than full debug info: the reports' stack traces keep their files and lines, and clang
# compiles ~15 % faster (a unit of libkforge_passes: 16.3 s -> 13.0 s).
SANITIZER_BUILD_OPTIONS=(-Dtests=true -Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false -Dwerror=true
                         -Doptimization=1 -Ddebug=false -Dcpp_args=-gline-tables-only)
configure_sanitizer_build() {
  if [ ! -f "$(build_path)/build.ninja" ]; then
    export CXX="${KFORGE_SANITIZER_CXX:-clang++}"
  fi
}

# The build directory as an absolute path (KFORGE_BUILD_DIR may be relative to the root, or absolute).
build_path() {
  case "$KFORGE_BUILD_DIR" in
    /*) echo "$KFORGE_BUILD_DIR" ;;
    *) echo "$KFORGE_ROOT/$KFORGE_BUILD_DIR" ;;
  esac
}

kforge_binary() {
  echo "$(build_path)/src/kforge"
}
