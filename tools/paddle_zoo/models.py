"""The model zoo of tools/check-paddle-models: every model of paddle.vision.models, nn.TransformerEncoder and
nn.TransformerDecoder (post- and pre-norm), a small GPT-style decoder block, a PP-OCR-style text detector with
dynamic H and W and a BERT-style encoder with dynamic batch and length, each with two input sizes, random weights of
realistic scale, and seeded inputs; and real_zoo(): real architectures (PP-OCRv5 det / rec from PaddleOCR's own code,
given an extract by ppocr_extract.py; a BERT-style encoder), each exported dynamic as its users export it and as a
fixed-shape twin (tools/check-paddle-models --real, tools/paddle_zoo/measure_real.py). Needs Paddle (imported by the
caller's interpreter)."""

import copy
import importlib.abc
import importlib.util
import importlib.machinery
import json
import math
import sys
import types
from pathlib import Path

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

    def __init__(self, pre_norm, d_model=D_MODEL, heads=HEADS, ffn=FFN):
        super().__init__()
        layer = nn.TransformerDecoderLayer(d_model, heads, ffn, dropout=0.0, normalize_before=pre_norm)
        self.net = nn.TransformerDecoder(layer, 2, norm=nn.LayerNorm(d_model) if pre_norm else None)

    def forward(self, tgt, memory):
        length = tgt.shape[1]  # static per export
        mask = paddle.triu(paddle.full([length, length], float("-inf")), diagonal=1)
        return self.net(tgt, memory, tgt_mask=mask)


class GPTBlock(nn.Layer):
    """Token and position embeddings, one pre-norm causal self-attention block (gelu MLP), a final LayerNorm and an
    output projection tied to the token embedding."""

    VOCAB, CONTEXT = 96, 32

    def __init__(self, d_model=D_MODEL, heads=HEADS, ffn=FFN):
        super().__init__()
        self.tok = nn.Embedding(self.VOCAB, d_model)
        self.pos = nn.Embedding(self.CONTEXT, d_model)
        self.block = nn.TransformerEncoderLayer(d_model, heads, ffn, dropout=0.0, activation="gelu",
                                                normalize_before=True)
        self.ln = nn.LayerNorm(d_model)

    def forward(self, ids):
        length = ids.shape[1]
        pos = paddle.arange(length, dtype="int64").unsqueeze(0)
        h = self.tok(ids) + self.pos(pos)
        mask = paddle.triu(paddle.full([length, length], float("-inf")), diagonal=1)
        h = self.ln(self.block(h, src_mask=mask))
        return paddle.matmul(h, self.tok.weight, transpose_y=True)


class GPTDecoder(nn.Layer):
    """A GPT-2-style decoder as users export one for serving, in two programs over the same weights: token and
    learned position embeddings, pre-norm layers of causal self-attention (separate q / k / v projections, Paddle
    MultiHeadAttention's arithmetic: q scaled by head_dim^-0.5, scores + mask, softmax, p v) and a gelu MLP, a final
    LayerNorm and the output projection tied to the token embedding.
    - prefill (decode=False): ids [-1, -1]; the causal mask is built from the run-time length
      (full_with_tensor + triu), positions by arange over it; returns the logits [B, S, vocab] and each layer's
      keys and values [B, heads, S, head_dim] (the cache the decode step takes).
    - decode step (decode=True): ids [-1, 1] and each layer's cached keys and values [B, heads, L, head_dim] (L
      dynamic): the new token's position is L, its keys and values are appended (concat) and it attends to all
      L + 1 (no mask); returns the logits [B, 1, vocab] and the grown caches [B, heads, L + 1, head_dim].
    forward(ids, cache) takes the caches as one list: k_0, v_0, k_1, v_1, ..."""

    def __init__(self, vocab=96, context=128, d_model=128, heads=2, ffn=256, layers=2, decode=False):
        super().__init__()
        self.heads, self.head_dim, self.decode = heads, d_model // heads, decode
        self.tok = nn.Embedding(vocab, d_model)
        self.pos = nn.Embedding(context, d_model)
        self.layers = nn.LayerList()
        for _ in range(layers):
            block = nn.Layer()
            block.ln1, block.ln2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
            block.q, block.k, block.v, block.o = (nn.Linear(d_model, d_model) for _ in range(4))
            block.fc1, block.fc2 = nn.Linear(d_model, ffn), nn.Linear(ffn, d_model)
            self.layers.append(block)
        self.ln = nn.LayerNorm(d_model)

    def heads_first(self, x):  # [B, S, D] -> [B, H, S, Dh]
        return x.reshape([0, 0, self.heads, self.head_dim]).transpose([0, 2, 1, 3])

    def forward(self, ids, cache=None):
        start = paddle.shape(cache[0])[2] if self.decode else 0
        length = paddle.shape(ids)[1]
        positions = paddle.arange(start, start + length, dtype="int64").unsqueeze(0)
        h = self.tok(ids) + self.pos(positions)
        mask = None if self.decode else paddle.triu(paddle.full([length, length], float("-inf")), diagonal=1)
        present = []
        for i, block in enumerate(self.layers):
            x = block.ln1(h)
            q, k, v = self.heads_first(block.q(x)), self.heads_first(block.k(x)), self.heads_first(block.v(x))
            if self.decode:
                k = paddle.concat([cache[2 * i], k], axis=2)
                v = paddle.concat([cache[2 * i + 1], v], axis=2)
            present += [k, v]
            scores = paddle.matmul(q * (self.head_dim ** -0.5), k, transpose_y=True)
            if mask is not None:
                scores = scores + mask
            o = paddle.matmul(nn.functional.softmax(scores), v).transpose([0, 2, 1, 3])
            h = h + block.o(o.reshape([0, 0, self.heads * self.head_dim]))
            h = h + block.fc2(nn.functional.gelu(block.fc1(block.ln2(h))))
        logits = paddle.matmul(self.ln(h), self.tok.weight, transpose_y=True)
        return [logits] + present

    @staticmethod
    def specs(decode, heads=2, head_dim=64, layers=2):
        """The inputs: ids, and for the decode step the caches as one list (past_k_0, past_v_0, past_k_1, ...)."""
        ids = InputSpec([None, 1 if decode else None], "int64", "ids")
        if not decode:
            return [ids]
        return [ids, [InputSpec([None, heads, None, head_dim], "float32", f"past_{kind}_{i}")
                      for i in range(layers) for kind in ("k", "v")]]


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


