#!/usr/bin/env python3
"""End-to-end tests of fusion on the CPU: `kforge compile` with the fusion overlay of the reference kernels
(kernels/fusion.yaml) generates fused loops; the code is built with g++ -O2 -Wall -Wextra -Werror
against kernels/, run on fresh random inputs (a new seed every run, printed so a failure can be
replayed with --seed) and compared with the unfused reference interpreter (tools/interp/) at relative error
1e-5 (plus 1e-6 absolute for values near 0). Each case also checks the grouping kforge chose
(--dump-lowered), that --dump-groups writes a Graphviz file with one cluster per group, and that
`--no-fuse` generates exactly what kforge generates when the op set has no extension keys.

One meson test per case (`meson test -C build e2e-fused-<case>`), registered from --list.
Usage: test_fused_cpu.py --build-dir BUILD [--seed N] [CASE...]
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from cpu_check import CHECK_OPT_LEVEL

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
OPS = ROOT / "kernels" / "ops.yaml"
FUSION = ROOT / "kernels" / "fusion.yaml"
OP_COMPAT = ROOT / "kernels" / "op_compat.yaml"
CLASS = "fused_program"
RTOL, ATOL = "1e-5", "1e-6"


class TestFailure(Exception):
    pass


def run(cmd, **kwargs):
    return subprocess.run([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=600, **kwargs)


def must(result, what):
    if result.returncode != 0:
        raise TestFailure(f"{what} failed (exit {result.returncode})\n--- stdout\n{result.stdout}"
                          f"--- stderr\n{result.stderr}")
    return result


# Each case: the program (tests/e2e/fused/ or tests/e2e/programs/), --shape arguments, and the groups kforge
# must make, as "kind:calls" strings in group order (calls as --dump-lowered prints them).
CASES = {
    "chain": ("fused/chain.yaml", [], ["elementwise:0,1,2,3,4,5,6,7"]),
    "broadcast": ("fused/broadcast.yaml", [], ["elementwise:0,1,2,3", "elementwise:4,5"]),
    # The spelled-out softmax is two row groups: exp's result is needed by the sum (pass 1) and the division
    # (pass 2), and an expensive producer is never evaluated twice, so e is stored once and the sum and the
    # division read it.
    "softmax": ("fused/softmax.yaml", [], ["row:0,1", "row:2,3,4", "row:5,6"]),
    "layer-norm": ("fused/layer_norm.yaml", [], ["row:0,1,2", "row:3,4", "row:5,6,7,8,9,10,11"]),
    "mixed": ("fused/mixed.yaml", [], ["elementwise:1,2", "row:3,4"]),
    # The softmax reads the layer_norm's output in its first pass (the layer_norm's last): one row loop.
    "dynamic": ("fused/dynamic.yaml", ["--shape", "x=5,48"], ["elementwise:0,1", "row:2,3"]),
    # A lone elementwise op stays a call to the library's kernel on the CPU (no group).
    "lone-op": ("fused/lone_op.yaml", [], []),
    "transformer-block": ("programs/transformer_block.yaml", [],
                          ["row:0", "row:5,6", "row:9,10", "elementwise:12,13", "elementwise:15,16"]),
    # Convolution groups: one conv2d_fused call each (kernels/kforge_fused.h). In NHWC (--layout nhwc, pinned: auto
    # emits the NCHW8c plan too, the -auto case), after the layout plan's transposes (docs/compile.md, "Layouts");
    # the -nchw cases keep Paddle's layout.
    "conv-bn-relu": ("programs/conv_bn_relu.yaml", [], ["conv:1,2,3", "conv:5,6"], ["--layout", "nhwc"]),
    "conv-epilogue": ("fused/conv_epilogue.yaml", [],
                      ["conv:2,3,4,5", "conv:6,7,8,9", "elementwise:12,13", "conv:15,16,17"], ["--layout", "nhwc"]),
    "conv-bn-relu-nchw": ("programs/conv_bn_relu.yaml", [], ["conv:0,1,2", "conv:4,5"], ["--layout", "nchw"]),
    "conv-epilogue-nchw": ("fused/conv_epilogue.yaml", [],
                           ["conv:0,1,2,3", "conv:4,5,6,7", "elementwise:9,10", "conv:11,12,13"], ["--layout", "nchw"]),
    # --layout nchw8c: the convolutions whose channels are multiples of 8 run on [N, C / 8, H, W, 8] values.
    # The stem reads the 3-channel image as it is (NCHW) and writes NCHW8c; the pool and depthwise conv follow.
    "conv-bn-relu-nchw8c": ("programs/conv_bn_relu.yaml", [], ["conv:0,1,2", "conv:4,5"], ["--layout", "nchw8c"]),
    "conv-epilogue-nchw8c": ("fused/conv_epilogue.yaml", [],
                             ["conv:3,4,5,6", "conv:7,8,9,10", "elementwise:14,15", "conv:16,17,18"],
                             ["--layout", "nchw8c"]),
    # The concat in place (issue 36): in NHWC the block's convolutions write their strided slices of its concat (the
    # lone ones become conv2d_fused groups of their own); one image in NCHW and NCHW8c: every slice is contiguous.
    "concat-in-place": ("fused/concat_in_place.yaml", [], ["conv:1,2,3", "conv:4", "conv:7"], ["--layout", "nhwc"]),
    "concat-in-place-nchw": ("fused/concat_in_place.yaml", [], ["conv:0,1,2"], ["--layout", "nchw"]),
    "concat-in-place-nchw8c": ("fused/concat_in_place.yaml", [], ["conv:2,3,4"], ["--layout", "nchw8c"]),
    # Split views (issue 36): in NCHW the right half is a view of the split's input (read by a convolution, a concat
    # and an elementwise group), the left half lies in the first concat; in NCHW8c the second concat (no output
    # there: a transpose follows) takes the right half in place too; in NHWC the halves are strided and copied.
    "split-views": ("fused/split_views.yaml", [], ["conv:1,2,3", "conv:5,6", "elementwise:14,15"],
                    ["--layout", "nhwc"]),
    "split-views-nchw": ("fused/split_views.yaml", [], ["conv:0,1,2", "conv:4,5", "elementwise:9,10,11"],
                         ["--layout", "nchw"]),
    "split-views-nchw8c": ("fused/split_views.yaml", [], ["conv:2,3,4", "conv:6,7", "elementwise:18,19"],
                           ["--layout", "nchw8c"]),
    # --layout auto (docs/compile.md, "`--layout auto` on the CPU"): every convolution converts in NCHW8c too, so the
    # class holds both plans (the NHWC plan's groups, then the NCHW8c plan's); run once per plan, forced with
    # KFORGE_LAYOUT_FORCE (FORCED_PLANS).
    "conv-bn-relu-auto": ("programs/conv_bn_relu.yaml", [], ["conv:1,2,3", "conv:5,6", "conv:0,1,2", "conv:4,5"],
                          ["--layout", "auto"]),
}

# The cases whose class holds two layout plans: the harness runs once with KFORGE_LAYOUT_FORCE set to each.
FORCED_PLANS = {"conv-bn-relu-auto": ["nhwc", "nchw8c"]}

# How many concat inputs each case puts in place (--dump-lowered's "concat call" lines); none where not named.
PLACEMENTS = {"concat-in-place": 3, "concat-in-place-nchw": 7, "concat-in-place-nchw8c": 7, "split-views-nchw": 2,
              "split-views-nchw8c": 3}
# How many split pieces each case makes views of its split's input (--dump-lowered's "split call" lines).
SPLIT_VIEWS = {"split-views-nchw": 1}

# The fused convolution folds the batch norm into the filter (oneDNN) and sums its K products in another order than
# the interpreter's loops: the results differ by up to 2 gamma(K) sum |products| * |batch norm scale| times the
# activation's slope (compare_paths.h in tests/unit/kernels). These programs have K <= 72, inputs and weights in
# [-1, 1), variances >= 0.5 and scales in [-1, 1) (the interpreter's random values): at most
# 2 * 72 * 2^-24 * 72 * 1.42 * 1.5 = 1.3e-3, through at most two fused layers. Typical differences are near 1e-6.
TOLERANCES = {name: ("1e-4", "3e-3") for name in ("conv-bn-relu", "conv-epilogue", "conv-bn-relu-nchw", "conv-epilogue-nchw",
                                                  "conv-bn-relu-auto",
                                                  "conv-bn-relu-nchw8c", "conv-epilogue-nchw8c", "concat-in-place",
                                                  "concat-in-place-nchw", "concat-in-place-nchw8c",
                                                  "split-views", "split-views-nchw", "split-views-nchw8c")}


def compile_program(kforge, program, out_dir, ops, extra):
    cmd = [kforge, "compile", program, "-o", out_dir, "--name", CLASS, "--target", "cpu", "--color", "never",
           "--op-compat", OP_COMPAT]
    for f in ops:
        cmd += ["--ops", f]
    return run(cmd + extra)


def strip_banner(text):
    """The generated text without kforge's banner (it lists the input files, which differ on purpose)."""
    lines = text.splitlines(keepends=True)
    i = 0
    while i < len(lines) and (lines[i].startswith("//") or not lines[i].strip()):
        i += 1
    return "".join(lines[i:])


