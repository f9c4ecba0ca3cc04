#!/usr/bin/env python3
"""CI check (no GPU needed) of the index-mapped kernels of `kforge compile --target cuda` (codegen/cuda_index.h)
against Paddle: each tests/paddle fixture below is compiled for CUDA, then its host code and kernels are built with
g++ against a host-only stand-in for the CUDA runtime (tests/e2e/cuda_emulation/: a launch runs the kernel once, one
thread whose grid-stride loop visits every element) together with the GPU check's harness
(tests/gpu/harness.cu), run on the fixture's inputs and weights (tests/gpu/fixture_bundle.py bundle) and
compared with Paddle's outputs (fixture_bundle.py compare: |out - paddle| <= 1e-5 * max|paddle| + 1e-6; the float
arithmetic of interpolation and dropout is the CPU kernels' own order, so the error is 0 in practice). Elementwise
groups are emulated too (their broadcasts and absorbed transposes are index arithmetic of the same kind). Programs
with cuDNN convolutions or row groups (warp code) are not emulated: tests/gpu/check_models.sh runs those on a GPU.
Every program is generated in a namespace of its own (--namespace) and all of them are built as three translation
units (every kernels file, every host file, the harness instantiated per class with a main() that picks one by
name): 97 s for 48 fixtures program by program on a 2-core machine, 14 s this way. Exit 77 (meson:
skipped) when g++ is missing.
"""
import argparse
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from io import StringIO

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "gpu"))
import fixture_bundle  # noqa: E402  (tests/gpu/fixture_bundle.py)

