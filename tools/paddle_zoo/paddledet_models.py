"""PaddleDetection's detectors for tools/check-paddle-models --real (tools/paddle_zoo/models.py real_zoo), built
from paddledet's own modules (pip install --no-deps paddledet==2.6.0 into the Paddle venv) and exported as
PaddleDetection's tools/export_model.py exports them (paddle.jit.save, dynamic batch, the image size its reader
config writes), with the head's outputs before NMS, each also as a fixed-shape twin NAME_fixed:

  ppyoloe_plus_s  PP-YOLOE+-s: CSPResNet (large stem, alpha; width 0.5, depth 0.33), CustomCSPPAN with SPP,
                  PPYOLOEHead (ESE attention, DFL over 17 bins by the fixed proj_conv), `exclude_nms`; anchors made
                  in the program (arange, meshgrid, stack); inputs image [-1, 3, S, S] (S 640, and 320) and
                  scale_factor [-1, 2]; outputs the decoded boxes [N, A, 4] divided by the scale factors and the
                  class scores [N, 80, A].
  picodet_s       PicoDet-S: LCNet x0.75, LCPAN, PicoHeadV2, export.nms=False; image [-1, 3, 320, 320]; boxes
                  [N, A, 4] and scores [N, 80, A].

RT-DETR is not in paddledet 2.6.0 (PyPI's latest): with a PaddleDetection extract (its ppdet/, e.g. of the
develop branch; --paddledetection DIR or $KFORGE_PADDLEDETECTION) ppdet is imported from there instead and adds

  rtdetr_r18      RT-DETR-R18: ResNet-18-vd, HybridEncoder, RTDETRTransformer (topk query selection, deformable
                  attention through grid_sample), exclude_post_process; image [-1, 3, 640, 640]; boxes [N, 300, 4]
                  and logits [N, 300, 80].
  rtdetr_r18_before_selection   the same up to its topk (RTDETRBeforeSelection).
  rtdetr_r18_after_selection    the same from its topk on (RTDETRAfterSelection): inputs the encoder memory and
                                the selected anchors as Paddle computes them (kforge_inputs).
  rtdetr_r18_q20  RT-DETR-R18 with 20 queries at 320x320: a selection that does not tie.

paddledet's package imports its data pipeline, metrics and trackers at import time (cv2, pycocotools, scipy,
...; never called here): stand-ins are installed for those the venv lacks (models._StandIn), so the --no-deps
install is enough with pyyaml, typeguard, requests, tqdm and terminaltables."""

import importlib.util
import os
import sys
from pathlib import Path

import numpy as np
import paddle
import paddle.nn as nn
from paddle.static import InputSpec

import models

# Modules ppdet imports at package level for data loading, evaluation and tracking only.
PPDET_UNUSED_MODULES = ("cv2", "pycocotools", "shapely", "scipy", "lap", "motmetrics", "sklearn", "pyclipper",
                        "visualdl", "Cython", "matplotlib", "mpl_toolkits", "pandas", "six", "PIL", "imgaug",
                        "albumentations", "numba")


def _source():
    """A PaddleDetection checkout or extract to take ppdet from ($KFORGE_PADDLEDETECTION, set by
    check-paddle-models --paddledetection), else None: the installed paddledet."""
    return os.environ.get("KFORGE_PADDLEDETECTION") or None


def available():
    """Whether ppdet can be imported: from $KFORGE_PADDLEDETECTION, else the installed paddledet."""
    if _source() is not None:
        return (Path(_source()) / "ppdet" / "__init__.py").exists()
    return importlib.util.find_spec("ppdet") is not None


def _import_ppdet():
    if _source() is not None and _source() not in sys.path:
        sys.path.insert(0, _source())
    if not any(isinstance(f, models._StandIn) and f.names == PPDET_UNUSED_MODULES for f in sys.meta_path):
        sys.meta_path.append(models._StandIn(PPDET_UNUSED_MODULES))
    import ppdet  # noqa: F401  (registers the modules)


