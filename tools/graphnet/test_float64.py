#!/usr/bin/env python3
"""tools/graphnet/float64.py's decision on canned distances (no Paddle, no numpy): agree-f64 only when every output
beyond the fixed bound has kforge at most 1.5x Paddle's own distance from float64 (+1e-5); integers, shapes and
an infinite kforge distance keep differ; over draws and images the figures (median over draws of the mean over
images) decide, not draw 0's largest element. Run: python3 tools/graphnet/test_float64.py"""

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


def with_figures(kforge_table, paddle_table, largest=(1.0, 1.0)):
    """A row as check-graphnet writes it: draw 0's largest element and the figures over draws and images."""
    return {"output": 0, "kforge": largest[0], "paddle": largest[1],
            "draws": {"kforge": float64.figure(kforge_table), "paddle": float64.figure(paddle_table),
                      "count": len(kforge_table), "images": len(kforge_table[0])}}


class OverDrawsTest(unittest.TestCase):
    def test_figure_is_median_over_draws_of_mean_over_images(self):
        # Per draw the mean over its images (2, 6, 30), then the median over draws: 6.
        self.assertEqual(float64.figure([[1, 2, 3], [9, 5, 4], [30, 40, 20]]), 6.0)
        # An even count of draws takes the middle two's mean.
        self.assertEqual(float64.figure([[1, 3], [5, 7]]), 4.0)
        self.assertEqual(float64.figure([[2.5]]), 2.5)  # one draw of one image: the distance itself

    def test_one_sensitive_draw_does_not_decide(self):
        # MobileNetV2_x0_25's shape: draw 0's largest is 3.5x Paddle's (one image of 64 far off), the other
        # draws' images are not; the median over the draws leaves draw 0 out.
        typical = [1e-4] * 63
        kforge = [[7.5e-3] + typical] + [[1.2e-4] + typical] * 4
        paddle = [[2.2e-3] + typical] + [[5e-3] + typical] * 4
        row = with_figures(kforge, paddle, largest=(7.5e-3, 2.2e-3))
        self.assertEqual(float64.verdict([{k: row[k] for k in ("output", "kforge", "paddle")}]), "differ")
        self.assertEqual(float64.verdict([row]), "agree-f64")
        self.assertLess(row["draws"]["kforge"], row["draws"]["paddle"])

    def test_few_images_differing_by_a_bin(self):
        # PicoDet's boxes: most images exact for both (saturated scores, one distribution-focal bin each); a median
        # over images would be 0 for Paddle and 4.7 for kforge (4 of 8 images off), the mean compares them.
        kforge = [[40, 9.4, 0, 0, 0, 0, 0, 0]] * 3
        paddle = [[40, 9.4, 0, 40, 0, 0, 0, 0]] * 3
        self.assertEqual(float64.verdict([with_figures(kforge, paddle)]), "agree-f64")
        self.assertEqual(float64.verdict([with_figures(paddle, kforge)]), "differ")  # 89.4 / 49.4 over 8: 1.81x

    def test_everywhere_farther_still_differs(self):
        # kforge 2x as far on every image of every draw: the figures keep it.
        paddle = [[1e-3, 2e-3, 3e-3]] * 5
        kforge = [[2e-3, 4e-3, 6e-3]] * 5
        row = with_figures(kforge, paddle)
        self.assertEqual(float64.verdict([row]), "differ")
        self.assertAlmostEqual(row["draws"]["kforge"] / row["draws"]["paddle"], 2.0)
        self.assertIn("(2.00x; output 0)", float64.describe({"status": "ok", "rows": [row]}))

    def test_overflow_in_most_draws(self):
        # kforge non-finite where float64 is finite in an image of most draws: its figure is inf, never within,
        # even when Paddle's is inf too; in one draw of five: that draw's mean is inf, the median is not.
        self.assertEqual(float64.figure([[INF, 1.0]] * 2 + [[1.0, 1.0]]), INF)
        both = with_figures([[INF, INF, 1.0]], [[INF, INF, 1.0]], largest=(INF, INF))
        self.assertEqual(float64.verdict([both]), "differ")
        self.assertEqual(float64.describe({"status": "ok", "rows": [both]}),
                         "from float64, median of 1 draw x 3 images: kforge inf, Paddle inf (both non-finite where "
                         "float64 is not; output 0); draw 0's largest: kforge inf, Paddle inf")
        once = [[1e-3, INF]] + [[1e-3, 1e-3]] * 4
        self.assertEqual(float64.verdict([with_figures(once, [[1e-3, 1e-3]] * 5)]), "agree-f64")

    def test_describe_keeps_draw_zero(self):
        row = with_figures([[1e-4, 2e-4]] * 3, [[1e-4, 1e-4]] * 3, largest=(7.49e-3, 2.16e-3))
        line = float64.describe({"status": "ok", "rows": [row]})
        self.assertEqual(line, "from float64, median of 3 draws x 2 images: kforge 0.00015, Paddle 0.0001 (1.50x; "
                               "output 0); draw 0's largest: kforge 0.00749, Paddle 0.00216")


if __name__ == "__main__":
    unittest.main()
