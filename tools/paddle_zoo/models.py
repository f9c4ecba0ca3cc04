"""The model zoo of tools/check-paddle-models: every model of paddle.vision.models, nn.TransformerEncoder and
nn.TransformerDecoder (post- and pre-norm), a small GPT-style decoder block, a PP-OCR-style text detector with
dynamic H and W and a BERT-style encoder with dynamic batch and length, each with two input sizes, random
weights of realistic scale, and seeded inputs. Needs Paddle (imported by the caller's interpreter)."""

import math

import numpy as np
import paddle
import paddle.nn as nn
from paddle.static import InputSpec

D_MODEL, HEADS, FFN = 64, 4, 128


class Encoder(nn.Layer):
    """Two encoder layers; pre-norm stacks end with a final LayerNorm, as Paddle's TransformerEncoder expects."""

    def __init__(self, pre_norm):
        super().__init__()
        layer = nn.TransformerEncoderLayer(D_MODEL, HEADS, FFN, dropout=0.0, normalize_before=pre_norm)
        self.net = nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(D_MODEL) if pre_norm else None)

    def forward(self, x):
        return self.net(x)


class Decoder(nn.Layer):
    """Two decoder layers over a memory of another length, with a causal target mask."""

    def __init__(self, pre_norm):
        super().__init__()
        layer = nn.TransformerDecoderLayer(D_MODEL, HEADS, FFN, dropout=0.0, normalize_before=pre_norm)
        self.net = nn.TransformerDecoder(layer, 2, norm=nn.LayerNorm(D_MODEL) if pre_norm else None)

    def forward(self, tgt, memory):
        length = tgt.shape[1]  # static per export
        mask = paddle.triu(paddle.full([length, length], float("-inf")), diagonal=1)
        return self.net(tgt, memory, tgt_mask=mask)


class GPTBlock(nn.Layer):
    """Token and position embeddings, one pre-norm causal self-attention block (gelu MLP), a final LayerNorm and an
    output projection tied to the token embedding."""

    VOCAB, CONTEXT = 96, 32

    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(self.VOCAB, D_MODEL)
        self.pos = nn.Embedding(self.CONTEXT, D_MODEL)
        self.block = nn.TransformerEncoderLayer(D_MODEL, HEADS, FFN, dropout=0.0, activation="gelu",
                                                normalize_before=True)
        self.ln = nn.LayerNorm(D_MODEL)

    def forward(self, ids):
        length = ids.shape[1]
        pos = paddle.arange(length, dtype="int64").unsqueeze(0)
        h = self.tok(ids) + self.pos(pos)
        mask = paddle.triu(paddle.full([length, length], float("-inf")), diagonal=1)
        h = self.ln(self.block(h, src_mask=mask))
        return paddle.matmul(h, self.tok.weight, transpose_y=True)


class BertEncoder(nn.Layer):
    """A BERT-style encoder as paddleformers' BertModel exports it, in small: word, position and token-type
    embeddings (the positions an arange over the dynamic length), LayerNorm, two post-norm encoder layers (gelu) under
    a padding mask made from the ids (id 0 is padding), and the [CLS] pooler (tanh). Exported with input ids
    [-1, -1]: every shape of the program is an expression of the batch and the length, some of them taken from
    tensors (shape -> slice -> arange)."""

    VOCAB, CONTEXT = 96, 64

    def __init__(self):
        super().__init__()
        self.word = nn.Embedding(self.VOCAB, D_MODEL)
        self.pos = nn.Embedding(self.CONTEXT, D_MODEL)
        self.token_type = nn.Embedding(2, D_MODEL)
        self.ln = nn.LayerNorm(D_MODEL)
        layer = nn.TransformerEncoderLayer(D_MODEL, HEADS, FFN, dropout=0.0, activation="gelu")
        self.encoder = nn.TransformerEncoder(layer, 2)
        self.pool = nn.Linear(D_MODEL, D_MODEL)

    def forward(self, ids):
        length = paddle.shape(ids)[1]
        pos = paddle.arange(length, dtype="int64").unsqueeze(0)
        h = self.ln(self.word(ids) + self.pos(pos) + self.token_type(paddle.zeros_like(ids)))
        mask = ((ids == 0).astype("float32") * -1e4).unsqueeze([1, 2])
        h = self.encoder(h, src_mask=mask)
        return h, paddle.tanh(self.pool(h[:, 0]))


