#!/usr/bin/env python3
"""tools/graphnet/table.py on canned results (no Paddle, no numpy): families, counts at each stage, missing ops,
and the per-sample rows that keep every failure's error line. Run: python3 tools/graphnet/test_table.py"""

import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import table  # noqa: E402


def r(sample, status, **kw):
    source, model = sample.split("/")[:2]
    return dict(sample=sample, source=source, model=model, status=status, stage=kw.pop("stage", ""),
                error=kw.pop("error", ""), **kw)


CPU = [
    r("PaddleX/ResNet18/subgraph_0", "agree", worst=1e-6, max_abs=2e-6, gen_bytes=1000, export_s=3, paddle_s=1,
      generate_s=0.2, build_run_s=20),
    r("PaddleX/ResNet50_vd/subgraph_1", "differ", worst=3e-3, max_abs=1e-2, error="output 0: max abs 0.01",
      random_ops=["uniform"]),
    r("PaddleX/ResNet101/subgraph_2", "unknown-op", ops=["gather_nd", "min"], stage="generate",
      error="unsupported ops (not in the kernel library kernels/ops.yaml): gather_nd, min"),
    r("PaddleX/PP-OCRv4_server_det/subgraph_0", "unknown-op", ops=["gather_nd"], stage="generate"),
    r("PaddleX/PP-OCRv4_mobile_rec/subgraph_3", "error", stage="build",
      error="the generated code does not build: model.cc:12: error: 'x' was not declared"),
    r("PaddleX/PP-LCNet_x1_0/subgraph_0", "error", stage="generate", error="inference.json:1:20: bad attribute"),
    r("PaddleNLP/bert-base-cased/subgraph_0", "export-fail", stage="Paddle predictor",
      error="RuntimeError: std::exception"),
    r("PaddleNLP/ernie-3.0-tiny-nano-v2-zh/subgraph_0", "agree", worst=0.0, max_abs=0.0),
]

# Beyond the fixed bound: one within the float64 rule, one not, one whose float64 run failed.
F64 = [
    r("PaddleX/PicoDet-S/subgraph_13", "agree-f64", worst=5.5e-2, max_abs=5.1e13, error="output 2: max abs 3",
      float64={"status": "ok", "rows": [{"output": 2, "kforge": 6.97, "paddle": 6.97}]}),
    r("PaddleX/PicoDet-S/subgraph_2", "differ", worst=1e-2, max_abs=1e-2, error="output 0: max abs 0.01",
      float64={"status": "ok", "rows": [{"output": 0, "kforge": 3e-2, "paddle": 1e-3}]}),
    r("PaddleX/PP-OCRv3_server_det/subgraph_1", "differ", worst=1.0, max_abs=1.0,
      float64={"status": "failed", "error": "out of memory (over 8 GiB)"}),
]