class DetectorNoNMS(nn.Layer):
    """A ppdet architecture (BaseArch) called as its export calls it, with the inputs its export keeps (PP-YOLOE:
    image and scale_factor, im_shape being pruned when NMS is excluded; RT-DETR without post-processing: the image
    alone), returning its two outputs (`bbox` and `bbox_num` of its output dict: the boxes and the scores)."""

    def __init__(self, arch, outputs=("bbox", "bbox_num")):
        super().__init__()
        self.arch = arch
        self.outputs = outputs

    def forward(self, image, scale_factor=None):
        # PicoDet reads scale_factor and, without NMS, leaves it unused: None there.
        out = self.arch({"image": image, "scale_factor": scale_factor})
        return [out[key] for key in self.outputs]


def has_rtdetr():
    """Whether the ppdet found has RT-DETR (PaddleDetection 2.7 and later: not paddledet 2.6.0 of PyPI)."""
    _import_ppdet()
    return importlib.util.find_spec("ppdet.modeling.transformers.rtdetr_transformer") is not None


def _calibrate_on_images(net, size):
    """kforge_after_weights of a detector whose only input is the image: eval mode, then the batch-norm statistics
    calibrated on a seeded N(0, 1) batch of two size x size images."""
    net.eval()
    rng = np.random.default_rng(11)
    models.calibrate_batch_norm(net, rng.standard_normal([2, 3, size, size]).astype(np.float32))


def ppyoloe_plus_s(calibrate_size):
    """PP-YOLOE+-s as configs/ppyoloe/ppyoloe_plus_crn_s_80e_coco.yml builds it (width 0.5, depth 0.33), 80 classes.
    kforge_after_weights: the head's proj_conv back to its fixed 0..16 ramp (realistic_weights drew it), the
    batch-norm statistics calibrated on a seeded N(0, 1) image batch, then RepVggBlock.convert_to_deploy() as the
    export does."""
    def build():
        _import_ppdet()
        from ppdet.modeling.architectures.yolo import YOLOv3
        from ppdet.modeling.backbones.cspresnet import CSPResNet
        from ppdet.modeling.heads.ppyoloe_head import PPYOLOEHead
        from ppdet.modeling.necks.custom_pan import CustomCSPPAN
        width, depth = 0.50, 0.33
        backbone = CSPResNet(layers=[3, 6, 6, 3], channels=[64, 128, 256, 512, 1024], return_idx=[1, 2, 3],
                             use_large_stem=True, use_alpha=True, act="swish", width_mult=width, depth_mult=depth)
        neck = CustomCSPPAN(in_channels=[s.channels for s in backbone.out_shape], out_channels=[768, 384, 192],
                            stage_num=1, block_num=3, act="swish", spp=True, use_alpha=True,
                            width_mult=width, depth_mult=depth)
        head = PPYOLOEHead(in_channels=[s.channels for s in neck.out_shape], num_classes=80, act="swish",
                           fpn_strides=[32, 16, 8], grid_cell_scale=5.0, grid_cell_offset=0.5, reg_max=16,
                           static_assigner_epoch=30, use_varifocal_loss=True, exclude_nms=True)
        net = DetectorNoNMS(YOLOv3(backbone=backbone, neck=neck, yolo_head=head, post_process=None))

        def after_weights():
            proj = np.linspace(0, head.reg_channels - 1, head.reg_channels, dtype=np.float32)
            head.proj_conv.weight.set_value(proj.reshape([1, head.reg_channels, 1, 1]))
            net.eval()
            rng = np.random.default_rng(11)
            image = rng.standard_normal([2, 3, calibrate_size, calibrate_size]).astype(np.float32)
            models.calibrate_batch_norm(net, image, np.ones([2, 2], np.float32))
            for layer in net.sublayers():
                if hasattr(layer, "convert_to_deploy"):
                    layer.convert_to_deploy()
        net.kforge_after_weights = after_weights
        return net
    return build


