#!/usr/bin/env python3
"""kforge as a packager builds it and as a downstream project finds it.

1. Configures this source tree as a release build (-Dbuildtype=release -Dwerror=true -Dtests=false, so a
   release build is warning-free with the compiler under test), builds it and `meson install`s it into a
   temporary prefix. With --build-root naming a build that is already release with -Dwerror=true and the same
   compiler (tools/test.sh configures its build so), that build is installed instead (`meson install --destdir`
   into a temporary directory: the installed tree is relocatable) and nothing is built twice.
2. Checks the installed tree: `<prefix>/bin/kforge --version` names the installed templates, and the files
   downstream builds need are there (kforge.pc, kforgeConfig.cmake, the kernel library and its headers).
3. Builds examples/downstream-meson (pkg-config: dependency('kforge')) and examples/downstream-cmake
   (find_package(kforge), kforge_compile()) against that prefix; each compiles examples/programs/classifier.json
   at build time and runs it; the output must equal examples/programs/expected_output.txt.
4. A second build of each has nothing to do (the depfiles and outputs are stable).

Usage: install_downstream.py [--keep DIR] [--cxx g++|clang++] [--build-root BUILD]   (exit 77, meson's SKIP, without meson/ninja/cmake)
"""

import argparse
import difflib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
SKIP = 77


class Failure(Exception):
    pass


