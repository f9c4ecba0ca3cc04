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


def setup(description, compiler_name, compiler, where):
    """(arguments, compiler, this python's include directory); None, saying what is missing and `where` to get
    it, when `compiler` (its path, None when not found) or Python.h is."""
    args = parse_args(description)
    if compiler is None:
        print(f"{compiler_name} not found: skipping ({where})")
        return None
    include = sysconfig.get_paths()["include"]
    if not os.path.isfile(os.path.join(include, "Python.h")):
        print(f"Python.h not found in {include}: skipping (install python3-dev)")
        return None
    return args, compiler, include
