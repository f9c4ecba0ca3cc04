#!/usr/bin/env python3
"""End-to-end tests of the kforge command line: the real binary, real files, real exit codes.

Each test_* function is one meson test (`meson test -C build e2e-<name>`, registered from --list).
Usage: test_cli.py --kforge BUILD/src/kforge [NAME...]   (all tests when no name is given)
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from nvcc_check import CHECK_OPT_FLAGS, find_nvcc

# The source tree: a kforge binary that is not installed uses its templates/ (KFORGE_BUILTIN_TEMPLATE_DIR).
ROOT = Path(__file__).resolve().parents[2]

KFORGE = None  # set by main()


class TestFailure(Exception):
    pass


def expect(condition, message):
    if not condition:
        raise TestFailure(message)


def expect_eq(actual, expected, what):
    if actual != expected:
        raise TestFailure(f"{what}:\n  expected: {expected!r}\n  actual:   {actual!r}")


class Result:
    def __init__(self, proc):
        self.code = proc.returncode
        self.stdout = proc.stdout.decode("utf-8", errors="replace")
        self.stderr = proc.stderr.decode("utf-8", errors="replace")

    def __repr__(self):
        return f"exit {self.code}\n--- stdout\n{self.stdout}--- stderr\n{self.stderr}"


def kforge(*args, cwd, env_extra=None):
    env = dict(os.environ)
    env.pop("NO_COLOR", None)
    env.update(env_extra or {})
    proc = subprocess.run([KFORGE, *args], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=60)
    return Result(proc)


def write(path, text):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def project(tmp):
    """A small render project: a template including a helper, and YAML data."""
    write(tmp / "t.j2", '{% include "inc.j2" %}\n{% for n in names %}\nint {{ n }};\n{% endfor %}\n')
    write(tmp / "inc.j2", "// header\n")
    write(tmp / "data.yaml", "names: [a, b]\n")
    return "// header\nint a;\nint b;\n"


def age(path, seconds=3600):
    """Moves a file's mtime into the past so that a rewrite is detectable whatever the clock resolution."""
    stamp = time.time() - seconds
    os.utime(path, (stamp, stamp))
    return os.stat(path).st_mtime_ns


# ----------------------------------------------------------------------------------------------------


def test_render_writes_output(tmp):
    expected = project(tmp)
    r = kforge("render", "t.j2", "--data", "data.yaml", "-o", "gen/deep/out.h", cwd=tmp)
    expect_eq(r.code, 0, f"exit code\n{r}")
    expect_eq((tmp / "gen/deep/out.h").read_text(), expected, "rendered file")
    expect_eq(r.stdout, "", "stdout")
    expect_eq(r.stderr, "", "stderr")
    leftovers = [p.name for p in (tmp / "gen/deep").iterdir() if p.name != "out.h"]
    expect_eq(leftovers, [], "files beside the output (temp files must not remain)")


def test_unchanged_output_keeps_file_and_mtime(tmp):
    project(tmp)
    expect_eq(kforge("render", "t.j2", "--data", "data.yaml", "-o", "out.h", cwd=tmp).code, 0, "first run")
    inode = os.stat(tmp / "out.h").st_ino
    stamp = age(tmp / "out.h")
    r = kforge("render", "t.j2", "--data", "data.yaml", "-o", "out.h", cwd=tmp)
    expect_eq(r.code, 0, f"second run\n{r}")
    expect_eq(os.stat(tmp / "out.h").st_mtime_ns, stamp, "mtime of an unchanged output")
    expect_eq(os.stat(tmp / "out.h").st_ino, inode, "inode of an unchanged output (it must not be replaced)")
    # A change in the data does rewrite it.
    write(tmp / "data.yaml", "names: [a, b, c]\n")
    expect_eq(kforge("render", "t.j2", "--data", "data.yaml", "-o", "out.h", cwd=tmp).code, 0, "third run")
    expect(os.stat(tmp / "out.h").st_mtime_ns != stamp, "a changed output must be rewritten")
    expect("int c;" in (tmp / "out.h").read_text(), "new contents")


def test_error_writes_nothing(tmp):
    project(tmp)
    write(tmp / "out.h", "previous contents\n")
    write(tmp / "bad.j2", "ok\n{{ missing_variable }}\n")
    r = kforge("render", "bad.j2", "--data", "data.yaml", "-o", "out.h", cwd=tmp)
    expect_eq(r.code, 1, f"exit code\n{r}")
    expect("bad.j2:2:4: error:" in r.stderr, f"located diagnostic\n{r}")
    expect_eq((tmp / "out.h").read_text(), "previous contents\n", "existing output after an error")
    r = kforge("render", "bad.j2", "--data", "data.yaml", "-o", "new/dir/out.h", "--depfile", "out.d", cwd=tmp)
    expect_eq(r.code, 1, "exit code")
    expect(not (tmp / "new").exists(), "an error must not create output directories")
    expect(not (tmp / "out.d").exists(), "an error must not write the depfile")
    # Bad data is an error too, and also writes nothing.
    write(tmp / "broken.yaml", "names: [a, b\n")
    r = kforge("render", "t.j2", "--data", "broken.yaml", "-o", "out.h", cwd=tmp)
    expect_eq(r.code, 1, f"exit code for malformed YAML\n{r}")
    expect("broken.yaml:" in r.stderr and "error: malformed YAML" in r.stderr, f"YAML diagnostic\n{r}")
    expect_eq((tmp / "out.h").read_text(), "previous contents\n", "existing output after a data error")
    expect(sorted(p.name for p in tmp.iterdir() if ".tmp." in p.name) == [], "no temp files left")


