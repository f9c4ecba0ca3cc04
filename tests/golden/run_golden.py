#!/usr/bin/env python3
"""Golden-test runner for kforge: runs the real binary on one case of tests/golden/ and compares.

A case is a directory holding `args` (the command line, one argument per line), its inputs, and either
`expected/` (the files the command writes under $OUT) or `expected.stderr` + `expected.exitcode` (an
error case). See tests/golden/README.md for the format. Besides the comparison, every success case is
checked for determinism (same bytes twice, from another working directory, with absolute and with
relative paths), write-if-changed (a second run touches no file), --list-outputs (lists exactly the
files produced, writes nothing) and the depfile (lists every input, every template loaded and every
header copied beside the outputs).

Headers that kforge copies beside its outputs from templates/runtime/ or templates/cuda/ are not stored
in expected/: `expected.copied` lists them (`OUTPUT TEMPLATE` per line) and each is compared with the
template it was copied from (found through the case's --template-dir, then the built-in templates/),
after the banner, which must be the banner of the case's other outputs in the same directory.

UPDATE_GOLDENS=1 rewrites the case's expectations from the actual run (refused when CI is set).

Usage:
  run_golden.py --kforge BUILD/src/kforge [--build-root BUILD] CASE...   # run cases (all when none given)
  run_golden.py --list-cases                                             # what meson registers
  run_golden.py --check-index CASE...                                    # are these all the cases?
"""

import argparse
import difflib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

GOLDEN_DIR = Path(__file__).resolve().parent
TMP_ROOT = GOLDEN_DIR.parent / ".golden-tmp"
SOURCE_ROOT = GOLDEN_DIR.parent.parent
BUILTIN_TEMPLATES = SOURCE_ROOT / "templates"
DIFF_LINE_CAP = 200
OUT_PLACEHOLDER = "$OUT"
COPIED_MANIFEST = "expected.copied"
# Where the headers that kforge copies verbatim (after the banner) beside its outputs come from.
COPIED_HEADER_DIRS = ("runtime", "cuda")
BANNER_END = b"// @generated\n"
RUN_TIMEOUT_S = 120


# ----------------------------------------------------------------------------------------------------
# Cases and runs


class Failure(Exception):
    """A check that failed; the message is printed as is."""


def list_cases():
    return sorted(p.name for p in GOLDEN_DIR.iterdir() if p.is_dir() and (p / "args").is_file())


def read_args(case_dir):
    """One argument per line; blank lines and lines starting with '#' are ignored."""
    args = []
    for line in (case_dir / "args").read_text(encoding="utf-8").split("\n"):
        line = line.rstrip("\r")
        if line.strip() == "" or line.startswith("#"):
            continue
        args.append(line)
    return args


class Run:
    def __init__(self, code, stdout, stderr, out_dir):
        self.code = code
        self.stdout = stdout  # bytes
        self.stderr = stderr  # bytes
        self.out_dir = out_dir  # Path or None

    def files(self):
        """{relative posix path: bytes} of everything written under $OUT."""
        if self.out_dir is None or not self.out_dir.exists():
            return {}
        found = {}
        for path in sorted(self.out_dir.rglob("*")):
            if path.is_file():
                found[path.relative_to(self.out_dir).as_posix()] = path.read_bytes()
        return found


