#!/usr/bin/env python3
"""tools/graphnet/float64.py's decision on canned distances (no Paddle, no numpy): agree-f64 only when every output
beyond the fixed bound has kforge at most 1.5x Paddle's own distance from float64 (+1e-5); integers, shapes and
an infinite kforge distance keep differ. Run: python3 tools/graphnet/test_float64.py"""

import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import float64  # noqa: E402

INF = float("inf")


class Float64RuleTest(unittest.TestCase):
    def test_within_factor(self):
        self.assertEqual(float64.verdict([{"output": 2, "kforge": 6.97, "paddle": 6.97}]), "agree-f64")
        self.assertEqual(float64.verdict([{"output": 0, "kforge": 1.5e-3, "paddle": 1e-3}]), "agree-f64")
        self.assertEqual(float64.verdict([{"output": 0, "kforge": 1.6e-3, "paddle": 1e-3}]), "differ")

    def test_slack(self):
        # Paddle exact, kforge off by less than the absolute slack: agrees; by more: differs.
        self.assertEqual(float64.verdict([{"output": 0, "kforge": 9e-6, "paddle": 0.0}]), "agree-f64")
        self.assertEqual(float64.verdict([{"output": 0, "kforge": 2e-5, "paddle": 0.0}]), "differ")

    def test_every_output_counts(self):
        rows = [{"output": 0, "kforge": 1.0, "paddle": 1.0}, {"output": 1, "kforge": 3.0, "paddle": 1.0}]
        self.assertEqual(float64.verdict(rows), "differ")
        self.assertEqual(float64.worst(rows)["output"], 1)

    def test_non_finite(self):
        # kforge non-finite where float64 is finite: never within; Paddle non-finite, kforge finite: within.
        self.assertEqual(float64.verdict([{"output": 0, "kforge": INF, "paddle": INF}]), "differ")
        self.assertEqual(float64.verdict([{"output": 0, "kforge": 2.0, "paddle": INF}]), "agree-f64")

    def test_rule_does_not_apply(self):
        self.assertEqual(float64.verdict([{"output": 1, "why": "int64 output differs"}]), "differ")
        self.assertEqual(float64.verdict([]), "differ")  # nothing beyond the bound: the rule decides nothing
        self.assertEqual(float64.verdict([{"output": 0, "kforge": 1.0, "paddle": 1.0},
                                          {"output": 1, "why": "shapes"}]), "differ")

    def test_describe(self):
        ok = {"status": "ok", "rows": [{"output": 2, "kforge": 6.97, "paddle": 6.5},
                                       {"output": 0, "kforge": 1e-3, "paddle": 1e-2}]}
        self.assertEqual(float64.describe(ok), "from float64: kforge 6.97, Paddle 6.5 (output 2 (worst of 2))")
        self.assertEqual(float64.describe({"status": "failed", "error": "out of memory (over 8 GiB)"}),
                         "float64: failed (out of memory (over 8 GiB))")
        self.assertEqual(float64.describe({"status": "skipped", "error": "draws random numbers: uniform"}),
                         "float64: skipped (draws random numbers: uniform)")
        self.assertEqual(float64.describe(None), "")


if __name__ == "__main__":
    unittest.main()
