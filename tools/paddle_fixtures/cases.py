"""The Paddle oracle's cases: one line per program. tools/paddle-fixtures saves each with paddle.jit.save, runs it
with Paddle's predictor and writes tests/paddle/<name>/; the meson suite `paddle` checks kforge against it.

To add a case: append C(name, forward, inputs, params) below, run `tools/paddle-fixtures NAME` and check in
tests/paddle/NAME/ (tests/paddle/README.md). `forward` receives the inputs, then the parameters, as Paddle
tensors; `t(*dims, dtype=..., low=..., high=...)` describes one (None in an input's dims: dynamic).
"""

import numpy as np
import paddle
import paddle.nn.functional as F

from spec import Case as C
from spec import t

NUMBER = ("float32", "float64", "int32", "int64")
FLOAT = ("float32", "float64")
NO_KERNEL = "no kernel in kernels/ops.yaml yet"


def _assign(x, index, value):
    """y = a copy of x with y[index] = value: what Paddle saves as set_value_ / set_value_with_tensor_."""
    y = x.clone()
    y[index] = value
    return y


def _mask_set_in_place(x):
    """A compare's bool mask with a block set to True in place (set_value_ on the compare's own result), as DETR-style
    detectors build their attention masks, then used: the compare fuses although set_value_ rewrites its buffer."""
    m = paddle._C_ops.less_than(x, paddle.full([], 0.5, "float32"))
    # set_value_(x, starts, ends, steps, axes, decrease_axes, none_axes, shape, values): m[0:2, 1:3] = True, as
    # GraphNet's Mask-RT-DETR-S/subgraph_9 writes it.
    m = paddle._C_ops.set_value_(m, [0, 1], [2, 3], [1, 1], [0, 1], [], [], [1], [float("1")])
    return paddle.cast(m, "float32") + x


def _kforge_uniform(shape, low, high, seed, dtype):
    """kforge's uniform (kernels/creation_math.cc): element i from splitmix64(seed * 0x100000001B3 + i)'s top 53 bits,
    scaled into [low, high) in double, rounded to dtype, stepped below high where it rounds to it."""
    with np.errstate(over="ignore"):
        z = np.uint64(seed) * np.uint64(0x100000001B3) + np.arange(int(np.prod(shape)), dtype=np.uint64)
        z = z + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    u = (z >> np.uint64(11)).astype(np.float64) * 2.0 ** -53
    v = (low + (high - low) * u).astype(dtype)
    top, bottom = np.asarray(high, dtype), np.asarray(low, dtype)
    v = np.where((v >= top) & (top > bottom), np.nextafter(top, bottom), v)
    return v.reshape(shape)


def _kforge_randint(shape, low, high, dtype):
    """kforge's randint (kernels/creation_math.cc): uniform's draw with seed 0, element i's 53 bits scaled to the
    range high - low and floored, plus low."""
    u = _kforge_uniform(shape, 0.0, 1.0, 0, "float64")
    return (low + np.floor(u * (high - low)).astype(np.int64)).astype(dtype)


def _share_data_then_overwrite(x):
    """Nonstationary's `x_raw = x.clone().detach()` before the series is normalised in place of its buffer: raw (a
    share_data_ of y) must keep y's values although y's buffer is free to reuse once z is made (Paddle's PIR
    inplace pass reuses it and breaks the predictor's answer: generate.py turns the pass off)."""
    y = paddle.cast(x, "float32") * 2.0
    raw = y.detach()
    z = y - y.mean(axis=1, keepdim=True)
    w = z / paddle.sqrt((z * z).mean(axis=1, keepdim=True) + 1e-5)
    return w + raw


def _causal_scores(x):
    """Attention scores of x with itself, masked by a causal mask of x's dynamic length (BERT/GPT style)."""
    n = paddle.shape(x)[1]
    mask = paddle.triu(paddle.full([n, n], float("-inf")), 1)
    return F.softmax(paddle.matmul(x, x, transpose_y=True) + mask, -1)


def _position_ids(x):
    """Position ids [batch, length] of token ids x [batch, length], as BERT's embeddings make them."""
    s = paddle.shape(x)
    return paddle.expand(paddle.arange(s[1]).unsqueeze(0), [s[0], -1])


def _upsample_twice(x):
    """F.interpolate to twice x's dynamic spatial size: out_size from the shape (a DB head's FPN style)."""
    s = paddle.shape(x)
    return F.interpolate(x, size=[s[2] * 2, s[3] * 2], mode="nearest")


def _split_hw(x):
    """h, w unpacked from a shape tensor (paddle.split of paddle.shape(x)[2:]), then a reshape by their product."""
    h, w = paddle.split(paddle.shape(x)[2:], 2)
    return paddle.reshape(x, paddle.concat([paddle.shape(x)[:2], h * w]))


def _unbind_hw(x):
    """h, w from paddle.unbind of the shape's tail, an upsampling to (h + 1, 2 w)."""
    h, w = paddle.unbind(paddle.shape(x)[2:])
    return F.interpolate(x, size=[h + 1, w * 2], mode="nearest")


def _bert_like(ids, we, pe, wq, wk, wv):
    """A BERT/GPT-style block over token ids [batch, length], both dynamic: position ids from arange of the length,
    heads split by a reshape to [batch, length, 2, -1], a causal mask of the length; every shape from paddle.shape."""
    s = paddle.shape(ids)
    pos = paddle.expand(paddle.arange(s[1]).unsqueeze(0), [s[0], -1])
    h = F.embedding(ids, we) + F.embedding(pos, pe)

    def heads(t):
        return paddle.transpose(paddle.reshape(t, [s[0], s[1], 2, -1]), [0, 2, 1, 3])

    q, k, v = heads(h @ wq), heads(h @ wk), heads(h @ wv)
    mask = paddle.triu(paddle.full([s[1], s[1]], float("-inf")), 1)
    ctx = paddle.matmul(F.softmax(paddle.matmul(q, k, transpose_y=True) * 0.5 + mask, -1), v)
    return paddle.reshape(paddle.transpose(ctx, [0, 2, 1, 3]), [s[0], s[1], -1])


def _attention_decode_step(x, past_k, past_v, wq, bq, wk, bk, wv, bv, wo):
    """A GPT-style decode step in small: one new token x [batch, 1, 64] over a key / value cache of run-time length,
    2 heads of 32; each head split is reshape + transpose [b, 1, 2, 32] -> [b, 2, 1, 32], which moves no element
    (a view of the projection's output), and the new key / value join the caches, returned as the step's outputs."""
    def heads(w, b):
        return paddle.transpose(paddle.reshape(x @ w + b, [0, 0, 2, 32]), [0, 2, 1, 3])

    q, k, v = heads(wq, bq), heads(wk, bk), heads(wv, bv)
    k, v = paddle.concat([past_k, k], axis=2), paddle.concat([past_v, v], axis=2)
    ctx = paddle.matmul(F.softmax(paddle.matmul(q * 0.125, k, transpose_y=True), -1), v)
    return paddle.reshape(paddle.transpose(ctx, [0, 2, 1, 3]), [0, 0, 64]) @ wo, k, v


def _if_length(x):
    # paddleformers' causal-mask branch in small: a pd_op.if on a length taken from the shape.
    n = paddle.shape(x)[1]
    if n > 1:
        y = paddle.tril(x * 2.0) + 1.0
    else:
        y = x - 3.0
    return y


def _if_data(x):
    # A pd_op.if on a value computed from the data, with two results.
    if paddle.mean(x) > 0:
        y, z = x * 2.0, paddle.exp(x)
    else:
        y, z = -x, x
    return y, z


def _pad_to_multiple(x):
    """Pads H and W up to a multiple of 4 (a detector's preprocessing): paddings computed from the dynamic dims."""
    s = paddle.shape(x)
    return F.pad(x, [0, (4 - s[3] % 4) % 4, 0, (4 - s[2] % 4) % 4], value=0.5)


def _rpn_anchors(h, w, stride=16, sizes=(32.0, 64.0, 128.0), ratios=(0.5, 1.0, 2.0)):
    """PaddleDetection's AnchorGenerator for one FPN level: base anchors (every size, then every ratio, centred on
    0) shifted to each cell's top-left corner, [H, W, A, 4] float32 as its RPN head hands them on."""
    base = []
    for size in sizes:
        for r in ratios:
            aw, ah = size / np.sqrt(r), size * np.sqrt(r)
            base.append([-aw / 2, -ah / 2, aw / 2, ah / 2])
    base = np.round(np.array(base, dtype=np.float64), 4)
    ys, xs = np.meshgrid(np.arange(h) * stride, np.arange(w) * stride, indexing="ij")
    shifts = np.stack([xs, ys, xs, ys], axis=-1).reshape(h, w, 1, 4)
    return (shifts + base.reshape(1, 1, -1, 4)).astype("float32")


def _proposals(s, d, im, h, w, dtype="float32", **kw):
    """generate_proposals over _rpn_anchors: scores quantised to twentieths (many ties, as the op's sorting and NMS
    must break them as Paddle does), deltas as given, variances 1."""
    anchors = paddle.to_tensor(_rpn_anchors(h, w).reshape(-1, 4).astype(dtype))
    return paddle.vision.ops.generate_proposals(
        paddle.floor(s * 20.0) / 20.0, d, paddle.to_tensor(np.array(im, dtype=dtype)), anchors,
        paddle.ones_like(anchors), return_rois_num=True, **kw)


def _fpn_rois(b):
    """Image-like boxes from uniform draws: corner in [0, 600), sides from 20 to 740 pixels (log-uniform)."""
    xy = b[:, :2] * 300.0 + 300.0
    return paddle.concat([xy, xy + paddle.exp(b[:, 2:] * 1.8 + 4.8)], axis=1)


def _rnn_params(mode, layers, inputs, hidden, bidirec=False, dtype="float32"):
    """The parameters of paddle.nn.LSTM / GRU / SimpleRNN in the order its flatten_parameters() passes them to the
    rnn op (W_ih, W_hh of every layer and direction, then b_ih, b_hh of each), drawn in [-0.5, 0.5), and the uint8
    dropout state the layer keeps (a 0-D parameter of the saved program)."""
    gates = {"LSTM": 4, "GRU": 3}.get(mode, 1) * hidden
    dirs = 2 if bidirec else 1
    weights, biases = [], []
    for layer in range(layers):
        for _ in range(dirs):
            width = inputs if layer == 0 else dirs * hidden
            weights += [t(gates, width, dtype=dtype, low=-0.5, high=0.5), t(gates, hidden, dtype=dtype, low=-0.5,
                                                                                high=0.5)]
            biases += [t(gates, dtype=dtype, low=-0.5, high=0.5), t(gates, dtype=dtype, low=-0.5, high=0.5)]
    return weights + biases + [t(dtype="uint8", low=0, high=1)]


def _rnn(x, lengths, states, params, mode, layers, hidden, bidirec=False, time_major=False):
    """What paddle.nn.LSTM / GRU / SimpleRNN (RNNBase._cudnn_impl) does in eval mode: x to time-major unless it is,
    zero initial states of x's (dynamic) batch unless given, the rnn op; returns out (batch-major unless time_major)
    and the final states."""
    *weights, dropout_state = params
    xt = x if time_major else paddle.transpose(x, [1, 0, 2])
    if states is None:
        batch = xt.shape[1] if xt.shape[1] > 0 else paddle.shape(xt)[1]
        shape = [layers * (2 if bidirec else 1), batch, hidden]
        states = [paddle.full(shape, 0.0, dtype=x.dtype) for _ in range(2 if mode == "LSTM" else 1)]
    r = paddle._C_ops.rnn(xt, list(states), list(weights), lengths, dropout_state, 0.0, bidirec, int(x.shape[-1]),
                          hidden, layers, mode, 0, True)
    out = r[0] if time_major else paddle.transpose(r[0], [1, 0, 2])
    return (out, *r[2])