class Runner:
    def __init__(self, kforge, build_root, case):
        self.kforge = str(Path(kforge).resolve())
        self.build_root = build_root
        self.case = case
        self.case_dir = GOLDEN_DIR / case
        self.args = read_args(self.case_dir)
        self.uses_out = any(OUT_PLACEHOLDER in a for a in self.args)
        # Output directories live in the source tree (tests/.golden-tmp/), so the paths that banners give
        # relative to them ("../../../golden/<case>/ops.yaml") are the same on every machine and checkout.
        # Another case's cleanup() may remove TMP_ROOT between the mkdir and the mkdtemp: try again.
        for attempt in range(100):
            TMP_ROOT.mkdir(exist_ok=True)
            try:
                self.tmp = Path(tempfile.mkdtemp(prefix=f"kforge-golden-{case}-", dir=TMP_ROOT))
                break
            except FileNotFoundError:
                if attempt == 99:
                    raise
        self.out_counter = 0

    def cleanup(self):
        shutil.rmtree(self.tmp, ignore_errors=True)
        try:
            TMP_ROOT.rmdir()  # only when no other case is running
        except OSError:
            pass

    def fresh_out(self):
        self.out_counter += 1
        out = self.tmp / f"out{self.out_counter}"
        out.mkdir()
        return out

    def run(self, args, cwd, out_dir):
        env = dict(os.environ)
        env.pop("UPDATE_GOLDENS", None)
        env["NO_COLOR"] = "1"
        try:
            proc = subprocess.run([self.kforge] + args, cwd=cwd, env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, timeout=RUN_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise Failure(f"kforge did not finish within {RUN_TIMEOUT_S} s: {' '.join(args)}")
        return Run(proc.returncode, proc.stdout, proc.stderr, out_dir)

    # Argument spellings for the determinism variants -----------------------------------------------

    def is_path_arg(self, value):
        return value != "" and not value.startswith("-") and (self.case_dir / value).exists()

    def respell(self, args, out_dir, spell):
        """Substitutes $OUT and rewrites each argument that names an existing file of the case with
        `spell(absolute Path)`; `--opt=value` values are rewritten too."""
        result = []
        for arg in args:
            if OUT_PLACEHOLDER in arg:
                result.append(arg.replace(OUT_PLACEHOLDER, spell(out_dir)))
                continue
            if arg.startswith("-") and "=" in arg:
                flag, value = arg.split("=", 1)
                if self.is_path_arg(value):
                    arg = flag + "=" + spell((self.case_dir / value).resolve())
                result.append(arg)
                continue
            result.append(spell((self.case_dir / arg).resolve()) if self.is_path_arg(arg) else arg)
        return result

    def base_args(self, out_dir):
        return [a.replace(OUT_PLACEHOLDER, str(out_dir)) for a in self.args]

    def normalise_text(self, data, out_dirs):
        text = data.decode("utf-8", errors="replace")
        for out in out_dirs:
            for spelling in {str(out), os.path.realpath(out)}:
                text = text.replace(spelling, OUT_PLACEHOLDER)
        text = text.replace(self.kforge, "kforge")
        # The built-in templates directory is compiled in as an absolute path of the source tree.
        return text.replace(str(SOURCE_ROOT), "$SRC")

    def bless_command(self):
        if self.build_root:
            build = os.path.relpath(self.build_root, SOURCE_ROOT)
            return f"UPDATE_GOLDENS=1 meson test -C {build} golden-{self.case}"
        return (f"UPDATE_GOLDENS=1 /usr/bin/python3 tests/golden/run_golden.py --kforge {self.kforge} "
                f"{self.case}")


# ----------------------------------------------------------------------------------------------------
# Readable differences


def visible(line):
    """A line (without its newline) with invisible differences made visible: trailing spaces as '·',
    trailing tabs as '→', carriage returns as '␍'."""
    line = line.replace("\r", "␍")
    body = line.rstrip(" \t")
    trail = line[len(body):]
    return body + trail.replace(" ", "·").replace("\t", "→")


def readable_diff(expected, actual, expected_label, actual_label):
    """Unified diff (3 lines of context) of two byte strings, whitespace made visible, capped."""
    a = expected.decode("utf-8", errors="replace").splitlines(keepends=True)
    b = actual.decode("utf-8", errors="replace").splitlines(keepends=True)
    out = []
    for line in difflib.unified_diff(a, b, expected_label, actual_label, n=3):
        if line.startswith(("---", "+++", "@@")):
            out.append(line.rstrip("\n"))
            continue
        marker, body = line[0], line[1:]
        has_newline = body.endswith("\n")
        out.append(marker + visible(body[:-1] if has_newline else body))
        if not has_newline:
            out.append("\\ No newline at end of file")
    if len(out) > DIFF_LINE_CAP:
        hidden = len(out) - DIFF_LINE_CAP
        out = out[:DIFF_LINE_CAP] + [f"... {hidden} more diff lines not shown"]
    return "\n".join(out)


def first_difference_line(expected, actual):
    a = expected.split(b"\n")
    b = actual.split(b"\n")
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i + 1
    return min(len(a), len(b))


def compare_bytes(label_path, expected, actual, problems):
    if expected == actual:
        return
    line = first_difference_line(expected, actual)
    problems.append(f"{label_path}:{line}: mismatch\n"
                    + readable_diff(expected, actual, f"{label_path} (expected)", f"{label_path} (actual)"))


def rel_label(path):
    return Path(path).relative_to(SOURCE_ROOT).as_posix()


def read_optional(path):
    return path.read_bytes() if path.is_file() else None


# ----------------------------------------------------------------------------------------------------
# Copied runtime headers: compared with templates/, not stored


def split_banner(data):
    """(banner, body) of a file kforge wrote: the banner is everything up to and including the
    `// @generated` line; (b"", data) when the file has none."""
    if not data.startswith(b"// Generated by kforge"):
        return b"", data
    end = data.find(BANNER_END)
    if end < 0:
        return b"", data
    end += len(BANNER_END)
    return data[:end], data[end:]


def template_search_path(runner):
    return [(runner.case_dir / d).resolve() for d in option_values(runner.args, "--template-dir")] + [BUILTIN_TEMPLATES]


def find_template(runner, name):
    return next((d / name for d in template_search_path(runner) if (d / name).is_file()), None)


def copied_template(runner, name, data):
    """The template path (`runtime/x.h`) that output `name` is a verbatim copy of, or None."""
    banner, body = split_banner(data)
    if not banner:
        return None
    for sub in COPIED_HEADER_DIRS:
        template = sub + "/" + Path(name).name
        path = find_template(runner, template)
        if path is not None and path.read_bytes() == body:
            return template
    return None


def read_copied_manifest(case_dir):
    """{output: template} from expected.copied."""
    manifest = {}
    path = case_dir / COPIED_MANIFEST
    if not path.is_file():
        return manifest
    for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
        if not line.strip():
            continue
        fields = line.split()
        if len(fields) != 2:
            raise Failure(f"{rel_label(path)}:{number}: expected `OUTPUT TEMPLATE`, got {line!r}")
        manifest[fields[0]] = fields[1]
    return manifest


def compare_copied(runner, name, template, actual, expected, problems):
    """A copied header: its body is the template's bytes, its banner that of a stored sibling output."""
    label = f"{rel_label(runner.case_dir / COPIED_MANIFEST)}: {name}"
    path = find_template(runner, template)
    if path is None:
        problems.append(f"{label}: no template {template} on the search path")
        return
    banner, body = split_banner(actual)
    if not banner:
        problems.append(f"{label}: the copy has no banner")
    compare_bytes(f"{label} (vs {rel_label(path) if path.is_relative_to(SOURCE_ROOT) else path})",
                  path.read_bytes(), body, problems)
    directory = str(Path(name).parent)
    for other, data in sorted(expected.items()):
        if str(Path(other).parent) == directory:
            compare_bytes(f"{label} banner (vs expected/{other})", split_banner(data)[0], banner, problems)
            break


# ----------------------------------------------------------------------------------------------------
# Comparison with the expectations


def compare_with_expectations(runner, run):
    case_dir = runner.case_dir
    problems = []
    stdout = runner.normalise_text(run.stdout, [run.out_dir]).encode()
    stderr = runner.normalise_text(run.stderr, [run.out_dir]).encode()
    exitcode_file = case_dir / "expected.exitcode"
    if exitcode_file.is_file():
        expected_code = int(exitcode_file.read_text().strip())
        if run.code != expected_code:
            problems.append(f"{rel_label(exitcode_file)}:1: mismatch\n  expected exit code {expected_code}, "
                            f"got {run.code}")
        expected_stderr = read_optional(case_dir / "expected.stderr") or b""
        compare_bytes(rel_label(case_dir / "expected.stderr"), expected_stderr, stderr, problems)
        written = run.files()
        if written:
            problems.append(f"{rel_label(case_dir)}: the failing command wrote files: {', '.join(written)}")
    else:
        if run.code != 0:
            problems.append(f"{rel_label(case_dir / 'args')}:1: kforge exited with {run.code}\n"
                            + stderr.decode(errors="replace"))
        expected_dir = case_dir / "expected"
        expected = {}
        if expected_dir.is_dir():
            for path in sorted(expected_dir.rglob("*")):
                if path.is_file():
                    expected[path.relative_to(expected_dir).as_posix()] = path.read_bytes()
        actual = run.files()
        copied = read_copied_manifest(case_dir)
        for name, template in sorted(copied.items()):
            if name in expected:
                problems.append(f"{rel_label(expected_dir / name)}:1: listed in {COPIED_MANIFEST} and stored")
            elif name not in actual:
                problems.append(f"{rel_label(case_dir / COPIED_MANIFEST)}: {name}: kforge did not produce this file")
            else:
                compare_copied(runner, name, template, actual[name], expected, problems)
        for name in sorted(set(expected) | (set(actual) - set(copied))):
            label = rel_label(expected_dir / name)
            if name not in actual:
                problems.append(f"{label}:1: mismatch\n  kforge did not produce this file")
            elif name not in expected:
                problems.append(f"{label}:1: mismatch\n  kforge produced this file but it is not expected "
                                f"(first lines below)\n" + readable_diff(b"", actual[name], "/dev/null", label))
            else:
                compare_bytes(label, expected[name], actual[name], problems)
        expected_stderr = read_optional(case_dir / "expected.stderr") or b""
        compare_bytes(rel_label(case_dir / "expected.stderr"), expected_stderr, stderr, problems)
    expected_stdout = read_optional(case_dir / "expected.stdout") or b""
    compare_bytes(rel_label(case_dir / "expected.stdout"), expected_stdout, stdout, problems)
    return problems


def write_if_changed(path, data, changes):
    if path.is_file() and path.read_bytes() == data:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    changes.append(("updated" if path.exists() else "created") + " " + rel_label(path))
    path.write_bytes(data)


def delete_if_present(path, changes):
    if path.is_file():
        path.unlink()
        changes.append("deleted " + rel_label(path))
    elif path.is_dir():
        shutil.rmtree(path)
        changes.append("deleted " + rel_label(path) + "/")


def update_expectations(runner, run):
    """UPDATE_GOLDENS=1: makes the case's expectations match `run`, touching only what changed."""
    case_dir = runner.case_dir
    changes = []
    stdout = runner.normalise_text(run.stdout, [run.out_dir]).encode()
    stderr = runner.normalise_text(run.stderr, [run.out_dir]).encode()
    if run.code != 0:
        write_if_changed(case_dir / "expected.exitcode", f"{run.code}\n".encode(), changes)
        write_if_changed(case_dir / "expected.stderr", stderr, changes)
        delete_if_present(case_dir / "expected", changes)
        delete_if_present(case_dir / COPIED_MANIFEST, changes)
    else:
        delete_if_present(case_dir / "expected.exitcode", changes)
        expected_dir = case_dir / "expected"
        actual = run.files()
        copied = {name: copied_template(runner, name, data) for name, data in actual.items()}
        copied = {name: template for name, template in copied.items() if template is not None}
        if copied:
            manifest = "".join(f"{name} {template}\n" for name, template in sorted(copied.items()))
            write_if_changed(case_dir / COPIED_MANIFEST, manifest.encode(), changes)
        else:
            delete_if_present(case_dir / COPIED_MANIFEST, changes)
        actual = {name: data for name, data in actual.items() if name not in copied}
        for name, data in actual.items():
            write_if_changed(expected_dir / name, data, changes)
        if expected_dir.is_dir():
            for path in sorted(expected_dir.rglob("*"), reverse=True):
                rel = path.relative_to(expected_dir).as_posix()
                if path.is_file() and rel not in actual:
                    delete_if_present(path, changes)
                elif path.is_dir() and not any(path.iterdir()):
                    path.rmdir()
        if stderr:
            write_if_changed(case_dir / "expected.stderr", stderr, changes)
        else:
            delete_if_present(case_dir / "expected.stderr", changes)
    if stdout:
        write_if_changed(case_dir / "expected.stdout", stdout, changes)
    else:
        delete_if_present(case_dir / "expected.stdout", changes)
    return changes


# ----------------------------------------------------------------------------------------------------
# Properties every success case must have


def product(run):
    return run.files(), run.stdout


def compare_products(what, base, other):
    problems = []
    base_files, base_stdout = product(base)
    files, stdout = product(other)
    if other.code != 0:
        return [f"{what}: kforge exited with {other.code}\n" + other.stderr.decode(errors="replace")]
    if sorted(base_files) != sorted(files):
        problems.append(f"{what}: produced files differ: {sorted(base_files)} vs {sorted(files)}")
    for name in sorted(set(base_files) & set(files)):
        compare_bytes(f"{what}: $OUT/{name}", base_files[name], files[name], problems)
    compare_bytes(f"{what}: stdout", base_stdout, stdout, problems)
    return problems


def parse_depfile(text):
    """(targets, deps) of a Make-syntax depfile with kforge's escapes ('\\ ', '$$', '\\#')."""
    text = text.replace("\\\n", " ")
    tokens, current, i = [], "", 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text) and text[i + 1] in " #":
            current += text[i + 1]
            i += 2
            continue
        if c == "$" and i + 1 < len(text) and text[i + 1] == "$":
            current += "$"
            i += 2
            continue
        if c in " \t\n":
            if current:
                tokens.append(current)
            current = ""
        else:
            current += c
        i += 1
    if current:
        tokens.append(current)
    targets, deps, seen_colon = [], [], False
    for token in tokens:
        if not seen_colon and token.endswith(":"):
            if token[:-1]:
                targets.append(token[:-1])
            seen_colon = True
        elif seen_colon:
            deps.append(token)
        else:
            targets.append(token)
    return targets, deps


