#!/usr/bin/env python3
"""tools/graphnet/export_sample.py without Paddle (numpy only): which inputs of input_meta.py become constants of
the program, and the wrapper source that makes them. Run: python3 tools/graphnet/test_export.py"""

import ast
import sys
import unittest
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import export_sample as es  # noqa: E402
import float64_sample  # noqa: E402


def meta(dtype, shape, data=None):
    return {"name": "data_0", "shape": shape, "dtype": dtype, "min_val": None, "max_val": None, "mean": None,
            "std": None, "data": data}


class BakeTest(unittest.TestCase):
    def test_small_integer_data_is_baked(self):
        self.assertTrue(es.bakeable(meta("int64", [], [496])))
        self.assertTrue(es.bakeable(meta("int32", [1, 1], [0])))
        self.assertTrue(es.bakeable(meta("bool", [2], [1, 0])))
        self.assertTrue(es.bakeable(meta("int64", [24, 1], list(range(24)))))

    def test_others_stay_inputs(self):
        self.assertFalse(es.bakeable(meta("int64", [4], None)))               # drawn, not fixed
        self.assertFalse(es.bakeable(meta("float32", [2], [0.5, 1.5])))       # a float
        self.assertFalse(es.bakeable(meta("int64", [65], list(range(65)))))   # more than BAKE_MAX_ELEMENTS

    def test_wrapper_makes_the_constants_and_passes_everything_by_keyword(self):
        constants = {"data_0": np.array(1435, dtype="int64"), "data_1": np.array([[0]], dtype="int32")}
        source = es.wrapper_source(["data_2"], ["parameter_0"], constants)
        tree = ast.parse(source)  # valid Python
        forward = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "forward"][0]
        self.assertEqual([a.arg for a in forward.args.args], ["self", "data_2"])
        self.assertIn('data_0 = paddle.to_tensor(np.array(1435, dtype="int64").reshape([]))', source)
        self.assertIn('data_1 = paddle.to_tensor(np.array([[0]], dtype="int32").reshape([1, 1]))', source)
        self.assertIn("self.graph(parameter_0=self.parameter_0, data_2=data_2, data_0=data_0, data_1=data_1)", source)
        # The literal gives back the values.
        line = es.constant_line("x", np.array([[3, -4]], dtype="int64")).strip()
        scope = {"np": np, "paddle": type("P", (), {"to_tensor": staticmethod(lambda a: a)})}
        exec(line, scope)
        self.assertTrue(np.array_equal(scope["x"], np.array([[3, -4]])))
        self.assertEqual(scope["x"].dtype, np.int64)

    def test_wrapper_without_inputs(self):
        # A sample with no inputs (Co-DINO-R50/subgraph_38: its mask from constants) is exported as forward(self).
        tree = ast.parse(es.wrapper_source([], [], {}))
        forward = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "forward"][0]
        self.assertEqual([a.arg for a in forward.args.args], ["self"])


class DrawTest(unittest.TestCase):
    def test_infinite_bound(self):
        # PP-OCRv3_mobile_rec/subgraph_3's mask: min -inf, max 6.34, mean -inf, std nan.
        m = dict(meta("float32", [8, 26, 40]), min_val=float("-inf"), max_val=6.34192, mean=float("-inf"),
                 std=float("nan"))
        values = es.draw(m, np.random.default_rng(7))
        self.assertEqual(values.dtype, np.float32)
        self.assertTrue(np.isneginf(values).any())
        finite = values[np.isfinite(values)]
        self.assertTrue(finite.size > 0 and finite.min() >= np.float32(5.34192) and finite.max() <= np.float32(6.34192))
        both = dict(m, max_val=float("inf"))
        values = es.draw(both, np.random.default_rng(7))
        self.assertTrue(np.isneginf(values).any() and np.isposinf(values).any())


UNUSED_INPUT_MODEL = """
class GraphModule(paddle.nn.Layer):
    def forward(self, parameter_0, data_0, data_1, data_2, data_3):
        a = paddle._C_ops.add(data_0, parameter_0)
        b = paddle._C_ops.multiply(data_1, a)      # b feeds only c, which no output needs
        c, d = (lambda x, f: f(x))(paddle._C_ops.split(b, 2), lambda out: out)
        del b, data_1
        e = paddle._C_ops.scale(a, data_3)
        data_3.add_(a)                             # a statement that is no assignment keeps every name
        del data_2
        return e, a
"""


