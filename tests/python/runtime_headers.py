#!/usr/bin/env python3
"""CI check of the Python modules' runtime headers, templates/runtime/kforge_python*.h (docs/python.md, "The
runtime headers"): kforge_python.h and its parts, one concern each, and the two CUDA headers.

- kforge writes every one of them where a module includes it: `kforge ops --python` and `kforge compile --python`
  list the CPU headers among their outputs (--list-outputs), `--target cuda` also the CUDA ones; no header in
  templates/runtime is left out and none is listed that is not there;
- kforge_python.h includes every CPU part;
- each header compiles on its own (g++ -fsyntax-only, warnings as errors, after defining KFORGE_PYTHON_MODULE):
  every part includes what it reads. The CUDA headers need cuda_runtime.h; without it they are left out,
  saying so.

Exit 77 (meson: skipped, saying why) when g++ or Python.h is missing.

    runtime_headers.py --kforge BUILD/src/kforge --source-root ROOT
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

import build_checks

CUDA_HEADERS = {"kforge_python_cuda.h", "kforge_python_device.h"}
# A program for `kforge compile --list-outputs` (the file names do not depend on it beyond the CUDA extras).
PROGRAM = "tests/e2e/fused/chain.yaml"


def listed_headers(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        print("FAILED:", " ".join(cmd))
        print(r.stdout)
        return None
    return {os.path.basename(line) for line in r.stdout.split() if re.match(r".*/kforge_python.*\.h$", line)}


def check_lists(args, on_disk):
    root = args.source_root
    kernels = os.path.join(root, "kernels")
    ops = ["--ops", os.path.join(kernels, "ops.yaml")]
    compile_ops = ops + ["--ops", os.path.join(kernels, "fusion.yaml"), "--op-compat",
                         os.path.join(kernels, "op_compat.yaml")]
    program = os.path.join(root, PROGRAM)
    cpu = on_disk - CUDA_HEADERS
    expected = {
        "ops --python": (cpu, [args.kforge, "ops", *ops, "--list-outputs", "-o", "g", "--prefix", "p",
                               "--python", "m"]),
        "compile --python": (cpu, [args.kforge, "compile", program, *compile_ops, "--list-outputs", "-o", "g",
                                   "--name", "c", "--python", "m"]),
        "compile --target cuda --python": (on_disk, [args.kforge, "compile", program, *compile_ops,
                                                     "--list-outputs", "-o", "g", "--name", "c", "--target",
                                                     "cuda", "--python", "m"]),
    }
    ok = True
    for what, (want, cmd) in expected.items():
        got = listed_headers(cmd)
        if got is None:
            ok = False
        elif got != want:
            print(f"kforge {what} writes {sorted(got)}; templates/runtime has {sorted(want)}")
            ok = False
        else:
            print(f"kforge {what}: {len(got)} headers")
    return ok


def check_umbrella(runtime, on_disk):
    text = open(os.path.join(runtime, "kforge_python.h")).read()
    included = set(re.findall(r'^#include "(kforge_python_[a-z_]+\.h)"', text, re.M))
    missing = on_disk - CUDA_HEADERS - {"kforge_python.h"} - included
    if missing:
        print("kforge_python.h does not include", sorted(missing))
        return False
    print(f"kforge_python.h includes {len(included)} parts")
    return True


def find_cuda_include():
    for candidate in (os.environ.get("CUDA_HOME"), "/usr/local/cuda"):
        if candidate and os.path.isfile(os.path.join(candidate, "include", "cuda_runtime.h")):
            return os.path.join(candidate, "include")
    return None


def check_standalone(cxx, runtime, python_include, on_disk):
    cuda_include = find_cuda_include()
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        for header in sorted(on_disk):
            if header in CUDA_HEADERS and cuda_include is None:
                print(f"{header}: left out, no cuda_runtime.h (set CUDA_HOME)")
                continue
            source = os.path.join(tmp, header + ".cc")
            with open(source, "w") as f:
                f.write(f'#define KFORGE_PYTHON_MODULE standalone\n#include "{header}"\n')
            cmd = [cxx, "-std=c++17", "-fsyntax-only", "-Wall", "-Wextra", "-Werror", "-I", runtime, "-I",
                   python_include]
            if cuda_include is not None:
                cmd += ["-I", cuda_include]
            r = subprocess.run(cmd + [source], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            if r.returncode != 0:
                print(f"{header} does not compile on its own:")
                print(r.stdout[-4000:])
                ok = False
            else:
                print(f"{header}: compiles on its own")
    return ok


def main():
    found = build_checks.setup(__doc__.splitlines()[0], "g++", shutil.which("g++"), "install g++")
    if found is None:
        return build_checks.SKIP
    args, cxx, python_include = found
    runtime = os.path.join(args.source_root, "templates", "runtime")
    on_disk = {os.path.basename(p) for p in glob.glob(os.path.join(runtime, "kforge_python*.h"))}
    if "kforge_python.h" not in on_disk or not CUDA_HEADERS <= on_disk:
        print(f"templates/runtime lacks kforge_python.h or a CUDA header: {sorted(on_disk)}")
        return 1
    results = [check_lists(args, on_disk), check_umbrella(runtime, on_disk),
               check_standalone(cxx, runtime, python_include, on_disk)]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
