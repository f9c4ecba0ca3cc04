#!/bin/bash
# GPU correctness check of whole zoo models under `kforge compile --target cuda` (issue 14): one model per op
# family the CUDA backend runs, each exported by bench/cuda_models/export_fixtures.py from tools/paddle_zoo (realistic
# random weights rounded to q * 2^-k, seeded inputs, Paddle's CPU predictor's outputs as expected_<i>.npy):
#   resnet18 64x64 batch 2          cuDNN convolutions with epilogues, pools, GEMM
#   mobilenet_v2 64x64 batch 2      depthwise convolutions, relu6, dropout (downgrade_in_infer: x * (1 - p))
#   shufflenet_v2_x1_0 64x64 b. 2   split, transpose (channel shuffle), concat
#   densenet121 64x64 batch 2       concat (58 of them), batch norm outside convolution groups
#   squeezenet1_0 64x64 batch 2     concat, dropout
#   mobilenet_v3_small 64x64 b. 2   hardswish, squeeze-excitation broadcasts, dropout
#   ocr_static 64x64 batch 2        the zoo's PP-OCR-style detector with static spatial dims: nearest interpolation,
#                                   concat, conv2d_transpose (cuDNN backward data)
#   ppocr_det_head 64x64, 96x128 (batch 2): the same detector exported with dynamic H and W, as the zoo has it:
#                                   every spatial dim an expression of the input's, the FPN's upsampled maps added to
#                                   the lateral ones (dims taken as equal, checked at run time)
#   transformer_encoder_postnorm, transformer_encoder_prenorm (seq 8, batch 2), gpt_block (seq 8, batch 2):
#                                   GEMMs, layer_norm rows, embedding, triu, arange; the attention of every float32
#                                   transformer here is one fused float32 kernel (kforge_attention_f32.cuh, head dim
#                                   16; the *_h64 models' 64)
#   transformer_decoder_postnorm, transformer_decoder_prenorm (target seq 8, memory seq 12, batch 2): cross-
#                                   attention over two inputs whose dynamic batches meet in broadcasts (one symbol
#                                   under --target cuda, checked equal at run time)
#   bert_encoder (length 12, batch 2): ids [-1, -1]; position ids an arange over the length taken from the shape,
#                                   the padding mask broadcast into the attention's softmax rows over dynamic dims
#   gpt_decoder (length 30, batch 2), gpt_decode_step (cache length 12, batch 2): a GPT-2-style prefill whose causal
#                                   mask is built from the run-time length (full_with_tensor, triu), and the decode
#                                   step over key / value caches of run-time length (concat; the caches' batch and
#                                   length taken equal to the new token's, checked at run time)
# and the Paddle op fixtures of tests/paddle (Paddle's own inputs and outputs, checked in) of every index-mapped op
# (OP_CASES: transpose, concat, split, slice, strided_slice, pad3d in four modes, expand, tile, gather, index_select,
# embedding, nearest and bilinear interpolation, triu, tril, arange, dropout; stack, meshgrid, the reductions, softmax,
# cumsum, one_hot and pow outside fused groups (issue 34); topk and argsort (ties and NaNs in the CPU kernel's order), gather_nd,
# scatter, roll, pad, add_n, set_value, matmuls with a vector operand, group_norm, p_norm, batch norms that are not
# 4-D, convolutions with asymmetric paddings, sigmoid_cross_entropy_with_logits, cross_entropy_with_softmax,
# mean_all, einsum, grid_sample, floor_divide and uniform (kforge's counter-based draws; issue 34, second batch);
# broadcast_tensors and rnn (kforge_rnn.cuh: LSTM, GRU, RNN_TANH / RNN_RELU); fft_r2c through cuFFT and real / abs of
# its complex result (kforge_cufft.cuh; linked with -lcufft); shapes, slice bounds, paddings and
# arange bounds taken from tensors computed from the dynamic dims (issue 33); transposes and an expand absorbed by
# elementwise and softmax groups), the convolutions (strided, padded,
# grouped, dilated, NHWC, depthwise with 3 channels: the depthwise kernel's scalar path) and conv2d_transpose,
# each compiled with --cuda-graph, once per layout of LAYOUTS (default "nchw nhwc": kforge compile --layout; the
# NHWC ones are named NAME@nhwc: KRSC filters rewritten at bind, the direct depthwise kernel), run on the GPU by tests/gpu/harness.cu (outputs poisoned before the run that
# counts; a second run into fresh tensors must be bit-identical) on the fixture's input and weights, and compared with
# Paddle's outputs by tests/gpu/fixture_bundle.py: PASS when |gpu - paddle| <= 1e-4 * max|paddle| + 1e-5 for
# every element (TF32 off: the harness is built with -DKFORGE_STRICT_FP32), as tests/gpu/check_conv.sh. Prints
# one line per model with the largest relative error (max|gpu - paddle| / max|paddle|).
#
# MODEL_CASES may name the real architectures as real_NAME (tools/paddle_zoo/models.py real_zoo; the PP-OCRv5 ones
# need KFORGE_PADDLEOCR, a PaddleOCR extract): their fixtures hold the float64 run of the same model, and an output
# whose error exceeds the bound below still passes when its distance from float64 is at most 1.5x Paddle's own
# float32 output's (fixture_bundle.py compare; docs/model-zoo.md "The real architectures on the GPU"). PaddleDetection's
# detectors (real_ppyoloe_plus_s, real_picodet_s: PADDLE_PYTHON a venv with paddledet; real_rtdetr_r18: also
# KFORGE_PADDLEDETECTION, a PaddleDetection extract) are cases NAME:0:BATCH (their fixed image size).
#
# With GRAPHNET_WORK=DIR at prepare (a `tools/check-graphnet --target cuda --keep --work-dir DIR` run), the GraphNet
# samples it generated CUDA code for are checked too, as fixtures gn_<source>_<model>[_subgraph_N] (docs/model-zoo.md);
# those whose weights, inputs and outputs take more than GRAPHNET_MAX_MB (default 6) are left out. With
# GRAPHNET_RESEED=1 their weights are replaced by seeded ones of the same scale and spread and Paddle's outputs are
# computed anew (bench/cuda_models/reseed_fixture.py): only the seeds travel, and so do those of large float32
# inputs (input_NAME.seed), so mostly the outputs count.
#
# The weights travel as one byte per value (bench/cuda_models/q8_params.py, rebuilt bit for bit on the GPU machine),
# so the carried directory stays under 50 MB; the harnesses are built where they run. Models whose weights are too
# large even so (vgg11, vgg16, alexnet) are cases ending in :seeded (MODEL_CASES="vgg16:64:2:seeded ..."): their
# weights are made from seeds on both machines (q8_params.reseed) and only the seeds travel.
#
#   tests/gpu/check_models.sh prepare BUILD   build machine: kforge (BUILD/src/kforge) and Paddle (PADDLE_PYTHON,
#                                             default BUILD/paddle-venv/bin/python) -> BUILD/models-gpucheck/
#   [PRECISIONS="float32 float16 bfloat16"] tests/gpu/check_models.sh prepare BUILD    (the 16-bit ones too)
#   [TF32=1] [RESUME=1] tests/gpu/check_models.sh run BUILD
#                                             (RESUME=1: keep the harnesses a run cut short already built)
#                                             GPU machine, carrying BUILD/models-gpucheck: builds the harnesses
#                                             with nvcc (all cores), runs them; cuDNN 9 from PyTorch's
#                                             site-packages (nvidia/cudnn) or the toolkit
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
# shellcheck source=bench/cudnn_env.sh
source "$ROOT/bench/cudnn_env.sh"
NVCC="${NVCC:-/usr/local/cuda/bin/nvcc}"
# Paddle 3.3.1: PADDLE_PYTHON, else the virtual environment tools/check-paddle-models creates in BUILD/paddle-venv.
PADDLE_PYTHON="${PADDLE_PYTHON:-}"
BUNDLE="$ROOT/tests/gpu/fixture_bundle.py"
# TF32=1 (at run): the harnesses keep TF32 on for the convolutions (the generated classes' default, as torch's), and
# the tolerance is docs/compile.md's for TF32, 3e-2 * max|paddle| + 1e-5 (TF32 rounds the convolutions' operands to
# 10-bit mantissas; mobilenet_v2 measured 1.9e-2 on an H100, BENCHMARKS.md).
TF32="${TF32:-0}"
RTOL=1e-4
[[ "$TF32" == 1 ]] && RTOL=3e-2
ATOL=1e-5
# MODEL:SIZE:BATCH (bench/cuda_models/export_fixtures.py); MODEL_CASES replaces the list at prepare time. googlenet
# (192:1, 12 MB of weights as bytes) is left out to keep the carried directory under 50 MB; densenet121 has concats.
CASES="${MODEL_CASES:-resnet18:64:2 mobilenet_v2:64:2 shufflenet_v2_x1_0:64:2 densenet121:64:2 squeezenet1_0:64:2
mobilenet_v3_small:64:2 ocr_static:64:2 ppocr_det_head:64x64:2 ppocr_det_head:96x128:2 transformer_encoder_postnorm:0:2
transformer_encoder_prenorm:0:2
transformer_decoder_postnorm:0:2 transformer_decoder_prenorm:0:2 gpt_block:0:2 bert_encoder:0:2 gpt_decoder:0:2
gpt_decode_step:0:2}"
# tests/paddle fixtures (OP_CASES, even empty, replaces the list at prepare time)
OP_CASES="${OP_CASES-arange clip_tensor_max clip_tensor_bounds_f64 attention_decode_step concat_kv_cache_pair flip bilinear_interp bilinear_interp_align_corners bilinear_interp_align_mode1_nhwc bilinear_interp_dynamic
bilinear_interp_f64 concat concat_bool concat_dynamic concat_neg_axis_int64 conv2d_transpose dropout_eval
dropout_eval_downscale embedding embedding_padding_idx expand expand_int64 gather gather_int32_axis0 index_select
nearest_interp nearest_interp_dynamic nearest_interp_size pad3d_circular_ndhwc pad3d_replicate pad_constant pad_reflect
slice slice_neg split_num split_sections strided_slice tile tile_int64 transpose_bool transpose_dynamic
transpose_float32 transpose_float64 transpose_int32 transpose_int64 transpose_fused transpose_fused_dynamic
transpose_softmax expand_fused tril triu conv2d conv2d_bias_stride_pad
conv2d_dilation_groups conv2d_dynamic_batch conv2d_nhwc depthwise_conv2d conv_region_nhwc
reshape_heads_dynamic arange_dynamic arange_dynamic_start_step slice_dynamic_end slice_dynamic_start expand_dynamic
position_ids_dynamic reshape_stack_dynamic reshape_concat_cast_dynamic split_shape_dynamic prod_shape_dynamic
full_with_tensor_dynamic pad_to_multiple_dynamic strided_slice_dynamic strided_slice_dynamic_end
interpolate_size_dynamic interpolate_size_dynamic_b2 bilinear_size_dynamic causal_mask_dynamic causal_mask_dynamic_b1
bert_like_dynamic bert_like_dynamic_b3 full_like assign share_data_float32 min_all any_bool all_bool any_every_axis
bce_loss attention matmul_batched matmul_broadcast_batch bmm stack meshgrid_3_int64 meshgrid_anchors sum_float32 sum_int64 sum_keepdim max_float64 max_int32 min_float32
min_keepdim prod_float32 prod_int64 prod_all any_keepdim all_int64 softmax_axis1 cumsum_float32 cumsum_int64
cumsum_flatten cumsum_axis0_dynamic one_hot one_hot_int32 pow_scalar_float32 pow_scalar_float64 pow_scalar_int64
pow_sqrt leaky_relu leaky_relu_slope2 leaky_relu_conv
topk_float32 topk_float64 topk_smallest_axis0 topk_dynamic topk_ties topk_ties_axis0 topk_ties_partial
topk_ties_smallest_unsorted fetch_copies multiply_bool set_value_on_mask gather_nd_bool
gather_nd_dynamic gather_nd_full_index gather_nd_int32 gather_nd_int64 gather_nd_rows scatter_add scatter_overwrite roll
roll_flat pad_float32 pad_float64 pad_int32 pad_int64 pad_rank1 pad_rank3 add_n matmul_vector matmul_vector_y
matmul_vector_dot matmul_vector_batched group_norm group_norm_nhwc p_norm_0 p_norm_1 p_norm_2 p_norm_3 p_norm_half
p_norm_inf p_norm_neg_inf p_norm_float64 p_norm_normalize p_norm_vector set_value_scalar set_value_int64
set_value_dynamic_end set_value_tensor_negative_step set_value_bounds_from_data set_value_step_from_data
conv2d_clip_inf conv2d_relu_nan relu6_relu_nan activations_nonfinite pool_nonfinite
softmax_layer_norm_nonfinite matmul_relu_nonfinite take_along_axis_int32 take_along_axis_int64 take_along_axis_broadcast
take_along_axis_negative clip_min_neg_inf_pad_neg_inf conv2d_asym_pad conv2d_asym_pad_stride2 conv2d_asym_pad_nhwc
depthwise_conv2d_asym_pad batch_norm_2d batch_norm_3d batch_norm_nlc batch_norm_5d sigmoid_ce_logits
sigmoid_ce_logits_float64 sigmoid_ce_logits_mean sigmoid_ce_logits_pos_weight cross_entropy_no_softmax
cross_entropy_softmax cross_entropy_softmax_axis1_int32 cross_entropy_softmax_float32_wide
cross_entropy_softmax_float64_wide cross_entropy_softmax_ignore cross_entropy_softmax_soft einsum_batched einsum_outer
einsum_transpose_sum grid_sample_bilinear_zeros_ac grid_sample_bilinear_zeros_noac grid_sample_bilinear_border_ac
grid_sample_bilinear_border_noac grid_sample_bilinear_reflection_ac grid_sample_bilinear_reflection_noac
grid_sample_nearest_zeros_ac grid_sample_nearest_zeros_noac grid_sample_nearest_border_ac grid_sample_nearest_border_noac
grid_sample_nearest_reflection_ac grid_sample_nearest_reflection_noac grid_sample_float64 floor_divide_int32
floor_divide_int64 floor_divide_float32 floor_divide_float64 floor_divide_negative_divisor floor_divide_broadcast
floor_divide_broadcast_float uniform_float32 uniform_float64
prelu_channel_conv prelu_channel_nhwc prelu_all_float64 prelu_element index_sample_int32 index_sample_int64
linear_interp_size linear_interp_align_corners linear_interp_align_mode1 linear_interp_down linear_interp_dynamic
linear_interp_nwc linear_interp_same_width linspace linspace_int32 linspace_tensor_ends_float64 linspace_stop_int64_6
linspace_stop_int64_7 index_put_rows index_put_accumulate index_put_int64 deformable_conv_v2
deformable_conv_v1_stride_groups deformable_conv_v2_bias_float64 isnan isnan_int64 conv2d_asym_pad_dynamic_hw
full_with_tensor_bool_mask gelu_of_row_mean diag_vector diag_vector_offset diag_matrix diag_matrix_offset
diag_matrix_negative_offset argsort_float32 argsort_float64_descending_axis0 argsort_int32_ties argsort_int64_ties
argsort_ties argsort_ties_descending_long argsort_ties_stable argsort_ties_stable_descending_axis0 argsort_nan
argsort_nan_descending argsort_dynamic argsort_scores_dynamic sort_values depthwise_conv2d_transpose
expand_as_dynamic expand_as_float32 expand_as_int32 expand_as_int64
ceil_float32 ceil_float64 elu_float32 elu_float64 elu_alpha repeat_interleave_channels repeat_interleave_last_int64
repeat_interleave_dynamic randint_int64 randint_int32_dynamic
broadcast_tensors_3 broadcast_tensors_int64 broadcast_tensors_dynamic rnn_lstm rnn_lstm_2layer_bidirec
rnn_lstm_time_major_init rnn_lstm_seq_len_bidirec rnn_lstm_dynamic rnn_lstm_ocr rnn_lstm_float64_bidirec rnn_gru
rnn_gru_2layer_bidirec_dynamic rnn_gru_seq_len_int64 rnn_gru_float64 rnn_simple_tanh rnn_simple_relu_2layer_bidirec
rnn_simple_tanh_seq_len
bicubic_interp_up bicubic_interp_down_align_corners bicubic_interp_nhwc_float64 prior_box_blazeface
prior_box_dynamic_float64 prior_box_max_flip_clip
concat_kv_cache concat_rows_int64 stack_rows bitwise_and_bool bitwise_or_bool bitwise_not_bool if_data if_data_else if_length if_length_else
cast_bool_to_uint8 cast_float_to_uint8_int8 cast_uint8_to_float
maximum_nan_float32 maximum_nan_float64 minimum_nan_float32 minimum_nan_float64 fmax_nan_float32 fmax_nan_float64
fmin_nan_float32 fmin_nan_float64 fmax_int32 fmax_int64 fmin_int32 fmin_int64 log_softmax_float32 log_softmax_float64
log_softmax_axis0 roi_align_aligned_adaptive roi_align_aligned_sr2 roi_align_plain_adaptive roi_align_plain_sr2
roi_align_float64_one_image yolo_box_yolov3 yolo_box_iou_aware_float64 yolo_box_dynamic}"
# tests/paddle fixtures whose sizes depend on data (nonzero, masked_select, unique, the proposals' ops: the count comes
# back to the host in the middle of run(), which --cuda-graph refuses; docs/compile.md "Sizes that depend on data"),
# compiled without it: counts of 0, some and every element, a broadcast mask, a gather_nd and a shape of nonzero's
# result, generate_proposals' ties, no NMS and no box kept, distribute_fpn_proposals' levels (and only its results'
# shapes read); fft_r2c, whose cuFFT plan is made by the first run with new dims (which --cuda-graph refuses too).
NO_GRAPH_OP_CASES="${NO_GRAPH_OP_CASES-nonzero_bool nonzero_empty nonzero_gather_nd nonzero_shape masked_select_broadcast
masked_select_dynamic masked_select_scale unique_all unique_float_dynamic reshape_shape_from_data
reshape_computed_shape_from_data arange_end_from_data full_shape_from_data slice_end_from_data reshape_shape_from_input
expand_shape_from_input tile_from_input arange_end_from_input full_shape_from_input slice_end_from_input
shape_from_input_mix slice_start_dims_end_from_input slice_start_from_input slice_start_end_from_input
slice_neg_start_from_input slice_index_from_input slice_list_from_input reshape_shape_list_from_input
expand_shape_list_from_input full_shape_list_from_input unique_axis0 unique_axis1_float unique_axis0_dynamic
bilinear_size_tensor_from_input bilinear_out_size_from_input nearest_size_tensor_from_input bilinear_size_from_input
generate_proposals_rpn generate_proposals_sorted_pixel_offset generate_proposals_no_nms generate_proposals_none_kept
generate_proposals_dynamic_float64 distribute_fpn_proposals distribute_fpn_proposals_pixel_offset
distribute_fpn_proposals_restore distribute_fpn_proposals_dynamic_float64 distribute_fpn_proposals_reshape
distribute_fpn_proposals_shapes_only fft_fftn_real fft_rfft_abs fft_rfft2_ortho_float64 fft_ihfft_norms fft_full_odd}"
LAYOUTS="${LAYOUTS:-nchw nhwc}"
# PRECISIONS (at prepare): kforge compile --precision for each (default float32 alone); DTYPE/io adds
# --io-precision compute (16-bit inputs and outputs: NAME~float16io, the harness rounds the fixture's float32 inputs);
# the 16-bit ones are named NAME~float16 / NAME@nhwc~bfloat16, read the fixture's .pdiparams with load_parameters() (which rounds them) and are
# checked against Paddle's float32 outputs within 128 units of the type's rounding, 128 * 2^-11 (float16) or
# 128 * 2^-8 (bfloat16) times max|paddle|, + ATOL: measured on an H100, every zoo model here stays within 7 units
# but mobilenet_v2, whose random-weight fixture amplifies rounding (107 and 54 units; its TF32 error is the zoo's
# largest too), BENCHMARKS.md "16-bit compute". The models with gelu (gpt_block, bert_encoder, gpt_decoder) compute
# its tanh form in 16 bits (docs/compile.md, "The gelu's form"), within 4.73e-4 of Paddle's erf per activation. The
# FFN's second GEMM sums F of them with He-uniform weights (|w| <= sqrt(6 / F), F = 128 or 256): at most
# 4.73e-4 * sqrt(6 F) / 2 = 6.6e-3 / 9.3e-3 per layer if every difference met a weight of its sign, about
# 4.73e-4 * sqrt(2) = 6.7e-4 with random signs, against 128 units = 6.25e-2 (float16) times max|paddle| (> 1 for these
# layer-normed outputs and logits): covered with room over their 2 layers, no gelu term needed.
PRECISIONS="${PRECISIONS:-float32}"
RTOL_FLOAT16="${RTOL_FLOAT16:-6.25e-2}"
RTOL_BFLOAT16="${RTOL_BFLOAT16:-5e-1}"