def run(cmd, env=None, what=None):
    """Runs cmd; on a non-zero exit raises Failure with its output."""
    proc = subprocess.run([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          env=env)
    if proc.returncode != 0:
        raise Failure(f"{proc.stdout}\nFAIL: {what or ' '.join(str(c) for c in cmd)} (exit {proc.returncode})")
    return proc.stdout


def install(work, cxx):
    build, prefix = work / "release", work / "prefix"
    env = dict(os.environ, CXX=cxx)
    if not (build / "build.ninja").exists():
        run(["meson", "setup", build, ROOT, "-Dbuildtype=release", "-Dwerror=true", "-Dtests=false",
             f"--prefix={prefix}"], env, "meson setup of a release build")
    run(["ninja", "-C", build], env, f"release build with {cxx}")
    run(["meson", "install", "-C", build, "--quiet"], env, "meson install")
    return prefix


def release_build(build_root, cxx):
    """The options of build_root if it is a release build with warnings as errors and a relocatable kforge.pc, by
    cxx; otherwise None."""
    info = Path(build_root) / "meson-info"
    try:
        options = {o["name"]: o["value"] for o in json.loads((info / "intro-buildoptions.json").read_text())}
        targets = json.loads((info / "intro-targets.json").read_text())
    except (OSError, ValueError):
        return None
    # The C++ compiler of the build's sources (meson 1.0 has no intro-compilers.json): the last word, after ccache.
    compiler = next((s["compiler"][-1] for t in targets for s in t.get("target_sources", [])
                     if s.get("language") == "cpp" and s.get("compiler")), "")
    if options.get("buildtype") != "release" or options.get("werror") is not True:
        return None
    if options.get("pkgconfig.relocatable") is not True:  # kforge.pc would name the prefix outside the stage
        return None
    if Path(compiler).name != cxx and Path(compiler).name != {"g++": "c++"}.get(cxx):
        return None
    return options


def install_existing(work, build_root, options):
    """Installs the (already built) build_root under work/stage; returns the prefix inside it."""
    stage = work / "stage"
    run(["meson", "install", "-C", build_root, "--no-rebuild", "--quiet", f"--destdir={stage}"],
        what=f"meson install of {build_root} into {stage}")
    return stage / Path(options["prefix"]).relative_to("/")


def check_installed(prefix):
    kforge = prefix / "bin" / "kforge"
    version = run([kforge, "--version"]).splitlines()
    templates = prefix / "share" / "kforge" / "templates"
    if len(version) < 2 or not version[1].endswith(f"({templates})"):
        raise Failure(f"installed kforge --version does not name {templates}:\n" + "\n".join(version))
    wanted = ["include/kforge/kforge_kernels.h", "include/kforge/kforge_runtime.h",
              "share/kforge/kernels/ops.yaml", "share/kforge/ops/paddle_overlay.yaml"]
    missing = [w for w in wanted if not (prefix / w).is_file()]
    found = {name: sorted(prefix.rglob(name)) for name in ["kforge.pc", "kforgeConfig.cmake", "libkforge_kernels.a"]}
    missing += [name for name, paths in found.items() if len(paths) != 1]
    if missing:
        raise Failure(f"not installed (or installed twice) under {prefix}: {', '.join(missing)}")
    return found["kforge.pc"][0].parent


def run_example(name, binary):
    expected = (EXAMPLES / "programs" / "expected_output.txt").read_text()
    out = run([binary], what=f"running {name}'s run_classifier")
    if out != expected:
        diff = difflib.unified_diff(expected.splitlines(True), out.splitlines(True), "expected_output.txt", name)
        raise Failure("".join(diff) + f"\nFAIL: {name}: output differs from examples/programs/expected_output.txt")


def expect_no_work(cmd, name):
    out = run(cmd)
    if "no work to do" not in out:
        raise Failure(f"{out}\nFAIL: {name}: a second build did work (unstable outputs or depfile)")


def downstream_meson(work, prefix, pkgconfig_dir, cxx):
    build = work / "downstream-meson"
    env = dict(os.environ, PKG_CONFIG_PATH=str(pkgconfig_dir), CXX=cxx)
    if not (build / "build.ninja").exists():
        run(["meson", "setup", build, EXAMPLES / "downstream-meson", "-Dwerror=true"], env,
            "meson setup of examples/downstream-meson")
    run(["ninja", "-C", build], env, "building examples/downstream-meson")
    run_example("downstream-meson", build / "run_classifier")
    expect_no_work(["ninja", "-C", build], "downstream-meson")


def downstream_cmake(work, prefix, cxx):
    build = work / "downstream-cmake"
    env = dict(os.environ, CXX=cxx)
    run(["cmake", "-S", EXAMPLES / "downstream-cmake", "-B", build, "-G", "Ninja", f"-DCMAKE_PREFIX_PATH={prefix}",
         "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_COMPILE_WARNING_AS_ERROR=ON"], env,
        "cmake configure of examples/downstream-cmake")
    run(["cmake", "--build", build], env, "building examples/downstream-cmake")
    run_example("downstream-cmake", build / "run_classifier")
    expect_no_work(["ninja", "-C", build], "downstream-cmake")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--keep", help="work in this directory and keep it")
    parser.add_argument("--cxx", default="g++", help="the C++ compiler of every build (default g++)")
    parser.add_argument("--build-root", help="install this build if it is a release with -Dwerror=true by --cxx")
    args = parser.parse_args()
    for tool in ["meson", "ninja", "cmake", "pkg-config", args.cxx]:
        if shutil.which(tool) is None:
            print(f"SKIPPED: {tool} is needed")
            return SKIP
    work = Path(args.keep).resolve() if args.keep else Path(tempfile.mkdtemp(prefix="kforge-install-"))
    try:
        options = release_build(args.build_root, args.cxx) if args.build_root else None
        if options is not None:
            print(f"installing {args.build_root}: already a release build with -Dwerror=true")
            prefix = install_existing(work, args.build_root, options)
        else:
            prefix = install(work, args.cxx)
        pkgconfig_dir = check_installed(prefix)
        downstream_meson(work, prefix, pkgconfig_dir, args.cxx)
        downstream_cmake(work, prefix, args.cxx)
    except Failure as failure:
        print(failure)
        return 1
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print(f"PASS: release build with {args.cxx}, installed; downstream Meson and CMake projects built and ran")
    return 0


if __name__ == "__main__":
    sys.exit(main())