def test_check_reports_stale_outputs(tmp):
    expected = project(tmp)
    args = ["render", "t.j2", "--data", "data.yaml", "-o", "out.h"]
    # Missing output.
    r = kforge(*args, "--check", cwd=tmp)
    expect_eq(r.code, 1, f"--check with the output missing\n{r}")
    expect("missing file: out.h" in r.stdout, f"missing-file line\n{r}")
    expect(not (tmp / "out.h").exists(), "--check must not write")
    # Up to date.
    expect_eq(kforge(*args, cwd=tmp).code, 0, "render")
    r = kforge(*args, "--check", cwd=tmp)
    expect_eq((r.code, r.stdout), (0, ""), f"--check when up to date\n{r}")
    # Stale: a unified diff from the disk to the regenerated bytes, and the command that regenerates.
    write(tmp / "out.h", expected.replace("int b;", "int bee;"))
    stamp = age(tmp / "out.h")
    r = kforge(*args, "--check", cwd=tmp)
    expect_eq(r.code, 1, f"--check when stale\n{r}")
    expect("--- out.h (on disk)\n+++ out.h (regenerated)\n@@ -1,3 +1,3 @@\n // header\n int a;\n-int bee;\n+int b;\n"
           in r.stdout, f"unified diff\n{r}")
    expect_eq(os.stat(tmp / "out.h").st_mtime_ns, stamp, "--check must not touch the file")
    lines = r.stdout.splitlines()
    expect("regenerate with:" in lines, f"regenerate hint\n{r}")
    command = lines[lines.index("regenerate with:") + 1].strip()
    expect("--check" not in command, f"the regenerate command drops --check: {command}")
    # The printed command really regenerates.
    subprocess.run(command, shell=True, cwd=tmp, check=True)
    expect_eq((tmp / "out.h").read_text(), expected, "after running the printed command")
    expect_eq(kforge(*args, "--check", cwd=tmp).code, 0, "--check after regenerating")
    # --check and -o - make no sense together: a usage error.
    expect_eq(kforge("render", "t.j2", "--data", "data.yaml", "-o", "-", "--check", cwd=tmp).code, 2,
              "--check with -o -")


def test_depfile_lists_inputs_and_templates(tmp):
    project(tmp)
    write(tmp / "my dir/extra.yaml", "unused: $x#1\n")
    r = kforge("render", "t.j2", "--data", "data.yaml", "--data", "my dir/extra.yaml", "-o", "gen/out.h",
               "--depfile", "deps/out.d", cwd=tmp)
    expect_eq(r.code, 0, f"render\n{r}")
    expect_eq((tmp / "deps/out.d").read_text(),
              "gen/out.h: \\\n  t.j2 \\\n  data.yaml \\\n  my\\ dir/extra.yaml \\\n  inc.j2\n", "depfile")
    # The depfile is written on every run, also when no output changed (ninja deletes it after reading).
    (tmp / "deps/out.d").unlink()
    expect_eq(kforge("render", "t.j2", "--data", "data.yaml", "-o", "gen/out.h", "--depfile", "deps/out.d",
                     cwd=tmp).code, 0, "second render")
    expect((tmp / "deps/out.d").is_file(), "depfile rewritten when outputs were unchanged")
    # --depfile-target names the target; special characters are escaped.
    r = kforge("render", "t.j2", "--data", "data.yaml", "-o", "gen/out.h", "--depfile", "out.d",
               "--depfile-target", "stamp file$1#", cwd=tmp)
    expect_eq(r.code, 0, f"render with --depfile-target\n{r}")
    expect((tmp / "out.d").read_text().startswith("stamp\\ file$$1\\#: \\\n  t.j2 \\\n"), "depfile target")


def test_list_outputs_writes_nothing(tmp):
    project(tmp)
    r = kforge("render", "t.j2", "--data", "data.yaml", "-o", "gen/./out.h", "--list-outputs", cwd=tmp)
    expect_eq((r.code, r.stdout, r.stderr), (0, "gen/./out.h\n", ""), f"--list-outputs\n{r}")
    expect(not (tmp / "gen").exists(), "--list-outputs must not write")
    r = kforge("render", "t.j2", "--data", "data.yaml", "-o", "-", "--list-outputs", cwd=tmp)
    expect_eq((r.code, r.stdout), (0, ""), "standard output is not a file to list")
    r = kforge("render", "t.j2", "-o", "x", "--list-outputs", "--check", cwd=tmp)
    expect_eq(r.code, 2, "--list-outputs and --check exclude each other")