build_one() {  # NAME GEN: the harness, linked with cuDNN / cuBLASLt when the program needs them
  local name="$1" gen="$2" libs=() defs=()
  # RESUME=1: a run cut short (a device call's time limit) goes on where it stopped, keeping the harnesses built.
  [[ "${RESUME:-0}" == 1 && -x "$OUT_DIR/harness_$name" ]] && return 0
  [[ -f "$gen/kforge_cudnn.cuh" && "$TF32" != 1 ]] && defs+=(-DKFORGE_STRICT_FP32)
  if [[ -f "$gen/kforge_cudnn.cuh" || -f "$gen/kforge_cudnn_attention.cuh" ]]; then
    if [[ -n "${CUDNN_DIR:-}" ]]; then
      libs+=(-I "$CUDNN_DIR/include" -L "$CUDNN_DIR/lib" -l:libcudnn.so.9)
    else
      libs+=(-lcudnn)
    fi
  fi
  [[ -f "$gen/kforge_cublaslt.cuh" ]] && libs+=(-lcublasLt -lcublas)
  [[ -f "$gen/kforge_cufft.cuh" ]] && libs+=(-lcufft)
  "$NVCC" -arch=sm_90 -std=c++17 -O2 -Werror all-warnings -I "$gen" -I "$ROOT/tools/interp" "${defs[@]}" \
    -DKFORGE_PROGRAM_HEADER="\"model.h\"" -DKFORGE_PROGRAM_CLASS=model "$ROOT/tests/gpu/harness.cu" \
    "$gen/model.cu" "$gen/model_kernels.cu" -o "$OUT_DIR/harness_$name" "${libs[@]}" > "$OUT_DIR/build_$name.log" 2>&1 ||
    echo "build of $name failed: $OUT_DIR/build_$name.log" >&2
}

