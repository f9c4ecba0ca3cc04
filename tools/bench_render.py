#!/usr/bin/python3
"""Benchmark: kforge render vs Python jinja2 on a 5,000-item loop of macros and filters.

Both engines render the same template with the same data (JSON) in the same run, several times; the
medians are compared. Three timings:
  kforge           `kforge render` as a process: read the data, parse and check the template, render,
                   write the file (what a build step costs)
  jinja2 process   the same job as a Python process: import jinja2, read the data, compile, render, write
  jinja2 render    jinja2's render() call alone, in-process, template already compiled: a lower bound
                   for jinja2 that excludes start-up, data loading and compilation
The outputs of kforge and jinja2 are compared byte for byte first, so both did the same work.
Each timing is reported as wall-clock time and as CPU time (user + system, from the child's rusage);
on a loaded machine the CPU times are the fairer comparison.

Usage: tools/bench_render.py [--kforge build/src/kforge] [--items 5000] [--repeat 7]
Run it with /usr/bin/python3 (Debian's python3-jinja2).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

TEMPLATE = """\
{% macro param(p) -%}
{{ p.type | lower }} {{ p.name | replace("-", "_") }}{% if p.default is defined %} = {{ p.default }}{% endif %}
{%- endmacro %}
{% macro signature(fn) -%}
{{ fn.ret | default("void") }} {{ fn.name | lower | replace(".", "_") }}({% for p in fn.params %}{{ param(p) }}{{ ", " if not loop.last }}{% endfor %})
{%- endmacro %}
// {{ items | length }} functions
{% for fn in items %}
/// {{ fn.doc | trim | capitalize }} ({{ loop.index }} of {{ loop.length }})
{{ signature(fn) }};
{% if fn.tags %}
// tags: {{ fn.tags | map("upper") | join(", ") }}
{% endif %}
{% endfor %}
"""

JINJA_PROCESS = """\
import json, sys, jinja2
env = jinja2.Environment(loader=jinja2.FileSystemLoader(sys.argv[1]), trim_blocks=True, lstrip_blocks=True,
                         keep_trailing_newline=True, undefined=jinja2.StrictUndefined)
with open(sys.argv[2]) as f:
    data = json.load(f)
out = env.get_template("bench.j2").render(**data)
with open(sys.argv[3], "w", newline="") as f:
    f.write(out)
"""


def make_data(n):
    types = ["Float", "INT64", "double", "Bool"]
    items = []
    for i in range(n):
        fn = {
            "name": f"Op.Kernel{i}",
            "doc": f"  computes step {i} of the pipeline  ",
            "params": [
                {"name": f"in-{j}", "type": types[(i + j) % len(types)]} for j in range(3)
            ],
            "tags": ["fast", f"group{i % 7}"] if i % 3 else [],
        }
        if i % 2:
            fn["ret"] = "int"
            fn["params"][1]["default"] = i
        items.append(fn)
    return {"items": items}


def run_child(cmd):
    """Runs a command; returns (wall seconds, CPU seconds of the child)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"command failed ({proc.returncode}): {' '.join(cmd)}")
    return wall, usage.ru_utime + usage.ru_stime


def in_process(fn):
    """Runs fn in this process; returns (wall seconds, CPU seconds)."""
    start_wall, start_cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - start_wall, time.process_time() - start_cpu


def medians(fn, repeat):
    samples = [fn() for _ in range(repeat)]
    return statistics.median(s[0] for s in samples), statistics.median(s[1] for s in samples)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kforge", default=str(ROOT / "build" / "src" / "kforge"))
    parser.add_argument("--items", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=7)
    options = parser.parse_args()
    try:
        import jinja2
    except ImportError:
        sys.exit("jinja2 is missing: run with /usr/bin/python3 (Debian's python3-jinja2)")
    if not os.access(options.kforge, os.X_OK):
        sys.exit(f"kforge binary not found at {options.kforge} (build it, or pass --kforge)")

    with tempfile.TemporaryDirectory(prefix="kforge-bench-") as tmp:
        tmp = Path(tmp)
        (tmp / "bench.j2").write_text(TEMPLATE)
        data = make_data(options.items)
        (tmp / "data.json").write_text(json.dumps(data))
        (tmp / "jinja.py").write_text(JINJA_PROCESS)
        kforge_cmd = [options.kforge, "render", str(tmp / "bench.j2"), "--data", str(tmp / "data.json"),
                      "-o", str(tmp / "kforge.out")]
        jinja_cmd = [sys.executable, str(tmp / "jinja.py"), str(tmp), str(tmp / "data.json"), str(tmp / "jinja.out")]

        def run_kforge():
            # Remove the output so every run really writes (write-if-changed would skip the write).
            (tmp / "kforge.out").unlink(missing_ok=True)
            return run_child(kforge_cmd)

        def run_jinja_process():
            return run_child(jinja_cmd)

        env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(tmp)), trim_blocks=True, lstrip_blocks=True,
                                 keep_trailing_newline=True, undefined=jinja2.StrictUndefined)
        template = env.get_template("bench.j2")

        run_kforge()
        run_jinja_process()
        kforge_out = (tmp / "kforge.out").read_bytes()
        jinja_out = (tmp / "jinja.out").read_bytes()
        if kforge_out != jinja_out:
            sys.exit("kforge and jinja2 outputs differ; the benchmark would compare different work")
        if template.render(**data).encode() != jinja_out:
            sys.exit("in-process jinja2 output differs from the jinja2 process output")

        kforge_t = medians(run_kforge, options.repeat)
        jinja_process_t = medians(run_jinja_process, options.repeat)
        jinja_render_t = medians(lambda: in_process(lambda: template.render(**data)), options.repeat)

    print(f"template: {options.items}-item loop, 2 macros, 9 filters; output {len(kforge_out):,} bytes, "
          f"identical for both engines; median of {options.repeat} runs")
    print(f"{'':38} {'wall':>9}  {'CPU':>9}   kforge faster by (wall / CPU)")
    print(f"{'kforge render (process, end to end)':38} {kforge_t[0] * 1000:7.1f}ms  {kforge_t[1] * 1000:7.1f}ms")
    for label, t in [("jinja2 (process, end to end)", jinja_process_t),
                     ("jinja2 render() only (in-process)", jinja_render_t)]:
        print(f"{label:38} {t[0] * 1000:7.1f}ms  {t[1] * 1000:7.1f}ms   "
              f"{t[0] / kforge_t[0]:.1f}x / {t[1] / kforge_t[1]:.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