def test_stdout_output(tmp):
    expected = project(tmp)
    r = kforge("render", "t.j2", "--data", "data.yaml", "-o", "-", cwd=tmp)
    expect_eq((r.code, r.stdout, r.stderr), (0, expected, ""), f"-o -\n{r}")
    expect(not (tmp / "-").exists(), "-o - must not create a file named '-'")
    r = kforge("render", "t.j2", "--data", "data.yaml", "-o", "-", "--depfile", "d", cwd=tmp)
    expect_eq(r.code, 2, "--depfile with -o - needs --depfile-target")
    r = kforge("render", "t.j2", "--data", "data.yaml", "-o", "-", "--depfile", "d", "--depfile-target", "x",
               cwd=tmp)
    expect_eq(r.code, 0, f"--depfile-target with -o -\n{r}")
    expect((tmp / "d").read_text().startswith("x: \\\n"), "depfile for stdout output")


def test_usage_errors_exit_2(tmp):
    project(tmp)
    cases = [
        ["render", "t.j2", "--data", "data.yaml", "-o", "out.h", "--bogus"],
        ["render", "t.j2", "--data", "data.yaml"],  # -o is required
        ["render", "-o", "out.h"],  # TEMPLATE is required
        ["render", "t.j2", "-o", "out.h", "--color=sometimes"],
        ["render", "t.j2", "-o", "out.h", "--data-format", "xml"],
        ["no-such-command"],
        [],  # a command is required
    ]
    for args in cases:
        r = kforge(*args, cwd=tmp)
        expect_eq(r.code, 2, f"exit code of kforge {' '.join(args)}\n{r}")
        expect(r.stderr.startswith("kforge: error: "), f"usage message of kforge {' '.join(args)}\n{r}")
        expect("--help" in r.stderr, f"hint to --help\n{r}")
        expect(not (tmp / "out.h").exists(), "a usage error writes nothing")


def test_compile_cuda_only_flags(tmp):
    # --cudnn-workspace-mib sizes the cuDNN workspaces of --target cuda: refused elsewhere and out of range.
    case = ROOT / "tests/golden/compile-cuda-conv"
    base = ["compile", str(case / "program.yaml"), "--ops", str(case / "ops.yaml"), "--ops", str(case / "fusion.yaml"),
            "-o", "gen"]
    cases = [
        (base + ["--cudnn-workspace-mib", "64"], "--cudnn-workspace-mib needs --target cuda"),
        (base + ["--target", "cuda", "--cudnn-workspace-mib", "-1"], "--cudnn-workspace-mib"),
        (base + ["--target", "cuda", "--cudnn-workspace-mib", "70000"], "--cudnn-workspace-mib"),
        (base + ["--target", "cuda", "--cudnn-workspace-mib", "lots"], "--cudnn-workspace-mib"),
    ]
    for args, message in cases:
        r = kforge(*args, cwd=tmp)
        expect_eq(r.code, 2, f"exit code of kforge {' '.join(args)}\n{r}")
        expect(r.stderr.startswith("kforge: error: ") and message in r.stderr, f"usage message ({message})\n{r}")
        expect(not (tmp / "gen").exists(), "a usage error writes nothing")
    # 0 MiB: no scratch buffers, every convolution gets Scratch{} (only algorithms without a workspace).
    r = kforge(*base, "--target", "cuda", "--cudnn-workspace-mib", "0", cwd=tmp)
    expect_eq(r.code, 0, f"--cudnn-workspace-mib 0\n{r}")
    cu = [p for p in (tmp / "gen").glob("*.cu") if not p.name.endswith("_kernels.cu")]
    expect_eq(len(cu), 1, f"one host file in gen/: {sorted(p.name for p in (tmp / 'gen').iterdir())}")
    host = cu[0].read_text()
    expect("kforge::cuda_conv::Scratch{}" in host and "kforge::cuda_conv::Scratch{b." not in host,
           "no convolution has a scratch buffer with --cudnn-workspace-mib 0")


def test_help_and_version(tmp):
    r = kforge("--version", cwd=tmp)
    expect_eq(r.code, 0, "--version exit code")
    lines = r.stdout.splitlines()
    expect(len(lines) == 3 and lines[0].startswith("kforge ") and lines[0].split(" ")[1][0].isdigit(),
           f"--version: kforge's version, then the templates and runtime headers\n{r}")
    version = lines[0].split(" ")[1]
    templates = ROOT / "templates"
    expect(lines[1] == f"templates: {version} ({templates})", f"--version names the templates it uses\n{r}")
    runtime = (templates / "runtime" / "kforge_runtime.h").read_text()
    runtime_version = re.search(r"#define KFORGE_RUNTIME_VERSION ([0-9]+)", runtime).group(1)
    expect(lines[2].startswith(f"runtime headers: kforge_runtime.h {runtime_version}, kforge_multikernel.h "),
           f"--version gives the runtime header's version\n{r}")
    r = kforge("--help", cwd=tmp)
    expect_eq(r.code, 0, "--help exit code")
    expect("render" in r.stdout and "Exit codes" in r.stdout, f"--help lists commands and exit codes\n{r}")
    r = kforge("render", "--help", cwd=tmp)
    expect_eq(r.code, 0, "render --help exit code")
    for needle in ["TEMPLATE", "--data", "--data-format", "--output", "--template-dir", "--depfile",
                   "--depfile-target", "--check", "--list-outputs", "--no-version-stamp", "--color", "--werror",
                   "Examples:", "kforge render config.h.j2 --data config.yaml -o build/config.h", "no banner"]:
        expect(needle in r.stdout, f"render --help mentions {needle!r}\n{r}")