TEMPLATE_REFERENCE = re.compile(r"""\{%[-+]?\s*(?:include|import|from)\s+(['"])([^'"]+)\1""")


def option_values(args, flag):
    values = []
    for i, arg in enumerate(args):
        if arg == flag and i + 1 < len(args):
            values.append(args[i + 1])
        elif arg.startswith(flag + "="):
            values.append(arg.split("=", 1)[1])
    return values


def check_depfile(runner):
    if "--depfile" in runner.args or any(a.startswith("--depfile=") for a in runner.args):
        return []  # the case tests its own depfile through expected/
    out = runner.fresh_out()
    depfile = runner.tmp / "golden.d"
    run = runner.run(runner.base_args(out) + ["--depfile", str(depfile)], runner.case_dir, out)
    if run.code != 0:
        return [f"depfile run: kforge exited with {run.code}\n" + run.stderr.decode(errors="replace")]
    if not depfile.is_file():
        return ["depfile run: --depfile wrote no file"]
    targets, deps = parse_depfile(depfile.read_text(encoding="utf-8"))
    problems = []
    produced = [str(out / name) for name in run.files()]
    if "--depfile-target" not in runner.args:
        for path in produced:
            if path not in targets:
                problems.append(f"depfile: output {path} is not a target (targets: {targets})")
    dep_paths = set()
    for dep in deps:
        path = (runner.case_dir / dep).resolve()
        if not path.exists():
            problems.append(f"depfile: dependency '{dep}' does not exist")
        dep_paths.add(path)
    # Every input named on the command line is a dependency.
    for arg in runner.args:
        value = arg.split("=", 1)[1] if arg.startswith("-") and "=" in arg else arg
        if runner.is_path_arg(value) and (runner.case_dir / value).is_file():
            if (runner.case_dir / value).resolve() not in dep_paths:
                problems.append(f"depfile: input '{value}' is not listed")
    # Every template reachable through a literal include/import/from of a listed template is listed.
    search = [(runner.case_dir / d).resolve() for d in option_values(runner.args, "--template-dir")]
    search += sorted({(runner.case_dir / a).resolve().parent for a in runner.args
                      if a.endswith(".j2") and runner.is_path_arg(a)})
    search.append(BUILTIN_TEMPLATES)
    # Every header copied beside the outputs (templates/runtime/*, templates/cuda/*) is listed: editing it
    # must make the build regenerate.
    for name in run.files():
        for sub in ("runtime", "cuda"):
            copied = next((d / sub / Path(name).name for d in search if (d / sub / Path(name).name).is_file()), None)
            if copied is not None and copied.resolve() not in dep_paths:
                problems.append(f"depfile: copied header '{sub}/{Path(name).name}' is not listed")
    pending = [p for p in dep_paths if p.suffix == ".j2"]
    visited = set()
    while pending:
        template = pending.pop()
        if template in visited or not template.is_file():
            continue
        visited.add(template)
        for match in TEMPLATE_REFERENCE.finditer(template.read_text(encoding="utf-8", errors="replace")):
            name = match.group(2)
            resolved = next((d / name for d in search if (d / name).is_file()), None)
            if resolved is None:
                continue
            resolved = resolved.resolve()
            if resolved not in dep_paths:
                problems.append(f"depfile: template '{name}' (loaded by {template.name}) is not listed")
            pending.append(resolved)
    return problems