class UnusedInputsTest(unittest.TestCase):
    def test_inputs_no_output_depends_on(self):
        # data_1 reaches only dead values, data_2 is only deleted (Mask-RT-DETR-S/subgraph_14's data_18, data_21).
        self.assertEqual(es.unused_inputs(UNUSED_INPUT_MODEL), ["data_1", "data_2"])

    def test_all_used(self):
        src = "class G:\n    def forward(self, data_0, data_1):\n        x = data_0 + data_1\n        return x\n"
        self.assertEqual(es.unused_inputs(src), [])


BOX_MODEL = """
class GraphModule(paddle.nn.Layer):
    def forward(self, parameter_0, data_0, data_1, data_2, data_3, data_4):
        combine_0 = [data_0, data_1]
        concat_0 = paddle._C_ops.concat(combine_0, full_0)
        (a, b, c) = (lambda x, f: f(x))(
            paddle._C_ops.distribute_fpn_proposals(concat_0, data_2, 2, 5, 4, 224, False), lambda out: out)
        (s0, s1) = a
        y = paddle._C_ops.roi_align(data_3, s0, b, 7, 7, float("0.25"), 0, True)
        z = paddle._C_ops.add(y, data_4)
        return z
"""


class BoxInputsTest(unittest.TestCase):
    def test_inputs_that_reach_a_box_argument(self):
        # Cascade-FasterRCNN-ResNet50-FPN/subgraph_6's shape: boxes concatenated, distributed, then roi_align'd;
        # the features (data_3, roi_align's first argument) and data_4 are no boxes.
        self.assertEqual(es.box_inputs(BOX_MODEL), ["data_0", "data_1", "data_2"])

    def test_corners_ordered(self):
        m = dict(meta("float32", [512, 4]), min_val=0.07, max_val=1024.0, mean=459.5, std=260.8)
        drawn = es.draw(m, np.random.default_rng(8))
        self.assertTrue((drawn[:, 2] < drawn[:, 0]).any())  # independent draws: many boxes inside out
        boxes = es.with_ordered_corners(m, drawn)
        self.assertEqual(boxes.dtype, np.float32)
        self.assertTrue((boxes[:, 0] <= boxes[:, 2]).all() and (boxes[:, 1] <= boxes[:, 3]).all())
        # The same values, each x pair and y pair only ordered.
        self.assertTrue(np.array_equal(np.sort(boxes[:, 0::2], axis=1), np.sort(drawn[:, 0::2], axis=1)))
        self.assertTrue(np.array_equal(np.sort(boxes[:, 1::2], axis=1), np.sort(drawn[:, 1::2], axis=1)))
        no_minimum = dict(m, min_val=None)  # weight_meta leaves out a minimum of 0
        self.assertTrue((es.with_ordered_corners(no_minimum, drawn)[:, 0::2] == boxes[:, 0::2]).all())

    def test_other_values_unchanged(self):
        drawn = np.random.default_rng(8).normal(size=(6, 4)).astype(np.float32)
        deltas = dict(meta("float32", [6, 4]), min_val=-3.0, max_val=3.0)            # a negative minimum
        given = dict(meta("float32", [6, 4], drawn.tolist()), min_val=0.0)           # input_meta's own data
        for m, value in ((deltas, drawn), (given, drawn), (meta("float32", [4, 6]), drawn.reshape(4, 6)),
                         (meta("int64", [6, 4]), drawn.astype(np.int64))):
            self.assertIs(es.with_ordered_corners(m, value), value)


TRAINING_MODE_MODEL = """
class GraphModule(paddle.nn.Layer):
    def forward(self, parameter_0, parameter_1, parameter_2, parameter_3, data_0):
        (batch_norm__0, b1, b2, b3, b4, b5) = (lambda x, f: f(x))(
            paddle._C_ops.batch_norm(
                data_0,
                parameter_0,
                parameter_1,
                parameter_2,
                parameter_3,
                False,
                float("0.9"),
                float("1e-05"),
                "NCHW",
                False,
                False,
            ),
            lambda out: out,
        )
        full_2 = paddle._C_ops.full([1], float("0.1"), paddle.float32, paddle.core.CPUPlace())
        dropout_0, dropout_1 = (lambda x, f: f(x))(
            paddle._C_ops.dropout(batch_norm__0, None, full_2, False, "upscale_in_train", 0, False),
            lambda out: out,
        )
        return dropout_0
"""