def test_color_only_when_asked_or_on_a_terminal(tmp):
    write(tmp / "bad.j2", "{{ nope }}\n")
    r = kforge("render", "bad.j2", "-o", "out", cwd=tmp)
    expect_eq(r.code, 1, "exit code")
    expect("\033[" not in r.stderr, f"no colour into a pipe\n{r}")
    r = kforge("render", "bad.j2", "-o", "out", "--color=always", cwd=tmp)
    expect("\033[" in r.stderr, f"colour with --color=always\n{r}")
    r = kforge("render", "bad.j2", "-o", "out", "--color", "never", cwd=tmp)
    expect("\033[" not in r.stderr, f"no colour with --color never\n{r}")


def test_data_formats_and_merging(tmp):
    write(tmp / "t.j2", "{{ a.x }} {{ a.y }} {{ b }}\n")
    write(tmp / "one.yaml", "a: {x: 1, y: 2}\nb: from-yaml\n")
    write(tmp / "two.txt", '{"a": {"y": 20}, "b": "from-json"}')
    r = kforge("render", "t.j2", "--data", "one.yaml", "--data", "two.txt", "-o", "-", cwd=tmp)
    expect_eq(r.code, 1, f"an unknown extension needs --data-format\n{r}")
    expect("--data-format" in r.stderr, f"hint\n{r}")
    r = kforge("render", "t.j2", "--data", "one.yaml", "--data", "two.txt", "--data-format", "json", "-o", "-",
               cwd=tmp)
    expect_eq(r.code, 1, f"--data-format json applies to every file (one.yaml is not JSON)\n{r}")
    write(tmp / "two.json", '{"a": {"y": 20}, "b": "from-json"}')
    r = kforge("render", "t.j2", "--data", "one.yaml", "--data", "two.json", "-o", "-", cwd=tmp)
    expect_eq((r.code, r.stdout), (0, "1 20 from-json\n"), f"deep merge, later wins\n{r}")
    r = kforge("render", "t.j2", "--data", "missing.yaml", "-o", "-", cwd=tmp)
    expect_eq(r.code, 1, "missing data file")
    expect("missing.yaml" in r.stderr, f"names the missing file\n{r}")


def test_template_dir_order(tmp):
    write(tmp / "src/t.j2", '{% include "part.j2" %}\n')
    write(tmp / "src/part.j2", "from the template's directory\n")
    write(tmp / "over/part.j2", "from --template-dir\n")
    r = kforge("render", "src/t.j2", "-o", "-", cwd=tmp)
    expect_eq((r.code, r.stdout), (0, "from the template's directory\n"), f"template dir\n{r}")
    r = kforge("render", "src/t.j2", "--template-dir", "over", "-o", "-", cwd=tmp)
    expect_eq((r.code, r.stdout), (0, "from --template-dir\n"), f"--template-dir wins\n{r}")
    # The template given on the command line is the one rendered, even if a --template-dir holds one
    # of the same name.
    write(tmp / "over/t.j2", "WRONG\n")
    r = kforge("render", "src/t.j2", "--template-dir", "over", "-o", "-", cwd=tmp)
    expect_eq((r.code, r.stdout), (0, "from --template-dir\n"), f"TEMPLATE is the file given\n{r}")


