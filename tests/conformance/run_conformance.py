#!/usr/bin/python3
"""Jinja2 conformance suite for kforge's template dialect.

cases/<NNN_name>/       template.j2 (the entry), optional extra templates, data.json or data.yaml.
                        Rendered by Python's jinja2 (trim_blocks, lstrip_blocks, keep_trailing_newline,
                        StrictUndefined) and by `kforge render`; the bytes must be identical.
deviations/<name>/      template.j2, data.json and expected.txt (stdout, exit 0) or expected.stderr
                        (stderr, non-zero exit; expected.exit holds the code when it is not 1).
                        Checked against kforge only: these are the documented deliberate deviations
                        (docs/templates-deviations.md).

Usage: run_conformance.py [KFORGE] [--case SUBSTRING]... [--jinja-only] [--show] [--bless]
"""

import argparse
import difflib
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CASES_DIR = os.path.join(HERE, "cases")
DEVIATIONS_DIR = os.path.join(HERE, "deviations")
TIMEOUT_S = 20


def fail_setup(message):
    print("run_conformance.py: error: " + message, file=sys.stderr)
    sys.exit(2)


try:
    import jinja2
except ImportError:
    jinja2 = None


def visible(data):
    """repr() of the decoded bytes: every space, tab and newline can be seen."""
    return repr(data.decode("utf-8", errors="backslashreplace"))


def diff_text(expected, actual, expected_name, actual_name):
    exp_lines = expected.decode("utf-8", errors="backslashreplace").splitlines(keepends=True)
    act_lines = actual.decode("utf-8", errors="backslashreplace").splitlines(keepends=True)
    # repr each line so trailing whitespace and missing final newlines show in the diff.
    lines = difflib.unified_diff([repr(l) + "\n" for l in exp_lines], [repr(l) + "\n" for l in act_lines],
                                 fromfile=expected_name, tofile=actual_name, n=2)
    out = "".join(lines)
    limit = 4000
    return out if len(out) <= limit else out[:limit] + "... (diff truncated)\n"


def data_file(case_dir):
    for name in ("data.json", "data.yaml"):
        path = os.path.join(case_dir, name)
        if os.path.exists(path):
            return name
    return None


def load_data(case_dir):
    name = data_file(case_dir)
    if name is None:
        return {}
    path = os.path.join(case_dir, name)
    with open(path, encoding="utf-8") as fh:
        if name.endswith(".json"):
            return json.load(fh)
        try:
            import yaml
        except ImportError:
            raise RuntimeError("%s needs PyYAML, which /usr/bin/python3 lacks" % name)
        return yaml.safe_load(fh) or {}


def refuse_deviation_values(value):
    """jinja2 `finalize` hook: the cases must not print what kforge prints differently on purpose."""
    if value is None or isinstance(value, (bool, list, tuple, dict)):
        raise ValueError("case prints %r (a documented deviation); use a filter or test instead" % (value,))
    if jinja2 is not None and isinstance(value, jinja2.Undefined):
        return value
    if hasattr(value, "__iter__") and not isinstance(value, str):
        raise ValueError("case prints an iterator/generator; join it or pass it through |list|join")
    return value


def render_jinja(case_dir):
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(case_dir),
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
        finalize=refuse_deviation_values,
    )
    return env.get_template("template.j2").render(load_data(case_dir)).encode("utf-8")


def kforge_command(kforge, case_dir):
    command = [kforge, "render", "template.j2", "--template-dir", "."]
    name = data_file(case_dir)
    if name is not None:
        command += ["--data", name]
    return command + ["-o", "-"]


def run_kforge(kforge, case_dir):
    env = dict(os.environ)
    env.pop("CLICOLOR_FORCE", None)
    env["NO_COLOR"] = "1"
    proc = subprocess.run(kforge_command(kforge, case_dir), cwd=case_dir, stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=TIMEOUT_S, env=env)
    return proc.returncode, proc.stdout, proc.stderr


def list_dirs(root, filters):
    if not os.path.isdir(root):
        return []
    names = sorted(n for n in os.listdir(root) if os.path.isdir(os.path.join(root, n)))
    if filters:
        names = [n for n in names if any(f in n for f in filters)]
    return names


def check_case(name, kforge, jinja_only, show):
    case_dir = os.path.join(CASES_DIR, name)
    try:
        expected = render_jinja(case_dir)
    except Exception as exc:  # the case itself is broken: report it as a failure of the case
        return ["jinja2 failed to render the case: %s: %s" % (type(exc).__name__, exc)]
    if show:
        print("--- %s (jinja2)\n%s" % (name, visible(expected)))
    if jinja_only:
        return []
    try:
        code, out, err = run_kforge(kforge, case_dir)
    except subprocess.TimeoutExpired:
        return ["kforge timed out after %d s" % TIMEOUT_S]
    problems = []
    if code != 0:
        problems.append("kforge exited %d; stderr:\n%s" % (code, err.decode("utf-8", "backslashreplace")))
    if out != expected:
        problems.append("output differs\n  jinja2: %s\n  kforge: %s\n%s" % (
            visible(expected), visible(out), diff_text(expected, out, "jinja2", "kforge")))
    return problems


