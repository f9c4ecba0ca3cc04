// Helpers of the math, comparison, creation and scan kernels (math.cc, compare.cc, creation_math.cc,
// reduce_math.cc) and their infer-meta (meta_math.cc): elementwise loops whose output type may differ from the
// inputs' (comparisons write bool), Scalar-to-integer conversion without undefined behaviour, and the size rule of
// arange shared by kernel and infer-meta. Internal to kernels/.
#ifndef KFORGE_KERNELS_MATH_UTIL_H_
#define KFORGE_KERNELS_MATH_UTIL_H_

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "kernel_util.h"

namespace kforge::kernels::util {

// s as an integer (a floating Scalar is truncated, as Paddle's Scalar::to<int64_t>); an error when it is not finite
// or out of int64's range, where a plain cast would be undefined.
inline Status scalar_to_int(const Scalar& s, const char* op, const char* what, int64_t* out) {
  if (s.is_floating()) {
    const double v = s.to<double>();
    if (!(v >= -9.2233720368547758e18 && v < 9.2233720368547758e18)) {
      return Status::Error(op, ": ", what, " ", v, " is not a representable integer");
    }
  }
  *out = s.to<int64_t>();
  return Status::OK();
}

// |x| of a complex64 / complex128 x into its float32 / float64 out (complex.cc; abs's complex case).
Status complex_abs(const Tensor& x, Tensor* out);

// Paddle's arange size (funcs::GetSize), shared with the runtime's shape rules (kforge_shape_meta.h).
using shape_meta::arange_size;

// Normalises `axis` for a tensor of rank `rank`; a 0-D tensor accepts 0 and -1 (its only element).
inline bool normalize_axis_or_scalar(int64_t axis, int64_t rank, int64_t* out) {
  if (rank == 0) {
    *out = 0;
    return axis == 0 || axis == -1;
  }
  return normalize_axis(axis, rank, out);
}

// out[i] = op(x[i]); out may alias x when its elements are no wider (forward order reads each element before the
// writes reach it).
template <typename In, typename Out, typename Op>
void map_unary(const Tensor& x, Tensor* out, Op op) {
  const In* a = x.data_as<const In>();
  Out* o = out->data_as<Out>();
  for (int64_t i = 0, n = x.numel(); i < n; ++i) o[i] = op(a[i]);
}

// General broadcast of two operands into out (numpy rules, out's dims already the broadcast shape): one strided
// offset per operand, walked row by row. Out of line so the same-shape loop stays small.
template <typename A, typename B, typename Out, typename Op>
KFORGE_NOINLINE void map_broadcast(const Tensor& x, const Tensor& y, Tensor* out, Op op) {
  const A* a = x.data_as<const A>();
  const B* b = y.data_as<const B>();
  Out* o = out->data_as<Out>();
  const int32_t rank = out->ndim;
  int64_t strides[3][kMaxRank];
  broadcast_strides(x, rank, strides[0]);
  broadcast_strides(y, rank, strides[1]);
  contiguous_strides(out->dims, rank, strides[2]);
  NdCounter counter;
  counter.rank = rank;
  for (int32_t i = 0; i < rank; ++i) counter.dims[i] = out->dims[i];
  const int64_t inner = out->dims[rank - 1], sa = strides[0][rank - 1], sb = strides[1][rank - 1];
  int64_t offsets[3] = {0, 0, 0};
  do {
    const A* pa = a + offsets[0];
    const B* pb = b + offsets[1];
    Out* po = o + offsets[2];
    for (int64_t j = 0; j < inner; ++j) po[j] = op(pa[j * sa], pb[j * sb]);
  } while (counter.next(offsets, strides));
}

// out = op(x, y) with broadcasting; same-shape and one-element operands get plain loops the compiler vectorises.
template <typename A, typename B, typename Out, typename Op>
void map_binary(const Tensor& x, const Tensor& y, Tensor* out, Op op) {
  const A* a = x.data_as<const A>();
  const B* b = y.data_as<const B>();
  Out* o = out->data_as<Out>();
  const int64_t n = out->numel();
  if (x.same_dims(y)) {
    for (int64_t i = 0; i < n; ++i) o[i] = op(a[i], b[i]);
  } else if (y.numel() == 1 && x.numel() == n) {
    const B bv = b[0];
    for (int64_t i = 0; i < n; ++i) o[i] = op(a[i], bv);
  } else if (x.numel() == 1 && y.numel() == n) {
    const A av = a[0];
    for (int64_t i = 0; i < n; ++i) o[i] = op(av, b[i]);
  } else if (n > 0) {
    map_broadcast<A, B, Out>(x, y, out, op);
  }
}

// The checks every broadcasting binary kernel makes: an allocated output of dtype `out_dtype` whose dims are the
// broadcast of x's and y's.
inline Status check_broadcast_out(const Tensor& x, const Tensor& y, const Tensor* out, DataType out_dtype,
                                  const char* op) {
  KFORGE_RETURN_IF_ERROR(require_output(out, op));
  if (out->dtype != out_dtype) return Status::Error(op, ": out must be ", out_dtype, ", got ", out->dtype);
  std::vector<int64_t> dims;
  KFORGE_RETURN_IF_ERROR(broadcast_dims(x, y, op, &dims));
  if (!(out->ndim == static_cast<int32_t>(dims.size()) && std::equal(dims.begin(), dims.end(), out->dims))) {
    return Status::Error(op, ": out has dims ", out->dims_string(), ", expected ", dims_string(dims));
  }
  return Status::OK();
}

}  // namespace kforge::kernels::util

#endif  // KFORGE_KERNELS_MATH_UTIL_H_