def test_sparse_op_files_in_command_line_order(tmp):
    """--ops and --sparse-ops files load in the order given; sparse ops keep their own names (`_sp`)."""
    write(tmp / "ops.yaml", "- op : relu\n  args : (Tensor x)\n  output : Tensor(out)\n"
                            "  infer_meta :\n    func : UnchangedInferMeta\n  kernel :\n    func : relu\n")
    write(tmp / "sparse.yaml", "- op : relu\n  args : (Tensor x)\n  output : Tensor(out)\n"
                               "  infer_meta :\n    func : UnchangedInferMeta\n  kernel :\n"
                               "    func : relu_coo{sparse_coo -> sparse_coo}, relu_csr{sparse_csr -> sparse_csr}\n")
    order = lambda out: [line.split('"')[1] for line in out.splitlines() if line.startswith('"pd_op.')]
    r = kforge("lint", "--ops", "ops.yaml", "--sparse-ops", "sparse.yaml", "--print-signatures", cwd=tmp)
    expect_eq((r.code, order(r.stdout)), (0, ["pd_op.relu", "pd_op.relu_coo_sp", "pd_op.relu_csr_sp"]),
              f"dense file first\n{r}")
    r = kforge("lint", "--sparse-ops", "sparse.yaml", "--ops", "ops.yaml", "--print-signatures", cwd=tmp)
    expect_eq((r.code, order(r.stdout)), (0, ["pd_op.relu_coo_sp", "pd_op.relu_csr_sp", "pd_op.relu"]),
              f"sparse file first\n{r}")
    # Given with --ops, the sparse file repeats `relu`: an error that says to use --sparse-ops.
    r = kforge("lint", "--ops", "ops.yaml", "--ops", "sparse.yaml", "--color", "never", cwd=tmp)
    expect(r.code == 1 and "redefinition of op 'relu'" in r.stderr and "--sparse-ops" in r.stderr,
           f"misuse is explained\n{r}")
    for command in ["lint", "ops", "compile"]:
        r = kforge(command, "--help", cwd=tmp)
        expect(r.code == 0 and "--sparse-ops" in r.stdout, f"{command} --help mentions --sparse-ops\n{r}")
    # `kforge ops` lists the sparse op as not generated, by its op_gen.py key.
    r = kforge("ops", "--ops", "ops.yaml", "--sparse-ops", "sparse.yaml", "-o", "gen", "--no-version-stamp",
               cwd=tmp)
    expect_eq(r.code, 0, f"kforge ops with a sparse file\n{r}")
    header = (tmp / "gen" / "ops_api.h").read_text()
    expect("kforge::Status relu(" in header and
           "//   relu_sp (../sparse.yaml:1): it is a sparse op: the generated API takes dense tensors only" in header,
           f"sparse op listed as not generated\n{header[-600:]}")


# --- hostile inputs (issue 31; docs/fuzzing.md, "Limits") ---------------------------------------------

STATIC = ROOT / "tests" / "golden" / "compile-static"


def kforge_timed(*args, cwd):
    """kforge with its wall time and the peak memory (KiB) of every child so far."""
    start = time.monotonic()
    r = kforge(*args, cwd=cwd)
    r.seconds = time.monotonic() - start
    import resource
    r.max_rss_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return r


def expect_refused(r, path, reason, what):
    """One located error line `path: error: ... reason`, exit 1, at once, no internal error."""
    errors = [line for line in r.stderr.splitlines() if "error:" in line]
    expect(r.code == 1 and len(errors) == 1 and errors[0].startswith(f"{path}: error: ") and reason in errors[0] and
           "internal error" not in r.stderr, f"{what}: expected one error '{path}: error: ...{reason}'\n{r}")
    expect(r.seconds < 5, f"{what}: took {r.seconds:.1f} s")


def hostile_paths(tmp):
    """A directory, a FIFO without a writer, a socket, a device and a sparse file over the 1 GiB default."""
    import socket
    (tmp / "dir.yaml").mkdir()
    os.mkfifo(tmp / "fifo.yaml")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(tmp / "sock.yaml"))
    with open(tmp / "big.yaml", "wb") as f:
        f.truncate((1 << 30) + 1)
    return sock, [("dir.yaml", "is a directory"), ("fifo.yaml", "not a regular file (a FIFO)"),
                  ("sock.yaml", "not a regular file (a socket)"), ("/dev/zero", "not a regular file (a character device)"),
                  ("big.yaml", "larger than 1073741824 bytes")]


def test_hostile_special_files_as_inputs(tmp):
    """Every input of every command, given a directory, FIFO, socket, device or over-limit file: one located
    error at once (no hang on the FIFO, no endless read of /dev/zero, no bad_alloc on the directory)."""
    sock, paths = hostile_paths(tmp)
    write(tmp / "t.j2", "{{ x }}\n")
    write(tmp / "data.yaml", "x: 1\n")
    program, ops, compat = STATIC / "program.yaml", STATIC / "ops.yaml", STATIC / "op_compat.yaml"
    for path, reason in paths:
        commands = {
            "compile PROGRAM": ["compile", path, "--ops", ops, "-o", "gen", "--name", "n"],
            "compile --ops": ["compile", program, "--ops", path, "-o", "gen", "--name", "n"],
            "compile --op-compat": ["compile", program, "--ops", ops, "--op-compat", path, "-o", "gen", "--name", "n"],
            "ops --ops": ["ops", "--ops", path, "-o", "gen"],
            "ops --sparse-ops": ["ops", "--ops", ops, "--sparse-ops", path, "-o", "gen"],
            "lint --ops": ["lint", "--ops", path],
            "lint PROGRAM": ["lint", path, "--ops", ops],
            "render TEMPLATE": ["render", path, "--data", "data.yaml", "-o", "out.txt"],
            "render --data": ["render", "t.j2", "--data", path, "--data-format", "yaml", "-o", "out.txt"],
        }
        for what, args in commands.items():
            r = kforge_timed(*args, "--color", "never", cwd=tmp)
            expect_refused(r, path, reason, f"{what} {path}")
            expect(not (tmp / "gen").exists() and not (tmp / "out.txt").exists(), f"{what} {path}: wrote outputs")
    sock.close()
    # A template found on the search path that is not a regular file: located at the include.
    os.mkdir(tmp / "tdir")
    os.mkfifo(tmp / "tdir" / "inc.j2")
    write(tmp / "main.j2", '{% include "inc.j2" %}\n')
    r = kforge_timed("render", "main.j2", "--template-dir", "tdir", "-o", "out.txt", "--color", "never", cwd=tmp)
    expect(r.code == 1 and r.seconds < 5 and "main.j2:1:" in r.stderr and "not a regular file (a FIFO)" in r.stderr,
           f"a FIFO on the template search path\n{r}")