class TableTest(unittest.TestCase):
    def test_family(self):
        self.assertEqual(table.family("ResNet101"), "ResNet")
        self.assertEqual(table.family("ResNet50_vd"), "ResNet")
        self.assertEqual(table.family("PP-OCRv4_server_det"), "PP-OCRv4")
        self.assertEqual(table.family("PP-LCNet_x1_0"), "PP-LCNet")
        self.assertEqual(table.family("MobileNetV3_large_x1_0"), "MobileNetV3")
        self.assertEqual(table.family("StarNet-S1"), "StarNet")
        self.assertEqual(table.family("bert-base-cased"), "bert")
        self.assertEqual(table.family("ernie-3.0-tiny-nano-v2-zh"), "ernie")
        self.assertEqual(table.family("Mask-RT-DETR-S"), "Mask-RT-DETR")
        self.assertEqual(table.family("MaskRCNN-ResNet50-FPN"), "MaskRCNN")

    def test_counts(self):
        s = table.summary_counts(CPU, "cpu")
        self.assertEqual(dict(s), dict(samples=8, exported=7, generated=4, ran=3, agree=2, agree_f64=0))
        self.assertIn("agrees with Paddle on 2 (29 %). 1 of those that run draw random numbers (1 of them differ)",
                      table.headline(CPU, "cpu"))

    def test_family_rows(self):
        text = table.family_table(CPU, "cpu")
        rows = {line.split(" | ")[0].strip("| "): line for line in text.splitlines()[2:]}
        self.assertIn("| PaddleX/ResNet | 3 | 3 | 2 (67 %) | 2 (67 %) | 1 (33 %) | 0 | 1 | 1 | 0 | gather_nd 1, min 1 |",
                      rows["PaddleX/ResNet"])
        self.assertIn("| PaddleNLP/bert | 1 | 0 | 0 |", rows["PaddleNLP/bert"])
        self.assertTrue(rows["**all**"].startswith("| **all** | 8 | 7 | 4 (57 %)"))

    def test_missing_ops(self):
        self.assertEqual(table.missing_ops(CPU).most_common(), [("gather_nd", 2), ("min", 1)])
        self.assertIn("| gather_nd | 2 | 1 |", table.ops_table(CPU))

    def test_missing_ops_of_an_error_sample(self):
        # kforge named a missing op and another error: the line is the other error, the op is still counted.
        mixed = CPU + [r("PaddleX/MaskRCNN-ResNet50-FPN/subgraph_3", "error", ops=["roi_align"], stage="generate",
                         error="inference.json:1:9: bad attribute")]
        self.assertEqual(table.missing_ops(mixed)["roi_align"], 1)
        self.assertIn("| roi_align | 1 | 0 |", table.ops_table(mixed))
        self.assertIn("bad attribute; missing ops too: roi_align", table.sample_table(mixed, "cpu"))

    def test_every_failure_keeps_its_line(self):
        text = table.sample_table(CPU, "cpu")
        for needle in ("Paddle predictor: RuntimeError: std::exception", "build: the generated code does not build",
                       "inference.json:1:20: bad attribute", "gather_nd, min", "3.00e-03 (abs 1.00e-02); output 0: max abs 0.01 (random: uniform)"):
            self.assertIn(needle, text)
        self.assertEqual(len(text.splitlines()), 2 + len(CPU))

    def test_float64_rule(self):
        # agree-f64 counts as agreeing (and as run), and is shown apart; its distances are in its row.
        s = table.summary_counts(CPU + F64, "cpu")
        self.assertEqual(dict(s), dict(samples=11, exported=10, generated=7, ran=6, agree=3, agree_f64=1))
        self.assertIn("agrees with Paddle on 3 (30 %) (1 of them beyond the fixed bound but within the float64 rule",
                      table.headline(CPU + F64, "cpu"))
        rows = {line.split(" | ")[0].strip("| "): line for line in table.family_table(F64, "cpu").splitlines()[2:]}
        self.assertEqual(rows["PaddleX/PicoDet"], "| PaddleX/PicoDet | 2 | 2 | 2 (100 %) | 2 (100 %) | 1 (50 %) | 1 | "
                                                  "1 | 0 | 0 |  |")
        text = table.sample_table(F64, "cpu")
        for needle in ("| PaddleX/PicoDet-S/subgraph_13 | agree-f64 | 5.50e-02 (abs 5.10e+13); output 2: max abs 3; "
                       "from float64: kforge 6.97, Paddle 6.97 (output 2) |",
                       "| differ | 1.00e-02 (abs 1.00e-02); output 0: max abs 0.01; from float64: kforge 0.03, "
                       "Paddle 0.001 (output 0) |",
                       "float64: failed (out of memory (over 8 GiB))"):
            self.assertIn(needle, text)
        self.assertNotIn("agree-f64", table.headline(CPU, "cpu"))

    def test_cuda(self):
        cuda = [r("PaddleX/ResNet18/subgraph_0", "generated", gen_bytes=10),
                r("PaddleX/ResNet50/subgraph_0", "unknown-op", ops=["mean"], stage="generate"),
                r("PaddleX/ResNet34/subgraph_0", "export-fail", error="timed out after 400 s")]
        self.assertIn("exports 2 (of those it does not, 1 timed out here); kforge generates CUDA code for 1 (50 %)",
                      table.headline(cuda, "cuda"))
        self.assertIn("| **all** | 3 | 2 | 1 (50 %) | 1 | 0 | mean 1 |", table.family_table(cuda, "cuda"))
        self.assertNotIn("build+run", table.sample_table(cuda, "cuda"))


if __name__ == "__main__":
    unittest.main()
