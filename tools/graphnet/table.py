"""The tables of tools/check-graphnet, from its per-sample result dicts (Python 3 standard library only: the unit
test tools/graphnet/test_table.py runs it on canned results without Paddle).

A result: {"sample": "PaddleX/ResNet18/subgraph_0", "source": "PaddleX", "model": "ResNet18", "target": "cpu",
"status": one of STATUSES, "error": one line, "ops": [missing op names] (unknown-op), "worst": max relative
error over the outputs (agree/differ), "max_abs", "gen_bytes", "export_s", "paddle_s", "generate_s",
"build_run_s", "float64": the float64 rule's check of a sample that differs (tools/graphnet/float64.py)}.
"""

import re
import float64
from collections import Counter, OrderedDict

# In pipeline order. cpu: export-fail, unknown-op, error, differ, agree-f64 (beyond the fixed bound, within the
# float64 rule: counted as agreeing, shown apart), agree. cuda: generation only, "generated".
STATUSES = ["export-fail", "unknown-op", "error", "differ", "agree-f64", "agree", "generated"]
AGREE = ("agree", "agree-f64")


# Names whose first word alone says little.
COMPOUND = ["Mask-RT-DETR", "Cascade-FasterRCNN", "ch_SVTRv2", "ch_RepSVTR", "hfl_", "uer_", "rocketqa", "skep_ernie"]


def family(model):
    """A model's family: the name's first word ('PP-' keeps its next word: PP-OCRv4, PP-LCNet), its trailing depth
    digits dropped (ResNet101 -> ResNet, StarNet-S1 -> StarNet, bert-base-cased -> bert)."""
    for prefix in COMPOUND:
        if model.startswith(prefix):
            return prefix.rstrip("_-")
    m = re.match(r"(PP-[A-Za-z0-9]+|[A-Za-z0-9.]+)", model)
    word = m.group(1) if m else model
    if not word.startswith("PP-"):
        stripped = re.sub(r"\d+$", "", word)
        if len(stripped) >= 3 and stripped[-1].islower() and stripped[-1] != "v":
            word = stripped
    return word


def group_key(result):
    return f"{result['source']}/{family(result['model'])}"


def pct(n, d):
    return f"{n} ({100.0 * n / d:.0f} %)" if d else "0"


def cells_escape(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def summary_counts(results, target):
    """Counts of one set of results: total, exported (Paddle), generated (kforge), and for cpu built+ran, agree."""
    c = Counter(r["status"] for r in results)
    exported = len(results) - c["export-fail"]
    if target != "cpu":  # cuda, cpu-gen: generation only
        return OrderedDict(samples=len(results), exported=exported, generated=c["generated"])
    generated = exported - c["unknown-op"] - sum(1 for r in results if r["status"] == "error" and
                                                   r.get("stage") == "generate")
    ran = c["agree"] + c["agree-f64"] + c["differ"]
    return OrderedDict(samples=len(results), exported=exported, generated=generated, ran=ran,
                       agree=c["agree"] + c["agree-f64"], agree_f64=c["agree-f64"])


def family_table(results, target):
    """Markdown: one row per family (source/prefix), counts and percentages of the samples Paddle exports."""
    groups = OrderedDict()
    for r in sorted(results, key=group_key):
        groups.setdefault(group_key(r), []).append(r)
    rows = list(groups.items()) + [("**all**", results)]
    if target != "cpu":
        header = ["family", "samples", "Paddle exports",
                  "kforge generates CUDA" if target == "cuda" else "kforge generates", "unknown op", "error",
                  "top missing ops"]
    else:
        header = ["family", "samples", "Paddle exports", "kforge generates", "builds and runs", "agree",
                  "of those by float64", "differ", "unknown op", "error", "top missing ops"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for name, rs in rows:
        s = summary_counts(rs, target)
        c = Counter(r["status"] for r in rs)
        ex = s["exported"]
        ops = top_ops(rs, 3)
        if target != "cpu":
            cells = [name, s["samples"], ex, pct(s["generated"], ex), c["unknown-op"], c["error"], ops]
        else:
            cells = [name, s["samples"], ex, pct(s["generated"], ex), pct(s["ran"], ex), pct(s["agree"], ex),
                     s["agree_f64"], c["differ"], c["unknown-op"], c["error"], ops]
        lines.append("| " + " | ".join(cells_escape(x) for x in cells) + " |")
    return "\n".join(lines) + "\n"


def missing_ops(results):
    """Counter: op -> number of samples it blocks (an "error" sample whose diagnostics also name missing ops counts
    for them too: its error line is another one, and the ops would otherwise be in no table)."""
    c = Counter()
    for r in results:
        if r["status"] in ("unknown-op", "error"):
            c.update(set(r.get("ops") or []))
    return c


def ranked(counter):
    """most_common with ties in name order (deterministic)."""
    return sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))


