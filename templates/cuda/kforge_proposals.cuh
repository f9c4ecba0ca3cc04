// `cuda_select::generate_proposals`: Paddle's generate_proposals (v2) for `kforge compile --target cuda`, whose
// number of rows depends on the data (docs/compile.md, "Sizes that depend on data"), computed step for step as the
// CPU kernel (kernels/proposals.cc, which follows Paddle's) so that the rows and their order are the CPU's:
//   - the image's scores in the CPU's row order (h * W + w) * A + a, then libstdc++'s std::sort of their indices
//     (pre_nms_top_n <= 0 or >= the anchor count) or std::nth_element at pre_nms_top_n, by `score[i] > score[j]`
//     (kforge_index.cuh's TopkLine, which writes those algorithms out as libstdc++ implements them: equal scores
//     come out in the CPU's order, and with nms_thresh <= 0 the output keeps nth_element's partition order);
//   - BoxCoder with the clip of the deltas' scales, ClipTiledBoxes, FilterBoxes (pixel_offset's +1 and centre test);
//   - NMS: the CPU's stable sort by score ascending, taken from the back, is the order (score descending, place
//     descending); each box kept unless it overlaps a kept one by more than the threshold, which eta shrinks;
//   - post_nms_top_n, and the one row of zeros (score 0) of an image that keeps no box.
// Products are rounded one by one (__fmul_rn / __dmul_rn: nvcc would otherwise contract a product and a sum into
// one fma, which the CPU kernel does not), so the arithmetic is the CPU's but for exp: CUDA's expf / exp against
// the C library's (within 2 ulp in float32), the one place where a box may differ in its last bits.
// Two launches: one thread per image (blockIdx.x) runs the image in its part of the scratch; one thread lays the
// images' rows out one after the other, writes each image's count (rpn_rois_num) and the total, which stays in
// device memory at scratch[0] (`proposals_count_of`): the generated class copies it to the host, which binds the
// rows' dim. With NaN scores the NMS order may differ from the CPU's std::stable_sort (no strict weak order there).
// `cuda_select::distribute_fpn_proposals`: one thread over every roi as the CPU kernel (the level from
// floor(log2(sqrt(area) / refer_scale + 1e-6) + refer_level), with CUDA's log2f / log2: a scale within an ulp of a
// level's boundary may land in the next level), each level's count and the total at scratch[0..levels].
// No shared memory and no warp code (tests/e2e/cuda_index_emulated.py runs them on the CPU). CUDA runtime and
// kforge_index.cuh.
#ifndef KFORGE_PROPOSALS_CUH_
#define KFORGE_PROPOSALS_CUH_

#include <cuda_runtime.h>

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "kforge_index.cuh"