def groups_of(stderr):
    groups = []
    for line in stderr.splitlines():
        m = re.match(r"group \d+ (\w+) .* calls ([\d,]+) stores", line)
        if m:
            groups.append(f"{m.group(1)}:{m.group(2)}")
    return groups


def check_case(name, build, seed):
    rel, shape_args, expected_groups, *rest = CASES[name]
    layout = rest[0] if rest else []  # compile flags of every variant below
    program = HERE / rel
    kforge = build / "src" / "kforge"
    interp = build / "tools" / "interp" / "kforge-interp"
    kernels = build / "kernels" / "libkforge_kernels.a"
    link_args = (build / "kernels" / "kforge_kernels.link").read_text().split()  # oneDNN, when built with it
    with tempfile.TemporaryDirectory(prefix="kforge-fused-") as tmp:
        work = Path(tmp)
        dot = work / "groups.dot"
        r = must(compile_program(kforge, program, work / "gen", [OPS, FUSION],
                                 ["--dump-lowered", "--dump-groups", dot] + layout), "kforge compile")
        groups = groups_of(r.stderr)
        placed = len(re.findall(r"^concat call \d+: ", r.stderr, re.M))
        if placed != PLACEMENTS.get(name, 0):
            raise TestFailure(f"concat in place: expected {PLACEMENTS.get(name, 0)} placements, got {placed}\n{r.stderr}")
        views = len(re.findall(r"^split call \d+: ", r.stderr, re.M))
        if views != SPLIT_VIEWS.get(name, 0):
            raise TestFailure(f"split views: expected {SPLIT_VIEWS.get(name, 0)} views, got {views}\n{r.stderr}")
        if groups != expected_groups:
            raise TestFailure(f"groups: expected {expected_groups}, got {groups}\n{r.stderr}")
        dot_text = dot.read_text()
        first_plan = groups_of(r.stderr.split("layout auto: the NCHW8c plan\n")[0])  # --dump-groups draws the first
        if name in FORCED_PLANS and ("namespace nhwc_plan {" not in (work / "gen" / f"{CLASS}.cc").read_text()
                                     or first_plan == groups):
            raise TestFailure(f"--layout auto did not emit both layout plans\n{r.stderr}")
        if dot_text.count("subgraph cluster_g") != len(first_plan) or not dot_text.startswith("digraph fusion {"):
            raise TestFailure(f"--dump-groups wrote an unexpected picture:\n{dot_text}")
        source = (work / "gen" / f"{CLASS}.cc").read_text()
        loops = [g for g in groups if not g.startswith("conv:")]
        # not the class's own members; a group that calls kforge_math.h, or whose rows are whole AVX2 vectors, is
        # also compiled for AVX2
        if len(re.findall(r"\n(?:KFORGE_(?:MATH|FUSED)_CLONES )?void fused_\d+\(", source)) != len(loops):
            raise TestFailure("the generated code does not define one function per loop group")
        if source.count("kforge::kernels::conv2d_fused(kCtx") != len(groups) - len(loops):
            raise TestFailure("the generated code does not call conv2d_fused once per convolution group")

        # --no-fuse: byte for byte what an op set without extension keys gives.
        must(compile_program(kforge, program, work / "nofuse", [OPS, FUSION], ["--no-fuse"] + layout),
             "kforge compile --no-fuse")
        must(compile_program(kforge, program, work / "plain", [OPS], layout), "kforge compile without the overlay")
        for f in [f"{CLASS}.cc", f"{CLASS}.h"]:
            a = strip_banner((work / "nofuse" / f).read_text())
            b = strip_banner((work / "plain" / f).read_text())
            if a != b:
                raise TestFailure(f"--no-fuse output {f} differs from the unfused output")
        if re.search(r"\n(?:KFORGE_(?:MATH|FUSED)_CLONES )?void fused_\d+\(", (work / "nofuse" / f"{CLASS}.cc").read_text()):
            raise TestFailure("--no-fuse output has fused functions")

        inputs, outputs = work / "inputs.bin", work / "outputs.bin"
        must(run([interp, program, "--seed", seed, "--write-inputs", inputs] + shape_args), "kforge-interp")
        harness = work / "harness"
        must(run(["g++", "-std=c++17", f"-O{CHECK_OPT_LEVEL}", "-Wall", "-Wextra", "-Werror", "-I", work / "gen",
                  "-I", ROOT / "tools" / "interp", f'-DKFORGE_PROGRAM_HEADER="{CLASS}.h"',
                  f"-DKFORGE_PROGRAM_CLASS={CLASS}", "-DKFORGE_TRACE_HOOK=kforge_harness_trace",
                  ROOT / "tools" / "check_program" / "harness.cc", work / "gen" / f"{CLASS}.cc", kernels,
                  *link_args, "-o", harness]), "building the fused code")
        rtol, atol = TOLERANCES.get(name, (RTOL, ATOL))
        for plan in FORCED_PLANS.get(name, [None]):
            env = dict(os.environ)
            env.pop("KFORGE_LAYOUT_FORCE", None)
            if plan is not None:
                env["KFORGE_LAYOUT_FORCE"] = plan
            must(run([harness, inputs, outputs], env=env), f"running the fused code (plan {plan})")
            r = run([interp, program, "--inputs", inputs, "--compare", outputs, "--rtol", rtol, "--atol", atol])
            if r.returncode != 0:
                raise TestFailure(f"fused code (plan {plan}) and interpreter differ (seed {seed}):\n{r.stdout}{r.stderr}")
            print(f"{name}: {len(groups)} groups {groups}, plan {plan}, seed {seed}, agree within rtol {rtol}, atol {atol}")
            print(r.stdout, end="")
        if name in FORCED_PLANS:
            # A KFORGE_LAYOUT_FORCE that names no plan: every call returns an error saying so.
            r = run([harness, inputs, outputs], env=dict(os.environ, KFORGE_LAYOUT_FORCE="nchw16c"))
            if r.returncode == 0 or "KFORGE_LAYOUT_FORCE='nchw16c' names no layout plan" not in r.stdout + r.stderr:
                raise TestFailure(f"KFORGE_LAYOUT_FORCE=nchw16c: expected an error, got\n{r.stdout}{r.stderr}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build-dir")
    parser.add_argument("--seed", type=int, help="seed of the random inputs (default: a fresh one)")
    parser.add_argument("--list", action="store_true")
    parser.add_argument("cases", nargs="*")
    args = parser.parse_args()
    if args.list:
        print("\n".join(f"fused-{c}" for c in CASES))
        return 0
    build = Path(args.build_dir).resolve()
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(3), "little")
    names = [c.removeprefix("fused-") for c in args.cases] or list(CASES)
    failed = 0
    for name in names:
        if name not in CASES:
            print(f"unknown case '{name}'", file=sys.stderr)
            return 2
        try:
            check_case(name, build, seed)
        except TestFailure as e:
            print(f"FAIL {name}: {e}", file=sys.stderr)
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
