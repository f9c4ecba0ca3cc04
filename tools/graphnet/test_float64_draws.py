#!/usr/bin/env python3
"""tools/graphnet/float64.py's measurements over draws and images (numpy, no Paddle): a redraw moves every float
input element by one ulp and is the same for the same (seed, draw); the batch and the per-image distances; the
rows' figures from canned outputs of several draws. Run: python3 tools/graphnet/test_float64_draws.py"""

import sys
import unittest
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import float64  # noqa: E402


class RedrawTest(unittest.TestCase):
    def test_draw_zero_is_the_inputs_and_redraws_are_seeded(self):
        feeds = {"x": np.linspace(-3, 3, 24, dtype=np.float32).reshape(2, 3, 4), "ids": np.arange(2)}
        self.assertIs(float64.draw_inputs(feeds, 0, 7)["x"], feeds["x"])
        one, again, other = (float64.draw_inputs(feeds, 1, 7), float64.draw_inputs(feeds, 1, 7),
                             float64.draw_inputs(feeds, 2, 7))
        np.testing.assert_array_equal(one["x"], again["x"])
        self.assertFalse(np.array_equal(one["x"], other["x"]))
        np.testing.assert_array_equal(one["ids"], feeds["ids"])  # integers as they are
        self.assertEqual(one["x"].dtype, np.float32)
        steps = np.abs(one["x"].astype(np.float64) - feeds["x"])
        spacing = np.spacing(np.abs(feeds["x"])).astype(np.float64)
        # one nextafter step: the spacing at |x| (half of it towards zero at a power of two; any step from 0)
        self.assertTrue(np.all((steps == spacing) | (steps == spacing / 2) | ((feeds["x"] == 0) & (steps > 0))))
        self.assertTrue(0 < (one["x"] > feeds["x"]).sum() < feeds["x"].size)  # both directions


class PerImageTest(unittest.TestCase):
    def test_batch_of(self):
        self.assertEqual(float64.batch_of({"a": np.zeros((4, 3), np.float32), "b": np.zeros((4,), np.float32),
                                           "n": np.zeros((2,), np.int64)}), 4)
        self.assertIsNone(float64.batch_of({"a": np.zeros((1, 3), np.float32)}))  # one image: nothing to split
        # PicoDet's: the images decide, not the anchors beside them nor a [batch] scale factor
        self.assertEqual(float64.batch_of({"x": np.zeros((8, 3, 4, 4), np.float32), "anchors": np.zeros((47, 2),
                                           np.float32), "scale": np.zeros((8,), np.float32)}), 8)
        self.assertIsNone(float64.batch_of({"x": np.zeros((1, 3, 4, 4), np.float32),
                                            "anchors": np.zeros((47, 2), np.float32)}))
        self.assertIsNone(float64.batch_of({"n": np.zeros((4,), np.int64)}))

    def test_per_image_and_whole(self):
        ref = np.zeros((3, 2))
        x = np.array([[1e-3, 0], [0, -4e-3], [2e-3, 1e-3]], np.float32)
        got = float64.per_image(x, ref, 3)
        np.testing.assert_allclose(got, [1e-3, 4e-3, 2e-3], rtol=1e-6)
        self.assertEqual(len(float64.per_image(x, ref, None)), 1)  # no batch: the whole output
        self.assertEqual(len(float64.per_image(x.T, ref.T, 3)), 1)  # an output without the batch as dim 0
        ref[1, 0] = np.inf
        self.assertEqual(float64.per_image(x, ref, 3)[1], float("inf"))  # finite where float64 is not


class WithDrawsTest(unittest.TestCase):
    def test_rows_get_figures(self):
        ref = np.zeros((4, 2))
        draws = []
        for d in range(3):
            want = np.full((4, 2), 1e-3, np.float32)
            got = np.full((4, 2), 1e-3, np.float32)
            if d == 0:
                got[1] = 9e-3  # one image far in draw 0 only: one draw's luck
            draws.append(([want], [got], [ref]))
        rows = float64.with_draws([{"output": 0, "kforge": 9e-3, "paddle": 1e-3}], draws, 4)
        d = rows[0]["draws"]
        self.assertEqual((d["count"], d["images"]), (3, 4))
        self.assertAlmostEqual(d["kforge"], 1e-3, places=9)
        self.assertAlmostEqual(d["paddle"], 1e-3, places=9)
        self.assertEqual(float64.verdict(rows), "agree-f64")  # draw 0's largest alone: 9x, differ
        self.assertEqual(float64.verdict([{"output": 0, "kforge": 9e-3, "paddle": 1e-3}]), "differ")

    def test_rows_the_rule_cannot_measure(self):
        rows = float64.with_draws([{"output": 0, "why": "int64 output differs"}], [([np.zeros(2)],) * 3], None)
        self.assertNotIn("draws", rows[0])


if __name__ == "__main__":
    unittest.main()
