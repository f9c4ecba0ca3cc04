#!/usr/bin/env python3
"""CI check (no GPU needed): `kforge compile --target cuda` output compiles with nvcc -arch=sm_90 -std=c++17,
warnings as errors (-Werror all-warnings, host -Wall -Wextra), for programs that exercise every kernel shape:
an elementwise chain with fan-in/fan-out (--cuda-graph), broadcasts of every access kind (inner, outer, scalar,
strided), and row groups (softmax as a pattern and spelled out, layer_norm with prologue and epilogue, row
values), and GEMM groups (matmul with bias / bias + gelu epilogues, transposes, a batch folded into M, a dynamic
batch; cuBLASLt alone, and with --multi-kernel-hints the dispatchers, with and without --cuda-graph), and with
--multi-kernel-hints the row groups' dispatchers (softmax, layer_norm, and mixed with GEMM and rows), and the same
in bfloat16 and float16 (fused kernels converting on load and store, 16-bit constants, cuBLASLt in the 16-bit
type, the tensor-core variants of kforge_gemm_tc.cuh in both types, conversions to and from every fused dtype).
Programs with GEMMs are also linked (with the GPU check's harness) against -lcublasLt -lcublas, so every symbol
the headers use resolves. Programs with convolutions (the small conv net of tests/golden/compile-cuda-conv, Paddle's cnn, an NHWC conv, a
depthwise conv, a padded average pool, a conv2d_transpose) are linked against -lcudnn as well, those with fft_r2c
against -lcufft. The index-mapped
kernels (tests/golden/compile-cuda-index: every op of codegen/cuda_index.h, and Paddle programs of concat, split,
transpose, strided_slice, pad3d, gather, embedding, interpolation, dropout, and of the reductions, scans, one_hot,
pow, stack and meshgrid outside fused groups) compile too. Also checks that a matmul no CUDA GEMM
computes is an error at its place that says why (golden error-compile-cuda-conv-unsupported does the same for a
convolution the CUDA backend cannot run yet).
Each shard generates its programs, each in a namespace of its own (--namespace cuda_compile_NAME), and compiles
them as two translation units, all the kernels files in one and all the host files in the other, linked against an
empty main with the libraries they use: nvcc's front ends parse the CUDA, cuBLASLt and cuDNN headers twice per shard
instead of twice per program (the four shards took 120-151 s each, program by program, 19-51 s this way on a 2-core
machine). The programs linked with the GPU check's harness (HARNESS_LINKED) are built alone. Everything builds
without optimising (nvcc_check.CHECK_OPT_FLAGS: a compile check; the GPU check builds optimised). Meson runs
the list as 4 shards (--shard), tests of their own.

Exit 77 (meson: skipped) only when nvcc is missing. The GPU run itself is tests/gpu/check_fusion.sh.
"""
import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile

from nvcc_check import CHECK_OPT_FLAGS, find_nvcc