def top_ops(results, n):
    return ", ".join(f"{op} {k}" for op, k in ranked(missing_ops(results))[:n])


def ops_table(results):
    c = missing_ops(results)
    if not c:
        return "(no missing ops)\n"
    only = Counter()
    for r in results:
        if r["status"] == "unknown-op" and len(set(r.get("ops") or [])) == 1:
            only.update(set(r["ops"]))
    lines = ["| op | samples blocked | the only missing op in |", "|---|---|---|"]
    for op, k in ranked(c):
        lines.append(f"| {op} | {k} | {only[op]} |")
    return "\n".join(lines) + "\n"


def fmt_num(x, spec):
    return "" if x is None else format(x, spec)


def sample_table(results, target):
    """Markdown: one row per sample with its status, worst error or error line, generated bytes and times."""
    header = ["sample", "status", "worst rel. error / missing ops / error", "generated bytes", "export s",
              "paddle s", "generate s"] + (["build+run s"] if target == "cpu" else [])
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in sorted(results, key=lambda r: r["sample"]):
        if r["status"] in ("agree", "agree-f64", "differ"):
            detail = f"{r.get('worst', 0):.2e} (abs {r.get('max_abs', 0):.2e})"
            if r.get("error"):
                detail += "; " + r["error"]
            if r.get("float64"):
                detail += "; " + float64.describe(r["float64"])
            if r.get("random_ops"):
                detail += f" (random: {', '.join(r['random_ops'])})"
        elif r["status"] == "unknown-op":
            detail = ", ".join(r.get("ops") or [])
        elif r["status"] == "export-fail" and r.get("stage"):
            detail = f"{r['stage']}: {r.get('error', '')}"
        else:
            detail = (f"{r['stage']}: " if r.get("stage") in ("build", "run") else "") + r.get("error", "")
            if r.get("ops"):
                detail += "; missing ops too: " + ", ".join(r["ops"])
        cells = [r["sample"], r["status"], detail, r.get("gen_bytes") or "", fmt_num(r.get("export_s"), ".0f"),
                 fmt_num(r.get("paddle_s"), ".0f"), fmt_num(r.get("generate_s"), ".1f")]
        if target == "cpu":
            cells.append(fmt_num(r.get("build_run_s"), ".0f"))
        lines.append("| " + " | ".join(cells_escape(x) for x in cells) + " |")
    return "\n".join(lines) + "\n"


def headline(results, target):
    s = summary_counts(results, target)
    ex = s["exported"]
    slow = sum(1 for r in results if r["status"] == "export-fail" and "timed out" in r.get("error", ""))
    timed_out = f" (of those it does not, {slow} timed out here)" if slow else ""
    if target != "cpu":
        what = "CUDA code" if target == "cuda" else "CPU code (generation only)"
        return (f"{s['samples']} samples: Paddle exports {ex}{timed_out}; kforge generates {what} for "
                f"{pct(s['generated'], ex)} of those.")
    rnd = [r for r in results if r["status"] in ("agree", "agree-f64", "differ") and r.get("random_ops")]
    rnd_differ = sum(1 for r in rnd if r["status"] == "differ")
    random_note = (f" {len(rnd)} of those that run draw random numbers ({rnd_differ} of them differ): Paddle "
                   f"cannot reproduce itself there." if rnd else "")
    f64 = (f" ({s['agree_f64']} of them beyond the fixed bound but within the float64 rule: at most "
           f"{float64.FACTOR}x Paddle's own distance from a float64 run)" if s["agree_f64"] else "")
    return (f"{s['samples']} samples: Paddle exports {ex}{timed_out}; of those kforge generates {pct(s['generated'], ex)}, "
            f"builds and runs {pct(s['ran'], ex)}, agrees with Paddle on {pct(s['agree'], ex)}{f64}.{random_note}")


def markdown(results, target):
    return "\n".join([
        headline(results, target), "",
        "By family:", "", family_table(results, target),
        "Missing ops (samples blocked):", "", ops_table(results),
        "Every sample:", "", sample_table(results, target)])