CASES = [
    "arange", "bilinear_interp", "bilinear_interp_align_corners", "bilinear_interp_align_mode1_nhwc",
    "bilinear_interp_dynamic", "bilinear_interp_f64", "concat", "concat_bool", "concat_dynamic", "concat_kv_cache", "concat_kv_cache_pair",
    "concat_rows_int64", "stack_rows", "if_length", "if_length_else", "bitwise_and_bool",
    "bitwise_not_bool",
    "concat_neg_axis_int64", "dropout_eval", "dropout_eval_downscale", "embedding", "embedding_padding_idx", "expand",
    "expand_int64", "gather", "gather_int32_axis0", "index_select", "nearest_interp", "nearest_interp_dynamic",
    "nearest_interp_size", "pad3d_circular_ndhwc", "pad3d_replicate", "pad_constant", "pad_reflect", "slice",
    "slice_neg", "split_num", "split_sections", "strided_slice", "tile", "tile_int64", "transpose_bool",
    "transpose_dynamic", "transpose_float32", "transpose_float64", "transpose_int32", "transpose_int64", "tril", "triu",
    "diag_vector", "diag_vector_offset", "diag_matrix", "diag_matrix_offset", "diag_matrix_negative_offset",
    "repeat_interleave_channels", "repeat_interleave_last_int64", "repeat_interleave_dynamic", "elu_float64", "ceil_float64",
    "randint_int64", "randint_int32_dynamic",
    # bicubic_interp (cuda_index_compute.cpp, kforge_index.cuh's bicubic_at over kforge_sampling.h, the CPU kernel's)
    "bicubic_interp_up", "bicubic_interp_down_align_corners", "bicubic_interp_nhwc_float64",
    # prior_box (cuda_index_compute.cpp): the boxes of kernels/prior_box.cc from the plan's half sizes
    "prior_box_blazeface", "prior_box_dynamic_float64", "prior_box_max_flip_clip",
    # transposes and an expand absorbed by elementwise groups (read through and stored through; run-time dims)
    "transpose_fused", "transpose_fused_dynamic", "expand_fused",
    # elementwise groups: broadcasts (strided inputs), a dynamic batch, bool to float
    "add_broadcast_mid", "where_broadcast", "relu_dynamic", "cast_bool_f32",
    # shapes, slice starts/ends and arange starts computed from the dynamic dims (issue 33)
    "reshape_heads_dynamic", "arange_dynamic", "arange_dynamic_start_step", "slice_dynamic_end", "slice_dynamic_start",
    "expand_dynamic", "position_ids_dynamic", "reshape_stack_dynamic", "reshape_concat_cast_dynamic",
    "split_shape_dynamic", "prod_shape_dynamic", "full_with_tensor_dynamic", "pad_to_multiple_dynamic",
    "strided_slice_dynamic", "strided_slice_dynamic_end", "interpolate_size_dynamic", "interpolate_size_dynamic_b2",
    "bilinear_size_dynamic",
    # shapes read from an integer input's values: copied back, kforge_shape_meta.h's rule run on the host, bind_s<id>()
    "reshape_shape_from_input", "expand_shape_from_input", "tile_from_input", "arange_end_from_input",
    "full_shape_from_input", "slice_end_from_input", "slice_start_dims_end_from_input", "shape_from_input_mix",
    # slice starts read on the device (issue 33), shapes given as lists of tensors
    "slice_start_from_input", "slice_start_end_from_input", "slice_neg_start_from_input", "slice_index_from_input",
    "slice_list_from_input", "reshape_shape_list_from_input", "expand_shape_list_from_input",
    "full_shape_list_from_input",
    # an interpolation's size read from its size tensors' values: SizeTensor and OutSize (kforge_shape_meta_interp.h)
    "bilinear_size_tensor_from_input", "bilinear_out_size_from_input", "nearest_size_tensor_from_input",
    "bilinear_size_from_input",
    # the ops no fused group takes (issue 34; codegen/cuda_index_compute.cpp): reductions over leading axes in every
    # dtype, softmax over a middle axis, cumsum, one_hot, pow; stack and meshgrid
    "stack", "meshgrid_2", "meshgrid_3_int64", "meshgrid_anchors",
    *[f"{op}_{dt}" for op in ("sum", "max", "min", "prod") for dt in ("float32", "float64", "int32", "int64")],
    "sum_keepdim", "min_keepdim", "prod_all", "prod_all_keepdim", "any_int64", "any_keepdim", "all_int64",
    "all_keepdim", "softmax_axis1", *[f"cumsum_{dt}" for dt in ("float32", "float64", "int32", "int64")],
    "cumsum_flatten", "cumsum_axis0_dynamic", "one_hot", "one_hot_int32",
    *[f"pow_scalar_{dt}" for dt in ("float32", "float64", "int32", "int64")], "pow_sqrt",
    # leaky_relu, a fused expression (max / min of x and slope * x); maximum / minimum with NaN in either operand
    "leaky_relu", "leaky_relu_float64", "leaky_relu_slope2",
    *[f"{op}_nan_{dt}" for op in ("maximum", "minimum", "fmax", "fmin") for dt in ("float32", "float64")],
    "fmax_int32", "fmax_int64", "fmin_int32", "fmin_int64",
    # log_softmax over the last and the first axis (cuda_index_reduce.cpp: one thread per line)
    "log_softmax_float32", "log_softmax_float64", "log_softmax_axis0",
    # roi_align (kforge_index.cuh's roi_align_at): adaptive and fixed sample grids, aligned or not, float64
    "roi_align_aligned_adaptive", "roi_align_aligned_sr2", "roi_align_plain_adaptive", "roi_align_plain_sr2",
    "roi_align_float64_one_image",
    # yolo_box (kforge_index.cuh's yolo_box_at / yolo_score_at): clipped, iou_aware float64, dynamic H and W
    "yolo_box_yolov3", "yolo_box_iou_aware_float64", "yolo_box_dynamic",
    # issue 34, cuda_index_select.cpp: topk (the CPU kernel's order by rank), gather_nd, scatter, roll, pad, add_n; a
    # matmul with a vector operand (cuda_index.cpp)
    "topk_float32", "topk_float64", "topk_smallest_axis0", "topk_dynamic", "gather_nd_bool", "gather_nd_dynamic",
    "gather_nd_full_index", "gather_nd_int32", "gather_nd_int64", "gather_nd_rows", "scatter_add", "scatter_overwrite",
    "roll", "roll_flat", "pad_float32", "pad_float64", "pad_int32", "pad_int64", "pad_rank1", "pad_rank3", "add_n",
    "matmul_vector", "matmul_vector_y", "matmul_vector_dot", "matmul_vector_batched",
    # topk among equal values and NaNs: the CPU kernel's order, which is Paddle's (libstdc++'s partial_sort, or
    # nth_element and sort, run per line in the call's scratch: kforge_index.cuh's topk_line)
    "topk_ties", "topk_ties_axis0", "topk_ties_partial", "topk_ties_smallest_unsorted",
    # argsort (SOLOv2): std::sort's order of equal values and NaNs run per line in the call's scratch
    # (kforge_index.cuh's argsort_line), index order when stable
"argsort_float32", "argsort_float64_descending_axis0", "argsort_int32_ties", "argsort_int64_ties", "argsort_ties",
    "argsort_ties_descending_long", "argsort_ties_stable", "argsort_ties_stable_descending_axis0", "argsort_nan",
    "argsort_nan_descending", "argsort_dynamic", "argsort_scores_dynamic", "sort_values",
    # expand_as (CenterNet): expand's kernel to the output's dims
    "expand_as_dynamic", "expand_as_float32", "expand_as_int32", "expand_as_int64",
    # an output copied from a constant (the plan gives it no buffer: a bound pointer of its own)
    "fetch_copies",
    # multiply of two bool masks: a logical_and expression (canonicalize_ops)
    "multiply_bool",
    # a compare's mask rewritten in place by set_value_: the compare fuses (fusion_classify.cpp owns_buffer)
    "set_value_on_mask",
    # group_norm and p_norm (cuda_index_norm.cpp)
    "group_norm", "group_norm_nhwc", *[f"p_norm_{p}" for p in ("0", "1", "2", "3", "half", "inf", "neg_inf")],
    "p_norm_float64", "p_norm_normalize", "p_norm_vector",
    # set_value / set_value_with_tensor (constant and dynamic bounds, a negative step) after the copy they write into
    "set_value_scalar", "set_value_int64", "set_value_dynamic_end", "set_value_tensor_negative_step", "assign",
    # bounds and a negative step read from data by the kernel on the device (issue 34); -inf constants of a clip and a
    # pad (cpp_text.h cuda_device_constant)
    "set_value_bounds_from_data", "set_value_step_from_data", "clip_min_neg_inf_pad_neg_inf", "clip_tensor_max", "clip_tensor_bounds_f64",
    # the losses (cuda_index_loss.cpp; normalize through mean_all); cross entropies over a softmax row group run on
    # the GPU check only
    "sigmoid_ce_logits", "sigmoid_ce_logits_float64", "sigmoid_ce_logits_mean", "sigmoid_ce_logits_pos_weight",
    "cross_entropy_softmax", "cross_entropy_softmax_axis1_int32", "cross_entropy_softmax_float32_wide",
    "cross_entropy_softmax_float64_wide", "cross_entropy_softmax_ignore",
    # einsum (cuda_index_linalg.cpp) and grid_sample (kforge_index.cuh's grid helpers) in every mode
    "einsum_batched", "einsum_outer", "einsum_transpose_sum",
    *[f"grid_sample_{m}_{p}_{ac}" for m in ("bilinear", "nearest") for p in ("zeros", "border", "reflection")
      for ac in ("ac", "noac")], "grid_sample_float64",
    # floor_divide (cuda_index_binary.cpp): integers and floats, a negative divisor, broadcast operands
    *[f"floor_divide_{dt}" for dt in ("int32", "int64", "float32", "float64")], "floor_divide_negative_divisor",
    "floor_divide_broadcast", "floor_divide_broadcast_float",
    # prelu (cuda_index_binary.cpp): a slope per channel (NHWC), for all (float64), per element of a batch item
    "prelu_channel_nhwc", "prelu_all_float64", "prelu_element",
    # index_sample (cuda_index_select.cpp): int32 and int64 indices, int64 values
    "index_sample_int32", "index_sample_int64", "index_sample_int64_values",
    # take_along_axis (cuda_index_select.cpp): int32 / int64 indices, an index broadcast first, axis 0 with negative ones
    "take_along_axis_int32", "take_along_axis_int64", "take_along_axis_broadcast", "take_along_axis_negative",
    # NaN and infinities through fused elementwise expressions: relu6 and hardsigmoid keep NaN (std_min / std_max)
    "relu6_relu_nan", "activations_nonfinite",
    # linear_interp (cuda_index_compute.cpp: bilinear of height 1): sizes, scales, align modes, NWC, SeaFormer's copy
    "linear_interp_size", "linear_interp_align_corners", "linear_interp_align_mode1", "linear_interp_down",
    "linear_interp_dynamic", "linear_interp_nwc", "linear_interp_same_width",
    # linspace (cuda_index_compute.cpp): constant and tensor ends, int32, Co-DINO's int64 stop from data
    "linspace", "linspace_int32", "linspace_tensor_ends_float64", "linspace_stop_int64_6", "linspace_stop_int64_7",
    # index_put (cuda_index_select.cpp): rows with a negative index, two broadcast index tensors accumulating, int64
    "index_put_rows", "index_put_accumulate", "index_put_int64",
    # deformable_conv (cuda_index_compute.cpp, kforge_index.cuh): v2 with a mask, v1 with stride / dilation / groups,
    # float64 with a bias and deformable groups
    "deformable_conv_v2", "deformable_conv_v1_stride_groups", "deformable_conv_v2_bias_float64",
    # uniform: kforge's counter-based draws (the fixtures expect them, not Paddle's generator's)
    "uniform_float32", "uniform_float64",
    # broadcast_tensors (expand's kernel per input); rnn (kforge_rnn.cuh: a projection kernel per layer and a launch
    # per step, its launches rewritten in the header as in the kernels file) in every mode
    "broadcast_tensors_3", "broadcast_tensors_int64", "broadcast_tensors_dynamic",
    "rnn_lstm", "rnn_lstm_2layer_bidirec", "rnn_lstm_time_major_init", "rnn_lstm_seq_len_bidirec", "rnn_lstm_dynamic",
    "rnn_lstm_ocr", "rnn_lstm_float64_bidirec", "rnn_gru", "rnn_gru_2layer_bidirec_dynamic", "rnn_gru_seq_len_int64",
    "rnn_gru_float64", "rnn_simple_tanh", "rnn_simple_relu_2layer_bidirec", "rnn_simple_tanh_seq_len",
    # generate_proposals (kforge_proposals.cuh, one thread per image; the rows counted on the device and read back):
    # nth_element's order with ties, a full sort with pixel_offset and eta over two images, no NMS, no box kept,
    # float64 with dynamic H and W
    "generate_proposals_rpn", "generate_proposals_sorted_pixel_offset", "generate_proposals_no_nms",
    "generate_proposals_none_kept", "generate_proposals_dynamic_float64",
    # distribute_fpn_proposals (kforge_proposals.cuh, one thread; each level's count and the total read back, the total
    # checked equal to fpn_rois' rows, restore_index's):
    # levels 2-5 and 2-6 (an empty level), pixel_offset, int64 rois_num, restore_index through a gather, float64
    "distribute_fpn_proposals", "distribute_fpn_proposals_pixel_offset", "distribute_fpn_proposals_restore",
    "distribute_fpn_proposals_dynamic_float64",
    # a reshape to dims built from the rois' count: copied after the element counts are checked (cuda_checked_view)
    "distribute_fpn_proposals_reshape",
    # only the shapes of its results read: the op runs for its counts (lowering keeps it)
    "distribute_fpn_proposals_shapes_only",
]
RTOL, ATOL = "1e-5", "1e-6"


