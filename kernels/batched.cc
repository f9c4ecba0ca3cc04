// bmm and einsum (one or two operands). Products are summed in the tensor's dtype in a fixed order: bmm over k in
// increasing order (as matmul), einsum over the contracted labels in row-major order of their first appearance.
#include <cstring>
#include <initializer_list>
#include <vector>

#include "kernel_util.h"
#include "kforge_kernels.h"
#include "movement_util.h"

namespace kforge::kernels {

Status bmm(const KernelContext& ctx, const Tensor& x, const Tensor& y, Tensor* out) {
  static constexpr const char* kOp = "bmm";
  KFORGE_RETURN_IF_ERROR(util::require_cpu(ctx, kOp));
  KFORGE_RETURN_IF_ERROR(util::require_output(out, kOp));
  const DataType dtype = util::kernel_dtype(ctx, x);
  if (x.dtype != dtype) return Status::Error(kOp, ": x is ", x.dtype, ", kernel dtype ", dtype);
  Tensor expected;
  KFORGE_RETURN_IF_ERROR(meta::BmmInferMeta(x, y, &expected));
  if (out->dtype != dtype) return Status::Error(kOp, ": out is ", out->dtype, ", expected ", dtype);
  KFORGE_RETURN_IF_ERROR(util::require_dims(*out, expected, kOp));
  const int64_t b = x.dims[0], m = x.dims[1], k = x.dims[2], n = y.dims[2];
  return util::visit_float(dtype, kOp, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    const T* xd = x.data_as<const T>();
    const T* yd = y.data_as<const T>();
    T* od = out->data_as<T>();
    for (int64_t batch = 0; batch < b; ++batch) {
      const T* a = xd + batch * m * k;
      const T* bb = yd + batch * k * n;
      T* c = od + batch * m * n;
      for (int64_t i = 0; i < m; ++i) {
        T* row = c + i * n;
        for (int64_t j = 0; j < n; ++j) row[j] = T(0);
        for (int64_t p = 0; p < k; ++p) {
          const T av = a[i * k + p];
          for (int64_t j = 0; j < n; ++j) row[j] += av * bb[p * n + j];
        }
      }
    }
    return Status::OK();
  });
}

Status einsum(const KernelContext& ctx, TensorList x, const std::string& equation, Tensor* out,
              MutableTensorList inner_cache, MutableTensorList xshape) {
  static constexpr const char* kOp = "einsum";
  KFORGE_RETURN_IF_ERROR(util::require_cpu(ctx, kOp));
  KFORGE_RETURN_IF_ERROR(util::require_output(out, kOp));
  if (x.empty()) return Status::Error(kOp, ": no operands");
  const DataType dtype = util::kernel_dtype(ctx, x[0]);
  util::EinsumSpec spec;
  KFORGE_RETURN_IF_ERROR(util::parse_einsum(kOp, equation, x, &spec));
  if (x[0].dtype != dtype) return Status::Error(kOp, ": operand 0 is ", x[0].dtype, ", kernel dtype ", dtype);
  std::vector<int64_t> out_dims;
  for (char c : spec.output) out_dims.push_back(spec.size[static_cast<unsigned char>(c)]);
  Tensor expected;
  KFORGE_RETURN_IF_ERROR(expected.set_dims(out_dims));
  if (out->dtype != dtype) return Status::Error(kOp, ": out is ", out->dtype, ", expected ", dtype);
  KFORGE_RETURN_IF_ERROR(util::require_dims(*out, expected, kOp));
  // Paddle fills inner_cache and xshape for its backward pass only; they are cleared here to stay deterministic.
  for (MutableTensorList list : {inner_cache, xshape}) {
    for (Tensor* t : list) {
      if (t != nullptr && t->data != nullptr) std::memset(t->data, 0, t->bytes());
    }
  }
  // The loop labels: the output's, then the contracted ones (in the order they first appear).
  std::string loops = spec.output;
  for (const std::string& labels : spec.inputs) {
    for (char c : labels) {
      if (loops.find(c) == std::string::npos) loops += c;
    }
  }
  const size_t nout = spec.output.size(), nloops = loops.size();
  std::vector<int64_t> extent(nloops);
  for (size_t i = 0; i < nloops; ++i) extent[i] = spec.size[static_cast<unsigned char>(loops[i])];
  // Each operand's element stride per loop label (a label repeated in one operand walks its diagonal).
  std::vector<std::vector<int64_t>> stride(x.size, std::vector<int64_t>(nloops, 0));
  for (size_t i = 0; i < x.size; ++i) {
    int64_t s[kMaxRank];
    util::contiguous_strides(x[i].dims, x[i].ndim, s);
    for (size_t a = 0; a < spec.inputs[i].size(); ++a) stride[i][loops.find(spec.inputs[i][a])] += s[a];
  }
  int64_t inner_total = 1;
  for (size_t i = nout; i < nloops; ++i) inner_total *= extent[i];
  return util::visit_float(dtype, kOp, [&](auto tag) -> Status {
    using T = typename decltype(tag)::type;
    T* od = out->data_as<T>();
    std::vector<int64_t> idx(nloops, 0);
    const int64_t total = out->numel();
    for (int64_t o = 0; o < total; ++o) {
      // Offsets of the output position; the contracted labels are walked from 0 below.
      int64_t base[2] = {0, 0};
      for (size_t i = 0; i < x.size; ++i) {
        for (size_t l = 0; l < nout; ++l) base[i] += idx[l] * stride[i][l];
      }
      T acc = T(0);
      int64_t off[2] = {base[0], base[1]};
      for (size_t l = nout; l < nloops; ++l) idx[l] = 0;
      for (int64_t r = 0; r < inner_total; ++r) {
        T prod = x[0].data_as<const T>()[off[0]];
        if (x.size == 2) prod *= x[1].data_as<const T>()[off[1]];
        acc += prod;
        for (size_t l = nloops; l-- > nout;) {
          if (++idx[l] < extent[l]) {
            for (size_t i = 0; i < x.size; ++i) off[i] += stride[i][l];
            break;
          }
          for (size_t i = 0; i < x.size; ++i) off[i] -= stride[i][l] * (extent[l] - 1);
          idx[l] = 0;
        }
      }
      od[o] = acc;
      for (size_t l = nout; l-- > 0;) {
        if (++idx[l] < extent[l]) break;
        idx[l] = 0;
      }
    }
    return Status::OK();
  });
}

}  // namespace kforge::kernels
