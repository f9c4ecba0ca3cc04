// Helpers shared by the index / data-movement / normalisation kernels and their infer-meta functions (issue 11):
// index validation, pad3d geometry, einsum equations. Internal to kernels/.
#ifndef KFORGE_KERNELS_MOVEMENT_UTIL_H_
#define KFORGE_KERNELS_MOVEMENT_UTIL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "kforge_runtime.h"

namespace kforge::kernels::util {

// The number of indices of a 1-D (or [N, 1]) int32/int64 index tensor.
Status index_length(const char* op, const Tensor& index, int64_t* length);

// Reads index i of an int32/int64 tensor.
inline int64_t index_at(const Tensor& index, int64_t i) {
  return index.dtype == DataType::kInt32 ? static_cast<int64_t>(index.data_as<const int32_t>()[i])
                                         : index.data_as<const int64_t>()[i];
}

// Every index in [0, limit); else an error naming the first one outside.
inline Status check_indices(const char* op, const Tensor& index, int64_t limit) {
  for (int64_t i = 0, n = index.numel(); i < n; ++i) {
    const int64_t v = index_at(index, i);
    if (v < 0 || v >= limit) {
      return Status::Error(op, ": index ", v, " (at position ", i, ") is out of range [0, ", limit, ")");
    }
  }
  return Status::OK();
}

enum class PadMode { kConstant, kReflect, kReplicate, kCircular };

// pad3d over D, H, W (index 0, 1, 2): input sizes, padding before, output sizes.
struct Pad3dShape {
  bool channel_last = false;
  PadMode mode = PadMode::kConstant;
  int64_t n = 0, c = 0;
  int64_t in[3] = {}, before[3] = {}, out[3] = {};
};
Status pad3d_shape(const char* op, const Tensor& x, const IntArray& paddings, const std::string& mode,
                   const std::string& data_format, Pad3dShape* s);

// An einsum equation of one or two operands: the labels of each operand and of the output (explicit after "->",
// else the labels that appear once, in increasing order), and the size of every label.
struct EinsumSpec {
  std::vector<std::string> inputs;
  std::string output;
  int64_t size[128] = {};  // by label character; -1 for a label that is not used
};
Status parse_einsum(const char* op, const std::string& equation, TensorList x, EinsumSpec* spec);

// The length of arange(start, end, step) in `dtype` (Paddle's GetSize): integer dtypes in integers, floating ones
// as ceil(|(end - start) / step|) in double. An error for a zero step or one pointing away from end.
Status arange_size(const char* op, const Scalar& start, const Scalar& end, const Scalar& step, DataType dtype,
                   int64_t* size);

}  // namespace kforge::kernels::util

#endif  // KFORGE_KERNELS_MOVEMENT_UTIL_H_
