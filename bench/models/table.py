"""The table of a bench/models/run.sh run: one row per model and size, kforge's minimum CPU ms per inference and its
ratios to ONNX Runtime and Paddle's predictor (oneDNN), and to the worker of another build where the run had one
(compare.py --kforge-before), at each thread count (minimum over minimum; in parentheses
the range of the per-round ratios of medians), then the geometric means and the models above 1.1x ONNX Runtime.

    table.py RESULTS.jsonl [--only NAME,...]

RESULTS.jsonl: compare.py --json lines; where a model, size and thread count appears more than once, the last.
"""
import argparse
import json
import math
from pathlib import Path


def main():
    p = argparse.ArgumentParser()
    p.add_argument("results", type=Path)
    p.add_argument("--only", help="comma-separated model directory names (MODEL_SIZE)")
    args = p.parse_args()
    records = {}
    for line in args.results.read_text().splitlines():
        if line.strip():
            r = json.loads(line)
            records[(r["model"], r["threads"])] = r
    only = set(args.only.split(",")) if args.only else None
    models = list(dict.fromkeys(m for m, _ in records if only is None or m in only))
    threads = sorted({t for _, t in records})
    peers = ["ort", "paddle"] + (["before"] if any("vs_before" in r for r in records.values()) else [])
    names = {"ort": "ORT", "paddle": "Paddle", "before": "before"}
    header = ["model"]
    for t in threads:
        header += [f"kforge ms, {t}t"] + [f"/ {names[p]}, {t}t" for p in peers]
    print("| " + " | ".join(header) + " |")
    print("|---|" + "---:|" * (len(header) - 1))
    logs = {(t, peer): [] for t in threads for peer in peers}
    above = {t: [] for t in threads}
    for m in models:
        cells = [m]
        for t in threads:
            r = records.get((m, t))
            if r is None or "kforge" not in r:
                cells += ["--"] * (1 + len(peers))
                continue
            cells.append(f"{r['kforge']['min']:.3f}")
            for peer in peers:
                v = r.get(f"vs_{peer}")
                if v is None:
                    cells.append("--")
                    continue
                cells.append(f"{v[0]:.2f} ({v[1]:.2f}-{v[2]:.2f})")
                logs[(t, peer)].append(math.log(v[0]))
                if peer == "ort" and v[0] > 1.1:
                    above[t].append(f"{m} {v[0]:.2f}")
        print("| " + " | ".join(cells) + " |")
    cells = ["geometric mean"]
    for t in threads:
        cells.append("")
        for peer in peers:
            xs = logs[(t, peer)]
            cells.append(f"{math.exp(sum(xs) / len(xs)):.2f} ({len(xs)})" if xs else "--")
    print("| " + " | ".join(cells) + " |")
    for t in threads:
        print(f"\nabove 1.1x ONNX Runtime at {t} thread(s): {', '.join(above[t]) or 'none'}")


if __name__ == "__main__":
    main()
