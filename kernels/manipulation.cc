// Shape-manipulation kernels. Reshape-like ops move bytes (or nothing, when the output is a view of x); the
// others gather elements by strides, whatever the dtype (only the element size matters).
#include <algorithm>
#include <cstring>
#include <vector>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include "kernel_util.h"
#include "kforge_kernels.h"

namespace kforge::kernels {

namespace {

// Checks that `out` matches what the op's infer-meta computes, so the loops below stay in bounds.
template <typename Meta>
Status check_against_meta(const char* op, const Tensor& out, Meta meta) {
  Tensor expected;
  KFORGE_RETURN_IF_ERROR(meta(&expected));
  if (out.dtype != expected.dtype) return Status::Error(op, ": out is ", out.dtype, ", expected ", expected.dtype);
  return util::require_dims(out, expected, op);
}

// Reshape, flatten, squeeze and unsqueeze keep the bytes; only the dims differ.
Status copy_same_elements(const Tensor& x, Tensor* out, const char* op) {
  KFORGE_RETURN_IF_ERROR(util::require_output(out, op));
  KFORGE_RETURN_IF_ERROR(util::require_same_dtype(*out, x, op, "out", "x"));
  if (out->numel() != x.numel()) {
    return Status::Error(op, ": out ", out->dims_string(), " and x ", x.dims_string(), " differ in element count");
  }
  util::copy_bytes(out->data, x.data, x.bytes());
  return Status::OK();
}

// Tile edge of the transposing path of strided_gather: a tile's reads touch kTile cache lines, its writes kTile.
constexpr int64_t kTile = 16;

// A full tile of 4-byte elements, d[a * cols + b] = s[a + b * step] for a in [a0, a0 + kTile), b in [b0, b0 +
// kTile), in 4 x 4 blocks through SSE registers (moves and shuffles: the bits are copied); false without SSE, for
// the scalar loop. 2-4x the scalar tile's speed (an NHWC -> NCHW transpose of 80 x 80 x 96: 94 us against 340):
// PP-YOLOE's ESE blocks transpose their input for the global mean.
template <typename T>
bool transpose_tile_4byte(const T* s, int64_t step, int64_t a0, int64_t b0, int64_t cols, T* d) {
#if defined(__SSE2__)
  static_assert(sizeof(T) == 4 && kTile % 4 == 0, "4-byte elements, tiles of 4 x 4 blocks");
  const float* src = reinterpret_cast<const float*>(s);
  float* dst = reinterpret_cast<float*>(d);
  for (int64_t a = a0; a < a0 + kTile; a += 4) {
    for (int64_t b = b0; b < b0 + kTile; b += 4) {
      __m128 r0 = _mm_loadu_ps(src + a + b * step), r1 = _mm_loadu_ps(src + a + (b + 1) * step);
      __m128 r2 = _mm_loadu_ps(src + a + (b + 2) * step), r3 = _mm_loadu_ps(src + a + (b + 3) * step);
      _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
      _mm_storeu_ps(dst + a * cols + b, r0);
      _mm_storeu_ps(dst + (a + 1) * cols + b, r1);
      _mm_storeu_ps(dst + (a + 2) * cols + b, r2);
      _mm_storeu_ps(dst + (a + 3) * cols + b, r3);
    }
  }
  return true;
#else
  (void)s, (void)step, (void)a0, (void)b0, (void)cols, (void)d;
  return false;
#endif
}

// d[a * C + b] = s[a + b * step] for a < rows, b < C: C rows of the source interleaved.
template <typename T, int C>
void interleave_rows(const T* s, int64_t step, int64_t rows, T* d) {
  const T* row[C];
  for (int b = 0; b < C; ++b) row[b] = s + b * step;
  for (int64_t a = 0; a < rows; ++a) {
    for (int b = 0; b < C; ++b) d[a * C + b] = row[b][a];
  }
}

// dst[i0, ..., ik] = src[sum_d i_d * src_strides[d]] for i within `counts`; dst is contiguous. Any dtype: only the
// element size matters. Unit dims are dropped and dims that are contiguous in the source too are merged first, so
// that a copy runs as long rows. When the last dim then steps through the source but the one before it is
// contiguous there (a layout transpose: NCHW <-> NHWC is [C, HW] <-> [HW, C] per image), the two are walked in
// kTile x kTile tiles, so that neither the reads nor the writes stride through memory one element per cache line;
// a last dim of 2 (an NHWC channel shuffle of two groups) is an interleave of two rows, done in one pass.
Status strided_gather(DataType dtype, const void* src, const int64_t* counts, const int64_t* src_strides, int32_t rank,
                      void* dst, const char* op) {
  if (util::product(counts, 0, rank) == 0) return Status::OK();
  if (rank == 0) {
    util::copy_bytes(dst, src, size_of(dtype));
    return Status::OK();
  }
  int64_t dims[kMaxRank], steps[kMaxRank];
  int32_t n = 0;
  for (int32_t i = 0; i < rank; ++i) {
    if (counts[i] == 1) continue;
    if (n > 0 && steps[n - 1] == src_strides[i] * counts[i]) {
      dims[n - 1] *= counts[i];
      steps[n - 1] = src_strides[i];
    } else {
      dims[n] = counts[i];
      steps[n] = src_strides[i];
      ++n;
    }
  }
  if (n == 0) {  // one element
    dims[0] = 1;
    steps[0] = 1;
    n = 1;
  }
  const bool tiled = n >= 2 && steps[n - 1] != 1 && steps[n - 2] == 1 && dims[n - 1] > 1 && dims[n - 2] > 1;
  // The counter walks every dim but its last: all but the innermost, or for tiles all but the pair.
  const int32_t counted = tiled ? n - 1 : n;
  int64_t strides[2][kMaxRank];
  util::NdCounter counter;
  counter.rank = counted;
  for (int32_t i = 0; i < counted; ++i) {
    counter.dims[i] = dims[i];
    strides[0][i] = steps[i];
  }
  util::contiguous_strides(dims, n, strides[1]);
  return util::visit_element_size(dtype, op, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* s0 = static_cast<const T*>(src);
    T* d0 = static_cast<T*>(dst);
    int64_t offsets[2] = {0, 0};
    if (tiled) {
      // dst[a][b] = src[a + b * step] for each index of the outer dims, in tiles.
      const int64_t rows = dims[n - 2], cols = dims[n - 1], step = steps[n - 1];
      do {
        const T* s = s0 + offsets[0];
        T* d = d0 + offsets[1];
        if (cols == 2) {  // an interleave of two rows (a channel shuffle of two groups): one pass, no tiles
          const T* s1 = s + step;
          for (int64_t a = 0; a < rows; ++a) {
            d[2 * a] = s[a];
            d[2 * a + 1] = s1[a];
          }
          continue;
        }
        // Three or four rows interleaved (an image's RGB / RGBA planes to NHWC, the model's first transpose):
        // one pass with the count known, which the compiler turns into shuffles (the tiles' loops of 3 cost
        // more than the copy: 0.4 ns an element against 0.2).
        if (cols == 3) {
          interleave_rows<T, 3>(s, step, rows, d);
          continue;
        }
        if (cols == 4) {
          interleave_rows<T, 4>(s, step, rows, d);
          continue;
        }
        for (int64_t a0 = 0; a0 < rows; a0 += kTile) {
          const int64_t a1 = std::min(rows, a0 + kTile);
          for (int64_t b0 = 0; b0 < cols; b0 += kTile) {
            const int64_t b1 = std::min(cols, b0 + kTile);
            if constexpr (sizeof(T) == 4) {
              if (a1 - a0 == kTile && b1 - b0 == kTile && transpose_tile_4byte(s, step, a0, b0, cols, d)) continue;
            }
            for (int64_t a = a0; a < a1; ++a) {
              for (int64_t b = b0; b < b1; ++b) d[a * cols + b] = s[a + b * step];
            }
          }
        }
      } while (counter.next(offsets, strides));
      return Status::OK();
    }
    const int64_t inner = dims[n - 1], step = steps[n - 1];
    do {
      const T* s = s0 + offsets[0];
      T* d = d0 + offsets[1];
      if (step == 1) {
        std::memmove(d, s, static_cast<size_t>(inner) * sizeof(T));  // a view may be its source
      } else {
        for (int64_t j = 0; j < inner; ++j) d[j] = s[j * step];
      }
    } while (counter.next(offsets, strides));
    return Status::OK();
  });
}

// Gathers the slice `r` of x into out (whose dims may drop unit axes).
Status gather_ranges(const Tensor& x, const util::SliceRanges& r, Tensor* out, const char* op) {
  int64_t x_strides[kMaxRank], steps[kMaxRank];
  util::contiguous_strides(x.dims, x.ndim, x_strides);
  int64_t base = 0;
  for (int32_t i = 0; i < x.ndim; ++i) {
    base += r.start[i] * x_strides[i];
    steps[i] = x_strides[i] * r.step[i];
  }
  const void* src = static_cast<const unsigned char*>(x.data) + base * static_cast<int64_t>(size_of(x.dtype));
  return strided_gather(x.dtype, src, r.count, steps, x.ndim, out->data, op);
}

// Splits x's elements around `axis` into outer blocks (dims before it) and the contiguous inner run (from it on).
void outer_inner(const Tensor& t, int64_t axis, int64_t* outer, int64_t* inner) {
  *outer = util::product(t.dims, 0, axis);
  *inner = util::product(t.dims, axis, t.ndim);
}

}  // namespace