# (program relative to the source root, class name, extra flags)
HINTS = ["--multi-kernel-hints", "64,256,4096"]
PROGRAMS = [
    ("tests/e2e/fused/chain.yaml", "chain", ["--cuda-graph"]),
    ("tests/e2e/fused/broadcast.yaml", "broadcast", []),
    ("tests/e2e/fused/softmax.yaml", "softmax", []),
    ("tests/e2e/fused/softmax.yaml", "softmax_mk", HINTS),
    ("tests/e2e/fused/layer_norm.yaml", "layer_norm_mk", HINTS + ["--cuda-graph"]),
    ("tests/e2e/fused/layer_norm.yaml", "layer_norm", ["--cuda-graph"]),
    ("tests/e2e/fused/lone_op.yaml", "lone_op", []),
    ("tests/e2e/fused/gemm_mlp.yaml", "gemm_mlp", []),
    ("tests/e2e/fused/gemm_mlp.yaml", "gemm_mlp_mk", HINTS),
    ("tests/e2e/fused/gemm_mlp.yaml", "gemm_mlp_nofuse", ["--no-fuse"]),
    ("tests/e2e/fused/gemm_batched.yaml", "gemm_batched", ["--cuda-graph"]),
    ("tests/e2e/fused/gemm_batched.yaml", "gemm_batched_mk", HINTS + ["--cuda-graph"]),
    ("tests/e2e/fused/gemm_products.yaml", "gemm_products_mk", HINTS + ["--cuda-graph"]),
    ("tests/e2e/fused/mixed.yaml", "mixed", []),
    ("tests/e2e/fused/mixed.yaml", "mixed_mk", HINTS + ["--cuda-graph"]),
    ("tests/e2e/fused/half_bf16.yaml", "half_bf16", []),
    ("tests/e2e/fused/half_bf16.yaml", "half_bf16_mk", HINTS + ["--cuda-graph"]),
    ("tests/e2e/fused/half_fp16.yaml", "half_fp16_mk", HINTS),
    ("tests/e2e/fused/half_casts.yaml", "half_casts", []),
    ("tests/golden/compile-cuda-bf16/program.yaml", "golden_bf16", ["--cuda-graph"]),
    ("tests/golden/compile-cuda-fp16/program.yaml", "golden_fp16", HINTS),
    # --precision float16's GEMM + bias + erf gelu: the tanh form in cuBLASLt's GELU_BIAS and the tiles (issue 35).
    ("tests/golden/compile-cuda-fp16-gelu/program.yaml", "golden_fp16_gelu", HINTS + ["--cuda-graph", "--precision", "float16"]),
    # Eight activation chains over infinities and NaN in float16: past max_group_calls, a producer read twice
    # (subtract(b, b)) taken alone into the next group once, not twice (a redeclared local before the fix).
    ("tests/paddle/activations_nonfinite/inference.json", "paddle_activations_nonfinite_fp16", ["--precision", "float16"]),
    # Two dynamic batches that meet in a broadcast: one symbol, checked equal in run().
    ("tests/golden/compile-cuda-shared-batch/program.yaml", "shared_batch", ["--cuda-graph"]),
    # Convolutions (cuDNN, with fused epilogues) and pooling: a small conv net, and Paddle programs.
    ("tests/golden/compile-cuda-conv/program.yaml", "conv_net", ["--cuda-graph"]),
    ("tests/golden/compile-cuda-conv/program.yaml", "conv_net_plain", []),
    ("tests/paddle/cnn/inference.json", "paddle_cnn", []),
    ("tests/paddle/conv2d_nhwc/inference.json", "paddle_conv2d_nhwc", ["--cuda-graph"]),
    ("tests/paddle/conv2d_asym_pad_dynamic_hw/inference.json", "paddle_conv2d_asym_pad_dynamic_hw", []),
    ("tests/paddle/isnan_int64/inference.json", "paddle_isnan_int64", []),
    ("tests/paddle/elu_float64/inference.json", "paddle_elu_float64", []),
    ("tests/paddle/ceil_float64/inference.json", "paddle_ceil_float64", []),
    ("tests/paddle/repeat_interleave_dynamic/inference.json", "paddle_repeat_interleave_dynamic", []),
    ("tests/paddle/randint_int32_dynamic/inference.json", "paddle_randint_int32_dynamic", []),
    ("tests/paddle/diag_vector_offset/inference.json", "paddle_diag_vector_offset", ["--cuda-graph"]),
    ("tests/paddle/depthwise_conv2d/inference.json", "paddle_depthwise_conv2d", []),
    # The layout plan is NHWC by default (KRSC filters rewritten at bind, the direct depthwise kernel); NCHW too.
    ("tests/golden/compile-cuda-conv/program.yaml", "conv_net_nchw", ["--cuda-graph", "--layout", "nchw"]),
    ("tests/paddle/depthwise_conv2d/inference.json", "paddle_depthwise_conv2d_nchw", ["--layout", "nchw"]),
    ("tests/paddle/conv_region_nhwc/inference.json", "paddle_conv_region_nhwc", []),
    ("tests/paddle/avg_pool2d_pad/inference.json", "paddle_avg_pool2d_pad", []),
    # Index-mapped kernels (codegen/cuda_index.h) and conv2d_transpose (cuDNN backward data): every op in one
    # program, and Paddle programs of them (dynamic dims, other dtypes, NHWC, the interpolation helpers).
    ("tests/golden/compile-cuda-index/program.yaml", "index_ops", ["--cuda-graph"]),
    ("tests/paddle/concat_dynamic/inference.json", "paddle_concat_dynamic", []),
    ("tests/paddle/concat_bool/inference.json", "paddle_concat_bool", []),
    ("tests/paddle/split_sections/inference.json", "paddle_split_sections", []),
    ("tests/paddle/transpose_int64/inference.json", "paddle_transpose_int64", []),
    ("tests/paddle/strided_slice/inference.json", "paddle_strided_slice", []),
    ("tests/paddle/pad3d_circular_ndhwc/inference.json", "paddle_pad3d_circular_ndhwc", []),
    ("tests/paddle/pad_constant/inference.json", "paddle_pad_constant", []),
    ("tests/paddle/gather_int32_axis0/inference.json", "paddle_gather_int32_axis0", []),
    ("tests/paddle/embedding_padding_idx/inference.json", "paddle_embedding_padding_idx", []),
    ("tests/paddle/bilinear_interp_dynamic/inference.json", "paddle_bilinear_interp_dynamic", []),
    ("tests/paddle/bilinear_interp_align_mode1_nhwc/inference.json", "paddle_bilinear_interp_nhwc", []),
    ("tests/paddle/nearest_interp_size/inference.json", "paddle_nearest_interp_size", []),
    ("tests/paddle/dropout_eval_downscale/inference.json", "paddle_dropout_eval_downscale", []),
    ("tests/paddle/conv2d_transpose/inference.json", "paddle_conv2d_transpose", ["--cuda-graph"]),
    # depthwise_conv2d_transpose: conv2d_transpose with groups equal to the channels (canonicalize_ops); over NHWC
    # data it is refused (tests/golden/error-compile-cuda-conv-transpose-grouped-nhwc)
    ("tests/paddle/depthwise_conv2d_transpose/inference.json", "paddle_depthwise_conv2d_transpose", []),
    ("tests/paddle/expand_as_dynamic/inference.json", "paddle_expand_as_dynamic", ["--cuda-graph"]),
    # Sizes that depend on data (issue 33): nonzero, masked_select and unique counted by kforge_select.cuh /
    # kforge_unique.cuh, the count copied back, bind_s<id>() sizing the launches after it; Paddle's own programs.
    ("tests/golden/compile-cuda-data-dependent/program.yaml", "data_dependent", [],
     ["tests/golden/compile-cuda-data-dependent/ops.yaml", "tests/golden/compile-cuda-data-dependent/fusion.yaml"]),
    ("tests/paddle/nonzero_gather_nd/inference.json", "paddle_nonzero_gather_nd", []),
    ("tests/paddle/nonzero_shape/inference.json", "paddle_nonzero_shape", []),
    ("tests/paddle/masked_select_broadcast/inference.json", "paddle_masked_select_broadcast", []),
    ("tests/paddle/masked_select_sum/inference.json", "paddle_masked_select_sum", []),
    ("tests/paddle/unique_float_dynamic/inference.json", "paddle_unique_float_dynamic", []),
    ("tests/paddle/unique_axis0/inference.json", "paddle_unique_axis0", []),
    ("tests/paddle/unique_axis1_float/inference.json", "paddle_unique_axis1_float", []),
    # generate_proposals, distribute_fpn_proposals (kforge_proposals.cuh): rows counted on the device, read back
    # like a compaction's
    ("tests/paddle/generate_proposals_rpn/inference.json", "paddle_generate_proposals_rpn", []),
    ("tests/paddle/generate_proposals_sorted_pixel_offset/inference.json", "paddle_generate_proposals_sorted_pixel_offset",
     []),
    ("tests/paddle/generate_proposals_dynamic_float64/inference.json", "paddle_generate_proposals_dynamic_float64",
     []),
    ("tests/paddle/distribute_fpn_proposals_restore/inference.json", "paddle_distribute_fpn_proposals_restore", []),
    ("tests/paddle/distribute_fpn_proposals_pixel_offset/inference.json",
     "paddle_distribute_fpn_proposals_pixel_offset", []),
    ("tests/paddle/distribute_fpn_proposals_reshape/inference.json", "paddle_distribute_fpn_proposals_reshape", []),
    # Dims read from a tensor's values: the tensor copied back, the shape rule of kforge_shape_meta.h on the host.
    ("tests/paddle/reshape_shape_from_data/inference.json", "paddle_reshape_shape_from_data", []),
    ("tests/paddle/reshape_computed_shape_from_data/inference.json", "paddle_reshape_computed_shape_from_data", []),
    ("tests/paddle/arange_end_from_data/inference.json", "paddle_arange_end_from_data", []),
    ("tests/paddle/full_shape_from_data/inference.json", "paddle_full_shape_from_data", []),
    ("tests/paddle/slice_end_from_data/inference.json", "paddle_slice_end_from_data", []),
    ("tests/golden/compile-cuda-shape-from-values/program.json", "shape_from_values", []),
    ("tests/paddle/expand_shape_from_input/inference.json", "paddle_expand_shape_from_input", []),
    ("tests/paddle/tile_from_input/inference.json", "paddle_tile_from_input", []),
    # A slice start read by its kernel from the device; one from data with the axis dropped, under --cuda-graph.
    ("tests/golden/compile-cuda-slice-start-from-values/program.json", "slice_start_from_values", []),
    ("tests/paddle/slice_index_from_input/inference.json", "paddle_slice_index_from_input", ["--cuda-graph"]),
    ("tests/paddle/reshape_shape_list_from_input/inference.json", "paddle_reshape_shape_list_from_input", []),
    ("tests/golden/compile-cuda-shape-from-tensor-list/program.json", "shape_from_tensor_list", []),
    # Dynamic H and W: per-call convolution shapes, broadcast dims checked equal, shape parameters of a fused
    # kernel (with the golden case's own op files, named as a fourth element: they replace kernels/'s).
    ("tests/golden/compile-cuda-dynamic-hw/program.yaml", "dynamic_hw", ["--cuda-graph"],
     ["tests/golden/compile-cuda-conv/ops.yaml", "tests/golden/compile-cuda-dynamic-hw/ops.yaml",
      "tests/golden/compile-cuda-conv/fusion.yaml"]),
    # --precision: float16 / bfloat16 activations and filters (conv groups, the depthwise kernel, pooling, the
    # GEMM, the casts at the program's ends, the parameters rounded when loaded).
    ("tests/golden/compile-cuda-conv/program.yaml", "conv_net_fp16", ["--cuda-graph", "--precision", "float16"]),
    ("tests/golden/compile-cuda-conv/program.yaml", "conv_net_bf16_nchw", ["--precision", "bfloat16", "--layout", "nchw"]),
    ("tests/paddle/depthwise_conv2d/inference.json", "paddle_depthwise_conv2d_fp16", ["--precision", "float16"]),
    ("tests/paddle/avg_pool2d_pad/inference.json", "paddle_avg_pool2d_bf16", ["--precision", "bfloat16"]),
    # relu6 as ReLU before a depthwise convolution that clamps its input at 6; a tap-major depthwise filter.
    ("tests/golden/compile-cuda-relu6-depthwise/program.yaml", "inverted_residual", ["--cuda-graph"],
     ["tests/golden/compile-cuda-conv/ops.yaml", "tests/golden/compile-cuda-conv-nhwc/transpose.yaml",
      "tests/golden/compile-cuda-conv/fusion.yaml"]),
    # Issue 34's ops that are pure fused expressions: share_data_ (the identity, fused with a scale), bce_loss
    # (elementwise after a sigmoid), min / any / all as reductions (any of a bool mask, all of a float input).
    ("tests/paddle/share_data_float32/inference.json", "paddle_share_data", []),
    ("tests/paddle/bce_loss/inference.json", "paddle_bce_loss", []),
    ("tests/paddle/min_all/inference.json", "paddle_min_all", []),
    ("tests/paddle/any_bool/inference.json", "paddle_any_bool", []),
    ("tests/paddle/all_every_axis/inference.json", "paddle_all_every_axis", []),
    # Attention over dynamic batch and length: the float32 attention group (kforge_attention_f32.cuh) and
    # (--precision) float16's.
    ("tests/paddle/bert_like_dynamic/inference.json", "paddle_bert_like", ["--cuda-graph"]),
    ("tests/paddle/bert_like_dynamic/inference.json", "paddle_bert_like_fp16", ["--precision", "float16"]),
    # The fused 16-bit attention (kforge_attention.cuh: mma.sync, ldmatrix, cp.async) beside an unfused one.
    ("tests/golden/compile-cuda-attention/program.yaml", "attention", ["--cuda-graph"]),
    # The fused float32 attention (kforge_attention_f32.cuh: float32 FMA, cp.async) beside an unfused one.
    ("tests/golden/compile-cuda-attention-f32/program.yaml", "attention_f32", ["--cuda-graph"]),
    # The kernels of the ops no fused group takes (codegen/cuda_index_compute.cpp): reductions over leading axes in
    # every accumulator type, softmax over a middle axis, cumsum (a dynamic line count), one_hot, pow on floats and
    # integers; stack and meshgrid (data movement).
    ("tests/paddle/sum_int32/inference.json", "paddle_sum_int32", []),
    ("tests/paddle/max_float64/inference.json", "paddle_max_float64", []),
    ("tests/paddle/min_int64/inference.json", "paddle_min_int64", []),
    ("tests/paddle/prod_int64/inference.json", "paddle_prod_int64", []),
    ("tests/paddle/prod_float32/inference.json", "paddle_prod_float32", []),
    ("tests/paddle/any_keepdim/inference.json", "paddle_any_keepdim", []),
    ("tests/paddle/softmax_axis1/inference.json", "paddle_softmax_axis1", []),
    ("tests/paddle/cumsum_axis0_dynamic/inference.json", "paddle_cumsum_axis0_dynamic", ["--cuda-graph"]),
    ("tests/paddle/cumsum_int64/inference.json", "paddle_cumsum_int64", []),
    ("tests/paddle/one_hot/inference.json", "paddle_one_hot", []),
    ("tests/paddle/pow_scalar_float32/inference.json", "paddle_pow_scalar_float32", []),
    ("tests/paddle/pow_scalar_int32/inference.json", "paddle_pow_scalar_int32", []),
    ("tests/paddle/stack/inference.json", "paddle_stack", []),
    ("tests/paddle/meshgrid_3_int64/inference.json", "paddle_meshgrid_3_int64", []),
    # Issue 34: asymmetric convolution paddings (the input padded into the cuDNN workspace first, kforge_conv_pad.cuh;
    # the direct depthwise kernel reads them as they are), topk, gather_nd, scatter, roll, pad, add_n, set_value
    # (codegen/cuda_index_select.cpp), matmuls with a vector operand (an index-mapped kernel, no GEMM), group_norm
    # and p_norm (codegen/cuda_index_norm.cpp), batch norms that are not 4-D (the epilogue kernel), the losses
    # (codegen/cuda_index_loss.cpp), mean_all, einsum, grid_sample, floor_divide and uniform.
    ("tests/paddle/conv2d_asym_pad/inference.json", "paddle_conv2d_asym_pad", ["--cuda-graph"]),
    ("tests/paddle/conv2d_asym_pad_stride2/inference.json", "paddle_conv2d_asym_pad_stride2", ["--layout", "nchw"]),
    ("tests/paddle/conv2d_asym_pad_nhwc/inference.json", "paddle_conv2d_asym_pad_fp16", ["--precision", "float16"]),
    ("tests/paddle/depthwise_conv2d_asym_pad/inference.json", "paddle_depthwise_conv2d_asym_pad", []),
    ("tests/paddle/topk_ties/inference.json", "paddle_topk_ties", []),
    ("tests/paddle/argsort_ties_stable_descending_axis0/inference.json", "paddle_argsort_stable", []),
    ("tests/paddle/argsort_scores_dynamic/inference.json", "paddle_argsort_scores_dynamic", ["--cuda-graph"]),
    ("tests/paddle/gather_nd_dynamic/inference.json", "paddle_gather_nd_dynamic", []),
    ("tests/paddle/scatter_add/inference.json", "paddle_scatter_add", []),
    ("tests/paddle/roll/inference.json", "paddle_roll", []),
    ("tests/paddle/pad_rank3/inference.json", "paddle_pad_rank3", []),
    ("tests/paddle/add_n/inference.json", "paddle_add_n", []),
    ("tests/paddle/matmul_vector_batched/inference.json", "paddle_matmul_vector_batched", []),
    ("tests/paddle/group_norm_nhwc/inference.json", "paddle_group_norm_nhwc", []),
    ("tests/paddle/p_norm_inf/inference.json", "paddle_p_norm_inf", []),
    ("tests/paddle/p_norm_half/inference.json", "paddle_p_norm_half", []),
    ("tests/paddle/set_value_tensor_negative_step/inference.json", "paddle_set_value_tensor_negative_step", []),
    ("tests/paddle/set_value_dynamic_end/inference.json", "paddle_set_value_dynamic_end", ["--cuda-graph"]),
    # bounds and a step read from data on the device; infinite attributes (a conv epilogue's clip, a clip, a pad)
    ("tests/paddle/set_value_bounds_from_data/inference.json", "paddle_set_value_bounds_from_data", ["--cuda-graph"]),
    ("tests/paddle/set_value_step_from_data/inference.json", "paddle_set_value_step_from_data", []),
    ("tests/golden/compile-cuda-set-value-ends-from-data/program.yaml", "set_value_ends_from_data", ["--cuda-graph"]),
    ("tests/paddle/conv2d_clip_inf/inference.json", "paddle_conv2d_clip_inf", ["--cuda-graph"]),
    ("tests/paddle/clip_min_neg_inf_pad_neg_inf/inference.json", "paddle_clip_min_neg_inf_pad_neg_inf", []),
    ("tests/paddle/batch_norm_3d/inference.json", "paddle_batch_norm_3d", []),
    ("tests/paddle/batch_norm_nlc/inference.json", "paddle_batch_norm_nlc", ["--precision", "bfloat16"]),
    ("tests/paddle/sigmoid_ce_logits_mean/inference.json", "paddle_sigmoid_ce_logits_mean", []),
    ("tests/paddle/sigmoid_ce_logits_pos_weight/inference.json", "paddle_sigmoid_ce_logits_pos_weight", []),
    ("tests/paddle/cross_entropy_softmax_soft/inference.json", "paddle_cross_entropy_softmax_soft", []),
    ("tests/paddle/cross_entropy_softmax_axis1_int32/inference.json", "paddle_cross_entropy_softmax_axis1", []),
    ("tests/paddle/einsum_batched/inference.json", "paddle_einsum_batched", []),
    ("tests/paddle/grid_sample_bilinear_reflection_noac/inference.json", "paddle_grid_sample_bilinear", []),
    ("tests/paddle/grid_sample_float64/inference.json", "paddle_grid_sample_float64", []),
    ("tests/paddle/floor_divide_broadcast/inference.json", "paddle_floor_divide_broadcast", []),
    ("tests/paddle/prelu_channel_conv/inference.json", "paddle_prelu_channel_conv", []),
    ("tests/paddle/floor_divide_broadcast_float/inference.json", "paddle_floor_divide_broadcast_float", []),
    ("tests/paddle/uniform_float32/inference.json", "paddle_uniform_float32", ["--cuda-graph"]),
    # issue 34's GraphNet ops: linear_interp, linspace, index_put, deformable_conv (float32 and float64)
    ("tests/paddle/linear_interp_nwc/inference.json", "paddle_linear_interp_nwc", []),
    ("tests/paddle/linspace_stop_int64_7/inference.json", "paddle_linspace_stop_int64", ["--cuda-graph"]),
    ("tests/paddle/index_put_accumulate/inference.json", "paddle_index_put_accumulate", []),
    ("tests/paddle/deformable_conv_v2/inference.json", "paddle_deformable_conv_v2", []),
    ("tests/paddle/deformable_conv_v2_bias_float64/inference.json", "paddle_deformable_conv_float64", []),
    # rnn (kforge_rnn.cuh): a 2-layer LSTM over a dynamic batch (PP-OCRv3's neck), a bidirectional GRU with int64
    # sequence lengths, a float64 LSTM; broadcast_tensors (expand's kernel per input)
    ("tests/paddle/rnn_lstm_ocr/inference.json", "paddle_rnn_lstm_ocr", ["--cuda-graph"]),
    ("tests/paddle/rnn_gru_seq_len_int64/inference.json", "paddle_rnn_gru_seq_len_int64", []),
    ("tests/paddle/rnn_lstm_float64_bidirec/inference.json", "paddle_rnn_lstm_float64_bidirec", []),
    ("tests/paddle/broadcast_tensors_dynamic/inference.json", "paddle_broadcast_tensors_dynamic", []),
    # bicubic_interp and prior_box (issue 34's CLIP and BlazeFace ops); an interpolation sized by its size tensors'
    # values (SOLOv2), its shape rule run on the host (kforge_shape_meta_interp.h)
    ("tests/paddle/bicubic_interp_nhwc_float64/inference.json", "paddle_bicubic_interp_nhwc_float64", []),
    ("tests/paddle/prior_box_max_flip_clip/inference.json", "paddle_prior_box_max_flip_clip", ["--cuda-graph"]),
    ("tests/paddle/bilinear_out_size_from_input/inference.json", "paddle_bilinear_out_size_from_input", []),
    # cast outside fused groups (uint8 / int8: SOLOv2's mask; a float truncated as the CPU kernel's convert)
    ("tests/paddle/cast_bool_to_uint8/inference.json", "paddle_cast_bool_to_uint8", ["--cuda-graph"]),
    ("tests/paddle/cast_float_to_uint8_int8/inference.json", "paddle_cast_float_to_uint8_int8", []),
    # fft_r2c through cuFFT, real / abs of its complex result (kforge_cufft.cuh; issue 34's FNet and TimesNet): all
    # axes of a dynamic batch, one middle axis (x permuted first), two axes ortho float64, the inverse sign, two-sided
    ("tests/paddle/fft_fftn_real/inference.json", "paddle_fft_fftn_real", []),
    ("tests/paddle/fft_rfft_abs/inference.json", "paddle_fft_rfft_abs", []),
    ("tests/paddle/fft_rfft2_ortho_float64/inference.json", "paddle_fft_rfft2_ortho_float64", []),
    ("tests/paddle/fft_ihfft_norms/inference.json", "paddle_fft_ihfft_norms", []),
    ("tests/paddle/fft_full_odd/inference.json", "paddle_fft_full_odd", []),
    # distribute_fpn_proposals read only through the shapes of its results: it runs for its counts
    ("tests/paddle/distribute_fpn_proposals_shapes_only/inference.json", "paddle_distribute_fpn_shapes_only", []),
]
# Programs whose matmul is no GEMM (a vector operand: codegen/cuda_index.h's kernel).
NO_GEMM = {"paddle_matmul_vector_batched"}
GEMM_HEADERS = ["kforge_gemm.cuh", "kforge_cublaslt.cuh", "kforge_half.cuh"]
# Linked with the GPU check's harness (tests/gpu/harness.cu), one program per library and kind of class (cuDNN,
# cuBLASLt, the multi-kernel GEMMs, 16-bit, graphs). The others are linked to an empty main: the harness adds about
# 8 s of compiling to each program, for nothing the generated code itself is checked by (on a 2-core machine the
# whole list took 12 min all linked with the harness, 7.4 min after this and kforge_cudnn.cuh's trimmed kernels
# together; the two were not measured apart).
HARNESS_LINKED = {"conv_net", "gemm_mlp_mk", "half_fp16_mk", "paddle_conv2d_transpose", "conv_net_fp16"}
MK_HEADERS = ["kforge_cuda_timer.cuh", "kforge_multikernel.h"]
MK_GEMM_HEADERS = ["kforge_gemm_f32.cuh"]
MK_ROW_HEADERS = ["kforge_row_variants.cuh"]
CONV_HEADERS = [
    "kforge_cudnn.cuh", "kforge_cudnn_backend.cuh", "kforge_cudnn_graph.cuh", "kforge_channel_epilogue.cuh", "kforge_depthwise.cuh", "kforge_half.cuh"
]
POOL_HEADERS = ["kforge_pool.cuh", "kforge_half.cuh"]
INDEX_HEADERS = ["kforge_index.cuh", "kforge_sampling.h"]  # the interpolation helpers and what they include


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kforge", required=True)
    parser.add_argument("--source-root", required=True)
    parser.add_argument("names", nargs="*", help="only these programs (class names; default: all)")
    parser.add_argument("--shard", default="0/1", help="K/N: only the programs whose place in the list is K mod N "
                        "(meson runs N shards as tests of their own; shard 0 also checks the unsupported matmul)")
    args = parser.parse_args()
    shard, shards = (int(x) for x in args.shard.split("/"))
    selected = [p for i, p in enumerate(PROGRAMS) if i % shards == shard and (not args.names or p[1] in args.names)]
    nvcc = find_nvcc()
    if nvcc is None:
        print("nvcc not found: skipping")
        return 77
    root = args.source_root
    ex = os.path.join(root, "kernels")
    ops = ["--ops", os.path.join(ex, "ops.yaml"), "--ops", os.path.join(ex, "fusion.yaml"),
           "--op-compat", os.path.join(ex, "op_compat.yaml")]
    failed = False
    strict = ["-arch=sm_90", "-std=c++17", "-Werror", "all-warnings", "-Xcompiler", "-Wall,-Wextra", *CHECK_OPT_FLAGS]
    jobs = []
    unity, unity_libs = [], set()  # the programs compiled together (class name, units) and what they link

    def finish():
        nonlocal failed
        cmds, p = jobs.pop(0)
        out = p.communicate()[0]
        if p.returncode != 0:
            print("FAIL:", " && ".join(" ".join(c) for c in cmds), "\n", out)
            failed = True

    def start(*cmds):
        """Runs the commands one after the other (stopping at a failure), beside at most one other job."""
        if len(jobs) >= 2:  # 2 cores in CI
            finish()
        script = " && ".join(" ".join(shlex.quote(a) for a in c) for c in cmds)
        jobs.append((cmds, subprocess.Popen(["sh", "-c", script], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                            text=True)))

    with tempfile.TemporaryDirectory(prefix="kforge-cuda-") as tmp:
        # What the programs outside HARNESS_LINKED link with: a main that references nothing, so the link checks
        # exactly the generated objects' own references.
        stub_main = os.path.join(tmp, "stub_main.o")
        with open(os.path.join(tmp, "stub_main.cu"), "w") as stub:
            stub.write("int main() { return 0; }\n")
        r = subprocess.run([nvcc, *strict, "-c", os.path.join(tmp, "stub_main.cu"), "-o", stub_main],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0:
            print(f"FAIL: nvcc cannot compile an empty main:\n{r.stdout}")
            return 1
        for program, name, flags, *op_files in selected:
            gen = os.path.join(tmp, name)
            program_ops = [a for f in op_files[0] for a in ("--ops", os.path.join(root, f))] if op_files else ops
            namespace = [] if name in HARNESS_LINKED else ["--namespace", f"cuda_compile_{name}"]
            r = subprocess.run([args.kforge, "compile", os.path.join(root, program)] + program_ops +
                               ["-o", gen, "--name", name, "--target", "cuda"] + flags + namespace,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            if r.returncode != 0:
                print(f"FAIL kforge compile --target cuda {program}:\n{r.stdout}")
                failed = True
                continue
            host = open(os.path.join(gen, f"{name}.cu")).read()
            source = open(os.path.join(root, program)).read()
            # (index_ops: a float32 matmul in two levels of strided batches, and a float64 one as the index-mapped
            # kernel of codegen/cuda_index.h.)
            has_gemm = "matmul" in source and name not in NO_GEMM
            has_conv = "conv2d" in source  # conv2d, depthwise_conv2d: cuDNN
            has_pool = "pool2d" in source
            # kforge_index.cuh's helpers: interpolation, grid_sample, topk's rank, argsort's order, floor_divide,
            # uniform (and randint's draw), deformable_conv, and the header prelu's index-mapped kernel
            # (cuda_index_binary.cpp) brings with it
            has_interp = any(op in source for op in ("_interp", "grid_sample", "topk", "argsort", "floor_divide",
                                                     "uniform", "1.prelu", "deformable_conv", "1.randint"))
            half = "float16" in source or "--precision" in flags  # float16 or bfloat16 values
            mk = "--multi-kernel-hints" in flags
            kernels = open(os.path.join(gen, f"{name}_kernels.cu")).read()
            has_rows = "_launch<" in kernels  # the row kernels' launch helper
            required = [f"{name}.h", f"{name}.cu", f"{name}_kernels.cu", "kforge_runtime.h", "kforge_params.h",
                        "kforge_cuda_runtime.h",
                        "kforge_fused.cuh"] + (GEMM_HEADERS if has_gemm else []) + \
                (CONV_HEADERS if has_conv else []) + (POOL_HEADERS if has_pool else []) + \
                (INDEX_HEADERS if has_interp else [])
            if mk or has_conv:  # every convolution's method is a multi-kernel pick
                required += MK_HEADERS
            if mk:
                required += (MK_GEMM_HEADERS if has_gemm else []) + (MK_ROW_HEADERS if has_rows else [])
            if half and mk:
                required.append("kforge_gemm_tc.cuh")  # these programs have untransposed 16-bit GEMM sites
            if half and not has_gemm:
                required.append("kforge_half.cuh")
            if "batch_norm" in source:  # a batch norm outside every convolution group: the epilogue kernel
                required += ["kforge_channel_epilogue.cuh", "kforge_half.cuh"]
            if "kforge::cuda_conv::run_padded(" in host:
                required.append("kforge_conv_pad.cuh")  # an asymmetric padding
            has_cudnn_attention = "kforge::cuda_attention::AttentionSite<" in host  # 16-bit: kernel or cuDNN's
            if has_cudnn_attention:
                required += ["kforge_attention.cuh", "kforge_attention_tile.cuh", "kforge_cudnn_backend.cuh",
                             "kforge_cudnn_attention.cuh"]
                required += MK_HEADERS
            if "kforge::cuda_attention::attention_float<" in host:  # the float32 kernel, over the tile header's args
                required += ["kforge_attention_f32.cuh", "kforge_attention_tile.cuh", "kforge_half.cuh"]
            if re.search(r"kforge::cuda_select::(nonzero|masked_select|unique)", host):  # the compactions
                required.append("kforge_select.cuh")
                if re.search(r"kforge::cuda_select::unique(_axis)?<", host):
                    required.append("kforge_unique.cuh")
            if re.search(r"kforge::cuda_select::(generate|distribute_fpn)_proposals<", host):  # kforge_index.cuh's sorts
                required += ["kforge_proposals.cuh"] + INDEX_HEADERS
            if "kforge::cuda_rnn::rnn<" in host:  # an rnn
                required.append("kforge_rnn.cuh")
            has_fft = "kforge::cuda_fft::fft_r2c<" in host  # cuFFT
            if has_fft:
                required.append("kforge_cufft.cuh")
            if "kforge::shape_meta::" in host:  # dims read from a tensor's values, by a shape rule on the host
                required.append("kforge_shape_meta.h")
            if "kforge::shape_meta::InterpolateInferMeta(" in host:  # an interpolation's size from its size tensors
                required.append("kforge_shape_meta_interp.h")
            written = sorted(os.listdir(gen))
            if written != sorted(set(required)):
                print(f"FAIL {program} {flags}: wrote {written}, expected {sorted(set(required))}")
                failed = True
                continue
            if "launch_failed(" not in host or ("fused_" in host and "return cudaGetLastError();" not in kernels):
                print(f"FAIL {program}: no error check after the launches")
                failed = True
            if ("--cuda-graph" in flags) != ("graphs_.launch(" in host):
                print(f"FAIL {program}: graph replay present/absent against the flag")
                failed = True
            if has_gemm and ("gemm_failed(" not in host or
                             (re.search(r"GemmF32MultiKernel|GemmMultiKernel<", host) is not None) != mk or
                             ("prepare_gemms(kforge_b)" in host) != ("--cuda-graph" in flags)):
                print(f"FAIL {program} {flags}: the GEMM calls do not match the flags")
                failed = True
            if has_rows and (("RowMultiKernel" in host) != mk or ("_variant(int variant" in kernels) != mk or
                             ("prepare_rows(kforge_b)" in host) != (mk and "--cuda-graph" in flags)):
                print(f"FAIL {program} {flags}: the row dispatchers do not match the flags")
                failed = True
            units = [f"{name}_kernels.cu", f"{name}.cu"]
            if has_conv and ("cudnnConvolutionForward" not in open(os.path.join(gen, "kforge_cudnn.cuh")).read() or
                             "convs_->sites[" not in host or ("prepare_convs(kforge_b)" in host) != ("--cuda-graph" in flags)):
                print(f"FAIL {program} {flags}: the convolutions do not match the flags")
                failed = True
            if has_cudnn_attention and ("attention_->site0.run(" not in host or
                                        ("prepare_attention(kforge_b)" in host) != ("--cuda-graph" in flags)):
                print(f"FAIL {program} {flags}: the 16-bit attention sites do not match the flags")
                failed = True
            libs = (["-lcublasLt", "-lcublas"] if has_gemm else []) + \
                (["-lcudnn"] if has_conv or has_cudnn_attention else []) + (["-lcufft"] if has_fft else [])
            fp32 = ["-DKFORGE_STRICT_FP32"] if has_conv else []
            if name in HARNESS_LINKED:
                # The GPU check's harness and both units, linked: the harness compiles against the class.
                start([nvcc, *strict, *fp32, "-I", gen, "-I", os.path.join(root, "tools", "interp"),
                       f"-DKFORGE_PROGRAM_HEADER=\"{name}.h\"", f"-DKFORGE_PROGRAM_CLASS={name}",
                       os.path.join(root, "tests", "gpu", "harness.cu"),
                       *[os.path.join(gen, u) for u in units], "-o", os.path.join(gen, name), *libs])
            else:
                unity.append((name, units))
                unity_libs.update(libs)
        # The other programs, each in its own namespace, as two units for the shard: every program's kernels
        # file in one, every host file in the other (each file was written to compile alone, so files of one kind
        # from different programs, in different namespaces, compile together). nvcc then parses the CUDA runtime,
        # cuDNN and cuBLASLt headers twice per shard instead of twice per program. The two units, linked to the
        # empty main, must resolve every symbol they reference.
        if unity:
            objects = []
            for kind, pick in (("kernels", 0), ("host", 1)):
                source = os.path.join(tmp, f"shard_{kind}.cu")
                with open(source, "w") as f:
                    f.write("".join(f'#include "{name}/{units[pick]}"\n' for name, units in unity))
                objects.append(source[:-3] + ".o")
                start([nvcc, *strict, "-I", tmp, "-c", source, "-o", objects[-1]])
            while jobs:
                finish()
            if not failed:
                start([nvcc, "-arch=sm_90", stub_main, *objects, "-o", os.path.join(tmp, "shard"),
                       *sorted(unity_libs, key=lambda l: ["-lcublasLt", "-lcublas", "-lcudnn", "-lcufft"].index(l))])
        while jobs:
            finish()

        # A matmul that neither a GEMM nor the batched kernel computes (int32) is an error at its place, saying why.
        r = None if shard != 0 else subprocess.run([args.kforge, "compile", os.path.join(root, "tests/e2e/fused/gemm_unsupported.yaml")] + ops +
                           ["-o", os.path.join(tmp, "unsupported"), "--target", "cuda"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        want = "gemm_unsupported.yaml:7:5: error: --target cuda: matmul (pd_op.matmul) has no CUDA GEMM: x is int32"
        if r is not None and (r.returncode != 1 or want not in r.stdout or
                              "no batched kernel: it computes on int32 values" not in r.stdout):
            print(f"FAIL: expected a located error for the matmul, got exit {r.returncode}:\n{r.stdout}")
            failed = True
    if not failed:
        print(f"{len(selected)} programs (shard {shard} of {shards}): kforge --target cuda output compiles with nvcc -arch=sm_90 -Werror")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
