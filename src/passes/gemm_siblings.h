// Sibling GEMMs packed into one product (issue 35): GEMM groups that multiply one x by different weights of one
// shape -- an attention layer's q, k and v projections, each x [M, K] times a [K, N] parameter plus a bias -- run as
// one strided batch of products: x read for every product (stride 0), the weights side by side in a parameter pack
// [n, K, N] and the biases in another [n, N] (LoweredProgram::parameter_packs: the generated code copies each weight
// there when it is bound, as cuDNN's folded filters are made once), the outputs side by side in one buffer, each a
// value of its own at its offset (LoweredValue::buffer_offset, symbolic where M is). One launch instead of n: on an
// H200, float16, M 128, K = N = 768, three GEMMs took 10.7 us and the batched one 4.1 us (bench/transformers/
// qkv_bench.cu), bit for bit the same results.
//
// float16 and bfloat16 only: in float32 (cuBLASLt's SIMT kernels) the batch measured slower than the single products
// (BERT-base on an H200: 1.45 against 1.38 ms at batch 1, 128 tokens). In 16 bits the whole models ran 2-9 % faster
// at M 128 to 1024 and 3 % slower at M 4096 (BENCHMARKS.md "Sibling GEMMs packed"), where running the packed
// products one by one measured slower still: not the GEMM, unexplained (the packed outputs' buffer, three times a
// single one, cannot reuse the smaller slots the memory plan frees is the suspicion, not verified).
//
// Siblings: kGemm groups of single products (not batched) with the same x, dtype, transposes, M, N, K and epilogue,
// whose weight (and bias) is a parameter of static dims, N a multiple of 16 bytes (each product's bias and output
// 16-byte aligned for cuBLASLt), and whose output owns a workspace buffer of exactly M x N elements that holds no
// program output (views of it move with it). The packed group runs where the first sibling ran: x must not be
// written between it and any later sibling. Its calls are all the siblings' (FusedGroup::position is then its
// first sibling's position, not calls.back()).
#pragma once

#include <string>
#include <vector>

#include "passes/fusion.h"
#include "passes/lowered_program.h"

namespace kforge::passes {

/// Packs the sibling GEMM groups of `plan` (file comment): each set becomes one group (GemmGroup::pack), the plan's
/// groups renumbered; adds the parameter packs to `program` and moves the outputs into the first sibling's buffer.
/// Run after plan_fusion, before apply_fusion_to_memory_plan (which then gives the buffers their live ranges).
/// Returns how many groups were packed into others.
uint32_t pack_sibling_gemms(LoweredProgram& program, FusionPlan& plan);

}  // namespace kforge::passes