Status reshape(const KernelContext& ctx, const Tensor& x, const IntArray& shape, Tensor* out) {
  (void)ctx;
  (void)shape;  // out's dims already say it
  return copy_same_elements(x, out, "reshape");
}

Status flatten(const KernelContext& ctx, const Tensor& x, int start_axis, int stop_axis, Tensor* out) {
  (void)ctx;
  (void)start_axis;
  (void)stop_axis;
  return copy_same_elements(x, out, "flatten");
}

Status squeeze(const KernelContext& ctx, const Tensor& x, const IntArray& axis, Tensor* out) {
  (void)ctx;
  (void)axis;
  return copy_same_elements(x, out, "squeeze");
}

Status unsqueeze(const KernelContext& ctx, const Tensor& x, const IntArray& axis, Tensor* out) {
  (void)ctx;
  (void)axis;
  return copy_same_elements(x, out, "unsqueeze");
}

Status transpose(const KernelContext& ctx, const Tensor& x, const std::vector<int>& perm, Tensor* out) {
  KFORGE_RETURN_IF_ERROR(util::require_output(out, "transpose"));
  KFORGE_RETURN_IF_ERROR(
      check_against_meta("transpose", *out, [&](Tensor* e) { return meta::TransposeInferMeta(x, perm, e); }));
  int32_t p[kMaxRank];
  KFORGE_RETURN_IF_ERROR(util::normalize_perm(perm, x.ndim, "transpose", p));
  // Axes of size 1 moved past the others move no element ([b, 1, 12, 64] -> [b, 12, 1, 64]): the same bytes, which
  // kforge compile's memory plan gives the output as a view of x (nothing to do) and a caller's buffer gets copied.
  int32_t last = -1;
  bool moves = false;
  for (int32_t i = 0; i < x.ndim && !moves; ++i) {
    if (x.dims[p[i]] == 1) continue;
    moves = p[i] < last;
    last = p[i];
  }
  if (!moves) {
    if (out->data != x.data && x.numel() > 0) std::memcpy(out->data, x.data, x.bytes());
    return Status::OK();
  }
  // In place, read from a copy: a permutation cannot be applied over its own source.
  Tensor src = x;
  const bool in_place = out->data == x.data && x.numel() > 1;
  util::Scratch<unsigned char> copy(ctx, in_place ? x.bytes() : 0);
  if (in_place) {
    std::memcpy(copy.data(), x.data, x.bytes());
    src.data = copy.data();
  }
  // A transpose is a gather whose source strides are permuted.
  int64_t x_strides[kMaxRank], counts[kMaxRank], strides[kMaxRank];
  util::contiguous_strides(x.dims, x.ndim, x_strides);
  for (int32_t i = 0; i < x.ndim; ++i) {
    counts[i] = x.dims[p[i]];
    strides[i] = x_strides[p[i]];
  }
  return strided_gather(x.dtype, src.data, counts, strides, x.ndim, out->data, "transpose");
}