def test_hostile_input_size_limit(tmp):
    """--max-input-bytes: lowers or raises the 1 GiB limit of every input; usage errors outside 1..4 GiB - 1."""
    write(tmp / "t.j2", "{{ x }}\n")
    write(tmp / "data.yaml", "x: " + "y" * 2000 + "\n")
    r = kforge_timed("render", "t.j2", "--data", "data.yaml", "-o", "out.txt", "--max-input-bytes", "1000",
                     "--color", "never", cwd=tmp)
    expect_refused(r, "data.yaml", "it is larger than 1000 bytes (--max-input-bytes)", "a data file over the limit")
    r = kforge("render", "t.j2", "--data", "data.yaml", "-o", "out.txt", "--max-input-bytes", "4096", cwd=tmp)
    expect_eq(r.code, 0, f"a data file under a raised limit\n{r}")
    for bad in ["0", "4294967296", "-1", "lots"]:
        r = kforge("render", "t.j2", "-o", "out.txt", "--max-input-bytes", bad, cwd=tmp)
        expect_eq(r.code, 2, f"--max-input-bytes {bad}\n{r}")
    r = kforge("lint", "--ops", STATIC / "ops.yaml", "--max-input-bytes", "100", "--color", "never", cwd=tmp)
    expect(r.code == 1 and "larger than 100 bytes" in r.stderr, f"lint takes --max-input-bytes too\n{r}")
    # A symlink to a regular file is still read.
    os.symlink(tmp / "data.yaml", tmp / "link.yaml")
    r = kforge("render", "t.j2", "--data", "link.yaml", "-o", "out.txt", cwd=tmp)
    expect_eq(r.code, 0, f"a symlink to a regular file\n{r}")