def nonfinite(x):
    """x with +inf where x > 0.6, -inf where x < -0.6 and NaN where |x| < 0.05 (inf - inf), x elsewhere."""
    big = x * 1e30 * 1e30
    return paddle.where(x.abs() < 0.05, big - big, paddle.where(x.abs() > 0.6, big, x))


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
    # NaN in either operand makes maximum / minimum NaN, as Paddle's MaximumFunctor (log of the negative inputs
    # puts NaN in x, in y and in both), in both argument orders.
    *[C(f"{op}_nan_{dt}", lambda x, y, op=op: paddle.concat([getattr(paddle, op)(paddle.log(x), paddle.log(y)),
                                                             getattr(paddle, op)(paddle.log(y), paddle.log(x))]),
        [t(4, 6, dtype=dt, low=-0.3, high=2.0), t(4, 6, dtype=dt, low=-0.3, high=2.0)], ops=(op,))
      for op in ("maximum", "minimum") for dt in FLOAT],
    # fmax / fmin ignore a NaN operand (Paddle's std::fmax): NaN in x, in y, in both; integers through float / double.
    *[C(f"{op}_nan_{dt}", lambda x, y, op=op: paddle.concat([getattr(paddle, op)(paddle.log(x), paddle.log(y)),
                                                             getattr(paddle, op)(paddle.log(y), paddle.log(x))]),
        [t(4, 6, dtype=dt, low=-0.3, high=2.0), t(4, 6, dtype=dt, low=-0.3, high=2.0)], ops=(op,))
      for op in ("fmax", "fmin") for dt in FLOAT],
    *[C(f"{op}_{dt}", lambda x, y, op=op: getattr(paddle, op)(x, y), [t(2, 3, dtype=dt), t(3, dtype=dt)], ops=(op,))
      for op in ("fmax", "fmin") for dt in ("int32", "int64")],
    *[C(f"pow_{dt}", lambda x, y: paddle.pow(x, y), [t(2, 3, dtype=dt, low=0.5, high=2.0), t(2, 3, dtype=dt)],
        ops=("elementwise_pow",)) for dt in FLOAT],
    C("add_n", lambda x, y, z: paddle.add_n([x, y, z]), [t(2, 3), t(2, 3), t(2, 3)], ops=("add_n",)),
    C("where", lambda c, x, y: paddle.where(c, x, y), [t(2, 3, dtype="bool"), t(2, 3), t(2, 3)], ops=("where",)),
    C("where_broadcast", lambda c, x, y: paddle.where(c, x, y), [t(2, 3, dtype="bool"), t(3), t(2, 1)],
      ops=("where",)),

    # ---- elementwise unary and activations ----
    *[C(f"relu_{dt}", lambda x: F.relu(x), [t(2, 5, dtype=dt)], ops=("relu",)) for dt in FLOAT],
    C("relu_dynamic", lambda x: F.relu(x), [t(None, 4, run=(3, 4))], ops=("relu",)),
    # relu of NaN is 0 (Paddle's ReluFunctor, x > 0 ? x : 0; relu6, leaky_relu and elu keep NaN): the log of the
    # negative inputs makes the NaN, and the relu fused with it is the expression's (kernels/fusion.yaml).
    *[C(f"relu_nan_{dt}", lambda x: F.relu(paddle.log(x)), [t(4, 6, dtype=dt, low=-0.3, high=2.0)],
        ops=("relu", "log")) for dt in FLOAT],
    *[C(f"exp_{dt}", lambda x: paddle.exp(x), [t(2, 5, dtype=dt)], ops=("exp",)) for dt in FLOAT],
    *[C(f"tanh_{dt}", lambda x: paddle.tanh(x), [t(2, 5, dtype=dt)], ops=("tanh",)) for dt in FLOAT],
    *[C(f"sigmoid_{dt}", lambda x: F.sigmoid(x), [t(2, 5, dtype=dt)], ops=("sigmoid",)) for dt in FLOAT],
    C("rsqrt", lambda x: paddle.rsqrt(x), [t(2, 5, low=0.1, high=4.0)], ops=("rsqrt",)),
    C("floor", lambda x: paddle.floor(x * 3.0), [t(2, 5)], ops=("floor",)),
    *[C(f"ceil_{dt}", lambda x: paddle.ceil(x * 3.0), [t(2, 5, dtype=dt)], ops=("ceil",)) for dt in FLOAT],
    # repeat_interleave with an int repeats (PP-FormulaNet's grey-to-RGB: data_0 repeated 3 times along dim 1), a
    # negative axis, int64 and a dynamic batch.
    C("repeat_interleave_channels", lambda x: paddle.repeat_interleave(x, 3, axis=1), [t(2, 1, 4, 5)],
      ops=("repeat_interleave",)),
    C("repeat_interleave_last_int64", lambda x: paddle.repeat_interleave(x, 2, axis=-1),
      [t(3, 4, dtype="int64", low=-50, high=50)], ops=("repeat_interleave",)),
    C("repeat_interleave_dynamic", lambda x: paddle.repeat_interleave(x, 4, axis=1), [t(None, 3, 2)],
      ops=("repeat_interleave",)),
    # bicubic_interp (CLIP's position embeddings 14x14 -> 28x28, half-pixel centres): up, down with align_corners,
    # NHWC float64 by scale.
    C("bicubic_interp_up", lambda x: F.interpolate(x, size=[8, 10], mode="bicubic"), [t(1, 3, 4, 5)],
      ops=("bicubic_interp",)),
    C("bicubic_interp_down_align_corners", lambda x: F.interpolate(x, size=[3, 4], mode="bicubic", align_corners=True),
      [t(2, 2, 7, 9)], ops=("bicubic_interp",)),
    C("bicubic_interp_nhwc_float64", lambda x: F.interpolate(x, scale_factor=1.5, mode="bicubic", data_format="NHWC"),
      [t(1, 4, 6, 2, dtype="float64")], ops=("bicubic_interp",)),
    # prior_box (BlazeFace): only the dims of the feature map and the image count. BlazeFace's attributes (steps 8,
    # no flip, no clip); max sizes, flipped ratios, clipping and the min-max order with steps from the image; float64
    # with the feature map's and the image's H and W dynamic.
    C("prior_box_blazeface", lambda f, im: paddle.vision.ops.prior_box(
        f, im, min_sizes=[16.0, 24.0], aspect_ratios=[1.0], variance=[0.1, 0.1, 0.2, 0.2], steps=[8.0, 8.0]),
      [t(1, 4, 8, 6), t(1, 3, 64, 48)], ops=("prior_box",)),
    C("prior_box_max_flip_clip", lambda f, im: paddle.vision.ops.prior_box(
        f, im, min_sizes=[10.0, 30.0], max_sizes=[20.0, 45.0], aspect_ratios=[2.0, 3.0, 2.0], flip=True, clip=True,
        offset=0.25, min_max_aspect_ratios_order=True), [t(2, 3, 5, 7), t(2, 3, 50, 60)], ops=("prior_box",)),
    C("prior_box_dynamic_float64", lambda f, im: paddle.vision.ops.prior_box(
        f, im, min_sizes=[12.0], max_sizes=[24.0], aspect_ratios=[0.5], flip=True),
      [t(1, 2, None, None, dtype="float64", run=(1, 2, 5, 6)), t(1, 3, None, None, dtype="float64", run=(1, 3, 40, 48))],
      ops=("prior_box",)),
    # elu (PP-YOLOE-R): negatives to alpha * (exp(x) - 1); Paddle's default alpha and another one.
    *[C(f"elu_{dt}", lambda x: F.elu(x * 3.0), [t(3, 5, dtype=dt)], ops=("elu",)) for dt in FLOAT],
    C("elu_alpha", lambda x: F.elu(x * 3.0, alpha=0.4), [t(2, 7)], ops=("elu",)),
    C("gelu", lambda x: F.gelu(x), [t(2, 5, low=-3, high=3)], ops=("gelu",)),
    C("gelu_tanh", lambda x: F.gelu(x, approximate=True), [t(2, 5, low=-3, high=3)], ops=("gelu",)),
    C("silu", lambda x: F.silu(x), [t(2, 5, low=-3, high=3)], ops=("silu",)),
    C("swish", lambda x: F.swish(x), [t(2, 5, low=-3, high=3)], ops=("swish",)),
    C("hardswish", lambda x: F.hardswish(x), [t(2, 5, low=-4, high=4)], ops=("hardswish",)),
    C("thresholded_relu", lambda x: F.thresholded_relu(x, threshold=0.3), [t(2, 5)], ops=("thresholded_relu",)),
    C("clip", lambda x: paddle.clip(x, min=-0.5, max=0.25), [t(2, 5)], ops=("clip",)),
    # Bounds read from 0-D tensors at run time (Cascade-FasterRCNN's boxes clipped to the image's size): one more
    # input of the fused expression, a broadcast scalar.
    C("clip_tensor_max", lambda x, im: paddle.clip(x, min=0.0, max=im[1]),
      [t(None, 4, low=-10.0, high=40.0, run=(6, 4)), t(2, low=10.0, high=30.0)], ops=("clip",)),
    C("clip_tensor_bounds_f64", lambda x, lim: paddle.clip(paddle.scale(x, 2.0), min=lim[0], max=lim[1]),
      [t(3, 5, dtype="float64", low=-4.0, high=4.0), t(2, dtype="float64", low=-1.0, high=2.0)],
      ops=("clip", "scale")),
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
    # outputs the plan gives no buffer of their own (a constant, a value fetched twice): copied into the caller's
    # tensors after the run (CUDA: into bound pointers of their own; GraphNet's MaskRCNN and ShiTu subgraphs)
    C("fetch_copies", lambda x: (lambda y: (paddle.full([], 1435, "int64"), y, y))(x * 2.0), [t(None, 3, run=(2, 3))],
      ops=("full",)),
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
    C("matmul_vector_y", lambda x, y: paddle.matmul(x, y), [t(2, 3, 4), t(4)], ops=("matmul",)),
    C("matmul_vector_dot", lambda x, y: paddle.matmul(x, y), [t(5), t(5)], ops=("matmul",)),
    C("matmul_vector_batched", lambda x, y: paddle.matmul(x, y, transpose_y=True), [t(4), t(2, 3, 4)],
      ops=("matmul",)),
    C("linear", lambda x, w, b: F.linear(x, w, b), [t(None, 4)], [t(4, 3), t(3)], ops=("matmul", "add")),
    C("mlp", lambda x, w1, b1, w2, b2: F.linear(F.relu(F.linear(x, w1, b1)), w2, b2), [t(None, 6, run=(3, 6))],
      [t(6, 8), t(8), t(8, 2), t(2)], ops=("matmul", "add", "relu")),
    C("embedding", lambda ids, w: F.embedding(ids, w), [t(2, 3, dtype="int64", low=0, high=5)], [t(5, 4)],
      ops=("embedding",)),
    C("embedding_padding_idx", lambda ids, w: F.embedding(ids, w, padding_idx=1),
      [t(2, 3, dtype="int64", low=0, high=5)], [t(5, 4)], ops=("embedding",)),
    C("layer_norm", lambda x, w, b: F.layer_norm(x, [4], w, b), [t(2, 3, 4)], [t(4), t(4)], ops=("layer_norm",)),
    C("layer_norm_2d", lambda x, w, b: F.layer_norm(x, [3, 4], w, b, epsilon=1e-3), [t(2, 3, 4)],
      [t(12), t(12)], ops=("layer_norm",)),
    C("batch_norm", lambda x, m, v, w, b: F.batch_norm(x, m, v, w, b, training=False),
      [t(2, 3, 4, 4)], [t(3), t(3, low=0.5, high=2.0), t(3), t(3)], ops=("batch_norm_",)),
    # Batch norms that are not 4-D (a detection head's [n, c] and [n, c, l]; NLC; 5-D): under --target cuda the
    # epilogue kernel over [n, c, spatial] (issue 34).
    C("batch_norm_2d", lambda x, m, v, w, b: F.batch_norm(x, m, v, w, b, training=False),
      [t(4, 3)], [t(3), t(3, low=0.5, high=2.0), t(3), t(3)], ops=("batch_norm_",)),
    C("batch_norm_3d", lambda x, m, v, w, b: F.batch_norm(x, m, v, w, b, training=False),
      [t(2, 3, 5)], [t(3), t(3, low=0.5, high=2.0), t(3), t(3)], ops=("batch_norm_",)),
    C("batch_norm_nlc", lambda x, m, v, w, b: F.batch_norm(x, m, v, w, b, training=False, data_format="NLC"),
      [t(2, 5, 3)], [t(3), t(3, low=0.5, high=2.0), t(3), t(3)], ops=("batch_norm_",)),
    C("batch_norm_5d", lambda x, m, v, w, b: F.batch_norm(x, m, v, w, b, training=False, data_format="NCDHW"),
      [t(1, 2, 3, 2, 2)], [t(2), t(2, low=0.5, high=2.0), t(2), t(2)], ops=("batch_norm_",)),
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
    # Asymmetric paddings [top, bottom, left, right] (PP-HGNetV2's stem: 0, 1, 0, 1): cuDNN pads both sides alike,
    # so the CUDA backend pads the input first (issue 34).
    # Infinite attributes (issue 34): a clip with max inf after a convolution (the conv's epilogue on CUDA), one with
    # min -inf alone, and a pad with -inf (exp'd to 0): each constant spelled so that nvcc compiles it (HUGE_VAL, not "inf").
    C("conv2d_clip_inf", lambda x, w: paddle.clip(F.conv2d(x, w, padding=1), min=0.0, max=float("inf")),
      [t(1, 3, 6, 6)], [t(4, 3, 3, 3)], ops=("conv2d", "clip")),
    C("clip_min_neg_inf_pad_neg_inf", lambda x: paddle.exp(F.pad(paddle.clip(x, min=float("-inf"), max=0.25), [1, 1],
                                                                  value=float("-inf"), data_format="NCL")),
      [t(2, 3, 5)], ops=("clip", "pad3d")),
    # A convolution over infinities of both signs sums to NaN, which Paddle's relu maps to 0 (x > 0 ? x : 0): the
    # fused ReLU of the convolution group must too (CPU: oneDNN's post-op; CUDA: the epilogue kernel, and not cuDNN's
    # fused precomputed implicit GEMM under strict float32, tests/gpu/conv_fused_check.cu). x * 1e30 * 1e30 is +-inf.
    C("conv2d_relu_nan", lambda x, w, b: F.relu(F.conv2d(x * 1e30 * 1e30, w, b, padding=1)),
      [t(2, 3, 6, 6)], [t(4, 3, 3, 3), t(4)], ops=("conv2d", "relu")),
    # Paddle's relu6 keeps NaN, where its relu maps NaN to 0: NaN (inf - inf) through both, elementwise, beside finite
    # values. (A relu6 fused into a convolution does not keep NaN on the CPU: oneDNN's clip post-op, as Paddle's own
    # oneDNN conv + relu6 fuse, gives 0; docs/model-zoo.md "PP-HGNet_base on the GPU: cuDNN's fused ReLU and NaN".)
    C("relu6_relu_nan", lambda x: paddle.concat([F.relu6(paddle.where(x > 0, x * 7, x * 1e30 * 1e30 - x * 1e30 * 1e30)),
                                                 F.relu(paddle.where(x > 0, x, x * 1e30 * 1e30 - x * 1e30 * 1e30))]),
      [t(2, 3, 4, 4)], ops=("relu6", "relu", "where")),
    # Non-finite values through the ops real models overflow into (GraphNet's drawn weights: docs/model-zoo.md):
    # nonfinite(x) puts +inf where x > 0.6, -inf where x < -0.6 and NaN where |x| < 0.05, x elsewhere.
    C("activations_nonfinite", lambda x: paddle.concat([
        F.leaky_relu(nonfinite(x), 0.1), F.hardswish(nonfinite(x)), F.sigmoid(nonfinite(x)), F.tanh(nonfinite(x)),
        F.gelu(nonfinite(x)), F.silu(nonfinite(x)), F.elu(nonfinite(x)), F.hardsigmoid(nonfinite(x)),
        paddle.exp(nonfinite(x)), F.gelu(nonfinite(x), True)]),
      [t(2, 3, 8)], ops=("leaky_relu", "hardswish", "sigmoid", "tanh", "gelu", "silu", "elu", "hardsigmoid", "exp")),
    # Max pooling over infinities (no NaN: a NaN in a max window is implementation-defined, Paddle's loop restarts
    # the running max after it where oneDNN's NCHW pooling skips it), average pooling over every kind.
    C("pool_nonfinite", lambda x: paddle.concat([F.max_pool2d(paddle.where(nonfinite(x) == nonfinite(x), nonfinite(x), x),
                                                              2, 2),
                                                 F.avg_pool2d(nonfinite(x), 2, 2),
                                                 F.adaptive_avg_pool2d(nonfinite(x), 1).expand([2, 3, 3, 3])]),
      [t(2, 3, 6, 6)], ops=("pool2d",)),
    # An attention-style mask of -inf through softmax, and layer norm over rows with infinities and NaN. (Softmax over
    # +inf or NaN is implementation-defined too: Paddle's CPU kernel gives a uniform row, where kforge gives NaN.)
    C("softmax_layer_norm_nonfinite", lambda x: paddle.concat([
        F.softmax(paddle.where(x < -0.3, paddle.full_like(x, float("-inf")), x), axis=-1),
        F.layer_norm(nonfinite(x), [8])]),
      [t(2, 6, 8)], ops=("softmax", "layer_norm")),
    C("matmul_relu_nonfinite", lambda x, w, b: F.relu(paddle.matmul(nonfinite(x), w) + b),
      [t(4, 8)], [t(8, 5), t(5)], ops=("matmul", "relu")),
    C("conv2d_asym_pad", lambda x, w: F.conv2d(x, w, padding=[0, 1, 0, 1]), [t(1, 3, 6, 6)], [t(4, 3, 2, 2)],
      ops=("conv2d",)),
    C("conv2d_asym_pad_stride2", lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=[2, 0, 1, 2]),
      [t(2, 2, 7, 6)], [t(3, 2, 3, 3), t(3)], ops=("conv2d",)),
    # Dynamic H and W: the padded input's scratch is a size computed at run time (PP-OCRv5 server det's stem); 32
    # channels of 3 x 3 (288 products) also run in chunks under strict float32 on CUDA.
    C("conv2d_asym_pad_dynamic_hw", lambda x, w: F.conv2d(x, w, padding=[0, 1, 0, 1]),
      [t(None, 32, None, None, run=(1, 32, 7, 9))], [t(8, 32, 3, 3)], ops=("conv2d",)),
    C("conv2d_asym_pad_nhwc", lambda x, w: F.conv2d(x, w, padding=[1, 0, 0, 1], data_format="NHWC"),
      [t(1, 5, 5, 2)], [t(3, 2, 2, 2)], ops=("conv2d",)),
    C("depthwise_conv2d_asym_pad", lambda x, w: F.conv2d(x, w, padding=[0, 1, 1, 0], groups=4), [t(1, 4, 5, 6)],
      [t(4, 1, 2, 2)], ops=("depthwise_conv2d",)),
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
    C("split_sections", lambda x: paddle.split(x, [1, 3], axis=1), [t(2, 4, 2)], ops=("split_with_num",)),
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
    # Control flow: pd_op.if becomes both branches and a select (passes/if_conversion.h); each case's run takes one
    # branch, its twin the other.
    C("if_length", _if_length, [t(3, None, run=(3, 3))], ops=("if",), control_flow=True),
    C("if_length_else", _if_length, [t(3, None, run=(3, 1))], ops=("if",), control_flow=True),
    C("if_data", _if_data, [t(2, 3, low=0.5, high=1.0)], ops=("if",), control_flow=True),
    C("if_data_else", _if_data, [t(2, 3, low=-1.0, high=-0.5)], ops=("if",), control_flow=True),
    # A key / value cache grown by one token along a leading axis of run-time length, and joins whose rows are
    # whole 16-byte units (--target cuda copies those 16 bytes per thread).
    C("concat_kv_cache", lambda past, new: paddle.concat([past, new], axis=2),
      [t(2, 3, None, 8, run=(2, 3, 5, 8)), t(2, 3, 1, 8)], ops=("concat",)),
    # The decode step's head splits are transposes that move no element: views of the packed q / k / v product.
    C("attention_decode_step", _attention_decode_step,
      [t(None, 1, 64, run=(2, 1, 64)), t(None, 2, None, 32, run=(2, 2, 5, 32)), t(None, 2, None, 32, run=(2, 2, 5, 32))],
      [t(64, 64), t(64), t(64, 64), t(64), t(64, 64), t(64), t(64, 64)],
      ops=("matmul", "add", "reshape", "transpose", "concat", "softmax", "scale")),
    # Two caches grown side by side, as a decoder layer's keys and values: --target cuda runs both in one launch.
    C("concat_kv_cache_pair", lambda pk, pv, k, v: (paddle.concat([pk, k], axis=2), paddle.concat([pv, v], axis=2)),
      [t(2, 3, None, 8, run=(2, 3, 5, 8)), t(2, 3, None, 8, run=(2, 3, 5, 8)), t(2, 3, 1, 8), t(2, 3, 1, 8)],
      ops=("concat",)),
    C("concat_rows_int64", lambda x, y: paddle.concat([x, y], axis=0), [t(2, 2, dtype="int64"), t(3, 2, dtype="int64")],
      ops=("concat",)),
    C("stack_rows", lambda x, y: paddle.stack([x, y], axis=0), [t(3, 4), t(3, 4)], ops=("stack",)),
    # A transpose next to elementwise or row ops (--target cuda absorbs it as the group's input or store map):
    # read through and stored through in one group, the same with dims known only at run time, and a softmax
    # reading through one.
    C("transpose_fused", lambda x, b: paddle.transpose(F.relu(paddle.transpose(x, [0, 2, 1]) + b), [0, 2, 1]),
      [t(2, 3, 4)], [t(3)], ops=("transpose", "add", "relu")),
    C("transpose_fused_dynamic", lambda x: paddle.transpose(paddle.tanh(paddle.transpose(x, [1, 0, 2])), [2, 0, 1]),
      [t(2, None, 4, run=(2, 3, 4))], ops=("transpose", "tanh")),
    C("transpose_softmax", lambda x: F.softmax(paddle.transpose(x, [0, 2, 1]), -1), [t(2, 3, 4)],
      ops=("transpose", "softmax")),
    C("expand_fused", lambda x, y: paddle.expand(x, [2, 3, 4]) * y, [t(3, 1), t(2, 3, 4)],
      ops=("expand", "multiply")),
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
    # A convolution region the layout plan runs in NHWC (docs/compile.md, "Layouts"): conv + bias, a 1x1 conv,
    # concat along the channels, batch norm, max pooling, bilinear upsampling, a residual add, adaptive pooling,
    # then a flatten (NCHW again); the batch norm's result is an output too.
    C("conv_region_nhwc", lambda x, w1, b1, w2, g, beta, m, v: (lambda d: (paddle.flatten(F.adaptive_avg_pool2d(
        F.interpolate(F.max_pool2d(d, 2, 2), scale_factor=2, mode="bilinear") + d, 1), 1), d))(
        F.relu(F.batch_norm(paddle.concat([F.relu(F.conv2d(x, w1, b1, padding=1)), F.conv2d(x, w2)], axis=1),
                            m, v, g, beta, training=False))),
      [t(None, 3, 8, 8, run=(2, 3, 8, 8))], [t(4, 3, 3, 3), t(4), t(4, 3, 1, 1), t(8), t(8), t(8),
                                             t(8, low=0.5, high=2.0)],
      ops=("conv2d", "add", "relu", "concat", "batch_norm_", "pool2d", "bilinear_interp", "flatten")),
    # Split views (issue 36; docs/compile.md, "Split views"): shufflenet_v2's block, smaller, the halves of a split
    # read by a convolution, a concat and an add. One image over the channels (NCHW in the program, NHWC after the
    # layout plan: strided halves, copies), the same block in a program that is NHWC itself, and halves along the
    # batch (paddle.chunk: contiguous, views).
    C("split_views_channels", lambda x, w0, w1: (lambda a, b: (
        paddle.concat([a, F.relu(F.conv2d(b, w1))], axis=1), a + b))(*paddle.split(F.relu(F.conv2d(x, w0)), 2, axis=1)),
      [t(1, 4, 5, 5)], [t(8, 4, 1, 1), t(4, 4, 1, 1)], ops=("conv2d", "relu", "split_with_num", "concat", "add")),
    C("split_views_nhwc", lambda x, w0, w1: (lambda a, b: (
        paddle.concat([a, F.relu(F.conv2d(b, w1, data_format="NHWC"))], axis=3), a + b))(
        *paddle.split(F.relu(F.conv2d(x, w0, data_format="NHWC")), [4, 4], axis=3)),
      [t(1, 5, 5, 4)], [t(8, 4, 1, 1), t(4, 4, 1, 1)], ops=("conv2d", "relu", "split", "concat", "add")),
    C("chunk_views_batch", lambda x, w0, w1: (lambda a, b: (
        paddle.concat([a, F.relu(F.conv2d(b, w1))], axis=0), a + b))(*paddle.chunk(F.relu(F.conv2d(x, w0)), 2, axis=0)),
      [t(4, 3, 5, 5)], [t(4, 3, 1, 1), t(4, 4, 1, 1)], ops=("conv2d", "relu", "split_with_num", "concat", "add")),
    C("attention", lambda x, wq, wk, wv, wo, w1, w2: (lambda q, k, v: x + F.linear(F.gelu(F.linear(
        paddle.reshape(paddle.transpose(paddle.matmul(F.softmax(paddle.matmul(q, k, transpose_y=True) * 0.5, -1), v),
                                        [0, 2, 1, 3]), [-1, 4, 8]) @ wo, w1)), w2))(
        *[paddle.transpose(paddle.reshape(x @ w, [-1, 4, 2, 4]), [0, 2, 1, 3]) for w in (wq, wk, wv)]),
      [t(None, 4, 8, run=(2, 4, 8))], [t(8, 8), t(8, 8), t(8, 8), t(8, 8), t(8, 16), t(16, 8)],
      ops=("matmul", "reshape", "transpose", "softmax", "gelu", "scale", "add")),

    # ---- ops Paddle models emit that the kernel library lacks: written with --all, checked in once they run ----
    C("elu", lambda x: F.elu(x), [t(2, 5)], ops=("elu",), pending=NO_KERNEL),
    C("softplus", lambda x: F.softplus(x), [t(2, 5)], ops=("softplus",), pending=NO_KERNEL),

    # --- math/compare ops (issue 11) ---
    *[C(f"hardsigmoid_{dt}", lambda x: F.hardsigmoid(x * 4), [t(2, 5, dtype=dt)], ops=("hardsigmoid",)) for dt in FLOAT],
    C("hardsigmoid_slope", lambda x: F.hardsigmoid(x * 3, slope=0.2, offset=0.4), [t(2, 5)], ops=("hardsigmoid",)),
    *[C(f"relu6_{dt}", lambda x: F.relu6(x * 8), [t(2, 5, dtype=dt)], ops=("relu6",)) for dt in FLOAT],
    *[C(f"sqrt_{dt}", lambda x: paddle.sqrt(x), [t(2, 5, dtype=dt, low=0.1, high=4.0)], ops=("sqrt",)) for dt in FLOAT],
    *[C(f"erf_{dt}", lambda x: paddle.erf(x * 2), [t(2, 5, dtype=dt)], ops=("erf",)) for dt in FLOAT],
    *[C(f"log_{dt}", lambda x: paddle.log(x), [t(2, 5, dtype=dt, low=0.1, high=4.0)], ops=("log",)) for dt in FLOAT],
    *[C(f"sin_cos_{dt}", lambda x: paddle.sin(x * 3) + paddle.cos(x * 3), [t(2, 5, dtype=dt)], ops=("sin", "cos"))
      for dt in FLOAT],
    *[C(f"abs_{dt}", lambda x: paddle.abs(x), [t(2, 5, dtype=dt)], ops=("abs",)) for dt in NUMBER],
    *[C(f"pow_scalar_{dt}", lambda x: paddle.pow(x, 3.0), [t(2, 5, dtype=dt)], ops=("pow",)) for dt in NUMBER],
    C("pow_sqrt", lambda x: paddle.pow(x, 0.5), [t(2, 5, low=0.0, high=4.0)], ops=("pow",)),
    *[C(f"floor_divide_{dt}", lambda x, y: paddle.floor_divide(x, y), [t(3, 4, dtype=dt, low=-9, high=10),
                                                                        t(4, dtype=dt, low=1, high=4)],
        ops=("floor_divide",)) for dt in ("int32", "int64")],
    C("floor_divide_negative_divisor", lambda x, y: paddle.floor_divide(x, y),
      [t(2, 5, dtype="int64", low=-9, high=10), t(2, 5, dtype="int64", low=-4, high=-1)], ops=("floor_divide",)),
    # Broadcast operands (a kernel of its own under --target cuda, which reads them at broadcast coordinates).
    C("floor_divide_broadcast", lambda x, y: paddle.floor_divide(x, y),
      [t(2, 3, 4, dtype="int64", low=-20, high=20), t(4, dtype="int64", low=1, high=6)], ops=("floor_divide",)),
    C("floor_divide_broadcast_float", lambda x, y: x // y, [t(3, 1, low=-3, high=3), t(3, 4, low=0.25, high=2)],
      ops=("floor_divide",)),
    *[C(f"floor_divide_{dt}", lambda x, y: x // y, [t(2, 5, dtype=dt, low=-3, high=3), t(2, 5, dtype=dt, low=0.25,
                                                                                        high=2.0)],
        ops=("floor_divide",)) for dt in FLOAT],
    # --- square, reciprocal, remainder, bitwise ops (issue 34) ---
    *[C(f"square_{dt}", lambda x: paddle.square(x), [t(2, 5, dtype=dt)], ops=("square",)) for dt in NUMBER],
    *[C(f"reciprocal_{dt}", lambda x: paddle.reciprocal(x), [t(2, 5, dtype=dt, low=0.25, high=2.0)],
        ops=("reciprocal",)) for dt in FLOAT],
    C("reciprocal_negative", lambda x: paddle.reciprocal(x - 3), [t(2, 5)], ops=("reciprocal",)),
    # Python's %: the result takes the divisor's sign; negative dividends, negative divisors, broadcasting.
    *[C(f"remainder_{dt}", lambda x, y: paddle.remainder(x, y), [t(3, 4, dtype=dt, low=-9, high=10),
                                                                 t(4, dtype=dt, low=1, high=4)],
        ops=("remainder",)) for dt in ("int32", "int64")],
    C("remainder_negative_divisor", lambda x, y: x % y,
      [t(2, 5, dtype="int64", low=-9, high=10), t(2, 5, dtype="int64", low=-4, high=-1)], ops=("remainder",)),
    *[C(f"remainder_{dt}", lambda x, y: x % y, [t(2, 5, dtype=dt, low=-3, high=3), t(2, 5, dtype=dt, low=0.25,
                                                                                    high=2.0)],
        ops=("remainder",)) for dt in FLOAT],
    C("remainder_float_negative_divisor", lambda x, y: x % y, [t(3, 4, low=-3, high=3), t(4, low=-2.0, high=-0.25)],
      ops=("remainder",)),
    # An elementwise chain of all three, fused on both targets (today two groups: square, then reciprocal + add +
    # remainder).
    C("square_reciprocal_remainder_chain", lambda x, y: (paddle.square(x) + paddle.reciprocal(y)) % 1.5,
      [t(3, 4), t(3, 4, low=0.5, high=2.0)], ops=("square", "reciprocal", "remainder")),
    # Bitwise ops of integers (negative ones too) and bools (logical there); broadcasting.
    *[C(f"bitwise_{op}_{dt}", lambda x, y, op=op: getattr(paddle, f"bitwise_{op}")(x, y),
        [t(3, 4, dtype=dt, low=-100, high=100), t(4, dtype=dt, low=-100, high=100)], ops=(f"bitwise_{op}",))
      for op in ("and", "or", "xor") for dt in ("int32", "int64")],
    *[C(f"bitwise_{op}_bool", lambda x, y, op=op: getattr(paddle, f"bitwise_{op}")(x, y),
        [t(3, 4, dtype="bool"), t(4, dtype="bool")], ops=(f"bitwise_{op}",)) for op in ("and", "or", "xor")],
    # multiply of two bool masks (Mask-RT-DETR-S/subgraph_9): a logical and
    C("multiply_bool", lambda x, y: paddle.multiply(x, y), [t(3, 4, dtype="bool"), t(4, dtype="bool")],
      ops=("multiply",)),
    *[C(f"bitwise_not_{dt}", lambda x: paddle.bitwise_not(x), [t(3, 4, dtype=dt, low=-100, high=100)],
        ops=("bitwise_not",)) for dt in ("int32", "int64")],
    C("bitwise_not_bool", lambda x: paddle.bitwise_not(x), [t(3, 4, dtype="bool")], ops=("bitwise_not",)),
    # numel: folded to a constant with static dims, the kernel with a dynamic one.
    C("numel_static", lambda x: x * paddle.numel(x).astype("float32"), [t(2, 3)], ops=("numel",)),
    C("numel_dynamic", lambda x: (paddle.numel(x), paddle.sum(x) / paddle.numel(x).astype("float32")),
      [t(None, 3, run=(4, 3))], ops=("numel",)),
    # Comparisons of floats with ties (floor), of integers, of bools; broadcasting.
    *[C(f"compare_{op}", lambda x, y, op=op: getattr(paddle, op)(paddle.floor(x * 2), paddle.floor(y * 2)),
        [t(3, 4), t(4)], ops=(op,)) for op in ("equal", "not_equal", "greater_than", "greater_equal", "less_than",
                                               "less_equal")],
    *[C(f"compare_{op}_int64", lambda x, y, op=op: getattr(paddle, op)(x, y), [t(3, 4, dtype="int64"),
                                                                             t(3, 1, dtype="int64")], ops=(op,))
      for op in ("equal", "greater_than", "less_equal")],
    C("compare_equal_bool", lambda x, y: paddle.equal(x, y), [t(2, 3, dtype="bool"), t(2, 3, dtype="bool")],
      ops=("equal",)),
    C("compare_greater_scalar", lambda x: x > 0.25, [t(None, 3)], ops=("greater_than",)),
    *[C(f"logical_{op}", lambda x, y, op=op: getattr(paddle, f"logical_{op}")(x, y),
        [t(2, 3, dtype="bool"), t(2, 3, dtype="bool")], ops=(f"logical_{op}",)) for op in ("and", "or")],
    C("logical_and_float", lambda x, y: paddle.logical_and(x, y), [t(2, 3, low=-1, high=2), t(3)],
      ops=("logical_and",)),
    C("logical_not", lambda x: paddle.logical_not(x > 0), [t(2, 3)], ops=("logical_not",)),
    C("masked_fill", lambda x, m: paddle.masked_fill(x, m, 2.5), [t(2, 3), t(2, 3, dtype="bool")],
      ops=("masked_fill",)),
    C("masked_fill_broadcast_int64", lambda x, m: paddle.masked_fill(x, m, -7), [t(3, dtype="int64"),
                                                                                 t(2, 3, dtype="bool")],
      ops=("masked_fill",)),
    C("full_with_tensor", lambda x: x + paddle.full(paddle.shape(x), 1.5), [t(None, 3, run=(4, 3))],
      ops=("full_with_tensor",)),
    C("full_with_tensor_value", lambda x: paddle.full([2, 3], x[0, 1]), [t(2, 3)], ops=("full_with_tensor",)),
    # uniform has no fixture: kforge's generator is its own (tests/e2e/paddle33/uniform.json checks the program).
    *[C(f"cumsum_{dt}", lambda x: paddle.cumsum(x, axis=1), [t(2, 5, dtype=dt)], ops=("cumsum",)) for dt in NUMBER],
    C("cumsum_flatten", lambda x: paddle.cumsum(x), [t(2, 3, 2)], ops=("cumsum",)),
    C("cumsum_axis0_dynamic", lambda x: paddle.cumsum(x, axis=0), [t(None, 3, run=(4, 3))], ops=("cumsum",)),
    *[C(f"prod_{dt}", lambda x: paddle.prod(x, axis=1), [t(2, 5, dtype=dt)], ops=("prod",)) for dt in NUMBER],
    C("prod_all_keepdim", lambda x: paddle.prod(x * 2, axis=[0, 1], keepdim=True), [t(2, 3)], ops=("prod",)),
    C("prod_all", lambda x: paddle.prod(x * 2), [t(2, 3)], ops=("prod",)),
    *[C(f"argmax_{dt}", lambda x: paddle.argmax(x, axis=-1), [t(3, 5, dtype=dt)], ops=("argmax",))
      for dt in NUMBER],
    C("argmax_flatten", lambda x: paddle.argmax(x), [t(3, 4)], ops=("argmax",)),
    C("argmax_keepdim_int32", lambda x: paddle.argmax(x, axis=0, keepdim=True, dtype="int32"), [t(3, 4)],
      ops=("argmax",)),
    *[C(f"topk_{dt}", lambda x: paddle.topk(x, 2), [t(3, 6, dtype=dt)], ops=("topk",)) for dt in FLOAT],
    C("topk_smallest_axis0", lambda x: paddle.topk(x, 3, axis=0, largest=False), [t(5, 4)], ops=("topk",)),
    C("topk_dynamic", lambda x: paddle.topk(x, 1), [t(None, 7, run=(3, 7))], ops=("topk",)),
    # Ties (floor): equal values come out in the order of Paddle's CPU kernel (nth_element + sort where k * 64 >= len,
    # partial_sort below), not by index.
    C("topk_ties", lambda x: paddle.topk(paddle.floor(x * 3), 6), [t(4, 40)], ops=("topk",)),
    C("topk_ties_partial", lambda x: paddle.topk(paddle.floor(x * 3), 5), [t(3, 700)], ops=("topk",)),
    C("topk_ties_smallest_unsorted", lambda x: paddle.topk(paddle.floor(x * 3), 7, largest=False, sorted=False),
      [t(4, 50)], ops=("topk",)),
    C("topk_ties_axis0", lambda x: paddle.topk(paddle.floor(x * 3), 6, axis=0), [t(40, 3)], ops=("topk",)),
    # argsort (SOLOv2's score order): values and indices; ties (floor, small integers) in the order of Paddle's CPU
    # kernel (std::sort of the line's (value, index) pairs: neither stable nor by index), index order when stable;
    # NaN (log of negatives) as the largest; lines long enough for introsort's partitions.
    C("argsort_float32", lambda x: paddle._C_ops.argsort(x, -1, False, False), [t(3, 6)], ops=("argsort",)),
    C("argsort_float64_descending_axis0", lambda x: paddle._C_ops.argsort(x, 0, True, False),
      [t(5, 4, dtype="float64")], ops=("argsort",)),
    *[C(f"argsort_{dt}_ties", lambda x: paddle._C_ops.argsort(x, -1, False, False), [t(3, 40, dtype=dt)],
        ops=("argsort",)) for dt in ("int32", "int64")],
    C("argsort_ties", lambda x: paddle._C_ops.argsort(paddle.floor(x * 3), -1, False, False), [t(4, 40)],
      ops=("argsort",)),
    C("argsort_ties_descending_long", lambda x: paddle._C_ops.argsort(paddle.floor(x * 3), 1, True, False),
      [t(2, 300, 2)], ops=("argsort",)),
    C("argsort_ties_stable", lambda x: paddle._C_ops.argsort(paddle.floor(x * 3), -1, False, True), [t(3, 50)],
      ops=("argsort",)),
    C("argsort_ties_stable_descending_axis0", lambda x: paddle._C_ops.argsort(paddle.floor(x * 3), 0, True, True),
      [t(40, 3)], ops=("argsort",)),
    *[C(f"argsort_nan{'_descending' if d else ''}",
        lambda x, d=d: paddle._C_ops.argsort(paddle.floor(paddle.log(x) * 2), -1, d, False), [t(3, 30)],
        ops=("argsort",)) for d in (False, True)],
    C("argsort_dynamic", lambda x: paddle.argsort(x, descending=True), [t(None, 9, run=(3, 9))], ops=("argsort",)),
    C("argsort_scores_dynamic", lambda x: paddle.argsort(paddle.floor(x * 20) / 20, descending=True),
      [t(None, low=0.0, high=0.75, run=(68,))], ops=("argsort",)),
    C("sort_values", lambda x: paddle.sort(x, axis=0), [t(6, 5)], ops=("argsort",)),
    # depthwise_conv2d_transpose (CenterNet's upsampling): Paddle exports a conv2d_transpose whose groups equal its
    # input channels (and one filter each) as it; kforge runs it as conv2d_transpose (canonicalize_ops).
    C("depthwise_conv2d_transpose", lambda x, w: F.conv2d_transpose(x, w, stride=2, padding=1, groups=4),
      [t(2, 4, 5, 5)], [t(4, 1, 4, 4)], ops=("depthwise_conv2d_transpose",)),
    C("depthwise_conv2d_transpose_dynamic_float64",
      lambda x, w: F.conv2d_transpose(x, w, stride=(2, 1), padding=(0, 1), dilation=(1, 2), groups=3),
      [t(None, 3, 4, 6, dtype="float64", run=(2, 3, 4, 6))], [t(3, 1, 3, 3, dtype="float64")],
      ops=("depthwise_conv2d_transpose",)),
    C("depthwise_conv2d_transpose_nhwc", lambda x, w: F.conv2d_transpose(
        x, w, stride=2, padding=1, output_padding=1, groups=6, data_format="NHWC"), [t(1, 5, 4, 6)], [t(6, 1, 3, 3)],
      ops=("depthwise_conv2d_transpose",)),
    # uniform: Paddle's generator and kforge's differ, so the expected values are kforge's counter-based draws
    # (kernels/creation_math.cc; the CPU and CUDA kernels alike), added to x to keep the program's input.
    C("uniform_float32", lambda x: x + paddle.uniform([3, 5], min=-2.0, max=3.0, seed=7), [t(3, 5)], ops=("uniform",),
      expect=lambda outs, feeds: [feeds["x"] + _kforge_uniform((3, 5), -2.0, 3.0, 7, "float32")]),
    # randint likewise (Mask-RT-DETR's denoising queries: a count from data, 0 or 1): a static shape, and a shape
    # read from x's dynamic dims, int32.
    C("randint_int64", lambda x: x + paddle.randint(-3, 7, [3, 5]), [t(3, 5, dtype="int64")], ops=("randint",),
      expect=lambda outs, feeds: [feeds["x"] + _kforge_randint((3, 5), -3, 7, "int64")]),
    C("randint_int32_dynamic", lambda x: paddle.randint(0, 2, paddle.shape(x), dtype="int32") + x,
      [t(None, 4, dtype="int32")], ops=("randint",),
      expect=lambda outs, feeds: [feeds["x"] + _kforge_randint(feeds["x"].shape, 0, 2, "int32")]),
    C("uniform_float64", lambda x: x + paddle.uniform([2, 4], dtype="float64", min=0.0, max=1.0, seed=123),
      [t(2, 4, dtype="float64")], ops=("uniform",),
      expect=lambda outs, feeds: [feeds["x"] + _kforge_uniform((2, 4), 0.0, 1.0, 123, "float64")]),
    *[C(f"log_softmax_{dt}", lambda x: F.log_softmax(x, -1), [t(2, 5, dtype=dt, low=-3, high=3)],
        ops=("log_softmax",)) for dt in FLOAT],
    C("log_softmax_axis0", lambda x: F.log_softmax(x, 0), [t(3, 4, low=-3, high=3)], ops=("log_softmax",)),
    C("one_hot", lambda x: F.one_hot(x, 6), [t(2, 3, dtype="int64", low=0, high=6)], ops=("one_hot",)),
    C("one_hot_int32", lambda x: F.one_hot(x, 4), [t(5, dtype="int32", low=0, high=4)], ops=("one_hot",)),
    *[C(f"swiglu_{dt}", lambda x, y: F.swiglu(x, y), [t(2, 6, dtype=dt, low=-3, high=3), t(2, 6, dtype=dt)],
        ops=("swiglu",)) for dt in FLOAT],
    C("swiglu_halves", lambda x: F.swiglu(x), [t(None, 8, run=(3, 8), low=-3, high=3)], ops=("swiglu",)),

    # --- data movement / nn ops (issue 11) ---
    C("bilinear_interp", lambda x: F.interpolate(x, scale_factor=2, mode="bilinear"), [t(1, 2, 3, 4)],
      ops=("bilinear_interp",)),
    C("bilinear_interp_align_corners", lambda x: F.interpolate(x, size=[5, 7], mode="bilinear", align_corners=True),
      [t(2, 2, 3, 4)], ops=("bilinear_interp",)),
    C("bilinear_interp_align_mode1_nhwc", lambda x: F.interpolate(x, size=[4, 6], mode="bilinear", align_mode=1,
                                                                  data_format="NHWC"),
      [t(1, 3, 4, 2)], ops=("bilinear_interp",)),
    C("bilinear_interp_f64", lambda x: F.interpolate(x, scale_factor=0.5, mode="bilinear"),
      [t(1, 2, 6, 4, dtype="float64")], ops=("bilinear_interp",)),
    # Dynamic spatial dims: the output size is an expression of them.
    C("bilinear_interp_dynamic", lambda x: F.interpolate(x, scale_factor=1.5, mode="bilinear"),
      [t(None, 2, None, None, run=(2, 2, 5, 6))], ops=("bilinear_interp",)),
    C("nearest_interp_dynamic", lambda x: F.interpolate(x, scale_factor=2, mode="nearest"),
      [t(None, 2, None, None, run=(1, 2, 3, 5))], ops=("nearest_interp",)),
    # A DB head's upsampling over dynamic spatial dims.
    C("conv2d_transpose_dynamic_spatial", lambda x, w: F.conv2d_transpose(x, w, stride=2),
      [t(None, 2, None, None, run=(1, 2, 3, 4))], [t(2, 3, 2, 2)], ops=("conv2d_transpose",)),
    C("set_value_scalar", lambda x: _assign(x, (slice(None), slice(1, 3)), 0.5), [t(2, 4, 3)],
      ops=("set_value_",)),
    C("set_value_tensor_negative_step", lambda x, v: _assign(x, (slice(None), slice(None, None, -1), 2), v),
      [t(2, 4, 3), t(4)], ops=("set_value_with_tensor_",)),
    C("set_value_int64", lambda x: _assign(x, (slice(None), 1), 7), [t(3, 4, dtype="int64")], ops=("set_value_",)),
    C("set_value_on_mask", _mask_set_in_place, [t(4, 5)], ops=("less_than", "set_value_")),
    C("gather", lambda x, i: paddle.gather(x, i, axis=1), [t(2, 5, 3), t(4, dtype="int64", low=0, high=5)],
      ops=("gather",)),
    C("gather_int32_axis0", lambda x, i: paddle.gather(x, i), [t(4, 3, dtype="int64"), t(3, dtype="int32", low=0,
                                                                                        high=4)], ops=("gather",)),
    C("index_select", lambda x, i: paddle.index_select(x, i, axis=-1), [t(2, 3, 5), t(4, dtype="int64", low=0, high=5)],
      ops=("index_select",)),
    C("scatter_overwrite", lambda x, i, u: paddle.scatter(x, i, u), [t(5, 3), t(3, dtype="int64", low=0, high=5),
                                                                     t(3, 3)], ops=("scatter",)),
    # Repeated indices: the rows are cleared, then every update added.
    C("scatter_add", lambda x, i, u: paddle.scatter(x, i, u, overwrite=False),
      [t(5, 3), t(6, dtype="int64", low=0, high=3), t(6, 3)], ops=("scatter",)),
    C("tile", lambda x: paddle.tile(x, [2, 1, 3]), [t(None, 2, 3)], ops=("tile",)),
    C("tile_int64", lambda x: paddle.tile(x, [3, 2]), [t(2, 2, dtype="int64")], ops=("tile",)),
    C("roll", lambda x: paddle.roll(x, [1, -2], axis=[0, 2]), [t(3, 2, 5)], ops=("roll",)),
    C("roll_flat", lambda x: paddle.roll(x, 4), [t(3, 5, dtype="int32")], ops=("roll",)),
    C("flip", lambda x: paddle.flip(x, [0, -1]), [t(2, 3, 4)], ops=("flip",)),
    C("pad_reflect", lambda x: F.pad(x, [1, 2, 2, 1], mode="reflect"), [t(1, 2, 4, 5)], ops=("pad3d",)),
    C("pad_constant", lambda x: F.pad(x, [0, 1, 2, 0], mode="constant", value=-0.5), [t(2, 2, 3, 3)], ops=("pad3d",)),
    C("pad3d_replicate", lambda x: F.pad(x, [1, 0, 0, 2, 1, 1], mode="replicate"), [t(1, 2, 2, 3, 3)],
      ops=("pad3d",)),
    C("pad3d_circular_ndhwc", lambda x: F.pad(x, [2, 1, 1, 1, 0, 1], mode="circular", data_format="NDHWC"),
      [t(1, 2, 3, 3, 2)], ops=("pad3d",)),
    C("bmm", lambda x, y: paddle.bmm(x, y), [t(None, 3, 4), t(None, 4, 2)], ops=("bmm",)),
    C("einsum_batched", lambda x, y: paddle.einsum("bij,bkj->bik", x, y), [t(2, 3, 4), t(2, 5, 4)], ops=("einsum",)),
    C("einsum_outer", lambda x, y: paddle.einsum("i,j->ij", x, y), [t(3), t(4)], ops=("einsum",)),
    C("einsum_transpose_sum", lambda x: paddle.einsum("ijk->kj", x), [t(2, 3, 4)], ops=("einsum",)),
    C("group_norm", lambda x, w, b: F.group_norm(x, 2, weight=w, bias=b), [t(2, 4, 3, 3)], [t(4), t(4)],
      ops=("group_norm",)),
    C("group_norm_nhwc", lambda x, w, b: F.group_norm(x, 3, weight=w, bias=b, data_format="NHWC"),
      [t(None, 2, 2, 6)], [t(6), t(6)], ops=("group_norm",)),
    C("instance_norm", lambda x, w, b: F.instance_norm(x, weight=w, bias=b), [t(None, 3, 4, 4)], [t(3), t(3)],
      ops=("instance_norm",)),
    C("fused_rms_norm", lambda x, r, w, b: paddle.incubate.nn.functional.fused_rms_norm(
        x, w, b, 1e-6, 2, residual=r)[0], [t(None, 3, 8), t(None, 3, 8)], [t(8), t(8)],
      ops=("fused_rms_norm_quant",)),
    C("tril", lambda x: paddle.tril(x, -1), [t(2, 3, 4)], ops=("tril",)),
    C("triu", lambda x: paddle.triu(x, 1), [t(3, 4)], ops=("triu",)),
    C("causal_mask", lambda x: F.softmax(x + paddle.triu(paddle.full([4, 4], float("-inf")), 1), -1),
      [t(None, 4, 4)], ops=("triu", "softmax")),
    C("arange", lambda x: x + paddle.arange(5).astype("float32"), [t(2, 5)], ops=("arange",)),
    # ---- shape values from tensors: integer tensors computed from dynamic dims (shape64 -> slice -> scale /
    # concat / stack / cast) as the shape arguments of other ops; kforge knows them as expressions of the dims ----
    C("reshape_heads_dynamic", lambda x: paddle.transpose(
        paddle.reshape(x, [paddle.shape(x)[0], paddle.shape(x)[1], 4, -1]), [0, 2, 1, 3]),
      [t(None, None, 16, run=(2, 3, 16))], ops=("shape64", "reshape")),
    C("reshape_heads_dynamic_b3", lambda x: paddle.transpose(
        paddle.reshape(x, [paddle.shape(x)[0], paddle.shape(x)[1], 4, -1]), [0, 2, 1, 3]),
      [t(None, None, 16, run=(3, 5, 16))], ops=("shape64", "reshape")),
    C("full_with_tensor_dynamic", lambda x: x + paddle.full([paddle.shape(x)[0], paddle.shape(x)[1]], 1.5),
      [t(None, None, run=(3, 4))], ops=("full_with_tensor",)),
    # Output sizes that depend on data (issue 33): laid out when the op has run.
    C("nonzero_bool", lambda x: paddle.nonzero(x > 0), [t(3, 4)], ops=("nonzero",)),
    C("nonzero_empty", lambda x: paddle.nonzero(x > 0), [t(2, 3, low=-1, high=-0.5)], ops=("nonzero",)),
    C("nonzero_gather_nd", lambda x: paddle.gather_nd(x, paddle.nonzero(x > 0)) * 2.0 + 1.0,
      [t(None, 5, run=(3, 5))], ops=("nonzero", "gather_nd")),
    C("nonzero_shape", lambda x: paddle.shape(paddle.nonzero(x > 0)), [t(None, 4, run=(3, 4))], ops=("nonzero",)),
    C("unique_all", lambda x: paddle.unique(x, return_index=True, return_inverse=True, return_counts=True),
      [t(3, 5, dtype="int64", low=0, high=6)], ops=("unique",)),
    C("unique_float_dynamic", lambda x: paddle.unique(paddle.floor(x * 2.0)) + 1.0, [t(None, 4, run=(3, 4))],
      ops=("unique",)),
    # Along an axis: the distinct rows (few values, so rows repeat) and the distinct columns of a float matrix.
    C("unique_axis0", lambda x: paddle.unique(x, return_index=True, return_inverse=True, return_counts=True, axis=0),
      [t(7, 2, dtype="int64", low=0, high=2)], ops=("unique",)),
    C("unique_axis1_float", lambda x: (lambda out, inverse: (out * 2.0, inverse))(
        *paddle.unique(paddle.floor(x * 1.5), return_inverse=True, axis=-1)), [t(2, 9)], ops=("unique",)),
    C("unique_axis0_dynamic", lambda x: paddle.unique(paddle.floor(x), axis=0) + 1.0, [t(None, 2, run=(6, 2))],
      ops=("unique",)),
    C("masked_select_scale", lambda x: paddle.masked_select(x, x > 0.2) * 3.0, [t(2, 6)], ops=("masked_select",)),
    # Only the sum of the selection leaves: the count sizes no entry of the size table (kNumSizes 0; BlazeFace's loss).
    C("masked_select_sum", lambda x, m: paddle.sum(paddle.masked_select(x, m)), [t(2, 3, 4), t(2, 3, 4, dtype="bool")],
      ops=("masked_select", "sum")),
    C("masked_select_broadcast", lambda x, m: paddle.masked_select(x, m), [t(2, 3, 4), t(3, 4, dtype="bool")],
      ops=("masked_select",)),
    C("masked_select_dynamic", lambda x: paddle.masked_select(x, x > 0).reshape([-1, 1]) + paddle.mean(x),
      [t(None, None, run=(3, 5))], ops=("masked_select",)),
    # Shapes read from a tensor's values (issue 33): each dim the program leaves dynamic is read from the op's
    # infer-meta run just before the call.
    C("reshape_shape_from_data", lambda x: paddle.reshape(x, [(x > 100).astype("int64").sum() + 3, -1]) * 2.0,
      [t(3, 4)], ops=("reshape",)),
    C("reshape_computed_shape_from_data",  # a view of a computed value, sized apart from it: a buffer of its own
      lambda x: paddle.reshape(F.relu(x), [(x > 100).astype("int64").sum() + 2, -1]) - F.relu(x).sum(),
      [t(4, 3)], ops=("reshape",)),
    C("arange_end_from_data", lambda x: paddle.arange((x > 0).astype("int64").sum()).astype("float32") + 1.0,
      [t(3, 4)], ops=("arange",)),
    C("full_shape_from_data", lambda x: paddle.full([(x > 0).astype("int32").sum(), 2], 1.5), [t(2, 5)],
      ops=("full_with_tensor",)),
    C("slice_end_from_data", lambda x: x[:, : (x[0] > 0).astype("int64").sum() + 1] + 1.0, [t(None, 6, run=(3, 6))],
      ops=("slice",)),
    # The same from an integer input of the program (no reduction: tests/e2e/cuda_index_emulated.py runs them).
    C("reshape_shape_from_input", lambda x, n: paddle.reshape(x, [n, -1]) * 2.0,
      [t(3, 4), t(1, dtype="int64", low=2, high=4)], ops=("reshape",)),
    C("expand_shape_from_input", lambda y, n: paddle.expand(y, [n, 4]) + 1.0,
      [t(1, 4), t(1, dtype="int64", low=2, high=5)], ops=("expand",)),
    C("tile_from_input", lambda y, n: paddle.tile(y, [n, 1]) * 2.0, [t(2, 3), t(1, dtype="int64", low=2, high=4)],
      ops=("tile",)),
    C("arange_end_from_input", lambda n: paddle.arange(n).astype("float32") + 1.0,
      [t(1, dtype="int64", low=3, high=7)], ops=("arange",)),
    C("full_shape_from_input", lambda n: paddle.full([n, 2], 1.5) + 1.0, [t(1, dtype="int32", low=2, high=5)],
      ops=("full_with_tensor",)),
    C("slice_end_from_input", lambda x, n: x[:, :n] + 1.0, [t(3, 6), t(1, dtype="int64", low=1, high=6)],
      ops=("slice",)),
    # A slice whose start is computed from a dynamic dim and whose end is read from an input's values.
    C("slice_start_dims_end_from_input", lambda x, n: x[:, paddle.shape(x)[1] // 3 : n] + 1.0,
      [t(None, None, run=(3, 6)), t(1, dtype="int64", low=3, high=6)], ops=("slice",)),
    # A slice start read from an input's values (the kernel reads it on the device, normalised as the CPU kernel):
    # alone, with the end from data too, negative (counted from the end), and an index with decrease_axis.
    C("slice_start_from_input", lambda x, n: x[:, n:] + 1.0, [t(3, 6), t(1, dtype="int64", low=1, high=6)],
      ops=("slice",)),
    C("slice_start_end_from_input", lambda x, n: x[:, n : n + 2] * 2.0, [t(3, 6), t(1, dtype="int64", low=0, high=4)],
      ops=("slice",)),
    C("slice_neg_start_from_input", lambda x, n: x[:, -n:] + 1.0, [t(3, 6), t(1, dtype="int32", low=1, high=5)],
      ops=("slice",)),
    C("slice_index_from_input", lambda x, n: x[:, n.reshape([])] * 2.0, [t(4, 5), t(1, dtype="int64", low=0, high=5)],
      ops=("slice",)),
    C("slice_list_from_input", lambda x, a, b: paddle.slice(x, axes=[0, 1], starts=[a, b], ends=[4, 6]) + 1.0,
      [t(4, 6), t(1, dtype="int64", low=0, high=3), t(1, dtype="int64", low=1, high=5)], ops=("slice",)),
    # Shapes given as lists of tensors (builtin.combine of 1-element tensors: a TensorList), every entry from data.
    C("reshape_shape_list_from_input", lambda x, a, b: paddle.reshape(x, [a, b]) * 2.0,
      [t(3, 4), t(1, dtype="int64", low=2, high=3), t(1, dtype="int64", low=6, high=7)], ops=("reshape",)),
    C("expand_shape_list_from_input", lambda y, a, b: paddle.expand(y, [a, b]) + 1.0,
      [t(1, 4), t(1, dtype="int32", low=2, high=5), t(1, dtype="int32", low=4, high=5)], ops=("expand",)),
    C("full_shape_list_from_input", lambda a, b: paddle.full([a, b], 1.5) + 1.0,
      [t(1, dtype="int64", low=2, high=5), t(1, dtype="int64", low=1, high=4)], ops=("full_with_tensor",)),
    # Interpolation to a size read from the values of integer inputs (GraphNet SOLOv2/6 and /7): SizeTensor (a list
    # of one-element tensors) and OutSize (one tensor of two values).
    C("bilinear_size_tensor_from_input", lambda x, h, w: F.interpolate(x, size=[h, w], mode="bilinear") + 1.0,
      [t(1, 2, 4, 5), t(1, dtype="int64", low=5, high=9), t(1, dtype="int64", low=3, high=8)],
      ops=("bilinear_interp",)),
    C("bilinear_out_size_from_input", lambda x, s: F.interpolate(x, size=s, mode="bilinear") + 1.0,
      [t(2, 3, 6, 4), t(2, dtype="int32", low=3, high=9)], ops=("bilinear_interp",)),
    C("nearest_size_tensor_from_input", lambda x, h, w: F.interpolate(x, size=[h, w], mode="nearest") * 2.0,
      [t(1, 3, 3, 4), t(1, dtype="int32", low=4, high=8), t(1, dtype="int32", low=2, high=9)],
      ops=("nearest_interp",)),
    # Two reads in one program with a dynamic batch: the slice's end, then arange's end (golden
    # compile-cuda-shape-from-values).
    C("shape_from_input_mix", lambda x, n: (paddle.tile(x[:, :n], [1, 2]) * 2.0, paddle.arange(n).astype("float32")),
      [t(None, 6, run=(3, 6)), t(1, dtype="int64", low=1, high=6)], ops=("slice", "tile", "arange")),
    # k read from an input's values: the CPU runs TopKInferMeta before the call; --target cuda refuses it (no host
    # shape rule for topk: tests/golden/error-compile-cuda-data-dependent).
    # bilinear_interp to a size given as tensors' values (SOLOv2's mask upsampling: a list of 0-D int64 tensors;
    # --target cuda runs the shape rule on the host, kforge_shape_meta_interp.h).
    C("bilinear_size_from_input", lambda x, h, w: F.interpolate(x, size=[h.reshape([]), w.reshape([])],
                                                                mode="bilinear") * 2.0,
      [t(1, 3, 4, 5), t(1, dtype="int64", low=6, high=9), t(1, dtype="int64", low=3, high=11)],
      ops=("bilinear_interp",)),
    C("topk_k_from_input", lambda x, k: paddle.topk(x, k)[0], [t(2, 5), t(1, dtype="int64", low=1, high=4)],
      ops=("topk",)),
    C("arange_dynamic", lambda x: x + paddle.arange(paddle.shape(x)[1]).astype("float32"),
      [t(None, None, run=(2, 5))], ops=("arange",)),
    C("arange_dynamic_start_step", lambda x: x + paddle.arange(paddle.shape(x)[0] - 1,
                                                                 paddle.shape(x)[0] - 1 + 2 * paddle.shape(x)[1],
                                                                 2).astype("float32"),
      [t(None, None, run=(3, 4))], ops=("arange",)),
    # A row value that calls kforge_math.h (erf of a row mean, once per row: TimesNet's gelu(mean)); the fused CPU
    # loop must include the header (GraphNet TimesNet_cls/subgraph_4 did not build).
    C("gelu_of_row_mean", lambda x: x * F.gelu(x.mean(axis=-1, keepdim=True)), [t(3, 16)], ops=("gelu", "mean")),
    # paddleformers' masks: a bool tensor filled from a float value (under --precision float16 a float16 value).
    C("full_with_tensor_bool_mask", lambda x: paddle.where(paddle.full(paddle.shape(x), 1.0, dtype="bool"), x, -x),
      [t(None, None, run=(2, 5))], ops=("full_with_tensor",)),
    C("causal_mask_dynamic", _causal_scores, [t(None, None, 8, run=(2, 5, 8))], ops=("triu", "full_with_tensor")),
    C("causal_mask_dynamic_b1", _causal_scores, [t(None, None, 8, run=(1, 3, 8))],
      ops=("triu", "full_with_tensor")),
    C("slice_dynamic_end", lambda x: x[:, : paddle.shape(x)[1] - 1], [t(None, None, 3, run=(2, 4, 3))],
      ops=("slice",)),
    C("slice_dynamic_start", lambda x: x[:, paddle.shape(x)[1] // 2 :], [t(None, None, 3, run=(2, 5, 3))],
      ops=("slice",)),
    C("expand_dynamic", lambda x, y: x + paddle.expand(y, [paddle.shape(x)[0], -1]), [t(None, 4, run=(3, 4))],
      [t(1, 4)], ops=("expand",)),
    C("tile_dynamic", lambda x, y: paddle.tile(y, [paddle.shape(x)[0], 1]) * paddle.sum(x),
      [t(None, 4, run=(3, 4))], [t(1, 4)], ops=("tile",)),
    C("position_ids_dynamic", _position_ids, [t(None, None, dtype="int64", run=(2, 5))], ops=("arange", "expand")),
    C("interpolate_size_dynamic", _upsample_twice, [t(None, 2, None, None, run=(1, 2, 3, 4))],
      ops=("nearest_interp",)),
    C("interpolate_size_dynamic_b2", _upsample_twice, [t(None, 2, None, None, run=(2, 2, 2, 5))],
      ops=("nearest_interp",)),
    C("reshape_stack_dynamic", lambda x: paddle.reshape(
        x, paddle.stack([paddle.shape(x)[0] * paddle.shape(x)[1], paddle.shape(x)[2]])),
      [t(None, None, 6, run=(2, 3, 6))], ops=("stack", "reshape")),
    C("reshape_concat_cast_dynamic", lambda x: paddle.reshape(
        x, paddle.concat([paddle.shape(x)[:1].astype("int32"), paddle.to_tensor([-1], dtype="int32")])),
      [t(None, 2, 3, run=(3, 2, 3))], ops=("concat", "cast", "reshape")),
    C("split_shape_dynamic", _split_hw, [t(None, 2, None, None, run=(2, 2, 3, 4))], ops=("split_with_num",)),
    C("unbind_shape_dynamic", _unbind_hw, [t(None, 2, None, None, run=(1, 2, 3, 2))], ops=("unbind",),
      pending="no unbind kernel in kernels/ops.yaml yet (its values would fold, but the op must be known)"),
    C("prod_shape_dynamic", lambda x: paddle.reshape(x, [paddle.shape(x)[0], paddle.prod(paddle.shape(x)[1:])]),
      [t(None, None, 3, run=(2, 4, 3))], ops=("prod",)),
    C("bert_like_dynamic", _bert_like, [t(None, None, dtype="int64", low=0, high=16, run=(2, 5))],
      [t(16, 8), t(8, 8), t(8, 8), t(8, 8), t(8, 8)], ops=("arange", "reshape", "full_with_tensor", "triu")),
    C("bert_like_dynamic_b3", _bert_like, [t(None, None, dtype="int64", low=0, high=16, run=(3, 7))],
      [t(16, 8), t(8, 8), t(8, 8), t(8, 8), t(8, 8)], ops=("arange", "reshape", "full_with_tensor", "triu")),
    C("pad_to_multiple_dynamic", _pad_to_multiple, [t(None, 2, None, None, run=(1, 2, 5, 6))],
      ops=("pad3d", "remainder")),
    C("pad_to_multiple_dynamic_b2", _pad_to_multiple, [t(None, 2, None, None, run=(2, 2, 3, 8))],
      ops=("pad3d", "remainder")),
    # Space to depth over dynamic H and W (a YOLO-style Focus stem): strided slices of dynamic axes.
    C("strided_slice_dynamic", lambda x: paddle.concat([x[:, :, ::2, ::2], x[:, :, 1::2, ::2], x[:, :, ::2, 1::2],
                                                        x[:, :, 1::2, 1::2]], axis=1),
      [t(None, 2, None, None, run=(1, 2, 4, 6))], ops=("strided_slice",)),
    C("strided_slice_dynamic_end", lambda x: x[:, 1 : paddle.shape(x)[1] - 1 : 2],
      [t(None, None, 3, run=(2, 7, 3))], ops=("strided_slice",)),
    C("bilinear_size_dynamic", lambda x: F.interpolate(
        x, size=[paddle.shape(x)[2] * 2 - 1, paddle.shape(x)[3] + 3], mode="bilinear"),
      [t(None, 2, None, None, run=(1, 2, 3, 4))], ops=("bilinear_interp",)),
    C("set_value_dynamic_end", lambda x: _assign(x, (slice(None), slice(1, paddle.shape(x)[1] - 1)), 0.5),
      [t(None, None, 3, run=(2, 5, 3))], ops=("set_value_",)),
    # Bounds read from data (issue 34): x[:, a:b] = v and x[1, b:a:s] = 0.5 with a, b and the (negative) step s
    # computed, which the CUDA kernel reads on the device.
    C("set_value_bounds_from_data", lambda x, v, a, b: _assign(x, (slice(None), slice(a[0], b[0])), v),
      [t(3, 8), t(3, 1), t(1, dtype="int64", low=-7, high=-5), t(1, dtype="int64", low=4, high=12)],
      ops=("set_value_with_tensor_",)),
    C("set_value_step_from_data", lambda x, a, b, s: _assign(x, (1, slice(b[0], a[0], s[0])), 0.5),
      [t(2, 9), t(1, dtype="int64", low=0, high=2), t(1, dtype="int64", low=6, high=9),
       t(1, dtype="int64", low=-3, high=-1)],
      ops=("set_value_",)),
    # --- the ops GraphNet's Paddle models need most (issue 34, second batch) ---
    # share_data_: what Tensor.detach() saves; a copy of x of any dtype.
    *[C(f"share_data_{dt}", lambda x: x.detach() * 2, [t(2, 3, dtype=dt)], ops=("share_data_",)) for dt in NUMBER],
    C("share_data_bool", lambda x: paddle.logical_not(x.detach()), [t(2, 3, dtype="bool")], ops=("share_data_",)),
    C("share_data_then_overwrite", _share_data_then_overwrite, [t(3, 8)], ops=("share_data_",)),
    # gather_nd: index rows of every length up to x's rank, int32 and int64 indices (negative ones count from the
    # end), integer and bool data.
    *[C(f"gather_nd_{it}", lambda x, i: paddle.gather_nd(x, i), [t(3, 4, 5), t(2, 2, dtype=it, low=-3, high=3)],
        ops=("gather_nd",)) for it in ("int32", "int64")],
    C("gather_nd_full_index", lambda x, i: paddle.gather_nd(x, i), [t(3, 4, 5), t(4, 3, dtype="int64", low=0,
                                                                                    high=3)], ops=("gather_nd",)),
    C("gather_nd_rows", lambda x, i: paddle.gather_nd(x, i), [t(4, 3, dtype="int64", low=-50, high=50),
                                                              t(2, 3, 1, dtype="int64", low=0, high=4)],
      ops=("gather_nd",)),
    C("gather_nd_bool", lambda x, i: paddle.gather_nd(x, i), [t(3, 4, dtype="bool"), t(5, 2, dtype="int64", low=0,
                                                                                       high=3)], ops=("gather_nd",)),
    C("gather_nd_dynamic", lambda x, i: paddle.gather_nd(x, i) * 2, [t(None, 6), t(None, 2, dtype="int64", low=0,
                                                                                      high=2)],
      ops=("gather_nd",)),
    # index_put: rows of a matrix (a negative index, value broadcast along the row), elements of a matrix named by
    # two broadcast index tensors with accumulation (a position named twice adds twice), and Co-DINO's
    # (GraphNet Co-DINO-R50/subgraph_33) one int64 element of a vector.
    C("index_put_rows", lambda x, i, v: paddle.index_put(x, (i,), v),
      [t(5, 3), t(2, dtype="int64", low=-5, high=5), t(3)], ops=("index_put",)),
    C("index_put_accumulate", lambda x, v: paddle.index_put(
          x, (paddle.to_tensor([[0], [2], [2]], dtype="int64"), paddle.to_tensor([1, 3], dtype="int64")), v,
          accumulate=True),
      [t(4, 5), t(3, 2)], ops=("index_put",)),
    C("index_put_int64", lambda x, i, v: paddle.index_put(x, (i,), v),
      [t(9, dtype="int64", low=-50, high=50), t(1, dtype="int64", low=0, high=9), t(1, dtype="int64", low=0, high=9)],
      ops=("index_put",)),
    # prelu: MobileFaceNet's (GraphNet MobileFaceNet/subgraph_0) one slope per channel of NCHW, after a convolution,
    # with a dynamic batch; one slope per channel of NHWC; one slope for all ("all", float64); one per element of a
    # batch item ("element", which F.prelu does not choose: the op itself).
    C("prelu_channel_conv", lambda x, w, a: F.prelu(F.conv2d(x, w, padding=1), a),
      [t(None, 3, 5, 5, run=(2, 3, 5, 5))], [t(4, 3, 3, 3), t(4)], ops=("conv2d", "prelu")),
    C("prelu_channel_nhwc", lambda x, a: F.prelu(x, a, data_format="NHWC"), [t(2, 3, 4, 5)], [t(5)],
      ops=("prelu",)),
    C("prelu_all_float64", lambda x, a: F.prelu(x, a), [t(3, 4, dtype="float64")], [t(1, dtype="float64")],
      ops=("prelu",)),
    C("prelu_element", lambda x, a: paddle._C_ops.prelu(x, a, "NCHW", "element"), [t(2, 3, 4)], [t(1, 3, 4)],
      ops=("prelu",)),
    # meshgrid: two and three 1-D inputs (Paddle's ij indexing), float and int64.
    C("meshgrid_2", lambda x, y: tuple(paddle.meshgrid(x, y)), [t(3), t(4)], ops=("meshgrid",)),
    C("meshgrid_3_int64", lambda x, y, z: tuple(paddle.meshgrid(x, y, z)),
      [t(2, dtype="int64"), t(3, dtype="int64"), t(4, dtype="int64")], ops=("meshgrid",)),
    C("meshgrid_anchors", lambda x: (lambda g: g[0] * 8.0 + g[1])(paddle.meshgrid(paddle.arange(3).astype("float32"),
                                                                                  paddle.arange(4).astype("float32"))) + x,
      [t(3, 4)], ops=("meshgrid",)),
    # min: a reduction like max, over every dtype; all dims, negative axes, keepdim.
    *[C(f"min_{dt}", lambda x: paddle.min(x, axis=1), [t(2, 3, 4, dtype=dt)], ops=("min",)) for dt in NUMBER],
    C("min_all", lambda x: paddle.min(x), [t(3, 4)], ops=("min",)),
    C("min_keepdim", lambda x: x - paddle.min(x, axis=[-1, 0], keepdim=True), [t(3, 4, 2)], ops=("min",)),
    # A NaN in the reduced elements makes max / min NaN, as in Paddle (log of the negative inputs: some columns
    # have one, first, inside or last); float64 through the kernel path, the matrix-NMS decay's min(exp / exp).
    *[C(f"{op}_nan_{dt}", lambda x, op=op: getattr(paddle, op)(paddle.log(x), axis=0),
        [t(5, 16, dtype=dt, low=-0.15, high=2.0)], ops=(op,)) for op in ("max", "min") for dt in FLOAT],
    C("min_nan_of_ratio", lambda x: x[0] * paddle.min(paddle.exp(-2 * x * x) / paddle.exp(-2 * x.T * x.T), axis=0),
      [t(6, 6, low=-30.0, high=30.0)], ops=("min",)),
    # p_norm: 2-norm (F.normalize), 1, 3, inf, -inf, 0 (count of nonzeros), keepdim, asvector (every dim).
    C("p_norm_2", lambda x: paddle.linalg.norm(x, p=2, axis=-1), [t(3, 5)], ops=("p_norm",)),
    C("p_norm_normalize", lambda x: F.normalize(x, axis=1), [t(2, 4, 3)], ops=("p_norm",)),
    *[C(f"p_norm_{name}", lambda x, p=p: paddle.linalg.norm(x, p=p, axis=1, keepdim=True), [t(3, 4, 2)],
        ops=("p_norm",)) for name, p in (("1", 1.0), ("3", 3.0), ("inf", float("inf")), ("neg_inf", float("-inf")),
                                         ("half", 0.5))],
    C("p_norm_0", lambda x: paddle.linalg.norm(paddle.floor(x * 2), p=0, axis=0), [t(4, 3)], ops=("p_norm",)),
    C("p_norm_float64", lambda x: paddle.linalg.norm(x, p=2, axis=0), [t(4, 3, dtype="float64")], ops=("p_norm",)),
    C("p_norm_vector", lambda x: paddle.linalg.vector_norm(x, p=3), [t(3, 4)], ops=("p_norm",)),
    # any / all over bool masks: one axis, every axis, keepdim; and over a float and int input.
    *[C(f"{op}_bool", lambda x, op=op: getattr(paddle, op)(x, axis=1), [t(3, 4, dtype="bool")], ops=(op,))
      for op in ("any", "all")],
    *[C(f"{op}_every_axis", lambda x, op=op: getattr(paddle, op)(x), [t(3, 4, dtype="bool")], ops=(op,))
      for op in ("any", "all")],
    *[C(f"{op}_keepdim", lambda x, op=op: getattr(paddle, op)(x > 0.5, axis=[0, -1], keepdim=True), [t(3, 2, 4)],
        ops=(op,)) for op in ("any", "all")],
    *[C(f"{op}_int64", lambda x, op=op: getattr(paddle, op)(x, axis=0), [t(3, 4, dtype="int64", low=0, high=2)],
        ops=(op,)) for op in ("any", "all")],
    # pad: constant pad of every dim (pd_op.pad), any rank, every dtype.
    *[C(f"pad_{dt}", lambda x: F.pad(x, [1, 0, 2, 1], value=3), [t(2, 3, dtype=dt)], ops=("pad",))
      for dt in NUMBER],
    C("pad_rank3", lambda x: F.pad(x, [0, 1, 1, 2, 2, 0], value=-0.5), [t(2, 3, 2)], ops=("pad",)),
    C("pad_rank1", lambda x: F.pad(x, [3, 1]), [t(4)], ops=("pad",)),
    # grid_sample: bilinear / nearest, align_corners, padding zeros / border / reflection; grids past [-1, 1].
    *[C(f"grid_sample_{mode}_{pm}_{'ac' if ac else 'noac'}",
        lambda x, g, mode=mode, pm=pm, ac=ac: F.grid_sample(x, g, mode=mode, padding_mode=pm, align_corners=ac),
        [t(2, 3, 4, 5), t(2, 3, 6, 2, low=-1.3, high=1.3)], ops=("grid_sample",))
      for mode in ("bilinear", "nearest") for pm in ("zeros", "border", "reflection") for ac in (True, False)],
    C("grid_sample_float64", lambda x, g: F.grid_sample(x, g), [t(1, 2, 3, 3, dtype="float64"),
                                                                t(1, 4, 4, 2, dtype="float64", low=-1.2, high=1.2)],
      ops=("grid_sample",)),
    # sigmoid_cross_entropy_with_logits and bce_loss, elementwise (reduction none), with ignore_index and pos_weight.
    C("sigmoid_ce_logits", lambda x, y: F.binary_cross_entropy_with_logits(x * 4, y, reduction="none"),
      [t(3, 4), t(3, 4, low=0.0, high=1.0)], ops=("sigmoid_cross_entropy_with_logits",)),
    C("sigmoid_ce_logits_pos_weight", lambda x, y, w: F.binary_cross_entropy_with_logits(
        x * 4, y, pos_weight=w, reduction="none"), [t(3, 4), t(3, 4, low=0.0, high=1.0), t(4, low=0.5, high=2.0)],
      ops=("sigmoid_cross_entropy_with_logits",)),
    C("sigmoid_ce_logits_mean", lambda x, y: F.binary_cross_entropy_with_logits(x * 4, y),
      [t(3, 4), t(3, 4, low=0.0, high=1.0)], ops=("sigmoid_cross_entropy_with_logits",)),
    C("sigmoid_ce_logits_float64", lambda x, y: F.binary_cross_entropy_with_logits(x * 4, y, reduction="none"),
      [t(3, 4, dtype="float64"), t(3, 4, dtype="float64", low=0.0, high=1.0)],
      ops=("sigmoid_cross_entropy_with_logits",)),
    C("bce_loss", lambda x, y: F.binary_cross_entropy(F.sigmoid(x * 4), y, reduction="none"),
      [t(3, 4), t(3, 4, low=0.0, high=1.0)], ops=("bce_loss",)),
    C("bce_loss_saturated", lambda x, y: F.binary_cross_entropy(paddle.clip(x, 0.0, 1.0), y, reduction="sum"),
      [t(3, 4, low=-0.5, high=1.5), t(3, 4, low=0.0, high=1.0)], ops=("bce_loss",)),
    C("bce_loss_float64", lambda x, y: F.binary_cross_entropy(x, y, reduction="none"),
      [t(3, 4, dtype="float64", low=0.01, high=0.99), t(3, 4, dtype="float64", low=0.0, high=1.0)],
      ops=("bce_loss",)),
    # leaky_relu (YOLOv3's darknet): a slope below 1 (max(x, slope * x)) and above (min), float64, fused after a
    # conv bias (CPU: one fused loop) and alone.
    C("leaky_relu", lambda x: F.leaky_relu(x, 0.1), [t(2, 5)], ops=("leaky_relu",)),
    C("leaky_relu_float64", lambda x: F.leaky_relu(x, 0.02), [t(3, 4, dtype="float64")], ops=("leaky_relu",)),
    C("leaky_relu_slope2", lambda x: F.leaky_relu(x * 3, 2.0), [t(2, 5)], ops=("leaky_relu",)),
    C("leaky_relu_conv", lambda x, w, b: F.leaky_relu(F.conv2d(x, w, b, padding=1), 0.1),
      [t(None, 3, 6, 6, run=(2, 3, 6, 6))], [t(4, 3, 3, 3), t(4)], ops=("conv2d", "leaky_relu")),
    # cross_entropy_with_softmax (DETR's matcher, paddle.nn.functional.softmax_with_cross_entropy): hard int64 and
    # int32 labels over the last and a middle axis, ignore_index, a soft label, float64 logits far enough apart that
    # the shifted values pass -64, and use_softmax false (the input taken as probabilities).
    C("cross_entropy_softmax", lambda x, y: F.softmax_with_cross_entropy(x * 3, y, return_softmax=True),
      [t(4, 5), t(4, 1, dtype="int64", low=0, high=5)], ops=("cross_entropy_with_softmax",)),
    C("cross_entropy_softmax_axis1_int32",
      lambda x, y: F.softmax_with_cross_entropy(x * 3, y, axis=1, return_softmax=True),
      [t(2, 5, 3), t(2, 1, 3, dtype="int32", low=0, high=5)], ops=("cross_entropy_with_softmax",)),
    C("cross_entropy_softmax_ignore",
      lambda x, y: F.softmax_with_cross_entropy(x * 3, y, ignore_index=2),
      [t(3, 4, 6), t(3, 4, 1, dtype="int64", low=0, high=6)], ops=("cross_entropy_with_softmax",)),
    C("cross_entropy_softmax_soft",
      lambda x, y: F.softmax_with_cross_entropy(x * 3, F.softmax(y * 2), soft_label=True, return_softmax=True),
      [t(4, 6), t(4, 6)], ops=("cross_entropy_with_softmax",)),
    C("cross_entropy_softmax_float64_wide",
      lambda x, y: F.softmax_with_cross_entropy(x * 60, y, return_softmax=True),
      [t(4, 7, dtype="float64"), t(4, 1, dtype="int64", low=0, high=7)], ops=("cross_entropy_with_softmax",)),
    C("cross_entropy_softmax_float32_wide",
      lambda x, y: F.softmax_with_cross_entropy(x * 60, y, return_softmax=True),
      [t(4, 7), t(4, 1, dtype="int64", low=0, high=7)], ops=("cross_entropy_with_softmax",)),
    C("cross_entropy_no_softmax",
      lambda x, y: paddle._C_ops.cross_entropy_with_softmax(F.softmax(x * 2), y, False, False, True, -100, -1),
      [t(3, 5), t(3, 1, dtype="int64", low=0, high=5)], ops=("cross_entropy_with_softmax",)),
    # linear_interp: 1-D resizing of NCW, align_corners with both align modes, scale factors, NWC.
    C("linear_interp_size", lambda x: F.interpolate(x, size=[7], mode="linear"), [t(2, 3, 5)], ops=("linear_interp",)),
    C("linear_interp_align_corners", lambda x: F.interpolate(x, size=[8], mode="linear", align_corners=True),
      [t(2, 3, 5)], ops=("linear_interp",)),
    C("linear_interp_align_mode1", lambda x: F.interpolate(x, scale_factor=2, mode="linear", align_mode=1),
      [t(1, 2, 5)], ops=("linear_interp",)),
    C("linear_interp_down", lambda x: F.interpolate(x, size=[3], mode="linear"), [t(1, 2, 7)], ops=("linear_interp",)),
    C("linear_interp_dynamic", lambda x: F.interpolate(x, scale_factor=2, mode="linear"), [t(2, 3, None, run=(2, 3, 5))],
      ops=("linear_interp",)),
    C("linear_interp_nwc", lambda x: F.interpolate(x, size=[6], mode="linear", data_format="NWC"), [t(2, 4, 3)],
      ops=("linear_interp",)),
    # SeaFormer's (GraphNet SeaFormer_tiny/subgraph_0) linear_interp to its own width (Paddle copies), then an add.
    C("linear_interp_same_width", lambda x, y: y + F.interpolate(x, size=[16], mode="linear"),
      [t(1, 8, 16), t(2, 8, 16)], ops=("linear_interp",)),
    # expand_as, take_along_axis, diag.
    *[C(f"expand_as_{dt}", lambda x, y: paddle.expand_as(x, y), [t(3, 1, dtype=dt), t(2, 3, 4, dtype=dt)],
        ops=("expand_as",)) for dt in ("float32", "int64", "int32")],
    C("expand_as_dynamic", lambda x, y: paddle.expand_as(x, y) + y, [t(1, 4), t(None, 4)], ops=("expand_as",)),
    *[C(f"take_along_axis_{it}", lambda x, i: paddle.take_along_axis(x, i, axis=1), [t(3, 4, 2), t(3, 5, 2, dtype=it,
                                                                                                  low=0, high=4)],
        ops=("take_along_axis",)) for it in ("int32", "int64")],
    C("take_along_axis_broadcast", lambda x, i: paddle.take_along_axis(x, i, axis=-1),
      [t(3, 4, dtype="int64"), t(1, 2, dtype="int64", low=0, high=4)], ops=("take_along_axis",)),
    C("take_along_axis_negative", lambda x, i: paddle.take_along_axis(x, i, axis=0),
      [t(4, 3), t(2, 3, dtype="int64", low=-4, high=4)], ops=("take_along_axis",)),
    C("diag_vector", lambda x: paddle.diag(x), [t(4)], ops=("diag",)),
    C("diag_vector_offset", lambda x: paddle.diag(x, offset=-1, padding_value=2.5), [t(3)], ops=("diag",)),
    C("diag_matrix", lambda x: paddle.diag(x), [t(3, 4)], ops=("diag",)),
    C("diag_matrix_offset", lambda x: paddle.diag(x, offset=2), [t(3, 5, dtype="int64")], ops=("diag",)),
    C("diag_matrix_negative_offset", lambda x: paddle.diag(x, offset=-1), [t(4, 3)], ops=("diag",)),
    # isnan (NaN from log of negatives; integers are never NaN), linspace (number a constant; start and stop
    # constants or tensors), index_sample.
    C("isnan", lambda x: paddle.isnan(paddle.log(x)), [t(3, 5)], ops=("isnan",)),
    C("isnan_int64", lambda x: paddle.isnan(x), [t(2, 3, dtype="int64")], ops=("isnan",)),
    C("linspace", lambda x: x + paddle.linspace(-1.5, 2.0, 7), [t(3, 7)], ops=("linspace",)),
    C("linspace_int32", lambda x: x + paddle.linspace(-3, 8, 5, dtype="int32"), [t(2, 5, dtype="int32")],
      ops=("linspace",)),
    C("linspace_tensor_ends_float64", lambda x: paddle.linspace(x[0], x[1], 9, dtype="float64"),
      [t(2, dtype="float64", low=-5, high=5)], ops=("linspace",)),
    # Co-DINO's (GraphNet Co-DINO-R50/subgraph_34) anchors: a float32 start, an int64 stop computed from data, a
    # constant number; an even and an odd count.
    C("linspace_stop_int64_6", lambda x, y: y + paddle.linspace(paddle.full([1], 0.0, "float32"), -x[0], 6,
                                                                dtype="float32"),
      [t(2, dtype="int64", low=1, high=60), t(3, 6)], ops=("linspace",)),
    C("linspace_stop_int64_7", lambda x, y: y + paddle.linspace(paddle.full([1], 0.0, "float32"), -x[0], 7,
                                                                dtype="float32"),
      [t(2, dtype="int64", low=1, high=60), t(3, 7)], ops=("linspace",)),
    *[C(f"index_sample_{it}", lambda x, i: paddle.index_sample(x, i), [t(3, 8), t(3, 5, dtype=it, low=0, high=8)],
        ops=("index_sample",)) for it in ("int32", "int64")],
    C("index_sample_int64_values", lambda x, i: paddle.index_sample(x, i),
      [t(2, 6, dtype="int64", low=-50, high=50), t(2, 9, dtype="int64", low=0, high=6)], ops=("index_sample",)),
    # roi_align: boxes (x1, y1, w, h drawn, x2 = x1 + w) over two images counted by a constant boxes_num; sampling
    # ratio adaptive or fixed, aligned or not, boxes partly outside the map.
    *[C(f"roi_align_{'aligned' if al else 'plain'}_{'adaptive' if sr < 0 else 'sr2'}",
        lambda x, b, al=al, sr=sr: paddle.vision.ops.roi_align(
            x, paddle.concat([b[:, :2], b[:, :2] + b[:, 2:]], axis=1), paddle.to_tensor([2, 3], dtype="int32"),
            output_size=(3, 2), spatial_scale=0.5, sampling_ratio=sr, aligned=al),
        [t(2, 4, 10, 12), t(5, 4, low=-3.0, high=17.0)], ops=("roi_align",))
      for al in (False, True) for sr in (-1, 2)],
    C("roi_align_float64_one_image", lambda x, b: paddle.vision.ops.roi_align(
        x, paddle.concat([b[:, :2], b[:, :2] + b[:, 2:]], axis=1), paddle.to_tensor([3], dtype="int64"),
        output_size=2, spatial_scale=1.0), [t(1, 3, 8, 8, dtype="float64"), t(3, 4, dtype="float64", low=0, high=5)],
      ops=("roi_align",)),
    # deformable_conv (YOLOv3-DCN): v2 with a mask and v1 without, offsets up to 2.5 pixels (samples outside the
    # map), stride, dilation, groups, deformable groups.
    C("deformable_conv_v2", lambda x, o, m, w: paddle.vision.ops.deform_conv2d(x, o, w, padding=1, mask=m),
      [t(2, 4, 6, 7), t(2, 18, 6, 7, low=-2.5, high=2.5), t(2, 9, 6, 7, low=0.0, high=1.0)], [t(5, 4, 3, 3)],
      ops=("deformable_conv",)),
    C("deformable_conv_v1_stride_groups", lambda x, o, w: paddle.vision.ops.deform_conv2d(
        x, o, w, stride=2, padding=1, dilation=2, deformable_groups=2, groups=2),
      [t(1, 4, 9, 8), t(1, 36, 4, 3, low=-2.5, high=2.5)], [t(6, 2, 3, 3)], ops=("deformable_conv",)),
    C("deformable_conv_v2_bias_float64", lambda x, o, m, w, b: paddle.vision.ops.deform_conv2d(
        x, o, w, bias=b, padding=(1, 0), mask=m, deformable_groups=2),
      [t(1, 2, 5, 5, dtype="float64"), t(1, 36, 5, 3, dtype="float64", low=-1.5, high=1.5),
       t(1, 18, 5, 3, dtype="float64", low=0.0, high=1.0)], [t(4, 2, 3, 3, dtype="float64"), t(4, dtype="float64")],
      ops=("deformable_conv",)),
    # yolo_box (YOLOv3): YOLOv3's 3 anchors of one level, 4 classes, the logits in [-3, 3) (boxes below conf_thresh
    # stay 0), scale_x_y 1.05, clipped; iou_aware float64 unclipped over two images; H and W dynamic.
    C("yolo_box_yolov3", lambda x, im: paddle.vision.ops.yolo_box(
        x, im, anchors=[10, 13, 16, 30, 33, 23], class_num=4, conf_thresh=0.3, downsample_ratio=32, scale_x_y=1.05),
      [t(1, 27, 5, 6, low=-3.0, high=3.0), t(1, 2, dtype="int32", low=150, high=200)], ops=("yolo_box",)),
    C("yolo_box_iou_aware_float64", lambda x, im: paddle.vision.ops.yolo_box(
        x, im, anchors=[30, 61, 62, 45, 59, 119], class_num=2, conf_thresh=0.2, downsample_ratio=16,
        clip_bbox=False, iou_aware=True, iou_aware_factor=0.4),
      [t(2, 24, 4, 4, dtype="float64", low=-3.0, high=3.0), t(2, 2, dtype="int32", low=60, high=70)],
      ops=("yolo_box",)),
    C("yolo_box_dynamic", lambda x, im: paddle.vision.ops.yolo_box(
        x, im, anchors=[116, 90, 156, 198, 373, 326], class_num=1, conf_thresh=0.1, downsample_ratio=8),
      [t(None, 18, None, None, low=-3.0, high=3.0, run=(2, 18, 3, 5)), t(None, 2, dtype="int32", low=20, high=40,
                                                                          run=(2, 2))], ops=("yolo_box",)),
    # generate_proposals (Faster / Mask R-CNN's RPN): anchors of a real generator over an 8x10 map (stride 16),
    # scores with ties; pre_nms_top_n below the anchor count (nth_element's order), above it (a full sort) with
    # pixel_offset, min_size and an eta below 1 over two images; no NMS; no box kept (one row of zeros); float64
    # with the map's H and W dynamic.
    C("generate_proposals_rpn", lambda s, d: _proposals(
        s, d, [[128.0, 160.0]], 8, 10, pre_nms_top_n=100, post_nms_top_n=30, nms_thresh=0.7, min_size=0.0),
      [t(1, 9, 8, 10, low=0.0, high=1.0), t(1, 36, 8, 10, low=-0.4, high=0.4)], ops=("generate_proposals",)),
    C("generate_proposals_sorted_pixel_offset", lambda s, d: _proposals(
        s, d, [[120.0, 150.0], [128.0, 100.0]], 8, 10, pre_nms_top_n=1000, post_nms_top_n=40, nms_thresh=0.7,
        min_size=12.0, eta=0.9, pixel_offset=True),
      [t(2, 9, 8, 10, low=0.0, high=1.0), t(2, 36, 8, 10, low=-0.6, high=0.6)], ops=("generate_proposals",)),
    C("generate_proposals_no_nms", lambda s, d: _proposals(
        s, d, [[128.0, 160.0]], 8, 10, pre_nms_top_n=50, post_nms_top_n=10, nms_thresh=0.0, min_size=0.0),
      [t(1, 9, 8, 10, low=0.0, high=1.0), t(1, 36, 8, 10, low=-0.4, high=0.4)], ops=("generate_proposals",)),
    C("generate_proposals_none_kept", lambda s, d: _proposals(
        s, d, [[128.0, 160.0], [90.0, 90.0]], 8, 10, pre_nms_top_n=60, post_nms_top_n=20, nms_thresh=0.5,
        min_size=500.0),
      [t(2, 9, 8, 10, low=0.0, high=1.0), t(2, 36, 8, 10, low=-0.4, high=0.4)], ops=("generate_proposals",)),
    C("generate_proposals_dynamic_float64", lambda s, d: _proposals(
        s, d, [[96.0, 112.0]], 6, 7, dtype="float64", pre_nms_top_n=80, post_nms_top_n=25, nms_thresh=0.6,
        min_size=2.0),
      [t(1, 9, None, None, dtype="float64", low=0.0, high=1.0, run=(1, 9, 6, 7)),
       t(1, 36, None, None, dtype="float64", low=-0.5, high=0.5, run=(1, 36, 6, 7))], ops=("generate_proposals",)),
    # distribute_fpn_proposals (FPN's RoI levels 2 to 5, refer level 4 at 224): image-like boxes of two images
    # counted by a constant rois_num; pixel_offset; the levels put back in order through restore_index (MaskRCNN's
    # gather); the rois' count dynamic, float64.
    C("distribute_fpn_proposals", lambda b: paddle.vision.ops.distribute_fpn_proposals(
        _fpn_rois(b), 2, 5, 4, 224, rois_num=paddle.to_tensor([23, 17], dtype="int32")),
      [t(40, 4)], ops=("distribute_fpn_proposals",)),
    C("distribute_fpn_proposals_pixel_offset", lambda b: paddle.vision.ops.distribute_fpn_proposals(
        _fpn_rois(b), 2, 6, 4, 224, pixel_offset=True, rois_num=paddle.to_tensor([30], dtype="int64")),
      [t(30, 4)], ops=("distribute_fpn_proposals",)),
    C("distribute_fpn_proposals_restore", lambda b: (lambda rois, restore, nums: paddle.gather(
        paddle.concat(rois, axis=0) * 2.0, restore[:, 0]))(*paddle.vision.ops.distribute_fpn_proposals(
            _fpn_rois(b), 2, 5, 4, 224, rois_num=paddle.to_tensor([10, 26], dtype="int32"))),
      [t(36, 4)], ops=("distribute_fpn_proposals", "gather")),
    # a reshape whose shape is built from the rois' count (MaskRCNN's mask head): the CUDA target copies it after
    # checking the element counts when it runs (passes::cuda_checked_view)
    C("distribute_fpn_proposals_reshape", lambda b: (lambda rois, restore, nums: (paddle.reshape(
        _fpn_rois(b) * 2.0, [paddle.shape(restore)[0], 2, 2]), restore))(*paddle.vision.ops.distribute_fpn_proposals(
            _fpn_rois(b), 2, 5, 4, 224, rois_num=paddle.to_tensor([16, 8], dtype="int32"))),
      [t(24, 4)], ops=("distribute_fpn_proposals", "reshape")),
    # only the shapes of its results read (tensors of ones as large as level 2's rois and as restore_index): the op
    # runs for the count alone (it was left out as dead code, its count unbound)
    C("distribute_fpn_proposals_shapes_only", lambda b: (lambda rois, restore, nums: (
        paddle.ones(paddle.shape(rois[0])), paddle.ones(paddle.shape(restore)) * 3.0))(
            *paddle.vision.ops.distribute_fpn_proposals(_fpn_rois(b), 2, 5, 4, 224,
                                                        rois_num=paddle.to_tensor([23, 17], dtype="int32"))),
      [t(40, 4)], ops=("distribute_fpn_proposals", "full_with_tensor")),
    C("distribute_fpn_proposals_dynamic_float64", lambda b: paddle.vision.ops.distribute_fpn_proposals(
        _fpn_rois(b), 2, 5, 4, 224, rois_num=paddle.shape(b)[:1].astype("int32")),
      [t(None, 4, dtype="float64", run=(33, 4))], ops=("distribute_fpn_proposals",)),
    # rnn (paddle.nn.LSTM / GRU / SimpleRNN as RNNBase runs them): 1 and 2 layers, bidirectional, batch-first and
    # time-major, initial states given or zero, sequence_length (int32 / int64), dynamic batch and time, float64;
    # rnn_lstm_ocr is PP-OCRv3's recognition neck (2 layers, the GraphNet sample's shape at a smaller width).
    C("rnn_lstm", lambda x, *p: _rnn(x, None, None, p, "LSTM", 1, 8), [t(3, 5, 4)], _rnn_params("LSTM", 1, 4, 8),
      ops=("rnn",)),
    C("rnn_lstm_2layer_bidirec", lambda x, *p: _rnn(x, None, None, p, "LSTM", 2, 6, True), [t(2, 7, 5)],
      _rnn_params("LSTM", 2, 5, 6, True), ops=("rnn",)),
    C("rnn_lstm_time_major_init", lambda x, h, c, *p: _rnn(x, None, (h, c), p, "LSTM", 2, 8, time_major=True),
      [t(6, 3, 4), t(2, 3, 8), t(2, 3, 8)], _rnn_params("LSTM", 2, 4, 8), ops=("rnn",)),
    C("rnn_lstm_seq_len_bidirec", lambda x, n, *p: _rnn(x, n, None, p, "LSTM", 1, 8, True),
      [t(4, 6, 3), t(4, dtype="int32", low=0, high=7)], _rnn_params("LSTM", 1, 3, 8, True), ops=("rnn",)),
    C("rnn_lstm_dynamic", lambda x, *p: _rnn(x, None, None, p, "LSTM", 2, 8, True), [t(None, None, 4, run=(3, 6, 4))],
      _rnn_params("LSTM", 2, 4, 8, True), ops=("rnn",)),
    C("rnn_lstm_ocr", lambda x, *p: _rnn(x, None, None, p, "LSTM", 2, 32, time_major=True),
      [t(10, None, 16, run=(10, 2, 16))], _rnn_params("LSTM", 2, 16, 32), ops=("rnn",)),
    C("rnn_lstm_float64_bidirec", lambda x, h, c, *p: _rnn(x, None, (h, c), p, "LSTM", 2, 5, True),
      [t(2, 4, 3, dtype="float64"), t(4, 2, 5, dtype="float64"), t(4, 2, 5, dtype="float64")],
      _rnn_params("LSTM", 2, 3, 5, True, "float64"), ops=("rnn",)),
    C("rnn_gru", lambda x, *p: _rnn(x, None, None, p, "GRU", 1, 8), [t(3, 5, 4)], _rnn_params("GRU", 1, 4, 8),
      ops=("rnn",)),
    C("rnn_gru_2layer_bidirec_dynamic", lambda x, *p: _rnn(x, None, None, p, "GRU", 2, 6, True),
      [t(None, 7, 5, run=(3, 7, 5))], _rnn_params("GRU", 2, 5, 6, True), ops=("rnn",)),
    C("rnn_gru_seq_len_int64", lambda x, n, h, *p: _rnn(x, n, (h,), p, "GRU", 2, 8, True),
      [t(3, 5, 4), t(3, dtype="int64", low=1, high=6), t(4, 3, 8)], _rnn_params("GRU", 2, 4, 8, True),
      ops=("rnn",)),
    C("rnn_gru_float64", lambda x, *p: _rnn(x, None, None, p, "GRU", 1, 6, time_major=True),
      [t(5, 2, 3, dtype="float64")], _rnn_params("GRU", 1, 3, 6, dtype="float64"), ops=("rnn",)),
    C("rnn_simple_tanh", lambda x, *p: _rnn(x, None, None, p, "RNN_TANH", 1, 8), [t(3, 5, 4)],
      _rnn_params("RNN_TANH", 1, 4, 8), ops=("rnn",)),
    C("rnn_simple_relu_2layer_bidirec", lambda x, h, *p: _rnn(x, None, (h,), p, "RNN_RELU", 2, 6, True),
      [t(2, 6, 4), t(4, 2, 6)], _rnn_params("RNN_RELU", 2, 4, 6, True), ops=("rnn",)),
    C("rnn_simple_tanh_seq_len", lambda x, n, *p: _rnn(x, n, None, p, "RNN_TANH", 2, 8, True),
      [t(4, 5, 3), t(4, dtype="int32", low=0, high=6)], _rnn_params("RNN_TANH", 2, 3, 8, True), ops=("rnn",)),
    # broadcast_tensors: three ranks to one shape, int64, a dynamic batch.
    C("broadcast_tensors_3", lambda x, y, z: tuple(paddle.broadcast_tensors([x, y, z])),
      [t(2, 1, 4), t(3, 1), t(4)], ops=("broadcast_tensors",)),
    C("broadcast_tensors_int64", lambda x, y: tuple(paddle.broadcast_tensors([x, y])),
      [t(3, 1, dtype="int64"), t(1, 5, dtype="int64")], ops=("broadcast_tensors",)),
    C("broadcast_tensors_dynamic", lambda x, y: (lambda o: o[0] * 2.0 + o[1])(paddle.broadcast_tensors([x, y])),
      [t(None, 1, 4, run=(3, 1, 4)), t(5, 1)], ops=("broadcast_tensors",)),
    # fft_r2c (issue 34: FNet's real(fftn(x)), TimesNet's abs(rfft(x, axis=1))): its complex result read by real and
    # abs; a dynamic batch; two axes with ortho (float64); the inverse sign (ihfft) with forward and backward scaling;
    # full (two-sided) 1-D and 2-D transforms of odd lengths.
    C("fft_fftn_real", lambda x: paddle.real(paddle.fft.fftn(x)), [t(None, 5, 6, run=(2, 5, 6))],
      ops=("fft_r2c", "real")),
    C("fft_rfft_abs", lambda x: paddle.abs(paddle.fft.rfft(x, axis=1)), [t(None, 12, 4, run=(3, 12, 4))],
      ops=("fft_r2c", "abs")),
    C("fft_rfft2_ortho_float64", lambda x: paddle.abs(paddle.fft.rfft2(x, norm="ortho")),
      [t(2, 5, 7, dtype="float64")], ops=("fft_r2c", "abs")),
    C("fft_ihfft_norms", lambda x: (paddle.real(paddle.fft.ihfft(x)),
                                    paddle.real(paddle.fft.ihfft(x, norm="forward"))), [t(3, 9)],
      ops=("fft_r2c", "real")),
    C("fft_full_odd", lambda x: (paddle.real(paddle.fft.fft(x)), paddle.real(paddle.fft.fft2(x)) + 1.0),
      [t(3, 4, 7)], ops=("fft_r2c", "real")),
    # cast to and from the dtypes the fused loops lack (uint8, int8), which run as kernels of their own on CUDA:
    # SOLOv2's bool mask to uint8; floats in range truncated to uint8 and int8; uint8 back to float32.
    C("cast_bool_to_uint8", lambda x: paddle.cast(x > 0.0, "uint8"), [t(None, 3, 5, run=(2, 3, 5))], ops=("cast",)),
    C("cast_float_to_uint8_int8", lambda x: (paddle.cast(x, "uint8"), paddle.cast(x - 125.0, "int8")),
      [t(4, 6, low=0.0, high=250.0)], ops=("cast",)),
    C("cast_uint8_to_float", lambda x: paddle.cast(x, "float32") * 0.5, [t(3, 4, dtype="uint8", low=0, high=256)],
      ops=("cast",)),
]