class EvalModeTest(unittest.TestCase):
    def test_is_test_made_true(self):
        # PP-HGNetV2-B4_ML/subgraph_1 spells batch_norm and dropout with is_test False (recorded in training mode);
        # the exported program runs them with is_test true, so the float64 reference must too.
        text, count = float64_sample.in_eval_mode(TRAINING_MODE_MODEL)
        self.assertEqual(count, 2)
        self.assertIn("                True,\n                float(\"0.9\")", text)
        self.assertIn('(batch_norm__0, None, full_2, True, "upscale_in_train", 0, False)', text)
        # use_global_stats, trainable_statistics and fix_seed (other positions) stay False.
        self.assertEqual(text.count("False"), TRAINING_MODE_MODEL.count("False") - 2)
        self.assertEqual(float64_sample.in_eval_mode(text), (text, 0))

    def test_float64_source_is_in_eval_mode(self):
        text, count = float64_sample.float64_source(TRAINING_MODE_MODEL)
        self.assertEqual(count, 1)  # paddle.float32 of the full; the is_test changes are not counted
        self.assertIn("paddle.float64", text)
        self.assertEqual(float64_sample.in_eval_mode(text)[1], 0)

    def test_one_hot_made_float64(self):
        # one_hot's result is float32 whatever its input; FCOS-ResNet50/subgraph_4 feeds it beside float64 logits.
        text, count = float64_sample.float64_source("one_hot_0 = paddle._C_ops.one_hot(\n"
                                                    "    cast_1 % paddle.cast(full_6, cast_1.dtype), full_6\n)\n")
        self.assertEqual(count, 1)
        self.assertEqual(text, "one_hot_0 = (lambda *a: paddle._C_ops.one_hot(*a).astype(paddle.float64))(\n"
                               "    cast_1 % paddle.cast(full_6, cast_1.dtype), full_6\n)\n")


# A forward in GraphNet's spelling: its own `del`s late (b kept to the end though its last use is the second
# statement), a name bound only in a nested block (c), a lambda's parameters (x, f), a global (paddle).
LATE_DEL_MODEL = """import paddle


class GraphModule(paddle.nn.Layer):
    def forward(self, parameter_0, data_0):
        b = paddle.add(data_0, parameter_0)
        d, e = (lambda x, f: f(x))(paddle.add(b, b), lambda out: (out, out))
        if True:
            c = d
        g = paddle.add(c, e)
        del data_0

        h = paddle.add(g, g)
        del (
            b,
            d,
            e,
        )
        return h, g
"""


class FreedAfterLastUseTest(unittest.TestCase):
    def test_each_local_deleted_after_its_last_use(self):
        text, count = float64_sample.freed_after_last_use(LATE_DEL_MODEL)
        self.assertEqual(count, 4)
        lines = [line.strip() for line in text.splitlines()]
        body = lines[lines.index("def forward(self, parameter_0, data_0):") + 1:]
        self.assertEqual(body[:2], ["b = paddle.add(data_0, parameter_0)", "del data_0, parameter_0"])
        self.assertEqual(body[3], "del b")
        # d's last use is the if block; e's is g's statement; c (bound in the if only) and the lambda's x, f
        # are never deleted.
        self.assertEqual(body[6:9], ["del d", "g = paddle.add(c, e)", "del e"])
        self.assertNotIn("del (", text)                        # the model's own dels are gone
        self.assertEqual(body[-1], "return h, g")              # nothing deleted after return; h, g returned
        self.assertEqual([l for l in body if l.startswith("del")], ["del data_0, parameter_0", "del b", "del d",
                                                                    "del e"])

    def test_the_freed_model_computes_the_same(self):
        class Paddle:  # add on numbers, enough for the text to run
            class nn:
                Layer = object
            add = staticmethod(lambda a, b: a + b)
        results = []
        for text in (LATE_DEL_MODEL, float64_sample.freed_after_last_use(LATE_DEL_MODEL)[0]):
            scope = {}
            exec(compile(text.replace("import paddle", ""), "model", "exec"), {"paddle": Paddle}, scope)
            results.append(scope["GraphModule"]().forward(parameter_0=2, data_0=3))
        self.assertEqual(results[0], results[1])
        self.assertEqual(results[1], (40, 20))

    def test_without_graph_module(self):
        self.assertEqual(float64_sample.freed_after_last_use("x = 1\n"), ("x = 1\n", 0))


if __name__ == "__main__":
    unittest.main()