def alias_bomb(levels=10, width=10, indent=""):
    """The "billion laughs": each anchor repeats the previous one `width` times."""
    lines = [f"{indent}a0: &a0 [" + ", ".join(['"lol"'] * width) + "]"]
    for i in range(1, levels):
        lines.append(f"{indent}a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


def test_hostile_yaml_alias_bombs(tmp):
    """Alias expansion is bounded in every YAML reader: the error is at the alias, with a note at its anchor, in a
    fraction of a second and far below the memory the expanded tree would take."""
    program = STATIC / "program.yaml"
    write(tmp / "t.j2", "{{ a9 | length }}\n")
    write(tmp / "bomb.yaml", alias_bomb())
    write(tmp / "program.yaml", program.read_text() + "bomb:\n" + alias_bomb(indent="  "))
    write(tmp / "ops.yaml", (STATIC / "ops.yaml").read_text() + "- bomb:\n" + alias_bomb(indent="    "))
    write(tmp / "self.yaml", "a: &x [1, *x]\n")
    cases = [
        (["render", "t.j2", "--data", "bomb.yaml", "-o", "out.txt"], "bomb.yaml", "past 32 MiB"),
        (["render", "t.j2", "--data", "self.yaml", "-o", "out.txt"], "self.yaml", "used inside its own anchor"),
        (["compile", "program.yaml", "--ops", STATIC / "ops.yaml", "-o", "gen", "--name", "n"], "program.yaml",
         "past 32 MiB"),
        (["lint", "--ops", "ops.yaml"], "ops.yaml", "past 32 MiB"),
    ]
    for args, path, message in cases:
        r = kforge_timed(*args, "--color", "never", cwd=tmp)
        errors = [line for line in r.stderr.splitlines() if "error:" in line]
        expect(r.code == 1 and len(errors) == 1 and re.match(rf"{re.escape(path)}:\d+:\d+: error: alias '\*a?[\dx]+'",
                                                             errors[0]) and message in errors[0] and
               re.search(rf"{re.escape(path)}:\d+:\d+: note: its anchor", r.stderr), f"{args}\n{r}")
        expect(r.seconds < 5, f"{args}: took {r.seconds:.1f} s")
        expect(r.max_rss_kib < 512 * 1024, f"{args}: peak memory {r.max_rss_kib} KiB")


def test_hostile_depfile_all_or_nothing(tmp):
    """The depfile is written with the outputs or not at all: a depfile that cannot be written is refused before
    any output is touched, located at its path."""
    project(tmp)
    (tmp / "dep.d").mkdir()
    r = kforge("render", "t.j2", "--data", "data.yaml", "-o", "out.h", "--depfile", "dep.d", "--color", "never",
               cwd=tmp)
    errors = [line for line in r.stderr.splitlines() if "error:" in line]
    expect(r.code == 1 and errors == ["dep.d: error: cannot write the depfile: it is a directory"],
           f"a depfile that is a directory\n{r}")
    expect(not (tmp / "out.h").exists(), "no output may be written when the depfile cannot be")
    write(tmp / "blocker", "a file\n")
    r = kforge("render", "t.j2", "--data", "data.yaml", "-o", "out.h", "--depfile", "blocker/out.d", "--color",
               "never", cwd=tmp)
    expect(r.code == 1 and r.stderr.startswith("blocker/out.d: error: cannot write the depfile:") and
           not (tmp / "out.h").exists(), f"a depfile below a regular file\n{r}")
    r = kforge("render", "t.j2", "--data", "data.yaml", "-o", "out.h", "--depfile", "out.h", "--color", "never",
               cwd=tmp)
    expect(r.code == 1 and r.stderr.startswith("out.h: error: the depfile is also an output of this command") and
           not (tmp / "out.h").exists(), f"the depfile is the output\n{r}")
    r = kforge("render", "t.j2", "--data", "data.yaml", "-o", "out.h", "--depfile", "ok.d", cwd=tmp)
    expect(r.code == 0 and (tmp / "ok.d").read_text().startswith("out.h:"), f"a good depfile\n{r}")
    expect(sorted(p.name for p in tmp.iterdir() if ".tmp." in p.name) == [], "no temp files left")


def compile_program(tmp, program, out, name, namespace, *extra, ops=None):
    """kforge compile PROGRAM into tmp/out as class `name` (in `namespace` when not None); fails the test on an error."""
    if ops is None:
        ops = ["--ops", str(ROOT / "kernels/ops.yaml"), "--ops", str(ROOT / "kernels/fusion.yaml"),
               "--op-compat", str(ROOT / "kernels/op_compat.yaml")]
    args = ["compile", str(program), *ops, "-o", out, "--name", name, *extra]
    if namespace is not None:
        args += ["--namespace", namespace]
    r = kforge(*args, cwd=tmp)
    expect_eq(r.code, 0, f"kforge {' '.join(args)}\n{r}")


def compile_one_unit(tmp, unit, includes, uses, command):
    """Writes tmp/unit #including `includes` (then a function naming the classes `uses`) and compiles it alone."""
    text = "".join(f'#include "{path}"\n' for path in includes)
    text += "\nvoid kforge_e2e_use() {\n" + "".join(f"  {cls} m{i};\n" for i, cls in enumerate(uses)) + "}\n"
    write(tmp / unit, text)
    return subprocess.run([*command, unit, "-o", unit + ".o"], cwd=tmp, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, timeout=600)


GXX = ["g++", "-std=c++17", "-Wall", "-Wextra", "-Werror", "-c"]
NVCC = find_nvcc()  # None when there is none: the nvcc part is skipped
ADD = ROOT / "tests/paddle/add_float32/inference.json"
ABS = ROOT / "tests/paddle/abs_float32/inference.json"


def test_compile_namespace_one_translation_unit(tmp):
    # --namespace: two generated programs #included into one .cc compile together (a unity build): different
    # names in different namespaces, and the same --name in two namespaces from two directories (each NAME.cc
    # includes its own "NAME.h" by its directory; the header guards name the namespace).
    compile_program(tmp, ADD, "a", "a", "p1")
    compile_program(tmp, ABS, "b", "b", "zoo::p2")
    r = compile_one_unit(tmp, "ab.cc", ["a/a.cc", "b/b.cc"], ["p1::a", "zoo::p2::b"], GXX)
    expect_eq(r.returncode, 0, f"a.cc and b.cc in one translation unit\n{r.stdout.decode()}")
    compile_program(tmp, ADD, "m1", "model", "p1")
    compile_program(tmp, ABS, "m2", "model", "p2")
    r = compile_one_unit(tmp, "same_name.cc", ["m1/model.cc", "m2/model.cc"], ["p1::model", "p2::model"], GXX)
    expect_eq(r.returncode, 0, f"two classes `model` in one translation unit\n{r.stdout.decode()}")
    # Fused loops, multi-kernel dispatchers and trace hooks (their macros are the same in every program).
    fused = ROOT / "tests/golden/compile-fused-static"
    fused_ops = ["--ops", str(fused / "ops.yaml"), "--op-compat", str(fused / "op_compat.yaml")]
    for out, namespace in [("f1", "p1"), ("f2", "p2")]:
        compile_program(tmp, fused / "program.yaml", out, "model", namespace, "--multi-kernel-hints", "64,4096",
                        "--trace-hooks", ops=fused_ops)
    r = compile_one_unit(tmp, "fused.cc", ["f1/model.cc", "f2/model.cc", "m1/model.cc"],
                         ["p1::model", "p2::model"], GXX)
    expect(r.returncode != 0, "f1/model.cc and m1/model.cc are both p1::model: one translation unit cannot hold both")
    # Each directory has its own copy of the runtime headers; GCC's `#pragma once` takes copies written at
    # different times for different files, so the headers need include guards (a batch of tests/paddle fixtures
    # built as one unit fell back to one build per case over this).
    for header in (tmp / "f1").glob("kforge_*.h"):
        os.utime(header, (header.stat().st_atime, header.stat().st_mtime - 100))
    r = compile_one_unit(tmp, "fused.cc", ["f1/model.cc", "f2/model.cc"], ["p1::model", "p2::model"], GXX)
    expect_eq(r.returncode, 0, f"fused programs in one translation unit\n{r.stdout.decode()}")
    # Without --namespace the same two programs collide (what the flag is for).
    compile_program(tmp, ADD, "n1", "a", None)
    compile_program(tmp, ABS, "n2", "b", None)
    r = compile_one_unit(tmp, "plain.cc", ["n1/a.cc", "n2/b.cc"], ["a", "b"], GXX)
    expect(r.returncode != 0, "without --namespace two programs' helpers collide in one translation unit")


def test_compile_namespace_usage_errors(tmp):
    # The column of the part at fault in " --namespace NS" (what the caret line shows).
    cases = [("1x", 13, "starts with a digit"), ("class", 13, "is a C++ keyword"), ("a::b-c", 17, "not a C++ identifier"),
             ("a::", 16, "cannot end with '::'"), ("::a", 13, "cannot start with '::'"), ("a::::b", 16, "empty name"),
             ("a::std", 16, "the generated code uses"), ("a::_B", 16, "reserved"), ("", 13, "empty")]
    for namespace, column, reason in cases:
        r = kforge("compile", str(ADD), "--ops", str(ROOT / "kernels/ops.yaml"), "-o", "gen", "--namespace", namespace,
                   cwd=tmp)
        expect_eq(r.code, 2, f"exit code of --namespace {namespace!r}\n{r}")
        expect(r.stderr.startswith(f"<command line>:1:{column}: error: --namespace '{namespace}' is not a C++ "
                                   f"namespace: ") and reason in r.stderr.splitlines()[0],
               f"located message for --namespace {namespace!r} ({reason}, column {column})\n{r}")
        expect(not (tmp / "gen").exists(), "a usage error writes nothing")


def test_compile_cuda_namespace_one_translation_unit(tmp):
    # The same with --target cuda (NAME.cu and NAME_kernels.cu of both programs in one .cu), compiled by nvcc when
    # the toolkit is there. The GEMM programs copy kforge_gemm*.cuh into both directories: the copies are told apart
    # by GCC's #pragma once (their mtimes differ here), so they must have include guards.
    cuda = ["--target", "cuda"]
    compile_program(tmp, ADD, "a", "a", "p1", *cuda)
    compile_program(tmp, ABS, "b", "b", "zoo::p2", *cuda)
    compile_program(tmp, ADD, "m1", "model", "p1", *cuda)
    compile_program(tmp, ABS, "m2", "model", "p2", *cuda, "--cuda-graph")
    gemm = ROOT / "tests/golden/compile-cuda-gemm-multikernel"
    gemm_ops = ["--ops", str(gemm / "ops.yaml")]
    compile_program(tmp, gemm / "program.yaml", "g1", "model", "p1", *cuda, "--multi-kernel-hints", "64,256,4096",
                    ops=gemm_ops)
    compile_program(tmp, gemm / "program.yaml", "g2", "model", "p2", *cuda, "--cuda-graph", ops=gemm_ops)
    for header in (tmp / "g2").glob("*.cuh"):
        age(header)
    if NVCC is None:
        print("SKIP the nvcc part: no nvcc ($NVCC, PATH, /usr/local/cuda/bin) (generated only)")
        return
    command = [NVCC, "-arch=sm_90", "-std=c++17", *CHECK_OPT_FLAGS, "-Werror", "all-warnings", "-c"]
    units = [("ab.cu", ["a/a.cu", "a/a_kernels.cu", "b/b.cu", "b/b_kernels.cu"], ["p1::a", "zoo::p2::b"]),
             ("same_name.cu", ["m1/model.cu", "m1/model_kernels.cu", "m2/model.cu", "m2/model_kernels.cu"],
              ["p1::model", "p2::model"]),
             ("gemm.cu", ["g1/model.cu", "g1/model_kernels.cu", "g2/model.cu", "g2/model_kernels.cu"],
              ["p1::model", "p2::model"])]
    for unit, includes, uses in units:
        r = compile_one_unit(tmp, unit, includes, uses, command)
        expect_eq(r.returncode, 0, f"nvcc {unit} ({', '.join(includes)})\n{r.stdout.decode()}")


# ----------------------------------------------------------------------------------------------------


def all_tests():
    return {name[len("test_"):]: fn for name, fn in sorted(globals().items())
            if name.startswith("test_") and callable(fn)}


def main():
    global KFORGE
    parser = argparse.ArgumentParser()
    parser.add_argument("--kforge")
    parser.add_argument("--list", action="store_true")
    parser.add_argument("names", nargs="*")
    options = parser.parse_args()
    tests = all_tests()
    if options.list:
        print("\n".join(tests))
        return 0
    KFORGE = str(Path(options.kforge).resolve())
    names = options.names or list(tests)
    failed = 0
    for name in names:
        with tempfile.TemporaryDirectory(prefix=f"kforge-e2e-{name}-") as tmp:
            try:
                tests[name](Path(tmp))
                print(f"PASS {name}")
            except TestFailure as failure:
                failed += 1
                print(f"FAIL {name}: {failure}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
