#!/usr/bin/env python3
"""The float64 rule's measurements of checked samples, draw by draw (standard library only): for each output row
of a result file's "float64" entry that has draws (tools/check-graphnet, tools/graphnet/float64.py), per draw the
largest distance over the batch (what the rule before prec34d compared, on draw 0 only), the mean over the images
(what the rule's figure takes the median of over the draws) and the median image, for kforge and Paddle, their
ratios, and the rule's figures. docs/model-zoo.md "The float64 rule over
draws and images" used it:

    python3 tools/graphnet/float64_draws_table.py WORK/PaddleX/MobileNetV2_x0_25/result-cpu.json [...]
"""
import json
import statistics
import sys


def ratio(k, p):
    return k / p if p > 0 else (float("inf") if k > 0 else 1.0)


def lines(result):
    out = []
    for row in (result.get("float64") or {}).get("rows") or []:
        d = row.get("draws")
        if not d:
            continue
        out.append(f"{result['sample']} output {row['output']}: {d['count']} draws x {d['images']} images")
        for n, (k, p) in enumerate(zip(d["kforge_images"], d["paddle_images"])):
            kl, pl, km, pm = max(k), max(p), statistics.median(k), statistics.median(p)
            ka, pa = sum(k) / len(k), sum(p) / len(p)
            over = sum(1 for a, b in zip(k, p) if a > 1.5 * b)
            under = sum(1 for a, b in zip(k, p) if b > 1.5 * a)
            out.append(f"  draw {n}: largest kforge {kl:.3g} Paddle {pl:.3g} ({ratio(kl, pl):.2f}x); mean "
                       f"kforge {ka:.3g} Paddle {pa:.3g} ({ratio(ka, pa):.2f}x); median image {ratio(km, pm):.2f}x; "
                       f"images over 1.5x {over}, under 1/1.5 {under}")
        out.append(f"  rule: kforge {d['kforge']:.3g} Paddle {d['paddle']:.3g} ({ratio(d['kforge'], d['paddle']):.2f}x)"
                   f"; draw 0's largest: kforge {row['kforge']:.3g} Paddle {row['paddle']:.3g} "
                   f"({ratio(row['kforge'], row['paddle']):.2f}x)")
    return out


def main():
    for path in sys.argv[1:]:
        print("\n".join(lines(json.load(open(path)))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
