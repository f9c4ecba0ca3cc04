#!/usr/bin/env python3
"""What tools/test.sh runs in the ASan + UBSan build, read from meson's introspection of that build.

  sanitizer_tests.py BUILD targets   # the ninja targets to build: src/kforge, the fuzz targets, and every unit
                                     # test executable of the project
  sanitizer_tests.py BUILD tests     # the names of those unit tests

Unit tests that only run an outside compiler on generated headers (*-header-compilers) are left out: the sanitizers
would instrument nothing of them, and the main build runs them. Building just these targets, rather than the whole
project (kernels, examples, e2e), keeps the second build of CI short.
"""

import json
import sys
from pathlib import Path


def main():
    build = Path(sys.argv[1]).resolve()
    what = sys.argv[2]
    tests = json.loads((build / "meson-info" / "intro-tests.json").read_text(encoding="utf-8"))
    unit_names, targets = [], ["src/kforge"]
    for test in tests:
        suites = [s.split(":")[-1] for s in test["suite"]]
        program = Path(test["cmd"][0])
        if "unit" in suites and build in program.parents:
            unit_names.append(test["name"])
            targets.append(program.relative_to(build).as_posix())
        if "fuzz" in suites:
            fuzzer = Path(test["cmd"][test["cmd"].index("--fuzzer") + 1])  # meson writes it relative to the build
            targets.append((fuzzer.relative_to(build) if fuzzer.is_absolute() else fuzzer).as_posix())
    print("\n".join(sorted(set(targets)) if what == "targets" else unit_names))
    return 0


if __name__ == "__main__":
    sys.exit(main())