def decoder_inputs(length, d_model=D_MODEL):
    return [InputSpec([None, length, d_model], "float32", "tgt"),
            InputSpec([None, length + 4, d_model], "float32", "memory")]


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
    models["bert_encoder"] = (BertEncoder.small, [("12 (dynamic length)", ids), ("40 (dynamic length)", ids)])
    # Head dim 64 (d_model 128, 2 heads), what --target cuda's fused 16-bit attention takes (head dims 32, 64, 128):
    # a padding mask over a dynamic length, a causal mask, and cross-attention over a memory of another length.
    models["bert_encoder_h64"] = (lambda: BertEncoder(vocab=GPTBlock.VOCAB, max_pos=128, hidden=128, layers=2,
                                                      heads=2, ffn=256),
                                  [("80 (dynamic length)", ids), ("12 (dynamic length)", ids)])
    models["gpt_block_h64"] = (lambda: GPTBlock(d_model=128, heads=2, ffn=256),
                               [(f"seq{n}", tokens(n)) for n in (30, 8)])
    models["transformer_decoder_h64"] = (lambda: Decoder(False, d_model=128, heads=2, ffn=256),
                                         [(f"seq{n}", decoder_inputs(n, 128)) for n in (70, 8)])
    # A GPT-2-style decoder as served: the prefill over a dynamic length (causal mask built from it) and the decode
    # step over a key / value cache of dynamic length (GPTDecoder).
    models["gpt_decoder"] = (GPTDecoder, [(f"{n} (dynamic length)", GPTDecoder.specs(False)) for n in (12, 30)])
    models["gpt_decode_step"] = (lambda: GPTDecoder(decode=True),
                                 [(f"{n} (cache length)", GPTDecoder.specs(True)) for n in (12, 40)])
    return models


def with_weights(builder, seed):
    """(net, whether it has an after-weights step): the model in eval mode with realistic_weights (seeded) and its
    own kforge_after_weights step done (re-parameterisation, batch-norm calibration): the weights it is exported
    with, for a float64 twin or a rounding of them."""
    paddle.seed(seed)
    net = builder()
    realistic_weights(net, seed)
    net.eval()
    after = getattr(net, "kforge_after_weights", None)
    if after is not None:
        after()
    return net, after is not None


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
        elif type(layer).__name__.endswith("RMSNorm") and getattr(layer, "weight", None) is not None:
            set_(layer.weight, rng.uniform(0.5, 1.5, layer.weight.shape))  # paddleformers' Qwen2 / Llama norms