Status expand(const KernelContext& ctx, const Tensor& x, const IntArray& shape, Tensor* out) {
  (void)ctx;
  KFORGE_RETURN_IF_ERROR(util::require_output(out, "expand"));
  KFORGE_RETURN_IF_ERROR(
      check_against_meta("expand", *out, [&](Tensor* e) { return meta::ExpandInferMeta(x, shape, e); }));
  int64_t strides[kMaxRank];
  util::broadcast_strides(x, out->ndim, strides);
  return strided_gather(x.dtype, x.data, out->dims, strides, out->ndim, out->data, "expand");
}

Status concat(const KernelContext& ctx, TensorList x, const Scalar& axis, Tensor* out) {
  (void)ctx;
  KFORGE_RETURN_IF_ERROR(util::require_output(out, "concat"));
  KFORGE_RETURN_IF_ERROR(
      check_against_meta("concat", *out, [&](Tensor* e) { return meta::ConcatInferMeta(x, axis, e); }));
  int64_t a = 0;
  util::normalize_axis(axis.to<int64_t>(), out->ndim, &a);
  int64_t outer, out_inner;
  outer_inner(*out, a, &outer, &out_inner);
  const size_t esize = size_of(out->dtype);
  unsigned char* dst = static_cast<unsigned char*>(out->data);
  // An input whose data is its slice's first element was written in place (kforge compile's concat in place; the
  // slice may be strided, rows of the output apart): nothing to copy.
  // Each input's run per outer block, once: an NHWC concat of few channels has a run of a few floats per pixel,
  // where working out its length and a libc call cost more than the copy (PP-OCR's det head: 4 channels each).
  std::vector<bool> in_place(x.size, false);
  std::vector<size_t> run_bytes(x.size, 0);
  size_t row_offset = 0;
  for (size_t i = 0; i < x.size; ++i) {
    int64_t t_outer, t_inner;
    outer_inner(x[i], a, &t_outer, &t_inner);
    in_place[i] = x[i].data == dst + row_offset && t_inner > 0;
    run_bytes[i] = static_cast<size_t>(t_inner) * esize;
    row_offset += run_bytes[i];
  }
  constexpr size_t kShortRun = 64;
  for (int64_t o = 0; o < outer; ++o) {
    for (size_t i = 0; i < x.size; ++i) {
      const size_t bytes = run_bytes[i];
      if (bytes > 0 && !in_place[i]) {
        const unsigned char* from = static_cast<const unsigned char*>(x[i].data) + static_cast<size_t>(o) * bytes;
        if (bytes <= kShortRun && bytes % 16 == 0) {
          for (size_t k = 0; k < bytes; k += 16) std::memcpy(dst + k, from + k, 16);
        } else if (bytes <= kShortRun && bytes % 4 == 0) {
          for (size_t k = 0; k < bytes; k += 4) std::memcpy(dst + k, from + k, 4);
        } else {
          std::memcpy(dst, from, bytes);
        }
      }
      dst += bytes;
    }
  }
  return Status::OK();
}

