"""The Paddle oracle's cases: one line per program. tools/paddle-fixtures saves each with paddle.jit.save, runs it
with Paddle's predictor and writes tests/paddle/<name>/; the meson suite `paddle` checks kforge against it.

To add a case: append C(name, forward, inputs, params) below, run `tools/paddle-fixtures NAME` and check in
tests/paddle/NAME/ (tests/paddle/README.md). `forward` receives the inputs, then the parameters, as Paddle
tensors; `t(*dims, dtype=..., low=..., high=...)` describes one (None in an input's dims: dynamic).
"""

import paddle
import paddle.nn.functional as F

from spec import Case as C
from spec import t

NUMBER = ("float32", "float64", "int32", "int64")
FLOAT = ("float32", "float64")
NO_KERNEL = "no kernel in kernels/ops.yaml yet"

CASES = [
    # ---- elementwise binary, broadcasting, every dtype the kernels take, a dynamic batch ----
    *[C(f"add_{dt}", lambda x, y: x + y, [t(2, 3, dtype=dt), t(2, 3, dtype=dt)], ops=("add",)) for dt in NUMBER],
    C("add_broadcast_row", lambda x, y: x + y, [t(2, 3, 4), t(4)], ops=("add",)),
    C("add_broadcast_mid", lambda x, y: x + y, [t(2, 1, 4), t(3, 1)], ops=("add",)),
    C("add_dynamic", lambda x, b: x + b, [t(None, 3)], [t(3)], ops=("add",)),
    *[C(f"subtract_{dt}", lambda x, y: x - y, [t(2, 3, dtype=dt), t(3, dtype=dt)], ops=("subtract",)) for dt in NUMBER],
    *[C(f"multiply_{dt}", lambda x, y: x * y, [t(2, 3, dtype=dt), t(2, 1, dtype=dt)], ops=("multiply",))
      for dt in NUMBER],
    *[C(f"divide_{dt}", lambda x, y: x / y, [t(2, 3, dtype=dt), t(2, 3, dtype=dt, low=0.5, high=2.0)],
        ops=("divide",)) for dt in FLOAT],
    C("divide_int32", lambda x, y: paddle.divide(x, y), [t(2, 3, dtype="int32", low=-9, high=10),
                                                         t(2, 3, dtype="int32", low=1, high=4)], ops=("divide",)),
    *[C(f"maximum_{dt}", lambda x, y: paddle.maximum(x, y), [t(2, 3, dtype=dt), t(3, dtype=dt)], ops=("maximum",))
      for dt in NUMBER],
    *[C(f"minimum_{dt}", lambda x, y: paddle.minimum(x, y), [t(2, 3, dtype=dt), t(2, 3, dtype=dt)],
        ops=("minimum",)) for dt in NUMBER],
    *[C(f"pow_{dt}", lambda x, y: paddle.pow(x, y), [t(2, 3, dtype=dt, low=0.5, high=2.0), t(2, 3, dtype=dt)],
        ops=("elementwise_pow",)) for dt in FLOAT],
    C("add_n", lambda x, y, z: paddle.add_n([x, y, z]), [t(2, 3), t(2, 3), t(2, 3)], ops=("add_n",)),
    C("where", lambda c, x, y: paddle.where(c, x, y), [t(2, 3, dtype="bool"), t(2, 3), t(2, 3)], ops=("where",)),
    C("where_broadcast", lambda c, x, y: paddle.where(c, x, y), [t(2, 3, dtype="bool"), t(3), t(2, 1)],
      ops=("where",)),

    # ---- elementwise unary and activations ----
    *[C(f"relu_{dt}", lambda x: F.relu(x), [t(2, 5, dtype=dt)], ops=("relu",)) for dt in FLOAT],
    C("relu_dynamic", lambda x: F.relu(x), [t(None, 4, run=(3, 4))], ops=("relu",)),
    *[C(f"exp_{dt}", lambda x: paddle.exp(x), [t(2, 5, dtype=dt)], ops=("exp",)) for dt in FLOAT],
    *[C(f"tanh_{dt}", lambda x: paddle.tanh(x), [t(2, 5, dtype=dt)], ops=("tanh",)) for dt in FLOAT],
    *[C(f"sigmoid_{dt}", lambda x: F.sigmoid(x), [t(2, 5, dtype=dt)], ops=("sigmoid",)) for dt in FLOAT],
    C("rsqrt", lambda x: paddle.rsqrt(x), [t(2, 5, low=0.1, high=4.0)], ops=("rsqrt",)),
    C("floor", lambda x: paddle.floor(x * 3.0), [t(2, 5)], ops=("floor",)),
    C("gelu", lambda x: F.gelu(x), [t(2, 5, low=-3, high=3)], ops=("gelu",)),
    C("gelu_tanh", lambda x: F.gelu(x, approximate=True), [t(2, 5, low=-3, high=3)], ops=("gelu",)),
    C("silu", lambda x: F.silu(x), [t(2, 5, low=-3, high=3)], ops=("silu",)),
    C("swish", lambda x: F.swish(x), [t(2, 5, low=-3, high=3)], ops=("swish",)),
    C("hardswish", lambda x: F.hardswish(x), [t(2, 5, low=-4, high=4)], ops=("hardswish",)),
    C("thresholded_relu", lambda x: F.thresholded_relu(x, threshold=0.3), [t(2, 5)], ops=("thresholded_relu",)),
    C("clip", lambda x: paddle.clip(x, min=-0.5, max=0.25), [t(2, 5)], ops=("clip",)),
    *[C(f"scale_{dt}", lambda x: paddle.scale(x, scale=3, bias=2), [t(2, 3, dtype=dt)], ops=("scale",))
      for dt in NUMBER],
    C("scale_bias_before", lambda x: paddle.scale(x, scale=-0.5, bias=1.0, bias_after_scale=False), [t(2, 3)],
      ops=("scale",)),
    C("cast_f32_i32", lambda x: (x * 4).astype("int32"), [t(2, 5)], ops=("cast",)),
    C("cast_i64_f32", lambda x: x.astype("float32"), [t(2, 5, dtype="int64")], ops=("cast",)),
    C("cast_f32_f64", lambda x: x.astype("float64"), [t(2, 5)], ops=("cast",)),
    C("cast_i32_bool", lambda x: x.astype("bool"), [t(2, 5, dtype="int32", low=-1, high=2)], ops=("cast",)),
    C("dropout_eval", lambda x: F.dropout(x, p=0.5, training=False), [t(2, 5)], ops=("dropout",)),
    C("dropout_eval_downscale", lambda x: F.dropout(x, p=0.25, training=False, mode="downscale_in_infer"),
      [t(2, 5)], ops=("dropout",)),
    C("assign", lambda x: paddle.assign(x) + 1.0, [t(2, 3)], ops=("assign",)),

    # ---- creation ----
    C("full", lambda x: x + paddle.full([2, 3], 1.5), [t(2, 3)], ops=("full",)),
    C("full_like", lambda x: x + paddle.full_like(x, 0.25), [t(None, 3)], ops=("full_like",)),
    C("assign_value", lambda x: x * paddle.to_tensor([1.0, -2.0, 3.0]), [t(2, 3)], ops=("assign_value_",)),
    C("shape", lambda x: paddle.shape(x), [t(None, 3, run=(4, 3))], ops=("shape64",)),
    C("shape_reshape", lambda x: paddle.reshape(x, [paddle.shape(x)[0], -1]), [t(None, 2, 3)],
      ops=("shape64", "reshape")),

    # ---- reductions ----
    *[C(f"sum_{dt}", lambda x: paddle.sum(x, axis=1), [t(2, 3, 4, dtype=dt)], ops=("sum",)) for dt in NUMBER],
    C("sum_all", lambda x: paddle.sum(x), [t(3, 4)], ops=("sum",)),
    C("sum_keepdim", lambda x: paddle.sum(x, axis=[0, 2], keepdim=True), [t(2, 3, 4)], ops=("sum",)),
    C("sum_dtype", lambda x: paddle.sum(x, axis=-1, dtype="int64"), [t(2, 3, dtype="int32")], ops=("sum",)),
    *[C(f"mean_{dt}", lambda x: paddle.mean(x, axis=-1), [t(2, 3, 4, dtype=dt)], ops=("mean",)) for dt in FLOAT],
    C("mean_keepdim", lambda x: paddle.mean(x, axis=[1, 2], keepdim=True), [t(2, 3, 4)], ops=("mean",)),
    *[C(f"max_{dt}", lambda x: paddle.max(x, axis=0), [t(3, 4, dtype=dt)], ops=("max",)) for dt in NUMBER],
    C("max_keepdim", lambda x: paddle.max(x, axis=-1, keepdim=True), [t(2, 3, 4)], ops=("max",)),
    *[C(f"softmax_{dt}", lambda x: F.softmax(x, axis=-1), [t(2, 3, 5, dtype=dt, low=-3, high=3)],
        ops=("softmax",)) for dt in FLOAT],
    C("softmax_axis1", lambda x: F.softmax(x, axis=1), [t(2, 3, 5)], ops=("softmax",)),

    # ---- matmul and layers with parameters ----
    C("matmul", lambda x, y: paddle.matmul(x, y), [t(2, 3), t(3, 4)], ops=("matmul",)),
    C("matmul_f64", lambda x, y: paddle.matmul(x, y), [t(2, 3, dtype="float64"), t(3, 4, dtype="float64")],
      ops=("matmul",)),
    C("matmul_transpose", lambda x, y: paddle.matmul(x, y, transpose_x=True, transpose_y=True),
      [t(3, 2), t(4, 3)], ops=("matmul",)),
    C("matmul_batched", lambda x, y: paddle.matmul(x, y), [t(2, 2, 3, 4), t(4, 5)], ops=("matmul",)),
    C("matmul_broadcast_batch", lambda x, y: paddle.matmul(x, y), [t(2, 1, 3, 4), t(1, 3, 4, 2)], ops=("matmul",)),
    C("matmul_broadcast_rank", lambda x, y: paddle.matmul(x, y), [t(2, 1, 3, 4), t(3, 4, 2)], ops=("matmul",),
      pending="Paddle 3.3.1 declares the result tensor<2x1x3x2> but computes [2, 3, 3, 2]; kforge rejects the "
              "program's conflicting declared type"),
    C("matmul_vector", lambda x, y: paddle.matmul(x, y), [t(3), t(3, 4)], ops=("matmul",)),
    C("linear", lambda x, w, b: F.linear(x, w, b), [t(None, 4)], [t(4, 3), t(3)], ops=("matmul", "add")),
    C("mlp", lambda x, w1, b1, w2, b2: F.linear(F.relu(F.linear(x, w1, b1)), w2, b2), [t(None, 6, run=(3, 6))],
      [t(6, 8), t(8), t(8, 2), t(2)], ops=("matmul", "add", "relu")),
    C("embedding", lambda ids, w: F.embedding(ids, w), [t(2, 3, dtype="int64", low=0, high=5)], [t(5, 4)],
      ops=("embedding",)),
    C("embedding_padding_idx", lambda ids, w: F.embedding(ids, w, padding_idx=1),
      [t(2, 3, dtype="int64", low=0, high=5)], [t(5, 4)], ops=("embedding",)),
    C("layer_norm", lambda x, w, b: F.layer_norm(x, [4], w, b), [t(2, 3, 4)], [t(4), t(4)], ops=("layer_norm",),
      pending="kforge's LayerNormInferMeta (shape rule and kernels/meta_basic.cc) makes mean/variance [left] = [6]; "
              "Paddle 3.3.1 declares x.dims[:begin_norm_axis] = [2, 3]"),
    C("layer_norm_2d", lambda x, w, b: F.layer_norm(x, [3, 4], w, b, epsilon=1e-3), [t(2, 3, 4)],
      [t(12), t(12)], ops=("layer_norm",)),
    C("batch_norm", lambda x, m, v, w, b: F.batch_norm(x, m, v, w, b, training=False),
      [t(2, 3, 4, 4)], [t(3), t(3, low=0.5, high=2.0), t(3), t(3)], ops=("batch_norm_",)),
    C("conv2d", lambda x, w: F.conv2d(x, w), [t(1, 2, 5, 5)], [t(3, 2, 3, 3)], ops=("conv2d",)),
    C("conv2d_bias_stride_pad", lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1), [t(2, 2, 6, 5)],
      [t(4, 2, 3, 3), t(4)], ops=("conv2d", "add")),
    C("conv2d_dilation_groups", lambda x, w: F.conv2d(x, w, padding=2, dilation=2, groups=2), [t(1, 4, 5, 5)],
      [t(4, 2, 3, 3)], ops=("conv2d",)),
    C("conv2d_nhwc", lambda x, w: F.conv2d(x, w, padding=1, data_format="NHWC"), [t(1, 5, 5, 2)],
      [t(3, 2, 3, 3)], ops=("conv2d",)),
    C("conv2d_dynamic_batch", lambda x, w: F.conv2d(x, w, padding=1), [t(None, 2, 4, 4)], [t(3, 2, 3, 3)],
      ops=("conv2d",)),
    C("depthwise_conv2d", lambda x, w: F.conv2d(x, w, padding=1, groups=3), [t(1, 3, 5, 5)], [t(3, 1, 3, 3)],
      ops=("depthwise_conv2d",)),
    C("conv2d_transpose", lambda x, w: F.conv2d_transpose(x, w, stride=2, padding=1), [t(1, 2, 3, 3)],
      [t(2, 3, 3, 3)], ops=("conv2d_transpose",)),
    C("max_pool2d", lambda x: F.max_pool2d(x, kernel_size=2, stride=2), [t(1, 2, 4, 6)], ops=("pool2d",)),
    C("avg_pool2d_pad", lambda x: F.avg_pool2d(x, kernel_size=3, stride=2, padding=1), [t(1, 2, 5, 5)],
      ops=("pool2d",)),
    C("avg_pool2d_exclusive_false", lambda x: F.avg_pool2d(x, 3, 2, 1, exclusive=False), [t(1, 2, 5, 5)],
      ops=("pool2d",)),
    C("adaptive_avg_pool2d", lambda x: F.adaptive_avg_pool2d(x, 1), [t(2, 3, 4, 4)], ops=("pool2d",)),
    C("nearest_interp", lambda x: F.interpolate(x, scale_factor=2, mode="nearest"), [t(1, 2, 2, 3)],
      ops=("nearest_interp",)),
    C("nearest_interp_size", lambda x: F.interpolate(x, size=[3, 5], mode="nearest"), [t(1, 2, 2, 3)],
      ops=("nearest_interp",)),

    # ---- shape and data movement ----
    *[C(f"reshape_{dt}", lambda x: paddle.reshape(x, [3, -1]), [t(2, 3, 2, dtype=dt)], ops=("reshape",))
      for dt in NUMBER],
    C("reshape_dynamic", lambda x: paddle.reshape(x, [-1, 6]), [t(None, 2, 3)], ops=("reshape",)),
    C("flatten", lambda x: paddle.flatten(x, 1, -1), [t(2, 3, 2, 2)], ops=("flatten",)),
    C("squeeze", lambda x: paddle.squeeze(x, axis=1), [t(2, 1, 3)], ops=("squeeze",)),
    C("unsqueeze", lambda x: paddle.unsqueeze(x, axis=[0, 2]), [t(2, 3)], ops=("unsqueeze",)),
    *[C(f"transpose_{dt}", lambda x: paddle.transpose(x, [2, 0, 1]), [t(2, 3, 4, dtype=dt)], ops=("transpose",))
      for dt in NUMBER],
    C("concat", lambda x, y: paddle.concat([x, y], axis=1), [t(2, 3), t(2, 2)], ops=("concat",)),
    C("concat_neg_axis_int64", lambda x, y, z: paddle.concat([x, y, z], axis=-1),
      [t(2, 2, 1, dtype="int64"), t(2, 2, 2, dtype="int64"), t(2, 2, 1, dtype="int64")], ops=("concat",)),
    C("stack", lambda x, y: paddle.stack([x, y], axis=1), [t(2, 3), t(2, 3)], ops=("stack",)),
    C("split_sections", lambda x: paddle.split(x, [1, 3], axis=1), [t(2, 4, 2)], ops=("split",)),
    C("split_num", lambda x: paddle.split(x, 2, axis=-1), [t(2, 3, 4)], ops=("split_with_num",)),
    C("slice", lambda x: x[:, 1:3], [t(2, 4, 3)], ops=("slice",)),
    C("slice_neg", lambda x: x[-2:, :, 1:], [t(3, 2, 4)], ops=("slice",)),
    C("strided_slice", lambda x: x[:, ::2], [t(2, 5)], ops=("strided_slice",)),
    C("expand", lambda x: paddle.expand(x, [2, 3, 4]), [t(3, 1)], ops=("expand",)),
    C("expand_int64", lambda x: paddle.expand(x, [3, 2]), [t(1, 2, dtype="int64")], ops=("expand",)),
    C("transpose_bool", lambda x: paddle.transpose(x, [1, 0]), [t(2, 3, dtype="bool")], ops=("transpose",)),
    C("concat_bool", lambda x, y: paddle.concat([x, y], axis=0), [t(1, 3, dtype="bool"), t(2, 3, dtype="bool")],
      ops=("concat",)),
    C("cast_bool_f32", lambda x: x.astype("float32"), [t(2, 3, dtype="bool")], ops=("cast",)),
    C("cast_i32_i64", lambda x: x.astype("int64"), [t(2, 3, dtype="int32")], ops=("cast",)),
    C("cast_f64_f32", lambda x: x.astype("float32"), [t(2, 3, dtype="float64")], ops=("cast",)),
    C("where_int64", lambda c, x, y: paddle.where(c, x, y),
      [t(2, 3, dtype="bool"), t(2, 3, dtype="int64"), t(2, 3, dtype="int64")], ops=("where",)),

    # ---- dynamic dims (InputSpec None) through more ops ----
    C("softmax_dynamic", lambda x: F.softmax(x, axis=-1), [t(None, 5, run=(3, 5))], ops=("softmax",)),
    C("sum_dynamic", lambda x: paddle.sum(x, axis=-1), [t(None, 4, run=(3, 4))], ops=("sum",)),
    C("concat_dynamic", lambda x, y: paddle.concat([x, y], axis=0), [t(None, 3), t(None, 3, run=(1, 3))],
      ops=("concat",)),
    C("transpose_dynamic", lambda x: paddle.transpose(x, [1, 0, 2]), [t(None, 3, 2)], ops=("transpose",)),
    C("layer_norm_dynamic", lambda x, w, b: F.layer_norm(x, [6], w, b), [t(None, 6, run=(3, 6))], [t(6), t(6)],
      ops=("layer_norm",)),
    C("matmul_dynamic", lambda x, y: paddle.matmul(x, y), [t(None, 3, run=(4, 3)), t(3, None, run=(3, 2))],
      ops=("matmul",)),

    # ---- small models: the ops layers emit together, weights of several shapes in one .pdiparams ----
    # Weights whose name order (the order of .pdiparams: W_big, a.b, a_b, w_10, w_2) is neither their program
    # order nor their creation order, of four dtypes and ranks 0 to 2, and two outputs (tests/e2e uses it too).
    C("weights_sorted_names", lambda x, w2, w10, wbig, ab_dot, ab: (
        paddle.matmul(x, w2) + w10 + wbig.astype("float32") + ab_dot.astype("float32"), ab * 2.0),
      [t(None, 4)],
      [t(4, 3, name="w_2"), t(3, name="w_10"), t(3, dtype="int64", name="W_big"),
       t(dtype="float64", name="a.b"), t(2, 1, name="a_b")], ops=("matmul", "add", "cast", "scale")),
    C("cnn", lambda x, w, cb, g, beta, m, v, fw, fb: F.softmax(F.linear(paddle.flatten(F.max_pool2d(F.relu(
        F.batch_norm(F.conv2d(x, w, cb, padding=1), m, v, g, beta, training=False)), 2, 2), 1), fw, fb)),
      [t(None, 3, 4, 4)], [t(4, 3, 3, 3), t(4), t(4), t(4), t(4), t(4, low=0.5, high=2.0), t(16, 5), t(5)],
      ops=("conv2d", "batch_norm_", "relu", "pool2d", "flatten", "matmul", "softmax")),
    C("attention", lambda x, wq, wk, wv, wo, w1, w2: (lambda q, k, v: x + F.linear(F.gelu(F.linear(
        paddle.reshape(paddle.transpose(paddle.matmul(F.softmax(paddle.matmul(q, k, transpose_y=True) * 0.5, -1), v),
                                        [0, 2, 1, 3]), [-1, 4, 8]) @ wo, w1)), w2))(
        *[paddle.transpose(paddle.reshape(x @ w, [-1, 4, 2, 4]), [0, 2, 1, 3]) for w in (wq, wk, wv)]),
      [t(None, 4, 8, run=(2, 4, 8))], [t(8, 8), t(8, 8), t(8, 8), t(8, 8), t(8, 16), t(16, 8)],
      ops=("matmul", "reshape", "transpose", "softmax", "gelu", "scale", "add")),

    # ---- ops Paddle models emit that the kernel library lacks: written with --all, checked in once they run ----
    C("sqrt", lambda x: paddle.sqrt(x), [t(2, 5, low=0.1, high=4.0)], ops=("sqrt",), pending=NO_KERNEL),
    C("abs", lambda x: paddle.abs(x), [t(2, 5)], ops=("abs",), pending=NO_KERNEL),
    C("log", lambda x: paddle.log(x), [t(2, 5, low=0.1, high=4.0)], ops=("log",), pending=NO_KERNEL),
    C("pow_scalar", lambda x: paddle.pow(x, 3.0), [t(2, 5)], ops=("pow",), pending=NO_KERNEL),
    C("leaky_relu", lambda x: F.leaky_relu(x, 0.1), [t(2, 5)], ops=("leaky_relu",), pending=NO_KERNEL),
    C("relu6", lambda x: F.relu6(x * 8), [t(2, 5)], ops=("relu6",), pending=NO_KERNEL),
    C("hardsigmoid", lambda x: F.hardsigmoid(x * 4), [t(2, 5)], ops=("hardsigmoid",), pending=NO_KERNEL),
    C("elu", lambda x: F.elu(x), [t(2, 5)], ops=("elu",), pending=NO_KERNEL),
    C("softplus", lambda x: F.softplus(x), [t(2, 5)], ops=("softplus",), pending=NO_KERNEL),
    C("erf", lambda x: paddle.erf(x), [t(2, 5)], ops=("erf",), pending=NO_KERNEL),
    C("sin_cos", lambda x: paddle.sin(x) + paddle.cos(x), [t(2, 5)], ops=("sin", "cos"), pending=NO_KERNEL),
    C("log_softmax", lambda x: F.log_softmax(x, -1), [t(2, 5)], ops=("log_softmax",), pending=NO_KERNEL),
    C("compare_greater", lambda x, y: paddle.greater_than(x, y), [t(2, 3), t(3)], ops=("greater_than",),
      pending=NO_KERNEL),
    C("logical_and", lambda x, y: paddle.logical_and(x, y), [t(2, 3, dtype="bool"), t(2, 3, dtype="bool")],
      ops=("logical_and",), pending=NO_KERNEL),
    C("min_reduce", lambda x: paddle.min(x, axis=1), [t(2, 3)], ops=("min",), pending=NO_KERNEL),
    C("prod", lambda x: paddle.prod(x, axis=1), [t(2, 3)], ops=("prod",), pending=NO_KERNEL),
    C("argmax", lambda x: paddle.argmax(x, axis=-1), [t(2, 5)], ops=("argmax",), pending=NO_KERNEL),
    C("topk", lambda x: paddle.topk(x, 2)[0], [t(2, 5)], ops=("topk",), pending=NO_KERNEL),
    C("cumsum", lambda x: paddle.cumsum(x, axis=1), [t(2, 5)], ops=("cumsum",), pending=NO_KERNEL),
    C("gather", lambda x, i: paddle.gather(x, i, axis=0), [t(4, 3), t(2, dtype="int64", low=0, high=4)],
      ops=("gather",), pending=NO_KERNEL),
    C("index_select", lambda x, i: paddle.index_select(x, i, axis=1), [t(2, 4), t(3, dtype="int64", low=0, high=4)],
      ops=("index_select",), pending=NO_KERNEL),
    C("tile", lambda x: paddle.tile(x, [2, 1]), [t(2, 3)], ops=("tile",), pending=NO_KERNEL),
    C("pad", lambda x: F.pad(x, [1, 1, 2, 0], value=0.5), [t(1, 2, 3, 3)], ops=("pad3d",), pending=NO_KERNEL),
    C("bilinear_interp", lambda x: F.interpolate(x, scale_factor=2, mode="bilinear"), [t(1, 2, 2, 3)],
      ops=("bilinear_interp",), pending=NO_KERNEL),
    C("group_norm", lambda x, w, b: F.group_norm(x, 2, weight=w, bias=b), [t(2, 4, 3, 3)], [t(4), t(4)],
      ops=("group_norm",), pending=NO_KERNEL),
    C("arange", lambda x: x + paddle.arange(3, dtype="float32"), [t(2, 3)], ops=("arange",), pending=NO_KERNEL),
    C("flip", lambda x: paddle.flip(x, [1]), [t(2, 3)], ops=("flip",), pending=NO_KERNEL),
    C("tril", lambda x: paddle.tril(x), [t(3, 3)], ops=("tril",), pending=NO_KERNEL),
]
