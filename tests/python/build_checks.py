"""What the build checks of tests/python share (cuda_module_compile.py, runtime_headers.py): their arguments and
this python's headers, which every compiled module needs."""
import argparse
import os
import sysconfig

SKIP = 77  # meson: skipped, saying why


def parse_args(description):
    """--kforge BUILD/src/kforge --source-root ROOT."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--kforge", required=True)
    parser.add_argument("--source-root", required=True)
    return parser.parse_args()


def python_include():
    """This python's include directory when it holds Python.h; None, saying so, when it does not."""
    include = sysconfig.get_paths()["include"]
    if os.path.isfile(os.path.join(include, "Python.h")):
        return include
    print(f"Python.h not found in {include}: skipping (install python3-dev)")
    return None