class RTDETRBeforeSelection(nn.Layer):
    """RT-DETR up to its query selection: backbone, HybridEncoder, the transformer's input projection and encoder
    head (ppdet's own layers and _get_encoder_input, as RTDETRTransformer._get_decoder_input computes them), returning
    what its topk ranks (the best class score of each of the 8400 anchors) and the anchors' box logits. The whole
    model's outputs hinge on that topk, whose neighbouring scores tie within float32 noise (docs/model-zoo.md): this
    checks everything before it."""

    def __init__(self, detector):
        super().__init__()
        self.detector = detector

    def forward(self, image):
        arch = self.detector.arch
        feats = arch.neck(arch.backbone({"image": image}))
        transformer = arch.transformer
        memory, _, _ = transformer._get_encoder_input(feats)
        memory = paddle.where(transformer.valid_mask, memory, paddle.to_tensor(0.0))
        output_memory = transformer.enc_output(memory)
        scores = transformer.enc_score_head(output_memory).max(-1)
        coords = transformer.enc_bbox_head(output_memory) + transformer.anchors
        return scores, paddle.where(transformer.valid_mask, coords, paddle.zeros_like(coords))


class RTDETRAfterSelection(nn.Layer):
    """RT-DETR from its query selection on: inputs what RTDETRTransformer's decoder consumes there, the encoder's
    flattened memory [N, 8400, 256] and the selected anchors topk_ind [N, 300] (int64); the program computes the
    encoder head on the memory (enc_output, the box head plus the anchors), gathers the selected queries and
    reference boxes (gather_nd), runs the 3 decoder layers (deformable attention through grid_sample) and the heads:
    the boxes and logits of rtdetr_r18. kforge_inputs makes both inputs as Paddle (dygraph, float32, the same
    weights) computes them for rtdetr_r18's seeded image, so kforge's decoder is compared with Paddle's on one
    selection: the whole model's topk over near-tied scores cannot be (docs/model-zoo.md)."""

    def __init__(self, detector):
        super().__init__()
        self.detector = detector

    def forward(self, memory, topk_ind):
        transformer = self.detector.arch.transformer
        spatial_shapes, level_start_index = self._levels()
        masked = paddle.where(transformer.valid_mask, memory, paddle.to_tensor(0.0))
        output_memory = transformer.enc_output(masked)
        coords_unact = transformer.enc_bbox_head(output_memory) + transformer.anchors
        # As _get_decoder_input: [batch, query] pairs for gather_nd.
        batch_ind = paddle.arange(end=memory.shape[0], dtype=topk_ind.dtype).unsqueeze(-1)
        index = paddle.stack([batch_ind.tile([1, topk_ind.shape[1]]), topk_ind], axis=-1)
        reference_points_unact = paddle.gather_nd(coords_unact, index)
        target = paddle.gather_nd(output_memory, index)
        bboxes, logits = transformer.decoder(target, reference_points_unact, memory, spatial_shapes,
                                             level_start_index, transformer.dec_bbox_head,
                                             transformer.dec_score_head, transformer.query_pos_head,
                                             attn_mask=None, memory_mask=None,
                                             query_pos_head_inv_sig=transformer.query_pos_head_inv_sig)
        return bboxes[-1], logits[-1]  # DINOHead's eval_idx -1, as DETR with exclude_post_process returns them

    def _levels(self):
        transformer = self.detector.arch.transformer
        shapes = [[transformer.eval_size[0] // s, transformer.eval_size[1] // s] for s in transformer.feat_strides]
        starts = [0]
        for h, w in shapes[:-1]:
            starts.append(starts[-1] + h * w)
        return shapes, starts

    def kforge_inputs(self, batch, seed):
        """The inputs as Paddle computes them: rtdetr_r18's seeded image (models.inputs' first draw), its encoder
        memory and the topk of the encoder head's best class scores, in dygraph with this net's weights."""
        size = self.detector.arch.transformer.eval_size
        image = np.random.default_rng(seed).standard_normal([batch, 3, *size]).astype(np.float32)
        arch, transformer = self.detector.arch, self.detector.arch.transformer
        with paddle.no_grad():
            memory, _, _ = transformer._get_encoder_input(arch.neck(arch.backbone({"image": paddle.to_tensor(image)})))
            masked = paddle.where(transformer.valid_mask, memory, paddle.to_tensor(0.0))
            scores = transformer.enc_score_head(transformer.enc_output(masked)).max(-1)
            _, topk_ind = paddle.topk(scores, transformer.num_queries, axis=1)
        return {"memory": memory.numpy(), "topk_ind": topk_ind.numpy().astype(np.int64)}


def rtdetr_r18_part(part):
    """A part of rtdetr_r18 (same weights): part(detector) is RTDETRBeforeSelection (up to its query selection) or
    RTDETRAfterSelection (from it on), with the whole detector's kforge_after_weights."""
    def build():
        net = rtdetr_r18()()
        layer = part(net)
        layer.kforge_after_weights = net.kforge_after_weights
        return layer
    return build


def rtdetr_r18(eval_size=640, num_queries=300):
    """RT-DETR-R18 as configs/rtdetr/rtdetr_r18vd_6x_coco.yml builds it: ResNet-18-vd, HybridEncoder (hidden 256,
    one transformer layer over the stride-32 level, expansion 0.5), RTDETRTransformer (300 queries chosen by topk
    over the encoder's scores and gathered, 3 decoder layers of deformable attention through grid_sample), DINOHead;
    eval_size [640, 640] (the encoder's positional embedding and the anchors precomputed, as the config sets them);
    exported without post-processing: the last decoder layer's boxes [N, 300, 4] (cx, cy, w, h in [0, 1]) and
    logits [N, 300, 80]. kforge_after_weights calibrates the batch-norm statistics."""
    def build():
        _import_ppdet()
        from ppdet.modeling.architectures.detr import DETR
        from ppdet.modeling.backbones.resnet import ResNet
        from ppdet.modeling.heads.detr_head import DINOHead
        from ppdet.modeling.transformers.hybrid_encoder import HybridEncoder, TransformerLayer
        from ppdet.modeling.transformers.rtdetr_transformer import RTDETRTransformer
        size = [eval_size, eval_size]
        backbone = ResNet(depth=18, variant="d", return_idx=[1, 2, 3], freeze_at=-1, freeze_norm=False,
                          norm_decay=0.0, norm_type="bn")
        layer = TransformerLayer(d_model=256, nhead=8, dim_feedforward=1024, dropout=0.0, activation="gelu")
        neck = HybridEncoder(in_channels=[s.channels for s in backbone.out_shape], feat_strides=[8, 16, 32],
                             hidden_dim=256, use_encoder_idx=[2], num_encoder_layers=1, encoder_layer=layer,
                             expansion=0.5, depth_mult=1.0, eval_size=size)
        transformer = RTDETRTransformer(num_classes=80, hidden_dim=256, num_queries=num_queries,
                                        backbone_feat_channels=[s.channels for s in neck.out_shape],
                                        feat_strides=[8, 16, 32], num_levels=3, nhead=8, num_decoder_layers=3,
                                        dim_feedforward=1024, dropout=0.0, activation="relu", num_denoising=100,
                                        learnt_init_query=False, eval_size=size, eval_idx=-1)
        head = DINOHead(eval_idx=-1)
        net = DetectorNoNMS(DETR(backbone=backbone, transformer=transformer, detr_head=head, neck=neck,
                                 post_process=None, exclude_post_process=True))

        net.kforge_after_weights = lambda: _calibrate_on_images(net, eval_size)
        return net
    return build


def picodet_s(calibrate_size=320):
    """PicoDet-S as configs/picodet/picodet_s_320_coco_lcnet.yml builds it: LCNet x0.75, LCPAN (96 channels,
    depthwise, 4 levels), PicoHeadV2 (PicoFeat with shared cls / reg convs and SE, the align head, DFL over 8 bins by
    Integral's fixed ramp), strides 8..64; exported with post-processing but without NMS (export.nms=False): the
    boxes [N, A, 4] before rescaling and the scores [N, 80, A], from the image alone. kforge_after_weights
    calibrates the batch-norm statistics."""
    def build():
        _import_ppdet()
        from ppdet.modeling.architectures.picodet import PicoDet
        from ppdet.modeling.backbones.lcnet import LCNet
        from ppdet.modeling.heads.pico_head import PicoFeat, PicoHeadV2
        from ppdet.modeling.losses.gfocal_loss import DistributionFocalLoss
        from ppdet.modeling.losses.iou_loss import GIoULoss
        from ppdet.modeling.losses.varifocal_loss import VarifocalLoss
        from ppdet.modeling.necks.lc_pan import LCPAN
        backbone = LCNet(scale=0.75, feature_maps=[3, 4, 5])
        # spatial_scales given: LCPAN appends to it, and its default is a list shared by every instance.
        neck = LCPAN(in_channels=[s.channels for s in backbone.out_shape], out_channels=96, use_depthwise=True,
                     num_features=4, spatial_scales=[0.125, 0.0625, 0.03125])
        feat = PicoFeat(feat_in=96, feat_out=96, num_convs=2, num_fpn_stride=4, norm_type="bn",
                        share_cls_reg=True, use_se=True)
        head = PicoHeadV2(conv_feat=feat, num_classes=80, fpn_stride=[8, 16, 32, 64], feat_in_chan=96,
                          prior_prob=0.01, reg_max=7, cell_offset=0.5, grid_cell_scale=5.0,
                          static_assigner_epoch=100, use_align_head=True,
                          loss_class=VarifocalLoss(use_sigmoid=False, iou_weighted=True, loss_weight=1.0),
                          loss_dfl=DistributionFocalLoss(loss_weight=0.5), loss_bbox=GIoULoss(loss_weight=2.5))
        arch = PicoDet(backbone=backbone, neck=neck, head=head)
        arch.export_nms = False
        net = DetectorNoNMS(arch, outputs=("bbox", "scores"))

        net.kforge_after_weights = lambda: _calibrate_on_images(net, calibrate_size)
        return net
    return build


def detection_inputs(size):
    """PaddleDetection's export inputs for a fixed image size: image [-1, 3, S, S], scale_factor [-1, 2]."""
    return [InputSpec([None, 3, size, size], "float32", "image"), InputSpec([None, 2], "float32", "scale_factor")]


def paddledet_zoo():
    """name -> (builder, [(size label, specs)]): each detector dynamic in the batch at two image sizes (each its own
    export, as PaddleDetection writes the size into the program), and a fixed-shape twin NAME_fixed."""
    models_ = {}
    models_["ppyoloe_plus_s"] = (ppyoloe_plus_s(320), [("640x640", detection_inputs(640)),
                                                       ("320x320", detection_inputs(320))])
    models_["ppyoloe_plus_s_fixed"] = (ppyoloe_plus_s(320), [
        ("640x640 (fixed)", [InputSpec([1, 3, 640, 640], "float32", "image"),
                             InputSpec([1, 2], "float32", "scale_factor")])])
    image = [InputSpec([None, 3, 320, 320], "float32", "image")]
    models_["picodet_s"] = (picodet_s(), [("320x320", image), ("320x320 (batch 2)", image)])
    models_["picodet_s_fixed"] = (picodet_s(), [
        ("320x320 (fixed)", [InputSpec([1, 3, 320, 320], "float32", "image")])])
    if has_rtdetr():
        image = [InputSpec([None, 3, 640, 640], "float32", "image")]
        models_["rtdetr_r18"] = (rtdetr_r18(), [("640x640", image), ("640x640 (batch 2)", image)])
        models_["rtdetr_r18_before_selection"] = (rtdetr_r18_part(RTDETRBeforeSelection), [
            ("640x640", image), ("640x640 (batch 2)", image)])
        after = [InputSpec([None, 8400, 256], "float32", "memory"), InputSpec([None, 300], "int64", "topk_ind")]
        models_["rtdetr_r18_after_selection"] = (rtdetr_r18_part(RTDETRAfterSelection), [
            ("640x640", after), ("640x640 (batch 2)", after)])
        # 20 queries at 320x320 (2100 anchors): with these weights the encoder's 21 best scores lie at least 1.3e-3
        # apart, 12x float32's noise there, so the whole model's selection need not tie.
        image = [InputSpec([None, 3, 320, 320], "float32", "image")]
        models_["rtdetr_r18_q20"] = (rtdetr_r18(320, num_queries=20), [
            ("320x320", image), ("320x320 (batch 2)", image)])
        models_["rtdetr_r18_fixed"] = (rtdetr_r18(), [
            ("640x640 (fixed)", [InputSpec([1, 3, 640, 640], "float32", "image")])])
    return models_
