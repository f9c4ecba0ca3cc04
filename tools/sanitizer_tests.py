#!/usr/bin/env python3
"""What tools/test.sh runs in the ASan + UBSan build, read from meson's introspection of that build.

  sanitizer_tests.py BUILD targets   # the ninja targets to build: src/kforge, the fuzz targets, and the unit
                                     # test executables of the front ends (below)
  sanitizer_tests.py BUILD tests     # the names of those unit tests

The sanitizer stage covers what takes hostile input: the front ends that read files (support: source buffers and
input files; template; output: what is written; opdef; program; kernel: the scalar expression language; driver:
render data and the command line), and the runtime headers that generated code uses to read files
(params: .pdiparams; multikernel: the disk cache). Their unit tests run here under ASan + UBSan; the golden suite
runs the whole of kforge (passes and codegen too) under them, and the fuzz targets drive the readers into the passes.
The unit tests of the passes, codegen, the kernel library and the interpreter take no outside input: they run in
the main build only, which saves compiling the kernel library and ~50 test files with the sanitizers (docs/testing.md).
Unit tests that only run an outside compiler on generated headers (*-header-compilers) are left out too.
"""

import json
import sys
from pathlib import Path

FRONT_END_TESTS = {"unit-support", "unit-template", "unit-output", "unit-opdef", "unit-program", "unit-scalar-expr",
                   "unit-driver", "unit-params", "unit-multikernel"}


def main():
    build = Path(sys.argv[1]).resolve()
    what = sys.argv[2]
    tests = json.loads((build / "meson-info" / "intro-tests.json").read_text(encoding="utf-8"))
    unit_names, targets = [], ["src/kforge"]
    for test in tests:
        suites = [s.split(":")[-1] for s in test["suite"]]
        program = Path(test["cmd"][0])
        if "unit" in suites and test["name"] in FRONT_END_TESTS and build in program.parents:
            unit_names.append(test["name"])
            targets.append(program.relative_to(build).as_posix())
        if "fuzz" in suites:
            fuzzer = Path(test["cmd"][test["cmd"].index("--fuzzer") + 1])  # meson writes it relative to the build
            targets.append((fuzzer.relative_to(build) if fuzzer.is_absolute() else fuzzer).as_posix())
    print("\n".join(sorted(set(targets)) if what == "targets" else unit_names))
    return 0


if __name__ == "__main__":
    sys.exit(main())