class DetectionHead(nn.Layer):
    """A PP-OCRv5-style text detector in small: a strided conv backbone, an FPN whose coarser levels are upsampled
    (nearest, x2) onto the finer ones, and a DB head (conv, two transposed convs, sigmoid). Exported with dynamic
    spatial dims, so the upsampled sizes are expressions of the input's."""

    def __init__(self, width=16):
        super().__init__()

        def block(cin, cout, stride):
            return nn.Sequential(nn.Conv2D(cin, cout, 3, stride, 1, bias_attr=False), nn.BatchNorm2D(cout),
                                 nn.Hardswish())

        self.stem = block(3, width, 2)
        self.stages = nn.LayerList([block(width, width, 2), block(width, width * 2, 2), block(width * 2, width * 4, 2)])
        self.lateral = nn.LayerList([nn.Conv2D(c, width, 1, bias_attr=False) for c in (width, width * 2, width * 4)])
        self.smooth = nn.LayerList([nn.Conv2D(width, width // 4, 3, padding=1, bias_attr=False) for _ in range(3)])
        self.head = nn.Sequential(
            nn.Conv2D(width // 4 * 3, width // 4, 3, padding=1, bias_attr=False), nn.BatchNorm2D(width // 4), nn.ReLU(),
            nn.Conv2DTranspose(width // 4, width // 4, 2, 2), nn.BatchNorm2D(width // 4), nn.ReLU(),
            nn.Conv2DTranspose(width // 4, 1, 2, 2), nn.Sigmoid())

    def forward(self, x):
        feats, h = [], self.stem(x)
        for stage in self.stages:
            h = stage(h)
            feats.append(h)
        lat = [conv(f) for conv, f in zip(self.lateral, feats)]
        p4 = lat[2]
        p3 = lat[1] + nn.functional.upsample(p4, scale_factor=2, mode="nearest", align_mode=1)
        p2 = lat[0] + nn.functional.upsample(p3, scale_factor=2, mode="nearest", align_mode=1)
        outs = [self.smooth[0](p2),
                nn.functional.upsample(self.smooth[1](p3), scale_factor=2, mode="nearest", align_mode=1),
                nn.functional.upsample(self.smooth[2](p4), scale_factor=4, mode="nearest", align_mode=1)]
        return self.head(paddle.concat(outs, axis=1))


def vision(name):
    def build():
        return getattr(paddle.vision.models, name)()
    return build


def image(size, channels=3):
    return [InputSpec([None, channels, size, size], "float32", "x")]


def sequence(length):
    return [InputSpec([None, length, D_MODEL], "float32", "x")]


def decoder_inputs(length):
    return [InputSpec([None, length, D_MODEL], "float32", "tgt"),
            InputSpec([None, length + 4, D_MODEL], "float32", "memory")]


def tokens(length):
    return [InputSpec([None, length], "int64", "ids")]


# name -> (builder, [(size label, input specs)] for the two sizes). Sizes are small enough for the naive reference
# kernels on two cores; fixed classifier heads decide some (LeNet's 28/29, AlexNet's >= 223, GoogLeNet's
# auxiliary heads 192..224, Inception v3 needs >= 75).
VISION_SIZES = {
    "LeNet": (28, 29), "alexnet": (224, 227), "googlenet": (192, 224), "inception_v3": (80, 107),
}
VISION = ["resnet18", "resnet34", "resnet50", "mobilenet_v1", "mobilenet_v2", "mobilenet_v3_small",
          "mobilenet_v3_large", "shufflenet_v2_x1_0", "squeezenet1_0", "densenet121", "googlenet", "inception_v3",
          "vgg11", "vgg16", "alexnet", "LeNet"]


def zoo():
    models = {}
    for name in VISION:
        sizes = VISION_SIZES.get(name, (64, 96))
        channels = 1 if name == "LeNet" else 3
        models[name] = (vision(name), [(f"{s}x{s}", image(s, channels)) for s in sizes])
    for pre in (False, True):
        tag = "pre" if pre else "post"
        models[f"transformer_encoder_{tag}norm"] = (
            lambda pre=pre: Encoder(pre), [(f"seq{n}", sequence(n)) for n in (8, 16)])
        models[f"transformer_decoder_{tag}norm"] = (
            lambda pre=pre: Decoder(pre), [(f"seq{n}", decoder_inputs(n)) for n in (8, 16)])
    models["gpt_block"] = (GPTBlock, [(f"seq{n}", tokens(n)) for n in (8, 16)])
    dynamic = [InputSpec([None, 3, None, None], "float32", "x")]
    models["ppocr_det_head"] = (DetectionHead, [("64x64 (dynamic H, W)", dynamic), ("96x128 (dynamic H, W)", dynamic)])
    ids = [InputSpec([None, None], "int64", "ids")]
    models["bert_encoder"] = (BertEncoder, [("12 (dynamic length)", ids), ("40 (dynamic length)", ids)])
    return models


def realistic_weights(net, seed):
    """He-uniform conv / linear weights (biases within 1/sqrt(fan_in)), norms' scale and shift away from 1 and 0,
    batch-norm running statistics away from identity, embeddings N(0, 1)."""
    rng = np.random.default_rng(seed)

    def set_(param, values):
        param.set_value(values.astype(param.numpy().dtype))

    for layer in net.sublayers(include_self=True):
        if isinstance(layer, (nn.Conv2D, nn.Conv2DTranspose, nn.Linear)):
            w = layer.weight
            # Paddle's Linear weight is [in, out]; conv filters are [out, in / groups, kh, kw].
            fan_in = w.shape[0] if isinstance(layer, nn.Linear) else int(np.prod(w.shape[1:]))
            bound = math.sqrt(6.0 / fan_in)
            set_(w, rng.uniform(-bound, bound, w.shape))
            if layer.bias is not None:
                set_(layer.bias, rng.uniform(-1, 1, layer.bias.shape) / math.sqrt(fan_in))
        elif isinstance(layer, nn.layer.norm._BatchNormBase):
            c = layer.weight.shape[0]
            set_(layer.weight, rng.uniform(0.5, 1.5, c))
            set_(layer.bias, rng.uniform(-0.25, 0.25, c))
            set_(layer._mean, rng.uniform(-0.25, 0.25, c))
            set_(layer._variance, rng.uniform(0.5, 1.5, c))
        elif isinstance(layer, (nn.LayerNorm, nn.GroupNorm)):
            if layer.weight is not None:
                set_(layer.weight, rng.uniform(0.5, 1.5, layer.weight.shape))
            if layer.bias is not None:
                set_(layer.bias, rng.uniform(-0.25, 0.25, layer.bias.shape))
        elif isinstance(layer, nn.Embedding):
            set_(layer.weight, rng.standard_normal(layer.weight.shape))


def inputs(specs, batch, seed, label=""):
    """Seeded inputs for the specs with the dynamic batch set (and dynamic spatial dims from a "HxW" label): N(0, 1)
    floats, token ids within the vocabulary."""
    rng = np.random.default_rng(seed)
    spatial = [int(v) for v in label.split(" ")[0].split("x")] if label[:1].isdigit() else []
    out = {}
    for spec in specs:
        shape = list(spec.shape)
        for i, d in enumerate(shape):
            if d is None or d < 0:
                shape[i] = batch if i == 0 else spatial[i - len(shape) + len(spatial)]
        if spec.dtype == paddle.int64:
            out[spec.name] = rng.integers(0, GPTBlock.VOCAB, shape).astype(np.int64)
        else:
            out[spec.name] = rng.standard_normal(shape).astype(np.float32)
    return out
