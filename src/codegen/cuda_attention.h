// The attention groups of `kforge compile --target cuda` (passes/fusion.h, GroupKind::kAttention): one call of
// kforge::cuda_attention::attention<T, D, M> (templates/cuda/kforge_attention.cuh; 16-bit values) or of
// attention_float<D> (kforge_attention_f32.cuh; float32 values) per group, as an enqueue() step that
// templates/program/cuda/attention.j2 renders.
#pragma once

#include <functional>
#include <string>

#include "codegen/size_table.h"
#include "passes/fusion.h"
#include "passes/lowered_program.h"
#include "template/value.h"

namespace kforge::codegen {

inline constexpr const char* kCudaAttentionHeaderTemplate = "cuda/kforge_attention.cuh";
// Its warp-level building blocks and the arguments, which it includes.
inline constexpr const char* kCudaAttentionTileHeaderTemplate = "cuda/kforge_attention_tile.cuh";
// The float32 kernel (it includes the tile header for the arguments).
inline constexpr const char* kCudaAttentionF32HeaderTemplate = "cuda/kforge_attention_f32.cuh";
// The 16-bit groups' per-shape choice between that kernel and cuDNN's fused flash attention (link -lcudnn).
inline constexpr const char* kCudaCudnnAttentionHeaderTemplate = "cuda/kforge_cudnn_attention.cuh";

/// The step of attention group `g` at launch index `launch`: {kind "attention", description, launch, type
/// (__half / __nv_bfloat16 / float), float32 (bool: the float32 kernel), site (`site`: the 16-bit group's number
/// among the class's AttentionSites, -1 for float32), head_dim, mask_type, q, k, v, out, mask (device pointers, "nullptr" for no mask),
/// the sizes and strides of kforge::cuda_attention::AttentionArgs (int64 C++ expressions), scale (a float
/// literal)}. `buffer(value, element type, is_const)`: a value's typed device pointer in enqueue(); `size`: a size
/// there.
tmpl::Value cuda_attention_step(const passes::LoweredProgram& program, const passes::FusedGroup& g, size_t launch,
                                int64_t site, const std::string& description,
                                const std::function<std::string(uint32_t, const std::string&, bool)>& buffer,
                                const SizeExpr& size);

}  // namespace kforge::codegen