namespace {

// The pieces of x along `axis`: copy each outer block's run into its output. A piece whose data is its slice's first
// element is a view of x (kforge compile's split views: a contiguous slice, x having one outer block): nothing to copy.
Status split_into(const Tensor& x, int64_t axis, MutableTensorList out, const char* op) {
  for (size_t i = 0; i < out.size; ++i) KFORGE_RETURN_IF_ERROR(util::require_output(out.items[i], op));
  int64_t outer, in_inner;
  outer_inner(x, axis, &outer, &in_inner);
  const size_t esize = size_of(x.dtype);
  const unsigned char* src = static_cast<const unsigned char*>(x.data);
  std::vector<bool> is_view(out.size, false);
  size_t row_offset = 0;
  for (size_t i = 0; i < out.size; ++i) {
    int64_t t_outer, t_inner;
    outer_inner(*out.items[i], axis, &t_outer, &t_inner);
    is_view[i] = out.items[i]->data == src + row_offset && t_inner > 0;
    row_offset += static_cast<size_t>(t_inner) * esize;
  }
  for (int64_t o = 0; o < outer; ++o) {
    for (size_t i = 0; i < out.size; ++i) {
      Tensor* t = out.items[i];
      int64_t t_outer, t_inner;
      outer_inner(*t, axis, &t_outer, &t_inner);
      const size_t bytes = static_cast<size_t>(t_inner) * esize;
      if (bytes > 0 && !is_view[i]) {
        std::memcpy(static_cast<unsigned char*>(t->data) + static_cast<size_t>(o) * bytes, src, bytes);
      }
      src += bytes;
    }
  }
  return Status::OK();
}

// Checks a list of outputs against the infer-meta's.
template <typename Meta>
Status check_list_against_meta(const char* op, MutableTensorList out, Meta meta) {
  std::vector<Tensor> expected(out.size);
  std::vector<Tensor*> pointers(out.size);
  for (size_t i = 0; i < out.size; ++i) pointers[i] = &expected[i];
  KFORGE_RETURN_IF_ERROR(meta(MutableTensorList{pointers.data(), pointers.size()}));
  for (size_t i = 0; i < out.size; ++i) {
    if (out.items[i] == nullptr) return Status::Error(op, ": output ", i, " is null");
    if (out.items[i]->dtype != expected[i].dtype) {
      return Status::Error(op, ": output ", i, " is ", out.items[i]->dtype, ", expected ", expected[i].dtype);
    }
    if (!out.items[i]->same_dims(expected[i])) {
      return Status::Error(op, ": output ", i, " has dims ", out.items[i]->dims_string(), ", expected ",
                           expected[i].dims_string());
    }
  }
  return Status::OK();
}

}  // namespace