class BertEncoder(nn.Layer):
    """A BERT-style encoder as paddleformers' BertModel computes it (paddleformers is not in the venv): word +
    position (paddle.arange over the run-time sequence length) + token-type embeddings, LayerNorm, an attention
    mask from the padding ids ((ids == 0) * -1e4, broadcast over heads and queries), post-norm gelu encoder layers
    and the tanh pooler over the first token. Returns (sequence output, pooled output). Exported with ids [-1, -1],
    every shape of the program is an expression of the batch and the length, some taken from tensors (shape ->
    slice -> arange). The defaults are real_zoo's; zoo() has a small one (BertEncoder.small)."""

    def __init__(self, vocab=30522, max_pos=512, hidden=256, layers=4, heads=4, ffn=1024):
        super().__init__()
        self.word = nn.Embedding(vocab, hidden)
        self.position = nn.Embedding(max_pos, hidden)
        self.token_type = nn.Embedding(2, hidden)
        self.norm = nn.LayerNorm(hidden, epsilon=1e-12)
        layer = nn.TransformerEncoderLayer(hidden, heads, ffn, dropout=0.0, activation="gelu",
                                           attn_dropout=0.0, act_dropout=0.0)
        self.encoder = nn.TransformerEncoder(layer, layers)
        self.pooler = nn.Linear(hidden, hidden)

    @staticmethod
    def small():
        """Two layers of the zoo's transformer size, a vocabulary of GPTBlock's (the zoo's token inputs)."""
        return BertEncoder(vocab=GPTBlock.VOCAB, max_pos=64, hidden=D_MODEL, layers=2, heads=HEADS, ffn=FFN)

    def forward(self, ids):
        positions = paddle.arange(paddle.shape(ids)[1], dtype="int64").unsqueeze(0)
        types_ = paddle.zeros_like(ids)
        h = self.norm(self.word(ids) + self.position(positions) + self.token_type(types_))
        mask = paddle.unsqueeze((ids == 0).astype("float32") * -1e4, axis=[1, 2])
        seq = self.encoder(h, src_mask=mask)
        return seq, paddle.tanh(self.pooler(seq[:, 0]))


# PaddleOCR's PP-OCRv5 architectures, from a PaddleOCR checkout extracted by tools/paddle_zoo/ppocr_extract.py (its
# ppocr/ package and the configs as JSON). ppocr's utilities import packaging, requests and tqdm at module level
# (for downloading pretrained weights, never called here): stand-ins are installed when the venv lacks them.
PPOCR_CONFIGS = {"ppocrv5_mobile_det": "configs/det/PP-OCRv5/PP-OCRv5_mobile_det.json",
                 "ppocrv5_server_det": "configs/det/PP-OCRv5/PP-OCRv5_server_det.json",
                 "ppocrv5_mobile_rec": "configs/rec/PP-OCRv5/PP-OCRv5_mobile_rec.json"}
PPOCR_UNUSED_MODULES = ("packaging", "requests", "tqdm")


