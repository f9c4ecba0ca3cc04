#!/usr/bin/env python3
"""Sums `ncu --metrics gpu__time_duration.sum --csv` (on stdin) by kernel name: the total kernel time of the profiled
run and its top kernels. Usage: ncu ... --csv PROGRAM | ncu_summary.py LABEL [TOP]"""
import collections
import csv
import sys

SCALE = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3}


def main():
    label, top = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 12
    rows = [r for r in csv.DictReader(line for line in sys.stdin if line.startswith('"'))]
    total, by = 0.0, collections.defaultdict(lambda: [0, 0.0])
    for r in rows:
        if r.get("Metric Name") != "gpu__time_duration.sum":
            continue
        us = float(r["Metric Value"].replace(",", "")) * SCALE[r["Metric Unit"]]
        name = r["Kernel Name"][:90]
        by[name][0] += 1
        by[name][1] += us
        total += us
    print(f"{label}: {sum(c for c, _ in by.values())} kernels, {total:.1f} us of kernel time")
    for name, (count, us) in sorted(by.items(), key=lambda kv: -kv[1][1])[:top]:
        print(f"  {us:8.1f} us  {count:3d} x  {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