def check_deviation(name, kforge, bless):
    case_dir = os.path.join(DEVIATIONS_DIR, name)
    stdout_path = os.path.join(case_dir, "expected.txt")
    stderr_path = os.path.join(case_dir, "expected.stderr")
    exit_path = os.path.join(case_dir, "expected.exit")
    expects_error = os.path.exists(stderr_path)
    if not expects_error and not os.path.exists(stdout_path):
        return ["neither expected.txt nor expected.stderr exists"]
    try:
        code, out, err = run_kforge(kforge, case_dir)
    except subprocess.TimeoutExpired:
        return ["kforge timed out after %d s" % TIMEOUT_S]
    if bless:
        with open(stderr_path if expects_error else stdout_path, "wb") as fh:
            fh.write(err if expects_error else out)
        if expects_error and code not in (0, 1):
            with open(exit_path, "w") as fh:
                fh.write("%d\n" % code)
        return []
    problems = []
    if expects_error:
        want_code = 1
        if os.path.exists(exit_path):
            with open(exit_path) as fh:
                want_code = int(fh.read().strip())
        with open(stderr_path, "rb") as fh:
            want = fh.read()
        if code != want_code:
            problems.append("kforge exited %d, expected %d" % (code, want_code))
        if out:
            problems.append("kforge wrote to stdout on error: %s" % visible(out))
        got, got_name = err, "kforge stderr"
    else:
        with open(stdout_path, "rb") as fh:
            want = fh.read()
        if code != 0:
            problems.append("kforge exited %d; stderr:\n%s" % (code, err.decode("utf-8", "backslashreplace")))
        got, got_name = out, "kforge stdout"
    if got != want:
        problems.append("%s differs\n  expected: %s\n  actual:   %s\n%s" % (
            got_name, visible(want), visible(got), diff_text(want, got, "expected", "kforge")))
    return problems


def main():
    parser = argparse.ArgumentParser(description="kforge vs. Python jinja2 conformance suite")
    parser.add_argument("kforge", nargs="?", help="path to the kforge binary (not needed with --jinja-only)")
    parser.add_argument("--case", action="append", default=[], metavar="NAME",
                        help="run only cases whose directory name contains NAME (repeatable)")
    parser.add_argument("--jinja-only", action="store_true",
                        help="only render the cases with jinja2, to validate the cases themselves")
    parser.add_argument("--show", action="store_true", help="print jinja2's output of every case")
    parser.add_argument("--bless", action="store_true",
                        help="rewrite the deviations' expected files from kforge's actual output (review the diff!)")
    args = parser.parse_args()

    if jinja2 is None:
        fail_setup("%s has no jinja2 module (Debian: python3-jinja2)" % sys.executable)
    if not args.jinja_only:
        if not args.kforge:
            fail_setup("the kforge binary is required unless --jinja-only is given")
        args.kforge = os.path.abspath(args.kforge)
        if not os.access(args.kforge, os.X_OK):
            fail_setup("%s is not an executable" % args.kforge)
    if args.bless and os.environ.get("CI"):
        fail_setup("--bless is refused when CI is set")

    failures = []
    cases = list_dirs(CASES_DIR, args.case)
    for name in cases:
        problems = check_case(name, args.kforge, args.jinja_only, args.show)
        if problems:
            failures.append(name)
            print("FAIL cases/%s\n  %s\n" % (name, "\n  ".join(p.rstrip("\n").replace("\n", "\n  ") for p in problems)))

    deviations = [] if args.jinja_only else list_dirs(DEVIATIONS_DIR, args.case)
    for name in deviations:
        problems = check_deviation(name, args.kforge, args.bless)
        if problems:
            failures.append("deviations/" + name)
            print("FAIL deviations/%s\n  %s\n" % (name, "\n  ".join(p.rstrip("\n").replace("\n", "\n  ") for p in problems)))

    total = len(cases) + len(deviations)
    print("conformance: %d passed, %d failed (%d cases%s)" % (
        total - len(failures), len(failures), len(cases),
        ", jinja2 only" if args.jinja_only else ", %d deviations" % len(deviations)))
    if failures:
        print("failed: " + " ".join(failures))
        print("rerun one with: %s %s --case NAME" % (sys.argv[0], args.kforge or "--jinja-only"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