namespace kforge::cuda_select {

namespace proposals_detail {

// A score compared as the CPU kernel compares it, by `>` alone: TopkLine's NaN rule (NaN first) never applies.
template <typename T>
struct ScoreKey {
  T v;
  __device__ bool operator!=(const ScoreKey&) const { return false; }
  __device__ bool operator>(const ScoreKey& o) const { return v > o.v; }
  __device__ bool operator<(const ScoreKey& o) const { return v < o.v; }
};

// a * b rounded on its own (never contracted into an fma with the sum it feeds).
__device__ __forceinline__ float mul(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
__device__ __forceinline__ double mul(double a, double b) {
#ifdef __CUDA_ARCH__
  return __dmul_rn(a, b);
#else
  return a * b;
#endif
}
// The C library's function of the value's type, as the CPU kernel's std:: overloads pick it.
__device__ __forceinline__ float exp_of(float v) { return expf(v); }
__device__ __forceinline__ double exp_of(double v) { return exp(v); }
__device__ __forceinline__ float sqrt_of(float v) { return sqrtf(v); }
__device__ __forceinline__ double sqrt_of(double v) { return sqrt(v); }
__device__ __forceinline__ float log2_of(float v) { return log2f(v); }
__device__ __forceinline__ double log2_of(double v) { return log2(v); }
__device__ __forceinline__ float floor_of(float v) { return floorf(v); }
__device__ __forceinline__ double floor_of(double v) { return floor(v); }
// std::min / std::max as libstdc++ writes them (the NaN cases included).
template <typename T>
__device__ __forceinline__ T min_of(T a, T b) { return b < a ? b : a; }
template <typename T>
__device__ __forceinline__ T max_of(T a, T b) { return a < b ? b : a; }

// funcs::BBoxArea (plus_one: pixel_offset's + 1).
template <typename T>
__device__ T box_area(const T* b, bool plus_one) {
  if (b[2] < b[0] || b[3] < b[1]) return T(0);
  const T w = b[2] - b[0], h = b[3] - b[1];
  return plus_one ? mul(w + 1, h + 1) : mul(w, h);
}

// funcs::JaccardOverlap.
template <typename T>
__device__ T jaccard_overlap(const T* a, const T* b, bool normalized) {
  if (b[0] > a[2] || b[2] < a[0] || b[1] > a[3] || b[3] < a[1]) return T(0);
  const T norm = normalized ? T(0) : T(1);
  const T iw = min_of(a[2], b[2]) - max_of(a[0], b[0]) + norm;
  const T ih = min_of(a[3], b[3]) - max_of(a[1], b[1]) + norm;
  const T inter = mul(iw, ih);
  return inter / (box_area(a, !normalized) + box_area(b, !normalized) - inter);
}

// Where each image's arrays lie in the scratch, in bytes from the image's part (every offset a multiple of 8).
struct Layout {
  int64_t m = 0;         // anchors per image: A * H * W
  int64_t count = 0;     // the rows kept before NMS: pre_nms_top_n of m, or m
  size_t keys = 0;       // m ScoreKey<T>: the scores, then NMS's keys
  size_t index = 0;      // m int32: the sort's indices, then NMS's order
  size_t boxes = 0;      // count * 4 T: the decoded and clipped boxes
  size_t scores = 0;     // count T: their scores
  size_t keep = 0;       // count int32: the boxes the size filter keeps
  size_t selected = 0;   // count int32: the rows out (boxes' indices; -1: the row of zeros)
  size_t stride = 0;     // one image's part
  size_t header = 0;     // before the first image: the total and each image's count (int64)
};

inline size_t round8(size_t bytes) { return (bytes + 7) / 8 * 8; }

template <typename T>
Layout layout_of(int64_t n, int64_t m, int pre_nms_top_n) {
  Layout l;
  l.m = m;
  l.count = (pre_nms_top_n <= 0 || pre_nms_top_n >= m) ? m : pre_nms_top_n;
  const size_t um = static_cast<size_t>(m), uc = static_cast<size_t>(l.count);
  l.keys = 0;
  l.index = l.keys + round8(um * sizeof(ScoreKey<T>));
  l.boxes = l.index + round8(um * sizeof(int32_t));
  l.scores = l.boxes + round8(4 * uc * sizeof(T));
  l.keep = l.scores + round8(uc * sizeof(T));
  l.selected = l.keep + round8(uc * sizeof(int32_t));
  l.stride = l.selected + round8(uc * sizeof(int32_t));
  l.header = static_cast<size_t>(n + 1) * sizeof(int64_t);
  return l;
}

template <typename T>
struct ProposalsArgs {
  const T* scores;     // [N, A, H, W]
  const T* deltas;     // [N, 4A, H, W]
  const T* im_shape;   // [N, 2]: height, width
  const T* anchors;    // [H, W, A, 4]
  const T* variances;  // [H, W, A, 4]
  int64_t a, hw;
  int pre_nms_top_n, post_nms_top_n;
  float nms_thresh, min_size, eta;
  bool pixel_offset;
  double clip_scale;  // log(1000 / 16), computed on the host by the C library, as the CPU kernel's
};

// Image blockIdx.x, as ProposalForOneImage: its rows (indices of its boxes) and their number, in the scratch.
template <typename T>
__global__ void proposals_image_kernel(ProposalsArgs<T> p, Layout l, char* scratch) {
  if (threadIdx.x != 0) return;
  const int64_t img = blockIdx.x;
  char* part = scratch + l.header + static_cast<size_t>(img) * l.stride;
  ScoreKey<T>* keys = reinterpret_cast<ScoreKey<T>*>(part + l.keys);
  int32_t* index = reinterpret_cast<int32_t*>(part + l.index);
  T* boxes = reinterpret_cast<T*>(part + l.boxes);
  T* sel_scores = reinterpret_cast<T*>(part + l.scores);
  int32_t* keep = reinterpret_cast<int32_t*>(part + l.keep);
  int32_t* selected = reinterpret_cast<int32_t*>(part + l.selected);
  int64_t* rows = reinterpret_cast<int64_t*>(scratch) + 1 + img;
  const int64_t a = p.a, hw = p.hw, m = l.m;
  const T* scores = p.scores + img * a * hw;
  const T* deltas = p.deltas + img * 4 * a * hw;
  // Row r = (h * W + w) * A + a of the image's [H, W, A] scores and [H, W, 4A] deltas.
  for (int64_t r = 0; r < m; ++r) keys[r].v = scores[(r % a) * hw + r / a];
  for (int64_t i = 0; i < m; ++i) index[i] = static_cast<int32_t>(i);
  const cuda_index::TopkLine<ScoreKey<T>> by_score{keys, 1, true};
  if (l.count == m) {
    by_score.sort(index, index + m);
  } else {
    by_score.nth_element(index, index + l.count, index + m);
  }
  // BoxCoder, then ClipTiledBoxes.
  const T offset = p.pixel_offset ? T(1) : T(0);
  const T zero(0);
  const T im_h = p.im_shape[2 * img], im_w = p.im_shape[2 * img + 1];
  for (int64_t i = 0; i < l.count; ++i) {
    const int64_t r = index[i];
    sel_scores[i] = keys[r].v;
    const T* an = p.anchors + 4 * r;
    const T* var = p.variances + 4 * r;
    auto delta = [&](int64_t k) { return deltas[(4 * (r % a) + k) * hw + r / a]; };
    const T aw = an[2] - an[0] + offset, ah = an[3] - an[1] + offset;
    const T acx = static_cast<T>(an[0] + mul(0.5, static_cast<double>(aw)));
    const T acy = static_cast<T>(an[1] + mul(0.5, static_cast<double>(ah)));
    const T cx = mul(mul(var[0], delta(0)), aw) + acx;
    const T cy = mul(mul(var[1], delta(1)), ah) + acy;
    const T bw = mul(exp_of(min_of<T>(mul(var[2], delta(2)), static_cast<T>(p.clip_scale))), aw);
    const T bh = mul(exp_of(min_of<T>(mul(var[3], delta(3)), static_cast<T>(p.clip_scale))), ah);
    T* b = boxes + 4 * i;
    b[0] = cx - bw / 2;
    b[1] = cy - bh / 2;
    b[2] = cx + bw / 2 - offset;
    b[3] = cy + bh / 2 - offset;
    for (int k = 0; k < 4; ++k) b[k] = max_of(min_of(b[k], (k % 2 == 0 ? im_w : im_h) - offset), zero);
  }
  // FilterBoxes: wide and high enough, and (with pixel_offset) the centre inside the image.
  const float min_side = p.min_size < 1.0f ? 1.0f : p.min_size;
  int64_t kept = 0;
  for (int64_t i = 0; i < l.count; ++i) {
    const T* b = boxes + 4 * i;
    const T ws = b[2] - b[0] + offset, hs = b[3] - b[1] + offset;
    bool ok = ws >= min_side && hs >= min_side;
    if (p.pixel_offset) ok = ok && b[0] + ws / 2 <= im_w && b[1] + hs / 2 <= im_h;
    if (ok) keep[kept++] = static_cast<int32_t>(i);
  }
  if (kept == 0) {  // one row of zeros with score 0
    selected[0] = -1;
    *rows = 1;
    return;
  }
  if (p.nms_thresh <= 0) {
    for (int64_t j = 0; j < kept; ++j) selected[j] = keep[j];
    *rows = kept;
    return;
  }
  // NMS's order: by score descending, the later of equal scores first (the CPU's stable sort ascending, taken from
  // the back). Keys in reverse, so that TopkLine's (value descending, index ascending) is that order.
  for (int64_t j = 0; j < kept; ++j) keys[j].v = sel_scores[keep[kept - 1 - j]];
  for (int64_t j = 0; j < kept; ++j) index[j] = static_cast<int32_t>(j);
  const cuda_index::TopkLine<ScoreKey<T>> by_score_then_place{keys, 1, true, true};
  by_score_then_place.sort(index, index + kept);
  const bool normalized = !p.pixel_offset;
  T adaptive = static_cast<T>(p.nms_thresh);
  int64_t out = 0;
  for (int64_t j = 0; j < kept; ++j) {
    const int32_t box = keep[kept - 1 - index[j]];
    bool ok = true;
    for (int64_t s = 0; s < out && ok; ++s) {
      ok = jaccard_overlap(boxes + 4 * static_cast<int64_t>(box), boxes + 4 * static_cast<int64_t>(selected[s]),
                           normalized) <= adaptive;
    }
    if (ok) selected[out++] = box;
    if (ok && p.eta < 1 && adaptive > 0.5) adaptive = mul(adaptive, static_cast<T>(p.eta));
  }
  if (p.post_nms_top_n > 0 && p.post_nms_top_n < out) out = p.post_nms_top_n;
  *rows = out;
}

// The images' rows one after the other into rois [R, 4] and probs [R, 1], each image's count into rois_num (may be
// null), the total R at scratch[0].
template <typename T>
__global__ void proposals_gather_kernel(int64_t n, Layout l, char* scratch, T* rois, T* probs, int32_t* rois_num) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  int64_t* header = reinterpret_cast<int64_t*>(scratch);
  int64_t total = 0;
  for (int64_t img = 0; img < n; ++img) {
    const char* part = scratch + l.header + static_cast<size_t>(img) * l.stride;
    const T* boxes = reinterpret_cast<const T*>(part + l.boxes);
    const T* scores = reinterpret_cast<const T*>(part + l.scores);
    const int32_t* selected = reinterpret_cast<const int32_t*>(part + l.selected);
    const int64_t rows = header[1 + img];
    for (int64_t j = 0; j < rows; ++j, ++total) {
      const int32_t box = selected[j];
      for (int k = 0; k < 4; ++k) rois[4 * total + k] = box < 0 ? T(0) : boxes[4 * static_cast<int64_t>(box) + k];
      probs[total] = box < 0 ? T(0) : scores[box];
    }
    if (rois_num != nullptr) rois_num[img] = static_cast<int32_t>(rows);
  }
  header[0] = total;
}

}  // namespace proposals_detail

// The scratch generate_proposals needs for n images of m anchors each.
template <typename T>
inline size_t proposals_scratch_bytes(int64_t n, int64_t m, int pre_nms_top_n) {
  const proposals_detail::Layout l = proposals_detail::layout_of<T>(n, m, pre_nms_top_n);
  return l.header + static_cast<size_t>(n) * l.stride;
}

// Where generate_proposals leaves its number of rows.
inline int64_t* proposals_count_of(int64_t* scratch) { return scratch; }

// generate_proposals over n images of a anchors at each of hw places, into rois (room for `capacity` rows: the
// plan's bound), probs and rois_num (may be null); the number of rows at proposals_count_of(scratch). `scratch`:
// proposals_scratch_bytes<T>(n, a * hw, pre_nms_top_n) bytes.
template <typename T>
cudaError_t generate_proposals(const T* scores, const T* deltas, const T* im_shape, const T* anchors,
                               const T* variances, T* rois, T* probs, int32_t* rois_num, int64_t n, int64_t a,
                               int64_t hw, int pre_nms_top_n, int post_nms_top_n, float nms_thresh, float min_size,
                               float eta, bool pixel_offset, int64_t capacity, int64_t* scratch, cudaStream_t stream) {
  (void)capacity;  // the rows never exceed it: at most n times what one image keeps (the plan's bound)
  // The sorts index an image's anchors as int32 (the CPU kernel's std::vector<int>).
  if (a * hw > INT32_MAX) return cudaErrorInvalidValue;
  const proposals_detail::Layout l = proposals_detail::layout_of<T>(n, a * hw, pre_nms_top_n);
  const proposals_detail::ProposalsArgs<T> p{scores, deltas, im_shape, anchors, variances, a, hw, pre_nms_top_n,
                                             post_nms_top_n, nms_thresh, min_size, eta, pixel_offset,
                                             std::log(1000.0 / 16.0)};
  char* const bytes = reinterpret_cast<char*>(scratch);
  if (n > 0) {
    proposals_detail::proposals_image_kernel<T><<<static_cast<unsigned>(n), 1, 0, stream>>>(p, l, bytes);
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  }
  proposals_detail::proposals_gather_kernel<T><<<1, 1, 0, stream>>>(n, l, bytes, rois, probs, rois_num);
  return cudaGetLastError();
}

// distribute_fpn_proposals' outputs: each level's rois [R_l, 4] and each image's count of them [N] (either may be
// null: not read).
constexpr int kMaxFpnLevels = 16;
template <typename T>
struct FpnLevels {
  T* rois[kMaxFpnLevels];
  int32_t* nums[kMaxFpnLevels];
};

namespace proposals_detail {

// One thread, as kernels/proposals.cc's distribute_fpn_proposals: each roi's level from its scale, the rois of each
// level in order, restore_index the place of each roi in the levels' concatenation, each image's count per level;
// the counts of the levels and then the rois' total (rois_num's sum) at scratch[0..levels].
template <typename T, typename N>
__global__ void distribute_kernel(const T* rois, int64_t capacity, const N* rois_num, int64_t images, int min_level,
                                  int max_level, int refer_level, int refer_scale, bool pixel_offset,
                                  FpnLevels<T> out, int32_t* restore, int64_t* scratch) {
  if (threadIdx.x != 0 || blockIdx.x != 0) return;
  const int levels = max_level - min_level + 1;
  int64_t total = 0;
  bool valid = true;  // the CPU kernel's errors: a negative count, other than fpn_rois' rows counted
  for (int64_t img = 0; img < images; ++img) {
    const int64_t v = static_cast<int64_t>(rois_num[img]);
    valid = valid && v >= 0;
    total += v;
  }
  const bool counts_valid = valid;
  valid = valid && total == capacity;
  int64_t* per_level = scratch;  // then the total, then each roi's level (int32) from scratch + levels + 1
  int32_t* target = reinterpret_cast<int32_t*>(scratch + levels + 1);
  for (int l = 0; l < levels; ++l) per_level[l] = 0;
  if (!valid) {  // nothing distributed (the CPU kernel reports an error; so does the host, reading the total)
    scratch[levels] = counts_valid ? total : -1;
    return;
  }
  for (int64_t i = 0; i < total; ++i) {
    const T scale = sqrt_of(box_area(rois + 4 * i, pixel_offset));
    int lvl = static_cast<int>(floor_of(log2_of(scale / refer_scale + static_cast<T>(1e-6)) + refer_level));
    lvl = min_of(max_level, max_of(lvl, min_level));
    target[i] = lvl;
    ++per_level[lvl - min_level];
  }
  int64_t start[kMaxFpnLevels + 1], filled[kMaxFpnLevels];
  start[0] = 0;
  for (int l = 0; l < levels; ++l) {
    start[l + 1] = start[l] + per_level[l];
    filled[l] = 0;
  }
  int64_t first = 0;
  for (int64_t img = 0; img < images; ++img) {
    int32_t in_image[kMaxFpnLevels];
    for (int l = 0; l < levels; ++l) in_image[l] = 0;
    const int64_t last = first + static_cast<int64_t>(rois_num[img]);
    for (int64_t i = first; i < last; ++i) {
      const int l = target[i] - min_level;
      if (out.rois[l] != nullptr) {
        for (int k = 0; k < 4; ++k) out.rois[l][4 * filled[l] + k] = rois[4 * i + k];
      }
      if (restore != nullptr) restore[i] = static_cast<int32_t>(start[l] + filled[l]);
      ++filled[l];
      ++in_image[l];
    }
    for (int l = 0; l < levels; ++l) {
      if (out.nums[l] != nullptr) out.nums[l][img] = in_image[l];
    }
    first = last;
  }
  scratch[levels] = total;
}

}  // namespace proposals_detail

// The scratch distribute_fpn_proposals needs: the counts and the level of each of fpn_rois' `capacity` rows.
inline size_t distribute_scratch_bytes(int levels, int64_t capacity) {
  return static_cast<size_t>(levels + 1) * sizeof(int64_t) + proposals_detail::round8(static_cast<size_t>(capacity) * 4);
}

// distribute_fpn_proposals of fpn_rois (room for `capacity` rows) over `images` images counted by rois_num, into
// `out` (each level's rois laid out for `capacity` rows) and restore (may be null; `capacity` rows); level l's count
// at scratch[l], the rois' total at scratch[levels]. rois_num must count all `capacity` rows: otherwise nothing is
// distributed and scratch[levels] is the counts' sum (-1 for a negative count), which the caller checks.
// `scratch`: distribute_scratch_bytes(levels, capacity) bytes.
template <typename T, typename N>
cudaError_t distribute_fpn_proposals(const T* rois, const N* rois_num, FpnLevels<T> out, int32_t* restore,
                                     int64_t images, int min_level, int max_level, int refer_level, int refer_scale,
                                     bool pixel_offset, int64_t capacity, int64_t* scratch, cudaStream_t stream) {
  if (max_level - min_level + 1 > kMaxFpnLevels || max_level < min_level) return cudaErrorInvalidValue;
  proposals_detail::distribute_kernel<T, N><<<1, 1, 0, stream>>>(rois, capacity, rois_num, images, min_level, max_level, refer_level, refer_scale, pixel_offset, out, restore, scratch);
  return cudaGetLastError();
}

}  // namespace kforge::cuda_select

#endif  // KFORGE_PROPOSALS_CUH_
