#!/usr/bin/env python3
"""tools/graphnet/precision_draws.py's arithmetic (numpy, no Paddle): a redrawn copy is one ulp from its image in
every float element and equal in the others; the per-image summary finds the rule's figure and the spread. Run:
VENV/bin/python tools/graphnet/test_precision_draws.py"""

import sys
import unittest
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import precision_draws  # noqa: E402


class RedrawTest(unittest.TestCase):
    def test_one_ulp_each_way(self):
        base = np.array([[1.0, -2.5, 0.0], [3e-38, 7.0, -1e6]], dtype=np.float32)
        batch = precision_draws.redraw(base, 9, np.random.default_rng(0))
        self.assertEqual(batch.shape, (9, 2, 3))
        self.assertEqual(batch.dtype, np.float32)
        np.testing.assert_array_equal(batch[0], base)  # copy 0 is the image itself
        ulp = np.spacing(np.abs(base)).astype(np.float64)
        for copy in batch[1:]:
            moved = np.abs(copy.astype(np.float64) - base.astype(np.float64))
            # one step of nextafter: the spacing at |x| (below it, for a step towards zero at a power of two)
            self.assertTrue(np.all((moved == ulp) | (moved == ulp / 2) | ((base == 0) & (moved > 0))))
        ups = (batch[1:] > base).sum()
        self.assertTrue(0 < ups < 8 * base.size)  # both directions drawn

    def test_integers_kept(self):
        base = np.arange(6, dtype=np.int64).reshape(2, 3)
        batch = precision_draws.redraw(base, 4, np.random.default_rng(1))
        for copy in batch:
            np.testing.assert_array_equal(copy, base)


class SummaryTest(unittest.TestCase):
    def test_rule_figure_and_spread(self):
        f64 = np.zeros((4, 3))
        paddle = np.array([[1e-3, 0, 0], [0, 2e-3, 0], [0, 0, 1e-3], [4e-3, 0, 0]], dtype=np.float32)
        other = np.array([[3e-3, 0, 0], [0, 1e-3, 0], [0, 0, 1e-3], [4e-3, 0, 0]], dtype=np.float32)
        s = precision_draws.summary(f64, paddle, other)
        self.assertAlmostEqual(s["largest"], 4e-3, places=9)
        self.assertEqual(s["at"], 3)
        self.assertAlmostEqual(s["ratio"], 1.0, places=6)  # the largest over the batch: equal
        self.assertEqual((s["over"], s["under"], s["images"]), (1, 1, 4))  # image 0: 3x, image 1: 0.5x
        self.assertAlmostEqual(s["geomean"], (3 * 0.5) ** 0.25, places=5)
        self.assertAlmostEqual(s["high"], 3.0, places=5)
        self.assertAlmostEqual(s["low"], 0.5, places=5)


if __name__ == "__main__":
    unittest.main()