Status split(const KernelContext& ctx, const Tensor& x, const IntArray& sections, const Scalar& axis,
             MutableTensorList out) {
  (void)ctx;
  KFORGE_RETURN_IF_ERROR(check_list_against_meta(
      "split", out, [&](MutableTensorList e) { return meta::SplitInferMeta(x, sections, axis, e); }));
  int64_t a = 0;
  util::normalize_axis(axis.to<int64_t>(), x.ndim, &a);
  return split_into(x, a, out, "split");
}

Status split_with_num(const KernelContext& ctx, const Tensor& x, int num, const Scalar& axis, MutableTensorList out) {
  (void)ctx;
  KFORGE_RETURN_IF_ERROR(check_list_against_meta(
      "split_with_num", out, [&](MutableTensorList e) { return meta::SplitWithNumInferMeta(x, num, axis, e); }));
  int64_t a = 0;
  util::normalize_axis(axis.to<int64_t>(), x.ndim, &a);
  return split_into(x, a, out, "split_with_num");
}

Status stack(const KernelContext& ctx, TensorList x, int axis, Tensor* out) {
  (void)ctx;
  KFORGE_RETURN_IF_ERROR(util::require_output(out, "stack"));
  KFORGE_RETURN_IF_ERROR(check_against_meta("stack", *out, [&](Tensor* e) { return meta::StackInferMeta(x, axis, e); }));
  int64_t a = 0;
  util::normalize_axis(axis, x[0].ndim + 1, &a);
  int64_t outer, inner;
  outer_inner(x[0], a, &outer, &inner);
  const size_t bytes = static_cast<size_t>(inner) * size_of(out->dtype);
  unsigned char* dst = static_cast<unsigned char*>(out->data);
  for (int64_t o = 0; o < outer; ++o) {
    for (const Tensor* t : x) {
      if (bytes > 0) std::memcpy(dst, static_cast<const unsigned char*>(t->data) + static_cast<size_t>(o) * bytes, bytes);
      dst += bytes;
    }
  }
  return Status::OK();
}

Status slice(const KernelContext& ctx, const Tensor& input, const std::vector<int64_t>& axes, const IntArray& starts,
             const IntArray& ends, const std::vector<int64_t>& infer_flags, const std::vector<int64_t>& decrease_axis,
             Tensor* out) {
  (void)ctx;
  KFORGE_RETURN_IF_ERROR(util::require_output(out, "slice"));
  KFORGE_RETURN_IF_ERROR(check_against_meta("slice", *out, [&](Tensor* e) {
    return meta::SliceRawInferMeta(input, axes, starts, ends, infer_flags, decrease_axis, e);
  }));
  util::SliceRanges r;
  KFORGE_RETURN_IF_ERROR(util::slice_ranges(input, axes, starts, ends, "slice", &r));
  return gather_ranges(input, r, out, "slice");
}

Status strided_slice(const KernelContext& ctx, const Tensor& x, const std::vector<int>& axes, const IntArray& starts,
                     const IntArray& ends, const IntArray& strides, Tensor* out) {
  (void)ctx;
  KFORGE_RETURN_IF_ERROR(util::require_output(out, "strided_slice"));
  KFORGE_RETURN_IF_ERROR(check_against_meta("strided_slice", *out, [&](Tensor* e) {
    return meta::StridedSliceInferMeta(x, axes, starts, ends, strides, e);
  }));
  util::SliceRanges r;
  KFORGE_RETURN_IF_ERROR(util::strided_slice_ranges(x, axes, starts, ends, strides, "strided_slice", &r));
  return gather_ranges(x, r, out, "strided_slice");
}

}  // namespace kforge::kernels