def check_properties(runner, base):
    problems = []
    # Same bytes twice.
    out = runner.fresh_out()
    problems += compare_products("second run", base, runner.run(runner.base_args(out), runner.case_dir, out))
    # Absolute paths, from a directory unrelated to the case.
    elsewhere = runner.tmp / "elsewhere"
    elsewhere.mkdir(exist_ok=True)
    out = runner.fresh_out()
    args = runner.respell(runner.args, out, lambda p: str(Path(p).resolve()))
    problems += compare_products("absolute paths from another directory", base, runner.run(args, elsewhere, out))
    # Relative paths, from another directory (tests/).
    cwd = GOLDEN_DIR.parent
    out = runner.fresh_out()
    args = runner.respell(runner.args, out, lambda p: os.path.relpath(p, cwd))
    problems += compare_products("relative paths from tests/", base, runner.run(args, cwd, out))
    if not runner.uses_out:
        return problems
    # Write-if-changed: a second run into the same $OUT leaves every file and its mtime alone.
    stamps = {}
    for path in base.out_dir.rglob("*"):
        if path.is_file():
            os.utime(path, (1_000_000_000, 1_000_000_000))
            stamps[path] = path.stat().st_mtime_ns
    again = runner.run(runner.base_args(base.out_dir), runner.case_dir, base.out_dir)
    if again.code != 0:
        problems.append(f"rerun into the same $OUT: kforge exited with {again.code}")
    for path, stamp in stamps.items():
        if path.stat().st_mtime_ns != stamp:
            problems.append(f"rerun into the same $OUT rewrote unchanged file {path.relative_to(base.out_dir)}")
    # --list-outputs lists exactly what is produced, and writes nothing.
    out = runner.fresh_out()
    listing = runner.run(runner.base_args(out) + ["--list-outputs"], runner.case_dir, out)
    if listing.code != 0:
        problems.append(f"--list-outputs: kforge exited with {listing.code}\n" + listing.stderr.decode())
    else:
        listed = [line for line in listing.stdout.decode().split("\n") if line]
        listed_rel = sorted(os.path.relpath(line, out) if os.path.isabs(line) else
                            os.path.relpath(runner.case_dir / line, out) for line in listed)
        if listed_rel != sorted(base.files()):
            problems.append(f"--list-outputs printed {listed_rel}, the run produced {sorted(base.files())}")
        if listed != sorted(listed):
            problems.append("--list-outputs is not sorted")
        if listing.files():
            problems.append(f"--list-outputs wrote files: {sorted(listing.files())}")
    problems += check_depfile(runner)
    return problems