def in_process(function, *args):
    """(passed, what it printed) of one of fixture_bundle's steps, run here: its fail() exits, its compare returns
    False on a mismatch."""
    text = StringIO()
    try:
        with redirect_stdout(text), redirect_stderr(text):
            result = function(*args)
    except SystemExit as e:
        return e.code in (0, None), text.getvalue()
    except (OSError, ValueError, KeyError, struct.error) as e:  # a missing or malformed file of the fixture
        return False, f"{text.getvalue()}{type(e).__name__}: {e}"
    return result is not False, text.getvalue()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kforge", required=True)
    parser.add_argument("--source-root", required=True)
    parser.add_argument("cases", nargs="*", help="fixtures to check (default: all of CASES)")
    args = parser.parse_args()
    cxx = shutil.which(os.environ.get("CXX", "g++"))
    if cxx is None:
        print("no C++ compiler: skipping")
        return 77
    root = args.source_root
    ex = os.path.join(root, "kernels")
    ops = ["--ops", os.path.join(ex, "ops.yaml"), "--ops", os.path.join(ex, "fusion.yaml"),
           "--op-compat", os.path.join(ex, "op_compat.yaml")]
    failed = []
    with tempfile.TemporaryDirectory(prefix="kforge-cuda-emul-") as tmp:
        built = []  # (case, fixture, gen) of the programs the emulation runs
        for case in args.cases or CASES:
            fixture = os.path.join(root, "tests", "paddle", case)
            gen = os.path.join(tmp, case)
            # Class `case` in namespace emulated_<case>: every program goes into the same three units below.
            r = subprocess.run([args.kforge, "compile", os.path.join(fixture, "inference.json"), *ops, "-o", gen,
                                "--name", case, "--namespace", f"emulated_{case}", "--target", "cuda"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            if r.returncode != 0:
                failed.append(f"{case}: kforge compile --target cuda failed:\n{r.stdout}")
                continue
            kernels = os.path.join(gen, f"{case}_kernels.cu")
            text = open(kernels).read()
            # Index-mapped kernels and elementwise groups (an absorbed transpose is a group's index map) emulate;
            # row groups (warp code) and cuDNN do not.
            if "team_reduce<" in text or os.path.exists(os.path.join(gen, "kforge_cudnn.cuh")):
                failed.append(f"{case}: not a program of index-mapped kernels and elementwise groups the emulation runs")
                continue
            # A launch `k<<<grid, block, 0, stream>>>(args);` becomes `kforge_emulated_launch([&] { k(args); },
            # grid, block, 0, stream);`, which runs k once per thread of the grid (cuda_emulation/cuda_runtime.h).
            launch = re.compile(r"([\w:]+(?:<[^<>;]*>)?)<<<(.*?)>>>\((.*)\);$", re.M)
            emulated = launch.sub(r"kforge_emulated_launch([&] { \1(\3); }, \2);", text)
            if "<<<" in emulated:
                failed.append(f"{case}: a kernel launch the emulation cannot rewrite")
                continue
            open(kernels, "w").write(emulated)
            # kforge_rnn.cuh and kforge_proposals.cuh launch their kernels from the host code: rewritten the same way.
            unrewritten = []
            for header in ("kforge_rnn.cuh", "kforge_proposals.cuh"):
                path = os.path.join(gen, header)
                if os.path.exists(path):
                    text = launch.sub(r"kforge_emulated_launch([&] { \1(\3); }, \2);", open(path).read())
                    if "<<<" in text:
                        unrewritten.append(header)
                    open(path, "w").write(text)
            if unrewritten:
                failed.append(f"{case}: a kernel launch in {unrewritten[0]} the emulation cannot rewrite")
                continue
            built.append((case, fixture, gen))

        # Three units for all the programs (each in its namespace): every kernels file, every host file, and the
        # harness instantiated for every class with a main() that picks one by name. g++ parses the runtime and
        # emulation headers three times in all instead of three times per program.
        exe = os.path.join(tmp, "harness")
        if built:
            units = {"kernels": "".join(f'#include "{c}/{c}_kernels.cu"\n' for c, _, _ in built),
                     "host": "".join(f'#include "{c}/{c}.cu"\n' for c, _, _ in built),
                     "harness": "".join(f'#include "{c}/{c}.h"\n' for c, _, _ in built) +
                                f'#define KFORGE_HARNESS_BATCH 1\n#include "{os.path.abspath(os.path.join(root, "tests", "gpu", "harness.cu"))}"\n'
                                "int main(int argc, char** argv) {\n"
                                '  const std::string name = argc > 1 ? argv[1] : "";\n' +
                                "".join(f'  if (name == "{c}") return kforge_harness::run<emulated_{c}::{c}>(argc - 1, argv + 1);\n'
                                        for c, _, _ in built) +
                                '  std::fprintf(stderr, "no program %s\\n", name.c_str());\n  return 1;\n}\n'}
            sources = []
            for unit, text in units.items():
                sources.append(os.path.join(tmp, f"{unit}.cc"))
                with open(sources[-1], "w") as f:
                    f.write(text)
            # -O0: the fixtures are tiny, and -O1 spent 40 % more compiling (176 s against 116 s of the test alone).
            cmd = [cxx, "-std=c++17", "-O0", "-Wall", "-Wextra", "-Werror", "-Wno-unused-parameter",
                   "-Wno-unknown-pragmas", "-x", "c++", "-I", os.path.join(root, "tests", "e2e", "cuda_emulation"),
                   "-I", tmp, "-I", os.path.join(root, "tools", "interp"),
                   # the runtime headers that tensor_bundle.h includes (every program wrote the same ones)
                   "-I", built[0][2]]
            # Two units at a time, then the link.
            objects = [s[:-3] + ".o" for s in sources]
            procs = [subprocess.Popen(cmd + ["-c", src, "-o", obj], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                      text=True) for src, obj in zip(sources[:2], objects[:2])]
            outs = [p.communicate()[0] for p in procs]
            r = subprocess.run(cmd + ["-c", sources[2], "-o", objects[2]], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
            outs.append(r.stdout)
            if any(p.returncode != 0 for p in procs) or r.returncode != 0:
                print("the emulated build failed:\n" + "".join(o[:3000] for o in outs))
                failed += [f"{c}: not built (the emulated build failed, above)" for c, _, _ in built]
                built = []
            else:
                r = subprocess.run([cxx, *objects, "-o", exe], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   text=True)
                if r.returncode != 0:
                    print(f"the emulated link failed:\n{r.stdout[:3000]}")
                    failed += [f"{c}: not built (the emulated link failed, above)" for c, _, _ in built]
                    built = []
        # fixture_bundle's bundle and compare run in this process: as two Python processes per case they took
        # about as long as the build (0.13 s each, 343 cases).
        for case, fixture, gen in built:
            in_bin, out_bin = os.path.join(gen, "in.bin"), os.path.join(gen, "out.bin")
            ok, text = in_process(fixture_bundle.bundle, fixture, os.path.join(gen, f"{case}.h"), in_bin)
            if not ok:
                failed.append(f"{case}: fixture_bundle.py bundle failed:\n{text}")
                continue
            r = subprocess.run([exe, case, in_bin, out_bin], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            if r.returncode != 0:
                failed.append(f"{case}: {os.path.basename(exe)} failed:\n{r.stdout}")
                continue
            ok, text = in_process(fixture_bundle.compare, out_bin, fixture, float(RTOL), float(ATOL))
            if not ok:
                failed.append(f"{case}: fixture_bundle.py compare failed:\n{text}")
                continue
            print(f"ok {case}: {text.strip()}")
    for f in failed:
        print("FAIL", f)
    total = len(args.cases or CASES)
    print(f"{total - len(failed)} of {total} fixtures: the emulated CUDA index kernels agree with Paddle")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