class _StandIn(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Empty modules for `names` (top-level) that the interpreter lacks."""

    def __init__(self, names=PPOCR_UNUSED_MODULES):
        self.names = names

    def find_spec(self, name, path, target=None):
        top = name.split(".")[0]
        if top not in self.names or importlib.machinery.PathFinder.find_spec(top) is not None:
            return None
        return importlib.machinery.ModuleSpec(name, self, is_package=True)

    def create_module(self, spec):
        module = types.ModuleType(spec.name)
        module.__path__ = []
        module.__getattr__ = lambda attr: type(attr, (), {})
        return module

    def exec_module(self, module):
        pass


def ppocr_arch(ppocr_dir, name):
    """The Architecture config of a PP-OCRv5 model, completed as ppocr/utils/export_model.py completes it (the
    rec's MultiHead gets out_channels_list from the PP-OCRv5 dictionary: its characters, the space, CTC's blank)."""
    root = Path(ppocr_dir)
    arch = json.loads((root / PPOCR_CONFIGS[name]).read_text())["Architecture"]
    if arch["Head"]["name"] == "MultiHead":
        chars = len((root / "ppocr/utils/dict/ppocrv5_dict.txt").read_text(encoding="utf-8").splitlines())
        char_num = chars + 1 + 1  # use_space_char, then CTCLabelDecode's "blank"
        arch["Head"]["out_channels_list"] = {"CTCLabelDecode": char_num, "SARLabelDecode": char_num + 2,
                                             "NRTRLabelDecode": char_num + 3}
    return arch


def calibrate_batch_norm(net, *xs):
    """Batch-norm running statistics from data, as training leaves them: one eval pass over `xs` in which each
    BatchNorm's statistics are set, just before it runs, to the mean and variance of its actual input. Random
    weights of realistic scale alone let activations grow through a deep network until the detector's sigmoid and
    the recogniser's softmax saturate (outputs exactly 0 / 1), where agreement says little."""
    def hook(layer, inputs):
        v = inputs[0]
        axes = [0] + list(range(2, len(v.shape)))
        layer._mean.set_value(paddle.mean(v, axis=axes))
        layer._variance.set_value(paddle.var(v, axis=axes, unbiased=False))

    handles = [layer.register_forward_pre_hook(hook) for layer in net.sublayers()
               if isinstance(layer, nn.layer.norm._BatchNormBase)]
    with paddle.no_grad():
        net(*[paddle.to_tensor(x) for x in xs])
    for h in handles:
        h.remove()


def ppocr_builder(ppocr_dir, name, calibrate=None):
    """Builds the model with ppocr's build_model. net.kforge_after_weights(), called once the weights are set,
    re-parameterises PPLCNetV3's blocks (rep()) as export_model.py does before paddle.jit.save; with `calibrate`
    (an input shape) it first sets the batch-norm statistics from a seeded N(0, 1) input of that shape."""
    def build():
        if str(ppocr_dir) not in sys.path:
            sys.path.insert(0, str(ppocr_dir))
        if not any(isinstance(f, _StandIn) and f.names == PPOCR_UNUSED_MODULES for f in sys.meta_path):
            sys.meta_path.append(_StandIn())
        from ppocr.modeling.architectures import build_model
        arch = ppocr_arch(ppocr_dir, name)
        net = build_model(copy.deepcopy(arch))

        def after_weights():
            if calibrate is not None:
                net.eval()
                calibrate_batch_norm(net, np.random.default_rng(11).standard_normal(calibrate).astype(np.float32))
            if arch["Backbone"]["name"] == "PPLCNetV3":
                for layer in net.sublayers():
                    if hasattr(layer, "rep") and not getattr(layer, "is_repped"):
                        layer.rep()
        net.kforge_after_weights = after_weights
        return net
    return build


class CausalLMLogits(nn.Layer):
    """A paddleformers causal LM (Qwen2ForCausalLM, LlamaForCausalLM) that returns the logits alone, without a KV
    cache, over ids [-1, -1]: what a scoring or prefill program exports."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, ids):
        out = self.model(input_ids=ids, use_cache=False, return_dict=False)
        return out[0] if isinstance(out, (tuple, list)) else out


def paddleformers_builder(name):
    """Qwen2 (grouped-query attention: 2 heads over 1 key / value head) or Llama in small, from paddleformers'
    own model code (paddleformers 0.4.1: pip install paddleformers==0.4.1 into the Paddle venv), with the vocabulary
    of the zoo's token inputs. Its configuration's attribute lookups are kept out of dy2static (which would
    translate them and recurse) with paddle.jit.not_to_static. Both export a `pd_op.if` (the causal mask is built
    when the length is above 1), which kforge converts into both branches and a select."""
    def build():
        from paddleformers.transformers import LlamaConfig, LlamaForCausalLM, Qwen2Config, Qwen2ForCausalLM
        from paddleformers.transformers.configuration_utils import PretrainedConfig
        for attr in ("get", "__getattribute__", "__getattr__"):
            method = PretrainedConfig.__dict__.get(attr)
            if method is not None and not getattr(method, "_kforge_not_to_static", False):
                wrapped = paddle.jit.not_to_static(method)
                wrapped._kforge_not_to_static = True
                setattr(PretrainedConfig, attr, wrapped)
        common = dict(vocab_size=GPTBlock.VOCAB, hidden_size=128, intermediate_size=256, num_hidden_layers=2,
                      num_attention_heads=2, max_position_embeddings=128, rms_norm_eps=1e-6,
                      tie_word_embeddings=False)
        if name == "qwen2":
            return CausalLMLogits(Qwen2ForCausalLM(Qwen2Config(num_key_value_heads=1, **common)))
        return CausalLMLogits(LlamaForCausalLM(LlamaConfig(num_key_value_heads=2, **common)))
    return build


def real_zoo(ppocr_dir=None):
    """The real architectures, each exported as its users export it (dynamic) and as a fixed-shape twin (and the
    PP-OCRv5 dynamic ones once more with batch-norm statistics calibrated on data, NAME_bncal):
    PP-OCRv5 mobile / server det ([-1, 3, -1, -1]) and mobile rec ([-1, 3, 48, -1]) when a PaddleOCR extract is
    given, the BERT-style encoder ([-1, -1] ids), and where ppdet imports (paddledet installed, or
    $KFORGE_PADDLEDETECTION) PaddleDetection's detectors without NMS (paddledet_models.py). name -> (builder,
    [(size label, specs)])."""
    models = {}
    if ppocr_dir is not None:
        det = [InputSpec([None, 3, None, None], "float32", "x")]
        rec = [InputSpec([None, 3, 48, None], "float32", "x")]
        for name in ("ppocrv5_mobile_det", "ppocrv5_server_det"):
            models[name] = (ppocr_builder(ppocr_dir, name),
                            [("320x320 (dynamic)", det), ("256x416 (dynamic)", det)])
            models[name + "_fixed"] = (ppocr_builder(ppocr_dir, name),
                                       [("320x320 (fixed)", [InputSpec([1, 3, 320, 320], "float32", "x")])])
        models["ppocrv5_mobile_rec"] = (ppocr_builder(ppocr_dir, "ppocrv5_mobile_rec"),
                                        [("48x320 (dynamic)", rec), ("48x160 (dynamic)", rec)])
        models["ppocrv5_mobile_rec_fixed"] = (ppocr_builder(ppocr_dir, "ppocrv5_mobile_rec"),
                                              [("48x320 (fixed)", [InputSpec([1, 3, 48, 320], "float32", "x")])])
        # The same dynamic exports with batch-norm statistics calibrated on data (outputs not saturated).
        for name in ("ppocrv5_mobile_det", "ppocrv5_server_det"):
            models[name + "_bncal"] = (ppocr_builder(ppocr_dir, name, calibrate=[1, 3, 320, 320]),
                                       [("320x320 (dynamic)", det), ("256x416 (dynamic)", det)])
        models["ppocrv5_mobile_rec_bncal"] = (ppocr_builder(ppocr_dir, "ppocrv5_mobile_rec", calibrate=[1, 3, 48, 320]),
                                              [("48x320 (dynamic)", rec), ("48x160 (dynamic)", rec)])
    models["bert_encoder"] = (BertEncoder, [("64 tokens (dynamic)", [InputSpec([None, None], "int64", "ids")]),
                                            ("128 tokens (dynamic)", [InputSpec([None, None], "int64", "ids")])])
    models["bert_encoder_fixed"] = (BertEncoder, [("128 tokens (fixed)", [InputSpec([1, 128], "int64", "ids")])])
    if importlib.util.find_spec("paddleformers") is not None:
        ids = [InputSpec([None, None], "int64", "ids")]
        for name in ("qwen2", "llama"):
            models[f"{name}_small"] = (paddleformers_builder(name),
                                       [("1 (dynamic length)", ids), ("40 (dynamic length)", ids)])
    import paddledet_models  # noqa: E402  (PaddleDetection's detectors, where paddledet is installed)
    if paddledet_models.available():
        models.update(paddledet_models.paddledet_zoo())
    return models


def model_inputs(net, specs, batch, seed, label=""):
    """The inputs of a case: the net's own (kforge_inputs(batch, seed): inputs that must be computed by Paddle, as
    RT-DETR's decoder's encoder memory and query selection, paddledet_models.RTDETRAfterSelection), else inputs()."""
    make = getattr(net, "kforge_inputs", None)
    return make(batch, seed) if make is not None else inputs(specs, batch, seed, label)


def inputs(specs, batch, seed, label=""):
    """Seeded inputs for the specs with the dynamic batch (dim 0) set; the label's leading numbers ("HxW", or one
    length) fill each input's other dynamic dims, the last number the last dynamic dim ([-1, 3, -1, -1] with
    "64x96": H 64, W 96; a cache [-1, heads, -1, head_dim] with "12": length 12). N(0, 1) floats, token ids within
    the vocabulary."""
    rng = np.random.default_rng(seed)
    spatial = [int(v) for v in label.split(" ")[0].split("x")] if label[:1].isdigit() else []
    out = {}
    flat = []
    for spec in specs:  # a list of specs (GPTDecoder's caches) is that many inputs
        flat += spec if isinstance(spec, list) else [spec]
    for spec in flat:
        shape = list(spec.shape)
        dynamic = [i for i, d in enumerate(shape) if i > 0 and (d is None or d < 0)]
        if shape and (shape[0] is None or shape[0] < 0):
            shape[0] = batch
        for i, size in zip(reversed(dynamic), reversed(spatial)):
            shape[i] = size
        if spec.dtype == paddle.int64:
            out[spec.name] = rng.integers(0, GPTBlock.VOCAB, shape).astype(np.int64)
        elif spec.name == "scale_factor":  # a detector's resize ratios (boxes are divided by them)
            out[spec.name] = rng.uniform(0.5, 2.0, shape).astype(np.float32)
        else:
            out[spec.name] = rng.standard_normal(shape).astype(np.float32)
    return out
