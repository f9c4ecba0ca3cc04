#!/usr/bin/env python3
"""examples/ops_api built as a downstream project with the kforge under test.

Configures the example (its own meson.build) in a temporary directory with -Dkforge=<this kforge>, builds
it (kforge ops runs as a custom_target, the reference kernels are compiled in), runs the demo and compares
what it prints with examples/ops_api/expected_output.txt. Then checks that a second `ninja` has nothing to
do (the outputs and the depfile are stable) and that `kforge ops --check` finds the generated files up
to date.

Usage: ops_example.py --kforge BUILD/src/kforge [--keep DIR]   (exit 77, meson's SKIP, without meson/ninja)
"""

import argparse
import difflib
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "ops_api"
SKIP = 77


def run(cmd, **kwargs):
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kwargs)
    return proc.returncode, proc.stdout


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kforge", required=True)
    parser.add_argument("--keep", help="build in this directory and keep it")
    args = parser.parse_args()
    meson, ninja = shutil.which("meson"), shutil.which("ninja")
    if meson is None or ninja is None:
        print("SKIPPED: meson and ninja are needed to build the example")
        return SKIP

    kforge = str(Path(args.kforge).resolve())
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="kforge-ops-example-"))
    build = work / "build"
    try:
        if not (build / "build.ninja").exists():
            # Without optimising or debug info (the example's own default is debugoptimized): it compiles the
            # kernel library's sources, and at -O2 -g linalg.cc alone took 18 s of CPU (2.4 s at -O0).
            code, out = run([meson, "setup", str(build), str(EXAMPLE), f"-Dkforge={kforge}", "-Doptimization=0",
                             "-Ddebug=false"])
            if code != 0:
                print(out)
                print("FAIL: meson setup of examples/ops_api")
                return 1
        code, out = run([ninja, "-C", str(build)])
        if code != 0:
            print(out)
            print("FAIL: building examples/ops_api")
            return 1
        code, out = run([str(build / "ops_api_demo")])
        expected = (EXAMPLE / "expected_output.txt").read_text()
        if code != 0 or out != expected:
            print(f"demo exit code {code}; output differs from examples/ops_api/expected_output.txt:")
            sys.stdout.writelines(difflib.unified_diff(expected.splitlines(True), out.splitlines(True),
                                                       "expected_output.txt", "ops_api_demo"))
            return 1
        code, out = run([ninja, "-C", str(build), "-d", "explain"])
        if code != 0 or "no work to do" not in out:
            print(out)
            print("FAIL: a second ninja run must have nothing to do")
            return 1
        code, out = run([kforge, "ops", "--ops", str(EXAMPLE / "ops.yaml"), "--op-compat",
                         str(ROOT / "kernels" / "op_compat.yaml"), "-o", str(build),
                         "--prefix", "demo", "--namespace", "demo", "--check"], cwd=str(work))
        # The build directory holds more than the generated files (--check reports those as unexpected), but
        # none of the generated ones may be stale or missing.
        stale = [line for line in out.splitlines() if line.startswith(("missing file:", "---", "+++"))]
        if stale:
            print(out)
            print("FAIL: kforge ops --check finds the example's generated files stale")
            return 1
        print(out.count("\n"), "lines of --check output, none about the generated files")
        print("PASS")
        return 0
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