# Whether a Paddle PIR JSON program declares parameters (ops "p", builtin.parameter, in its top block).
program_has_parameters() {
  /usr/bin/python3 -c 'import json, sys
ops = json.load(open(sys.argv[1]))["program"]["regions"][0]["blocks"][0]["ops"]
sys.exit(0 if any(op.get("#") == "p" for op in ops) else 1)' "$1"
}

prepare() {
  local build="$1" ex="$ROOT/kernels" names=()
  # FIXTURE NAME: gen_NAME (the first layout of LAYOUTS) and gen_NAME@LAYOUT (the others), each listed in names.
  compile_layouts() {  # FIXTURE NAME [GRAPH: --cuda-graph unless "no-graph"]
    local layout tag precision dtype io graph=(--cuda-graph)
    [[ "${3-}" == no-graph ]] && graph=()
    for precision in $PRECISIONS; do
      dtype="${precision%/io}" io=()
      [[ "$precision" == */io ]] && io=(--io-precision compute)
      for layout in $LAYOUTS; do
        tag="$2$([[ "$layout" == "${LAYOUTS%% *}" ]] || echo "@$layout")$([[ "$dtype" == float32 ]] || echo "~$dtype")"
        [[ "$precision" == */io ]] && tag+=io
        "$build/src/kforge" compile "$1/inference.json" --ops "$ex/ops.yaml" --ops "$ex/fusion.yaml" \
          --op-compat "$ex/op_compat.yaml" -o "$OUT_DIR/gen_$tag" --name model --target cuda "${graph[@]}" \
          --layout "$layout" --precision "$dtype" "${io[@]}" || return 1
        names+=("$tag")
      done
    done
  }
  export OUT_DIR="$build/models-gpucheck"
  PADDLE_PYTHON="${PADDLE_PYTHON:-$build/paddle-venv/bin/python}"
  rm -rf "$OUT_DIR" && mkdir -p "$OUT_DIR/fixtures"
  [[ -x "$PADDLE_PYTHON" ]] || { echo "no Paddle at $PADDLE_PYTHON (set PADDLE_PYTHON)" >&2; exit 1; }
  # shellcheck disable=SC2086
  "$PADDLE_PYTHON" "$ROOT/bench/cuda_models/export_fixtures.py" "$OUT_DIR/fixtures" $CASES 2>&1 | grep -v "^W[0-9]\|Warning" || true
  for c in $CASES; do
    # NAME:HxW:BATCH (dynamic spatial dims) exports to NAME_HxW, NAME:sK:BATCH (the K-th size) to NAME_sK
    # (export_fixtures.py, fixture_name); a case ending in
    # :seeded has its params.q8 written by the export (seeded weights, q8_params.reseed).
    local name="${c%%:*}" size="${c#*:}"
    size="${size%%:*}"
    [[ "$size" == *x* || "$size" == s[0-9]* ]] && name="${name}_$size"
    local fixture="$OUT_DIR/fixtures/$name"
    [[ -f "$fixture/expected_0.npy" ]] || { echo "export of $name failed" >&2; exit 1; }
    compile_layouts "$fixture" "$name"
    [[ -f "$fixture/params.q8" ]] || /usr/bin/python3 "$ROOT/bench/cuda_models/q8_params.py" pack "$fixture/inference.pdiparams" "$fixture/params.q8"
    rm -f "$fixture/inference.pdiparams" "$fixture/inference.json"  # packed / compiled: not carried
  done
  for c in $OP_CASES $NO_GRAPH_OP_CASES; do
    local fixture="$OUT_DIR/fixtures/op_$c"
    cp -r "$ROOT/tests/paddle/$c" "$fixture"
    compile_layouts "$fixture" "op_$c" "$([[ " ${NO_GRAPH_OP_CASES//$'\n'/ } " == *" $c "* ]] && echo no-graph)"
    [[ -f "$fixture/inference.pdiparams" ]] &&
      /usr/bin/python3 "$ROOT/bench/cuda_models/q8_params.py" pack "$fixture/inference.pdiparams" "$fixture/params.q8" > /dev/null
    rm -f "$fixture/inference.pdiparams" "$fixture/inference.json"
  done
  # GraphNet samples: each one `tools/check-graphnet --target cuda --keep` generated CUDA code for in GRAPHNET_WORK
  # becomes fixture gn_<its path, / as _>: its program and weights, the inputs Paddle's predictor ran on and its
  # outputs (that tool's export).
  if [[ -n "${GRAPHNET_WORK:-}" ]]; then
    local result dir slug fixture f
    while IFS= read -r result; do
      grep -q '"status": "generated"' "$result" || continue
      dir="$(dirname "$result")"
      slug="gn_$(realpath --relative-to="$GRAPHNET_WORK" "$dir" | tr '/' '_')"
      fixture="$OUT_DIR/fixtures/$slug"
      # A work directory trimmed for disk keeps a sample's tables but not its export.
      if [[ ! -f "$dir/export/inference.json" ]]; then
        echo "GraphNet sample $dir: its export was deleted (tools/check-graphnet --keep makes it again), not carried" >&2
        continue
      fi
      # A CPU check drops a sample's weights once it is done: without them Paddle's outputs cannot be recomputed
      # and the generated class has nothing to load.
      if [[ ! -f "$dir/export/inference.pdiparams" ]] && program_has_parameters "$dir/export/inference.json"; then
        echo "GraphNet sample $dir: its weights were not kept (tools/check-graphnet --target cuda --keep exports" \
          "them again), not carried" >&2
        continue
      fi
      mkdir -p "$fixture"
      if [[ "${GRAPHNET_RESEED:-0}" == 1 ]]; then
        # Weights from seeds, Paddle's outputs computed anew with them (reseed_fixture.py): any weight size fits.
        "$PADDLE_PYTHON" "$ROOT/bench/cuda_models/reseed_fixture.py" "$dir/export" "$dir/inputs" "$dir/paddle" \
          "$fixture" 3 2>&1 | grep -v "^W[0-9]\|Warning\|warn" || true
        [[ -f "$fixture/expected_0.npy" ]] || { echo "GraphNet sample $dir: no expected outputs (above), not carried" >&2
                                                rm -rf "$fixture"; continue; }
      else
        [[ -f "$dir/export/inference.pdiparams" ]] &&
          /usr/bin/python3 "$ROOT/bench/cuda_models/q8_params.py" pack "$dir/export/inference.pdiparams" "$fixture/params.q8" > /dev/null
        for f in "$dir"/inputs/*.npy; do cp "$f" "$fixture/input_$(basename "$f")"; done
        for f in "$dir"/paddle/*.npy; do cp "$f" "$fixture/expected_$(basename "$f")"; done
      fi
      # Weights drawn from normal distributions travel as raw float32 (q8_params keeps what it cannot pack), and
      # GraphNet's inputs can be large batches: a sample whose fixture exceeds GRAPHNET_MAX_MB stays behind, so that
      # the carried folder fits a device call.
      if (($(du -sm "$fixture" | cut -f1) > ${GRAPHNET_MAX_MB:-6})); then
        echo "GraphNet sample $dir: weights, inputs and outputs over ${GRAPHNET_MAX_MB:-6} MB, not carried" >&2
        rm -rf "$fixture"
        continue
      fi
      cp "$dir/export/inference.json" "$fixture/"
      # A sample with data-dependent sizes (nonzero) cannot be a CUDA graph: its launches then run one by one.
      compile_layouts "$fixture" "$slug" 2> /dev/null || compile_layouts "$fixture" "$slug" no-graph ||
        { echo "GraphNet sample $dir: kforge did not compile it" >&2; rm -rf "$fixture"; continue; }
      rm -f "$fixture/inference.json"
    done < <(find "$GRAPHNET_WORK" -name result-cuda.json | sort)
  fi
  echo "${names[*]}" > "$OUT_DIR/models"
  echo "prepared $OUT_DIR ($(du -sh "$OUT_DIR" | cut -f1))"
}

run() {
  export OUT_DIR="$1/models-gpucheck"
  local tmp name passed=0 total=0 failed=0
  use_wheel_cudnn
  export NVCC ROOT TF32 RESUME
  export -f build_one
  # The list is one line; a hand-edited one may lack its newline, on which `read` fails (and set -e would stop here).
  read -r -a names < "$OUT_DIR/models" || [[ ${#names[@]} -gt 0 ]]
  # Weights (once per fixture) and input bundles (one per compiled layout: the input order is the header's), Python,
  # one per core; then the harnesses (nvcc, one per core).
  for name in "${names[@]}"; do echo "${name%%[@~]*}"; done | sort -u |
    xargs -P "$(nproc)" -I{} bash -c 'f="$OUT_DIR/fixtures/{}" &&
    { [[ ! -f "$f/params.q8" ]] || /usr/bin/env python3 "'"$ROOT"'/bench/cuda_models/q8_params.py" unpack "$f/params.q8" "$f/inference.pdiparams"; } &&
    { ! compgen -G "$f/input_*.seed" > /dev/null || /usr/bin/env python3 "'"$ROOT"'/bench/cuda_models/q8_params.py" inputs "$f"; }'
  for name in "${names[@]}"; do echo "$name"; done | xargs -P "$(nproc)" -I{} bash -c 'n="{}" &&
    /usr/bin/env python3 "'"$BUNDLE"'" bundle "$OUT_DIR/fixtures/${n%%[@~]*}" "$OUT_DIR/gen_{}/model.h" "$OUT_DIR/{}.in.bin" \
    $([[ "$n" == *~* ]] && echo --inputs-only)'
  for name in "${names[@]}"; do echo "$name"; done | xargs -P "$(nproc)" -I{} bash -c 'build_one {} "$OUT_DIR/gen_{}"'
  tmp="$(mktemp -d)"
  printf '%-36s %-6s %s\n' model result "max relative error (max|gpu - paddle| / max|paddle|)"
  for name in "${names[@]}"; do
    total=$((total + 1))
    local rel="-" rtol="$RTOL" load=()
    # A --precision program reads the fixture's float32 .pdiparams itself (load_parameters rounds them).
    if [[ "$name" == *~* ]]; then
      rtol="$RTOL_FLOAT16"
      [[ "$name" == *~bfloat16* ]] && rtol="$RTOL_BFLOAT16"
      local pdiparams="$OUT_DIR/fixtures/${name%%[@~]*}/inference.pdiparams"
      [[ -f "$pdiparams" ]] && load=(--load-parameters "$pdiparams")
    fi
    if [[ -x "$OUT_DIR/harness_$name" ]] &&
       "$OUT_DIR/harness_$name" "$OUT_DIR/$name.in.bin" "$tmp/out.bin" "${load[@]}" > "$tmp/log" 2>&1 &&
       /usr/bin/env python3 "$BUNDLE" compare "$tmp/out.bin" "$OUT_DIR/fixtures/${name%%[@~]*}" "$rtol" "$ATOL" > "$tmp/cmp"; then
      rel="$(sed -n 's/.*relative \([^)]*\)).*/\1/p' "$tmp/cmp" | sort -g | tail -1)"
      printf '%-36s %-6s %s\n' "$name" PASS "$rel"
      sed -n 's/.*; \(from float64: .*\) ok$/    \1/p' "$tmp/cmp"  # passed on the float64 criterion
      passed=$((passed + 1))
    else
      [[ -f "$tmp/cmp" ]] && rel="$(sed -n 's/.*relative \([^)]*\)).*/\1/p' "$tmp/cmp" | sort -g | tail -1)"
      printf '%-36s %-6s %s\n' "$name" FAIL "${rel:--}"
      cat "$tmp/log" "$tmp/cmp" 2>/dev/null | sed 's/^/    /' || true
      [[ -x "$OUT_DIR/harness_$name" ]] || sed 's/^/    /' "$OUT_DIR/build_$name.log" | head -20
      failed=1
    fi
    rm -f "$tmp/cmp" "$tmp/log"
  done
  rm -rf "$tmp"
  echo "$passed of $total passed (|gpu - paddle| <= $RTOL * max|paddle| + $ATOL, TF32 $([[ "$TF32" == 1 ]] && echo on || echo off); 16-bit within $RTOL_FLOAT16 (float16) or $RTOL_BFLOAT16 (bfloat16) * max|paddle| + $ATOL)"
  return $failed
}

case "${1:-}" in
  prepare) prepare "$2" ;;
  run) run "$2" ;;
  *) echo "usage: check_models.sh prepare BUILD | check_models.sh run BUILD" >&2; exit 2 ;;
esac