# ----------------------------------------------------------------------------------------------------
# Driver


def updating():
    """UPDATE_GOLDENS=1 rewrites expectations; any other value (UPDATE_GOLDENS=0 included) compares."""
    return os.environ.get("UPDATE_GOLDENS") == "1"


def run_case(kforge, build_root, case):
    runner = Runner(kforge, build_root, case)
    try:
        out = runner.fresh_out()
        base = runner.run(runner.base_args(out), runner.case_dir, out)
        notes = []
        if updating():
            changes = update_expectations(runner, base)
            notes = [f"golden-{case}: " + ("; ".join(changes) if changes else "expectations already up to date")]
            problems = []
        else:
            problems = compare_with_expectations(runner, base)
        if base.code == 0 and not problems:
            problems += check_properties(runner, base)
        for note in notes:
            print(note)
        if problems:
            print(f"FAIL golden-{case}")
            for problem in problems:
                print(problem)
                print()
            if not updating():
                print(f"If the new output is right, accept it with:\n  {runner.bless_command()}")
            return False
        print(f"PASS golden-{case}")
        return True
    except Failure as failure:
        print(f"FAIL golden-{case}: {failure}")
        return False
    finally:
        runner.cleanup()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kforge", help="the kforge binary to test")
    parser.add_argument("--build-root", help="meson build directory (for the bless command)")
    parser.add_argument("--list-cases", action="store_true")
    parser.add_argument("--check-index", action="store_true",
                        help="fail if the cases given are not exactly the cases on disk")
    parser.add_argument("cases", nargs="*")
    options = parser.parse_args()

    if options.list_cases:
        print("\n".join(list_cases()))
        return 0
    if options.check_index:
        on_disk, known = set(list_cases()), set(options.cases)
        if on_disk == known:
            print(f"PASS golden index: {len(known)} cases")
            return 0
        for case in sorted(on_disk - known):
            print(f"tests/golden/{case}: case not registered with meson; run 'meson setup --reconfigure BUILD'")
        for case in sorted(known - on_disk):
            print(f"tests/golden/{case}: registered with meson but gone from disk; reconfigure")
        return 1
    if updating() and os.environ.get("CI"):
        print("UPDATE_GOLDENS is refused when CI is set: goldens are updated by people, never by CI.")
        return 1
    if not options.kforge or not os.path.isfile(options.kforge):
        print(f"kforge binary not found: {options.kforge!r} (pass --kforge BUILD/src/kforge)")
        return 1
    cases = options.cases or list_cases()
    unknown = [c for c in cases if not (GOLDEN_DIR / c / "args").is_file()]
    if unknown:
        print(f"no such golden case: {', '.join(unknown)}")
        return 1
    results = [run_case(options.kforge, options.build_root, case) for case in cases]
    if len(cases) > 1:
        print(f"{results.count(True)} passed, {results.count(False)} failed")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
